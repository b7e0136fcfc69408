"""``worldspec port`` with the scripted model server: translations method by method with the
compiler in the loop, the differential test feeding differences back, bounded rounds, the
request journal and the batch journal (resumable)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from port_replies import BROKEN_GET_ITEM, BUGGY_TAKE, GET_ITEM, RESTOCK, TAKE, port_responder

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_source
from worldspec.llm_frontend.client import LLMClient, LLMConfig
from worldspec.port.compare import CompareOptions, Original
from worldspec.port.sandbox import Limits
from worldspec.port.skeleton import emit_skeleton, read_class
from worldspec.port.translate import PortOptions, PortOutcome, RequestJournal, port_class

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


def test_a_planted_difference_is_found_shrunk_and_fed_back(llm_server: ScriptedLLMServer,
                                                           llm_config: LLMConfig) -> None:
    seen: list[str] = []
    llm_server.responder = port_responder({**CORRECT, "take": BUGGY_TAKE}, repairs=[TAKE],
                                          seen=seen)
    outcome = run_port(llm_config)
    assert outcome.accepted and outcome.rounds == 1, outcome.to_json()
    assert seen == ["get_item", "take", "restock", "repair"]
    feedback = llm_server.chat_requests[-1].last_user
    sent = json.loads(feedback.split("```json\n", 1)[1].split("\n```", 1)[0])
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
    assert summary["rejected"] == 1 and not rejected.exists()
    assert summary["items_detail"][0]["reason"] == \
        "compile errors remain in get_item after 0 repair rounds"
    (detail,) = summary["classes"]
    assert detail["label"] == "inventory.py:InventoryEnv" and detail["diagnostics"]
    assert detail["tools_ported"] == [] and detail["differences"] == []


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
