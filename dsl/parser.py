"""Source text to :class:`dsl.nodes.Module`, with syntax errors as diagnostics.

The grammar is LALR(1) (``worldspec.lark``), parsed by lark through its public API: one
``Lark`` parser for both start rules (a module, ``start``; an f-string's expression,
``expr``), with our lexer (:class:`lexer.WorldSpecLexer`, lark's ``lexer=`` interface)
and our transformer run inline (``transformer=``), so nodes are built as the parser
reduces, with no intermediate tree. Its tables come from lark's own cache file
(:func:`parser_cache_dir`). A file that parses in one go is the common case. Otherwise
each top-level declaration is parsed on its own, and inside a declaration the parser
resumes after each error at the next statement, field or item (``recovery.py``, which
reads the interactive parser lark attaches to its exceptions), so one file reports its
independent mistakes together, each once, without cascades, up to a cap. Comments are
collected by the lexer and kept on the module for the formatter.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import lark as lark_package
from lark import Lark, Token, Transformer, Tree
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import MAX_ERRORS, DiagnosticSink, Related
from worldspec.dsl.lexer import WorldSpecLexer
from worldspec.dsl.recovery import (
    MAX_ERRORS_PER_DECLARATION,
    blank,
    explain,
    follows_from_skip,
    neutralise,
    recovery_span,
)
from worldspec.dsl.syntax_messages import describe_expected, describe_token

__all__ = ["ParseResult", "parse_module", "parse_expression", "decode_string", "MAX_DEPTH",
           "parser_cache_dir"]

MAX_DEPTH = 200
_TOP_LEVEL = re.compile(
    r"^(?:import|world|config|policy|enum|record|entity|union|type|state|invariant|tool|fn|"
    r"task)\b",
    re.MULTILINE,
)
#: The grammar's start rules: a file, and the expression inside an f-string's braces.
_STARTS = ("start", "expr")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A module (possibly partial) and whether any syntax error was found."""

    module: n.Module
    ok: bool


class _SyntaxProblem(Exception):
    """Raised inside the transformer for a malformed literal; becomes a diagnostic."""

    def __init__(self, code: str, message: str, span: n.Span,
                 hints: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span
        self.hints = list(hints)


#: Where the lexer puts comments during the current parse.
_COMMENTS: ContextVar[list[Token] | None] = ContextVar("worldspec_comments", default=None)


def _keep_comment(tok: Token) -> Token:
    sink = _COMMENTS.get()
    if sink is not None:
        sink.append(tok)
    return tok


def parser_cache_dir() -> str | None:
    """Where the parser tables are cached: ``$WORLDSPEC_PARSER_CACHE`` (empty: nowhere), else
    ``$XDG_CACHE_HOME/worldspec``, else ``~/.cache/worldspec``; None when there is no home."""
    configured = os.environ.get("WORLDSPEC_PARSER_CACHE")
    if configured is not None:
        return configured or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "worldspec") if os.path.isabs(base) else None


def _build(grammar: str, transformer: _ToNodes, cache_file: str | bool) -> Lark:
    return Lark(
        grammar,
        parser="lalr",
        lexer=WorldSpecLexer,
        propagate_positions=False,
        maybe_placeholders=True,
        start=list(_STARTS),
        transformer=transformer,
        lexer_callbacks={"COMMENT": _keep_comment},
        cache=cache_file,
    )


def _build_cached(grammar: str, transformer: _ToNodes) -> Lark:
    """The parser, its LALR tables read from the per-user cache when they are there.

    Building the tables takes most of a small check's time, and they depend only on the
    grammar and the lark and Python versions, which name the cache file. lark's own
    ``cache`` option reads and writes it: lark stores the grammar's hash in the file and
    builds the tables again when the hash does not match or the file cannot be read, then
    writes the file anew, so a stale, corrupted or half-written cache costs one build, never
    a wrong parser. A cache folder that cannot be made or written means no cache (the
    package's own folder is never written: it may be read-only).
    """
    folder = parser_cache_dir()
    if folder is None:
        return _build(grammar, transformer, False)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return _build(grammar, transformer, False)
    key = _digest(grammar)[:32]
    return _build(grammar, transformer, os.path.join(folder, f"parser-{key}.lark"))


@cache
def _grammar() -> str:
    return resources.files("worldspec.dsl").joinpath("worldspec.lark").read_text(
        encoding="utf-8")


def _digest(grammar: str) -> str:
    """What the tables depend on: the grammar, lark's and Python's versions."""
    return hashlib.sha256("\0".join((grammar, *_STARTS, lark_package.__version__,
                                      sys.version)).encode()).hexdigest()


@cache
def _transformer() -> _ToNodes:
    """The transformer the parser runs inline (it keeps no state between parses: :func:`_run`
    resets it, and puts back what an outer parse had when an f-string's parse is nested)."""
    return _ToNodes()


@cache
def _parser() -> Lark:
    """Lark's LALR parser for both start rules, built or read from the cache once a process."""
    return _build_cached(_grammar(), _transformer())


def _run(start: str, text: str, pos: _Positions) -> Any:
    """Parse ``text`` from ``start`` into nodes (re-entrant, for f-strings); lark's
    exceptions, with their interactive parser, at a syntax error."""
    parser = _parser()
    transformer = _transformer()
    saved = transformer._save()
    try:
        interactive = parser.parse_interactive(text, start)
        transformer._begin(pos, interactive.parser_state.value_stack)
        return interactive.resume_parse()  # type: ignore[no-untyped-call]
    finally:
        transformer._restore(saved)


# ------------------------------------------------------------------ strings
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_ESCAPE_RE = re.compile(r"\\(u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|.)", re.DOTALL)


def decode_string(body: str) -> str | None:
    """Decode the escapes of a string body; ``None`` if an escape is invalid."""
    bad = False

    def replace(match: re.Match[str]) -> str:
        nonlocal bad
        esc = match.group(1)
        if esc.startswith("u{"):
            code = int(esc[2:-1], 16)
            if code > 0x10FFFF:
                bad = True
                return ""
            return chr(code)
        if esc.startswith("u") and len(esc) == 5:
            return chr(int(esc[1:], 16))
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        bad = True
        return ""

    out = _ESCAPE_RE.sub(replace, body)
    return None if bad else out


#: A lone surrogate: half of a UTF-16 pair, not a character. Python strings can hold
#: one, but no encoding can write it, so it would fail later (hashing, writing files).
_SURROGATE = re.compile(r"[\ud800-\udfff]")
_SURROGATE_HINT = ("surrogates (U+D800 to U+DFFF) only exist inside UTF-16; write the "
                   "character itself, or its code point such as \\u{1F600}")
#: The escapes of a regular expression, read left to right (an escaped backslash
#: followed by ``u`` is no ``\u`` escape).
_REGEX_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.DOTALL)


def _surrogate_problem(value: str, span: n.Span) -> _SyntaxProblem | None:
    """WS107 if the decoded string ``value`` holds a lone surrogate."""
    m = _SURROGATE.search(value)
    if m is None:
        return None
    return _SyntaxProblem("WS107", f"string holds a lone surrogate (U+{ord(m.group()):04X}), "
                          "which is not a character", span, hints=[_SURROGATE_HINT])


def _regex_surrogate(pattern: str) -> str | None:
    """The escape (or raw character) of ``pattern`` that names a lone surrogate, if any."""
    raw = _SURROGATE.search(pattern)
    if raw is not None:  # spelled as an escape: the message must stay encodable
        return f"\\u{ord(raw.group()):04X}"
    for m in _REGEX_ESCAPE.finditer(pattern):
        esc = m.group(1)
        if len(esc) > 1 and 0xD800 <= int(esc[1:], 16) <= 0xDFFF:
            return "\\" + esc
    return None


def _clean_triple(text: str) -> str:
    """Triple-quoted text: drop the first newline and the common indentation."""
    lines = text.split("\n")
    if lines and not lines[0].strip():
        lines = lines[1:]
    if lines and not lines[-1].strip():
        lines = lines[:-1]
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] for line in lines)


# -------------------------------------------------------------- transformer
class _Positions:
    """Turns lark positions into spans, shifted when a chunk is parsed alone."""

    def __init__(self, path: str, line_delta: int, pos_delta: int) -> None:
        self.path = path
        self.line_delta = line_delta
        self.pos_delta = pos_delta

    def empty(self) -> n.Span:
        return n.Span(self.path, 1 + self.line_delta, 1, 1 + self.line_delta, 1,
                      self.pos_delta, self.pos_delta)

    def between(self, first: Token | n.Node, last: Token | n.Node) -> n.Span:
        """From the start of ``first`` to the end of ``last`` (tokens or nodes)."""
        if isinstance(first, n.Node):
            a = first.span
            line, column, start = a.line, a.column, a.start
        else:
            line = (first.line or 1) + self.line_delta
            column = first.column or 1
            start = (first.start_pos or 0) + self.pos_delta
        if isinstance(last, n.Node):
            b = last.span
            end_line, end_column, end = b.end_line, b.end_column, b.end
        else:
            end_line = (last.end_line or 1) + self.line_delta
            end_column = last.end_column or 1
            end = (last.end_pos or 0) + self.pos_delta
        return n.Span(self.path, line, column, end_line, end_column, start, end)

    def token(self, tok: Token) -> n.Span:
        return self.between(tok, tok)


_POSITIONED = (Token, n.Node)


def _first_token(children: Iterable[Any]) -> Token | n.Node | None:
    """The first child that has a position: a token or a node (lists and trees searched)."""
    for child in children:
        if child is None:
            continue
        if isinstance(child, (Token, n.Node)):
            return child
        if isinstance(child, Tree):
            found = _first_token(child.children)
        elif isinstance(child, list):
            found = _first_token(child)
        else:
            continue
        if found is not None:
            return found
    return None


def _last_token(children: Sequence[Any]) -> Token | n.Node | None:
    for child in reversed(children):
        if child is None:
            continue
        if isinstance(child, (Token, n.Node)):
            return child
        if isinstance(child, Tree):
            found = _last_token(child.children)
        elif isinstance(child, list):
            found = _last_token(child)
        else:
            continue
        if found is not None:
            return found
    return None


#: Integers longer than this are refused (Python's own int/str conversion limit).
MAX_INT_DIGITS = 4000


def _whole(tok: Token, pos: _Positions) -> int:
    text = str(tok).replace("_", "")
    if len(text) > MAX_INT_DIGITS:
        raise _SyntaxProblem("WS103", f"integer literal with more than {MAX_INT_DIGITS} digits",
                             pos.token(tok))
    return int(text)


def _real(tok: Token, pos: _Positions) -> float:
    value = float(str(tok).replace("_", ""))
    if value in (float("inf"), float("-inf")):
        raise _SyntaxProblem("WS103", "number literal too large for a float", pos.token(tok))
    return value


def _ident(pos: _Positions, tok: Token) -> n.Ident:
    return n.Ident(name=str(tok), span=pos.token(tok))


def _doc(item: Any) -> str | None:
    return item if isinstance(item, str) or item is None else None


class _ToNodes(Transformer[Token, Any]):
    """One method per grammar rule; each returns a node (or a plain value).

    Lark runs it inline (``Lark(transformer=...)``): a rule's method gets the children lark
    keeps (no keywords or brackets), but a node's span runs from the rule's first token to
    its last, keywords and brackets included. So the transformer keeps a copy of lark's
    value stack (:attr:`values`): lark hands each token it shifts to the terminal callbacks
    a transformer may define (:meth:`__getattr__`), and each rule's method is wrapped
    (:meth:`_tracked`) to note what it reduced to. When lark reduces a rule it has just
    taken the rule's values off its stack, so the copy's values past the stack's length are
    the rule's, all of them.
    """

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.pos = _Positions("<input>", 0, 0)
        self.prefixes: dict[int, _Prefix] = {}
        #: lark's value stack during a parse
        self.stack: list[Any] = []
        #: lark's value stack as it was before the current reduction (one list for the
        #: transformer's life: emptied and refilled, never replaced)
        self.values: list[Any] = []
        #: where the values of the rule being reduced begin in :attr:`values`
        self.base = 0
        # lark looks each rule's method up by name: it finds the wrapped one
        for name in _RULE_METHODS:
            setattr(self, name, self._tracked(getattr(self, name)))

    def __getattr__(self, name: str) -> Callable[[Token], Token]:
        """Lark's callback for a terminal (named in upper case: ``NAME``, ``LBRACE``...):
        :meth:`_shifted`, for every one; rules are named in lower case."""
        if name.isupper():
            return self._shifted
        raise AttributeError(name)

    def _shifted(self, token: Token) -> Token:
        """Lark shifts ``token`` onto its stack."""
        self.values.append(token)
        return token

    def _tracked(self, method: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
        """``method`` as lark calls it on a reduction, with the reduction noted."""
        values = self.values

        def reduce(children: list[Any]) -> Any:
            self.base = base = len(self.stack)
            value = method(children)
            del values[base:]
            values.append(value)
            return value

        return reduce

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Tree[Token]:
        """A rule with no method (one lark inlines into its parent): lark's tree."""
        base = len(self.stack)
        tree = Tree(data, children, meta)
        del self.values[base:]
        self.values.append(tree)
        return tree

    def _save(self) -> tuple[Any, ...]:
        """What a parse in progress needs back after a nested one (an f-string's)."""
        return self.pos, self.prefixes, self.stack, self.values[:], self.base

    def _restore(self, saved: tuple[Any, ...]) -> None:
        self.pos, self.prefixes, self.stack, values, self.base = saved
        self.values[:] = values

    def _begin(self, pos: _Positions, stack: list[Any]) -> None:
        """Start a parse whose positions ``pos`` shifts, over lark's value ``stack``."""
        self.pos = pos
        self.prefixes = {}
        self.stack = stack
        self.values.clear()
        self.base = 0

    def _span(self) -> n.Span:
        """The span of the rule being reduced: from its first to its last token."""
        values, base = self.values, self.base
        top = len(values)
        if base >= top:
            return self.pos.empty()
        # most rules start and end with a token or a node: no search
        first = values[base]
        if not isinstance(first, _POSITIONED):
            first = _first_token(values[base:])
        last = values[-1]
        if not isinstance(last, _POSITIONED):
            last = _last_token(values[base:])
        if first is None or last is None:
            return self.pos.empty()
        return self.pos.between(first, last)

    def _string(self, tok: Token) -> str:
        text = str(tok)
        if text.startswith('"""'):
            body = _clean_triple(text[3:-3])
        else:
            body = text[1:-1]
        value = decode_string(body)
        if value is None:
            raise _SyntaxProblem("WS103", "invalid escape sequence in string", self.pos.token(tok))
        surrogate = _surrogate_problem(value, self.pos.token(tok))
        if surrogate is not None:
            raise surrogate
        return value

    # modules -------------------------------------------------------------
    def start(self, c: list[Any]) -> list[Any]:
        return c

    def import_decl(self, c: list[Any]) -> n.Import:
        return n.Import(path=self._string(c[0]), span=self._span())

    def world_decl(self, c: list[Any]) -> n.WorldDecl:
        return n.WorldDecl(name=_ident(self.pos, c[0]), doc=self._doc(c[1]), span=self._span())

    def config_decl(self, c: list[Any]) -> n.ConfigDecl:
        return n.ConfigDecl(items=tuple(c), span=self._span())

    def config_item(self, c: list[Any]) -> n.ConfigItem:
        return n.ConfigItem(name=_ident(self.pos, c[0]), value=c[1], span=self._span())

    def results_decl(self, c: list[Any]) -> n.ResultsDecl:
        return n.ResultsDecl(shapes=tuple(c), span=self._span())

    def result_shape(self, c: list[Any]) -> n.ResultShape:
        return n.ResultShape(name=_ident(self.pos, c[0]), value=c[1], span=self._span())

    def load_decl(self, c: list[Any]) -> n.LoadDecl:
        return n.LoadDecl(body=c[0], span=self._span())

    def const_decl(self, c: list[Any]) -> n.ConstDecl:
        return n.ConstDecl(name=_ident(self.pos, c[0]), type=c[1], value=c[2],
                           doc=self._doc(c[3]), span=self._span())

    def policy_text(self, c: list[Any]) -> n.PolicyDecl:
        return n.PolicyDecl(source=self._string(c[0]), span=self._span())

    def policy_file(self, c: list[Any]) -> n.PolicyDecl:
        return n.PolicyDecl(source=self._string(c[0]), from_file=True, span=self._span())

    def doc(self, c: list[Any]) -> Token:
        return c[0]  # type: ignore[no-any-return]

    def _doc(self, tok: Token | None) -> str | None:
        return self._string(tok) if tok is not None else None

    # types ---------------------------------------------------------------
    def enum_decl(self, c: list[Any]) -> n.EnumDecl:
        members = tuple(m for m in c[2:] if m is not None)
        return n.EnumDecl(name=_ident(self.pos, c[0]), doc=self._doc(c[1]), members=members,
                          span=self._span())

    def enum_member(self, c: list[Any]) -> n.EnumMember:
        value = self._string(c[1]) if c[1] is not None else None
        return n.EnumMember(name=_ident(self.pos, c[0]), value=value, doc=self._doc(c[2]),
                            span=self._span())

    def record_decl(self, c: list[Any]) -> n.RecordDecl:
        return n.RecordDecl(name=_ident(self.pos, c[0]), doc=self._doc(c[1]), fields=tuple(c[2:]),
                            span=self._span())

    def entity_decl(self, c: list[Any]) -> n.EntityDecl:
        return n.EntityDecl(name=_ident(self.pos, c[0]), doc=self._doc(c[1]), fields=tuple(c[2:]),
                            span=self._span())

    def field(self, c: list[Any]) -> n.Field:
        is_key, name, absent, typ, freeform, alias, default, doc = c
        return n.Field(name=_ident(self.pos, name), type=typ, default=default, doc=self._doc(doc),
                       is_key=is_key is not None, may_be_absent=absent is not None,
                       alias=alias, freeform=freeform is not None, span=self._span())

    def field_alias(self, c: list[Any]) -> str:
        return self._string(c[0])

    def union_decl(self, c: list[Any]) -> n.UnionDecl:
        variants = tuple(v for v in c[3:] if v is not None)
        return n.UnionDecl(name=_ident(self.pos, c[0]), doc=self._doc(c[1]),
                           tag_field=_ident(self.pos, c[2]), variants=variants,
                           span=self._span())

    def variant(self, c: list[Any]) -> n.Variant:
        tag = c[0]
        tag_text = self._string(tag) if tag.type == "STRING" else str(tag)
        return n.Variant(tag=tag_text, record=_ident(self.pos, c[1]), span=self._span())

    def alias_decl(self, c: list[Any]) -> n.AliasDecl:
        return n.AliasDecl(name=_ident(self.pos, c[0]), type=c[1], doc=self._doc(c[2]),
                           span=self._span())

    def type(self, c: list[Any]) -> n.TypeExpr:
        ref: n.TypeExpr = c[0]
        if c[1] is None:
            return ref
        return n.TypeExpr(name=ref.name, args=ref.args, constraints=ref.constraints,
                          optional=True, span=self._span())

    def type_ref(self, c: list[Any]) -> n.TypeExpr:
        args = tuple(c[1]) if c[1] is not None else ()
        return n.TypeExpr(name=_ident(self.pos, c[0]), args=args, constraints=tuple(c[2:]),
                          span=self._span())

    def type_args(self, c: list[Any]) -> list[Any]:
        return c

    def range_constraint(self, c: list[Any]) -> n.RangeConstraint:
        low, high = None, None
        seen_range = False
        for item in c:
            if isinstance(item, Token) and item.type == "RANGE":
                seen_range = True
            elif item is not None:
                if seen_range:
                    high = item
                else:
                    low = item
        return n.RangeConstraint(low=low, high=high, span=self._span())

    def bound(self, c: list[Any]) -> int | float:
        sign = -1 if c[0] is not None else 1
        tok = c[1]
        return sign * (_whole(tok, self.pos) if tok.type == "INT" else _real(tok, self.pos))

    def regex_constraint(self, c: list[Any]) -> n.RegexConstraint:
        pattern = str(c[0])[1:-1].replace("\\/", "/")
        surrogate = _regex_surrogate(pattern)
        if surrogate is not None:
            raise _SyntaxProblem(
                "WS108", f"regular expression names a lone surrogate ('{surrogate}'), "
                "which no text can hold", self.pos.token(c[0]),
                hints=["surrogates (U+D800 to U+DFFF) only exist inside UTF-16; match the "
                       "character itself, or its code point such as \\U0001F600"])
        try:
            re.compile(pattern)
        except (re.error, OverflowError, RecursionError) as exc:
            raise _SyntaxProblem("WS103", f"invalid regular expression: {exc}",
                                 self.pos.token(c[0])) from None
        return n.RegexConstraint(pattern=pattern, span=self._span())

    # state ---------------------------------------------------------------
    def state_decl(self, c: list[Any]) -> n.StateDecl:
        return n.StateDecl(items=tuple(c), span=self._span())

    def state_item(self, c: list[Any]) -> n.StateItem:
        private, name, kind, alias, default, doc = c
        return n.StateItem(name=_ident(self.pos, name), kind=kind, default=default,
                           doc=self._doc(doc), private=private is not None, alias=alias,
                           span=self._span())

    def table_kind(self, c: list[Any]) -> n.TableKind:
        return n.TableKind(entity=_ident(self.pos, c[0]), span=self._span())

    def sequence_kind(self, c: list[Any]) -> n.SequenceKind:
        return n.SequenceKind(format=self._string(c[0]), span=self._span())

    def invariant_decl(self, c: list[Any]) -> n.InvariantDecl:
        return n.InvariantDecl(name=_ident(self.pos, c[0]), doc=self._doc(c[1]), condition=c[2],
                               span=self._span())

    # tools ---------------------------------------------------------------
    def tool_decl(self, c: list[Any]) -> n.ToolDecl:
        name, *rest = c
        body = rest[-1]
        doc = self._doc(rest[-2])
        returns = rest[-3]
        params = tuple(p for p in rest[:-3] if p is not None)
        return n.ToolDecl(name=_ident(self.pos, name), params=params, returns=returns, doc=doc,
                          body=body, span=self._span())

    def fn_decl(self, c: list[Any]) -> n.FnDecl:
        name, *rest = c
        params = tuple(p for p in rest[:-3] if p is not None)
        return n.FnDecl(name=_ident(self.pos, name), params=params, returns=rest[-3],
                        doc=self._doc(rest[-2]), body=rest[-1], span=self._span())

    def returns(self, c: list[Any]) -> n.TypeExpr:
        return c[0]  # type: ignore[no-any-return]

    def param(self, c: list[Any]) -> n.Param:
        name, typ, freeform, default, doc, not_found = c
        return n.Param(name=_ident(self.pos, name), type=typ, default=default, doc=self._doc(doc),
                       not_found=not_found, freeform=freeform is not None, span=self._span())

    def not_found(self, c: list[Any]) -> Any:
        return c[0]

    # statements ----------------------------------------------------------
    def block(self, c: list[Any]) -> n.Block:
        return n.Block(body=tuple(c), span=self._span())

    def let_stmt(self, c: list[Any]) -> n.Let:
        return n.Let(name=_ident(self.pos, c[0]), type=c[1], value=c[2], span=self._span())

    def assign_stmt(self, c: list[Any]) -> n.Assign:
        return n.Assign(target=c[0], value=c[1], span=self._span())

    def aug_assign_stmt(self, c: list[Any]) -> n.AugAssign:
        return n.AugAssign(target=c[0], op=str(c[1])[0], value=c[2], span=self._span())

    def if_stmt(self, c: list[Any]) -> n.If:
        return n.If(condition=c[0], then=c[1], orelse=c[2], span=self._span())

    def else_clause(self, c: list[Any]) -> Any:
        return c[0]

    def for_stmt(self, c: list[Any]) -> n.For:
        return n.For(var=_ident(self.pos, c[0]), iterable=c[1], body=c[2], span=self._span())

    def while_stmt(self, c: list[Any]) -> n.While:
        return n.While(condition=c[0], body=c[1], span=self._span())

    def match_stmt(self, c: list[Any]) -> n.Match:
        subject, *rest = c
        orelse = rest[-1]
        cases = tuple(rest[:-1])
        return n.Match(subject=subject, cases=cases, orelse=orelse, span=self._span())

    def match_case(self, c: list[Any]) -> n.MatchCase:
        binding = _ident(self.pos, c[1]) if c[1] is not None else None
        return n.MatchCase(tag=_ident(self.pos, c[0]), binding=binding, body=c[2],
                           span=self._span())

    def match_else(self, c: list[Any]) -> n.Block:
        return c[0]  # type: ignore[no-any-return]

    def require_stmt(self, c: list[Any]) -> n.Require:
        return n.Require(condition=c[0], message=c[1], span=self._span())

    def fail_stmt(self, c: list[Any]) -> n.Fail:
        keep, message = c
        return n.Fail(message=message, keep=keep is not None, span=self._span())

    def break_stmt(self, c: list[Any]) -> n.Break:
        return n.Break(span=self._span())

    def continue_stmt(self, c: list[Any]) -> n.Continue:
        return n.Continue(span=self._span())

    def return_stmt(self, c: list[Any]) -> n.Return:
        return n.Return(value=c[0], span=self._span())

    def insert_stmt(self, c: list[Any]) -> n.Insert:
        return n.Insert(value=c[0], table=c[1], span=self._span())

    def delete_stmt(self, c: list[Any]) -> n.Delete:
        return n.Delete(value=c[0], table=c[1], span=self._span())

    def append_stmt(self, c: list[Any]) -> n.Append:
        return n.Append(value=c[0], target=c[1], span=self._span())

    def remove_stmt(self, c: list[Any]) -> n.Remove:
        return n.Remove(value=c[0], target=c[1], span=self._span())

    # expressions ---------------------------------------------------------
    def if_expr(self, c: list[Any]) -> n.Conditional:
        return n.Conditional(condition=c[0], then=c[1], orelse=c[2], span=self._span())

    def quantifier(self, c: list[Any]) -> n.Quantifier:
        return n.Quantifier(kind=str(c[0]), var=_ident(self.pos, c[1]), iterable=c[2], body=c[3],
                            span=self._span())

    def prefix_op(self, c: list[Any]) -> Token:
        return c[0]  # type: ignore[no-any-return]

    def binop(self, c: list[Any]) -> str:
        return " ".join(str(tok) for tok in c)

    def prefixed(self, c: list[Any]) -> n.Expr:
        op_span = self.pos.token(c[0])
        node = _make_prefix(str(c[0]), c[1], op_span)
        # The entry keeps the node alive, so its id cannot be reused by another node.
        self.prefixes[id(node)] = (node, str(c[0]), c[1], op_span)
        return node

    def op_chain(self, c: list[Any]) -> n.Expr:
        return _Climber(c[1:], self.prefixes).expression(0, c[0])

    def attribute(self, c: list[Any]) -> n.Attribute | n.NameRef:
        obj = c[0]
        if isinstance(obj, n.NameRef) and obj.name == "state" and not obj.qualified:
            # `state.x` is the state item x, whatever a local or parameter is called
            return n.NameRef(name=str(c[1]), qualified=True, span=self._span())
        return n.Attribute(obj=obj, name=_ident(self.pos, c[1]), span=self._span())

    def index(self, c: list[Any]) -> n.Index:
        return n.Index(obj=c[0], index=c[1], span=self._span())

    def slice(self, c: list[Any]) -> n.Slice:
        return n.Slice(obj=c[0], start=c[1], stop=c[2], step=c[3], span=self._span())

    def call(self, c: list[Any]) -> n.Call:
        func, *args = c
        return n.Call(func=func, args=tuple(self._arg(a) for a in args if a is not None),
                      span=self._span())

    def _arg(self, value: Any) -> n.Arg:
        if isinstance(value, n.Arg):
            return value
        return n.Arg(name=None, value=value, span=value.span)

    def named_arg(self, c: list[Any]) -> n.Arg:
        return n.Arg(name=_ident(self.pos, c[0]), value=c[1], span=self._span())

    def lambda_arg(self, c: list[Any]) -> n.Arg:
        lam = n.Lambda(param=_ident(self.pos, c[0]), body=c[1], span=self._span())
        return n.Arg(name=None, value=lam, span=lam.span)

    def named_lambda_arg(self, c: list[Any]) -> n.Arg:
        param = _ident(self.pos, c[1])
        lam = n.Lambda(param=param, body=c[2], span=param.span.cover(c[2].span))
        return n.Arg(name=_ident(self.pos, c[0]), value=lam, span=self._span())

    def int_lit(self, c: list[Any]) -> n.IntLit:
        return n.IntLit(value=_whole(c[0], self.pos), span=self._span())

    def float_lit(self, c: list[Any]) -> n.FloatLit:
        return n.FloatLit(value=_real(c[0], self.pos), text=str(c[0]), span=self._span())

    def str_lit(self, c: list[Any]) -> n.StrLit:
        return n.StrLit(value=self._string(c[0]), span=self._span())

    def fstr_lit(self, c: list[Any]) -> n.FStr:
        return _parse_fstring(c[0], self.pos)

    def true_lit(self, c: list[Any]) -> n.BoolLit:
        return n.BoolLit(value=True, span=self._span())

    def false_lit(self, c: list[Any]) -> n.BoolLit:
        return n.BoolLit(value=False, span=self._span())

    def none_lit(self, c: list[Any]) -> n.NoneLit:
        return n.NoneLit(span=self._span())

    def name(self, c: list[Any]) -> n.NameRef:
        return n.NameRef(name=str(c[0]), span=self._span())

    def paren(self, c: list[Any]) -> Any:
        self.prefixes.pop(id(c[0]), None)  # `(not a) == b` stays as written
        return c[0]

    def list_lit(self, c: list[Any]) -> n.ListLit:
        return n.ListLit(items=tuple(x for x in c if x is not None), span=self._span())

    def comprehension(self, c: list[Any]) -> n.Comprehension:
        return n.Comprehension(element=c[0], var=_ident(self.pos, c[1]), iterable=c[2],
                               condition=c[3], span=self._span())

    def map_lit(self, c: list[Any]) -> n.MapLit:
        return n.MapLit(entries=tuple(x for x in c if x is not None), span=self._span())

    def map_entry(self, c: list[Any]) -> n.MapEntry:
        return n.MapEntry(key=c[0], value=c[1], span=self._span())

    # tasks ---------------------------------------------------------------
    def task_decl(self, c: list[Any]) -> n.TaskDecl:
        return n.TaskDecl(name=_ident(self.pos, c[0]), world=_ident(self.pos, c[1]),
                          doc=self._doc(c[2]),
                          items=tuple(c[3:]), span=self._span())

    def given(self, c: list[Any]) -> n.Given:
        src = c[0]
        source = self._string(src) if isinstance(src, Token) else src
        return n.Given(source=source, span=self._span())

    def instruction(self, c: list[Any]) -> n.Instruction:
        return n.Instruction(text=self._string(c[0]), span=self._span())

    def persona(self, c: list[Any]) -> n.Persona:
        return n.Persona(text=self._string(c[0]), span=self._span())

    def known(self, c: list[Any]) -> n.Known:
        return n.Known(text=self._string(c[0]), span=self._span())

    def unknown(self, c: list[Any]) -> n.Unknown:
        return n.Unknown(text=self._string(c[0]), span=self._span())

    def check(self, c: list[Any]) -> n.Check:
        return n.Check(name=_ident(self.pos, c[0]), weight=c[1], doc=self._doc(c[2]),
                       condition=c[3],
                       span=self._span())

    def weight(self, c: list[Any]) -> int | float:
        tok = c[0]
        return _whole(tok, self.pos) if tok.type == "INT" else _real(tok, self.pos)

    def frame(self, c: list[Any]) -> n.Frame:
        targets = tuple(t for t in c if isinstance(t, n.FrameTarget))
        return n.Frame(targets=targets, span=self._span())

    def frame_target(self, c: list[Any]) -> n.FrameTarget:
        return n.FrameTarget(path=tuple(_ident(self.pos, t) for t in c), span=self._span())

    def solution(self, c: list[Any]) -> n.Solution:
        return n.Solution(items=tuple(c), span=self._span())

    def solution_call(self, c: list[Any]) -> n.SolutionCall:
        name, *args = c
        return n.SolutionCall(tool=_ident(self.pos, name),
                              args=tuple(self._arg(a) for a in args if a is not None),
                              span=self._span())

    def solution_tool(self, c: list[Any]) -> Token:
        return c[0]  # type: ignore[no-any-return]

    def solution_reply(self, c: list[Any]) -> n.SolutionReply:
        return n.SolutionReply(text=self._string(c[0]), span=self._span())

    def tags(self, c: list[Any]) -> n.Tags:
        return n.Tags(names=tuple(_ident(self.pos, t) for t in c), span=self._span())

    def split(self, c: list[Any]) -> n.Split:
        return n.Split(name=_ident(self.pos, c[0]), span=self._span())

    def seed(self, c: list[Any]) -> n.Seed:
        return n.Seed(value=_whole(c[0], self.pos), span=self._span())

    def reward(self, c: list[Any]) -> n.Reward:
        return n.Reward(mode=_ident(self.pos, c[0]), span=self._span())

    # data ----------------------------------------------------------------
    def data_object(self, c: list[Any]) -> n.DataObject:
        return n.DataObject(pairs=tuple(p for p in c if p is not None), span=self._span())

    def data_pair(self, c: list[Any]) -> n.DataPair:
        key = c[0]
        text = self._string(key) if key.type == "STRING" else str(key)
        return n.DataPair(key=text, value=c[1], span=self._span())

    def data_array(self, c: list[Any]) -> n.DataArray:
        return n.DataArray(items=tuple(x for x in c if x is not None), span=self._span())

    def data_string(self, c: list[Any]) -> n.DataString:
        return n.DataString(value=self._string(c[0]), span=self._span())

    def data_int(self, c: list[Any]) -> n.DataInt:
        sign = -1 if c[0] is not None else 1
        return n.DataInt(value=sign * _whole(c[1], self.pos), span=self._span())

    def data_float(self, c: list[Any]) -> n.DataFloat:
        sign = "-" if c[0] is not None else ""
        value = _real(c[1], self.pos)
        return n.DataFloat(value=-value if sign else value, text=sign + str(c[1]),
                           span=self._span())

    def data_true(self, c: list[Any]) -> n.DataBool:
        return n.DataBool(value=True, span=self._span())

    def data_false(self, c: list[Any]) -> n.DataBool:
        return n.DataBool(value=False, span=self._span())

    def data_null(self, c: list[Any]) -> n.DataNull:
        return n.DataNull(span=self._span())

    def data_name(self, c: list[Any]) -> n.DataName:
        return n.DataName(name=str(c[0]), span=self._span())


# -------------------------------------------------------- operator chains
#: Binary operator -> binding power (higher binds tighter).
BINARY_PRECEDENCE: dict[str, int] = {
    "or": 1, "and": 2,
    "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "in": 4, "not in": 4,
    "??": 5, "+": 6, "-": 6, "*": 7, "/": 7, "//": 7, "%": 7, "**": 9,
}
#: Right-associative operators: ``2 ** 3 ** 2`` is ``2 ** (3 ** 2)``.
RIGHT_ASSOCIATIVE = frozenset({"**"})
#: Prefix operator -> binding power of its operand.
PREFIX_PRECEDENCE: dict[str, int] = {"not": 3, "-": 8}
_COMPARISON = 4


#: The rule methods of :class:`_ToNodes` (its public ones), which lark calls by name.
_RULE_METHODS = tuple(name for name, value in vars(_ToNodes).items()
                      if callable(value) and not name.startswith("_"))


def _make_binary(op: str, left: n.Expr, right: n.Expr) -> n.Expr:
    span = left.span.cover(right.span)
    if op in ("and", "or"):
        return n.BoolOp(op=op, left=left, right=right, span=span)
    if BINARY_PRECEDENCE[op] == _COMPARISON:
        return n.Compare(op=op, left=left, right=right, span=span)
    if op == "??":
        return n.Coalesce(left=left, right=right, span=span)
    return n.Binary(op=op, left=left, right=right, span=span)


def _make_prefix(op: str, operand: n.Expr, span: n.Span) -> n.Expr:
    full = span.cover(operand.span)
    if op == "not":
        return n.Not(operand=operand, span=full)
    # A negative literal is a literal, so `-1` prints back as `-1`.
    if isinstance(operand, n.IntLit):
        return n.IntLit(value=-operand.value, span=full)
    if isinstance(operand, n.FloatLit):
        return n.FloatLit(value=-operand.value, text="-" + operand.text, span=full)
    return n.Unary(op="-", operand=operand, span=full)


#: A prefix operator as written, before precedence decides how far it reaches.
_Prefix = tuple[Any, str, Any, n.Span]


class _Climber:
    """Precedence climbing over ``operand (op operand)*``.

    ``prefixes`` maps operands that were written with an unparenthesised
    prefix operator to (operator, bare operand, span of the operator): the
    operator then takes everything that binds tighter than itself, so
    ``not a == b`` is ``not (a == b)`` while ``-2 * 3`` is ``(-2) * 3``.
    """

    def __init__(self, items: list[Any], prefixes: dict[int, _Prefix]) -> None:
        self.items = items
        self.prefixes = prefixes
        self.i = 0

    def operand(self, item: Any) -> n.Expr:
        prefix = self.prefixes.get(id(item))
        if prefix is None or prefix[0] is not item:
            return item  # type: ignore[no-any-return]
        _, op, bare, span = prefix
        return _make_prefix(op, self.expression(PREFIX_PRECEDENCE[op], bare), span)

    def expression(self, min_power: int, first: Any) -> n.Expr:
        left = self.operand(first)
        compared = False
        while self.i < len(self.items):
            op: str = self.items[self.i]
            power = BINARY_PRECEDENCE[op]
            if power <= min_power:
                break
            self.i += 2
            right = self.expression(power - 1 if op in RIGHT_ASSOCIATIVE else power,
                                    self.items[self.i - 1])
            if power == _COMPARISON:
                if compared:
                    raise _SyntaxProblem(
                        "WS101", f"comparisons cannot be chained: write `a {left.op} b and "  # type: ignore[union-attr]
                        f"b {op} c`", left.span.cover(right.span))
                compared = True
            left = _make_binary(op, left, right)
        return left


# ---------------------------------------------------------------- f-strings
def _parse_fstring(tok: Token, pos: _Positions) -> n.FStr:
    """Split ``f"..."`` into text and ``{expr[:spec]}`` parts, parsing each expression."""
    raw = str(tok)[2:-1]
    span = pos.token(tok)
    parts: list[str | n.Interpolation] = []
    text: list[str] = []
    i = 0
    base = (tok.start_pos or 0) + 2
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            text.append(raw[i:i + 2])
            i += 2
            continue
        if ch == "{" and raw.startswith("{{", i):
            text.append("{")
            i += 2
            continue
        if ch == "}" and raw.startswith("}}", i):
            text.append("}")
            i += 2
            continue
        if ch == "}":
            raise _SyntaxProblem("WS104", "single '}' in f-string; write '}}' for a brace", span)
        if ch == "{":
            end, colon = _interpolation_end(raw, i + 1)
            if end < 0:
                raise _SyntaxProblem("WS104", "'{' in f-string is never closed", span)
            expr_text = raw[i + 1:colon if colon >= 0 else end]
            spec = raw[colon + 1:end] if colon >= 0 else None
            if text:
                parts.append(_fstring_text("".join(text), span))
                text = []
            expr = _parse_embedded(expr_text, pos, base + i + 1, tok, span)
            parts.append(n.Interpolation(expr=expr, spec=spec, span=expr.span))
            i = end + 1
            continue
        text.append(ch)
        i += 1
    if text:
        parts.append(_fstring_text("".join(text), span))
    return n.FStr(parts=tuple(parts), span=span)


def _fstring_text(body: str, span: n.Span) -> str:
    """A text part of an f-string, decoded (WS103 for a bad escape, WS107 for a surrogate)."""
    decoded = decode_string(body)
    if decoded is None:
        raise _SyntaxProblem("WS103", "invalid escape sequence in string", span)
    surrogate = _surrogate_problem(decoded, span)
    if surrogate is not None:
        raise surrogate
    return decoded


def _interpolation_end(raw: str, start: int) -> tuple[int, int]:
    """Index of the closing ``}`` and of a top-level format ``:`` (or -1)."""
    depth = 0
    colon = -1
    i = start
    in_str = False
    while i < len(raw):
        ch = raw[i]
        # inside f"...", a string literal in an interpolation is written \"...\"
        if raw.startswith('\\"', i):
            in_str = not in_str
            i += 2
            continue
        if in_str:
            i += 2 if ch == "\\" else 1
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            if depth == 0 and ch == "}":
                return i, colon
            depth -= 1
        elif ch == ":" and depth == 0 and colon < 0:
            colon = i
        i += 1
    return -1, -1


def _parse_embedded(text: str, pos: _Positions, offset: int, tok: Token, span: n.Span) -> Any:
    if not text.strip():
        raise _SyntaxProblem("WS104", "empty '{}' in f-string", span)
    if '\\"' in text:
        text = text.replace('\\"', '"')  # quotes inside an interpolation are escaped in source
    inner = _Positions(pos.path, pos.line_delta + (tok.line or 1) - 1, 0)
    try:
        result = _run("expr", text, _Positions(pos.path, inner.line_delta, offset))
    except (UnexpectedInput, _SyntaxProblem):
        raise _SyntaxProblem("WS104", f"'{{{text}}}' in f-string is not a valid expression",
                             span) from None
    return _shift_columns(result, (tok.column or 1) + 1 + (offset - (tok.start_pos or 0) - 2))


def _shift_columns(node: Any, delta: int) -> Any:
    """Spans of an embedded expression are relative to it; move them onto the line."""
    import dataclasses

    if not isinstance(node, n.Node):
        return node
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if f.name == "span":
            s: n.Span = value
            changes["span"] = n.Span(s.file, s.line, s.column + delta, s.end_line,
                                     s.end_column + delta, s.start, s.end)
        elif isinstance(value, n.Node):
            changes[f.name] = _shift_columns(value, delta)
        elif isinstance(value, tuple):
            changes[f.name] = tuple(_shift_columns(v, delta) for v in value)
    return dataclasses.replace(node, **changes)


# ------------------------------------------------------------------ driving
def _chunks(text: str) -> Iterator[tuple[int, int]]:
    """Start and end offsets of each top-level declaration (by line-start keywords)."""
    starts = [m.start() for m in _TOP_LEVEL.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(text))
    yield from itertools.pairwise(starts)


def _report_parse_error(exc: UnexpectedInput, text: str, pos: _Positions,
                        sink: DiagnosticSink, next_declaration: str | None = None) -> None:
    line = getattr(exc, "line", 1) or 1
    column = getattr(exc, "column", 1) or 1
    start = getattr(exc, "pos_in_stream", 0) or 0
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        span_len = 0
        line = text.count("\n") + 1
        column = len(text) - (text.rfind("\n") + 1) + 1
        start = len(text)
    else:
        span_len = 1
        if isinstance(exc, UnexpectedToken):
            span_len = max(1, len(str(exc.token)))
    span = n.Span(pos.path, line + pos.line_delta, column, line + pos.line_delta,
                  column + span_len, start + pos.pos_delta, start + span_len + pos.pos_delta)
    if isinstance(exc, UnexpectedCharacters):
        at = exc.pos_in_stream or 0
        ch = text[at] if at < len(text) else ""
        if ch == '"' or text.startswith('f"', at):
            sink.report("WS102", span, "string is not closed before the end of the line",
                        hints=['close it with `"`, or use """triple quotes""" for several lines'])
            return
        shown = repr(ch)[1:-1] if ch else "end of file"
        message = f"unexpected character '{shown}'"
        allowed = describe_expected(exc.allowed or set())
        sink.report("WS101", span, message, hints=[f"expected {allowed}"] if allowed else [])
        return
    if isinstance(exc, UnexpectedToken):
        found = describe_token(exc.token)
        if exc.token.type == "$END" and next_declaration is not None:
            found = f"'{next_declaration}' (the next declaration)"
        expected = _expected_phrase(exc)
        prev = _previous_token_text(exc)
        where = f" after '{prev}'" if prev else ""
        message = (f"expected {expected}{where}, found {found}" if expected
                   else f"unexpected {found}")
        sink.report("WS101", span, message)
        return
    if isinstance(exc, UnexpectedEOF):
        sink.report("WS101", span, "unexpected end of file")
        return
    sink.report("WS101", span, "syntax error")


def _expected_phrase(exc: UnexpectedToken) -> str:
    """What was expected, in words; type and expression positions get one phrase."""
    expected = set(exc.expected)
    if {"COLON", "OPTIONAL"} <= expected:
        expected.discard("OPTIONAL")  # after a field's name: `name?:` is the rare case
    parser = exc.interactive_parser
    if "NAME" in expected and parser is not None:
        try:
            probe = parser.copy()  # type: ignore[no-untyped-call]
            probe.feed_token(Token("NAME", "x"))
            accepts = probe.accepts()
            if "OPTIONAL" in accepts and "COLON" not in accepts:  # not a field's name
                return "a type"
        except (UnexpectedInput, _SyntaxProblem):  # the probe may reduce a bad literal
            pass
    return describe_expected(expected)


def _previous_token_text(exc: UnexpectedToken) -> str:
    """The token the parser took last, as written, if it is a short word, string or operator.

    The lexer keeps it (``last_token``), so finding it costs nothing; scanning
    the text before the error for it was quadratic on a long line. Numbers
    are left out: "after '14'" says less than the position already does.
    """
    parser = exc.interactive_parser
    state = getattr(getattr(parser, "lexer_thread", None), "state", None)
    token = getattr(state, "last_token", None)
    if token is None or token.type in ("INT", "FLOAT"):
        return ""
    written = str(token)
    return written if len(written) <= 20 and "\n" not in written else ""


def _too_deep(text: str) -> int:
    """Offset where bracket nesting passes MAX_DEPTH, or -1 (brackets only are visited)."""
    depth = 0
    for m in _BRACKET.finditer(text):
        if m.group() in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif depth:
            depth -= 1
    return -1


_BRACKET = re.compile(r"[()\[\]{}]")


def _attempt(text: str, pos: _Positions,
             comments: list[n.Comment]) -> list[Any] | BaseException:
    """Parse ``text`` whole: its items, or the exception that stopped the parse."""
    collected: list[Token] = []
    token = _COMMENTS.set(collected)
    try:
        items = _run("start", text, pos)
    except (UnexpectedInput, _SyntaxProblem, RecursionError) as exc:
        return exc
    finally:
        _COMMENTS.reset(token)
    for tok in collected:
        comments.append(n.Comment(text=str(tok), span=pos.token(tok)))
    return list(items)


def _report_failure(exc: BaseException, text: str, pos: _Positions, sink: DiagnosticSink,
                    next_declaration: str | None) -> None:
    """Report what stopped a parse: in the language's words when the mistake is known."""
    if isinstance(exc, UnexpectedInput):
        found = explain(exc, text, pos.pos_delta, pos.line_delta, next_declaration)
        if found is None:
            _report_parse_error(exc, text, pos, sink, next_declaration)
            return
        sink.report(found.code, _offset_span(text, pos, found.start, found.end),
                    found.message, hints=found.hints,
                    related=[Related(_offset_span(text, pos, a, b), message)
                             for a, b, message in found.related])
    elif isinstance(exc, _SyntaxProblem):
        sink.report(exc.code, exc.span, exc.message, hints=exc.hints)
    else:  # RecursionError
        sink.report("WS105", n.Span(pos.path, 1 + pos.line_delta, 1, 1 + pos.line_delta, 1,
                                    pos.pos_delta, pos.pos_delta), "nesting too deep")


def _offset_span(text: str, pos: _Positions, start: int, end: int) -> n.Span:
    """The file span of ``[start, end)`` in ``text`` (one declaration of the file)."""
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    end_line = line + text.count("\n", start, end)
    end_column = end - (text.rfind("\n", 0, end) + 1) + 1
    return n.Span(pos.path, line + pos.line_delta, column, end_line + pos.line_delta,
                  end_column, start + pos.pos_delta, end + pos.pos_delta)


def _parse_text(text: str, pos: _Positions, sink: DiagnosticSink,
                comments: list[n.Comment]) -> list[Any] | None:
    result = _attempt(text, pos, comments)
    if isinstance(result, BaseException):
        _report_failure(result, text, pos, sink, None)
        return None
    return result


@dataclass(slots=True)
class _Budget:
    """How much text recovery may parse again (a multiple of the file), so it stays linear.

    A parse that fails stops at the error, so an attempt costs about its offset.
    """

    left: int

    def spend(self, size: int) -> bool:
        self.left -= size
        return self.left >= 0


def _parse_declaration(text: str, pos: _Positions, sink: DiagnosticSink,
                       comments: list[n.Comment], next_declaration: str | None,
                       budget: _Budget) -> list[Any]:
    """Parse one declaration's text, reporting each syntax error and resuming after it.

    After an error the broken item (statement, field, task item...) is skipped up
    to where the next one starts (:func:`recovery.recovery_span`), or a malformed
    literal is replaced by a harmless one, and the text is parsed again. An error
    at or before the point where parsing resumed would be a consequence of the
    skip, not a mistake of its own, so it ends the declaration silently, as do
    the signs that the skip took a `}` it should not have
    (:func:`recovery.follows_from_skip`) and the caps (errors per declaration,
    errors in all, text parsed again). An error on the rest of a replaced
    literal's line is its debris: skipped without a word, and parsing goes on.
    """
    floor = -1  # errors at offsets up to here follow from a recovery
    skipped_from = -1  # where the last skipped text began
    debris = False  # the floor ends the line of a replaced literal, not a skip
    for _ in range(MAX_ERRORS_PER_DECLARATION):
        result = _attempt(text, pos, comments)
        if not isinstance(result, BaseException):
            return result
        at = _failure_offset(result, text, pos)
        silent = floor >= 0 and at <= floor
        if silent and not debris:
            return []
        if floor >= 0 and not silent and isinstance(result, UnexpectedInput) \
                and follows_from_skip(result, skipped_from):
            return []
        if not silent:
            _report_failure(result, text, pos, sink, next_declaration)
        if sink.error_count() >= MAX_ERRORS or not budget.spend(at + 1):
            return []
        repaired = _repair(result, text, pos)
        if repaired is None:
            return []
        # What a replaced literal left on its line is skipped without a word.
        debris = isinstance(result, _SyntaxProblem)
        text, skipped_from, new_floor = repaired
        floor = max(floor, new_floor) if silent else new_floor
    return []


def _failure_offset(exc: BaseException, text: str, pos: _Positions) -> int:
    if isinstance(exc, UnexpectedToken) and exc.token.type == "$END":
        return len(text)
    if isinstance(exc, UnexpectedInput):
        return getattr(exc, "pos_in_stream", 0) or 0
    if isinstance(exc, _SyntaxProblem):
        return exc.span.start - pos.pos_delta
    return 0


def _repair(exc: BaseException, text: str, pos: _Positions) -> tuple[str, int, int] | None:
    """The text to parse next, where the change began, and the offset up to which
    errors are consequences of it."""
    if isinstance(exc, UnexpectedInput):
        skip = recovery_span(exc, text, pos.pos_delta)
        if skip is None:
            return None
        return blank(text, *skip), skip[0], skip[1]
    if isinstance(exc, _SyntaxProblem):
        start, end = exc.span.start - pos.pos_delta, exc.span.end - pos.pos_delta
        if not 0 <= start < end <= len(text):
            return None
        replaced = neutralise(text, start, end)
        # The rest of the literal's line may be the literal's own debris (a quote too
        # many splits a string): what follows on that line is not reported.
        line_end = text.find("\n", end)
        floor = len(text) if line_end < 0 else line_end
        return (replaced, start, floor) if replaced is not None else None
    return None


def parse_module(text: str, path: str, sink: DiagnosticSink) -> ParseResult:
    """Parse one file's text. Syntax errors go to ``sink``; the module holds what parsed."""
    raw = _SURROGATE.search(text)
    if raw is not None:
        at = raw.start()
        line = text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        sink.report("WS107", n.Span(path, line, col, line, col + 1, at, at + 1),
                    f"the text holds a lone surrogate (U+{ord(raw.group()):04X}), "
                    "which is not a character", hints=[_SURROGATE_HINT])
        return ParseResult(n.Module(path=path, decls=(), span=n.Span(path, 1, 1, 1, 1)), False)
    deep = _too_deep(text)
    if deep >= 0:
        line = text.count("\n", 0, deep) + 1
        col = deep - (text.rfind("\n", 0, deep) + 1) + 1
        sink.report("WS105", n.Span(path, line, col, line, col + 1, deep, deep + 1),
                    f"brackets nested more than {MAX_DEPTH} levels deep",
                    hints=["split the expression into several `let` statements"])
        return ParseResult(n.Module(path=path, decls=(), span=n.Span(path, 1, 1, 1, 1)), False)
    comments: list[n.Comment] = []
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20000))
    try:
        whole = _parse_text(text, _Positions(path, 0, 0), DiagnosticSink(), comments)
        if whole is not None:
            return ParseResult(_module(path, text, whole, comments), True)
        comments.clear()
        decls: list[Any] = []
        line_delta = 0
        counted = 0
        budget = _Budget(4 * len(text) + 1_000_000)
        for a, b in _chunks(text):
            if sink.error_count() >= MAX_ERRORS:
                break
            line_delta += text.count("\n", counted, a)
            counted = a
            following = _TOP_LEVEL.match(text, b)
            decls.extend(_parse_declaration(
                text[a:b], _Positions(path, line_delta, a), sink, comments,
                following.group() if following is not None else None, budget))
        return ParseResult(_module(path, text, decls, comments), False)
    finally:
        sys.setrecursionlimit(old_limit)


def _module(path: str, text: str, decls: list[Any], comments: list[n.Comment]) -> n.Module:
    lines = text.count("\n") + 1
    last = len(text) - (text.rfind("\n") + 1) + 1
    return n.Module(path=path, decls=tuple(decls), comments=tuple(comments),
                    span=n.Span(path, 1, 1, lines, last, 0, len(text)))


def parse_expression(text: str, path: str = "<expr>") -> Any:
    """Parse a single expression (for tools and tests); raises on a syntax error."""
    return _run("expr", text, _Positions(path, 0, 0))

