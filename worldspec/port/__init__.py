"""``worldspec port`` and ``worldspec compare``: from a Python environment class to a world.

- :mod:`~worldspec.port.skeleton` reads a class with libcst (never importing it) and writes
  a spec skeleton: state, one tool per public method, docs, the result convention;
- :mod:`~worldspec.port.sandbox` runs the original class in a resource-limited child
  process, confined by the operating system (:mod:`~worldspec.port.confinement`: bubblewrap's
  namespaces and filesystem view, :mod:`~worldspec.port.seccomp`'s filter: no network, no new
  processes, time and memory limits, a clean environment);
- :mod:`~worldspec.port.compare` is the differential test: hypothesis drives the original
  and a compiled world with the same call sequences and compares results and state;
- :mod:`~worldspec.port.translate` has the model fill in the tool bodies, with the compiler
  and the differential test in the loop.
"""

from __future__ import annotations

__all__ = ["PORT_CONFIRM"]

#: the fresh sequences ``worldspec port`` confirms an agreement on before it accepts a world
#: (per data set). 1,000 let one port through whose world differed on a rare input (a value
#: built up over several calls) that an independent 1,000 found; 5,000 costs 40 to 170 s on the
#: classes of benchmarks/port_e2e.py, little beside the model's time. Here, not in
#: :mod:`~worldspec.port.compare`, so the command line can name it without importing that.
PORT_CONFIRM = 5000
