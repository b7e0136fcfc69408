"""docs/port.md shows the skeleton of its worked example as the tool writes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from worldspec.port.skeleton import emit_skeleton, read_class

ROOT = Path(__file__).resolve().parents[1]
CLASSES = ROOT / "tests" / "port_classes"


def test_the_documented_skeleton_is_the_tools_output() -> None:
    doc = (ROOT / "docs" / "port.md").read_text(encoding="utf-8")
    shown = re.findall(r"```world\n(.*?)```", doc, flags=re.DOTALL)[0]
    source = CLASSES / "inventory.py"
    data = json.loads((CLASSES / "inventory.json").read_text(encoding="utf-8"))
    info = read_class(source.read_text(encoding="utf-8"), "InventoryEnv", source.name)
    assert emit_skeleton(info, data, source_name=source.name).text == shown
