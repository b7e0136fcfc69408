"""``worldspec synth review``: an LLM's advisory review of a world against its description.

A row of :data:`worldspec.cli.synth.SYNTH_COMMANDS`; it imports
``llm_frontend`` only when it runs. The work is
:mod:`llm_frontend.review`: the world is checked by the compiler first (a world
with errors is refused and its diagnostics shown), then the model's verdict is
printed as text or JSON.

Exit status: 0 reviewed, whatever the verdict (the review is advice), unless
``--fail-on-gaps`` and the verdict is not a full "yes" or lists missing rules or
tools (then 1); 1 the model could not be reached or gave no valid verdict; 2
bad arguments, no endpoint, a missing file, or a world with errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from worldspec.cli.console import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Console, report_errors

__all__ = ["DESCRIPTION", "SUMMARY", "configure", "run"]

SUMMARY = "ask the model whether a world models its description (advisory)"
DESCRIPTION = (
    "Check WORLD.world with the compiler (a world with errors is refused, its diagnostics "
    "shown), then send the spec, a summary of the compiled world (entities, state, "
    "invariants, tools and their preconditions) and the description to the model, and print "
    "its verdict: does the world model the request (yes, partly, no), missing rules, missing "
    "tools, risky tools and suggestions. Advisory: the exit status is 0 whatever the verdict, "
    "unless --fail-on-gaps.")

#: The longest description file read.
MAX_DESCRIPTION_BYTES = 1_000_000


def configure(parser: argparse.ArgumentParser) -> None:
    from worldspec.cli.synth import add_model_options

    parser.add_argument("world", metavar="WORLD.world", help="the world to review")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--description", metavar="TEXT",
                       help="what the world was asked to model")
    given.add_argument("--description-file", metavar="FILE",
                       help="the same, read from a text file")
    parser.add_argument("--world", dest="world_name", metavar="NAME",
                        help="the world to review when the file holds several")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="the verdict as 'text' (default) or 'json' on stdout")
    parser.add_argument("--fail-on-gaps", action="store_true",
                        help="exit 1 when the verdict is not 'yes' or lists missing rules "
                             "or tools")
    add_model_options(parser)


def _description(args: argparse.Namespace, console: Console) -> str | None:
    if args.description is not None:
        text: str = args.description
    else:
        path = Path(args.description_file)
        try:
            if path.exists() and not path.is_dir() and not path.is_file():
                console.error(f"'{path}' is a pipe or a device, not a text file")
                return None
            if path.stat().st_size > MAX_DESCRIPTION_BYTES:
                console.error(f"'{path}' is larger than {MAX_DESCRIPTION_BYTES:,} bytes")
                return None
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            console.error(f"'{path}' does not exist")
            return None
        except IsADirectoryError:
            console.error(f"'{path}' is a directory, not a text file")
            return None
        except UnicodeDecodeError:
            console.error(f"'{path}' is not UTF-8 text")
            return None
        except OSError as exc:
            console.error(f"'{path}' cannot be read: {exc.strerror or exc}")
            return None
    if not text.strip():
        console.error("the description is empty")
        return None
    return text


def run(args: argparse.Namespace, console: Console) -> int:
    from worldspec.cli.synth import _check_limits, _run_guarded

    description = _description(args, console)
    if description is None or not _check_limits(args, console, concurrency=1, max_retries=0):
        return EXIT_USAGE
    return _run_guarded(console, lambda: asyncio.run(_review(args, description, console)))


async def _review(args: argparse.Namespace, description: str, console: Console) -> int:
    from worldspec.cli.synth import model_config
    from worldspec.llm_frontend.review import (
        WorldHasErrors,
        load_review_target,
        render_review_text,
        review_world,
    )
    from worldspec.services.model_client import LLMClient

    config = model_config(args)
    try:
        target = load_review_target(args.world, args.world_name)
    except WorldHasErrors as exc:
        report_errors(exc.result, console)
        console.error(str(exc))
        return EXIT_USAGE
    async with LLMClient(config) as client:
        outcome = await review_world(client, target, description)
    if args.format == "json":
        console.line(json.dumps(outcome.to_json(), ensure_ascii=False, indent=2))
    else:
        console.write(render_review_text(outcome))
    if args.fail_on_gaps and outcome.verdict.has_gaps:
        return EXIT_PROBLEMS
    return EXIT_OK
