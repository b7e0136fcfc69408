"""Every example world checks clean and every example task's solution earns a full score."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.example_specs import example_specs
from worldspec.cli.main import main
from worldspec.compiler.api import check_specs
from worldspec.services.validation import ValidatedResult, check_paths

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())


def tasks() -> list[tuple[Path, str]]:
    """Every task of the hand-written examples and of the corpus worlds sampled (the whole
    corpus's are run by `worldspec tasks examples/corpus` in `make test`)."""
    result = check_specs(example_specs())
    assert result.ok, [d.message for d in result.errors]
    out = []
    for world in result.model.worlds.values():
        folder = ROOT / Path(world.file).parent if not Path(world.file).is_absolute() \
            else Path(world.file).parent
        out += [(folder, name) for name in world.tasks]
    return sorted(out)


#: The three worlds written for this project (conformance worlds live beside them).
MAIN_WORLDS = ("MobileMessaging", "OnlineShop", "ClinicScheduling")


@pytest.fixture(scope="module")
def validated() -> ValidatedResult:
    """``worldspec check examples`` once, for the tests that read it whole."""
    return check_paths([ROOT / "examples"])


def test_examples_have_enough_tools_and_tasks(validated: ValidatedResult) -> None:
    for name in MAIN_WORLDS:
        world = validated.result.model.worlds[name]
        assert 10 <= len(world.tools) <= 25, world.name
        assert len(world.tasks) >= 3, world.name


@pytest.mark.parametrize(("folder", "task"), tasks(), ids=lambda x: getattr(x, "name", x))
def test_reference_solution_scores_full(folder: Path, task: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["run", str(folder), "--task", task, "--solution", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert status == 0
    assert report["reward"] == 1.0
    assert report["frame"]["ok"] is True
    assert all(not call["failed"] for call in report["calls"])
    assert all(check["passed"] for check in report["checks"])


def test_the_examples_check_without_warnings(validated: ValidatedResult) -> None:
    """`make demo` starts with `worldspec check examples`: its first screen stays clean. A
    warning here is either a real problem of an example (fix the example) or a false
    positive of the rule (fix the rule), never noise to scroll past."""
    assert validated.ok
    shown = [f"{d.code} {d.span}: {d.message}" for d in validated.diagnostics]
    assert shown == []
