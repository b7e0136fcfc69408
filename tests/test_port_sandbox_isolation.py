"""The sandbox's original, as it really is: every call sequence in a fresh interpreter state
(module state, mutable defaults, class attributes, the decimal context, /tmp), the
original's own package (relative imports), another interpreter with its dependencies
(``--python``), and the preflight that checks the original loads before any comparison or
model request."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from test_port_sandbox_hostile import require_sandbox

from worldspec.cli.main import main as cli_main
from worldspec.port.compare import Original
from worldspec.port.preflight import preflight
from worldspec.port.sandbox import Limits, Sandbox, SandboxError

CLASSES = Path(__file__).resolve().parent / "port_classes"
LEAKY = CLASSES / "leaky_board.py"
LEAKY_WORLD = CLASSES / "leaky_board.world"
STORE = CLASSES / "packaged" / "shop" / "store.py"
LIMITS = Limits(call_timeout=10.0, load_timeout=20.0, memory_mb=512, cpu_seconds=30)


def post(box: Sandbox, text: str) -> object:
    return box.call("post", {"text": text}).result


# ------------------------------------------------------------------ isolation
def test_each_sequence_starts_from_a_fresh_module() -> None:
    with Sandbox(LEAKY, "LeakyBoard", limits=LIMITS, trusted=True) as box:
        box.reset()
        answers = [post(box, f"p{i}") for i in range(4)]
        assert [a["data"]["number"] for a in answers[:3]] == [1, 2, 3]  # type: ignore[index]
        assert answers[3] == {"success": False, "error": "Board is full"}
        # one interpreter would see the module's list full, the default list and the
        # serial number at 3: a fresh one starts from nothing
        box.reset()
        assert post(box, "again") == {"success": True,
                                      "data": {"number": 1, "posts": 1, "mentions": 1}}
        assert box.starts == 1  # one child, a fresh worker per sequence


def test_class_attributes_the_decimal_context_and_tmp_do_not_leak() -> None:
    require_sandbox()
    with Sandbox(LEAKY, "LeakySettings", limits=LIMITS) as box:
        box.reset()
        assert box.call("raise_limit", {}).result == {"limit": 4}
        box.call("set_precision", {"digits": 5})
        assert box.call("share", {}).result == "0.33333"
        assert box.call("note", {"text": "x"}).result == {"notes": ["note-0.txt"]}
        assert box.call("note", {"text": "y"}).result == {"notes": ["note-0.txt",
                                                                    "note-1.txt"]}
        box.reset()
        assert box.call("raise_limit", {}).result == {"limit": 4}
        assert box.call("share", {}).result == "0." + "3" * 28
        assert box.call("note", {"text": "z"}).result == {"notes": ["note-0.txt"]}


def test_compare_agrees_with_the_correct_world_and_says_how(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    require_sandbox()
    command = ["compare", str(LEAKY), str(LEAKY_WORLD), "--class", "LeakyBoard",
               "--examples", "40", "--steps", "8"]
    assert cli_main(command) == 0
    out = capsys.readouterr().out
    assert "agree" in out and "isolation: a fresh process per sequence" in out
    assert cli_main([*command, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agrees"] and report["isolation"].startswith("a fresh process per sequence")
    # the other way: a world that is wrong within one sequence still differs
    wrong = tmp_path / "wrong.world"
    wrong.write_text(LEAKY_WORLD.read_text(encoding="utf-8").replace(
        "len(posts) >= 3", "len(posts) >= 2"), encoding="utf-8")
    assert cli_main(["compare", str(LEAKY), str(wrong), "--class", "LeakyBoard",
                     "--examples", "40", "--steps", "8"]) == 1
    assert "Board is full" in capsys.readouterr().out


def test_module_code_cannot_fork_even_at_import(tmp_path: Path) -> None:
    require_sandbox()
    forks = tmp_path / "forks.py"
    # the audit hook switched off first (as tests/port_classes/hostile.py does): the kernel
    # must refuse the fork
    forks.write_text("import __main__\nimport os\n\n__main__._BLOCKED_PREFIXES = ('x-none',)\n"
                     "os.fork()\n\n\nclass Forks:\n    pass\n", encoding="utf-8")
    with Sandbox(forks, "Forks", limits=LIMITS) as box, \
            pytest.raises(SandboxError, match="Operation not permitted"):
        box.reset()


# -------------------------------------------------------------------- package
def test_a_class_inside_a_package_imports_its_siblings() -> None:
    require_sandbox()
    with Sandbox(STORE, "Store", limits=LIMITS) as box:
        assert box.reset().state == {"sold": 0}
        assert box.call("sell", {"count": 2}).result == {"success": True,
                                                          "data": {"cents": 500}}
    with Sandbox(STORE, "Store", limits=LIMITS, package_root=STORE.parent) as box:
        assert box.reset().state == {"sold": 0}


def test_the_same_file_outside_its_package_cannot_import_them(tmp_path: Path) -> None:
    alone = tmp_path / "store.py"
    alone.write_text(STORE.read_text(encoding="utf-8"), encoding="utf-8")
    with Sandbox(alone, "Store", limits=LIMITS, trusted=True) as box, \
            pytest.raises(SandboxError, match="relative import"):
        box.reset()
    with Sandbox(STORE, "Store", limits=LIMITS, trusted=True,
                 package_root=tmp_path) as box, \
            pytest.raises(SandboxError, match="is not inside the package root"):
        box.reset()


# ----------------------------------------------------------------- --python
NEEDS = """import tinydep


class Needs:
    def __init__(self):
        self.value = tinydep.START

    def bump(self) -> dict:
        \"\"\"Add one.\"\"\"
        self.value += 1
        return {"value": self.value}
"""

NEEDS_WORLD = """world Needs "n"

config { results: bfcl }

state {
  value: int = 41
}

tool bump() -> json
  "Add one."
{
  value += 1
  return {"value": value}
}
"""


@pytest.fixture
def needs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A class importing ``tinydep``, its world, and a venv whose site-packages has tinydep
    (worldspec's own interpreter does not)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    assert purelib != sysconfig.get_paths()["purelib"]
    (Path(purelib) / "tinydep.py").write_text("START = 41\n", encoding="utf-8")
    original, world = tmp_path / "needs.py", tmp_path / "needs.world"
    original.write_text(NEEDS, encoding="utf-8")
    world.write_text(NEEDS_WORLD, encoding="utf-8")
    return original, world, python


def test_python_runs_the_original_with_its_dependencies(
        needs: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    require_sandbox()
    original, world, python = needs
    command = ["compare", str(original), str(world), "--examples", "10", "--steps", "4"]
    assert cli_main(command) == 1
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err == ("worldspec: error: the original does not load: ModuleNotFoundError: No "
                   "module named 'tinydep' (run it with --python PATH, an interpreter that "
                   "has its dependencies)")
    assert captured.out == "" and "Traceback" not in captured.err
    assert cli_main([*command, "--python", str(python)]) == 0
    assert "agree" in capsys.readouterr().out


def test_a_python_that_does_not_exist_is_one_line(needs: tuple[Path, Path, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    original, world, _ = needs
    assert cli_main(["compare", str(original), str(world), "--python",
                     str(original.parent / "nope" / "python")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--python" in err and "does not exist" in err


# ------------------------------------------------------------------ preflight
STRICT = """class Strict:
    def __init__(self, config):
        self.items = {key: int(value) for key, value in config["items"].items()}

    def count(self) -> int:
        \"\"\"How many items.\"\"\"
        return len(self.items)
"""


def test_preflight_builds_the_original_with_every_init_data(tmp_path: Path) -> None:
    file = tmp_path / "strict.py"
    file.write_text(STRICT, encoding="utf-8")
    good, bad = {"items": {"a": "1"}}, {"items": {"a": "one"}}
    original = Original(file, "Strict", good, init_data_files=(("good.json", good),))
    assert preflight(original, LIMITS, trusted=True) is None
    both = Original(file, "Strict", good, init_data_files=(("good.json", good), ("bad.json", bad)))
    assert preflight(both, LIMITS, trusted=True) == (
        "the original does not load with --init-data bad.json: ValueError: invalid literal "
        "for int() with base 10: 'one'")


def test_port_sends_no_request_for_an_original_that_does_not_load(
        needs: tuple[Path, Path, Path], llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    require_sandbox()
    original, _, python = needs
    out = tmp_path / "out.world"
    argv = ["port", str(original), "-o", str(out), "--base-url", llm_server.url,
            "--model", "m", "--examples", "10", "--max-rounds", "0"]
    assert cli_main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "No module named 'tinydep'" in err
    assert llm_server.requests == [] and not out.exists()
    # with the interpreter that has it, the port goes on to ask the model
    cli_main([*argv, "--python", str(python)])
    assert len(llm_server.requests) >= 1


def test_a_batch_class_that_does_not_load_is_rejected_without_a_request(
        needs: tuple[Path, Path, Path], llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    require_sandbox()
    original, _, _ = needs
    folder = tmp_path / "batch"
    folder.mkdir()
    (folder / "needs.py").write_text(original.read_text(encoding="utf-8"), encoding="utf-8")
    argv = ["port", "--batch", str(folder), "--base-url", llm_server.url, "--model", "m",
            "--format", "json"]
    assert cli_main(argv) == 1
    summary = json.loads(capsys.readouterr().out)
    (detail,) = summary["items_detail"]
    assert detail["reason"] == "the original does not load"
    assert "No module named 'tinydep'" in detail["detail"]
    assert llm_server.requests == []


# ------------------------------------------------------------------ the child
LIMITS_READER = """class Limits:
    def tasks(self) -> str:
        \"\"\"The task limit line of /proc/self/limits.\"\"\"
        with open("/proc/self/limits", encoding="utf-8") as handle:
            return next(line for line in handle if line.startswith("Max processes"))
"""


def test_the_sandbox_bounds_its_tasks(tmp_path: Path) -> None:
    require_sandbox()
    file = tmp_path / "limits.py"
    file.write_text(LIMITS_READER, encoding="utf-8")
    with Sandbox(file, "Limits", limits=Limits(processes=40)) as box:
        box.reset()
        assert box.call("tasks", {}).result.split()[2:4] == ["40", "40"]
    # unconfined there is no user namespace of its own to count in: no such limit is set
    with Sandbox(file, "Limits", trusted=True, limits=Limits(processes=40)) as box:
        box.reset()
        assert box.call("tasks", {}).result.split()[2] != "40"


def test_the_child_script_is_standard_library_python_3_9() -> None:
    from worldspec.port.sandbox import CHILD

    tree = ast.parse(CHILD.read_text(encoding="utf-8"), feature_version=(3, 9))
    imported = {alias.name.partition(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {(node.module or "").partition(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.level == 0}
    assert imported and imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names


def test_an_original_that_never_finishes_importing_is_one_line() -> None:
    original = Original(CLASSES / "hangs_on_import.py", "Never")
    line = preflight(original, Limits(call_timeout=1.0, load_timeout=2.0), trusted=True)
    assert line == "the original does not load: did not answer within 2 s (stopped)"
