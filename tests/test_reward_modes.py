"""How a task's checks combine into its reward: ``config { reward: ... }`` and a task's
``reward`` item (weighted, mean, all), the diagnostics about them, and ``Score.passed``."""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_support import compile_text, generated_source

from worldspec.compiler import model
from worldspec.compiler.api import check_source
from worldspec.dsl.formatter import format_source
from worldspec.runtime import rewards
from worldspec.runtime.episode import Episode

SHOP = """\
world Shop "A shop."

config {
  reward: WORLD_MODE
}

entity Order "An order." {
  key id: str
  cancelled: bool = false
  note: str = ""
}

state {
  orders: table Order
}

tool cancel_order(order: Order) "Cancel an order." {
  order.cancelled = true
}

tool annotate(order: Order, text: str) "Write a note on an order." {
  order.note = text
}

task weighted_two in Shop {
  given {orders: [{id: "O1"}, {id: "O2"}, {id: "O3"}]}
  instruction "Cancel O1 and O2."
  reward weighted
  check first weight 3: orders["O1"].cancelled
  check second: orders["O2"].cancelled
  only changes orders.cancelled
  solution {
    cancel_order(order: "O1")
    cancel_order(order: "O2")
  }
}

task world_two in Shop {
  given {orders: [{id: "O1"}, {id: "O2"}, {id: "O3"}]}
  instruction "Cancel O1 and O2."
  check first: orders["O1"].cancelled
  check second: orders["O2"].cancelled
  only changes orders.cancelled
  solution {
    cancel_order(order: "O1")
    cancel_order(order: "O2")
  }
}

task all_two in Shop {
  given {orders: [{id: "O1"}, {id: "O2"}, {id: "O3"}]}
  instruction "Cancel O1 and O2."
  reward all
  check first: orders["O1"].cancelled
  check second: orders["O2"].cancelled
  only changes orders.cancelled
  solution {
    cancel_order(order: "O1")
    cancel_order(order: "O2")
  }
}
"""


def shop(tmp_path: Path, world_mode: str) -> type[Episode]:
    return compile_text(tmp_path, "shop.world", SHOP.replace("WORLD_MODE", world_mode), "Shop")


def codes(text: str) -> list[tuple[str, str]]:
    return [(d.code, d.message) for d in check_source(text, "shop.world").diagnostics]


def half_done(world: type[Episode], task: str) -> Episode:
    episode = world(task=task)
    episode.call("cancel_order", {"order": "O1"})
    return episode


def test_each_mode_combines_the_checks_its_own_way(tmp_path: Path) -> None:
    world = shop(tmp_path, "mean")
    assert world.REWARD == "mean"
    assert world.TASKS["all_two"].reward == "all" and world.TASKS["world_two"].reward is None
    # O1 cancelled, O2 not: the weighted share counts the weight 3, mean counts 1 of 2, all 0
    assert half_done(world, "weighted_two").score().reward == 0.75
    assert half_done(world, "world_two").score().reward == 0.5
    assert half_done(world, "all_two").score().reward == 0.0
    for task in world.TASKS:
        partial = half_done(world, task).score()
        assert partial.passed is False and partial.to_json()["passed"] is False
        done = half_done(world, task)
        done.call("cancel_order", {"order": "O2"})
        assert done.score().reward == 1.0 and done.score().passed is True


def test_the_default_is_weighted_and_no_class_attribute_is_generated(tmp_path: Path) -> None:
    world = shop(tmp_path, "weighted")
    assert world.REWARD == "weighted"
    assert "REWARD:" not in generated_source(world)
    assert half_done(world, "world_two").score().reward == 0.5
    (tmp_path / "mean").mkdir()
    assert "REWARD: ClassVar[str] = 'mean'" in generated_source(shop(tmp_path / "mean", "mean"))


def test_the_argument_overrides_the_mode_and_all_or_nothing_still_works(tmp_path: Path) -> None:
    episode = half_done(shop(tmp_path, "weighted"), "weighted_two")
    assert episode.score(reward="mean").reward == 0.5
    assert episode.score(reward="all").reward == 0.0
    assert episode.score(all_or_nothing=True).reward == 0.0
    assert episode.score(reward="weighted").reward == 0.75
    with pytest.raises(ValueError, match="unknown reward mode 'most'; the modes are weighted, "
                                         "mean, all"):
        episode.score(reward="most")


def test_a_broken_frame_fails_every_mode_and_all_counts_it_always(tmp_path: Path) -> None:
    world = shop(tmp_path, "weighted")
    for task in world.TASKS:
        episode = half_done(world, task)
        episode.call("cancel_order", {"order": "O2"})
        episode.call("annotate", {"order": "O3", "text": "collateral"})
        score = episode.score()
        assert (score.reward, score.passed, score.frame_ok) == (0.0, False, False)
        assert score.checks_reward == 1.0
        lenient = episode.score(frame_zeroes=False)
        # weighted and mean report the frame beside the reward; all keeps it a component
        assert lenient.reward == (0.0 if task == "all_two" else 1.0)
        assert lenient.passed is False


def test_unknown_modes_are_reported_with_a_did_you_mean() -> None:
    text = SHOP.replace("WORLD_MODE", "meen").replace("reward all", "reward al")
    assert codes(text) == [("WS626", "unknown reward mode 'meen'"),
                           ("WS626", "unknown reward mode 'al'")]
    text = SHOP.replace("WORLD_MODE", "42")
    assert codes(text) == [("WS626", "unknown reward mode a value that is not a name")]
    assert codes(SHOP.replace("WORLD_MODE", "all")) == []


def test_a_weight_the_mode_ignores_is_reported() -> None:
    # weighted_two declares `reward weighted` itself: its weight stands under any world mode
    assert codes(SHOP.replace("WORLD_MODE", "mean")) == []
    text = SHOP.replace("WORLD_MODE", "mean").replace("reward weighted", "reward all")
    assert codes(text) == [("WS625", "check 'first' has a weight, but the task's reward mode "
                                     "'all' counts every check the same")]
    text = SHOP.replace("WORLD_MODE", "mean").replace("  reward weighted\n", "")
    assert codes(text) == [("WS625", "check 'first' has a weight, but the world's reward mode "
                                     "'mean' counts every check the same")]
    text = SHOP.replace("WORLD_MODE", "weighted").replace("  reward weighted\n", "")
    assert codes(text) == []


def test_a_second_reward_item_is_a_duplicate() -> None:
    text = SHOP.replace("WORLD_MODE", "all").replace("reward all", "reward all\n  reward mean")
    assert codes(text) == [("WS204", "the task's reward mode is declared twice")]


def test_the_formatter_keeps_the_reward_item() -> None:
    text = SHOP.replace("WORLD_MODE", "all")
    assert format_source(text) == text


def test_the_compiler_knows_the_modes_the_runtime_computes() -> None:
    """The compiler never loads the runtime, so it names the modes itself: the same ones, the
    same default, and the same modes in which a weight counts."""
    assert model.REWARD_MODES == tuple(rewards.REWARD_MODES)
    assert model.DEFAULT_REWARD == rewards.DEFAULT_REWARD == Episode.REWARD
    assert model.WEIGHED_REWARD_MODES == tuple(
        name for name, mode in rewards.REWARD_MODES.items() if mode.counts_weights)
