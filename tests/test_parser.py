"""Parser: every construct becomes the right node, with spans; syntax errors in words."""

from __future__ import annotations

import pytest

from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_expression, parse_module


def parse(text: str) -> tuple[n.Module, list[tuple[str, int, int, str]]]:
    sink = DiagnosticSink()
    result = parse_module(text, "t.world", sink)
    return result.module, [(d.code, d.span.line, d.span.column, d.message)
                           for d in sink.diagnostics]


def test_declarations_and_spans() -> None:
    module, errors = parse(
        'world W "doc"\n'
        "enum E { a, b = \"b b\" }\n"
        "entity U { key id: str  name: str(1..80)? = none \"the name\" }\n"
    )
    assert errors == []
    world, enum, entity = module.decls
    assert isinstance(world, n.WorldDecl) and world.name.name == "W" and world.doc == "doc"
    assert isinstance(enum, n.EnumDecl)
    assert [(m.name.name, m.value) for m in enum.members] == [("a", None), ("b", "b b")]
    assert isinstance(entity, n.EntityDecl)
    key, name = entity.fields
    assert key.is_key and not name.is_key
    assert name.type.optional and name.type.constraints[0] == n.RangeConstraint(
        low=1, high=80, span=name.span)
    assert name.doc == "the name" and isinstance(name.default, n.NoneLit)
    assert (entity.span.line, entity.span.column) == (3, 1)
    assert (name.name.span.line, name.name.span.column) == (3, 25)


@pytest.mark.parametrize(("text", "expected"), [
    ("1 + 2 * 3", n.Binary(op="+", left=n.IntLit(value=1, span=n.NO_SPAN),
                           right=n.Binary(op="*", left=n.IntLit(value=2, span=n.NO_SPAN),
                                          right=n.IntLit(value=3, span=n.NO_SPAN),
                                          span=n.NO_SPAN), span=n.NO_SPAN)),
    ("-1", n.IntLit(value=-1, span=n.NO_SPAN)),
    ("not a in b", n.Not(operand=n.Compare(op="in", left=n.NameRef(name="a", span=n.NO_SPAN),
                                           right=n.NameRef(name="b", span=n.NO_SPAN),
                                           span=n.NO_SPAN), span=n.NO_SPAN)),
    ("a not in b", n.Compare(op="not in", left=n.NameRef(name="a", span=n.NO_SPAN),
                             right=n.NameRef(name="b", span=n.NO_SPAN), span=n.NO_SPAN)),
])
def test_expression_precedence(text: str, expected: n.Expr) -> None:
    assert parse_expression(text) == expected


def _shape(e: n.Expr) -> str:
    """An expression with every operator parenthesised, to show how it was grouped."""
    if isinstance(e, n.Binary):
        return f"({_shape(e.left)} {e.op} {_shape(e.right)})"
    if isinstance(e, n.Unary):
        return f"({e.op}{_shape(e.operand)})"
    if isinstance(e, n.NameRef):
        return e.name
    if isinstance(e, n.IntLit):
        return str(e.value)
    raise AssertionError(type(e).__name__)


@pytest.mark.parametrize(("text", "grouped"), [
    ("2 ** 3 ** 2", "(2 ** (3 ** 2))"),          # right-associative, as in Python
    ("-x ** 2", "(-(x ** 2))"),                  # binds tighter than a prefix minus
    ("x ** -1", "(x ** -1)"),
    ("x ** -y ** 2", "(x ** (-(y ** 2)))"),
    ("2 * x ** 2 + 1", "((2 * (x ** 2)) + 1)"),
    ("-2 ** 2", "(-(2 ** 2))"),
])
def test_power_groups_as_in_python(text: str, grouped: str) -> None:
    assert _shape(parse_expression(text)) == grouped


def test_fstring_parts_and_spans() -> None:
    expr = parse_expression('f"total {o.total:.2f} for {{you}}"')
    assert isinstance(expr, n.FStr)
    text0, interp, text1 = expr.parts
    assert text0 == "total " and text1 == " for {you}"
    assert isinstance(interp, n.Interpolation) and interp.spec == ".2f"
    assert isinstance(interp.expr, n.Attribute)
    assert interp.expr.span.column == 10


def test_keywords_are_contextual() -> None:
    _, errors = parse("record R { type: str  order: int }\n"
                           "fn f(r: R) -> str { return r.type }\n")
    assert errors == []


@pytest.mark.parametrize(("text", "error"), [
    ("entity U {\n  key id str\n}", ("WS101", 2, 10, "expected ':' after 'id', found 'str'")),
    ("tool t(a: ) {}", ("WS101", 1, 11, "expected a type after ':', found ')'")),
    ("tool t() { let x = }", ("WS101", 1, 20, "expected an expression after '=', found '}'")),
    ('tool t() { fail "oops }', ("WS102", 1, 17,
                                 "string is not closed before the end of the line")),
    ('fn f() -> str { return "a\\q" }', ("WS103", 1, 24, "invalid escape sequence in string")),
    ('fn f() -> str { return f"a {x" }', ("WS104", 1, 24, "'{' in f-string is never closed")),
    ("type T = str matching /[/", ("WS103", 1, 23,
                                   "invalid regular expression: unterminated character set "
                                   "at position 0")),
])
def test_syntax_errors_in_words(text: str, error: tuple[str, int, int, str]) -> None:
    _, errors = parse(text)
    assert errors == [error]


def test_one_error_per_broken_declaration_and_the_rest_parses() -> None:
    module, errors = parse("record A { x: }\nrecord B { y: int }\nrecord C { z int }\n")
    assert [e[:2] for e in errors] == [("WS101", 1), ("WS101", 3)]
    assert [d.name.name for d in module.decls if isinstance(d, n.RecordDecl)] == ["B"]


def test_deep_nesting_is_a_diagnostic() -> None:
    _, errors = parse("fn f() -> int { return " + "(" * 500 + "1" + ")" * 500 + " }")
    assert [e[0] for e in errors] == ["WS105"]


def test_comments_are_collected() -> None:
    module, errors = parse("# head\nrecord R { x: int  # trailing\n}\n")
    assert errors == []
    assert [(c.text, c.span.line) for c in module.comments] == [("# head", 1),
                                                                 ("# trailing", 2)]


def test_keywords_are_names_where_only_a_name_fits() -> None:
    module, errors = parse("record A { x: str  state: str  type: int  tool: int }\n"
                           "type X = str\n"
                           "state { a: int }\n")
    assert errors == []
    record, alias, state = module.decls
    assert isinstance(record, n.RecordDecl) and isinstance(alias, n.AliasDecl)
    assert isinstance(state, n.StateDecl)
    assert [f.name.name for f in record.fields] == ["x", "state", "type", "tool"]


# ------------------------------------------------------------- lone surrogates
#: Places a string escape can name a lone surrogate (U+D800..U+DFFF), each with
#: the line and column of the literal that must be reported.
SURROGATE_STRINGS = [
    pytest.param('fn f() -> str { return "a\\uD800b" }', 1, 24, id="string-literal"),
    pytest.param('fn f() -> str { return "a\\u{dfff}" }', 1, 24, id="braced-escape"),
    pytest.param('fn f(x: int) -> str { return f"a\\uDC00 {x}" }', 1, 30, id="f-string-text"),
    pytest.param('fn f(x: int) -> str { return f"{x} \\uDBFF" }', 1, 30,
                 id="f-string-text-after"),
    pytest.param('enum E { a = "\\uD800" }', 1, 14, id="enum-wire-value"),
    pytest.param('world W "doc \\uD800"', 1, 9, id="world-doc"),
    pytest.param('record R {\n  x: int "\\uDFFF"\n}', 2, 10, id="field-doc"),
    pytest.param('tool t() -> str """\n  doc \\uD800\n  """ {\n  return "x"\n}', 1, 17,
                 id="triple-quoted-doc"),
    pytest.param('import "a\\uD800.world"', 1, 8, id="import-path"),
    pytest.param('world W "x"\nstate { s: str = "" }\n'
                 'task t in W { instruction "i" given { s: "\\uD800" } }', 3, 42,
                 id="given-data"),
]


@pytest.mark.parametrize(("text", "line", "column"), SURROGATE_STRINGS)
def test_lone_surrogate_escape_in_a_string_is_ws107(text: str, line: int, column: int) -> None:
    """A surrogate is half of a UTF-16 pair, not a character: it cannot be encoded later."""
    _, errors = parse(text)
    assert [(code, ln, col) for code, ln, col, _ in errors] == [("WS107", line, column)]
    assert "lone surrogate" in errors[0][3]


@pytest.mark.parametrize(("pattern", "column"), [
    pytest.param("\\uD800", 23, id="escape"),
    pytest.param("[\\uD800-\\uDBFF]+", 23, id="range"),
    pytest.param("a\\U0000DFFFb", 23, id="long-escape"),
])
def test_lone_surrogate_in_a_regex_is_ws108(pattern: str, column: int) -> None:
    _, errors = parse(f"type T = str matching /{pattern}/")
    assert [(code, ln, col) for code, ln, col, _ in errors] == [("WS108", 1, column)]
    assert "lone surrogate" in errors[0][3]


@pytest.mark.parametrize("text", [
    pytest.param('fn f() -> str { return "\\uD7FF\\uE000\\u{10FFFF}\\u{1F600}" }',
                 id="neighbours-of-the-range"),
    pytest.param('fn f() -> str { return "\\\\uD800" }', id="escaped-backslash"),
    pytest.param("type T = str matching /\\\\uD800|\\uD7FF|[\\uE000-\\uFFFF]/",
                 id="regex-escaped-backslash-and-neighbours"),
    pytest.param('# a comment may say \\uD800\nworld W "x"', id="comment"),
])
def test_characters_next_to_the_surrogates_are_fine(text: str) -> None:
    _, errors = parse(text)
    assert errors == []


def test_raw_lone_surrogate_in_the_text_is_ws107() -> None:
    """Text handed to the API (not read from a UTF-8 file) can hold a raw surrogate."""
    _, errors = parse('world W "x"\nenum E { a = "\ud800" }\n# \udfff\n')
    assert [(code, ln, col) for code, ln, col, _ in errors] == [("WS107", 2, 15)]
