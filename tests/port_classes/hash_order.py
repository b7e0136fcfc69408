"""Classes that list names in their answers, in an order they do or do not determine.

``Settings.update`` names the unknown settings of a change as BFCL's ``TicketAPI.edit_ticket``
names invalid fields: joined from a ``set`` of strings, so in an order that follows the
interpreter's string hash seed (``PYTHONHASHSEED``). ``Tags.add_tags`` keeps its tags as the
list of a ``set``: the order of its state follows the hash seed as well. ``OrderedSettings``
names them from a list, in the order of the change: there the original determines the order.
"""


class Settings:
    def __init__(self) -> None:
        self.values: dict[str, int] = {"volume": 5, "brightness": 3}

    def update(self, changes: dict[str, int]) -> dict[str, str]:
        """Change settings; every name must be a known setting."""
        unknown = set(changes) - set(self.values)
        if unknown:
            return {"error": "Unknown settings: " + ", ".join(unknown)}
        self.values.update(changes)
        return {"status": "updated"}


class OrderedSettings(Settings):
    def update(self, changes: dict[str, int]) -> dict[str, str]:
        """Change settings; every name must be a known setting."""
        unknown = [name for name in changes if name not in self.values]
        if unknown:
            return {"error": "Unknown settings: " + ", ".join(unknown)}
        self.values.update(changes)
        return {"status": "updated"}


class Tags:
    def __init__(self) -> None:
        self.tags: list[str] = []

    def add_tags(self, names: list[str]) -> dict[str, int]:
        """Add tags; each tag is kept once."""
        self.tags = list(set(self.tags) | set(names))
        return {"count": len(self.tags)}
