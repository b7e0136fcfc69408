"""Syntax error recovery and the syntax errors that deserve their own words.

After a syntax error the parser (``parser.py``) asks this module two things:

- :func:`explain`: is this a mistake we can name? A bracket that is never
  closed (WS109), Python's ``a if c else b`` (WS110), a quantifier used as an
  operand or written the Python way (WS111), a slice form the language does
  not have (WS112), a call on its own as a statement (WS113).
- :func:`recovery_span`: which text to blank out so that parsing can go on.
  The parser's stack says which list of items (statements of a block, fields
  of an entity, items of a task, cases of a match...) it was in when it
  stopped and where the broken item began; the item is skipped up to the
  next point where an item can start again: a line that starts with a word
  in the broken item's column (outside brackets the skipped text opened), or
  the ``}`` that closes the list. When what follows shows the skip went wrong
  (the parser is back at the top level, or a bracket opened before the skip
  is never closed), the rest of the declaration is not reported. The blanked
  text keeps its newlines, so every later position stays right.

Both only read the parser's state (its state and value stacks and the
parse table), never change it, so they work whatever way the parser was
built. Positions here are offsets into the text that was parsed (one
declaration); nodes already built carry absolute spans, shifted by
``pos_delta``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedInput, UnexpectedToken

from worldspec.dsl import nodes as n
from worldspec.dsl.syntax_messages import describe_token as describe

__all__ = ["Finding", "explain", "recovery_span", "follows_from_skip", "neutralise", "blank",
           "MAX_ERRORS_PER_DECLARATION"]

#: A declaration reports at most this many syntax errors; the rest of it is skipped.
MAX_ERRORS_PER_DECLARATION = 10

#: Grammar rules that are items of a list in braces: a parser state that can go on to
#: one of them is a place where an item may start (LALR gotos are named by rule).
_ITEM_RULES = frozenset({"let_stmt", "field", "state_item", "config_item", "match_case",
                         "enum_member", "variant", "solution_call", "given"})

_OPEN = {"LPAR": "(", "LSQB": "[", "LBRACE": "{"}
_CLOSE_OF = {"(": ")", "[": "]", "{": "}"}
_CLOSER_TERMINAL = {")": "RPAR", "]": "RSQB", "}": "RBRACE"}
_DECLARATIONS = {"TOOL": "tool", "FN": "fn", "ENTITY": "entity", "RECORD": "record",
                 "ENUM": "enum", "UNION": "union", "TASK": "task", "STATE": "state",
                 "CONFIG": "config"}
_CONSTRUCTS = {"IF": "if", "ELSE": "else", "FOR": "for", "WHILE": "while", "MATCH": "match",
               "CASE": "case", "SOLUTION": "solution", "GIVEN": "given"}
#: Tokens after which an expression has ended (so `if` there is Python's conditional).
_OPERAND_END = frozenset({"NAME", "INT", "FLOAT", "STRING", "FSTRING", "RPAR", "RSQB",
                          "TRUE", "FALSE", "NONE"})
#: Methods a Python programmer calls for their effect; here statements do that.
_MUTATORS = frozenset({"append", "add", "extend", "insert", "remove", "pop", "discard",
                       "clear", "update", "sort", "reverse", "setdefault"})

#: Tokens for the scan that looks for a place to resume: strings (an unclosed one runs to
#: the end of its line), comments, brackets and words; anything else is one character.
_SCAN = re.compile(r'''
    (?P<str>"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)|f?"(?:[^"\\\n]|\\.)*"?)
  | (?P<comment>\#[^\n]*)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<newline>\n)
  | (?P<space>[ \t\f\r]+)
  | (?P<other>.)
''', re.VERBOSE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class Finding:
    """A syntax error to report, with offsets into the parsed text."""

    code: str
    message: str
    start: int
    end: int
    hints: tuple[str, ...] = ()
    #: (start, end, message) of secondary locations
    related: tuple[tuple[int, int, str], ...] = field(default=())


# ------------------------------------------------------------ the parser's stack
def _stacks(exc: UnexpectedInput) -> tuple[list[Any], list[Any], dict[Any, Any]] | None:
    """The state stack, value stack and parse table at the error (None if unknown)."""
    parser = getattr(exc, "interactive_parser", None)
    state = getattr(parser, "parser_state", None)
    if state is None:
        return None
    return state.state_stack, state.value_stack, state.parse_conf.states


def _container(state_stack: Sequence[Any], values: Sequence[Any], states: dict[Any, Any]) -> int:
    """Index into the value stack where the innermost open item list's items begin, or -1.

    ``state_stack[i]`` is the state after ``value_stack[i - 1]`` was taken, so
    when it is a place where an item may start, the items taken since are
    ``value_stack[i:]`` (the broken one among them). A list whose closing ``}``
    was taken already (the parser had not yet reduced it) is no longer open.
    """
    closers = 0
    for i in range(len(state_stack) - 1, 0, -1):
        value = values[i] if i < len(values) else None
        if isinstance(value, Token) and value.type == "RBRACE":
            closers += 1
        elif isinstance(value, Token) and value.type == "LBRACE" and closers:
            closers -= 1
        if not closers and not _ITEM_RULES.isdisjoint(states[state_stack[i]]):
            return i
    return -1


def _start(value: Any, pos_delta: int) -> int | None:
    """Where a stack value begins in the parsed text, if it has a position."""
    if isinstance(value, Token):
        return value.start_pos
    if isinstance(value, n.Node):
        return value.span.start - pos_delta
    if isinstance(value, (list, tuple)):
        children: Sequence[Any] = value
    elif isinstance(value, Tree):
        children = value.children
    else:
        return None
    for child in children:
        found = _start(child, pos_delta)
        if found is not None:
            return found
    return None


def _first_start(values: Sequence[Any], pos_delta: int) -> int | None:
    for value in values:
        found = _start(value, pos_delta)
        if found is not None:
            return found
    return None


def _open_brackets(values: Sequence[Any]) -> list[tuple[int, Token]]:
    """Brackets taken and not closed: (stack index, token), outermost first.

    A reduced rule took its brackets with it; a closer still on the stack (its
    rule not reduced yet) closes the opener before it.
    """
    opened: list[tuple[int, Token]] = []
    for i, v in enumerate(values):
        if not isinstance(v, Token):
            continue
        if v.type in _OPEN:
            opened.append((i, v))
        elif v.type in _CLOSER_TERMINAL.values() and opened:
            opened.pop()
    return opened


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _error_offset(exc: UnexpectedInput, text: str) -> int:
    if isinstance(exc, UnexpectedToken):
        if exc.token.type == "$END":
            return len(text)
        return exc.token.start_pos or 0
    return getattr(exc, "pos_in_stream", 0) or 0


# ------------------------------------------------------------------- recovery
def recovery_span(exc: UnexpectedInput, text: str, pos_delta: int) -> tuple[int, int] | None:
    """The part of ``text`` to skip so the parse can resume after ``exc``, or None.

    None means there is no safe place to resume in this declaration (the error
    is in its header, or no item starts again before its end).
    """
    stacks = _stacks(exc)
    if stacks is None:
        return None
    state_stack, values, states = stacks
    first = _container(state_stack, values, states)
    if first < 0:
        return None
    at = _error_offset(exc, text)
    if at >= len(text):
        return None
    partial = values[first:]
    begin = _first_start(partial, pos_delta)
    if begin is None or begin > at:
        begin = at
    opened = [tok.value for _, tok in _open_brackets(partial)]
    # Items of a list start in the column where the broken one's line starts, unless
    # that line is the one that opens the list: then the first item on a later line
    # (right of the opening line) shows the column.
    line_start = text.rfind("\n", 0, begin) + 1
    column: int | None = len(text[line_start:begin]) - len(text[line_start:begin].lstrip()) + 1
    opener = _list_opener(values[:first])
    if opener is not None and (opener.start_pos or 0) >= line_start:
        column = None
    indent = len(text[line_start:begin]) - len(text[line_start:begin].lstrip()) + 1
    resume = _resume_point(text, at, opened, column, indent, skip_first=begin == at)
    if resume is None or resume <= begin:
        return None
    return begin, resume


def follows_from_skip(exc: UnexpectedInput, skipped_from: int) -> bool:
    """Whether an error met after skipping text from ``skipped_from`` is its consequence.

    Two signs: the parser is back at the top level before the declaration's
    text ends (the skip took a `}` that was not the list's), or the text ends
    while a bracket opened before the skip is still open (the skip took its
    `}`). Either is not a mistake of the file's own, so it is not reported.
    """
    if not isinstance(exc, UnexpectedToken):
        return False
    if {"TOOL", "ENTITY", "TASK"} <= set(exc.expected):
        return True
    stacks = _stacks(exc)
    if exc.token.type != "$END" or stacks is None:
        return False
    return any((tok.start_pos or 0) < skipped_from for _, tok in _open_brackets(stacks[1]))


def _list_opener(values: Sequence[Any]) -> Token | None:
    """The `{` that opened the innermost list (the last one still open below it)."""
    depth = 0
    for value in reversed(values):
        if isinstance(value, Token) and value.type == "RBRACE":
            depth += 1
        elif isinstance(value, Token) and value.type == "LBRACE":
            if not depth:
                return value
            depth -= 1
    return None


def _resume_point(text: str, at: int, opened: list[str], column: int | None, indent: int,
                  skip_first: bool) -> int | None:
    """The first offset from ``at`` where an item of the list may start again.

    ``opened`` are the brackets the broken item opened before the error. A
    ``}`` that closes the list ends the skip; so does a line that starts with a
    word in the broken item's ``column``, outside any bracket opened after the
    error (further right it continues the item; further left the list has
    ended without its `}`, and there is no safe place to resume). When the
    column is not known (``None``: the broken item is on the line that opens
    the list, whose indentation is ``indent``), the first such line right of
    ``indent`` shows it.
    """
    stack = list(opened)
    base = len(stack)
    swallowed = False  # an unclosed string ran to the end of its line
    line_start = text.rfind("\n", 0, at) + 1
    at_line_start = not text[line_start:at].strip()
    first = True
    for m in _SCAN.finditer(text, at):
        kind = m.lastgroup
        start = m.start()
        if kind == "newline":
            at_line_start = True
            line_start = m.end()
            continue
        if kind in ("space", "comment"):
            continue
        if kind == "str" and not _CLOSED_STRING.fullmatch(m.group()):
            swallowed = True
        candidate = not (first and skip_first)
        first = False
        starts_line = at_line_start
        at_line_start = False
        if kind == "open":
            # The unexpected token itself, a `{` in the middle of a line, is a stray
            # (`require x > 0{ else ...`): counting it would pair it with a real `}`.
            if not (start == at and m.group() == "{" and not _ENDS_LINE.match(text, m.end())):
                stack.append(m.group())
            continue
        if kind == "close":
            ch = m.group()
            if ch == "}":
                if "{" not in stack:
                    # On a line of its own, left of the item, it closes the list; in
                    # the item's column after an unclosed string it is the item's own
                    # `}` (its `{` was in the string), so parsing resumes after it. At the
                    # end of a line it closes the list too; one in the middle of a
                    # line (`reverse}: true)`) or further right is a stray, skipped.
                    if not candidate:
                        continue
                    if starts_line:
                        at_column = start - line_start + 1
                        if at_column < (indent + 1 if column is None else column):
                            return start
                        if at_column == column and not swallowed:
                            return start
                        if at_column == column and not _ELSE.match(text, m.end()):
                            return m.end()  # (after `} else {` the item goes on)
                    elif _ENDS_BLOCK.match(text, m.end()):
                        return start
                    continue
                while stack.pop() != "{":
                    pass  # brackets closed only implicitly: their closer is missing
            else:
                want = "(" if ch == ")" else "["
                j = len(stack) - 1
                while j >= 0 and stack[j] not in (want, "{"):
                    j -= 1
                if j >= 0 and stack[j] == want:
                    del stack[j:]
            base = min(base, len(stack))
            continue
        if (kind == "word" and candidate and starts_line and len(stack) <= base
                and m.group() not in _CONTINUATIONS):
            at_column = start - line_start + 1
            if column is None:
                return start if at_column > indent else None
            if at_column == column:
                return start
            if at_column < column:
                return None  # an outer list goes on: the closing `}` went missing or astray
    return None


_CLOSED_STRING = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|f?"(?:[^"\\\n]|\\.)*"', re.DOTALL)
#: Words that go on an expression or a statement, so a line they begin is no new item.
_CONTINUATIONS = frozenset({"or", "and", "in", "not", "then", "else", "as", "into", "from",
                            "to", "matching", "by", "weight", "changes"})
_ENDS_LINE = re.compile(r"[ \t\f\r]*(?:$|\n|#)")
_ELSE = re.compile(r"[ \t\f\r]*else\b")
#: What may follow a `}` that closes a block on its line: nothing, a comment, `}`, `else`.
_ENDS_BLOCK = re.compile(r"[ \t\f\r]*(?:$|\n|#|\}|else\b)")


def blank(text: str, start: int, end: int) -> str:
    """``text`` with ``[start, end)`` turned into spaces (newlines kept)."""
    return text[:start] + re.sub(r"[^\n]", " ", text[start:end]) + text[end:]


def neutralise(text: str, start: int, end: int) -> str | None:
    """Replace a malformed literal or expression by a harmless one of the same length.

    A bad string becomes a string of spaces, a bad regular expression ``/x ... /``,
    anything else (a number, an expression) ``0``: each stands where the original
    stood, so the rest of the declaration parses as written. None if it cannot.
    """
    piece = text[start:end]
    if len(piece) < 1:
        return None
    if piece.startswith('"""') and piece.endswith('"""') and len(piece) >= 6:
        inner = re.sub(r"[^\n]", " ", piece[3:-3])
        new = '"""' + inner + '"""'
    elif piece.startswith(('"', 'f"')) and piece.endswith('"') and "\n" not in piece:
        new = '"' + " " * (len(piece) - 2) + '"'
    elif piece.startswith("/") and piece.endswith("/") and len(piece) >= 3:
        new = "/x" + " " * (len(piece) - 3) + "/"
    else:
        new = "0" + re.sub(r"[^\n]", " ", piece[1:])
    return text[:start] + new + text[end:]


# ------------------------------------------------------- errors named in words
@dataclass(frozen=True, slots=True)
class _Error:
    """A syntax error and the parser's state when it happened."""

    exc: UnexpectedToken
    text: str
    values: list[Any]
    state_stack: list[Any]
    states: dict[Any, Any]
    pos_delta: int
    line_delta: int
    next_declaration: str | None
    last: Token | None

    @property
    def token(self) -> Token:
        token: Token = self.exc.token
        return token

    def line(self, offset: int) -> int:
        """The line number in the file of an offset into the parsed text."""
        return _line_col(self.text, offset)[0] + self.line_delta

    def source(self, value: Any) -> str:
        """The text a stack value was parsed from."""
        if isinstance(value, n.Node):
            return self.text[value.span.start - self.pos_delta:
                             value.span.end - self.pos_delta].strip()
        if isinstance(value, Token):
            return str(value)
        return ""


def explain(exc: UnexpectedInput, text: str, pos_delta: int, line_delta: int,
            next_declaration: str | None) -> Finding | None:
    """A diagnostic in the language's own words for ``exc``, if it is a known mistake.

    ``next_declaration`` is the word that starts the next declaration when the
    parsed text stops before the end of the file (None at the end of the file).
    """
    stacks = _stacks(exc)
    if stacks is None or not isinstance(exc, UnexpectedToken):
        return None
    state_stack, values, states = stacks
    error = _Error(exc, text, values, state_stack, states, pos_delta, line_delta,
                   next_declaration, _last_token(exc))
    for find in _FINDERS:
        found = find(error)
        if found is not None:
            return found
    return None


def _last_token(exc: UnexpectedInput) -> Token | None:
    parser = getattr(exc, "interactive_parser", None)
    state = getattr(getattr(parser, "lexer_thread", None), "state", None)
    token = getattr(state, "last_token", None)
    return token if isinstance(token, Token) else None


def _unclosed_bracket(e: _Error) -> Finding | None:
    """WS109: the text ends, or another closer comes, while a bracket is still open."""
    opened = _open_brackets(e.values)
    if not opened:
        return None
    index, bracket = opened[-1]
    ch = bracket.value
    closer = _CLOSE_OF[ch]
    start = bracket.start_pos or 0
    what = _what_opens(e.values, index, e.line_delta)
    token = e.token
    if token.type == "$END":
        if e.next_declaration is None:
            end = len(e.text.rstrip())
            where = "before the end of the file"
            related = (end, end, "the file ends here")
        else:
            end = len(e.text)
            where = (f"before line {e.line(end)}, where `{e.next_declaration}` starts the "
                     "next declaration")
            related = (end, end, "the next declaration starts here")
        return Finding("WS109", f"'{ch}' {what} is never closed".replace("  ", " "), start,
                       start + 1, hints=(f"add '{closer}' {where}",), related=(related,))
    if token.type in _CLOSER_TERMINAL.values() and token.value != closer \
            and _CLOSER_TERMINAL[closer] in e.exc.expected:
        at = token.start_pos or 0
        return Finding("WS109", f"'{ch}' {what} is never closed: '{token.value}' comes "
                       "first".replace("  ", " "), start, start + 1,
                       hints=(f"add '{closer}' before the '{token.value}' on line "
                              f"{e.line(at)}",),
                       related=((at, at + 1, f"'{token.value}' found here"),))
    at = token.start_pos or 0
    line_start = e.text.rfind("\n", 0, at) + 1
    if (ch != "{" and _CLOSER_TERMINAL[closer] in e.exc.expected
            and not e.text[line_start:at].strip() and e.text.count("\n", start, at) > 0):
        # The line ended inside the bracket and the next one starts something new.
        previous = e.text.rfind("\n", 0, line_start - 1) + 1
        return Finding("WS109", f"'{ch}' {what} is never closed".replace("  ", " "), start,
                       start + 1,
                       hints=(f"add '{closer}' at the end of line {e.line(previous)}",),
                       related=((at, at + len(str(token)),
                                 f"{describe(token)} on the next line starts something new"),))
    return None


def _what_opens(values: list[Any], index: int, line_delta: int) -> str:
    """``of tool 'send'``, ``of the `if` on line 4 (in tool 'send')``, ``of a map``."""
    declaration = ""
    for i in range(index):
        value = values[i]
        if isinstance(value, Token) and value.type in _DECLARATIONS:
            declaration = _DECLARATIONS[value.type]
            following = values[i + 1] if i + 1 < len(values) else None
            if isinstance(following, Token) and following.type == "NAME":
                declaration += f" '{following.value}'"
    inside = f" (in {declaration})" if declaration else ""
    before = values[index - 1] if index > 0 else None
    bracket = values[index].value
    if bracket != "{":
        if isinstance(before, (n.NameRef, n.Attribute)) and bracket == "(":
            name = before.name if isinstance(before, n.NameRef) else before.name.name
            return f"of the call to '{name}'"
        if isinstance(before, n.Node):
            return "of the call" if bracket == "(" else "of the index"
        return "of a list" if bracket == "[" else ""
    if isinstance(before, Token) and before.type in ("EQUAL", "COMMA", "LPAR", "LSQB",
                                                     "COLON", "LBRACE"):
        return "of a map" + inside
    for i in range(index - 1, -1, -1):
        value = values[i]
        if not isinstance(value, Token):
            continue
        if value.type in _DECLARATIONS:
            return f"of {declaration}" if declaration else ""
        if value.type in _CONSTRUCTS:
            line = (value.line or 1) + line_delta
            return f"of the `{_CONSTRUCTS[value.type]}` on line {line}{inside}"
    return f"of {declaration}" if declaration else ""


def _python_conditional(e: _Error) -> Finding | None:
    """WS110: ``a if c else b`` (Python's order) instead of ``if c then a else b``."""
    token = e.token
    values = e.values
    if token.type == "IF" and e.last is not None and e.last.type in _OPERAND_END:
        return _conditional_finding(e.text, token.start_pos or 0,
                                    e.source(values[-1]) if values else "")
    if token.type == "ELSE" and len(values) >= 2:
        # `let x = a if c else b`: the statement ended at `a` and an `if` statement began
        # on the same line; its block is missing because `else` follows its condition.
        if_tok = values[-2]
        if not (isinstance(if_tok, Token) and if_tok.type == "IF"):
            return None
        at = if_tok.start_pos or 0
        head = e.text[e.text.rfind("\n", 0, at) + 1:at].rstrip()
        if not head or head.endswith(("{", "else", "}")):
            return None
        statement = values[-3] if len(values) >= 3 else None
        if isinstance(statement, Tree) and statement.children:
            statement = statement.children[-1]  # the statements so far, as one list
        value = getattr(statement, "value", None)
        return _conditional_finding(e.text, at, e.source(value))
    return None


def _conditional_finding(text: str, at: int, a: str) -> Finding:
    end = text.find("\n", at)
    rest = text[at + 2:len(text) if end < 0 else end]
    m = re.match(r"\s*(?P<c>.+?)\s+else\s+(?P<b>[^,)\]}{]+)", rest)
    hint = "write it as `if c then a else b`"
    if m is not None and a and "\n" not in a and len(a) + len(m.group()) < 120:
        hint = f"write `if {m.group('c').strip()} then {a} else {m.group('b').strip()}`"
    return Finding("WS110", "Python's conditional expression `a if c else b` is written "
                   "`if c then a else b` here", at, at + 2, hints=(hint,))


def _quantifier(e: _Error) -> Finding | None:
    """WS111: a quantifier as an operand (`a or any x in xs: c`) or called like Python's."""
    token, last = e.token, e.last
    if token.type == "QUANT" and last is not None and last.type not in _OPERAND_END:
        at = token.start_pos or 0
        op, word = str(last), str(token)
        return Finding("WS111", f"a quantifier cannot be the operand of '{op}'", at,
                       at + len(word),
                       hints=(f"put it in parentheses: `{op} ({word} x in xs: condition)`; a "
                              "quantifier's condition reaches as far right as it can",))
    at = token.start_pos or 0
    line_start = e.text.rfind("\n", 0, at) + 1
    m = _QUANTIFIER_AFTER_OPERATOR.search(e.text, line_start, at)
    if m is not None and token.type in ("IN", "NAME"):
        # After an operator the lexer reads `any` as a name (a quantifier cannot stand
        # there), so the error comes a word or two later.
        op = m.group("word") or m.group("symbol")
        word, var = m.group("quant"), m.group("var") or str(token)
        return Finding("WS111", f"a quantifier cannot be the operand of '{op}'",
                       m.start("quant"), m.end("quant"),
                       hints=(f"put it in parentheses: `{op} ({word} {var} in ...: "
                              "condition)`; a quantifier's condition reaches as far right "
                              "as it can",))
    if token.type == "LPAR" and last is not None and last.type == "QUANT":
        word = str(last)
        start = last.start_pos or 0
        return Finding("WS111", f"'{word}' is a quantifier, not a function", start,
                       start + len(word),
                       hints=(f"write `{word} x in xs: condition` (Python's "
                              f"`{word}(condition for x in xs)`)",))
    return None


_QUANTIFIER_AFTER_OPERATOR = re.compile(
    r"(?:\b(?P<word>or|and|not)|(?P<symbol>==|!=|<=|>=|<|>|\?\?|\+|-|\*|/|%))\s*"
    r"\b(?P<quant>all|any|exists)\s+(?:(?P<var>[A-Za-z_][A-Za-z0-9_]*)\s*)?$")


@cache
def _slice_forms() -> tuple[str, ...]:
    """The slice forms the grammar accepts (asked of the parser, so this stays true)."""
    from worldspec.dsl.parser import parse_expression  # the parser imports this module

    forms = []
    for form in ("xs[a:b]", "xs[a:]", "xs[:b]", "xs[a:b:c]"):
        try:
            parse_expression(form)
        except Exception:  # any failure means the form does not parse
            continue
        forms.append(form)
    return tuple(forms)


def _slice(e: _Error) -> Finding | None:
    """WS112: a ``:`` inside ``xs[...]`` where the grammar takes no slice of that form."""
    if e.token.type != "COLON":
        return None
    opened = _open_brackets(e.values)
    if not opened or opened[-1][1].type != "LSQB":
        return None
    index, bracket = opened[-1]
    if index == 0 or not isinstance(e.values[index - 1], n.Node):
        return None  # a list literal, not an index
    start = bracket.start_pos or 0
    close = e.text.find("]", start)
    end = close + 1 if 0 <= close and "\n" not in e.text[start:close] \
        else (e.token.end_pos or start + 1)
    forms = _slice_forms()
    if forms:
        message = "this slice form is not supported"
        written = ", ".join(f"`{f}`" for f in forms)
        step = "" if "xs[a:b:c]" in forms else "; there is no step (`xs[a:b:c]`)"
        hint = f"a slice is written {written}{step}"
    else:
        message = "there is no slicing: `[...]` takes one index or key"
        hint = ("take the elements you need with a comprehension, e.g. "
                "`[xs[i] for i in range(a, b)]`")
    return Finding("WS112", message, start, end, hints=(hint,))


def _bare_call(e: _Error) -> Finding | None:
    """WS113: ``f(x)`` alone as a statement."""
    first = _container(e.state_stack, e.values, e.states)
    if first < 0 or first != len(e.values) - 1 \
            or "let_stmt" not in e.states[e.state_stack[first]]:
        return None
    call = e.values[first]
    if not isinstance(call, n.Call) or "EQUAL" not in e.exc.expected:
        return None
    func = call.func
    if isinstance(func, n.Attribute) and func.name.name in _MUTATORS:
        hint = ("lists, sets and maps change through statements: `append x to xs`, "
                "`remove x from xs`, `m[k] = v`, `xs = sorted(xs)`")
    else:
        hint = ("use its result: `let r = f(...)`, `return f(...)` or `require f(...) else "
                "\"...\"`; for a call made only for its effect (`next(ids)`, a `random_*` "
                "draw) write `let _ = f(...)`")
    return Finding("WS113", "a call on its own is not a statement: functions and methods "
                   "change nothing, so its result would be lost",
                   call.span.start - e.pos_delta, call.span.end - e.pos_delta, hints=(hint,))


_FINDERS: tuple[Callable[[_Error], Finding | None], ...] = (
    _bare_call, _python_conditional, _quantifier, _slice, _unclosed_bracket)
