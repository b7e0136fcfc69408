"""The episode's write API (``set_field``, ``append``/``add``/``remove``, ``set_state``,
``insert``, ``delete``, ``next_id``, ``charge``): what generated code calls, one call per
statement of the spec that changes state, each change undone when the call fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_support import compile_text, generated_source

from worldspec.runtime import budget
from worldspec.runtime.episode import Episode
from worldspec.runtime.errors import LimitError, ToolError

SHELF = """\
world Shelf "Books on a shelf, and a counter."

config { results: envscaler }

entity Book "A book." {
  key id: str
  title: str
  copies: int = 1
}

entity Card "A reader's card." {
  key id: str
  tags: set[str] = [] "Shelf tags."
  loans: list[str] = [] "What was borrowed, in order."
  notes: map[str, str] = {} "Notes by author."
}

state {
  books: table Book
  cards: table Card
  last_title: str? = none
  book_ids: sequence "B{:03d}"
}

tool add(title: str, copies: int) -> Book "Add a book." {
  let book = Book(id: next(book_ids), title: title, copies: copies)
  insert book into books
  last_title = title
  return book
}

tool retitle(book: Book, title: str, copies: int) -> Book
  "Rename a book and set its copies; fails after both writes when copies is 0." {
  book.title = title
  book.copies = copies
  require 12 // copies > 0 else "copies must divide 12"
  return book
}

tool grow(book: Book) -> Book "One more copy, and the title says so: each value reads the row." {
  book.copies = book.copies + 1
  book.title = f"{book.title} ({book.copies})"
  return book
}

tool open_card(id: str) -> Card "Open a reader's card." {
  let card = Card(id: id)
  insert card into cards
  return card
}

tool lend(card: Card, title: str, tag: str) -> Card "Lend a book: the card's loans and tags grow." {
  append title to card.loans
  append tag to card.tags
  return card
}

tool unlend(card: Card, title: str, author: str) -> Card
  "Take back a loan and a note; fails where either is not there." {
  remove title from card.loans
  remove author from card.notes
  return card
}

tool remove(book: Book) -> str "Take a book off the shelf." {
  delete book from books
  return book.id
}
"""


@pytest.fixture(scope="module")
def shelf(tmp_path_factory: pytest.TempPathFactory) -> type[Episode]:
    return compile_text(tmp_path_factory.mktemp("shelf"), "shelf.world", SHELF, "Shelf")


def test_each_statement_is_one_call_of_the_write_api(shelf: type[Episode]) -> None:
    """The generated tools write through the named API, one call per spec statement;
    statements setting fields of one row one after the other are one call when no value
    reads the row (computing them all first gives what one after the other gives), and one
    call each where a value reads it."""
    source = generated_source(shelf)
    assert "self.insert(self.t_books, book)" in source
    assert "self.set_state('last_title', title)" in source
    assert "self.next_id('book_ids', 'B{:03d}')" in source
    assert "self.set_fields(book, ('title', 'copies'), title, copies)" in source
    grow = source[source.index("def tool_grow"):source.index("def tool_remove")]
    assert "set_fields" not in grow and grow.count("self.set_field(") == 2
    assert "self.delete(self.t_books, book.id_)" in source  # the row's key, by its key field


def test_append_and_remove_are_calls_that_say_so(shelf: type[Episode]) -> None:
    """``append``/``remove`` on a row's collection is one call of the write API that names
    it (a list appends, a set adds once, ``remove`` takes the first occurrence or a map's
    key); removing what is not there fails the call and undoes what it did before."""
    source = generated_source(shelf)
    assert "self.append(card, 'loans', title)" in source
    assert "self.add(card, 'tags', tag)" in source
    assert "self.remove(card, 'loans', title)" in source
    assert "self.remove(card, 'notes', author)" in source
    ep = shelf()
    ep.call("open_card", {"id": "C1"})
    for title in ("Dune", "Emma", "Dune"):
        ep.call("lend", {"card": "C1", "title": title, "tag": "sf"})
    card = ep.tables["cards"].row("C1")
    assert card.loans == ("Dune", "Emma", "Dune") and card.tags == ("sf",)
    before = ep.state_hash()
    refused = ep.call("unlend", {"card": "C1", "title": "Emma", "author": "Herbert"})
    assert refused["success"] is False and "Herbert" in str(refused)
    assert card.loans == ("Dune", "Emma", "Dune") and ep.state_hash() == before  # undone
    missing = ep.call("unlend", {"card": "C1", "title": "Ulysses", "author": "Herbert"})
    assert missing["success"] is False and "Ulysses" in str(missing)
    ep.set_field(card, "notes", {"Herbert": "classic"})
    done = ep.call("unlend", {"card": "C1", "title": "Dune", "author": "Herbert"})
    assert done["success"] is True
    assert card.loans == ("Emma", "Dune") and card.notes == {}


def test_a_failed_call_undoes_every_write(shelf: type[Episode]) -> None:
    """Writes made before a failure are rolled back (fields, the row's text and digest);
    the same writes in a call that succeeds stay."""
    ep = shelf()
    added = ep.call("add", {"title": "Dune", "copies": 2})
    assert added == {"success": True, "data": {"id": "B001", "title": "Dune", "copies": 2}}
    before = ep.state_hash()
    failed = ep.call("retitle", {"book": "B001", "title": "Emma", "copies": 0})
    assert failed["success"] is False
    book = ep.tables["books"].row("B001")
    assert (book.title, book.copies) == ("Dune", 2) and ep.state_hash() == before
    done = ep.call("retitle", {"book": "B001", "title": "Emma", "copies": 3})
    assert done["data"] == {"id": "B001", "title": "Emma", "copies": 3}
    assert ep.state_hash() != before
    grown = ep.call("grow", {"book": "B001"})  # the second value sees the first write
    assert grown["data"] == {"id": "B001", "title": "Emma (4)", "copies": 4}


def test_set_field_clears_the_row_and_table_caches(shelf: type[Episode]) -> None:
    ep = shelf()
    ep.call("add", {"title": "Dune", "copies": 2})
    table = ep.tables["books"]
    book = table.row("B001")
    digest, table_digest = book.digest(), table.digest()
    ep.set_field(book, "copies", 2)  # the same value: the caches are made again, equal
    assert book.digest() == digest and table.digest() == table_digest
    ep.set_field(book, "copies", 5)
    assert book.digest() != digest and table.digest() != table_digest
    ep._rollback(len(ep._undo) - 2)  # both writes undone: the caches of before come back
    assert book.copies == 2 and book.digest() == digest and table.digest() == table_digest


def test_set_fields_is_undone_whole(shelf: type[Episode]) -> None:
    """A group of field writes is undone field by field, the row's caches of before the
    group coming back with the last; the initial state rebuilt from the log is the start."""
    ep = shelf()
    ep.call("add", {"title": "Dune", "copies": 2})
    book = ep.tables["books"].row("B001")
    text, digest, state = book._result_text(), book.digest(), ep.state_hash()
    mark = len(ep._undo)
    ep.set_fields(book, ("title", "copies"), "Emma", 9)
    assert (book.title, book.copies) == ("Emma", 9) and book.digest() != digest
    assert '"Emma"' in book._result_text() and ep.state_hash() != state
    assert ep._rebuild_initial().export_state()["books"] == []
    ep._rollback(mark)
    assert (book.title, book.copies) == ("Dune", 2)
    assert book._result_text() is text and book.digest() == digest and ep.state_hash() == state


def test_insert_and_delete_refuse_what_cannot_be_done(shelf: type[Episode]) -> None:
    ep = shelf()
    ep.call("add", {"title": "Dune", "copies": 2})
    book = ep.tables["books"].row("B001")
    with pytest.raises(ToolError, match="already exists"):
        ep.insert(ep.tables["books"], book.clone())
    ep.delete(ep.tables["books"], book)
    assert "B001" not in ep.tables["books"] and ep.deleted_rows
    with pytest.raises(ToolError, match="not found"):
        ep.delete(ep.tables["books"], "B001")
    ep._rollback(0)
    assert "B001" not in ep.tables["books"]  # the whole log: the insertion undone too


def test_state_items_and_sequences(shelf: type[Episode]) -> None:
    ep = shelf()
    assert ep.next_id("book_ids", "B{:03d}") == "B001"
    assert ep.next_id("book_ids", "B{:03d}") == "B002"
    ep.set_state("last_title", "Emma")
    assert ep.export_state()["last_title"] == "Emma"
    ep._rollback(0)
    assert ep.export_state()["last_title"] is None
    assert ep.next_id("book_ids", "B{:03d}") == "B001"


def test_charge_fails_the_call_once_the_budget_is_spent(shelf: type[Episode]) -> None:
    ep = shelf()
    budget.refill(ep)
    ep.charge(budget.MAX_STEPS)  # all of it: still within the budget
    with pytest.raises(LimitError, match="steps"):
        ep.charge(1)


def test_the_random_source_is_put_back_by_a_failed_call(tmp_path: Path) -> None:
    world = compile_text(tmp_path, "dice.world", """\
world Dice "Dice."

config { results: envscaler  seed: 7 }

tool roll(fail: bool) -> int "Roll; fail afterwards when asked." {
  let n = random_int(1, 1000000)
  require not fail else "failed on purpose"
  return n
}
""", "Dice")
    ep, other = world(), world()
    assert ep.call("roll", {"fail": True})["success"] is False
    assert ep.call("roll", {"fail": False}) == other.call("roll", {"fail": False})
    assert "self.random_source()" in generated_source(world)


def test_set_fields_takes_one_value_per_name(shelf: type[Episode]) -> None:
    """``set_fields`` gets the names as one tuple and a value for each, by position: as many
    values as names set them all; a count that differs is a ``TypeError`` that changes
    nothing, whether or not a write of those names was made before."""
    ep = shelf()
    ep.call("add", {"title": "Dune", "copies": 2})
    book = ep.tables["books"].row("B001")
    mark = len(ep._undo)
    with pytest.raises(TypeError, match="1 values for 2 fields"):
        ep.set_fields(book, ("copies", "title"), 5)
    assert (book.title, book.copies) == ("Dune", 2) and len(ep._undo) == mark
    ep.set_fields(book, ("copies", "title"), 5, "Emma")
    assert (book.title, book.copies) == ("Emma", 5) and len(ep._undo) == mark + 2
    with pytest.raises(TypeError):
        ep.set_fields(book, ("copies", "title"), 6, "Emma", "extra")
    assert (book.title, book.copies) == ("Emma", 5) and len(ep._undo) == mark + 2
