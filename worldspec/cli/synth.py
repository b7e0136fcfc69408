"""``worldspec synth``: the LLM front end on the command line.

``synth`` has sub-subcommands, rows of :data:`SYNTH_COMMANDS` (name -> summary,
description, options, run), so adding ``themes`` or ``review`` is adding a
row. Every row can share :func:`add_model_options` / :func:`model_config` (the
endpoint and limits) and :func:`add_batch_options` (journal, progress, output
format).

This is the only module of ``worldspec`` that imports ``llm_frontend``, and it
does so inside the commands, so the rest of the command line starts without
the ``openai`` SDK.

Exit status: 0 every item accepted, 1 some item rejected or failed, 2 bad
arguments, no endpoint configured, a missing or unusable input file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldspec.cli import synth_corpus as cli_synth_corpus
from worldspec.cli import synth_review as cli_synth_review
from worldspec.cli import synth_themes as cli_synth_themes
from worldspec.cli.console import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_USAGE,
    Console,
    Subcommand,
    add_backend_options,
    cannot_write,
)

if TYPE_CHECKING:
    from worldspec.llm_frontend.batch import BatchItem, BatchSummary, ItemRecord
    from worldspec.llm_frontend.stages import TaskJob
    from worldspec.llm_frontend.synth_world import WorldOutcome
    from worldspec.services.model_client import LLMConfig

__all__ = ["SYNTH_COMMANDS", "add_batch_options", "add_model_options",
           "configure_synth", "make_batch_executor", "model_config", "run_synth"]


# ----------------------------------------------------------- shared options
def add_model_options(parser: argparse.ArgumentParser) -> None:
    """``--base-url``, ``--model`` and the client's limits (the key comes from the environment)."""
    group = parser.add_argument_group("model endpoint (any OpenAI-compatible server)")
    group.add_argument("--base-url", metavar="URL",
                       help="the server, e.g. http://localhost:8000/v1 for vLLM (default: "
                            "$OPENAI_BASE_URL, or api.openai.com when only $OPENAI_API_KEY "
                            "is set); the API key is read from $OPENAI_API_KEY")
    group.add_argument("--model", metavar="NAME", help="the model (default: $WORLDSPEC_MODEL)")
    group.add_argument("--timeout", type=float, metavar="SECONDS",
                       help="seconds one request may take (default 120)")
    group.add_argument("--max-retries", type=int, metavar="N",
                       help="retries on connection errors, timeouts, 408/409/429/5xx "
                            "(default 4)")
    group.add_argument("--concurrency", type=int, default=4, metavar="N",
                       help="items worked on at once, and requests in flight (default 4)")
    group.add_argument("--temperature", type=float, metavar="T")
    group.add_argument("--max-tokens", type=int, metavar="N",
                       help="the most tokens one reply may have")
    group.add_argument("--seed", type=int, metavar="S", help="sampling seed, if the server "
                                                             "supports it")
    group.add_argument("--structured-output", choices=("json_schema", "json_object", "none"),
                       help="how structured replies are requested (default json_schema; "
                            "'none' relies on the prompt alone)")


def model_config(args: argparse.Namespace) -> LLMConfig:
    """The client config from :func:`add_model_options`'s options and the environment.

    Raises :class:`worldspec.services.model_client.LLMConfigError` with a message for the user.
    """
    from worldspec.services.model_client import LLMConfig

    return LLMConfig.from_env_and_args(
        base_url=args.base_url, model=args.model, timeout=args.timeout,
        max_retries=args.max_retries, concurrency=args.concurrency,
        temperature=args.temperature, max_tokens=args.max_tokens, seed=args.seed,
        structured=args.structured_output)


def add_batch_options(parser: argparse.ArgumentParser) -> None:
    """``--journal``, ``--format`` and ``--progress``: how a (batch) run is recorded and shown."""
    parser.add_argument("--journal", metavar="FILE",
                        help="the JSONL journal that makes an interrupted run resumable "
                             "(finished items are skipped when it is run again)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="the summary as 'text' (default) or 'json' on stdout")
    parser.add_argument("--progress", choices=("auto", "always", "never"), default="auto",
                        help="the live progress line on stderr: 'auto' (default) on a terminal")
    parser.add_argument("--retry-rejected", action="store_true",
                        help="work again on items the journal holds as rejected (say, with "
                             "more --max-rounds); accepted items are still skipped")


def make_batch_executor(args: argparse.Namespace, concurrency: int) -> Any:
    """The executor of ``--backend``; raises ``BackendUnavailable`` with a message."""
    from worldspec.services.executors import make_executor

    return make_executor(args.backend, concurrency=concurrency, workers=args.workers,
                         address=args.address)


def _progress(args: argparse.Namespace, total: int, console: Console, label: str) -> Any:
    from worldspec.llm_frontend.batch import Progress

    enabled = {"auto": None, "always": True, "never": False}[args.progress]
    return Progress(total, console.err, enabled=enabled, label=label)


def coverage_line(coverage: dict[str, Any]) -> str:
    """``coverage: 3/3 write tools reached; park* 12/40, ...`` (succeeded/calls per tool)."""
    from worldspec.llm_frontend.coverage import coverage_cells, unreached

    rows = {name: row for name, row in coverage.items() if isinstance(row, dict)}
    writes = [name for name, row in rows.items() if row.get("changes_state")]
    missing = set(unreached(rows))
    return (f"coverage: {len(writes) - len(missing)}/{len(writes)} write tools reached; "
            f"{coverage_cells(rows)} (succeeded/calls, * changes state)")


def _report(summary: BatchSummary, args: argparse.Namespace, console: Console) -> int:
    """The summary; in text, first one line per item: what became of it and which file."""
    if args.format == "json":
        console.line(json.dumps(summary.to_json(), ensure_ascii=False, indent=2))
    else:
        for record in summary.records:
            if record.status == "accepted":
                rounds = f"after {record.rounds} repair round(s)"
                world = record.data.get("world") if "coverage" in record.data else None
                what = f"{world} ({record.label})" if world and world != record.label \
                    else record.label
                console.line(f"accepted {what} {rounds} -> {record.output}")
            else:
                detail = f": {record.detail}" if record.detail else ""
                console.line(f"{record.status} {record.label}: {record.reason}{detail}")
                draft = record.data.get("draft")
                if isinstance(draft, str):
                    console.line(f"  last draft and its problems kept in {draft}")
            coverage = record.data.get("coverage")
            if isinstance(coverage, dict) and coverage:
                console.line(f"  {coverage_line(coverage)}")
        console.write(summary.render_text())
    return EXIT_OK if summary.ok else EXIT_PROBLEMS


def _check_limits(args: argparse.Namespace, console: Console, **limits: int) -> bool:
    for name, low in limits.items():
        value = getattr(args, name)
        if value is not None and value < low:
            console.error(f"--{name.replace('_', '-')} must be at least {low}")
            return False
    return True


def _run_guarded(console: Console, body: Callable[[], int]) -> int:
    """Turn the front end's expected failures into one-line errors (never a traceback)."""
    from worldspec.llm_frontend.batch import InputError
    from worldspec.services.executors import BackendUnavailable
    from worldspec.services.model_client import LLMConfigError, LLMError

    try:
        return body()
    except (LLMConfigError, InputError, BackendUnavailable) as exc:
        console.error(str(exc))
        return EXIT_USAGE
    except LLMError as exc:
        console.error(str(exc))
        return EXIT_PROBLEMS


# -------------------------------------------------------------------- world
def _configure_world(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("description", nargs="?", metavar="DESCRIPTION",
                        help="what the environment is, in prose")
    parser.add_argument("--input", metavar="FILE.jsonl",
                        help="many descriptions: one JSON object per line with a "
                             "'description' (and an optional 'id'), or one JSON string")
    parser.add_argument("-o", "--out", metavar="PATH",
                        help="the .world file to write (one description), or the folder for "
                             "--input (default: synth-worlds), where each world is written as "
                             "name-<sha>.world")
    parser.add_argument("--max-rounds", type=int, default=4, metavar="N",
                        help="repair rounds after the first draft (default 4)")
    parser.add_argument("--no-plan", action="store_true",
                        help="skip the planning request and write the spec at once")
    parser.add_argument("--test-examples", type=int, default=30, metavar="N",
                        help="random call sequences of the property tests (default 30)")
    parser.add_argument("--test-steps", type=int, default=20, metavar="N",
                        help="calls per sequence (default 20)")
    parser.add_argument("--sample-tasks", type=int, default=1, metavar="N",
                        help="the fewest sample tasks the world file holds; their inline data "
                             "is the world's seed data, where the property tests start "
                             "(default 1; 0: a world without data or tasks)")
    parser.add_argument("--size", choices=cli_synth_corpus.WORLD_SIZE_NAMES, default="small",
                        help="how big a world to plan and write: small (2 to 6 entities, 5 to "
                             "12 tools) or rich (EnvScaler's richness: at least 8 tools that "
                             "only read, 7 that change state and 10 state items, checked; "
                             "default small)")
    add_batch_options(parser)
    add_model_options(parser)
    add_backend_options(parser)


def _world_items(args: argparse.Namespace) -> list[BatchItem]:
    from worldspec.llm_frontend.batch import BatchItem, InputError, read_jsonl

    if args.input is None:
        return [BatchItem.make("world", {"description": args.description.strip()},
                               args.description.strip()[:60])]
    items = []
    for number, value in read_jsonl(args.input):
        label = f"{args.input}:{number}"
        if isinstance(value, dict):
            text = value.get("description")
            label = str(value.get("id") or label)
        else:
            text = value
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{args.input}:{number}: expected a \"description\" string")
        items.append(BatchItem.make("world", {"description": text.strip()}, label))
    return items


def _run_world(args: argparse.Namespace, console: Console) -> int:
    if (args.description is None) == (args.input is None):
        console.error("give either a DESCRIPTION or --input FILE.jsonl")
        return EXIT_USAGE
    if args.input is None and not args.out:
        console.error("name the file to write: -o FILE.world")
        return EXIT_USAGE
    if args.description is not None and not args.description.strip():
        console.error("the description is empty")
        return EXIT_USAGE
    if not _check_limits(args, console, max_rounds=0, test_examples=1, test_steps=1,
                         concurrency=1, max_retries=0, workers=1, sample_tasks=0):
        return EXIT_USAGE
    if args.input is not None and not _is_folder_or_absent(args.out, console):
        return EXIT_USAGE
    return _run_guarded(console, lambda: asyncio.run(_world_batch(args, console)))


def _is_folder_or_absent(raw: str | None, console: Console) -> bool:
    if raw and Path(raw).exists() and not Path(raw).is_dir():
        console.error(f"with --input, -o names a folder, and '{raw}' is a file")
        return False
    return True


async def _world_batch(args: argparse.Namespace, console: Console) -> int:
    from worldspec.llm_frontend.batch import ClientWorker, Journal, SplitWork, run_batch
    from worldspec.llm_frontend.stages import settle_world
    from worldspec.llm_frontend.synth_workers import world_work
    from worldspec.llm_frontend.synth_world import WorldOptions

    config = model_config(args)
    executor = make_batch_executor(args, config.concurrency)
    items = _world_items(args)
    single = args.input is None
    out = Path(args.out or "synth-worlds")
    journal_path = args.journal or (None if single else str(out / "journal.jsonl"))
    journal = Journal.open(journal_path) if journal_path else None
    options = WorldOptions(max_rounds=args.max_rounds, plan=not args.no_plan,
                           test_examples=args.test_examples, test_steps=args.test_steps,
                           sample_tasks=args.sample_tasks, size=args.size)

    def settle(item: BatchItem, outcome: WorldOutcome) -> ItemRecord:
        """On the driver: the record, and the world file when accepted (the last draft and
        its problems when rejected)."""
        return settle_world(item, outcome, out, single=single)

    work = SplitWork(ClientWorker(config, world_work),
                     lambda item: (str(item.payload["description"]), options), settle)
    summary = await run_batch("synth world", items, work, journal=journal,
                              concurrency=config.concurrency, executor=executor,
                              progress=_progress(args, len(items), console, "worlds: "),
                              retry_rejected=args.retry_rejected)
    return _report(summary, args, console)


# -------------------------------------------------------------------- tasks
def _configure_tasks(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("world", nargs="?", metavar="WORLD.world",
                        help="the world to write tasks for (it must check clean)")
    parser.add_argument("-n", type=int, default=5, metavar="N", dest="count",
                        help="how many tasks (default 5)")
    parser.add_argument("--input", metavar="FILE.jsonl",
                        help="many worlds: one JSON object per line, {\"world\": PATH, "
                             "\"n\": N, \"conversational\": false} (paths relative to the file)")
    parser.add_argument("-o", "--out", metavar="PATH",
                        help="the tasks file to write (default: WORLD.tasks.world beside the "
                             "world); with --input, a folder where each world's tasks go to "
                             "name-<sha>.tasks.world (default: beside each world)")
    parser.add_argument("--conversational", action="store_true",
                        help="conversational tasks: with a user persona, known and unknown")
    parser.add_argument("--max-rounds", type=int, default=4, metavar="N",
                        help="repair rounds after the first draft (default 4)")
    parser.add_argument("--min-calls", type=int, default=2, metavar="N",
                        help="the fewest calls a reference solution may have (default 2)")
    parser.add_argument("--max-ids", type=int, default=2, metavar="N",
                        help="the most table keys an instruction may name (default 2)")
    mining = parser.add_argument_group("mining (--mine)")
    mining.add_argument("--mine", action="store_true",
                        help="mine the tasks from the explorer's successful calls (goal, "
                             "checks, frame, solution) and ask the model for the instruction "
                             "only; one WORLD, no journal")
    mining.add_argument("--mine-seed", type=int, default=0, metavar="S",
                        help="the seed of the mined call sequences (default 0)")
    mining.add_argument("--mine-runs", type=int, default=60, metavar="N",
                        help="call sequences drawn from each start state (default 60)")
    mining.add_argument("--mine-batch", type=int, default=1, metavar="B",
                        help="tasks whose instructions one request writes and one request "
                             "checks (the world's summary sent once for B tasks; default 1)")
    mining.add_argument("--compare-journal", metavar="FILE",
                        help="a `synth tasks` journal: report its tokens per accepted task "
                             "beside the mined tasks' (e.g. examples/corpus/journals/tasks.jsonl)")
    add_batch_options(parser)
    add_model_options(parser)
    add_backend_options(parser)


def _task_jobs(args: argparse.Namespace) -> list[TaskJob]:
    from worldspec.llm_frontend.batch import InputError, read_jsonl, sha256_text
    from worldspec.llm_frontend.stages import TaskJob
    from worldspec.llm_frontend.synth_tasks import load_task_world

    if args.input is None:
        world = load_task_world(args.world)
        out = Path(args.out) if args.out else world.path.with_suffix(".tasks.world")
        return [TaskJob(world, args.count, args.conversational, out)]
    base = Path(args.input).parent
    jobs = []
    for number, value in read_jsonl(args.input):
        if isinstance(value, str):
            value = {"world": value}
        if not isinstance(value, dict) or not isinstance(value.get("world"), str):
            raise InputError(f"{args.input}:{number}: expected {{\"world\": PATH, ...}}")
        count = value.get("n", args.count)
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise InputError(f"{args.input}:{number}: \"n\" must be a positive integer")
        conversational = value.get("conversational", args.conversational)
        if not isinstance(conversational, bool):
            raise InputError(f"{args.input}:{number}: \"conversational\" must be true or false")
        try:
            world = load_task_world(base / value["world"])
        except InputError as exc:
            raise InputError(f"{args.input}:{number}: {exc}") from None
        if args.out:
            stem = world.path.stem
            out = Path(args.out) / f"{stem}-{sha256_text(world.text)[:12]}.tasks.world"
        else:
            out = world.path.with_suffix(".tasks.world")
        jobs.append(TaskJob(world, count, conversational, out))
    return jobs


def _run_tasks(args: argparse.Namespace, console: Console) -> int:
    if args.mine:
        return _run_mined(args, console)
    if (args.world is None) == (args.input is None):
        console.error("give either a WORLD.world file or --input FILE.jsonl")
        return EXIT_USAGE
    if not _check_limits(args, console, count=1, max_rounds=0, min_calls=1, max_ids=0,
                         concurrency=1, max_retries=0, workers=1):
        return EXIT_USAGE
    if args.input is not None and not _is_folder_or_absent(args.out, console):
        return EXIT_USAGE
    return _run_guarded(console, lambda: asyncio.run(_task_batch(args, console)))


async def _task_batch(args: argparse.Namespace, console: Console) -> int:
    from worldspec.llm_frontend.batch import ClientWorker, Journal, SplitWork, run_batch
    from worldspec.llm_frontend.stages import TaskBatch
    from worldspec.llm_frontend.synth_tasks import TaskOptions
    from worldspec.llm_frontend.synth_workers import task_work

    config = model_config(args)
    executor = make_batch_executor(args, config.concurrency)
    jobs = _task_jobs(args)
    if args.journal:
        journal_path = Path(args.journal)
    elif args.input is None:
        journal_path = jobs[0].out.with_name(jobs[0].out.name + ".journal.jsonl")
    else:
        journal_path = Path(args.out or Path(args.input).parent) / "synth-tasks.journal.jsonl"

    def options(job: TaskJob, conversational: bool) -> TaskOptions:
        return TaskOptions(max_rounds=args.max_rounds, conversational=conversational,
                           min_calls=args.min_calls, max_instruction_ids=args.max_ids)

    batch = TaskBatch(jobs, Journal.open(journal_path), options)
    restored = batch.restore_files()  # the journal is the truth
    work = SplitWork(ClientWorker(config, task_work), batch.prepare, batch.settle)
    summary = await run_batch("synth tasks", batch.items(), work, journal=batch.journal,
                              concurrency=config.concurrency, on_record=batch.materialise,
                              executor=executor, retry_rejected=args.retry_rejected,
                              verify=None,
                              progress=_progress(args, len(batch.items()), console, "tasks: "))
    summary.restored = restored
    if args.format == "text":
        for job in jobs:
            count = len(batch.accepted_of(job.world.sha256))
            if count:
                console.line(f"{job.world.name}: {count} task(s) in {job.out}")
    return _report(summary, args, console)


def _run_mined(args: argparse.Namespace, console: Console) -> int:
    if args.world is None or args.input is not None:
        console.error("--mine works on one WORLD.world file, not --input")
        return EXIT_USAGE
    if not _check_limits(args, console, count=1, max_ids=0, concurrency=1, max_retries=0,
                         mine_runs=1, mine_batch=1):
        return EXIT_USAGE
    return _run_guarded(console, lambda: asyncio.run(_mined_tasks(args, console)))


async def _mined_tasks(args: argparse.Namespace, console: Console) -> int:
    from worldspec.llm_frontend.batch import InputError
    from worldspec.llm_frontend.synth_mined import (
        MineOptions,
        journal_tokens_per_task,
        mine_world_tasks,
    )
    from worldspec.llm_frontend.synth_tasks import load_task_world, render_tasks_file
    from worldspec.services.files import FileRefusedError, write_atomically
    from worldspec.services.model_client import LLMClient

    config = model_config(args)
    world = load_task_world(args.world)
    written = None
    if args.compare_journal:
        try:
            written = journal_tokens_per_task(args.compare_journal)
        except (OSError, ValueError) as exc:
            raise InputError(f"cannot read the journal '{args.compare_journal}': {exc}") \
                from None
    out = Path(args.out) if args.out else world.path.with_suffix(".tasks.world")
    options = MineOptions(count=args.count, conversational=args.conversational,
                          seed=args.mine_seed, runs=args.mine_runs, batch=args.mine_batch,
                          max_instruction_ids=args.max_ids)
    async with LLMClient(config) as client:
        report = await mine_world_tasks(client, world, options, config.concurrency)
    texts = [o.text for o in report.accepted if o.text is not None]
    if texts:
        try:
            write_atomically(out, render_tasks_file(world, out, texts))
        except FileRefusedError as exc:
            console.error(str(exc))
            return EXIT_PROBLEMS
        except OSError as exc:
            console.error(cannot_write(out, exc))
            return EXIT_PROBLEMS
    if args.format == "json":
        compared = None if written is None else \
            {"accepted": written[0], "tokens_per_task": written[1]}
        console.line(json.dumps({**report.to_json(), "output": str(out) if texts else None,
                                 "written_tasks": compared}, ensure_ascii=False, indent=2))
    else:
        for outcome in report.outcomes:
            if outcome.accepted:
                console.line(f"accepted {outcome.candidate}: {outcome.instruction}")
            else:
                detail = f": {outcome.detail}" if outcome.detail else ""
                console.line(f"rejected {outcome.candidate}: {outcome.reason}{detail}")
        console.write(report.render_text())
        if written is not None:
            console.line(f"written whole (journal): {written[0]} accepted task(s), "
                         f"{written[1]:.0f} tokens per task")
        if texts:
            console.line(f"{world.name}: {len(texts)} task(s) in {out}")
    return EXIT_OK if report.accepted and len(report.accepted) == len(report.outcomes) \
        else EXIT_PROBLEMS


# -------------------------------------------------------------------- table
#: Every ``worldspec synth`` sub-subcommand, in the order ``--help`` lists them.
#: Add a row to add one (``themes`` and ``review`` go here).
SYNTH_COMMANDS: dict[str, Subcommand] = {
    "world": Subcommand(
        summary="write a world from a description, repaired until it checks and passes tests",
        description="Ask the model to plan and write a .world spec for DESCRIPTION (or for "
                    "every line of --input), feed the compiler's diagnostics and the property "
                    "tests' findings back for repair (at most --max-rounds rounds), and write "
                    "only a world that checks clean and passes its tests. The model writes "
                    ".world text only; nothing it writes runs except as the compiled world.",
        configure=_configure_world,
        run=_run_world,
    ),
    "tasks": Subcommand(
        summary="write tasks for a world, accepted only when they validate",
        description="Ask the model for N tasks in WORLD.world: inline data, a multi-step "
                    "instruction, checks, a frame and a reference solution, all in the "
                    "language. A task is accepted only when its solution passes every check "
                    "within the frame and doing nothing does not; accepted tasks are written "
                    "to one file that imports the world. A journal makes the run resumable.",
        configure=_configure_tasks,
        run=_run_tasks,
    ),
    "themes": Subcommand(cli_synth_themes.SUMMARY, cli_synth_themes.DESCRIPTION,
                         cli_synth_themes.configure, cli_synth_themes.run),
    "review": Subcommand(cli_synth_review.SUMMARY, cli_synth_review.DESCRIPTION,
                         cli_synth_review.configure, cli_synth_review.run),
    "corpus": Subcommand(cli_synth_corpus.SUMMARY, cli_synth_corpus.DESCRIPTION,
                         cli_synth_corpus.configure, cli_synth_corpus.run),
}


def configure_synth(parser: argparse.ArgumentParser) -> None:
    """The ``synth`` parser: one sub-parser per row of :data:`SYNTH_COMMANDS`."""
    commands = parser.add_subparsers(dest="synth_command", metavar="WHAT",
                                     title="what to synthesise")
    for name, command in SYNTH_COMMANDS.items():
        sub = commands.add_parser(name, help=command.summary, description=command.description)
        command.configure(sub)
        sub.set_defaults(synth_run=command.run)


def run_synth(args: argparse.Namespace, console: Console) -> int:
    run: Callable[[argparse.Namespace, Console], int] | None = getattr(args, "synth_run", None)
    if run is None:
        console.error(f"name what to synthesise: worldspec synth {{{','.join(SYNTH_COMMANDS)}}}")
        return EXIT_USAGE
    return run(args, console)

