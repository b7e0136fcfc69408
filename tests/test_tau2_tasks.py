"""tau2-bench retail's 114 tasks as WorldSpec tasks, runnable by name.

``scripts/tau2_tasks.py`` writes the task definitions from tau2's data in place (a tau2-bench
checkout, ``$WORLDSPEC_TAU2_CHECKOUT``, or the peer material, ``$WORLDSPEC_PEERS/tau2-retail``:
``scripts/tau2_data.py``); nothing of it is copied into the repository. The tasks are checked
and run exactly as a user would: ``worldspec tasks`` and ``worldspec run --task``.

Every test runs from a checkout alone but those taking the ``gold`` fixture (tau2's recorded
final DB hashes, which only the peer material has) and the one comparing the two layouts.
Without the data the tests skip, except under ``CI=true``, where they fail.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from tau2_data import (
    CHECKOUT_DATA,
    CHECKOUT_VARIABLE,
    DATA_FILES,
    Tau2Retail,
    locate_tau2,
    peers_folder,
)
from test_conformance_tau2 import fast_episode_hash

from worldspec.cli.main import main
from worldspec.services.loading import compile_worlds
from worldspec.services.validation import check_paths

ROOT = Path(__file__).resolve().parent.parent
RETAIL = locate_tau2()
IN_CI = os.environ.get("CI", "").lower() == "true"


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("tau2_tasks", ROOT / "scripts" / "tau2_tasks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def peer_tasks() -> list[dict[str, Any]]:
    path = RETAIL.tasks
    if not path.is_file():
        message = RETAIL.missing()
        pytest.fail(message) if IN_CI else pytest.skip(message)
    tasks: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return tasks


@pytest.fixture(scope="module")
def tasks_file(peer_tasks: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
               ) -> Path:
    out = tmp_path_factory.mktemp("tau2") / "retail_tasks.world"
    assert _script().main(["-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def gold() -> dict[str, dict[str, Any]]:
    """tau2's gold replays (the peer material only: a tau2-bench checkout has none)."""
    if not RETAIL.has_gold():
        message = f"tau2 retail gold replays not found at {RETAIL.gold} (set WORLDSPEC_PEERS)"
        pytest.fail(message) if IN_CI else pytest.skip(message)
    return {p.stem: json.loads(p.read_text(encoding="utf-8"))
            for p in RETAIL.gold.glob("*.json") if not p.stem.startswith("_")}


@pytest.fixture(scope="module")
def world(tasks_file: Path) -> Any:
    return compile_worlds([tasks_file]).worlds["Tau2Retail"]


@pytest.fixture(scope="module")
def reports(tasks_file: Path) -> dict[str, Any]:
    validated = check_paths([tasks_file])
    return {r.task: r for r in validated.tasks}


#: The values no read can show, by task: the script reports them and the task keeps its
#: WS624. retail_22's user asks for "101 Highway, New York, 10001"; tau2's expected action
#: passes the state as "NY", which the user never says and no read of theirs shows (their
#: address and orders are in Colorado): the agent abbreviates from what it knows.
UNDISCOVERABLE = {"retail_22": ['modify_user_address() passes state: "NY"']}


def _errors(report: Any) -> list[Any]:
    """A report's errors, less the WS624 of :data:`UNDISCOVERABLE`."""
    set_aside = UNDISCOVERABLE.get(report.task, [])
    return [p for p in report.problems if p.severity.value == "error"
            and not (p.code == "WS624" and any(s in p.message for s in set_aside))]


@pytest.fixture(scope="module")
def planned(peer_tasks: list[dict[str, Any]]) -> tuple[dict[str, list[Any]], list[Any]]:
    """The script's plan: each task's calls (the added reads marked), and the values no read
    shows."""
    calls, missing, _outcomes = _script().plan_solutions(peer_tasks, RETAIL)
    return {f"retail_{task_id}": c for task_id, c in calls.items()}, missing


@pytest.fixture(scope="module")
def solutions(planned: tuple[dict[str, list[Any]], list[Any]]) -> dict[str, list[Any]]:
    return planned[0]


@pytest.fixture(scope="module")
def as_listed(peer_tasks: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
              ) -> dict[str, Any]:
    """The reports of the tasks with tau2's expected actions as they are (``--as-listed``)."""
    out = tmp_path_factory.mktemp("tau2_as_listed") / "retail_tasks.world"
    assert _script().main(["-o", str(out), "--as-listed"]) == 0
    return {r.task: r for r in check_paths([out]).tasks}


def test_tau2s_expected_actions_skip_the_reads_that_show_their_ids(
        as_listed: dict[str, Any]) -> None:
    """As listed, tau2's expected actions change the database and leave out most reads
    (get_user_details, get_order_details, get_product_details), so 58 of the 114 tasks pass
    ids the agent was never shown: order, item and payment method ids, and addresses only
    a read shows; never a free-text or computed value (the world marks `calculate`'s
    expression and the transfer summary `freeform`)."""
    invalid = {name for name, r in as_listed.items() if any(
        p.severity.value == "error" for p in r.problems)}
    unseen = [p.message for r in as_listed.values() for p in r.problems if p.code == "WS624"]
    assert len(invalid) == 58 and len(as_listed) == 114
    assert all(p.code == "WS624" for name in invalid for p in as_listed[name].problems
               if p.severity.value == "error")
    arguments = {m.split(" passes ")[1].split(":")[0] for m in unseen}
    assert arguments == {"order_id", "item_ids", "new_item_ids", "payment_method_id",
                         "product_id", "address1", "address2", "city", "state", "zip"}
    assert not any("calculate()" in m or "transfer_to_human_agents()" in m for m in unseen)


def test_the_added_reads_make_every_task_discoverable(
        reports: dict[str, Any], as_listed: dict[str, Any],
        solutions: dict[str, list[Any]]) -> None:
    """With the reads added, every task is valid but retail_22 (its "NY", see
    UNDISCOVERABLE); each task that failed WS624 as listed got reads, and a task that
    needed none got none."""
    assert [name for name, r in reports.items() if any(
        p.severity.value == "error" for p in r.problems)] == list(UNDISCOVERABLE)
    assert [p.message.split(" passes ")[0] + " passes " + p.message.split(" passes ")[1]
            .split(", a value")[0] for p in reports["retail_22"].problems
            if p.code == "WS624"] == ["solution call " + m for m in UNDISCOVERABLE["retail_22"]]
    for name, report in as_listed.items():
        assert bool(_errors(report)) is any(c.added for c in solutions[name]), name


def test_a_task_with_reads_added_is_valid_and_without_them_is_not(
        reports: dict[str, Any], as_listed: dict[str, Any],
        solutions: dict[str, list[Any]], tasks_file: Path) -> None:
    """retail_86: the user gives their email only, wants a fleece jacket of a pending order
    changed and their default address set to the Washington DC one "in one of the orders".
    tau2 lists the two writes alone; the reads find the user, their orders, the jacket's
    item, its product's variants, and the order that holds the DC address."""
    assert not reports["retail_86"].problems
    listed = [p.message for p in as_listed["retail_86"].problems]
    assert any('passes order_id: "#W2466703"' in m for m in listed)
    assert any('passes address1: "565 Maple Drive"' in m for m in listed)
    assert [(c.name, c.added) for c in solutions["retail_86"]] == [
        ("find_user_id_by_email", True), ("get_user_details", True),
        ("get_order_details", True), ("get_product_details", True),
        ("modify_pending_order_items", False), ("get_order_details", True),
        ("modify_user_address", False)]
    text = tasks_file.read_text(encoding="utf-8")
    assert ('    get_order_details(order_id: "#W1994898")  # read added: shows 565 Maple Drive, '
            'Suite 501, 20307\n    modify_user_address(user_id: "yusuf_hernandez_6785"') in text


def test_added_reads_change_nothing_so_every_final_db_is_tau2s(
        world: Any, solutions: dict[str, list[Any]], gold: dict[str, dict[str, Any]]) -> None:
    """Reads never change the database: every solution, reads and all, leaves the database
    tau2's gold trajectory leaves (its ``final_db_hash``), so ``matches_solution()`` is
    tau2's DB reward as before. The added reads are read tools of the world, each showing
    some value a later call passes, and they succeed."""
    reads = set(_script().CANDIDATE_READS)
    episode = world(task="retail_0")
    added = 0
    for task_id, g in gold.items():
        name = f"retail_{task_id}"
        episode.reset(task=name)
        for tool, arguments in world.TASKS[name].solution:
            assert not episode.failed(episode.call(tool, dict(arguments))), (name, tool)
        assert fast_episode_hash(episode) == g["final_db_hash"], name
        for call in solutions[name]:
            if call.added:
                added += 1
                assert call.name in reads and call.shows, (name, call)
    assert added > 100


def test_the_plan_names_the_values_no_read_shows(
        planned: tuple[dict[str, list[Any]], list[Any]]) -> None:
    """What the script reports (on stderr) as undiscoverable is UNDISCOVERABLE."""
    assert [(f"retail_{v.task_id}", f"{v.tool}() passes {v.path}: {json.dumps(v.value)}")
            for v in planned[1]] == [(name, m) for name, ms in UNDISCOVERABLE.items()
                                     for m in ms]


def test_every_tau2_task_becomes_a_task(peer_tasks: list[dict[str, Any]],
                                        reports: dict[str, Any]) -> None:
    assert len(peer_tasks) == 114
    assert set(reports) == {f"retail_{t['id']}" for t in peer_tasks}


def test_every_task_validates_and_the_read_only_ones_grade_restraint(
        reports: dict[str, Any], gold: dict[str, dict[str, Any]],
        peer_tasks: list[dict[str, Any]]) -> None:
    """A task whose expected actions change nothing (11 of them) is a restraint task: its
    frame is ``only changes nothing``, so doing nothing earns the DB reward, as in tau2, and
    any change zeroes it; where tau2 also has ``communicate_info`` (4 tasks), its answer checks
    grade the conversation and the reference reply passes them. Every task validates: its
    solution (and reply) passes every check and, except for the restraint tasks, doing nothing
    does not."""
    read_only = {f"retail_{i}" for i, g in gold.items()
                 if g["final_db_hash"] == g["initial_db_hash"]}
    told = {f"retail_{t['id']}" for t in peer_tasks
            if t["evaluation_criteria"].get("communicate_info")}
    assert len(read_only) == 11 and len(told) == 36 and len(read_only & told) == 4
    assert [name for name, report in reports.items() if _errors(report)] == []
    assert len(reports) == 114
    for name, report in reports.items():
        assert not [p for p in report.problems
                    if p.code in ("WS610", "WS611", "WS612", "WS620", "WS621", "WS622")], name


def test_communicate_info_becomes_answer_checks(world: Any,
                                               peer_tasks: list[dict[str, Any]]) -> None:
    """One check per item, matched as tau2 matches it: in any message of the agent, ignoring
    case and the message's commas."""
    for task in peer_tasks:
        told = task["evaluation_criteria"].get("communicate_info") or []
        spec = world.TASKS[f"retail_{task['id']}"]
        assert [c.name for c in spec.checks] == ["db", *[f"told_{i}" for i in
                                                          range(1, len(told) + 1)]]
        assert len(spec.replies) == (1 if told else 0)
    spec = world.TASKS["retail_62"]  # "302.67" and "20 hours"; nothing changes in the DB
    episode = world(task="retail_62")
    # tau2's reward is all-or-nothing (`reward all`): the DB check alone earns nothing
    assert spec.reward == "all" and world.REWARD == "all"
    assert episode.score().reward == 0.0 and not episode.score().passed
    assert episode.score(reward="weighted").reward == pytest.approx(1 / 3)  # only the DB holds
    said = ["The speaker is $302.67.", "Its battery lasts 20 HOURS."]
    assert episode.score(replies=said).reward == 1.0 and episode.score(replies=said).passed
    assert episode.score(replies=said[:1]).reward == 0.0
    assert episode.score(replies=said[:1], reward="mean").reward == pytest.approx(2 / 3)
    assert episode.score(replies=["It was $302.68, 20 hours."]).reward == 0.0
    episode = world(task="retail_16")  # "8276.23", said with a thousands separator
    for name, arguments in world.TASKS["retail_16"].solution:
        episode.call(name, dict(arguments))
    assert episode.score(replies=["That is $8,276.23 in total."]).reward == 1.0
    assert spec.replies == ("Here is what you asked about: 302.67; 20 hours.",)


def test_failing_expected_actions_are_left_out_of_the_solution(
        world: Any, gold: dict[str, dict[str, Any]], solutions: dict[str, list[Any]]) -> None:
    """A failed call changes nothing, so the solution keeps the calls that succeed in tau2,
    in tau2's order, with the added reads between them."""
    assert len(world.TASKS) == 114
    failing = 0
    for task_id, g in gold.items():
        name = f"retail_{task_id}"
        expected = [(s["name"], s["arguments"]) for s in g["steps"] if not s["error"]]
        failing += len(g["steps"]) - len(expected)
        planned = [c for c in solutions[name] if c.error is None]
        assert [(c.name, c.arguments) for c in planned if not c.added] == expected, task_id
        assert [(n, dict(a)) for n, a in world.TASKS[name].solution] == [
            (c.name, c.arguments) for c in planned], task_id
    assert failing > 0


def test_a_task_runs_by_name(tasks_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["run", str(tasks_file), "--task", "retail_20", "--solution", "--format",
                   "json"])
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["task"] == "retail_20" and out["reward"] == 1.0
    assert [c["name"] for c in out["checks"]] == ["db"]


def test_every_solution_scores_one_and_nothing_scores_less(world: Any,
                                                           reports: dict[str, Any]) -> None:
    """Doing nothing scores less than 1, except on the restraint tasks (``only changes
    nothing``) that have no answer check, where leaving the database alone is the answer."""
    for name, task in world.TASKS.items():
        episode = world(task=name)
        before = episode.score().reward
        for tool, arguments in task.solution:
            assert not episode.failed(episode.call(tool, dict(arguments))), (name, tool)
        assert episode.score(replies=task.replies).reward == 1.0, name
        assert not _errors(reports[name]), name
        assert (before == 1.0) is (task.frame == () and not task.replies), name
        if task.replies:
            assert episode.score().reward < 1.0, name  # the work without the answer
        elif task.frame != ():
            assert before == 0.0, name


def test_half_the_work_scores_zero(world: Any) -> None:
    task = world.TASKS["retail_0"]
    episode = world(task="retail_0")
    # a different exchange than the expected one leaves another DB
    name, arguments = task.solution[-1]
    other = dict(arguments)
    other["item_ids"], other["new_item_ids"] = other["item_ids"][:1], other["new_item_ids"][:1]
    assert not episode.failed(episode.call(name, other))
    assert episode.score().reward == 0.0
    episode.reset(task="retail_0")
    for tool, args in task.solution:
        episode.call(tool, dict(args))
    assert episode.score().reward == 1.0


def test_script_reports_missing_peers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main(["--peers", str(tmp_path), "-o", str(tmp_path / "x.world")]) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "x.world").exists()


def test_generated_file_is_formatted_and_has_no_absolute_paths(tasks_file: Path) -> None:
    from worldspec.dsl.formatter import format_source

    text = tasks_file.read_text(encoding="utf-8")
    assert format_source(text, "retail_tasks.world") == text
    for line in text.splitlines():
        if line.startswith(("import ", "  given ")):
            assert '"/' not in line and ":\\" not in line, line


def test_a_restraint_task_rewards_leaving_the_database_alone(world: Any) -> None:
    """retail_57: the user asks to cancel an item of an order that tau2's expected actions
    leave as it is; doing nothing earns 1, a cancellation (collateral change) earns 0."""
    spec = world.TASKS["retail_57"]
    assert spec.frame == ()
    assert world(task="retail_57").score().reward == 1.0
    episode = world(task="retail_57")
    pending = next(o for o in episode.export_state()["orders"] if o["status"] == "pending")
    result = episode.call("cancel_pending_order",
                          {"order_id": pending["order_id"], "reason": "no longer needed"})
    assert not episode.failed(result), result
    score = episode.score()
    assert score.reward == 0.0 and not score.frame_ok


def _checkout(tmp_path: Path) -> Path:
    """A tau2-bench checkout: ``$WORLDSPEC_TAU2_CHECKOUT``, else one laid out here as tau2-bench
    lays out its data (``data/tau2/domains/retail/``) from the peer material's four data
    files, without the gold replays, which a checkout never has."""
    named = os.environ.get(CHECKOUT_VARIABLE)
    if named:
        return ROOT / named
    peers = locate_tau2(peers=peers_folder())
    if not peers.has_data():
        message = peers.missing()
        pytest.fail(message) if IN_CI else pytest.skip(message)
    retail = tmp_path / "tau2-bench" / CHECKOUT_DATA
    retail.mkdir(parents=True)
    for name in DATA_FILES:
        shutil.copyfile(peers.data / name, retail / name)
    return tmp_path / "tau2-bench"


def _without_db_path(text: str) -> str:
    """The tasks file less its ``given`` lines, the only lines naming where db.json is."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("  given "))


def test_a_tau2_checkout_gives_the_tasks_the_peer_material_gives(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tau2-bench's own layout, without gold: which expected actions fail (kept as comments,
    with tau2's message) and which tasks change nothing (restraint tasks) come from the
    world's replay instead of the gold, and the file is the same, line for line."""
    checkout = _checkout(tmp_path)
    from_checkout = locate_tau2(checkout=checkout)
    assert from_checkout.data == (checkout / CHECKOUT_DATA).resolve()
    peers = locate_tau2(peers=peers_folder())
    if not peers.has_gold():
        message = f"tau2 retail gold replays not found at {peers.gold} (set WORLDSPEC_PEERS)"
        pytest.fail(message) if IN_CI else pytest.skip(message)
    out_checkout, out_peers = tmp_path / "a" / "retail_tasks.world", tmp_path / "b" / "r.world"
    assert _script().main(["--tau2", str(checkout), "-o", str(out_checkout)]) == 0
    assert "from the tau2-bench checkout" in capsys.readouterr().out
    assert _script().main(["--peers", str(peers_folder()), "-o", str(out_peers)]) == 0
    assert "from the peers folder" in capsys.readouterr().out
    text = out_checkout.read_text(encoding="utf-8")
    assert _without_db_path(text) == _without_db_path(out_peers.read_text(encoding="utf-8"))
    # what the gold decides shows in the file: failing actions and restraint tasks
    assert text.count("  only changes nothing") == 11
    assert "# fails in tau2, so it changes nothing:" in text
    given = [line for line in text.splitlines() if line.startswith("  given ")]
    assert len(given) == 114 and all(line.endswith('/db.json"') for line in given)


def test_the_outcome_without_gold_is_the_golds(peer_tasks: list[dict[str, Any]]) -> None:
    """The world's replay of the expected actions gives, for every task, the failures (their
    action ids and tau2's messages) and the "changes nothing" verdict the gold records; a
    task whose actions change the database is told apart from one whose actions do not."""
    script = _script()
    if not RETAIL.has_gold():
        message = f"tau2 retail gold replays not found at {RETAIL.gold} (set WORLDSPEC_PEERS)"
        pytest.fail(message) if IN_CI else pytest.skip(message)
    planner = script.load_planner(RETAIL)
    outcomes = [(script.gold_outcome(RETAIL, t["id"]),
                 script.replayed_outcome(planner.episode, planner.db, t)) for t in peer_tasks]
    assert all(gold == replayed for gold, replayed in outcomes)
    assert {g.changes_nothing for g, _ in outcomes} == {True, False}
    assert any(g.failures for g, _ in outcomes) and any(not g.failures for g, _ in outcomes)


def test_the_data_setting_names_a_missing_checkout(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main(["--tau2", str(tmp_path), "-o", str(tmp_path / "x.world")]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / CHECKOUT_DATA) in err and CHECKOUT_VARIABLE in err
    assert not (tmp_path / "x.world").exists()
    assert not Tau2Retail(tmp_path, tmp_path / "gold", "here").has_data()
