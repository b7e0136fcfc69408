"""WorldSpec: a typed language and compiler for stateful tool environments for LLM agents.

The library API is re-exported here, loaded on first use so that importing
``worldspec`` (as every generated world does, through ``worldspec.runtime``)
loads nothing of the compiler:

- :func:`check_paths` checks spec files and folders and validates every task by
  running it; it returns a :class:`ValidatedResult` (the diagnostics of both, the
  typed model, and a :class:`TaskReport` per task with its status);
- :func:`check_source` checks one in-memory spec (its tasks are type-checked, not
  run) and returns a :class:`CheckResult` with the diagnostics and the typed model;
- :func:`load_world` gives the generated ``Episode`` class of a spec or of a
  generated package.

The command line lives in :mod:`worldspec.cli`; the floors of the package are
described in ``docs/api.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worldspec.compiler.api import CheckResult, check_source
    from worldspec.services.loading import load_world
    from worldspec.services.validation import TaskReport, ValidatedResult, check_paths

__all__ = ["__version__", "CheckResult", "TaskReport", "ValidatedResult", "check_paths",
           "check_source", "load_world"]

__version__ = "0.1.0"

#: public name -> the module that defines it (imported on first use)
_LAZY = {
    "CheckResult": "worldspec.compiler.api",
    "check_source": "worldspec.compiler.api",
    "check_paths": "worldspec.services.validation",
    "TaskReport": "worldspec.services.validation",
    "ValidatedResult": "worldspec.services.validation",
    "load_world": "worldspec.services.loading",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'worldspec' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
