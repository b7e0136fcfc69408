"""Classes whose values JSON alone would blur, for the tests of the exact comparison.

- ``Slots`` keeps notes under int slots beside text keys (``1`` and ``"1"`` are different
  keys);
- ``Shapes`` returns objects with no JSON form (compared by their repr) and a tuple;
- ``Roots`` returns ``x ** 0.5`` (a complex number for a negative ``x``) and
  ``math.sqrt``, which differs from ``** 0.5`` in the last bit for some numbers.
"""

import math
from dataclasses import dataclass
from typing import Any


class Slots:
    """Notes under int slots and under text keys, in one dict."""

    def _load_scenario(self, data: dict[str, Any]) -> None:
        self.notes: dict[Any, str] = dict(data.get("notes", {}))

    def put(self, slot: int, note: str) -> dict[str, Any]:
        """Keep a note under an int slot.

        Args:
            slot (int): The slot.
            note (str): The note.
        """
        self.notes[slot] = note
        return {"slot": slot, "notes": len(self.notes)}

    def label(self, name: str, note: str) -> dict[str, Any]:
        """Keep a note under a text key.

        Args:
            name (str): The key.
            note (str): The note.
        """
        self.notes[name] = note
        return {"name": name, "notes": len(self.notes)}

    def get(self, slot: int) -> str | None:
        """The note under a slot, or None.

        Args:
            slot (int): The slot.
        """
        return self.notes.get(slot)


@dataclass(frozen=True)
class Point:
    x: int
    y: int


class Shapes:
    """Points, as objects, and pairs, as tuples."""

    def point(self, x: int, y: int) -> Point:
        """A point.

        Args:
            x (int): Across.
            y (int): Up.
        """
        return Point(x, y)

    def pair(self, x: int, y: int) -> tuple[int, int]:
        """Two numbers as a tuple.

        Args:
            x (int): The first.
            y (int): The second.
        """
        return (x, y)


class Roots:
    """Square roots of the stored values, two ways, and of any int."""

    def _load_scenario(self, data: dict[str, Any]) -> None:
        self.values: list[int] = list(data.get("values", []))

    def by_sqrt(self) -> list[float]:
        """math.sqrt of each value."""
        return [math.sqrt(v) for v in self.values]

    def by_power(self) -> list[float]:
        """Each value to the power 0.5."""
        return [v ** 0.5 for v in self.values]

    def root(self, x: int) -> Any:
        """x to the power 0.5: a complex number when x is negative.

        Args:
            x (int): The number.
        """
        return x ** 0.5


class Kinds:
    """One value of every kind JSON alone would blur."""

    def everything(self) -> dict[Any, Any]:
        """A dict with keys and values of many types."""
        return {"1": "text key", 1: "int key", 2.5: (1, [2.0, True]), "$ref": None,
                (0, "a"): frozenset({3}), "set": {1, "b"}, "nan": float("nan"),
                "point": Point(1, 2), "nested": {"$tuple": [1]}}

    def nested(self, levels: int) -> Any:
        """A tuple in a tuple, ``levels`` deep.

        Args:
            levels (int): How deep.
        """
        value: Any = ()
        for _ in range(levels):
            value = (value,)
        return value
