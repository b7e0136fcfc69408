"""``synth world`` and ``synth tasks`` end to end against the scripted server.

Each test scripts what the "model" answers; everything else is real: the
SDK, the prompts, code extraction, the compiler, the property tests and task
validation.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from llm_scripts import (
    LIBRARY_WORLD,
    PLAN_JSON,
    counter_world,
    fenced,
    library_task,
)
from llm_server import RecordedRequest, Reply, ScriptedLLMServer

from worldspec.cli.main import main as cli_main
from worldspec.compiler.api import check_specs as compiler_check
from worldspec.llm_frontend.prompts import write_world_messages
from worldspec.llm_frontend.synth_tasks import (
    TaskOptions,
    TaskOutcome,
    load_task_world,
    synthesize_task,
)
from worldspec.llm_frontend.synth_world import WorldOptions, WorldOutcome, synthesize_world
from worldspec.services.language_reference import (
    condense_language_doc,
    main,
    render_reference_module,
)
from worldspec.services.language_reference_text import EXAMPLE_WORLD, LANGUAGE_REFERENCE
from worldspec.services.model_client import LLMClient, LLMConfig, Usage
from worldspec.services.validation import check_paths
from worldspec.services.world_replies import extract_world_code

ROOT = Path(__file__).resolve().parent.parent
FAST = WorldOptions(max_rounds=4, test_examples=15, test_steps=12)


def run_world(config: LLMConfig, options: WorldOptions = FAST,
              description: str = "a counter") -> WorldOutcome:
    async def go() -> WorldOutcome:
        async with LLMClient(config) as client:
            return await synthesize_world(client, description, options)
    return asyncio.run(go())


def writes(server: ScriptedLLMServer) -> list[RecordedRequest]:
    """The requests that asked for a world or task (not the plan)."""
    return [r for r in server.chat_requests if "response_format" not in r.body]


# ---------------------------------------------------------------- reference
def test_the_language_reference_is_generated_from_the_docs() -> None:
    assert main(["--check"]) == 0, "run: python -m worldspec.services.language_reference"
    source = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    assert condense_language_doc(source) == LANGUAGE_REFERENCE
    assert condense_language_doc(source) == condense_language_doc(source)
    assert render_reference_module(ROOT) == render_reference_module(ROOT)
    assert "## Tools" in LANGUAGE_REFERENCE and "### Builtins" in LANGUAGE_REFERENCE
    assert "Validation and scoring" not in LANGUAGE_REFERENCE
    assert len(LANGUAGE_REFERENCE) < len(source)


_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```$", re.DOTALL | re.MULTILINE)
_INLINE = re.compile(r"(`+)(.+?)\1")


def _sections(markdown: str) -> list[tuple[tuple[str, ...], str]]:
    """``(heading chain, text)`` of every stretch of ``markdown`` between headings."""
    chain: list[tuple[int, str]] = []
    out: list[tuple[tuple[str, ...], str]] = []
    body: list[str] = []
    in_fence = False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            in_fence = not in_fence
        heading = None if in_fence else re.match(r"^(#{1,6}) (.*)$", line)
        if heading is None:
            body.append(line)
            continue
        out.append((tuple(t for _, t in chain), "\n".join(body) + "\n"))
        body = []
        level = len(heading.group(1))
        chain = [(lv, t) for lv, t in chain if lv < level] + [(level, heading.group(2).strip())]
    out.append((tuple(t for _, t in chain), "\n".join(body) + "\n"))
    return out


def test_every_code_block_of_the_reference_is_a_code_block_of_the_docs() -> None:
    """Generic over docs/language.md: whatever sections it grows, each code block outside the
    sections the reference drops is in the prompt character for character, and the prompt
    holds no other code (a link pattern run inside code once made `list[str](..10)` into
    `liststr`)."""
    from worldspec.services.language_reference import _DROPPED_SECTIONS

    source = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    wanted: list[str] = []
    for chain, text in _sections(source):
        dropped = any(_DROPPED_SECTIONS.get(title) == "all" for title in chain) or \
            (bool(chain) and _DROPPED_SECTIONS.get(chain[-1]) == "own")
        if len(chain) >= 1 and not dropped:
            wanted += _FENCED.findall(text)
    shown = _FENCED.findall(LANGUAGE_REFERENCE)
    assert wanted and Counter(shown) == Counter(wanted)
    assert "type Tags = list[str](..10)" in LANGUAGE_REFERENCE
    # inline code is untouched too, and prose links are flattened
    prose = _FENCED.sub("", LANGUAGE_REFERENCE)
    spans = {m.group(0) for m in _INLINE.finditer(_FENCED.sub("", source))}
    for span in _INLINE.finditer(prose):
        assert span.group(0) in spans, span.group(0)
    assert not re.search(r"\]\((#|https?:|[\w./-]+\.md)", _INLINE.sub("", prose))


def test_every_example_in_the_prompts_compiles() -> None:
    """The example world excerpt, and the whole file with a sample task: both check clean,
    and the sample task validates (its solution writes enums, dates and records as a
    solution must)."""
    from worldspec.compiler.api import check_source
    from worldspec.llm_frontend.prompts import EXAMPLE_SEEDED_WORLD
    from worldspec.services.validation import validate_tasks

    for text in (EXAMPLE_WORLD, EXAMPLE_SEEDED_WORLD):
        result = check_source(text, "example.world")
        assert result.ok, result.diagnostics
    reports = validate_tasks(check_source(EXAMPLE_SEEDED_WORLD, "example.world"))
    assert reports and all(not r.problems for r in reports), reports
    system = write_world_messages("a shop", None)[0]["content"]
    for block in _FENCED.findall(system):
        if block.startswith(("world ", "#")) and block not in LANGUAGE_REFERENCE:
            assert check_source(block, "prompt.world").ok, block[:80]
    assert 'reason: CancelReason.ordered_by_mistake' in system and 'date("2024-05-03")' in system


def test_the_example_world_checks_clean() -> None:
    from worldspec.compiler.api import check_source

    result = check_source(EXAMPLE_WORLD, "example.world")
    assert result.ok, result.diagnostics
    assert "tool place_order(" in EXAMPLE_WORLD and "tool restock_variant(" not in EXAMPLE_WORLD


def test_the_prompt_carries_reference_example_and_plan() -> None:
    messages = write_world_messages("a shop", None)
    assert LANGUAGE_REFERENCE in messages[0]["content"]
    assert EXAMPLE_WORLD in messages[0]["content"]
    assert "no `import` lines" in messages[0]["content"]
    assert messages == write_world_messages("a shop", None)  # deterministic


@pytest.mark.parametrize(("reply", "expected"), [
    ("```world\nworld A \"x\"\n```", 'world A "x"\n'),
    ("Sure.\n```worldspec\nworld A \"x\"\n```\nDone.", 'world A "x"\n'),
    ("```\n# c\nworld A \"x\"\n```", '# c\nworld A "x"\n'),
    ("```python\nprint(1)\n```\n```world\nworld B \"y\"\n```", 'world B "y"\n'),
    ("world A \"x\"\nstate { n: int = 0 }", 'world A "x"\nstate { n: int = 0 }\n'),
    ("Text first\n```world\nworld A \"unclosed\"\n", 'world A "unclosed"\n'),
    ("<think>```world\nworld Wrong \"no\"\n```</think>```world\nworld Right \"y\"\n```",
     'world Right "y"\n'),
    ("I cannot write that.", None),
    ("```python\nimport os\n```", None),
])
def test_extract_world_code(reply: str, expected: str | None) -> None:
    assert extract_world_code(reply) == expected


# -------------------------------------------------------------------- world
def test_errors_fixed_in_two_repair_rounds(llm_server: ScriptedLLMServer,
                                           llm_config: LLMConfig) -> None:
    llm_server.push(PLAN_JSON, fenced(counter_world(typo=True)),
                    fenced(counter_world(type_error=True)), fenced(counter_world()))
    outcome = run_world(llm_config)
    assert outcome.accepted and outcome.rounds == 2 and outcome.world_name == "Counter"
    assert [h.stage for h in outcome.history] == ["compile", "compile", "ok"]
    assert outcome.history[0].codes == ("WS201",)
    assert outcome.plan is not None and outcome.plan.world_name == "Counter"
    first_repair = writes(llm_server)[1].last_user
    assert '"code": "WS201"' in first_repair and '"source": "total += byy"' in first_repair
    assert "did you mean 'by'?" in first_repair
    assert outcome.text is not None and compiler_check_text(outcome.text)
    assert outcome.usage.requests == 4 and outcome.usage.total_tokens == 4 * 18


def compiler_check_text(text: str) -> bool:
    from worldspec.compiler.api import check_source

    return check_source(text, "accepted.world").ok


def test_a_model_that_never_fixes_it_is_bounded(llm_server: ScriptedLLMServer,
                                                llm_config: LLMConfig) -> None:
    llm_server.responder = lambda r: PLAN_JSON if "response_format" in r.body \
        else fenced(counter_world(typo=True))
    outcome = run_world(llm_config, replace(FAST, max_rounds=2))
    assert not outcome.accepted and outcome.rounds == 2
    assert outcome.reason == "compile errors remain after 2 repair rounds"
    assert "unknown name 'byy'" in outcome.detail
    assert len(writes(llm_server)) == 3


def test_property_failures_are_fed_back(llm_server: ScriptedLLMServer,
                                        llm_config: LLMConfig) -> None:
    llm_server.push(PLAN_JSON, fenced(counter_world(guarded=False)), fenced(counter_world()))
    outcome = run_world(llm_config)
    assert outcome.accepted and outcome.rounds == 1
    assert [h.stage for h in outcome.history] == ["properties", "ok"]
    feedback = writes(llm_server)[1].last_user
    assert "invariant broken" in feedback and "decrement()" in feedback
    assert "The counter never goes below zero." in feedback


def test_property_failures_that_stay_reject_the_world(llm_server: ScriptedLLMServer,
                                                      llm_config: LLMConfig) -> None:
    llm_server.push(*[fenced(counter_world(guarded=False))] * 2)
    outcome = run_world(llm_config, replace(FAST, max_rounds=1, plan=False))
    assert not outcome.accepted
    assert outcome.reason == "property tests fail after 1 repair rounds"
    assert "invariant broken in decrement" in outcome.detail


def test_prose_around_fences_and_a_reply_without_code(llm_server: ScriptedLLMServer,
                                                      llm_config: LLMConfig) -> None:
    llm_server.push("Sorry, I need more details.", fenced(counter_world(), prose=True))
    outcome = run_world(llm_config, replace(FAST, plan=False))
    assert outcome.accepted and outcome.rounds == 1
    assert [h.stage for h in outcome.history] == ["no code", "ok"]
    assert "holds no `.world` file" in writes(llm_server)[1].last_user


def test_a_malformed_plan_is_asked_again_then_rejected(llm_server: ScriptedLLMServer,
                                                       llm_config: LLMConfig) -> None:
    llm_server.push('{"world_name": "Counter", "summary": ', "```json\n{}\n```", "no")
    outcome = run_world(llm_config)
    assert not outcome.accepted and outcome.reason == "no valid plan"
    assert len(llm_server.chat_requests) == 3


def test_imports_are_refused_before_anything_is_read(llm_server: ScriptedLLMServer,
                                                     llm_config: LLMConfig,
                                                     tmp_path: Path) -> None:
    secret = tmp_path / "secret.world"
    secret.write_text("this file must never be read\n", encoding="utf-8")
    sneaky = f'import "{secret.as_posix()}"\n' + counter_world()
    llm_server.push(fenced(sneaky), fenced(counter_world()))
    outcome = run_world(llm_config, replace(FAST, plan=False))
    assert outcome.accepted and outcome.rounds == 1
    feedback = writes(llm_server)[1].last_user
    assert "self-contained" in feedback and "must never be read" not in feedback


def test_synth_world_command_end_to_end(llm_server: ScriptedLLMServer, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.push(PLAN_JSON, fenced(counter_world(typo=True)), fenced(counter_world()))
    out = tmp_path / "counter.world"
    status = cli_main(["synth", "world", "A counter that goes up and down.", "-o", str(out),
                       "--base-url", llm_server.url, "--model", "m", "--test-examples", "10"])
    printed = capsys.readouterr()
    assert status == 0, printed
    assert "accepted Counter (A counter that goes up and down.) after 1 repair round(s) -> " \
        f"{out}" in printed.out
    assert "tokens: 54" in printed.out
    assert compiler_check([out]).ok


def test_synth_world_command_reports_a_rejection(llm_server: ScriptedLLMServer,
                                                 tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = lambda r: fenced(counter_world(typo=True))
    out = tmp_path / "counter.world"
    status = cli_main(["synth", "world", "A counter.", "-o", str(out), "--no-plan",
                       "--max-rounds", "1", "--base-url", llm_server.url, "--model", "m",
                       "--format", "json"])
    summary = json.loads(capsys.readouterr().out)
    assert status == 1 and not out.exists()
    assert summary["rejected"] == 1 and summary["rounds"] == {"1": 1}
    assert summary["reasons"] == {"compile errors remain after 1 repair rounds": 1}


def test_an_unreachable_server_is_an_error_not_a_traceback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = ScriptedLLMServer().start()
    url = server.url
    server.close()
    status = cli_main(["synth", "world", "A counter.", "-o", str(tmp_path / "c.world"),
                       "--base-url", url, "--model", "m", "--max-retries", "0"])
    printed = capsys.readouterr()
    assert status == 1 and "Traceback" not in printed.err + printed.out
    assert "model request failed: chat completion failed" in printed.out


# -------------------------------------------------------------------- tasks
@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "library.world"
    path.write_text(LIBRARY_WORLD, encoding="utf-8")
    return path


def run_task(config: LLMConfig, world_path: Path, options: TaskOptions | None = None,
             slot: int = 0) -> TaskOutcome:
    world = load_task_world(world_path)

    async def go() -> TaskOutcome:
        async with LLMClient(config) as client:
            return await synthesize_task(client, world, slot, options or TaskOptions(),
                                         usage=Usage())
    return asyncio.run(go())


def test_a_task_that_validates_is_accepted(llm_server: ScriptedLLMServer,
                                           llm_config: LLMConfig, library: Path) -> None:
    llm_server.push(fenced(library_task()))
    outcome = run_task(llm_config, library)
    assert outcome.accepted and outcome.rounds == 0 and outcome.name == "swap_books"
    prompt = llm_server.chat_requests[0]
    assert "world Library" in prompt.last_user and "tool `borrow_book`" in prompt.last_user
    assert "at most 2 id(s)" in prompt.system and "at least 2 calls" in prompt.system


def test_a_task_whose_solution_fails_validation_is_rejected(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig, library: Path) -> None:
    llm_server.responder = lambda r: fenced(library_task(broken_check=True))
    outcome = run_task(llm_config, library, TaskOptions(max_rounds=2))
    assert not outcome.accepted
    assert outcome.reason == "the task does not validate after 2 repair rounds"
    assert "check 'lent' is false after the reference solution" in outcome.detail
    feedback = llm_server.chat_requests[1].last_user
    assert '"code": "WS611"' in feedback and '"line": 11' in feedback
    assert len(llm_server.chat_requests) == 3


def test_a_solution_that_guesses_an_id_is_sent_back_and_repaired(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig, library: Path) -> None:
    """Discoverability gates synthesis: a solution returning Dune by an id that no earlier
    call showed gets WS624 back (with its hints) and the repaired task is accepted."""
    llm_server.push(fenced(library_task(guess_dune=True)), fenced(library_task()))
    outcome = run_task(llm_config, library, TaskOptions(max_rounds=2))
    assert outcome.accepted and outcome.rounds == 1
    feedback = llm_server.chat_requests[1].last_user
    assert '"code": "WS624"' in feedback
    assert ('solution call return_book() passes book: \\"B001\\", a value the agent was '
            'never shown before the call') in feedback
    assert "read tool" in feedback


def test_task_problems_are_repaired(llm_server: ScriptedLLMServer, llm_config: LLMConfig,
                                    library: Path) -> None:
    too_many_ids = "Return B001 and L001, then lend B002 to M001."
    llm_server.push(
        fenced('import "other.world"\n' + library_task()),
        fenced(library_task().replace("  given {", '  given "data/seed.json"\n  given {')),
        fenced(library_task(instruction=too_many_ids)),
        fenced(library_task(extra="  check bogus: books[\"B999\"].borrower == none\n")),
        fenced(library_task()))
    outcome = run_task(llm_config, library, TaskOptions(max_rounds=4))
    assert outcome.accepted and outcome.rounds == 4
    feedback = [r.last_user for r in llm_server.chat_requests[1:]]
    assert "remove this import" in feedback[0]
    assert "inline" in feedback[1]
    assert "names 4 ids" in feedback[2] or "names 3 ids" in feedback[2]
    assert "WS615" in feedback[3] or "B999" in feedback[3]


def test_conversational_tasks_need_persona_known_unknown(
        llm_server: ScriptedLLMServer, llm_config: LLMConfig, library: Path) -> None:
    llm_server.push(fenced(library_task()), fenced(library_task(persona=True)))
    outcome = run_task(llm_config, library, TaskOptions(conversational=True))
    assert outcome.accepted and outcome.rounds == 1
    assert "persona" in llm_server.chat_requests[0].system
    assert 'needs `persona "..."`' in llm_server.chat_requests[1].last_user


def test_synth_tasks_command_writes_a_valid_tasks_file(
        llm_server: ScriptedLLMServer, library: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    titles = iter(["Emma", "Ulysses"])

    def answer(request: RecordedRequest) -> Reply | str:
        if "Tasks already written" in request.last_user or "swap_books" in request.text:
            return fenced(library_task("swap_again", title="Walden", broken_check=False)
                          .replace("Return one book", "Swap books again"))
        return fenced(library_task(title=next(titles)))

    llm_server.responder = answer
    status = cli_main(["synth", "tasks", str(library), "-n", "2", "--concurrency", "1",
                       "--base-url", llm_server.url, "--model", "m"])
    printed = capsys.readouterr()
    assert status == 0, printed
    out = library.with_suffix(".tasks.world")
    assert f"Library: 2 task(s) in {out}" in printed.out
    validated = check_paths([out])
    assert validated.ok, validated.diagnostics
    assert sorted(r.task for r in validated.tasks) == ["swap_again", "swap_books"]
    assert all(r.valid for r in validated.tasks)
    assert 'import "library.world"' in out.read_text(encoding="utf-8")


def test_concurrent_slots_with_clashing_names_are_renamed(
        llm_server: ScriptedLLMServer, library: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    titles = iter(["Emma", "Ulysses"])
    llm_server.responder = lambda r: fenced(library_task(title=next(titles)))
    status = cli_main(["synth", "tasks", str(library), "-n", "2", "--concurrency", "2",
                       "--base-url", llm_server.url, "--model", "m", "--format", "json"])
    summary = json.loads(capsys.readouterr().out)
    assert status == 0, summary
    validated = check_paths([library.with_suffix(".tasks.world")])
    assert validated.ok, validated.diagnostics
    assert sorted(r.task for r in validated.tasks) == ["swap_books", "swap_books_2"]


def test_concurrent_duplicates_are_written_once(llm_server: ScriptedLLMServer, library: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.responder = lambda r: fenced(library_task())
    status = cli_main(["synth", "tasks", str(library), "-n", "2", "--concurrency", "2",
                       "--base-url", llm_server.url, "--model", "m", "--format", "json"])
    summary = json.loads(capsys.readouterr().out)
    assert status == 1
    assert (summary["accepted"], summary["rejected"]) == (1, 1)
    assert summary["reasons"] == {"duplicate of an accepted task": 1}
    validated = check_paths([library.with_suffix(".tasks.world")])
    assert validated.ok and [r.task for r in validated.tasks] == ["swap_books"]


def test_a_world_with_errors_is_refused(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.world"
    broken.write_text(counter_world(typo=True), encoding="utf-8")
    status = cli_main(["synth", "tasks", str(broken), "--base-url", "http://127.0.0.1:9/v1",
                       "--model", "m"])
    err = capsys.readouterr().err
    assert status == 2 and "has 1 error(s)" in err and "unknown name 'byy'" in err


# --------------------------------------------------------------------- live
LIVE_URL = os.environ.get("WORLDSPEC_LIVE_BASE_URL")


@pytest.mark.live
@pytest.mark.skipif(not LIVE_URL, reason="set WORLDSPEC_LIVE_BASE_URL (and WORLDSPEC_LIVE_MODEL, "
                                         "OPENAI_API_KEY if needed) to run against a real model")
def test_live_endpoint_writes_a_world(tmp_path: Path) -> None:
    config = LLMConfig.from_env_and_args(base_url=LIVE_URL,
                                         model=os.environ.get("WORLDSPEC_LIVE_MODEL"),
                                         timeout=300.0)
    outcome = run_world(config, WorldOptions(max_rounds=4),
                        "A to-do list app: users, lists and items that can be completed.")
    details: dict[str, Any] = {"reason": outcome.reason, "detail": outcome.detail,
                               "history": [h.to_json() for h in outcome.history]}
    assert outcome.accepted, details


def test_the_command_line_starts_without_the_llm_front_end() -> None:
    import subprocess
    import sys

    code = ("import sys, worldspec.cli.main\n"
            "print(sorted(m for m in sys.modules if m == 'openai' or "
            "m.startswith(('worldspec.llm_frontend', 'openai.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- size
RICH_WORLD = ROOT / "examples" / "corpus" / "worlds" / "restaurant_orders" / \
    "restaurant_orders.world"


def test_a_rich_world_is_planned_and_written_as_envscaler_sizes_them() -> None:
    from worldspec.llm_frontend.prompts import WORLD_SIZES, plan_world_messages

    rich, small = WORLD_SIZES["rich"], WORLD_SIZES["small"]
    plan = plan_world_messages("a bakery", rich)[1]["content"]
    assert "at least 8 tools that only read" in plan and "at least 7 tools that change" in plan
    assert "Keep it small" in plan_world_messages("a bakery", small)[1]["content"]
    for size in (rich, small):  # every entity can be looked up, whatever the size
        assert "by what a user knows" in plan_world_messages("a bakery", size)[1]["content"]
        assert "Every entity can be looked up" in \
            write_world_messages("a bakery", None, size=size)[0]["content"]
    written = write_world_messages("a bakery", None, size=rich)[0]["content"]
    assert "At least 8 tools that only read and at least 7 that change state" in written
    assert "at least 4 rows in every table" in written
    assert "Between 5 and 12 tools" in write_world_messages("a bakery", None)[0]["content"]


def test_a_world_smaller_than_asked_is_sent_back() -> None:
    """The library (12 read tools, 6 that change state, 7 state items) is refused as a rich
    world, for what it lacks; as a small world it passes that check. The restaurant (8
    read, 9 state-changing tools, 10 state items) is rich enough."""
    from worldspec.llm_frontend.synth_world import judge_world

    library = (ROOT / "examples" / "corpus" / "worlds" / "library_loans" /
               "public_library.world").read_text(encoding="utf-8")
    refused = judge_world(library, replace(FAST, size="rich", filename="library.world"))
    assert refused.stage == "structure"
    messages = [p["message"] for p in refused.problems]
    assert messages == [
        "a rich world has at least 7 tools that change state: this one has 6; add more (each "
        "with its doc string, rules and seed data to succeed from)",
        "a rich world has at least 10 state items (tables, sequences, settings): this one "
        "has 7; add more (each with its doc string, rules and seed data to succeed from)"]
    assert judge_world(library, replace(FAST, filename="library.world")).stage != "structure"
    rich = judge_world(RICH_WORLD.read_text(encoding="utf-8"),
                       replace(FAST, size="rich", filename="restaurant.world"))
    assert rich.stage != "structure", rich.problems


def test_synth_world_size_rich_repairs_a_world_that_is_too_small(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.push(PLAN_JSON, fenced(counter_world()), fenced(counter_world()))
    out = tmp_path / "counter.world"
    status = cli_main(["synth", "world", "A counter.", "-o", str(out), "--size", "rich",
                       "--max-rounds", "1", "--base-url", llm_server.url, "--model", "m",
                       "--test-examples", "10"])
    printed = capsys.readouterr()
    assert status != 0, printed
    plan, first, repair = llm_server.chat_requests
    assert "at least 8 tools that only read" in plan.last_user
    assert "At least 8 tools that only read" in first.system
    assert "a rich world has at least 8 tools that only read" in repair.last_user
    assert not out.exists()


def test_the_size_choices_are_the_sizes(capsys: pytest.CaptureFixture[str]) -> None:
    from worldspec.cli.synth_corpus import WORLD_SIZE_NAMES
    from worldspec.llm_frontend.prompts import WORLD_SIZES

    assert tuple(sorted(WORLD_SIZES)) == WORLD_SIZE_NAMES
    for command in (["synth", "world", "a bakery"], ["synth", "corpus", "--domains", "d"]):
        assert cli_main([*command, "--size", "huge"]) == 2
        assert "invalid choice: 'huge' (choose from 'rich', 'small')" in \
            capsys.readouterr().err
