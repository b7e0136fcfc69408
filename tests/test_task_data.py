"""A world's tasks are data: ``tasks.json`` in its package, read by the runtime's registry.

Every checked-in example world's ``TASKS`` must hold, field by field, what the compiler's
model says each task is (instruction, initial data, checks and their functions, frame,
reference solution, the keyword fields); the registry reads the file on first use only,
names no function but a check's, and says what is wrong with a package that lost its file.
"""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from worldspec.compiler.api import check_specs
from worldspec.compiler.constants import constant_value
from worldspec.compiler.model import ProgramModel, TaskInfo, WorldModel
from worldspec.dsl import nodes as n
from worldspec.runtime.episode import Episode, TaskSpec
from worldspec.runtime.tasks import PARAMETERS, CheckTest, TaskRegistry
from worldspec.services.loading import load_package

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "generated"


@pytest.fixture(scope="module")
def compiled() -> tuple[ProgramModel, dict[str, WorldModel]]:
    result = check_specs([REPO / "examples"])
    assert result.ok, [d.message for d in result.errors]
    return result.model, result.model.worlds


def _world_class(package: str) -> type[Episode]:
    module = __import__(f"generated.{package}", fromlist=["World"])
    world: type[Episode] = module.World
    return world


def _item(task: TaskInfo, kind: type[n.Node]) -> Any:
    return next((item for item in task.node.items if isinstance(item, kind)), None)


def _expected(task: TaskInfo, world: WorldModel, program: ProgramModel) -> dict[str, Any]:
    """What the compiler's model says the task is, as TaskSpec's fields (checks apart)."""
    node = task.node
    solution = () if node.solution is None else tuple(
        (call.tool.name, {a.name.name: constant_value(a.value, world, program)
                          for a in call.args
                          if a.name is not None and not isinstance(a.value, n.Lambda)})
        for call in node.solution.calls)
    texts = {kind: getattr(_item(task, kind), "text", None)
             for kind in (n.Persona, n.Known, n.Unknown)}
    tags, split, seed, reward = (_item(task, kind) for kind in (n.Tags, n.Split, n.Seed,
                                                                n.Reward))
    return {
        "name": task.name, "instruction": node.instruction or "",
        "data": task.initial_data or {},
        "frame": None if node.frame is None else tuple(
            ".".join(part.name for part in target.path) for target in node.frame.targets),
        "solution": solution, "seed": seed.value if seed else None,
        "persona": texts[n.Persona], "known": texts[n.Known], "unknown": texts[n.Unknown],
        "tags": tuple(x.name for x in tags.names) if tags else (),
        "split": split.name.name if split else None, "doc": node.doc,
        "replies": () if node.solution is None else tuple(r.text for r in
                                                         node.solution.replies),
        "reward": reward.mode.name if reward else None,
    }


def test_every_example_worlds_tasks_are_what_the_compiler_says(
        compiled: tuple[ProgramModel, dict[str, WorldModel]]) -> None:
    program, worlds = compiled
    seen = answers = 0
    for world in worlds.values():
        package = next(p.name for p in GENERATED.iterdir()
                       if (p / "world.py").is_file() and _world_class(p.name).WORLD == world.name)
        cls = _world_class(package)
        module = sys.modules[cls.__module__]
        assert list(cls.TASKS) == list(world.tasks), package
        for name, task in world.tasks.items():
            spec = cls.TASKS[name]
            assert isinstance(spec, TaskSpec)
            expected = _expected(task, world, program)
            found = {key: getattr(spec, key) for key in expected}
            assert found == expected, (package, name)
            assert [type(x) for x in found["frame"] or ()] == [str] * len(found["frame"] or ())
            assert isinstance(spec.solution, tuple) and all(
                isinstance(step, tuple) for step in spec.solution)
            assert [(c.name, c.weight, c.doc) for c in spec.checks] == [
                (c.name.name, float(c.weight or 1), c.doc or "") for c in task.node.checks]
            for check, node in zip(spec.checks, task.node.checks, strict=True):
                function = check.test.function if isinstance(check.test, CheckTest) \
                    else check.test
                # it takes the final state (its `self`), and the replies exactly where it
                # reads them
                takes = check.test.takes if isinstance(check.test, CheckTest) \
                    else PARAMETERS
                assert tuple(inspect.signature(function).parameters) == ("self", *takes[1:])
                assert takes[0] == "ep"
                assert ("replies" in takes) == (node.name.name in task.answer_checks), \
                    (package, name, node.name.name)
                answers += "replies" in takes
                # the world's own method, anchored at the check's line
                assert vars(cls)[function.__name__] is function
                assert not hasattr(module, function.__name__)
                assert function.__name__.startswith("_check_")
                assert function.__code__.co_firstlineno > 0
                assert f"{node.span.line}" in _anchor(module, function.__name__)
            seen += 1
    assert seen >= 40  # every example's tasks, not a few
    assert answers >= 1  # some check reads the conversation


def _anchor(module: Any, function: str) -> str:
    """The anchor comment of method ``function``'s ``def``: at the end of its line, or alone
    on the line above where the signature fits only without it."""
    lines = Path(module.__file__).read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"    def {function}("))
    if "  # " in lines[at]:
        return lines[at].rsplit("  # ", 1)[-1]
    assert lines[at - 1].startswith("    # "), lines[at - 1]
    return lines[at - 1][6:]


def test_importing_a_world_reads_no_task_file(tmp_path: Path) -> None:
    """The file is read when the tasks are first asked for: a package that lost it imports,
    and asking for its tasks says which file is missing."""
    shutil.copytree(GENERATED / "mobile_messaging", tmp_path / "mobile_messaging",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "mobile_messaging" / "tasks.json").unlink()
    script = ("import sys\n"
              "from worldspec.services.loading import load_package\n"
              "world = load_package(sys.argv[1]).World\n"
              "print('imported', type(world.TASKS).__name__)\n"
              "try:\n"
              "    list(world.TASKS)\n"
              "except OSError as exc:\n"
              "    print('missing', exc.filename.endswith('tasks.json'))\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "mobile_messaging")],
                         capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split("\n")[:2] == ["imported TaskRegistry", "missing True"]


def test_the_registry_names_only_check_methods(tmp_path: Path) -> None:
    """A task file that names anything of the world but a check's method (a class of the
    module, a tool method, the invariant check, a check's name without its task) is refused
    with what to do, and the same file naming the check's own method is read."""
    folder = tmp_path / "online_shop"
    shutil.copytree(GENERATED / "online_shop", folder,
                    ignore=shutil.ignore_patterns("__pycache__"))
    tasks = json.loads((folder / "tasks.json").read_text(encoding="utf-8"))
    good = tasks[0]["checks"][0]["test"]
    assert good.startswith("_check_cancel_and_reorder__")
    for index, other in enumerate(("OnlineShop", "tool_cancel_order", "_check_invariants",
                                   good.replace("__", "_"))):
        tasks[0]["checks"][0]["test"] = other
        (folder / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
        world = load_package(folder, name=f"_ws_test_registry_bad{index}").World
        assert isinstance(world.TASKS, TaskRegistry)
        assert hasattr(sys.modules[world.__module__], other) or hasattr(world, other) or \
            other == good.replace("__", "_")  # each is there to be named but the last
        with pytest.raises(LookupError, match=rf"no check method '{other}' \(rebuild"):
            world.TASKS[tasks[0]["name"]]
    tasks[0]["checks"][0]["test"] = good
    (folder / "tasks.json").write_text(json.dumps(tasks), encoding="utf-8")
    fixed = load_package(folder, name="_ws_test_registry_good").World
    assert fixed.TASKS[tasks[0]["name"]].checks[0].name == tasks[0]["checks"][0]["name"]
