"""``synth tasks --mine`` against a scripted OpenAI-compatible server: the model writes only
the instruction of a mined task; the task must validate (one repair) and a second request must
pick its true outcome out of other outcomes mined from the same start."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

from llm_scripts import corpus_responder
from llm_server import RecordedRequest, ScriptedLLMServer

from worldspec.cli.main import main as cli_main
from worldspec.llm_frontend.synth_mined import (
    MinedOutcome,
    MineOptions,
    MineReport,
    journal_tokens_per_task,
    load_mining_world,
    mine_world_tasks,
    write_mined_task,
)
from worldspec.llm_frontend.synth_tasks import load_task_world
from worldspec.services.mining import MinedTask, mine_starts
from worldspec.services.model_client import LLMClient, LLMConfig
from worldspec.services.validation import check_paths

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "examples" / "corpus"
LIBRARY = CORPUS / "worlds" / "library_loans" / "public_library.world"
PERMITS = CORPUS / "worlds" / "building_permits" / "permit_office.world"

WRITER = "You write the user's request"
JUDGE = "You check a user's request"


def _codeword(goal_lines: list[str]) -> str:
    """A made-up word standing for a goal (letters only, so it looks like no key)."""
    digest = hashlib.sha256("\n".join(goal_lines).encode()).digest()
    return "".join(chr(97 + b % 26) for b in digest[:8])


def _listed(block: str) -> list[str]:
    """The ``- line`` items at the start of ``block``."""
    lines = []
    for line in block.splitlines():
        if not line.startswith("- "):
            break
        lines.append(line[2:])
    return lines


def _write(request: RecordedRequest, *, tell: bool = True, chatter: str = "",
           persona: bool = False) -> str:
    """The scripted writer: tells what it must and names the goal by its codeword (with
    ``persona``, the values go into ``known`` and a persona is written)."""
    user = request.messages[1]["content"]
    told = re.search(r"^Must tell: (.*)$", user, re.MULTILINE)
    values = [] if told is None or told.group(1) == "(nothing)" else \
        json.loads(f"[{told.group(1)}]")
    goal = user.split("The goal (what must have changed when the task is done):\n", 1)[1]
    word = _codeword(_listed(goal))
    said = f" I am {' and '.join(values)}." if values and tell else ""
    if persona:
        return json.dumps({"instruction": f"Please see to request {word}.{chatter}",
                           "persona": "A patient regular who answers briefly.",
                           "known": f"Request {word}.{said}", "unknown": "Any ids."})
    return json.dumps({"instruction": f"Please see to request {word}.{said}{chatter}"})


def _judge(request: RecordedRequest, *, honest: bool = True) -> str:
    """The scripted judge: the outcome whose codeword the request names (or another)."""
    user = request.last_user
    outcomes = [(part[0], _listed(part[3:])) for part in user.split("Outcome ")[1:]]
    named = next(letter for letter, lines in outcomes if _codeword(lines) in user)
    if honest:
        return json.dumps({"outcome": named})
    return json.dumps({"outcome": next(letter for letter, _ in outcomes if letter != named)})


def _responder(write: Callable[[RecordedRequest], str] = _write,
               judge: Callable[[RecordedRequest], str] = _judge
               ) -> Callable[[RecordedRequest], str]:
    def answer(request: RecordedRequest) -> str:
        if WRITER in request.system:
            return write(request)
        assert JUDGE in request.system
        return judge(request)

    return answer


def _run(config: LLMConfig, options: MineOptions) -> MineReport:
    world = load_task_world(LIBRARY)

    async def go() -> MineReport:
        async with LLMClient(config) as client:
            return await mine_world_tasks(client, world, options, concurrency=2)

    return asyncio.run(go())


def test_a_mined_task_is_written_validated_and_accepted(llm_server: ScriptedLLMServer,
                                                        llm_config: LLMConfig) -> None:
    llm_server.responder = _responder()
    report = _run(llm_config, MineOptions(count=2, runs=20))
    assert report.candidates > 10
    assert [o.accepted for o in report.outcomes] == [True, True], report.to_json()
    assert report.usage.requests == 4  # one instruction and one judgement each
    assert report.tokens_per_task == report.usage.total_tokens / 2 > 0
    for outcome in report.outcomes:
        assert outcome.text is not None and outcome.instruction in outcome.text
        assert outcome.difficulty["calls"] >= 1
    writes = [r for r in llm_server.chat_requests if WRITER in r.system]
    assert "Must tell:" in writes[0].last_user and "exists r in" not in writes[0].system
    judged = [r for r in llm_server.chat_requests if JUDGE in r.system]
    assert all(len(re.findall(r"^Outcome [A-Z]:", r.last_user, re.MULTILINE)) >= 2
               for r in judged)


def test_an_instruction_that_does_not_determine_the_goal_is_rejected(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = _responder(judge=lambda r: _judge(r, honest=False))
    report = _run(llm_config, MineOptions(count=2, runs=20))
    assert not report.accepted
    assert report.rejected == {"the instruction does not determine the goal": 2}
    assert report.tokens_per_task is None


def test_an_instruction_that_does_not_validate_gets_one_repair(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    """The first draft leaves out the names no read shows (WS624): the problems go back once,
    and the second draft, which tells them, is accepted."""
    replies: dict[str, int] = {}

    def forgetful(request: RecordedRequest) -> str:
        key = request.messages[1]["content"]
        replies[key] = replies.get(key, 0) + 1
        return _write(request, tell=replies[key] > 1)

    llm_server.responder = _responder(write=forgetful)
    report = _run(llm_config, MineOptions(count=3, runs=20))
    repaired = [r for r in llm_server.chat_requests
                if WRITER in r.system and "does not validate" in r.last_user]
    assert repaired and "never shown" in repaired[0].last_user
    assert all(o.accepted for o in report.outcomes), report.to_json()


def test_an_instruction_never_repaired_is_rejected(llm_server: ScriptedLLMServer,
                                                   llm_config: LLMConfig) -> None:
    llm_server.responder = _responder(write=lambda r: _write(r, tell=False))
    report = _run(llm_config, MineOptions(count=3, runs=20))
    assert report.rejected["the task does not validate after one repair"] >= 1


def test_a_conversational_mined_task_has_persona_known_and_unknown(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = _responder(write=lambda r: _write(r, persona=True))
    report = _run(llm_config, MineOptions(count=2, runs=20, conversational=True))
    assert [o.accepted for o in report.outcomes] == [True, True], report.to_json()
    for outcome in report.outcomes:
        assert outcome.text is not None
        assert all(f"\n  {word} " in outcome.text for word in ("persona", "known", "unknown"))
    writes = [r for r in llm_server.chat_requests if WRITER in r.system]
    assert all("conversational task" in r.system for r in writes)


def test_a_conversational_task_without_a_persona_is_repaired_once_then_rejected(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = _responder()
    report = _run(llm_config, MineOptions(count=1, runs=20, conversational=True))
    assert report.rejected == {"the task does not validate after one repair": 1}
    assert "persona" in report.outcomes[0].detail


def test_a_near_duplicate_instruction_is_dropped(llm_server: ScriptedLLMServer,
                                               llm_config: LLMConfig) -> None:
    """Two instructions of some seventy words that differ only in the goal's codeword and
    the names they tell: the second is a near-duplicate of the first."""
    chatter = (" I would be grateful if you could take care of all of it today because"
               " I am travelling tomorrow morning and will not be able to come back to the"
               " desk before next week at the earliest. My neighbour usually drives me here"
               " on Saturdays, but she is visiting her sister in another city, so every"
               " errand has to happen now while the weather stays pleasant and quiet, thank"
               " you so much for your patience with an old reader.")
    llm_server.responder = _responder(write=lambda r: _write(r, chatter=chatter))
    report = _run(llm_config, MineOptions(count=2, runs=20))
    reasons = [o.reason for o in report.outcomes]
    assert reasons.count("") == 1
    assert reasons.count("a near-duplicate of an accepted instruction") == 1
    llm_server.responder = _responder()
    different = _run(llm_config, MineOptions(count=2, runs=20))
    assert len(different.accepted) == 2


def test_synth_tasks_mine_command_writes_a_valid_tasks_file(
        llm_server: ScriptedLLMServer, tmp_path: Path, capsys: object) -> None:
    llm_server.responder = _responder()
    out = tmp_path / "mined.tasks.world"
    status = cli_main(["synth", "tasks", str(LIBRARY), "--mine", "-n", "2", "--mine-runs",
                       "20", "-o", str(out), "--base-url", llm_server.url, "--model", "m",
                       "--format", "json", "--compare-journal",
                       str(CORPUS / "journals" / "tasks.jsonl")])
    printed = capsys.readouterr()  # type: ignore[attr-defined]
    assert status == 0, printed.err
    summary = json.loads(printed.out)
    assert summary["accepted"] == 2 and summary["usage"]["requests"] == 4
    assert summary["written_tasks"]["tokens_per_task"] > summary["tokens_per_task"] > 0
    # the file imports the world by a path relative to it, and every task in it validates
    copied = tmp_path / "public_library.world"
    copied.write_text(LIBRARY.read_text(encoding="utf-8"), encoding="utf-8")
    text = out.read_text(encoding="utf-8")
    assert text.count("\ntask mined_") == 2
    out.write_text(re.sub(r'import "[^"]*"', 'import "public_library.world"', text),
                   encoding="utf-8")
    result = check_paths([out])
    assert result.ok, [d.message for d in result.errors[:3]]
    mined = [r for r in result.tasks if r.task.startswith("mined_")]
    assert len(mined) == 2 and all(r.valid for r in mined)


def test_mine_takes_one_world(tmp_path: Path, capsys: object) -> None:
    status = cli_main(["synth", "tasks", "--input", str(tmp_path / "x.jsonl"), "--mine"])
    assert status == 2
    assert "--mine works on one WORLD" in capsys.readouterr().err  # type: ignore[attr-defined]


def test_an_unreadable_journal_to_compare_is_a_usage_error(
        llm_server: ScriptedLLMServer, tmp_path: Path, capsys: object) -> None:
    broken = tmp_path / "journal.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    status = cli_main(["synth", "tasks", str(LIBRARY), "--mine", "--compare-journal",
                       str(broken), "--base-url", llm_server.url, "--model", "m"])
    printed = capsys.readouterr()  # type: ignore[attr-defined]
    assert status == 2 and "cannot read the journal" in printed.err
    assert "Traceback" not in printed.err + printed.out and not llm_server.chat_requests


def test_tokens_per_written_task_come_from_the_journal(tmp_path: Path) -> None:
    journal = tmp_path / "tasks.jsonl"
    journal.write_text("\n".join(json.dumps(r) for r in [
        {"status": "accepted", "usage": {"total_tokens": 1000}},
        {"status": "rejected", "usage": {"total_tokens": 500}},
        {"status": "accepted", "usage": {"total_tokens": 2000}}]) + "\n", encoding="utf-8")
    assert journal_tokens_per_task(journal) == (2, 1750.0)
    journal.write_text(json.dumps({"status": "rejected", "usage": {"total_tokens": 9}}) +
                       "\n[]\n", encoding="utf-8")
    assert journal_tokens_per_task(journal) is None
    corpus = journal_tokens_per_task(CORPUS / "journals" / "tasks.jsonl")
    assert corpus is not None and corpus[0] > 50 and corpus[1] > 1000


def test_synth_corpus_mines_tasks_beside_the_written_ones(
        llm_server: ScriptedLLMServer, tmp_path: Path, capsys: object) -> None:
    """``synth corpus --mined M``: each world gets M mined tasks in its tasks file, through
    validation and export like the written ones; a second run asks nothing again."""
    mined = _responder()

    def answer(request: RecordedRequest) -> str:
        if WRITER in request.system or JUDGE in request.system:
            return mined(request)
        return corpus_responder(request)

    llm_server.responder = answer
    domains = tmp_path / "domains.jsonl"
    domains.write_text("".join(json.dumps(d) + "\n" for d in [
        {"id": "warehouse", "description": "A crate counter for a warehouse, number 1."},
        {"id": "pantry", "description": "A jar counter for a pantry, number 2."}]),
        encoding="utf-8")
    out = tmp_path / "corpus"
    args = ["synth", "corpus", "--domains", str(domains), "-o", str(out), "-n", "1",
            "--conversational", "0", "--mined", "2", "--min-calls", "4",
            "--test-examples", "8", "--test-steps", "8", "--explore-examples", "12",
            "--explore-steps", "10", "--concurrency", "1", "--base-url", llm_server.url,
            "--model", "m", "--max-retries", "0"]
    assert cli_main(args) == 0, capsys.readouterr()  # type: ignore[attr-defined]
    index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    stage = index["stages"]["mined"]
    assert (stage["items"], stage["accepted"], stage["requests"]) == (4, 4, 8)
    for world in index["worlds"]:
        names = [t["task"] for t in world["tasks"]]
        assert len(names) == 4 and sum(n.startswith("mined_") for n in names) == 2
        assert world["validated"]
    assert index["options"]["mined_per_world"] == 2
    assert index["totals"]["tasks"] == 8
    validated = check_paths([out])
    assert validated.ok and all(t.valid for t in validated.tasks)
    asked = len(llm_server.chat_requests)
    assert cli_main(args) == 0
    assert len(llm_server.chat_requests) == asked
    assert json.loads((out / "corpus.json").read_text(encoding="utf-8")) == index


def test_a_judge_that_never_answers_in_json_rejects_the_task(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = _responder(judge=lambda r: "I think it is the second one.")
    report = _run(llm_config, MineOptions(count=1, runs=20))
    assert report.rejected == {"no usable reply": 1}
    assert "DeterminedChoice" in report.outcomes[0].detail


def test_an_unreachable_server_stops_the_run_without_a_traceback(
        tmp_path: Path, capsys: object) -> None:
    server = ScriptedLLMServer().start()
    url = server.url
    server.close()
    status = cli_main(["synth", "tasks", str(LIBRARY), "--mine", "-n", "1", "-o",
                       str(tmp_path / "out.world"), "--base-url", url, "--model", "m",
                       "--max-retries", "0"])
    printed = capsys.readouterr()  # type: ignore[attr-defined]
    assert status == 1 and "chat completion failed" in printed.err
    assert "Traceback" not in printed.err + printed.out
    assert not (tmp_path / "out.world").exists()


# ------------------------------------------------------------------ batches
def _batch_write(request: RecordedRequest, *, tell: bool | Callable[[str], bool] = True,
                 skip: str = "", persona: bool | None = None) -> str:
    """The scripted writer of a batch: each task's request names its goal's codeword and
    tells what it must (``tell`` may decide per task id); ``skip`` leaves one task out; a
    persona, known and unknown are written for each task its brief marks conversational
    (or, given ``persona``, for every task or none)."""
    user = request.messages[1]["content"]
    entries = []
    for ident, brief in re.findall(r"^Task (T\d+):\n(.*?)(?=^Task T\d+:|\Z)", user,
                                   re.MULTILINE | re.DOTALL):
        if ident == skip:
            continue
        told = re.search(r"^Must tell: (.*)$", brief, re.MULTILINE)
        values = [] if told is None or told.group(1) == "(nothing)" else \
            json.loads(f"[{told.group(1)}]")
        goal = brief.split("The goal (what must have changed when the task is done):\n", 1)[1]
        word = _codeword(_listed(goal))
        telling = tell(ident) if callable(tell) else tell
        said = f" I am {' and '.join(values)}." if values and telling else ""
        entry = {"id": ident, "instruction": f"Please see to request {word}.{said}"}
        talks = brief.startswith("Conversational:") if persona is None else persona
        if talks:
            entry = {"id": ident, "instruction": f"Please see to request {word}.",
                     "persona": "A patient regular who answers briefly.",
                     "known": f"Request {word}.{said}", "unknown": "Any ids."}
        entries.append(entry)
    return json.dumps({"tasks": entries})


def _batch_judge(request: RecordedRequest, *, wrong: str = "") -> str:
    """The scripted judge of a batch: for each request, the outcome its codeword names (for
    the request ``wrong``, another one)."""
    answers = []
    for part in request.last_user.split("Request ")[1:]:
        ident = part.split(":", 1)[0]
        outcomes = [(chunk[0], _listed(chunk[3:])) for chunk in part.split("Outcome ")[1:]]
        named = next(letter for letter, lines in outcomes if _codeword(lines) in part)
        if ident == wrong:
            named = next(letter for letter, _ in outcomes if letter != named)
        answers.append({"id": ident, "outcome": named})
    return json.dumps({"answers": answers})


def _batch_responder(write: Callable[[RecordedRequest], str] = _batch_write,
                     judge: Callable[[RecordedRequest], str] = _batch_judge
                     ) -> Callable[[RecordedRequest], str]:
    def answer(request: RecordedRequest) -> str:
        if WRITER in request.system:
            assert "Several tasks of the same world" in request.system
            return write(request)
        assert "users' requests" in request.system
        return judge(request)

    return answer


def test_a_batch_writes_and_checks_several_tasks_in_two_requests(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = _batch_responder()
    report = _run(llm_config, MineOptions(count=3, runs=20, batch=3))
    assert [o.accepted for o in report.outcomes] == [True, True, True], report.to_json()
    assert report.usage.requests == 2  # one request writes all three, one checks them
    assert sum(o.usage.total_tokens for o in report.outcomes) == report.usage.total_tokens
    writes = [r for r in llm_server.chat_requests if WRITER in r.system]
    assert len(writes) == 1 and writes[0].last_user.count("\nTask T") == 3
    assert writes[0].last_user.count("Tools:") == 1  # the world's summary once


def test_a_batch_task_that_does_not_validate_goes_back_alone_for_one_repair(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    """T2's first draft leaves out the name it must tell (WS624): T2 alone goes back for one
    repair, the others are not asked again, and all three are accepted."""
    drafts: list[str] = []

    def forgetful(request: RecordedRequest) -> str:
        drafts.append(request.last_user)
        return _batch_write(request, tell=lambda ident: ident != "T2" or len(drafts) > 1)

    llm_server.responder = _batch_responder(write=forgetful)
    report = _run(llm_config, MineOptions(count=3, runs=20, batch=3))
    first = llm_server.chat_requests[0].messages[1]["content"]
    second = re.search(r"^Task T2:\n(.*?)(?=^Task T3:)", first, re.MULTILINE | re.DOTALL)
    assert second is not None and "Must tell: (nothing)" not in second.group(1)
    repairs = [r for r in llm_server.chat_requests
               if WRITER in r.system and "do not validate" in r.last_user]
    assert len(repairs) == 1
    assert re.findall(r"^Task (T\d+):", repairs[0].last_user, re.MULTILINE) == ["T2"]
    assert "never shown" in repairs[0].last_user
    assert all(o.accepted for o in report.outcomes), report.to_json()
    assert report.usage.requests == 3  # the batch, T2's repair, the check


def test_a_batch_task_never_repaired_or_not_determined_is_rejected_alone(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = _batch_responder(judge=lambda r: _batch_judge(r, wrong="T1"))
    report = _run(llm_config, MineOptions(count=3, runs=20, batch=3))
    assert [o.accepted for o in report.outcomes] == [False, True, True], report.to_json()
    assert report.outcomes[0].reason == "the instruction does not determine the goal"
    llm_server.responder = _batch_responder(write=lambda r: _batch_write(r, skip="T3"))
    report = _run(llm_config, MineOptions(count=3, runs=20, batch=3))
    assert [o.accepted for o in report.outcomes] == [True, True, False], report.to_json()
    assert report.outcomes[2].reason == "no usable reply"


def test_the_last_mined_tasks_are_conversational(llm_server: ScriptedLLMServer,
                                                 llm_config: LLMConfig) -> None:
    llm_server.responder = _batch_responder()
    report = _run(llm_config, MineOptions(count=3, runs=20, batch=2, conversational_count=1))
    assert [o.conversational for o in report.outcomes] == [False, False, True]
    assert all(o.accepted for o in report.outcomes), report.to_json()
    last = report.outcomes[2].text
    assert last is not None and "\n  persona " in last
    assert "persona" not in (report.outcomes[0].text or "")
    assert report.usage.requests == 4  # two plain in one batch, one conversational alone


def test_bad_batch_options_are_usage_errors(tmp_path: Path, capsys: object) -> None:
    assert cli_main(["synth", "tasks", str(LIBRARY), "--mine", "--mine-batch", "0",
                     "--base-url", "http://127.0.0.1:9", "--model", "m"]) == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "--mine-batch must be at least 1" in err
    assert cli_main(["synth", "corpus", "--domains", str(tmp_path / "d.jsonl"), "-o",
                     str(tmp_path / "c"), "--mined", "2", "--mined-conversational", "3",
                     "--base-url", "http://127.0.0.1:9", "--model", "m"]) == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "--mined-conversational (3) cannot exceed --mined (2)" in err


def test_synth_corpus_mines_in_batches_with_conversational_tasks(
        llm_server: ScriptedLLMServer, tmp_path: Path, capsys: object) -> None:
    """``--mined 3 --mined-conversational 1 --mined-batch 3``: per world one request writes
    the two plain tasks and one the conversational one, and one request checks each group;
    the index counts the conversational mined task."""
    mined = _batch_responder()

    def answer(request: RecordedRequest) -> str:
        if WRITER in request.system or "users' requests" in request.system:
            return mined(request)
        return corpus_responder(request)

    llm_server.responder = answer
    domains = tmp_path / "domains.jsonl"
    domains.write_text(json.dumps(
        {"id": "warehouse", "description": "A crate counter for a warehouse, number 1."})
        + "\n", encoding="utf-8")
    out = tmp_path / "corpus"
    args = ["synth", "corpus", "--domains", str(domains), "-o", str(out), "-n", "1",
            "--conversational", "0", "--mined", "3", "--mined-conversational", "1",
            "--mined-batch", "3", "--min-calls", "4", "--test-examples", "8",
            "--test-steps", "8", "--explore-examples", "12", "--explore-steps", "10",
            "--concurrency", "1", "--base-url", llm_server.url, "--model", "m",
            "--max-retries", "0"]
    assert cli_main(args) == 0, capsys.readouterr()  # type: ignore[attr-defined]
    index = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    stage = index["stages"]["mined"]
    assert (stage["items"], stage["accepted"], stage["requests"]) == (3, 3, 4)
    assert index["options"]["mined_batch"] == 3
    assert index["options"]["mined_conversational"] == 1
    (world,) = index["worlds"]
    assert world["validated"] and world["conversational_tasks"] == 1
    assert check_paths([out]).ok


# ------------------------------------------------------------------ what a brief tells
def _briefs(request: RecordedRequest) -> dict[str, str]:
    return dict(re.findall(r"^Task (T\d+):\n(.*?)(?=^Task T\d+:|\Z)",
                           request.messages[1]["content"], re.MULTILINE | re.DOTALL))


def _section(brief: str, title: str) -> list[str]:
    """The ``- line`` items of the section of ``brief`` that starts with ``title``."""
    part = brief.partition(f"\n{title}")[2]
    return _listed(part.partition("\n")[2]) if part else []


def _run_world(config: LLMConfig, path: Path, options: MineOptions) -> MineReport:
    world = load_task_world(path)

    async def go() -> MineReport:
        async with LLMClient(config) as client:
            return await mine_world_tasks(client, world, options, concurrency=1)

    return asyncio.run(go())


def test_a_brief_names_the_signed_in_user_and_the_rows_referred_to(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    """In the permit office a clerk is signed in at the start and applications name their
    applicant and property: each brief lists the signed-in clerk by name, and every row a
    touched row refers to (and is not itself listed) by its name-like fields."""
    llm_server.responder = _batch_responder()
    _run_world(llm_config, PERMITS, MineOptions(count=4, runs=20, batch=4))
    request = next(r for r in llm_server.chat_requests if WRITER in r.system)
    _, world_class = load_mining_world(PERMITS)
    referred_seen = 0
    for brief in _briefs(request).values():
        session = _section(brief, "The session at the start")
        signed_in = next(line for line in session if line.startswith("current_staff = "))
        key = json.loads(signed_in.split(" = ", 1)[1].split(":", 1)[0])
        data = next(spec.data for spec in world_class.TASKS.values())
        staff = world_class(data=data).tables["staff"].rows[key].export()
        assert staff["name"] in signed_in and staff["email"] in signed_in
        touched = brief.partition("this task touches:\n")[2].partition("\n\n")[0]
        for line in _section(brief, "The rows they refer to"):
            key_text = line.split(" ", 2)[1]
            names = json.loads(line.split("): ", 1)[1])
            assert names[next(iter(names))] == json.loads(key_text)
            assert f'"{next(iter(names))}": {key_text}' not in touched  # not listed already
            assert "name" in names or "description" in names or "title" in names, line
            referred_seen += 1
        assert "Not conversational: write `instruction` only." in brief
    assert referred_seen


def test_a_brief_without_a_session_or_untouched_references_has_neither(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    """The library keeps no session state, and its mined tasks touch every row their rows
    refer to: no section is added for either."""
    llm_server.responder = _batch_responder()
    _run(llm_config, MineOptions(count=3, runs=20, batch=3))
    request = next(r for r in llm_server.chat_requests if WRITER in r.system)
    for brief in _briefs(request).values():
        assert "The session at the start" not in brief
        assert "The rows they refer to" not in brief


def test_each_value_to_tell_says_which_call_argument_it_is(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    """Under "Must tell" each value is listed with the tool and parameter of the reference
    solution's call that takes it; a task with nothing to tell lists none."""
    llm_server.responder = _batch_responder()
    report = _run(llm_config, MineOptions(count=4, runs=20, batch=4))
    request = next(r for r in llm_server.chat_requests if WRITER in r.system)
    model, world_class = load_mining_world(LIBRARY)
    candidates = {c.name: c for c in mine_starts(
        model, world_class, {n: s.data for n, s in world_class.TASKS.items()}, runs=20)}
    told_some = told_none = 0
    for (ident, brief), outcome in zip(_briefs(request).items(), report.outcomes, strict=True):
        task = candidates[outcome.candidate]
        listed = brief.partition("\nMust tell: ")[2].splitlines()[1:]
        uses = [re.fullmatch(r'- (".*"): the `(\w+)` argument of (\w+)', line)
                for line in listed if line.startswith("- ")]
        assert len(uses) == len(task.told), (ident, listed)
        for use in uses:
            assert use is not None
            value, param, tool = json.loads(use.group(1)), use.group(2), use.group(3)
            assert value in task.told
            assert any(name == tool and str(args.get(param)) == value
                       for name, args in task.solution)
        told_some += bool(task.told)
        told_none += not task.told
    assert told_some and told_none


def test_a_value_the_task_must_tell_is_not_counted_as_an_id(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    """A task that must tell a key (no tool shows it) plus two keys the writer names: the
    told key is data the user has, so the instruction names two ids and is accepted; the
    same instruction naming a third key it need not tell is over the limit of two."""
    model, world_class = load_mining_world(LIBRARY)
    candidates = mine_starts(model, world_class,
                             {n: s.data for n, s in world_class.TASKS.items()}, runs=20)
    start_keys = {str(k) for table in world_class(data=candidates[0].data).tables.values()
                  for k in table.rows}

    def keys_named(task: MinedTask) -> list[str]:
        return sorted({str(v) for _, args in task.solution for v in args.values()
                       if str(v) in start_keys and any(ch.isdigit() for ch in str(v))
                       and len(str(v)) >= 3})

    task = next(c for c in candidates if len(keys_named(c)) >= 3 and
                all(c.data == other.data for other in candidates if other.start == c.start))
    k1, k2, k3 = keys_named(task)[:3]
    others = [c for c in candidates if c.start == task.start and c is not task]
    world = load_task_world(LIBRARY)

    def write(request: RecordedRequest) -> str:
        reply = json.loads(_write(request))
        reply["instruction"] += f" It is about {k1}, {k2} and {k3}."
        return json.dumps(reply)

    def attempt(told: tuple[str, ...]) -> MinedOutcome:
        llm_server.responder = _responder(write=write)
        mined: MinedTask = dataclasses.replace(task, told=told)

        async def go() -> MinedOutcome:
            async with LLMClient(llm_config) as client:
                return await write_mined_task(client, world, world_class, model, mined, others,
                                              MineOptions(), random.Random(0))

        return asyncio.run(go())

    told_third = attempt((*task.told, k3))
    assert told_third.accepted, (told_third.reason, told_third.detail)
    not_told = attempt(task.told)
    assert not not_told.accepted
    assert "names 3 ids" in not_told.detail
    assert "a value the task must tell does not count" in not_told.detail
