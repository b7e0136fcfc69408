"""The VS Code extension's TextMate grammar against its goldens, with VS Code's tokenizer.

The comparison is a Node script (``editors/vscode/test/grammar.test.js``, on vscode-textmate
and vscode-oniguruma); ``make editor`` installs its npm dependencies first (``make test``
runs it), so here the test is skipped only where they were never installed, and fails
instead under CI (``CI=true``), where a missing tool must never pass by skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTENSION = ROOT / "editors" / "vscode"


@pytest.fixture(scope="module")
def node() -> str:
    found = shutil.which("node")
    if found is None or not (EXTENSION / "node_modules" / "vscode-textmate").is_dir():
        why = "node or the extension's npm dependencies are missing (run: make editor)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return found


def test_the_grammar_tokenises_the_examples_as_the_goldens_say(node: str) -> None:
    out = subprocess.run([node, "test/grammar.test.js"], cwd=EXTENSION, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 failed" in out.stdout


def test_a_broken_grammar_is_caught(node: str, tmp_path: Path) -> None:
    """The comparison can fail: with string scopes renamed, the goldens no longer match."""
    copy = tmp_path / "editors" / "vscode"
    shutil.copytree(EXTENSION, copy, ignore=shutil.ignore_patterns("node_modules"))
    (copy / "node_modules").symlink_to(EXTENSION / "node_modules")
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    grammar_path = copy / "syntaxes" / "worldspec.tmLanguage.json"
    grammar = json.loads(grammar_path.read_text(encoding="utf-8"))
    grammar["repository"]["comment"]["name"] = "comment.block.worldspec"
    grammar_path.write_text(json.dumps(grammar), encoding="utf-8")
    out = subprocess.run([node, "test/grammar.test.js"], cwd=copy, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 1
    assert "FAIL editors/vscode/test/fixtures/constructs.world" in out.stdout, out.stdout


def test_the_extension_declares_the_language_and_its_server() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))
    [language] = manifest["contributes"]["languages"]
    assert language["extensions"] == [".world"]
    [grammar] = manifest["contributes"]["grammars"]
    assert (EXTENSION / grammar["path"]).is_file()
    settings = manifest["contributes"]["configuration"]["properties"]
    assert settings["worldspec.server.command"]["default"] == ["worldspec", "lsp"]
    config = json.loads((EXTENSION / "language-configuration.json").read_text(encoding="utf-8"))
    assert config["comments"]["lineComment"] == "#"
    assert ["{", "}"] in config["brackets"]
    assert (EXTENSION / "package-lock.json").is_file()
