"""Which words of a task's instruction look like a key of the world's tables (for WS615).

An instruction that names an id no table holds (``order #W9999999`` in a shop whose orders
are ``#W0000001``...) probably refers to data the task does not have. Instructions are full
of numbers that are no ids, though: dates (``2031-02-28``, ``June 15, 2026``), times,
amounts (``150.00``, ``$40``, ``27,800 km``), ordinals (``1st``), ranges (``July 20-22``),
phone numbers and e-mail addresses. Such spans are left out first (:data:`NOT_IDS`); then a
word is taken for a key only when it has the shape of one (:func:`key_shape`): a word with a
letter head (``#W``, ``L``, ``CU``) when some key has that head, a word that starts with a
digit only when some key has exactly its pattern of digits and letters (``101`` for a room
``205``, ``4444-DEF`` for a plate ``1234-ABC``), since a bare number is far more often an
amount or a year than an id.

An unknown id written like one of the spans left out (in a world whose keys are dates, say)
goes unreported: the rule is a warning, and it prefers silence to noise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["NOT_IDS", "key_shape", "words_like_keys"]

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"

#: What an instruction says that is no id, each with what it is (tried in this order: a
#: span taken by one is not read by the next).
NOT_IDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (what, re.compile(pattern, re.IGNORECASE)) for what, pattern in (
        ("an e-mail address", r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
        ("a web address", r"\bhttps?://\S+"),
        ("a phone number", r"\+\d{1,3}(?:[ .-]?\(?\d+\)?)+"),
        ("a date or a time in ISO form", r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?"),
        ("a month and a day or a year",
         rf"\b{_MONTH}\s+(?:{_ORDINAL}(?:,?\s+\d{{4}})?|\d{{4}})\b"),
        ("a day and a month", rf"\b{_ORDINAL}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?\b"),
        ("a time of day", r"\b\d{1,2}(?::\d{2}){1,2}|\b\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)(?!\w)"),
        ("an amount of money", r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?"
                               r"|\b\d[\d,]*(?:\.\d+)?\s?(?:USD|EUR|GBP|dollars|euros|pounds)\b"),
        ("a percentage", r"\b\d+(?:\.\d+)?\s?%"),
        ("a number with thousands separators or decimals", r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?"
                                                           r"|\b\d+\.\d+"),
        ("an ordinal", r"\b\d+(?:st|nd|rd|th)\b"),
        ("a range of numbers", r"\b\d+\s?[-\u2013]\s?\d+\b"),
    ))

#: a word that may be an id: an optional letter head, then a digit and at least two more
_WORD = re.compile(r"#?[A-Za-z]{0,6}[0-9][A-Za-z0-9_-]{2,}")
_DIGITS_AND_AFTER = re.compile(r"[0-9].*$")


def key_shape(key: str) -> str:
    """What the keys of one table share: the head before the first digit (``#W``, ``MSG``,
    ``U``), or, for a key that starts with a digit, its pattern (``101`` is ``999``,
    ``4444-DEF`` is ``9999-AAA``)."""
    head = _DIGITS_AND_AFTER.sub("", key)
    if head:
        return head
    return "".join("9" if ch.isdigit() else "A" if ch.isalpha() else ch for ch in key)


def words_like_keys(text: str, shapes: Iterable[str]) -> list[str]:
    """The words of ``text`` with the shape of a key in ``shapes`` (see :func:`key_shape`),
    in order, after the spans of :data:`NOT_IDS` are left out."""
    wanted = set(shapes)
    for _, pattern in NOT_IDS:
        text = pattern.sub(" ", text)
    words = (word.rstrip("-_") for word in _WORD.findall(text))
    return [word for word in words if any(ch.isdigit() for ch in word) and
            key_shape(word) in wanted]
