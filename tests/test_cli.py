"""The ``worldspec`` command line: exit statuses, output formats and file handling.

Most tests call :func:`worldspec.cli.main` in-process; a few run
``python -m worldspec`` to cover the real entry point. The ``fmt`` mechanics
(in-place writes, ``--check``, ``--diff``) are tested against a small stand-in
formatter so they do not depend on the real formatter's layout choices, and
again against ``dsl.formatter`` itself when it can be imported.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import worldspec
from worldspec.cli.main import SUBCOMMANDS, main
from worldspec.compiler.api import CheckResult
from worldspec.compiler.loader import Program
from worldspec.compiler.model import ProgramModel
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import Diagnostic, DiagnosticSink, Severity
from worldspec.dsl.nodes import Span
from worldspec.dsl.parser import parse_module
from worldspec.dsl.render import render_explanation

GOOD = '''\
world Tiny "A tiny world."

entity User {
  key id: str
  name: str
}

state {
  users: table User
}

tool get_user(user: User "The user's id.") -> User
  "Look a user up by id."
{
  return user
}
'''

BAD = "entity User {\n  key id str\n}\n"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch folder that is also the working directory, so paths display relative."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


# ------------------------------------------------------------------- check
def test_check_clean_file_exits_0(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "tiny.world", GOOD)
    assert main(["check", "tiny.world"]) == 0
    out, err = capsys.readouterr()
    assert out == "checked 1 file: no problems\n"
    assert err == ""


def test_check_syntax_error_exits_1_with_caret(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "bad.world", BAD)
    assert main(["check", "bad.world"]) == 1
    out, _ = capsys.readouterr()
    assert out.startswith("error[WS101]: ")
    assert " --> bad.world:2:10\n  |\n2 |   key id str\n  |          ^~~\n" in out
    assert out.endswith("\n1 error\n")


def test_check_folder_finds_every_world_file_below(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "specs" / "a.world", GOOD)
    write(workdir / "specs" / "deep" / "b.world", GOOD.replace("Tiny", "Other"))
    write(workdir / "specs" / "notes.txt", "not a spec")
    assert main(["check", "specs"]) == 0
    assert capsys.readouterr().out == "checked 2 files: no problems\n"


def test_check_missing_path_exits_2(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "tiny.world", GOOD)
    assert main(["check", "tiny.world", "nope.world"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "'nope.world' does not exist" in err


def test_check_folder_without_specs_exits_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "empty").mkdir()
    write(workdir / "empty" / "readme.md", "# nothing here")
    assert main(["check", "empty"]) == 2
    assert "no .world files found in 'empty'" in capsys.readouterr().err


def test_check_empty_string_path_exits_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", ""]) == 2
    assert "empty string" in capsys.readouterr().err


def test_check_empty_file(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "empty.world", "")
    assert main(["check", "empty.world"]) in (0, 1)
    out, err = capsys.readouterr()
    assert out and "Traceback" not in out + err


def test_check_binary_file_reports_ws100(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "blob.world").write_bytes(b"\x00\x01\x02world")
    assert main(["check", "blob.world"]) == 1
    out, _ = capsys.readouterr()
    assert "error[WS100]: 'blob.world' is a binary file" in out
    assert " --> blob.world:1:1" in out


def test_check_non_utf8_file_reports_ws100(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "latin.world").write_bytes('world Caf\xe9 "x"\n'.encode("latin-1"))
    assert main(["check", "latin.world"]) == 1
    assert "error[WS100]: 'latin.world' is not valid UTF-8" in capsys.readouterr().out


def test_check_json_prints_only_the_array(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "bad.world", BAD)
    write(workdir / "tiny.world", GOOD)
    assert main(["check", "--format", "json", "bad.world", "tiny.world"]) == 1
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert isinstance(data, list) and len(data) == 1
    item = data[0]
    assert {"code", "severity", "message", "file", "line", "column", "end_line", "end_column",
            "hints"} <= set(item)
    assert (item["code"], item["severity"], item["file"]) == ("WS101", "error", "bad.world")
    assert (item["line"], item["column"], item["end_line"], item["end_column"]) == (2, 10, 2, 13)
    assert isinstance(item["hints"], list)
    assert err == ""


def test_check_json_clean_is_an_empty_array(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "tiny.world", GOOD)
    assert main(["check", "tiny.world", "--format=json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_check_github_annotations(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "bad.world", BAD)
    assert main(["check", "--format", "github", "bad.world"]) == 1
    out = capsys.readouterr().out
    assert out.startswith(
        "::error file=bad.world,line=2,col=10,endLine=2,endColumn=13,title=WS101::")
    assert out.count("\n") == 1


def fake_result(*severities: Severity) -> CheckResult:
    span = Span("x.world", 1, 1, 1, 2)
    diagnostics = tuple(
        Diagnostic("WS408" if s is Severity.WARNING else "WS201", s, "m", span)
        for s in severities
    )
    return CheckResult(program=Program(), model=ProgramModel(), diagnostics=diagnostics)


def test_warnings_pass_unless_warnings_as_errors(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "x.world", GOOD)
    monkeypatch.setattr("worldspec.cli.check.check_paths",
                        lambda paths: fake_result(Severity.WARNING))
    assert main(["check", "x.world"]) == 0
    assert "warning[WS408]: m" in capsys.readouterr().out
    assert main(["check", "x.world", "--warnings-as-errors"]) == 1


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_follows_the_terminal_and_the_option(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "bad.world", BAD)
    main(["check", "bad.world"])  # captured output is not a terminal
    assert "\x1b[" not in capsys.readouterr().out
    main(["check", "bad.world", "--color", "always"])
    assert "\x1b[31m" in capsys.readouterr().out

    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    main(["check", "bad.world"])
    assert "\x1b[31m" in terminal.getvalue()

    for env, value in (("NO_COLOR", "1"), ("TERM", "dumb")):
        terminal = FakeTerminal()
        monkeypatch.setattr(sys, "stdout", terminal)
        monkeypatch.setenv(env, value)
        main(["check", "bad.world"])
        assert "\x1b[" not in terminal.getvalue()
        monkeypatch.delenv(env)

    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    main(["check", "bad.world", "--color", "never"])
    assert "\x1b[" not in terminal.getvalue()


def test_output_survives_a_terminal_that_cannot_encode_the_source(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(workdir / "bad.world", "entity Üser {\n  key id str\n}\n")
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    assert main(["check", "bad.world"]) == 1
    ascii_out.flush()
    assert b"WS101" in raw.getvalue()


# --------------------------------------------------------------- explain
def test_explain_known_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "WS201"]) == 0
    out = capsys.readouterr().out
    assert out == render_explanation(CATALOG["WS201"])
    entry = CATALOG["WS201"]
    for part in (entry.code, entry.severity, entry.title, entry.explanation, entry.example):
        assert part in out


@pytest.mark.parametrize("spelling", ["ws201", " WS201 ", "201"])
def test_explain_accepts_loose_spellings(
    spelling: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", spelling]) == 0
    assert capsys.readouterr().out.startswith("# WS201: ")


def test_explain_unknown_code_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "WS2O1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "unknown diagnostic code 'WS2O1'" in err
    assert "did you mean 'WS201'?" in err
    assert main(["explain", "nonsense"]) == 2


# ------------------------------------------------------ the parser itself
def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"worldspec {worldspec.__version__}\n"


def test_no_command_prints_help_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "usage: worldspec" in err
    for name in SUBCOMMANDS:
        assert name in err


@pytest.mark.parametrize("argv", [
    ["frobnicate"],
    ["check"],
    ["check", "x.world", "--format", "yaml"],
    ["check", "x.world", "--color", "sometimes"],
    ["fmt"],
    ["explain"],
])
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_command_and_option_has_help(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([name, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"usage: worldspec {name}" in out
    assert SUBCOMMANDS[name].description.split()[0] in out
    parser_help = SUBCOMMANDS[name]
    assert parser_help.summary


def test_internal_error_exits_3_without_traceback(
    workdir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "x.world", GOOD)

    def explode(paths: object) -> CheckResult:
        raise RuntimeError("boom")

    monkeypatch.setattr("worldspec.cli.check.check_paths", explode)
    assert main(["check", "x.world"]) == 3
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err
    assert "please report" in err
    assert "Traceback" not in err


# ------------------------------------------------- --format json, always JSON
def error_of(out: str) -> dict[str, object]:
    """The error object of the one JSON document on stdout."""
    document = json.loads(out)
    assert set(document) == {"error"}, document
    error = document["error"]
    assert set(error) == {"code", "message", "exit_status", "diagnostics"}
    assert isinstance(error["message"], str) and error["message"]
    return dict(error)


@pytest.mark.parametrize("argv", [
    ["check", "--format", "json"],
    ["check", "--format", "json", "--bogus", "x.world"],
    ["check", "--format=json", "missing.world"],
    ["tasks", "--format", "json"],
    ["tasks", "--fo", "json", "--warnings-as-errors", "x.world"],
    ["diff", "--format", "json"],
    ["diff", "--format", "json", "x.world"],
    ["test", "--format", "json"],
    ["test", "--format", "json", "--max-examples", "many", "x.world"],
    ["test", "--format", "json", "--steps", "0", "x.world"],
    ["run", "--format", "json"],
    ["run", "x.world", "--task", "nope", "--solution", "--format", "json"],
    ["run", "x.world", "--task", "t", "--solution", "--calls", "c.jsonl", "--format", "json"],
])
def test_json_format_prints_a_json_error_on_usage_errors(
        argv: list[str], workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "x.world", GOOD)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    error = error_of(out)
    assert (error["code"], error["exit_status"]) == ("usage", 2)
    assert "error" in err  # the message is on stderr too, for people


@pytest.mark.parametrize("command", [["test"], ["diff", "good.world"], ["run", "--task", "t",
                                                                      "--solution"]])
def test_json_format_prints_a_json_error_on_spec_errors(
        command: list[str], workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "good.world", GOOD)
    write(workdir / "bad.world", BAD)
    argv = [*command, "bad.world", "--format", "json"]
    if command[0] == "run":
        argv = ["run", "bad.world", *command[1:], "--format", "json"]
    assert main(argv) == 1
    error = error_of(capsys.readouterr().out)
    assert (error["code"], error["exit_status"]) == ("problems", 1)
    diagnostics = error["diagnostics"]
    assert isinstance(diagnostics, list)
    assert [d["code"] for d in diagnostics] == ["WS101"]


def test_json_format_prints_a_json_error_on_an_internal_error(
        workdir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    write(workdir / "x.world", GOOD)

    def explode(paths: object) -> CheckResult:
        raise RuntimeError("boom")

    monkeypatch.setattr("worldspec.cli.check.check_paths", explode)
    assert main(["check", "x.world", "--format", "json"]) == 3
    error = error_of(capsys.readouterr().out)
    assert error["code"] == "internal" and "boom" in str(error["message"])


# -------------------------------------------------------------- subprocess
def run_module(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "worldspec", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _limit_memory() -> None:
    """Run in the child before it starts: 2 GiB of address space at most."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def repo_env(workdir: Path) -> dict[str, str]:
    """The environment of a child ``worldspec``: this checkout's code, a scratch cache."""
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
            "WORLDSPEC_CACHE": str(workdir / "cache"), "NO_COLOR": "1"}


#: what the console script does, with a line on stdout once the interpreter is up
ENTRY = ("import sys\nfrom worldspec.cli import entry_point\nprint('ready', flush=True)\n"
         "sys.exit(entry_point(sys.argv[1:]))\n")


@pytest.mark.parametrize("delay", [0.05, 0.25, 0.6])
@pytest.mark.parametrize("fmt", [[], ["--format", "json"]])
def test_ctrl_c_at_any_moment_is_one_line_and_status_130(
        delay: float, fmt: list[str], workdir: Path) -> None:
    """Ctrl-C during the imports (the first ~0.5 s) or during the check: never a traceback."""
    import signal
    import time

    examples = Path(__file__).resolve().parents[1] / "examples"
    child = subprocess.Popen([sys.executable, "-c", ENTRY, "check", str(examples), *fmt],
                             cwd=workdir, env=repo_env(workdir), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=_limit_memory)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "ready\n"
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=120)
    finally:
        child.kill()
    assert (child.returncode, err) == (130, "worldspec: interrupted\n"), out + err
    if fmt:
        assert error_of(out)["code"] == "interrupted"
    else:
        assert out == ""


@pytest.mark.parametrize("command", [["export"], ["test", "--max-examples", "2"],
                                     ["tasks", "--format", "json"]])
def test_a_reader_that_goes_away_is_not_an_error(command: list[str], workdir: Path) -> None:
    """``worldspec test examples | head -1``: quiet, status 0 (as ripgrep does).

    The read end is closed before the command has written anything, so its first
    write meets a closed pipe whatever the size of the pipe's buffer.
    """
    examples = Path(__file__).resolve().parents[1] / "examples"
    child = subprocess.Popen([sys.executable, "-m", "worldspec", command[0], str(examples),
                              *command[1:]],
                             cwd=workdir, env=repo_env(workdir), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=_limit_memory)
    try:
        assert child.stdout is not None
        child.stdout.close()
        _, err = child.communicate(timeout=300)
    finally:
        child.kill()
    assert (child.returncode, err) == (0, b"")


def test_python_dash_m_worldspec(workdir: Path) -> None:
    write(workdir / "bad.world", BAD)
    version = run_module(["--version"], workdir)
    assert (version.returncode, version.stdout) == (0, f"worldspec {worldspec.__version__}\n")
    bad = run_module(["check", "bad.world"], workdir)
    assert bad.returncode == 1
    assert "error[WS101]" in bad.stdout and "\x1b[" not in bad.stdout  # a pipe: no colour
    missing = run_module(["check", "missing.world"], workdir)
    assert missing.returncode == 2
    assert "does not exist" in missing.stderr
    for result in (version, bad, missing):
        assert "Traceback" not in result.stdout + result.stderr


# ----------------------------------------------------------- robustness
soup = st.lists(
    st.sampled_from([
        "world", "W", "entity", "User", "{", "}", "(", ")", "[", "]", "key", "id", ":", "str",
        "state", "table", "tool", "->", "return", "require", "else", '"doc"', "f\"{x}\"",
        "\n", " ", "\t", "#c\n", "1", "1.5", "=", "==", "let", "x", ",", ".", "task", "in",
        "check", "given", "/re/", "\"", "\\", "é", "\r\n", "\x0c", "none", "if", "for",
    ]),
    max_size=60,
).map("".join)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(soup, st.text(max_size=120)))
def test_check_never_crashes(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.world"
        path.write_text(text, encoding="utf-8", newline="")
        status = main(["check", "--format", "json", str(path)])
        out, err = capsys.readouterr()
        assert status in (0, 1), err
        assert isinstance(json.loads(out), list)
        status = main(["check", str(path)])
        out, err = capsys.readouterr()
        assert status in (0, 1), err


# --------------------------------------------------------------------- fmt
def _stub_format_source(text: str, path: str) -> str | None:
    """A stand-in formatter: ``None`` on syntax errors, else trailing blanks removed."""
    if not parse_module(text, path, DiagnosticSink()).ok:
        return None
    return "\n".join(line.rstrip() for line in text.rstrip().split("\n")) + "\n"


@pytest.fixture
def stub_formatter(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    module = ModuleType("worldspec.dsl.formatter")
    module.format_source = _stub_format_source  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "worldspec.dsl.formatter", module)
    yield


MESSY = GOOD.replace("key id: str", "key id: str   ") + "\n\n"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_rewrites_only_changed_files(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messy = write(workdir / "messy.world", MESSY)
    clean = write(workdir / "clean.world", GOOD)
    os.chmod(messy, 0o640)
    os.utime(clean, ns=(1_000_000_000, 1_000_000_000))
    assert main(["fmt", "messy.world", "clean.world"]) == 0
    out = capsys.readouterr().out
    assert "reformatted messy.world" in out and "clean.world" not in out
    assert "1 file reformatted, 1 unchanged" in out
    assert messy.read_text(encoding="utf-8") == GOOD
    assert clean.stat().st_mtime_ns == 1_000_000_000  # not even rewritten
    assert stat.S_IMODE(messy.stat().st_mode) == 0o640
    assert sorted(p.name for p in workdir.iterdir()) == ["clean.world", "messy.world"]


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_check_lists_files_and_changes_nothing(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "messy.world", MESSY)
    write(workdir / "clean.world", GOOD)
    before = snapshot(workdir)
    assert main(["fmt", "--check", "."]) == 1
    out = capsys.readouterr().out
    assert "would reformat messy.world" in out and "would reformat clean.world" not in out
    assert snapshot(workdir) == before
    assert main(["fmt", "--check", "clean.world"]) == 0


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_diff_prints_a_patch_and_changes_nothing(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "messy.world", MESSY)
    before = snapshot(workdir)
    assert main(["fmt", "--diff", "messy.world"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("--- a/messy.world\n+++ b/messy.world\n@@ ")
    assert "-  key id: str   \n+  key id: str\n" in out
    assert "1 file would be reformatted" in err  # the summary keeps stdout a clean patch
    assert snapshot(workdir) == before
    assert main(["fmt", "--diff", "--check", "messy.world"]) == 1


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_diff_marks_a_missing_final_newline(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "a.world", GOOD.rstrip("\n"))
    assert main(["fmt", "--diff", "a.world"]) == 0
    assert "\\ No newline at end of file\n" in capsys.readouterr().out


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_leaves_files_with_syntax_errors_alone(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(workdir / "bad.world", BAD + "   \n")
    messy = write(workdir / "messy.world", MESSY)
    assert main(["fmt", "bad.world", "messy.world"]) == 1
    out, err = capsys.readouterr()
    assert bad.read_text(encoding="utf-8") == BAD + "   \n"
    assert "error[WS101]" in err and "2 |   key id str" in err
    assert "not formatted: 'bad.world' has syntax errors" in err
    assert messy.read_text(encoding="utf-8") == GOOD  # the other file is still formatted
    assert "1 could not be formatted" in out


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_directory_formats_every_spec_below(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = write(workdir / "specs" / "a.world", MESSY)
    b = write(workdir / "specs" / "sub" / "b.world", MESSY)
    other = write(workdir / "specs" / "notes.txt", "keep   \n")
    assert main(["fmt", "specs"]) == 0
    assert a.read_text(encoding="utf-8") == GOOD == b.read_text(encoding="utf-8")
    assert other.read_text(encoding="utf-8") == "keep   \n"
    assert "2 files reformatted" in capsys.readouterr().out


@pytest.mark.usefixtures("stub_formatter")
@pytest.mark.parametrize(("content", "reason"), [
    (b"\x00\x01binary", "is a binary file"),
    (b"world Caf\xe9\n", "is not valid UTF-8"),
])
def test_fmt_unreadable_files_are_reported(
    content: bytes, reason: str, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workdir / "odd.world"
    path.write_bytes(content)
    assert main(["fmt", "odd.world"]) == 1
    err = capsys.readouterr().err
    assert "error[WS100]" in err and reason in err
    assert path.read_bytes() == content


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_missing_path_or_empty_folder_exits_2(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "empty").mkdir()
    assert main(["fmt", "nope.world"]) == 2
    assert main(["fmt", "empty"]) == 2
    err = capsys.readouterr().err
    assert "'nope.world' does not exist" in err and "no .world files found in 'empty'" in err


@pytest.mark.usefixtures("stub_formatter")
def test_fmt_follows_symbolic_links(workdir: Path) -> None:
    target = write(workdir / "real.world", MESSY)
    link = workdir / "link.world"
    link.symlink_to(target)
    assert main(["fmt", "link.world"]) == 0
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == GOOD


# ------------------------------------------------- fmt with the real formatter
@pytest.fixture
def real_formatter() -> ModuleType:
    module: ModuleType = pytest.importorskip("worldspec.dsl.formatter")
    return module


def test_real_fmt_in_place_is_idempotent(
    real_formatter: ModuleType, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(workdir / "messy.world", MESSY)
    expected = real_formatter.format_source(MESSY, "messy.world")
    assert isinstance(expected, str)
    assert main(["fmt", "messy.world"]) == 0
    assert path.read_text(encoding="utf-8") == expected
    capsys.readouterr()
    assert main(["fmt", "--check", "messy.world"]) == 0


def test_real_fmt_check_and_diff_change_nothing(
    real_formatter: ModuleType, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(workdir / "messy.world", MESSY)
    would_change = real_formatter.format_source(MESSY, "messy.world") != MESSY
    before = snapshot(workdir)
    assert main(["fmt", "--check", "messy.world"]) == (1 if would_change else 0)
    assert main(["fmt", "--diff", "messy.world"]) == 0
    out = capsys.readouterr().out
    assert ("+++ b/messy.world" in out) == would_change
    assert snapshot(workdir) == before


def test_real_fmt_refuses_syntax_errors(
    real_formatter: ModuleType, workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(workdir / "bad.world", BAD)
    assert main(["fmt", "bad.world"]) == 1
    assert bad.read_text(encoding="utf-8") == BAD
    assert "error[WS101]" in capsys.readouterr().err
