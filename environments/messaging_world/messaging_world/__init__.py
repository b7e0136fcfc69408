"""The verifiers environment ``messaging-world``: a world's tasks through WorldSpec's adapter.

``vf-eval messaging-world --env.taskset.world generated/mobile_messaging ...`` imports this
package by the taskset id and takes the taskset and harness it exports
(:mod:`worldspec.adapters.verifiers`); ``--env.taskset.world`` names the world, a generated
package or a ``.world`` spec (docs/serving.md).
"""

from __future__ import annotations

from worldspec.adapters.verifiers import WorldHarness, WorldTaskset

__all__ = ["WorldHarness", "WorldTaskset"]
