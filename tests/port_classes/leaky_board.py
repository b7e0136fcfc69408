"""A message board whose state lives partly outside its instance, written for the isolation
tests of ``worldspec compare``: a module-level list of every post, a mutable default argument,
a class attribute changed at runtime and the ``decimal`` context.

Run in one interpreter, each new instance sees what earlier instances did (the module's
list, the shared default list, the raised limit, the precision). A correct port models one
instance in a fresh interpreter (tests/port_classes/leaky_board.world): a comparison must
start every call sequence from such a fresh interpreter, or it reports differences that are
not there.
"""

import decimal

_POSTED = []  # every text posted since the module was imported


class LeakyBoard:
    """A board of short posts, full at three."""

    serial = 0  # the number of the last post, on every board

    def __init__(self):
        self.posts = []

    def post(self, text: str, mentions: list = []) -> dict:  # noqa: B006 - the point
        """Post a text.

        Args:
            text (str): The text of the post.
        """
        if len(_POSTED) >= 3:
            return {"success": False, "error": "Board is full"}
        LeakyBoard.serial += 1
        mentions.append(text)
        _POSTED.append(text)
        self.posts.append(text)
        return {"success": True, "data": {"number": LeakyBoard.serial, "posts": len(_POSTED),
                                          "mentions": len(mentions)}}


class LeakySettings:
    """Settings kept where every instance shares them: a class attribute and the decimal
    context."""

    limit = 3

    def raise_limit(self) -> dict:
        """Let one more in, on every instance."""
        LeakySettings.limit += 1
        return {"limit": LeakySettings.limit}

    def set_precision(self, digits: int) -> dict:
        """Set the decimal precision for share()."""
        decimal.getcontext().prec = digits
        return {"precision": digits}

    def share(self) -> str:
        """One third, as text, in the current decimal precision."""
        return str(decimal.Decimal(1) / decimal.Decimal(3))

    def note(self, text: str) -> dict:
        """Write a note in /tmp; answers the notes there."""
        import os

        with open(f"/tmp/note-{len(os.listdir('/tmp'))}.txt", "w", encoding="utf-8") as handle:
            handle.write(text)
        return {"notes": sorted(os.listdir("/tmp"))}
