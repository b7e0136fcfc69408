"""Golden tests for the diagnostic renderers in :mod:`dsl.render`."""

from __future__ import annotations

import json

from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import Diagnostic, Related, Severity
from worldspec.dsl.nodes import Span
from worldspec.dsl.render import (
    render_explanation,
    render_github,
    render_json,
    render_text,
    summarize,
)

SOURCE = "entity User {\n  key id: str\n}\ntool t() -> str {\n  return usr.name\n}\n"


def diag(
    line: int,
    column: int,
    end_line: int,
    end_column: int,
    *,
    code: str = "WS201",
    severity: Severity = Severity.ERROR,
    message: str = "unknown name 'usr'",
    file: str = "app.world",
    hints: tuple[str, ...] = (),
    related: tuple[Related, ...] = (),
) -> Diagnostic:
    return Diagnostic(code, severity, message, Span(file, line, column, end_line, end_column),
                      hints, related)


def test_text_golden_with_hint_and_related_note() -> None:
    d = diag(5, 10, 5, 13, hints=("did you mean 'User'?",),
             related=(Related(Span("app.world", 1, 8, 1, 12), "'User' is defined here"),))
    assert render_text([d], {"app.world": SOURCE}, color=False) == (
        "error[WS201]: unknown name 'usr'\n"
        " --> app.world:5:10\n"
        "  |\n"
        "5 |   return usr.name\n"
        "  |          ^~~\n"
        "  = hint: did you mean 'User'?\n"
        "note: 'User' is defined here\n"
        " --> app.world:1:8\n"
        "  |\n"
        "1 | entity User {\n"
        "  |        ^~~~\n"
        "\n"
        "1 error\n"
    )


def test_no_diagnostics_renders_nothing() -> None:
    assert render_text([], {}, color=False) == ""
    assert render_github([]) == ""
    assert render_json([]) == "[]"


def test_summary_counts_each_severity() -> None:
    ds = [
        diag(1, 1, 1, 2),
        diag(2, 1, 2, 2),
        diag(3, 1, 3, 2, code="WS408", severity=Severity.WARNING),
    ]
    assert summarize(ds) == "2 errors, 1 warning"
    assert render_text(ds, {}, color=False).endswith("\n\n2 errors, 1 warning\n")
    assert summarize([diag(1, 1, 1, 1, severity=Severity.NOTE)]) == "1 note"


def test_zero_width_span_gets_one_caret() -> None:
    text = "tool t() -> str {\n"
    d = diag(1, 18, 1, 18, code="WS101", message="unexpected end of file")
    out = render_text([d], {"app.world": text}, color=False)
    assert "1 | tool t() -> str {\n  |                  ^\n" in out


def test_multiline_span_is_underlined_to_the_end_of_its_first_line() -> None:
    d = diag(4, 1, 6, 2)
    out = render_text([d], {"app.world": SOURCE}, color=False)
    assert "4 | tool t() -> str {\n  | ^" + "~" * 16 + "\n" in out


def test_span_past_the_end_of_the_line_is_clamped() -> None:
    d = diag(3, 1, 3, 40)
    out = render_text([d], {"app.world": SOURCE}, color=False)
    assert "3 | }\n  | ^\n" in out


def test_tabs_are_expanded_and_carets_follow() -> None:
    text = "state {\n\tusers:\ttable Usr\n}\n"
    # 'Usr' starts at character column 15 (1-based): \t u s e r s : \t t a b l e _ U
    d = diag(2, 15, 2, 18, code="WS202", message="unknown type 'Usr'")
    out = render_text([d], {"app.world": text}, color=False)
    lines = out.splitlines()
    source_line = next(line for line in lines if line.startswith("2 | "))
    caret_line = lines[lines.index(source_line) + 1]
    assert "\t" not in source_line
    assert source_line == "2 |     users:  table Usr"
    assert caret_line.index("^") == source_line.index("Usr")
    assert caret_line.endswith("^~~")


def test_wide_characters_shift_the_caret_by_their_width() -> None:
    text = 'let s = "日本" + x\n'
    d = diag(1, 15, 1, 16)
    out = render_text([d], {"app.world": text}, color=False)
    caret_line = out.splitlines()[4]
    # two wide characters take four columns, so the caret sits two further right
    assert caret_line == "  |" + " " * (1 + 14 + 2) + "^"


def test_crlf_line_endings_are_not_printed() -> None:
    text = "entity User {\r\n  key id str\r\n}\r\n"
    d = diag(2, 10, 2, 13, code="WS101", message="expected ':'")
    out = render_text([d], {"app.world": text}, color=False)
    assert "2 |   key id str\n  |          ^~~\n" in out
    assert "\r" not in out


def test_control_characters_in_source_and_message_are_made_visible() -> None:
    text = 'let s = "\x1b[2J"\n'
    d = diag(1, 10, 1, 11, code="WS103", message="bad character '\x1b'")
    out = render_text([d], {"app.world": text}, color=False)
    assert "\x1b" not in out
    assert "\u241b" in out


def test_unknown_file_gives_header_and_location_only() -> None:
    d = diag(3, 4, 3, 5, file="gone.world")
    assert render_text([d], {"app.world": SOURCE}, color=False) == (
        "error[WS201]: unknown name 'usr'\n --> gone.world:3:4\n\n1 error\n"
    )


def test_line_out_of_range_gives_header_and_location_only() -> None:
    d = diag(99, 1, 99, 2, hints=("a hint",))
    assert render_text([d], {"app.world": SOURCE}, color=False) == (
        "error[WS201]: unknown name 'usr'\n  --> app.world:99:1\n   = hint: a hint\n\n1 error\n"
    )


def test_gutter_is_as_wide_as_the_largest_line_number() -> None:
    text = "\n" * 120 + "x\n"
    d = diag(121, 1, 121, 2, related=(Related(Span("app.world", 121, 1, 121, 2), "here"),))
    out = render_text([d], {"app.world": text}, color=False)
    assert "   --> app.world:121:1\n    |\n121 | x\n    | ^\n" in out


def test_empty_file_shows_an_empty_line() -> None:
    d = diag(1, 1, 1, 1, code="WS101", message="empty")
    out = render_text([d], {"app.world": ""}, color=False)
    assert " --> app.world:1:1\n  |\n1 |\n  | ^\n" in out


def test_colour_only_when_asked() -> None:
    errors = [diag(5, 10, 5, 13)]
    warnings = [diag(5, 10, 5, 13, code="WS408", severity=Severity.WARNING, message="unused")]
    assert "\x1b[" not in render_text(errors, {"app.world": SOURCE}, color=False)
    coloured = render_text(errors, {"app.world": SOURCE}, color=True)
    assert "\x1b[31m" in coloured and "\x1b[1m" in coloured and coloured.count("\x1b[0m") > 2
    assert "\x1b[33m" in render_text(warnings, {"app.world": SOURCE}, color=True)


def test_diagnostics_are_sorted_by_position() -> None:
    later, earlier = diag(5, 10, 5, 13), diag(1, 8, 1, 12, message="first")
    out = render_text([later, earlier], {"app.world": SOURCE}, color=False)
    assert out.index("first") < out.index("unknown name")


def test_json_is_a_sorted_array_of_to_json_objects() -> None:
    later = diag(5, 10, 5, 13, hints=("h",))
    earlier = diag(1, 8, 1, 12, code="WS203", message="dup")
    text = render_json([later, earlier])
    data = json.loads(text)
    assert data == [earlier.to_json(), later.to_json()]
    assert data[1] == {
        "code": "WS201", "severity": "error", "message": "unknown name 'usr'",
        "file": "app.world", "line": 5, "column": 10, "end_line": 5, "end_column": 13,
        "hints": ["h"], "related": [],
    }
    assert text == render_json([earlier, later])  # deterministic whatever the input order
    assert text.startswith("[\n  {\n    ")


def test_github_annotation_fields() -> None:
    d = diag(5, 10, 5, 13)
    assert render_github([d]) == (
        "::error file=app.world,line=5,col=10,endLine=5,endColumn=13,title=WS201"
        "::unknown name 'usr'\n"
    )
    w = diag(2, 3, 4, 1, code="WS408", severity=Severity.WARNING, message="m")
    assert render_github([w]).startswith(
        "::warning file=app.world,line=2,col=3,endLine=4,title=WS408::")
    n = diag(1, 1, 1, 2, severity=Severity.NOTE, message="m")
    assert render_github([n]).startswith("::notice ")


def test_github_escaping() -> None:
    d = diag(1, 2, 1, 3, file="dir,a:b%.world", message="50% done\r\nnext, line: x",
             hints=("try: this",))
    out = render_github([d])
    assert out == (
        "::error file=dir%2Ca%3Ab%25.world,line=1,col=2,endLine=1,endColumn=3,title=WS201"
        "::50%25 done%0D%0Anext, line: x%0Ahint: try: this\n"
    )
    assert out.count("\n") == 1


def test_explanation_has_every_part_of_the_entry() -> None:
    entry = CATALOG["WS101"]
    text = render_explanation(entry)
    assert text.startswith("# WS101: syntax error\n\nSeverity: error\n\n")
    assert entry.explanation in text
    assert f"```\n{entry.example}\n```\n" in text
    assert render_explanation(entry, heading_level=3).startswith("### WS101: ")
