"""Offsets and spans of the compiler to LSP positions, in the encoding the client chose.

The compiler counts columns in characters (code points); LSP clients count UTF-16 code units
unless they negotiated otherwise, so a column after an emoji differs between the two.
"""

from __future__ import annotations

import bisect

from lsprotocol import types as lsp

from worldspec.dsl import nodes as n

__all__ = ["LineMap"]


class LineMap:
    """Line starts of one text, and conversions both ways."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.starts.append(i + 1)

    def _line_text(self, line: int) -> str:
        start = self.starts[line]
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        return self.text[start:end]

    def _units(self, chars: str) -> int:
        if self.encoding == "utf-32":
            return len(chars)
        if self.encoding == "utf-8":
            return len(chars.encode("utf-8"))
        return len(chars.encode("utf-16-le")) // 2

    def offset(self, position: lsp.Position) -> int:
        """The character offset of a client position (clamped to the text)."""
        line = min(max(position.line, 0), len(self.starts) - 1)
        text = self._line_text(line)
        units = 0
        for i, ch in enumerate(text):
            if units >= position.character:
                return self.starts[line] + i
            units += self._units(ch)
        return self.starts[line] + len(text)

    def position(self, offset: int) -> lsp.Position:
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.starts, offset) - 1
        return lsp.Position(line, self._units(self.text[self.starts[line]:offset]))

    def range(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(self.position(start), self.position(max(start, end)))

    def span_range(self, span: n.Span) -> lsp.Range:
        """A compiler span (1-based line and column, end exclusive) as an LSP range."""
        return lsp.Range(self._from_line_column(span.line, span.column),
                         self._from_line_column(max(span.end_line, span.line),
                                                span.end_column if span.end_line >= span.line
                                                else span.column))

    def _from_line_column(self, line: int, column: int) -> lsp.Position:
        index = min(max(line - 1, 0), len(self.starts) - 1)
        text = self._line_text(index)
        return lsp.Position(index, self._units(text[:max(column - 1, 0)]))
