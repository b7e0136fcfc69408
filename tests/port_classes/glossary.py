"""A small environment class that keeps state it does not expose, for the tests of
``worldspec compare`` with ``private`` tables.

Its public state is ``terms`` (a dict of dicts keyed by term); ``_cache`` (a dict of dicts
too, one entry per term looked up, with its hit count) is internal: the comparison leaves
``_`` attributes out, so a port holds it in a ``private`` table.
"""

from typing import Any


class GlossaryEnv:
    """A glossary: terms with their definitions, and an internal cache of look-ups."""

    def __init__(self, config: dict[str, Any]):
        self.terms: dict[str, dict[str, Any]] = config.get("terms", {})
        self._cache: dict[str, dict[str, Any]] = {}

    def look_up(self, term: str) -> dict[str, Any]:
        """Look a term up; every successful look-up of a term is counted.

        Args:
            term (str): The term, e.g. "graph".
        """
        if term not in self.terms:
            return {"success": False, "error": f"Term {term} not found"}
        entry = self._cache.get(term)
        if entry is None:
            entry = {"term": term, "hits": 0}
            self._cache[term] = entry
        entry["hits"] += 1
        return {"success": True,
                "data": {"definition": self.terms[term]["definition"], "hits": entry["hits"]}}

    def define(self, term: str, definition: str) -> dict[str, Any]:
        """Define a term, or redefine it (which forgets its look-ups).

        Args:
            term (str): The term.
            definition (str): What it means; not empty.
        """
        if not definition:
            return {"success": False, "error": "Definition must not be empty"}
        self.terms[term] = {"term": term, "definition": definition}
        self._cache.pop(term, None)
        return {"success": True, "data": {"term": term}}
