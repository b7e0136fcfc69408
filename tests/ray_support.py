"""The local Ray cluster the Ray test modules share: ``ray.init`` on loopback, two CPUs.

Ray starts its workers at nice 15. Beside the other pytest worker (nice 0) on a two-core
machine they then get a few per cent of a core, and an actor that starts in 0.8 s took
30-40 s (so batches that kill and replace workers ran past their time-outs). The raylet reads
``RAY_worker_niceness`` from the environment ``ray.init`` starts it in, so the workers run at
the same nice level as the tests that drive them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

__all__ = ["local_cluster"]


@contextmanager
def local_cluster(ray: Any, python_path: str) -> Iterator[str]:
    """A two-CPU cluster on 127.0.0.1 whose workers import from ``python_path``; its address
    (for drivers in subprocesses). Shut down when the block ends."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_worker_niceness", "0")
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 _node_ip_address="127.0.0.1",  # loopback only
                 runtime_env={"env_vars": {"PYTHONPATH": python_path}})
    try:
        yield str(ray.get_runtime_context().gcs_address)
    finally:
        ray.shutdown()
