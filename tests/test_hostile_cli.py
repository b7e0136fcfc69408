"""Hostile paths and files given to the command line: a clear message and status 2, never a
hang, a traceback, status 3, or a device node replaced by a file.

Every command runs in a child process under a timeout and a memory limit, so a regression (a
read that blocks on a FIFO, a parse that exhausts memory) fails the test instead of hanging CI.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "generated" / "mobile_messaging"
MESSAGING = ROOT / "examples" / "messaging"
INVENTORY = ROOT / "tests" / "port_classes" / "inventory.py"
DEEP = "[" * 200_000 + "]" * 200_000

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def worldspec_child(args: list[str], cwd: Path, timeout: float = 60
                    ) -> subprocess.CompletedProcess[str]:
    """``python -m worldspec ARGS`` under a timeout and a 2 GiB memory limit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORLDSPEC_CACHE": str(cwd / "cache"),
           "NO_COLOR": "1"}
    try:
        return subprocess.run([sys.executable, "-m", "worldspec", *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, preexec_fn=_limit_memory,
                              check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"worldspec {' '.join(args)} did not finish within {timeout} s (blocked?)")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a FIFO, a regular file standing where a folder is needed, a JSON file
    nested 200,000 deep, a 20 MB file of calls, and a runs folder whose journal holds one
    real record and one 200,000-deep line."""
    folder = tmp_path_factory.mktemp("hostile")
    os.mkfifo(folder / "pipe")
    (folder / "a_file").write_text("x", encoding="utf-8")
    (folder / "deep.json").write_text(DEEP + "\n", encoding="utf-8")
    call = json.dumps({"name": "list_conversations", "arguments": {"x": "a" * 1000}})
    (folder / "calls.jsonl").write_text((call + "\n") * 20_000, encoding="utf-8")
    with ScriptedLLMServer() as server:
        server.responder = _done
        assert main(["rollout", str(PACKAGE), "--task", "tidy_archive", "--base-url",
                     server.url, "--model", "m", "-o", str(folder / "runs"), "--progress",
                     "never"]) == 0
    journal = folder / "runs" / "rollouts.jsonl"
    with open(journal, "a", encoding="utf-8") as handle:
        handle.write(DEEP + "\n")
    return folder


def _done(request: RecordedRequest) -> Reply | str:
    return "Nothing to do."


REFUSED = [
    # outputs never onto a device or a FIFO
    (["export", "--trajectories", "runs", "-o", "/dev/full"],
     "-o: '/dev/full' is a character device, not a regular file"),
    (["export", "--trajectories", "runs", "-o", "pipe"],
     "-o: 'pipe' is a named pipe (FIFO), not a regular file"),
    (["export", str(MESSAGING), "-o", "/dev/full"], "'/dev/full' is a character device"),
    (["view", "runs", "-o", "pipe"], "-o: 'pipe' is a named pipe (FIFO)"),
    # outputs that cannot be written
    (["export", "--trajectories", "runs", "-o", "a_file/x.jsonl"],
     "-o: 'a_file/x.jsonl' cannot be created: 'a_file' is not a folder"),
    (["lsp", "--log-file", "a_file/x.log"], "--log-file: cannot write 'a_file/x.log'"),
    # inputs that are FIFOs
    (["lsp", "--log-file", "pipe"], "--log-file: 'pipe' is a named pipe (FIFO)"),
    (["rollout", str(PACKAGE), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
      "--system-prompt", "pipe", "-o", "out"],
     "cannot read the prompt template 'pipe': 'pipe' is a named pipe (FIFO)"),
    (["rollout", str(PACKAGE), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
      "--conversational", "--user-prompt", "pipe", "-o", "out"],
     "cannot read the prompt template 'pipe': 'pipe' is a named pipe (FIFO)"),
    (["rollout", str(PACKAGE), "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
      "--journal", "pipe", "-o", "out"],
     "cannot read the journal 'pipe': 'pipe' is a named pipe (FIFO)"),
    (["view", "pipe", "-o", "report.html"], "'pipe' is a named pipe (FIFO), not a file"),
    # inputs too deep or too big to parse
    (["compare", str(INVENTORY), str(MESSAGING / "messaging.world"), "--init-data",
      "deep.json"], "--init-data: 'deep.json' is JSON nested too deeply"),
    (["run", str(MESSAGING), "--task", "tidy_archive", "--calls", "deep.json"],
     "JSON nested too deeply"),
    (["run", str(MESSAGING), "--task", "tidy_archive", "--calls", "calls.jsonl"],
     "'calls.jsonl' is larger than 16.0 MB, the most read from such a file"),
]


@pytest.mark.parametrize(("args", "message"), REFUSED,
                         ids=[" ".join(a[:1] + a[-2:]) for a, _ in REFUSED])
def test_hostile_paths_are_refused_with_a_message(args: list[str], message: str,
                                                  hostile: Path) -> None:
    done = worldspec_child(args, hostile)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)  # the device node is still a device
    assert stat.S_ISFIFO(os.stat(hostile / "pipe").st_mode)


@pytest.mark.parametrize("args", [
    ["export", "--trajectories", "runs", "-o", "sft.jsonl"],
    ["view", "runs", "-o", "report.html"],
    ["rollout", str(PACKAGE), "--task", "tidy_archive", "--base-url", "http://127.0.0.1:9/v1",
     "--model", "m", "-o", "runs", "--progress", "never"],
], ids=["export", "view", "rollout-resume"])
def test_a_journal_line_nested_too_deep_is_skipped_like_a_torn_one(args: list[str],
                                                                    hostile: Path) -> None:
    """The one real record is read (the rollout is done, so a resume asks no model)."""
    done = worldspec_child(args, hostile)
    assert done.returncode == 0, done.stderr
    assert "1 rollout(s)" in done.stdout and "internal error" not in done.stderr


# ------------------------------------------------------------ huge literals
PEAK_RSS = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "worldspec", "check", sys.argv[1]],
                      capture_output=True, text=True, timeout=120)
peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(done.returncode, peak_mb)
"""

TEN_MB = 10_000_000
LITERALS = {
    "string": 'world W "x"\nfn f() -> str { return "' + "a" * TEN_MB + '" }\n',
    "escapes": 'world W "x"\nfn f() -> str { return "' + "\\n" * (TEN_MB // 2) + '" }\n',
    "triple": 'world W """\n' + "a" * TEN_MB + '\n"""\n',
    "f-string": 'world W "x"\nfn f() -> str { return f"' + "a" * TEN_MB + '" }\n',
}


@pytest.mark.parametrize("kind", LITERALS)
def test_a_ten_megabyte_literal_is_checked_in_little_memory(kind: str, tmp_path: Path) -> None:
    """The lexer's string patterns once kept a backtracking frame per character: a 10 MB
    literal took 2.3 GB. The peak resident memory of ``check`` (measured in a fresh child)
    must stay near the size of the text."""
    spec = tmp_path / "big.world"
    spec.write_text(LITERALS[kind], encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORLDSPEC_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", PEAK_RSS, str(spec)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=180,
                          preexec_fn=_limit_memory, check=False)
    assert done.returncode == 0, done.stderr
    status, peak_mb = map(int, done.stdout.split())
    assert status in (0, 1)
    assert peak_mb < 300, f"check of a 10 MB {kind} literal peaked at {peak_mb} MB"


# ------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_at_any_moment_near_the_end_prints_no_traceback(tmp_path: Path) -> None:
    """SIGINT at moments spread from the middle of a short command to past its end: the
    command stops with one line (130), finishes (0), or dies of the signal after its
    output is done; it never prints a traceback or ``Exception ignored in: <module
    'threading'>`` from the interpreter's shutdown."""
    import signal
    import time

    env = {**os.environ, "PYTHONPATH": str(ROOT), "WORLDSPEC_CACHE": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "worldspec", "check", str(ROOT / "examples" / "shop")]
    started = time.monotonic()
    subprocess.run(command, env=env, capture_output=True, timeout=120, check=True)
    duration = time.monotonic() - started
    runs = 24
    seen: set[int] = set()
    for index in range(runs):
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True,
                                   preexec_fn=_limit_memory)
        time.sleep(duration * (0.4 + 1.0 * index / runs))
        process.send_signal(signal.SIGINT)
        try:
            _, err = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("the command hung after Ctrl-C")
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert process.returncode in (0, 130, -signal.SIGINT), (process.returncode, err)
        seen.add(process.returncode)
    assert 130 in seen  # some signals did land while the command ran


# ------------------------------------------------------- the file helpers
def test_write_atomically_replaces_a_file_but_never_a_fifo(tmp_path: Path) -> None:
    from worldspec.services.files import FileRefusedError, write_atomically

    regular = tmp_path / "out.jsonl"
    regular.write_text("old\n", encoding="utf-8")
    write_atomically(regular, "new\n")
    assert regular.read_text(encoding="utf-8") == "new\n"
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(FileRefusedError, match="is a named pipe"):
        write_atomically(pipe, "x\n")
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "pipe"]  # no temp


def test_read_text_file_reads_a_file_and_refuses_a_fifo_or_too_much(tmp_path: Path) -> None:
    from worldspec.services.files import FileRefusedError, read_text_file

    text = tmp_path / "calls.jsonl"
    text.write_text("caf\u00e9\n" * 10, encoding="utf-8")
    assert read_text_file(text, limit=1000) == "caf\u00e9\n" * 10
    with pytest.raises(FileRefusedError, match="larger than 20 bytes"):
        read_text_file(text, limit=20)
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(FileRefusedError, match="is a named pipe"):
        read_text_file(pipe, limit=1000)  # refused at once: no writer is waited for
    with pytest.raises(FileRefusedError, match="is a folder"):
        read_text_file(tmp_path, limit=1000)


def test_is_journal_knows_a_journal_and_never_opens_a_fifo(tmp_path: Path) -> None:
    """``diff --trajectories`` asks :func:`is_journal` first: a FIFO must be a quick "no"
    (then refused by the reader), never a read that waits for a writer."""
    from worldspec.services.journals import FORMAT, Journal

    journal = Journal(tmp_path / "rollouts.jsonl")
    journal.append({"key": "k1", "format": FORMAT, "status": "finished", "text": "\ud800"})
    os.mkfifo(tmp_path / "pipe")
    probe = ("import sys; from worldspec.services.journals import is_journal; "
             "print([is_journal(p) for p in sys.argv[1:]])")
    try:
        done = subprocess.run([sys.executable, "-c", probe, "rollouts.jsonl", "pipe"],
                              cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              capture_output=True, text=True, timeout=30,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("is_journal blocked on a FIFO")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, False]"


@pytest.mark.parametrize("args", [
    ["export", "--trajectories", "runs", "-o", "LOCKED/x.jsonl"],
    ["lsp", "--log-file", "LOCKED/x.log"],
], ids=["export", "lsp"])
def test_an_unwritable_output_is_exit_2_not_a_crash(args: list[str], hostile: Path) -> None:
    # root writes into a folder without write bits, so as root the folder is /sys, where the
    # kernel refuses to create a file for anybody (PermissionError, as for a locked folder)
    as_root = hasattr(os, "geteuid") and os.geteuid() == 0
    locked = Path("/sys") if as_root else hostile / "locked"
    if as_root and not locked.is_dir():
        pytest.skip("no /sys to stand for an unwritable folder")
    if not as_root:
        locked.mkdir(exist_ok=True)
        locked.chmod(0o500)
    try:
        done = worldspec_child([a.replace("LOCKED", str(locked)) for a in args], hostile)
    finally:
        if not as_root:
            locked.chmod(0o700)
    assert done.returncode == 2, done.stderr
    assert "cannot" in done.stderr and "internal error" not in done.stderr
