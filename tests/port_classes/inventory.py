"""A small LLM-style environment class, written for the tests of ``worldspec port``.

EnvScaler's style: state in ``self.`` dicts (a dict of dicts keyed by id), tools as methods
with docstrings (one line per parameter), rules in ``if`` checks, results as
``{"success": ...}`` dicts, and one method that changes state and then returns an error.
"""

from typing import Any


class InventoryEnv:
    """A small warehouse: items with a stock, and a log of what was taken."""

    def __init__(self, config: dict[str, Any]):
        self.items: dict[str, dict[str, Any]] = config.get("items", {})
        self.log: list[str] = config.get("log", [])
        self.attempts: int = config.get("attempts", 0)

    def get_item(self, item_id: str) -> dict[str, Any]:
        """Look an item up by its id.

        Args:
            item_id (str): The id of the item, e.g. "A1".

        Returns:
            dict: the item, or an error.
        """
        if item_id not in self.items:
            return {"success": False, "error": f"Item {item_id} not found"}
        return {"success": True, "data": self.items[item_id]}

    def take(self, item_id: str, count: int = 1) -> dict[str, Any]:
        """Take items out of stock. Every attempt is counted, even a failed one.

        Args:
            item_id (str): The id of the item.
            count (int): How many to take; at least 1.
        """
        self.attempts += 1
        if item_id not in self.items:
            return {"success": False, "error": f"Item {item_id} not found"}
        if count <= 0:
            return {"success": False, "error": "Count must be positive"}
        item = self.items[item_id]
        if item["stock"] < count:
            return {"success": False, "error": f"Only {item['stock']} left of {item['name']}"}
        item["stock"] -= count
        self.log.append(f"took {count} x {item_id}")
        return {"success": True, "data": {"id": item_id, "stock": item["stock"]}}

    def restock(self, item_id: str, count: int) -> dict[str, Any]:
        """Put items back in stock.

        Args:
            item_id (str): The id of the item.
            count (int): How many to add.
        """
        if item_id not in self.items:
            return {"success": False, "error": f"Item {item_id} not found"}
        self.items[item_id]["stock"] += count
        return {"success": True, "data": {"id": item_id, "stock": self.items[item_id]["stock"]}}
