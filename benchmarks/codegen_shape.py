"""How generated code reads, per example world: generated lines per spec line, lines over 100
characters, and lines that reach into private attributes (``obj._name``) of runtime objects.

Not a timing: the figures are exact and the same on every machine. The goals are those of
the code-generation issue: at most 1.4 generated lines (``world.py``) per spec line (every
``.world`` file the world is built from), at most 2% of generated lines over 100 characters,
no runtime-private name in generated code.

    python benchmarks/codegen_shape.py              # the table, every example
    python benchmarks/codegen_shape.py --json       # one JSON document
    python benchmarks/codegen_shape.py --strict     # exit 1 when a goal is missed
    python benchmarks/codegen_shape.py examples/messaging   # some examples only
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: the issue's goals
LINES_PER_SPEC_LINE = 1.4
LONG_LINE = 100
LONG_SHARE = 0.02

#: an attribute read or written whose name starts with one underscore; dunders and the enum
#: module's documented sunder names (``_value_``) are Python's, not the runtime's
_PRIVATE_ATTRIBUTE = re.compile(r"\.(_[A-Za-z0-9][A-Za-z0-9_]*)\b")


@dataclass(frozen=True)
class Shape:
    world: str
    spec_lines: int
    generated_lines: int
    long_lines: int
    private_lines: int

    @property
    def ratio(self) -> float:
        return self.generated_lines / self.spec_lines if self.spec_lines else 0.0

    @property
    def long_share(self) -> float:
        return self.long_lines / self.generated_lines if self.generated_lines else 0.0

    @property
    def met(self) -> bool:
        return (self.ratio <= LINES_PER_SPEC_LINE and self.long_share <= LONG_SHARE
                and self.private_lines == 0)


#: a one-line string literal (its text is data, not an attribute read)
_STRING_LITERAL = re.compile(r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"')


def _private(line: str) -> bool:
    code = _STRING_LITERAL.sub("''", line).split("  # ", 1)[0]
    return any(not name.endswith("_") for name in _PRIVATE_ATTRIBUTE.findall(code))


def measure(paths: Sequence[str]) -> list[Shape]:
    sys.path.append(str(ROOT))  # after $PYTHONPATH: a checkout on it measures itself
    from worldspec.compiler.build import generate_all
    from worldspec.services.validation import check_paths

    files = sorted({str(p) for raw in paths for p in _spec_files(Path(raw))})
    validated = check_paths(files)
    if not validated.ok:
        raise SystemExit("the examples do not check clean: run 'worldspec check' on them")
    shapes = []
    for package in generate_all(validated.result).packages:
        world = validated.result.model.worlds[package.world]
        sources = {world.file} | {t.file for t in world.tasks.values()}
        spec = sum(len(validated.result.program.files[p].text.splitlines())
                   for p in sources if p in validated.result.program.files)
        lines = package.files["world.py"].splitlines()
        shapes.append(Shape(
            world=package.name, spec_lines=spec, generated_lines=len(lines),
            long_lines=sum(len(line) > LONG_LINE for line in lines),
            private_lines=sum(_private(line) for line in lines)))
    return shapes


def _spec_files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.rglob("*.world"))


def table(shapes: Sequence[Shape]) -> str:
    head = (f"{'world':<28} {'spec':>6} {'generated':>9} {'per spec line':>13} "
            f"{'over 100':>9} {'share':>6} {'private':>7}")
    rows = [head, "-" * len(head)]
    for s in [*shapes, _total(shapes)]:
        rows.append(f"{s.world:<28} {s.spec_lines:>6,} {s.generated_lines:>9,} {s.ratio:>13.2f} "
                    f"{s.long_lines:>9,} {s.long_share:>6.1%} {s.private_lines:>7,}")
    rows.append(f"goals: <= {LINES_PER_SPEC_LINE} generated lines per spec line, <= "
                f"{LONG_SHARE:.0%} over {LONG_LINE} characters, no private attribute")
    return "\n".join(rows)


def _total(shapes: Sequence[Shape]) -> Shape:
    return Shape("all", sum(s.spec_lines for s in shapes),
                 sum(s.generated_lines for s in shapes), sum(s.long_lines for s in shapes),
                 sum(s.private_lines for s in shapes))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(ROOT / "examples")],
                        help="example folders or .world files (default: examples/)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    shapes = measure(args.paths)
    if args.json:
        print(json.dumps([{**asdict(s), "ratio": round(s.ratio, 3), "met": s.met}
                          for s in shapes], indent=2))
    else:
        print(table(shapes))
    return 1 if args.strict and not all(s.met for s in shapes) else 0


if __name__ == "__main__":
    raise SystemExit(main())
