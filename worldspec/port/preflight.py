"""Before a port or a comparison: does the original import and build, with every initial data?

:func:`preflight` loads the original in the sandbox once per ``--init-data`` file (or once
with no data), exactly as the comparison will, and answers None or one line saying why it
does not load. ``worldspec port`` runs it before its first model request, so a class whose
dependencies are missing costs no tokens; ``worldspec compare`` runs it before compiling the
world. A missing module is the common case: the line then points at ``--python``.
"""

from __future__ import annotations

import re
from typing import Any

from worldspec.port.compare import Original
from worldspec.port.sandbox import Limits, SandboxError, SandboxStopped

__all__ = ["preflight"]

#: an error that an interpreter with the original's dependencies would not raise
_MISSING_MODULE = re.compile(r"^(ModuleNotFoundError|ImportError)\b")

_PYTHON_HINT = " (run it with --python PATH, an interpreter that has its dependencies)"


def preflight(original: Original, limits: Limits, *, trusted: bool = False) -> str | None:
    """None when ``original`` imports and builds with each of its initial data (each of
    ``original.init_data_files``, else ``original.data``), else one line: why not."""
    inits: list[tuple[str | None, Any]] = [*original.init_data_files] or [(None, original.data)]
    for name, data in inits:
        box = original.sandbox(limits, trusted, data)
        try:
            box.reset()
        except SandboxStopped as exc:
            return _line(name, exc.reason)
        except SandboxError as exc:
            return _line(name, str(exc))
        finally:
            box.close()
    return None


def _line(name: str | None, error: str) -> str:
    first = next((x.strip() for x in error.splitlines() if x.strip()), "no reason given")
    first = first.removeprefix("the original ")  # a stop's reason: "the original exited ..."
    where = f" with --init-data {name}" if name is not None and _data_matters(first) else ""
    hint = _PYTHON_HINT if _MISSING_MODULE.match(first) else ""
    return f"the original does not load{where}: {first}{hint}"


def _data_matters(error: str) -> bool:
    """Whether the failure can depend on the data (an import error cannot)."""
    return not (_MISSING_MODULE.match(error) or error.startswith("SyntaxError"))
