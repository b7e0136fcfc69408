"""A row's JSON text and digest, assembled from cached field fragments, are exact.

``Row._result_text()`` (tau2's result form) and ``Row.digest()`` reuse the JSON text of each
field for as long as the field holds the same (immutable) value. Over random sequences of
calls (mostly writes), resets, failed calls and copies, on every example world, on tau2's
retail world loaded with part of tau2's database, and on a world holding every kind of
stored value, every row's text must equal ``json.dumps(row.export())`` and its digest the
SHA-256 of the canonical JSON of ``row.export()``, after every step.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from worldspec.runtime import helpers as rt
from worldspec.runtime.episode import Episode, Row, ToolSpec
from worldspec.services.loading import compile_worlds
from worldspec.testing.hypothesis_suite import from_schema

ROOT = Path(__file__).resolve().parent.parent
PEERS = (ROOT / os.environ.get("WORLDSPEC_PEERS", "../shared/peers")).resolve()
TAU2_DB = PEERS / "tau2-retail" / "db.json"

VAULT = """\
world Vault "Every kind of stored value in one entity, for the row text tests."

config { results: tau2  clock: "2024-01-01T09:00:00"  tick: 60  seed: 5 }

enum Level { low, high = "high (\u00e9t\u00e9)" }

record Point { x: float  y: float }
record Tag { name: str  level: Level }
record Meta { label: str  extra: json }
union Mark by kind { point: Point, tag: Tag }

entity Box {
  key id: str
  name: str
  count: int = 0
  ratio: float = 0.5
  flag: bool = false
  level: Level = low
  day: date? = none
  at: datetime? = none
  wait: duration? = none
  items: list[str] = []
  uniq: set[int] = []
  labels: map[str, int] = {}
  ranks: map[int, list[Point]] = {}
  point: Point = Point(x: 0.0, y: 0.0)
  mark: Mark? = none
  meta: Meta? = none
  blob: json = none
  marks: list[Mark] = []
}

state { boxes: table Box }

tool add_box(id: str, name: str) -> Box "Add a box." {
  let box = Box(id: id, name: name)
  insert box into boxes
  return box
}
tool remove_box(box: Box) -> str "Remove a box." {
  delete box from boxes
  return box.id
}
tool get_box(box: Box) -> Box "A box." { return box }
tool set_name(box: Box, name: str) -> Box "Rename." { box.name = name  return box }
tool set_count(box: Box, count: int) -> Box "Count." { box.count = count  return box }
tool set_ratio(box: Box, ratio: float) -> Box "Ratio." { box.ratio = ratio  return box }
tool set_flag(box: Box, flag: bool) -> Box "Flag." { box.flag = flag  return box }
tool set_level(box: Box, level: Level) -> Box "Level." { box.level = level  return box }
tool set_day(box: Box, day: date?) -> Box "Day." { box.day = day  return box }
tool set_at(box: Box, at: datetime?) -> Box "Time." { box.at = at  return box }
tool set_wait(box: Box, wait: duration?) -> Box "Wait." { box.wait = wait  return box }
tool push_item(box: Box, item: str) -> Box "Append." { append item to box.items  return box }
tool add_uniq(box: Box, n: int) -> Box "Add to a set." { append n to box.uniq  return box }
tool set_label(box: Box, key: str, value: int) -> Box "A map entry." {
  box.labels[key] = value
  return box
}
tool drop_label(box: Box, key: str) -> Box "Remove a map entry." {
  remove key from box.labels
  return box
}
tool set_rank(box: Box, key: int, x: float) -> Box "A map of lists of records." {
  box.ranks[key] = [Point(x: x, y: x)]
  return box
}
tool move_point(box: Box, x: float) -> Box "A field of a record field." {
  box.point.x = x
  return box
}
tool tag(box: Box, name: str, level: Level) -> Box "A union value." {
  box.mark = Tag(name: name, level: level)
  append Tag(name: name, level: level) to box.marks
  return box
}
tool pin(box: Box, x: float) -> Box "Another union variant." {
  box.mark = Point(x: x, y: 1.0)
  append Point(x: x, y: 2.0) to box.marks
  return box
}
tool set_meta(box: Box, label: str, extra: json) -> Box "A record holding json." {
  box.meta = Meta(label: label, extra: extra)
  return box
}
tool set_blob(box: Box, blob: json) -> Box "A json field." { box.blob = blob  return box }
tool set_blob_key(box: Box, key: str, value: json) -> Box "One member of a json object." {
  box.blob[key] = value
  return box
}
tool rename_then_fail(box: Box, name: str) -> Box "Changes, then fails: rolled back." {
  box.name = name
  box.count += 1
  fail "Refused after the change."
}
tool rename_split(box: Box, name: str, parts: int) -> Box "Fields set in a run; may fail within." {
  box.name = name
  box.count = 12 // parts
  box.ratio = 1.5
  box.name = name + "!"
  return box
}

task two_boxes in Vault "Start with two boxes." {
  given { boxes: [{id: "a", name: "Caf\u00e9 \u2603", labels: {"k": 1}, blob: {"x": [1, 2.5]}},
                  {id: "b", name: "plain", items: ["p", "q"], day: "2024-02-29"}] }
  instruction "Nothing."
  check fine: len(boxes) == 2
  solution { get_box(box: "a") }
}
"""


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    spec = tmp_path_factory.mktemp("vault") / "vault.world"
    spec.write_text(VAULT, encoding="utf-8")
    return compile_worlds([spec]).worlds["Vault"]


@pytest.fixture(scope="module")
def examples() -> dict[str, type[Episode]]:
    return compile_worlds([ROOT / "examples"]).worlds


def retail_data() -> dict[str, Any] | None:
    """A slice of tau2's retail database: every product, a few users and their orders."""
    if not TAU2_DB.is_file():
        return None
    db = json.loads(TAU2_DB.read_text(encoding="utf-8"))
    users = dict(list(db["users"].items())[:6])
    orders = {k: o for k, o in db["orders"].items() if o["user_id"] in users}
    for user in users.values():
        user["orders"] = [k for k in user["orders"] if k in orders]
    return {"products": db["products"], "users": users, "orders": orders}


# ------------------------------------------------------------------------------ checks

def _canonical_digest(data: Any) -> bytes:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return hashlib.sha256(text.encode()).digest()


def rows_of(episode: Episode) -> Iterator[Row]:
    for table in episode.tables.values():
        yield from table.rows.values()


def assert_rows_exact(episode: Episode) -> None:
    """Every row's text and digest, cached or rebuilt from its fragments, are exact."""
    for row in rows_of(episode):
        exported = row.export()
        text, digest = json.dumps(exported), _canonical_digest(exported)
        assert row._result_text() == text
        assert row.digest() == digest
        row._text = None  # assemble both again from the row's fragment cache
        row._digest = None
        assert row._result_text() == text
        assert row.digest() == digest


def _strings(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        if len(value) < 40:
            out.add(value)
    elif isinstance(value, list):
        for x in value:
            _strings(x, out)
    elif isinstance(value, dict):
        for k, x in value.items():
            _strings(k, out)
            _strings(x, out)


def _argument(schema: Mapping[str, Any], pool: list[str]) -> st.SearchStrategy[Any]:
    """Values of ``schema``; strings mostly taken from ``pool`` (values of related rows)."""
    kind = schema.get("type")
    anything = from_schema(dict(schema))
    if pool and kind == "string" and "enum" not in schema and "format" not in schema:
        return st.one_of(st.sampled_from(pool), st.sampled_from(pool), anything)
    if pool and kind == "array" and schema.get("items", {}).get("type") == "string":
        return st.one_of(st.lists(st.sampled_from(pool), min_size=1, max_size=3), anything)
    return anything


def _call(data: st.DataObject, episode: Episode, tools: list[ToolSpec]) -> None:
    """One call with arguments that often succeed: parameters named like a table's key (or
    typed as its entity) get existing keys first; the other strings come from the rows those
    keys name and the rows those rows mention (an order's items, its user's payment
    methods, the products of its items)."""
    spec = data.draw(st.sampled_from(tools), label="tool")
    by_key: dict[Any, Row] = {}
    key_names: dict[str, tuple[Any, ...]] = {}
    for table in episode.tables.values():
        for key, row in table.rows.items():
            by_key[key] = row
            key_names[row.KEY] = table.keys()
    keyed = [p for p in spec.params if p.table or p.name in key_names]
    others = [p for p in spec.params if p not in keyed]
    args: dict[str, Any] = {}
    related: set[str] = set()
    for param in keyed:
        keys = episode.tables[param.table].keys() if param.table else key_names[param.name]
        choice = st.one_of(st.sampled_from(keys), st.sampled_from(keys),
                           from_schema(param.schema)) if keys else from_schema(param.schema)
        if param.required or data.draw(st.booleans(), label=f"give {param.name}"):
            args[param.name] = value = data.draw(choice, label=param.name)
            if isinstance(value, str) and value in by_key:
                _strings(by_key[value].export(), related)
    for mentioned in sorted(related):
        if mentioned in by_key and mentioned not in args.values():
            _strings(by_key[mentioned].export(), related)
    pool = sorted(related)
    for param in others:
        if param.required or data.draw(st.booleans(), label=f"give {param.name}"):
            args[param.name] = data.draw(_argument(param.schema, pool), label=param.name)
    result = episode.call(spec.name, args)
    if episode.RESULTS == "tau2" and isinstance(episode._last_raw, Row) \
            and not episode.failed(result):
        assert result == json.dumps(episode._last_raw.export())


def run_sequence(data: st.DataObject, world: type[Episode], start: Mapping[str, Any]) -> None:
    """Random calls (writes twice as likely), resets, copies; rows checked after each step."""
    episode = world(data=start)
    writes = [s for s in world.TOOLS.values() if not s.read_only]
    tools = writes * 2 + [s for s in world.TOOLS.values() if s.read_only]
    assert_rows_exact(episode)
    others: list[Episode] = []
    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        step = data.draw(st.sampled_from(["call"] * 8 + ["reset", "copy"]), label="step")
        if step == "reset":
            episode.reset(data=start)
        elif step == "copy":  # go on with a copy; the original must stay exact too
            others.append(episode)
            episode = episode.copy()
        else:
            _call(data, episode, tools)
        assert_rows_exact(episode)
        for other in others:
            assert_rows_exact(other)


PROFILE = settings(max_examples=25, deadline=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                          HealthCheck.filter_too_much])

WORLDS = ("MobileMessaging", "OnlineShop", "ClinicScheduling", "MessageAPI", "TicketAPI",
          "TradingBot")


@pytest.mark.parametrize("name", WORLDS)
@PROFILE
@given(data=st.data())
def test_example_worlds(examples: dict[str, type[Episode]], name: str,
                        data: st.DataObject) -> None:
    world = examples[name]
    starts = [task.data for task in world.TASKS.values()] * 3 + [{}]  # mostly with rows
    start = data.draw(st.sampled_from(starts), label="start")
    run_sequence(data, world, start)


_RETAIL = retail_data()


@pytest.mark.skipif(_RETAIL is None, reason=f"tau2's db.json not found at {TAU2_DB}")
@PROFILE
@given(data=st.data())
def test_retail_world(examples: dict[str, type[Episode]], data: st.DataObject) -> None:
    assert _RETAIL is not None
    run_sequence(data, examples["Tau2Retail"], _RETAIL)


@PROFILE
@given(data=st.data())
def test_every_kind_of_value(vault: type[Episode], data: st.DataObject) -> None:
    start = data.draw(st.sampled_from([vault.TASKS["two_boxes"].data] * 3 + [{}]),
                      label="start")
    run_sequence(data, vault, start)


# ------------------------------------------------------------------------ fixed cases

def test_json_fields_are_never_cached(vault: type[Episode]) -> None:
    """A field whose type holds ``json`` (directly or in a record) is serialised every time:
    its text follows the value even if the value were changed in place."""
    box_class = type(vault(task="two_boxes").tables["boxes"].row("a"))
    flags = {name: keep for _, name, _, keep in box_class.JSON_FIELDS}
    assert flags["blob"] is False and flags["meta"] is False
    assert all(keep for name, keep in flags.items() if name not in ("blob", "meta"))
    episode = vault(task="two_boxes")
    box = episode.tables["boxes"].row("a")
    assert box._result_text() == json.dumps(box.export())
    box.blob["x"].append("in place")  # never done by generated code; shows the fallback
    box._text = None
    box._digest = None
    assert box._result_text() == json.dumps(box.export())
    assert '"in place"' in box._result_text()
    assert box.digest() == _canonical_digest(box.export())


def test_field_lists_match_export(examples: dict[str, type[Episode]],
                                  vault: type[Episode]) -> None:
    """``JSON_FIELDS`` names every exported field, in ``export()`` order."""
    checked = 0
    for world in [*examples.values(), vault]:
        for task in world.TASKS.values():
            for row in rows_of(world(data=task.data)):
                names = [name for _, name, _, _ in type(row).JSON_FIELDS]
                assert names == list(row.export())
                checked += 1
    assert checked


def test_undo_and_redo_reuse_fragments(vault: type[Episode]) -> None:
    """A reset brings a field's old value back; its fragment is still cached."""
    episode = vault(task="two_boxes")
    box = episode.tables["boxes"].row("a")
    before = box._result_text()
    changed = episode.call("set_name", {"box": "a", "name": "new"})
    assert changed == json.dumps(box.export())
    episode.reset(task="two_boxes")
    box = episode.tables["boxes"].row("a")
    assert box._result_text() == before == json.dumps(box.export())
    assert episode.call("set_name", {"box": "a", "name": "new"}) == changed
    assert box.digest() == _canonical_digest(box.export())


def test_text_helpers_write_what_json_dumps_writes() -> None:
    """The per-type text makers of generated records (and the float text cache, asked twice)
    give ``json.dumps``'s text, signed zeros and non-finite floats included."""
    from worldspec.runtime import values as v

    floats = [0.0, -0.0, 1.5, -2.25, 1e300, 5e-324, 1 / 3, 289.66, float("inf"),
              float("-inf"), float("nan")]
    for _ in range(2):
        for x in floats:
            assert v.float_text(x) == json.dumps(x)
            assert v.number_text(x) == json.dumps(x)
    for n in (0, -3, 2 ** 100, True):
        assert v.int_text(n) == json.dumps(n) and v.number_text(n) == json.dumps(n)
    for s in ("", "a", "\u00e9t\u00e9", "\"\\\n", "\U0001f600"):
        assert v.str_text(s) == json.dumps(s)


def test_texts_of_records_are_exact_for_any_value(vault: type[Episode]) -> None:
    """The text makers of stored records, lists and maps of records, lists of text and maps
    give ``json.dumps`` of the export for their type's values (a record's text made or kept)
    and, as ``arguments: dynamic`` may store instead, for any JSON value, none, a list
    mixing records and other values, and records that keep no text (they hold json)."""
    from worldspec.runtime import values as v

    episode = _two_boxes(vault)
    episode.call("tag", {"box": "a", "name": "t", "level": "high"})
    episode.call("set_meta", {"box": "a", "label": "m", "extra": {"k": [1]}})
    box = episode.tables["boxes"].row("a")
    point, tag, meta = box.point, box.mark, box.meta
    assert not hasattr(meta, "_json")  # a record holding json keeps no text
    fresh = type(point)(x=1.5, y=-0.0)  # its text not made yet
    records = [point, tag, meta, fresh]
    others = [None, "text", 3, 2.5, True, [1, "a"], {"x": None}, (), []]

    def exact(make: Any, value: Any) -> None:
        assert make(value) == json.dumps(v.export_value(value)), (make, value)

    for value in [*records, *others]:
        exact(v.record_text, value)
    for value in [(point, fresh, tag), (meta,), (point, "x"), ("x", point), (None,),
                  [point], *others]:
        exact(v.records_text, value)
    for value in [{"a": point, "b": fresh}, {"\u00e9": tag}, {"m": meta}, {"a": point, "b": 1},
                  {1: point}, {None: point, True: fresh}, {}, *others]:
        exact(v.record_map_text, value)
    for value in [("a", "\u00e9\n"), ("a", 1), ("a", None), ["a"], (), None, "ab", 7]:
        exact(v.str_list_text, value)
    kept = {"k": "v", "\u00e9": "\U0001f600"}
    for value in [kept, kept, {"k": [1, {"x": 2}]}, {1: "a"}, None, "text", [1], 2]:
        exact(v.map_text, value)
    assert fresh._json is not None  # made once, then kept
    assert v.record_text(fresh) is fresh._json


def test_text_lists_load_as_the_general_loader_does() -> None:
    """``want_str_list`` (the invokers' fast path) accepts and refuses what
    ``want_list(..., want_str)`` does, with the same messages."""
    from worldspec.runtime import values as v
    from worldspec.runtime.errors import ArgumentError

    def general(value: object) -> object:
        return v.want_list(value, "ids", lambda x, p: v.want_str(x, p))

    for value in ([], ["a", "b"], ("a",), ["\u00e9"], ["a", 2], "ab", None, ["\ud800"],
                  [True], {"a": 1}):
        outcomes = []
        for load in (general, lambda x: v.want_str_list(x, "ids")):
            try:
                outcomes.append(("ok", load(value)))
            except ArgumentError as exc:
                outcomes.append(("error", exc.message))
        assert outcomes[0] == outcomes[1], value


# ------------------------------------------------------- changes tracked per field

def _two_boxes(vault: type[Episode]) -> Episode:
    """An episode of the vault's task data, copied: other tests change a json value of that
    data in place (which no generated code does) after its digest was cached."""
    return vault(data=copy.deepcopy(vault.TASKS["two_boxes"].data))


def _fresh_fragments(row: Row) -> list[str]:
    layout = type(row)._TEXT
    assert layout is not None
    return layout.fragments(layout.get(row))


def test_a_failed_write_puts_the_text_and_fragments_back(vault: type[Episode]) -> None:
    """A call that changes fields and then fails leaves the row's cached text (the very
    object), its fragments and its digest as they were; the next write and the state hash
    are exact."""
    data = copy.deepcopy(vault.TASKS["two_boxes"].data)
    episode = vault(data=data)
    box = episode.tables["boxes"].row("a")
    before, digest, state = box._result_text(), box.digest(), episode.state_hash()
    failed = episode.call("rename_then_fail", {"box": "a", "name": "gone"})
    assert episode.failed(failed)
    assert box._text is before and box.digest() == digest
    assert box._frags == _fresh_fragments(box) and box._stale == 0
    assert episode.state_hash() == state
    renamed = episode.call("set_name", {"box": "a", "name": "new"})
    assert renamed == json.dumps(box.export()) and '"new"' in renamed
    assert box.digest() == _canonical_digest(box.export())
    episode.reset(data=data)  # the same data: the undo log rolled back
    assert box._text is before and box._frags == _fresh_fragments(box)
    assert episode.state_hash() == state


def test_a_run_of_field_writes_is_undone_whole(vault: type[Episode]) -> None:
    """Statements setting fields of one row one after the other are one write each
    (``set_field``); a value failing within the run puts every field back (those not yet
    set keep theirs), with the very text, the fragments and the digest of before; a run
    that completes marks each field it set, and undoing it, or rebuilding the initial
    state, brings everything back."""
    data = copy.deepcopy(vault.TASKS["two_boxes"].data)
    episode = vault(data=data)
    box = episode.tables["boxes"].row("a")
    before, digest, state = box._result_text(), box.digest(), episode.state_hash()
    frags = box._frags
    mark = len(episode._undo)
    failed = episode.call("rename_split", {"box": "a", "name": "new", "parts": 0})
    assert episode.failed(failed) and "division" in failed
    assert len(episode._undo) == mark
    assert (box.name, box.count, box.ratio) == ("Caf\u00e9 \u2603", 0, 0.5)
    assert box._text is before and box._frags is frags and box.digest() == digest
    assert episode.state_hash() == state
    done = episode.call("rename_split", {"box": "a", "name": "new", "parts": 5})
    assert json.loads(done) == {**json.loads(before), "name": "new!", "count": 2, "ratio": 1.5}
    assert len(episode._undo) - mark == 4  # one write per statement
    assert done == json.dumps(box.export()) and box._frags == _fresh_fragments(box)
    initial = episode._rebuild_initial()  # the undo log played backwards, on a copy
    assert initial.call("get_box", {"box": "a"}) == before
    assert initial.state_hash() == state
    episode._rollback(mark)
    assert box._text is before and box._frags is frags and episode.state_hash() == state


def test_a_changed_field_is_marked_and_its_undo_exact(vault: type[Episode]) -> None:
    """A write marks the field's fragment stale (one bit) and keeps the fragments and stale
    bits of then in its undo entry; undoing the writes in any number brings back exactly the
    fragments of the values restored, and the text is made again from the stale fields
    alone."""
    episode = _two_boxes(vault)
    box = episode.tables["boxes"].row("a")
    original = box._result_text()
    at = type(box)._AT
    episode.set_field(box, "name", "one")  # the runtime's write, as generated code calls it
    episode.set_field(box, "count", 7)
    assert box._text is None and box._stale == at["name"][1] | at["count"][1]
    after_two = box._result_text()
    assert after_two == json.dumps(box.export()) and box._stale == 0
    assert episode.call("set_name", {"box": "a", "name": "two"}) == json.dumps(box.export())
    episode._rollback(len(episode._undo) - 1)  # the last write only
    assert box._text is after_two and box._frags == _fresh_fragments(box)
    episode._rollback(0)
    assert box._text is original and box._frags == _fresh_fragments(box)
    assert box._stale == 0 and box.digest() == _canonical_digest(box.export())


def test_a_copy_keeps_the_text_and_changes_alone(vault: type[Episode]) -> None:
    """A copy's rows keep their text and share its fragments (the same values; a fragment
    list is never changed in place); a write to the copy makes the copy's text from a new
    list with the changed field's fragment made again, and changes neither the original's
    text nor its fragments."""
    episode = _two_boxes(vault)
    box = episode.tables["boxes"].row("a")
    text = box._result_text()
    frags = box._frags
    assert frags is not None
    kept = list(frags)
    other = episode.copy()
    twin = other.tables["boxes"].row("a")
    assert twin is not box and twin._text is text and twin._frags is frags
    changed = other.call("set_name", {"box": "a", "name": "copy"})
    assert changed == json.dumps(twin.export()) and box._result_text() is text
    assert twin._frags is not frags and twin._frags == _fresh_fragments(twin)
    assert box._frags is frags and frags == kept == _fresh_fragments(box)
    name = type(box)._AT["name"][0]
    assert [i for i, (a, b) in enumerate(zip(frags, twin._frags, strict=True)) if a != b] == [name]


REFS = """\
world Refs "Rows that refer to other rows."

config { results: tau2 }

entity User { key id: str  name: str }
entity Order { key id: str  user: User  note: str = "" }

state { users: table User  orders: table Order }

tool set_note(order: Order, note: str) -> Order "A note." { order.note = note  return order }
tool give_to(order: Order, user: User) -> Order "Another user." {
  order.user = user
  return order
}
tool drop_user(user: User) -> str "Delete a user." {
  delete user from users
  return "done"
}
tool hand_over(order: Order, user: User, note: str) -> Order "Another user, with a note." {
  order.note = note
  order.user = user
  return order
}
"""


def test_invariant_checks_are_skipped_only_where_nothing_can_break(
        tmp_path: Path, vault: type[Episode]) -> None:
    """A tool that sets no field holding keys and inserts and deletes nothing (in a world
    without declared invariants) runs without the check; one that may break a reference
    keeps it, and the broken reference still fails the call."""
    spec = tmp_path / "refs.world"
    spec.write_text(REFS, encoding="utf-8")
    world = compile_worlds([spec]).worlds["Refs"]
    checks = {name: tool.checks for name, tool in world.TOOLS.items()}
    assert checks == {"set_note": False, "give_to": True, "drop_user": True, "hand_over": True}
    assert vault.TOOLS["set_name"].checks is False and vault.TOOLS["add_box"].checks is True
    assert vault.TOOLS["get_box"].checks is False  # read only
    episode = world(data={"users": [{"id": "u", "name": "U"}, {"id": "v", "name": "V"}],
                          "orders": [{"id": "o", "user": "u"}]})
    state = episode.state_hash()
    result = episode.call("drop_user", {"user": "u"})
    assert episode.failed(result) and "still referenced" in result
    assert episode.state_hash() == state
    assert not episode.failed(episode.call("give_to", {"order": "o", "user": "v"}))
    assert not episode.failed(episode.call("drop_user", {"user": "u"}))
    assert json.loads(episode.call("set_note", {"order": "o", "note": "n"}))["note"] == "n"
    # a run setting the reference and another field: the check sees the row as changed
    assert json.loads(episode.call("hand_over", {"order": "o", "user": "v", "note": "m"})) \
        == {"id": "o", "user": "v", "note": "m"}
    orders = episode.tables["orders"]
    assert rt.changed_rows(episode, orders, ("user",)) == [orders.row("o")]
    assert rt.changed_rows(episode, orders, ("id",)) == []


def test_retail_writes_run_without_the_check(examples: dict[str, type[Episode]]) -> None:
    """tau2's retail world declares no invariant and no write tool sets Order.user_id."""
    writes = {name: tool.checks for name, tool in examples["Tau2Retail"].TOOLS.items()
              if not tool.read_only}
    assert len(writes) == 7 and not any(writes.values())
    assert all(tool.checks for world in examples.values() if world.WORLD == "OnlineShop"
               for tool in world.TOOLS.values() if not tool.read_only)
