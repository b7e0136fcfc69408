"""Lark terminal names in words, so no syntax error ever shows ``RPAR`` or ``NAME``."""

from __future__ import annotations

from collections.abc import Iterable

from lark import Token

__all__ = ["TERMINAL_WORDS", "describe_expected", "describe_token"]

#: Terminal name -> how a person says it. Order matters: it is the order of mention.
TERMINAL_WORDS: dict[str, str] = {
    "NAME": "a name",
    "STRING": "a string",
    "FSTRING": "an f-string",
    "INT": "a number",
    "FLOAT": "a number",
    "REGEX": "a /regular expression/",
    "COLON": "':'",
    "COMMA": "','",
    "EQUAL": "'='",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "DOT": "'.'",
    "RANGE": "'..'",
    "OPTIONAL": "'?'",
    "MINUS": "'-'",
    "__ANON_0": "'->'",
    "KEY": "'key'",
    "QUANT": "'all', 'any' or 'exists'",
    "NOTHING": "'nothing'",
    "KEEP": "'keep'",
    "PRIVATE": "'private'",
    "FREEFORM": "'freeform'",
    "AUG_OP": "'+='",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*' or '/'",
    "$END": "the end of the file",
}


def _word(terminal: str) -> str:
    if terminal in TERMINAL_WORDS:
        return TERMINAL_WORDS[terminal]
    if terminal.startswith("__") or terminal.isupper() is False:
        return ""
    # Keyword terminals are named after the keyword (e.g. TOOL, ELSE).
    return f"'{terminal.lower()}'"


def describe_expected(expected: Iterable[str]) -> str:
    """``{'NAME', 'COLON'}`` -> ``"a name or ':'"``; well-known sets get a single phrase."""
    names = set(expected)
    if {"NAME", "INT", "STRING", "LPAR"} <= names and "LSQB" in names:
        return "an expression"
    if {"TOOL", "ENTITY", "TASK"} <= names:
        return "a declaration ('world', 'entity', 'record', 'state', 'tool', 'task', ...)"
    if names and names <= {"NAME"}:
        return "a name"
    words: list[str] = []
    for term in sorted(names, key=lambda t: (t not in TERMINAL_WORDS, t)):
        word = _word(term)
        if word and word not in words:
            words.append(word)
    if not words:
        return ""
    if len(words) > 6:
        words = [*words[:6], "..."]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def describe_token(tok: Token) -> str:
    """The token as the user wrote it."""
    if tok.type == "$END":
        return "the end of the file"
    text = str(tok)
    if len(text) > 30:
        text = text[:27] + "..."
    return f"'{text}'"
