#!/usr/bin/env bash
# The tests of one optional extra, in a venv of its own. OpenEnv needs it: openenv 0.10 pins
# fastmcp 3 and so the MCP SDK 1.x (mcp<2), while the serve extra (and verifiers 0.4, which pins
# mcp==2.0.0) take the SDK 2.x. verifiers and trl are in the main venv (make install, with the
# environments/messaging_world package) and run in its pytest run; the script still takes
# verifiers, to try it alone.
#
#   1. a fresh venv in build/venv-NAME (removed first), from $PYTHON (default python3, >= 3.11);
#   2. the project installed with that extra (`pip install -e '.[NAME]'`), plus pytest and
#      hypothesis, and the extra's own packages of the repository (verifiers: the environment
#      package environments/messaging_world, which `vf-eval messaging-world` imports);
#   3. that extra's tests, tests/adapters/test_NAME.py, run with CI=${CI:-} WORLDSPEC_EXTRA=NAME:
#      under CI=true a framework that does not import fails the run instead of skipping it.
#
# Usage: scripts/test_extra.sh NAME [PYTEST ARGS...]   NAME: verifiers | openenv
# Works from a fresh clone; needs the package index (or a pip cache), as `make test` does.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
NAME="${1:-}"
EXTRAS="verifiers openenv"
if [[ -z "$NAME" || " $EXTRAS " != *" $NAME "* ]]; then
    echo "usage: scripts/test_extra.sh NAME [PYTEST ARGS...]  (NAME: ${EXTRAS// / | })" >&2
    exit 2
fi
shift
TESTS="$ROOT/tests/adapters/test_$NAME.py"
VENV="$ROOT/build/venv-$NAME"
started=$(date +%s)

echo "test-extra $NAME: a fresh venv in build/venv-$NAME"
rm -rf "$VENV"
mkdir -p "$ROOT/build"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --upgrade pip
echo "test-extra $NAME: installing worldspec[$NAME], pytest, hypothesis"
"$VENV/bin/python" -m pip install -q -e "$ROOT[$NAME]" "pytest>=8,<10" "hypothesis>=6.100,<7"
if [[ "$NAME" == verifiers ]]; then
    echo "test-extra $NAME: installing environments/messaging_world (vf-eval's taskset id)"
    "$VENV/bin/python" -m pip install -q "$ROOT/environments/messaging_world"
fi

echo "test-extra $NAME: running $(basename "$TESTS")"
cd "$ROOT"
status=0
CI="${CI:-}" WORLDSPEC_EXTRA="$NAME" "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
    "$TESTS" "$@" || status=$?
echo "test-extra $NAME: done in $(( $(date +%s) - started )) s (exit $status)"
exit "$status"
