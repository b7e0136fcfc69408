"""The LALR loop that parses a text which has no syntax error, over lark's own tables.

Lark's loop (``ParserState.feed_token``) is general: per token it looks up five attributes,
unpacks an ``(action, argument)`` pair, compares the action with ``Shift``, hashes a ``Rule``
object to find its callback and asserts twice. This module turns lark's parse table, once,
into one dictionary per state whose values say everything the loop needs:

- an ``int``: shift the token and go to that state (gotos on a rule's name are ints too);
- a ``(size, name, rule)`` tuple: reduce by rule number ``rule`` (its place in lark's rule
  list), of ``size`` symbols, then go to the state the goto on ``name`` gives.

The table is plain data (ints, strings, tuples), so it is cached as it is; the callbacks,
lark's child filters around the transformer's methods, are made per process, one per rule
number. The loop makes nothing of its own: the tokens come from the same lexer and the nodes
from the same callbacks, so a text it parses gives exactly what lark gives. It does not report
errors: when a token has no action (a syntax error) it raises :class:`Stuck`, and the caller
parses the text again through lark, whose exceptions, interactive parser and expected sets
the error messages and the recovery are built on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from lark import Token

__all__ = ["LoopState", "Stuck", "Table", "compile_table", "drive"]

#: per state: terminal or rule name -> next state (shift, goto) or (size, name, rule number)
Table = list[dict[str, Any]]


class Stuck(Exception):
    """The loop met a token the table has no action for: the text has a syntax error."""


def compile_table(states: Mapping[int, Mapping[str, tuple[Any, Any]]],
                  rules: Sequence[Any]) -> Table:
    """Lark's ``parse_table.states`` (state -> symbol -> (Shift|Reduce, argument)) as a
    :data:`Table` indexed by state number; ``rules`` numbers the rules (lark's rule list)."""
    reductions = {rule: (len(rule.expansion), rule.origin.name, index)
                  for index, rule in enumerate(rules)}
    table: Table = [{} for _ in range(max(states) + 1)]
    for state, actions in states.items():
        row = table[state]
        for symbol, (action, argument) in actions.items():
            row[symbol] = argument if action.name == "Shift" else reductions[argument]
    return table


class LoopState:
    """What the lexer reads of the parser: its state stack (the top is the current state)."""

    __slots__ = ("state_stack",)

    def __init__(self, start: int) -> None:
        self.state_stack = [start]


def drive(table: Table, callbacks: Sequence[Callable[[list[Any]], Any]], state: LoopState,
          tokens: Iterator[Token], end_state: int, owner: Any,
          end: Callable[[Token | None], Token]) -> Any:
    """Shift and reduce ``tokens``, then the ``$END`` token ``end(last_token)`` makes, from
    ``state``; the value of the start rule.

    ``callbacks[rule]`` makes a reduction's value from its children; ``owner.current`` is set
    to the raw children first (the transformer takes spans from them).
    """
    state_stack = state.state_stack
    value_stack: list[Any] = []
    push_state = state_stack.append
    push_value = value_stack.append
    for token in _and_end(tokens, end):
        kind = token.type
        while True:
            action = table[state_stack[-1]].get(kind)
            if action.__class__ is int:
                push_state(action)
                push_value(token)
                break
            if action is None:
                raise Stuck(kind)
            size, name, rule = action
            if size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            owner.current = children
            value = callbacks[rule](children)
            goto = table[state_stack[-1]][name]
            # only the start rule, reduced before `$END`, leads to the end state
            if goto == end_state and kind == "$END":
                return value
            push_state(goto)
            push_value(value)
    raise Stuck("$END")  # the tables shifted `$END`: not a table lark makes


def _and_end(tokens: Iterator[Token], end: Callable[[Token | None], Token]) -> Iterator[Token]:
    """``tokens``, then the ``$END`` token made from the last of them."""
    last: Token | None = None
    for last in tokens:
        yield last
    yield end(last)
