# ruff: noqa  (a specimen of code found in the wild, kept in its own style)
"""A library lending desk written as a subclass of a small shared base class, as benchmark
suites do when several APIs share a session: ``BaseAPI`` holds the login tools and the
session state, ``LibraryAPI`` adds the domain tools. Errors are raised as exceptions with
messages, results are plain dicts (BFCL style)."""

from copy import deepcopy
from typing import Dict, List, Optional

DEFAULT_STATE = {
    "users": {"alice": "pw-alice", "bob": "pw-bob"},
    "books": {},
    "loans": {},
    "loan_days": 14,
    "today": 100,
}


class BaseAPI:
    """Shared session handling: users with passwords and who is logged in."""

    def __init__(self) -> None:
        self.users: Dict[str, str] = {}
        self.current_user: Optional[str] = None
        self.failed_logins: int = 0

    def _require_login(self) -> str:
        if self.current_user is None:
            raise PermissionError("login required")
        return self.current_user

    def login(self, username: str, password: str) -> Dict[str, bool]:
        """Log a user in.

        Args:
            username (str): The user's name.
            password (str): The user's password.
        """
        if self.users.get(username) != password:
            self.failed_logins += 1
            return {"login_status": False}
        self.current_user = username
        return {"login_status": True}

    def logout(self) -> Dict[str, bool]:
        """Log the current user out."""
        was_logged_in = self.current_user is not None
        self.current_user = None
        return {"logout_status": was_logged_in}

    def get_status(self) -> Dict[str, object]:
        """Who is logged in, and how many logins failed so far."""
        return {"user": self.current_user, "failed_logins": self.failed_logins}


class LibraryAPI(BaseAPI):
    """A lending desk: a catalogue of books with copies, loans with due days, and a calendar."""

    def __init__(self) -> None:
        super().__init__()
        self.books: Dict[str, Dict[str, object]] = {}
        self.loans: Dict[str, Dict[str, object]] = {}
        self.loan_days: int = 14
        self.today: int = 100

    def _load_scenario(self, scenario: dict) -> None:
        state = deepcopy(DEFAULT_STATE)
        state.update(scenario)
        self.users = state["users"]
        self.books = state["books"]
        self.loans = state["loans"]
        self.loan_days = state["loan_days"]
        self.today = state["today"]

    def search_catalogue(self, keyword: str, author: Optional[str] = None) -> Dict[str, List[str]]:
        """Find books whose title holds a keyword, optionally by one author.

        Args:
            keyword (str): A word of the title (case-insensitive).
            author (str): The author's exact name.
        """
        hits = [isbn for isbn, book in self.books.items()
                if keyword.lower() in str(book["title"]).lower()
                and (author is None or book["author"] == author)]
        return {"isbns": sorted(hits)}

    def borrow(self, isbn: str) -> Dict[str, object]:
        """Borrow a copy of a book for the logged-in user.

        Args:
            isbn (str): The book's ISBN.
        """
        user = self._require_login()
        book = self.books[isbn]  # KeyError for an unknown ISBN
        if book["copies"] <= 0:  # type: ignore[operator]
            raise ValueError(f"no copies of {isbn} left")
        mine = [l for l in self.loans.values() if l["user"] == user and not l["returned"]]
        if len(mine) >= 3:
            raise ValueError("loan limit of 3 reached")
        book["copies"] -= 1  # type: ignore[operator]
        loan_id = f"L{len(self.loans) + 1}"
        self.loans[loan_id] = {"isbn": isbn, "user": user, "due": self.today + self.loan_days,
                               "returned": False, "renewals": 0}
        return {"loan_id": loan_id, "due": self.today + self.loan_days}

    def return_book(self, loan_id: str) -> Dict[str, object]:
        """Return a borrowed book; a late return owes 0.25 a day.

        Args:
            loan_id (str): The loan's id, e.g. "L1".
        """
        user = self._require_login()
        loan = self.loans.get(loan_id)
        if loan is None or loan["user"] != user:
            raise KeyError(f"no loan {loan_id} for {user}")
        if loan["returned"]:
            return {"returned": False, "reason": "already returned"}
        loan["returned"] = True
        self.books[loan["isbn"]]["copies"] += 1  # type: ignore[index, operator]
        late_days = max(0, self.today - loan["due"])  # type: ignore[operator]
        return {"returned": True, "fine": late_days * 0.25}

    def renew(self, loan_id: str) -> Dict[str, object]:
        """Extend a loan by the loan period, at most twice and never when overdue.

        Args:
            loan_id (str): The loan's id.
        """
        user = self._require_login()
        loan = self.loans.get(loan_id)
        if loan is None or loan["user"] != user or loan["returned"]:
            raise KeyError(f"no open loan {loan_id} for {user}")
        if loan["renewals"] >= 2:  # type: ignore[operator]
            return {"renewed": False, "reason": "renewal limit reached"}
        if self.today > loan["due"]:  # type: ignore[operator]
            return {"renewed": False, "reason": "overdue"}
        loan["renewals"] += 1  # type: ignore[operator]
        loan["due"] += self.loan_days  # type: ignore[operator]
        return {"renewed": True, "due": loan["due"]}

    def my_loans(self) -> Dict[str, List[Dict[str, object]]]:
        """The logged-in user's open loans, with days left (negative when overdue)."""
        user = self._require_login()
        rows = [{"loan_id": k, "isbn": l["isbn"], "days_left": l["due"] - self.today}  # type: ignore[operator]
                for k, l in self.loans.items() if l["user"] == user and not l["returned"]]
        return {"loans": rows}

    def advance_days(self, days: int = 1) -> Dict[str, int]:
        """Move the calendar forward.

        Args:
            days (int): Days to advance; at least 1.
        """
        if days < 1:
            raise ValueError("days must be at least 1")
        self.today += days
        return {"today": self.today}
