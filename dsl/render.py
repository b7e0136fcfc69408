"""Turning diagnostics into text for people, JSON for programs and annotations for CI.

Finding problems and showing them are separate concerns: the loader, parser
and checker only create :class:`~dsl.diagnostics.Diagnostic` values, and the
functions here decide how they look.

- :func:`render_text` is the terminal form, modelled on rustc: a header, the
  location, the source line under a gutter of line numbers, a caret underline,
  hints, and related locations as notes.
- :func:`render_json` is the machine form used by ``check --format json`` and
  the repair loop.
- :func:`render_github` is the GitHub Actions workflow-command form, so errors
  show up inline on pull requests.
- :func:`render_explanation` is the Markdown text of one catalog entry, shared
  by ``worldspec explain`` and the generated ``docs/diagnostics.md`` so the two
  cannot say different things.

Everything here is a pure function of its arguments: no terminal detection,
no file access. The caller decides whether to colour.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from worldspec.dsl.catalog import CatalogEntry
from worldspec.dsl.diagnostics import Diagnostic, Severity
from worldspec.dsl.nodes import Span

__all__ = [
    "TAB_WIDTH",
    "render_text",
    "render_json",
    "render_github",
    "render_explanation",
    "summarize",
]

#: Tabs in source lines are expanded to this many columns (to the next tab stop)
#: before printing, and the underline is computed on the expanded line, so carets
#: stay under the characters they mean.
TAB_WIDTH = 4
#: Source lines longer than this many characters are shown as a window of this
#: size around the underline, cut ends marked ``...``: a megabyte line printed
#: once per diagnostic would flood the terminal (and cost time per diagnostic).
MAX_SNIPPET_CHARS = 160
#: How many characters of a cut line are kept before the underline starts.
_CONTEXT_BEFORE = 60
_CUT = "..."

# ---------------------------------------------------------------- colours
_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"
_CYAN = "\x1b[36m"

_SEVERITY_COLOUR: dict[Severity, str] = {
    Severity.ERROR: _RED,
    Severity.WARNING: _YELLOW,
    Severity.NOTE: _CYAN,
}


@dataclass(frozen=True, slots=True)
class _Palette:
    """Wraps text in ANSI codes, or leaves it alone when colour is off."""

    enabled: bool

    def paint(self, text: str, *codes: str) -> str:
        if not self.enabled or not codes or not text:
            return text
        return "".join(codes) + text + _RESET


# ----------------------------------------------------------- visible text
def _visible_char(ch: str) -> str:
    """A printable stand-in for a control character (U+2400 block), else ``ch``.

    Source text and messages are user input; printing a raw escape or
    carriage return could rewrite the terminal, so C0 controls and DEL are
    shown as their Unicode "control picture" (one column wide).
    """
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate (text from the API) cannot be printed
        return "\ufffd"
    return ch


def _clean_message(text: str) -> str:
    """``text`` with control characters made visible; newlines are kept."""
    return "".join(ch if ch == "\n" else _visible_char(ch) for ch in text)


def _cell_width(ch: str) -> int:
    """Terminal columns taken by one (already visible) character."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _layout(line: str) -> tuple[str, list[int]]:
    """The line as printed, and the display column of each character index.

    The list has one entry per character plus one for the position just
    past the end, so a span ``[a, b)`` of characters covers display columns
    ``[cols[a], cols[b])``.
    """
    parts: list[str] = []
    cols: list[int] = []
    col = 0
    for ch in line:
        cols.append(col)
        if ch == "\t":
            width = TAB_WIDTH - col % TAB_WIDTH
            parts.append(" " * width)
        else:
            shown = _visible_char(ch)
            width = _cell_width(shown)
            parts.append(shown)
        col += width
    cols.append(col)
    return "".join(parts), cols


class _SourceLines:
    """Lines of each known file, split once per render call."""

    def __init__(self, sources: Mapping[str, str]) -> None:
        self._sources = sources
        self._split: dict[str, list[str]] = {}

    def line(self, file: str, number: int) -> str | None:
        """Line ``number`` (1-based) of ``file`` without its line ending, if it exists."""
        if number < 1:
            return None
        lines = self._split.get(file)
        if lines is None:
            text = self._sources.get(file)
            if text is None:
                return None
            # The parser counts lines by "\n" only, so split the same way.
            lines = text.split("\n")
            self._split[file] = lines
        if number > len(lines):
            return None
        return lines[number - 1].removesuffix("\r")


def _underline(line: str, span: Span) -> tuple[str, int, int]:
    """The printed line, and the display start column and width of the underline.

    The underline covers the span's part of its first line: a span that
    continues on later lines is underlined to the end of the first one. Columns
    outside the line are clamped to it, and an empty span gets one caret. A line
    longer than :data:`MAX_SNIPPET_CHARS` is cut to a window around the span.
    """
    first = min(max(span.column - 1, 0), len(line))
    if span.end_line > span.line:
        last = len(line)
    elif span.end_line == span.line:
        last = min(max(span.end_column - 1, first), len(line))
    else:
        last = first
    cut_start, cut_end = _window(len(line), first)
    shown, cols = _layout(line[cut_start:cut_end])
    before = _CUT if cut_start else ""
    after = _CUT if cut_end < len(line) else ""
    first -= cut_start
    last = min(last, cut_end) - cut_start
    start = len(before) + cols[first]
    width = max(1, cols[last] - cols[first])
    return before + shown + after, start, width


def _window(length: int, first: int) -> tuple[int, int]:
    """The character range of a line to show: all of it, or a window around ``first``."""
    if length <= MAX_SNIPPET_CHARS:
        return 0, length
    start = max(0, first - _CONTEXT_BEFORE)
    end = min(length, start + MAX_SNIPPET_CHARS)
    return max(0, end - MAX_SNIPPET_CHARS), end


def _location(span: Span) -> str:
    if span.line < 1:
        return span.file
    if span.column < 1:
        return f"{span.file}:{span.line}"
    return f"{span.file}:{span.line}:{span.column}"


# ------------------------------------------------------------------ text
def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summarize(diagnostics: Iterable[Diagnostic]) -> str:
    """``"2 errors, 1 warning"``: the counts by severity, zero counts left out."""
    counts = dict.fromkeys(Severity, 0)
    for d in diagnostics:
        counts[d.severity] += 1
    parts = [_plural(counts[s], s.value) for s in Severity if counts[s]]
    return ", ".join(parts)


def _render_snippet(
    out: list[str],
    span: Span,
    lines: _SourceLines,
    gutter: int,
    mark_colour: str,
    palette: _Palette,
) -> None:
    """The ``-->`` location line and, when the line is known, the source and underline."""
    pad = " " * gutter
    out.append(f"{pad}{palette.paint('-->', _BOLD, _CYAN)} {_location(span)}")
    line = lines.line(span.file, span.line)
    if line is None:
        return
    shown, start, width = _underline(line, span)
    bar = palette.paint("|", _BOLD, _CYAN)
    number = palette.paint(str(span.line).rjust(gutter), _BOLD, _CYAN)
    marks = palette.paint("^" + "~" * (width - 1), _BOLD, mark_colour)
    out.append(f"{pad} {bar}")
    out.append(f"{number} {bar} {shown}".rstrip())
    out.append(f"{pad} {bar} {' ' * start}{marks}")


def _render_one(d: Diagnostic, lines: _SourceLines, palette: _Palette) -> list[str]:
    colour = _SEVERITY_COLOUR[d.severity]
    numbers = [s.line for s in (d.span, *(r.span for r in d.related)) if s.line >= 1]
    gutter = len(str(max(numbers))) if numbers else 1
    pad = " " * gutter
    label = palette.paint(f"{d.severity.value}[{d.code}]", _BOLD, colour)
    out = [f"{label}{palette.paint(': ' + _clean_message(d.message), _BOLD)}"]
    _render_snippet(out, d.span, lines, gutter, colour, palette)
    for hint in d.hints:
        out.append(f"{pad} {palette.paint('=', _BOLD, _CYAN)} "
                   f"{palette.paint('hint', _BOLD)}: {_clean_message(hint)}")
    for related in d.related:
        note = palette.paint("note", _BOLD, _CYAN)
        out.append(f"{note}: {_clean_message(related.message)}")
        _render_snippet(out, related.span, lines, gutter, _CYAN, palette)
    return out


def _order(d: Diagnostic) -> tuple[str, int, int, str, int, int, str]:
    """A total order: position and code first (as the sink sorts), then the rest."""
    file, line, column, code = d.sort_key()
    return (file, line, column, code, d.span.end_line, d.span.end_column, d.message)


def render_text(
    diagnostics: Iterable[Diagnostic],
    sources: Mapping[str, str],
    color: bool = False,
) -> str:
    """Diagnostics as terminal text, rustc style, followed by a summary line.

    ``sources`` maps a span's file to that file's text; diagnostics in files
    not in it (or pointing past the end) get a header and location only.
    Returns ``""`` when there are no diagnostics, else text ending in a newline.
    """
    ordered = sorted(diagnostics, key=_order)
    if not ordered:
        return ""
    palette = _Palette(color)
    lines = _SourceLines(sources)
    blocks = ["\n".join(_render_one(d, lines, palette)) for d in ordered]
    summary = palette.paint(summarize(ordered), _BOLD)
    return "\n\n".join(blocks) + "\n\n" + summary + "\n"


# ------------------------------------------------------------------ JSON
def render_json(diagnostics: Iterable[Diagnostic]) -> str:
    """A JSON array of :meth:`Diagnostic.to_json` objects in a deterministic order.

    Non-ASCII text is escaped so the output is safe on any terminal encoding.
    """
    items = [d.to_json() for d in sorted(diagnostics, key=_order)]
    return json.dumps(items, indent=2, ensure_ascii=True)


# ---------------------------------------------------------------- GitHub
_GITHUB_COMMAND: dict[Severity, str] = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.NOTE: "notice",
}


def _escape_github_data(text: str) -> str:
    """Escape a workflow-command message: ``%``, CR and LF."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_github_property(text: str) -> str:
    """Escape a workflow-command property value: as data, plus ``:`` and ``,``."""
    return _escape_github_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: Iterable[Diagnostic]) -> str:
    """GitHub Actions annotations, one ``::error file=...::message`` line each.

    Hints and related locations are appended to the message on their own
    lines (escaped as ``%0A``). ``endColumn`` is only given for spans on one
    line, as GitHub requires, and is exclusive like our spans.
    """
    out: list[str] = []
    for d in sorted(diagnostics, key=_order):
        span = d.span
        props: list[tuple[str, str]] = [("file", span.file)]
        if span.line >= 1:
            props.append(("line", str(span.line)))
            if span.column >= 1:
                props.append(("col", str(span.column)))
            if span.end_line >= span.line:
                props.append(("endLine", str(span.end_line)))
                if span.end_line == span.line and span.end_column > span.column >= 1:
                    props.append(("endColumn", str(span.end_column)))
        props.append(("title", d.code))
        message = d.message
        for hint in d.hints:
            message += f"\nhint: {hint}"
        for related in d.related:
            message += f"\nnote: {related.message} ({_location(related.span)})"
        rendered = ",".join(f"{k}={_escape_github_property(v)}" for k, v in props)
        out.append(f"::{_GITHUB_COMMAND[d.severity]} {rendered}::{_escape_github_data(message)}")
    return "".join(line + "\n" for line in out)


# ---------------------------------------------------------- explanations
def _fence(text: str) -> str:
    """A backtick fence longer than any run of backticks inside ``text``."""
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def render_explanation(entry: CatalogEntry, heading_level: int = 1) -> str:
    """One catalog entry as Markdown: heading, severity, why it is retired (if it is),
    explanation, example.

    ``worldspec explain`` prints this with ``heading_level=1`` and
    ``docs/diagnostics.md`` embeds it one level deeper, so the command and
    the document always carry the same words.
    """
    fence = _fence(entry.example)
    parts = [
        f"{'#' * heading_level} {entry.code}: {entry.title}",
        f"Severity: {entry.severity}",
        *([f"Retired: {entry.retired}"] if entry.retired else []),
        entry.explanation,
    ]
    if entry.example.strip():
        parts.append(f"Example:\n\n{fence}\n{entry.example}\n{fence}")
    return "\n\n".join(parts) + "\n"
