"""The rule for comparing an original's values with a world's: exactly.

"Values are compared exactly: an int and a float differ (1 vs 1.0), tuples and lists differ,
sets are compared as sets, dict keys keep their type ("1" and 1 are different keys); a value
with no JSON form (an object) is compared by its repr()."

The original's values cross from the sandbox child in a tagged JSON form that keeps their
types (:func:`decoded` reads it, :func:`encoded` writes it for reports): JSON's own values
as they are (``1`` and ``1.0`` stay an int and a float), and

- ``{"$tuple": [...]}``, ``{"$set": [...]}``, ``{"$frozenset": [...]}``;
- ``{"$dict": [[key, value], ...]}`` for a dict with a key that is not text, or text that
  starts with ``$`` (so that no dict of the original reads as a tag);
- ``{"$float": "nan"}`` (``"inf"``, ``"-inf"``);
- ``{"$repr": "Point(x=1, y=2)"}`` for a value with no JSON form (:class:`Repr`).

The world's values are read as the world holds them (:func:`world_value`): its maps keep
their keys' types, its numbers their kind, a record is the object of its JSON fields, a
list or a set is a list (a world has no tuples; its set is a list without repeats). The
original's set agrees with a world's list that holds the same items, each once, in any
order; the original's :class:`Repr` agrees with a world's text equal to it.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["DecodeProblem", "Repr", "agree", "decoded", "encoded", "shown", "typed_key",
           "world_value"]


@dataclass(frozen=True)
class Repr:
    """A value of the original with no JSON form, as its ``repr()``."""

    text: str

    def __repr__(self) -> str:
        return self.text


class DecodeProblem(ValueError):
    """A tagged value the child cannot have sent."""


# ------------------------------------------------------------------ the wire
def _collection(tag: str) -> Callable[[list[Any]], Any]:
    return {"$tuple": tuple, "$set": set, "$frozenset": frozenset}[tag]


def decoded(value: Any) -> Any:
    """The original's value from its tagged JSON form (see the module docstring)."""
    if isinstance(value, list):
        return [decoded(v) for v in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        (tag, inner), = value.items()
        if isinstance(tag, str) and tag.startswith("$"):
            return _untagged(tag, inner)
    return {k: decoded(v) for k, v in value.items()}


def _untagged(tag: str, inner: Any) -> Any:
    if tag in ("$tuple", "$set", "$frozenset") and isinstance(inner, list):
        try:
            return _collection(tag)([decoded(v) for v in inner])
        except TypeError:
            raise DecodeProblem(f"{tag} holds an item that cannot be in a set") from None
    if tag == "$dict" and isinstance(inner, list) \
            and all(isinstance(p, list) and len(p) == 2 for p in inner):
        try:
            return {decoded(k): decoded(v) for k, v in inner}
        except TypeError:
            raise DecodeProblem("$dict has a key that cannot be a key") from None
    if tag == "$float" and inner in ("nan", "inf", "-inf"):
        return float(inner)
    if tag == "$repr" and isinstance(inner, str):
        return Repr(inner)
    raise DecodeProblem(f"an unknown or malformed tag {tag}")


def encoded(value: Any) -> Any:
    """``value`` (the original's, decoded, or the world's) in the tagged JSON form."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, Repr):
        return {"$repr": value.text}
    if isinstance(value, list):
        return [encoded(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encoded(v) for v in value]}
    if isinstance(value, (set, frozenset)):
        tag = "$set" if isinstance(value, set) else "$frozenset"
        return {tag: sorted((encoded(v) for v in value), key=_sort_key)}
    if isinstance(value, dict):
        if all(isinstance(k, str) and not k.startswith("$") for k in value):
            return {k: encoded(v) for k, v in value.items()}
        return {"$dict": [[encoded(k), encoded(v)] for k, v in value.items()]}
    return {"$repr": repr(value)}


def _sort_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# ----------------------------------------------------------------- the world
def world_value(value: Any) -> Any:
    """A world's runtime value as the world holds it (see the module docstring)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return world_value(value.value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [world_value(v) for v in value]
    if isinstance(value, dict):
        return {world_value(k): world_value(v) for k, v in value.items()}
    fields = getattr(type(value), "JSON_FIELDS", None)
    export = getattr(value, "export", None)
    if fields is not None and callable(export):
        attributes = {entry[1]: entry[0] for entry in fields}
        return {name: world_value(getattr(value, attributes[name])) if name in attributes
                else item for name, item in export().items()}
    if callable(export):
        return world_value(export())
    from worldspec.runtime.values import export_value

    return export_value(value)


# ------------------------------------------------------------------ the rule
def agree(original: Any, world: Any) -> bool:
    """Whether the original's value and the world's are the same by the rule."""
    if isinstance(original, Repr):
        return type(world) is str and world == original.text
    if isinstance(original, (set, frozenset)):
        return isinstance(world, list) and _same_set(original, world)
    if type(original) is not type(world):
        return False
    if isinstance(original, float):
        return original == world or (math.isnan(original) and math.isnan(world))
    if isinstance(original, list):
        return len(original) == len(world) and all(
            agree(o, w) for o, w in zip(original, world, strict=True))
    if isinstance(original, dict):
        return _same_dict(original, world)
    return bool(original == world)


def _same_set(original: set[Any] | frozenset[Any], world: list[Any]) -> bool:
    if len(original) != len(world):
        return False
    left = list(original)
    for item in world:
        for i, candidate in enumerate(left):
            if agree(candidate, item):
                del left[i]
                break
        else:
            return False
    return not left


def _same_dict(original: dict[Any, Any], world: dict[Any, Any]) -> bool:
    if len(original) != len(world):
        return False
    keys = {typed_key(k): k for k in world}
    for key, value in original.items():
        typed = typed_key(key)
        if typed not in keys or not agree(value, world[keys[typed]]):
            return False
    return True


def typed_key(key: Any) -> tuple[str, Any]:
    """A dict key with its type: ``"1"`` and ``1`` (and ``1.0``) are different keys; a key
    of the original with no JSON form is the text of its repr."""
    if isinstance(key, Repr):
        return ("str", key.text)
    if isinstance(key, (set, frozenset)):
        return ("set", frozenset(typed_key(k) for k in key))
    if isinstance(key, (tuple, list)):
        return (type(key).__name__, tuple(typed_key(k) for k in key))
    return (type(key).__name__, key)


# ------------------------------------------------------------------ the text
def shown(value: Any) -> str:
    """``value`` as text that shows its types: JSON for JSON's own values, Python's notation
    for the others (``(1, 2)``, ``{1, 2}``, a key ``1`` beside a key ``"1"``, ``nan``), a
    :class:`Repr` as its text."""
    if isinstance(value, float):
        return json.dumps(value) if math.isfinite(value) else repr(value)
    if value is None or isinstance(value, (bool, int, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Repr):
        return value.text
    if isinstance(value, list):
        return "[" + ", ".join(shown(v) for v in value) + "]"
    if isinstance(value, tuple):
        inner = ", ".join(shown(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, (set, frozenset)):
        inner = ", ".join(sorted(shown(v) for v in value))
        text = "{" + inner + "}" if value else "set()"
        return text if isinstance(value, set) else f"frozenset({text if value else ''})"
    if isinstance(value, dict):
        items = sorted((shown(k), shown(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    return repr(value)
