"""``worldspec view``: one self-contained HTML page, hostile text escaped, checked in a real
headless browser.

The browser test runs Debian's ``chromium`` (``apt-get install -y chromium``); it skips when
chromium is absent, except under ``CI=true`` where it must run. Chromium runs under a
timeout, with a throwaway profile and every background service off, on a ``file://`` page
(the page itself forbids any network access through its Content-Security-Policy).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main
from worldspec.rollout.prompts import STOP_MARKER
from worldspec.rollout.records import FORMAT, Journal, read_records
from worldspec.rollout.summary import BatchSummary, Run, summarise
from worldspec.rollout.view import render_report
from worldspec.services.loading import load_world

HOSTILE = ('</pre></li></ol></details><script>document.title="pwned"</script>'
           '<img src=x onerror="document.title=\'pwned\'">"\'&')
IN_CI = os.environ.get("CI", "").lower() == "true"
ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"
TASK = "reply_to_priya"


def record(task: str, sample: int, reward: float, *, hostile: bool = False,
           status: str = "finished") -> dict[str, Any]:
    text = HOSTILE if hostile else "All done."
    return {
        "format": FORMAT, "key": f"{task}-{sample}", "status": status, "world": "W",
        "world_sha256": "0" * 64, "task": task, "sample": sample, "seed": 1,
        "reward": reward, "checks_reward": reward, "termination": "answered",
        "error": None if status == "finished" else "chat completion failed: status 500",
        "agent_messages": 2,
        "messages": [
            {"role": "system", "content": "You operate W."},
            {"role": "user", "content": "Archive <b>it</b>"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "archive", "arguments": json.dumps({"x": HOSTILE})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": HOSTILE})},
            {"role": "assistant", "content": text}],
        "steps": [{"index": 0, "message": 1, "call_id": "c1", "name": "archive",
                   "arguments": "{}", "result": {"ok": True}, "failed": reward < 1,
                   "diff": [{"path": 'chats["C1"].archived', "old": False, "new": HOSTILE}],
                   "state_hash": "h", "seconds": 0.0}],
        "checks": [{"name": "archived", "passed": reward >= 1, "status":
                    "passed" if reward >= 1 else "failed", "weight": 1.0,
                    "message": "" if reward >= 1 else HOSTILE,
                    **({} if reward >= 1 else {"detail": {
                        "kind": "compare", "expression": 'chats["C1"].archived == true',
                        "op": "==", "left": HOSTILE, "right": True}})},
                   {"name": "read", "passed": True, "status": "passed", "weight": 1.0,
                    "message": ""}],
        "frame": {"ok": reward >= 1, "violations": [] if reward >= 1 else ['chats["C2"]']},
        "usage": {"total_tokens": 30},
    }


def records() -> list[dict[str, Any]]:
    return [record("archive", 0, 1.0), record("archive", 1, 0.0, hostile=True),
            record("reply", 0, 0.5), record("reply", 1, 0.0, status="error")]


def test_every_piece_of_record_text_is_escaped() -> None:
    page = render_report(records(), title="<runs>")
    assert "<script>document.title" not in page and "<img" not in page
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # the page's own script, nothing else
    assert "Archive &lt;b&gt;it&lt;/b&gt;" in page and "&lt;runs&gt;" in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "default-src 'none'" in page
    assert page.count('<details class="rollout"') == 4
    assert page.count("<svg") == 2  # one reward distribution per task


def test_view_command_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    journal = Journal.open(tmp_path / "runs" / "rollouts.jsonl")
    for r in records():
        journal.append(r)
    assert main(["view", str(tmp_path / "runs"), "-o", str(tmp_path / "report.html")]) == 0
    assert "wrote 4 rollout(s)" in capsys.readouterr().out
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "x.jsonl").write_text("", encoding="utf-8")
    assert main(["view", str(tmp_path / "empty")]) == 2
    assert "no rollout records" in capsys.readouterr().err


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (apt-get install -y chromium)"
        pytest.fail(message) if IN_CI else pytest.skip(message)
    return found


def _dump_dom(browser: str, page: Path, profile: Path) -> str:
    done = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--virtual-time-budget=2000", "--dump-dom",
         page.as_uri() + "#rollout-1"],
        capture_output=True, text=True, timeout=90, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_real_browser_opens_a_rollout_and_finds_its_checks(tmp_path: Path) -> None:
    browser = _chromium()
    page = tmp_path / "report.html"
    page.write_text(render_report(records()), encoding="utf-8")
    dom = _dump_dom(browser, page, tmp_path / "profile")
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None
    # the page's script opened the rollout named in the URL and counted its checks
    assert 'data-opened="rollout-1"' in body.group(0)
    assert 'data-checks="2"' in body.group(0)
    opened = re.search(r'<details class="rollout" id="rollout-1"[^>]*>', dom)
    assert opened is not None and " open" in opened.group(0)
    closed = re.search(r'<details class="rollout" id="rollout-0"[^>]*>', dom)
    assert closed is not None and " open" not in closed.group(0)
    section = dom[opened.start():dom.index("</details>", opened.start())]
    assert 'data-check="archived" data-status="failed"' in section
    assert 'data-check="read" data-status="passed"' in section
    assert "frame broken" in section
    # the failed check shows what it compared, the passed one nothing more
    assert section.count('<div class="detail">') == 1
    assert 'compared chats["C1"].archived == true: left' in section.replace("&quot;", '"')
    # the hostile reply stayed text: no injected element ran or exists
    assert "<title>Rollouts" in dom and "pwned</title>" not in dom
    assert "<img" not in dom and dom.count("<script>") == 1


# ------------------------------------------- real batches: two settings, two models
def _responder(instruction: str, solution: list[tuple[str, Any]]
               ) -> Callable[[RecordedRequest], Reply | str]:
    """``model-a`` plays the reference solution, one call a message; ``model-b`` answers
    at once and does nothing; a request without tools is the simulated user, who states
    the instruction and stops after the agent's first answer."""

    def respond(request: RecordedRequest) -> Reply | str:
        if not request.body.get("tools"):
            said = sum(1 for m in request.messages if m.get("role") == "user")
            return instruction if said == 1 else f"Thank you.\n{STOP_MARKER}"
        done = sum(1 for m in request.messages if m.get("role") == "tool")
        if request.body["model"] == "model-b" or done >= len(solution):
            return "Done: your message is sent."
        name, arguments = solution[done]
        return Reply(tool_calls=[{"name": name, "arguments": json.dumps(arguments)}],
                     prompt_tokens=100 + done, completion_tokens=9)

    return respond


def _rollout(server: ScriptedLLMServer, runs: Path, model: str, *extra: str) -> None:
    assert main(["rollout", str(PACKAGE), "--task", TASK, "-n", "2", "--base-url", server.url,
                 "--model", model, "-o", str(runs), "--progress", "never", *extra]) == 0


@pytest.fixture
def mixed_runs(llm_server: ScriptedLLMServer, tmp_path: Path,
               capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    """One journal: the task one-shot and in conversation with model-a, one-shot with
    model-b; two samples each."""
    world = load_world(PACKAGE)
    spec = world.TASKS[TASK]
    llm_server.responder = _responder(spec.instruction.strip(),
                                      [(n, dict(a)) for n, a in spec.solution])
    runs = tmp_path / "runs"
    _rollout(llm_server, runs, "model-a")
    _rollout(llm_server, runs, "model-a", "--conversational", "--user-model", "user-m")
    _rollout(llm_server, runs, "model-b")
    capsys.readouterr()
    return list(read_records(runs))


def test_settings_and_models_are_separate_groups(mixed_runs: list[dict[str, Any]]) -> None:
    assert len(mixed_runs) == 6
    runs, tasks = summarise(mixed_runs)
    one_shot_a = Run("MobileMessaging", "one-shot", "model-a")
    talk_a = Run("MobileMessaging", "conversational", "model-a", "user-m")
    one_shot_b = Run("MobileMessaging", "one-shot", "model-b")
    assert set(runs) == {one_shot_a, talk_a, one_shot_b}
    assert tasks[one_shot_a][TASK].pass_k == {1: 1.0, 2: 1.0}
    assert tasks[talk_a][TASK].pass_k == {1: 1.0, 2: 1.0}
    assert tasks[one_shot_b][TASK].pass_k == {1: 0.0, 2: 0.0}
    assert all(stats.rollouts == 2 for stats in runs.values())
    text = BatchSummary(total=6, records=mixed_runs).render_text()
    assert "MobileMessaging \u00b7 conversational \u00b7 model-a \u00b7 user user-m: " \
           "2 rollout(s)" in text
    assert "MobileMessaging \u00b7 one-shot \u00b7 model-b: 2 rollout(s), mean reward " \
           "0.000" in text
    groups = BatchSummary(total=6, records=mixed_runs).to_json()["runs"]
    assert sorted((g["setting"], g["model"], g["tasks"][TASK]["rollouts"]) for g in groups) \
        == [("conversational", "model-a", 2), ("one-shot", "model-a", 2),
            ("one-shot", "model-b", 2)]


def test_one_setting_and_model_is_one_group(mixed_runs: list[dict[str, Any]]) -> None:
    only_a = [r for r in mixed_runs if not r["conversational"]
              and r["models"]["agent"] == "model-a"]
    runs, tasks = summarise(only_a)
    (run,) = runs
    assert run == Run("MobileMessaging", "one-shot", "model-a")
    assert tasks[run][TASK].pass_k == {1: 1.0, 2: 1.0}
    page = render_report(only_a)
    assert page.count('<tr class="group"') == 1
    assert re.findall(r'data-sample="(\d+)"', page) == ["0", "1"]


def test_the_page_has_a_row_per_group_and_numbers_samples_per_group(
        mixed_runs: list[dict[str, Any]]) -> None:
    page = render_report(mixed_runs)
    rows = re.findall(r'<tr class="group" data-setting="([^"]+)" data-model="([^"]+)"', page)
    assert sorted(rows) == [("conversational", "model-a"), ("one-shot", "model-a"),
                            ("one-shot", "model-b")]
    assert page.count("<svg") == 3  # a reward distribution per group
    blocks = re.findall(r'<details class="rollout"[^>]*data-setting="([^"]+)" '
                        r'data-model="([^"]+)" data-sample="(\d+)"', page)
    assert sorted(blocks) == sorted((s, m, n) for s, m in rows for n in ("0", "1"))


def test_each_rollout_shows_model_setting_tokens_and_steps(
        mixed_runs: list[dict[str, Any]]) -> None:
    page = render_report(mixed_runs)
    metas = re.findall(r'<p class="meta">(.*?)</p>', page)
    assert len(metas) == 6
    for record in mixed_runs:
        agent = record["usage"]["agent"]
        expected = (f"model {record['models']['agent']} \u00b7 setting "
                    f"{'conversational' if record['conversational'] else 'one-shot'} "
                    f"\u00b7 agent tokens prompt {agent['prompt_tokens']} / completion "
                    f"{agent['completion_tokens']}")
        assert any(m.startswith(expected) for m in metas), expected
        assert any(f"{record['agent_messages']} step(s)" in m for m in metas)
    conversational = [m for m in metas if "setting conversational" in m]
    assert len(conversational) == 2 and all("user user-m, tokens prompt" in m
                                            for m in conversational)


def test_a_failed_check_shows_what_it_compared_and_a_passed_one_does_not(
        mixed_runs: list[dict[str, Any]]) -> None:
    failed = next(r for r in mixed_runs if r["models"]["agent"] == "model-b")
    passed = next(r for r in mixed_runs if r["models"]["agent"] == "model-a")
    check = next(c for c in failed["checks"] if c["name"] == "one_message_sent")
    assert check["detail"]["expression"] == "len(messages) == len(initial.messages) + 1"
    left = check["detail"]["left"]
    assert check["detail"]["right"] == left + 1
    page = render_report([failed])
    item = re.search(r'<li class="check fail" data-check="one_message_sent".*?</li>', page)
    assert item is not None
    assert (f'compared len(messages) == len(initial.messages) + 1: left <code>{left}</code>, '
            f"right <code>{left + 1}</code>") in item.group(0)
    assert all("detail" not in c for c in passed["checks"])
    assert '<div class="detail">' not in render_report([passed])


def test_a_state_difference_and_a_broken_frame_show_their_values() -> None:
    broken = record("archive", 0, 0.0)
    broken["checks"][0]["detail"] = {"kind": "state", "path": 'chats["C1"].archived',
                                     "expected": True, "found": HOSTILE, "differences": 2}
    broken["frame"]["changes"] = [{"path": 'chats["C2"]', "old": {"id": "C2"}, "new": None}]
    page = render_report([broken])
    assert "first difference at chats[&quot;C1&quot;].archived: expected <code>true</code>, " \
           "found <code>&lt;/pre&gt;" in page
    assert "(2 path(s) differ)" in page
    assert "~ chats[&quot;C2&quot;]: {&quot;id&quot;: &quot;C2&quot;} \u2192 null" in page
    assert "<script>document" not in page
