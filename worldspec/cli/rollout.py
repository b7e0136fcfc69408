"""``worldspec rollout`` (agents in worlds, trajectories and rewards) and ``worldspec view``.

Thin: parse the arguments, load the worlds (a generated package without the compiler, specs
compiled), call :mod:`worldspec.rollout`, render. ``worldspec export --trajectories`` lives
with the other export in :mod:`worldspec.cli.tasks` and calls :mod:`worldspec.rollout.export`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    add_backend_options,
    cannot_write,
    collect_spec_files,
    output_problem,
    report_errors,
)
from worldspec.cli.prompt_options import add_prompt_options, read_prompt_options

if TYPE_CHECKING:
    from worldspec.rollout.runner import WorldSource

__all__ = ["configure_rollout", "run_rollout_command", "configure_view", "run_view"]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def configure_rollout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="a .world file, a folder of them, or a generated package "
                             "(generated/NAME: loaded without the compiler)")
    chosen = parser.add_argument_group("which tasks (default: every task)")
    chosen.add_argument("--task", action="append", default=[], metavar="NAME",
                        help="only this task (repeatable)")
    chosen.add_argument("--split", metavar="S", help="only tasks of this split")
    chosen.add_argument("--tag", metavar="T", help="only tasks with this tag")
    model = parser.add_argument_group("the agent's model (any OpenAI-compatible server)")
    model.add_argument("--model", metavar="NAME", help="the agent (default: $WORLDSPEC_MODEL)")
    model.add_argument("--base-url", metavar="URL",
                       help="the server's /v1 URL (default: $OPENAI_BASE_URL)")
    model.add_argument("--api", choices=("chat", "responses"), default="chat",
                       help="Chat Completions (default) or the Responses API")
    model.add_argument("--temperature", type=float, metavar="T",
                       help="sampling temperature for the agent and the user")
    model.add_argument("--seed", type=int, default=0, metavar="S",
                       help="base of the per-rollout sampling seeds (default 0)")
    model.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="seconds without progress before a request fails (default 120)")
    model.add_argument("--max-retries", type=int, metavar="N",
                       help="further attempts on timeouts, 429 and 5xx (default 4)")
    model.add_argument("--max-tokens", type=int, metavar="N", help="per model reply")
    talk = parser.add_argument_group("the conversation")
    talk.add_argument("-n", "--samples", type=_positive, default=1, metavar="N",
                      help="rollouts per task (default 1); pass^k is reported for k <= N")
    add_prompt_options(talk, conversational_help="a simulated user who knows the task talks "
                       "to the agent turn by turn (default: the instruction is given at once)")
    talk.add_argument("--user-model", metavar="NAME",
                      help="the simulated user's model (default: --model)")
    talk.add_argument("--user-base-url", metavar="URL",
                      help="the simulated user's server (default: --base-url)")
    talk.add_argument("--max-steps", type=_positive, default=30, metavar="N",
                      help="agent messages per rollout (default 30)")
    talk.add_argument("--max-turns", type=_positive, default=20, metavar="N",
                      help="user messages per conversation (default 20)")
    talk.add_argument("--user-prompt", metavar="FILE",
                      help="the simulated user's prompt template")
    out = parser.add_argument_group("output")
    out.add_argument("-o", "--out", default="runs", metavar="DIR",
                     help="folder for the records and summary.json (default: runs)")
    out.add_argument("--journal", metavar="FILE",
                     help="the records' journal (default: DIR/rollouts.jsonl); an "
                          "interrupted batch resumes from it")
    out.add_argument("--concurrency", type=_positive, default=4, metavar="K",
                     help="rollouts at once (default 4; with --backend ray, on each worker)")
    add_backend_options(parser, title="where the rollouts run", count=_positive)
    out.add_argument("--format", choices=("text", "json"), default="text",
                     help="the summary on stdout: 'text' (default) or 'json'")
    out.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                     help="the progress line on stderr: 'auto' (a terminal), 'always', "
                          "'never'")


def _read_template(path: str | None, default: str, console: Console) -> str | None:
    from worldspec.services.prompts import PromptFileError, read_prompt_file

    if path is None:
        return default
    try:
        return read_prompt_file(path, "prompt template")
    except PromptFileError as exc:
        console.error(str(exc))
        return None


def _load_sources(paths: list[str], console: Console) -> list[WorldSource] | int:
    """The worlds named on the command line, or the exit status after reporting why not
    (2: a path that does not exist or a package that does not load, 1: spec errors)."""
    from worldspec.rollout.runner import WorldSource
    from worldspec.services.loading import CompileError, compile_worlds, load_package

    sources: list[WorldSource] = []
    specs: list[str] = []
    for raw in paths:
        folder = Path(raw)
        if folder.is_dir() and (folder / "__init__.py").is_file():
            try:
                module = load_package(folder)
            except (ImportError, OSError, SyntaxError) as exc:
                console.error(f"cannot load the generated package '{raw}': {exc}")
                return EXIT_USAGE
            sources.append(WorldSource.of(module.World, raw))
        else:
            specs.append(raw)
    if specs:
        files = collect_spec_files(specs, console)
        if files is None:
            return EXIT_USAGE
        try:
            loaded = compile_worlds(list(files))
        except CompileError as exc:
            report_errors(exc.result, console)
            console.error("cannot run rollouts: the specs have errors")
            return EXIT_PROBLEMS
        shown = " ".join(specs)
        sources += [WorldSource.of(loaded.worlds[name], shown) for name in sorted(loaded.worlds)]
    return sources


def run_rollout_command(args: argparse.Namespace, console: Console) -> int:
    from worldspec.rollout.prompts import USER_TEMPLATE
    from worldspec.rollout.records import JOURNAL_NAME, Journal, RecordError
    from worldspec.rollout.runner import (
        Progress,
        RolloutSettings,
        plan_rollouts,
        run_batch,
        select_tasks,
    )
    from worldspec.runtime.values import escape_surrogates
    from worldspec.services.executors import BackendUnavailable, make_executor
    from worldspec.services.files import write_atomically
    from worldspec.services.model_client import LLMConfig, LLMConfigError

    try:
        executor = make_executor(args.backend, concurrency=args.concurrency,
                                 workers=args.workers, address=args.address)
    except BackendUnavailable as exc:
        console.error(str(exc))
        return EXIT_USAGE
    prompt = read_prompt_options(args, console)
    user_template = _read_template(args.user_prompt, USER_TEMPLATE, console)
    if prompt is None or user_template is None:
        return EXIT_USAGE
    try:
        agent_config = LLMConfig.from_env_and_args(
            base_url=args.base_url, model=args.model, timeout=args.timeout,
            max_retries=args.max_retries, concurrency=args.concurrency,
            temperature=args.temperature, max_tokens=args.max_tokens)
        user_config = None
        if args.conversational:
            user_config = LLMConfig.from_env_and_args(
                base_url=args.user_base_url or agent_config.base_url,
                model=args.user_model or agent_config.model, timeout=args.timeout,
                max_retries=args.max_retries, concurrency=args.concurrency,
                temperature=args.temperature, max_tokens=args.max_tokens)
    except LLMConfigError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    sources = _load_sources(args.paths, console)
    if isinstance(sources, int):
        return sources
    tasks: list[tuple[int, str]] = []
    for index, source in enumerate(sources):
        tasks += [(index, t) for t in select_tasks(source.world, names=args.task,
                                                   split=args.split, tag=args.tag)]
    known = sorted({t for s in sources for t in s.world.TASKS})
    missing = [t for t in args.task if t not in known]
    if missing or not tasks:
        what = f"no task {', '.join(repr(t) for t in missing)}" if missing else \
            "no task matches the selection"
        console.error(f"{what} (tasks: {', '.join(known) if known else 'none'})")
        return EXIT_USAGE
    settings = RolloutSettings(
        model=agent_config.model, api=args.api, conversational=args.conversational,
        user_model=user_config.model if user_config is not None else None,
        max_steps=args.max_steps, max_turns=args.max_turns, temperature=args.temperature,
        seed=args.seed, system_template=prompt.template, user_template=user_template,
        policy=prompt.policy)
    jobs = plan_rollouts(sources, tasks, args.samples, settings)
    out = Path(args.out)
    journal_path = Path(args.journal) if args.journal else out / JOURNAL_NAME
    try:
        journal = Journal.open(journal_path)
    except RecordError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    enabled = {"always": True, "never": False}.get(args.progress)
    progress = Progress(len(jobs), console.err, enabled=enabled)

    async def go() -> Any:
        return await run_batch(jobs, settings, agent_config, user_config, journal=journal,
                               concurrency=args.concurrency, progress=progress,
                               executor=executor)

    try:
        summary = asyncio.run(go())
    except BackendUnavailable as exc:
        console.error(str(exc))
        return EXIT_USAGE
    except OSError as exc:
        console.error(f"cannot write the records to '{journal_path}': {exc.strerror or exc}")
        return EXIT_PROBLEMS
    data = summary.to_json()
    data["journal"] = str(journal_path)
    try:
        # a failed rollout's message may quote what the model sent: escape lone surrogates
        write_atomically(out / "summary.json",
                         escape_surrogates(json.dumps(data, indent=2, ensure_ascii=False))
                         + "\n")
    except OSError as exc:
        console.error(cannot_write(out / "summary.json", exc))
        return EXIT_PROBLEMS
    if args.format == "json":
        console.line(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        console.write(summary.render_text())
        console.line(f"records: {journal_path}")
    return EXIT_OK if summary.ok else EXIT_PROBLEMS


# --------------------------------------------------------------------- view
def configure_view(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("runs", metavar="RUNS",
                        help="a runs folder (every *.jsonl below it) or a records file")
    parser.add_argument("-o", "--out", default="report.html", metavar="FILE",
                        help="the HTML page to write (default: report.html)")


def run_view(args: argparse.Namespace, console: Console) -> int:
    from worldspec.rollout.records import RecordError, read_records
    from worldspec.rollout.view import render_report
    from worldspec.services.files import write_atomically

    problem = output_problem(args.out, folder=False)
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    try:
        records = list(read_records(args.runs, finished_only=False))
    except RecordError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    if not records:
        console.error(f"no rollout records in '{args.runs}'")
        return EXIT_USAGE
    try:
        write_atomically(args.out, render_report(records, title=str(args.runs)))
    except OSError as exc:
        console.error(cannot_write(args.out, exc))
        return EXIT_PROBLEMS
    console.line(f"wrote {len(records)} rollout(s) to {args.out}")
    return EXIT_OK
