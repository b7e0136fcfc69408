"""Source text to :class:`dsl.nodes.Module`, with syntax errors as diagnostics.

The grammar is LALR(1) (``worldspec.lark``). A file that parses in one go is
the common case. Otherwise the parser reports the first error, then parses
each top-level declaration on its own so that every broken declaration
gets at most one error and the rest still parse (no cascades). Comments are
collected by the lexer and kept on the module for the formatter.
"""

from __future__ import annotations

import itertools
import re
import sys
from contextvars import ContextVar
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from lark.tree import Meta

from dsl import nodes as n
from dsl.diagnostics import DiagnosticSink
from dsl.syntax_messages import describe_expected, describe_token

__all__ = ["ParseResult", "parse_module", "parse_expression", "decode_string", "MAX_DEPTH"]

MAX_DEPTH = 200
_TOP_LEVEL = re.compile(
    r"^(?:import|world|config|enum|record|entity|union|type|state|invariant|tool|fn|task)\b",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A module (possibly partial) and whether any syntax error was found."""

    module: n.Module
    ok: bool


class _SyntaxProblem(Exception):
    """Raised inside the transformer for a malformed literal; becomes a diagnostic."""

    def __init__(self, code: str, message: str, span: n.Span) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span


#: Where the lexer puts comments during the current parse.
_COMMENTS: ContextVar[list[Token] | None] = ContextVar("worldspec_comments", default=None)


def _keep_comment(tok: Token) -> Token:
    sink = _COMMENTS.get()
    if sink is not None:
        sink.append(tok)
    return tok


@cache
def _lark(start: str) -> Lark:
    grammar = resources.files("dsl").joinpath("worldspec.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
        start=start,
        lexer_callbacks={"COMMENT": _keep_comment},
        cache=False,
    )


# ------------------------------------------------------------------ strings
_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "0": "\0",
            "{": "\\{", "}": "\\}"}
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
        if esc in ("{", "}"):
            return "\\" + esc  # kept for f-strings, which decode braces themselves
        if esc in _ESCAPES:
            return _ESCAPES[esc]
        bad = True
        return ""

    out = _ESCAPE_RE.sub(replace, body)
    return None if bad else out


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

    def meta(self, meta: Meta) -> n.Span:
        if getattr(meta, "empty", True):
            return n.Span(self.path, 1 + self.line_delta, 1, 1 + self.line_delta, 1,
                          self.pos_delta, self.pos_delta)
        return n.Span(self.path, meta.line + self.line_delta, meta.column,
                      meta.end_line + self.line_delta, meta.end_column,
                      meta.start_pos + self.pos_delta, meta.end_pos + self.pos_delta)

    def token(self, tok: Token) -> n.Span:
        return n.Span(self.path, (tok.line or 1) + self.line_delta, tok.column or 1,
                      (tok.end_line or 1) + self.line_delta, tok.end_column or 1,
                      (tok.start_pos or 0) + self.pos_delta, (tok.end_pos or 0) + self.pos_delta)


def _ident(pos: _Positions, tok: Token) -> n.Ident:
    return n.Ident(name=str(tok), span=pos.token(tok))


def _doc(item: Any) -> str | None:
    return item if isinstance(item, str) or item is None else None


@v_args(meta=True)
class _ToNodes(Transformer[Token, Any]):
    """One method per grammar rule; each returns a node (or a plain value)."""

    def __init__(self, pos: _Positions) -> None:
        super().__init__(visit_tokens=False)
        self.pos = pos

    def _span(self, meta: Meta) -> n.Span:
        return self.pos.meta(meta)

    def _string(self, tok: Token) -> str:
        text = str(tok)
        if text.startswith('"""'):
            body = _clean_triple(text[3:-3])
        else:
            body = text[1:-1]
        value = decode_string(body)
        if value is None:
            raise _SyntaxProblem("WS103", "invalid escape sequence in string", self.pos.token(tok))
        return value.replace("\\{", "{").replace("\\}", "}")

    # modules -------------------------------------------------------------
    def start(self, meta: Meta, items: list[Any]) -> list[Any]:
        return items

    def import_decl(self, meta: Meta, c: list[Any]) -> n.Import:
        return n.Import(path=self._string(c[0]), span=self._span(meta))

    def world_decl(self, meta: Meta, c: list[Any]) -> n.WorldDecl:
        return n.WorldDecl(name=_ident(self.pos, c[0]), doc=c[1], span=self._span(meta))

    def config_decl(self, meta: Meta, c: list[Any]) -> n.ConfigDecl:
        return n.ConfigDecl(items=tuple(c), span=self._span(meta))

    def config_item(self, meta: Meta, c: list[Any]) -> n.ConfigItem:
        return n.ConfigItem(name=_ident(self.pos, c[0]), value=c[1], span=self._span(meta))

    def doc(self, meta: Meta, c: list[Any]) -> str:
        return self._string(c[0])

    # types ---------------------------------------------------------------
    def enum_decl(self, meta: Meta, c: list[Any]) -> n.EnumDecl:
        members = tuple(m for m in c[2:] if m is not None)
        return n.EnumDecl(name=_ident(self.pos, c[0]), doc=c[1], members=members,
                          span=self._span(meta))

    def enum_member(self, meta: Meta, c: list[Any]) -> n.EnumMember:
        value = self._string(c[1]) if c[1] is not None else None
        return n.EnumMember(name=_ident(self.pos, c[0]), value=value, doc=c[2],
                            span=self._span(meta))

    def record_decl(self, meta: Meta, c: list[Any]) -> n.RecordDecl:
        return n.RecordDecl(name=_ident(self.pos, c[0]), doc=c[1], fields=tuple(c[2:]),
                            span=self._span(meta))

    def entity_decl(self, meta: Meta, c: list[Any]) -> n.EntityDecl:
        return n.EntityDecl(name=_ident(self.pos, c[0]), doc=c[1], fields=tuple(c[2:]),
                            span=self._span(meta))

    def field(self, meta: Meta, c: list[Any]) -> n.Field:
        is_key, name, typ, default, doc = c
        return n.Field(name=_ident(self.pos, name), type=typ, default=default, doc=doc,
                       is_key=is_key is not None, span=self._span(meta))

    def union_decl(self, meta: Meta, c: list[Any]) -> n.UnionDecl:
        variants = tuple(v for v in c[3:] if v is not None)
        return n.UnionDecl(name=_ident(self.pos, c[0]), doc=c[1],
                           tag_field=_ident(self.pos, c[2]), variants=variants,
                           span=self._span(meta))

    def variant(self, meta: Meta, c: list[Any]) -> n.Variant:
        tag = c[0]
        tag_text = self._string(tag) if tag.type == "STRING" else str(tag)
        return n.Variant(tag=tag_text, record=_ident(self.pos, c[1]), span=self._span(meta))

    def alias_decl(self, meta: Meta, c: list[Any]) -> n.AliasDecl:
        return n.AliasDecl(name=_ident(self.pos, c[0]), type=c[1], doc=c[2], span=self._span(meta))

    def type(self, meta: Meta, c: list[Any]) -> n.TypeExpr:
        ref: n.TypeExpr = c[0]
        if c[1] is None:
            return ref
        return n.TypeExpr(name=ref.name, args=ref.args, constraints=ref.constraints,
                          optional=True, span=self._span(meta))

    def type_ref(self, meta: Meta, c: list[Any]) -> n.TypeExpr:
        args = tuple(c[1]) if c[1] is not None else ()
        return n.TypeExpr(name=_ident(self.pos, c[0]), args=args, constraints=tuple(c[2:]),
                          span=self._span(meta))

    def type_args(self, meta: Meta, c: list[Any]) -> list[Any]:
        return c

    def range_constraint(self, meta: Meta, c: list[Any]) -> n.RangeConstraint:
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
        return n.RangeConstraint(low=low, high=high, span=self._span(meta))

    def bound(self, meta: Meta, c: list[Any]) -> int | float:
        sign = -1 if c[0] is not None else 1
        tok = c[1]
        text = str(tok).replace("_", "")
        return sign * (int(text) if tok.type == "INT" else float(text))

    def regex_constraint(self, meta: Meta, c: list[Any]) -> n.RegexConstraint:
        pattern = str(c[0])[1:-1].replace("\\/", "/")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise _SyntaxProblem("WS103", f"invalid regular expression: {exc}",
                                 self.pos.token(c[0])) from None
        return n.RegexConstraint(pattern=pattern, span=self._span(meta))

    # state ---------------------------------------------------------------
    def state_decl(self, meta: Meta, c: list[Any]) -> n.StateDecl:
        return n.StateDecl(items=tuple(c), span=self._span(meta))

    def state_item(self, meta: Meta, c: list[Any]) -> n.StateItem:
        return n.StateItem(name=_ident(self.pos, c[0]), kind=c[1], default=c[2], doc=c[3],
                           span=self._span(meta))

    def table_kind(self, meta: Meta, c: list[Any]) -> n.TableKind:
        return n.TableKind(entity=_ident(self.pos, c[0]), span=self._span(meta))

    def sequence_kind(self, meta: Meta, c: list[Any]) -> n.SequenceKind:
        return n.SequenceKind(format=self._string(c[0]), span=self._span(meta))

    def invariant_decl(self, meta: Meta, c: list[Any]) -> n.InvariantDecl:
        return n.InvariantDecl(name=_ident(self.pos, c[0]), doc=c[1], condition=c[2],
                               span=self._span(meta))

    # tools ---------------------------------------------------------------
    def tool_decl(self, meta: Meta, c: list[Any]) -> n.ToolDecl:
        name, *rest = c
        body = rest[-1]
        doc = rest[-2]
        returns = rest[-3]
        params = tuple(p for p in rest[:-3] if p is not None)
        return n.ToolDecl(name=_ident(self.pos, name), params=params, returns=returns, doc=doc,
                          body=body, span=self._span(meta))

    def fn_decl(self, meta: Meta, c: list[Any]) -> n.FnDecl:
        name, *rest = c
        params = tuple(p for p in rest[:-3] if p is not None)
        return n.FnDecl(name=_ident(self.pos, name), params=params, returns=rest[-3],
                        doc=rest[-2], body=rest[-1], span=self._span(meta))

    def returns(self, meta: Meta, c: list[Any]) -> n.TypeExpr:
        return c[0]  # type: ignore[no-any-return]

    def param(self, meta: Meta, c: list[Any]) -> n.Param:
        name, typ, default, doc, not_found = c
        return n.Param(name=_ident(self.pos, name), type=typ, default=default, doc=doc,
                       not_found=not_found, span=self._span(meta))

    def not_found(self, meta: Meta, c: list[Any]) -> Any:
        return c[0]

    # statements ----------------------------------------------------------
    def block(self, meta: Meta, c: list[Any]) -> n.Block:
        return n.Block(body=tuple(c), span=self._span(meta))

    def let_stmt(self, meta: Meta, c: list[Any]) -> n.Let:
        return n.Let(name=_ident(self.pos, c[0]), type=c[1], value=c[2], span=self._span(meta))

    def assign_stmt(self, meta: Meta, c: list[Any]) -> n.Assign:
        return n.Assign(target=c[0], value=c[1], span=self._span(meta))

    def aug_assign_stmt(self, meta: Meta, c: list[Any]) -> n.AugAssign:
        return n.AugAssign(target=c[0], op=str(c[1])[0], value=c[2], span=self._span(meta))

    def if_stmt(self, meta: Meta, c: list[Any]) -> n.If:
        return n.If(condition=c[0], then=c[1], orelse=c[2], span=self._span(meta))

    def else_clause(self, meta: Meta, c: list[Any]) -> Any:
        return c[0]

    def for_stmt(self, meta: Meta, c: list[Any]) -> n.For:
        return n.For(var=_ident(self.pos, c[0]), iterable=c[1], body=c[2], span=self._span(meta))

    def match_stmt(self, meta: Meta, c: list[Any]) -> n.Match:
        subject, *rest = c
        orelse = rest[-1]
        cases = tuple(rest[:-1])
        return n.Match(subject=subject, cases=cases, orelse=orelse, span=self._span(meta))

    def match_case(self, meta: Meta, c: list[Any]) -> n.MatchCase:
        binding = _ident(self.pos, c[1]) if c[1] is not None else None
        return n.MatchCase(tag=_ident(self.pos, c[0]), binding=binding, body=c[2],
                           span=self._span(meta))

    def match_else(self, meta: Meta, c: list[Any]) -> n.Block:
        return c[0]  # type: ignore[no-any-return]

    def require_stmt(self, meta: Meta, c: list[Any]) -> n.Require:
        return n.Require(condition=c[0], message=c[1], span=self._span(meta))

    def fail_stmt(self, meta: Meta, c: list[Any]) -> n.Fail:
        return n.Fail(message=c[0], span=self._span(meta))

    def return_stmt(self, meta: Meta, c: list[Any]) -> n.Return:
        return n.Return(value=c[0], span=self._span(meta))

    def insert_stmt(self, meta: Meta, c: list[Any]) -> n.Insert:
        return n.Insert(value=c[0], table=c[1], span=self._span(meta))

    def delete_stmt(self, meta: Meta, c: list[Any]) -> n.Delete:
        return n.Delete(value=c[0], table=c[1], span=self._span(meta))

    def append_stmt(self, meta: Meta, c: list[Any]) -> n.Append:
        return n.Append(value=c[0], target=c[1], span=self._span(meta))

    def remove_stmt(self, meta: Meta, c: list[Any]) -> n.Remove:
        return n.Remove(value=c[0], target=c[1], span=self._span(meta))

    # expressions ---------------------------------------------------------
    def if_expr(self, meta: Meta, c: list[Any]) -> n.Conditional:
        return n.Conditional(condition=c[0], then=c[1], orelse=c[2], span=self._span(meta))

    def quantifier(self, meta: Meta, c: list[Any]) -> n.Quantifier:
        return n.Quantifier(kind=str(c[0]), var=_ident(self.pos, c[1]), iterable=c[2], body=c[3],
                            span=self._span(meta))

    def or_op(self, meta: Meta, c: list[Any]) -> n.BoolOp:
        return n.BoolOp(op="or", left=c[0], right=c[1], span=self._span(meta))

    def and_op(self, meta: Meta, c: list[Any]) -> n.BoolOp:
        return n.BoolOp(op="and", left=c[0], right=c[1], span=self._span(meta))

    def not_op(self, meta: Meta, c: list[Any]) -> n.Not:
        return n.Not(operand=c[0], span=self._span(meta))

    def compare(self, meta: Meta, c: list[Any]) -> n.Compare:
        return n.Compare(op=c[1], left=c[0], right=c[2], span=self._span(meta))

    def comp_op(self, meta: Meta, c: list[Any]) -> str:
        return " ".join(str(t) for t in c)

    def coalesce_op(self, meta: Meta, c: list[Any]) -> n.Coalesce:
        return n.Coalesce(left=c[0], right=c[1], span=self._span(meta))

    def binary(self, meta: Meta, c: list[Any]) -> n.Binary:
        return n.Binary(op=str(c[1]), left=c[0], right=c[2], span=self._span(meta))

    def negate(self, meta: Meta, c: list[Any]) -> n.Expr:
        operand = c[1]
        span = self._span(meta)
        # A negative literal is a literal, so `-1` prints back as `-1`.
        if isinstance(operand, n.IntLit):
            return n.IntLit(value=-operand.value, span=span)
        if isinstance(operand, n.FloatLit):
            return n.FloatLit(value=-operand.value, text="-" + operand.text, span=span)
        return n.Unary(op="-", operand=operand, span=span)

    def attribute(self, meta: Meta, c: list[Any]) -> n.Attribute:
        return n.Attribute(obj=c[0], name=_ident(self.pos, c[1]), span=self._span(meta))

    def index(self, meta: Meta, c: list[Any]) -> n.Index:
        return n.Index(obj=c[0], index=c[1], span=self._span(meta))

    def call(self, meta: Meta, c: list[Any]) -> n.Call:
        func, *args = c
        return n.Call(func=func, args=tuple(self._arg(a) for a in args if a is not None),
                      span=self._span(meta))

    def _arg(self, value: Any) -> n.Arg:
        if isinstance(value, n.Arg):
            return value
        return n.Arg(name=None, value=value, span=value.span)

    def named_arg(self, meta: Meta, c: list[Any]) -> n.Arg:
        return n.Arg(name=_ident(self.pos, c[0]), value=c[1], span=self._span(meta))

    def lambda_arg(self, meta: Meta, c: list[Any]) -> n.Arg:
        lam = n.Lambda(param=_ident(self.pos, c[0]), body=c[1], span=self._span(meta))
        return n.Arg(name=None, value=lam, span=lam.span)

    def named_lambda_arg(self, meta: Meta, c: list[Any]) -> n.Arg:
        param = _ident(self.pos, c[1])
        lam = n.Lambda(param=param, body=c[2], span=param.span.cover(c[2].span))
        return n.Arg(name=_ident(self.pos, c[0]), value=lam, span=self._span(meta))

    def int_lit(self, meta: Meta, c: list[Any]) -> n.IntLit:
        return n.IntLit(value=int(str(c[0]).replace("_", "")), span=self._span(meta))

    def float_lit(self, meta: Meta, c: list[Any]) -> n.FloatLit:
        text = str(c[0])
        return n.FloatLit(value=float(text.replace("_", "")), text=text, span=self._span(meta))

    def str_lit(self, meta: Meta, c: list[Any]) -> n.StrLit:
        return n.StrLit(value=self._string(c[0]), span=self._span(meta))

    def fstr_lit(self, meta: Meta, c: list[Any]) -> n.FStr:
        return _parse_fstring(c[0], self.pos)

    def true_lit(self, meta: Meta, c: list[Any]) -> n.BoolLit:
        return n.BoolLit(value=True, span=self._span(meta))

    def false_lit(self, meta: Meta, c: list[Any]) -> n.BoolLit:
        return n.BoolLit(value=False, span=self._span(meta))

    def none_lit(self, meta: Meta, c: list[Any]) -> n.NoneLit:
        return n.NoneLit(span=self._span(meta))

    def name(self, meta: Meta, c: list[Any]) -> n.NameRef:
        return n.NameRef(name=str(c[0]), span=self._span(meta))

    def paren(self, meta: Meta, c: list[Any]) -> Any:
        return c[0]

    def list_lit(self, meta: Meta, c: list[Any]) -> n.ListLit:
        return n.ListLit(items=tuple(x for x in c if x is not None), span=self._span(meta))

    def comprehension(self, meta: Meta, c: list[Any]) -> n.Comprehension:
        return n.Comprehension(element=c[0], var=_ident(self.pos, c[1]), iterable=c[2],
                               condition=c[3], span=self._span(meta))

    def map_lit(self, meta: Meta, c: list[Any]) -> n.MapLit:
        return n.MapLit(entries=tuple(x for x in c if x is not None), span=self._span(meta))

    def map_entry(self, meta: Meta, c: list[Any]) -> n.MapEntry:
        return n.MapEntry(key=c[0], value=c[1], span=self._span(meta))

    # tasks ---------------------------------------------------------------
    def task_decl(self, meta: Meta, c: list[Any]) -> n.TaskDecl:
        return n.TaskDecl(name=_ident(self.pos, c[0]), world=_ident(self.pos, c[1]), doc=c[2],
                          items=tuple(c[3:]), span=self._span(meta))

    def given(self, meta: Meta, c: list[Any]) -> n.Given:
        src = c[0]
        source = self._string(src) if isinstance(src, Token) else src
        return n.Given(source=source, span=self._span(meta))

    def instruction(self, meta: Meta, c: list[Any]) -> n.Instruction:
        return n.Instruction(text=self._string(c[0]), span=self._span(meta))

    def persona(self, meta: Meta, c: list[Any]) -> n.Persona:
        return n.Persona(text=self._string(c[0]), span=self._span(meta))

    def known(self, meta: Meta, c: list[Any]) -> n.Known:
        return n.Known(text=self._string(c[0]), span=self._span(meta))

    def unknown(self, meta: Meta, c: list[Any]) -> n.Unknown:
        return n.Unknown(text=self._string(c[0]), span=self._span(meta))

    def check(self, meta: Meta, c: list[Any]) -> n.Check:
        return n.Check(name=_ident(self.pos, c[0]), weight=c[1], doc=c[2], condition=c[3],
                       span=self._span(meta))

    def weight(self, meta: Meta, c: list[Any]) -> int | float:
        tok = c[0]
        text = str(tok).replace("_", "")
        return int(text) if tok.type == "INT" else float(text)

    def frame(self, meta: Meta, c: list[Any]) -> n.Frame:
        targets = tuple(t for t in c if isinstance(t, n.FrameTarget))
        return n.Frame(targets=targets, span=self._span(meta))

    def frame_target(self, meta: Meta, c: list[Any]) -> n.FrameTarget:
        return n.FrameTarget(path=tuple(_ident(self.pos, t) for t in c), span=self._span(meta))

    def solution(self, meta: Meta, c: list[Any]) -> n.Solution:
        return n.Solution(calls=tuple(c), span=self._span(meta))

    def solution_call(self, meta: Meta, c: list[Any]) -> n.SolutionCall:
        name, *args = c
        return n.SolutionCall(tool=_ident(self.pos, name),
                              args=tuple(self._arg(a) for a in args if a is not None),
                              span=self._span(meta))

    def tags(self, meta: Meta, c: list[Any]) -> n.Tags:
        return n.Tags(names=tuple(_ident(self.pos, t) for t in c), span=self._span(meta))

    def split(self, meta: Meta, c: list[Any]) -> n.Split:
        return n.Split(name=_ident(self.pos, c[0]), span=self._span(meta))

    def seed(self, meta: Meta, c: list[Any]) -> n.Seed:
        return n.Seed(value=int(str(c[0]).replace("_", "")), span=self._span(meta))

    # data ----------------------------------------------------------------
    def data_object(self, meta: Meta, c: list[Any]) -> n.DataObject:
        return n.DataObject(pairs=tuple(p for p in c if p is not None), span=self._span(meta))

    def data_pair(self, meta: Meta, c: list[Any]) -> n.DataPair:
        key = c[0]
        text = self._string(key) if key.type == "STRING" else str(key)
        return n.DataPair(key=text, value=c[1], span=self._span(meta))

    def data_array(self, meta: Meta, c: list[Any]) -> n.DataArray:
        return n.DataArray(items=tuple(x for x in c if x is not None), span=self._span(meta))

    def data_string(self, meta: Meta, c: list[Any]) -> n.DataString:
        return n.DataString(value=self._string(c[0]), span=self._span(meta))

    def data_int(self, meta: Meta, c: list[Any]) -> n.DataInt:
        sign = -1 if c[0] is not None else 1
        return n.DataInt(value=sign * int(str(c[1]).replace("_", "")), span=self._span(meta))

    def data_float(self, meta: Meta, c: list[Any]) -> n.DataFloat:
        sign = "-" if c[0] is not None else ""
        text = sign + str(c[1])
        return n.DataFloat(value=float(text.replace("_", "")), text=text, span=self._span(meta))

    def data_true(self, meta: Meta, c: list[Any]) -> n.DataBool:
        return n.DataBool(value=True, span=self._span(meta))

    def data_false(self, meta: Meta, c: list[Any]) -> n.DataBool:
        return n.DataBool(value=False, span=self._span(meta))

    def data_null(self, meta: Meta, c: list[Any]) -> n.DataNull:
        return n.DataNull(span=self._span(meta))

    def data_name(self, meta: Meta, c: list[Any]) -> n.DataName:
        return n.DataName(name=str(c[0]), span=self._span(meta))


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
                decoded = decode_string("".join(text))
                if decoded is None:
                    raise _SyntaxProblem("WS103", "invalid escape sequence in string", span)
                parts.append(decoded.replace("\\{", "{").replace("\\}", "}"))
                text = []
            expr = _parse_embedded(expr_text, pos, base + i + 1, tok, span)
            parts.append(n.Interpolation(expr=expr, spec=spec, span=expr.span))
            i = end + 1
            continue
        text.append(ch)
        i += 1
    if text:
        decoded = decode_string("".join(text))
        if decoded is None:
            raise _SyntaxProblem("WS103", "invalid escape sequence in string", span)
        parts.append(decoded.replace("\\{", "{").replace("\\}", "}"))
    return n.FStr(parts=tuple(parts), span=span)


def _interpolation_end(raw: str, start: int) -> tuple[int, int]:
    """Index of the closing ``}`` and of a top-level format ``:`` (or -1)."""
    depth = 0
    colon = -1
    i = start
    in_str = False
    while i < len(raw):
        ch = raw[i]
        if in_str:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "([{":
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
        text = text.replace('\\"', ' "')  # quotes inside an interpolation are escaped in source
    inner = _Positions(pos.path, pos.line_delta + (tok.line or 1) - 1, 0)
    try:
        tree = _lark("expr").parse(text)
        result = _ToNodes(_Positions(pos.path, inner.line_delta, offset)).transform(tree)
    except (UnexpectedInput, VisitError):
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
                        sink: DiagnosticSink) -> None:
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
        expected = _expected_phrase(exc)
        prev = _previous_token_text(text, exc)
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
    parser = exc.interactive_parser
    if "NAME" in expected and parser is not None:
        try:
            probe = parser.copy()  # type: ignore[no-untyped-call]
            probe.feed_token(Token("NAME", "x"))
            if "OPTIONAL" in probe.accepts():
                return "a type"
        except UnexpectedInput:
            pass
    return describe_expected(expected)


def _previous_token_text(text: str, exc: UnexpectedToken) -> str:
    start = exc.token.start_pos if exc.token.type != "$END" else len(text)
    before = text[:start].rstrip()
    if not before:
        return ""
    # the last lexeme: a word, or a run of punctuation
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*|\"[^\"\n]*\"|[^\sA-Za-z0-9_\"])$", before)
    token = m.group(1) if m else ""
    return token if len(token) <= 20 else ""


def _too_deep(text: str) -> int:
    """Offset where bracket nesting passes MAX_DEPTH, or -1."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
            if depth > MAX_DEPTH:
                return i
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return -1


def _parse_text(text: str, pos: _Positions, sink: DiagnosticSink,
                comments: list[n.Comment]) -> list[Any] | None:
    collected: list[Token] = []
    try:
        tree = _parse_collecting(text, collected)
        items = _ToNodes(pos).transform(tree)
    except UnexpectedInput as exc:
        _report_parse_error(exc, text, pos, sink)
        return None
    except VisitError as exc:
        problem = exc.orig_exc
        if isinstance(problem, _SyntaxProblem):
            sink.report(problem.code, problem.span, problem.message)
            return None
        raise
    except RecursionError:
        sink.report("WS105", n.Span(pos.path, 1 + pos.line_delta, 1, 1 + pos.line_delta, 1,
                                    pos.pos_delta, pos.pos_delta), "nesting too deep")
        return None
    for tok in collected:
        comments.append(n.Comment(text=str(tok), span=pos.token(tok)))
    return list(items)


def _parse_collecting(text: str, collected: list[Token]) -> Tree[Token]:
    token = _COMMENTS.set(collected)
    try:
        return _lark("start").parse(text)
    finally:
        _COMMENTS.reset(token)


def parse_module(text: str, path: str, sink: DiagnosticSink) -> ParseResult:
    """Parse one file's text. Syntax errors go to ``sink``; the module holds what parsed."""
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
        for a, b in _chunks(text):
            line_delta = text.count("\n", 0, a)
            part = _parse_text(text[a:b], _Positions(path, line_delta, a), sink, comments)
            if part is not None:
                decls.extend(part)
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
    tree = _lark("expr").parse(text)
    return _ToNodes(_Positions(path, 0, 0)).transform(tree)

