"""The catalog of diagnostic codes: severity, title, explanation and an example.

This table is the single source of truth: the checker reports by code,
``worldspec explain`` prints entries, and ``docs/diagnostics.md`` is
generated from it (a test keeps the document in sync).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CatalogEntry", "CATALOG", "entry"]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """What one diagnostic code means."""

    code: str
    severity: str
    title: str
    explanation: str
    example: str


CATALOG: dict[str, CatalogEntry] = {}


def entry(code: str, severity: str, title: str, explanation: str, example: str) -> None:
    """Register a code; codes are unique."""
    if code in CATALOG:
        raise ValueError(f"duplicate diagnostic code {code}")
    CATALOG[code] = CatalogEntry(code, severity, title, explanation.strip(), example.strip("\n"))


# ----------------------------------------------------------- WS1xx: input and syntax
entry("WS100", "error", "file cannot be read",
      """
The file could not be read: it does not exist, is a directory, is not
UTF-8 text, or contains NUL bytes. Spec files are UTF-8 text.
""", """
$ worldspec check missing.world
""")
entry("WS101", "error", "syntax error",
      """
The parser met a token it did not expect. The message says what it expected
in words. After a syntax error the parser skips to the next top-level
declaration, so one mistake yields one error per declaration at most.
""", """
entity User {
  key id str        # expected ':' after the field name
}
""")
entry("WS102", "error", "unterminated string",
      """
A string literal was opened with `"` and not closed on the same line. Use
triple quotes for text that spans lines.
""", """
tool greet() -> str "Says hello {
  return "hello
}
""")
entry("WS103", "error", "invalid escape or literal",
      """
A string contains an escape sequence WorldSpec does not know, or a number
or regular expression literal is malformed. Known escapes: \\\\ \\" \\n \\t
\\r \\0 \\uXXXX \\u{X...}.
""", """
let s = "tab\\q"
""")
entry("WS104", "error", "invalid f-string",
      """
An `f"..."` string has an unbalanced `{` or `}` or an interpolation that is
not a valid expression. Write `{{` and `}}` for literal braces.
""", """
let s = f"total: {order.total"
""")
entry("WS105", "error", "nesting too deep",
      """
The expression or block nesting exceeds what the compiler accepts (200
levels). Split the expression with `let`.
""", """
let x = ((((((((((((... 1 ...))))))))))))
""")
entry("WS106", "error", "import not found or cyclic",
      """
An `import` names a file that does not exist, cannot be read, or imports
the importing file back (directly or through other files).
""", """
import "shared/types.world"   # no such file
""")
