"""The example specs that per-file tests (formatter, parser spans, LSP, fuzzing, names) run on.

Every hand-written example, and of the synthesised corpus (``examples/corpus``: 53 worlds
and ~650,000 lines of specs, most of them the inline data of its tasks) a fixed sample: the
twelve worlds of the first corpus and three of the rich worlds added since. The whole corpus
is checked by ``make test`` outside pytest: ``worldspec check``, ``fmt --check`` and
``build --check`` of ``examples``, ``worldspec tasks examples/corpus`` (every task validated,
each reference solution run) and ``worldspec test examples/corpus`` (property tests of every
world), and ``tests/test_corpus_index.py`` holds its index to its files.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CORPUS", "CORPUS_SAMPLE", "EXAMPLES", "example_specs", "in_sample"]

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CORPUS = EXAMPLES / "corpus"

#: the corpus worlds (folders of ``examples/corpus/worlds``) per-file tests run on
CORPUS_SAMPLE = (
    "banking", "car_rental", "clinic_records", "course_enrollment", "event_tickets",
    "helpdesk_tickets", "hotel_bookings", "inventory", "library_loans", "payroll",
    "restaurant_orders", "team_chat",
    # rich worlds: a utility's bills, a food bank's orders of records naming rows, trains
    "power_utility", "food_bank", "rail_tickets",
)


def in_sample(path: Path) -> bool:
    """Whether ``path`` is a hand-written example or in a sampled corpus world."""
    worlds = CORPUS / "worlds"
    if worlds not in path.parents:
        return True
    return path.relative_to(worlds).parts[0] in CORPUS_SAMPLE


def example_specs() -> list[Path]:
    """The ``.world`` files of ``examples`` that per-file tests run on, sorted."""
    return sorted(p for p in EXAMPLES.rglob("*.world") if p.is_file() and in_sample(p))
