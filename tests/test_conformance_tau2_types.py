"""Arguments of another JSON type on ``examples/tau2/retail.world`` (``arguments: dynamic``).

tau2 passes a tool call's arguments to its ``RetailTools`` methods as keyword arguments, with
no validation or coercion (TOOLS.md §2.3): a value of another type meets the original's own
Python operations, in the original's order. The expected texts below are those operations'
own failures (computed here by running the same operation on the same value where it is a
plain Python one), or pydantic's ``ValidationError`` text where tau2 builds its
``UserAddress`` model from the arguments. A failing call leaves the DB as it was (tau2 fails
before its first change in every such case), so tau2's DB hash is unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import test_conformance_tau2 as tau2
from test_conformance_tau2 import PRISTINE_HASH, episode_hash

from worldspec.runtime.episode import Episode

# the retail DB and the compiled world: the tau2 conformance module's fixtures
db = tau2.db
world = tau2.world

DELIVERED = "#W2378156"  # yusuf_rossi_9620's, paid by credit_card_9513926
DELIVERED_ITEM = "4602305039"  # its own variant is available
PENDING = "#W5918442"  # sofia_rossi_8776's, paid by credit_card_5051208
PENDING_ITEM, PENDING_NEW = "1725100896", "9007697085"  # same product, available
ADDRESS = {"address1": "1 Main St", "address2": "", "city": "Austin", "state": "TX",
           "country": "USA", "zip": "73301"}
URL = "https://errors.pydantic.dev/2.12/v/string_type"


def _any(value: Any) -> Any:
    """``value``, typed for a plain Python operation of any kind on it."""
    return value


def _raises(action: Callable[[], object]) -> str:
    """``Error: `` and the text of the exception Python raises running ``action``."""
    try:
        action()
    except Exception as exc:
        return f"Error: {exc}"
    raise AssertionError("no exception")


def _fails_unchanged(ep: Episode, name: str, args: dict[str, Any], content: str) -> None:
    before = episode_hash(ep)
    assert ep.call(name, args) == content
    assert ep.failed(content)
    assert episode_hash(ep) == before


def test_the_world_is_in_the_mode(world: type[Episode]) -> None:
    assert world.ARGUMENTS == "dynamic"


def test_read_tools(world: type[Episode], db: dict[str, Any]) -> None:
    ep = world(data=db)
    assert ep.call("find_user_id_by_email", {"email": 5}) == \
        "Error: 'int' object has no attribute 'lower'"
    assert ep.call("find_user_id_by_email", {"email": ["a"]}) == \
        "Error: 'list' object has no attribute 'lower'"
    # last_name is lowered only for a user whose first name matched; zip is only compared
    assert ep.call("find_user_id_by_name_zip",
                   {"first_name": "Nobody", "last_name": 5, "zip": "19122"}) == \
        "Error: User not found"
    assert ep.call("find_user_id_by_name_zip",
                   {"first_name": "Yusuf", "last_name": 5, "zip": "19122"}) == \
        "Error: 'int' object has no attribute 'lower'"
    assert ep.call("find_user_id_by_name_zip",
                   {"first_name": "Yusuf", "last_name": "Rossi", "zip": 19122}) == \
        "Error: User not found"
    # entity lookups are `key in dict`: another scalar is not found, a list is unhashable
    assert ep.call("get_order_details", {"order_id": 5}) == "Error: Order not found"
    assert ep.call("get_order_details", {"order_id": None}) == "Error: Order not found"
    assert ep.call("get_order_details", {"order_id": [DELIVERED]}) == \
        _raises(lambda: _any([DELIVERED]) in {DELIVERED: None})
    assert ep.call("get_user_details", {"user_id": {"a": 1}}) == \
        _raises(lambda: _any({"a": 1}) in {"u": None})
    assert ep.call("get_product_details", {"product_id": 9523456873}) == \
        "Error: Product not found"
    assert ep.call("get_item_details", {"item_id": [1]}) == "Error: unhashable type: 'list'"
    assert ep.call("get_item_details", {"item_id": 4202497723}) == "Error: Item not found"
    assert ep.call("transfer_to_human_agents", {"summary": {"x": [1]}}) == "Transfer successful"
    assert episode_hash(ep) == PRISTINE_HASH


def test_calculate(world: type[Episode], db: dict[str, Any]) -> None:
    ep = world(data=db)
    allowed = "0123456789+-*/(). "
    assert ep.call("calculate", {"expression": 5}) == "Error: 'int' object is not iterable"
    assert ep.call("calculate", {"expression": None}) == \
        "Error: 'NoneType' object is not iterable"
    assert ep.call("calculate", {"expression": [1]}) == _raises(lambda: _any(1) in allowed)
    # all() stops at the first character that is not allowed
    assert ep.call("calculate", {"expression": ["x", 1]}) == \
        "Error: Invalid characters in expression"
    # each element is in the allowed text (as a substring); eval then refuses a non-text
    eval_text = _raises(lambda: eval(_any([])))  # the text of eval's TypeError
    assert ep.call("calculate", {"expression": ["1", "23", "+-"]}) == eval_text
    assert ep.call("calculate", {"expression": {"1": 2}}) == eval_text
    assert ep.call("calculate", {"expression": []}) == eval_text


def test_cancel_reason_is_looked_up_in_a_set(world: type[Episode], db: dict[str, Any]) -> None:
    ep = world(data=db)
    reasons = {"no longer needed", "ordered by mistake"}
    _fails_unchanged(ep, "cancel_pending_order",
                     {"order_id": PENDING, "reason": ["no longer needed"]},
                     _raises(lambda: _any(["no longer needed"]) in reasons))
    _fails_unchanged(ep, "cancel_pending_order", {"order_id": PENDING, "reason": 5},
                     "Error: Invalid reason")
    # the status is checked first
    _fails_unchanged(ep, "cancel_pending_order", {"order_id": DELIVERED, "reason": [1]},
                     "Error: Non-pending order cannot be cancelled")
    assert episode_hash(ep) == PRISTINE_HASH


def test_addresses_are_validated_by_pydantic(world: type[Episode], db: dict[str, Any]) -> None:
    """tau2 builds ``UserAddress(...)`` from the six values: its model's str fields refuse
    any other type, with pydantic's text (fields in the model's order, country before state)."""
    ep = world(data=db)
    one = (f"Error: 1 validation error for UserAddress\naddress1\n  Input should be a valid "
           f"string [type=string_type, input_value=5, input_type=int]\n    For further "
           f"information visit {URL}")
    _fails_unchanged(ep, "modify_user_address",
                     {"user_id": "yusuf_rossi_9620", **ADDRESS, "address1": 5}, one)
    two = (f"Error: 2 validation errors for UserAddress\ncountry\n  Input should be a valid "
           f"string [type=string_type, input_value=[1, 'a'], input_type=list]\n    For "
           f"further information visit {URL}\nzip\n  Input should be a valid string "
           f"[type=string_type, input_value=None, input_type=NoneType]\n    For further "
           f"information visit {URL}")
    _fails_unchanged(ep, "modify_pending_order_address",
                     {"order_id": PENDING, **ADDRESS, "zip": None, "country": [1, "a"]}, two)
    long = (f"Error: 1 validation error for UserAddress\nstate\n  Input should be a valid "
            f"string [type=string_type, input_value=[0, 1, 2, 3, 4, 5, 6, 7, ... 34, 35, 36, "
            f"37, 38, 39], input_type=list]\n    For further information visit {URL}")
    _fails_unchanged(ep, "modify_user_address",
                     {"user_id": "yusuf_rossi_9620", **ADDRESS, "state": list(range(40))}, long)
    # the lookup and the status come first
    _fails_unchanged(ep, "modify_pending_order_address", {"order_id": DELIVERED, **ADDRESS,
                                                          "city": True},
                     "Error: Non-pending order cannot be modified")
    _fails_unchanged(ep, "modify_user_address", {"user_id": 5, **ADDRESS, "city": True},
                     "Error: User not found")
    assert episode_hash(ep) == PRISTINE_HASH


def test_exchange(world: type[Episode], db: dict[str, Any]) -> None:
    ep = world(data=db)
    args: dict[str, Any] = {"order_id": DELIVERED, "item_ids": [DELIVERED_ITEM],
            "new_item_ids": [DELIVERED_ITEM], "payment_method_id": "credit_card_9513926"}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"item_ids": 5}, "Error: 'int' object is not iterable"),
        ({"item_ids": {DELIVERED_ITEM: 1}}, "Error: 'dict' object has no attribute 'count'"),
        # a text counts its characters, none of which is an item id
        ({"item_ids": "42"}, "Error: Number of 4 not found."),
        ({"item_ids": [None]}, "Error: Number of None not found."),
        ({"new_item_ids": 7}, _raises(lambda: len(_any(7)))),
        ({"new_item_ids": [[1]]}, "Error: unhashable type: 'list'"),
        ({"new_item_ids": [4202497723]}, "Error: Variant not found"),
        ({"new_item_ids": {"7": 1}}, "Error: Variant not found"),  # zip takes the keys
        ({"payment_method_id": ["credit_card_9513926"]}, "Error: unhashable type: 'list'"),
        ({"payment_method_id": 5}, "Error: Payment method not found"),
    ]
    for change, content in cases:
        _fails_unchanged(ep, "exchange_delivered_order_items", {**args, **change}, content)
    assert episode_hash(ep) == PRISTINE_HASH
    # an object of item ids is what zip and sorted take from it: its keys
    keyed = ep.call("exchange_delivered_order_items",
                    {**args, "new_item_ids": {DELIVERED_ITEM: None}})
    plain = world(data=db)
    assert plain.call("exchange_delivered_order_items", args) == keyed
    assert episode_hash(plain) == episode_hash(ep)
    # empty texts are empty sequences: stored as sorted("") is, []
    ep, plain = world(data=db), world(data=db)
    empty = ep.call("exchange_delivered_order_items",
                    {**args, "item_ids": "", "new_item_ids": ""})
    assert json.loads(str(empty))["exchange_items"] == []
    assert plain.call("exchange_delivered_order_items",
                      {**args, "item_ids": [], "new_item_ids": []}) == empty
    assert episode_hash(plain) == episode_hash(ep) != PRISTINE_HASH


def test_modify_items(world: type[Episode], db: dict[str, Any]) -> None:
    ep = world(data=db)
    args: dict[str, Any] = {"order_id": PENDING, "item_ids": [PENDING_ITEM],
                            "new_item_ids": [PENDING_NEW],
                            "payment_method_id": "credit_card_5051208"}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"item_ids": [None]}, "Error: None not found"),
        ({"item_ids": [5]}, "Error: 5 not found"),
        ({"item_ids": True}, "Error: 'bool' object is not iterable"),
        ({"new_item_ids": [PENDING_ITEM]},
         "Error: The new item id should be different from the old item id"),
        ({"new_item_ids": [{"a": 1}]}, "Error: unhashable type: 'dict'"),
        ({"payment_method_id": {"a": 1}}, "Error: unhashable type: 'dict'"),
    ]
    for change, content in cases:
        _fails_unchanged(ep, "modify_pending_order_items", {**args, **change}, content)
    _fails_unchanged(ep, "modify_pending_order_payment",
                     {"order_id": PENDING, "payment_method_id": [1]},
                     "Error: unhashable type: 'list'")
    assert episode_hash(ep) == PRISTINE_HASH
    # empty texts zip to no pairs, as empty lists do: a refund of 0.0 and the new status
    result = ep.call("modify_pending_order_items", {**args, "item_ids": "", "new_item_ids": ""})
    plain = world(data=db)
    assert plain.call("modify_pending_order_items",
                      {**args, "item_ids": [], "new_item_ids": []}) == result
    assert json.loads(str(result))["status"] == "pending (item modified)"
    assert episode_hash(plain) == episode_hash(ep) != PRISTINE_HASH


def test_return(world: type[Episode], db: dict[str, Any]) -> None:
    ep = world(data=db)
    args: dict[str, Any] = {"order_id": DELIVERED, "item_ids": [DELIVERED_ITEM],
            "payment_method_id": "credit_card_9513926"}
    cases: list[tuple[dict[str, Any], str]] = [
        ({"item_ids": [None]}, "Error: Some item not found"),
        ({"item_ids": "4"}, "Error: Some item not found"),
        ({"item_ids": {"4": 1}}, "Error: 'dict' object has no attribute 'count'"),
        ({"item_ids": 4.5}, "Error: 'float' object is not iterable"),
        # the payment method is checked before the items
        ({"item_ids": 4.5, "payment_method_id": 5}, "Error: Payment method not found"),
    ]
    for change, content in cases:
        _fails_unchanged(ep, "return_delivered_order_items", {**args, **change}, content)
    assert episode_hash(ep) == PRISTINE_HASH
    # an empty object has nothing to count: sorted({}) is stored, []
    result = json.loads(str(ep.call("return_delivered_order_items", {**args, "item_ids": {}})))
    assert result["status"] == "return requested" and result["return_items"] == []
    plain = world(data=db)
    plain.call("return_delivered_order_items", {**args, "item_ids": []})
    assert episode_hash(plain) == episode_hash(ep)
