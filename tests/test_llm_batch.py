"""Batch runs: the journal, resuming after a kill, content-hashed outputs, progress, summary."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from llm_scripts import LIBRARY_WORLD, counter_world, fenced, library_task, world_named
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_specs as compiler_check
from worldspec.llm_frontend.batch import (
    BatchItem,
    BatchSummary,
    InputError,
    ItemRecord,
    Journal,
    Progress,
    read_jsonl,
    run_batch,
    write_output,
)
from worldspec.services.model_client import LLMRequestError, Usage
from worldspec.services.validation import check_paths

ROOT = Path(__file__).resolve().parent.parent


def items(n: int) -> list[BatchItem]:
    return [BatchItem.make("demo", {"n": i}, f"item {i}") for i in range(n)]


def run(batch: list[BatchItem], journal: Journal | None, fail: set[int] = frozenset(),
        concurrency: int = 2) -> tuple[list[int], BatchSummary]:
    seen: list[int] = []

    async def work(item: BatchItem, spent: Usage) -> ItemRecord:
        number = int(item.payload["n"])
        seen.append(number)
        spent.add(Usage(requests=1, prompt_tokens=10, completion_tokens=number))
        if number in fail:
            raise LLMRequestError("server down")
        status = "accepted" if number % 3 else "rejected"
        return ItemRecord(item.key, status, rounds=number % 2,
                          reason="" if number % 3 else "too dull")

    summary = asyncio.run(run_batch("demo", batch, work, journal=journal,
                                    concurrency=concurrency))
    return sorted(seen), summary


# ------------------------------------------------------------------ journal
def test_keys_are_content_hashes() -> None:
    a = BatchItem.make("world", {"description": "x", "id": 1}, "a")
    b = BatchItem.make("world", {"id": 1, "description": "x"}, "b")
    c = BatchItem.make("tasks", {"id": 1, "description": "x"}, "c")
    assert a.key == b.key != c.key and len(a.key) == 64


def test_duplicate_items_run_once() -> None:
    seen, summary = run(items(3) + items(3), None)
    assert seen == [0, 1, 2]
    assert summary.total == 3


def test_resume_skips_finished_items_and_retries_errors(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    seen, first = run(items(6), Journal.open(path), fail={4})
    assert seen == [0, 1, 2, 3, 4, 5]
    assert first.count("error") == 1
    seen, second = run(items(6), Journal.open(path))
    assert seen == [4]  # only the failed one is tried again
    assert second.resumed == 5 and second.count("accepted") == 4
    assert second.count("error") == 0
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 7 and Counter(r["status"] for r in records)["error"] == 1
    journal = Journal.open(path)
    assert len(journal.records) == 6 and all(r.finished for r in journal.records.values())


def test_a_torn_last_line_is_ignored_and_closed(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    run(items(2), Journal.open(path))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"key": "abc", "status": "acc')  # killed mid-write
    journal = Journal.open(path)
    assert len(journal.records) == 2 and journal.skipped_lines == 1
    seen, _ = run(items(3), journal)
    assert seen == [2]
    reread = Journal.open(path)
    assert len(reread.records) == 3 and reread.skipped_lines == 1


def test_a_model_answer_holding_a_lone_surrogate_is_journaled_and_read_back(
        tmp_path: Path) -> None:
    """A model server may send ``"\\ud800"`` (valid JSON, not Unicode): the record holding the
    answer is journaled as valid UTF-8 and reads back as the same text, so the item counts as
    done on resume; the journal's other text stays as it is (not escaped)."""
    path = tmp_path / "journal.jsonl"
    answer = "Voil\u00e0 \ud800 the world"

    async def work(item: BatchItem, spent: Usage) -> ItemRecord:
        return ItemRecord(item.key, "rejected", item.label, reason="no code",
                          detail=answer, data={"reply": answer, "notes": ["\udfff"]})

    batch = [BatchItem.make("demo", {"description": "caf\u00e9 \udc80"}, "odd")]
    summary = asyncio.run(run_batch("demo", batch, work, journal=Journal.open(path)))
    assert summary.count("rejected") == 1
    line = path.read_bytes().decode("utf-8")
    assert "Voil\u00e0" in line and "\\ud800" in line
    record = Journal.open(path).records[batch[0].key]
    assert (record.detail, record.data) == (answer, {"reply": answer, "notes": ["\udfff"]})
    assert record.finished
    again = asyncio.run(run_batch("demo", batch, work, journal=Journal.open(path)))
    assert again.resumed == 1


def test_a_world_holding_a_lone_surrogate_is_rejected_and_kept(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The model answers a world with ``"\\ud800"`` in it: the compiler refuses it (WS107),
    the item is rejected (not an internal error, retried forever), its journal record and
    rejected draft are written as UTF-8 with the surrogate escaped, and a rerun resumes it."""
    odd = counter_world().replace("\n", "\n# a stray \ud800 here\n", 1)
    llm_server.responder = lambda request: fenced(odd)
    source = tmp_path / "descriptions.jsonl"
    source.write_text(json.dumps({"description": "A counter."}) + "\n", encoding="utf-8")
    out = tmp_path / "worlds"
    args = ["synth", "world", "--input", str(source), "-o", str(out), "--no-plan",
            "--max-rounds", "1", "--base-url", llm_server.url, "--model", "m",
            "--format", "json"]
    assert cli_main(args) == 1
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rejected"], summary["errors"]) == (1, 0)
    [record] = Journal.open(out / "journal.jsonl").records.values()
    assert record.status == "rejected" and record.detail.startswith("WS107")
    [draft] = (out / "rejected").glob("*.world.rejected")
    assert draft.read_text(encoding="utf-8") == odd.replace("\ud800", "\\ud800")
    [problems] = (out / "rejected").glob("*.problems.json")
    report = json.loads(problems.read_text(encoding="utf-8"))
    assert "# a stray \ud800 here" in json.dumps(report, ensure_ascii=False)
    asked = len(llm_server.chat_requests)
    assert cli_main(args) == 1
    assert json.loads(capsys.readouterr().out)["resumed"] == 1
    assert len(llm_server.chat_requests) == asked


def test_an_ordinary_item_keeps_its_key() -> None:
    """Keys of inputs without lone surrogates are what they always were (journals written
    before stay valid): the SHA-256 of the canonical JSON, non-ASCII text as UTF-8."""
    item = BatchItem.make("world", {"description": "caf\u00e9"}, "a")
    canonical = '{"input":{"description":"caf\u00e9"},"kind":"world"}'
    assert item.key == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    odd = BatchItem.make("world", {"description": "caf\u00e9 \ud800"}, "b")
    assert len(odd.key) == 64 and odd.key != item.key


def test_summary_counts_reasons_rounds_and_tokens(tmp_path: Path) -> None:
    _, summary = run(items(6), None, fail={5})
    data = summary.to_json()
    assert (data["accepted"], data["rejected"], data["errors"]) == (3, 2, 1)
    assert data["reasons"] == {"model request failed": 1, "too dull": 2}
    assert data["rounds"] == {"0": 3, "1": 2}
    assert data["usage"]["total_tokens"] == 60 + 15
    text = summary.render_text()
    assert "3 accepted, 2 rejected, 1 error(s)" in text and "2 x too dull" in text
    assert "repair rounds (rounds: items): 0: 3, 1: 2" in text


def test_outputs_are_atomic_and_content_hashed(tmp_path: Path) -> None:
    first, digest = write_output(tmp_path, "counter", "world A \"x\"\n")
    again, _ = write_output(tmp_path, "counter", "world A \"x\"\n")
    other, _ = write_output(tmp_path, "counter", "world B \"y\"\n")
    assert first == again != other and first.name == f"counter-{digest[:12]}.world"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([first.name, other.name])


def test_progress_line_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    screen = Terminal()
    progress = Progress(4, screen, label="worlds: ")
    progress.start([])
    progress.update(ItemRecord("a", "accepted"), 1234)
    progress.update(ItemRecord("b", "rejected"), 2000)
    progress.close()
    out = screen.getvalue()
    assert "\r" in out and out.endswith("\n")
    assert "worlds: 2/4 done, 1 accepted (50%), 2,000 tokens" in out
    quiet = io.StringIO()
    progress = Progress(4, quiet)
    progress.update(ItemRecord("a", "accepted"), 1)
    progress.close()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize(("text", "words"), [
    ('{"description": "x"}\n{broken\n', "in.jsonl:2: not valid JSON"),
    ("\n\n", "holds no items"),
])
def test_bad_jsonl_says_where(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=words):
        read_jsonl(path)


def test_a_missing_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = cli_main(["synth", "world", "--input", str(tmp_path / "nope.jsonl"),
                       "--base-url", "http://127.0.0.1:9/v1", "--model", "m"])
    assert status == 2 and "nope.jsonl' does not exist" in capsys.readouterr().err


# --------------------------------------------------- a batch killed and resumed
def description_number(request: RecordedRequest) -> int:
    match = re.search(r"environment number (\d+)", request.text)
    assert match is not None
    return int(match.group(1))


def test_a_batch_killed_mid_run_resumes_without_loss_or_duplicates(
        llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    descriptions = [f"A counter, environment number {i}." for i in range(6)]
    source = tmp_path / "descriptions.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "description": d}) + "\n"
                              for i, d in enumerate(descriptions))
                      + json.dumps({"description": descriptions[1]}) + "\n",  # a duplicate
                      encoding="utf-8")
    gate = threading.Event()

    def answer(request: RecordedRequest) -> Reply | str:
        number = description_number(request)
        if number >= 3 and not gate.is_set():
            gate.wait(30)  # hold item 3 until the run is killed
        return fenced(world_named(f"environment {number}"))

    llm_server.responder = answer
    out = tmp_path / "worlds"
    args = ["synth", "world", "--input", str(source), "-o", str(out), "--no-plan",
            "--concurrency", "1", "--test-examples", "5", "--test-steps", "5",
            "--base-url", llm_server.url, "--model", "m", "--max-retries", "0"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "worldspec", *args], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    journal = out / "journal.jsonl"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            started = {description_number(r) for r in llm_server.chat_requests}
            if 3 in started:
                break
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
        assert 3 in {description_number(r) for r in llm_server.chat_requests}
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        gate.set()
        if process.poll() is None:
            process.kill()
        process.communicate()
    before = Journal.open(journal)
    assert len(before.records) == 3 and all(r.status == "accepted"
                                            for r in before.records.values())

    status = cli_main([*args, "--format", "json"])
    assert status == 0
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    keys = [line["key"] for line in lines]
    assert len(keys) == 6 == len(set(keys))  # nothing lost, nothing twice
    assert {line["label"] for line in lines} == {f"d{i}" for i in range(6)}
    asked = Counter(description_number(r) for r in llm_server.chat_requests)
    assert asked == {0: 1, 1: 1, 2: 1, 3: 2, 4: 1, 5: 1}  # only the item in flight is redone
    worlds = sorted(out.glob("*.world"))
    assert len(worlds) == 6
    assert sorted(p.name.split("-")[0] for p in worlds) == [f"counter{i}" for i in range(6)]
    assert not list(out.glob(".*.tmp"))
    assert compiler_check(worlds).ok

    # a third run has nothing left to do
    requests = len(llm_server.chat_requests)
    assert cli_main(args) == 0
    assert len(llm_server.chat_requests) == requests


def test_a_tasks_batch_resumes_from_its_journal(llm_server: ScriptedLLMServer,
                                                tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "lib").mkdir()
    world = tmp_path / "lib" / "library.world"
    world.write_text(LIBRARY_WORLD, encoding="utf-8")
    source = tmp_path / "worlds.jsonl"
    source.write_text(json.dumps({"world": "lib/library.world", "n": 3}) + "\n",
                      encoding="utf-8")
    titles = iter(["Emma", "Ulysses", "Middlemarch", "Walden"])
    fail_once = {"armed": True}

    def answer(request: RecordedRequest) -> Reply | str:
        title = next(titles)
        if title == "Middlemarch" and fail_once["armed"]:
            fail_once["armed"] = False
            return Reply(status=401, error="bad key")  # not retried: the item errors
        return fenced(library_task(f"lend_{title.lower()}", title=title))

    llm_server.responder = answer
    out = tmp_path / "tasks"
    args = ["synth", "tasks", "--input", str(source), "-o", str(out), "--concurrency", "1",
            "--base-url", llm_server.url, "--model", "m", "--format", "json"]
    assert cli_main(args) == 1
    first = json.loads(capsys.readouterr().out)
    assert (first["accepted"], first["errors"]) == (2, 1)
    assert cli_main(args) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["accepted"], second["resumed"]) == (3, 2)
    files = list(out.glob("library-*.tasks.world"))
    assert len(files) == 1
    validated = check_paths(files)
    assert validated.ok, validated.diagnostics
    assert sorted(r.task for r in validated.tasks) == ["lend_emma", "lend_ulysses",
                                                       "lend_walden"]


# ------------------------------------------------ the journal checked against outputs
def test_resume_rewrites_an_output_that_was_deleted_or_changed(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "descriptions.jsonl"
    source.write_text("".join(json.dumps({"id": f"d{i}", "description": f"environment {i}"})
                              + "\n" for i in range(2)), encoding="utf-8")
    llm_server.responder = lambda r: fenced(world_named(r.last_user))
    out = tmp_path / "worlds"
    args = ["synth", "world", "--input", str(source), "-o", str(out), "--no-plan",
            "--test-examples", "5", "--test-steps", "5", "--base-url", llm_server.url,
            "--model", "m"]
    assert cli_main(args) == 0
    first = capsys.readouterr().out
    files = sorted(out.glob("*.world"))
    assert len(files) == 2
    for path in files:  # item -> file, and readable by others
        assert f"-> {path}" in first and path.stat().st_mode & 0o777 == 0o644
    original = files[1].read_text(encoding="utf-8")
    files[0].unlink()
    files[1].write_text("world Broken", encoding="utf-8")
    requests = len(llm_server.chat_requests)
    assert cli_main(args) == 0
    second = capsys.readouterr().out
    assert len(llm_server.chat_requests) == requests  # rebuilt from the journal, not asked
    assert f"rewrote {files[0]} from the journal" in second
    assert f"rewrote {files[1]} from the journal" in second
    assert files[0].is_file() and files[1].read_text(encoding="utf-8") == original


def test_a_record_the_journal_cannot_rebuild_is_done_again(llm_server: ScriptedLLMServer,
                                                           tmp_path: Path) -> None:
    source = tmp_path / "descriptions.jsonl"
    source.write_text(json.dumps({"description": "environment 4"}) + "\n", encoding="utf-8")
    llm_server.responder = lambda r: fenced(world_named(r.last_user))
    out = tmp_path / "worlds"
    args = ["synth", "world", "--input", str(source), "-o", str(out), "--no-plan",
            "--test-examples", "5", "--test-steps", "5", "--base-url", llm_server.url,
            "--model", "m"]
    assert cli_main(args) == 0
    journal = out / "journal.jsonl"
    record = json.loads(journal.read_text(encoding="utf-8"))
    del record["data"]["text"]  # a journal written before outputs were kept in it
    journal.write_text(json.dumps(record) + "\n", encoding="utf-8")
    for path in out.glob("*.world"):
        path.unlink()
    assert cli_main(args) == 0
    assert len(llm_server.chat_requests) == 2 and len(list(out.glob("*.world"))) == 1


def test_a_deleted_tasks_file_is_rebuilt_from_the_journal(llm_server: ScriptedLLMServer,
                                                          tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    world = tmp_path / "library.world"
    world.write_text(LIBRARY_WORLD, encoding="utf-8")
    titles = iter(["Emma", "Ulysses"])
    llm_server.responder = lambda r: fenced(library_task(f"lend_{(t := next(titles)).lower()}",
                                                         title=t))
    args = ["synth", "tasks", str(world), "-n", "2", "--concurrency", "1",
            "--base-url", llm_server.url, "--model", "m"]
    assert cli_main(args) == 0
    out = tmp_path / "library.tasks.world"
    text = out.read_text(encoding="utf-8")
    assert f"-> {out}" in capsys.readouterr().out
    out.unlink()
    assert cli_main(args) == 0
    assert f"rewrote {out} from the journal" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8") == text and len(llm_server.chat_requests) == 2


def test_near_duplicate_tasks_are_rejected(llm_server: ScriptedLLMServer, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Same data, checks and solution with the instruction reworded (and the data laid out
    otherwise): one task, told twice."""
    world = tmp_path / "library.world"
    world.write_text(LIBRARY_WORLD, encoding="utf-8")
    first = library_task("swap_books")
    second = library_task("trade_books", instruction="Hi, Ada here (ada@example.com): give "
                          "back my Dune and check out Emma for me.").replace(
        '{id: "B002", title: "Emma"}, {id: "B003", title: "Ulysses"}',
        '{id: "B002",   title: "Emma"},\n            {id: "B003", title: "Ulysses"}')
    replies = iter([first, second])
    llm_server.responder = lambda r: fenced(next(replies))
    args = ["synth", "tasks", str(world), "-n", "2", "--concurrency", "1",
            "--base-url", llm_server.url, "--model", "m"]
    assert cli_main(args) == 1
    text = capsys.readouterr().out
    assert ("rejected Library#1: duplicate of an accepted task: swap_books (the same data, "
            "checks, frame and solution)") in text


def test_a_task_that_repeats_a_sample_task_is_rejected(llm_server: ScriptedLLMServer,
                                                       tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """The model copies the world's own sample task under another name and instruction."""
    world = tmp_path / "counter.world"
    world.write_text(counter_world(), encoding="utf-8")
    copy = '''task up_two_down_one in Counter "The same, reworded." {
  given { total: 3 }
  instruction "Please add two and then remove one."
  check four "Four.": total == 4
  only changes total
  solution {
    increment(by: 2)
    decrement()
  }
}
'''
    llm_server.responder = lambda r: fenced(copy)
    args = ["synth", "tasks", str(world), "-n", "1", "--base-url", llm_server.url,
            "--model", "m"]
    assert cli_main(args) == 1
    assert "rejected Counter#0: duplicate of one of the world's own tasks" in \
        capsys.readouterr().out
