# The two set-up commands of the README: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: install demo test check-install dist test-extras editor lint bench tau2-tasks clean

$(BIN)/worldspec: pyproject.toml environments/messaging_world/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch's CPU build first (from the package index, ~190 MB instead of the CUDA build's GBs):
	# trl takes the torch that is there
	$(BIN)/pip install -q 'torch==2.13.0+cpu' || $(BIN)/pip install -q torch
	$(BIN)/pip install -q -e '.[dev,serve,ray,port,lsp,verifiers,trl]'
	# the verifiers environment package: `vf-eval messaging-world` imports it by the taskset id
	$(BIN)/pip install -q ./environments/messaging_world
	$(BIN)/pip check
	touch $(BIN)/worldspec

install: $(BIN)/worldspec

demo: install
	$(BIN)/worldspec check examples
	$(BIN)/worldspec run examples/messaging --task reply_to_priya --solution

test: install
	$(BIN)/pip install -q --no-deps bfcl-eval==2026.3.23 mpmath
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/worldspec check examples
	$(BIN)/worldspec fmt --check examples
	$(BIN)/worldspec build --check examples
	# the synthesised corpus (docs/llm.md, synth corpus): every task validates, property tests pass
	if [ -d examples/corpus ]; then $(BIN)/worldspec tasks examples/corpus && \
		$(BIN)/worldspec test examples/corpus; fi
	$(BIN)/mypy --strict generated
	$(MAKE) editor
	# two workers (CI has two cores), one test file per worker at a time: module fixtures stay shared
	$(BIN)/pytest -n auto --dist loadfile
	bash scripts/check_install.sh $(BIN)/python
	$(MAKE) dist
	$(MAKE) test-extras

# The VS Code extension (editors/vscode): its npm dependencies from the lock file, the client
# parses, the TextMate grammar against its goldens (vscode-textmate), and it packages with vsce
# (into a temporary folder: nothing is published).
editor:
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error
	node --check editors/vscode/src/extension.js
	cd editors/vscode && node test/grammar.test.js
	tmp=$$(mktemp -d) && (cd editors/vscode && npx --no-install vsce package \
		--allow-missing-repository --skip-license -o "$$tmp/worldspec.vsix") && \
		$(BIN)/python -m zipfile -l "$$tmp/worldspec.vsix" | grep extension/syntaxes/worldspec.tmLanguage.json > /dev/null; \
		status=$$?; rm -rf "$$tmp"; exit $$status

# OpenEnv in a venv of its own: openenv 0.10 pins fastmcp 3 and so the MCP SDK 1.x, which the
# serve extra (the SDK 2.x) cannot share. verifiers and trl are in the main venv.
test-extras:
	bash scripts/test_extra.sh openenv

# A plain (non-editable) install into a fresh venv, used outside the checkout: one top-level
# package, check/build/run work, mypy --strict passes on built worlds, which load the runtime only.
check-install: install
	bash scripts/check_install.sh $(BIN)/python

# The release artefacts: `python -m build` makes the sdist and the wheel (from the sdist) in
# dist/, and `twine check --strict` accepts both; build and twine come from the package index
# into a throwaway venv (scripts/check_dist.sh).
dist:
	PYTHON=$(PYTHON) bash scripts/check_dist.sh dist

bench: install
	$(BIN)/pip install -q --no-deps bfcl-eval==2026.3.23 mpmath
	$(BIN)/python benchmarks/goals.py
	$(BIN)/python benchmarks/bench_compile.py
	$(BIN)/python benchmarks/bench_lsp.py

# tau2-bench retail's 114 tasks as WorldSpec tasks (from $WORLDSPEC_TAU2_CHECKOUT, a tau2-bench
# clone, else $WORLDSPEC_PEERS, default ../shared/peers: scripts/tau2_data.py)
tau2-tasks: install
	$(BIN)/python scripts/tau2_tasks.py
	$(BIN)/worldspec tasks build/tau2 || true

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
