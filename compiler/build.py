"""Writing generated packages to disk, and checking that committed ones are current."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from worldspec.compiler.api import CheckResult
from worldspec.compiler.codegen import GeneratedPackage, generate_world

__all__ = ["BuildResult", "generate_all", "write_packages", "stale_files"]


@dataclass
class BuildResult:
    """What a build produced (or would produce)."""

    packages: list[GeneratedPackage] = field(default_factory=list)


def generate_all(result: CheckResult, worlds: Iterable[str] | None = None) -> BuildResult:
    """Generate a package for every world of a clean check result."""
    wanted = set(worlds) if worlds is not None else None
    out = BuildResult()
    taken: set[str] = set()
    for name, world in sorted(result.model.worlds.items()):
        if wanted is not None and name not in wanted:
            continue
        files = {world.file} | {t.file for t in world.tasks.values()}
        files |= {f for f in result.program.files if f in _imports_of(result, world.file)}
        sources = {path: result.program.files[path].text for path in sorted(files)
                   if path in result.program.files}
        package = generate_world(world, result.model, sources)
        while package.name in taken:  # worlds `Key` and `KEY` both give `key_`
            package.name += "_"
        taken.add(package.name)
        out.packages.append(package)
    return out


def _imports_of(result: CheckResult, path: str) -> set[str]:
    seen: set[str] = set()
    stack = [path]
    while stack:
        current = stack.pop()
        for dep in result.program.imports.get(current, []):
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_packages(build: BuildResult, out_dir: Path) -> list[Path]:
    """Write every package under ``out_dir``; stale files of those packages are removed."""
    written: list[Path] = []
    for package in build.packages:
        root = out_dir / package.name
        wanted = {root / rel for rel in package.files}
        for rel, text in sorted(package.files.items()):
            target = root / rel
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                _write_atomic(target, text)
                written.append(target)
        if root.exists():
            for old in sorted(root.rglob("*")):
                if old.is_file() and old not in wanted and "__pycache__" not in old.parts:
                    old.unlink()
    return written


def stale_files(build: BuildResult, out_dir: Path) -> list[str]:
    """Files under ``out_dir`` that differ from what the compiler would write now."""
    stale: list[str] = []
    for package in build.packages:
        root = out_dir / package.name
        for rel, text in sorted(package.files.items()):
            target = root / rel
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                stale.append(str(target))
        if root.exists():
            for old in sorted(root.rglob("*")):
                rel_old = old.relative_to(root).as_posix()
                if old.is_file() and rel_old not in package.files and \
                        "__pycache__" not in old.parts:
                    stale.append(str(old))
    return stale
