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
