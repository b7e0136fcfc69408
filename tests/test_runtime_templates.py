"""The functions the runtime makes once per class from code templates are exact.

The hot paths of a tool call are functions made per row or record class by renaming the
attributes of template functions (``CodeType.replace``): the setters of ``set_fields``
(``episode._setter``), the functions making a row's stale text fragments again
(``_Layout.remaker``) and a record's kept JSON text (``contract.kept_text``). Each has a
general path besides (more fields than a template holds, names that are no fields, values
of another type than declared); both ways must give what the plain definitions give:
``json.dumps`` of the export, the canonical digest, and an undo that brings back the very
caches of before.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import pytest
from test_row_text import VAULT

from worldspec.runtime.episode import Episode, Row
from worldspec.services.loading import compile_worlds

#: fields of the vault's Box written together, more than one setter template holds (8)
NINE = ("name", "count", "ratio", "flag", "items", "labels", "uniq", "day", "blob")


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    spec = tmp_path_factory.mktemp("vault") / "vault.world"
    spec.write_text(VAULT, encoding="utf-8")
    return compile_worlds([spec]).worlds["Vault"]


def _box(vault: type[Episode]) -> tuple[Episode, Row]:
    episode = vault(data=copy.deepcopy(vault.TASKS["two_boxes"].data))
    return episode, episode.tables["boxes"].row("a")


def _digest(row: Row) -> bytes:
    text = json.dumps(row.export(), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode()).digest()


def _values(count: int) -> list[Any]:
    """Values of the first ``count`` fields of :data:`NINE`, each unlike the task's."""
    return ["n", 7, 2.5, True, ("x", "y"), {"k": 2}, (3, 1), None, {"j": [1]}][:count]


@pytest.mark.parametrize("count", [2, 5, 8, 9])
def test_set_fields_of_any_count_is_exact_and_undone_whole(vault: type[Episode],
                                                           count: int) -> None:
    """``set_fields`` of up to eight fields is one function; nine go eight and one. Either
    way every field is set, the text and the digest are exact, one undo entry is logged per
    field, and undoing them brings back the very text, fragments and digest of before."""
    episode, box = _box(vault)
    names = NINE[:count]
    before, digest, state = box._result_text(), box.digest(), episode.state_hash()
    frags = box._frags
    mark = len(episode._undo)
    episode.set_fields(box, names, *_values(count))
    assert [getattr(box, name) for name in names] == _values(count)
    assert box._result_text() == json.dumps(box.export()) != before
    assert box.digest() == _digest(box) and episode.state_hash() != state
    assert len(episode._undo) - mark == count
    assert names in type(box)._GROUP_SETTERS  # made once for the class
    episode._rollback(mark)
    assert box._text is before and box._frags is frags and box.digest() == digest
    assert episode.state_hash() == state


def test_set_fields_of_names_that_are_no_fields_goes_name_by_name(
        vault: type[Episode]) -> None:
    """Names that repeat are set one after the other (the last value stays), and a name
    that is no field fails as ``setattr`` would; neither gets a setter of its own."""
    episode, box = _box(vault)
    mark = len(episode._undo)
    episode.set_fields(box, ("count", "count"), 3, 4)
    assert box.count == 4 and box._result_text() == json.dumps(box.export())
    with pytest.raises(AttributeError):
        episode.set_fields(box, ("name", "no_such_field"), "x", 1)
    assert ("count", "count") not in type(box)._GROUP_SETTERS
    episode._rollback(mark)
    assert (box.name, box.count) == ("Caf\u00e9 \u2603", 0)
    assert box._result_text() == json.dumps(box.export())


@pytest.mark.parametrize("count", [1, 4, 5, 9])
def test_stale_fragments_of_any_count_are_made_again_exactly(vault: type[Episode],
                                                             count: int) -> None:
    """Fields written one by one mark their fragments stale; the text made next makes those
    again by one function per mask (four fields per template, more chained) and equals
    ``json.dumps`` of the export, the json field ``blob`` made again every time."""
    episode, box = _box(vault)
    box._result_text()
    for name, value in zip(NINE[:count], _values(count), strict=True):
        episode.set_field(box, name, value)
    stale = box._stale
    assert stale and box._text is None
    assert box._result_text() == json.dumps(box.export())
    layout = type(box)._TEXT
    assert layout is not None and stale in layout.by_mask
    episode.set_field(box, "blob", {"again": [True, None]})  # json: never cached
    assert box._result_text() == json.dumps(box.export())


def test_a_record_keeps_its_text_and_falls_back_for_other_values(
        vault: type[Episode]) -> None:
    """A record's ``_json_text`` (one template function per field count) makes its text
    once and keeps it; a field holding a value of another type than declared, which the
    text makers refuse, gets the export's text instead, kept too."""
    module = __import__(vault.__module__, fromlist=["Point"])
    point = module.Point(1.5, -0.0)
    text = point._json_text()
    assert text == json.dumps(point.export()) == '{"x": 1.5, "y": -0.0}'
    assert point._json_text() is text and point._json is text
    tag = module.Tag(5, module.Level.low)  # a name that is no text: str_text refuses it
    text = tag._json_text()
    assert text == json.dumps(tag.export()) == '{"name": 5, "level": "low"}'
    assert tag._json_text() is text
