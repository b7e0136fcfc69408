"""Python code as objects: the expressions and statements code generation builds, and the one
printer that writes them.

Code generation never writes Python text by hand nor reads back text it wrote: it builds
these nodes (a name, an attribute read, a call, an operator with its precedence, a display, a
comprehension, a literal by ``repr``...) and asks questions of them (:func:`is_charged`,
:func:`is_dotted`), and :func:`print_block` renders them, wrapping any line longer than
:data:`WIDTH` characters much as black does, but filling lines: the outermost bracketed part
is split, its items (arguments, a comprehension's clauses) as many a line as fit, an item too
long for a line of its own split the same way, recursively; an operator chain that does not
fit is parenthesised and split before its operators, as many operands a line as fit. A call
that holds prose (a message, a description) aligns its arguments with its opening bracket
instead, as PEP 8 and hand-written code do, where that takes fewer lines::

    self.fail(f'{name}, born {birth_date}, is already registered as patient '
              f'{self.t_patients[same[0]].id_}.')

:class:`Raw` is the typed escape hatch for code still produced as text elsewhere (the type
tables' loaders and checks, builtin templates): it is printed as it is and never split.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

__all__ = [
    "WIDTH", "ATOM", "COMPARE", "LAMBDA", "Expr", "Name", "Const", "Raw", "Attr",
    "Call", "Index", "SliceOf", "BinOp",
    "BoolOp", "Compare", "Not", "Neg", "IfExp", "Lambda", "TupleOf", "ListOf", "DictOf",
    "Comprehension", "FormattedValue", "FString", "negated", "Stmt", "Assign", "AugAssign",
    "ExprStmt",
    "Return", "Raise", "Pass", "Break",
    "Continue", "If", "For", "While", "Match", "MatchCase", "FunctionDef", "call", "attr", "rt",
    "is_charged",
    "charged_value", "is_dotted", "print_block", "text_literal",
]

#: the longest line the printer writes where it can split (black's default is 88; the
#: project's ruff allows 100)
WIDTH = 99
_INDENT = "    "

# Python's precedence levels, loosest first (the language reference's table)
LAMBDA, IFEXP, OR, AND, NOT, COMPARE = 1, 2, 3, 4, 5, 6
BITOR, BITXOR, BITAND, SHIFT, ADD, MUL, UNARY, POWER, ATOM = 7, 8, 9, 10, 11, 12, 13, 14, 16

#: binary operator -> its precedence
_BINARY = {"+": ADD, "-": ADD, "*": MUL, "/": MUL, "//": MUL, "%": MUL, "@": MUL,
           "**": POWER, "|": BITOR, "^": BITXOR, "&": BITAND, "<<": SHIFT, ">>": SHIFT}


class Expr:
    """A Python expression. ``str()`` of one is its text on one line."""

    __slots__ = ()

    @property
    def precedence(self) -> int:
        return ATOM

    def flat(self) -> str:
        raise NotImplementedError

    def __str__(self) -> str:
        return self.flat()

    def __format__(self, spec: str) -> str:
        return format(self.flat(), spec)


#: an operand of an operator expression: the operator before it (none for the first), the
#: operand, and how tightly it must bind
Operand = tuple[str, "Expr", int]


def _joined(operands: list[Operand]) -> str:
    return " ".join(prefix + _at(expr, least) for prefix, expr, least in operands)


def _at(expr: Expr, least: int) -> str:
    """``expr``'s text, parenthesised when it binds looser than ``least``."""
    text = expr.flat()
    return f"({text})" if expr.precedence < least else text


@dataclass(frozen=True, slots=True)
class Name(Expr):
    """A local, a parameter, a module-level name."""

    id: str

    def flat(self) -> str:
        return self.id


@dataclass(frozen=True, slots=True)
class Const(Expr):
    """A literal, written with ``repr`` (every string from the spec goes through here)."""

    value: object

    @property
    def precedence(self) -> int:
        negative = isinstance(self.value, (int, float)) and not isinstance(self.value, bool) \
            and (self.value < 0 or repr(self.value).startswith("-"))
        return UNARY if negative else ATOM

    def flat(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class Raw(Expr):
    """Code produced as text elsewhere, printed as it is (never split); ``atomic`` says it
    needs no parentheses as an operand."""

    text: str
    atomic: bool = True

    @property
    def precedence(self) -> int:
        return ATOM if self.atomic else LAMBDA

    def flat(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Attr(Expr):
    obj: Expr
    name: str

    def flat(self) -> str:
        obj = _at(self.obj, ATOM)
        if isinstance(self.obj, Const) and isinstance(self.obj.value, int) and \
                not obj.startswith("("):
            obj = f"({obj})"  # `1.real`: an int literal's dot would start a float
        return f"{obj}.{self.name}"


@dataclass(frozen=True, slots=True)
class Call(Expr):
    func: Expr
    args: tuple[Expr, ...] = ()
    keywords: tuple[tuple[str, Expr], ...] = ()

    def items(self) -> list[str]:
        if len(self.args) == 1 and not self.keywords and \
                isinstance(self.args[0], Comprehension) and self.args[0].kind == "gen":
            return [self.args[0].inner()]  # a generator as the only argument: no parentheses
        return [_at(a, LAMBDA) for a in self.args] + \
            [f"{k}={_at(v, LAMBDA)}" for k, v in self.keywords]

    def flat(self) -> str:
        return f"{_at(self.func, ATOM)}({', '.join(self.items())})"


@dataclass(frozen=True, slots=True)
class SliceOf(Expr):
    """``start:stop:step`` inside a subscript (each part may be left out)."""

    start: Expr | None
    stop: Expr | None
    step: Expr | None

    def flat(self) -> str:
        return ":".join("" if part is None else _at(part, LAMBDA)
                        for part in (self.start, self.stop, self.step))


@dataclass(frozen=True, slots=True)
class Index(Expr):
    obj: Expr
    index: Expr

    def flat(self) -> str:
        return f"{_at(self.obj, ATOM)}[{_at(self.index, LAMBDA)}]"


@dataclass(frozen=True, slots=True)
class BinOp(Expr):
    left: Expr
    op: str
    right: Expr

    @property
    def precedence(self) -> int:
        return _BINARY[self.op]

    def flat(self) -> str:
        return _joined(self.operands())

    def operands(self) -> list[Operand]:
        mine = self.precedence
        if self.op == "**":  # right-associative; a unary minus on its right needs nothing
            return [("", self.left, POWER + 1), ("** ", self.right, UNARY)]
        if isinstance(self.left, BinOp) and self.left.precedence == mine:
            head = self.left.operands()
        else:
            head = [("", self.left, mine)]
        return [*head, (f"{self.op} ", self.right, mine + 1)]


@dataclass(frozen=True, slots=True)
class BoolOp(Expr):
    op: str  # "and" / "or"
    values: tuple[Expr, ...]

    @property
    def precedence(self) -> int:
        return AND if self.op == "and" else OR

    def flat(self) -> str:
        return _joined(self.operands())

    def operands(self) -> list[Operand]:
        out: list[Operand] = []
        for value in self.values:
            inner = value.operands() if isinstance(value, BoolOp) and value.op == self.op \
                else [("", value, self.precedence + 1)]
            if out:
                inner[0] = (f"{self.op} ", inner[0][1], inner[0][2])
            out += inner
        return out


@dataclass(frozen=True, slots=True)
class Compare(Expr):
    """One comparison (never chained: each side binds tighter)."""

    left: Expr
    op: str
    right: Expr

    @property
    def precedence(self) -> int:
        return COMPARE

    def flat(self) -> str:
        return _joined(self.operands())

    def operands(self) -> list[Operand]:
        return [("", self.left, COMPARE + 1), (f"{self.op} ", self.right, COMPARE + 1)]


@dataclass(frozen=True, slots=True)
class Not(Expr):
    operand: Expr

    @property
    def precedence(self) -> int:
        return NOT

    def flat(self) -> str:
        return f"not {_at(self.operand, UNARY)}"  # `not (a == b)`: parentheses for the reader


@dataclass(frozen=True, slots=True)
class Neg(Expr):
    operand: Expr

    @property
    def precedence(self) -> int:
        return UNARY

    def flat(self) -> str:
        return f"-{_at(self.operand, UNARY)}"


@dataclass(frozen=True, slots=True)
class IfExp(Expr):
    body: Expr
    test: Expr
    orelse: Expr

    @property
    def precedence(self) -> int:
        return IFEXP

    def flat(self) -> str:
        return _joined(self.operands())

    def operands(self) -> list[Operand]:
        return [("", self.body, OR), ("if ", self.test, OR), ("else ", self.orelse, IFEXP)]


@dataclass(frozen=True, slots=True)
class Lambda(Expr):
    params: tuple[str, ...]
    body: Expr

    @property
    def precedence(self) -> int:
        return LAMBDA

    def flat(self) -> str:
        params = ", ".join(self.params)
        return f"lambda {params}: {_at(self.body, LAMBDA)}" if params else \
            f"lambda: {_at(self.body, LAMBDA)}"


@dataclass(frozen=True, slots=True)
class TupleOf(Expr):
    items: tuple[Expr, ...]

    def flat(self) -> str:
        if len(self.items) == 1:
            return f"({_at(self.items[0], LAMBDA)},)"
        return f"({', '.join(_at(x, LAMBDA) for x in self.items)})"


@dataclass(frozen=True, slots=True)
class ListOf(Expr):
    items: tuple[Expr, ...]

    def flat(self) -> str:
        return f"[{', '.join(_at(x, LAMBDA) for x in self.items)}]"


@dataclass(frozen=True, slots=True)
class DictOf(Expr):
    """A dict display; an entry with key None is ``**value``."""

    entries: tuple[tuple[Expr | None, Expr], ...]

    def items(self) -> list[str]:
        return [f"**{_at(v, BITOR)}" if k is None else f"{_at(k, LAMBDA)}: {_at(v, LAMBDA)}"
                for k, v in self.entries]

    def flat(self) -> str:
        return "{" + ", ".join(self.items()) + "}"


@dataclass(frozen=True, slots=True)
class Comprehension(Expr):
    """``[element for var in iterable if condition]`` (``kind`` "list"), or a generator
    (``kind`` "gen", parenthesised unless it is a call's only argument)."""

    kind: str
    element: Expr
    var: str
    iterable: Expr
    condition: Expr | None = None

    def clauses(self) -> list[str]:
        out = [_at(self.element, LAMBDA), f"for {self.var} in {_at(self.iterable, OR)}"]
        if self.condition is not None:
            out.append(f"if {_at(self.condition, OR)}")
        return out

    def inner(self) -> str:
        return " ".join(self.clauses())

    def flat(self) -> str:
        return f"[{self.inner()}]" if self.kind == "list" else f"({self.inner()})"


@dataclass(frozen=True, slots=True)
class FormattedValue:
    """A replacement field of an f-string: ``{value}``, or ``{value:spec}`` with a format
    spec (text from the spec, never code)."""

    value: Expr
    spec: str = ""


#: a format spec an f-string literal may hold as it is (printable ASCII, no brace, quote nor
#: backslash); another is passed to ``format()`` as a string literal
_PLAIN_SPEC = re.compile(r"[ !#-&(-\[\]-z|~]*")
#: a replacement field's code that must be parenthesised inside the braces (a colon would
#: start the spec, a ``!`` the conversion, a brace the field's end or an escape)
_FIELD_PARENTHESISED = re.compile(r"[:!{}]")


@dataclass(frozen=True, slots=True)
class FString(Expr):
    """An f-string: literal texts and replacement fields, in order.

    Printed as an f-string literal (one quote kind, literal braces doubled, quotes,
    backslashes and non-printable characters escaped as ``repr`` escapes them) where every
    field's code may stand inside one as Python 3.11 reads it: no backslash, no quote of the
    literal's kind, no comment. Otherwise it is printed as the concatenation that computes
    the same text, ``'text ' + format(value, spec)`` (an f-string's field *is*
    ``format(value, spec)``), so no text from the spec ever decides how code is read.
    """

    parts: tuple[str | FormattedValue, ...]

    @property
    def precedence(self) -> int:
        return ATOM if _fstring_quote(self) is not None else self.fallback().precedence

    def flat(self) -> str:
        quote = _fstring_quote(self)
        if quote is None:
            return self.fallback().flat()
        return _fstring_piece(self.tokens(), quote)

    def tokens(self) -> list[str | FormattedValue]:
        """The literal texts cut after each space and line break (where a long f-string
        may be split into several), and the fields."""
        out: list[str | FormattedValue] = []
        for part in self.parts:
            if isinstance(part, str):
                out += re.findall(r"[^ \n]*[ \n]|[^ \n]+$", part)
            else:
                out.append(part)
        return out

    def fallback(self) -> Expr:
        """The same text as a concatenation (for fields whose code no f-string may hold)."""
        operands: list[Expr] = []
        for part in self.parts:
            if isinstance(part, str):
                operands.append(Const(part))
            elif not part.spec and _is_text_call(part.value):
                operands.append(part.value)  # a string already: its format() is itself
            else:
                operands.append(call("format", part.value, Const(part.spec)))
        if not operands:
            return Const("")
        out = operands[0]
        for operand in operands[1:]:
            out = BinOp(out, "+", operand)
        return out


def _is_text_call(expr: Expr) -> bool:
    return isinstance(expr, Call) and expr.func == Attr(Name("rt"), "text")


def _field_code(field: FormattedValue) -> str:
    code = field.value.flat()
    if field.value.precedence <= LAMBDA or _FIELD_PARENTHESISED.search(code):
        code = f"({code})"
    return code


def _fstring_quote(node: FString) -> str | None:
    """The quote an f-string literal of ``node`` is written with, or None when a field's
    code (or spec) cannot stand inside one."""
    codes = []
    if all(isinstance(part, str) for part in node.parts):  # a plain string: repr's quote
        text = "".join(part for part in node.parts if isinstance(part, str))
        return '"' if "'" in text and '"' not in text else "'"
    for part in node.parts:
        if isinstance(part, FormattedValue):
            if not _PLAIN_SPEC.fullmatch(part.spec):
                return None
            codes.append(_field_code(part))
    if any("\\" in code or "#" in code or "\n" in code for code in codes):
        return None
    for quote in ("'", '"'):
        if not any(quote in code for code in codes):
            return quote
    return None


def _escaped(text: str, quote: str, braces: bool) -> str:
    """``text`` inside a string literal written with ``quote`` (braces doubled in an
    f-string): ``repr``'s escapes for backslashes and non-printable characters."""
    out = []
    for ch in text:
        if ch == quote:
            out.append("\\" + ch)
        elif ch == "\\" or not ch.isprintable():
            out.append(repr(ch)[1:-1])
        elif braces and ch in "{}":
            out.append(ch * 2)
        else:
            out.append(ch)
    return "".join(out)


def _fstring_piece(tokens: Sequence[str | FormattedValue], quote: str) -> str:
    """One literal of ``tokens``: an f-string when it holds a field, else a plain string."""
    fields = any(isinstance(token, FormattedValue) for token in tokens)
    body = "".join(
        _escaped(token, quote, fields) if isinstance(token, str) else
        "{" + _field_code(token) + (":" + token.spec if token.spec else "") + "}"
        for token in tokens)
    return ("f" if fields else "") + quote + body + quote


# ------------------------------------------------------------------ builders and questions
def attr(dotted: str) -> Expr:
    """``a.b.c`` as attribute reads of a name."""
    head, *rest = dotted.split(".")
    out: Expr = Name(head)
    for part in rest:
        out = Attr(out, part)
    return out


def call(func: str | Expr, *args: Expr, **keywords: Expr) -> Call:
    """A call of ``func`` (a dotted name or an expression)."""
    target = attr(func) if isinstance(func, str) else func
    return Call(target, tuple(args), tuple(keywords.items()))


def rt(helper: str, *args: Expr) -> Call:
    """A call of a runtime helper, ``rt.helper(args)``."""
    return Call(Attr(Name("rt"), helper), tuple(args))


def negated(expr: Expr) -> Expr:
    """``not expr`` as a test reads it (only its truth is used): ``not (a == b)`` is
    ``a != b``, ``not (x in xs)`` is ``x not in xs``, ``not (x is None)`` is ``x is not
    None`` (Python defines each of these as the other's negation: ``!=`` is the inverted
    ``==`` for every value the runtime holds, a NaN included), and ``not (not x)`` is ``x``
    (a test calls ``bool(x)`` once either way). Order comparisons stay negated: ``not (a <
    b)`` is not ``a >= b`` for a NaN."""
    if isinstance(expr, Not):
        return expr.operand
    if isinstance(expr, Compare) and expr.op in _NEGATED:
        return Compare(expr.left, _NEGATED[expr.op], expr.right)
    return Not(expr)


#: comparison -> the one Python defines as its negation
_NEGATED = {"==": "!=", "!=": "==", "in": "not in", "not in": "in", "is": "is not",
            "is not": "is"}


def charged_value(expr: Expr, ep: str) -> Expr | None:
    """``x`` where ``expr`` is ``rt.each(ep, x)``, the steps of processing ``x`` charged."""
    if isinstance(expr, Call) and expr.func == Attr(Name("rt"), "each") and \
            len(expr.args) == 2 and expr.args[0] == Name(ep) and not expr.keywords:
        return expr.args[1]
    return None


def is_charged(expr: Expr, ep: str) -> bool:
    """Whether ``expr`` already pays a step per element (``rt.each(ep, x)``)."""
    return charged_value(expr, ep) is not None


def is_dotted(expr: Expr) -> bool:
    """Whether ``expr`` is a name or a chain of attribute reads of one: it may be evaluated
    twice at no cost."""
    while isinstance(expr, Attr):
        expr = expr.obj
    return isinstance(expr, Name)


# ------------------------------------------------------------------------------ statements
@dataclass(slots=True)
class Stmt:
    """A statement; ``anchor`` is the spec line it comes from (``file:line``), written as a
    comment at its end."""

    anchor: str | None = field(default=None, kw_only=True)


@dataclass(slots=True)
class Assign(Stmt):
    target: Expr
    value: Expr
    annotation: str | None = None


@dataclass(slots=True)
class AugAssign(Stmt):
    """``target op= value`` (``op`` without its ``=``)."""

    target: Expr
    op: str
    value: Expr


@dataclass(slots=True)
class ExprStmt(Stmt):
    value: Expr


@dataclass(slots=True)
class Return(Stmt):
    value: Expr | None


@dataclass(slots=True)
class Raise(Stmt):
    error: Expr


@dataclass(slots=True)
class Pass(Stmt):
    pass


@dataclass(slots=True)
class Break(Stmt):
    pass


@dataclass(slots=True)
class Continue(Stmt):
    pass


@dataclass(slots=True)
class If(Stmt):
    """``if test: body`` with an ``else`` (an ``elif`` when ``orelse`` is one :class:`If`)."""

    test: Expr
    body: list[Stmt]
    orelse: list[Stmt] = field(default_factory=list)


@dataclass(slots=True)
class For(Stmt):
    """``for var in iterable: body``; ``var`` is one name, or several separated by commas
    (names the compiler made, never text from the spec)."""

    var: str
    iterable: Expr
    body: list[Stmt]


@dataclass(slots=True)
class While(Stmt):
    test: Expr
    body: list[Stmt]


@dataclass(slots=True)
class MatchCase(Stmt):
    """``case pattern:`` of a :class:`Match`: ``pattern`` is a class pattern (``Cls()``), a
    value pattern (``Cls.member``) or ``_``, built from names the compiler made (never
    text from the spec), with ``as binding`` when it binds the subject."""

    pattern: str
    body: list[Stmt]
    binding: str | None = None


@dataclass(slots=True)
class Match(Stmt):
    """``match subject:`` and its cases, in order."""

    subject: Expr
    cases: list[MatchCase]


@dataclass(slots=True)
class FunctionDef(Stmt):
    """``def name(params) -> returns:`` with a docstring (its text) and a body, after its
    decorators (``@expr`` each; the anchor goes on the first one's line, where the
    definition starts)."""

    name: str
    params: list[str]
    returns: str
    body: list[Stmt]
    doc: str | None = None
    decorators: tuple[Expr, ...] = ()


# -------------------------------------------------------------------------------- printing
def _comment(anchor: str | None) -> str:
    return f"  # {anchor}" if anchor else ""


@dataclass(frozen=True, slots=True)
class _Item:
    """One item between brackets: its text on one line, and how it splits further (the
    text before its expression, the expression) when it may."""

    text: str
    prefix: str = ""
    expr: Expr | None = None
    #: whether the expression is parenthesised (it binds looser than its place needs)
    paren: bool = False


def _item(expr: Expr, least: int = LAMBDA, prefix: str = "") -> _Item:
    """``prefix`` and ``expr`` (parenthesised when it binds looser than ``least``)."""
    return _Item(prefix + _at(expr, least), prefix, expr, expr.precedence < least)


def _split_item(item: _Item, indent: str, end: str, head: str = "", reserve: int = 0
                ) -> list[str]:
    """The lines of ``item`` (and ``end``) at ``indent`` after ``head``, split where it is
    too long; the first line leaves ``reserve`` characters free."""
    if item.expr is None or len(indent + head + item.text + end) + reserve <= WIDTH:
        return [indent + head + item.text + end]
    if item.paren:
        return _wrapped(item.expr, indent, head + item.prefix + "(", ")" + end, True, reserve)
    return _wrapped(item.expr, indent, head + item.prefix, end, True, reserve)


def _is_text(expr: Expr | None) -> bool:
    """Whether ``expr`` is a text literal: split, its pieces stand level with the items
    before it, so it starts a line of its own (its pieces read as one item)."""
    return isinstance(expr, FString) or (isinstance(expr, Const) and isinstance(expr.value, str))


#: the longest start of a line (``self,``: short leading arguments, operands) after which a
#: long last item (not a text) may open its split, instead of on a line of its own
_SHORT_START = 40


def _filled(items: list[_Item], indent: str, end: str, head: str = "", reserve: int = 0
            ) -> list[str]:
    """``items`` (each followed by ``end``) at ``indent``, as many a line as fit, the first
    after ``head`` and leaving ``reserve`` characters free; an item too long for a line of
    its own is split, and the next one starts a line after it. An operator chain's operands
    each start with their operator, so a line breaks before an operator."""
    out: list[str] = []
    line: str | None = None  # the line being filled, after its indent
    for number, item in enumerate(items):
        text = item.text + end
        free = reserve if not out else 0
        if line is not None and len(indent + line + " " + text) + free <= WIDTH:
            line += " " + text
            continue
        lead = head if number == 0 else ""
        if line is None and len(indent + lead + text) + free <= WIDTH:
            line = lead + text
            continue
        split = _split_item(item, indent, end, lead, free)
        if line is not None:
            # the last item split after a short start of its line (``self, ``), where that
            # takes fewer lines
            after = _split_item(item, indent, end, line + " ")
            if number == len(items) - 1 and len(line) <= _SHORT_START and \
                    not _is_text(item.expr) and len(indent + text) > WIDTH and \
                    len(after) <= len(split) and len(after[0]) <= WIDTH:
                out += after
                line = None
                continue
            out.append(indent + line)
            if len(indent + text) <= WIDTH:
                line = text
                continue
        out += split
        line = None
    if line is not None:
        out.append(indent + line)
    return out


def _bracketed(expr: Expr) -> tuple[str, list[_Item], str, bool] | None:
    """How ``expr`` splits: the text up to its outermost opening bracket, its items, the
    closing bracket, and whether items are separated by commas (with a trailing one when
    split); None when it has no brackets to split."""
    if isinstance(expr, Call):
        head = _at(expr.func, ATOM) + "("
        if len(expr.args) == 1 and not expr.keywords and \
                isinstance(expr.args[0], Comprehension) and expr.args[0].kind == "gen":
            return head, _clauses(expr.args[0]), ")", False
        items = [_item(a) for a in expr.args] + \
            [_item(v, prefix=f"{k}=") for k, v in expr.keywords]
        return head, items, ")", True
    if isinstance(expr, TupleOf) and expr.items:
        return "(", [_item(x) for x in expr.items], ")", True
    if isinstance(expr, ListOf) and expr.items:
        return "[", [_item(x) for x in expr.items], "]", True
    if isinstance(expr, DictOf) and expr.entries:
        return "{", [_item(v, BITOR, "**") if k is None else
                     _item(v, prefix=f"{_at(k, LAMBDA)}: ") for k, v in expr.entries], "}", True
    if isinstance(expr, Comprehension):
        brackets = "[]" if expr.kind == "list" else "()"
        return brackets[0], _clauses(expr), brackets[1], False
    if isinstance(expr, Index):
        return _at(expr.obj, ATOM) + "[", [_item(expr.index)], "]", False
    return None


def _clauses(comp: Comprehension) -> list[_Item]:
    out = [_item(comp.element), _item(comp.iterable, OR, f"for {comp.var} in ")]
    if comp.condition is not None:
        out.append(_item(comp.condition, OR, "if "))
    return out


def _operands(expr: Expr) -> list[_Item] | None:
    """An operator expression's operands, each after the first with its operator."""
    if isinstance(expr, (BinOp, BoolOp, Compare, IfExp)):
        return [_item(operand, least, prefix) for prefix, operand, least in expr.operands()]
    return None


def _hugged(expr: Expr) -> tuple[str, Expr] | None:
    """The last argument of call ``expr`` when it is bracketed itself and any before it are
    names (``self``, ``ep``), with the text of those: split inside its own brackets,
    ``f([`` ... ``])`` or ``rt.each(self, [`` ... ``])``, not one level deeper."""
    if not isinstance(expr, Call) or not expr.args or expr.keywords:
        return None
    *leading, arg = expr.args
    if not all(isinstance(name, Name) for name in leading):
        return None
    before = "".join(f"{name.flat()}, " for name in leading)
    if len(before) > _SHORT_START:
        return None
    if isinstance(arg, (Call, TupleOf, ListOf, DictOf)) or \
            (isinstance(arg, Comprehension) and arg.kind == "list"):
        return before, arg
    return None


def _wrapped(expr: Expr, indent: str, head: str, tail: str, nested: bool,
             reserve: int = 0) -> list[str]:
    """``head + expr + tail`` at ``indent``, split over lines where it is too long.
    ``nested``: inside brackets already, where a line may break without parentheses;
    ``reserve``: characters the first line must leave free (for a comment). A statement's
    expression whose first line is still too long (a long target before it, an anchor
    after it, or no bracket to split) goes in parentheses, on a line of its own, when it
    fits there."""
    lines = _split(expr, indent, head, tail, nested, reserve)
    if nested or len(lines[0]) + reserve <= WIDTH:
        return lines
    inside = _split(expr, indent + _INDENT, "", "", True, 0)
    if len(inside[0]) > WIDTH:
        return lines
    return [indent + head + "(", *inside, indent + ")" + tail]


def _split(expr: Expr, indent: str, head: str, tail: str, nested: bool, reserve: int
           ) -> list[str]:
    line = indent + head + expr.flat() + tail
    if len(line) + reserve <= WIDTH:
        return [line]
    hugged = _hugged(expr)
    if hugged is not None and _bracketed(hugged[1]) is not None:
        assert isinstance(expr, Call)
        before, arg = hugged
        lines = _wrapped(arg, indent, head + _at(expr.func, ATOM) + "(" + before, ")" + tail,
                         True, reserve)
        if not before or all(len(line) <= WIDTH for line in lines):
            return lines  # (after names, only where every line fits)
    if isinstance(expr, Const) and type(expr.value) is str:  # a long text: joined literals
        return _fstring_wrapped(FString((expr.value,)), indent, head, tail, nested,
                                reserve) or [line]
    if isinstance(expr, FString):
        if _fstring_quote(expr) is None:
            return _wrapped(expr.fallback(), indent, head, tail, nested, reserve)
        return _fstring_wrapped(expr, indent, head, tail, nested, reserve) or [line]
    inner = indent + _INDENT
    split = _bracketed(expr)
    if split is not None:
        opener, items, closer, comma = split
        together = inner + (", " if comma else " ").join(item.text for item in items)
        if isinstance(expr, TupleOf) and len(items) == 1:
            together += ","  # a tuple of one is its trailing comma
        if len(together) <= WIDTH and len(indent + head + opener) + reserve <= WIDTH:
            lines = [indent + head + opener, together, indent + closer + tail]
        else:
            lines = [indent + head + opener, *_filled(items, inner, "," if comma else ""),
                     indent + closer + tail]
        if isinstance(expr, Call):
            aligned = _aligned(indent + head + opener, items, closer + tail, reserve)
            if aligned is not None and len(aligned) < len(lines):
                return aligned
        return lines
    if isinstance(expr, Not):
        if expr.operand.precedence >= UNARY:
            return _wrapped(expr.operand, indent, head + "not ", tail, nested, reserve)
        operands = _operands(expr.operand)
        if operands is not None:  # `not (`, the operands on a line or one a line, `)`
            if len(inner + expr.operand.flat()) <= WIDTH:
                return [indent + head + "not (", inner + expr.operand.flat(),
                        indent + ")" + tail]
            return [indent + head + "not (", *_filled(operands, inner, ""), indent + ")" + tail]
    operands = _operands(expr)
    if operands is not None:
        right = _right_hugged(operands, indent, head, tail, reserve)
        if right is not None:
            return right
        if nested:  # inside brackets: the operands level with the first
            lines = _filled(operands, indent, "", head)
            lines[-1] += tail
            return lines
        if len(inner + expr.flat()) <= WIDTH:  # parenthesised, on a line of its own
            return [indent + head + "(", inner + expr.flat(), indent + ")" + tail]
        return [indent + head + "(", *_filled(operands, inner, ""), indent + ")" + tail]
    if isinstance(expr, Const) and isinstance(expr.value, str):
        # long text: literals split after spaces, one a line (Python joins them), in
        # parentheses unless brackets hold them already
        if nested and not head:
            pieces = _text_pieces(expr.value, indent, len(tail))
            return [*(indent + repr(piece) for piece in pieces[:-1]),
                    indent + repr(pieces[-1]) + tail]
        pieces = _text_pieces(expr.value, inner, 0)
        return [indent + head + "(", *(inner + repr(piece) for piece in pieces),
                indent + ")" + tail]
    if isinstance(expr, Lambda) and expr.params:
        # the body split as it would be alone (inside brackets, a line may break in it)
        return _wrapped(expr.body, indent, f"{head}lambda {', '.join(expr.params)}: ", tail,
                        nested, reserve)
    return [line]


def _is_prose(expr: Expr | None) -> bool:
    """Whether ``expr`` is a text of words (a message, a description), not a name."""
    if isinstance(expr, FString):
        return any(isinstance(part, str) and " " in part for part in expr.parts)
    return isinstance(expr, Const) and isinstance(expr.value, str) and " " in expr.value


#: the rightmost column a call's opening bracket may stand at for its arguments to be
#: aligned with it (further right, too little of the line is left for them)
_ALIGN_COLUMN = 44


def _aligned(opener: str, items: list[_Item], closer: str, reserve: int) -> list[str] | None:
    """A call that holds a text (a message, a description) with its arguments aligned with
    its opening bracket, as PEP 8 aligns continuation lines and as such calls are written
    by hand: as many a line as fit, the text split into literals there, the closing bracket
    after the last argument::

        self.fail(f'{name}, born {birth_date}, is already registered as patient '
                  f'{self.t_patients[same[0]].id_}.')

    None when the call holds no prose, its bracket stands right of :data:`_ALIGN_COLUMN`, or
    a line would not fit."""
    if len(opener) > _ALIGN_COLUMN or not any(_is_prose(item.expr) for item in items):
        return None
    align = " " * len(opener)
    lines = _filled(items, align, ",", reserve=reserve)
    lines[0] = opener + lines[0][len(align):]
    assert lines[-1].endswith(",")
    lines[-1] = lines[-1][:-1] + closer
    if len(lines[0]) + reserve > WIDTH or any(len(line) > WIDTH for line in lines):
        return None
    return lines


def _fstring_wrapped(expr: FString, indent: str, head: str, tail: str, nested: bool,
                     reserve: int) -> list[str] | None:
    """A long f-string as several literals, one a line, that Python joins into one (inside
    brackets already, or in parentheses of their own): cut after spaces and line breaks,
    never inside a field. None when inside brackets it cannot be cut."""
    quote = _fstring_quote(expr)
    assert quote is not None
    inner = indent if nested else indent + _INDENT
    pieces: list[list[str | FormattedValue]] = [[]]
    for token in expr.tokens():
        room = WIDTH - len(inner) - len(tail)
        if nested and len(pieces) == 1:
            room -= len(head) + reserve
        candidate = [*pieces[-1], token]
        if pieces[-1] and len(_fstring_piece(candidate, quote)) > room:
            pieces.append([token])
        else:
            pieces[-1] = candidate
    if len(pieces) == 1 and nested:
        return None
    texts = [_fstring_piece(piece, quote) for piece in pieces]
    if nested:
        lines = [indent + head + texts[0], *(indent + text for text in texts[1:])]
        lines[-1] += tail
        return lines
    return [indent + head + "(", *(inner + text for text in texts), indent + ")" + tail]


def _right_hugged(operands: list[_Item], indent: str, head: str, tail: str, reserve: int
                  ) -> list[str] | None:
    """An operator expression whose last operand is bracketed (a call, a display), split
    inside that operand's brackets when everything before its opening bracket fits on the
    first line: ``xs + (`` ... ``)``, as black splits the right-hand side first. None when
    it does not apply."""
    *front, last = operands
    if last.expr is None or last.paren or _bracketed(last.expr) is None or \
            isinstance(last.expr, Index):
        return None
    lead = head + " ".join(item.text for item in front) + " " + last.prefix
    lines = _wrapped(last.expr, indent, lead, tail, True, reserve)
    if len(lines) < 2 or len(lines[0]) + reserve > WIDTH:
        return None
    return lines


def _simple(stmt: Stmt) -> tuple[str, Expr | None, str] | None:
    """A one-line statement as (text before its expression, the expression, text after)."""
    if isinstance(stmt, Assign):
        target = stmt.target.flat()
        if stmt.annotation is not None:
            target += f": {stmt.annotation}"
        return f"{target} = ", stmt.value, ""
    if isinstance(stmt, AugAssign):
        return f"{stmt.target.flat()} {stmt.op}= ", stmt.value, ""
    if isinstance(stmt, ExprStmt):
        return "", stmt.value, ""
    if isinstance(stmt, Return):
        return ("return ", stmt.value, "") if stmt.value is not None else ("return None", None, "")
    if isinstance(stmt, Raise):
        return "raise ", stmt.error, ""
    if isinstance(stmt, (Pass, Break, Continue)):
        return type(stmt).__name__.lower(), None, ""
    return None


def _anchored(anchor: str | None, indent: str, lines_for: Callable[[int], list[str]]
              ) -> list[str]:
    """The lines of a statement with its ``anchor`` comment: at the end of its first line
    (``lines_for(reserve)`` leaving room for it), or, where that takes more lines (the code
    fits without the comment, not with it), on a line of its own just above. An anchor
    never makes code wrap: of the two, the fewer lines, then the fewer too long."""
    if not anchor:
        return lines_for(0)
    comment = _comment(anchor)
    after = lines_for(len(comment))
    after[0] += comment
    above = [indent + comment.lstrip(), *lines_for(0)]

    def cost(lines: list[str]) -> tuple[int, int]:
        return len(lines), sum(len(line) > WIDTH for line in lines)

    return above if cost(above) < cost(after) else after


def _statement(stmt: Stmt, depth: int) -> list[str]:
    indent = _INDENT * depth
    simple = _simple(stmt)
    if simple is not None:
        head, expr, tail = simple
        if expr is None:
            return [indent + head + tail + _comment(stmt.anchor)]
        return _anchored(stmt.anchor, indent,
                         lambda reserve: _wrapped(expr, indent, head, tail, False, reserve))
    if isinstance(stmt, If):
        out = _header("if ", stmt.test, indent, stmt.anchor)
        out += print_block(stmt.body, depth + 1)
        orelse = stmt.orelse
        while len(orelse) == 1 and isinstance(orelse[0], If):
            elif_ = orelse[0]
            out += _header("elif ", elif_.test, indent, elif_.anchor)
            out += print_block(elif_.body, depth + 1)
            orelse = elif_.orelse
        if orelse:
            out.append(indent + "else:")
            out += print_block(orelse, depth + 1)
        return out
    if isinstance(stmt, For):
        return _header(f"for {stmt.var} in ", stmt.iterable, indent, stmt.anchor) + \
            print_block(stmt.body, depth + 1)
    if isinstance(stmt, While):
        return _header("while ", stmt.test, indent, stmt.anchor) + \
            print_block(stmt.body, depth + 1)
    if isinstance(stmt, Match):
        out = _header("match ", stmt.subject, indent, stmt.anchor)
        for case in stmt.cases:
            pattern = case.pattern + (f" as {case.binding}" if case.binding else "")
            out.append(indent + _INDENT + f"case {pattern}:" + _comment(case.anchor))
            out += print_block(case.body, depth + 2)
        return out
    if isinstance(stmt, FunctionDef):
        return _function(stmt, depth)
    raise AssertionError(f"cannot print {type(stmt).__name__}")


def _header(keyword: str, expr: Expr, indent: str, anchor: str | None) -> list[str]:
    return _anchored(anchor, indent,
                     lambda reserve: _wrapped(expr, indent, keyword, ":", False, reserve))


def _signature(fn: FunctionDef, indent: str, reserve: int) -> list[str]:
    """``def name(params) -> returns:`` on one line, else its parameters on a line of their
    own, else as many a line as fit (as a call's arguments fill their lines), each line
    ending with a comma; the first line leaves ``reserve`` characters free."""
    params = ", ".join(fn.params)
    head = f"def {fn.name}({params}) -> {fn.returns}:"
    opener = indent + f"def {fn.name}("
    closer = indent + f") -> {fn.returns}:"
    if len(indent + head) + reserve <= WIDTH:
        return [indent + head]
    inner = indent + _INDENT
    if len(inner + params) <= WIDTH:
        return [opener, inner + params, closer]
    lines = [inner + fn.params[0] + ","]
    for param in fn.params[1:]:
        if len(lines[-1] + " " + param + ",") <= WIDTH:
            lines[-1] += " " + param + ","
        else:
            lines.append(inner + param + ",")
    return [opener, *lines, closer]


def _function(fn: FunctionDef, depth: int) -> list[str]:
    indent = _INDENT * depth
    if fn.decorators:  # the anchor on the definition's first line: its first decorator's
        first, *others = fn.decorators
        out = _anchored(fn.anchor, indent,
                        lambda reserve: _wrapped(first, indent, "@", "", False, reserve))
        out += [line for decorator in others
                for line in _wrapped(decorator, indent, "@", "", False)]
        out += _signature(fn, indent, 0)
    else:
        out = _anchored(fn.anchor, indent, lambda reserve: _signature(fn, indent, reserve))
    if fn.doc:
        out += _docstring(fn.doc, indent + _INDENT)
    return out + print_block(fn.body, depth + 1)


def _docstring(text: str, indent: str) -> list[str]:
    """Docstring ``text`` as a literal (``repr``); a long one as literals split after
    spaces and line breaks, one a line, in parentheses that open on the first and close on
    the last (Python joins them into one)."""
    whole = indent + repr(text)
    if len(whole) <= WIDTH:
        return [whole]
    pieces = [repr(piece) for piece in _text_pieces(text, indent + "  ", 0)]
    if len(pieces) == 1:  # one word longer than the line: it cannot be split
        return [whole]
    return [indent + "(" + pieces[0], *(indent + " " + piece for piece in pieces[1:-1]),
            indent + " " + pieces[-1] + ")"]


def _text_pieces(text: str, indent: str, tail: int) -> list[str]:
    """``text`` split after spaces and line breaks into pieces whose literals fit a line at
    ``indent`` (the last one with ``tail`` characters after it, where it can)."""
    pieces: list[str] = []
    current = ""
    for token in re.findall(r"[^ \n]*[ \n]|[^ \n]+$", text):
        if current and len(indent + repr(current + token)) > WIDTH:
            pieces.append(current)
            current = ""
        current += token
        if token.endswith("\n"):
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    if len(pieces) > 1 or len(indent + repr(text)) + tail <= WIDTH:
        return pieces or [""]
    # it fits alone but not with what follows it: its last word on a line of its own
    head, _, _ = text.rstrip(" ").rpartition(" ")
    rest = text[len(head):]
    return [head, rest] if head else [text]


def text_literal(text: str, indent: str, head: int = 0) -> str:
    """A string literal for ``text`` on lines at ``indent``: its ``repr`` when the text is one
    line that fits after the ``head`` characters before it, else one literal per line of the
    text in parentheses (the closing one at ``indent``), a line too long for :data:`WIDTH`
    split after its spaces; Python joins them into the same text."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= 1 and len(indent) + head + len(repr(text)) <= WIDTH:
        return repr(text)
    inner = indent + _INDENT
    pieces = [piece for line in lines for piece in _text_pieces(line, inner, 0)]
    return "(\n" + "".join(f"{inner}{piece!r}\n" for piece in pieces) + f"{indent})"


def print_block(body: Sequence[Stmt] | Iterable[Stmt], depth: int) -> list[str]:
    """The lines of statements ``body`` at indentation ``depth`` (``pass`` when empty)."""
    out: list[str] = []
    for stmt in body:
        out += _statement(stmt, depth)
    return out or [_INDENT * depth + "pass"]
