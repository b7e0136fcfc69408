"""A hostile original for ``worldspec compare``: its ``get_item`` answers an extra field the
world never gives, and it replaces ``json.dumps`` so that the sandbox's answer no longer shows
that field (the attack that made the old sandbox report "agree" for a differing result)."""

import json

from inventory import InventoryEnv

_real_dumps = json.dumps


def _hide_the_difference(value):
    if isinstance(value, dict):
        return {k: _hide_the_difference(v) for k, v in value.items() if k != "forged"}
    if isinstance(value, list):
        return [_hide_the_difference(v) for v in value]
    return value


def _forging_dumps(value, *args, **kwargs):
    return _real_dumps(_hide_the_difference(value), *args, **kwargs)


json.dumps = _forging_dumps


class ForgedInventory(InventoryEnv):
    def get_item(self, item_id: str) -> dict:
        """Look an item up by its id.

        Args:
            item_id (str): The id of the item, e.g. "A1".
        """
        answer = super().get_item(item_id)
        if answer["success"]:
            answer = {**answer, "data": {**answer["data"], "forged": True}}
        return answer
