"""The lexer lark's LALR parser runs for the WorldSpec grammar (``Lark(lexer=WorldSpecLexer)``).

Lark's own contextual lexer cannot read this language: it reads a word spelled like a
keyword as the keyword in places where only a name can stand (a field ``tags`` after a
field with a default fails to parse: ``credit: float = 0.0  tags: str``). It was also the
slowest part of parsing (a regular expression per parser state and token). This lexer
scans with one master expression and decides between the few context-dependent readings
by asking the parser state lark hands every lexer (its state stack, and
``parse_conf.states``: the table lark's own contextual lexer reads) what the parser can
take next:

- a word is a keyword where the parser can take the keyword, and a name where only a
  name fits (so fields may be called ``state`` or ``type``); where both could follow, the
  reductions the parser would make first decide;
- ``-`` is binary after an operand and a sign elsewhere;
- ``/.../`` is a regular expression only after ``matching``.

It produces lark tokens with the grammar's terminal names and positions, and hands
comments to the ``COMMENT`` callback of ``lexer_callbacks``, so the grammar file stays the
single definition of the language and lark's parser and error reporting work unchanged.
The lexer state's ``last_token`` is the last token the parser *accepted*, which is what a
syntax error message names as coming before the offending token.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lark import Token
from lark.common import LexerConf
from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, LexerState, PatternStr

__all__ = ["WorldSpecLexer"]

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
#: Words whose terminal the grammar defines by a regular expression, not a fixed string.
_WORD_TERMINALS = {"key": "KEY", "not": "NOT", "nothing": "NOTHING", "keep": "KEEP",
                   "private": "PRIVATE", "freeform": "FREEFORM",
                   **{q: "QUANT" for q in _QUANT}}
#: Operators whose terminal stands for several spellings: text -> terminal.
_OPERATOR_TERMINALS = {"+": "ADD_OP", "*": "MUL_OP", "/": "MUL_OP", "//": "MUL_OP",
                       "%": "MUL_OP", "**": "POW_OP", "+=": "AUG_OP", "-=": "AUG_OP",
                       "*=": "AUG_OP", "/=": "AUG_OP", "?": "OPTIONAL", "..": "RANGE"}

#: A parser state's actions: terminal or rule name -> (Shift or Reduce, state or rule).
_Actions = Mapping[str, tuple[Any, Any]]


class WorldSpecLexer(Lexer):
    """Lark's lexer interface (``lex(lexer_state, parser_state)``) for worldspec.lark."""

    #: lark hands ``lex`` its lexer state and the parser's state (lark's interface 2)
    __future_interface__ = 2

    def __init__(self, lexer_conf: LexerConf) -> None:
        #: the terminals spelled by a fixed string (keywords, punctuation): text -> name
        self.literal = {t.pattern.value: t.name for t in lexer_conf.terminals
                        if isinstance(t.pattern, PatternStr)}
        self.keywords = {word: name for word, name in self.literal.items()
                         if word.isidentifier()}
        self.keywords.update(_WORD_TERMINALS)
        #: operators and punctuation: text -> terminal (``-`` is decided by its place)
        self.operators = {**self.literal, **_OPERATOR_TERMINALS}
        self.on_comment: Callable[[Token], Any] | None = lexer_conf.callbacks.get("COMMENT")

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        """The tokens of ``lexer_state.text``; ``parser_state`` is lark's (the state on top
        of its stack says what the parser can take next)."""
        source: Any = lexer_state.text  # lark's TextSlice (a str before lark 1.3)
        text: str = getattr(source, "text", source)
        pos: int = getattr(source, "start", 0)
        end: int = getattr(source, "end", len(text))
        states: Mapping[Any, _Actions] = parser_state.parse_conf.states
        # lark changes its state stack in place: the top is the state the parser is in
        state_stack: list[Any] = parser_state.state_stack
        on_comment = self.on_comment
        keywords = self.keywords
        operators = self.operators
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
            accepts = states[state_stack[-1]]
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
                keyword = keywords.get(value)
                kind = "NAME" if keyword is None else self._keyword_or_name(
                    keyword, accepts, state_stack, states)
            elif kind == "TRIPLE":
                kind = "STRING"
            elif kind == "OP":
                if value == "-":  # binary after an operand, a sign elsewhere
                    kind = "ADD_OP" if "ADD_OP" in accepts else "MINUS"
                else:
                    kind = operators.get(value, value)
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
                if on_comment is not None:
                    on_comment(token)
                continue
            yield token
            # Set once the parser has taken the token and asks for the next one, so at a
            # syntax error it is the token *before* the offending one (for "after 'x'").
            lexer_state.last_token = token

    @staticmethod
    def _keyword_or_name(keyword: str, accepts: _Actions, stack: list[Any],
                         states: Mapping[Any, _Actions]) -> str:
        """How a word spelled like ``keyword`` reads where the parser's state is ``accepts``."""
        if keyword in accepts and "NAME" not in accepts:
            return keyword
        if "NAME" in accepts and keyword not in accepts:
            return "NAME"
        # Both readings are possible in this (merged) state: take the keyword only if the
        # parser can really shift it here, else a name if a name fits.
        if _fits(states, stack, keyword):
            return keyword
        return "NAME" if _fits(states, stack, "NAME") else keyword


def _fits(states: Mapping[Any, _Actions], stack: list[Any], kind: str) -> bool:
    """Whether the parser whose state stack is ``stack`` can, after the reductions it would
    make first, shift a token of ``kind`` (the stack itself is left as it is)."""
    # Reduce on a view of the stack: the states pushed by the simulated reductions over
    # the untouched ``stack[:base]``. Copying the stack instead would cost its depth per
    # word (quadratic on `not not ...`).
    base = len(stack)
    pushed: list[Any] = []
    found = states[stack[-1]].get(kind)
    for _ in range(1000):
        if found is None:
            return False
        action, argument = found
        if action.name == "Shift":
            return True
        size = len(argument.expansion)
        popped = min(size, len(pushed))
        if popped:
            del pushed[-popped:]
        base -= size - popped
        goto = states[pushed[-1] if pushed else stack[base - 1]].get(argument.origin.name)
        if goto is None:
            return False
        pushed.append(goto[1])
        found = states[goto[1]].get(kind)
    return False
