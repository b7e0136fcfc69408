"""Hover, completion, rename checks and the outline, computed from an :class:`Index`.

Nothing here talks to the client: the server converts offsets to positions and sends.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lsprotocol import types as lsp

from worldspec.compiler import types as t
from worldspec.compiler.builtins import BUILTIN_FUNCTIONS, CONVERSATION, METHODS, receiver_kind
from worldspec.compiler.scope import RESERVED_NAMES
from worldspec.dsl import nodes as n
from worldspec.lsp.index import TYPE_KINDS, Index, Kind, Occurrence, Symbol

__all__ = ["hover_text", "builtin_hover", "completions", "rename_problem", "outline",
           "KEYWORDS", "IDENTIFIER", "RESULT_CONVENTIONS", "CompletionContext",
           "completion_context"]

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

KEYWORDS = frozenset(
    "all and any append as break by case changes check config continue delete else entity "
    "enum exists fail false file fn for freeform from given if import in insert instruction into "
    "invariant is key known let match matching none not null only or persona policy record "
    "remove reply require return reward seed sequence solution split state table tags task then to "
    "tool true type union unknown weight while world".split())

PRIMITIVE_TYPES = ("str", "int", "float", "bool", "date", "datetime", "duration", "json")
GENERIC_TYPES = ("list", "set", "map", "row")

#: what a tool's result looks like to the agent, per ``config { results: ... }``
RESULT_CONVENTIONS = {
    "envscaler": ('`{"success": true, "data": <result>}`',
                  '`{"success": false, "error": "<message>"}`'),
    "bfcl": ("the result itself (a record as an object)", '`{"error": "<message>"}`'),
    "tau2": ("the result as JSON text (strings bare)", "the text `Error: <message>`"),
}

_KIND_WORDS = {Kind.ALIAS: "type", Kind.MEMBER: "enum member", Kind.LOCAL: "let"}


# ------------------------------------------------------------------- hover
def _source(index: Index, node: n.Node | None) -> str:
    """The text a node was parsed from."""
    if node is None:
        return ""
    source = index.result.program.files.get(node.span.file)
    if source is None or node.span.end <= node.span.start:
        return ""
    return source.text[node.span.start:node.span.end]


def signature(index: Index, sym: Symbol) -> str:
    """``tool name(p: T = d, ...) -> R`` as written."""
    decl = sym.decl
    if not isinstance(decl, (n.ToolDecl, n.FnDecl)):
        return sym.name
    params = []
    for p in decl.params:
        text = f"{p.name.name}: {_source(index, p.type)}"
        if p.default is not None:
            text += f" = {_source(index, p.default)}"
        params.append(text)
    head = f"{sym.kind.value} {sym.name}({', '.join(params)})"
    if decl.returns is not None:
        head += f" -> {_source(index, decl.returns)}"
    return head


def _field_line(index: Index, f: n.Field) -> str:
    line = f"{'key ' if f.is_key else ''}{f.name.name}: {_source(index, f.type)}"
    if f.alias is not None:
        line += f" from {json.dumps(f.alias, ensure_ascii=False)}"
    if f.default is not None:
        line += f" = {_source(index, f.default)}"
    return line


def _local_type(index: Index, sym: Symbol) -> t.Type | None:
    decl = sym.decl
    model = index.model
    if isinstance(decl, n.Let):
        return model.type_of(decl.value)
    if isinstance(decl, (n.For, n.Quantifier, n.Comprehension)):
        iterable = model.type_of(decl.iterable)
        base = t.strip_optional(iterable) if iterable is not None else None
        if isinstance(base, (t.ListOf, t.SetOf)):
            return base.element
        if isinstance(base, t.Table):
            return t.Named("entity", base.entity)
        if isinstance(base, t.MapOf):
            return base.key
    return None


def _code(text: str) -> str:
    return f"```worldspec\n{text}\n```"


def hover_text(index: Index, occ: Occurrence) -> str:
    """Markdown for the name under the cursor: what it is, its type, its doc."""
    sym = occ.symbol
    parts = [_code(_declaration_text(index, sym, occ))]
    if sym.doc:
        parts.append(sym.doc)
    if sym.kind is Kind.TOOL:
        parts.append(_tool_notes(index, sym))
    if sym.kind is Kind.TASK and isinstance(sym.decl, n.TaskDecl) and sym.decl.instruction:
        parts.append(f"**instruction:** {sym.decl.instruction.strip()}")
    if sym.kind in (Kind.TOOL, Kind.FN) and isinstance(sym.decl, (n.ToolDecl, n.FnDecl)):
        documented = [p for p in sym.decl.params if p.doc]
        if documented:
            parts.append("\n".join(f"- `{p.name.name}`: {p.doc}" for p in documented))
    parts.append(f"*{sym.span.file}:{sym.span.line}*")
    return "\n\n".join(parts)


def _declaration_text(index: Index, sym: Symbol, occ: Occurrence) -> str:
    decl = sym.decl
    typ = index.model.type_of(occ.node) if occ.node is not None else None
    if sym.kind in (Kind.RECORD, Kind.ENTITY) and isinstance(decl, (n.RecordDecl, n.EntityDecl)):
        body = "".join(f"\n  {_field_line(index, f)}" for f in decl.fields)
        return f"{sym.kind.value} {sym.name} {{{body}\n}}"
    if sym.kind is Kind.ENUM and isinstance(decl, n.EnumDecl):
        members = ", ".join(m.name.name + (f' = "{m.value}"' if m.value else "")
                            for m in decl.members)
        return f"enum {sym.name} {{ {members} }}"
    if sym.kind is Kind.UNION and isinstance(decl, n.UnionDecl):
        variants = ", ".join(f"{v.tag}: {v.record.name}" for v in decl.variants)
        return f"union {sym.name} by {decl.tag_field.name} {{ {variants} }}"
    if sym.kind is Kind.ALIAS and isinstance(decl, n.AliasDecl):
        return f"type {sym.name} = {_source(index, decl.type)}"
    if sym.kind is Kind.FIELD and isinstance(decl, n.Field):
        return f"{sym.container.name if sym.container else ''}.{_field_line(index, decl)}"
    if sym.kind is Kind.MEMBER and isinstance(decl, n.EnumMember):
        value = f' = "{decl.value}"' if decl.value else ""
        return f"{sym.qualified}{value}"
    if sym.kind is Kind.STATE and isinstance(decl, n.StateItem):
        text = f"state {sym.name}: {_source(index, decl.kind)}"
        if decl.alias is not None:  # the key loaded data gives it under
            text += f" from {json.dumps(decl.alias, ensure_ascii=False)}"
        if typ is not None and isinstance(decl.kind, n.TypeExpr) and \
                t.show(typ) != _source(index, decl.kind):
            text += f"  # here: {t.show(typ)}"
        return text
    if sym.kind in (Kind.TOOL, Kind.FN):
        return signature(index, sym)
    if sym.kind is Kind.PARAM and isinstance(decl, n.Param):
        owner = f" of {sym.container.name}" if sym.container else ""
        shown = t.show(typ) if typ is not None else _source(index, decl.type)
        return f"(parameter{owner}) {sym.name}: {shown}"
    if sym.kind is Kind.LOCAL:
        local = typ if typ is not None else _local_type(index, sym)
        return f"(local) {sym.name}" + (f": {t.show(local)}" if local is not None else "")
    if sym.kind is Kind.TASK and isinstance(decl, n.TaskDecl):
        return f"task {sym.name} in {decl.world.name}"
    if sym.kind is Kind.CHECK and isinstance(decl, n.Check):
        return f"check {sym.qualified}: {_source(index, decl.condition)}"
    if sym.kind is Kind.INVARIANT and isinstance(decl, n.InvariantDecl):
        return f"invariant {sym.name}: {_source(index, decl.condition)}"
    if sym.kind is Kind.WORLD:
        return f"world {sym.name}"
    return f"{_KIND_WORDS.get(sym.kind, sym.kind.value)} {sym.name}"


def _tool_notes(index: Index, sym: Symbol) -> str:
    world = index.world_of(sym.span.file)
    lines = []
    if world is not None:
        convention = world.config.results
        ok, failed = RESULT_CONVENTIONS.get(convention, ("?", "?"))
        lines.append(f"**results ({convention}):** success {ok}; failure {failed}")
        info = world.tools.get(sym.name)
        if info is not None:
            lines.append("**read-only**: changes no state" if info.read_only
                         else "**changes state** (atomically: a failed call changes nothing)")
    return "\n\n".join(lines)


def builtin_hover(word: str, after_dot: bool) -> str | None:
    """Markdown for a builtin function or a method name, or None."""
    if after_dot:
        rows = [f"{kind}.{word}({', '.join(m.params)})" for kind, methods in METHODS.items()
                if (m := methods.get(word)) is not None]
        return _code("\n".join(rows)) + "\n\n(method)" if rows else None
    builtin = BUILTIN_FUNCTIONS.get(word)
    if builtin is not None:
        return _code(f"{word}({', '.join(builtin.params)})") + f"\n\n(builtin) {builtin.doc}"
    if word in CONVERSATION:
        typ, what = CONVERSATION[word]
        return _code(f"{word}: {t.show(typ)}") + f"\n\n{what} (task checks only)"
    if word == "now":
        return _code("now: datetime") + "\n\nthe episode's clock, never the wall clock"
    if word == "initial":
        return _code("initial") + "\n\nthe state before the episode (task checks only)"
    return None


# -------------------------------------------------------------- completion
@dataclass(frozen=True)
class CompletionContext:
    """Where the cursor is: after ``obj.`` (``dot_at`` is the dot's offset), after a
    comparison or assignment (``compared_until``: where the left side ends), inside the
    arguments of a call to ``callee`` (its parameter names are offered), or elsewhere."""

    prefix: str
    dot_at: int | None = None
    compared_until: int | None = None
    in_type: bool = False
    callee: str | None = None
    #: the named argument being written (``callee(name: |``)
    argument: str | None = None


_WORD_BEFORE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_COMPARED = re.compile(r"(==|!=|(?<![=!<>])=(?!=)|\bin)\s*$")
_IN_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\(([^()]*,)?\s*$")
_NAMED_ARGUMENT = re.compile(
    r"([A-Za-z_][A-Za-z0-9_]*)\(([^()]*,)?\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*$")
#: where a type is written: after `->`, `table`, `list[`, `map[K, `, in a field or state item
#: (`name: ` at the start of a line), a parameter (`tool f(a: `) or a typed `let x: `
_TYPE_POSITION = re.compile(
    r"(->|\btable|\b(?:list|set|map)\[|\bmap\[[^\]]*,"
    r"|^\s*(?:key\s+)?[A-Za-z_][A-Za-z0-9_]*\s*:"
    r"|\b(?:tool|fn)\s+[A-Za-z_][A-Za-z0-9_]*\s*\((?:[^()]*,)?\s*[A-Za-z_][A-Za-z0-9_]*\s*:"
    r"|\blet\s+[A-Za-z_][A-Za-z0-9_]*\s*:)\s*$")


def completion_context(text: str, offset: int) -> CompletionContext:
    """Read the completion context from the text before the cursor."""
    line_start = text.rfind("\n", 0, offset) + 1
    before = text[line_start:offset]
    word = _WORD_BEFORE.search(before)
    prefix = word.group() if word else ""
    rest = before[:len(before) - len(prefix)]
    if rest.endswith("."):
        return CompletionContext(prefix, dot_at=line_start + len(rest) - 1)
    compared = _COMPARED.search(rest)
    if compared is not None:
        left = rest[:compared.start()].rstrip()
        return CompletionContext(prefix, compared_until=line_start + len(left))
    call = _IN_CALL.search(rest)
    if call is not None and call.group(1) not in KEYWORDS:
        return CompletionContext(prefix, callee=call.group(1))
    named = _NAMED_ARGUMENT.search(rest)
    if named is not None and named.group(1) not in KEYWORDS and \
            not re.match(r"\s*(tool|fn)\b", before):
        return CompletionContext(prefix, callee=named.group(1), argument=named.group(3))
    return CompletionContext(prefix, in_type=bool(_TYPE_POSITION.search(rest)))


_ITEM_KINDS = {
    Kind.WORLD: lsp.CompletionItemKind.Module, Kind.ENUM: lsp.CompletionItemKind.Enum,
    Kind.MEMBER: lsp.CompletionItemKind.EnumMember, Kind.RECORD: lsp.CompletionItemKind.Struct,
    Kind.ENTITY: lsp.CompletionItemKind.Class, Kind.FIELD: lsp.CompletionItemKind.Field,
    Kind.UNION: lsp.CompletionItemKind.Interface,
    Kind.ALIAS: lsp.CompletionItemKind.TypeParameter,
    Kind.STATE: lsp.CompletionItemKind.Variable, Kind.TOOL: lsp.CompletionItemKind.Function,
    Kind.FN: lsp.CompletionItemKind.Function, Kind.PARAM: lsp.CompletionItemKind.Variable,
    Kind.LOCAL: lsp.CompletionItemKind.Variable, Kind.TASK: lsp.CompletionItemKind.Event,
    Kind.CHECK: lsp.CompletionItemKind.Property,
    Kind.INVARIANT: lsp.CompletionItemKind.Property,
}


def _item(index: Index, sym: Symbol, sort: str) -> lsp.CompletionItem:
    occ = Occurrence(sym.span, sym, True, None)
    detail = _declaration_text(index, sym, occ).split("\n", 1)[0]
    return lsp.CompletionItem(
        label=sym.name, kind=_ITEM_KINDS.get(sym.kind), detail=detail,
        documentation=lsp.MarkupContent(lsp.MarkupKind.Markdown, sym.doc) if sym.doc else None,
        sort_text=f"{sort}{sym.name}")


def _members_of(index: Index, typ: t.Type | None) -> list[Symbol]:
    base = t.strip_optional(typ) if typ is not None else None
    if isinstance(base, (t.ListOf, t.SetOf)):
        base = base.element
    if isinstance(base, t.Named) and base.kind == "enum":
        enum = index.types.get(base.name)
        return list(enum.children) if enum is not None else []
    return []


def completions(index: Index, file: str, offset: int,
                ctx: CompletionContext) -> list[lsp.CompletionItem]:
    """What may be written at ``offset``, judged from the index of a text that parses."""
    if ctx.dot_at is not None:
        return _after_dot(index, file, ctx.dot_at)
    items: list[lsp.CompletionItem] = []
    if ctx.callee is not None and ctx.argument is not None:
        items += [_item(index, m, "0") for m in _argument_members(index, ctx.callee,
                                                                  ctx.argument)]
    elif ctx.callee is not None:
        items += _argument_names(index, ctx.callee)
    if ctx.compared_until is not None:
        left = index.expression_ending_at(file, ctx.compared_until)
        typ = index.model.type_of(left) if left is not None else None
        items += [_item(index, m, "0") for m in _members_of(index, typ)]
    if ctx.in_type:
        items += [_item(index, s, "1") for s in index.types.values()]
        items += [lsp.CompletionItem(label=p, kind=lsp.CompletionItemKind.Keyword,
                                     detail="builtin type", sort_text=f"2{p}")
                  for p in (*PRIMITIVE_TYPES, *GENERIC_TYPES)]
        return items
    seen: set[str] = set()
    for local in reversed(index.locals_at(file, offset)):
        if local.name not in seen:
            seen.add(local.name)
            items.append(_item(index, local, "1"))
    for table, sort in ((index.state, "2"), (index.fns, "3"), (index.types, "4"),
                        (index.tools, "5")):
        items += [_item(index, s, sort) for s in table.values() if s.name not in seen]
    for name, builtin in BUILTIN_FUNCTIONS.items():
        items.append(lsp.CompletionItem(
            label=name, kind=lsp.CompletionItemKind.Function,
            detail=f"{name}({', '.join(builtin.params)})",
            documentation=builtin.doc, sort_text=f"6{name}"))
    for word in ("now", "initial", "reply", "replies", "none", "true", "false"):
        items.append(lsp.CompletionItem(label=word, kind=lsp.CompletionItemKind.Constant,
                                        sort_text=f"7{word}"))
    return items


def _argument_members(index: Index, callee: str, argument: str) -> list[Symbol]:
    """The members of the enum a named argument expects (``f(status: |``)."""
    target = index.tools.get(callee) or index.fns.get(callee) or index.types.get(callee)
    if target is None:
        return []
    for child in target.children:
        if child.name == argument and isinstance(child.decl, (n.Param, n.Field)):
            enum = index.types.get(child.decl.type.name.name)
            if enum is not None and enum.kind is Kind.ENUM:
                return list(enum.children)
    return []


def _argument_names(index: Index, callee: str) -> list[lsp.CompletionItem]:
    """``name: `` for each parameter of a tool or fn, or each field of a record or entity."""
    target = index.tools.get(callee) or index.fns.get(callee) or index.types.get(callee)
    if target is None or target.kind not in (Kind.TOOL, Kind.FN, Kind.RECORD, Kind.ENTITY):
        return []
    out = []
    for child in target.children:
        if child.kind not in (Kind.PARAM, Kind.FIELD):
            continue
        item = _item(index, child, "0")
        item.label = f"{child.name}:"
        item.insert_text = f"{child.name}: "
        item.filter_text = child.name
        out.append(item)
    return out


def _after_dot(index: Index, file: str, dot: int) -> list[lsp.CompletionItem]:
    obj = index.expression_ending_at(file, dot)
    if obj is None:
        return []
    if isinstance(obj, n.NameRef) and (enum := index.types.get(obj.name)) is not None and \
            enum.kind is Kind.ENUM and obj.name not in index.state and \
            all(local.name != obj.name for local in index.locals_at(file, dot)):
        return [_item(index, m, "0") for m in enum.children]
    if isinstance(obj, n.NameRef) and obj.name == "initial":
        return [_item(index, s, "0") for s in index.state.values()]
    typ = index.model.type_of(obj)
    if typ is None:
        return []
    base = t.strip_optional(typ)
    if isinstance(base, t.Named) and base.kind in ("record", "entity"):
        record = index.types.get(base.name)
        return [_item(index, f, "0") for f in record.children] if record else []
    if base in (t.DATE, t.DATETIME):
        names = ["year", "month", "day"] + (["hour", "minute", "second"]
                                            if base == t.DATETIME else [])
        return [lsp.CompletionItem(label=x, kind=lsp.CompletionItemKind.Field, detail="int")
                for x in names]
    kind = receiver_kind(base)
    methods = METHODS.get(kind or "", {})
    return [lsp.CompletionItem(label=name, kind=lsp.CompletionItemKind.Method,
                               detail=f"{t.show(base)}.{name}({', '.join(m.params)})",
                               sort_text=f"1{name}")
            for name, m in methods.items()]


# ------------------------------------------------------------------ rename
def _clash(candidates: Iterable[Symbol], new: str, what: str) -> str | None:
    for other in candidates:
        if other.name == new:
            return (f"cannot rename: {what} '{new}' already exists "
                    f"({other.span.file}:{other.span.line})")
    return None


def rename_problem(index: Index, sym: Symbol, new: str) -> str | None:
    """Why renaming ``sym`` to ``new`` would break the spec, or None when it is safe."""
    if not IDENTIFIER.match(new):
        return f"cannot rename: '{new}' is not a name (letters, digits and '_')"
    if new in KEYWORDS:
        return f"cannot rename: '{new}' is a keyword"
    if new == sym.name:
        return None
    kind = sym.kind
    if kind in TYPE_KINDS or kind is Kind.WORLD:
        if new in PRIMITIVE_TYPES or new in GENERIC_TYPES:
            return f"cannot rename: '{new}' is a builtin type"
        return _clash([*index.types.values(), *index.worlds.values()], new, "a type or world")
    if kind in (Kind.FIELD, Kind.MEMBER, Kind.CHECK) and sym.container is not None:
        return _clash(sym.container.children, new, f"{sym.container.name}.{new}: a name")
    if kind is Kind.STATE:
        problem = _clash(index.state.values(), new, "state")
        return problem or _shadowed(index, sym, new)
    if kind in (Kind.TOOL, Kind.FN):
        if kind is Kind.TOOL and new in RESERVED_NAMES:
            return f"cannot rename: '{new}' is reserved for the generated environment"
        if new in BUILTIN_FUNCTIONS:
            return f"cannot rename: '{new}' is a builtin function"
        return _clash([*index.tools.values(), *index.fns.values()], new, "a tool or fn")
    if kind is Kind.TASK:
        return _clash(index.tasks.values(), new, "task")
    if kind in (Kind.PARAM, Kind.LOCAL):
        assert sym.scope is not None
        overlapping = [s for s in index.symbols.values()
                       if s.kind in (Kind.PARAM, Kind.LOCAL) and s is not sym
                       and s.scope is not None and s.span.file == sym.span.file
                       and s.scope[0] < sym.scope[1] and sym.scope[0] < s.scope[1]]
        return _clash(overlapping, new, "a local or parameter in scope")
    if kind is Kind.INVARIANT:
        return _clash([s for s in index.symbols.values() if s.kind is Kind.INVARIANT], new,
                      "invariant")
    return None


def _shadowed(index: Index, sym: Symbol, new: str) -> str | None:
    """A state item renamed to a local's name would be hidden where that local is visible."""
    for occ in index.references(sym.key):
        for local in index.locals_at(occ.span.file, occ.span.start):
            if local.name == new:
                return (f"cannot rename: a local '{new}' ({local.span.file}:{local.span.line}) "
                        f"would hide the state where it is used on line {occ.span.line}")
    return None


# ----------------------------------------------------------------- outline
_SYMBOL_KINDS = {
    Kind.WORLD: lsp.SymbolKind.Module, Kind.ENUM: lsp.SymbolKind.Enum,
    Kind.MEMBER: lsp.SymbolKind.EnumMember, Kind.RECORD: lsp.SymbolKind.Struct,
    Kind.ENTITY: lsp.SymbolKind.Class, Kind.FIELD: lsp.SymbolKind.Field,
    Kind.UNION: lsp.SymbolKind.Interface, Kind.ALIAS: lsp.SymbolKind.TypeParameter,
    Kind.STATE: lsp.SymbolKind.Variable, Kind.INVARIANT: lsp.SymbolKind.Boolean,
    Kind.TOOL: lsp.SymbolKind.Function, Kind.FN: lsp.SymbolKind.Function,
    Kind.PARAM: lsp.SymbolKind.Variable, Kind.TASK: lsp.SymbolKind.Event,
    Kind.CHECK: lsp.SymbolKind.Boolean, Kind.LOCAL: lsp.SymbolKind.Variable,
}


def outline(index: Index, file: str,
            convert: Callable[[n.Span], lsp.Range]) -> list[lsp.DocumentSymbol]:
    """The document's declarations, with fields, members, parameters and checks inside."""

    def symbol(sym: Symbol) -> lsp.DocumentSymbol:
        occ = Occurrence(sym.span, sym, True, None)
        detail = _declaration_text(index, sym, occ).split("\n", 1)[0]
        whole = sym.decl.span.cover(sym.span)
        return lsp.DocumentSymbol(
            name=sym.name, kind=_SYMBOL_KINDS[sym.kind], detail=detail,
            range=convert(whole),
            selection_range=convert(sym.span),
            children=[symbol(c) for c in sym.children if c.kind is not Kind.LOCAL])

    return [symbol(s) for s in index.top_level.get(file, [])]
