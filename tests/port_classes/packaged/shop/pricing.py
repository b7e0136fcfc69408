"""Prices in cents, for shop.store."""

UNIT_PRICE = 250


def total(count: int) -> int:
    return count * UNIT_PRICE
