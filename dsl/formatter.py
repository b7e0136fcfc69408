"""The canonical formatter: a parsed module back to text, one layout for every program.

``worldspec fmt`` uses this module, and so does any stage that writes WorldSpec
source (the LLM front end, code generators). The output re-parses to an equal
tree (spans are excluded from node equality), formatting is idempotent, and
every ``#`` comment of the module comes back exactly once, in source order.

Layout rules, chosen for small diffs and to match ``docs/language.md``:

* two spaces per indentation level; ``{`` ends the line that opens a block;
* one blank line between top-level declarations (consecutive ``import``\\ s
  keep the user's grouping); inside a block, at most one blank line is kept
  where the source had one or more, and none right after ``{`` or before
  ``}``;
* every field, state item, config item, statement, task item and match case
  goes on its own line;
* enum members and union variants stay on the declaration's line when the
  whole declaration fits in 100 columns, otherwise one per line with a
  trailing comma; the same rule holds for tool and ``fn`` parameters;
* a declaration's doc string follows its name; when that makes the opening
  line longer than 100 columns, or the doc spans several lines, the doc moves
  to its own indented line(s) and ``{`` to a line of its own (the tool style
  of the language reference);
* expressions print on one line with the fewest parentheses the precedence
  table allows; data literals (``given``, ``config``) break one entry per line
  when they do not fit, and so does a list, map or record (a call with named
  arguments) that is the value of a statement, field or state item: each
  element on its own line (numbers, strings and names filled to the width),
  broken the same way if it is still too long, with a trailing comma;
* string literals keep an escape (``\\u{A0}``) for every character that cannot be
  seen or passes for another: controls, zero-width and bidi characters,
  spaces other than the space.

Comments are not part of the tree, so they are placed by position. Each
printed line that starts a syntactic item carries an *anchor*: the source
offset of that item. A comment goes into the gap after the last line whose
anchor precedes it: a comment that had code before it on its source line
becomes a trailing comment of that line, any other is printed on a line of
its own, indented like the line that follows. Constructs that could collapse
onto one line (members, parameters, data, empty blocks) stay broken while
they contain a comment, so that comments keep their place among the items.
"""

from __future__ import annotations

import bisect
import re
import sys
import unicodedata
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, TypeVar

from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module

__all__ = ["format_module", "format_source", "format_expr", "format_type", "quote_string",
           "MAX_WIDTH", "INDENT"]

MAX_WIDTH = 100
INDENT = "  "

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Python's recursion limit while laying out (the parser raises it the same way).
_RECURSION_LIMIT = 20000
_ItemT = TypeVar("_ItemT", bound=n.Node)
#: List elements short and simple enough to share a line when a list is broken.
_SCALARS = (n.IntLit, n.FloatLit, n.StrLit, n.BoolLit, n.NoneLit, n.NameRef)


# ------------------------------------------------------------------ strings
#: Unicode categories whose characters are invisible or look like something else:
#: controls, format characters (zero-width spaces and joiners, bidi controls, the
#: soft hyphen, the BOM), separators other than the space, private-use and unassigned
#: code points. Written raw they would hide in the text or change how it reads.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp", "Co", "Cn"})


def _needs_unicode_escape(ch: str) -> bool:
    """Whether ``ch`` prints as an escape (``\\u{A0}``) rather than as itself.

    Every character that cannot be seen, or passes for another one, stays an
    escape: a no-break space, a zero-width space or a right-to-left mark written
    ``\\u{200B}`` in the source must not come back from ``fmt`` as a raw
    character no reader can tell from a space or from nothing.
    """
    if ch == " ":
        return False
    code = ord(ch)
    if code < 0x7F:
        return code < 0x20
    return unicodedata.category(ch) in _ESCAPED_CATEGORIES


def _escape(value: str, *, braces: bool = False, triple: bool = False) -> str:
    """The body of a string literal holding ``value``.

    ``braces`` doubles ``{``/``}`` for f-string text (and spells control
    characters ``\\uXXXX`` there, as ``\\u{..}`` would hold a brace). ``triple`` leaves
    newlines to the caller and escapes a quote only when another follows it,
    which is all a triple-quoted string needs to avoid ending early.
    """
    out: list[str] = []
    for i, ch in enumerate(value):
        if ch == "\\":
            piece = "\\\\"
        elif ch == '"':
            piece = '\\"' if not triple or value[i + 1:i + 2] == '"' else '"'
        elif ch == "\n":
            piece = "\\n"
        elif ch == "\t":
            piece = "\\t"
        elif ch == "\r":
            piece = "\\r"
        elif ch in "{}":
            piece = ch * 2 if braces else ch
        elif _needs_unicode_escape(ch) and not (braces and ord(ch) > 0xFFFF):
            # In an f-string the braces of `\u{..}` would start an interpolation, and
            # `\uXXXX` holds no code point past U+FFFF: such a one stays raw there.
            piece = f"\\u{ord(ch):04X}" if braces else f"\\u{{{ord(ch):02X}}}"
        else:
            piece = ch
        out.append(piece)
    return "".join(out)


def quote_string(value: str) -> str:
    """``value`` as a one-line string literal with canonical escapes."""
    return '"' + _escape(value) + '"'


def _triple_lines(value: str) -> list[str] | None:
    """The escaped lines of ``value`` for a triple-quoted block, or None if it can't round-trip.

    The parser drops the line after the opening quotes and the line before the
    closing ones, then removes the common indentation of the non-blank lines.
    The block therefore needs a line that is not blank and starts with no
    space (it fixes the indentation to remove), and no line may end in
    whitespace (editors strip it, and it would be invisible).
    """
    if "\n" not in value:
        return None
    lines = [_escape(line, triple=True) for line in value.split("\n")]
    if not any(line.strip() and not line.startswith(" ") for line in lines):
        return None
    if any(line != line.rstrip() for line in lines):
        return None
    return lines


def _doc_parts(value: str, content_indent: int) -> list[str]:
    """A doc string as ``[fragment, *lines]``.

    The fragment goes on the current line (the whole one-line string, or the
    opening ``\"\"\"``); the remaining lines are complete, already indented
    lines, the last one being the closing quotes at ``content_indent``.
    """
    lines = _triple_lines(value)
    if lines is None:
        return [quote_string(value)]
    pad = INDENT * content_indent
    return ['"""', *[pad + line if line else "" for line in lines], pad + '"""']


def _float_text(value: float, text: str) -> str:
    """The original spelling when it still denotes ``value``, else Python's repr."""
    if text:
        try:
            if float(text.replace("_", "")) == value:
                return text
        except ValueError:
            pass
    if value != value:
        raise ValueError("NaN has no WorldSpec literal")
    if value in (float("inf"), float("-inf")):
        return "1e999" if value > 0 else "-1e999"
    return repr(value)


def _number(value: int | float) -> str:
    return str(value) if isinstance(value, int) else _float_text(value, "")


def _key(key: str) -> str:
    """A data-object key or union tag: bare when it is a name, quoted otherwise."""
    return key if _NAME_RE.fullmatch(key) else quote_string(key)


def _top_level_colon(text: str) -> bool:
    """Whether ``text`` has a ``:`` outside brackets and strings.

    The parser splits an f-string interpolation at such a colon (it starts the
    format spec), so an expression that has one must be parenthesised there.
    """
    depth = 0
    in_str = False
    i = 0
    while i < len(text):
        ch = text[i]
        if in_str:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0:
            return True
        i += 1
    return False


# -------------------------------------------------------------- expressions
class Prec(IntEnum):
    """Binding strength, loosest first, as in the grammar's ``?expr`` chain."""

    LOWEST = 1      # if-then-else, quantifiers
    OR = 2
    AND = 3
    NOT = 4
    COMPARE = 5     # non-associative
    COALESCE = 6    # ??
    SUM = 7         # + -
    PRODUCT = 8     # * / // %
    UNARY = 9       # -x, negative literals
    POWER = 10      # ** (right-associative, binds tighter than a prefix minus on its left)
    POSTFIX = 11    # .name [index] (args)
    ATOM = 12


_BINARY_PREC: dict[str, Prec] = {
    "+": Prec.SUM, "-": Prec.SUM,
    "*": Prec.PRODUCT, "/": Prec.PRODUCT, "//": Prec.PRODUCT, "%": Prec.PRODUCT,
    "**": Prec.POWER,
}
_BOOL_PREC: dict[str, Prec] = {"or": Prec.OR, "and": Prec.AND}


def _operator_prec(e: n.Binary | n.Coalesce | n.BoolOp) -> Prec:
    if isinstance(e, n.Binary):
        return _BINARY_PREC[e.op]
    if isinstance(e, n.BoolOp):
        return _BOOL_PREC[e.op]
    return Prec.COALESCE


def type_text(t: n.TypeExpr) -> str:
    """``name[args](low..high) matching /re/`` with a trailing ``?`` when optional."""
    out = t.name.name
    if t.args:
        out += "[" + ", ".join(type_text(a) for a in t.args) + "]"
    for c in t.constraints:
        if isinstance(c, n.RangeConstraint):
            low = "" if c.low is None else _number(c.low)
            high = "" if c.high is None else _number(c.high)
            out += f"({low}..{high})"
        else:
            out += " matching /" + c.pattern.replace("/", "\\/") + "/"
    return out + ("?" if t.optional else "")


def data_text(d: n.Data) -> str:
    """A data literal on one line."""
    if isinstance(d, n.DataObject):
        return "{" + ", ".join(f"{_key(p.key)}: {data_text(p.value)}" for p in d.pairs) + "}"
    if isinstance(d, n.DataArray):
        return "[" + ", ".join(data_text(x) for x in d.items) + "]"
    if isinstance(d, n.DataString):
        return quote_string(d.value)
    if isinstance(d, n.DataInt):
        return str(d.value)
    if isinstance(d, n.DataFloat):
        return _float_text(d.value, d.text)
    if isinstance(d, n.DataBool):
        return "true" if d.value else "false"
    if isinstance(d, n.DataNull):
        return "none"
    return d.name


#: What a ``print_<NodeName>`` method of :class:`_ExprPrinter` returns: the text and
#: precedence of a leaf, or a generator that yields each sub-expression with the
#: precedence its slot needs, is sent back the sub-expression's text, and returns
#: the text and precedence of the whole.
_Printing = Generator[tuple[n.Expr, Prec], str, tuple[str, Prec]]
_Printed = tuple[str, Prec] | _Printing


class _ExprPrinter:
    """Expressions to one-line text; ``print_<NodeName>`` gives text and its precedence.

    Nothing here recurses: a printer that needs a sub-expression's text
    yields the sub-expression, and :meth:`expr` runs the printers on an
    explicit stack. Operator chains without brackets (30,000 ``not`` or
    ``if ... else if ...``) nest as deep as the input is long, and the
    Python stack would not hold them.
    """

    def expr(self, e: n.Expr, min_prec: Prec = Prec.LOWEST) -> str:
        """``e`` as text, in parentheses when it binds looser than its slot allows."""
        printed = self._printer(e)
        if isinstance(printed, tuple):
            return _in_slot(*printed, min_prec)
        stack: list[tuple[_Printing, Prec]] = [(printed, min_prec)]
        reply: str | None = None
        while True:
            printing, slot = stack[-1]
            try:
                # a fresh printer is started with None, as generators require
                child, child_slot = printing.send(reply)  # type: ignore[arg-type]
            except StopIteration as done:
                stack.pop()
                text, prec = done.value
                reply = _in_slot(text, prec, slot)
                if not stack:
                    return reply
                continue
            printed = self._printer(child)
            if isinstance(printed, tuple):
                reply = _in_slot(*printed, child_slot)
            else:
                stack.append((printed, child_slot))
                reply = None

    def _printer(self, e: n.Expr) -> _Printed:
        method: Callable[[Any], _Printed] | None = getattr(
            self, "print_" + type(e).__name__, None)
        if method is None:
            raise TypeError(f"not an expression: {type(e).__name__}")
        return method(e)

    # literals and names ----------------------------------------------------
    def print_IntLit(self, e: n.IntLit) -> _Printed:
        return str(e.value), Prec.UNARY if e.value < 0 else Prec.ATOM

    def print_FloatLit(self, e: n.FloatLit) -> _Printed:
        text = _float_text(e.value, e.text)
        return text, Prec.UNARY if text.startswith("-") else Prec.ATOM

    def print_StrLit(self, e: n.StrLit) -> _Printed:
        return quote_string(e.value), Prec.ATOM

    def print_FStr(self, e: n.FStr) -> _Printing:
        out = ['f"']
        for part in e.parts:
            if isinstance(part, str):
                out.append(_escape(part, braces=True))
                continue
            text = yield part.expr, Prec.LOWEST
            if _top_level_colon(text):
                text = f"({text})"
            # Inside the f-string token a quote must be escaped; a leading brace
            # would read as a literal `{{`.
            text = text.replace('"', '\\"')
            if text.startswith("{"):
                text = " " + text
            spec = "" if part.spec is None else ":" + part.spec
            out.append("{" + text + spec + "}")
        out.append('"')
        return "".join(out), Prec.ATOM

    def print_BoolLit(self, e: n.BoolLit) -> _Printed:
        return ("true" if e.value else "false"), Prec.ATOM

    def print_NoneLit(self, e: n.NoneLit) -> _Printed:
        return "none", Prec.ATOM

    def print_NameRef(self, e: n.NameRef) -> _Printed:
        return ("state." + e.name if e.qualified else e.name), Prec.ATOM

    def print_ListLit(self, e: n.ListLit) -> _Printing:
        items: list[str] = []
        for x in e.items:
            items.append((yield x, Prec.LOWEST))
        return "[" + ", ".join(items) + "]", Prec.ATOM

    def print_MapLit(self, e: n.MapLit) -> _Printing:
        entries: list[str] = []
        for m in e.entries:
            key = yield m.key, Prec.LOWEST
            entries.append(f"{key}: {(yield m.value, Prec.LOWEST)}")
        return "{" + ", ".join(entries) + "}", Prec.ATOM

    def print_Comprehension(self, e: n.Comprehension) -> _Printing:
        element = yield e.element, Prec.LOWEST
        text = f"[{element} for {e.var.name} in {(yield e.iterable, Prec.OR)}"
        if e.condition is not None:
            text += f" if {(yield e.condition, Prec.LOWEST)}"
        return text + "]", Prec.ATOM

    # postfix ---------------------------------------------------------------
    def print_Attribute(self, e: n.Attribute) -> _Printing:
        return (yield from self.postfix_chain(e)), Prec.POSTFIX

    def print_Index(self, e: n.Index) -> _Printing:
        return (yield from self.postfix_chain(e)), Prec.POSTFIX

    def print_Slice(self, e: n.Slice) -> _Printing:
        return (yield from self.postfix_chain(e)), Prec.POSTFIX

    def print_Call(self, e: n.Call) -> _Printing:
        return (yield from self.postfix_chain(e)), Prec.POSTFIX

    def postfix_chain(self, e: n.Attribute | n.Index | n.Slice | n.Call
                      ) -> Generator[tuple[n.Expr, Prec], str, str]:
        """``base.a[i](x)...``, walked iteratively: chains can be thousands long."""
        suffixes: list[str] = []
        node: n.Expr = e
        while isinstance(node, (n.Attribute, n.Index, n.Slice, n.Call)):
            if isinstance(node, n.Attribute):
                suffixes.append("." + node.name.name)
                node = node.obj
            elif isinstance(node, n.Index):
                suffixes.append(f"[{(yield node.index, Prec.LOWEST)}]")
                node = node.obj
            elif isinstance(node, n.Slice):
                bounds = []
                for bound in (node.start, node.stop, node.step):
                    bounds.append("" if bound is None else (yield bound, Prec.LOWEST))
                if node.step is None:
                    bounds.pop()
                suffixes.append(f"[{':'.join(bounds)}]")
                node = node.obj
            else:
                suffixes.append(f"({(yield from self.arg_list(node.args))})")
                node = node.func
        return (yield node, Prec.POSTFIX) + "".join(reversed(suffixes))

    def args(self, args: Sequence[n.Arg]) -> str:
        """Call arguments: positional, ``name: value``, ``x => body``, ``name: x => body``."""
        return ", ".join(self.arg(a) for a in args)

    def arg(self, a: n.Arg) -> str:
        """One call argument (see :meth:`args`)."""
        if isinstance(a.value, n.Lambda):
            value = f"{a.value.param.name} => {self.expr(a.value.body)}"
        else:
            value = self.expr(a.value)
        return value if a.name is None else f"{a.name.name}: {value}"

    def arg_list(self, args: Sequence[n.Arg]) -> Generator[tuple[n.Expr, Prec], str, str]:
        """:meth:`args` inside a printer: the values are yielded, not printed here."""
        texts: list[str] = []
        for a in args:
            if isinstance(a.value, n.Lambda):
                value = f"{a.value.param.name} => {(yield a.value.body, Prec.LOWEST)}"
            else:
                value = yield a.value, Prec.LOWEST
            texts.append(value if a.name is None else f"{a.name.name}: {value}")
        return ", ".join(texts)

    # operators -------------------------------------------------------------
    def print_Unary(self, e: n.Unary) -> _Printing:
        ops: list[str] = []
        node: n.Expr = e
        while isinstance(node, n.Unary):  # `- - x` is one printer, not one per `-`
            ops.append(node.op)
            node = node.operand
        operand = yield node, Prec.UNARY
        # `- -x`, not `--x`: a space wherever a `-` follows
        after = [*ops[1:], operand]
        spaced = (op + (" " if nxt.startswith("-") else "")
                  for op, nxt in zip(ops, after, strict=True))
        return "".join(spaced) + operand, Prec.UNARY

    def print_Binary(self, e: n.Binary) -> _Printing:
        if e.op == "**":
            # right-associative: the left operand must bind tighter, the right one may be
            # another power or a prefix minus (`2 ** -1`)
            # (the right spine is walked in a loop, as in `left_chain`)
            parts: list[str] = []
            node: n.Expr = e
            while isinstance(node, n.Binary) and node.op == "**":
                parts.append((yield node.left, Prec.POSTFIX) + " ** ")
                node = node.right
            parts.append((yield node, Prec.UNARY))
            return "".join(parts), _BINARY_PREC[e.op]
        return (yield from self.left_chain(e)), _BINARY_PREC[e.op]

    def print_Coalesce(self, e: n.Coalesce) -> _Printing:
        return (yield from self.left_chain(e)), Prec.COALESCE

    def left_chain(self, e: n.Binary | n.Coalesce | n.BoolOp
                   ) -> Generator[tuple[n.Expr, Prec], str, str]:
        """A left-associative operator and the same-precedence operators on its left.

        ``a + b - c`` is ``(a + b) - c``: the left operand binds at the
        operator's own precedence and the right one must bind tighter. The
        left spine is walked in a loop, so a long sum yields its operands
        one after the other instead of nesting a printer per operator (and
        the text is joined once, not copied into every enclosing level).
        """
        prec = _operator_prec(e)
        rights: list[tuple[str, n.Expr]] = []
        node: n.Expr = e
        while isinstance(node, (n.Binary, n.Coalesce, n.BoolOp)) and _operator_prec(node) == prec:
            rights.append(("??" if isinstance(node, n.Coalesce) else node.op, node.right))
            node = node.left
        parts = [(yield node, prec)]
        for op, right in reversed(rights):
            parts.append(f" {op} {(yield right, Prec(prec + 1))}")
        return "".join(parts)

    def print_Compare(self, e: n.Compare) -> _Printing:
        left = yield e.left, Prec.COALESCE  # comparisons do not chain
        return f"{left} {e.op} {(yield e.right, Prec.COALESCE)}", Prec.COMPARE

    def print_Not(self, e: n.Not) -> _Printing:
        count = 0
        node: n.Expr = e
        while isinstance(node, n.Not):
            count += 1
            node = node.operand
        return "not " * count + (yield node, Prec.NOT), Prec.NOT

    def print_BoolOp(self, e: n.BoolOp) -> _Printing:
        return (yield from self.left_chain(e)), _BOOL_PREC[e.op]

    def print_Conditional(self, e: n.Conditional) -> _Printing:
        parts: list[str] = []
        node: n.Expr = e
        while isinstance(node, n.Conditional):  # `if .. else if .. else ..` in one loop
            condition = yield node.condition, Prec.LOWEST
            then = yield node.then, Prec.LOWEST
            parts.append(f"if {condition} then {then} else ")
            node = node.orelse
        parts.append((yield node, Prec.LOWEST))
        return "".join(parts), Prec.LOWEST

    def print_Quantifier(self, e: n.Quantifier) -> _Printing:
        parts: list[str] = []
        node: n.Expr = e
        while isinstance(node, n.Quantifier):  # `all x in xs: any y in ys: ..` in one loop
            iterable = yield node.iterable, Prec.OR
            parts.append(f"{node.kind} {node.var.name} in {iterable}: ")
            node = node.body
        parts.append((yield node, Prec.LOWEST))
        return "".join(parts), Prec.LOWEST


def _in_slot(text: str, prec: Prec, min_prec: Prec) -> str:
    """``text`` in parentheses when it binds looser than its slot allows."""
    return f"({text})" if prec < min_prec else text


_EXPR = _ExprPrinter()


@contextmanager
def _deep_recursion() -> Iterator[None]:
    """Room for nested blocks, data and types (the parser caps brackets at 200 levels).

    Expressions need none: their printer keeps its own stack.
    """
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def format_expr(expr: n.Expr) -> str:
    """One expression as canonical one-line text (minimal parentheses)."""
    with _deep_recursion():
        return _EXPR.expr(expr)


def format_type(t: n.TypeExpr) -> str:
    """One type as canonical text."""
    return type_text(t)


# ------------------------------------------------------------------- lines
class _Blank(Enum):
    """Whether a blank line may precede a line: as in the source, or always."""

    KEEP = "keep"
    FORCE = "force"


@dataclass(slots=True)
class _Line:
    """One output line and what the comment merger needs to know about it.

    ``anchor`` is the source offset of the item the line starts, or None for
    a line that only continues the previous one (doc lines, ``{`` alone):
    comments never go between such a line and its predecessor. ``src_line``
    and ``src_end`` are the source lines the item starts and ends on (for
    blank-line preservation). An ``opener`` ends with ``{`` or ``(``; a
    ``closer`` starts with ``}`` or ``)``, so comments before it belong to the
    inside and are indented one level deeper. ``can_trail`` is False for
    lines that hold no syntax node boundary (a lone doc string or ``{``): a
    comment after them would not read as trailing once re-parsed. A trailing
    comment normally goes on the last line of its group; ``trail_line`` names a
    source line whose trailing comment goes on this line instead (the ``-> T``
    line of a signature whose doc and ``{`` follow on lines of their own).
    """

    text: str
    indent: int
    anchor: int | None
    src_line: int
    src_end: int
    blank: _Blank = _Blank.KEEP
    opener: bool = False
    closer: bool = False
    can_trail: bool = True
    trail_line: int | None = None


def _trailing_comments(module: n.Module, comments: Sequence[n.Comment]) -> set[int]:
    """Offsets of the comments that have code before them on their line.

    Every token belongs to some node and the first token on a line starts or
    ends a node, so "code before the comment" is "a node starts or ends on
    that line before it".
    """
    first: dict[int, int] = {}
    for decl in module.decls:
        for node in n.walk(decl):
            s = node.span
            if s.start < first.get(s.line, 1 << 62):
                first[s.line] = s.start
            if s.end < first.get(s.end_line, 1 << 62):
                first[s.end_line] = s.end
    return {c.span.start for c in comments if first.get(c.span.line, 1 << 62) <= c.span.start}


def _render(lines: Sequence[_Line], comments: Sequence[n.Comment], trailing: set[int]) -> str:
    """Join the lines, merging in the comments and the blank lines."""
    anchored = [i for i, line in enumerate(lines) if line.anchor is not None]
    keys: list[int] = []
    for i in anchored:
        anchor = lines[i].anchor
        assert anchor is not None
        keys.append(max(anchor, keys[-1]) if keys else anchor)
    gaps: dict[int, list[n.Comment]] = {}
    for c in sorted(comments, key=lambda c: c.span.start):
        k = bisect.bisect_right(keys, c.span.start) - 1
        if k < 0:
            where = -1
        elif k + 1 < len(anchored):
            where = anchored[k + 1] - 1
        else:
            where = len(lines) - 1
        gaps.setdefault(where, []).append(c)

    out: list[str] = []
    running = 0          # the last source line accounted for
    # No blank line before the first line of the file, nor anywhere between an
    # opening brace and the first item inside it (comments there included).
    after_opener = False

    def emit(text: str, src_line: int, src_end: int, force: bool, closer: bool,
             anchored: bool = True) -> None:
        nonlocal running, after_opener
        if out and not after_opener and not closer and (force or src_line > running + 1):
            out.append("")
        out.append(text)
        running = max(running, src_end)
        if anchored:
            after_opener = False

    def emit_gap(cs: list[n.Comment], next_index: int) -> bool:
        """Own-line comments before line ``next_index``; True if any were printed."""
        if not cs:
            return False
        nxt = lines[next_index] if next_index < len(lines) else None
        indent = 0 if nxt is None else nxt.indent + (1 if nxt.closer else 0)
        force = nxt is not None and nxt.blank is _Blank.FORCE
        for j, c in enumerate(cs):
            emit(INDENT * indent + c.text, c.span.line, c.span.line, force and j == 0, False,
                 anchored=False)
        return True

    downgrade = emit_gap(gaps.get(-1, []), 0)
    printed_at: list[int] = []  # index in ``out`` of each line
    group_start = 0
    for i, line in enumerate(lines):
        if line.anchor is None:
            out.append(line.text)
        else:
            group_start = i
            force = line.blank is _Blank.FORCE and not downgrade
            # What follows an opener is inside it: only its first line counts.
            src_end = line.src_line if line.opener else line.src_end
            emit(line.text, line.src_line, src_end, force, line.closer)
        printed_at.append(len(out) - 1)
        after_opener = line.opener
        gap = gaps.get(i, [])
        if gap and gap[0].span.start in trailing:
            target = i if line.can_trail else -1
            for j in range(group_start, i):
                if lines[j].trail_line == gap[0].span.line and lines[j].can_trail:
                    target = j
            if target >= 0:
                out[printed_at[target]] += "  " + gap[0].text
                running = max(running, gap[0].span.line)
                gap = gap[1:]
        downgrade = emit_gap(gap, i + 1)
    return "\n".join(out) + "\n" if out else ""


# ------------------------------------------------------------------ layout
class _Layout:
    """Declarations, statements and other line items to :class:`_Line` s.

    ``print_<NodeName>(node, indent, blank)`` emits the lines of one item.
    """

    def __init__(self, comments: Sequence[n.Comment]) -> None:
        self.lines: list[_Line] = []
        self.comment_starts = sorted(c.span.start for c in comments)
        self.ex = _EXPR

    # helpers -----------------------------------------------------------------
    def has_comment(self, span: n.Span, start: int | None = None, end: int | None = None) -> bool:
        """Whether a comment lies inside ``span`` (or inside ``start..end``)."""
        lo = span.start if start is None else start
        hi = span.end if end is None else end
        i = bisect.bisect_right(self.comment_starts, lo)
        return i < len(self.comment_starts) and self.comment_starts[i] < hi

    def item(self, node: n.Node, indent: int, blank: _Blank) -> None:
        """Dispatch one line item to its ``print_<NodeName>`` method."""
        method: Callable[[Any, int, _Blank], None] | None = getattr(
            self, "print_" + type(node).__name__, None)
        if method is None:
            raise TypeError(f"cannot format {type(node).__name__} as a line item")
        method(node, indent, blank)

    def member(self, node: n.Node, indent: int) -> None:
        """An item inside a block: blank lines as in the source."""
        self.item(node, indent, _Blank.KEEP)

    def start(self, node: n.Node, text: str, indent: int, blank: _Blank) -> _Line:
        """A pending first line of ``node`` (not yet emitted)."""
        return _Line(INDENT * indent + text, indent, node.span.start, node.span.line,
                     node.span.end_line, blank)

    def glued(self, text: str, indent: int, *, can_trail: bool = True) -> None:
        """A line that continues the previous one; comments never go in between."""
        self.lines.append(_Line(text, indent, None, 0, 0, can_trail=can_trail))

    def simple(self, node: n.Node, text: str, indent: int, blank: _Blank) -> None:
        """An item printed on one line."""
        self.lines.append(self.start(node, text, indent, blank))

    def with_doc(self, node: n.Node, head: str, doc: str | None, tail: str, indent: int,
                 blank: _Blank, extra: Sequence[str] = ()) -> None:
        """``head "doc"tail``; a multi-line doc continues over glued lines.

        ``extra`` are further glued lines (already indented) after the item.
        """
        if doc is None:
            texts = [head + tail]
        else:
            parts = _doc_parts(doc, indent + 1)
            texts = [f"{head} {parts[0]}", *parts[1:]]
            texts[-1] += tail
        self.lines.append(self.start(node, texts[0], indent, blank))
        for text in texts[1:]:
            self.glued(text, indent + 1)
        for text in extra:
            self.glued(text, indent + 1)

    def section(self, pending: _Line, items: Sequence[_ItemT], span: n.Span, indent: int,
                emit: Callable[[_ItemT, int], None]) -> _Line:
        """``pending {`` items ``}``, or ``pending {}`` when empty and comment-free.

        Returns the pending closing line so that callers can continue it
        (``} else {``) before :meth:`finish` emits it.
        """
        sep = " " if pending.text.strip() else ""
        if not items and not self.has_comment(span):
            pending.text += sep + "{}"
            pending.can_trail = True
            return pending
        pending.text += sep + "{"
        pending.opener = True
        self.lines.append(pending)
        for it in items:
            emit(it, indent + 1)
        return _Line(INDENT * indent + "}", indent, span.end - 1, span.end_line, span.end_line,
                     closer=True)

    def finish(self, line: _Line, end_line: int) -> None:
        line.src_end = max(line.src_end, end_line)
        self.lines.append(line)

    def header(self, node: n.Node, head: str, doc: str | None, rest: str, indent: int,
               blank: _Blank) -> _Line:
        """The opening line(s) of a braced declaration, up to (not including) ``{``.

        ``head "doc" rest`` when it fits with `` {``; otherwise ``head``, the
        doc on its own line(s) one level in, and ``rest {`` on the next line.
        """
        pad = INDENT * indent
        rest_text = " " + rest if rest else ""
        if doc is None:
            return self.start(node, head + rest_text, indent, blank)
        parts = _doc_parts(doc, indent + 1)
        if len(parts) == 1 and len(pad + head + " " + parts[0] + rest_text) + 2 <= MAX_WIDTH:
            return self.start(node, f"{head} {parts[0]}{rest_text}", indent, blank)
        first = self.start(node, head, indent, blank)
        first.src_end = node.span.line
        first.trail_line = node.span.line
        self.lines.append(first)
        self.doc_block(parts, indent + 1)
        # A lone `{` holds no node boundary; `by tag {` does (the tag's name).
        return _Line(pad + rest, indent, None, node.span.line, node.span.line,
                     can_trail=bool(rest))

    def doc_block(self, parts: Sequence[str], indent: int) -> None:
        """A doc string on lines of its own (glued to the previous line)."""
        self.glued(INDENT * indent + parts[0], indent, can_trail=False)
        for text in parts[1:]:
            self.glued(text, indent, can_trail=False)

    def wrapped(self, node: n.Node, prefix: str, value: n.Expr, suffix: str, indent: int,
                blank: _Blank) -> None:
        """``prefix value suffix`` on one line when it fits (and holds no comment).

        Otherwise a list, map or record ``value`` (a call with named arguments
        only) opens on this line, takes one element (or field) a line, each laid
        out the same way, with a trailing comma, and closes on a line of its own
        followed by ``suffix``: a long literal never becomes a line of thousands
        of columns. Other expressions stay on one line.
        """
        pad = INDENT * indent
        one = prefix + self.ex.expr(value) + suffix
        parts = self.literal_parts(value)
        if parts is None or not parts[1] or (
                len(pad + one) <= MAX_WIDTH and not self.has_comment(value.span)):
            self.simple(node, one, indent, blank)
            return
        opening, entries, closing = parts
        first = self.start(node, prefix + opening, indent, blank)
        first.opener = True
        self.lines.append(first)
        if isinstance(value, n.ListLit) and all(isinstance(x, _SCALARS) for x in value.items) \
                and not self.has_comment(value.span):
            self.filled(value.items, indent + 1)
        else:
            for entry, entry_prefix, entry_value in entries:
                self.wrapped(entry, entry_prefix, entry_value, ",", indent + 1, _Blank.KEEP)
        self.lines.append(_Line(pad + closing + suffix, indent, value.span.end - 1,
                                value.span.end_line, node.span.end_line, closer=True))

    def filled(self, items: Sequence[n.Expr], indent: int) -> None:
        """Scalars (numbers, strings, names) as many to a line as fit, each with its comma."""
        pad = INDENT * indent
        row: list[n.Expr] = []
        texts: list[str] = []

        def flush() -> None:
            self.lines.append(_Line(pad + " ".join(texts), indent, row[0].span.start,
                                    row[0].span.line, row[-1].span.end_line))
            row.clear()
            texts.clear()

        for item in items:
            text = self.ex.expr(item) + ","
            if texts and len(pad + " ".join([*texts, text])) > MAX_WIDTH:
                flush()
            row.append(item)
            texts.append(text)
        if row:
            flush()

    def literal_parts(self, value: n.Expr
                      ) -> tuple[str, list[tuple[n.Node, str, n.Expr]], str] | None:
        """The opening, the (node, prefix, value) elements and the closing of a literal."""
        if isinstance(value, n.ListLit):
            return "[", [(x, "", x) for x in value.items], "]"
        if isinstance(value, n.MapLit):
            return "{", [(m, self.ex.expr(m.key) + ": ", m.value) for m in value.entries], "}"
        if isinstance(value, n.Call) and value.args and all(a.name for a in value.args):
            # a record or entity built field by field (or a call spelled like one)
            entries: list[tuple[n.Node, str, n.Expr]] = []
            for a in value.args:
                name = "" if a.name is None else a.name.name + ": "
                if isinstance(a.value, n.Lambda):
                    entries.append((a, f"{name}{a.value.param.name} => ", a.value.body))
                else:
                    entries.append((a, name, a.value))
            return self.ex.expr(value.func, Prec.POSTFIX) + "(", entries, ")"
        return None

    def valued(self, node: n.Node, head: str, default: n.Expr | None, doc: str | None,
               indent: int, blank: _Blank) -> None:
        """``head [= default] ["doc"]``: a field, state item or constant."""
        if default is None:
            self.with_doc(node, head, doc, "", indent, blank)
            return
        parts = None if doc is None else _doc_parts(doc, indent + 1)
        if parts is not None and len(parts) > 1:
            self.with_doc(node, head + " = " + self.ex.expr(default), doc, "", indent, blank)
            return
        suffix = "" if parts is None else " " + parts[0]
        self.wrapped(node, head + " = ", default, suffix, indent, blank)

    # module ------------------------------------------------------------------
    def module(self, module: n.Module) -> None:
        prev: n.Decl | None = None
        for decl in module.decls:
            grouped = isinstance(decl, n.Import) and isinstance(prev, n.Import)
            blank = _Blank.KEEP if prev is None or grouped else _Blank.FORCE
            self.item(decl, 0, blank)
            prev = decl

    # declarations --------------------------------------------------------------
    def print_Import(self, d: n.Import, indent: int, blank: _Blank) -> None:
        self.simple(d, "import " + quote_string(d.path), indent, blank)

    def print_WorldDecl(self, d: n.WorldDecl, indent: int, blank: _Blank) -> None:
        self.with_doc(d, "world " + d.name.name, d.doc, "", indent, blank)

    def print_PolicyDecl(self, d: n.PolicyDecl, indent: int, blank: _Blank) -> None:
        if d.from_file:
            self.simple(d, "policy file " + quote_string(d.source), indent, blank)
        else:
            self.with_doc(d, "policy", d.source, "", indent, blank)

    def print_ConfigDecl(self, d: n.ConfigDecl, indent: int, blank: _Blank) -> None:
        pending = self.start(d, "config", indent, blank)
        self.finish(self.section(pending, d.items, d.span, indent, self.member), d.span.end_line)

    def print_ResultsDecl(self, d: n.ResultsDecl, indent: int, blank: _Blank) -> None:
        pending = self.start(d, "results", indent, blank)
        self.finish(self.section(pending, d.shapes, d.span, indent, self.member), d.span.end_line)

    def print_ResultShape(self, it: n.ResultShape, indent: int, blank: _Blank) -> None:
        self.simple(it, f"{it.name.name}: {self.ex.expr(it.value)}", indent, blank)

    def print_LoadDecl(self, d: n.LoadDecl, indent: int, blank: _Blank) -> None:
        pending = self.start(d, "on load", indent, blank)
        self.finish(self.section(pending, d.body.body, d.body.span, indent, self.member),
                    d.span.end_line)

    def print_ConstDecl(self, d: n.ConstDecl, indent: int, blank: _Blank) -> None:
        head = "const " + d.name.name
        if d.type is not None:
            head += ": " + type_text(d.type)
        self.valued(d, head, d.value, d.doc, indent, blank)

    def print_ConfigItem(self, it: n.ConfigItem, indent: int, blank: _Blank) -> None:
        self.data(it, it.name.name + ": ", it.value, "", indent, blank)

    def print_EnumDecl(self, d: n.EnumDecl, indent: int, blank: _Blank) -> None:
        inline = [self.enum_member_text(m) for m in d.members]
        self.listed_decl(d, f"enum {d.name.name}", d.doc, "", inline, d.members, indent, blank)

    def enum_member_text(self, m: n.EnumMember) -> str | None:
        """A member on one line, or None when its doc needs several lines."""
        text = m.name.name
        if m.value is not None:
            text += " = " + quote_string(m.value)
        if m.doc is not None:
            parts = _doc_parts(m.doc, 0)
            if len(parts) > 1:
                return None
            text += " " + parts[0]
        return text

    def print_EnumMember(self, m: n.EnumMember, indent: int, blank: _Blank) -> None:
        head = m.name.name + ("" if m.value is None else " = " + quote_string(m.value))
        self.with_doc(m, head, m.doc, ",", indent, blank)

    def print_UnionDecl(self, d: n.UnionDecl, indent: int, blank: _Blank) -> None:
        inline: list[str | None] = [f"{_key(v.tag)}: {v.record.name}" for v in d.variants]
        self.listed_decl(d, f"union {d.name.name}", d.doc, "by " + d.tag_field.name, inline,
                         d.variants, indent, blank)

    def print_Variant(self, v: n.Variant, indent: int, blank: _Blank) -> None:
        self.simple(v, f"{_key(v.tag)}: {v.record.name},", indent, blank)

    def listed_decl(self, d: n.Node, head: str, doc: str | None, rest: str,
                    inline: Sequence[str | None], members: Sequence[n.Node], indent: int,
                    blank: _Blank) -> None:
        """An enum or union: on one line when short and comment-free, else one member a line."""
        texts = [t for t in inline if t is not None]
        doc_parts = None if doc is None else _doc_parts(doc, indent + 1)
        if (len(texts) == len(inline) and (doc_parts is None or len(doc_parts) == 1)
                and not self.has_comment(d.span)):
            one = head
            if doc_parts is not None:
                one += " " + doc_parts[0]
            if rest:
                one += " " + rest
            one += " { " + ", ".join(texts) + " }" if texts else " {}"
            if len(INDENT * indent + one) <= MAX_WIDTH:
                self.simple(d, one, indent, blank)
                return
        pending = self.header(d, head, doc, rest, indent, blank)
        self.finish(self.section(pending, members, d.span, indent, self.member), d.span.end_line)

    def print_RecordDecl(self, d: n.RecordDecl, indent: int, blank: _Blank) -> None:
        pending = self.header(d, "record " + d.name.name, d.doc, "", indent, blank)
        self.finish(self.section(pending, d.fields, d.span, indent, self.member), d.span.end_line)

    def print_EntityDecl(self, d: n.EntityDecl, indent: int, blank: _Blank) -> None:
        pending = self.header(d, "entity " + d.name.name, d.doc, "", indent, blank)
        self.finish(self.section(pending, d.fields, d.span, indent, self.member), d.span.end_line)

    def print_Field(self, f: n.Field, indent: int, blank: _Blank) -> None:
        head = ("key " if f.is_key else "") + f"{f.name.name}{'?' if f.may_be_absent else ''}: " \
            f"{type_text(f.type)}" + (" freeform" if f.freeform else "")
        if f.alias is not None:
            head += " from " + quote_string(f.alias)
        self.valued(f, head, f.default, f.doc, indent, blank)

    def print_AliasDecl(self, d: n.AliasDecl, indent: int, blank: _Blank) -> None:
        self.with_doc(d, f"type {d.name.name} = {type_text(d.type)}", d.doc, "", indent, blank)

    def print_StateDecl(self, d: n.StateDecl, indent: int, blank: _Blank) -> None:
        pending = self.start(d, "state", indent, blank)
        self.finish(self.section(pending, d.items, d.span, indent, self.member), d.span.end_line)

    def print_StateItem(self, it: n.StateItem, indent: int, blank: _Blank) -> None:
        kind = it.kind
        if isinstance(kind, n.TableKind):
            kind_text = "table " + kind.entity.name
        elif isinstance(kind, n.SequenceKind):
            kind_text = "sequence " + quote_string(kind.format)
        else:
            kind_text = type_text(kind)
        head = ("private " if it.private else "") + f"{it.name.name}: {kind_text}"
        if it.alias is not None:
            head += " from " + quote_string(it.alias)
        self.valued(it, head, it.default, it.doc, indent, blank)

    def print_InvariantDecl(self, d: n.InvariantDecl, indent: int, blank: _Blank) -> None:
        condition = INDENT * (indent + 1) + self.ex.expr(d.condition)
        self.with_doc(d, "invariant " + d.name.name, d.doc, ":", indent, blank, [condition])

    # tools -------------------------------------------------------------------
    def print_ToolDecl(self, d: n.ToolDecl, indent: int, blank: _Blank) -> None:
        self.callable_decl(d, "tool", d.params, d.returns, d.doc, d.body, indent, blank)

    def print_FnDecl(self, d: n.FnDecl, indent: int, blank: _Blank) -> None:
        self.callable_decl(d, "fn", d.params, d.returns, d.doc, d.body, indent, blank)

    def param_text(self, p: n.Param) -> str | None:
        """A parameter on one line, or None when its doc needs several lines."""
        text = self.param_head(p)
        if p.doc is not None:
            parts = _doc_parts(p.doc, 0)
            if len(parts) > 1:
                return None
            text += " " + parts[0]
        return text + self.param_tail(p)

    def param_head(self, p: n.Param) -> str:
        text = f"{p.name.name}: {type_text(p.type)}" + (" freeform" if p.freeform else "")
        return text if p.default is None else text + " = " + self.ex.expr(p.default)

    def param_tail(self, p: n.Param) -> str:
        return "" if p.not_found is None else " else " + self.ex.expr(p.not_found)

    def print_Param(self, p: n.Param, indent: int, blank: _Blank) -> None:
        self.with_doc(p, self.param_head(p), p.doc, self.param_tail(p) + ",", indent, blank)

    def callable_decl(self, d: n.ToolDecl | n.FnDecl, keyword: str, params: Sequence[n.Param],
                      returns: n.TypeExpr | None, doc: str | None, body: n.Block, indent: int,
                      blank: _Blank) -> None:
        """A tool or fn: the signature on one line when it fits, else one parameter a line."""
        pad = INDENT * indent
        ret = "" if returns is None else " -> " + type_text(returns)
        inline = [self.param_text(p) for p in params]
        texts = [t for t in inline if t is not None]
        header_end = returns.span.start if returns is not None else body.span.start
        broken = bool(params) and (len(texts) < len(inline)
                                   or self.has_comment(d.span, d.span.start, header_end))
        signature = f"{keyword} {d.name.name}({', '.join(texts)}){ret}"
        if params and len(pad + signature) + 2 > MAX_WIDTH:
            broken = True
        doc_parts = None if doc is None else _doc_parts(doc, indent + 1)
        if not broken:
            pending = self.start(d, signature, indent, blank)
            if doc_parts is not None:
                one = f"{signature} {doc_parts[0]}"
                if len(doc_parts) == 1 and len(pad + one) + 2 <= MAX_WIDTH:
                    pending.text = pad + one
                else:
                    pending.src_end = d.span.line
                    pending.trail_line = d.span.line if returns is None else returns.span.end_line
                    self.lines.append(pending)
                    self.doc_block(doc_parts, indent + 1)
                    pending = _Line(pad, indent, None, d.span.line, d.span.line)
        else:
            opening = self.start(d, f"{keyword} {d.name.name}(", indent, blank)
            opening.opener = True
            self.lines.append(opening)
            for p in params:
                self.member(p, indent + 1)
            close = _Line(pad + ")" + ret, indent, header_end, d.span.line, d.span.line,
                          closer=True,
                          trail_line=None if returns is None else returns.span.end_line)
            if doc_parts is None:
                pending = close
            else:
                self.lines.append(close)
                self.doc_block(doc_parts, indent + 1)
                pending = _Line(pad, indent, None, d.span.line, d.span.line)
        self.finish(self.section(pending, body.body, body.span, indent, self.member),
                    d.span.end_line)

    # statements --------------------------------------------------------------
    def print_Let(self, s: n.Let, indent: int, blank: _Blank) -> None:
        typ = "" if s.type is None else ": " + type_text(s.type)
        self.wrapped(s, f"let {s.name.name}{typ} = ", s.value, "", indent, blank)

    def print_Assign(self, s: n.Assign, indent: int, blank: _Blank) -> None:
        target = self.ex.expr(s.target, Prec.POSTFIX)
        self.wrapped(s, f"{target} = ", s.value, "", indent, blank)

    def print_AugAssign(self, s: n.AugAssign, indent: int, blank: _Blank) -> None:
        target = self.ex.expr(s.target, Prec.POSTFIX)
        self.wrapped(s, f"{target} {s.op}= ", s.value, "", indent, blank)

    def print_If(self, s: n.If, indent: int, blank: _Blank) -> None:
        pending = self.start(s, "if " + self.ex.expr(s.condition), indent, blank)
        node = s
        while True:
            pending = self.section(pending, node.then.body, node.then.span, indent, self.member)
            orelse = node.orelse
            if orelse is None:
                break
            if isinstance(orelse, n.If):
                pending.text += " else if " + self.ex.expr(orelse.condition)
                node = orelse
                continue
            pending.text += " else"
            pending = self.section(pending, orelse.body, orelse.span, indent, self.member)
            break
        self.finish(pending, s.span.end_line)

    def print_For(self, s: n.For, indent: int, blank: _Blank) -> None:
        head = f"for {s.var.name} in {self.ex.expr(s.iterable)}"
        pending = self.start(s, head, indent, blank)
        self.finish(self.section(pending, s.body.body, s.body.span, indent, self.member),
                    s.span.end_line)

    def print_While(self, s: n.While, indent: int, blank: _Blank) -> None:
        pending = self.start(s, f"while {self.ex.expr(s.condition)}", indent, blank)
        self.finish(self.section(pending, s.body.body, s.body.span, indent, self.member),
                    s.span.end_line)

    def print_Match(self, s: n.Match, indent: int, blank: _Blank) -> None:
        pending = self.start(s, "match " + self.ex.expr(s.subject), indent, blank)
        arms: list[n.MatchCase | n.Block] = [*s.cases]
        if s.orelse is not None:
            arms.append(s.orelse)
        self.finish(self.section(pending, arms, s.span, indent, self.match_arm), s.span.end_line)

    def match_arm(self, arm: n.MatchCase | n.Block, indent: int) -> None:
        if isinstance(arm, n.MatchCase):
            head = "case " + arm.tag.name + ("" if arm.binding is None else " as " +
                                             arm.binding.name)
            pending = self.start(arm, head, indent, _Blank.KEEP)
            block = arm.body
        else:
            pending = self.start(arm, "else", indent, _Blank.KEEP)
            block = arm
        self.finish(self.section(pending, block.body, block.span, indent, self.member),
                    pending.src_end)

    def print_Require(self, s: n.Require, indent: int, blank: _Blank) -> None:
        text = f"require {self.ex.expr(s.condition)} else {self.ex.expr(s.message)}"
        self.simple(s, text, indent, blank)

    def print_Fail(self, s: n.Fail, indent: int, blank: _Blank) -> None:
        self.simple(s, ("fail keep " if s.keep else "fail ") + self.ex.expr(s.message), indent,
                    blank)

    def print_Break(self, s: n.Break, indent: int, blank: _Blank) -> None:
        self.simple(s, "break", indent, blank)

    def print_Continue(self, s: n.Continue, indent: int, blank: _Blank) -> None:
        self.simple(s, "continue", indent, blank)

    def print_Return(self, s: n.Return, indent: int, blank: _Blank) -> None:
        if s.value is None:
            self.simple(s, "return", indent, blank)
        else:
            self.wrapped(s, "return ", s.value, "", indent, blank)

    def print_Insert(self, s: n.Insert, indent: int, blank: _Blank) -> None:
        self.wrapped(s, "insert ", s.value, f" into {self.ex.expr(s.table)}", indent, blank)

    def print_Delete(self, s: n.Delete, indent: int, blank: _Blank) -> None:
        text = f"delete {self.ex.expr(s.value)} from {self.ex.expr(s.table)}"
        self.simple(s, text, indent, blank)

    def print_Append(self, s: n.Append, indent: int, blank: _Blank) -> None:
        self.wrapped(s, "append ", s.value, f" to {self.ex.expr(s.target)}", indent, blank)

    def print_Remove(self, s: n.Remove, indent: int, blank: _Blank) -> None:
        text = f"remove {self.ex.expr(s.value)} from {self.ex.expr(s.target)}"
        self.simple(s, text, indent, blank)

    # tasks ---------------------------------------------------------------------
    def print_TaskDecl(self, d: n.TaskDecl, indent: int, blank: _Blank) -> None:
        head = f"task {d.name.name} in {d.world.name}"
        pending = self.header(d, head, d.doc, "", indent, blank)
        self.finish(self.section(pending, d.items, d.span, indent, self.member), d.span.end_line)

    def print_Given(self, g: n.Given, indent: int, blank: _Blank) -> None:
        if isinstance(g.source, str):
            self.simple(g, "given " + quote_string(g.source), indent, blank)
        else:
            self.data(g, "given ", g.source, "", indent, blank)

    def print_Instruction(self, t: n.Instruction, indent: int, blank: _Blank) -> None:
        self.with_doc(t, "instruction", t.text, "", indent, blank)

    def print_Persona(self, t: n.Persona, indent: int, blank: _Blank) -> None:
        self.with_doc(t, "persona", t.text, "", indent, blank)

    def print_Known(self, t: n.Known, indent: int, blank: _Blank) -> None:
        self.with_doc(t, "known", t.text, "", indent, blank)

    def print_Unknown(self, t: n.Unknown, indent: int, blank: _Blank) -> None:
        self.with_doc(t, "unknown", t.text, "", indent, blank)

    def print_Check(self, c: n.Check, indent: int, blank: _Blank) -> None:
        head = "check " + c.name.name
        if c.weight is not None:
            head += " weight " + _number(c.weight)
        self.with_doc(c, head, c.doc, ": " + self.ex.expr(c.condition), indent, blank)

    def print_Frame(self, f: n.Frame, indent: int, blank: _Blank) -> None:
        targets = ", ".join(".".join(i.name for i in t.path) for t in f.targets)
        self.simple(f, "only changes " + (targets or "nothing"), indent, blank)

    def print_Solution(self, s: n.Solution, indent: int, blank: _Blank) -> None:
        pad = INDENT * indent
        if len(s.items) == 1 and isinstance(s.items[0], n.SolutionCall) and \
                not self.has_comment(s.span):
            one = f"solution {{ {self.call_text(s.items[0])} }}"
            if len(pad + one) <= MAX_WIDTH:
                self.simple(s, one, indent, blank)
                return
        pending = self.start(s, "solution", indent, blank)
        self.finish(self.section(pending, s.items, s.span, indent, self.member), s.span.end_line)

    def print_SolutionReply(self, r: n.SolutionReply, indent: int, blank: _Blank) -> None:
        self.with_doc(r, "reply", r.text, "", indent, blank)

    def call_text(self, c: n.SolutionCall) -> str:
        return f"{c.tool.name}({self.ex.args(c.args)})"

    def print_SolutionCall(self, c: n.SolutionCall, indent: int, blank: _Blank) -> None:
        self.simple(c, self.call_text(c), indent, blank)

    def print_Tags(self, t: n.Tags, indent: int, blank: _Blank) -> None:
        self.simple(t, "tags " + ", ".join(i.name for i in t.names), indent, blank)

    def print_Split(self, s: n.Split, indent: int, blank: _Blank) -> None:
        self.simple(s, "split " + s.name.name, indent, blank)

    def print_Seed(self, s: n.Seed, indent: int, blank: _Blank) -> None:
        self.simple(s, f"seed {s.value}", indent, blank)

    def print_Reward(self, r: n.Reward, indent: int, blank: _Blank) -> None:
        self.simple(r, "reward " + r.mode.name, indent, blank)

    # data ----------------------------------------------------------------------
    def data(self, node: n.Node, prefix: str, value: n.Data, suffix: str, indent: int,
             blank: _Blank) -> None:
        """``prefix value suffix`` on one line if it fits, else one entry a line."""
        pad = INDENT * indent
        one = prefix + data_text(value) + suffix
        entries: Sequence[n.Node]
        if isinstance(value, n.DataObject):
            entries, brackets = value.pairs, "{}"
        elif isinstance(value, n.DataArray):
            entries, brackets = value.items, "[]"
        else:
            entries, brackets = (), ""
        commented = bool(brackets) and self.has_comment(value.span)
        if not commented and (not entries or len(pad + one) <= MAX_WIDTH):
            self.simple(node, one, indent, blank)
            return
        opening = self.start(node, prefix + brackets[0], indent, blank)
        opening.opener = True
        self.lines.append(opening)
        for entry in entries:
            if isinstance(entry, n.DataPair):
                self.data(entry, _key(entry.key) + ": ", entry.value, ",", indent + 1,
                          _Blank.KEEP)
            else:
                self.data(entry, "", entry, ",", indent + 1, _Blank.KEEP)
        self.lines.append(_Line(pad + brackets[1] + suffix, indent, value.span.end - 1,
                                value.span.end_line, node.span.end_line, closer=True))


# --------------------------------------------------------------------- API
def format_module(module: n.Module, comments: Sequence[n.Comment] | None = None) -> str:
    """The canonical text of a parsed module.

    ``comments`` defaults to ``module.comments``; their spans place them.
    A module built by hand (spans all equal) formats fine without comments.
    """
    kept = tuple(module.comments if comments is None else comments)
    layout = _Layout(kept)
    with _deep_recursion():
        layout.module(module)
    return _render(layout.lines, kept, _trailing_comments(module, kept))


def format_source(text: str, path: str = "<input>.world") -> str | None:
    """Parse ``text`` and format it; None when it has syntax errors."""
    result = parse_module(text, path, DiagnosticSink())
    if not result.ok:
        return None
    return format_module(result.module)
