"""The episode's RNG draws what ``random.Random`` draws, and rewinds to any mark exactly."""

from __future__ import annotations

import random

import pytest

from worldspec.runtime.episode import EpisodeRandom


def _draws(rng: random.Random, i: int) -> list[object]:
    """One of each kind of draw: every method rests on random() or getrandbits()."""
    return [rng.randint(0, i % 1000 + 1), rng.random(), rng.choice("abcdef"),
            rng.getrandbits(i % 100), rng.gauss(0, 1), rng.uniform(1, 2),
            rng.sample(range(50), 3), rng.randbytes(i % 7)]


@pytest.mark.parametrize("seed", [0, 1, 200191, 2**40 + 3])
def test_same_draws_and_exact_rewinds(seed: int) -> None:
    ours, theirs = EpisodeRandom(seed), random.Random(seed)
    for i in range(600):
        mark, state = ours.mark(), theirs.getstate()
        assert _draws(ours, i) == _draws(theirs, i)
        if i % 3 == 0:  # a failed call: back to where it started
            ours.rewind(mark)
            theirs.setstate(state)
            assert ours.getstate() == theirs.getstate()


def test_rewind_after_setstate_and_past_the_rebase() -> None:
    source = random.Random(7)
    source.random()
    ours = EpisodeRandom(0)
    ours.setstate(source.getstate())
    ours.getrandbits(32 * (EpisodeRandom.REBASE + 10))  # far from the base
    mark, state = ours.mark(), ours.getstate()
    ours.random()
    ours.rewind(mark)
    assert ours.getstate() == state
    mark = ours.mark()
    ours.gauss(0, 1)  # caches a second value
    ours.rewind(mark)
    assert ours.getstate() == state
