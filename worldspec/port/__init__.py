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
