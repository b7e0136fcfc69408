"""The parser tables' cache: used when sound, ignored and rebuilt when stale or corrupted.

The LALR tables are built once per user and grammar and read back by later processes
(``$WORLDSPEC_PARSER_CACHE``, default ``~/.cache/worldspec``): lark's own cache file
(``parser-*.lark``, lark's ``cache=`` option), one for both start rules. Whatever is in the
cache folder, a parse gives the same module and the same syntax errors as a parser built
from the grammar; a folder that cannot be written means no cache, not a failure.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from worldspec.dsl import parser
from worldspec.dsl.diagnostics import DiagnosticSink

SPEC = '''world W "A world."

entity U "A user." {
  key id: str
  name: str(1..80)
}

state {
  users: table U
}

tool rename(user: U, name: str) "Rename a user." {
  user.name = name
  return f"renamed {user.id} to {name}"
}
'''

BROKEN = 'world W "A world."\n\nentity U { key id: str name }\n'


Parsed = tuple[object, list[tuple[str, int, int]]]


def parsed(text: str) -> Parsed:
    sink = DiagnosticSink()
    module = parser.parse_module(text, "t.world", sink).module
    return module, [(d.code, d.span.line, d.span.column) for d in sink.sorted()]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache folder, and a parser built again for each use of it."""
    folder = tmp_path / "parser-cache"
    monkeypatch.setenv("WORLDSPEC_PARSER_CACHE", str(folder))
    forget_parsers()
    yield folder
    forget_parsers()


def forget_parsers() -> None:
    """Drop the parser this process has loaded."""
    parser._parser.cache_clear()


def fresh_parse(text: str) -> Parsed:
    """Parse in what is, for the parser, a new process: its tables are loaded again."""
    forget_parsers()
    return parsed(text)


@pytest.fixture
def expected(monkeypatch: pytest.MonkeyPatch) -> dict[str, Parsed]:
    """What a parser built from the grammar, with no cache at all, gives."""
    monkeypatch.setenv("WORLDSPEC_PARSER_CACHE", "")
    out = {"good": fresh_parse(SPEC), "broken": fresh_parse(BROKEN)}
    forget_parsers()
    return out


def cache_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*"))


def test_the_first_parse_writes_the_cache_and_later_ones_read_it(
        expected: dict[str, object], cache: Path) -> None:
    assert fresh_parse(SPEC) == expected["good"]
    files = cache_files(cache)
    # one file, for both start rules (`start`, and `expr` for f-strings), named after the
    # grammar and the lark and Python versions
    assert [f.name for f in files] == [f"parser-{parser._digest(parser._grammar())[:32]}.lark"]
    written = {f: f.stat().st_mtime_ns for f in files}
    assert fresh_parse(SPEC) == expected["good"]
    assert fresh_parse(BROKEN) == expected["broken"]
    assert {f: f.stat().st_mtime_ns for f in cache_files(cache)} == written  # only read


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty"])
def test_a_corrupted_cache_is_ignored_and_rebuilt(
        expected: dict[str, object], cache: Path, damage: str) -> None:
    fresh_parse(SPEC)
    (path,) = cache_files(cache)
    content = path.read_bytes()
    path.write_bytes({"garbage": os.urandom(len(content)),
                      "truncated": content[: len(content) // 2], "empty": b""}[damage])
    assert fresh_parse(SPEC) == expected["good"]
    assert fresh_parse(BROKEN) == expected["broken"]
    # rebuilt in place: the next process reads sound tables again, and leaves them be
    assert cache_files(cache) == [path] and path.stat().st_size > len(content) // 2
    rebuilt = path.stat().st_mtime_ns
    assert fresh_parse(SPEC) == expected["good"]
    assert path.stat().st_mtime_ns == rebuilt


def test_a_stale_cache_for_another_grammar_is_ignored(
        expected: dict[str, object], cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file at the current name holding the tables of another grammar (an edited
    grammar, a hash that happens to collide) is not used: lark checks the grammar's hash
    stored inside it."""
    fresh_parse(SPEC)
    other = cache.parent / "other"
    monkeypatch.setenv("WORLDSPEC_PARSER_CACHE", str(other))
    tiny = 'start: "a"+\nexpr: "b"\n'
    parser._build_cached(tiny, parser._ToNodes())
    (stale,) = cache_files(other)
    (current,) = cache_files(cache)
    assert stale.name != current.name
    current.write_bytes(stale.read_bytes())
    monkeypatch.setenv("WORLDSPEC_PARSER_CACHE", str(cache))
    assert fresh_parse(SPEC) == expected["good"]
    assert fresh_parse(BROKEN) == expected["broken"]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="needs a user that file permissions apply to")
def test_a_read_only_cache_folder_means_no_cache(
        expected: dict[str, object], cache: Path) -> None:
    cache.mkdir()
    cache.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        assert fresh_parse(SPEC) == expected["good"]
        assert cache_files(cache) == []
    finally:
        cache.chmod(stat.S_IRWXU)


def test_a_cache_folder_that_cannot_be_made_means_no_cache(
        expected: dict[str, object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("WORLDSPEC_PARSER_CACHE", str(blocker / "cache"))
    try:
        assert fresh_parse(SPEC) == expected["good"]
        assert fresh_parse(BROKEN) == expected["broken"]
    finally:
        forget_parsers()


def test_an_empty_setting_turns_the_cache_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORLDSPEC_PARSER_CACHE", "")
    assert parser.parser_cache_dir() is None
    monkeypatch.delenv("WORLDSPEC_PARSER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere")
    assert parser.parser_cache_dir() == os.path.join("/somewhere", "worldspec")


#: A process that parses the spec on stdin and says what it loaded and what it parsed.
PARSE_IN_A_PROCESS = """
import json, sys
from worldspec.dsl import parser
from worldspec.dsl.diagnostics import DiagnosticSink
sink = DiagnosticSink()
result = parser.parse_module(sys.stdin.read(), "t.world", sink)
print(json.dumps({"ok": result.ok, "decls": len(result.module.decls)}))
"""


def test_a_new_process_reads_the_tables_another_wrote(tmp_path: Path) -> None:
    """Across processes, the file is found and taken, not written again."""
    folder = tmp_path / "cache"
    env = {**os.environ, "WORLDSPEC_PARSER_CACHE": str(folder)}

    def run() -> dict[str, object]:
        done = subprocess.run([sys.executable, "-c", PARSE_IN_A_PROCESS], input=SPEC,
                              capture_output=True, text=True, env=env, timeout=120,
                              check=True)
        found: dict[str, object] = json.loads(done.stdout)
        return found

    first = run()
    (written,) = cache_files(folder)
    made = written.stat().st_mtime_ns
    second = run()
    assert cache_files(folder) == [written] and written.stat().st_mtime_ns == made
    assert first == second == {"ok": True, "decls": 4}
