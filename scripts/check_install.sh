#!/usr/bin/env bash
# The package as users meet it: a plain (non-editable) install into a fresh venv, used from a
# folder outside the checkout, in fresh processes.
#
#   1. build the wheel and install it (with mypy) into a new venv in a temporary folder;
#   2. the installed tree holds one top-level package, `worldspec` (no `dsl`, `compiler` ...);
#   3. `worldspec check` / `build` / `run` on a copy of the examples, outside the checkout;
#   4. `mypy --strict` on the freshly built worlds (needs the shipped py.typed);
#   5. importing a built world loads the runtime and the standard library only.
#
# Usage: scripts/check_install.sh [PYTHON]   (default: python3). Needs the package index (or a
# pip cache) for the dependencies, as `make test` does.
set -euo pipefail
PYTHON="${1:-python3}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "check-install: building the wheel"
"$PYTHON" -m pip wheel -q --no-deps -w "$WORK/dist" "$ROOT" 2>/dev/null
"$PYTHON" -m venv "$WORK/venv"
echo "check-install: installing it into a fresh venv"
"$WORK/venv/bin/pip" install -q "$WORK"/dist/worldspec-*.whl "mypy>=1.10,<3"
cp -R "$ROOT/examples" "$WORK/examples"
cd "$WORK"

"$WORK/venv/bin/python" - <<'PY'
import importlib.metadata as md
top = md.distribution("worldspec").read_text("top_level.txt").split()
files = {str(f).split("/")[0] for f in md.distribution("worldspec").files or ()}
assert top == ["worldspec"], f"top-level packages: {top}"
assert files <= {"worldspec", "worldspec-0.1.0.dist-info", "..", "__pycache__"}, files
print("check-install: one top-level package:", top[0])
PY
"$WORK/venv/bin/worldspec" check examples
"$WORK/venv/bin/worldspec" build examples -o built
"$WORK/venv/bin/worldspec" run examples/messaging --task reply_to_priya --solution > run.txt
echo "check-install: mypy --strict on the built worlds"
"$WORK/venv/bin/mypy" --strict --no-incremental built
"$WORK/venv/bin/python" - <<'PY'
import importlib, pathlib, sys
before = set(sys.modules)  # the interpreter's own start-up (site machinery)
sys.path.insert(0, "built")
for world in sorted(p.name for p in pathlib.Path("built").iterdir() if (p / "world.py").exists()):
    importlib.import_module(world)
foreign = sorted(m for m in set(sys.modules) - before
                 if m.split(".")[0] not in sys.stdlib_module_names
                 and not m.startswith("worldspec.runtime") and m != "worldspec"
                 and not (pathlib.Path("built") / m.split(".")[0]).exists())
assert not foreign, f"a built world loaded {foreign}"
print("check-install: built worlds import the runtime only")
PY
echo "check-install: ok"
