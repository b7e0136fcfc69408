"""The language reference and examples the prompts carry, generated from the repository.

The prompts must teach the model the language as it is documented, not as
someone remembered it, so their reference text is *derived* from
``docs/language.md`` and the example worlds by the pure functions here, and
stored in :mod:`worldspec.services.language_reference_text` (a generated module, so an
installed package needs no ``docs/`` folder). Every front end that asks a model for
``.world`` text carries it (``synth``'s prompts, ``port``'s), so it lives below them all.
A test regenerates it and fails when the committed module is stale; refresh it with::

    python -m worldspec.services.language_reference

What is condensed away, and why:

- the document title and introduction (replaced by a one-line header);
- the body of "Files, imports and the world" (a synthesised world is one
  self-contained file: imports are refused), keeping its ``config`` subsection;
- "Validation and scoring" (what the checker does with tasks: the repair loop
  reports it as diagnostics instead);
- Markdown links in prose (their text stays), trailing spaces and runs of blank lines.
  Code is never touched: fenced blocks and inline code spans are copied as they are
  (``list[str](..10)`` looks like a link to a naive pattern), so every code block of the
  prompt is a code block of ``docs/language.md``, character for character.

The example world is ``examples/shop/shop.world`` with only the tools named in
:data:`EXAMPLE_TOOLS` (a look-up and three that change state; every type,
entity, state item, helper and invariant is kept, so the excerpt still checks
clean: a test proves it). The whole small file with a sample task the prompts also show is
``EXAMPLE_SEEDED_WORLD`` in :mod:`llm_frontend.prompts`.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from worldspec.dsl import nodes as n
from worldspec.dsl.diagnostics import DiagnosticSink
from worldspec.dsl.parser import parse_module

__all__ = ["EXAMPLE_TOOLS", "condense_language_doc", "excerpt_world",
           "render_reference_module", "main"]

#: The tools of the example world the excerpt keeps.
EXAMPLE_TOOLS = ("get_order_details", "place_order", "cancel_order", "issue_gift_card")

_HEADER = ("# WorldSpec language reference (condensed)\n\n"
           "A `.world` file describes a world: typed data, the state that holds it, rules "
           "that must always hold, the tools an agent may call, and tasks graded by the state "
           "the agent leaves behind.\n")

#: heading text -> "own" (drop the section's own text, keep its subsections) or "all"
_DROPPED_SECTIONS = {"Files, imports and the world": "own", "Validation and scoring": "all"}

_LINK = re.compile(r"\[([^\]`]+)\]\([^)`\s]+\)")
_CODE_SPAN = re.compile(r"(`+)(?:.*?[^`])?\1(?!`)")
_HEADING = re.compile(r"^(#{1,6}) (.*)$")


def condense_language_doc(markdown: str) -> str:
    """The prompt's language reference: ``docs/language.md`` minus what a writer needs not."""
    lines = markdown.replace("\r\n", "\n").split("\n")
    first_fence = next((i for i, line in enumerate(lines) if line.startswith("```")), 0)
    out: list[str] = [*_HEADER.rstrip("\n").split("\n"), ""]
    dropping: tuple[int, str] | None = None  # (level, mode) of the section being dropped
    in_fence = False
    for line in lines[first_fence:]:
        heading = None if in_fence else _HEADING.match(line)
        if line.startswith("```"):
            in_fence = not in_fence
        if heading is not None:
            level, title = len(heading.group(1)), heading.group(2).strip()
            if dropping is not None and (level <= dropping[0] or dropping[1] == "own"):
                dropping = None
            mode = _DROPPED_SECTIONS.get(title)
            if mode is not None:
                dropping = (level, mode)
                continue
        if dropping is not None:
            continue
        out.append(line if in_fence or line.startswith("```")
                   else _flatten_links(line.rstrip()))
    text = "\n".join(out)
    text = re.sub(r"\n{3,}", "\n\n", text)
    return text.strip("\n") + "\n"


def _flatten_links(line: str) -> str:
    """``line`` with each Markdown link replaced by its text, outside inline code spans."""
    out: list[str] = []
    position = 0
    for span in _CODE_SPAN.finditer(line):
        out.append(_LINK.sub(r"\1", line[position:span.start()]))
        out.append(span.group(0))
        position = span.end()
    out.append(_LINK.sub(r"\1", line[position:]))
    return "".join(out)


def _decls(text: str, path: str) -> tuple[n.Decl, ...]:
    sink = DiagnosticSink()
    result = parse_module(text, path, sink)
    if not result.ok:
        raise ValueError(f"{path} does not parse")
    return result.module.decls


def excerpt_world(text: str, path: str = "example.world",
                  tools: tuple[str, ...] = EXAMPLE_TOOLS) -> str:
    """``text`` with only the named tools (others removed with the comments above them)."""
    kept: list[str] = []
    previous_end = 0
    found: set[str] = set()
    for decl in _decls(text, path):
        segment = text[previous_end:decl.span.end]
        previous_end = decl.span.end
        # The rest of the previous declaration's last line always stays: a span may end
        # before a closing bracket of that line.
        tail, newline, _ = segment.partition("\n")
        dropped = isinstance(decl, n.TaskDecl) or \
            (isinstance(decl, n.ToolDecl) and decl.name.name not in tools)
        if dropped:
            kept.append(tail + newline)
            continue
        if isinstance(decl, n.ToolDecl):
            found.add(decl.name.name)
        kept.append(segment)
    missing = sorted(set(tools) - found)
    if missing:
        raise ValueError(f"{path} has no tool {', '.join(missing)}")
    body = "".join(kept).strip("\n")
    return re.sub(r"\n{3,}", "\n\n", body) + "\n"


def _literal(name: str, text: str) -> str:
    """``NAME = (...)``: ``text`` as implicitly concatenated string literals, one per line."""
    parts = [f"    {line!r}" for line in text.splitlines(keepends=True)]
    return f"{name} = (\n" + "\n".join(parts) + "\n)\n"


def render_reference_module(root: Path) -> str:
    """The source of :mod:`worldspec.services.language_reference_text`, from the files below
    ``root``."""
    language = (root / "docs" / "language.md").read_text(encoding="utf-8")
    world = (root / "examples" / "shop" / "shop.world").read_text(encoding="utf-8")
    header = (
        "# ruff: noqa: E501\n"
        '"""Generated by ``python -m worldspec.services.language_reference`` from\n'
        "docs/language.md and examples/shop: do not edit. The texts the prompts carry (see\n"
        "worldspec.services.language_reference).\n"
        '"""\n\n'
        '__all__ = ["EXAMPLE_WORLD", "LANGUAGE_REFERENCE"]\n\n'
    )
    return (header
            + _literal("LANGUAGE_REFERENCE", condense_language_doc(language)) + "\n"
            + _literal("EXAMPLE_WORLD", excerpt_world(world, "shop.world")))


def main(argv: list[str] | None = None) -> int:
    """Rewrite ``worldspec/services/language_reference_text.py`` (``--check``: only say
    whether it is stale)."""
    args = sys.argv[1:] if argv is None else argv
    root = Path(__file__).resolve().parents[2]
    target = Path(__file__).resolve().parent / "language_reference_text.py"
    text = render_reference_module(root)
    current = target.read_text(encoding="utf-8") if target.exists() else ""
    if "--check" in args:
        if current != text:
            print(f"{target.name} is stale: run python -m worldspec.services.language_reference")
            return 1
        return 0
    if current != text:
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
