"""Mutation fuzzing: broken variants of the example worlds never crash the checker.

Every ``examples/**/*.world`` file (found when the tests are collected, so new
examples join automatically) is cut into rough tokens and lines, and seeded
random mutations are applied: delete, duplicate or swap tokens; delete,
duplicate or swap lines; insert an awkward character; truncate. Each variant
is checked in-process with :func:`compiler.api.check_source` under the
original file's path (so its imports resolve), and must come back with
diagnostics that have a catalog code and a span inside the file, and that
render as text and JSON. A sample also goes through the real command line
(:func:`worldspec.cli.main`), which must exit 0 or 1 without a traceback, and
variants that parse are run through the formatter, which must be idempotent.

Two kinds of variants keep the run both thorough and quick:

- **whole-file** variants mutate a complete example, so the semantic checks
  run with every declaration in context (about 0.1 s per check);
- **window** variants mutate a run of one to three consecutive top-level
  declarations cut out of an example (with its ``world`` header), which
  exercises the same parser and checker paths, plus the unresolved-name ones,
  at a fraction of the cost.

Everything is deterministic: one :class:`random.Random` per example and kind,
seeded from ``WORLDSPEC_FUZZ_SEED`` and the example's path. The number of
variants in all is ``WORLDSPEC_FUZZ_VARIANTS`` (default 3000, split evenly over
the examples; the command-line and formatter samples grow with it); raise it
for a longer hunt::

    WORLDSPEC_FUZZ_VARIANTS=30000 pytest tests/test_fuzz.py

A failure names the example, the variant number and the mutations applied,
prints the exception, and shows the variant cut down (line by line) to a
small input that still fails.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.example_specs import example_specs
from worldspec.cli.main import main
from worldspec.compiler.api import CheckResult, check_source
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import Diagnostic
from worldspec.dsl.render import render_github, render_json, render_text

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

#: How many variants in all (split over the examples), and the seed they come from.
TOTAL_VARIANTS = int(os.environ.get("WORLDSPEC_FUZZ_VARIANTS", "3000"))
SEED = int(os.environ.get("WORLDSPEC_FUZZ_SEED", "20240917"))
#: The share of the variants that mutate a whole file (the rest mutate windows).
WHOLE_FILE_SHARE = 0.05
#: How many variants in all go through the real command line (50 by default).
CLI_SAMPLE = max(50, TOTAL_VARIANTS // 60)
#: How many variants in all are offered to the formatter (those that parse are formatted).
FORMAT_SAMPLE = max(300, TOTAL_VARIANTS // 10)
#: Seconds spent at most on cutting a failing variant down to a small repro.
MINIMISE_BUDGET_S = 20.0


def example_files() -> list[Path]:
    """Every example spec, sorted, as found now (examples may be added at any time)."""
    return example_specs()


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


EXAMPLE_FILES = example_files()
EXAMPLE_IDS = [_rel(p) for p in EXAMPLE_FILES]


def _share(total: int) -> int:
    """One example's share of ``total`` variants (at least one)."""
    return max(1, -(-total // max(1, len(EXAMPLE_FILES))))


# ------------------------------------------------------------- mutations
#: Rough tokens: triple-quoted strings, strings and f-strings, regexes, comments,
#: names, numbers, multi-character operators, then any other single character.
_TOKEN = re.compile(
    r'"""[\s\S]*?"""'
    r'|f?"(?:\\.|[^"\\\n])*"'
    r"|/(?:\\.|[^/\\\n])+/"
    r"|#[^\n]*"
    r"|[A-Za-z_][A-Za-z0-9_]*"
    r"|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][-+]?\d+)?"
    r"|->|=>|==|!=|<=|>=|\?\?|//|\+=|-=|\*=|/=|\.\."
    r"|\S"
)

#: Characters worth inserting: delimiters that change how the rest lexes, escapes,
#: operators, control characters (never NUL: a NUL makes the file "binary"),
#: non-ASCII letters and symbols, zero-width and line-separator characters.
_CHARACTERS: tuple[str, ...] = (
    '"', '"""', 'f"', "'", "`", "{", "}", "{{", "}}", "[", "]", "(", ")", "#", "\\", "\\u",
    "\\u{", "/", ":", ",", ".", "..", "=", "<", ">", "?", "!", "+", "-", "*", "%", "@", "$",
    ";", "|", "&", "^", "~", "\t", "\r", "\n", "\x01", "\x08", "\x0b", "\x0c", "\x1b",
    "\x7f", "\x85", "\u00a0", "é", "ß", "Ω", "→", "中", "😀", "\u200b", "\u2028", "\u2029",
    "\ufeff", "\ufffd", "0", "9", "_", "x", "e", " ",
)


@dataclass(frozen=True, slots=True)
class Variant:
    """One mutated text and a description of how it was made."""

    source: str
    label: str
    text: str
    operations: tuple[str, ...]


def _tokens(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def _short(fragment: str) -> str:
    return repr(fragment if len(fragment) <= 30 else fragment[:27] + "...")


def _token_mutation(text: str, rng: random.Random, kind: str) -> tuple[str, str]:
    spans = _tokens(text)
    if len(spans) < 2:
        return text, f"{kind}: too few tokens"
    s, e = spans[rng.randrange(len(spans))]
    if kind == "delete token":
        return text[:s] + text[e:], f"delete token {_short(text[s:e])} at {s}"
    if kind == "duplicate token":
        return text[:e] + " " + text[s:e] + text[e:], f"duplicate token {_short(text[s:e])} at {s}"
    (s1, e1), (s2, e2) = sorted([(s, e), spans[rng.randrange(len(spans))]])
    if s1 == s2:
        return text, "swap a token with itself"
    return (text[:s1] + text[s2:e2] + text[e1:s2] + text[s1:e1] + text[e2:],
            f"swap tokens {_short(text[s1:e1])} at {s1} and {_short(text[s2:e2])} at {s2}")


def _line_mutation(text: str, rng: random.Random, kind: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    if len(lines) < 2:
        return text, f"{kind}: too few lines"
    i = rng.randrange(len(lines))
    if kind == "delete line":
        del lines[i]
        return "".join(lines), f"delete line {i + 1}"
    if kind == "duplicate line":
        line = lines[i] if lines[i].endswith("\n") else lines[i] + "\n"
        lines.insert(i, line)
        return "".join(lines), f"duplicate line {i + 1}"
    j = rng.randrange(len(lines))
    if not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines), f"swap lines {i + 1} and {j + 1}"


def _insert_character(text: str, rng: random.Random) -> tuple[str, str]:
    at = rng.randrange(len(text) + 1)
    ch = rng.choice(_CHARACTERS)
    return text[:at] + ch + text[at:], f"insert {ch!r} at {at}"


def _truncate(text: str, rng: random.Random) -> tuple[str, str]:
    at = rng.randrange(len(text) + 1)
    return text[:at], f"truncate at {at}"


MUTATIONS: dict[str, Callable[[str, random.Random], tuple[str, str]]] = {
    "delete token": lambda t, r: _token_mutation(t, r, "delete token"),
    "duplicate token": lambda t, r: _token_mutation(t, r, "duplicate token"),
    "swap tokens": lambda t, r: _token_mutation(t, r, "swap tokens"),
    "delete line": lambda t, r: _line_mutation(t, r, "delete line"),
    "duplicate line": lambda t, r: _line_mutation(t, r, "duplicate line"),
    "swap lines": lambda t, r: _line_mutation(t, r, "swap lines"),
    "insert character": _insert_character,
    "truncate": _truncate,
}
#: Truncation destroys the most, so it is drawn less often than the local edits.
_WEIGHTS = {name: (1 if name == "truncate" else 3) for name in MUTATIONS}


def mutate(text: str, rng: random.Random) -> tuple[str, tuple[str, ...]]:
    """Apply one to three random mutations; return the text and what was done."""
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 1, 2, 2, 3))):
        name = rng.choices(list(_WEIGHTS), weights=list(_WEIGHTS.values()))[0]
        text, what = MUTATIONS[name](text, rng)
        done.append(what)
    return text, tuple(done)


#: Where a top-level declaration starts: a declaration keyword at the start of a line.
_DECL_START = re.compile(
    r"^(?:import|world|config|enum|record|entity|union|type|state|invariant|tool|fn|task)\b",
    re.MULTILINE,
)


def declarations(text: str) -> tuple[str, list[str]]:
    """The ``world`` header line (or ``""``) and the text of each top-level declaration.

    Imports are left out of the declarations: a window is checked on its own, and
    reading an imported example again for every window would cost as much as a
    whole-file check.
    """
    starts = [m.start() for m in _DECL_START.finditer(text)]
    pieces = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]
    header = next((p.splitlines()[0] + "\n" for p in pieces if p.startswith("world")), "")
    return header, [p for p in pieces if not p.startswith(("import", "world"))]


def variants(path: Path, kind: str, count: int) -> Iterator[Variant]:
    """``count`` deterministic variants of one example.

    ``kind`` names the random stream; one ending in ``window`` mutates cuts of
    a few declarations, any other mutates the whole file.
    """
    source = _rel(path)
    text = path.read_text(encoding="utf-8")
    rng = random.Random(f"{SEED}:{source}:{kind}")
    header, decls = declarations(text)
    for i in range(count):
        if kind.endswith("window") and decls:
            size = rng.randint(1, min(3, len(decls)))
            first = rng.randrange(len(decls) - size + 1)
            base = header + "".join(decls[first:first + size])
            where = f"declarations {first + 1}-{first + size} of {len(decls)}"
        else:
            base, where = text, "whole file"
        mutated, operations = mutate(base, rng)
        yield Variant(source, f"{source} {kind} #{i} ({where})", mutated, operations)


# -------------------------------------------------------------- checking
def _line_count(text: str) -> int:
    return text.count("\n") + 1


def problems_with(result: CheckResult, path: str, text: str) -> list[str]:
    """Everything wrong with a check result: unknown codes, spans outside their file, ...

    An empty list means the result is well formed.
    """
    texts = {name: f.text for name, f in result.program.files.items()}
    texts.setdefault(path, text)
    found: list[str] = []

    def check_span(d: Diagnostic, line: int, end_line: int, column: int, file: str) -> None:
        if file not in texts:
            found.append(f"{d.code} points into {file!r}, which the program does not hold")
            return
        lines = _line_count(texts[file])
        if not 1 <= line <= lines + 1:
            found.append(f"{d.code} at line {line}, outside 1..{lines + 1}: {d.message}")
        if end_line < line:
            found.append(f"{d.code} ends on line {end_line} before it starts ({line})")
        if column < 1:
            found.append(f"{d.code} at column {column}: {d.message}")

    for d in result.diagnostics:
        entry = CATALOG.get(d.code)
        if entry is None:
            found.append(f"code {d.code!r} is not in the catalog: {d.message}")
        elif d.severity.value != entry.severity:
            found.append(f"{d.code} has severity {d.severity.value}, the catalog says "
                         f"{entry.severity}")
        if not d.message.strip():
            found.append(f"{d.code} has an empty message")
        check_span(d, d.span.line, d.span.end_line, d.span.column, d.span.file)
        for rel in d.related:
            check_span(d, rel.span.line, rel.span.end_line, rel.span.column, rel.span.file)
    # rendering walks the spans over the source lines: it must cope with every one
    render_text(list(result.diagnostics), texts, False)
    render_text(list(result.diagnostics), texts, True)
    json.loads(render_json(list(result.diagnostics)))
    render_github(list(result.diagnostics))
    return found


def failure_of(text: str, path: str) -> str | None:
    """Why checking ``text`` as ``path`` goes wrong (an exception or a bad result), or None."""
    try:
        result = check_source(text, path)
        bad = problems_with(result, path, text)
    except Exception as exc:  # the point of the test: nothing may escape
        return "".join(traceback.format_exception(exc, limit=-8))
    return "; ".join(bad) if bad else None


def _signature(reason: str) -> str:
    """The last line of a traceback (or the first problem): what kind of failure it is."""
    lines = [line for line in reason.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else reason[:200]


def _ddmin(pieces: list[str], fails: Callable[[str], bool], deadline: float) -> list[str]:
    """Drop chunks of ``pieces`` while the joined text still ``fails``, halving the chunks."""
    chunk = max(1, len(pieces) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i = 0
        removed = False
        while i < len(pieces) and time.monotonic() < deadline:
            candidate = pieces[:i] + pieces[i + chunk:]
            if candidate and fails("".join(candidate)):
                pieces = candidate
                removed = True
            else:
                i += chunk
        if not removed:
            chunk //= 2
    return pieces


def minimise(text: str, fails: Callable[[str], bool], budget_s: float) -> str:
    """Cut ``text`` down while ``fails`` holds: by lines, then by words, then by characters.

    A simple delta debugging with a time budget; the result still fails.
    """
    deadline = time.monotonic() + budget_s
    text = "".join(_ddmin(text.splitlines(keepends=True), fails, deadline))
    text = "".join(_ddmin(re.findall(r"\s+|\S+", text), fails, deadline))
    if len(text) <= 300:
        text = "".join(_ddmin(list(text), fails, deadline))
    return text


def report(failures: list[tuple[Variant, str]], path: str) -> str:
    """A failure message: counts, each kind of failure, and a minimised repro of the first."""
    kinds: dict[str, list[Variant]] = {}
    for variant, reason in failures:
        kinds.setdefault(_signature(reason), []).append(variant)
    first, reason = failures[0]
    signature = _signature(reason)
    small = minimise(first.text, lambda t: (f := failure_of(t, path)) is not None
                     and _signature(f) == signature, MINIMISE_BUDGET_S)
    parts = [f"{len(failures)} variant(s) of {path} broke the checker "
             f"(seed {SEED}, {len(kinds)} kind(s) of failure):"]
    for sig, vs in kinds.items():
        parts.append(f"  {len(vs)} x {sig}\n"
                     f"      first: {vs[0].label}: {'; '.join(vs[0].operations)}")
    parts.append(f"\nfirst failure: {first.label}: {'; '.join(first.operations)}\n{reason}")
    parts.append(f"minimised repro (check_source(text, {path!r})):\n{small!r}")
    return "\n".join(parts)


# ------------------------------------------------------------------ tests
pytestmark = pytest.mark.skipif(not EXAMPLE_FILES, reason="no examples/**/*.world yet")


@pytest.mark.parametrize("kind", ["whole", "window"])
@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=EXAMPLE_IDS)
def test_mutants_never_crash_the_checker(example: Path, kind: str) -> None:
    """Every variant checks without an exception and with well-formed diagnostics."""
    share = _share(TOTAL_VARIANTS)
    whole = max(1, round(share * WHOLE_FILE_SHARE))
    count = whole if kind == "whole" else max(1, share - whole)
    path = str(example)
    failures: list[tuple[Variant, str]] = []
    for variant in variants(example, kind, count):
        reason = failure_of(variant.text, path)
        if reason is not None:
            failures.append((variant, reason))
    if failures:
        pytest.fail(report(failures, path), pytrace=False)


def test_original_examples_are_clean() -> None:
    """The unmutated examples have no errors: otherwise the fuzzing starts from noise."""
    for example in EXAMPLE_FILES:
        result = check_source(example.read_text(encoding="utf-8"), str(example))
        errors = [f"{d.span}: {d.code} {d.message}" for d in result.errors]
        assert not errors, f"{_rel(example)} has errors:\n" + "\n".join(errors)


def _cli_sample() -> list[Variant]:
    """About :data:`CLI_SAMPLE` variants, spread over the examples and both kinds."""
    per_file = _share(CLI_SAMPLE)
    sample: list[Variant] = []
    for example in EXAMPLE_FILES:
        whole = per_file // 3
        sample.extend(variants(example, "cli-whole", whole))
        sample.extend(variants(example, "cli-window", per_file - whole))
    return sample


def _copy_example_tree(example: Path, into: Path) -> Path:
    """Copy the example's folder into ``into``; return where the example is in the copy."""
    folder = example.parent
    target = into / folder.relative_to(EXAMPLES)
    if not target.exists():
        shutil.copytree(folder, target)
    return target / example.name


def test_cli_on_mutants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                        capsys: pytest.CaptureFixture[str]) -> None:
    """A sample of variants through ``worldspec check``: status 0 or 1, never a traceback.

    Each variant is written beside a copy of its example (so imports resolve)
    and checked in each output format in turn.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    formats = ("text", "json", "github")
    bad: list[str] = []
    for i, variant in enumerate(_cli_sample()):
        copy = _copy_example_tree(ROOT / variant.source, tmp_path / "trees")
        mutant = copy.with_name(f"mutant_{i}.world")
        mutant.write_text(variant.text, encoding="utf-8", newline="")
        fmt = formats[i % len(formats)]
        status = main(["check", "--format", fmt, str(mutant.relative_to(tmp_path))])
        out, err = capsys.readouterr()
        both = out + err
        if status not in (0, 1) or "Traceback" in both or "internal error" in both:
            bad.append(f"{variant.label} ({'; '.join(variant.operations)}), --format {fmt}: "
                       f"exit {status}\n{both[-2000:]}")
            continue
        if fmt == "json":
            parsed = json.loads(out)
            assert isinstance(parsed, list), variant.label
            assert (status == 1) == any(d["severity"] == "error" for d in parsed), variant.label
    assert not bad, "\n\n".join(bad)


def test_formatter_on_mutants_that_parse() -> None:
    """Variants that parse format without an error, and formatting is idempotent.

    The formatted text must also parse: formatting it again must give it back.
    Window variants are checked before and after formatting too: the layout
    may move diagnostics but must not change which codes are reported.
    """
    formatter = pytest.importorskip("worldspec.dsl.formatter")
    format_source: Callable[[str, str], str | None] = formatter.format_source
    per_file = _share(FORMAT_SAMPLE)
    bad: list[str] = []
    formatted_count = 0
    for example in EXAMPLE_FILES:
        path = str(example)
        whole = max(1, per_file // 20)
        for kind, count in (("fmt-whole", whole), ("fmt-window", per_file - whole)):
            for variant in variants(example, kind, count):
                try:
                    once = format_source(variant.text, path)
                    if once is None:
                        continue
                    formatted_count += 1
                    twice = format_source(once, path)
                except Exception as exc:  # nothing may escape the formatter
                    bad.append(f"{variant.label} ({'; '.join(variant.operations)}): "
                               + "".join(traceback.format_exception(exc, limit=-6)))
                    continue
                if twice != once:
                    bad.append(f"{variant.label} ({'; '.join(variant.operations)}): formatting "
                               f"is not idempotent\n--- once:\n{once[:1500]}\n--- twice:\n"
                               f"{(twice or '<None: the formatted text does not parse>')[:1500]}")
                    continue
                if kind == "fmt-window":
                    before = sorted(d.code for d in check_source(variant.text, path).diagnostics)
                    after = sorted(d.code for d in check_source(once, path).diagnostics)
                    if before != after:
                        bad.append(f"{variant.label} ({'; '.join(variant.operations)}): "
                                   f"formatting changed the diagnostics from {before} to "
                                   f"{after}\n--- formatted:\n{once[:1500]}")
    assert not bad, f"{len(bad)} formatter failure(s):\n\n" + "\n\n".join(bad[:5])
    assert formatted_count > 0, "no variant parsed, so the formatter was never exercised"
