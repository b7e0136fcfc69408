"""``worldspec port`` with the scripted model server: translations method by method with the
compiler in the loop, the differential test feeding differences back, bounded rounds, the
request journal and the batch journal (resumable)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer
from port_replies import (
    BROKEN_GET_ITEM,
    BUGGY_TAKE,
    GET_ITEM,
    LIBRARY_BOOKS_BY,
    LIBRARY_BORROW,
    RESTOCK,
    TAKE,
    port_responder,
)

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_source
from worldspec.port.compare import CompareOptions, Original
from worldspec.port.sandbox import Limits
from worldspec.port.skeleton import emit_skeleton, read_class
from worldspec.port.translate import PortOptions, PortOutcome, RequestJournal, port_class
from worldspec.services.model_client import LLMClient, LLMConfig

CLASSES = Path(__file__).resolve().parent / "port_classes"
INVENTORY = CLASSES / "inventory.py"
DATA = json.loads((CLASSES / "inventory.json").read_text(encoding="utf-8"))
CORRECT = {"get_item": GET_ITEM, "take": TAKE, "restock": RESTOCK}
FAST = PortOptions(max_rounds=2, compare=CompareOptions(examples=60, steps=12,
                                                         limits=Limits(call_timeout=5.0)))


def run_port(config: LLMConfig, options: PortOptions = FAST,
             journal: Path | None = None) -> PortOutcome:
    info = read_class(INVENTORY.read_text(encoding="utf-8"))
    skeleton = emit_skeleton(info, DATA, source_name=INVENTORY.name)

    async def go() -> PortOutcome:
        async with LLMClient(config) as client:
            return await port_class(RequestJournal(client, journal), skeleton,
                                    Original(INVENTORY, "InventoryEnv", DATA), options)

    return asyncio.run(go())


def test_a_correct_translation_is_accepted_at_once(llm_server: ScriptedLLMServer,
                                                   llm_config: LLMConfig) -> None:
    seen: list[str] = []
    llm_server.responder = port_responder(CORRECT, seen=seen)
    outcome = run_port(llm_config)
    assert outcome.accepted and outcome.rounds == 0, outcome.to_json()
    assert seen == ["get_item", "take", "restock"]
    assert outcome.tools_ported == ["get_item", "take", "restock"]
    assert outcome.report is not None and outcome.report.agrees and outcome.report.calls > 100
    assert outcome.text is not None and check_source(outcome.text, "x.world").ok
    assert outcome.usage.requests == 3
    first = llm_server.chat_requests[0]
    assert "class InventoryEnv" in first.text and "Port the method `get_item`" in first.text
    assert "fail \"not ported yet: get_item\"" in first.text  # the skeleton went along
    # the long stable part first: consecutive requests share almost all of their text
    second = "".join(m["content"] for m in llm_server.chat_requests[1].messages)
    first_text = "".join(m["content"] for m in first.messages)
    common = next(i for i, (a, b) in enumerate(zip(first_text, second, strict=False)) if a != b)
    assert common >= 0.95 * len(second), (common, len(second))


def test_a_planted_difference_is_found_shrunk_and_fed_back(llm_server: ScriptedLLMServer,
                                                           llm_config: LLMConfig) -> None:
    seen: list[str] = []
    llm_server.responder = port_responder({**CORRECT, "take": BUGGY_TAKE}, repairs=[TAKE],
                                          seen=seen)
    outcome = run_port(llm_config)
    assert outcome.accepted and outcome.rounds == 1, outcome.to_json()
    assert seen == ["get_item", "take", "restock", "repair"]
    feedback = llm_server.chat_requests[-1].last_user
    # the last JSON block (the first is the initial data, in the stable part)
    sent = json.loads(feedback.rsplit("```json\n", 1)[1].split("\n```", 1)[0])
    assert sent[0]["kind"] == "result" and sent[0]["tool"] == "take"
    calls = sent[0]["calls"]
    assert 1 <= len(calls) <= 3 and calls[-1]["tool"] == "take"
    assert calls[-1]["original"]["success"] is True and calls[-1]["world"]["success"] is False
    assert "if item.stock < count" in (outcome.text or "")


def test_differences_that_stay_reject_the_port_with_them(llm_server: ScriptedLLMServer,
                                                         llm_config: LLMConfig) -> None:
    llm_server.responder = port_responder({**CORRECT, "take": BUGGY_TAKE},
                                          repairs=[BUGGY_TAKE, BUGGY_TAKE])
    outcome = run_port(llm_config)
    assert not outcome.accepted
    assert outcome.reason == "differences remain after 2 repair rounds"
    assert outcome.report is not None and outcome.report.differences[0].tool == "take"
    assert len([h for h in outcome.history if h["step"] == "compare"]) == 3
    assert [p["tool"] for p in outcome.persisting] == ["take"]  # unchanged through 2 rounds


def test_a_difference_that_persists_through_two_repairs_stops_the_repairs(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    seen: list[str] = []
    llm_server.responder = port_responder({**CORRECT, "take": BUGGY_TAKE},
                                          repairs=[BUGGY_TAKE] * 4, seen=seen)
    outcome = run_port(llm_config, PortOptions(max_rounds=4, compare=FAST.compare))
    assert not outcome.accepted  # still rejected: the sequences do not agree
    assert outcome.reason == ("1 difference(s) persisted unchanged through 2 repair rounds; "
                              "stopped repairing after 2 of 4")
    repairs = [h for h in outcome.history if h["step"].startswith("repair round")]
    assert [h["step"] for h in repairs] == ["repair round 1", "repair round 2"]  # not 4
    # the second repair request is the first one again (same world, same difference): the
    # request journal answered it, so the server saw one
    assert seen.count("repair") == 1
    assert len([h for h in outcome.history if h["step"] == "compare"]) == 3
    (persisting,) = outcome.to_json()["persisting"]
    assert persisting["kind"] == "result" and persisting["tool"] == "take"
    assert persisting["repair_rounds"] == 2
    assert outcome.detail.startswith("result in take: the original returned")
    repair = llm_server.chat_requests[-1].last_user
    assert "This request starts a new conversation" in repair
    assert "The current text of `take`" in repair and "if item.stock <= count" in repair


def test_a_translation_that_never_checks_clean_is_rejected_with_the_diagnostics(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    llm_server.responder = port_responder({**CORRECT, "get_item": BROKEN_GET_ITEM})
    outcome = run_port(llm_config, PortOptions(max_rounds=1, compare=FAST.compare))
    assert not outcome.accepted
    assert outcome.reason == "compile errors remain in get_item after 1 repair rounds"
    assert outcome.diagnostics and outcome.diagnostics[0]["severity"] == "error"
    assert len(llm_server.chat_requests) == 2  # the draft and one repair, then it stops
    repair = llm_server.chat_requests[1].last_user
    assert "the compiler rejects the world" in repair and '"code": "WS' in repair
    assert outcome.tools_ported == [] and outcome.report is None


def test_the_request_journal_answers_a_rerun(llm_server: ScriptedLLMServer,
                                             llm_config: LLMConfig, tmp_path: Path) -> None:
    journal = tmp_path / "requests.jsonl"
    llm_server.responder = port_responder(CORRECT)
    assert run_port(llm_config, journal=journal).accepted
    lines = journal.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and all(json.loads(x)["text"] for x in lines)
    with journal.open("a", encoding="utf-8") as handle:
        handle.write('{"key": "torn')  # a kill mid-write
    again = run_port(llm_config, journal=journal)
    assert again.accepted and len(llm_server.chat_requests) == 3  # nothing asked twice


def test_port_command_writes_only_an_accepted_world(llm_server: ScriptedLLMServer,
                                                    tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = port_responder(CORRECT)
    out = tmp_path / "inventory.world"
    argv = ["port", str(INVENTORY), "--init-data", str(CLASSES / "inventory.json"), "-o",
            str(out), "--base-url", llm_server.url, "--model", "m", "--examples", "40",
            "--confirm", "100", "--progress", "always"]
    assert cli_main(argv) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "port inventory.py:InventoryEnv: translate take (2/3)" in captured.err
    assert "port inventory.py:InventoryEnv: compare, round 0" in captured.err
    assert "InventoryEnv: ported: 3 tool(s) ported" in printed and "0 difference(s) left" in printed
    assert check_source(out.read_text(encoding="utf-8"), str(out)).ok
    assert (tmp_path / "inventory.requests.jsonl").is_file()

    rejected = tmp_path / "rejected.world"
    llm_server.responder = port_responder({**CORRECT, "get_item": BROKEN_GET_ITEM})
    argv = ["port", str(INVENTORY), "--init-data", str(CLASSES / "inventory.json"), "-o",
            str(rejected), "--base-url", llm_server.url, "--model", "m", "--max-rounds", "0",
            "--format", "json"]
    assert cli_main(argv) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["rejected"] == 1
    assert summary["items_detail"][0]["reason"] == \
        "compile errors remain in get_item after 0 repair rounds"
    (detail,) = summary["classes"]
    assert detail["label"] == "inventory.py:InventoryEnv" and detail["diagnostics"]
    assert detail["tools_ported"] == [] and detail["differences"] == []
    # the last world that checked clean (the skeleton here) is kept, marked REJECTED
    kept = rejected.read_text(encoding="utf-8")
    assert kept.startswith("# REJECTED by `worldspec port`: compile errors remain in get_item "
                           "after 0 repair rounds; 0 difference(s) remain (see "
                           "rejected.port.json).")
    assert check_source(kept, str(rejected)).ok and detail["rejected_world"] == str(rejected)
    report = json.loads((tmp_path / "rejected.port.json").read_text(encoding="utf-8"))
    assert report["status"] == "rejected" and report["diagnostics"][0]["code"].startswith("WS")


def test_a_rejected_port_writes_its_last_world_and_the_differences_left(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = port_responder({**CORRECT, "take": BUGGY_TAKE},
                                          repairs=[BUGGY_TAKE] * 4)
    out = tmp_path / "inventory.world"
    argv = ["port", str(INVENTORY), "--init-data", str(CLASSES / "inventory.json"), "-o",
            str(out), "--base-url", llm_server.url, "--model", "m", "--examples", "40",
            "--max-rounds", "1"]
    assert cli_main(argv) == 1
    printed = capsys.readouterr().out
    kept = out.read_text(encoding="utf-8")
    first, second = kept.splitlines()[:2]
    assert first == ("# REJECTED by `worldspec port`: differences remain after 1 repair "
                     "rounds; 1 difference(s) remain (see inventory.port.json).")
    assert second.startswith("# This is the last world that checked clean")
    assert "if item.stock <= count" in kept and check_source(kept, str(out)).ok
    report = json.loads((tmp_path / "inventory.port.json").read_text(encoding="utf-8"))
    (difference,) = report["differences"]
    assert difference["kind"] == "result" and difference["tool"] == "take"
    calls = difference["calls"]  # the shrunk sequence, with both sides' answers
    assert 1 <= len(calls) <= 3 and calls[-1]["tool"] == "take"
    assert calls[-1]["original"]["success"] is True and calls[-1]["world"]["success"] is False
    assert f"the last world, marked REJECTED, in {out}" in printed
    assert "last draft and its problems kept in" in printed


def test_a_class_whose_state_is_derived_on_load_is_ported_with_an_on_load_block(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    library = CLASSES / "library.py"
    data = json.loads((CLASSES / "library.json").read_text(encoding="utf-8"))
    info = read_class(library.read_text(encoding="utf-8"), "LibraryEnv", library.name)
    skeleton = emit_skeleton(info, data, source_name=library.name)
    llm_server.responder = port_responder({"borrow": LIBRARY_BORROW,
                                           "books_by": LIBRARY_BOOKS_BY})

    async def go() -> PortOutcome:
        async with LLMClient(llm_config) as client:
            return await port_class(client, skeleton, Original(library, "LibraryEnv", data),
                                    FAST)

    outcome = asyncio.run(go())
    assert outcome.accepted and outcome.rounds == 0, outcome.to_json()
    assert outcome.method_rounds == {"borrow": 0, "books_by": 0}  # spliced as they came
    text = outcome.text or ""
    assert "on load {" in text and "private shelf: list[json] = []" in text
    first = llm_server.chat_requests[0].text
    assert '"shelf": [{"id": "b1"' in first  # the initial data went along


def test_splice_takes_consts_an_on_load_block_and_private_state() -> None:
    from worldspec.port.translate import splice

    reply = ('const STEP = 2\n'
             'state {\n  private raw: list[int] = []\n  n: int = 0\n}\n'
             'on load {\n  state.n = len(raw)\n}\n'
             'tool bump() -> json "Add one." {\n  n += STEP\n  return {"n": n}\n}\n')
    text = splice(SMALL, reply, tool="bump")
    assert check_source(text, "w.world").ok, text
    assert text.index("const STEP") < text.index("on load") < text.index("tool bump")
    again = splice(text, 'const STEP = 3\non load {\n  state.n = 1 + len(raw)\n}\n'
                         'tool bump() -> json "Add one." {\n  return {"n": n}\n}\n',
                   tool="bump")
    assert again.count("on load") == 1 and again.count("const STEP") == 1
    assert "const STEP = 3" in again and "1 + len(raw)" in again
    assert check_source(again, "w.world").ok, again


def test_the_report_shows_prompt_cached_and_completion_tokens_and_a_rerun_the_journals(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    answer = port_responder(CORRECT)

    def respond(request: RecordedRequest) -> Reply:
        return Reply(answer(request), prompt_tokens=1000, completion_tokens=50,
                     cached_tokens=800)

    llm_server.responder = respond
    out = tmp_path / "inventory.world"
    argv = ["port", str(INVENTORY), "--init-data", str(CLASSES / "inventory.json"), "-o",
            str(out), "--base-url", llm_server.url, "--model", "m", "--examples", "30"]
    assert cli_main(argv) == 0
    printed = capsys.readouterr().out
    assert "3,150 tokens (prompt 3,000, cached 2,400, completion 150)" in printed
    assert "tokens: 3,150 (prompt 3,000, cached 2,400, completion 150) in 3 request(s), " \
        "0 retried; this run: 3,150" in printed
    asked = len(llm_server.chat_requests)
    out.unlink()  # the same port again: every answer comes from the request journal
    assert cli_main([*argv, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert len(llm_server.chat_requests) == asked
    usage = summary["classes"][0]["usage"]
    assert (usage["prompt_tokens"], usage["cached_tokens"], usage["completion_tokens"]) == \
        (3000, 2400, 150)
    assert usage["replayed_requests"] == 3 and usage["replayed_tokens"] == 3150
    assert summary["usage"]["total_tokens"] == 3150
    assert summary["run_usage"]["total_tokens"] - summary["run_usage"]["replayed_tokens"] == 0


def test_port_batch_is_resumable(llm_server: ScriptedLLMServer, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "classes"
    folder.mkdir()
    shutil.copy(INVENTORY, folder / "inventory.py")
    shutil.copy(CLASSES / "inventory.json", folder / "inventory.json")
    (folder / "other.py").write_text(INVENTORY.read_text(encoding="utf-8").replace(
        "class InventoryEnv", "class StoreEnv"), encoding="utf-8")
    shutil.copy(CLASSES / "inventory.json", folder / "StoreEnv.json")
    llm_server.responder = port_responder(CORRECT)
    argv = ["port", "--batch", str(folder), "--base-url", llm_server.url, "--model", "m",
            "--examples", "30", "--confirm", "50", "--format", "json"]
    assert cli_main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["items"] == 2 and summary["accepted"] == 2
    assert [c["compare"]["confirmed"] for c in summary["classes"]] == [50, 50]
    outputs = sorted(Path(item["output"]).name.split("-")[0]
                     for item in summary["items_detail"])
    assert outputs == ["inventoryenv", "storeenv"]
    assert (folder / "ported" / "journal.jsonl").is_file()
    asked = len(llm_server.chat_requests)
    assert asked == 6
    assert cli_main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["resumed"] == 2 and again["accepted"] == 2
    assert len(llm_server.chat_requests) == asked  # finished classes are not asked again


def test_port_batch_of_a_folder_without_classes(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["port", "--batch", str(tmp_path), "--model", "m",
                     "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "no classes found" in capsys.readouterr().err


SMALL = '''world W "w"

config { results: bfcl }

state {
  n: int = 0
}

# returns {"n"}
tool bump() -> json
  "Add one."
{
  fail "not ported yet: bump"
}
'''


def test_splice_replaces_by_name_and_inserts_helpers_before_the_tools() -> None:
    from worldspec.port.translate import splice

    reply = ('fn twice(x: int) -> int { return x * 2 }\n'
             'config { results: bfcl  seed: 7 }\n'
             'tool bump() -> json "Add one." {\n  n += 1\n  return {"n": twice(n)}\n}\n')
    text = splice(SMALL, reply, tool="bump")
    assert check_source(text, "w.world").ok
    assert "not ported yet" not in text and "seed: 7" in text
    assert text.index("fn twice") < text.index("# returns") < text.index("tool bump")


@pytest.mark.parametrize(("reply", "message"), [
    ('world X "x"\ntool bump() -> json "d" { return {} }\n', "leave out: world"),
    ('tool other() -> json "d" { return {} }\n', "holds no `tool bump`"),
    ('tool bump( -> json\n', "syntax errors"),
])
def test_splice_refuses_what_it_cannot_use(reply: str, message: str) -> None:
    from worldspec.port.translate import SpliceError, splice

    with pytest.raises(SpliceError, match=message):
        splice(SMALL, reply, tool="bump")
