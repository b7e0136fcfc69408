"""Spans run from a construct's first token to its last, keywords and brackets included.

Lark hands a rule's method only the children it keeps (no `let`, no `{`), so the parser
takes a node's extent from its copy of lark's value stack (``parser._ToNodes``). These
tests read every node's text back from the source: a `let` statement starts with `let`,
a block with `{` and ends with `}`, a call ends with `)`, on every ``.world`` file of the
repository and across an f-string (a parse nested inside a reduction).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tests.example_specs import example_specs
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.nodes import walk
from worldspec.dsl.parser import parse_module

ROOT = Path(__file__).resolve().parents[1]
FILES = example_specs()

#: node class -> how its text starts and how it ends (None: not checked)
ENDS: dict[type[n.Node], tuple[str | None, str | None]] = {
    n.Block: ("{", "}"),
    n.Let: ("let", None),
    n.If: ("if", "}"),
    n.For: ("for", "}"),
    n.Return: ("return", None),
    n.Require: ("require", None),
    n.ToolDecl: ("tool", "}"),
    n.FnDecl: ("fn", "}"),
    n.EntityDecl: ("entity", "}"),
    n.RecordDecl: ("record", "}"),
    n.TaskDecl: ("task", "}"),
    n.Call: (None, ")"),
    n.ListLit: ("[", "]"),
    n.MapLit: ("{", "}"),
}


def parsed(text: str) -> n.Module:
    result = parse_module(text, "t.world", DiagnosticSink())
    assert result.ok
    return result.module


def spans_out_of_place(text: str, module: n.Module | None = None) -> list[str]:
    """Each node of ``module`` (``text`` parsed by default) whose source text does not
    start and end as its kind does, or whose span does not match its lines and columns."""
    wrong = []
    for node in walk(parsed(text) if module is None else module):
        span = node.span
        source = text[span.start:span.end]
        head, tail = ENDS.get(type(node), (None, None))
        if (head is not None and not source.startswith(head)) or (
                tail is not None and not source.endswith(tail)):
            wrong.append(f"{type(node).__name__} at {span.line}:{span.column}: {source[:40]!r}")
        line_start = text.rfind("\n", 0, span.start) + 1
        if (span.line, span.column) != (text.count("\n", 0, span.start) + 1,
                                        span.start - line_start + 1):
            wrong.append(f"{type(node).__name__} at offset {span.start}: line/column")
    return wrong


def test_the_repository_has_example_worlds() -> None:
    assert len(FILES) > 20


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_node_spans_its_keywords_and_brackets(path: Path) -> None:
    assert spans_out_of_place(path.read_text(encoding="utf-8")) == []


def test_spans_after_an_fstring_are_the_statements_own() -> None:
    """An f-string's expressions are parsed while its statement is being reduced; the
    statements around it keep their own extents."""
    text = ('world W "A world."\n\n'
            'tool greet(name: str) -> str "Greet." {\n'
            '  let shown = f"{name.upper()} and {[1, 2][0]}"\n'
            '  let after = [name]\n'
            '  return f"hello {shown}" + after[0]\n'
            '}\n')
    assert spans_out_of_place(text) == []
    tool = parsed(text).decls[1]
    assert isinstance(tool, n.ToolDecl)
    shown, after, done = tool.body.body
    assert text[shown.span.start:shown.span.end] == (
        'let shown = f"{name.upper()} and {[1, 2][0]}"')
    assert text[after.span.start:after.span.end] == "let after = [name]"
    assert text[done.span.start:done.span.end] == 'return f"hello {shown}" + after[0]'


def test_the_check_finds_a_span_out_of_place() -> None:
    """The check above does fail on a wrong span: a block that lost its `}`, a statement
    that starts a column late."""
    text = 'world W "A world."\n\ntool t() -> int "T." {\n  let x = 1\n  return x\n}\n'
    module = parsed(text)
    assert spans_out_of_place(text, module) == []
    world, tool = module.decls
    assert isinstance(tool, n.ToolDecl)
    let, done = tool.body.body
    s = tool.body.span
    short_block = replace(tool.body, span=replace(s, end=s.end - 1, end_column=s.end_column - 1),
                          body=(replace(let, span=replace(let.span, start=let.span.start + 1)),
                                done))
    broken = replace(module, decls=(world, replace(tool, body=short_block)))
    assert [w.split(" at ")[0] for w in spans_out_of_place(text, broken)] == [
        "Block", "Let", "Let"]  # `}` missing; `et x = 1`, and not where its column says
