"""End-to-end measurement of ``worldspec port`` with a model answering: port each class, then
check every accepted world on fresh random sequences the port never saw.

    python benchmarks/port_e2e.py --dry-run                     # what it would run
    python benchmarks/port_e2e.py --base-url http://127.0.0.1:8765/v1 --model relay \\
        --request-timeout 3600 --out ports/e2e                  # the run (resumable)

The classes (default): every class of ``benchmarks/port_wild/`` and eight BFCL classes (the five
the project re-expresses in ``examples/bfcl/`` and three it does not), found in the installed
``bfcl-eval`` package (``--case FILE.py:CLASS[:DATA.json...]`` names others instead;
``--only CLASS`` picks some).

For each class, in ``OUT/<class>/``: ``worldspec port`` runs as a child process with its own
request journal (``requests.jsonl``) and batch journal (``journal.jsonl``), so running the
driver again resumes where it stopped and asks the model nothing twice; its JSON report is
``port.json``, its progress ``port.log``. A port that runs past ``--class-timeout`` is
stopped. An accepted world is then run by ``worldspec compare`` against the original on
``--fresh-examples`` sequences (1,000) from ``--fresh-seed``, a seed the port's own checks do
not use, once per init-data file of the class (``compare-<data>.json``). The results go to
``OUT/report.md`` (a table, also printed) and ``OUT/report.json``.

Exit status: 0 the driver ran (whatever the verdicts), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Case", "FreshCheck", "Row", "bfcl_cases", "main", "render_markdown",
           "wild_cases"]

ROOT = Path(__file__).resolve().parents[1]
WILD = ROOT / "benchmarks" / "port_wild"

#: every class of benchmarks/port_wild: (file stem, class, --load method, modules it needs)
WILD_CLASSES: tuple[tuple[str, str, str | None, tuple[str, ...]], ...] = (
    ("pharmacy_desk", "PharmacyDesk", None, ()),
    ("shell_fs", "ShellFS", None, ()),
    ("ledger_math", "LedgerMath", "load_state", ()),
    ("precise_calc", "PreciseCalculator", None, ("mpmath",)),
    ("library_api", "LibraryAPI", None, ()),
    ("event_scheduler", "EventScheduler", None, ()),
)

#: the BFCL classes: (file stem in bfcl-eval's sources, class); the first five are those
#: examples/bfcl/ re-expresses
BFCL_CLASSES: tuple[tuple[str, str], ...] = (
    ("message_api", "MessageAPI"),
    ("ticket_api", "TicketAPI"),
    ("trading_bot", "TradingBot"),
    ("travel_booking", "TravelAPI"),
    ("vehicle_control", "VehicleControlAPI"),
    # BFCL's other classes, which examples/bfcl does not re-express: an object graph of
    # directories and files, a numeric toolkit on mpmath and decimal, a social-media API
    ("gorilla_file_system", "GorillaFileSystem"),
    ("math_api", "MathAPI"),
    ("posting_api", "TwitterAPI"),
)
BFCL_SOURCES = ("eval_checker", "multi_turn_eval", "func_source_code")
BFCL_SEED_KEY = "random_seed"


@dataclass(frozen=True)
class Case:
    """One class to port, with its init-data files (the first one is given to the port)."""

    file: Path
    class_name: str
    data: tuple[Path, ...] = ()
    load: str | None = None
    seed_key: str | None = None
    #: why it cannot run here (a module it needs is missing), or None
    skipped: str | None = None


@dataclass
class FreshCheck:
    """``worldspec compare`` of an accepted world on fresh sequences, for one init-data file."""

    data: str
    verdict: str  # agree, differ, error or timeout
    examples: int = 0
    calls: int = 0
    differences: int = 0
    first_difference: str = ""
    seconds: float = 0.0


@dataclass
class Row:
    """What came of one class."""

    class_name: str
    file: str
    status: str  # accepted, rejected, error, timeout or skipped
    reason: str = ""
    tools: int = 0
    rounds: int = 0
    compile_repairs: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int | None = None
    completion_tokens: int = 0
    port_seconds: float = 0.0
    fresh_seed: int | None = None
    fresh: list[FreshCheck] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)


# ------------------------------------------------------------------ the classes
def _data_files(stem: str) -> tuple[Path, ...]:
    """``STEM.json`` first (what ``port --batch`` would pick), then ``STEM.*.json``."""
    main_file = WILD / f"{stem}.json"
    others = sorted(WILD.glob(f"{stem}.*.json"))
    return ((main_file,) if main_file.is_file() else ()) + tuple(others)


def _missing(modules: tuple[str, ...]) -> str | None:
    absent = [name for name in modules if importlib.util.find_spec(name) is None]
    return f"needs {', '.join(absent)} (not installed)" if absent else None


def wild_cases() -> list[Case]:
    """Every class of benchmarks/port_wild, with its init-data files."""
    return [Case(WILD / f"{stem}.py", name, _data_files(stem), load, None, _missing(needs))
            for stem, name, load, needs in WILD_CLASSES]


def bfcl_cases() -> list[Case]:
    """The BFCL classes in the installed bfcl-eval package (skipped when it is missing)."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or spec.origin is None:
        return [Case(Path(f"{stem}.py"), name, seed_key=BFCL_SEED_KEY,
                     skipped="needs bfcl-eval (not installed)") for stem, name in BFCL_CLASSES]
    sources = Path(spec.origin).parent.joinpath(*BFCL_SOURCES)
    return [Case(sources / f"{stem}.py", name, seed_key=BFCL_SEED_KEY,
                 skipped=None if (sources / f"{stem}.py").is_file() else "source not found")
            for stem, name in BFCL_CLASSES]


def parse_case(text: str) -> Case:
    """``FILE.py:CLASS[:DATA.json...]`` as a :class:`Case`."""
    parts = text.split(":")
    if len(parts) < 2 or not parts[0].endswith(".py") or not parts[1].isidentifier():
        raise argparse.ArgumentTypeError(f"'{text}': expected FILE.py:CLASS[:DATA.json...]")
    paths = [Path(p).resolve() for p in [parts[0], *parts[2:]]]
    for path in paths:
        if not path.is_file():
            raise argparse.ArgumentTypeError(f"'{text}': {path.name} does not exist")
    return Case(paths[0], parts[1], tuple(paths[1:]))


# ------------------------------------------------------------------ the commands
def cli_options(worldspec: list[str], command: str) -> dict[str, str]:
    """The options ``worldspec COMMAND --help`` lists, each with its help text."""
    done = subprocess.run([*worldspec, command, "--help"], capture_output=True, text=True,
                          cwd=ROOT, check=False, timeout=120)
    options: dict[str, str] = {}
    current = ""
    for line in done.stdout.splitlines():
        found = re.match(r"\s{2}(?:-\w(?: \S+)?, )?(--[a-z][a-z-]*)(.*)", line)
        if found:
            current = found.group(1)
            options[current] = found.group(2)
        elif current and line.startswith(" " * 6):
            options[current] += " " + line.strip()
        else:
            current = ""
    return options


def _confirm(options: dict[str, str], examples: int) -> list[str]:
    """``--confirm [N]`` where the command has it (a larger fresh budget before accepting)."""
    if "--confirm" not in options:
        return []
    takes_value = re.match(r"\s*[A-Z][A-Z_]*\b", options["--confirm"]) is not None
    return ["--confirm", str(examples)] if takes_value else ["--confirm"]


def _class_options(case: Case, args: argparse.Namespace) -> list[str]:
    extra = ["--class", case.class_name]
    if case.load:
        extra += ["--load", case.load]
    if case.seed_key:
        extra += ["--seed-key", case.seed_key]
    if args.trusted_original:
        extra.append("--trusted-original")
    return extra


def port_command(case: Case, folder: Path, args: argparse.Namespace,
                 options: dict[str, str]) -> list[str]:
    """The ``worldspec port`` command line for one class."""
    command = [*args.worldspec, "port", str(case.file), "-o", str(folder / "world.world"),
               "--requests", str(folder / "requests.jsonl"),
               "--journal", str(folder / "journal.jsonl"), "--format", "json",
               "--progress", "always", "--base-url", args.base_url or "<base-url>",
               "--model", args.model or "<model>", "--timeout", str(args.request_timeout),
               *_class_options(case, args)]
    repeatable = "repeat" in options.get("--init-data", "")
    for data in case.data if repeatable else case.data[:1]:
        command += ["--init-data", str(data)]
    if args.max_rounds is not None:
        command += ["--max-rounds", str(args.max_rounds)]
    if args.examples is not None:
        command += ["--examples", str(args.examples)]
    return command + _confirm(options, args.fresh_examples)


def compare_command(case: Case, world: Path, data: Path | None, seed: int,
                    args: argparse.Namespace, options: dict[str, str]) -> list[str]:
    """The ``worldspec compare`` command line of the fresh check on one init-data file."""
    command = [*args.worldspec, "compare", str(case.file), str(world), "--format", "json",
               "--examples", str(args.fresh_examples), "--test-seed", str(seed),
               *_class_options(case, args)]
    if "--test-seeds" in options:  # one fresh seed: exactly --fresh-examples sequences
        command += ["--test-seeds", "1"]
    if data is not None:
        command += ["--init-data", str(data)]
    return command


# ------------------------------------------------------------------ running
@dataclass
class Ran:
    returncode: int | None  # None: stopped at the timeout
    seconds: float


def run_logged(command: list[str], stdout: Path, stderr: Path, timeout: float) -> Ran:
    """Run ``command`` in a session of its own, output to files; stop it (and the sandbox
    children it started) when it runs past ``timeout`` seconds."""
    started = time.monotonic()
    with stdout.open("w", encoding="utf-8") as out, stderr.open("w", encoding="utf-8") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT,
                                   start_new_session=True)
        try:
            code: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            code = None
    return Ran(code, round(time.monotonic() - started, 1))


def _json_file(path: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def _last_line(path: Path) -> str:
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except OSError:
        return ""
    return next((line for line in reversed(lines) if line), "")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def cached_tokens(usage: dict[str, Any]) -> int | None:
    """Cached prompt tokens, under whichever name the report gives them; None if it does not."""
    for name in ("cached_tokens", "cached_prompt_tokens", "prompt_cached_tokens"):
        if isinstance(usage.get(name), int):
            return int(usage[name])
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        return int(details["cached_tokens"])
    return None


def read_port_report(row: Row, document: dict[str, Any]) -> dict[str, Any]:
    """Fill ``row`` from ``worldspec port --format json``; returns the class's outcome."""
    classes = document.get("classes")
    outcome = classes[0] if isinstance(classes, list) and classes and \
        isinstance(classes[0], dict) else {}
    accepted = outcome.get("status") == "accepted" or outcome.get("accepted") is True
    row.status = "accepted" if accepted else str(outcome.get("status") or "rejected")
    row.reason = str(outcome.get("reason") or "")
    tools = outcome.get("tools_ported")
    row.tools = len(tools) if isinstance(tools, list) else 0
    row.rounds = _int(outcome.get("rounds"))
    method_rounds = outcome.get("method_rounds")
    if isinstance(method_rounds, dict):
        row.compile_repairs = sum(_int(v) for v in method_rounds.values())
    usage = outcome.get("usage") if isinstance(outcome.get("usage"), dict) else \
        document.get("usage")
    if isinstance(usage, dict):
        row.requests = _int(usage.get("requests"))
        row.prompt_tokens = _int(usage.get("prompt_tokens"))
        row.completion_tokens = _int(usage.get("completion_tokens"))
        row.cached_tokens = cached_tokens(usage)
    return outcome


def seeds_used(outcome: dict[str, Any]) -> set[int]:
    """The test seeds the port's own checks used, where its report lists them."""
    found: set[int] = set()
    report = outcome.get("compare")
    for holder in (outcome, report if isinstance(report, dict) else {}):
        for name in ("seeds", "test_seeds"):
            values = holder.get(name)
            if isinstance(values, list):
                found.update(v for v in values if isinstance(v, int))
    return found


def fresh_check(case: Case, world: Path, folder: Path, seed: int, args: argparse.Namespace,
                options: dict[str, str], row: Row) -> None:
    """Compare the accepted world with the original on fresh sequences, per init-data file."""
    for data in case.data or (None,):
        name = data.stem if data is not None else "defaults"
        command = compare_command(case, world, data, seed, args, options)
        row.commands.append(command)
        ran = run_logged(command, folder / f"compare-{name}.json",
                         folder / f"compare-{name}.log", args.class_timeout)
        report = _json_file(folder / f"compare-{name}.json")
        check = FreshCheck(name, "timeout" if ran.returncode is None else "error",
                           seconds=ran.seconds)
        if report is not None and ran.returncode in (0, 1):
            differences = report.get("differences")
            listed = differences if isinstance(differences, list) else []
            check.verdict = "agree" if report.get("agrees") is True else "differ"
            check.examples, check.calls = _int(report.get("examples")), _int(report.get("calls"))
            check.differences = len(listed)
            if listed and isinstance(listed[0], dict):
                check.first_difference = str(listed[0].get("message", ""))[:300]
            elif report.get("load_error"):
                check.first_difference = str(report["load_error"])[:300]
        elif ran.returncode is not None:
            check.first_difference = _last_line(folder / f"compare-{name}.log")[:300]
        row.fresh.append(check)


def run_case(case: Case, args: argparse.Namespace, port_options: dict[str, str],
             compare_options: dict[str, str]) -> Row:
    """Port one class and check what was accepted."""
    row = Row(case.class_name, str(case.file), "skipped", case.skipped or "")
    if case.skipped:
        return row
    folder = Path(args.out) / case.class_name
    folder.mkdir(parents=True, exist_ok=True)
    command = port_command(case, folder, args, port_options)
    row.commands.append(command)
    print(f"port_e2e: porting {case.class_name} (progress in {folder / 'port.log'})",
          file=sys.stderr, flush=True)
    ran = run_logged(command, folder / "port.json", folder / "port.log", args.class_timeout)
    row.port_seconds = ran.seconds
    document = _json_file(folder / "port.json")
    if ran.returncode is None:
        row.status, row.reason = "timeout", f"stopped after {args.class_timeout:g} s"
        return row
    if document is None:
        row.status, row.reason = "error", _last_line(folder / "port.log")[:300]
        return row
    outcome = read_port_report(row, document)
    world = folder / "world.world"
    if row.status != "accepted" or not world.is_file():
        return row
    seed = args.fresh_seed
    used = seeds_used(outcome)
    while seed in used:
        seed += 1
    row.fresh_seed = seed
    fresh_check(case, world, folder, seed, args, compare_options, row)
    return row


# ------------------------------------------------------------------ the report
def _fresh_cell(row: Row) -> str:
    if not row.fresh:
        return "—"
    return "; ".join(
        f"{c.data}: {c.verdict}" + (f" ({c.examples:,} seq, {c.calls:,} calls)"
                                    if c.verdict in ("agree", "differ") else "")
        + (f": {c.first_difference}" if c.verdict != "agree" and c.first_difference else "")
        for c in row.fresh)


def render_markdown(rows: list[Row]) -> str:
    """The table of the report."""
    lines = ["| class | port | tools | compile repairs | differential rounds | requests | "
             "prompt tokens | cached | completion tokens | port s | fresh-sequence check |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        status = row.status + (f" ({row.reason})" if row.reason and row.status != "accepted"
                               else "")
        cached = "—" if row.cached_tokens is None else f"{row.cached_tokens:,}"
        lines.append(f"| {row.class_name} | {status.replace('|', '/')} | {row.tools} | "
                     f"{row.compile_repairs} | {row.rounds} | {row.requests} | "
                     f"{row.prompt_tokens:,} | {cached} | {row.completion_tokens:,} | "
                     f"{row.port_seconds:g} | {_fresh_cell(row).replace('|', '/')} |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ the command line
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-url", help="the model server (OpenAI-compatible), e.g. the relay's")
    p.add_argument("--model", help="the model name (the relay answers to any, e.g. 'relay')")
    p.add_argument("--out", default="port_e2e_out",
                   help="the folder for every class's journals, outputs and the report "
                        "(default: port_e2e_out)")
    p.add_argument("--case", action="append", type=parse_case, default=[],
                   metavar="FILE.py:CLASS[:DATA.json...]",
                   help="port this class instead of the default set (repeatable)")
    p.add_argument("--only", action="append", default=[], metavar="CLASS",
                   help="only the classes of these names (repeatable)")
    p.add_argument("--no-bfcl", action="store_true", help="leave the BFCL classes out")
    p.add_argument("--class-timeout", type=float, default=4 * 3600, metavar="SECONDS",
                   help="wall-clock seconds one port (and one fresh check) may take "
                        "(default 14400)")
    p.add_argument("--request-timeout", type=float, default=3600, metavar="SECONDS",
                   help="seconds one model request may take, port's --timeout (default 3600)")
    p.add_argument("--max-rounds", type=int, help="port's --max-rounds (default: port's)")
    p.add_argument("--examples", type=int, help="port's --examples (default: port's)")
    p.add_argument("--fresh-examples", type=int, default=1000, metavar="N",
                   help="sequences of the fresh check of an accepted world (default 1000)")
    p.add_argument("--fresh-seed", type=int, default=1_000_003, metavar="S",
                   help="the fresh check's --test-seed; one the port used is skipped "
                        "(default 1000003)")
    p.add_argument("--trusted-original", action="store_true",
                   help="pass --trusted-original (no bubblewrap on this machine)")
    p.add_argument("--worldspec", type=shlex.split,
                   default=[sys.executable, "-m", "worldspec"],
                   help="how to run the CLI (default: this Python's -m worldspec)")
    p.add_argument("--dry-run", action="store_true", help="list what would run, run nothing")
    return p


def selected_cases(args: argparse.Namespace) -> list[Case]:
    cases: list[Case] = list(args.case) or [*wild_cases(),
                                            *([] if args.no_bfcl else bfcl_cases())]
    if args.only:
        cases = [c for c in cases if c.class_name in args.only]
    return cases


def main(argv: list[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if not args.dry_run and not (args.base_url and args.model):
        p.error("--base-url and --model are needed (or --dry-run)")
    cases = selected_cases(args)
    if not cases:
        p.error("no classes selected (see --only and --case)")
    port_options = cli_options(args.worldspec, "port")
    compare_options = cli_options(args.worldspec, "compare")
    if not port_options or not compare_options:
        p.error(f"cannot run '{shlex.join(args.worldspec)} port --help'")
    if args.dry_run:
        for case in cases:
            if case.skipped:
                print(f"# {case.class_name}: skipped, {case.skipped}")
                continue
            folder = Path(args.out) / case.class_name
            print(f"# {case.class_name}")
            print(shlex.join(port_command(case, folder, args, port_options)))
            for data in case.data or (None,):
                print(shlex.join(compare_command(case, folder / "world.world", data,
                                                 args.fresh_seed, args, compare_options)))
        return 0
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [run_case(case, args, port_options, compare_options) for case in cases]
    table = render_markdown(rows)
    (out / "report.md").write_text(table, encoding="utf-8")
    (out / "report.json").write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n",
                                     encoding="utf-8")
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
