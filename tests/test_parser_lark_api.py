"""The language package uses lark through its public API only.

It imports lark's public modules (``lark``, ``lark.exceptions``, ``lark.lexer`` for the
custom lexer interface, ``lark.common`` for the configuration lark hands that lexer), never
lark's parser internals (``lark.parse_tree_builder``, ``lark.parsers``...); it reaches into
no parser object's internals (``.parser.parser``), and it assigns to nothing of lark's (no
patched callbacks, lexers or module attributes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = sorted((ROOT / "worldspec" / "dsl").glob("*.py"))

#: the lark modules a language module may import from
PUBLIC_MODULES = frozenset({"lark", "lark.exceptions", "lark.lexer", "lark.common"})


def lark_api_misuses(source: str) -> list[str]:
    """What in ``source`` (a Python module) uses lark other than through its public API."""
    tree = ast.parse(source)
    lark_names: set[str] = set()  # names bound to lark's modules or objects
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "lark":
                    lark_names.add(alias.asname or alias.name.split(".")[0])
                    if alias.name not in PUBLIC_MODULES:
                        found.append(f"line {node.lineno}: imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "lark":
            lark_names.update(alias.asname or alias.name for alias in node.names)
            if node.module not in PUBLIC_MODULES:
                found.append(f"line {node.lineno}: imports from {node.module}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr == "parser"
                and isinstance(node.value, ast.Attribute) and node.value.attr == "parser"):
            found.append(f"line {node.lineno}: reaches into .parser.parser")
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            base = target
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(target, ast.Attribute) and isinstance(base, ast.Name) \
                    and base.id in lark_names | {"lark", "parser", "table_parser"}:
                found.append(f"line {target.lineno}: assigns to {ast.unparse(target)}")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "setattr" and node.args
                and isinstance(node.args[0], ast.Name) and node.args[0].id in lark_names):
            found.append(f"line {node.lineno}: setattr on {node.args[0].id}")
    return sorted(set(found), key=lambda line: int(line.split()[1].rstrip(":")))


def test_the_language_package_has_its_parser() -> None:
    assert {"parser.py", "lexer.py", "recovery.py"} <= {p.name for p in LANGUAGE}


@pytest.mark.parametrize("path", LANGUAGE, ids=lambda p: p.name)
def test_the_language_package_uses_lark_through_its_public_api(path: Path) -> None:
    assert lark_api_misuses(path.read_text(encoding="utf-8")) == []


def test_what_the_parser_once_did_is_caught() -> None:
    """The patches the parser made before it used lark's public API, each found."""
    source = '''
import lark.parsers.lalr_parser
from lark import Lark
from lark.parse_tree_builder import ParseTreeBuilder

def build(lark: Lark, lex, wrap) -> None:
    table_parser = lark.parser.parser.parser
    table_parser.callbacks = {rule: wrap(c) for rule, c in table_parser.callbacks.items()}
    lark.parser.lexer.lex = lex
    setattr(Lark, "parse", lex)
'''
    assert lark_api_misuses(source) == [
        "line 2: imports lark.parsers.lalr_parser",
        "line 4: imports from lark.parse_tree_builder",
        "line 7: reaches into .parser.parser",
        "line 8: assigns to table_parser.callbacks",
        "line 9: assigns to lark.parser.lexer.lex",
        "line 10: setattr on Lark",
    ]
