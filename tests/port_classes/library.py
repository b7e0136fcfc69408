"""A class whose public state is derived when it is built, for the tests of ``worldspec port``.

Its data is a shelf of books (a list); the constructor builds an object graph from it: the
books by id, the ids by author, and the number of copies. A world reproduces that with
private state holding the shelf as given and an ``on load`` block that derives the rest.
"""

from typing import Any


class LibraryEnv:
    """A lending library built from a shelf of books."""

    def __init__(self, config: dict[str, Any]):
        shelf = config.get("shelf", [])
        self.books = {b["id"]: {"title": b["title"], "copies": b["copies"]} for b in shelf}
        self.by_author: dict[str, list[str]] = {}
        for b in shelf:
            self.by_author.setdefault(b["author"], []).append(b["id"])
        self.total_copies = sum(b["copies"] for b in shelf)

    def borrow(self, book_id: str) -> dict[str, Any]:
        """Borrow one copy of a book.

        Args:
            book_id (str): The book's id.
        """
        if book_id not in self.books:
            return {"error": f"No book {book_id}"}
        book = self.books[book_id]
        if book["copies"] == 0:
            return {"error": f"No copies left of {book['title']}"}
        book["copies"] -= 1
        self.total_copies -= 1
        return {"title": book["title"], "left": book["copies"]}

    def books_by(self, author: str) -> dict[str, Any]:
        """The ids of an author's books.

        Args:
            author (str): The author's name.
        """
        return {"ids": self.by_author.get(author, [])}
