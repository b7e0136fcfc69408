"""Conformance of examples/bfcl/message_api.world with BFCL's own MessageAPI class.

Every BFCL v4 multi-turn base entry that involves MessageAPI is replayed on both: the
original class (``MessageAPI()`` + ``_load_scenario``) and our compiled world, loaded from the
same ``initial_config``. Each ground-truth call aimed at MessageAPI goes to both sides; the
results must be identical as BFCL's checker sees them (strings kept, dicts as ``json.dumps``,
anything else ``str()``; an exception as ``Error during execution: ...``), and after every
turn the public state of the original (``vars()`` without ``_`` names) must equal our
``export_state()``. A bounded hypothesis test then drives both with random calls.

Call strings are parsed with ``ast`` (never evaluated).
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.loading import load_world

bfcl_eval = pytest.importorskip("bfcl_eval")
message_api = pytest.importorskip(
    "bfcl_eval.eval_checker.multi_turn_eval.func_source_code.message_api")

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "examples" / "bfcl" / "message_api.world"
DATA = Path(bfcl_eval.__file__).resolve().parent / "data"
BASE = DATA / "BFCL_v4_multi_turn_base.json"
ANSWERS = DATA / "possible_answer" / "BFCL_v4_multi_turn_base.json"

MessageAPI = message_api.MessageAPI
METHODS = {name for name, _ in inspect.getmembers(MessageAPI, inspect.isfunction)
           if not name.startswith("_")}
DEFAULT_SEED = 200191


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _entries() -> list[tuple[dict[str, Any], list[list[str]]]]:
    if not BASE.is_file() or not ANSWERS.is_file():
        return []
    answers = {row["id"]: row["ground_truth"] for row in _jsonl(ANSWERS)}
    return [(row, answers[row["id"]]) for row in _jsonl(BASE)
            if "MessageAPI" in row["involved_classes"] and row["id"] in answers]


ENTRIES = _entries()


@pytest.fixture(scope="module")
def world() -> Any:
    return load_world(SPEC)


# ------------------------------------------------------------------ the two sides

def original(config: dict[str, Any]) -> Any:
    api = MessageAPI()
    api._load_scenario(copy.deepcopy(config))
    return api


def ours(world: Any, config: dict[str, Any]) -> Any:
    """Our episode from BFCL's initial_config: the state names and defaults are BFCL's, so
    the config loads as-is; only ``random_seed`` becomes the episode seed."""
    data = {k: copy.deepcopy(v) for k, v in config.items() if k != "random_seed"}
    if "generated_ids" in data:
        data["generated_ids"] = sorted(data["generated_ids"])
    return world(data=data, seed=config.get("random_seed", DEFAULT_SEED))


def bfcl_text(value: Any) -> str:
    """A result as BFCL's multi-turn executor records it."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return str(value)
    return str(value)


def call_original(api: Any, name: str, kwargs: dict[str, Any]) -> str:
    try:
        return bfcl_text(getattr(api, name)(**kwargs))
    except Exception as exc:  # as BFCL's executor does
        return f"Error during execution: {exc}"


def call_ours(episode: Any, name: str, kwargs: dict[str, Any]) -> str:
    result = episode.call(name, kwargs)
    if episode.last_error is not None and result == {"error": episode.last_error.message} \
            and episode.last_error.message.startswith("'list' object"):
        # Known divergence (see search_messages in the spec): BFCL raises AttributeError on
        # list contents; we fail with the same message as an error dict.
        return f"Error during execution: {episode.last_error.message}"
    return bfcl_text(result)


def public_state_original(api: Any) -> dict[str, Any]:
    state = {k: v for k, v in vars(api).items() if not k.startswith("_")}
    state["generated_ids"] = sorted(state["generated_ids"])
    return state


def public_state_ours(episode: Any) -> dict[str, Any]:
    state = episode.export_state()
    state["generated_ids"] = sorted(state["generated_ids"])
    return state


def same_state(api: Any, episode: Any) -> None:
    mine, theirs = public_state_ours(episode), public_state_original(api)
    assert mine == theirs
    # order matters too (list_users, view_messages_sent): compare the serialised form
    assert json.dumps(mine) == json.dumps({k: theirs[k] for k in mine})


def parse_call(text: str) -> tuple[str, list[Any], dict[str, Any]]:
    """``f(a, k=v)`` -> (name, positional, keywords), literals only."""
    node = ast.parse(text.strip(), mode="eval").body
    assert isinstance(node, ast.Call), text
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id  # type: ignore[attr-defined]
    args = [ast.literal_eval(a) for a in node.args]
    kwargs = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords if kw.arg}
    return name, args, kwargs


def bind(name: str, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Positional arguments become keywords, by the original method's signature."""
    signature = inspect.signature(getattr(MessageAPI, name))
    bound = signature.bind(None, *args, **kwargs)
    return {k: v for k, v in bound.arguments.items() if k != "self"}


# ------------------------------------------------------------------ ground-truth replay

def test_entries_found() -> None:
    assert len(ENTRIES) >= 30


@pytest.mark.parametrize(("entry", "turns"), ENTRIES, ids=[e["id"] for e, _ in ENTRIES])
def test_ground_truth_replays_identically(world: Any, entry: dict[str, Any],
                                          turns: list[list[str]]) -> None:
    config = entry["initial_config"].get("MessageAPI", {})
    api, episode = original(config), ours(world, config)
    same_state(api, episode)
    for number, turn in enumerate(turns):
        for text in turn:
            name, args, kwargs = parse_call(text)
            if name not in METHODS:
                continue
            arguments = bind(name, args, kwargs)
            expected = call_original(api, name, arguments)
            got = call_ours(episode, name, arguments)
            assert got == expected, f"turn {number}: {text}"
        same_state(api, episode)


def test_replay_totals() -> None:
    """The ground truth holds enough MessageAPI calls (a guard against silent skips)."""
    calls = sum(1 for _, turns in ENTRIES for turn in turns for text in turn
                if parse_call(text)[0] in METHODS)
    assert calls >= 60


# ------------------------------------------------------------------ quirks, one by one

def _both(world: Any, config: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]
          ) -> list[str]:
    api, episode = original(config), ours(world, config)
    out = []
    for name, kwargs in calls:
        expected = call_original(api, name, kwargs)
        assert call_ours(episode, name, kwargs) == expected, (name, kwargs)
        same_state(api, episode)
        out.append(expected)
    return out


def test_add_contact_keeps_the_increment_on_a_taken_id(world: Any) -> None:
    first, second = _both(world, {"user_count": 3}, [("add_contact", {"user_name": "Eve"}),
                                                     ("add_contact", {"user_name": "Eve"})])
    assert first == json.dumps({"error": "User ID 'USR004' already exists."})
    assert json.loads(second)["user_id"] == "USR005"


def test_message_ids_redraw_on_collision(world: Any) -> None:
    # 67410 and 41772 are the first two draws of Random(200191).randint(10000, 99999)
    (sent,) = _both(world, {"generated_ids": {67410, 41772}, "current_user": "USR001"},
                    [("send_message", {"receiver_id": "USR002", "message": "hi"})])
    assert json.loads(sent)["message_id"]["new_id"] not in (67410, 41772)


def test_delete_removes_the_first_equal_entry(world: Any) -> None:
    inbox = [{"USR002": "a"}, {"USR003": "b"}, {"USR002": "a"}]
    _both(world, {"inbox": inbox, "current_user": "USR001"},
          [("delete_message", {"receiver_id": "USR002"}), ("view_messages_sent", {})])


def test_search_on_list_contents_fails_like_bfcl(world: Any) -> None:
    (result,) = _both(world, {"inbox": [{"USR002": ["x"]}], "current_user": "USR001"},
                      [("search_messages", {"keyword": "x"})])
    assert result.startswith("Error during execution:")


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
    api, episode = original(config), ours(world, config)
    for name, kwargs in calls:
        expected = call_original(api, name, kwargs)
        got = call_ours(episode, name, kwargs)
        assert got == expected, (name, kwargs)
        same_state(api, episode)
