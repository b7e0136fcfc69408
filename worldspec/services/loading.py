"""Load a compiled world: from a spec (compiled into a cache folder) or a generated package.

Loading a generated package imports the runtime only: the compiler is imported when a spec
has to be compiled, so a rollout worker or a server given a package never loads it.

Generated code is imported like any package, through ``importlib``; nothing
is passed to ``eval`` or ``exec``. Compiling from a spec writes the package
under a folder named after the hash of its text, so identical specs share it.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from worldspec.runtime.episode import Episode

if TYPE_CHECKING:  # the compiler is imported when a spec is compiled, so that loading a
    # generated package (a rollout worker) loads the runtime alone
    from worldspec.compiler.api import CheckResult
    from worldspec.dsl.diagnostics import Diagnostic

__all__ = ["CompileError", "LoadedWorlds", "compile_worlds", "load_result", "load_world",
           "load_package", "cache_dir"]


class CompileError(Exception):
    """The spec has errors; ``diagnostics`` says which."""

    def __init__(self, result: CheckResult) -> None:
        self.result = result
        self.diagnostics: tuple[Diagnostic, ...] = result.errors
        first = self.diagnostics[0] if self.diagnostics else None
        where = f": {first.span}: {first.message}" if first else ""
        super().__init__(f"the spec has {len(self.diagnostics)} error(s){where}")


@dataclass
class LoadedWorlds:
    """Every world of a compiled program, by name, with the check result."""

    result: CheckResult
    worlds: dict[str, type[Episode]]

    def world_of_task(self, task: str) -> type[Episode] | None:
        matches = [w for w in self.worlds.values() if task in w.TASKS]
        return matches[0] if len(matches) == 1 else None


def cache_dir() -> Path:
    """Where compiled specs go: ``$WORLDSPEC_CACHE`` or a folder in the temp dir."""
    configured = os.environ.get("WORLDSPEC_CACHE")
    base = Path(configured) if configured else Path(tempfile.gettempdir()) / "worldspec-cache"
    base.mkdir(parents=True, exist_ok=True)
    return base


def load_package(path: str | Path, name: str | None = None) -> ModuleType:
    """Import a generated package from its folder (e.g. ``generated/mobile_messaging``)."""
    folder = Path(path).resolve()
    init = folder / "__init__.py"
    if not init.is_file():
        raise FileNotFoundError(f"{folder} is not a generated world package")
    module_name = name or f"_worldspec_{hashlib.sha256(str(folder).encode()).hexdigest()[:12]}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, init,
                                                  submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def compile_worlds(paths: list[str | Path]) -> LoadedWorlds:
    """Check, generate and import every world reachable from ``paths``."""
    from worldspec.compiler.api import check_specs

    result = check_specs(paths)
    if not result.ok:
        raise CompileError(result)
    return load_result(result)


def load_result(result: CheckResult) -> LoadedWorlds:
    """Generate and import every world of a clean check result."""
    from worldspec.compiler.build import generate_all, write_packages

    build = generate_all(result)
    digest = hashlib.sha256()
    for package in build.packages:
        for rel, text in sorted(package.files.items()):
            digest.update(f"{package.name}/{rel}\0{text}\0".encode())
    root = cache_dir() / digest.hexdigest()[:24]
    write_packages(build, root)
    worlds: dict[str, type[Episode]] = {}
    for package in build.packages:
        module = load_package(root / package.name,
                              name=f"_worldspec_{digest.hexdigest()[:12]}_{package.name}")
        world: Any = module.World
        worlds[package.world] = world
    return LoadedWorlds(result, worlds)


def load_world(path: str | Path, world: str | None = None) -> type[Episode]:
    """The episode class of the world in ``path`` (a spec file or a generated package)."""
    p = Path(path)
    if p.is_dir() and (p / "__init__.py").is_file():
        cls: type[Episode] = load_package(p).World
        return cls
    loaded = compile_worlds([p])
    if world is not None:
        return loaded.worlds[world]
    if len(loaded.worlds) != 1:
        raise ValueError(f"{path} defines {len(loaded.worlds)} worlds; name one: "
                         f"{', '.join(sorted(loaded.worlds))}")
    return next(iter(loaded.worlds.values()))
