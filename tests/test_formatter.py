"""Tests of the canonical formatter (:mod:`dsl.formatter`).

The corpus in ``tests/corpus/format`` exercises every construct of the
grammar. Every file must format idempotently and re-parse to an equal tree
with the same comments; ``*.canonical.world`` files are already canonical
(formatting leaves them unchanged); ``X.input.world`` must format to
``X.canonical.world``. Hypothesis adds random expression trees, random doc
strings and comments inserted at random places.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.example_specs import example_specs
from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.formatter import (
    MAX_WIDTH,
    format_expr,
    format_module,
    format_source,
    quote_string,
)
from worldspec.dsl.parser import parse_expression, parse_module

CORPUS = Path(__file__).parent / "corpus" / "format"
EXAMPLES = example_specs()
FILES = sorted(CORPUS.glob("*.world"))
CANONICAL = [p for p in FILES if p.name.endswith(".canonical.world")]
INPUTS = [p for p in FILES if p.name.endswith(".input.world")]
NO_SPAN = n.Span("<test>", 0, 0, 0, 0)


def test_prefix_operators_are_not_misread() -> None:
    """Regression: prefix entries were keyed by ``id()`` of dropped nodes, so a later
    node could take the id and be rewritten (``[2 * -3, a - -1]`` read as ``a - 3``)."""
    probe = "[2 * -3, a - -1, -x, a == b, c - -2, not d, e != f]"
    expected = n.ListLit(items=(
        n.Binary(op="*", left=n.IntLit(value=2, span=NO_SPAN),
                 right=n.IntLit(value=-3, span=NO_SPAN), span=NO_SPAN),
        n.Binary(op="-", left=n.NameRef(name="a", span=NO_SPAN),
                 right=n.IntLit(value=-1, span=NO_SPAN), span=NO_SPAN),
        n.Unary(op="-", operand=n.NameRef(name="x", span=NO_SPAN), span=NO_SPAN),
        n.Compare(op="==", left=n.NameRef(name="a", span=NO_SPAN),
                  right=n.NameRef(name="b", span=NO_SPAN), span=NO_SPAN),
        n.Binary(op="-", left=n.NameRef(name="c", span=NO_SPAN),
                 right=n.IntLit(value=-2, span=NO_SPAN), span=NO_SPAN),
        n.Not(operand=n.NameRef(name="d", span=NO_SPAN), span=NO_SPAN),
        n.Compare(op="!=", left=n.NameRef(name="e", span=NO_SPAN),
                  right=n.NameRef(name="f", span=NO_SPAN), span=NO_SPAN),
    ), span=NO_SPAN)
    assert parse_expression(probe) == expected


# ----------------------------------------------------------------- helpers
def parse(text: str, path: str = "test.world") -> n.Module:
    """Parse ``text``, failing the test with the diagnostics if it does not parse."""
    sink = DiagnosticSink()
    result = parse_module(text, path, sink)
    assert result.ok, "\n".join(f"{d.span}: {d.message}" for d in sink.diagnostics)
    return result.module


def fmt(text: str) -> str:
    out = format_source(text)
    assert out is not None, "format_source reported a syntax error"
    return out


def assert_round_trip(text: str) -> str:
    """Format ``text`` and check every property of the formatter; return the output.

    The output re-parses to an equal tree (spans and float spellings are
    excluded from node equality), every comment comes back exactly once and
    in order, and formatting the output again changes nothing.
    """
    before = parse(text)
    out = fmt(text)
    after = parse(out)
    assert after == before, f"tree changed by formatting:\n{out}"
    assert [c.text for c in after.comments] == [c.text for c in before.comments], out
    again = fmt(out)
    assert again == out, f"not idempotent:\n--- first\n{out}\n--- second\n{again}"
    assert out == "" or (out.endswith("\n") and not out.endswith("\n\n"))
    assert "\n\n\n" not in out, "more than one blank line in a row"
    assert not out.startswith("\n")
    # Comment text is kept byte for byte, trailing blanks included.
    assert all(line == line.rstrip() or "#" in line for line in out.split("\n")), \
        "trailing whitespace"
    return out


def _corpus_id(path: Path) -> str:
    return path.name


# ------------------------------------------------------------------ corpus
def test_corpus_is_there() -> None:
    assert len(CANONICAL) >= 3
    assert INPUTS, "no messy inputs in the corpus"


@pytest.mark.parametrize("path", FILES, ids=_corpus_id)
def test_corpus_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert_round_trip(text)


@pytest.mark.parametrize("path", CANONICAL, ids=_corpus_id)
def test_canonical_files_are_unchanged(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert fmt(text) == text


@pytest.mark.parametrize("path", INPUTS, ids=_corpus_id)
def test_inputs_format_to_their_canonical_form(path: Path) -> None:
    expected = path.with_name(path.name.replace(".input.world", ".canonical.world"))
    assert expected.exists(), f"{expected.name} is missing"
    assert fmt(path.read_text(encoding="utf-8")) == expected.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_examples_round_trip(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    if not parse_module(text, str(path), DiagnosticSink()).ok:
        pytest.skip("the example does not parse (being edited?)")
    assert_round_trip(text)


def _concrete_node_classes() -> set[str]:
    abstract = {"Node", "Module", "Comment", "Span"}
    names = set()
    for name in n.__all__:
        obj = getattr(n, name)
        if isinstance(obj, type) and issubclass(obj, n.Node) and name not in abstract:
            names.add(name)
    return names


def _corpus_nodes() -> list[n.Node]:
    found: list[n.Node] = []
    for path in FILES:
        module = parse(path.read_text(encoding="utf-8"), path.name)
        for decl in module.decls:
            found.extend(n.walk(decl))
    return found


def test_corpus_covers_every_node_class() -> None:
    seen = {type(node).__name__ for node in _corpus_nodes()}
    missing = _concrete_node_classes() - seen
    assert not missing, f"no corpus file uses {sorted(missing)}"


def test_corpus_covers_every_operator_and_variant() -> None:
    nodes = _corpus_nodes()
    binary = {x.op for x in nodes if isinstance(x, n.Binary)}
    compare = {x.op for x in nodes if isinstance(x, n.Compare)}
    boolean = {x.op for x in nodes if isinstance(x, n.BoolOp)}
    aug = {x.op for x in nodes if isinstance(x, n.AugAssign)}
    kinds = {x.kind for x in nodes if isinstance(x, n.Quantifier)}
    assert binary == {"+", "-", "*", "/", "//", "%", "**"}
    assert compare == {"==", "!=", "<", "<=", ">", ">=", "in", "not in"}
    assert boolean == {"and", "or"}
    assert aug == {"+", "-", "*", "/"}
    assert kinds == {"all", "any", "exists"}
    interpolations = [x for x in nodes if isinstance(x, n.Interpolation)]
    assert any(i.spec for i in interpolations) and any(i.spec == "" for i in interpolations)
    args = [x for x in nodes if isinstance(x, n.Arg)]
    assert any(isinstance(a.value, n.Lambda) and a.name is None for a in args)
    assert any(isinstance(a.value, n.Lambda) and a.name is not None for a in args)
    assert any(isinstance(x, n.Frame) and not x.targets for x in nodes)
    assert any(isinstance(x, n.Match) and x.orelse is not None for x in nodes)
    assert any(isinstance(x, n.If) and isinstance(x.orelse, n.If) for x in nodes)
    assert any(isinstance(x, n.Given) and isinstance(x.source, n.DataObject) for x in nodes)
    assert any(isinstance(x, n.Param) and x.not_found is not None for x in nodes)
    assert any(isinstance(x, n.Field) and x.is_key for x in nodes)


def test_corpus_has_comments_everywhere() -> None:
    text = (CORPUS / "comments.canonical.world").read_text(encoding="utf-8")
    module = parse(text)
    assert len(module.comments) >= 50
    trailing = [c for c in module.comments
                if text.split("\n")[c.span.line - 1].strip() != c.text.strip()]
    assert len(trailing) >= 20


# -------------------------------------------------------------- API shape
def test_format_source_returns_none_on_syntax_errors() -> None:
    assert format_source("entity User { key id: }") is None
    assert format_source("tool t() { let = 1 }") is None


def test_format_source_of_empty_and_comment_only_text() -> None:
    assert format_source("") == ""
    assert format_source("\n\n  \n") == ""
    assert format_source("# only\n\n\n# comments   \n") == "# only\n\n# comments   \n"


def test_format_module_uses_the_given_comments() -> None:
    text = "# one\nworld W  # two\n"
    module = parse(text)
    assert format_module(module) == text
    assert format_module(module, []) == "world W\n"
    assert format_module(module, module.comments[1:]) == "world W  # two\n"


def test_format_module_of_a_hand_built_tree() -> None:
    """Trees built in code (all spans equal) format without comments or blank-line guesses."""
    user = n.EntityDecl(
        name=n.Ident(name="User", span=NO_SPAN), doc="A user.",
        fields=(
            n.Field(name=n.Ident(name="id", span=NO_SPAN),
                    type=n.TypeExpr(name=n.Ident(name="str", span=NO_SPAN), span=NO_SPAN),
                    default=None, doc=None, is_key=True, span=NO_SPAN),
            n.Field(name=n.Ident(name="age", span=NO_SPAN),
                    type=n.TypeExpr(name=n.Ident(name="int", span=NO_SPAN),
                                    constraints=(n.RangeConstraint(low=0, high=150,
                                                                   span=NO_SPAN),),
                                    optional=True, span=NO_SPAN),
                    default=n.NoneLit(span=NO_SPAN), doc=None, span=NO_SPAN),
        ),
        span=NO_SPAN,
    )
    world = n.WorldDecl(name=n.Ident(name="W", span=NO_SPAN), doc=None, span=NO_SPAN)
    module = n.Module(path="built.world", decls=(world, user), span=NO_SPAN)
    text = format_module(module)
    assert text == ('world W\n\nentity User "A user." {\n  key id: str\n'
                    '  age: int(0..150)? = none\n}\n')
    assert parse(text, "built.world") == module


# ------------------------------------------------------------- expressions
PRECEDENCE_CASES = [
    ("(a + b) + c", "a + b + c"),
    ("a + (b + c)", "a + (b + c)"),
    ("a - (b - c)", "a - (b - c)"),
    ("(a * b) + c", "a * b + c"),
    ("a * (b + c)", "a * (b + c)"),
    ("a // (b % c)", "a // (b % c)"),
    ("((x))", "x"),
    ("-(1)", "-1"),
    ("-(1.50)", "-1.50"),
    ("(-1).abs()", "(-1).abs()"),
    ("-(a.b)", "-a.b"),
    ("(-a).b", "(-a).b"),
    ("-(-x)", "- -x"),
    ("-(a * b)", "-(a * b)"),
    ("(-a) * b", "-a * b"),
    ("not (a == b)", "not a == b"),
    ("(not a) == b", "(not a) == b"),
    ("not (a and b)", "not (a and b)"),
    ("(not a) and b", "not a and b"),
    ("(a and b) or c", "a and b or c"),
    ("a and (b or c)", "a and (b or c)"),
    ("a or (b or c)", "a or (b or c)"),
    ("(a ?? b) ?? c", "a ?? b ?? c"),
    ("a ?? (b ?? c)", "a ?? (b ?? c)"),
    ("a ?? (b + c)", "a ?? b + c"),
    ("(a ?? b) + c", "(a ?? b) + c"),
    ("(a ?? b) == c", "a ?? b == c"),
    ("(a == b) == c", "(a == b) == c"),
    ("(a in b) in c", "(a in b) in c"),
    ("(all x in xs: p) and q", "(all x in xs: p) and q"),
    ("all x in (a or b): (p)", "all x in a or b: p"),
    ("all x in (if a then b else c): p", "all x in (if a then b else c): p"),
    ("(if a then b else c).d", "(if a then b else c).d"),
    ("if (if a then b else c) then (d) else (e)", "if if a then b else c then d else e"),
    ("[(x) for x in (a or b) if (c)]", "[x for x in a or b if c]"),
    ("f(x => (x + 1), key: y => (y))", "f(x => x + 1, key: y => y)"),
    ('f"{(x)}{(all y in ys: y)}{x:>4}"', 'f"{x}{(all y in ys: y)}{x:>4}"'),
    ('f"{ {a: 1}[a]}"', 'f"{ {a: 1}[a]}"'),
    ("{(a): (b + c)}", "{a: b + c}"),
    ("1.e5", "1.e5"),
    ("1_000.5", "1_000.5"),
    # chains the printer walks in a loop instead of one level per operator
    ("not (not (not a))", "not not not a"),
    ("-(-(-a))", "- - -a"),
    ("-(not a)", "-(not a)"),
    ("not (-(not (-a)))", "not -(not -a)"),
    ("-(2 ** 2)", "-2 ** 2"),
    ("2 ** (3 ** 4)", "2 ** 3 ** 4"),
    ("(2 ** 3) ** 4", "(2 ** 3) ** 4"),
    ("2 ** (-(2 ** (-2)))", "2 ** -2 ** -2"),
    ("(-2) ** a", "(-2) ** a"),
    ("if a then b else (if c then d else e)", "if a then b else if c then d else e"),
    ("if a then (if b then c else d) else e", "if a then if b then c else d else e"),
    ("all x in xs: (any y in ys: (p))", "all x in xs: any y in ys: p"),
    ("all x in xs: (if a then b else (all y in ys: p))",
     "all x in xs: if a then b else all y in ys: p"),
    ("not (all x in xs: p)", "not (all x in xs: p)"),
    ("f(not (not a), [-(-b)], {c: if d then e else f})",
     "f(not not a, [- -b], {c: if d then e else f})"),
]


@pytest.mark.parametrize(("source", "expected"), PRECEDENCE_CASES)
def test_minimal_parentheses(source: str, expected: str) -> None:
    tree = parse_expression(source)
    assert format_expr(tree) == expected
    assert parse_expression(expected) == tree


STRING_CASES = [
    ("plain", '"plain"'),
    ('say "hi"', r'"say \"hi\""'),
    ("back\\slash", r'"back\\slash"'),
    ("tab\tnew\nret\r", r'"tab\tnew\nret\r"'),
    ("nul\x00 esc\x1b del\x7f", r'"nul\u{00} esc\u{1B} del\u{7F}"'),
    ("{braces}", '"{braces}"'),
    ("\\{", r'"\\{"'),
    ("unicode é ✓", '"unicode é ✓"'),
]


@pytest.mark.parametrize(("value", "literal"), STRING_CASES)
def test_string_escapes(value: str, literal: str) -> None:
    assert quote_string(value) == literal
    assert parse_expression(literal) == n.StrLit(value=value, span=NO_SPAN)


def test_fstring_literal_braces_and_escapes() -> None:
    text = r'f"{{a}} \\{{ {x:.2f} \" \n"'
    tree = parse_expression(text)
    assert isinstance(tree, n.FStr) and tree.parts[0] == "{a} \\{ "
    assert format_expr(tree) == text
    assert parse_expression(format_expr(tree)) == tree


# ------------------------------------------------------------------ layout
def test_blank_lines_collapse_and_vanish_at_block_edges() -> None:
    text = "tool t() {\n\n\n  let a = 1\n\n\n\n  let b = 2\n  let c = 3\n\n}\n"
    assert fmt(text) == "tool t() {\n  let a = 1\n\n  let b = 2\n  let c = 3\n}\n"


def test_declarations_are_separated_by_one_blank_line() -> None:
    text = 'import "a.world"\nimport "b.world"\nworld W enum E { a } record R { x: int }'
    assert fmt(text) == ('import "a.world"\nimport "b.world"\n\nworld W\n\nenum E { a }\n\n'
                         "record R {\n  x: int\n}\n")


def test_long_enum_breaks_with_trailing_commas() -> None:
    members = ", ".join(f"member_number_{i}" for i in range(8))
    out = assert_round_trip(f"enum E {{ {members} }}")
    assert out.splitlines()[0] == "enum E {"
    assert all(line.endswith(",") for line in out.splitlines()[1:-1])


def test_short_union_stays_on_one_line() -> None:
    assert fmt("union U by t {\n a: A,\n b: B,\n}") == "union U by t { a: A, b: B }\n"


def test_long_signature_breaks_one_parameter_a_line() -> None:
    params = ", ".join(f"parameter_{i}: int" for i in range(6))
    out = assert_round_trip(f'tool t({params}) -> int "Doc." {{ return 1 }}')
    lines = out.splitlines()
    assert lines[0] == "tool t("
    assert lines[7] == ") -> int"
    assert lines[8:10] == ['  "Doc."', "{"]


def test_long_doc_moves_to_its_own_line() -> None:
    doc = "x" * 90
    out = fmt(f'tool t(a: int) -> int "{doc}" {{ return a }}')
    assert out.splitlines()[:3] == ["tool t(a: int) -> int", f'  "{doc}"', "{"]
    assert all(len(line) <= MAX_WIDTH for line in out.splitlines())


def test_data_breaks_only_when_too_long() -> None:
    short = fmt('task t in W { given { a: [1, 2], b: {c: "d"} } }')
    assert 'given {a: [1, 2], b: {c: "d"}}' in short
    rows = ", ".join(f'{{id: "U{i:03d}", name: "User number {i}"}}' for i in range(4))
    out = assert_round_trip(f"task t in W {{ given {{ users: [{rows}] }} }}")
    assert "    users: [\n" in out and '      {id: "U000", name: "User number 0"},\n' in out


def test_comments_inside_one_line_constructs_break_them() -> None:
    out = assert_round_trip("enum E { a, # about b\n b }")
    assert out == "enum E {\n  a,  # about b\n  b,\n}\n"
    out = assert_round_trip("tool t(a: int, # about b\n b: int) {}")
    assert out == "tool t(\n  a: int,  # about b\n  b: int,\n) {}\n"
    out = assert_round_trip("record R { # nothing\n}")
    assert out == "record R {  # nothing\n}\n"


@pytest.mark.parametrize("op", ["+", "-", "*", "and", "or", "??", "**"])
def test_long_operator_chains_do_not_recurse(op: str) -> None:
    """A sum of thousands of terms is a left-deep tree thousands of levels deep."""
    chain = f" {op} ".join(f"x{i}" for i in range(3000))
    text = f"fn f() -> int {{\n  return {chain}\n}}\n"
    assert fmt(text) == text
    calls = "a" + ".b(1)[2]" * 3000
    text = f"fn g() -> int {{\n  return {calls}\n}}\n"
    assert fmt(text) == text


def test_comment_inside_an_expression_trails_its_statement() -> None:
    text = "tool t() {\n  let x = f(a,  # first\n    b)  # second\n  return x\n}\n"
    out = assert_round_trip(text)
    assert out == ("tool t() {\n  let x = f(a, b)  # first\n  # second\n  return x\n}\n")


def test_triple_quoted_doc_fallbacks() -> None:
    record = n.RecordDecl(name=n.Ident(name="R", span=NO_SPAN), doc=None, fields=(),
                          span=NO_SPAN)
    for doc, triple in [("one\ntwo", True), ("  all\n  indented", False),
                        ("trailing \nspace", False), ("\n", False), ('a\n"""', True),
                        ("\nleading blank", True), ("trailing blank\n", True)]:
        module = n.Module(path="m.world", decls=(dataclasses.replace(record, doc=doc),),
                          span=NO_SPAN)
        out = format_module(module)
        assert ('"""' in out) is triple, (doc, out)
        decl = parse(out).decls[0]
        assert isinstance(decl, n.RecordDecl) and decl.doc == doc, out


# -------------------------------------------------------------- hypothesis
NAMES = ["a", "b", "xs", "total", "order", "notes", "anything", "keyed", "index_of", "_x1"]
ATTRS = [*NAMES, "type", "key", "status"]
SAFE_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)


def _ident(names: list[str]) -> st.SearchStrategy[n.Ident]:
    return st.sampled_from(names).map(lambda s: n.Ident(name=s, span=NO_SPAN))


def _leaves(strings: bool) -> st.SearchStrategy[n.Expr]:
    options: list[st.SearchStrategy[n.Expr]] = [
        st.integers(-10**6, 10**6).map(lambda v: n.IntLit(value=v, span=NO_SPAN)),
        st.floats(min_value=-1e9, max_value=1e9, allow_nan=False).map(
            lambda v: n.FloatLit(value=v, span=NO_SPAN)),
        st.booleans().map(lambda v: n.BoolLit(value=v, span=NO_SPAN)),
        st.just(n.NoneLit(span=NO_SPAN)),
        st.sampled_from(NAMES).map(lambda s: n.NameRef(name=s, span=NO_SPAN)),
    ]
    if strings:
        options.append(SAFE_TEXT.map(lambda s: n.StrLit(value=s, span=NO_SPAN)))
    return st.one_of(options)


def _merge_parts(parts: list[str | n.Interpolation]) -> tuple[str | n.Interpolation, ...]:
    """Adjacent text parts merge when parsed, so generate them merged."""
    merged: list[str | n.Interpolation] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif part != "":
            merged.append(part)
    return tuple(merged)


def _expressions(strings: bool) -> st.SearchStrategy[n.Expr]:
    """Random expression trees in the parser's normal form.

    ``strings`` allows string and f-string literals; it is off inside
    f-string interpolations, where the parser cannot read a quote yet.
    """
    inner = st.deferred(lambda: _expressions(False)) if strings else None

    def extend(child: st.SearchStrategy[n.Expr]) -> st.SearchStrategy[n.Expr]:
        s = NO_SPAN
        lam = st.builds(lambda p, b: n.Lambda(param=p, body=b, span=s), _ident(NAMES), child)
        arg = st.builds(lambda name, v: n.Arg(name=name, value=v, span=s),
                        st.none() | _ident(NAMES), child | lam)
        options: list[st.SearchStrategy[n.Expr]] = [
            st.builds(lambda o, a: n.Attribute(obj=o, name=a, span=s), child, _ident(ATTRS)),
            st.builds(lambda o, i: n.Index(obj=o, index=i, span=s), child, child),
            st.builds(lambda f, a: n.Call(func=f, args=tuple(a), span=s), child,
                      st.lists(arg, max_size=3)),
            child.filter(lambda e: not isinstance(e, (n.IntLit, n.FloatLit))).map(
                lambda e: n.Unary(op="-", operand=e, span=s)),
            st.builds(lambda op, lhs, rhs: n.Binary(op=op, left=lhs, right=rhs, span=s),
                      st.sampled_from(["+", "-", "*", "/", "//", "%", "**"]), child, child),
            st.builds(lambda op, lhs, rhs: n.Compare(op=op, left=lhs, right=rhs, span=s),
                      st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "in", "not in"]),
                      child, child),
            st.builds(lambda op, lhs, rhs: n.BoolOp(op=op, left=lhs, right=rhs, span=s),
                      st.sampled_from(["and", "or"]), child, child),
            child.map(lambda e: n.Not(operand=e, span=s)),
            st.builds(lambda lhs, rhs: n.Coalesce(left=lhs, right=rhs, span=s), child, child),
            st.builds(lambda c, t, o: n.Conditional(condition=c, then=t, orelse=o, span=s),
                      child, child, child),
            st.builds(lambda k, v, i, b: n.Quantifier(kind=k, var=v, iterable=i, body=b, span=s),
                      st.sampled_from(["all", "any", "exists"]), _ident(NAMES), child, child),
            st.lists(child, max_size=3).map(lambda xs: n.ListLit(items=tuple(xs), span=s)),
            st.lists(st.builds(lambda k, v: n.MapEntry(key=k, value=v, span=s), child, child),
                     max_size=2).map(lambda es: n.MapLit(entries=tuple(es), span=s)),
            st.builds(lambda e, v, i, c: n.Comprehension(element=e, var=v, iterable=i,
                                                         condition=c, span=s),
                      child, _ident(NAMES), child, st.none() | child),
        ]
        if inner is not None:
            interp = st.builds(
                lambda e, spec: n.Interpolation(expr=e, spec=spec, span=s), inner,
                st.none() | st.text(alphabet="<>^=+-0123456789.,_%dfsxX ", max_size=5))
            options.append(st.lists(SAFE_TEXT | interp, max_size=4).map(
                lambda ps: n.FStr(parts=_merge_parts(ps), span=s)))
        return st.one_of(options)

    return st.recursive(_leaves(strings), extend, max_leaves=10)


EXPRESSIONS = _expressions(True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(EXPRESSIONS)
def test_random_expressions_round_trip(expr: n.Expr) -> None:
    text = format_expr(expr)
    assert "\n" not in text
    assert parse_expression(text) == expr, text
    assert format_expr(parse_expression(text)) == text


def _record_with_docs(doc: str, field_doc: str, default: str) -> n.Module:
    s = NO_SPAN
    field = n.Field(name=n.Ident(name="f", span=s),
                    type=n.TypeExpr(name=n.Ident(name="str", span=s), span=s),
                    default=n.StrLit(value=default, span=s), doc=field_doc, span=s)
    record = n.RecordDecl(name=n.Ident(name="R", span=s), doc=doc, fields=(field,), span=s)
    return n.Module(path="test.world", decls=(record,), span=s)


DOC_TEXT = st.lists(st.sampled_from([*'ab "\\{}\n\t\x00é', "  ", '"""']), max_size=20).map(
    "".join)


@settings(max_examples=200, deadline=None)
@given(DOC_TEXT, DOC_TEXT, SAFE_TEXT)
def test_random_doc_strings_round_trip(doc: str, field_doc: str, default: str) -> None:
    module = _record_with_docs(doc, field_doc, default)
    text = format_module(module)
    assert parse(text) == module, text
    assert fmt(text) == text


def _insert_comment(text: str, line_index: int, trailing: bool, body: str) -> str:
    lines = text.split("\n")
    line_index %= len(lines)
    if trailing:
        lines[line_index] += "  # " + body
    else:
        current = lines[line_index]
        indent = current[: len(current) - len(current.lstrip())]
        lines.insert(line_index, indent + "# " + body)
    return "\n".join(lines)


_MUTABLE = list(FILES)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_MUTABLE),
       st.lists(st.tuples(st.integers(0, 10**6), st.booleans(),
                          st.text(alphabet="abc #{}\"", max_size=6)), min_size=1, max_size=4))
def test_random_comments_are_kept(path: Path, inserts: list[tuple[int, bool, str]]) -> None:
    original = path.read_text(encoding="utf-8")
    text = original
    for line_index, trailing, body in inserts:
        text = _insert_comment(text, line_index, trailing, body)
    sink = DiagnosticSink()
    result = parse_module(text, "test.world", sink)
    # A comment put inside a triple-quoted string is string content, not a comment.
    assume(result.ok and result.module == parse(original))
    assert_round_trip(text)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(_MUTABLE), st.lists(st.integers(0, 10**6), min_size=1, max_size=5))
def test_random_blank_lines_are_normalised(path: Path, positions: list[int]) -> None:
    lines = path.read_text(encoding="utf-8").split("\n")
    for position in positions:
        lines.insert(position % len(lines), "")
    text = "\n".join(lines)
    sink = DiagnosticSink()
    result = parse_module(text, "test.world", sink)
    assume(result.ok and result.module == parse(path.read_text(encoding="utf-8")))
    assert_round_trip(text)


_CALLS = itertools.count()


@pytest.mark.parametrize("sabotage", [
    lambda text: text.replace("1", "2"),           # changes the tree
    lambda text: text.replace("  # one\n", "\n"),  # loses a comment
    lambda text: text.replace("# one", "# two"),   # changes a comment
    # same tree and comments, but every other call spells it differently
    lambda text: text.replace("1", "(1)") if next(_CALLS) % 2 else text,
], ids=["tree", "lost-comment", "changed-comment", "idempotence"])
def test_round_trip_helper_catches_broken_formatters(
        monkeypatch: pytest.MonkeyPatch, sabotage: Callable[[str], str]) -> None:
    """``assert_round_trip`` itself must notice each kind of breakage."""
    real = format_source

    def broken(text: str, path: str = "<input>.world") -> str | None:
        out = real(text, path)
        return None if out is None else sabotage(out)

    monkeypatch.setattr(sys.modules[__name__], "format_source", broken)
    with pytest.raises(AssertionError):
        assert_round_trip("tool t() {\n  return 1  # one\n}\n")


# ------------------------------------------- invisible characters and long literals
INVISIBLE = ["\u00a0", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e", "\u2066",
             "\u200f", "\u061c", "\u00ad", "\u3000", "\u2009", "\u1680", "\u0085", "\u2028",
             "\ue000", "\x07"]


@pytest.mark.parametrize("ch", INVISIBLE, ids=lambda ch: f"U+{ord(ch):04X}")
def test_invisible_characters_stay_escaped(ch: str) -> None:
    """An escape such as ``\\u00a0`` must not come back from fmt as a raw invisible character."""
    literal = quote_string("a" + ch + "b")
    assert ch not in literal
    assert literal == '"a\\u{' + f"{ord(ch):02X}" + '}b"'
    assert parse_expression(literal) == n.StrLit(value="a" + ch + "b", span=NO_SPAN)
    source = f'fn f() -> str {{ return "x\\u{{{ord(ch):X}}}" + f"y\\u{ord(ch):04X}{{1}}" }}\n'
    out = fmt(source)
    assert ch not in out
    assert_round_trip(source)


def test_visible_characters_stay_as_written() -> None:
    assert quote_string("café 日本 😀 e\u0301") == '"café 日本 😀 e\u0301"'


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=20))
def test_random_strings_print_without_raw_invisible_characters(value: str) -> None:
    import unicodedata

    literal = quote_string(value)
    hidden = [ch for ch in literal
              if ch != " " and unicodedata.category(ch) in {"Cc", "Cf", "Zs", "Zl", "Zp", "Co",
                                                            "Cn"}]
    assert not hidden, literal
    assert parse_expression(literal) == n.StrLit(value=value, span=NO_SPAN)


_LEAF_TEXT = st.text(alphabet="abcdefghij ", min_size=0, max_size=40)
_LITERAL_LEAVES: st.SearchStrategy[n.Expr] = st.one_of(
    st.integers(-10**12, 10**12).map(lambda v: n.IntLit(value=v, span=NO_SPAN)),
    _LEAF_TEXT.map(lambda v: n.StrLit(value=v, span=NO_SPAN)),
    st.sampled_from(NAMES).map(lambda v: n.NameRef(name=v, span=NO_SPAN)),
)


def _literals(child: st.SearchStrategy[n.Expr]) -> st.SearchStrategy[n.Expr]:
    s = NO_SPAN
    return st.one_of(
        st.lists(child, max_size=12).map(lambda xs: n.ListLit(items=tuple(xs), span=s)),
        st.lists(st.builds(lambda k, v: n.MapEntry(key=k, value=v, span=s),
                           _LEAF_TEXT.map(lambda v: n.StrLit(value=v, span=s)), child),
                 max_size=8).map(lambda es: n.MapLit(entries=tuple(es), span=s)),
        st.lists(st.builds(lambda name, v: n.Arg(name=name, value=v, span=s),
                           _ident(ATTRS), child), min_size=1, max_size=6).map(
            lambda args: n.Call(func=n.NameRef(name="Address", span=s), args=tuple(args),
                                span=s)),
    )


LONG_LITERALS = st.recursive(_LITERAL_LEAVES, _literals, max_leaves=60)


def _module_returning(value: n.Expr) -> n.Module:
    s = NO_SPAN
    let = n.Let(name=n.Ident(name="value", span=s), type=None, value=value, span=s)
    ret = n.Return(value=n.NameRef(name="value", span=s), span=s)
    fn = n.FnDecl(name=n.Ident(name="f", span=s), params=(),
                  returns=n.TypeExpr(name=n.Ident(name="json", span=s), span=s), doc=None,
                  body=n.Block(body=(let, ret), span=s), span=s)
    return n.Module(path="test.world", decls=(fn,), span=s)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(LONG_LITERALS)
def test_random_long_literals_wrap_within_the_width(value: n.Expr) -> None:
    """Lists, maps and records wrap; a line is only too long when one element is."""
    module = _module_returning(value)
    text = format_module(module)
    assert parse(text) == module, text
    assert fmt(text) == text
    for line in text.split("\n"):
        if len(line) > MAX_WIDTH:
            # One unbreakable element on a line of its own (strings here hold no comma).
            assert "," not in line.rstrip(","), line
