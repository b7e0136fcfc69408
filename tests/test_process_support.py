"""The helper that ends the servers the tests start: SIGTERM first, SIGKILL when ignored."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from process_support import end_process

#: a child that says it is ready, then sleeps (ignoring SIGTERM when told to)
CHILD = ("import signal, sys, time\n"
         "if sys.argv[1] == 'stubborn': signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
         "print('ready', flush=True)\n"
         "time.sleep(60)\n")


def _started(mode: str) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE,
                               text=True)
    assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return process


def test_a_child_that_stops_when_asked_is_terminated() -> None:
    process = _started("polite")
    end_process(process, timeout=10)
    assert process.returncode == -signal.SIGTERM


def test_a_child_that_ignores_sigterm_is_killed_after_the_timeout() -> None:
    process = _started("stubborn")
    began = time.monotonic()
    end_process(process, timeout=0.5)
    assert process.returncode == -signal.SIGKILL
    assert 0.5 <= time.monotonic() - began < 10
