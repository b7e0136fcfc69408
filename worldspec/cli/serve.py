"""``worldspec serve``: a world as an MCP server (stdio or streamable HTTP).

The MCP SDK is an optional extra (the ``serve`` extra); it is imported
inside the command, so the rest of the command line starts without it, and a missing SDK is
a one-line error. Given a generated package, the serving process loads the runtime and the
SDK only, never the compiler.

Exit status: 0 the server stopped normally (the client closed stdio, or Ctrl-C), 1 the spec
has errors, 2 bad arguments, no such task, the SDK missing, the address in use.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from worldspec.cli.console import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Console, report_errors
from worldspec.cli.prompt_options import add_prompt_options, read_prompt_options
from worldspec.services.extras import install_line

__all__ = ["configure_serve", "run_serve"]

def configure_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH",
                        help="a .world spec (file or folder) or a generated world package")
    parser.add_argument("--world", help="which world, when the spec defines several")
    parser.add_argument("--task", help="every session starts on this task (default: an empty "
                                       "world; a harness can reset to any task)")
    parser.add_argument("--seed", type=int, help="the episodes' seed (default: the task's)")
    prompt = parser.add_argument_group(
        "the server's instructions: the agent's system prompt, as worldspec rollout builds it")
    add_prompt_options(prompt, conversational_help="instructions for an agent that chats with "
                       "a user (default: one-shot, the user's request given at once)")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                        help="'stdio' (default): one episode on stdin/stdout; 'http': "
                             "streamable HTTP: /mcp serves one episode, /episodes/ID/mcp "
                             "each episode the harness creates with POST /episodes")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on with --transport http (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000,
                        help="port for --transport http (default 8000; 0 picks a free one)")
    parser.add_argument("--max-episodes", "--max-sessions", dest="max_episodes", type=int,
                        default=64, metavar="N",
                        help="episodes the harness may create at most; more are refused with "
                             "503 (default 64)")
    parser.add_argument("--idle-timeout", type=float, default=600.0, metavar="SECONDS",
                        help="drop a created episode (and close a 2025 protocol session) idle "
                             "this long (default 600)")
    parser.add_argument("--max-body", type=int, default=1 << 20, metavar="BYTES",
                        help="largest HTTP request body; larger ones get 413 (default 1 MiB)")


def run_serve(args: argparse.Namespace, console: Console) -> int:
    for name, minimum in (("max_episodes", 1), ("max_body", 1)):
        if getattr(args, name) < minimum:
            console.error(f"--{name.replace('_', '-')} must be at least {minimum}")
            return EXIT_USAGE
    if not args.idle_timeout > 0 or args.idle_timeout == float("inf"):
        console.error("--idle-timeout must be a positive number of seconds")
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        console.error(f"--port must be between 0 and 65535, got {args.port}")
        return EXIT_USAGE
    try:
        from worldspec.serve.episodes import EpisodeTable
        from worldspec.serve.mcp_server import ControlError, build_server
    except ImportError as exc:
        console.error(f"serving needs the MCP SDK ({exc.name or exc}): "
                      + install_line("serve"))
        return EXIT_USAGE
    from worldspec.services.loading import CompileError, load_world

    prompt = read_prompt_options(args, console)
    if prompt is None:
        return EXIT_USAGE
    path = Path(args.path)
    if not path.exists():
        console.error(f"'{args.path}' does not exist")
        return EXIT_USAGE
    try:
        world = load_world(path, args.world)
    except CompileError as exc:
        report_errors(exc.result, console)
        console.error("cannot serve: the spec has errors")
        return EXIT_PROBLEMS
    except (KeyError, ValueError, FileNotFoundError, ImportError) as exc:
        console.error(f"cannot serve '{args.path}': {exc}")
        return EXIT_USAGE
    try:
        episodes = EpisodeTable(world, args.task, args.seed, max_episodes=args.max_episodes,
                                idle_timeout=args.idle_timeout)
        server = build_server(world, task=args.task, seed=args.seed,
                              conversational=args.conversational, policy=prompt.policy,
                              template=prompt.template, episodes=episodes)
    except ControlError as exc:
        console.error(str(exc))
        return EXIT_USAGE
    if args.transport == "stdio":
        from worldspec.serve.stdio import serve_stdio

        serve_stdio(server)
        return EXIT_OK
    from worldspec.serve.http import http_app, serve_http
    from worldspec.services.prompts import agent_system_prompt

    def instructions(task: str | None) -> str:
        return agent_system_prompt(world, task, conversational=args.conversational,
                                   policy=prompt.policy, template=prompt.template)

    app = http_app(server, episodes, host=args.host, idle_timeout=args.idle_timeout,
                   max_body=args.max_body, instructions=instructions)

    def ready(url: str) -> None:
        console.line(f"serving {world.WORLD} on {url} (Ctrl-C stops)", to_err=True)
        sys.stderr.flush()

    try:
        serve_http(app, host=args.host, port=args.port, ready=ready)
    except OSError as exc:
        console.error(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
        return EXIT_USAGE
    return EXIT_OK
