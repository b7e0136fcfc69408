"""``worldspec synth corpus``: domains or a task corpus -> worlds -> tasks -> a validated corpus.

The pipeline itself is :mod:`llm_frontend.corpus`; this module parses the options, builds
the configs and renders the report. Exit status: 0 the corpus is complete (every world and
task accepted, every world validated with no findings), 1 something was rejected, failed or
is left for the next run, 2 bad arguments, no endpoint or an unusable input.

``--reindex`` (:mod:`llm_frontend.corpus_reindex`) brings a corpus's index up to date after
hand edits, with no model: 0 every world validated, 1 some world did not, 2 bad arguments, a
missing or garbled ``corpus.json`` or a world file that is gone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING

from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_backend_options,
    output_problem,
)

if TYPE_CHECKING:
    from worldspec.llm_frontend.corpus import CorpusReport

__all__ = ["DESCRIPTION", "SUMMARY", "configure", "run"]

#: the names of ``llm_frontend.prompts.WORLD_SIZES`` (kept here so that building the parser
#: loads no front end; a test keeps them equal)
WORLD_SIZE_NAMES = ("rich", "small")

SUMMARY = "one resumable pipeline: domains or a task corpus -> worlds -> tasks -> a corpus"
DESCRIPTION = (
    "Build a corpus folder from --domains (one environment description per line) or "
    "--corpus (a JSONL file of user requests, mined for environments as by 'synth themes'): "
    "worlds with seed data and sample tasks, repaired until they check and their property "
    "tests reach every write tool; tasks for each world; every world validated and explored "
    "from every task's data; dataset.jsonl (one row per task), README.md and corpus.json "
    "(worlds, tasks, coverage, provenance, token costs). Every stage journals under "
    "OUT/journals/: run the same command again to resume where it stopped. After editing "
    "the worlds or tasks by hand, 'synth corpus --reindex -o DIR' validates them again and "
    "rewrites the index and the dataset, asking no model.")


def configure(parser: argparse.ArgumentParser) -> None:
    from worldspec.cli.synth import add_batch_options, add_model_options

    source = parser.add_mutually_exclusive_group()
    source.add_argument("--domains", metavar="FILE",
                        help="environment descriptions: JSONL ({\"id\", \"description\"} or a "
                             "string per line) or a text file with one description per line")
    source.add_argument("--corpus", metavar="FILE.jsonl",
                        help="user requests, one per line (as for 'synth themes'), mined for "
                             "the environments they need")
    parser.add_argument("-o", "--out", metavar="DIR", required=False,
                        help="the corpus folder (created; resumed when it exists)")
    parser.add_argument("--reindex", action="store_true",
                        help="after hand edits of DIR's worlds or tasks: validate every world "
                             "listed in DIR/corpus.json as its files are now (journaled), "
                             "record the edits in its provenance and write corpus.json, "
                             "dataset.jsonl and README.md again; asks no model")
    parser.add_argument("--worlds", type=int, metavar="N",
                        help="at most N descriptions become worlds (default: all)")
    parser.add_argument("-n", "--tasks", type=int, default=6, metavar="N", dest="tasks",
                        help="tasks written for each world (default 6), besides its samples")
    parser.add_argument("--conversational", type=int, default=2, metavar="K",
                        help="of which the last K are conversational (default 2)")
    parser.add_argument("--mined", type=int, default=0, metavar="M",
                        help="tasks mined for each world besides the N written (as 'synth "
                             "tasks --mine': the model writes only each instruction; "
                             "default 0)")
    parser.add_argument("--mined-conversational", type=int, default=0, metavar="K",
                        help="of the M mined tasks, how many are conversational (the model "
                             "also writes persona, known and unknown; default 0)")
    parser.add_argument("--mined-batch", type=int, default=1, metavar="B",
                        help="mined tasks whose instructions one request writes and one "
                             "request checks (the world's summary sent once for B tasks; "
                             "default 1)")
    parser.add_argument("--max-rounds", type=int, default=4, metavar="N",
                        help="repair rounds of a world after its first draft (default 4)")
    parser.add_argument("--task-rounds", type=int, default=4, metavar="N",
                        help="repair rounds of a task after its first draft (default 4)")
    parser.add_argument("--no-plan", action="store_true",
                        help="write each world without the planning request")
    parser.add_argument("--size", choices=WORLD_SIZE_NAMES, default="small",
                        help="how big each world is planned and written: small or rich "
                             "(EnvScaler's richness: at least 8 read tools, 7 state-changing "
                             "tools and 10 state items, checked; default small)")
    parser.add_argument("--sample-tasks", type=int, default=1, metavar="N",
                        help="the fewest sample tasks (with the seed data) per world "
                             "(default 1)")
    parser.add_argument("--test-examples", type=int, default=100, metavar="N",
                        help="random call sequences of a world's gate (default 100)")
    parser.add_argument("--test-steps", type=int, default=40, metavar="N",
                        help="calls per sequence in the gate (default 40)")
    parser.add_argument("--explore-examples", type=int, default=100, metavar="N",
                        help="sequences of the final exploration from every task's data "
                             "(default 100)")
    parser.add_argument("--explore-steps", type=int, default=40, metavar="N",
                        help="calls per sequence of the final exploration (default 40)")
    parser.add_argument("--min-calls", type=int, default=4, metavar="N",
                        help="the fewest calls a task's reference solution may have "
                             "(default 4)")
    parser.add_argument("--max-ids", type=int, default=2, metavar="N",
                        help="the most row ids a task's instruction may name (default 2)")
    parser.add_argument("--min-score", type=int, default=3, metavar="S",
                        help="with --corpus: the usefulness and modelability a request needs "
                             "(1-5, default 3)")
    parser.add_argument("--similarity", type=float, default=0.9, metavar="X",
                        help="with --corpus: descriptions at least this alike are one "
                             "(default 0.9)")
    parser.add_argument("--beside", nargs="+", metavar="PATH", default=[],
                        help="the corpus will be checked beside these specs (say, examples): "
                             "its worlds take none of their world names")
    parser.add_argument("--field", metavar="NAME", help="with --corpus: the text field")
    parser.add_argument("--id-field", metavar="NAME", help="with --corpus: the id field")
    add_batch_options(parser)
    add_model_options(parser)
    add_backend_options(parser)


def run(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _check_limits, _run_guarded

    if args.reindex:
        return _reindex_or_say_why(args, console)
    if (args.domains is None) == (args.corpus is None):
        console.error("give either --domains FILE or --corpus FILE.jsonl")
        return EXIT_USAGE
    if not args.out:
        console.error("name the corpus folder: -o DIR")
        return EXIT_USAGE
    problem = output_problem(args.out, folder=True)
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    if args.journal:
        console.error("synth corpus keeps one journal per stage in DIR/journals/: "
                      "--journal does not apply")
        return EXIT_USAGE
    if not _check_limits(args, console, worlds=1, tasks=0, conversational=0, max_rounds=0,
                         task_rounds=0, sample_tasks=1, test_examples=1, test_steps=1,
                         explore_examples=1, explore_steps=1, min_calls=1, max_ids=0,
                         concurrency=1, max_retries=0, workers=1, mined=0,
                         mined_conversational=0, mined_batch=1):
        return EXIT_USAGE
    if args.mined_conversational > args.mined:
        console.error(f"--mined-conversational ({args.mined_conversational}) cannot exceed "
                      f"--mined ({args.mined})")
        return EXIT_USAGE
    if args.conversational > args.tasks:
        console.error(f"--conversational ({args.conversational}) cannot exceed -n "
                      f"({args.tasks})")
        return EXIT_USAGE
    return _run_guarded(console, lambda: _build_or_say_why(args, console))


def _build_or_say_why(args: argparse.Namespace, console: Console) -> int:
    try:
        return asyncio.run(_build(args, console))
    except OSError as exc:  # a full disk, a folder that cannot be written
        console.error(f"cannot write the corpus in '{args.out}': {exc.strerror or exc}; what "
                      "is journaled is kept, run the same command again once it is fixed")
        return EXIT_PROBLEMS


def _reindex_or_say_why(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _run_guarded

    if args.domains is not None or args.corpus is not None:
        console.error("--reindex reads DIR/corpus.json: give no --domains or --corpus")
        return EXIT_USAGE
    if not args.out:
        console.error("name the corpus folder to re-index: -o DIR")
        return EXIT_USAGE
    if not Path(args.out).is_dir():
        console.error(f"-o: '{args.out}' is not a corpus folder (it does not exist or is "
                      "not a folder)")
        return EXIT_USAGE
    try:
        return _run_guarded(console, lambda: asyncio.run(_reindex(args, console)))
    except OSError as exc:
        console.error(f"cannot write the corpus in '{args.out}': {exc.strerror or exc}")
        return EXIT_PROBLEMS


async def _reindex(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _progress
    from worldspec.llm_frontend.corpus_reindex import reindex_corpus

    report = await reindex_corpus(
        Path(args.out), progress=lambda total, label: _progress(args, total, console, label))
    _render(args, console, report)
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def _render(args: argparse.Namespace, console: Console, report: CorpusReport) -> None:
    if args.format == "json":
        console.line(json.dumps({"out": str(report.out), "ok": report.ok,
                                 "stopped": report.stopped, "message": report.message,
                                 "restored": report.restored, "edited": report.edited,
                                 "index": report.index}, ensure_ascii=False, indent=2))
    else:
        console.write(report.render_text())


def _world_names(paths: list[str], out: Path) -> frozenset[str]:
    """The world names declared in the ``*.world`` files below ``paths``, outside ``out``."""
    from worldspec.llm_frontend.batch import InputError

    names: set[str] = set()
    inside = out.resolve()
    for raw in paths:
        root = Path(raw)
        if not root.exists():
            raise InputError(f"--beside: '{raw}' does not exist")
        files = [root] if root.is_file() else sorted(root.rglob("*.world"))
        for path in files:
            if path.resolve().is_relative_to(inside):
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            names.update(re.findall(r"^world\s+([A-Za-z_][A-Za-z0-9_]*)", text, re.MULTILINE))
    return frozenset(names)


async def _build(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _progress, make_batch_executor, model_config
    from worldspec.llm_frontend.corpus import CorpusOptions, CorpusSource, build_corpus
    from worldspec.llm_frontend.synth_tasks import TaskOptions
    from worldspec.llm_frontend.synth_world import WorldOptions
    from worldspec.llm_frontend.themes import ThemeOptions

    config = model_config(args)
    executor = make_batch_executor(args, config.concurrency)
    if args.domains is not None:
        source = CorpusSource("domains", Path(args.domains))
    else:
        source = CorpusSource("corpus", Path(args.corpus), args.field, args.id_field)
    options = CorpusOptions(
        worlds=args.worlds, tasks_per_world=args.tasks, conversational=args.conversational,
        world=WorldOptions(max_rounds=args.max_rounds, plan=not args.no_plan,
                           test_examples=args.test_examples, test_steps=args.test_steps,
                           sample_tasks=args.sample_tasks, size=args.size),
        task=TaskOptions(max_rounds=args.task_rounds, min_calls=args.min_calls,
                         max_instruction_ids=args.max_ids),
        themes=ThemeOptions(min_score=args.min_score, similarity=args.similarity),
        explore_examples=args.explore_examples, explore_steps=args.explore_steps,
        retry_rejected=args.retry_rejected,
        reserved_names=_world_names(args.beside, Path(args.out)), mined_per_world=args.mined,
        mined_conversational=args.mined_conversational, mined_batch=args.mined_batch)
    report = await build_corpus(
        config, source, Path(args.out), options, executor=executor,
        progress=lambda total, label: _progress(args, total, console, label))
    _render(args, console, report)
    return EXIT_OK if report.ok else EXIT_PROBLEMS
