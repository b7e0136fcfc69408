"""Conformance of examples/bfcl/trading_bot.world with BFCL's own TradingBot class.

Every BFCL v4 multi-turn base entry that involves TradingBot is replayed on both sides (the
harness is tests/bfcl_support.py): identical result text after every ground-truth call,
identical public state after every turn. One test per reproduced quirk follows, then a
bounded, derandomised hypothesis test of random call sequences with valid and invalid
arguments, which must reach the error paths.

The original reads the local time zone (``datetime.timestamp`` and ``fromtimestamp`` in its
transaction timestamps): it runs with TZ=UTC here, set around each of its calls and restored
after (the world's timestamps are UTC by construction).
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from bfcl_support import Peer, parse_call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.services.loading import load_world

trading_bot = pytest.importorskip(
    "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.trading_bot")

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "bfcl" / "trading_bot.world"


def _orders_by_text(state: dict[str, Any]) -> dict[str, Any]:
    """BFCL keys orders by int (all-digit config keys become ints; others stay text), as the
    world's `map[json, json]` does; both export a key as text, as JSON writes object keys. A
    key that is neither an int nor a str is marked, so that it differs."""
    orders = {}
    for key, order in state["orders"].items():
        faithful = type(key) in (int, str)
        orders[str(key) if faithful else f"<unrepresentable key {key!r}>"] = order
    return {**state, "orders": orders}


PEER = Peer("TradingBot", trading_bot.TradingBot, SPEC, default_seed=1053520,
            time_zone="UTC", normalise_original=_orders_by_text)
ENTRIES = PEER.entries()
METHODS = PEER.methods


@pytest.fixture(scope="module")
def world() -> Any:
    return load_world(SPEC)


# ------------------------------------------------------------------ ground-truth replay

def test_entries_found() -> None:
    assert len(ENTRIES) == 50


@pytest.mark.parametrize(("entry", "turns"), ENTRIES, ids=[e["id"] for e, _ in ENTRIES])
def test_ground_truth_replays_identically(world: Any, entry: dict[str, Any],
                                          turns: list[list[str]]) -> None:
    replay = PEER.replay(world, entry, turns)
    assert replay.problems == []
    assert replay.identical == replay.calls


def test_replay_totals() -> None:
    """The ground truth holds the TradingBot calls we expect (a guard against silent skips)."""
    names = Counter(parse_call(text)[0] for _, turns in ENTRIES for turn in turns
                    for text in turn if parse_call(text)[0] in METHODS)
    assert sum(names.values()) == 203
    assert names["place_order"] == 29 and names["fund_account"] == 5


def test_every_tool_is_re_expressed(world: Any) -> None:
    assert set(world.TOOLS) == set(METHODS)


# ------------------------------------------------------------------ quirks, one by one

def _both(world: Any, config: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]
          ) -> list[str]:
    return [outcome.text for outcome, _ in PEER.run_calls(world, config, calls)]


OPEN = {"authenticated": True, "market_status": "Open"}


@pytest.mark.parametrize(("name", "kwargs"), [
    ("place_order", {"order_type": "Buy", "symbol": "AAPL"}),
    ("place_order", {}),
    ("get_stock_info", {"symbol": "AAPL", "exchange": "NYSE"}),
    ("get_current_time", {"zone": "UTC"}),
    ("filter_stocks_by_price", {"stocks": ["AAPL"], "min_price": 1}),
])
def test_argument_errors_are_pythons(world: Any, name: str, kwargs: dict[str, Any]) -> None:
    """`arguments: python`: a missing or unexpected argument fails with the TypeError text the
    original's method raises."""
    ((outcome, error),) = PEER.run_calls(world, OPEN, [(name, kwargs)])
    assert outcome.raised and error is not None


def test_place_order_reports_pending_but_stores_open(world: Any) -> None:
    placed, details = _both(world, OPEN, [
        ("place_order", {"order_type": "Buy", "symbol": "AAPL", "price": 200, "amount": 3}),
        ("get_order_details", {"order_id": 12446})])
    assert json.loads(placed) == {"order_id": 12446, "order_type": "Buy", "status": "Pending",
                                  "price": 200.0, "amount": 3}
    assert json.loads(details)["status"] == "Open"


def test_first_order_replaces_the_order_under_the_counter_in_place(world: Any) -> None:
    history = _both(world, OPEN, [
        ("place_order", {"order_type": "Sell", "symbol": "TSLA", "price": 1.5, "amount": 1}),
        ("place_order", {"order_type": "sell", "symbol": "TSLA", "price": 1.5, "amount": 1}),
        ("get_order_history", {})])[2]
    assert history == json.dumps({"history": [12345, 12446, 12447]})


def test_order_keys_from_text_become_ints_except_non_digits(world: Any) -> None:
    config = {**OPEN, "orders": {"12345": {"symbol": "AAPL", "status": "Completed"},
                                 "order_type": "Buy"}}
    results = _both(world, config, [
        ("get_order_history", {}), ("get_order_details", {"order_id": 1}),
        ("cancel_order", {"order_id": 12345}), ("cancel_order", {"order_id": 7})])
    assert results[0] == json.dumps({"history": [12345, "order_type"]})
    assert results[1] == json.dumps({"error": "Order with ID 1 not found.Here is the list of "
                                              "orders_id: [12345, 'order_type']"})
    assert "already completed" in results[2]


def test_order_keys_with_leading_zeros_and_negative_ids_are_ints_too(world: Any) -> None:
    config = {**OPEN, "order_counter": -2,
              "orders": {"0012": {"symbol": "AAPL", "status": "Open"}, "order_type": "Buy"}}
    results = _both(world, config, [
        ("get_order_details", {"order_id": 12}), ("cancel_order", {"order_id": 12}),
        ("trading_login", {"username": "u", "password": "p"}),
        ("place_order", {"order_type": "Sell", "symbol": "AAPL", "price": 1.0, "amount": 1}),
        ("get_order_history", {}), ("get_order_details", {"order_id": -2})])
    assert results[4] == json.dumps({"history": [12, "order_type", -2]})


def test_watchlist_and_histories_logged_out_are_lists(world: Any) -> None:
    results = _both(world, {}, [("get_watchlist", {}), ("get_order_history", {}),
                                ("get_transaction_history", {})])
    assert results == [
        "['Error: User not authenticated. Please log in to view the watchlist.']",
        "[{'error': 'User not authenticated. Please log in to view order history.'}]",
        "[{'error': 'User not authenticated. Please log in to view transaction history.'}]"]


def test_amounts_keep_their_type_and_timestamps_follow_the_seed(world: Any) -> None:
    results = _both(world, {**OPEN, "random_seed": 7}, [
        ("fund_account", {"amount": 10000}), ("withdraw_funds", {"amount": 0.5}),
        ("get_transaction_history", {"start_date": "2024-09-01", "end_date": "2024-09-02"}),
        ("get_transaction_history", {})])
    history = json.loads(results[3])["transaction_history"]
    assert [h["amount"] for h in history] == [10000, 0.5]
    assert json.loads(results[0])["new_balance"] == 20000.0


def test_int_balances_stay_int(world: Any) -> None:
    config = {**OPEN, "account_info": {"account_id": 1, "balance": 100, "binding_card": 2}}
    results = _both(world, config, [("fund_account", {"amount": 5}),
                                    ("withdraw_funds", {"amount": 5.5}),
                                    ("get_account_info", {})])
    assert results[0] == json.dumps({"status": "Account funded successfully",
                                     "new_balance": 105})


def test_the_original_follows_the_local_zone_so_it_runs_in_utc(world: Any) -> None:
    """BFCL converts the draw to and from epoch seconds in the local zone: where daylight
    saving begins within the day from 2024-09-01 10:30, its timestamps shift by an hour. Here
    a zone whose summer time begins at noon that day (POSIX rule M9.1.0 is 2024-09-01); in
    UTC (what PEER runs it in) the world's timestamps are the original's."""
    calls = [("fund_account", {"amount": 1})] * 12
    shifted = dataclasses.replace(PEER, time_zone="XST+5XDT,M9.1.0/12,M3.1.0/2")
    mine = PEER.ours(world, OPEN)
    for name, kwargs in calls:
        mine.call(name, kwargs)
    ours = [t["timestamp"] for t in mine.export_state()["transaction_history"]]
    for peer, agree in ((PEER, True), (shifted, False)):
        api = peer.original(OPEN)
        for name, kwargs in calls:
            peer.call_original(api, name, kwargs)
        theirs = [t["timestamp"] for t in api.transaction_history]
        assert (theirs == ours) is agree, (theirs, ours)


def test_malformed_dates_raise_strptime_errors(world: Any) -> None:
    dates = ["2024-13-01", "2024-09-35", "2024-02-30", "0000-01-01", "2024-9-1",
             "2024-09-01x", "2024-09- 1", " 2024-09-01", "24-09-01", "2024-1-011", "x'y"]
    results = _both(world, OPEN, [("fund_account", {"amount": 3})] + [
        ("get_transaction_history", {"start_date": d}) for d in dates])
    assert results[1] == ("Error during execution: time data '2024-13-01' does not match "
                          "format '%Y-%m-%d'")
    assert results[2] == "Error during execution: unconverted data remains: 5"
    assert results[3] == "Error during execution: day is out of range for month"


def test_missing_keys_raise_key_error(world: Any) -> None:
    config = {**OPEN, "account_info": {"account_id": 1},
              "transaction_history": [{"symbol": "AAPL"}],
              "orders": {"5": {"symbol": "AAPL"}}}
    results = _both(world, config, [("fund_account", {"amount": 1}),
                                    ("withdraw_funds", {"amount": 1}),
                                    ("get_transaction_history", {}),
                                    ("cancel_order", {"order_id": 5}),
                                    ("place_order", {"order_type": "Buy", "symbol": "AAPL",
                                                     "price": 1.0, "amount": 1})])
    assert results[:4] == ["Error during execution: 'balance'"] * 2 + [
        "Error during execution: 'timestamp'", "Error during execution: 'status'"]
    assert "Insufficient funds: required $1.00 but only $0.00 available." in results[4]


def test_price_filter_and_notifications(world: Any) -> None:
    _both(world, {}, [
        ("filter_stocks_by_price", {"stocks": ["AAPL", "XYZ", "ZETA", "NVDA"],
                                    "min_price": 0, "max_price": 225}),
        ("notify_price_change", {"stocks": ["AAPL", "TSLA", "XYZ"], "threshold": 0.12}),
        ("notify_price_change", {"stocks": ["AAPL"], "threshold": 5}),
        ("get_available_stocks", {"sector": "Automobile"}),
        ("get_available_stocks", {"sector": "Energy"}),
        ("get_symbol_by_name", {"name": "Quasar Ltd."}),
        ("get_symbol_by_name", {"name": "Nope"}),
        ("get_current_time", {})])


# ------------------------------------------------------------------ random differential

CRAFTED: list[dict[str, Any]] = [
    OPEN,
    {"authenticated": True, "market_status": "Open", "random_seed": 11,
     "orders": {"12345": {"symbol": "AAPL", "price": 210.65, "num_shares": 10,
                          "status": "Completed"}, "order_type": "Buy"},
     "account_info": {"account_id": 1, "balance": 1000, "binding_card": 2}},
    {"authenticated": True, "market_status": "Closed"},
    {},
]
CONFIGS = CRAFTED * 3 + [PEER.config(e) for e, _ in ENTRIES]
SYMBOLS = st.sampled_from(["XYZ", "AAPL", "NVDA", "ZETA", "TSLA", "", "GOOG", "OMEG"])
ORDER_IDS = st.sampled_from([12446, 12345, 12447, 12448, 0, 99999])
AMOUNTS = st.sampled_from([100, 0.5, 2203.4, 10000, 0, -5, 1e6, 250.25, 1])
DATES = st.sampled_from([None, "", "2024-09-01", "2024-09-02", "2024-9-2", "2024-13-01",
                         "2024-02-30", "2024-09-011", "1999-01-01"])

CALLS = st.one_of(
    st.builds(lambda t, s, p, a: ("place_order", {"order_type": t, "symbol": s, "price": p,
                                                  "amount": a}),
              st.sampled_from(["Buy", "Sell", "buy", "Hold"]), SYMBOLS,
              st.sampled_from([227.16, 150, 0, -1.0, 99999.5, 22.09]),
              st.sampled_from([1, 10, 100, 0, -3, 5000])),
    st.builds(lambda a: ("fund_account", {"amount": a}), AMOUNTS),
    st.builds(lambda a: ("withdraw_funds", {"amount": a}), AMOUNTS),
    st.builds(lambda i: ("get_order_details", {"order_id": i}), ORDER_IDS),
    st.builds(lambda i: ("cancel_order", {"order_id": i}), ORDER_IDS),
    st.builds(lambda s, e: ("get_transaction_history", {"start_date": s, "end_date": e}),
              DATES, DATES),
    st.builds(lambda s: ("get_stock_info", {"symbol": s}), SYMBOLS),
    st.builds(lambda s: ("add_to_watchlist", {"stock": s}), SYMBOLS),
    st.builds(lambda s: ("remove_stock_from_watchlist", {"symbol": s}), SYMBOLS),
    st.builds(lambda ss, lo, hi: ("filter_stocks_by_price", {"stocks": ss, "min_price": lo,
                                                             "max_price": hi}),
              st.lists(SYMBOLS, max_size=4), st.sampled_from([0, 100, 300.5]),
              st.sampled_from([250, 1000.0, 5000])),
    st.builds(lambda ss, t: ("notify_price_change", {"stocks": ss, "threshold": t}),
              st.lists(SYMBOLS, max_size=4), st.sampled_from([0.1, 0.2, 0, 1])),
    st.builds(lambda s: ("get_available_stocks", {"sector": s}),
              st.sampled_from(["Technology", "Automobile", "Energy"])),
    st.builds(lambda n: ("get_symbol_by_name", {"name": n}),
              st.sampled_from(["Apple", "Gorilla", "Unknown"])),
    st.just(("get_watchlist", {})),
    st.just(("get_order_history", {})),
    st.just(("get_account_info", {})),
    st.just(("trading_login", {"username": "u", "password": "p"})),
    st.just(("trading_logout", {})),
    st.just(("trading_get_login_status", {})),
    st.just(("get_current_time", {})),
)


def _kind(text: str) -> str | None:
    """Which error path a result took (the original's text), or None for a success."""
    if text.startswith("Error during execution: "):
        return "raised: " + text.removeprefix("Error during execution: ")[:20]
    if text.startswith("{\"error\": ") or text.startswith("[{'error': ") or \
            text.startswith("['Error: "):
        message: str = json.loads(text)["error"] if text.startswith("{") else text
        return " ".join(message.split()[:3])
    return None


def test_random_calls_agree(world: Any) -> None:
    """Random call sequences give identical text and state after every call, and reach the
    error paths (each a different message of the original)."""
    reached: Counter[str] = Counter()

    @settings(max_examples=50, derandomize=True, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(config=st.sampled_from(CONFIGS), calls=st.lists(CALLS, min_size=3, max_size=25))
    def agree(config: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> None:
        for outcome, _ in PEER.run_calls(world, config, calls):
            kind = _kind(outcome.text)
            if kind is not None:
                reached[kind] += 1

    agree()
    assert sum(reached.values()) >= 100
    assert len(reached) >= 10, sorted(reached)
    for path in ("User not authenticated.", "Order with ID", "Invalid stock symbol:",
                 "Insufficient funds", "Stock with symbol", "raised: time data",
                 "raised: day is out"):
        assert any(kind.startswith(path) for kind in reached), (path, reached)
