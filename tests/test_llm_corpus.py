"""``synth corpus`` end to end against the scripted server: stages, index, export, resuming.

The scripted model (:func:`llm_scripts.corpus_responder`) answers from the request alone,
so a run that is killed and resumed must end with the very corpus an uninterrupted run
makes, having asked every question once (but the one in flight when it was killed).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from llm_scripts import PLAN_JSON, corpus_responder
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main as cli_main
from worldspec.llm_frontend import corpus as corpus_module
from worldspec.llm_frontend.corpus import CorpusOptions, CorpusSource, build_corpus
from worldspec.llm_frontend.synth_tasks import TaskOptions
from worldspec.llm_frontend.synth_world import WorldOptions
from worldspec.services.model_client import LLMConfig
from worldspec.services.validation import check_paths

ROOT = Path(__file__).resolve().parent.parent

DOMAINS = [{"id": "warehouse", "description": "A crate counter for a warehouse, number 1."},
           {"id": "pantry", "description": "A jar counter for a pantry, number 2."}]


def write_domains(folder: Path) -> Path:
    path = folder / "domains.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DOMAINS), encoding="utf-8")
    return path


def corpus_args(server: ScriptedLLMServer, domains: Path, out: Path) -> list[str]:
    return ["synth", "corpus", "--domains", str(domains), "-o", str(out), "-n", "3",
            "--conversational", "1", "--min-calls", "4", "--test-examples", "8",
            "--test-steps", "8", "--explore-examples", "12", "--explore-steps", "10",
            "--concurrency", "1", "--base-url", server.url, "--model", "m",
            "--max-retries", "0"]


def question(request: RecordedRequest) -> tuple[str, ...]:
    """What a request asks, independent of when: (kind, world or description, slot)."""
    if "response_format" in request.body:
        return ("plan", request.last_user.split("\n\n")[1])
    if "Rules for the file you write" in request.system:
        return ("world", request.last_user.split("\n\n")[1])
    world = request.last_user.rpartition("Write one new task in ")[2]
    return ("task", world, str(request.last_user.count("\n- count_")))


def test_a_corpus_from_domains(llm_server: ScriptedLLMServer, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = corpus_responder
    out = tmp_path / "corpus"
    args = corpus_args(llm_server, write_domains(tmp_path), out)
    assert cli_main(args) == 0, capsys.readouterr()
    text = capsys.readouterr().out
    index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert [w["world"] for w in index["worlds"]] == ["Counter1", "Counter2"]
    first = index["worlds"][0]
    assert first["file"] == "worlds/warehouse/counter1.world"
    assert first["tasks_file"] == "worlds/warehouse/tasks.world"
    assert first["validated"] and first["findings"] == [] and first["problems"] == []
    assert [(t["task"], t["sample"], t["conversational"], t["calls"]) for t in first["tasks"]] \
        == [("count_up", True, False, 2), ("count_1", False, False, 4),
            ("count_2", False, False, 4), ("count_3", False, True, 4)]
    assert first["conversational_tasks"] == 1
    assert all(row["succeeded"] > 0 for row in first["coverage"].values())
    assert first["explored_calls"] == 12 * 10
    assert first["provenance"]["source"] == {"file": "domains.jsonl", "line": 1,
                                             "id": "warehouse"}
    stages = index["stages"]
    assert (stages["worlds"]["items"], stages["worlds"]["accepted"]) == (2, 2)
    assert stages["worlds"]["requests"] == 4  # a plan and a world each
    assert (stages["tasks"]["items"], stages["tasks"]["accepted"]) == (6, 6)
    assert stages["tasks"]["acceptance_rate"] == 1.0
    assert index["totals"]["tasks"] == 8 and index["totals"]["requests"] == 10
    assert index["totals"]["tokens"] == 10 * 18
    raw = (out / "corpus.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in raw  # no machine paths in the index
    rows = [json.loads(line) for line in
            (out / "dataset.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 8 and {r["world"] for r in rows} == {"Counter1", "Counter2"}
    assert "data_files: dataset.jsonl" in (out / "README.md").read_text(encoding="utf-8")
    # the folder is a corpus `worldspec check/tasks/test` take as it is
    validated = check_paths([out])
    assert validated.ok and len(validated.tasks) == 8 and all(t.valid for t in validated.tasks)
    assert cli_main(["tasks", str(out)]) == 0 and cli_main(["check", str(out)]) == 0
    assert (out / "worlds" / "warehouse" / "tasks.world").stat().st_mode & 0o777 == 0o644
    assert "Counter1 (warehouse): 4 task(s), 1 conversational; write tools 2/2 reached" in text
    # a second run asks nothing and writes the same index
    capsys.readouterr()
    asked = len(llm_server.chat_requests)
    assert cli_main(args) == 0
    assert len(llm_server.chat_requests) == asked
    assert json.loads((out / "corpus.json").read_text(encoding="utf-8")) == index


def test_a_corpus_killed_mid_stage_resumes_to_the_same_result(llm_server: ScriptedLLMServer,
                                                              tmp_path: Path) -> None:
    llm_server.responder = corpus_responder
    domains = write_domains(tmp_path)
    clean = tmp_path / "clean"
    assert cli_main(corpus_args(llm_server, domains, clean)) == 0
    clean_questions = Counter(question(r) for r in llm_server.chat_requests)
    assert max(clean_questions.values()) == 1

    with ScriptedLLMServer() as server:
        gate = threading.Event()

        def answer(request: RecordedRequest) -> Reply | str:
            asked = question(request)
            if asked == ("task", "Counter2.", "1") and not gate.is_set():
                gate.wait(30)  # the second task of the second world: held until the kill
            return corpus_responder(request)

        server.responder = answer
        out = tmp_path / "resumed"
        args = corpus_args(server, domains, out)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        process = subprocess.Popen([sys.executable, "-m", "worldspec", *args], cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                if ("task", "Counter2.", "1") in {question(r) for r in server.chat_requests}:
                    break
                assert process.poll() is None, process.communicate()
                time.sleep(0.02)
            process.send_signal(signal.SIGKILL)
            process.wait(10)
        finally:
            gate.set()
            if process.poll() is None:
                process.kill()
            process.communicate()
        assert not (out / "corpus.json").exists()  # it died in the tasks stage
        assert cli_main(args) == 0
        asked = Counter(question(r) for r in server.chat_requests)
    assert asked == clean_questions + Counter({("task", "Counter2.", "1"): 1})
    assert json.loads((out / "corpus.json").read_text(encoding="utf-8")) == \
        json.loads((clean / "corpus.json").read_text(encoding="utf-8"))
    assert (out / "dataset.jsonl").read_text(encoding="utf-8") == \
        (clean / "dataset.jsonl").read_text(encoding="utf-8")
    for path in sorted((clean / "worlds").rglob("*.world")):
        twin = out / path.relative_to(clean)
        assert twin.read_text(encoding="utf-8") == path.read_text(encoding="utf-8")


def test_a_crash_in_validation_resumes_there(llm_server: ScriptedLLMServer,
                                             llm_config: LLMConfig, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    llm_server.responder = corpus_responder
    llm_config = replace(llm_config, concurrency=1)  # the scripted tasks differ in order
    options = CorpusOptions(tasks_per_world=2, conversational=0,
                            world=WorldOptions(test_examples=8, test_steps=8),
                            task=TaskOptions(min_calls=4), explore_examples=10, explore_steps=8)
    source = CorpusSource("domains", write_domains(tmp_path))
    out = tmp_path / "corpus"
    real = corpus_module._validate_world
    validated: list[Path] = []

    def crashing(world_file: Path, tasks_file: Path | None, opts: CorpusOptions) -> Any:
        if validated:
            raise RuntimeError("the machine went down")
        validated.append(world_file)
        return real(world_file, tasks_file, opts)

    monkeypatch.setattr(corpus_module, "_validate_world", crashing)
    with pytest.raises(RuntimeError):
        asyncio.run(build_corpus(llm_config, source, out, options))
    asked = len(llm_server.chat_requests)
    seen: list[Path] = []

    def counting(world_file: Path, tasks_file: Path | None, opts: CorpusOptions) -> Any:
        seen.append(world_file)
        return real(world_file, tasks_file, opts)

    monkeypatch.setattr(corpus_module, "_validate_world", counting)
    report = asyncio.run(build_corpus(llm_config, source, out, options))
    assert report.ok and len(llm_server.chat_requests) == asked  # no model request again
    assert [p.parent.name for p in seen] == ["pantry"]  # warehouse was journaled
    assert report.index["totals"]["validated_worlds"] == 2


def test_a_corpus_from_user_requests(llm_server: ScriptedLLMServer, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """--corpus: the themes stage turns requests into descriptions first, once."""
    assessments = {
        "crates": {"needs_state": True, "domain": "warehouse", "usefulness": 5,
                   "modelability": 5, "reason": "stock counts persist",
                   "description": "A crate counter, number 1: count crates in and out."},
        "capital": {"needs_state": False, "domain": "trivia", "usefulness": 1,
                    "modelability": 1, "reason": "no state", "description": ""},
    }

    def answer(request: RecordedRequest) -> str:
        planning = "Design a tool environment" in request.last_user
        for marker, reply in assessments.items():
            if "response_format" in request.body and not planning and \
                    marker in request.last_user:
                return json.dumps(reply)
        return corpus_responder(request)

    llm_server.responder = answer
    requests = tmp_path / "requests.jsonl"
    requests.write_text(json.dumps({"id": "r1", "task": "Count the crates that came in."})
                        + "\n" + json.dumps({"id": "r2", "task": "What is the capital?"})
                        + "\n", encoding="utf-8")
    out = tmp_path / "corpus"
    args = ["synth", "corpus", "--corpus", str(requests), "-o", str(out), "-n", "1",
            "--conversational", "0", "--test-examples", "8", "--test-steps", "8",
            "--explore-examples", "8", "--explore-steps", "8", "--concurrency", "1",
            "--base-url", llm_server.url, "--model", "m"]
    assert cli_main(args) == 0, capsys.readouterr()
    index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert [w["id"] for w in index["worlds"]] == ["warehouse"]
    assert index["worlds"][0]["provenance"]["source"]["corpus"]["ids"] == ["r1"]
    assert index["stages"]["themes"]["items"] == 2
    embeddings = [r for r in llm_server.requests if r.path.endswith("/embeddings")]
    capsys.readouterr()
    assert cli_main(args) == 0
    assert "themes: done before" in capsys.readouterr().out
    assert len([r for r in llm_server.requests if r.path.endswith("/embeddings")]) == \
        len(embeddings)  # the finished stage is not run again, embeddings included


def test_world_names_are_unique_in_the_corpus_and_beside_it(llm_server: ScriptedLLMServer,
                                                            tmp_path: Path) -> None:
    """Two descriptions that make the same world, next to examples that already have it."""
    llm_server.responder = corpus_responder
    domains = tmp_path / "domains.txt"
    domains.write_text("# one per line\nA crate counter, number 1.\nA jar counter, number 1.\n",
                       encoding="utf-8")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "c.world").write_text('world Counter1 "x"\n', encoding="utf-8")
    out = tmp_path / "examples" / "corpus"
    args = ["synth", "corpus", "--domains", str(domains), "-o", str(out), "-n", "1",
            "--conversational", "0", "--test-examples", "8", "--test-steps", "8",
            "--explore-examples", "8", "--explore-steps", "8", "--concurrency", "1",
            "--beside", str(tmp_path / "examples"), "--base-url", llm_server.url,
            "--model", "m"]
    assert cli_main(args) == 0
    index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert [(w["id"], w["world"]) for w in index["worlds"]] == [
        ("line_2", "Counter1_2"), ("line_3", "Counter1_3")]
    assert check_paths([out]).ok
    assert cli_main(args) == 0  # resumed: its own worlds do not count as taken
    again = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert [w["world"] for w in again["worlds"]] == ["Counter1_2", "Counter1_3"]


@pytest.mark.parametrize(("extra", "words"), [
    ([], "give either --domains FILE or --corpus FILE.jsonl"),
    (["--domains", "d.jsonl"], "name the corpus folder: -o DIR"),
    (["--domains", "nope.jsonl", "-o", "c"], "nope.jsonl' does not exist"),
    (["--domains", "d.jsonl", "-o", "c", "-n", "2", "--conversational", "3"],
     "--conversational (3) cannot exceed -n (2)"),
    (["--domains", "d.jsonl", "-o", "c", "--journal", "j.jsonl"], "--journal does not apply"),
    (["--domains", "d.jsonl", "-o", "d.jsonl"], "exists and is not a folder"),
])
def test_bad_corpus_arguments(extra: list[str], words: str, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    write_domains(tmp_path).rename(tmp_path / "d.jsonl")
    status = cli_main(["synth", "corpus", *extra, "--base-url", "http://127.0.0.1:9/v1",
                       "--model", "m"])
    assert status == 2 and words in capsys.readouterr().err


def test_plan_json_is_a_counter() -> None:
    assert json.loads(PLAN_JSON)["world_name"] == "Counter"


def test_a_corpus_moved_or_damaged_is_rebuilt_from_its_journals(
        llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The journals hold paths relative to the corpus folder: the folder can move (or be
    checked out elsewhere) and a deleted world or tasks file is written again, not asked for."""
    llm_server.responder = corpus_responder
    domains = write_domains(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert cli_main(corpus_args(llm_server, domains, Path("corpus"))) == 0
    journals = "".join(p.read_text(encoding="utf-8")
                       for p in sorted((tmp_path / "corpus" / "journals").glob("*.jsonl")))
    assert str(tmp_path) not in journals
    index = json.loads((tmp_path / "corpus" / "corpus.json").read_text(encoding="utf-8"))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "corpus").rename(tmp_path / "elsewhere" / "corpus")
    monkeypatch.chdir(tmp_path / "elsewhere")
    (Path("corpus") / index["worlds"][0]["file"]).unlink()
    (Path("corpus") / index["worlds"][1]["tasks_file"]).unlink()
    asked = len(llm_server.chat_requests)
    capsys.readouterr()
    assert cli_main(corpus_args(llm_server, domains, Path("corpus"))) == 0
    text = capsys.readouterr().out
    assert len(llm_server.chat_requests) == asked
    assert f"rewrote {index['worlds'][0]['file']} from the journal" in text
    assert "tasks.world from the journal" in text
    assert json.loads(Path("corpus/corpus.json").read_text(encoding="utf-8")) == index


def test_a_failed_request_leaves_a_usable_corpus_and_is_retried(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    refused = {"armed": True}

    def answer(request: RecordedRequest) -> Reply | str:
        if question(request)[:2] == ("world", DOMAINS[1]["description"]) and refused["armed"]:
            refused["armed"] = False
            return Reply(status=401, error="bad key")  # not retried: the item errors
        return corpus_responder(request)

    llm_server.responder = answer
    out = tmp_path / "corpus"
    args = corpus_args(llm_server, write_domains(tmp_path), out)
    assert cli_main(args) == 1
    text = capsys.readouterr().out
    assert "1 item(s) failed" in text and "run the same command again" in text
    first = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert [w["id"] for w in first["worlds"]] == ["warehouse"] and first["worlds"][0]["validated"]
    assert cli_main(args) == 0
    again = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert [w["id"] for w in again["worlds"]] == ["warehouse", "pantry"]


def test_a_domains_line_sets_its_family_and_its_own_task_counts(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``family``, ``tasks`` and ``conversational`` on a domains line: the pantry gets one
    written task, a conversational one, instead of -n 3 with one conversational; both
    worlds' families are in the index, its totals and the card."""
    llm_server.responder = corpus_responder
    domains = tmp_path / "domains.jsonl"
    domains.write_text(
        json.dumps({**DOMAINS[0], "family": "logistics"}) + "\n"
        + json.dumps({**DOMAINS[1], "family": "household", "tasks": 1,
                      "conversational": 1}) + "\n", encoding="utf-8")
    out = tmp_path / "corpus"
    assert cli_main(corpus_args(llm_server, domains, out)) == 0, capsys.readouterr()
    index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    warehouse, pantry = index["worlds"]
    assert (warehouse["family"], pantry["family"]) == ("logistics", "household")
    assert [(t["sample"], t["conversational"]) for t in pantry["tasks"]] == \
        [(True, False), (False, True)]
    assert len([t for t in warehouse["tasks"] if not t["sample"]]) == 3
    assert index["stages"]["tasks"]["items"] == 4
    assert index["totals"]["families"] == 2
    assert "| domain families | 2 | - |" in (out / "README.md").read_text(encoding="utf-8")
    rows = [json.loads(line) for line in
            (out / "descriptions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[1]["family"] == "household" and rows[1]["tasks"] == 1


@pytest.mark.parametrize(("line", "words"), [
    ({"family": ""}, '"family" must be a non-empty string'),
    ({"tasks": -1}, '"tasks" must be a whole number, 0 or more'),
    ({"tasks": True}, '"tasks" must be a whole number, 0 or more'),
    ({"tasks": 1, "conversational": 2}, '"conversational" (2) cannot exceed "tasks" (1)'),
])
def test_bad_domains_extras_are_input_errors(line: dict[str, Any], words: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    domains = tmp_path / "domains.jsonl"
    domains.write_text(json.dumps({**DOMAINS[0], **line}) + "\n", encoding="utf-8")
    args = ["synth", "corpus", "--domains", str(domains), "-o", str(tmp_path / "c"),
            "--base-url", "http://127.0.0.1:9", "--model", "m", "--max-retries", "0"]
    assert cli_main(args) == 2
    assert f"domains.jsonl:1: {words}" in capsys.readouterr().err


def test_a_stage_reports_its_tokens_per_accepted_item() -> None:
    """What a written task costs beside a mined one: the stage's tokens (rejected items'
    included) per accepted item; none without an accepted item."""
    from worldspec.llm_frontend.corpus import StageStats
    from worldspec.services.model_client import Usage

    stage = StageStats("tasks", items=4, accepted=3, rejected=1,
                       usage=Usage(requests=6, prompt_tokens=9000, completion_tokens=1000))
    assert stage.to_json()["tokens_per_accepted"] == 3333
    assert "10,000 tokens (3,333 per accepted)" in stage.line()
    none = StageStats("mined", items=2, rejected=2, usage=Usage(requests=2, prompt_tokens=50))
    assert none.to_json()["tokens_per_accepted"] is None and "per accepted" not in none.line()


def test_retry_rejected_mines_rejected_slots_again(llm_server: ScriptedLLMServer,
                                                   tmp_path: Path) -> None:
    """A mined task the judge rejected stays rejected on a plain resume (nothing is asked
    again); with ``--retry-rejected`` its slot is mined again (a fresh candidate first) and,
    written well this time, accepted, its record keeping the first attempt's reason and
    tokens."""
    from test_synth_mined import JUDGE, WRITER, _judge, _responder

    wrong = _responder(judge=lambda r: _judge(r, honest=False))
    right = _responder()
    judge = {"answer": wrong}

    def answer(request: RecordedRequest) -> str:
        if WRITER in request.system or JUDGE in request.system:
            return judge["answer"](request)
        return corpus_responder(request)

    llm_server.responder = answer
    domains = tmp_path / "domains.jsonl"
    domains.write_text(json.dumps({"id": "pantry", "description":
                                   "A jar counter for a pantry, number 2."}) + "\n",
                       encoding="utf-8")
    out = tmp_path / "corpus"
    args = ["synth", "corpus", "--domains", str(domains), "-o", str(out), "-n", "1",
            "--conversational", "0", "--mined", "2", "--min-calls", "4",
            "--test-examples", "8", "--test-steps", "8", "--explore-examples", "12",
            "--explore-steps", "10", "--concurrency", "1", "--base-url", llm_server.url,
            "--model", "m", "--max-retries", "0"]

    def mined() -> tuple[dict[str, Any], list[str]]:
        index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
        [world] = index["worlds"]
        return index["stages"]["mined"], [t["task"] for t in world["tasks"]
                                          if t["task"].startswith("mined_")]

    assert cli_main(args) == 0
    first, tasks = mined()
    assert (first["items"], first["accepted"], tasks) == (2, 0, [])
    asked = len(llm_server.chat_requests)
    assert cli_main(args) == 0  # a plain resume: the rejected slots stay as they are
    assert len(llm_server.chat_requests) == asked and mined()[0] == first

    judge["answer"] = right
    assert cli_main([*args, "--retry-rejected"]) == 0
    again, tasks = mined()
    assert len(llm_server.chat_requests) > asked
    assert (again["items"], again["accepted"], len(tasks)) == (2, 2, 2)
    assert again["total_tokens"] > first["total_tokens"]  # the first attempts' tokens still count
    records = [json.loads(line) for line in
               (out / "journals" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()]
    retried = [r for r in records if r["data"].get("mined") and r["status"] == "accepted"]
    assert retried and all(r["data"]["earlier"][0]["reason"] ==
                           "the instruction does not determine the goal" for r in retried)
