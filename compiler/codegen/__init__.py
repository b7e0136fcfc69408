"""Code generation: checked worlds to Python packages (see ``docs/runtime.md``)."""

from __future__ import annotations

from worldspec.compiler.codegen.module import GENERATOR_VERSION, GeneratedPackage, generate_world

__all__ = ["GENERATOR_VERSION", "GeneratedPackage", "generate_world"]
