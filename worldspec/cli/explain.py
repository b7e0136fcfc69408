"""``worldspec explain CODE``: what a diagnostic code means, from the catalog."""

from __future__ import annotations

import argparse

from worldspec.cli.console import EXIT_OK, EXIT_USAGE, Console
from worldspec.dsl.catalog import CATALOG
from worldspec.dsl.diagnostics import did_you_mean
from worldspec.dsl.render import render_explanation

__all__ = ["configure_explain", "run_explain"]


def configure_explain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", metavar="CODE",
                        help="a diagnostic code such as WS201 (case does not matter; "
                             "'201' means WS201)")


def _normalize_code(raw: str) -> str:
    code = raw.strip().upper()
    return f"WS{code}" if code.isdigit() else code


def _suggest_codes(code: str) -> list[str]:
    """Did-you-mean hints for an unknown code, trying letters typed for digits first."""
    repaired = code[:2] + code[2:].translate(str.maketrans("OIL", "011"))
    if repaired != code and repaired in CATALOG:
        return [f"did you mean '{repaired}'?"]
    return did_you_mean(code, CATALOG)


def run_explain(args: argparse.Namespace, console: Console) -> int:
    code = _normalize_code(args.code)
    entry = CATALOG.get(code)
    if entry is None:
        console.error(f"unknown diagnostic code '{args.code}'")
        for hint in _suggest_codes(code):
            console.line(f"  = hint: {hint}", to_err=True)
        console.line("  = hint: the codes are listed in docs/diagnostics.md", to_err=True)
        return EXIT_USAGE
    console.write(render_explanation(entry))
    return EXIT_OK
