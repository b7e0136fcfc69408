"""``python -m worldspec``: the same as the ``worldspec`` command."""

from __future__ import annotations

import sys

try:
    from worldspec.cli import entry_point
except KeyboardInterrupt:  # Ctrl-C while the command line itself is imported
    sys.stderr.write("worldspec: interrupted\n")
    sys.exit(130)

sys.exit(entry_point())
