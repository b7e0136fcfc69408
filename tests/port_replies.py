"""Scripted translations for the ``worldspec port`` tests: the tools of
tests/port_classes/inventory.py in WorldSpec, correct, with a planted behavioural difference,
and broken beyond repair; and a responder that answers each port request by its method."""

from __future__ import annotations

import re
from collections.abc import Callable

from llm_server import RecordedRequest

__all__ = ["BROKEN_GET_ITEM", "BUGGY_TAKE", "GET_ITEM", "LIBRARY_BOOKS_BY", "LIBRARY_BORROW",
           "RESTOCK", "TAKE", "fenced", "port_responder"]

GET_ITEM = '''tool get_item(item_id: str "The id of the item, e.g. \\"A1\\".") -> json
  "Look an item up by its id."
{
  if not (item_id in items) {
    return {"success": false, "error": f"Item {item_id} not found"}
  }
  let item = items[item_id]
  return {"success": true, "data": {"id": item.id, "name": item.name, "stock": item.stock}}
}
'''

TAKE = '''tool take(item_id: str "The id of the item.",
          count: int = 1 "How many to take; at least 1.") -> json
  "Take items out of stock. Every attempt is counted, even a failed one."
{
  attempts += 1
  if not (item_id in items) {
    return {"success": false, "error": f"Item {item_id} not found"}
  }
  if count <= 0 {
    return {"success": false, "error": "Count must be positive"}
  }
  let item = items[item_id]
  if item.stock < count {
    return {"success": false, "error": f"Only {item.stock} left of {item.name}"}
  }
  item.stock -= count
  append f"took {count} x {item_id}" to log
  return {"success": true, "data": {"id": item_id, "stock": item.stock}}
}
'''

#: the planted difference: taking the whole stock is refused (<= for <)
BUGGY_TAKE = TAKE.replace("if item.stock < count", "if item.stock <= count")

RESTOCK = '''tool restock(item_id: str "The id of the item.", count: int "How many to add.") -> json
  "Put items back in stock."
{
  if not (item_id in items) {
    return {"success": false, "error": f"Item {item_id} not found"}
  }
  let item = items[item_id]
  item.stock += count
  return {"success": true, "data": {"id": item_id, "stock": item.stock}}
}
'''

#: never checks clean: a str compared with an int
BROKEN_GET_ITEM = GET_ITEM.replace("if not (item_id in items)", "if item_id == 3")


#: tests/port_classes/library.py's borrow, with what its constructor derives from the data:
#: the shelf as given kept private, the books, authors and copies derived ``on load``
LIBRARY_BORROW = '''record Book {
  title: str
  copies: int
}

state {
  private shelf: list[json] = []
  books: map[str, Book] = {}
  by_author: map[str, list[str]] = {}
  total_copies: int = 0
}

on load {
  for b in shelf {
    let id = str(b["id"])
    let author = str(b["author"])
    books[id] = Book(title: str(b["title"]), copies: int(str(b["copies"])))
    if author not in by_author {
      by_author[author] = []
    }
    append id to by_author[author]
    state.total_copies += int(str(b["copies"]))
  }
}

tool borrow(book_id: str "The book's id.") -> json
  "Borrow one copy of a book."
{
  if book_id not in books {
    return {"error": f"No book {book_id}"}
  }
  let book = books[book_id]
  if book.copies == 0 {
    return {"error": f"No copies left of {book.title}"}
  }
  books[book_id].copies -= 1
  total_copies -= 1
  return {"title": book.title, "left": books[book_id].copies}
}
'''

LIBRARY_BOOKS_BY = '''tool books_by(author: str "The author's name.") -> json
  "The ids of an author's books."
{
  return {"ids": by_author.get(author) ?? []}
}
'''


def fenced(code: str) -> str:
    return f"Here is the port.\n\n```world\n{code}```\n"


def port_responder(replies: dict[str, str], *, repairs: list[str] | None = None,
                   seen: list[str] | None = None) -> Callable[[RecordedRequest], str]:
    """Answer "Port the method `X`" (and its compile repairs) with ``replies[X]``, and each
    differential repair request with the next of ``repairs``; ``seen`` records which kind
    of request came, in order."""
    queue = list(repairs or [])

    def respond(request: RecordedRequest) -> str:
        first_user = next(m["content"] for m in request.messages if m["role"] == "user")
        if "the differential test ran the original class" in first_user:
            if seen is not None:
                seen.append("repair")
            return fenced(queue.pop(0)) if queue else "I cannot fix it."
        method = re.search(r"Port the method `([a-z_]+)`", first_user)
        assert method is not None, first_user[:200]
        if seen is not None:
            seen.append(method.group(1))
        return fenced(replies[method.group(1)])

    return respond
