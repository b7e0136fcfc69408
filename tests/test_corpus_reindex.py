"""``synth corpus --reindex``: a corpus edited by hand gets an index that matches its files.

One small corpus (two counter worlds, made against the scripted model as
``tests/test_llm_corpus.py`` makes them) is built once; each test edits a copy by hand and
re-indexes it with no model at all (no endpoint is given).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_scripts import corpus_responder
from llm_server import ScriptedLLMServer
from test_corpus_index import check_index_matches_files
from test_llm_corpus import corpus_args, write_domains

from worldspec.cli.main import main as cli_main
from worldspec.services.loading import load_result
from worldspec.services.validation import check_paths

PEEK_TOOL = '''
tool peek() -> int
  "Show the counter without changing it."
{
  return total
}
'''

#: a conversational task written by hand, which reads the counter with the new tool
LOOK_TASK = '''
task look_then_count in Counter1 "Look, then add three." {
  given { total: 2 }
  instruction "Check the counter, add three, then take one away twice."
  persona "A night clerk, terse."
  known "Add three, take two."
  unknown "The total."
  check total_right "The total is three.": total == 3
  only changes total
  solution {
    peek()
    increment(by: 3)
    decrement()
    decrement()
  }
}
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A corpus made by ``synth corpus`` (scripted model), left as the run wrote it."""
    root = tmp_path_factory.mktemp("built")
    with ScriptedLLMServer() as server:
        server.responder = corpus_responder
        assert cli_main(corpus_args(server, write_domains(root), root / "corpus")) == 0
    yield root / "corpus"


@pytest.fixture
def corpus(built: Path, tmp_path: Path) -> Path:
    """A copy of the built corpus, to edit by hand."""
    return Path(shutil.copytree(built, tmp_path / "corpus"))


def read_index(folder: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((folder / "corpus.json").read_text(encoding="utf-8"))
    return loaded


def rows(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in
            (folder / "dataset.jsonl").read_text(encoding="utf-8").splitlines()]


def entry(index: dict[str, Any], world_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(w for w in index["worlds"] if w["id"] == world_id)
    return found


def snapshot(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def reindex(folder: Path, *extra: str) -> int:
    return cli_main(["synth", "corpus", "--reindex", "-o", str(folder), "--progress", "never",
                     *extra])


def test_a_built_corpus_has_world_statistics(built: Path) -> None:
    """The build writes the statistics too: counted from the compiled world's tools."""
    index = read_index(built)
    world = entry(index, "warehouse")
    checked = check_paths([built / world["file"], built / world["tasks_file"]])
    world_class = load_result(checked.result).worlds["Counter1"]
    read_only = [name for name, tool in world_class.TOOLS.items() if tool.read_only]
    assert read_only == []  # increment and decrement both write
    assert world["tools"] == {"read": 0, "write": len(world_class.TOOLS)} == \
        {"read": 0, "write": 2}
    assert world["state_items"] == 1
    assert world["tasks_by_setting"] == {"one-shot": 3, "conversational": 1}
    assert index["totals"]["tools"] == {"read": 0, "write": 4}
    assert index["totals"]["state_items"] == 2
    assert index["totals"]["tasks_by_setting"] == {"one-shot": 6, "conversational": 2}
    assert sum(index["totals"]["tasks_by_setting"].values()) == index["totals"]["tasks"]


def test_reindex_after_adding_a_read_tool_and_a_task(
        corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = read_index(corpus)
    old = entry(before, "warehouse")
    world_file = corpus / old["file"]
    world_file.write_text(world_file.read_text(encoding="utf-8") + PEEK_TOOL, encoding="utf-8")
    tasks_file = corpus / old["tasks_file"]
    tasks_file.write_text(tasks_file.read_text(encoding="utf-8") + LOOK_TASK, encoding="utf-8")
    journal = (corpus / "journals" / "validation.jsonl").read_text(encoding="utf-8")

    assert reindex(corpus) == 0, capsys.readouterr()
    assert "recorded a hand edit of warehouse" in capsys.readouterr().out
    check_index_matches_files(corpus)
    after = read_index(corpus)
    new = entry(after, "warehouse")
    assert new["sha256"] != old["sha256"] and new["tasks_sha256"] != old["tasks_sha256"]
    validations = (corpus / "journals" / "validation.jsonl").read_text(encoding="utf-8")
    added = [json.loads(line) for line in validations[len(journal):].splitlines()]
    assert [record["label"] for record in added] == ["warehouse"]  # pantry's was reused
    assert new["provenance"]["edits"] == [{
        "edit": 1, "world_sha256_before": old["sha256"],
        "tasks_sha256_before": old["tasks_sha256"], "world_sha256": new["sha256"],
        "tasks_sha256": new["tasks_sha256"], "validation_journal_key": added[0]["key"]}]
    assert {k: v for k, v in new["provenance"].items() if k != "edits"} == old["provenance"]
    assert "edits" not in entry(after, "pantry")["provenance"]
    # the new tool is counted, explored and offered to the agent
    assert new["tools"] == {"read": 1, "write": 2}
    assert after["totals"]["tools"] == {"read": 1, "write": 4}
    assert new["coverage"]["peek"]["changes_state"] is False
    assert new["coverage"]["peek"]["calls"] > 0
    assert new["validated"] and new["problems"] == []
    # the old tasks keep their flags; the new one is conversational (it has a persona)
    flags = {t["task"]: (t["sample"], t["conversational"], t["calls"], t["valid"])
             for t in new["tasks"]}
    assert flags == {**{t["task"]: (t["sample"], t["conversational"], t["calls"], t["valid"])
                        for t in old["tasks"]},
                     "look_then_count": (False, True, 4, True)}
    assert new["conversational_tasks"] == old["conversational_tasks"] + 1 == 2
    assert new["tasks_by_setting"] == {"one-shot": 3, "conversational": 2}
    # the dataset has the new task, and every warehouse row shows the new tool
    found = rows(corpus)
    assert len(found) == after["totals"]["tasks"] == before["totals"]["tasks"] + 1 == 9
    warehouse = [r for r in found if r["world"] == "Counter1"]
    assert "look_then_count" in {r["task_id"] for r in warehouse}
    assert all("peek" in {t["function"]["name"] for t in json.loads(r["tools"])}
               for r in warehouse)
    assert after["totals"]["conversational_tasks"] == 3
    assert after["totals"]["tokens"] == before["totals"]["tokens"]  # no model asked
    assert after["stages"]["worlds"] == before["stages"]["worlds"]


def test_an_edit_that_breaks_a_task(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The entry says which task and why; the world leaves the dataset until it is fixed,
    and fixing it reuses the journaled validation of the files as they were."""
    before = read_index(corpus)
    old = entry(before, "warehouse")
    tasks_file = corpus / old["tasks_file"]
    original = tasks_file.read_text(encoding="utf-8")
    built_rows = rows(corpus)
    broken = original.replace("total == 7", "total == 70")  # count_2's check: 5 + 2 is 7
    assert broken != original
    tasks_file.write_text(broken, encoding="utf-8")

    assert reindex(corpus) == 1
    why = "count_2: WS611 check 'total_right' is false after the reference solution"
    assert why in capsys.readouterr().out
    check_index_matches_files(corpus)
    after = read_index(corpus)
    new = entry(after, "warehouse")
    assert not new["validated"] and why in new["problems"]
    assert {t["task"]: t["valid"] for t in new["tasks"]}["count_2"] is False
    assert new["tasks_by_setting"] == {"one-shot": 0, "conversational": 0}
    assert {r["world"] for r in rows(corpus)} == {"Counter2"}
    assert after["totals"]["tasks"] == 4 and after["totals"]["validated_worlds"] == 1
    assert after["stages"]["validation"]["rejected"] == 1
    assert new["provenance"]["edits"][0]["tasks_sha256"] == new["tasks_sha256"]

    tasks_file.write_text(original, encoding="utf-8")  # repaired: as it was built
    journal = (corpus / "journals" / "validation.jsonl").read_bytes()
    assert reindex(corpus) == 0
    assert (corpus / "journals" / "validation.jsonl").read_bytes() == journal
    fixed = entry(read_index(corpus), "warehouse")
    assert fixed["validated"] and fixed["tasks_sha256"] == old["tasks_sha256"]
    assert [e["edit"] for e in fixed["provenance"]["edits"]] == [1, 2]
    assert {k: v for k, v in fixed.items() if k != "provenance"} == \
        {k: v for k, v in old.items() if k != "provenance"}
    assert rows(corpus) == built_rows


def test_reindex_is_a_no_op_on_an_index_that_matches(built: Path, corpus: Path) -> None:
    """An unedited corpus re-indexes to the very files the build wrote; after an edit,
    the second re-index changes nothing."""
    assert reindex(corpus) == 0
    assert snapshot(corpus) == snapshot(built)
    world_file = corpus / entry(read_index(corpus), "pantry")["file"]
    world_file.write_text(world_file.read_text(encoding="utf-8") + PEEK_TOOL, encoding="utf-8")
    assert reindex(corpus) == 0
    once = snapshot(corpus)
    assert once != snapshot(built)
    assert reindex(corpus) == 0
    assert snapshot(corpus) == once


def test_a_world_dropped_from_the_index_leaves_the_dataset(corpus: Path) -> None:
    index = read_index(corpus)
    index["worlds"] = [w for w in index["worlds"] if w["id"] != "pantry"]
    (corpus / "corpus.json").write_text(json.dumps(index), encoding="utf-8")
    assert reindex(corpus) == 0
    check_index_matches_files(corpus)
    after = read_index(corpus)
    assert [w["id"] for w in after["worlds"]] == ["warehouse"]
    assert (after["totals"]["worlds"], after["totals"]["tasks"]) == (1, 4)
    assert after["totals"]["tools"] == {"read": 0, "write": 2}
    assert {r["world"] for r in rows(corpus)} == {"Counter1"}


def test_reindex_as_json(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert reindex(corpus, "--format", "json") == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["ok"] and shown["edited"] == []
    assert shown["index"] == read_index(corpus)


@pytest.mark.parametrize(("damage", "words"), [
    ("no-index", "corpus.json' does not exist"),
    ("garbled", "corpus.json' is not valid JSON"),
    ("not-an-index", "is not a corpus index of version 1"),
    ("entry-without-file", "world entry 1 (warehouse) has no valid 'file'"),
    ("world-gone", "world 'pantry': worlds/pantry/counter2.world is gone"),
    ("tasks-gone", "world 'warehouse': worlds/warehouse/tasks.world is gone"),
    ("outside", "world 'warehouse': '../elsewhere.world' is not a path inside"),
])
def test_a_corpus_that_cannot_be_reindexed(damage: str, words: str, corpus: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    index_path = corpus / "corpus.json"
    index = read_index(corpus)
    if damage == "no-index":
        index_path.unlink()
    elif damage == "garbled":
        index_path.write_text(index_path.read_text(encoding="utf-8")[:200], encoding="utf-8")
    elif damage == "not-an-index":
        index_path.write_text("[1, 2]\n", encoding="utf-8")
    elif damage == "entry-without-file":
        del index["worlds"][0]["file"]
        index_path.write_text(json.dumps(index), encoding="utf-8")
    elif damage == "world-gone":
        (corpus / entry(index, "pantry")["file"]).unlink()
    elif damage == "tasks-gone":
        (corpus / entry(index, "warehouse")["tasks_file"]).unlink()
    else:
        index["worlds"][0]["file"] = "../elsewhere.world"
        index_path.write_text(json.dumps(index), encoding="utf-8")
    kept = snapshot(corpus)
    assert reindex(corpus) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    assert snapshot(corpus) == kept  # nothing was written


@pytest.mark.parametrize(("extra", "words"), [
    ([], "name the corpus folder to re-index: -o DIR"),
    (["-o", "nowhere"], "'nowhere' is not a corpus folder"),
    (["-o", ".", "--domains", "d.jsonl"], "give no --domains or --corpus"),
])
def test_bad_reindex_arguments(extra: list[str], words: str, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli_main(["synth", "corpus", "--reindex", *extra]) == 2
    assert words in capsys.readouterr().err


def test_a_run_after_a_hand_edit_keeps_the_edit_and_appends_mined_tasks(
        corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The warehouse is edited by hand and re-indexed; running ``synth corpus`` again with
    ``--mined 2`` asks for no world and no written task again (of the edited world or the
    other), keeps the edited world file byte for byte, appends the mined tasks to the edited
    tasks file, and keeps the edit's provenance. The untouched pantry is mined as usual."""
    from test_synth_mined import JUDGE, WRITER, _responder

    old = entry(read_index(corpus), "warehouse")
    world_file, tasks_file = corpus / old["file"], corpus / old["tasks_file"]
    world_file.write_text(world_file.read_text(encoding="utf-8") + PEEK_TOOL, encoding="utf-8")
    tasks_file.write_text(tasks_file.read_text(encoding="utf-8") + LOOK_TASK, encoding="utf-8")
    assert reindex(corpus) == 0, capsys.readouterr()
    edited_world = world_file.read_bytes()
    edited_tasks = tasks_file.read_text(encoding="utf-8")
    edits = entry(read_index(corpus), "warehouse")["provenance"]["edits"]

    mined = _responder()
    with ScriptedLLMServer() as server:
        def answer(request: Any) -> str:
            assert WRITER in request.system or JUDGE in request.system, request.system[:200]
            return mined(request)

        server.responder = answer
        args = [*corpus_args(server, corpus.parent / "domains.jsonl", corpus), "--mined", "2"]
        write_domains(corpus.parent)
        assert cli_main(args) == 0, capsys.readouterr()
        asked = len(server.chat_requests)
    assert asked == 8  # an instruction and a check for each of two tasks in each world
    assert world_file.read_bytes() == edited_world
    text = tasks_file.read_text(encoding="utf-8")
    assert text.startswith(edited_tasks.rstrip("\n")[:200])
    assert "task look_then_count in Counter1" in text and text.count("task mined_") == 2
    after = read_index(corpus)
    warehouse = entry(after, "warehouse")
    assert warehouse["provenance"]["edits"] == edits
    names = {t["task"]: t for t in warehouse["tasks"]}
    assert {"look_then_count", *(t["task"] for t in old["tasks"])} <= set(names)
    assert names["look_then_count"]["conversational"] and all(t["valid"] for t in names.values())
    assert sum(n.startswith("mined_") for n in names) == 2
    assert warehouse["validated"] and len(warehouse["tasks"]) == len(old["tasks"]) + 3
    check_index_matches_files(corpus)
    pantry = entry(after, "pantry")
    assert sum(t["task"].startswith("mined_") for t in pantry["tasks"]) == 2
    # a second run asks nothing again and counts the tokens once
    with ScriptedLLMServer() as server:
        server.responder = mined
        args = [*corpus_args(server, corpus.parent / "domains.jsonl", corpus), "--mined", "2"]
        assert cli_main(args) == 0
        assert not server.chat_requests
    again = entry(read_index(corpus), "warehouse")
    assert again["provenance"]["task_tokens"] == warehouse["provenance"]["task_tokens"]
    # the totals count the tokens spent before the edit too, once
    totals = read_index(corpus)["totals"]
    spent = sum(w["provenance"]["world_tokens"]["total_tokens"]
                + w["provenance"]["task_tokens"]["total_tokens"]
                for w in read_index(corpus)["worlds"])
    assert totals["tokens"] == spent
