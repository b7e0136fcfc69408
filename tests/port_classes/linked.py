"""Folders that hold folders, in the style of BFCL's file system: the size of a folder is the
sum over what it holds, so a folder put inside itself ends in a RecursionError, whose text
CPython words after where it noticed the limit: the same call can end "maximum recursion depth
exceeded" once and "... while calling a Python object" the next time (a test class for
``worldspec compare``'s error-text rule)."""


class Folder:
    def __init__(self, name):
        self.name = name
        self.contents = {}


def _size(item):
    if isinstance(item, Folder):
        return 1 + sum(_size(child) for child in item.contents.values())
    return 0


class Links:
    def __init__(self):
        self.root = Folder("/")
        self.looped = False

    def nest(self) -> dict:
        """Put the root folder inside itself."""
        self.root.contents["self"] = self.root
        self.looped = True
        return {"nested": True}

    def size(self) -> dict:
        """How many folders the root holds, itself included."""
        return {"size": _size(self.root)}
