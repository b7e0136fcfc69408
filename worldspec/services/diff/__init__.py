"""Semantic diffs of specs: what a change means for agents, tasks and recorded data.

``compare`` finds the changes between two checked programs and classifies
each by a row of the rule table (:mod:`worldspec.services.diff.rules`); ``impact``
runs the tasks and recorded trajectories of both sides to show which ones a
change affects; ``render`` turns a report into text, JSON, Markdown or GitHub
annotations; ``sources`` reads a side from disk or from a git revision.
"""

from __future__ import annotations

from worldspec.services.diff.compare import compare_models
from worldspec.services.diff.model import Area, Change, DiffReport, Impact, Level
from worldspec.services.diff.rules import RULES, Rule

__all__ = ["Area", "Change", "DiffReport", "Impact", "Level", "RULES", "Rule", "compare_models"]
