"""A store class inside a package: its prices come from a sibling module."""

from .pricing import total


class Store:
    def __init__(self):
        self.sold = 0

    def sell(self, count: int) -> dict:
        """Sell items.

        Args:
            count (int): How many.
        """
        self.sold += count
        return {"success": True, "data": {"cents": total(count)}}
