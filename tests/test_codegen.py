"""The code generator's promises: deterministic, anchored, safe, and inert to hostile specs.

- Determinism: the same specs give byte-identical files, in this process, in processes with
  other hash seeds, and from another working directory; the committed ``generated/`` is what
  the compiler writes now.
- Header and anchors: the spec hash, "Do not edit", and ``# file.world:line`` comments that
  point at the spec line of each tool and statement.
- Safety: parsed with :mod:`ast`, generated modules call no ``eval``/``exec``/``compile``/
  ``__import__``, and import only the standard library and ``worldspec.runtime``.
- Hostile specs (``tests/hostile/*.world``): names that are Python keywords, builtins,
  runtime or boilerplate names, and strings full of quotes, backslashes, template syntax,
  control characters, unicode tricks and code-shaped text. Each checks clean, builds, passes
  ``mypy --strict`` (one run for all of them), imports, and its tools give back exactly the
  hostile text.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mypy_support import mypy_strict

from worldspec.compiler.api import check_specs
from worldspec.compiler.build import generate_all, write_packages
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_package

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
#: the hand-written examples (the synthesised corpus, examples/corpus, is built and checked by
#: `worldspec build --check examples` in `make test`)
HANDWRITTEN = [EXAMPLES / name for name in ("bfcl", "clinic", "messaging", "shop", "tau2")]
GENERATED = REPO / "generated"
HOSTILE = Path(__file__).resolve().parent / "hostile"
HOSTILE_FILES = sorted(HOSTILE.glob("*.world"))

ANCHOR = re.compile(r"  # (?P<file>[^\s:]+\.world):(?P<line>[0-9]+)$")
ANCHOR_ABOVE = re.compile(r" *# (?P<file>[^\s:]+\.world):(?P<line>[0-9]+)")
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "globals", "locals", "vars",
                   "breakpoint", "open", "input", "getattr", "setattr", "delattr"}


def build_files(paths: list[Path | str]) -> dict[str, str]:
    """``package/relative path`` -> text, for every world reachable from ``paths``."""
    result = check_specs(paths)
    assert result.ok, [d.message for d in result.errors]
    return {f"{package.name}/{rel}": text
            for package in generate_all(result).packages
            for rel, text in package.files.items()}


def digests(files: dict[str, str]) -> dict[str, str]:
    return {name: hashlib.sha256(text.encode()).hexdigest() for name, text in files.items()}


@pytest.fixture(scope="module")
def example_files() -> dict[str, str]:
    return build_files(HANDWRITTEN)


def modules(files: dict[str, str]) -> Iterator[tuple[str, ast.Module]]:
    for name, text in sorted(files.items()):
        if name.endswith(".py"):
            yield name, ast.parse(text, filename=name)


# ------------------------------------------------------------------ determinism
def test_building_twice_gives_identical_files(example_files: dict[str, str]) -> None:
    again = build_files(HANDWRITTEN)
    assert again == example_files
    assert {name.split("/")[0] for name in example_files} == {
        "clinic_scheduling", "message_api", "mobile_messaging", "online_shop", "tau2_retail",
        "ticket_api", "trading_bot", "travel_api",
        "vehicle_control_api"}


def test_committed_packages_are_current(example_files: dict[str, str]) -> None:
    on_disk = {p.relative_to(GENERATED).as_posix(): p.read_text(encoding="utf-8")
               for p in GENERATED.rglob("*") if p.is_file() and "__pycache__" not in p.parts
               and p.parts[len(GENERATED.parts)] in {n.split("/")[0] for n in example_files}}
    assert on_disk == example_files, "run `worldspec build examples`"


def test_output_does_not_depend_on_the_working_directory(
        example_files: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert build_files([f"examples/{p.name}" for p in HANDWRITTEN]) == example_files
    monkeypatch.chdir(tmp_path)
    assert build_files([os.path.relpath(p, tmp_path) for p in HANDWRITTEN]) == example_files
    assert build_files([EXAMPLES / "messaging" / "tasks.world", EXAMPLES / "shop",
                        EXAMPLES / "clinic", EXAMPLES / "bfcl", EXAMPLES / "tau2"]) == example_files


def test_other_hash_seeds_give_identical_files(example_files: dict[str, str]) -> None:
    script = textwrap.dedent("""
        import hashlib, json, sys
        from worldspec.compiler.api import check_specs
        from worldspec.compiler.build import generate_all
        result = check_specs(sys.argv[1:])
        print(json.dumps({f"{p.name}/{rel}": hashlib.sha256(text.encode()).hexdigest()
                          for p in generate_all(result).packages
                          for rel, text in p.files.items()}))
    """)
    runs = []
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        runs.append(subprocess.Popen([sys.executable, "-c", script, *map(str, HANDWRITTEN)],
                                     cwd=REPO, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True))
    expected = digests(example_files)
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        assert json.loads(out) == expected


# ------------------------------------------------------------- header, anchors
def test_header_has_spec_hash_and_do_not_edit(example_files: dict[str, str]) -> None:
    hashes = set()
    for name, text in example_files.items():
        if not name.endswith(".py"):
            continue
        head = text.splitlines()[:3]
        assert head[0].startswith("# Generated by worldspec ")
        assert any("Do not edit" in line for line in head), name
        if name.endswith("/world.py"):
            assert re.fullmatch(r"# Spec sha256: [0-9a-f]{64}", head[1]), head[1]
            assert "from messaging.world, tasks.world." in head[0] or \
                "mobile_messaging" not in name
            hashes.add(head[1])
    worlds = [name for name in example_files if name.endswith("/world.py")]
    assert len(worlds) > 1 and len(hashes) == len(worlds)  # each hashes its own sources


def test_spec_hash_follows_the_spec_text(tmp_path: Path) -> None:
    spec = tmp_path / "tiny.world"
    body = 'world Tiny "A tiny world."\nstate { n: int = 0 }\ntool bump() -> int "Bump." {\n' \
           '  n += 1\n  return n\n}\n'
    spec.write_text(body, encoding="utf-8")
    first = build_files([spec])["tiny/world.py"]
    spec.write_text("# a comment changes the hash\n" + body, encoding="utf-8")
    second = build_files([spec])["tiny/world.py"]
    assert first.splitlines()[1] != second.splitlines()[1]
    assert first.splitlines()[2:] != second.splitlines()[2:]  # anchors moved one line down


def spec_lines(name: str) -> dict[str, list[str]]:
    """The lines of every spec file a package was built from, by file name."""
    folder = {"clinic_scheduling": EXAMPLES / "clinic", "mobile_messaging": EXAMPLES / "messaging",
              "online_shop": EXAMPLES / "shop", "message_api": EXAMPLES / "bfcl",
              "ticket_api": EXAMPLES / "bfcl", "trading_bot": EXAMPLES / "bfcl",
              "travel_api": EXAMPLES / "bfcl", "vehicle_control_api": EXAMPLES / "bfcl",
              "tau2_retail": EXAMPLES / "tau2"}.get(name, HOSTILE)
    return {p.name: p.read_text(encoding="utf-8").split("\n") for p in folder.glob("*.world")}


STATEMENT_WORDS: dict[type[ast.stmt], tuple[str, ...]] = {
    ast.For: ("for",), ast.Return: ("return",), ast.If: ("if", "require", "case"),
    ast.AnnAssign: ("let",), ast.Raise: ("fail",),
}


def check_anchors(text: str, sources: dict[str, list[str]]) -> int:
    """Every tool/fn and each of its statements points at the spec line it came from."""
    lines = text.splitlines()

    def target(lineno: int) -> str:
        # at the end of the line, or alone on the line above where the code fits without it
        match = ANCHOR.search(lines[lineno - 1]) or ANCHOR_ABOVE.fullmatch(lines[lineno - 2])
        assert match is not None, f"no anchor: {lines[lineno - 1]}"
        spec_line = sources[match["file"]][int(match["line"]) - 1]
        assert spec_line.strip(), f"anchor on a blank line: {lines[lineno - 1]}"
        return spec_line

    tree = ast.parse(text)
    world_class = next(node for node in tree.body if isinstance(node, ast.ClassDef)
                       and any(isinstance(b, ast.Name) and b.id == "Episode" for b in node.bases))
    count = 0
    for fn in world_class.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name.startswith(("tool_", "fn_"))):
            continue
        kind, _, name = fn.name.partition("_")
        # a tool's definition starts at its `@tool(...)` declaration, which names the spec's
        # place (`where='clinic.world:274'`) and so needs no anchor comment beside it
        declared = [k.value for d in fn.decorator_list if isinstance(d, ast.Call)
                    for k in d.keywords if k.arg == "where"]
        if declared:
            assert isinstance(declared[0], ast.Constant), fn.name
            file, _, line = str(declared[0].value).rpartition(":")
            head = sources[file][int(line) - 1]
            assert not ANCHOR.search(lines[fn.decorator_list[0].lineno - 1]), fn.name
        else:
            head = target(fn.lineno)
        assert re.search(rf"\b{kind} \w+\(", head), (fn.name, head)
        assert name.rstrip("_").lstrip("x") in head, (fn.name, head)
        body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) and \
            isinstance(fn.body[0].value, ast.Constant) else fn.body
        for stmt in body:  # the top-level statements: every one is anchored
            spec_line = target(stmt.lineno)
            words = STATEMENT_WORDS.get(type(stmt))
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                call = ast.unparse(stmt.value.func)
                words = {"self.insert": ("insert",), "self.delete": ("delete",),
                         "self.fail": ("fail",),
                         "self.set_field": ("=", "append", "remove"),
                         "self.set_state": ("=", "append", "remove")}.get(call, words)
            if words is not None:
                assert any(w in spec_line for w in words), (ast.unparse(stmt)[:60], spec_line)
            count += 1
    return count


def test_tools_and_statements_are_anchored(example_files: dict[str, str]) -> None:
    counted = 0
    for name, text in example_files.items():
        if name.endswith("/world.py"):
            counted += check_anchors(text, spec_lines(name.split("/")[0]))
    assert counted > 200


def test_a_file_name_cannot_inject_code(tmp_path: Path) -> None:
    folder = tmp_path / "specs"
    folder.mkdir()
    evil = folder / "evil\nraise SystemExit(3)\n#.world"
    evil.write_text('world Evil "e"\nstate { n: int = 0 }\ntool bump() -> int "Bump." {\n'
                    '  n += 1\n  return n\n}\n', encoding="utf-8")
    files = build_files([folder])
    text = files["evil/world.py"]
    assert "\nraise SystemExit" not in text
    tree = ast.parse(text)
    assert not any(isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                   and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "SystemExit"
                   for node in ast.walk(tree))
    # the name escaped where it is written: the tool's declaration and statements' anchors
    assert r"where='evil\\nraise SystemExit(3)\\n#.world:3'" in text
    assert "# evil\\nraise SystemExit(3)\\n#.world:5" in text


# ---------------------------------------------------------------------- safety
STDLIB = set(sys.stdlib_module_names)


def assert_safe(files: dict[str, str]) -> None:
    for name, tree in modules(files):
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    root = alias.name.split(".")[0]
                    assert root in STDLIB and root != "importlib", (name, alias.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    # the package and its property-test module import the world module
                    assert name.endswith(("/__init__.py", "/test_world.py")) \
                        and node.module == "world", name
                    continue
                module = node.module or ""
                root = module.split(".")[0]
                # a world imports the runtime only; its property tests also the test tools
                floors = ("worldspec.runtime", "worldspec.testing") \
                    if name.endswith("/test_world.py") else ("worldspec.runtime",)
                assert (root in STDLIB and root != "importlib") or module == "__future__" \
                    or any(module == floor or module.startswith(floor + ".")
                           for floor in floors), (name, module)
            elif isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else (
                    func.attr if isinstance(func, ast.Attribute) else None)
                assert called not in FORBIDDEN_CALLS, (name, ast.unparse(node)[:80])
            elif isinstance(node, ast.Name):
                assert node.id not in {"eval", "exec", "__import__", "compile", "importlib",
                                       "__builtins__"}, (name, node.id)
            elif isinstance(node, ast.Attribute):
                assert node.attr not in {"__import__", "__builtins__", "__globals__",
                                         "__subclasses__", "__code__"}, (name, node.attr)


def test_generated_examples_are_safe(example_files: dict[str, str]) -> None:
    assert_safe(example_files)


def test_safety_check_catches_forbidden_code() -> None:
    assert_safe({"p/world.py": "import os\nfrom worldspec.runtime import helpers as rt"})
    for bad in ("eval('1')", "import importlib", "from compiler import api", "import lark",
                "x = __import__('os')", "exec('')", "from importlib import util",
                "rt.__builtins__", "from worldspec.testing.hypothesis_suite import x"):
        with pytest.raises(AssertionError):
            assert_safe({"p/world.py": bad})
    assert_safe({"p/test_world.py": "from worldspec.testing.hypothesis_suite import x"})


# ------------------------------------------------------------------ hostile specs
@dataclass
class HostileBuild:
    files: dict[str, str]
    out: Path
    mypy: subprocess.CompletedProcess[str]
    worlds: dict[str, type[Episode]]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileBuild:
    result = check_specs(HOSTILE_FILES)
    assert result.ok, [f"{d.span}: {d.message}" for d in result.errors]
    build = generate_all(result)
    out = tmp_path_factory.mktemp("hostile")
    write_packages(build, out)
    files = {f"{p.name}/{rel}": text for p in build.packages for rel, text in p.files.items()}
    mypy = mypy_strict(out, tmp_path_factory.mktemp("mypy-cache"))
    loaded: dict[str, ModuleType] = {p.world: load_package(out / p.name)
                                     for p in build.packages}
    return HostileBuild(files, out, mypy, {w: m.World for w, m in loaded.items()})


@pytest.mark.parametrize("path", HOSTILE_FILES, ids=lambda p: p.stem)
def test_hostile_spec_checks_clean(path: Path) -> None:
    result = check_specs([path])
    assert result.diagnostics == (), [f"{d.span}: {d.message}" for d in result.diagnostics]
    assert len(result.model.worlds) == 1


def test_hostile_packages_pass_mypy_strict(hostile: HostileBuild) -> None:
    assert hostile.mypy.returncode == 0, hostile.mypy.stdout + hostile.mypy.stderr
    assert set(hostile.worlds) == {"class", "d", "HostileStrings"}


def test_hostile_packages_are_safe_and_anchored(hostile: HostileBuild) -> None:
    assert_safe(hostile.files)
    for name, text in hostile.files.items():
        if name.endswith("/world.py"):
            assert check_anchors(text, spec_lines("hostile")) > 5


def test_hostile_payload_is_never_code(hostile: HostileBuild) -> None:
    """The code-shaped text only ever appears inside string constants."""
    text = hostile.files["hostile_strings/world.py"]
    tree = ast.parse(text)
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert not any("__import__" in c or "system" in c for c in calls)
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                 and isinstance(n.value, str)]
    assert any("__import__('os').system('x')" in c for c in constants)


# --- strings: every hostile text comes back exactly (bfcl: the value itself)
PAYLOAD = "\" + __import__('os').system('x') + \""

STRING_RESULTS: list[tuple[str, dict[str, Any], Any]] = [
    ("quotes", {}, "\"double\" 'single' \"\"\" '''"),
    ("backslashes", {}, "\\ \\\\ \\n \\x00 \\u0041 \\"),
    ("template_syntax", {}, "{{ 7*7 }} {% for x in y %}{% endfor %} {# c #} {{{{ }}}}"),
    ("control_chars", {}, "\x00\x00\t\r\n\x1b[31m\x7f\U0010ffff"),
    ("unicode_text", {}, "\u05e9\u05dc\u05d5\u05dd \u202eevil\u202c \U0001f600\U0001f469\u200d"
                         "\U0001f469\u200d\U0001f467 e\u0301 \u2028\u2029 \U0001f600 \ufdfd"),
    ("raw_unicode", {}, "\u202eevil\u202c e\u0301 \u2028 \u2029 \u200f\u05d0 \ufeff"),
    ("injection", {}, {"error": PAYLOAD + "x"}),
    ("injection", {"who": "{{ who }}\\"}, {"error": PAYLOAD + "{{ who }}\\"}),
    ("fstring_braces", {}, "{literal} 7 {7}     7 \"q\" \\ {% x %} 7.00"),
    ("fstring_braces", {"n": -3}, "{literal} -3 {-3}    -3 \"q\" \\ {% x %} -3.00"),
    ("fail_fstring", {}, {"error": "\"\"\" 1 \\ { } {% %} \x00 ''' \"+__import__('os')+\""}),
    ("moods", {}, ["{{ calm }}", "\"\"\"", "\\"]),
    ("echo", {"text": PAYLOAD + "\"\"\"{{"}, {"text": PAYLOAD + "\"\"\"{{"}),
    ("greeting", {}, "}} {{ {% endraw %} \x00 \t\r\n"),
    ("pattern", {"text": "\"'\\{}%"}, "\"'\\{}%"),
    ("pattern", {"text": "a"}, {"error": "text: \"a\" does not match /^[\"'\\\\{}%]+$/"}),
    ("keys", {}, {"\"k\"": 1, "{{k}}": 2, "\\": 3, "'''": 4, "\x00": 5}),
    ("default_body", {"id": "\x00"}, {"id": "\x00", "body": "default \"\"\" body \\n literal"}),
]


@pytest.mark.parametrize(("tool", "args", "expected"), STRING_RESULTS,
                         ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(STRING_RESULTS)])
def test_hostile_strings_come_back_exactly(hostile: HostileBuild, tool: str,
                                           args: dict[str, Any], expected: Any) -> None:
    world = hostile.worlds["HostileStrings"]
    assert world().call(tool, args) == expected
    assert world().call(tool, json.dumps(args)) == expected  # the same through JSON text


def test_hostile_docs_are_exact(hostile: HostileBuild) -> None:
    world = hostile.worlds["HostileStrings"]
    module = sys.modules[world.__module__]
    tools = world.TOOLS
    assert tools["quotes"].doc == \
        "Return a string with \"double\" and 'single' quotes and a triple \"\"\" quote."
    assert tools["backslashes"].doc == "Backslashes: \\ \\\\ \\n \\x00 \\u0041"
    assert tools["template_syntax"].doc == \
        "Jinja: {{ 7*7 }} {% for x in y %}{% endfor %} {# c #}"
    assert tools["control_chars"].doc == "Control characters: \x00 \t \r \n \x1b[31m"
    assert tools["injection"].doc == f"Looks like code: {PAYLOAD}"
    assert tools["injection"].params[0].doc == "Who."
    doc = ("Doc with \"quotes\", 'single', triple \"\"\" quotes, a backslash \\ and "
           "{{ jinja }} {% if x %}.\nEnds with a quote: \"")
    assert world.DESCRIPTION == doc  # a constant, which `python -OO` keeps
    assert module.__doc__ == f"HostileStrings: {doc}"
    assert module.Mood.__doc__ == "An enum doc with \"\"\" and {{ x }}."
    assert module.Echo.__doc__ == "A record doc: \"\"\" then a backslash \\"
    assert module.Note.__doc__ == "Note {{ }} {% %}"
    assert [m.value for m in module.Mood] == ["{{ calm }}", "\"\"\"", "\\"]
    chat = {t["function"]["name"]: t["function"] for t in world().tools("chat")}
    assert chat["injection"]["description"] == tools["injection"].doc
    assert chat["injection"]["parameters"]["properties"]["who"]["description"] == "Who."
    pattern = chat["pattern"]["parameters"]["properties"]["text"]
    assert pattern["pattern"] == "^[\"'\\\\{}%]+$"
    assert pattern["description"] == "A weird string."


def test_hostile_task_is_exact(hostile: HostileBuild) -> None:
    world = hostile.worlds["HostileStrings"]
    task = world.TASKS["hostile_task"]
    assert task.instruction == ("Instruction with \"quotes\", a triple \"\"\" quote, "
                                "{{ jinja }}, {% tags %} and \\.")
    assert task.persona == f"Persona {PAYLOAD}"
    assert (task.known, task.unknown) == ("Known {{ }}", "Unknown {% %}")
    assert task.doc == "Task doc \"\"\" {{ x }} \\"
    assert task.checks[0].doc == "Doc with \"\"\" and {{ }}."
    assert task.solution == (("default_body", {"id": PAYLOAD}),)
    episode = world(task="hostile_task")
    assert [row["id"] for row in episode.export_state()["notes"]] == ["\"\"\"", "\x00 {{ }}"]
    assert episode.score().reward < 1.0
    for name, args in task.solution:
        assert not episode.failed(episode.call(name, dict(args)))
    score = episode.score()
    assert score.reward == 1.0 and score.frame_ok, score.to_json()
    assert episode.export_state()["notes"][2]["id"] == PAYLOAD


def test_a_hostile_state_alias_is_only_a_key(hostile: HostileBuild) -> None:
    """A state item's alias (`from "..."`) full of quotes, braces and code loads as a plain
    data key; the item keeps its name in export_state()."""
    world = hostile.worlds["HostileStrings"]
    alias = "{index}}' " + PAYLOAD + "\x00"
    episode = world(data={alias: "hi"})
    assert episode.call("greeting", {}) == "hi"
    assert episode.export_state()["greeting"] == "hi" and alias not in episode.export_state()
    with pytest.raises(ValueError, match=r'\$\["\{index\}\}'):
        world(data={alias: 1})


# --- keywords: names that are Python keywords, builtins and runtime names
def test_keyword_names_work(hostile: HostileBuild) -> None:
    world = hostile.worlds["class"]
    assert world.WORLD == "class"
    assert list(world.TOOLS) == ["None", "__init__", "insert_row", "defaults"]
    schema = {t["name"]: t["parameters"] for t in world().tools("responses")}
    assert list(schema["None"]["properties"]) == ["import", "lambda"]
    episode = world()
    assert episode.call("None", {"import": "x"}) == {
        "success": True, "data": {"def": "x!", "len": 1, "print": False}}
    assert episode.call("None", {"import": "y", "lambda": 4})["data"]["len"] == 4
    row = episode.call("insert_row", {"key": "k1"})
    assert row == {"success": True, "data": {
        "key": "k1", "export": 0, "clone": "", "digest": "", "type": "value", "__x": "dunder",
        "_digest": "not the cache", "match": None, "self": None}}
    assert episode.call("insert_row", {"key": "k2", "type": "mro"})["data"]["type"] == "mro"
    assert episode.call("insert_row", {"key": "k3", "type": "nope"})["success"] is False
    assert episode.call("__init__", {"key": "k2"}) == {
        "success": True, "data": "k2:dunder:not the cache:mro"}
    assert episode.call("defaults", {"key": "k4"}) == {
        "success": True, "data": "name/dunder/not the cache/3"}
    state = episode.export_state()
    assert (state["print"], state["__init__"], state["lambda"]) == (5, 2, ["k1", "k2"])
    # the row field named _digest is data, not the row's hash cache
    before = episode.state_hash()
    assert episode.call("insert_row", {"key": "k1"})["success"] is False
    assert episode.state_hash() == before


def test_keyword_task_scores(hostile: HostileBuild) -> None:
    world = hostile.worlds["class"]
    episode = world(task="def")
    assert episode.score().reward == 0.5
    for name, args in world.TASKS["def"].solution:
        episode.call(name, dict(args))
    assert episode.score().reward == 1.0
    assert [c.name for c in episode.score().checks] == ["None", "self"]


# --- boilerplate: type names that are the generated code's own local names
def test_boilerplate_names_work(hostile: HostileBuild) -> None:
    world = hostile.worlds["d"]
    module = sys.modules[world.__module__]
    members = module.x_  # the enum x: a class may not be called like a loader's local
    assert [m.value for m in members] == ["upper", "KEY", "title", "format", "count", "value",
                                          "name"]
    assert members("upper").upper() == "UPPER"  # members do not shadow str methods
    assert members("title").title() == "Title"
    episode = world()
    made = json.loads(episode.call("make", {"id": "r1"}))
    assert made["path"] == {"p": {"x": "title", "k": "k"},
                            "data": [{"x": "title", "k": "k"}, {"x": "count", "k": "k"}]}
    assert json.loads(episode.call("names", {"c": "r1"})) == [
        "def", "def_", "_def", "x_def", "__def", "title", "k"]
    assert json.loads(episode.call("members")) == ["upper", "KEY", "title", "format", "count",
                                                   "value", "name"]
    assert episode.call("kind") == "two:2"
    json.loads(episode.call("make", {"id": "r2", "d": "KEY"}))
    assert episode.export_state()["other"] == "KEY"
    assert episode.call("names", {"c": "zz"}) == "Error: cls \"zz\" not found."


def test_tasks_whose_check_names_share_underscores_stay_apart(hostile: HostileBuild) -> None:
    world = hostile.worlds["d"]
    for task in ("a__b", "a"):
        episode = world(task=task)
        for name, args in world.TASKS[task].solution:
            episode.call(name, dict(args))
        assert episode.score().reward == 1.0, (task, episode.score().to_json())
    empty = world(task="a")  # its check fails on the initial state: its own function runs
    assert empty.score().reward == 0.0


def test_a_default_that_may_be_none_too_passes_mypy_strict(tmp_path: Path) -> None:
    """`a.get(k) ?? b.get(k)` may be none as a whole: the generated code says so (mypy --strict
    refused the helper typed for a default that is never none) and gives the first present
    value."""
    spec = tmp_path / "either.world"
    spec.write_text(textwrap.dedent("""\
        world Either "Two tables looked up in turn."
        const FIRST = {"a": 1.0}
        const SECOND = {"a": 3.0, "b": 2.0}
        tool pick(key: str "A key.") -> float? "The first table's value, else the second's." {
          return FIRST.get(key) ?? SECOND.get(key)
        }
        """), encoding="utf-8")
    result = check_specs([spec])
    assert result.ok, [d.message for d in result.errors]
    build = generate_all(result)
    out = tmp_path / "out"
    write_packages(build, out)
    assert "rt.coalesce_optional(" in build.packages[0].files["world.py"]
    mypy = mypy_strict(out, tmp_path / "mypy-cache")
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    world = load_package(out / build.packages[0].name).World
    assert [world().call("pick", {"key": k})["data"] for k in ("a", "b", "c")] == [1.0, 2.0, None]


def test_assigning_a_record_field_makes_a_new_record(tmp_path: Path) -> None:
    """`order.address.city = city` and `a.city = ...` rebuild the record (``rt.replace_fields``,
    as ``dataclasses.replace`` did): the old value is left as it was, the new one has its own
    JSON text, and the package passes mypy --strict."""
    spec = tmp_path / "moves.world"
    spec.write_text(textwrap.dedent("""\
        world Moves "An order whose address is changed one field at a time."
        config { results: bfcl }
        state { orders: table Order }
        record Address "Where an order ships." { street: str  city: str }
        entity Order "An order." {
          key id: str
          address: Address
        }
        tool move(order: Order "The order.", city: str "The new city.") -> Address "The address." {
          order.address.city = city
          return order.address
        }
        tool shifted(street: str "A street.") -> Address "An address built, then changed." {
          let a = Address(street: street, city: "Austin")
          a.city = "Boston"
          return a
        }
        """), encoding="utf-8")
    result = check_specs([spec])
    assert result.ok, [d.message for d in result.errors]
    build = generate_all(result)
    out = tmp_path / "out"
    write_packages(build, out)
    assert build.packages[0].files["world.py"].count("rt.replace_fields(") == 2
    mypy = mypy_strict(out, tmp_path / "mypy-cache")
    assert mypy.returncode == 0, mypy.stdout + mypy.stderr
    world = load_package(out / build.packages[0].name).World
    ep = world(data={"orders": [{"id": "o1", "address": {"street": "1 Main", "city": "Austin"}}]})
    before = ep.tables["orders"].row("o1").address
    assert before._json_text() == '{"street": "1 Main", "city": "Austin"}'
    assert ep.call("move", {"order": "o1", "city": "Dallas"}) == {"street": "1 Main",
                                                                  "city": "Dallas"}
    after = ep.tables["orders"].row("o1").address
    assert repr(before) == "Address(street='1 Main', city='Austin')"
    assert repr(after) == "Address(street='1 Main', city='Dallas')"
    assert after._json_text() == '{"street": "1 Main", "city": "Dallas"}'
    assert ep.export_state() == {"orders": [{"id": "o1", "address": {"street": "1 Main",
                                                                      "city": "Dallas"}}]}
    assert ep.call("shifted", {"street": "Elm"}) == {"street": "Elm", "city": "Boston"}
