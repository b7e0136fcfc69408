"""How to install an optional extra, said the same way by every command that needs one.

WorldSpec is installed from a clone or from the wheel ``make dist`` builds (no package index
serves it), so the line names both: ``pip install '.[serve]'`` in a clone, ``pip install
'WHEEL[serve]'`` with the wheel. ``make install`` puts every extra in one venv.
"""

from __future__ import annotations

__all__ = ["install_line"]


def install_line(extra: str) -> str:
    """The pip line that brings ``extra`` in, for a message that ends with it."""
    return (f"pip install '.[{extra}]' in a worldspec clone, or 'WHEEL[{extra}]' with the "
            "built wheel")
