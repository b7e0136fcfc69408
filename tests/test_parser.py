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
    # the broken fields are skipped, the declarations around them kept
    fields = {d.name.name: [f.name.name for f in d.fields]
              for d in module.decls if isinstance(d, n.RecordDecl)}
    assert fields == {"A": [], "B": ["y"], "C": []}


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


def test_a_field_after_a_default_may_be_named_like_a_keyword() -> None:
    """After ``= 0.0`` a word may continue the default or start the next field: `tags`
    is a field's name there (lark's own contextual lexer reads the keyword and fails), and
    the keyword where a task's items stand."""
    module, errors = parse('world W "w"\n'
                           "entity U { key id: str  credit: float = 0.0  tags: list[str]\n"
                           "  seed: int = 1  split: str }\n"
                           'state { users: table U }\n'
                           'task t in W { instruction "i" tags a, b  seed 3 }\n')
    assert errors == []
    _, entity, _, task = module.decls
    assert isinstance(entity, n.EntityDecl) and isinstance(task, n.TaskDecl)
    assert [f.name.name for f in entity.fields] == ["id", "credit", "tags", "seed", "split"]
    assert [type(item).__name__ for item in task.items] == ["Instruction", "Tags", "Seed"]
    _, bad = parse('task t in W { instruction "i" tags: a }\n')
    assert [(code, message) for code, _, _, message in bad] == [
        ("WS101", "expected a name after 'tags', found ':'")]


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


# ------------------------------------------------------------- error recovery
def codes_and_lines(text: str) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _, _ in parse(text)[1]]


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("tool t() {\n  let = 1\n  let y = 2\n  return +\n}\n",
                 [("WS101", 2), ("WS101", 4)], id="statements-of-one-block"),
    pytest.param("tool t() {\n  if a or any x in xs: x > 0 {\n    let = 1\n  }\n  let z = \n}\n",
                 [("WS111", 2), ("WS101", 6)], id="skipped-statement-holds-a-block"),
    pytest.param("tool t() {\n  if a {\n    let = 1\n  }\n  let y = 2 +\n}\n",
                 [("WS101", 3), ("WS101", 6)], id="inner-block-then-outer"),
    pytest.param("tool t() {\n  let d = days(14\n  return d\n}\n", [("WS109", 2)],
                 id="missing-paren-before-a-statement"),
    pytest.param('tool t() {\n  fail "oops }\n  let = 1\n}\n', [("WS102", 2), ("WS101", 3)],
                 id="unclosed-string"),
    pytest.param('tool t() {\n  let s = "a\\q"\n  let = 1\n}\n', [("WS103", 2), ("WS101", 3)],
                 id="bad-escape-then-error"),
    pytest.param("tool t() -> bool {\n  let a = 1 < 2 < 3\n  return a +\n}\n",
                 [("WS101", 2), ("WS101", 4)], id="chained-comparison-then-error"),
    pytest.param("entity E {\n  key id str\n  name: str\n  age int\n}\n",
                 [("WS101", 2), ("WS101", 4)], id="fields"),
    pytest.param("state {\n  a int\n  b: int\n  c: = 1\n}\n", [("WS101", 2), ("WS101", 4)],
                 id="state-items"),
    pytest.param('task k in W {\n  instruction 42\n  check a b\n  check ok: true\n}\n',
                 [("WS101", 2), ("WS101", 3)], id="task-items"),
    pytest.param("fn f(c: C) -> int {\n  match c {\n    case a { return }\n    case { }\n"
                 "    else { return 1 + }\n  }\n}\n", [("WS101", 4), ("WS101", 5)],
                 id="match-cases"),
    pytest.param("tool t() {\n  let x = foo(a,\n      b c)\n  return x\n}\n",
                 [("WS101", 3)], id="continuation-line-is-not-a-resume-point"),
    # found by damaging the corpus at random: each once gave a second, bogus error
    pytest.param("tool t() {\n  let xs = sorted(xs, key: x => -x, reverse}: true)\n"
                 "  let y = 1 +\n}\n", [("WS109", 2), ("WS101", 4)],
                 id="stray-brace-in-the-middle-of-a-line"),
    pytest.param("fn f(s: S) -> int {\n  match s {\n    case a {\n      require 1 > 0{ else \"m\"\n"
                 "    }\n    else {}\n  }\n  return 1\n}\n", [("WS101", 4)],
                 id="stray-opening-brace"),
    pytest.param("fn f(s: S) -> int {\n  match s {\n    case delive\"red {\n      return 1\n"
                 "    }\n    else { return 2 }\n  }\n}\n", [("WS102", 3)],
                 id="brace-lost-in-an-unclosed-string"),
    pytest.param("tool t() {\n  if a\" > b {\n    x = 1\n  } else {\n    x = 2\n  }\n}\n",
                 [("WS102", 2)], id="unclosed-string-before-an-else"),
    pytest.param("task k in W {\n  check paid: true\n  solution {\n    pay(card: \"C1\")\n  }\n"
                 "  or\n}\n", [("WS101", 6)], id="a-line-starting-with-or-is-no-new-item"),
    pytest.param("tool t() {\n  if x > 0 {\n    if x < 0 {\n      return\n    }\n@  }\n"
                 "  let = 1\n}\n", [("WS101", 6), ("WS101", 7)],
                 id="closed-but-unreduced-block"),
    pytest.param('tool t() {\n  let s = ["a\\q"x", "b"]\n  let = 1\n}\n',
                 [("WS103", 2), ("WS101", 3)], id="debris-of-a-bad-literal-on-its-line"),
])
def test_recovery_reports_each_independent_error_once(
        text: str, expected: list[tuple[str, int]]) -> None:
    assert codes_and_lines(text) == expected


def test_recovery_keeps_the_rest_of_the_declaration() -> None:
    module, errors = parse("entity E {\n  key id: str\n  name str\n  age: int\n}\n")
    assert len(errors) == 1
    (entity,) = module.decls
    assert isinstance(entity, n.EntityDecl)
    assert [f.name.name for f in entity.fields] == ["id", "age"]


def test_errors_per_declaration_are_capped() -> None:
    _, errors = parse("tool t() {\n" + "  let = 1\n" * 50 + "}\ntool u() {\n  let = 2\n}\n")
    lines = [line for _, line, _, _ in errors]
    assert len(lines) == 11  # ten in t, then u still gets its own
    assert lines[-1] == 54


def test_unclosed_brace_names_the_brace_and_the_declaration() -> None:
    sink = DiagnosticSink()
    parse_module("tool lend() {\n  let x = 1\n\ntool other() { }\n", "t.world", sink)
    (d,) = sink.diagnostics
    assert (d.code, d.span.line, d.span.column) == ("WS109", 1, 13)
    assert d.message == "'{' of tool 'lend' is never closed"
    assert d.hints == ("add '}' before line 4, where `tool` starts the next declaration",)
    assert [(r.span.line, r.message) for r in d.related] == [
        (4, "the next declaration starts here")]


@pytest.mark.parametrize(("text", "message"), [
    ("tool t() {\n  if a {\n    let x = 1\n", "'{' of the `if` on line 2 (in tool 't') is never "
     "closed"),
    ("tool t() {\n  let m = {\"a\": 1,\n", "'{' of a map (in tool 't') is never closed"),
    ("tool t() {\n  let x = f(1, 2\n}\n", "'(' of the call to 'f' is never closed: '}' comes "
     "first"),
    ("tool t() {\n  let x = [1, 2\n}\n", "'[' of a list is never closed: '}' comes first"),
    ("entity E {\n  key id: str\n", "'{' of entity 'E' is never closed"),
])
def test_unclosed_brackets_say_what_they_open(text: str, message: str) -> None:
    _, errors = parse(text)
    assert [(code, msg) for code, _, _, msg in errors] == [("WS109", message)]


@pytest.mark.parametrize(("text", "code", "hint"), [
    ("tool t() { let x = 1 if c else 2 }", "WS110", "write `if c then 1 else 2`"),
    ("tool t() { return f(a if c else b) }", "WS110", "write `if c then a else b`"),
    ("invariant i: ok or all x in xs: x > 0", "WS111",
     "put it in parentheses: `or (all x in ...: condition)`; a quantifier's condition reaches "
     "as far right as it can"),
    ("tool t() { require not any x in xs: x else \"m\" }", "WS111",
     "put it in parentheses: `not (any x in ...: condition)`; a quantifier's condition reaches "
     "as far right as it can"),
    ("tool t() { return any(x > 0 for x in xs) }", "WS111",
     "write `any x in xs: condition` (Python's `any(condition for x in xs)`)"),
    ("tool t() { len(xs) }", "WS113",
     "use its result: `let r = f(...)`, `return f(...)` or `require f(...) else \"...\"`; for "
     "a call made only for its effect (`next(ids)`, a `random_*` draw) write `let _ = f(...)`"),
    ("tool t() { xs.append(1) }", "WS113",
     "lists, sets and maps change through statements: `append x to xs`, `remove x from xs`, "
     "`m[k] = v`, `xs = sorted(xs)`"),
])
def test_known_mistakes_get_their_own_words(text: str, code: str, hint: str) -> None:
    sink = DiagnosticSink()
    parse_module(text, "t.world", sink)
    assert [(d.code, d.hints) for d in sink.diagnostics] == [(code, (hint,))]


@pytest.mark.parametrize("text", ["return xs[1:2:3:4]", "return xs[1:2:3]", "return xs[1:]"])
def test_slices_the_grammar_lacks_say_which_forms_exist(text: str) -> None:
    """WS112 asks the grammar which slice forms parse, so it stays true when slicing grows."""
    from worldspec.dsl.recovery import _slice_forms

    sink = DiagnosticSink()
    parse_module("fn f(xs: list[int]) -> list[int] { " + text + " }", "t.world", sink)
    forms = _slice_forms()
    if (text == "return xs[1:]" and "xs[a:]" in forms) or (
            text == "return xs[1:2:3]" and "xs[a:b:c]" in forms):
        assert not sink.diagnostics
        return
    (d,) = sink.diagnostics
    assert d.code == "WS112"
    if forms:
        assert all(f"`{form}`" in d.hints[0] for form in forms)
    else:
        assert d.message == "there is no slicing: `[...]` takes one index or key"


def test_a_list_literal_with_a_colon_is_not_called_a_slice() -> None:
    _, errors = parse("fn f() -> list[int] { return [1:2] }")
    assert [code for code, *_ in errors] == ["WS101"]


def test_error_after_a_bad_regex_is_reported_not_raised() -> None:
    """Wording the error probes the parser, which reduced the bad regex and raised (fuzzing)."""
    _, errors = parse("record R { x: str matching /\\uD800/ 5 }\n")
    assert errors and errors[0][0] in ("WS101", "WS108")


@pytest.mark.parametrize("seed", range(3))
def test_random_damage_to_the_corpus_never_raises(seed: int) -> None:
    """Recovery reads the parser's stacks after any error: damaged files only give diagnostics."""
    import random
    from pathlib import Path

    root = Path(__file__).resolve().parent
    texts = [p.read_text(encoding="utf-8") for p in sorted((root / "corpus").rglob("*.world"))]
    rng = random.Random(seed)
    pieces = ["{", "}", "(", ")", "[", "]", ":", ",", "=", "if", "else", "let", "any", '"',
              "\n", " or ", "[1:", "f(", "return", "#", "\u00a0", "@"]
    for _ in range(150):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(text) + 1)
            if rng.random() < 0.5:
                text = text[:at] + rng.choice(pieces) + text[at:]
            else:
                text = text[:at] + text[at + rng.randint(1, 8):]
        sink = DiagnosticSink()
        parse_module(text, "t.world", sink)
        lines = text.count("\n") + 1
        for d in sink.diagnostics:
            assert 1 <= d.span.line <= lines + 1 and d.span.column >= 1, d
