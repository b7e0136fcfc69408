"""Compiled specs are reused across processes only while what generation reads is unchanged.

``worldspec.services.loading.load_result`` writes the generated packages under a folder
named after the hash of their text, and a manifest named after the hash of what generation
reads (the spec texts, the data files the tasks name, the compiler's own code). A later
process with the same inputs imports the packages without generating them (nor importing
the code generator and jinja2); any change of an input, or a manifest or package that is
damaged or gone, means generating again, so what is loaded is always what the specs say.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

#: a fresh process: compile the messaging example, run a task's solution, report what the
#: world said and whether the code generator was loaded
SCRIPT = """
import json, sys
from worldspec.services.loading import compile_worlds
loaded = compile_worlds(["examples/messaging"])
world = loaded.worlds["MobileMessaging"]
episode = world(task="reply_to_priya")
for name, arguments in world.TASKS["reply_to_priya"].solution:
    episode.call(name, dict(arguments))
print(json.dumps({"users": sorted(episode.tables["users"].rows), "state": episode.state_hash(),
                  "policy": world.POLICY,
                  "generated": "worldspec.compiler.build" in sys.modules,
                  "jinja2": "jinja2" in sys.modules}))
"""


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "examples" / "messaging", tmp_path / "examples" / "messaging")
    return tmp_path


def run(workdir: Path) -> dict[str, object]:
    env = {**os.environ, "WORLDSPEC_CACHE": str(workdir / "cache"),
           "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH"))
                                         if p)}
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=workdir, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def manifests(workdir: Path) -> list[Path]:
    return sorted((workdir / "cache").glob("inputs-*.json"))


def test_the_same_inputs_load_without_generating(workdir: Path) -> None:
    first = run(workdir)
    assert first["generated"] is True
    assert len(manifests(workdir)) == 1
    second = run(workdir)
    assert second["generated"] is False and second["jinja2"] is False
    assert second["state"] == first["state"] and second["users"] == first["users"]


def test_a_changed_data_file_is_generated_again(workdir: Path) -> None:
    before = run(workdir)
    seed = workdir / "examples" / "messaging" / "data" / "seed.json"
    data = json.loads(seed.read_text(encoding="utf-8"))
    extra = dict(data["users"][-1])
    extra["id"] = "U999"
    extra["phone"] = "+14155550199"
    data["users"].append(extra)
    seed.write_text(json.dumps(data), encoding="utf-8")
    after = run(workdir)
    users = before["users"]
    assert after["generated"] is True and isinstance(users, list)
    assert after["users"] == sorted([*users, "U999"])
    assert len(manifests(workdir)) == 2


def test_a_changed_spec_is_generated_again(workdir: Path) -> None:
    run(workdir)
    tasks = workdir / "examples" / "messaging" / "tasks.world"
    tasks.write_text(tasks.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert run(workdir)["generated"] is True


def test_a_changed_policy_file_is_generated_again(workdir: Path) -> None:
    """A ``policy file`` is read beside the spec: the world's prompt follows its text."""
    spec = workdir / "examples" / "messaging" / "messaging.world"
    text = spec.read_text(encoding="utf-8")
    start = text.index('policy """')
    end = text.index('"""', start + len('policy """')) + len('"""')
    spec.write_text(text[:start] + 'policy file "policy.md"' + text[end:], encoding="utf-8")
    policy = workdir / "examples" / "messaging" / "policy.md"
    policy.write_text("Archive nothing.\n", encoding="utf-8")
    assert run(workdir)["policy"] == "Archive nothing."
    unchanged = run(workdir)
    assert unchanged["generated"] is False and unchanged["policy"] == "Archive nothing."
    policy.write_text("Archive only what the user names.\n", encoding="utf-8")
    changed = run(workdir)
    assert changed["generated"] is True and changed["policy"] == "Archive only what the user names."


@pytest.mark.parametrize("damage", ["manifest", "package"])
def test_a_damaged_cache_is_generated_again(workdir: Path, damage: str) -> None:
    first = run(workdir)
    (manifest,) = manifests(workdir)
    if damage == "manifest":
        manifest.write_text('{"packages": [{"world": 1', encoding="utf-8")
    else:
        entry = json.loads(manifest.read_text(encoding="utf-8"))["packages"][0]
        (workdir / "cache" / entry["root"] / entry["name"] / "world.py").write_text(
            "# emptied\n", encoding="utf-8")
    again = run(workdir)
    assert again["generated"] is True
    assert again["state"] == first["state"]
    assert run(workdir)["generated"] is False
