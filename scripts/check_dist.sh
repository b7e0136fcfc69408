#!/usr/bin/env bash
# The release artefacts: `python -m build` makes the sdist and, from it, the wheel, and
# `twine check --strict` accepts both (metadata, the README as the long description).
#
#   1. `build` and `twine` from the package index into a fresh venv in a temporary folder;
#   2. `python -m build` into DIST (default dist/): the sdist, then the wheel built from the
#      unpacked sdist, so a file the sdist leaves out breaks the wheel here, not for a user;
#   3. `twine check --strict` on both; the wheel holds the grammar, the templates, py.typed
#      and one top-level package.
#
# Usage: scripts/check_dist.sh [DIST]   (run by `make dist`, which `make test` runs). Needs
# the package index (or a pip cache), as `make test` does.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
DIST="$(mkdir -p "${1:-$ROOT/dist}" && cd "${1:-$ROOT/dist}" && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "dist: build and twine into a fresh venv"
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --upgrade pip
"$WORK/venv/bin/python" -m pip install -q build twine
rm -f "$DIST"/worldspec-*
echo "dist: python -m build (the sdist, then the wheel from it)"
"$WORK/venv/bin/python" -m build --outdir "$DIST" "$ROOT" > "$WORK/build.log" 2>&1 \
    || { tail -40 "$WORK/build.log"; exit 1; }
"$WORK/venv/bin/twine" check --strict "$DIST"/worldspec-*
"$WORK/venv/bin/python" - "$DIST" <<'PY'
import sys
import zipfile
from pathlib import Path

dist = Path(sys.argv[1])
(wheel,) = dist.glob("worldspec-*.whl")
(sdist,) = dist.glob("worldspec-*.tar.gz")
names = zipfile.ZipFile(wheel).namelist()
top = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
assert top == {"worldspec"}, f"top-level entries of the wheel: {sorted(top)}"
for needed in ("worldspec/py.typed", "worldspec/dsl/worldspec.lark", "worldspec/cli/main.py"):
    assert needed in names, f"{needed} is not in {wheel.name}"
assert any(n.startswith("worldspec/codegen_templates/") and n.endswith(".jinja") for n in names)
print(f"dist: {sdist.name} and {wheel.name} ({len(names)} files) pass twine check")
PY
