"""``private`` tables, sequences and the object graphs rows make (WS513 retired).

A private item is state like any other (tools change it, failed calls undo it, data may give
it, ``state_hash()`` covers it, copies and snapshots hold their own) and is left out of the
public state, ``export_state()``; ``worldspec compare`` therefore does not compare it with
the original, whose ``_`` attributes it does not see either.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mypy_support import mypy_strict

from worldspec.compiler.api import check_source
from worldspec.compiler.build import generate_all, write_packages
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.formatter import format_source
from worldspec.dsl.render import render_explanation
from worldspec.port.compare import CompareOptions, Original, compare
from worldspec.port.sandbox import Limits
from worldspec.runtime.episode import Episode
from worldspec.services.loading import load_result

REPO = Path(__file__).resolve().parent.parent
CLASSES = Path(__file__).resolve().parent / "port_classes"

#: a public table of documents; the index of their title words is a private graph of rows
#: (each node refers to its document and to the next node), numbered by a private sequence
LIBRARY = """\
world Library "Documents, and the internal index of the words of their titles."

config { results: bfcl }

entity Doc "A document." {
  key id: str
  title: str
}

entity Node "One indexed word, linked to the word indexed after it." {
  key id: str = next(node_ids)
  word: str
  doc: Doc
  next: Node? = none
}

state {
  docs: table Doc
  private index: table Node "The original's _index: a graph of word nodes."
  private node_ids: sequence "N{:03d}"
  private last: Node? = none
  added: int = 0
}

tool add(id: str "The document's id.", title: str "Its title; at most five words.") -> int
  "Add a document and index the words of its title; how many documents there are."
{
  insert Doc(id: id, title: title) into docs
  for word in title.split() {
    let node = Node(word: word, doc: docs[id])
    insert node into index
    if last != none {
      index[last.id].next = node
    }
    last = node
  }
  if len(title.split()) > 5 {
    fail "A title has at most five words."
  }
  added += 1
  return len(docs)
}

tool find(word: str "A word.") -> list[str] "The ids of the documents whose title has the word." {
  return [n.doc.id for n in index if n.word == word]
}
"""

DATA = {"docs": [{"id": "D1", "title": "graphs"}]}


def load(text: str) -> type[Episode]:
    result = check_source(text, "world.world")
    assert result.ok, [d.message for d in result.diagnostics]
    return next(iter(load_result(result).worlds.values()))


@pytest.fixture(scope="module")
def library() -> type[Episode]:
    return load(LIBRARY)


def test_private_tables_and_sequences_check_and_format() -> None:
    assert list(check_source(LIBRARY, "library.world").diagnostics) == []
    formatted = format_source(LIBRARY, "library.world")
    assert "  private index: table Node" in formatted
    assert '  private node_ids: sequence "N{:03d}"' in formatted


def test_the_public_state_leaves_private_tables_out(library: type[Episode]) -> None:
    assert library.PRIVATE == frozenset({"index", "node_ids", "last"})
    ep = library(data=DATA)
    assert ep.call("add", {"id": "D2", "title": "trees and graphs"}) == 2
    assert ep.export_state() == {
        "docs": [{"id": "D1", "title": "graphs"}, {"id": "D2", "title": "trees and graphs"}],
        "added": 1}
    everything = ep.export_state(private=True)
    assert everything["index"] == [
        {"id": "N001", "word": "trees", "doc": "D2", "next": "N002"},
        {"id": "N002", "word": "and", "doc": "D2", "next": "N003"},
        {"id": "N003", "word": "graphs", "doc": "D2", "next": None}]
    assert (everything["node_ids"], everything["last"]) == (3, "N003")
    assert ep.call("find", {"word": "graphs"}) == ["D2"]


def test_private_rows_are_hashed_and_diffed_as_private(library: type[Episode]) -> None:
    ep = library(data=DATA)
    start = ep.copy()
    ep.call("add", {"id": "D2", "title": "trees"})
    same_public = library(data={**DATA, "docs": [*DATA["docs"], {"id": "D2", "title": "trees"}],
                                "added": 1})
    assert same_public.export_state() == ep.export_state()
    assert same_public.state_hash() != ep.state_hash()  # the private index is hashed
    row = {"id": "N001", "word": "trees", "doc": "D2", "next": None}
    assert {"path": 'index["N001"]', "old": None, "new": row, "private": True} in ep.diff(start)
    assert {"path": 'docs["D2"]', "old": None,
            "new": {"id": "D2", "title": "trees"}} in ep.diff(start)  # public: no mark
    loaded = library(data={**same_public.export_state(), "index": [row], "node_ids": 1,
                           "last": "N001"})
    assert loaded.state_hash() == ep.state_hash()  # data may give private tables


def test_a_failed_call_undoes_its_writes_to_private_tables(library: type[Episode]) -> None:
    ep = library(data=DATA)
    ep.call("add", {"id": "D2", "title": "trees and graphs"})
    before, digest = ep.export_state(private=True), ep.state_hash()
    result = ep.call("add", {"id": "D3", "title": "one two three four five six"})
    assert result == {"error": "A title has at most five words."}
    assert ep.export_state(private=True) == before  # six nodes inserted, then undone
    assert ep.state_hash() == digest
    assert ep.call("add", {"id": "D3", "title": "forests"}) == 3
    assert ep.export_state(private=True)["index"][-1]["id"] == "N004"  # the sequence too


def test_copies_snapshots_and_resets_keep_private_tables_apart(
        library: type[Episode]) -> None:
    ep = library(data=DATA)
    snap = ep.snapshot()
    other = ep.copy()
    ep.call("add", {"id": "D2", "title": "trees"})
    assert other.export_state(private=True)["index"] == []
    ep.restore(snap)
    assert ep.export_state(private=True) == other.export_state(private=True)
    ep.call("add", {"id": "D2", "title": "trees"})
    ep.reset(data=DATA)
    assert ep.state_hash() == other.state_hash()


def test_the_generated_package_passes_mypy_strict(tmp_path: Path) -> None:
    result = check_source(LIBRARY, "library.world")
    write_packages(generate_all(result), tmp_path / "out")
    run = mypy_strict(tmp_path / "out", tmp_path / "cache")
    assert run.returncode == 0, run.stdout + run.stderr


def test_ws513_is_retired_and_says_so() -> None:
    entry = CATALOG["WS513"]
    assert entry.retired
    assert "Retired:" in render_explanation(entry)
    reported = [path for folder in ("compiler", "dsl", "worldspec")
                for path in (REPO / folder).rglob("*.py")
                if '"WS513"' in path.read_text(encoding="utf-8") and path.name != "catalog.py"]
    assert reported == []


# ------------------------------------------------------------ compare with an original
GLOSSARY = CLASSES / "glossary.py"
GLOSSARY_DATA = json.loads((CLASSES / "glossary.json").read_text(encoding="utf-8"))
OPTIONS = CompareOptions(examples=40, steps=12, limits=Limits(call_timeout=5.0))

#: a hand-written port of tests/port_classes/glossary.py: its ``_cache`` is a private table
GLOSSARY_WORLD = """\
world GlossaryEnv "A glossary: terms with their definitions, and an internal cache of look-ups."

config { results: bfcl }

entity Term {
  key term: str
  definition: str
}

entity Hit "A cached look-up." {
  key term: str
  hits: int = 0
}

state {
  terms: table Term
  private cache: table Hit "What the original keeps in _cache."
}

tool look_up(term: str "The term, e.g. \\"graph\\".") -> json
  "Look a term up; every successful look-up of a term is counted."
{
  if not (term in terms) {
    return {"success": false, "error": f"Term {term} not found"}
  }
  if not (term in cache) {
    insert Hit(term: term) into cache
  }
  let hit = cache[term]
  hit.hits += 1
  return {"success": true, "data": {"definition": terms[term].definition, "hits": hit.hits}}
}

tool define(term: str "The term.", definition: str "What it means; not empty.") -> json
  "Define a term, or redefine it (which forgets its look-ups)."
{
  if definition == "" {
    return {"success": false, "error": "Definition must not be empty"}
  }
  if term in terms {
    terms[term].definition = definition
  } else {
    insert Term(term: term, definition: definition) into terms
  }
  if term in cache {
    delete cache[term] from cache
  }
  return {"success": true, "data": {"term": term}}
}
"""


def glossary() -> Original:
    return Original(GLOSSARY, "GlossaryEnv", GLOSSARY_DATA)


def test_a_port_with_a_private_cache_table_agrees() -> None:
    report = compare(load(GLOSSARY_WORLD), glossary(), OPTIONS)
    assert report.agrees, report.render_text()
    assert report.tools == ["look_up", "define"] and report.calls > 100


def test_a_port_with_a_public_cache_table_differs_in_its_state_names() -> None:
    public = GLOSSARY_WORLD.replace("  private cache: table Hit", "  cache: table Hit")
    assert public != GLOSSARY_WORLD
    report = compare(load(public), glossary(), OPTIONS)
    assert not report.agrees
    assert [d.kind for d in report.differences] == ["initial state"]
    assert report.differences[0].message == "state names differ (only in the world: cache)"
