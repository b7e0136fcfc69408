"""``benchmarks/gen_tasks.py``: the task-validation workload is valid and reproducible."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from gen_tasks import write_workload  # noqa: E402

from worldspec.services.validation import check_paths  # noqa: E402


def test_every_generated_task_is_valid_and_the_bytes_repeat(tmp_path: Path) -> None:
    spec, size = write_workload(tmp_path / "a", 10, 0.2)
    assert 150_000 < size < 260_000
    result = check_paths([spec])
    assert [r.status for r in result.tasks] == ["valid"] * 10
    assert result.ok
    again, _ = write_workload(tmp_path / "b", 10, 0.2)
    for name in ("db.json", "tasks.world"):
        assert (spec.parent / name).read_bytes() == (again.parent / name).read_bytes()
