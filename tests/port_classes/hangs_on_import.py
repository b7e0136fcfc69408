"""A module that never finishes importing (written for the sandbox tests)."""

while True:
    pass


class Never:
    def call(self) -> dict:
        return {}
