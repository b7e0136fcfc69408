"""``worldspec synth themes``: mine a task corpus for environment descriptions.

A row of :data:`worldspec.cli.synth.SYNTH_COMMANDS`. Like the rest of
``synth``, it imports ``llm_frontend`` (and so the ``openai`` SDK) only when it
runs, so the command line starts without them. The work itself is
:func:`llm_frontend.themes.mine_themes`; this module reads the options, opens
the journal, writes the output atomically and reports.

Exit status: 0 done (dropping items is the point, not a problem), 1 some corpus
lines were unusable or some items could not be assessed (the output holds the
rest; run again to retry), or the model could not be reached for the
embeddings; 2 bad arguments, no endpoint, a missing or empty corpus.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING

from worldspec.cli.console import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Console, add_backend_options

if TYPE_CHECKING:
    from worldspec.services.model_client import LLMConfig

__all__ = ["DESCRIPTION", "SUMMARY", "configure", "run"]

SUMMARY = "mine a task corpus for environment descriptions (input to synth world)"
DESCRIPTION = (
    "Read CORPUS.jsonl (one task per line: an object with a 'task', 'text', 'instruction' or "
    "'prompt' field, or a JSON string), ask the model for each task whether it needs "
    "persistent, domain-specific state and, if so, for a description of the environment with "
    "usefulness and modelability scores; keep tasks that need state and score at least "
    "--min-score on both; embed the descriptions and merge near-duplicates (cosine "
    "similarity >= --similarity), keeping the best of each cluster; write the descriptions "
    "as JSONL for 'worldspec synth world --input'. A journal makes the run resumable.")


def configure(parser: argparse.ArgumentParser) -> None:
    from worldspec.cli.synth import add_batch_options, add_model_options

    parser.add_argument("corpus", metavar="CORPUS.jsonl", help="the tasks, one per line")
    parser.add_argument("--field", metavar="NAME",
                        help="the field holding each task's text (default: the first of "
                             "task, text, instruction, prompt)")
    parser.add_argument("--id-field", default="id", metavar="NAME",
                        help="the field holding each task's id (default: id; else line-N)")
    parser.add_argument("-o", "--out", default="descriptions.jsonl", metavar="FILE",
                        help="the descriptions to write (default: descriptions.jsonl); the "
                             "journal defaults to FILE.journal.jsonl")
    parser.add_argument("--min-score", type=int, default=3, metavar="N",
                        help="the lowest usefulness and modelability (1-5) kept (default 3)")
    parser.add_argument("--similarity", type=float, default=0.9, metavar="S",
                        help="cosine similarity at or above which two descriptions are "
                             "near-duplicates (default 0.9)")
    parser.add_argument("--max-chars", type=int, default=6000, metavar="N",
                        help="a task's text is cut to N characters in the prompt (default 6000)")
    parser.add_argument("--embedding-model", metavar="NAME",
                        help="the embedding model (default: --model)")
    parser.add_argument("--embedding-base-url", metavar="URL",
                        help="a separate server for embeddings (default: --base-url)")
    add_batch_options(parser)
    add_model_options(parser)
    add_backend_options(parser)


def _check_options(args: argparse.Namespace, console: Console) -> bool:
    from worldspec.cli.synth import _check_limits

    if not 1 <= args.min_score <= 5:
        console.error("--min-score must be between 1 and 5")
        return False
    if not -1.0 <= args.similarity <= 1.0:
        console.error("--similarity must be between -1 and 1 (a cosine similarity)")
        return False
    if Path(args.out).is_dir():
        console.error(f"-o names the file to write, and '{args.out}' is a folder")
        return False
    return _check_limits(args, console, max_chars=100, concurrency=1, max_retries=0, workers=1)


def run(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _run_guarded

    if not _check_options(args, console):
        return EXIT_USAGE
    return _run_guarded(console, lambda: asyncio.run(_mine(args, console)))


def _embedding_config(args: argparse.Namespace, config: LLMConfig) -> LLMConfig | None:
    """The config of a separate embedding client, when the embeddings live elsewhere."""
    if args.embedding_base_url:
        return dataclasses.replace(config, base_url=args.embedding_base_url.rstrip("/"),
                                   embedding_model=args.embedding_model or config.model)
    return None


async def _mine(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _progress, make_batch_executor, model_config
    from worldspec.llm_frontend.batch import Journal, write_atomically
    from worldspec.llm_frontend.themes import (
        ThemeOptions,
        mine_themes,
        read_corpus,
        render_descriptions,
    )
    from worldspec.services.model_client import LLMClient

    config = model_config(args)
    if args.embedding_model:
        config = dataclasses.replace(config, embedding_model=args.embedding_model)
    embed_config = _embedding_config(args, config)
    executor = make_batch_executor(args, config.concurrency)
    readout = read_corpus(args.corpus, text_field=args.field, id_field=args.id_field)
    console.write(readout.problems_text(), to_err=True)
    out = Path(args.out)
    journal = Journal.open(args.journal or out.with_name(out.name + ".journal.jsonl"))
    options = ThemeOptions(min_score=args.min_score, similarity=args.similarity,
                           max_chars=args.max_chars)
    progress = _progress(args, len(readout.items), console, "themes: ")
    async with LLMClient(config) as client:
        if embed_config is None:
            result = await mine_themes(client, readout, options, corpus=args.corpus,
                                       journal=journal, progress=progress,
                                       concurrency=config.concurrency, executor=executor,
                                       retry_rejected=args.retry_rejected)
        else:
            async with LLMClient(embed_config) as embed_client:
                result = await mine_themes(client, readout, options, corpus=args.corpus,
                                           journal=journal, progress=progress,
                                           concurrency=config.concurrency,
                                           embed_client=embed_client, executor=executor,
                                           retry_rejected=args.retry_rejected)
    write_atomically(out, render_descriptions(result.rows))
    result.output = str(out)
    if args.format == "json":
        console.line(json.dumps(result.to_json(), ensure_ascii=False, indent=2))
    else:
        console.write(result.render_text())
    return EXIT_OK if result.ok else EXIT_PROBLEMS
