"""Conformance of examples/bfcl/message_api.world with BFCL's own MessageAPI class.

Every BFCL v4 multi-turn base entry that involves MessageAPI is replayed on both: the
original class (``MessageAPI()`` + ``_load_scenario``) and our compiled world, loaded from the
same ``initial_config``. Each ground-truth call aimed at MessageAPI goes to both sides; the
results must be identical as BFCL's checker sees them, and after every turn the public state
of the original must equal our ``export_state()`` (tests/bfcl_support.py has the harness). A
bounded hypothesis test then drives both with random calls.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bfcl_support import Peer, parse_call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.services.loading import load_world

message_api = pytest.importorskip(
    "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.message_api")

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "bfcl" / "message_api.world"


def _sorted_ids(state: dict[str, Any]) -> dict[str, Any]:
    """generated_ids is a Python set in BFCL and an insertion-ordered set here: compared as
    sorted lists (a set has no order to compare), loaded from a sorted list."""
    if "generated_ids" in state:
        state = {**state, "generated_ids": sorted(state["generated_ids"])}
    return state


PEER = Peer("MessageAPI", message_api.MessageAPI, SPEC, default_seed=200191,
            prepare=_sorted_ids, normalise_original=_sorted_ids,
            normalise_ours=_sorted_ids)
ENTRIES = PEER.entries()
METHODS = PEER.methods


@pytest.fixture(scope="module")
def world() -> Any:
    return load_world(SPEC)


# ------------------------------------------------------------------ ground-truth replay

def test_entries_found() -> None:
    assert len(ENTRIES) == 40


@pytest.mark.parametrize(("entry", "turns"), ENTRIES, ids=[e["id"] for e, _ in ENTRIES])
def test_ground_truth_replays_identically(world: Any, entry: dict[str, Any],
                                          turns: list[list[str]]) -> None:
    replay = PEER.replay(world, entry, turns)
    assert replay.problems == []
    assert replay.identical == replay.calls


def test_replay_totals() -> None:
    """The ground truth holds the MessageAPI calls we expect (a guard against silent skips)."""
    calls = sum(1 for _, turns in ENTRIES for turn in turns for text in turn
                if parse_call(text)[0] in METHODS)
    assert calls == 63


# ------------------------------------------------------------------ quirks, one by one

def _both(world: Any, config: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]
          ) -> list[str]:
    return [outcome.text for outcome, _ in PEER.run_calls(world, config, calls)]


def test_add_contact_keeps_the_increment_on_a_taken_id(world: Any) -> None:
    """A failure that keeps its change (`fail keep`): the error counts as a failure."""
    outcomes = PEER.run_calls(world, {"user_count": 3}, [("add_contact", {"user_name": "Eve"}),
                                                         ("add_contact", {"user_name": "Eve"})])
    (first, first_error), (second, second_error) = outcomes
    assert first.text == json.dumps({"error": "User ID 'USR004' already exists."})
    assert first_error is not None and first_error.message == "User ID 'USR004' already exists."
    assert json.loads(second.text)["user_id"] == "USR005" and second_error is None


@pytest.mark.parametrize(("name", "kwargs"), [
    ("send_message", {"receiver_id": "USR002"}),
    ("send_message", {}),
    ("get_user_id", {"user": "Alice", "extra": 1}),
    ("list_users", {"x": 1}),
    ("message_login", {"user": "USR001"}),
])
def test_argument_errors_are_pythons(world: Any, name: str, kwargs: dict[str, Any]) -> None:
    """`arguments: python`: a missing or unexpected argument fails with the TypeError text the
    original's method raises."""
    ((outcome, error),) = PEER.run_calls(world, {"current_user": "USR001"}, [(name, kwargs)])
    assert outcome.raised and error is not None


def test_message_ids_redraw_on_collision(world: Any) -> None:
    # 67410 and 41772 are the first two draws of Random(200191).randint(10000, 99999)
    (sent,) = _both(world, {"generated_ids": {67410, 41772}, "current_user": "USR001"},
                    [("send_message", {"receiver_id": "USR002", "message": "hi"})])
    assert json.loads(sent)["message_id"]["new_id"] not in (67410, 41772)


def test_delete_removes_the_first_equal_entry(world: Any) -> None:
    inbox = [{"USR002": "a"}, {"USR003": "b"}, {"USR002": "a"}]
    _both(world, {"inbox": inbox, "current_user": "USR001"},
          [("delete_message", {"receiver_id": "USR002"}), ("view_messages_sent", {})])


@pytest.mark.parametrize(("content", "kind"), [(["x"], "list"), ({"USR001": ["x"]}, "dict")])
def test_search_on_contents_that_are_not_text_fails_like_bfcl(world: Any, content: Any,
                                                              kind: str) -> None:
    """BFCL's seed data holds list and dict contents; content.lower() raises on them."""
    (result,) = _both(world, {"inbox": [{"USR002": content}], "current_user": "USR001"},
                      [("search_messages", {"keyword": "x"})])
    assert result == f"Error during execution: '{kind}' object has no attribute 'lower'"


# ------------------------------------------------------------------ random differential

# Crafted configs reach the quirks: a user_count behind the ids in use (add_contact's
# "already exists" after the increment) and generated ids that the seeded draws collide with.
CRAFTED = [{"user_count": 3}, {"generated_ids": {67410, 41772}}, {"random_seed": 7}]
CONFIGS = [{}] + CRAFTED + [e["initial_config"]["MessageAPI"] for e, _ in ENTRIES
                            if "MessageAPI" in e["initial_config"]]
IDS = ["USR001", "USR002", "USR003", "USR004", "USR005", "USR006", "USR999", "", "Jack"]
NAMES = ["Alice", "Bob", "Catherine", "Daniel", "Eve", "Frank", "", "alice"]
TEXTS = ["hi", "Hello World", "", "Could you upload the file?", "meeting at 3"]
KEYWORDS = ["file", "HELLO", "", "meeting", "zzz"]

CALLS = st.one_of(
    st.just(("list_users", {})),
    st.just(("message_get_login_status", {})),
    st.just(("view_messages_sent", {})),
    st.just(("get_message_stats", {})),
    st.builds(lambda u: ("get_user_id", {"user": u}), st.sampled_from(NAMES)),
    st.builds(lambda u: ("message_login", {"user_id": u}), st.sampled_from(IDS)),
    st.builds(lambda r, m: ("send_message", {"receiver_id": r, "message": m}),
              st.sampled_from(IDS), st.sampled_from(TEXTS)),
    st.builds(lambda r: ("delete_message", {"receiver_id": r}), st.sampled_from(IDS)),
    st.builds(lambda u: ("add_contact", {"user_name": u}), st.sampled_from(NAMES)),
    st.builds(lambda k: ("search_messages", {"keyword": k}), st.sampled_from(KEYWORDS)),
)


@settings(max_examples=50, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(config=st.sampled_from(CONFIGS), calls=st.lists(CALLS, max_size=25))
def test_random_calls_agree(world: Any, config: dict[str, Any],
                            calls: list[tuple[str, dict[str, Any]]]) -> None:
    PEER.run_calls(world, config, calls)
