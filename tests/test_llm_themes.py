"""``synth themes`` and ``synth review`` against the scripted server (never the network).

The "model" answers from a table keyed by a marker word in each task; the
embeddings are scripted through the server's embedder so that two hotel
descriptions are near-duplicates. Everything else is real: the SDK, the
client's re-asks, the journal, the clustering, the output file and the
compiler that checks a world before it is reviewed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from llm_scripts import counter_world
from llm_server import RecordedRequest, Reply, ScriptedLLMServer, hashed_embedding

from worldspec.cli.main import main as cli_main
from worldspec.cli.synth import _world_items
from worldspec.llm_frontend.batch import InputError
from worldspec.llm_frontend.themes import (
    ThemeOptions,
    cluster_by_similarity,
    mine_themes,
    read_corpus,
)
from worldspec.services.model_client import LLMClient, LLMConfig

ROOT = Path(__file__).resolve().parent.parent
SHOP = ROOT / "examples" / "shop" / "shop.world"

# ------------------------------------------------------------------ corpus
#: marker -> (task text, what the model answers; None: malformed every time)
TASKS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "grandhotel": ("Book a room at the grandhotel for two nights and add breakfast.", {
        "needs_state": True, "domain": "hotel reservations", "usefulness": 5,
        "modelability": 5, "reason": "bookings are persistent state",
        "description": "A hotel booking desk: guests, rooms and reservations with dates; "
                       "tools to search rooms, book, add extras and cancel."}),
    "seasidehotel": ("Reserve a seasidehotel room for three nights, then cancel the old one.", {
        "needs_state": True, "domain": "hotels", "usefulness": 4, "modelability": 4,
        "reason": "reservations change", "description": "A hotel reservation system: rooms, "
                                                        "guests and bookings; book and cancel."}),
    "capital": ("What is the capital city of France?", {
        "needs_state": False, "domain": "trivia", "usefulness": 1, "modelability": 1,
        "reason": "general knowledge", "description": ""}),
    "library": ("Show my library loans and renew the overdue ones.", {
        "needs_state": True, "domain": "library", "usefulness": 4, "modelability": 5,
        "reason": "loans are records", "description": "A lending library: members, books and "
                                                      "loans with due dates; borrow, renew."}),
    "flashmob": ("Coordinate a flashmob dance with live music in the park.", {
        "needs_state": True, "domain": "events", "usefulness": 2, "modelability": 2,
        "reason": "mostly physical world", "description": "An event planner with dancers."}),
    "refund": ("Please refund order 12 and restock the returned item.", {
        "needs_state": True, "domain": "retail", "usefulness": 4, "modelability": 4,
        "reason": "orders and stock", "description": "A shop back office: orders, stock "
                                                     "and refunds; refund and restock."}),
    "gibberish": ("Do the gibberish thing with the spreadsheet.", None),
}
#: the markers whose first reply is malformed (the client asks again)
MALFORMED_ONCE = {"refund"}


def marker_of(request: RecordedRequest) -> str:
    first_user = next(str(m.get("content", "")) for m in request.messages
                      if m.get("role") == "user")
    found = [marker for marker in TASKS if marker in first_user]
    assert len(found) == 1, first_user
    return found[0]


def themes_responder(fail: frozenset[str] = frozenset()) -> Any:
    def answer(request: RecordedRequest) -> Reply | str:
        marker = marker_of(request)
        if marker in fail:
            return Reply(status=400, error="scripted refusal")
        reply = TASKS[marker][1]
        asked_again = request.last_user.startswith("That reply cannot be used")
        if reply is None:
            return "I am not sure what to say about this one."
        if marker in MALFORMED_ONCE and not asked_again:
            return json.dumps({**reply, "usefulness": 9})  # out of range: re-asked
        return f"Here you go:\n```json\n{json.dumps(reply)}\n```"
    return answer


def scripted_embedding(text: str) -> list[float]:
    """Both hotel descriptions point the same way; the others are far apart."""
    if "hotel booking desk" in text:
        return [1.0, 0.0, 0.0, 0.0]
    if "hotel reservation system" in text:
        return [0.98, 0.12, 0.0, 0.0]
    if "lending library" in text:
        return [0.0, 1.0, 0.0, 0.0]
    if "shop back office" in text:
        return [0.0, 0.0, 1.0, 0.0]
    return hashed_embedding(text, 4)


def write_corpus(folder: Path) -> Path:
    lines = [json.dumps({"id": f"t{i}", "task": TASKS[m][0]})
             for i, m in enumerate(TASKS, start=1)]
    lines += [
        json.dumps({"id": "t8", "task": TASKS["library"][0]}),  # the same task again
        "{not json",
        json.dumps({"id": "t10", "body": "no text field"}),
        "",
        json.dumps({"id": "t12", "task": 42}),
    ]
    corpus = folder / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return corpus


@pytest.fixture
def themes_server(llm_server: ScriptedLLMServer) -> ScriptedLLMServer:
    llm_server.responder = themes_responder()
    llm_server.embedder = scripted_embedding
    return llm_server


def themes_args(server: ScriptedLLMServer, corpus: Path, out: Path, *more: str) -> list[str]:
    return ["synth", "themes", str(corpus), "-o", str(out), "--base-url", server.url,
            "--model", "m", "--progress", "never", *more]


def asked(server: ScriptedLLMServer, since: int = 0) -> Counter[str]:
    return Counter(marker_of(r) for r in server.chat_requests[since:])


# ------------------------------------------------------------------ themes
def test_themes_filters_clusters_and_writes_descriptions(
        themes_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_corpus(tmp_path)
    out = tmp_path / "descriptions.jsonl"
    status = cli_main(themes_args(themes_server, corpus, out, "--format", "json"))
    captured = capsys.readouterr()
    assert status == 1  # three bad lines: reported, skipped, and the status says so
    for line in (9, 10, 12):
        assert f"corpus.jsonl:{line}:" in captured.err
    assert "not valid JSON" in captured.err and "no \"task\" or \"text\"" in captured.err
    assert "Traceback" not in captured.err
    summary = json.loads(captured.out)
    assert (summary["tasks"], summary["lines"], len(summary["bad_lines"])) == (7, 11, 3)
    assert summary["kept"] == 3 and summary["passed_filter"] == 4
    assert (summary["clusters"], summary["clusters_with_duplicates"]) == (3, 1)
    assert summary["dropped"] == {"malformed model output": 1, "near-duplicate": 1,
                                  "no persistent state": 1, "score below 3": 1}
    assert summary["errors"] == 0
    assert summary["usage"]["chat"]["requests"] == len(themes_server.chat_requests)
    assert summary["usage"]["embeddings"]["requests"] == 1
    statuses = {item["id"]: item["status"] for item in summary["items"]}
    assert statuses == {"t1": "kept", "t2": "duplicate", "t3": "dropped", "t4": "kept",
                        "t5": "dropped", "t6": "kept", "t7": "dropped"}

    # malformed output: re-asked once for "refund", three replies for "gibberish"
    counts = asked(themes_server)
    assert counts["refund"] == 2 and counts["gibberish"] == 3 and counts["library"] == 1

    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in rows] == ["t1", "t4", "t6"]  # by score, then id
    hotel, library, _ = rows
    assert hotel["cluster_size"] == 2 and hotel["source"]["lines"] == [1, 2]
    assert hotel["source"]["ids"] == ["t1", "t2"] and hotel["score"] == 10
    assert hotel["duplicates"][0]["id"] == "t2" and hotel["duplicates"][0]["similarity"] >= 0.9
    assert library["source"]["lines"] == [4, 8] and library["cluster_size"] == 1
    assert library["description"].startswith("A lending library")
    assert hotel["task"] == TASKS["grandhotel"][0]

    # what synth world --input reads: the same descriptions, labelled by id
    items = _world_items(argparse.Namespace(input=str(out), description=None))
    assert [item.label for item in items] == ["t1", "t4", "t6"]
    assert [item.payload["description"] for item in items] == \
        [row["description"] for row in rows]


def test_themes_resumes_from_its_journal_after_a_kill(
        themes_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    corpus = write_corpus(tmp_path)
    out = tmp_path / "descriptions.jsonl"
    args = themes_args(themes_server, corpus, out, "--concurrency", "2")
    cli_main(args)
    first_output = out.read_text(encoding="utf-8")
    journal = tmp_path / "descriptions.jsonl.journal.jsonl"
    records = journal.read_text(encoding="utf-8").splitlines()
    assert len(records) == 7
    # a kill after two items: their records survive, plus a torn third line
    journal.write_text("\n".join(records[:2]) + "\n" + records[2][:25], encoding="utf-8")
    done = {json.loads(line)["label"] for line in records[:2]}
    by_id = {f"t{i}": marker for i, marker in enumerate(TASKS, start=1)}
    out.unlink()
    before = len(themes_server.chat_requests)
    cli_main(args)
    text = capsys.readouterr().out
    again = asked(themes_server, before)
    assert not {by_id[label] for label in done} & set(again)  # finished items not redone
    assert set(again) == {by_id[f"t{i}"] for i in range(1, 8)} - {by_id[x] for x in done}
    assert "2 assessed before (resumed)" in text
    assert out.read_text(encoding="utf-8") == first_output

    # nothing left: no chat request; a stricter --min-score re-filters from the journal
    before = len(themes_server.chat_requests)
    cli_main([*args, "--min-score", "5"])
    assert len(themes_server.chat_requests) == before
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in rows] == ["t1"]


def test_items_the_server_refuses_are_errors_and_retried(
        themes_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "small.jsonl"
    corpus.write_text("".join(json.dumps({"text": TASKS[m][0]}) + "\n"
                              for m in ("grandhotel", "library", "capital")), encoding="utf-8")
    out = tmp_path / "d.jsonl"
    themes_server.responder = themes_responder(fail=frozenset({"library"}))
    assert cli_main(themes_args(themes_server, corpus, out)) == 1
    text = capsys.readouterr().out
    assert "error line-2 (line 2): model request failed" in text and "1 error(s)" in text
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["line-1"]

    themes_server.responder = themes_responder()
    before = len(themes_server.chat_requests)
    assert cli_main(themes_args(themes_server, corpus, out)) == 0
    assert asked(themes_server, before) == {"library": 1}
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["line-1", "line-2"]


def test_themes_as_a_library(themes_server: ScriptedLLMServer, llm_config: LLMConfig,
                             tmp_path: Path) -> None:
    readout = read_corpus(write_corpus(tmp_path))

    async def go() -> Any:
        async with LLMClient(llm_config) as client:
            return await mine_themes(client, readout, ThemeOptions(similarity=0.999),
                                     corpus="corpus.jsonl")

    result = asyncio.run(go())
    # a stricter threshold keeps the two hotels apart
    assert [row["id"] for row in result.rows] == ["t1", "t4", "t2", "t6"]
    assert result.rows[0]["source"]["corpus"] == "corpus.jsonl"
    assert "kept 4 description(s)" in result.render_text()


def test_bad_corpora_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    base = ["--base-url", "http://127.0.0.1:9/v1", "--model", "m"]
    assert cli_main(["synth", "themes", str(tmp_path / "nope.jsonl"), *base]) == 2
    assert "nope.jsonl' does not exist" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text('{"body": "x"}\n\n', encoding="utf-8")
    assert cli_main(["synth", "themes", str(empty), *base]) == 2
    err = capsys.readouterr().err
    assert "holds no usable task" in err and "empty.jsonl:1:" in err
    assert "Traceback" not in err
    assert cli_main(["synth", "themes", str(empty), "--min-score", "7", *base]) == 2
    assert "--min-score must be between 1 and 5" in capsys.readouterr().err
    with pytest.raises(InputError, match="holds no usable task"):
        read_corpus(empty)
    chosen = tmp_path / "prompts.jsonl"
    chosen.write_text('{"q": "Rent a car for the weekend.", "key": 7}\n', encoding="utf-8")
    readout = read_corpus(chosen, text_field="q", id_field="key")
    assert [(i.text, i.id, i.line) for i in readout.items] == \
        [("Rent a car for the weekend.", "7", 1)]


def test_clustering_is_deterministic_and_leader_based() -> None:
    vectors = [[1.0, 0.0], [0.95, 0.05], [0.0, 1.0], [0.0, 0.0], [0.7, 0.7]]
    clusters = cluster_by_similarity(vectors, 0.9)
    assert [[i for i, _ in c] for c in clusters] == [[0, 1], [2], [3], [4]]
    assert clusters == cluster_by_similarity(vectors, 0.9)
    assert [[i for i, _ in c] for c in cluster_by_similarity(vectors, 0.7)] == \
        [[0, 1, 4], [2], [3]]
    with pytest.raises(ValueError, match="differ in length"):
        cluster_by_similarity([[1.0], [1.0, 0.0]], 0.9)


# ------------------------------------------------------------------ review
VERDICT = {
    "models_request": "partly",
    "summary": "The shop covers orders and returns but not loyalty points.",
    "missing_rules": ["A customer may hold at most 3 pending orders."],
    "missing_tools": ["award_points: add loyalty points to a customer"],
    "risky_tools": [{"tool": "cancel_order", "risk": "refunds without a limit"},
                    {"tool": "delete_everything", "risk": "made up"}],
    "suggestions": ["Add a loyalty points balance to Customer."],
}
DESCRIPTION = "An online shop with orders, returns and loyalty points for customers."


def review_args(server: ScriptedLLMServer, world: Path, *more: str) -> list[str]:
    return ["synth", "review", str(world), "--description", DESCRIPTION,
            "--base-url", server.url, "--model", "m", *more]


def test_review_prints_the_verdict_as_text_and_json(
        llm_server: ScriptedLLMServer, capsys: pytest.CaptureFixture[str]) -> None:
    llm_server.push(json.dumps(VERDICT), f"```json\n{json.dumps(VERDICT)}\n```")
    assert cli_main(review_args(llm_server, SHOP)) == 0  # advisory: 0 despite the gaps
    text = capsys.readouterr().out
    assert "review of OnlineShop" in text and "models the request: partly" in text
    assert "  - A customer may hold at most 3 pending orders." in text
    assert "  - award_points: add loyalty points to a customer" in text
    assert "cancel_order: refunds without a limit" in text
    assert "delete_everything (not a tool of this world): made up" in text
    assert "advisory only" in text

    request = llm_server.chat_requests[0]
    assert DESCRIPTION in request.text  # the description,
    assert "world OnlineShop" in request.text  # the spec text,
    assert '"invariants"' in request.text and "place_order(" in request.text  # the summary
    assert "require " in request.text

    assert cli_main(review_args(llm_server, SHOP, "--format", "json",
                                "--fail-on-gaps")) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["world"] == "OnlineShop" and report["has_gaps"] is True
    assert report["verdict"] == VERDICT
    assert report["unknown_tools"] == ["delete_everything"]
    assert report["usage"]["requests"] == 1


def test_review_of_a_clean_verdict_passes_fail_on_gaps(
        llm_server: ScriptedLLMServer, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    world = tmp_path / "counter.world"
    world.write_text(counter_world(), encoding="utf-8")
    description = tmp_path / "description.txt"
    description.write_text("A counter that goes up and down but never below zero.\n",
                           encoding="utf-8")
    llm_server.push(json.dumps({"models_request": "yes", "summary": "It does."}))
    status = cli_main(["synth", "review", str(world), "--description-file", str(description),
                       "--fail-on-gaps", "--base-url", llm_server.url, "--model", "m"])
    assert status == 0
    assert "missing rules: none" in capsys.readouterr().out


def test_review_refuses_a_world_with_errors(llm_server: ScriptedLLMServer, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    world = tmp_path / "broken.world"
    world.write_text(counter_world(typo=True), encoding="utf-8")
    assert cli_main(review_args(llm_server, world)) == 2
    err = capsys.readouterr().err
    assert "broken.world:" in err and "byy" in err and "^" in err  # the diagnostic, shown
    assert "checks clean" in err and "Traceback" not in err
    assert llm_server.requests == []  # the model is never asked

    assert cli_main(["synth", "review", str(world), "--description", "  ",
                     "--base-url", llm_server.url, "--model", "m"]) == 2
    assert "the description is empty" in capsys.readouterr().err
    assert cli_main(["synth", "review", str(tmp_path / "nope.world"), "--description", "x",
                     "--base-url", llm_server.url, "--model", "m"]) == 2
    assert "nope.world' does not exist" in capsys.readouterr().err
