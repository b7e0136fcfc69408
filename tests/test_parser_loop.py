"""Our LALR loop (dsl/driver.py) against lark's own: the same modules, spans, comments and
diagnostics for every ``.world`` file in the repository, whole and cut short.

The loop parses texts without syntax errors and hands every other text to lark, so for
each file both the clean parse and the error path (the file cut off at several points,
which leaves brackets open, statements half written, strings unterminated) are compared
with a parse in which the loop is switched off.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from worldspec.dsl import parser
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.driver import Stuck
from worldspec.dsl.nodes import walk

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(p for folder in ("examples", "tests") for p in (ROOT / folder).rglob("*.world"))


def parse_all(text: str) -> tuple[Any, ...]:
    """Everything a parse gives: the module, every node's span, the comments, the
    diagnostics (code, span, message) and whether it was clean."""
    sink = DiagnosticSink()
    result = parser.parse_module(text, "t.world", sink)
    module = result.module
    return (result.ok, module, [(type(node).__name__, node.span) for node in walk(module)],
            [(c.text, c.span) for c in module.comments],
            [(d.code, d.span, d.message) for d in sink.sorted()])


def _stuck(start: str) -> Any:
    """Our loop switched off: every text goes to lark, as if the loop were stuck on it."""
    raise Stuck(start)


def test_the_repository_has_world_files_to_compare() -> None:
    assert len(FILES) > 100


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_loop_parses_every_file_as_lark_does(path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    cuts = sorted({len(text) * k // 7 for k in range(1, 7)})
    ours = [parse_all(text)] + [parse_all(text[:cut]) for cut in cuts]
    with monkeypatch.context() as patch:
        patch.setattr(parser, "_loop", _stuck)
        larks = [parse_all(text)] + [parse_all(text[:cut]) for cut in cuts]
    assert ours[0] == larks[0]
    for cut, mine, theirs in zip(cuts, ours[1:], larks[1:], strict=True):
        assert mine == theirs, f"cut at {cut}"


def test_a_clean_file_is_parsed_by_the_loop_alone() -> None:
    """The loop does parse (this test would pass vacuously if every text fell back)."""
    text = (ROOT / "examples" / "messaging" / "messaging.world").read_text(encoding="utf-8")
    loop = parser._loop("start")
    transformer = parser._transformer("start")
    transformer.reset(parser._Positions("t.world", 0, 0))
    decls = loop.parse(text)
    assert decls and decls == list(parser.parse_module(text, "t.world",
                                                       DiagnosticSink()).module.decls)


def test_a_syntax_error_stops_the_loop() -> None:
    transformer = parser._transformer("start")
    transformer.reset(parser._Positions("t.world", 0, 0))
    with pytest.raises(Stuck):
        parser._loop("start").parse('world W "A world."\n\nentity U { key id: str name }\n')
