"""``python -m worldspec``: the same as the ``worldspec`` command."""

from __future__ import annotations

import sys

from worldspec.cli import entry_point

sys.exit(entry_point())
