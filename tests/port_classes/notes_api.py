"""A BFCL-style class written for the skeleton tests of ``worldspec port``: it raises
exceptions, returns plain dicts, documents parameters Sphinx-style, has optional parameters,
and would refuse to be imported at all (which reading it must never do)."""


DEFAULT_STATE = {"notes": {}, "next_id": 1, "owner": None}

raise RuntimeError("importing this module is forbidden: read it, do not run it")


class NotesAPI:
    """Notes with tags, BFCL style."""

    def __init__(self):
        self.notes: dict[str, dict[str, str]]
        self.next_id: int
        self.owner: str | None
        self._secret = "private"

    def _load_scenario(self, scenario: dict) -> None:
        self.notes = scenario.get("notes", DEFAULT_STATE["notes"])
        self.next_id = scenario.get("next_id", DEFAULT_STATE["next_id"])
        self.owner = scenario.get("owner", DEFAULT_STATE["owner"])

    def add_note(self, text: str, tags: list[str] | None = None) -> dict[str, int]:
        """Add a note.

        :param text: What the note says.
        :param tags: Labels to file it under.
        """
        if not text:
            raise ValueError("A note needs text")
        self.notes[str(self.next_id)] = {"text": text}
        self.next_id += 1
        return {"id": self.next_id - 1}

    def find(self, word: str, limit: int = 10) -> dict[str, list[str]]:
        """Find notes holding a word."""
        found = [k for k, v in self.notes.items() if word in v["text"]]
        return {"ids": found[:limit]}
