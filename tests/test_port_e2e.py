"""benchmarks/port_e2e.py, the end-to-end measurement of ``worldspec port``, and the classes of
benchmarks/port_wild it ports: the driver runs a real port (the scripted model server answers)
and a real fresh-sequence check, both ways; the wild classes load, run on their data and read
into a skeleton that checks clean."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from port_replies import BUGGY_TAKE, GET_ITEM, RESTOCK, TAKE, port_responder

from worldspec.compiler.api import check_source
from worldspec.port.skeleton import emit_skeleton, read_class

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "benchmarks" / "port_e2e.py"
WILD = ROOT / "benchmarks" / "port_wild"
INVENTORY = ROOT / "tests" / "port_classes" / "inventory.py"
INVENTORY_CASE = f"{INVENTORY}:InventoryEnv:{INVENTORY.with_suffix('.json')}"
CORRECT = {"get_item": GET_ITEM, "take": TAKE, "restock": RESTOCK}


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while it runs
    spec.loader.exec_module(module)
    return module


driver = _load(DRIVER, "port_e2e")


def _drive(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(DRIVER), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


# ------------------------------------------------------------------ the wild classes
def test_every_wild_file_is_in_the_drivers_table_with_its_data() -> None:
    stems = {path.stem for path in WILD.glob("*.py")}
    assert stems == {stem for stem, *_ in driver.WILD_CLASSES}
    assert len(stems) >= 5
    for case in driver.wild_cases():
        assert case.data and case.data[0].name == f"{case.file.stem}.json", case
        assert all(path.is_file() for path in case.data)


@pytest.mark.parametrize("stem, class_name, load, needs", driver.WILD_CLASSES)
def test_a_wild_class_runs_on_each_of_its_data_files(stem: str, class_name: str,
                                                     load: str | None,
                                                     needs: tuple[str, ...]) -> None:
    for module_name in needs:
        pytest.importorskip(module_name)
    source = (WILD / f"{stem}.py").read_text(encoding="utf-8")
    assert 80 <= len(source.splitlines()) <= 250
    module = _load(WILD / f"{stem}.py", f"port_wild_{stem}")
    cls = getattr(module, class_name)
    public = [name for name, member in inspect.getmembers(cls, inspect.isfunction)
              if not name.startswith("_")]
    assert len(public) >= 6
    assert [name for name in public if not inspect.getdoc(getattr(cls, name))] == []
    for case in (c for c in driver.wild_cases() if c.class_name == class_name):
        for data_file in case.data:
            data = json.loads(data_file.read_text(encoding="utf-8"))
            if load is not None:
                obj = cls()
                getattr(obj, load)(data)
            elif hasattr(cls, "_load_scenario"):
                obj = cls()
                obj._load_scenario(data)
            else:
                obj = cls(data)
            state = {k: v for k, v in vars(obj).items() if not k.startswith("_")}
            assert state, f"{class_name} on {data_file.name} keeps no public state"


@pytest.mark.parametrize("stem, class_name, load", [(s, c, ld) for s, c, ld, _ in
                                                   driver.WILD_CLASSES])
def test_a_wild_class_reads_into_a_skeleton_that_checks(stem: str, class_name: str,
                                                        load: str | None) -> None:
    path = WILD / f"{stem}.py"
    source = path.read_text(encoding="utf-8")
    info = read_class(source, class_name, path.name, load=load or "auto")
    data = json.loads((WILD / f"{stem}.json").read_text(encoding="utf-8"))
    skeleton = emit_skeleton(info, data, source_name=path.name)
    assert check_source(skeleton.text, f"{stem}.world").ok
    # every public method written in the class's own body is a tool of the skeleton, but
    # the load method (inherited ones are not asserted: reading base classes is other work
    # of issue 31)
    (node,) = [n for n in ast.parse(source).body
               if isinstance(n, ast.ClassDef) and n.name == class_name]
    own = [f.name for f in node.body
           if isinstance(f, ast.FunctionDef) and not f.name.startswith("_") and f.name != load]
    assert f"tool {load}(" not in skeleton.text
    for name in own:
        assert f"tool {name}(" in skeleton.text, name


# ------------------------------------------------------------------ the driver
def test_dry_run_lists_a_port_and_a_fresh_check_per_data_file(tmp_path: Path) -> None:
    out = tmp_path / "e2e"
    done = _drive("--dry-run", "--out", str(out))
    assert done.returncode == 0, done.stderr
    for case in driver.wild_cases():
        assert f"# {case.class_name}" in done.stdout
        if case.skipped:
            continue
        port_line = next(line for line in done.stdout.splitlines()
                         if " port " in line and f"--class {case.class_name}" in line)
        assert f"--init-data {case.data[0]}" in port_line
        assert f"--requests {out / case.class_name / 'requests.jsonl'}" in port_line
        compares = [line for line in done.stdout.splitlines() if " compare " in line
                    and f"--class {case.class_name}" in line]
        assert len(compares) == len(case.data)
        assert all("--examples 1000 --test-seed 1000003" in line for line in compares)
    if importlib.util.find_spec("bfcl_eval") is not None:
        for name in ("MessageAPI", "TicketAPI", "TradingBot", "TravelAPI", "VehicleControlAPI"):
            line = next(line for line in done.stdout.splitlines()
                        if " port " in line and f"--class {name}" in line)
            assert "func_source_code" in line and "--seed-key random_seed" in line
    assert not out.exists()


def test_a_bad_case_or_a_run_without_a_model_is_one_line(tmp_path: Path) -> None:
    done = _drive("--case", "nowhere.py:X")
    assert done.returncode == 2 and "nowhere.py does not exist" in done.stderr
    assert "Traceback" not in done.stderr
    done = _drive("--out", str(tmp_path))
    assert done.returncode == 2 and "--base-url and --model are needed" in done.stderr


def _report(out: Path) -> dict[str, Any]:
    (row,) = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert isinstance(row, dict)
    return row


def test_an_accepted_port_is_checked_on_fresh_sequences(llm_server: ScriptedLLMServer,
                                                        tmp_path: Path) -> None:
    llm_server.responder = port_responder(CORRECT)
    out = tmp_path / "e2e"
    done = _drive("--case", INVENTORY_CASE, "--base-url", llm_server.url, "--model", "m",
                  "--examples", "30", "--fresh-examples", "120", "--out", str(out))
    assert done.returncode == 0, done.stderr
    row = _report(out)
    assert row["status"] == "accepted" and row["tools"] == 3, row
    assert row["requests"] == 3 and row["prompt_tokens"] > 0 and row["completion_tokens"] > 0
    (check,) = row["fresh"]
    assert check["verdict"] == "agree" and check["examples"] == 120 and check["calls"] > 120
    assert check["data"] == "inventory" and row["fresh_seed"] == 1_000_003
    assert (out / "InventoryEnv" / "requests.jsonl").is_file()
    assert "| InventoryEnv | accepted | 3 |" in done.stdout
    assert "inventory: agree (120 seq" in (out / "report.md").read_text(encoding="utf-8")

    asked = len(llm_server.chat_requests)  # a rerun is answered from the journals
    done = _drive("--case", INVENTORY_CASE, "--base-url", llm_server.url, "--model", "m",
                  "--examples", "30", "--fresh-examples", "120", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert len(llm_server.chat_requests) == asked
    assert _report(out)["status"] == "accepted"


def test_a_rejected_port_gets_no_fresh_check(llm_server: ScriptedLLMServer,
                                             tmp_path: Path) -> None:
    llm_server.responder = port_responder({**CORRECT, "take": BUGGY_TAKE})
    out = tmp_path / "e2e"
    done = _drive("--case", INVENTORY_CASE, "--base-url", llm_server.url, "--model", "m",
                  "--examples", "60", "--max-rounds", "0", "--out", str(out))
    assert done.returncode == 0, done.stderr
    row = _report(out)
    assert row["status"] == "rejected" and row["fresh"] == [] and row["requests"] == 3, row
    assert len(row["commands"]) == 1  # the port alone
    assert "| InventoryEnv | rejected" in done.stdout and "| — |" in done.stdout


def test_the_fresh_check_reports_a_world_that_differs(tmp_path: Path) -> None:
    skeleton = tmp_path / "skeleton.world"  # every tool fails "not ported yet"
    made = subprocess.run([sys.executable, "-m", "worldspec", "port", str(INVENTORY),
                           "--skeleton-only", "-o", str(skeleton)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    (case,) = [driver.parse_case(INVENTORY_CASE)]
    args = driver.parser().parse_args(["--fresh-examples", "20", "--out", str(tmp_path)])
    options = driver.cli_options(args.worldspec, "compare")
    row = driver.Row("InventoryEnv", str(INVENTORY), "accepted")
    driver.fresh_check(case, skeleton, tmp_path, 5, args, options, row)
    (check,) = row.fresh
    assert check.verdict == "differ" and check.differences >= 1, check
    assert "not ported yet" in check.first_difference
