"""The worlds shown in the README and the language reference compile and score."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from worldspec.compiler.api import check_source
from worldspec.dsl.diagnostics import Severity

ROOT = Path(__file__).resolve().parents[1]


def world_blocks(doc: str) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8")
    blocks = re.findall(r"```\n(world .*?)```", text, flags=re.DOTALL)
    assert blocks, f"{doc} shows no world"
    return blocks


@pytest.mark.parametrize("doc", ["README.md", "docs/language.md"])
def test_documented_worlds_check_clean(doc: str) -> None:
    for block in world_blocks(doc):
        result = check_source(block, str(ROOT / "docs" / "example.world"))
        errors = [f"{d.code} {d.span.line}:{d.span.column} {d.message}"
                  for d in result.diagnostics if d.severity is Severity.ERROR]
        assert errors == []


def test_readme_world_runs_its_task(tmp_path: Path) -> None:
    from worldspec.services.loading import compile_worlds

    spec = tmp_path / "readme.world"
    spec.write_text(world_blocks("README.md")[0], encoding="utf-8")
    loaded = compile_worlds([spec])
    world = loaded.worlds["MobileMessaging"]
    episode = world(task="read_alice")
    assert episode.score().reward == 0.0
    for name, args in world.TASKS["read_alice"].solution:
        assert not episode.failed(episode.call(name, args))
    score = episode.score()
    assert score.reward == 1.0 and score.frame_ok
