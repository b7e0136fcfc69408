"""Values whose order the original leaves to Python's string hash seed, compared up to order.

The order of a Python ``set`` of strings (and of anything built by iterating one: a text
joined from it, a list made of it) follows the strings' hashes, so the interpreter's hash
seed (``PYTHONHASHSEED``) decides it: the original itself answers differently from one run to
the next there, and no world can reproduce its order. Where a value the world gets wrong
*changes* when the original runs again under other hash seeds (:data:`HASH_SEEDS`), the
original does not determine its order, and the world's value is compared with it up to order
(:func:`agree_up_to_order`); everywhere else the exact rule (:mod:`worldspec.port.exact`)
holds.

Up to order means:

- two texts agree when they hold the same tokens, each as many times, in any order; a text's
  tokens are its commas, semicolons, brackets, braces, parentheses and quotes, each one a
  token, and the runs of other characters between them and white space
  (``"Invalid fields for update: b, a"`` agrees with ``"Invalid fields for update: a, b"``,
  not with ``"... a, c"`` or ``"... a b"``; ``"{'b', 'a'}"`` agrees with ``"{'a', 'b'}"``);
- two lists (or two tuples) agree when they hold the same items, each as many times, in any
  order, items compared up to order in turn;
- two dicts agree when they have the same keys (keys keep their type, as in the exact rule)
  and their values agree up to order;
- every other value is compared exactly (:func:`worldspec.port.exact.agree`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

from worldspec.port.exact import Repr, agree, typed_key

__all__ = ["HASH_ORDER_NOTE", "HASH_SEEDS", "agree_up_to_order", "tokens"]

#: the hash seeds the original runs again under, besides the sandbox's own (0), to see
#: whether a value's order follows the hash seed; tried in turn until one changes the value.
#: Two strings in a set come out in the same order under a further seed half the time, so
#: one or two seeds would miss such a set often: after 8 it is about once in 256
HASH_SEEDS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)

#: said of a difference at a value whose order the original leaves to the hash seed
HASH_ORDER_NOTE = ("the original's order here varies with the hash seed, PYTHONHASHSEED, so "
                   "only the items are compared, not their order: the items differ")

_PUNCTUATION = ",;()[]{}'\""
_TOKEN = re.compile(f"[{re.escape(_PUNCTUATION)}]|[^\\s{re.escape(_PUNCTUATION)}]+")


def tokens(text: str) -> Counter[str]:
    """The tokens of ``text``, counted (see the module docstring)."""
    return Counter(_TOKEN.findall(text))


def agree_up_to_order(original: Any, world: Any) -> bool:
    """Whether the original's value and the world's agree up to order (module docstring)."""
    if isinstance(original, (str, Repr)) and type(world) is str:
        text = original.text if isinstance(original, Repr) else original
        return tokens(text) == tokens(world)
    if isinstance(original, (list, tuple)) and type(original) is type(world):
        return _same_items(list(original), list(world), agree_up_to_order)
    if isinstance(original, dict) and isinstance(world, dict):
        if len(original) != len(world):
            return False
        keys = {typed_key(k): k for k in world}
        return all(typed_key(k) in keys and agree_up_to_order(v, world[keys[typed_key(k)]])
                   for k, v in original.items())
    return agree(original, world)


def _same_items(original: list[Any], world: list[Any],
                same: Callable[[Any, Any], bool]) -> bool:
    if len(original) != len(world):
        return False
    left = list(original)
    for item in world:
        for i, candidate in enumerate(left):
            if same(candidate, item):
                del left[i]
                break
        else:
            return False
    return True
