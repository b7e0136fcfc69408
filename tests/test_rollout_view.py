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
from pathlib import Path
from typing import Any

import pytest

from worldspec.cli.main import main
from worldspec.rollout.records import FORMAT, Journal
from worldspec.rollout.view import render_report

HOSTILE = ('</pre></li></ol></details><script>document.title="pwned"</script>'
           '<img src=x onerror="document.title=\'pwned\'">"\'&')
IN_CI = os.environ.get("CI", "").lower() == "true"


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
                    "message": "" if reward >= 1 else HOSTILE},
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
    # the hostile reply stayed text: no injected element ran or exists
    assert "<title>Rollouts" in dom and "pwned</title>" not in dom
    assert "<img" not in dom and dom.count("<script>") == 1
