"""benchmarks/codegen_shape.py: the counts it reports are the generated code's, and its reading of
a private runtime attribute says yes and no where it must."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "codegen_shape.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("codegen_shape", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["codegen_shape"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_a_private_runtime_attribute_is_told_from_pythons_own_names() -> None:
    private = _module()._private
    assert private("        self._undo.append((0, row, 'presence'))")
    assert private("        row._stale |= 32  # messaging.world:283")
    assert not private("        self.set_field(row, 'presence', Presence.offline)")
    assert not private("        return value._value_")  # the enum module's own name
    assert not private("        cls.__slots__ = ()")
    assert not private("        x = 1  # see self._undo")  # a comment is no code


def test_the_counts_are_those_of_the_generated_file() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--json", "examples/messaging"],
                          cwd=ROOT, capture_output=True, text=True, check=True, timeout=300)
    (row,) = json.loads(done.stdout)
    generated = (ROOT / "generated" / row["world"] / "world.py").read_text().splitlines()
    spec = sum(len(p.read_text().splitlines())
               for p in (ROOT / "examples" / "messaging").glob("*.world"))
    assert row["generated_lines"] == len(generated)
    assert row["spec_lines"] == spec
    assert row["long_lines"] == sum(len(line) > 100 for line in generated)
    assert row["ratio"] == round(len(generated) / spec, 3)


def test_no_checked_in_world_reaches_a_private_attribute() -> None:
    """Unions, tasks and state are declared to the runtime, which keeps its mechanics: no
    generated line reads a ``_``-attribute (a union's text once read ``value._json_text()``,
    a world's ``_load`` called ``self._on_load()``)."""
    private = _module()._private
    found = {path.parent.name: [line.strip() for line in path.read_text().splitlines()
                                if private(line)]
             for path in sorted((ROOT / "generated").glob("*/world.py"))}
    assert len(found) >= 20
    assert {world: lines for world, lines in found.items() if lines} == {}
    assert private("    body: str = value._json_text()")
    assert not private("    return r.note == 'vp._A+Lx'")  # a text's words are no attribute
