"""Shared pytest configuration: the Hypothesis profiles every property test runs under.

Pick a profile with the ``HYPOTHESIS_PROFILE`` environment variable:

- ``dev`` (the default): 200 examples per property, no deadline;
- ``ci``: 50 examples, derandomized so a CI run is reproducible, failing
  examples printed as a blob that ``@reproduce_failure`` accepts;
- ``nightly``: 5000 examples, for a long search.

Deadlines are off everywhere: checking a spec may legitimately take longer on
a loaded machine, and a flaky timing failure teaches nothing about correctness.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=50,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.register_profile("nightly", max_examples=5000, deadline=None)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
