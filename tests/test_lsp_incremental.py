"""The language server's keystroke path, in process: the incremental parse must give what a
full parse gives (the same tree, the same spans, the same diagnostics), and a syntax error in
one declaration must leave the others analysed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.example_specs import example_specs
from worldspec.compiler.api import check_source
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module
from worldspec.lsp.analysis import Analyser, blank_broken_declarations
from worldspec.lsp.loading import DocumentParser

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = example_specs()


def spans(module: n.Module) -> list[tuple[str, int, int, int, int, int, int]]:
    return [(type(x).__name__, x.span.line, x.span.column, x.span.end_line, x.span.end_column,
             x.span.start, x.span.end)
            for x in n.walk(module) if not isinstance(x, (n.Module, n.Comment))]


def edits(text: str) -> list[str]:
    """Keystrokes spread over the file: a character typed, a line added, a line removed."""
    out = []
    for fraction in (0.1, 0.5, 0.9):
        at = text.index("\n", int(len(text) * fraction)) + 1
        out.append(text[:at] + "# typed\n" + text[at:])
        out.append(text[:at] + "  " + text[at:])
        end = text.find("\n", at)
        out.append(text[:at] + text[end + 1:])
    return out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_incremental_parse_is_the_full_parse(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    parser = DocumentParser()
    for version in [text, *edits(text), text]:
        mine_sink, full_sink = DiagnosticSink(), DiagnosticSink()
        mine = parser.parse(version, "x.world", mine_sink)
        full = parse_module(version, "x.world", full_sink)
        assert mine.ok == full.ok
        assert mine.module == full.module
        assert spans(mine.module) == spans(full.module)
        assert mine_sink.sorted() == full_sink.sorted()


def test_a_keystroke_parses_one_declaration_again() -> None:
    text = (ROOT / "examples" / "messaging" / "messaging.world").read_text(encoding="utf-8")
    parser = DocumentParser()
    parser.parse(text, "m.world", DiagnosticSink())
    assert parser.parsed > 20
    at = text.index("tool logout")
    parser.parse(text[:at + 8] + "x" + text[at + 8:], "m.world", DiagnosticSink())
    assert parser.parsed == 1


def test_the_analysis_reports_what_check_reports(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "messaging" / "messaging.world").read_text(encoding="utf-8")
    path = tmp_path / "m.world"
    analyser = Analyser(lambda _path: None)
    for version in [text, text.replace("current_user.name", "current_usr.name"),
                    text.replace("tool logout()", "tool logout(")]:
        mine = analyser.analyse(path, version)
        full = check_source(version, str(path))
        assert [(d.code, d.message, d.span) for d in mine.diagnostics] == \
            [(d.code, d.message, d.span) for d in full.diagnostics]


def test_blanking_keeps_every_offset() -> None:
    text = 'enum A { x }\n\ntool t( -> int {\n  return 1\n}\n\nenum B { y }\n'
    broken = text.index("tool")
    blanked = blank_broken_declarations(text, [broken + 5])
    assert len(blanked) == len(text) and blanked.count("\n") == text.count("\n")
    assert "enum A { x }" in blanked and "enum B { y }" in blanked and "tool" not in blanked
    assert parse_module(blanked, "b.world", DiagnosticSink()).ok


def test_a_broken_declaration_leaves_the_others_typed(tmp_path: Path) -> None:
    text = (ROOT / "examples" / "messaging" / "messaging.world").read_text(encoding="utf-8")
    broken = text.replace("tool logout()", "tool logout(")
    analysis = Analyser(lambda _path: None).analyse(tmp_path / "m.world", broken)
    assert not analysis.parsed_ok
    index = analysis.index
    assert "logout" not in index.tools and "login" in index.tools
    assert index.model.worlds["MobileMessaging"].tools["login"].params


@pytest.mark.parametrize(("before", "in_type", "callee", "argument"), [
    ("  name: ", True, None, None),
    ("tool f(a: int, b: ", True, None, None),
    ("  let x: ", True, None, None),
    ("fn f() -> ", True, None, None),
    ("  users: table ", True, None, None),
    ("  tags: map[str, ", True, None, None),
    ("  return orders[", False, None, None),
    ("  let xs = [1, ", False, None, None),
    ("  check c: ", False, None, None),
    ("  f(a, ", False, "f", None),
    ("  cancel(order: ", False, "cancel", "order"),
])
def test_the_completion_context_is_read_from_the_line(before: str, in_type: bool,
                                                      callee: str | None,
                                                      argument: str | None) -> None:
    from worldspec.lsp.features import completion_context

    ctx = completion_context(before, len(before))
    assert (ctx.in_type, ctx.callee, ctx.argument) == (in_type, callee, argument)
