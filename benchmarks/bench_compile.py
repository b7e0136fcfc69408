"""Compile-time benchmark: how long ``worldspec check`` takes on real and generated specs.

For each example world (``examples/**/*.world``, or the paths given) and for a
generated spec of ``--lines`` lines (default 1,000; see ``gen_spec.py``) it
measures, in this process:

- **parse**: :func:`dsl.parser.parse_module` alone, warm (median of the runs);
- **check**: :func:`compiler.api.check_source`, the whole front end (read
  imports, parse, resolve, type-check, rules, data checks), warm: one
  untimed warm-up, then at least ``--repeat`` runs and at least
  ``--min-time`` seconds; the median and the best are reported;

and, in a fresh ``python`` process per file, **cold**: the first
``check_source`` call after ``import compiler.api`` (so it includes building
the parser tables and any other first-use cost, but not the imports, which
are reported separately in the JSON output).

``lines/s`` counts the lines of the file and of the files it imports (a
``tasks.world`` check reads its world too) over the warm median.

The generated spec must check clean; the benchmark stops with status 1 if it
does not. The goal from the design brief is printed at the end: a 1,000-line
spec checks in under 100 ms (warm median).

Run from the repository root::

    python benchmarks/bench_compile.py                 # table
    python benchmarks/bench_compile.py --lines 5000    # a bigger generated spec
    python benchmarks/bench_compile.py --json          # one JSON document on stdout
    python benchmarks/bench_compile.py --strict        # exit 1 when the goal is missed
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_spec import DEFAULT_LINES, generate  # noqa: E402

from worldspec.compiler.api import check_source  # noqa: E402
from worldspec.dsl.diagnostics import DiagnosticSink  # noqa: E402
from worldspec.dsl.parser import parse_module  # noqa: E402

GOAL_LINES = 1000
GOAL_MS = 100.0

#: Run in a fresh interpreter: time the imports, then the first check of one file.
_COLD_SCRIPT = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
from worldspec.compiler.api import check_source
t1 = time.perf_counter()
path = sys.argv[2]
with open(path, encoding="utf-8") as handle:
    text = handle.read()
t2 = time.perf_counter()
result = check_source(text, path)
t3 = time.perf_counter()
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "first_check_ms": (t3 - t2) * 1e3,
                  "diagnostics": len(result.diagnostics)}))
"""


@dataclass(frozen=True, slots=True)
class Row:
    """The measurements of one file."""

    file: str
    lines: int
    #: lines of the file and of everything it imports: what one check reads
    total_lines: int
    runs: int
    parse_median_ms: float
    median_ms: float
    min_ms: float
    #: ``None`` when the cold runs were skipped (``--no-cold``)
    cold_ms: float | None
    cold_import_ms: float | None
    errors: int
    diagnostics: int

    @property
    def lines_per_second(self) -> float:
        """Lines checked per second (imports included), from the warm median."""
        return self.total_lines / (self.median_ms / 1e3) if self.median_ms > 0 else float("inf")


def _timed_runs(action: Callable[[], object], repeat: int, min_time: float) -> list[float]:
    """Milliseconds of each run: one untimed warm-up, then ``repeat`` runs and ``min_time`` s."""
    action()
    times: list[float] = []
    gc.collect()
    started = time.perf_counter()
    while len(times) < repeat or time.perf_counter() - started < min_time:
        t0 = time.perf_counter()
        action()
        times.append((time.perf_counter() - t0) * 1e3)
        if len(times) >= 1000:
            break
    return times


def _cold(path: Path) -> tuple[float | None, float | None]:
    """(first check ms, import ms) of ``path`` in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _COLD_SCRIPT, str(ROOT), str(path)],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return float(data["first_check_ms"]), float(data["import_ms"])


def measure(path: Path, shown: str, repeat: int, min_time: float, cold: bool) -> Row:
    """Measure one file (imports resolve relative to ``path``)."""
    text = path.read_text(encoding="utf-8")
    name = str(path)
    result = check_source(text, name)
    checks = _timed_runs(lambda: check_source(text, name), repeat, min_time)
    parses = _timed_runs(lambda: parse_module(text, name, DiagnosticSink()), repeat,
                         min_time / 2)
    cold_ms, import_ms = _cold(path) if cold else (None, None)
    return Row(file=shown, lines=_line_count(text),
               total_lines=sum(_line_count(f.text) for f in result.program.files.values()),
               runs=len(checks), parse_median_ms=statistics.median(parses),
               median_ms=statistics.median(checks), min_ms=min(checks), cold_ms=cold_ms,
               cold_import_ms=import_ms, errors=len(result.errors),
               diagnostics=len(result.diagnostics))


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _example_paths() -> list[Path]:
    return sorted(p for p in (ROOT / "examples").glob("**/*.world") if p.is_file())


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


def format_table(rows: Sequence[Row]) -> str:
    """The rows as an aligned text table."""
    header = ("file", "lines", "+imports", "parse ms", "median ms", "min ms", "cold ms",
              "lines/s", "runs")
    body = [(r.file, f"{r.lines:,}", f"{r.total_lines:,}", f"{r.parse_median_ms:.1f}",
             f"{r.median_ms:.1f}", f"{r.min_ms:.1f}",
             "-" if r.cold_ms is None else f"{r.cold_ms:.1f}",
             f"{r.lines_per_second:,.0f}", str(r.runs))
            for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    return "\n".join([line(header), line(["-" * w for w in widths]), *map(line, body)])


def goal_line(row: Row) -> str:
    """Whether the generated spec met the goal, scaled to 1,000 lines."""
    per_thousand = row.median_ms * GOAL_LINES / max(1, row.lines)
    verdict = "met" if per_thousand < GOAL_MS else f"MISSED ({per_thousand / GOAL_MS:.1f}x)"
    return (f"goal: a {GOAL_LINES:,}-line spec checks in < {GOAL_MS:.0f} ms (warm median): "
            f"{per_thousand:.1f} ms per {GOAL_LINES:,} lines -> {verdict}")


def main(argv: list[str] | None = None) -> int:
    """Measure, print a table (or JSON), and return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path,
                        help="spec files to measure (default: examples/**/*.world)")
    parser.add_argument("--lines", type=int, default=DEFAULT_LINES,
                        help=f"lines of the generated spec (default {DEFAULT_LINES})")
    parser.add_argument("--repeat", type=int, default=10,
                        help="at least this many warm runs per file (default 10)")
    parser.add_argument("--min-time", type=float, default=1.0,
                        help="and at least this many seconds of warm runs (default 1.0)")
    parser.add_argument("--no-cold", action="store_true",
                        help="skip the cold runs in fresh processes")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--strict", action="store_true",
                        help="exit with status 1 when the goal is missed")
    args = parser.parse_args(argv)

    rows: list[Row] = []
    for path in args.paths or _example_paths():
        rows.append(measure(path, _shown(path), args.repeat, args.min_time, not args.no_cold))
    with tempfile.TemporaryDirectory(prefix="worldspec-bench-") as tmp:
        generated = Path(tmp) / f"generated_{args.lines}.world"
        generated.write_text(generate(args.lines), encoding="utf-8")
        row = measure(generated, f"generated ({args.lines:,} lines)", args.repeat,
                      args.min_time, not args.no_cold)
    rows.append(row)
    if row.diagnostics:
        print(f"error: the generated spec is not clean ({row.diagnostics} diagnostics); "
              f"run `python benchmarks/gen_spec.py --check --lines {args.lines}`",
              file=sys.stderr)
        return 1
    met = row.median_ms * GOAL_LINES / max(1, row.lines) < GOAL_MS
    if args.json:
        print(json.dumps({
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "goal": {"lines": GOAL_LINES, "ms": GOAL_MS, "met": met},
            "rows": [{**asdict(r), "lines_per_second": r.lines_per_second} for r in rows],
        }, indent=2))
    else:
        print(f"Python {platform.python_version()} on {platform.machine()}, "
              f"{os.cpu_count()} CPUs; warm = median of >= {args.repeat} runs and "
              f">= {args.min_time:g} s; cold = first check in a fresh process")
        print()
        print(format_table(rows))
        print()
        print(goal_line(row))
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    sys.exit(main())
