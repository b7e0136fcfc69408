"""``--backend ray``: rollouts and synth batches on a real local Ray cluster.

One in-process cluster (tests/ray_support.py: two CPUs, loopback) serves the module
and is shut down after it. Models are the scripted local server (tests/llm_server.py). Each
test runs a batch locally and on Ray and compares what they wrote: outputs byte for byte, and
journal records line for line once sorted by key (a rollout record's ``timing`` and each
step's ``seconds`` are wall-clock durations and differ between any two runs, local ones too).
Skipped without Ray, except under ``CI=true``, where CI installs the extra and a skip would
hide a broken install.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_scripts import LIBRARY_WORLD, fenced, library_task, world_named
from llm_server import RecordedRequest, Reply, ScriptedLLMServer
from ray_support import local_cluster
from test_llm_themes import scripted_embedding, themes_responder, write_corpus

from worldspec.cli.main import main
from worldspec.rollout.records import Journal
from worldspec.rollout.runner import RolloutSettings, WorldSource, plan_rollouts, run_batch
from worldspec.runtime.episode import Episode
from worldspec.services.executors import RayExecutor
from worldspec.services.loading import load_world
from worldspec.services.model_client import LLMConfig

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"
TASKS = ("tidy_archive", "clean_up_contacts")

try:
    import ray
except ImportError:  # pragma: no cover - depends on the install
    ray = None
    if os.environ.get("CI") == "true":
        raise
pytestmark = pytest.mark.skipif(ray is None, reason="Ray is not installed: "
                                                    "pip install '.[ray]'")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A local two-CPU cluster for the module; its address, for drivers in subprocesses."""
    assert ray is not None
    with local_cluster(ray, str(ROOT)) as address:
        yield address


@pytest.fixture(scope="module")
def world() -> type[Episode]:
    return load_world(PACKAGE)


# ------------------------------------------------------------------ scripted agent
def agent_for(world: type[Episode], delay: float = 0.0) -> Any:
    """Plays each task's reference solution, one call per message, with call ids that depend
    on the task and the step only (the server's own ids hold a clock)."""
    by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}

    def respond(request: RecordedRequest) -> Reply | str:
        first = next(m["content"] for m in request.messages if m.get("role") == "user")
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        task = by_text[first.strip()]
        calls = list(world.TASKS[task].solution)
        if done >= len(calls):
            return Reply(content="Done: all taken care of.", delay=delay)
        name, arguments = calls[done]
        return Reply(tool_calls=[{"id": f"call_{task}_{done}", "name": name,
                                  "arguments": json.dumps(dict(arguments))}], delay=delay)

    return respond


def _without_clock(record: dict[str, Any]) -> dict[str, Any]:
    record = dict(record)
    record.pop("timing", None)
    record["steps"] = [{k: v for k, v in step.items() if k != "seconds"}
                       for step in record.get("steps", [])]
    return record


def journal_lines(path: Path, *, rollout: bool = False) -> list[str]:
    """The journal's records, sorted by key, as canonical JSON; asserts no key twice."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip()]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)), "an item was written twice"
    if rollout:
        records = [_without_clock(r) for r in records]
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records)


def rollout_args(server: ScriptedLLMServer, out: Path, *more: str) -> list[str]:
    args = ["rollout", str(PACKAGE), "-n", "3", "--base-url", server.url, "--model", "m",
            "-o", str(out), "--progress", "never", "--format", "json"]
    for task in TASKS:
        args += ["--task", task]
    return args + list(more)


# ------------------------------------------------------------------------ rollouts
def test_a_ray_rollout_batch_writes_what_a_local_one_writes(
        cluster: str, world: type[Episode], llm_server: ScriptedLLMServer,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = agent_for(world)
    assert main(rollout_args(llm_server, tmp_path / "local")) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(rollout_args(llm_server, tmp_path / "ray", "--backend", "ray", "--workers",
                             "2", "--concurrency", "2")) == 0
    remote = json.loads(capsys.readouterr().out)
    assert local.pop("journal") != remote.pop("journal")
    assert local == remote and local["rollouts"] == 6 and local["errors"] == 0
    (only,) = local["runs"]
    assert only["world"] == "MobileMessaging" and only["mean_reward"] == 1.0
    for name in ("local", "ray"):
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        summary.pop("journal")
        assert summary == local
    assert journal_lines(tmp_path / "local" / "rollouts.jsonl", rollout=True) == \
        journal_lines(tmp_path / "ray" / "rollouts.jsonl", rollout=True)


def test_a_worker_killed_mid_rollout_has_it_retried_elsewhere(
        cluster: str, world: type[Episode], llm_server: ScriptedLLMServer,
        llm_config: LLMConfig, tmp_path: Path) -> None:
    settings = RolloutSettings(model=llm_config.model)
    source = WorldSource.of(world, str(PACKAGE))
    jobs = plan_rollouts([source], [(0, t) for t in TASKS], 2, settings)
    doomed = 1  # the second job: killed at its first model request
    executor = RayExecutor(workers=2, concurrency=1, track_pids=True)
    agent = agent_for(world)
    seen: dict[str, Any] = {"killed": None, "retried_on": None}

    def respond(request: RecordedRequest) -> Reply | str:
        if request.body.get("seed") == jobs[doomed].seed:
            pid = executor.running.get(doomed)
            if seen["killed"] is None and pid is not None:
                seen["killed"] = pid
                os.kill(pid, signal.SIGKILL)  # the worker dies mid-rollout
                return Reply(content="never read", delay=0.5)
            if seen["retried_on"] is None:
                seen["retried_on"] = pid
        return agent(request)

    llm_server.responder = respond
    journal = Journal.open(tmp_path / "rollouts.jsonl")
    summary = asyncio.run(asyncio.wait_for(run_batch(
        jobs, settings, llm_config, None, journal=journal, executor=executor), timeout=90))
    assert seen["killed"] is not None and executor.lost_workers == 1
    assert seen["retried_on"] not in (None, seen["killed"])  # another worker process
    assert len(summary.records) == 4 and summary.errors == 0
    assert all(r["reward"] == 1.0 for r in summary.records)
    assert len(journal_lines(journal.path, rollout=True)) == 4  # each rollout written once


def test_a_rollout_whose_every_worker_dies_is_an_error_that_a_rerun_redoes(
        cluster: str, world: type[Episode], llm_server: ScriptedLLMServer,
        llm_config: LLMConfig, tmp_path: Path) -> None:
    settings = RolloutSettings(model=llm_config.model)
    jobs = plan_rollouts([WorldSource.of(world, str(PACKAGE))], [(0, "tidy_archive")], 2,
                         settings)
    executor = RayExecutor(workers=2, concurrency=1, track_pids=True, max_attempts=2)
    agent = agent_for(world)
    kills: list[int] = []

    def respond(request: RecordedRequest) -> Reply | str:
        pid = executor.running.get(0)
        if request.body.get("seed") == jobs[0].seed and pid is not None and pid not in kills:
            kills.append(pid)
            os.kill(pid, signal.SIGKILL)  # the first job kills every worker that takes it
            return Reply(content="never read", delay=0.5)
        return agent(request)

    llm_server.responder = respond
    journal = Journal.open(tmp_path / "rollouts.jsonl")
    summary = asyncio.run(asyncio.wait_for(run_batch(
        jobs, settings, llm_config, None, journal=journal, executor=executor), timeout=90))
    lost, kept = summary.records
    assert len(kills) == 2 and lost["status"] == "error" and "WorkerLost" in lost["error"]
    assert kept["status"] == "finished" and kept["reward"] == 1.0  # the other job went on
    llm_server.responder = agent
    again = asyncio.run(run_batch(jobs, settings, llm_config, None,
                                  journal=Journal.open(journal.path)))
    assert again.resumed == 1 and [r["status"] for r in again.records] == ["finished"] * 2


KILL_DRIVER = """
import sys
from worldspec.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_killed_ray_driver_resumes_from_its_journal_without_repeating(
        cluster: str, world: type[Episode], llm_server: ScriptedLLMServer,
        tmp_path: Path) -> None:
    llm_server.responder = agent_for(world, delay=0.1)
    out = tmp_path / "runs"
    journal = out / "rollouts.jsonl"
    args = rollout_args(llm_server, out, "--backend", "ray", "--workers", "2",
                        "--concurrency", "1", "-n", "4")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    driver = subprocess.Popen([sys.executable, "-c", KILL_DRIVER, *args, "--address", cluster],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and driver.poll() is None:
            if journal.is_file() and len(journal.read_text().splitlines()) >= 2:
                break
            time.sleep(0.02)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        if driver.poll() is None:
            driver.kill()
    before = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    assert 2 <= len(before) < 8, "the kill came too late to interrupt the batch"
    assert main(args) == 0  # resumed on the module's cluster
    records = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == 8  # every rollout once, none twice
    assert keys[:len(before)] == [r["key"] for r in before]
    assert all(r["status"] == "finished" and r["reward"] == 1.0 for r in records)


# --------------------------------------------------------------------------- synth
def test_ray_synth_world_writes_the_same_worlds_and_journal(
        cluster: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = lambda r: fenced(world_named(r.last_user))
    descriptions = tmp_path / "descriptions.jsonl"
    descriptions.write_text("".join(json.dumps({"id": f"d{i}", "description":
                                                f"A counter number {i}."}) + "\n"
                                    for i in range(1, 5)))
    for name, more in (("local", []), ("ray", ["--backend", "ray", "--workers", "2"])):
        assert main(["synth", "world", "--input", str(descriptions), "-o", str(tmp_path / name),
                     "--no-plan", "--test-examples", "3", "--test-steps", "3", "--base-url",
                     llm_server.url, "--model", "m", "--progress", "never",
                     "--concurrency", "2", *more]) == 0
    local, remote = tmp_path / "local", tmp_path / "ray"
    worlds = sorted(p.name for p in local.glob("*.world"))
    assert len(worlds) == 4 and worlds == sorted(p.name for p in remote.glob("*.world"))
    for name in worlds:
        assert (local / name).read_bytes() == (remote / name).read_bytes()
    assert [line.replace(str(local), "OUT") for line in journal_lines(local / "journal.jsonl")] \
        == [line.replace(str(remote), "OUT") for line in journal_lines(remote / "journal.jsonl")]


def test_ray_synth_tasks_writes_the_same_tasks_file(
        cluster: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    def answer(request: RecordedRequest) -> Reply | str:
        # one distinct task per slot (the slot picks the tool to focus on)
        if "`borrow_book`" in request.last_user:
            return fenced(library_task("lend_emma", title="Emma"))
        return fenced(library_task("lend_ulysses", title="Ulysses"))

    llm_server.responder = answer
    outputs = {}
    for name, more in (("local", []), ("ray", ["--backend", "ray", "--workers", "2"])):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "library.world").write_text(LIBRARY_WORLD, encoding="utf-8")
        assert main(["synth", "tasks", str(folder / "library.world"), "-n", "2",
                     "--concurrency", "1", "--base-url", llm_server.url, "--model", "m",
                     "--progress", "never", *more]) == 0
        outputs[name] = (folder / "library.tasks.world").read_bytes()
        lines = journal_lines(folder / "library.tasks.world.journal.jsonl")
        outputs[name + " journal"] = [line.replace(str(folder), "DIR") for line in lines]
    assert outputs["local"] == outputs["ray"]
    assert b"task lend_emma" in outputs["local"] and b"task lend_ulysses" in outputs["local"]
    assert outputs["local journal"] == outputs["ray journal"]


def test_ray_synth_themes_writes_the_same_descriptions(
        cluster: str, llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = themes_responder()
    llm_server.embedder = scripted_embedding
    corpus = write_corpus(tmp_path)
    written = {}
    for name, more in (("local", []), ("ray", ["--backend", "ray", "--workers", "2"])):
        out = tmp_path / f"{name}.jsonl"
        assert main(["synth", "themes", str(corpus), "-o", str(out), "--base-url",
                     llm_server.url, "--model", "m", "--progress", "never", *more]) == 1
        written[name] = out.read_bytes()
        written[name + " journal"] = journal_lines(tmp_path / f"{name}.jsonl.journal.jsonl")
    assert written["local"] == written["ray"] and written["local"].count(b"\n") == 3
    assert written["local journal"] == written["ray journal"]


# ----------------------------------------------------------------------- benchmark
def test_the_scale_benchmark_runs_every_way_on_the_cluster(cluster: str) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_scale.py"),
                           "--quick", "--json", "--latency", "0.01", "--address", cluster],
                          cwd=ROOT, capture_output=True, text=True, timeout=240, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    rows = {(r["workload"], r["way"]): r for r in report["rows"]}
    assert set(rows) == {(w, way) for w in ("rollouts", "synth world")
                         for way in ("local", "ray 1", "ray 2")}
    assert all(r["items_per_s"] > 0 for r in rows.values())
    assert all(r["requests"] == rows["rollouts", "local"]["requests"] > 0
               for (workload, _), r in rows.items() if workload == "rollouts")


# ------------------------------------------------------------------- own cluster
NICE_WORKER = """
import os


class NiceLevel:
    async def start(self) -> None:
        pass

    async def run(self, payload: int) -> tuple[int, int]:
        return payload, os.nice(0)

    async def stop(self) -> None:
        pass
"""

OWN_CLUSTER = """
import asyncio, json, os
from nice_worker import NiceLevel
from worldspec.services.executors import RayExecutor

done = {}
asyncio.run(RayExecutor(workers=2, concurrency=1).run(
    NiceLevel(), [1, 2, 3], prepare=lambda item: item,
    finish=lambda item, outcome: done.__setitem__(item, outcome)))
print(json.dumps({"done": done, "driver": os.environ.get("RAY_worker_niceness")}))
"""


def test_the_executor_s_own_cluster_runs_its_workers_at_nice_0_not_ray_s_15(
        tmp_path: Path) -> None:
    (tmp_path / "nice_worker.py").write_text(NICE_WORKER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_worker_niceness")}
    env["PYTHONPATH"] = os.pathsep.join((str(ROOT), str(tmp_path)))
    done = subprocess.run([sys.executable, "-c", OWN_CLUSTER], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"done": {"1": [1, 0], "2": [2, 0], "3": [3, 0]}, "driver": None}
