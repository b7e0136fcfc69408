"""Load a compiled world: from a spec (compiled into a cache folder) or a generated package.

Loading a generated package imports the runtime only: the compiler is imported when a spec
has to be compiled, so a rollout worker or a server given a package never loads it.

Generated code is imported like any package, through ``importlib``; nothing
is passed to ``eval`` or ``exec``. Compiling from a spec writes the package
under a folder named after the hash of its text, so identical specs share it.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import json
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
    """Generate and import every world of a clean check result.

    The packages are written under a folder named after the hash of what was generated.
    A manifest named after the hash of what generation reads (:func:`_inputs_digest`)
    points at that folder, so a later process given the same specs, data files and
    compiler imports the packages without generating them again (nor loading the code
    generator and its template engine).
    """
    inputs = _inputs_digest(result)
    manifest = cache_dir() / f"inputs-{inputs}.json"
    packages = _read_manifest(manifest)
    if packages is None:
        packages = _generate(result)
        _write_manifest(manifest, packages)
    worlds: dict[str, type[Episode]] = {}
    for entry in packages:
        module = load_package(cache_dir() / entry["root"] / entry["name"], name=entry["module"])
        world: Any = module.World
        worlds[entry["world"]] = world
    return LoadedWorlds(result, worlds)


def _generate(result: CheckResult) -> list[dict[str, Any]]:
    """Generate and write the packages; a manifest entry for each (what, where, files)."""
    from worldspec.compiler.build import generate_all, write_packages

    build = generate_all(result)
    digest = hashlib.sha256()
    for package in build.packages:
        for rel, text in sorted(package.files.items()):
            digest.update(f"{package.name}/{rel}\0{text}\0".encode())
    root = digest.hexdigest()[:24]
    write_packages(build, cache_dir() / root)
    return [{"world": package.world, "name": package.name, "root": root,
             "module": f"_worldspec_{digest.hexdigest()[:12]}_{package.name}",
             "files": {rel: len(text.encode()) for rel, text in sorted(package.files.items())}}
            for package in build.packages]


#: the folders whose code decides what is generated (version, language, compiler, templates)
_GENERATOR_CODE = ("dsl", "compiler", "codegen_templates")


def _inputs_digest(result: CheckResult) -> str:
    """A hash of everything generation reads: the spec texts (by path), each world's policy
    text (a ``policy file`` is read beside the spec), the data files the tasks name (path,
    modification time, size) and the code of the compiler itself (every file's path,
    modification time and size), with the worldspec and Python versions."""
    import worldspec

    digest = hashlib.sha256(f"{worldspec.__version__}\0{sys.version}\0".encode())
    for path, loaded in sorted(result.program.files.items()):
        digest.update(f"spec\0{path}\0{loaded.text}\0".encode())
    for name, world in sorted(result.model.worlds.items()):
        digest.update(f"policy\0{name}\0{world.policy}\0".encode())
        for key in sorted(repr(k) for k in world.data_files):
            digest.update(f"data\0{name}\0{key}\0".encode())
    package = Path(worldspec.__file__).parent
    for folder in _GENERATOR_CODE:
        for base, dirs, files in os.walk(package / folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for file in sorted(files):
                if file.endswith((".py", ".jinja", ".lark")):
                    info = os.stat(os.path.join(base, file))
                    digest.update(f"code\0{os.path.relpath(os.path.join(base, file), package)}"
                                  f"\0{info.st_mtime_ns}\0{info.st_size}\0".encode())
    return digest.hexdigest()[:32]


def _read_manifest(path: Path) -> list[dict[str, Any]] | None:
    """The packages a manifest lists, when every file of them is there at its size; else
    None (no manifest, a broken one, or packages removed from the cache since)."""
    try:
        packages = json.loads(path.read_text(encoding="utf-8"))["packages"]
        for entry in packages:
            folder = cache_dir() / entry["root"] / entry["name"]
            for rel, size in entry["files"].items():
                if (folder / rel).stat().st_size != size:
                    return None
            if not all(isinstance(entry[k], str) for k in ("world", "name", "root", "module")):
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return packages if isinstance(packages, list) else None


def _write_manifest(path: Path, packages: list[dict[str, Any]]) -> None:
    """Write the manifest (atomically: a reader sees all of it or none); a cache folder that
    cannot be written only means the next process generates again."""
    temporary: str | None = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".inputs-", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"packages": packages}, out)
        os.replace(temporary, path)
    except OSError:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


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
