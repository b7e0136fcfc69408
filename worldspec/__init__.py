"""WorldSpec: a typed language and compiler for stateful tool environments for LLM agents.

The library API is re-exported here so callers need not know the package
layout: :func:`check_paths` checks files and folders, :func:`check_source`
checks one in-memory text, and both return a :class:`CheckResult` holding the
diagnostics and the typed model. The command line lives in
:mod:`worldspec.cli`.
"""

from __future__ import annotations

from compiler.api import CheckResult, check_paths, check_source

__all__ = ["__version__", "CheckResult", "check_paths", "check_source"]

__version__ = "0.1.0"
