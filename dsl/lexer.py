"""A contextual lexer for the WorldSpec grammar, faster than lark's generic one.

Lark's contextual lexer tries a regular expression per parser state and
token; parsing spent a third of its time there. This lexer scans with one
master expression and decides between the few context-dependent readings by
asking the LALR table what the parser can take next:

- a word is a keyword where the parser can take the keyword, and a name
  where only a name fits (so fields may be called ``state`` or ``type``);
- ``-`` is binary after an operand and a sign elsewhere;
- ``/.../`` is a regular expression only after ``matching``.

It produces lark tokens with the same terminal names, positions and
comment callback, so the grammar file stays the single definition of the
language and lark's parser and error reporting work unchanged. The lexer
state's ``last_token`` is the last token the parser *accepted*, which is
what a syntax error message names as coming before the offending token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters
from lark.lexer import PatternStr

from worldspec.dsl.driver import Table, compile_table

__all__ = ["Lex", "install_fast_lexer", "literal_terminals", "make_lexer"]

# Strings, f-strings and regular expressions are written "unrolled" (a run of plain characters,
# then escapes each followed by such a run, the loop possessive): matching takes memory in the
# number of escapes at most, not a backtracking frame per character (a 10 MB literal once
# took 2.3 GB), and the language matched is the same as the plain alternation's.
_MASTER = re.compile(r"""
    (?P<WS>[ \t\f\r\n]+)
  | (?P<COMMENT>\#[^\n]*)
  | (?P<TRIPLE>\"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*+\"\"\")
  | (?P<STRING>"[^"\\\n]*(?:\\.[^"\\\n]*)*+")
  | (?P<FSTRING>f"[^"\\\n]*(?:\\.[^"\\\n]*)*+")
  | (?P<FLOAT>[0-9][0-9_]*\.[0-9][0-9_]*(?:[eE][+-]?[0-9]+)?|[0-9][0-9_]*[eE][+-]?[0-9]+)
  | (?P<INT>[0-9][0-9_]*)
  | (?P<WORD>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<OP>->|=>|\.\.|\?\?|==|!=|<=|>=|\+=|-=|\*=|/=|//|\*\*|[-+*/%<>=?.,:(){}\[\]])
""", re.VERBOSE | re.DOTALL)
_REGEX = re.compile(r"/(?!/)[^/\\\n]*(?:\\.[^/\\\n]*)*+/")

_QUANT = {"all", "any", "exists"}
_WORD_TERMINALS = {"key": "KEY", "not": "NOT", "nothing": "NOTHING", "keep": "KEEP",
                   "private": "PRIVATE", "freeform": "FREEFORM",
                   **{q: "QUANT" for q in _QUANT}}
_ADD = {"+", "-"}
_MUL = {"*", "/", "//", "%"}
_AUG = {"+=", "-=", "*=", "/="}


Lex = Callable[[Any, Any], Iterator[Token]]


def literal_terminals(lark: Lark) -> dict[str, str]:
    """The terminals spelled by a fixed string (keywords, punctuation): text -> name."""
    return {t.pattern.value: t.name for t in lark.terminals if isinstance(t.pattern, PatternStr)}


def install_fast_lexer(lark: Lark, on_comment: Callable[[Token], Token]) -> None:
    """Replace the contextual lexer of a LALR ``lark`` parser built from worldspec.lark."""
    parse_table = lark.parser.parser.parser.parse_table
    lark.parser.lexer.lex = make_lexer(compile_table(parse_table.states, lark.rules),
                                       literal_terminals(lark), on_comment)


def make_lexer(table: Table, literal: Mapping[str, str],
               on_comment: Callable[[Token], Token]) -> Lex:
    """The lexer for a parser whose table is ``table`` (:mod:`driver`'s form of lark's):
    ``lex(lexer_state, parser_state)`` reads ``lexer_state.text`` (a str or lark's text
    slice), sets its ``last_token``, and reads ``parser_state.state_stack``."""
    keywords = {word: name for word, name in literal.items() if word.isidentifier()}
    keywords.update(_WORD_TERMINALS)
    states = table

    def fits(stack: list[int], kind: str) -> bool:
        """Whether the parser, after any reductions, can shift a token of ``kind``."""
        first = states[stack[-1]].get(kind)
        if first is None:
            return False
        if first.__class__ is int:
            return True
        # Reduce on a view of the stack: the states pushed by the simulated
        # reductions over the untouched ``stack[:base]``. Copying the stack
        # instead would cost its depth per word (quadratic on `not not ...`).
        base = len(stack)
        pushed: list[int] = []
        action = first
        for _ in range(1000):
            if action.__class__ is int:
                return True
            size, name, _rule = action
            popped = min(size, len(pushed))
            if popped:
                del pushed[-popped:]
            base -= size - popped
            goto = states[pushed[-1] if pushed else stack[base - 1]].get(name)
            if goto is None:
                return False
            pushed.append(goto)
            action = states[goto].get(kind)
            if action is None:
                return False
        return False

    def lex(lexer_state: Any, parser_state: Any) -> Iterator[Token]:
        text_slice = lexer_state.text
        text: str = getattr(text_slice, "text", text_slice)
        pos: int = getattr(text_slice, "start", 0)
        end: int = getattr(text_slice, "end", len(text))
        line = 1
        line_start = 0
        match = _MASTER.match
        new_str = str.__new__
        while pos < end:
            m = match(text, pos)
            kind = m.lastgroup if m is not None else None
            if kind == "WS":  # the commonest match: skipped before anything else is asked
                assert m is not None
                after = m.end()
                newlines = text.count("\n", pos, after)
                if newlines:
                    line += newlines
                    line_start = text.rindex("\n", pos, after) + 1
                pos = after
                continue
            value = m.group() if m is not None else ""
            accepts = states[parser_state.state_stack[-1]]
            if text.startswith("/", pos) and "REGEX" in accepts:
                rm = _REGEX.match(text, pos)
                if rm is not None:
                    m, kind, value = rm, "REGEX", rm.group()
            if m is None or kind is None:
                raise UnexpectedCharacters(  # type: ignore[no-untyped-call]
                    text, pos, line, pos - line_start + 1, allowed=set(accepts),
                    state=parser_state)
            newlines = value.count("\n") if kind == "TRIPLE" else 0
            next_line = line + newlines
            next_start = line_start if not newlines else pos + value.rindex("\n") + 1
            if kind == "WORD":
                kind = _word(value, keywords, accepts, parser_state.state_stack, fits)
            elif kind == "TRIPLE":
                kind = "STRING"
            elif kind == "OP":
                kind = _operator(value, literal, accepts)
            after = m.end()
            # Token(kind, value, pos, line, ...) with its fields stored here: lark's
            # constructor is two calls deep, and this runs once per token
            token = new_str(Token, value)
            token.type = kind
            token.value = value
            token.start_pos = pos
            token.line = line
            token.column = pos - line_start + 1
            token.end_line = next_line
            token.end_column = after - next_start + 1
            token.end_pos = after
            pos = after
            line, line_start = next_line, next_start
            if kind == "COMMENT":
                on_comment(token)
                continue
            yield token
            # Set once the parser has taken the token and asks for the next one, so at a
            # syntax error it is the token *before* the offending one (for "after 'x'").
            lexer_state.last_token = token

    return lex


def _word(value: str, keywords: dict[str, str], accepts: dict[str, Any], stack: list[int],
          fits: Callable[[list[int], str], bool]) -> str:
    keyword = keywords.get(value)
    if keyword is None:
        return "NAME"
    if keyword in accepts and "NAME" not in accepts:
        return keyword
    if "NAME" in accepts and keyword not in accepts:
        return "NAME"
    # Both readings are possible in this (merged) state: take the keyword only if the
    # parser can really shift it here, else a name if a name fits.
    if fits(stack, keyword):
        return keyword
    return "NAME" if fits(stack, "NAME") else keyword


def _operator(value: str, literal: Mapping[str, str], accepts: dict[str, Any]) -> str:
    if value == "-":
        if "ADD_OP" in accepts:
            return "ADD_OP"
        return "MINUS"
    if value in _ADD:
        return "ADD_OP"
    if value in _MUL:
        return "MUL_OP"
    if value == "**":
        return "POW_OP"
    if value in _AUG:
        return "AUG_OP"
    if value == "?":
        return "OPTIONAL"
    if value == "..":
        return "RANGE"
    return literal.get(value, value)
