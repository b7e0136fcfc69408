"""Any text a model can send never crashes a batch, and is kept as it was sent.

A model's answer may hold lone surrogates (``"\\ud800"``: valid JSON, valid UTF-8 on the wire
as an escape, but not Unicode) and control characters, in its content, a tool name or the
argument text. ``worldspec rollout`` once exited 3 on the first one (``UnicodeEncodeError``
writing the journal) and every rerun crashed again. Here a scripted model sends such text in a
real batch (the CLI in a child process under a timeout and a memory limit, the model a scripted
OpenAI-compatible server on loopback); the batch finishes, resumes without redoing anything,
and the journal, the SFT export, the HTML report and ``run --calls`` all give the text back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.rollout.records import json_line, read_records
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_world

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"

#: what the odd answer holds: lone surrogates of both halves, NUL, ESC and BEL
ODD_CONTENT = "Working on it \ud800 \udfff\x00\x1b[31m\x07"
ODD_TOOL = "list_conversations\ud800"
ODD_ARGUMENTS = '{"\udc00": "\x00\x1b"}'  # the raw surrogate is escaped on the wire
ODD_FINAL = "Done \ud83d, everything is taken care of."


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def worldspec_child(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -m worldspec ARGS`` from this checkout under a timeout and a memory limit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORLDSPEC_CACHE": str(cwd / "cache"),
           "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "worldspec", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, errors="replace", timeout=180,
                          preexec_fn=_limit_memory, check=False)


@pytest.fixture(scope="module")
def world() -> type[Episode]:
    return load_world(PACKAGE)


def odd_agent(world: type[Episode]) -> Any:
    """An agent that plays each task's reference solution; on ``tidy_archive`` its first
    answer also carries odd text in its content, a tool name and an argument text."""
    by_text = {spec.instruction.strip(): name for name, spec in world.TASKS.items()}

    def respond(request: RecordedRequest) -> Reply | str:
        first = next(m["content"] for m in request.messages if m.get("role") == "user")
        task = by_text[first]
        assistant_turns = sum(1 for m in request.messages if m.get("role") == "assistant")
        odd = task == "tidy_archive"
        plan = [(n, json.dumps(a)) for n, a in world.TASKS[task].solution]
        if odd and assistant_turns == 0:
            return Reply(content=ODD_CONTENT,
                         tool_calls=[{"name": ODD_TOOL, "arguments": "{}"},
                                     {"name": "list_conversations",
                                      "arguments": ODD_ARGUMENTS}])
        done = assistant_turns - (1 if odd else 0)
        if done >= len(plan):
            return ODD_FINAL if odd else "Done."
        name, arguments = plan[done]
        return Reply(tool_calls=[{"name": name, "arguments": arguments}])

    return respond


def _no_raw_surrogate(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_a_batch_with_odd_model_text_finishes_resumes_and_reads_back(
        world: type[Episode], llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = odd_agent(world)
    out = tmp_path / "runs"
    args = ["rollout", str(PACKAGE), "--task", "tidy_archive", "--task", "reply_to_priya",
            "-n", "2", "--base-url", llm_server.url, "--model", "scripted-model", "-o",
            str(out), "--progress", "never", "--concurrency", "2"]
    first = worldspec_child(*args, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "internal error" not in first.stderr

    journal = out / "rollouts.jsonl"
    journal.read_bytes().decode("utf-8")  # strict: every line is valid UTF-8
    records = list(read_records(out, finished_only=False))
    assert len(records) == 4 and all(r["status"] == "finished" for r in records)
    odd = [r for r in records if r["task"] == "tidy_archive"]
    for record in odd:
        assistant = [m for m in record["messages"] if m["role"] == "assistant"]
        assert assistant[0]["content"] == ODD_CONTENT
        assert assistant[-1]["content"] == ODD_FINAL
        calls = assistant[0]["tool_calls"]
        assert [c["function"]["name"] for c in calls] == [ODD_TOOL, "list_conversations"]
        assert calls[1]["function"]["arguments"] == ODD_ARGUMENTS
        steps = record["steps"]
        assert steps[0]["name"] == ODD_TOOL and steps[0]["failed"]
        assert steps[0]["result"]["error"] == 'Unknown tool "list_conversations\\ud800".'
        assert all(_no_raw_surrogate(s["result"]) for s in steps)
        assert record["reward"] == 1.0  # the odd calls failed and changed nothing
    # what went back to the model carried U+FFFD where the surrogates were
    echoed = [m["content"] for r in llm_server.chat_requests for m in r.messages
              if m.get("role") == "assistant" and (m.get("content") or "").startswith("Working")]
    assert echoed and all(e == ODD_CONTENT.replace("\ud800", "\ufffd")
                          .replace("\udfff", "\ufffd") for e in echoed)

    asked = len(llm_server.chat_requests)
    again = worldspec_child(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(llm_server.chat_requests) == asked  # resumed: nothing redone
    assert list(read_records(out, finished_only=False)) == records

    rows_file = tmp_path / "sft.jsonl"
    exported = worldspec_child("export", "--trajectories", str(out), "-o", str(rows_file),
                               cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in
            rows_file.read_bytes().decode("utf-8").splitlines()]
    contents = [m["content"] for row in rows for m in row["messages"]]
    assert contents.count(ODD_CONTENT) == 2 and contents.count(ODD_FINAL) == 2

    page = tmp_path / "report.html"
    viewed = worldspec_child("view", str(out), "-o", str(page), cwd=tmp_path)
    assert viewed.returncode == 0, viewed.stderr
    assert "Working on it \\ud800 \\udfff" in page.read_bytes().decode("utf-8")

    one = tmp_path / "one.json"
    one.write_text(json_line(odd[0]) + "\n", encoding="utf-8")
    replay = worldspec_child("run", str(ROOT / "examples" / "messaging"), "--task",
                             "tidy_archive", "--calls", str(one), "--format", "json",
                             cwd=tmp_path)
    assert replay.returncode == 0, replay.stderr
    replayed = json.loads(replay.stdout)
    assert [c["name"] for c in replayed["calls"]] == [s["name"] for s in odd[0]["steps"]]
    assert [c["result"] for c in replayed["calls"]] == [s["result"] for s in odd[0]["steps"]]


@pytest.mark.parametrize("value", [
    "\ud800", "a\udfffb", "caf\u00e9 \U0001f600", "\x00\x1b[2J", {"k\ud800": ["\udc00"]}])
def test_json_lines_are_utf8_and_read_back_as_sent(value: Any) -> None:
    line = json_line({"content": value})
    line.encode("utf-8")
    assert json.loads(line) == {"content": value}
    assert "\n" not in line


def test_an_unexpected_argument_named_by_a_surrogate_is_escaped_in_the_result() -> None:
    world = load_world(ROOT / "generated" / "message_api")  # config { arguments: python }
    odd = world().call("list_users", {"\ud800": 1})
    assert odd == {"error": "MessageAPI.list_users() got an unexpected keyword argument "
                            "'\\ud800'"}
    plain = world().call("list_users", {"caf\u00e9": 1})
    assert plain == {"error": "MessageAPI.list_users() got an unexpected keyword argument "
                              "'caf\u00e9'"}
    unknown = world().call("list_users\udfff", {})
    assert unknown == {"error": 'Unknown tool "list_users\\udfff".'}
