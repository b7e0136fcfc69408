"""``worldspec lsp``: the language server on stdin/stdout, for editors.

pygls is an optional extra (the ``lsp`` extra); it and the server are imported
when the command runs, so no other command pays for them, and a missing pygls is a one-line
error. stdout belongs to the protocol: nothing else is ever printed there.
"""

from __future__ import annotations

import argparse
import logging

from worldspec.cli.console import EXIT_OK, EXIT_USAGE, Console, cannot_write
from worldspec.services.extras import install_line
from worldspec.services.files import FileRefusedError, open_for_append

__all__ = ["SUMMARY", "DESCRIPTION", "configure_lsp", "run_lsp"]

SUMMARY = "the language server for editors (LSP over stdio)"
DESCRIPTION = ("Run the WorldSpec language server on stdin/stdout: diagnostics as you type, "
               "hover, go to definition, references, rename, completion, outline, formatting "
               "and quick fixes. Point any LSP client at 'worldspec lsp'; the VS Code extension "
               "in editors/vscode does. See docs/editor.md. Exit status: 0 the client closed "
               "the connection, 2 bad arguments or pygls missing.")


def configure_lsp(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--stdio", action="store_true",
                        help="talk over stdin/stdout (the default and only transport; accepted "
                             "because some clients always pass it)")
    parser.add_argument("--log-file", metavar="FILE",
                        help="write the server's log here (default: warnings on stderr)")


def run_lsp(args: argparse.Namespace, console: Console) -> int:
    try:
        from worldspec.lsp.server import serve
    except ImportError as exc:
        console.error(f"the language server needs pygls ({exc.name or exc}): "
                      + install_line("lsp"))
        return EXIT_USAGE
    if args.log_file:
        try:
            log = open_for_append(args.log_file)
        except FileRefusedError as exc:
            console.error(f"--log-file: {exc}")
            return EXIT_USAGE
        except OSError as exc:
            console.error("--log-file: " + cannot_write(args.log_file, exc))
            return EXIT_USAGE
        logging.basicConfig(stream=log, level=logging.INFO)
    else:
        logging.basicConfig(level=logging.WARNING)
    serve()
    return EXIT_OK
