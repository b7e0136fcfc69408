"""``worldspec compare``: the differential test between a Python class and a world.

``worldspec compare FILE.py --class NAME WORLD.world [--init-data FILE.json]...`` first
checks that the original imports and builds with every initial data (one line if not, see
:mod:`worldspec.port.preflight`), then runs the original class in the sandbox and the
compiled world side by side with the same random call sequences and reports every
difference with its shortest call sequence (docs/port.md).

The options that say how the original is built and compared (:func:`add_original_options`)
and how hard to look (:func:`add_compare_options`) are shared with ``worldspec port``.

Exit status: 0 the two agree, 1 they differ (or the world has errors, or the original could
not be loaded), 2 bad arguments or unusable input files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worldspec.cli.console import EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE, Console, report_errors
from worldspec.port import PORT_CONFIRM
from worldspec.services.extras import install_line

if TYPE_CHECKING:
    from worldspec.port.compare import CompareOptions, Original

__all__ = ["add_compare_options", "add_original_options", "compare_options", "missing_extra",
           "configure_compare", "original_from_args", "original_problem", "read_init_data",
           "read_init_files", "run_compare", "sandbox_refusal"]


class InputProblem(Exception):
    """An input file that cannot be used; the message says why."""


def add_original_options(parser: argparse.ArgumentParser) -> None:
    """``--class``, ``--init-data``, ``--load``, ``--seed-key``, ``--ignore-state``,
    ``--python``, ``--package-root``."""
    group = parser.add_argument_group("the original class")
    group.add_argument("--class", dest="class_name", metavar="NAME",
                       help="the class to use (default: the file's only top-level class)")
    group.add_argument("--init-data", action="append", metavar="FILE.json",
                       help="the initial data: one JSON object, given to the class's load "
                            "method and loaded into the world as its initial state "
                            "(repeatable: the original must load with each)")
    group.add_argument("--load", default="auto", metavar="METHOD",
                       help="how the class takes the data: 'auto' (default: the first of "
                            "_load_scenario, load_scenario, _load, load_state, load the class "
                            "has, else the constructor if it takes an argument, else each key "
                            "set as an attribute), a method name (never a tool), "
                            "'__init__', 'attributes' or 'none' (just NAME())")
    group.add_argument("--seed-key", metavar="KEY",
                       help="a key of the initial data that is the world's episode seed, not "
                            "state (BFCL's random_seed)")
    group.add_argument("--ignore-state", action="append", default=[], metavar="NAME",
                       help="a state name left out of the comparison on both sides "
                            "(repeatable)")
    group.add_argument("--python", metavar="PATH",
                       help="the interpreter that runs the original: one with its "
                            "dependencies installed, e.g. a venv's bin/python (default: "
                            "worldspec's own)")
    group.add_argument("--package-root", metavar="DIR",
                       help="the root folder of the package the original belongs to, so that "
                            "its relative imports work (default: the outermost of the folders "
                            "with an __init__.py that hold it)")


def add_compare_options(parser: argparse.ArgumentParser, *,
                        confirm_by_default: bool = False) -> None:
    """How hard the differential test looks, and the sandbox's limits; with
    ``confirm_by_default`` (``worldspec port``), an agreement is confirmed on
    :data:`~worldspec.port.compare.PORT_CONFIRM` fresh sequences unless ``--confirm`` says
    otherwise."""
    group = parser.add_argument_group("the differential test")
    group.add_argument("--examples", type=int, default=100, metavar="N",
                       help="random call sequences that must agree, per test seed and "
                            "initial data file (default 100)")
    group.add_argument("--steps", type=int, default=20, metavar="N",
                       help="the most calls in one sequence (default 20)")
    group.add_argument("--test-seed", type=int, default=0, metavar="S",
                       help="the first seed of the random sequences (default 0)")
    group.add_argument("--test-seeds", type=int, default=3, metavar="N",
                       help="how many seeds, from --test-seed on, each running --examples "
                            "sequences (default 3)")
    group.add_argument("--confirm", type=int, default=None, metavar="N",
                       help="once every sequence agrees, N more with a fresh seed on each "
                            "initial data file before the two are said to agree (default: "
                            + (f"{PORT_CONFIRM}" if confirm_by_default else "0, none") + ")")
    parser.set_defaults(confirm_by_default=confirm_by_default)
    group.add_argument("--invalid", type=float, default=0.1, metavar="P",
                       help="the share of calls with arguments the schema refuses "
                            "(default 0.1)")
    group.add_argument("--max-differences", type=int, default=3, metavar="N",
                       help="distinct differences to look for (default 3)")
    sandbox = parser.add_argument_group("the sandbox the original runs in")
    sandbox.add_argument("--call-timeout", type=float, default=5.0, metavar="SECONDS",
                         help="wall-clock seconds one call may take (default 5)")
    sandbox.add_argument("--memory-mb", type=int, default=1024, metavar="MB",
                         help="the child's address-space limit (default 1024)")
    sandbox.add_argument("--cpu-seconds", type=int, default=60, metavar="SECONDS",
                         help="CPU seconds the child may use in all (default 60)")
    sandbox.add_argument("--time-zone", default="UTC", metavar="TZ",
                         help="the child's local time zone (default UTC)")
    sandbox.add_argument("--trusted-original", action="store_true",
                         help="the original's code is trusted: run it even where the "
                              "operating-system sandbox (bubblewrap) is not available, as a "
                              "plain child process with the limits above")


def missing_extra() -> str | None:
    """What to install when the ``port`` extra (libcst, hypothesis) is missing, or None."""
    import importlib.util

    missing = [name for name in ("libcst", "hypothesis") if importlib.util.find_spec(name) is None]
    if missing:
        return (f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed: "
                + install_line("port"))
    return None


def read_init_data(raw: str | None) -> dict[str, Any] | None:
    """The ``--init-data`` object, or None; :class:`InputProblem` says what is wrong."""
    if raw is None:
        return None
    path = Path(raw)
    if not path.is_file():
        raise InputProblem(f"--init-data: '{raw}' " + ("is not a file" if path.exists()
                                                        else "does not exist"))
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputProblem(f"--init-data: '{raw}' is not UTF-8 text") from None
    except ValueError as exc:
        raise InputProblem(f"--init-data: '{raw}' is not valid JSON ({exc})") from None
    except RecursionError:
        raise InputProblem(f"--init-data: '{raw}' is JSON nested too deeply") from None
    except OSError as exc:
        raise InputProblem(f"--init-data: '{raw}' cannot be read: {exc.strerror}") from None
    if not isinstance(value, dict):
        raise InputProblem(f"--init-data: '{raw}' must hold one JSON object (state name -> "
                           f"value), not {type(value).__name__}")
    return value


def read_init_files(raws: list[str] | None) -> list[tuple[str, dict[str, Any]]]:
    """Every ``--init-data`` file as ``(name, object)``, in order."""
    return [(raw, data) for raw in raws or () if (data := read_init_data(raw)) is not None]


def read_source(raw: str) -> str:
    path = Path(raw)
    if path.suffix != ".py":
        raise InputProblem(f"'{raw}' is not a Python file (.py)")
    if not path.is_file():
        raise InputProblem(f"'{raw}' " + ("is not a file" if path.exists() else "does not exist"))
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputProblem(f"'{raw}' is not UTF-8 text") from None
    except OSError as exc:
        raise InputProblem(f"'{raw}' cannot be read: {exc.strerror}") from None


def original_from_args(args: argparse.Namespace, file: str, class_name: str,
                       inits: list[tuple[str, dict[str, Any]]]) -> Original:
    """The original as the options describe it (its data: the first ``--init-data``)."""
    from worldspec.port.compare import Original
    from worldspec.port.skeleton import PortInputError, module_finder, read_class, resolved_load

    load = None if args.load == "none" else args.load
    if load == "auto":  # the load method the skeleton reads the state from, as port uses it
        try:
            source = Path(file).read_text(encoding="utf-8")
            load = resolved_load(read_class(source, class_name, file,
                                            module_source=module_finder(Path(file))), load)
        except (OSError, UnicodeDecodeError, PortInputError):
            pass  # the sandbox's own choice stands; its preflight reports what is wrong
    return Original(Path(file), class_name, inits[0][1] if inits else None, load,
                    args.seed_key, tuple(args.ignore_state), python=args.python,
                    package_root=Path(args.package_root) if args.package_root else None,
                    init_data_files=tuple(inits))


def interpreter_problem(args: argparse.Namespace) -> str | None:
    """Why ``--python`` or ``--package-root`` cannot be used, or None."""
    import os

    if args.python is not None:
        path = Path(args.python)
        if not path.is_file():
            return f"--python: '{args.python}' " + ("is not a file" if path.exists()
                                                    else "does not exist")
        if not os.access(path, os.X_OK):
            return f"--python: '{args.python}' is not executable"
    if args.package_root is not None:
        root = Path(args.package_root)
        if not root.is_dir():
            return f"--package-root: '{args.package_root}' " + (
                "is not a folder" if root.exists() else "does not exist")
        for file in ([args.file] if getattr(args, "file", None) else []):
            if not Path(file).resolve().is_relative_to(root.resolve()):
                return f"--package-root: '{file}' is not inside '{args.package_root}'"
    return None


def original_problem(original: Original, args: argparse.Namespace) -> str | None:
    """Why the original does not import and build with each initial data (one line), or
    None; checked in the sandbox before any comparison or model request."""
    from worldspec.port.preflight import preflight

    return preflight(original, compare_options(args).limits, trusted=args.trusted_original)


def compare_options(args: argparse.Namespace) -> CompareOptions:
    from worldspec.port.compare import CompareOptions
    from worldspec.port.sandbox import Limits

    confirm = args.confirm if args.confirm is not None \
        else PORT_CONFIRM if args.confirm_by_default else 0
    return CompareOptions(examples=args.examples, steps=args.steps, seed=args.test_seed,
                          seed_count=args.test_seeds, confirm=confirm,
                          invalid=args.invalid, max_differences=args.max_differences,
                          limits=Limits(memory_mb=args.memory_mb, cpu_seconds=args.cpu_seconds,
                                        call_timeout=args.call_timeout,
                                        time_zone=args.time_zone),
                          trusted_original=args.trusted_original)


def sandbox_refusal(args: argparse.Namespace) -> str | None:
    """Why the original will not be run (no sandbox here, and not declared trusted), or None."""
    if args.trusted_original:
        return None
    from worldspec.port.sandbox import confinement_problem

    problem = confinement_problem(args.python)
    if problem is None:
        return None
    return (f"cannot sandbox the original: {problem}; install bubblewrap, or pass "
            "--trusted-original if you trust its code")


def limits_problem(args: argparse.Namespace) -> str | None:
    """Why the test's numbers are unusable, or None."""
    for name, low in (("examples", 1), ("steps", 1), ("max_differences", 1), ("memory_mb", 64),
                      ("cpu_seconds", 1), ("test_seeds", 1), ("confirm", 0)):
        if getattr(args, name) is not None and getattr(args, name) < low:
            return f"--{name.replace('_', '-')} must be at least {low}"
    if not 0 <= args.invalid <= 1:
        return "--invalid must be between 0 and 1"
    if not args.call_timeout > 0:
        return "--call-timeout must be positive"
    return None


def class_name_of(source: str, file: str, wanted: str | None) -> str:
    """The class to use: ``wanted`` if the file defines it, else the file's only class."""
    from worldspec.port.skeleton import PortInputError, list_classes

    try:
        classes = list_classes(source, file)
    except PortInputError as exc:
        raise InputProblem(str(exc)) from None
    if wanted is not None:
        if wanted not in classes:
            raise InputProblem(f"{file} has no top-level class {wanted} (classes: "
                               f"{', '.join(classes) or 'none'})")
        return wanted
    if len(classes) != 1:
        raise InputProblem(f"{file} defines {len(classes)} classes "
                           f"({', '.join(classes) or 'none'}): name one with --class")
    return classes[0]


# ------------------------------------------------------------------ command
def configure_compare(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE.py", help="the Python file with the class")
    parser.add_argument("world", metavar="WORLD.world", help="the world to compare it with")
    add_original_options(parser)
    add_compare_options(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="the report as 'text' (default) or 'json' on stdout")


def run_compare(args: argparse.Namespace, console: Console) -> int:
    problem = missing_extra() or limits_problem(args) or interpreter_problem(args) \
        or sandbox_refusal(args)
    if problem is not None:
        console.error(problem)
        return EXIT_USAGE
    try:
        source = read_source(args.file)
        class_name = class_name_of(source, args.file, args.class_name)
        inits = read_init_files(args.init_data)
    except InputProblem as exc:
        console.error(str(exc))
        return EXIT_USAGE
    world_path = Path(args.world)
    if not world_path.is_file():
        console.error(f"'{args.world}' " + ("is not a file" if world_path.exists()
                                             else "does not exist"))
        return EXIT_USAGE
    from worldspec.services.loading import CompileError, compile_worlds

    try:
        loaded = compile_worlds([world_path])
    except CompileError as exc:
        report_errors(exc.result, console)
        return EXIT_PROBLEMS
    if len(loaded.worlds) != 1:
        console.error(f"'{args.world}' defines {len(loaded.worlds)} worlds; compare needs one")
        return EXIT_USAGE
    world = next(iter(loaded.worlds.values()))
    from worldspec.port.compare import compare

    original = original_from_args(args, args.file, class_name, inits)
    refusal = original_problem(original, args)
    if refusal is not None:
        console.error(refusal)
        return EXIT_PROBLEMS
    report = compare(world, original, compare_options(args))
    if args.format == "json":
        console.line(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        console.write(report.render_text())
    return EXIT_OK if report.agrees else EXIT_PROBLEMS
