"""The WorldSpec syntax tree.

Every node is a frozen, slotted, keyword-only dataclass with a mandatory
``span``. Spans never take part in equality, so two trees parsed from text
that differs only in layout or comments compare equal; the formatter's
round-trip test relies on this. Children are ordinary dataclass fields: a
field holding a :class:`Node` or a tuple of nodes is a child, and one walker
(:func:`iter_children`) serves every node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields
from typing import Union

__all__ = [
    "Span", "Node", "Ident", "Comment", "Module",
    # types
    "TypeExpr", "RangeConstraint", "RegexConstraint", "Constraint",
    # declarations
    "Import", "WorldDecl", "ConfigDecl", "ConfigItem", "EnumDecl", "EnumMember",
    "RecordDecl", "EntityDecl", "Field", "UnionDecl", "Variant", "AliasDecl",
    "StateDecl", "StateItem", "TableKind", "SequenceKind", "InvariantDecl",
    "ToolDecl", "FnDecl", "Param", "PolicyDecl", "ResultsDecl", "ResultShape", "ConstDecl",
    "LoadDecl",
    "Decl", "TypeDecl",
    # statements
    "Block", "Let", "Assign", "AugAssign", "If", "For", "While", "Match", "MatchCase",
    "Require", "Fail", "Return", "Insert", "Delete", "Append", "Remove", "Break", "Continue",
    "Stmt",
    # expressions
    "IntLit", "FloatLit", "StrLit", "FStr", "Interpolation", "BoolLit", "NoneLit",
    "NameRef", "Attribute", "Index", "Slice", "Call", "Arg", "Lambda", "Unary", "Binary",
    "Compare", "BoolOp", "Not", "Coalesce", "Conditional", "Quantifier", "ListLit",
    "MapLit", "MapEntry", "Comprehension", "Expr",
    # tasks
    "TaskDecl", "Given", "Instruction", "Persona", "Known", "Unknown", "Check",
    "Frame", "FrameTarget", "Solution", "SolutionCall", "SolutionReply", "Tags", "Split", "Seed",
    "Reward", "TaskItem",
    # data
    "DataObject", "DataPair", "DataArray", "DataString", "DataInt", "DataFloat",
    "DataBool", "DataNull", "DataName", "Data",
    "iter_children", "walk",
]


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a source file: 1-based line and column, end column exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int
    start: int = 0
    end: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def cover(self, other: Span) -> Span:
        """The smallest span holding both ``self`` and ``other``."""
        first, last = (self, other) if self.start <= other.start else (other, self)
        end = last if last.end >= first.end else first
        return Span(self.file, first.line, first.column, end.end_line, end.end_column,
                    first.start, end.end)


NO_SPAN = Span("<none>", 0, 0, 0, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """Base of every syntax node."""

    span: Span = field(compare=False, repr=False)


#: per node class, the names of its fields but ``span``, in order (``fields()`` is slow)
_CHILD_FIELDS: dict[type[Node], tuple[str, ...]] = {}


def _child_fields(cls: type[Node]) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.name != "span")
    return names


def _children(node: Node) -> list[Node]:
    """The direct child nodes of ``node`` in field order."""
    children: list[Node] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, Node):
            children.append(value)
        elif isinstance(value, tuple):
            children += [item for item in value if isinstance(item, Node)]
    return children


def iter_children(node: Node) -> Iterator[Node]:
    """Yield the direct child nodes of ``node`` in field order."""
    return iter(_children(node))


def walk(node: Node) -> Iterator[Node]:
    """Yield ``node`` and all its descendants, depth first, in source order."""
    stack = [node]
    pop = stack.pop
    while stack:
        current = pop()
        yield current
        children = _children(current)
        children.reverse()
        stack += children


@dataclass(frozen=True, slots=True, kw_only=True)
class Ident(Node):
    """A name as written, with its own span (for diagnostics that point at it)."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Comment(Node):
    """A ``#`` comment; kept beside the tree so the formatter can put it back."""

    text: str


# ------------------------------------------------------------------- types
@dataclass(frozen=True, slots=True, kw_only=True)
class RangeConstraint(Node):
    """``(low..high)``: a numeric range, or a length range for strings and lists."""

    low: int | float | None
    high: int | float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class RegexConstraint(Node):
    """``matching /pattern/``: the whole string must match the pattern."""

    pattern: str


Constraint = Union[RangeConstraint, RegexConstraint]


@dataclass(frozen=True, slots=True, kw_only=True)
class TypeExpr(Node):
    """A type as written: ``name[args](range) matching /re/`` with an optional ``?``."""

    name: Ident
    args: tuple[TypeExpr, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    optional: bool = False


# ------------------------------------------------------------- expressions
@dataclass(frozen=True, slots=True, kw_only=True)
class IntLit(Node):
    """An integer literal."""

    value: int


@dataclass(frozen=True, slots=True, kw_only=True)
class FloatLit(Node):
    """A float literal; ``text`` keeps the spelling for the formatter."""

    value: float
    text: str = field(compare=False, default="")


@dataclass(frozen=True, slots=True, kw_only=True)
class StrLit(Node):
    """A string literal, escapes already decoded."""

    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Interpolation(Node):
    """``{expr}`` or ``{expr:spec}`` inside an f-string."""

    expr: Expr
    spec: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FStr(Node):
    """``f"..."``: literal text parts and interpolations, in order."""

    parts: tuple[str | Interpolation, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BoolLit(Node):
    """``true`` or ``false``."""

    value: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class NoneLit(Node):
    """``none``: the absent value of an optional type."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NameRef(Node):
    """A bare name: a local, a parameter, state, an enum, a builtin; ``state.name`` when
    ``qualified`` (always the state item, whatever local has the name)."""

    name: str
    qualified: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Attribute(Node):
    """``obj.name``: a field, an enum member or a method (when called)."""

    obj: Expr
    name: Ident


@dataclass(frozen=True, slots=True, kw_only=True)
class Index(Node):
    """``obj[index]``: a list element, a map value or a table row by key."""

    obj: Expr
    index: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Slice(Node):
    """``obj[start:stop:step]``: part of a string or a list, as Python slices (each bound
    may be left out)."""

    obj: Expr
    start: Expr | None
    stop: Expr | None
    step: Expr | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Lambda(Node):
    """``x => body``; only allowed as an argument (``key: o => o.total``)."""

    param: Ident
    body: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Arg(Node):
    """A call argument, positional (``name`` is None) or named."""

    name: Ident | None
    value: Expr | Lambda


@dataclass(frozen=True, slots=True, kw_only=True)
class Call(Node):
    """``func(args)``: a builtin, a helper ``fn``, a record constructor or a method."""

    func: Expr
    args: tuple[Arg, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Unary(Node):
    """``-operand``."""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Binary(Node):
    """Arithmetic: ``+ - * / // %`` with Python semantics."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Compare(Node):
    """``== != < <= > >= in not in is``; comparisons do not chain."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class BoolOp(Node):
    """``and`` / ``or``, short-circuiting."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Not(Node):
    """``not operand``."""

    operand: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Coalesce(Node):
    """``left ?? right``: ``left`` unless it is none."""

    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Conditional(Node):
    """``if condition then a else b``."""

    condition: Expr
    then: Expr
    orelse: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Quantifier(Node):
    """``all x in xs: cond`` / ``any`` / ``exists``."""

    kind: str
    var: Ident
    iterable: Expr
    body: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class ListLit(Node):
    """``[a, b, c]``."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MapEntry(Node):
    """``key: value`` inside a map literal."""

    key: Expr
    value: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class MapLit(Node):
    """``{k: v, ...}``: an ordered map."""

    entries: tuple[MapEntry, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Comprehension(Node):
    """``[element for var in iterable if condition]``."""

    element: Expr
    var: Ident
    iterable: Expr
    condition: Expr | None


Expr = Union[
    IntLit, FloatLit, StrLit, FStr, BoolLit, NoneLit, NameRef, Attribute, Index, Slice, Call,
    Unary, Binary, Compare, BoolOp, Not, Coalesce, Conditional, Quantifier, ListLit,
    MapLit, Comprehension,
]


# -------------------------------------------------------------------- data
@dataclass(frozen=True, slots=True, kw_only=True)
class DataString(Node):
    """A string in a data literal."""

    value: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DataInt(Node):
    """An integer in a data literal."""

    value: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFloat(Node):
    """A float in a data literal."""

    value: float
    text: str = field(compare=False, default="")


@dataclass(frozen=True, slots=True, kw_only=True)
class DataBool(Node):
    """``true`` / ``false`` in a data literal."""

    value: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class DataNull(Node):
    """``none`` / ``null`` in a data literal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DataName(Node):
    """A bare word in a data literal (an enum member or a config keyword)."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DataPair(Node):
    """``key: value`` in a data object."""

    key: str
    value: Data


@dataclass(frozen=True, slots=True, kw_only=True)
class DataObject(Node):
    """``{key: value, ...}`` in a data literal (JSON with bare keys)."""

    pairs: tuple[DataPair, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DataArray(Node):
    """``[a, b]`` in a data literal."""

    items: tuple[Data, ...]


Data = Union[DataObject, DataArray, DataString, DataInt, DataFloat, DataBool, DataNull, DataName]


# -------------------------------------------------------------- statements
@dataclass(frozen=True, slots=True, kw_only=True)
class Block(Node):
    """``{ statements }``."""

    body: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Let(Node):
    """``let name[: type] = value``: a new local."""

    name: Ident
    type: TypeExpr | None
    value: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Assign(Node):
    """``target = value`` where target is a local, state, a field or an element."""

    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class AugAssign(Node):
    """``target += value`` (also ``-= *= /=``)."""

    target: Expr
    op: str
    value: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class If(Node):
    """``if cond { } else if ... else { }``."""

    condition: Expr
    then: Block
    orelse: Block | If | None


@dataclass(frozen=True, slots=True, kw_only=True)
class For(Node):
    """``for var in iterable { }``; the iterable is copied first."""

    var: Ident
    iterable: Expr
    body: Block


@dataclass(frozen=True, slots=True, kw_only=True)
class While(Node):
    """``while condition { }``: repeats while the condition holds (a bounded number of times
    at run time: a loop that does not end fails the call)."""

    condition: Expr
    body: Block


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchCase(Node):
    """``case tag [as name] { }``: an enum member or a union variant tag."""

    tag: Ident
    binding: Ident | None
    body: Block


@dataclass(frozen=True, slots=True, kw_only=True)
class Match(Node):
    """``match subject { case ... else { } }`` over an enum or a tagged union."""

    subject: Expr
    cases: tuple[MatchCase, ...]
    orelse: Block | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Require(Node):
    """``require condition else message``: a precondition; the call fails with message."""

    condition: Expr
    message: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Fail(Node):
    """``fail message``: the call fails and nothing it changed is kept; ``fail keep message``
    keeps the changes made so far."""

    message: Expr
    keep: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Return(Node):
    """``return [value]``."""

    value: Expr | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Insert(Node):
    """``insert entity into table``."""

    value: Expr
    table: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Delete(Node):
    """``delete entity from table`` (the entity or its key)."""

    value: Expr
    table: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Append(Node):
    """``append value to list_or_set``."""

    value: Expr
    target: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Remove(Node):
    """``remove value from list_set_or_map``."""

    value: Expr
    target: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class Break(Node):
    """``break``: leave the innermost ``for`` loop."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Continue(Node):
    """``continue``: go on with the next element of the innermost ``for`` loop."""


Stmt = Union[Let, Assign, AugAssign, If, For, While, Match, Require, Fail, Return, Insert, Delete,
             Append, Remove, Break, Continue]


# ------------------------------------------------------------ declarations
@dataclass(frozen=True, slots=True, kw_only=True)
class Import(Node):
    """``import "other.world"``: brings the other file's declarations into scope."""

    path: str


@dataclass(frozen=True, slots=True, kw_only=True)
class WorldDecl(Node):
    """``world Name "doc"``: the declarations of this file make up the world."""

    name: Ident
    doc: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigItem(Node):
    """``name: value`` in a config block."""

    name: Ident
    value: Data


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigDecl(Node):
    """``config { results: envscaler  start: "2024-01-01T09:00:00" ... }``."""

    items: tuple[ConfigItem, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EnumMember(Node):
    """One enum member, optionally with the string it serialises as."""

    name: Ident
    value: str | None
    doc: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class EnumDecl(Node):
    """``enum Name { a, b = "b value" }``."""

    name: Ident
    doc: str | None
    members: tuple[EnumMember, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Field(Node):
    """``[key] name[?]: type [freeform] [from "alias"] [= default] ["doc"]`` in a record or
    entity; ``name?`` marks a record field that may be absent (left out of the record's JSON,
    not null); ``alias`` is the key loaded data may give the field under; ``freeform`` marks
    a text the agent writes in its own words (see :class:`Param`)."""

    name: Ident
    type: TypeExpr
    default: Expr | None
    doc: str | None
    is_key: bool = False
    alias: str | None = None
    may_be_absent: bool = False
    freeform: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordDecl(Node):
    """``record Name { fields }``: a value type, compared by value."""

    name: Ident
    doc: str | None
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class EntityDecl(Node):
    """``entity Name { key id: str ... }``: stored in tables, referenced by key."""

    name: Ident
    doc: str | None
    fields: tuple[Field, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant(Node):
    """``tag: Record`` inside a union."""

    tag: str
    record: Ident


@dataclass(frozen=True, slots=True, kw_only=True)
class UnionDecl(Node):
    """``union Name by field { tag: Record, ... }``: a tagged union of records."""

    name: Ident
    doc: str | None
    tag_field: Ident
    variants: tuple[Variant, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class AliasDecl(Node):
    """``type Name = type``."""

    name: Ident
    type: TypeExpr
    doc: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TableKind(Node):
    """``table Entity``: the rows of an entity, keyed and in insertion order."""

    entity: Ident


@dataclass(frozen=True, slots=True, kw_only=True)
class SequenceKind(Node):
    """``sequence "USR{:03d}"``: an id generator counting from 1."""

    format: str


@dataclass(frozen=True, slots=True, kw_only=True)
class StateItem(Node):
    """One named piece of world state; ``private`` ones are not exported. ``alias``
    (``from "key"``) is the key loaded data gives the item under, instead of its name."""

    name: Ident
    kind: TableKind | SequenceKind | TypeExpr
    default: Expr | None
    doc: str | None
    private: bool = False
    alias: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StateDecl(Node):
    """``state { ... }``."""

    items: tuple[StateItem, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class InvariantDecl(Node):
    """``invariant name "message": condition``, checked after every tool call."""

    name: Ident
    doc: str | None
    condition: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyDecl(Node):
    """``policy "text"`` or ``policy file "policy.md"``: the rules the agent must follow.

    The text is shown to the agent (the generated episode's ``POLICY``); tools enforce
    what they can, the policy says the rest. ``source`` is the text itself, or the path
    of the file (relative to the spec) when ``from_file`` is set.
    """

    source: str
    from_file: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class Param(Node):
    """A tool or helper parameter: ``name: type [freeform] [= default] ["doc"] [else msg]``.

    ``freeform`` marks a text the agent writes in its own words (a message body, a reason):
    task validation does not ask that a reference solution's value for it was shown to the
    agent before the call, as it does for every other string and entity key."""

    name: Ident
    type: TypeExpr
    default: Expr | None
    doc: str | None
    not_found: Expr | None = None
    freeform: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolDecl(Node):
    """``tool name(params) -> type "doc" { body }``: what the agent can call."""

    name: Ident
    params: tuple[Param, ...]
    returns: TypeExpr | None
    doc: str | None
    body: Block


@dataclass(frozen=True, slots=True, kw_only=True)
class FnDecl(Node):
    """``fn name(params) -> type { body }``: a pure helper; it cannot change state."""

    name: Ident
    params: tuple[Param, ...]
    returns: TypeExpr
    doc: str | None
    body: Block


# ------------------------------------------------------------------- tasks
@dataclass(frozen=True, slots=True, kw_only=True)
class Given(Node):
    """``given "file.json"`` or ``given { inline data }``: initial state."""

    source: str | DataObject


@dataclass(frozen=True, slots=True, kw_only=True)
class Instruction(Node):
    """``instruction "..."``: what the agent is asked to do."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Persona(Node):
    """``persona "..."``: the simulated user, for conversational tasks."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Known(Node):
    """``known "..."``: what the simulated user knows."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Unknown(Node):
    """``unknown "..."``: what the simulated user does not know."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Check(Node):
    """``check name [weight w] ["doc"]: condition`` over the final state."""

    name: Ident
    weight: int | float | None
    doc: str | None
    condition: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class FrameTarget(Node):
    """``table`` or ``table.field`` or ``state_name`` that may change."""

    path: tuple[Ident, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Frame(Node):
    """``only changes a, b.c`` (or ``only changes nothing``): all else stays equal."""

    targets: tuple[FrameTarget, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SolutionCall(Node):
    """One tool call of a reference solution."""

    tool: Ident
    args: tuple[Arg, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SolutionReply(Node):
    """``reply "..."`` in a solution: what the agent tells the user (for answer checks)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Solution(Node):
    """``solution { call() ... reply "..." }``: a reference solution, items in source order.

    The calls are replayed on the task's data; the replies are the reference answer that
    checks reading ``reply`` / ``replies`` are validated against.
    """

    items: tuple[SolutionCall | SolutionReply, ...]

    @property
    def calls(self) -> tuple[SolutionCall, ...]:
        return tuple(i for i in self.items if isinstance(i, SolutionCall))

    @property
    def replies(self) -> tuple[SolutionReply, ...]:
        return tuple(i for i in self.items if isinstance(i, SolutionReply))


@dataclass(frozen=True, slots=True, kw_only=True)
class Tags(Node):
    """``tags a, b``."""

    names: tuple[Ident, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Split(Node):
    """``split train``."""

    name: Ident


@dataclass(frozen=True, slots=True, kw_only=True)
class Seed(Node):
    """``seed 7``: the episode's RNG seed for this task."""

    value: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Reward(Node):
    """``reward all``: how the task's checks combine into its reward (``weighted``, ``mean``
    or ``all``), overriding the world's ``config { reward: ... }``."""

    mode: Ident


TaskItem = Union[Given, Instruction, Persona, Known, Unknown, Check, Frame, Solution, Tags,
                 Split, Seed, Reward]


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskDecl(Node):
    """``task name in World { ... }``: items kept in source order."""

    name: Ident
    world: Ident
    doc: str | None
    items: tuple[TaskItem, ...]

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(i for i in self.items if isinstance(i, Check))

    @property
    def givens(self) -> tuple[Given, ...]:
        return tuple(i for i in self.items if isinstance(i, Given))

    @property
    def frame(self) -> Frame | None:
        return next((i for i in self.items if isinstance(i, Frame)), None)

    @property
    def solution(self) -> Solution | None:
        return next((i for i in self.items if isinstance(i, Solution)), None)

    @property
    def instruction(self) -> str | None:
        return next((i.text for i in self.items if isinstance(i, Instruction)), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultShape(Node):
    """``success: expr`` or ``failure: expr`` in a ``results`` block."""

    name: Ident
    value: Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultsDecl(Node):
    """``results { success: ... failure: ... }``: the shapes of a custom result convention."""

    shapes: tuple[ResultShape, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ConstDecl(Node):
    """``const NAME [: type] = value ["doc"]``: a named value built once, from literals."""

    name: Ident
    type: TypeExpr | None
    value: Expr
    doc: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadDecl(Node):
    """``on load { ... }``: statements run once after initial data is loaded, to turn the
    data into rows and derived values; a failure refuses the data."""

    body: Block


TypeDecl = Union[EnumDecl, RecordDecl, EntityDecl, UnionDecl, AliasDecl]
Decl = Union[Import, WorldDecl, ConfigDecl, EnumDecl, RecordDecl, EntityDecl, UnionDecl,
             AliasDecl, StateDecl, InvariantDecl, ToolDecl, FnDecl, TaskDecl, PolicyDecl,
             ResultsDecl, ConstDecl, LoadDecl]


@dataclass(frozen=True, slots=True, kw_only=True)
class Module(Node):
    """One parsed ``.world`` file: its declarations and, apart, its comments."""

    path: str
    decls: tuple[Decl, ...]
    comments: tuple[Comment, ...] = field(default=(), compare=False)
