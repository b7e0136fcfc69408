"""The synthesised corpus in ``examples/corpus`` holds what its index says, and enough of it.

Skipped until the corpus is made (``worldspec synth corpus ... -o examples/corpus``, see
docs/llm.md). Once it is there, this keeps it honest: the index matches the files, and every
world meets the bar the corpus was made for.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from worldspec.llm_frontend.coverage import unreached

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples" / "corpus"

pytestmark = pytest.mark.skipif(not (CORPUS / "corpus.json").is_file(),
                                reason="examples/corpus is not made yet")


def index(corpus: Path = CORPUS) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))
    return loaded


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_text(encoding="utf-8").encode("utf-8")).hexdigest()


def check_index_matches_files(corpus: Path) -> None:
    """The index of the corpus folder ``corpus`` holds its files' hashes and row count
    (``tests/test_corpus_reindex.py`` runs it on re-indexed corpora too)."""
    found = index(corpus)
    for world in found["worlds"]:
        assert sha256(corpus / world["file"]) == world["sha256"], world["id"]
        assert sha256(corpus / world["tasks_file"]) == world["tasks_sha256"], world["id"]
    text = (corpus / "dataset.jsonl").read_text(encoding="utf-8")
    assert len(text.splitlines()) == found["totals"]["tasks"]
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == found["dataset_sha256"]
    assert all((corpus / "journals" / f"{stage}.jsonl").is_file()
               for stage in ("worlds", "tasks", "validation"))


def test_the_index_matches_the_files() -> None:
    check_index_matches_files(CORPUS)


def test_every_world_meets_the_bar() -> None:
    found = index()
    assert len(found["worlds"]) >= 12
    assert len({w["world"] for w in found["worlds"]}) == len(found["worlds"])
    for world in found["worlds"]:
        assert world["validated"] and not world["findings"], world["id"]
        assert not unreached(world["coverage"]), world["id"]
        written = [t for t in world["tasks"] if not t["sample"] and t["valid"]]
        assert len([t for t in written if t["calls"] >= 4]) >= 6, world["id"]
        assert world["conversational_tasks"] >= 1, world["id"]
        assert world["explored_calls"] >= 100 * 40, world["id"]


def test_the_corpus_is_at_envscalers_scale_and_richness() -> None:
    """Issue 34's bar, from the index (which test_the_index_matches_the_files holds to the
    files, and `worldspec tasks examples/corpus` in `make test` to a fresh validation): at
    least 50 validated worlds in at least 10 families, a mean of at least 8 read and 7
    state-changing tools, at least 30 valid tasks a world and 1,500 in all, at least 20%
    conversational, every difficulty band used."""
    found = index()
    worlds = found["worlds"]
    assert len(worlds) >= 50 and all(w["validated"] for w in worlds)
    assert len({w["family"] for w in worlds}) >= 10
    assert sum(w["tools"]["read"] for w in worlds) / len(worlds) >= 8
    assert sum(w["tools"]["write"] for w in worlds) / len(worlds) >= 7
    valid = {w["id"]: sum(t["valid"] for t in w["tasks"]) for w in worlds}
    assert min(valid.values()) >= 30, {k: v for k, v in valid.items() if v < 30}
    totals = found["totals"]
    assert totals["tasks"] >= 1500 and sum(valid.values()) == totals["tasks"]
    assert totals["conversational_tasks"] >= 0.2 * totals["tasks"]
    bands = totals["tasks_by_difficulty"]
    assert set(bands) == {"easy", "medium", "hard"} and min(bands.values()) >= 0.1 * \
        totals["tasks"]


def test_every_task_has_a_difficulty_and_the_counts_add_up() -> None:
    """Each valid task's difficulty comes from its reference solution (calls, tools, reads,
    careless failures), its band from its score; the bands count the exported tasks."""
    from worldspec.services.mining import DIFFICULTY_BANDS

    found = index()
    for world in found["worlds"]:
        for task in world["tasks"]:
            if not task["valid"]:
                continue
            difficulty = task["difficulty"]
            assert difficulty["calls"] == task["calls"], (world["id"], task["task"])
            assert 1 <= difficulty["tools"] <= difficulty["calls"]
            assert 0 <= difficulty["reads"] <= difficulty["calls"]
            band = next(name for name, below in DIFFICULTY_BANDS
                        if difficulty["score"] < below)
            assert difficulty["band"] == band
        assert sum(world["tasks_by_difficulty"].values()) == \
            sum(world["tasks_by_setting"].values()), world["id"]
    totals = found["totals"]
    assert sum(totals["tasks_by_difficulty"].values()) == totals["tasks"]


def test_the_card_shows_the_statistics_beside_envscaler() -> None:
    """The dataset card's tables are the index's figures: the means per world (read and
    state-changing tools, state items, tasks) beside EnvScaler's, and a row per world."""
    from worldspec.llm_frontend.corpus import ENVSCALER, statistics_tables

    found = index()
    card = (CORPUS / "README.md").read_text(encoding="utf-8")
    compared, per_world = statistics_tables(found)
    assert compared in card and per_world in card
    worlds = [w for w in found["worlds"] if w["validated"]]
    read = sum(w["tools"]["read"] for w in worlds) / len(worlds)
    assert f"| read tools per world | {read:.1f} | {ENVSCALER['read']} |" in card
    for world in worlds:
        assert f"| {world['world']} ({world['id']}) | {world.get('family') or '-'} | " \
            f"{world['tools']['read']} | " in card
    # another corpus's figures make other tables
    fewer = {**found, "worlds": worlds[:2]}
    other, _ = statistics_tables(fewer)
    assert other != compared and "| worlds | 2 | 191 |" in other


def test_the_whole_corpus_loads_with_huggingface_datasets(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The card's snippet works: every task of every world is a row of the dataset, as
    ``datasets`` loads it, and each row names a world and task of the index."""
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    found = index()
    table = datasets.load_dataset("json", data_files=str(CORPUS / "dataset.jsonl"),
                                  split="train", cache_dir=str(tmp_path / "cache"))
    assert table.num_rows == found["totals"]["tasks"]
    listed = {(w["world"], t["task"]) for w in found["worlds"] for t in w["tasks"]
              if t["valid"]}
    assert {(row["world"], row["task_id"]) for row in table} == listed
