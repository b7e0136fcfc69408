"""The floors of the package import one way, and the runtime is a leaf.

``docs/api.md`` names the floors: ``worldspec.runtime`` (what generated code
imports: stdlib only) < ``worldspec.testing`` (what tests a world: sampling, the
explorer, the properties, the hypothesis suite) and ``worldspec.dsl`` <
``worldspec.compiler`` < ``worldspec.services`` < the front ends
(``worldspec.llm_frontend``, ``worldspec.cli``). Each floor's modules are
imported together in a fresh process and the test asserts what got loaded: a
floor never loads a floor above it, and a rollout worker that imports a
generated world loads the runtime and the standard library, nothing else.
The runtime's and the generated ``world.py`` files' import statements are also
read, late ones inside functions included: the runtime names nothing of
``worldspec`` but itself, a generated world module nothing but the runtime.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from worldspec.services.loading import load_package

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "worldspec"

#: floor -> (its folder under worldspec/, what it must never load)
FLOORS: dict[str, tuple[str, tuple[str, ...]]] = {
    "runtime": ("runtime", ("worldspec.testing", "worldspec.dsl", "worldspec.compiler",
                            "worldspec.services", "worldspec.cli", "worldspec.llm_frontend",
                            "lark", "jinja2", "pydantic", "openai", "hypothesis")),
    # the test tools sit on the runtime (the hypothesis suite on hypothesis too)
    "testing": ("testing", ("worldspec.dsl", "worldspec.compiler", "worldspec.services",
                            "worldspec.cli", "worldspec.llm_frontend", "lark", "jinja2",
                            "pydantic", "openai")),
    "dsl": ("dsl", ("worldspec.runtime", "worldspec.testing", "worldspec.compiler",
                    "worldspec.services", "worldspec.cli", "worldspec.llm_frontend", "jinja2",
                    "pydantic", "openai")),
    # the compiler sits on the runtime: the one value validator (runtime/shapes.py)
    "compiler": ("compiler", ("worldspec.testing", "worldspec.services",
                              "worldspec.cli", "worldspec.llm_frontend", "pydantic", "openai")),
    "services": ("services", ("worldspec.cli", "worldspec.llm_frontend", "openai")),
    "llm_frontend": ("llm_frontend", ("worldspec.cli",)),
    # a serving process sits on the runtime (and the MCP SDK) only
    "serve": ("serve", ("worldspec.testing", "worldspec.dsl", "worldspec.compiler",
                        "worldspec.cli", "worldspec.llm_frontend", "lark", "jinja2", "openai",
                        "hypothesis")),
    "rollout": ("rollout", ("worldspec.cli", "worldspec.compiler", "worldspec.dsl", "lark",
                            "jinja2", "worldspec.llm_frontend")),
}

#: the services module that talks to model servers, and so loads the ``openai`` SDK (every
#: other service stays without it); it sits below every front end that calls a model
MODEL_CLIENT = "worldspec.services.model_client"



def _modules(folder: str) -> list[str]:
    base = PACKAGE / folder
    names = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(("worldspec", *parts)))
    return names


def _loaded_after_importing(modules: list[str], *, site: bool = True) -> list[str]:
    """What a fresh interpreter has loaded after importing ``modules`` (without the
    ``site`` machinery when ``site`` is false: then nothing installed is reachable)."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    flags = [] if site else ["-S"]
    out = subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    loaded: list[str] = json.loads(out.stdout)
    return loaded


def _offending(loaded: list[str], banned: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == b or m.startswith(b + ".") for b in banned)]


@pytest.mark.parametrize("floor", sorted(FLOORS))
def test_a_floor_never_loads_a_floor_above_it(floor: str) -> None:
    folder, banned = FLOORS[floor]
    modules = [m for m in _modules(folder) if m != MODEL_CLIENT]
    assert modules
    assert _offending(_loaded_after_importing(modules), banned) == []


def _import_statements(source: str, package: str) -> list[tuple[str, list[str], bool]]:
    """Every import statement of ``source`` (a module of ``package``), inside functions too:
    ``(module, names, names are modules)`` with relative modules resolved; ``import a.b`` is
    ``("a.b", [], False)``, ``from . import x`` names modules (``x`` of the package)."""
    above = package.split(".")
    found: list[tuple[str, list[str], bool]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], False) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*above[: len(above) - node.level + 1], *filter(None, [base])])
            found.append((base, [alias.name for alias in node.names], node.module is None))
    return found


def _worldspec_imports(source: str, package: str) -> list[str]:
    """Each ``worldspec`` module that ``source`` (a module of ``package``) names in an import
    statement anywhere, inside functions too, relative imports resolved."""
    named: list[str] = []
    for module, names, modules in _import_statements(source, package):
        named += [f"{module}.{name}" for name in names] if modules else [module]
    return [name for name in named if name == "worldspec" or name.startswith("worldspec.")]


def _outside(imported: list[str], floor: str) -> list[str]:
    return [name for name in imported if not (name == floor or name.startswith(floor + "."))]


def test_reading_the_imports_finds_late_and_relative_ones() -> None:
    source = (
        "from __future__ import annotations\n"
        "from worldspec.runtime import helpers as rt\n"
        "from . import values\n"
        "def explore_later() -> None:\n"
        "    from worldspec.testing.explore import explore\n"
        "    import worldspec.testing.sampling\n"
    )
    imported = _worldspec_imports(source, "worldspec.runtime")
    assert sorted(imported) == ["worldspec.runtime", "worldspec.runtime.values",
                                "worldspec.testing.explore", "worldspec.testing.sampling"]
    assert sorted(_outside(imported, "worldspec.runtime")) == ["worldspec.testing.explore",
                                                               "worldspec.testing.sampling"]
    assert _outside(_worldspec_imports("import re\nfrom worldspec.runtime import values as v\n",
                                       "generated.shop"), "worldspec.runtime") == []


def test_the_runtime_imports_nothing_of_worldspec_but_itself() -> None:
    """Statically, so that a late import inside a function (which importing the floor would
    not run) of the test tools or anything above the runtime is caught too."""
    offenders = []
    for module in _modules("runtime"):
        path = PACKAGE / Path(*module.split(".")[1:])
        package = module if path.is_dir() else module.rsplit(".", 1)[0]
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        imported = _worldspec_imports(path.read_text(encoding="utf-8"), package)
        offenders += [f"{module}: {name}" for name in _outside(imported, "worldspec.runtime")]
    assert offenders == []


def test_a_generated_world_module_imports_the_runtime_only() -> None:
    """``world.py`` is what a rollout imports; ``test_world.py`` beside it may use the test
    tools (``worldspec.testing``), the world module never does."""
    worlds = sorted((ROOT / "generated").glob("*/world.py"))
    assert worlds
    offenders = []
    for path in worlds:
        package = f"generated.{path.parent.name}"
        imported = _worldspec_imports(path.read_text(encoding="utf-8"), package)
        assert imported, path
        offenders += [f"{package}.world: {name}"
                      for name in _outside(imported, "worldspec.runtime")]
    assert offenders == []


def test_the_model_client_loads_no_front_end() -> None:
    loaded = _loaded_after_importing([MODEL_CLIENT])
    assert "openai" in loaded
    assert _offending(loaded, ("worldspec.cli", "worldspec.llm_frontend", "worldspec.rollout",
                               "worldspec.rl", "worldspec.adapters", "worldspec.port",
                               "worldspec.serve", "worldspec.dsl", "worldspec.compiler")) == []


def _imports_of(path: Path) -> list[str]:
    """Every module a file imports, at the top or inside a function (an adapter imports what
    it needs late); ``from a import b`` names both ``a`` and ``a.b``."""
    package = ".".join(path.relative_to(ROOT).parent.parts) if path.is_relative_to(ROOT) else ""
    return [name for module, names, _ in _import_statements(path.read_text(encoding="utf-8"),
                                                            package)
            for name in [module, *(f"{module}.{n}" for n in names)] if name]


def _llm_frontend_imports(folder: str) -> list[str]:
    """The imports of ``llm_frontend`` in a folder of ``worldspec``."""
    return [f"{path.relative_to(ROOT)}: {name}"
            for path in sorted((PACKAGE / folder).rglob("*.py"))
            for name in _imports_of(path)
            if _offending([name], ("worldspec.llm_frontend",))]


@pytest.mark.parametrize("folder", ["rollout", "rl", "adapters", "port"])
def test_the_front_ends_that_call_models_do_not_import_llm_frontend(folder: str) -> None:
    """Rollouts, RL, the adapters and port reach models through ``worldspec.services.
    model_client``, never through the ``synth`` front end (``llm_frontend``); what port shares
    with ``synth`` (the language reference, reading and repairing a reply, the compile lock,
    diagnostics for the model) is a service too."""
    assert _llm_frontend_imports(folder) == []


def test_the_import_scan_sees_a_late_import_of_llm_frontend(tmp_path: Path) -> None:
    """The scan says no on a module that imports the client the old way, inside a function,
    and yes on one that imports the service."""
    old = tmp_path / "old.py"
    old.write_text("def f() -> None:\n    from worldspec.llm_frontend.client import LLMClient\n",
                   encoding="utf-8")
    new = tmp_path / "new.py"
    new.write_text("from worldspec.services.model_client import LLMClient\n", encoding="utf-8")
    assert _offending(_imports_of(old), ("worldspec.llm_frontend",)) == [
        "worldspec.llm_frontend.client", "worldspec.llm_frontend.client.LLMClient"]
    assert _offending(_imports_of(new), ("worldspec.llm_frontend",)) == []


def test_a_generated_world_loads_the_runtime_and_the_standard_library_only() -> None:
    worlds = sorted(p.name for p in (ROOT / "generated").iterdir()
                    if (p / "world.py").is_file())
    assert worlds
    # without site-packages: a world needs nothing installed but the worldspec package
    loaded = _loaded_after_importing([f"generated.{w}" for w in worlds], site=False)
    foreign = sorted(
        m for m in loaded
        if m.split(".")[0] not in sys.stdlib_module_names
        and m.split(".")[0] not in ("generated", "__main__")
        and not (m == "worldspec" or m.startswith("worldspec.runtime")))
    assert foreign == []


#: what a generated world's import leaves unloaded, though the runtime uses it: OpenSSL's
#: hashlib (a digest), difflib (a "did you mean"), ast (``arithmetic()``), importlib.resources
#: and zipfile (package data), dataclasses with inspect, dis and tokenize (records and the
#: runtime's value classes are written out without it); each costs the import milliseconds
LAZY = ("hashlib", "_hashlib", "difflib", "ast", "_ast", "importlib.resources", "zipfile",
        "dataclasses", "inspect", "dis", "tokenize")


def test_a_generated_world_leaves_what_only_some_calls_need_unloaded() -> None:
    worlds = sorted(p.name for p in (ROOT / "generated").iterdir()
                    if (p / "world.py").is_file())
    loaded = _loaded_after_importing([f"generated.{w}" for w in worlds], site=False)
    assert _offending(loaded, LAZY) == []


def test_what_a_world_imports_late_works_once_it_is_imported() -> None:
    """In a fresh process: after the import, without them, a task's package data loads, the
    state digests, an unknown task gets its "did you mean", ``arithmetic()`` parses and a
    record is frozen, each importing what it needs then; the digest is the one of an episode
    of this process (which had all of them loaded before)."""
    code = (
        "import json, sys\n"
        "from generated.mobile_messaging import World\n"
        f"lazy = {LAZY!r}\n"
        "before = [m for m in lazy if m in sys.modules]\n"
        "ep = World(task='reply_to_priya')\n"
        "digest = ep.state_hash()\n"
        "try:\n"
        "    ep.reset('reply_to_pryia')\n"
        "except KeyError as exc:\n"
        "    unknown = str(exc)\n"
        "from worldspec.runtime.arithmetic import arithmetic\n"
        "value = arithmetic(None, '2 ** 10 + 7 // 2')\n"
        "from generated.tau2_retail.world import UserName\n"
        "try:\n"
        "    UserName('Ann', 'Lee').first_name = 'Bo'\n"
        "except AttributeError as exc:\n"
        "    frozen = f'{type(exc).__module__}.{type(exc).__name__}: {exc}'\n"
        "print(json.dumps([before, digest, unknown, value, frozen]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)  # with site-packages: patterns need re2
    assert out.returncode == 0, out.stderr
    before, digest, unknown, value, frozen = json.loads(out.stdout)
    assert before == []
    world = load_package(ROOT / "generated" / "mobile_messaging").World
    assert digest == world(task="reply_to_priya").state_hash()
    assert "did you mean 'reply_to_priya'?" in unknown
    assert value == 1027
    assert frozen == "dataclasses.FrozenInstanceError: cannot assign to field 'first_name'"


def test_importing_the_package_loads_nothing_but_itself() -> None:
    loaded = _loaded_after_importing(["worldspec"])
    assert [m for m in loaded if m.startswith("worldspec")] == ["worldspec"]
    assert _offending(loaded, ("lark", "jinja2", "pydantic", "openai")) == []


def test_every_import_names_the_worldspec_namespace() -> None:
    """Installed, the folders dsl/, compiler/, codegen_templates/ and llm_frontend/ are
    modules of ``worldspec``; code importing them by their bare folder names would work in
    the checkout and break (or clash) once installed."""
    bare = {"dsl", "compiler", "codegen_templates", "llm_frontend"}
    offenders = []
    for folder in ("worldspec", "dsl", "compiler", "llm_frontend", "tests", "benchmarks",
                   "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if (ROOT / folder).is_symlink() or "corpus" in path.parts:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                offenders += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}"
                              for n in names if n.split(".")[0] in bare]
    assert offenders == []


def test_the_namespaced_folders_are_the_top_level_folders() -> None:
    for name in ("dsl", "compiler", "codegen_templates", "llm_frontend"):
        link = PACKAGE / name
        assert link.is_symlink() and link.resolve() == (ROOT / name).resolve()


def test_loading_a_generated_package_loads_no_compiler() -> None:
    """What a rollout worker or a server does: ``load_world`` of a generated package."""
    code = (
        "import json, sys, worldspec\n"
        "World = worldspec.load_world('generated/mobile_messaging')\n"
        "World(task='reply_to_priya').call('logout')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    banned = ("worldspec.dsl", "worldspec.compiler", "worldspec.cli", "worldspec.llm_frontend",
              "lark", "jinja2", "pydantic", "openai")
    assert _offending(json.loads(out.stdout), banned) == []


def test_every_package_is_installed() -> None:
    """pyproject's package list names every package of the tree (a missing one installs
    without it: the checkout works, a plain install does not)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    found = set()
    for init in PACKAGE.rglob("__init__.py"):
        if "__pycache__" in init.parts:
            continue
        found.add(".".join(init.parent.relative_to(ROOT).parts))
    for link in ("dsl", "compiler", "codegen_templates", "llm_frontend"):  # rglob stops at links
        for init in (ROOT / link).rglob("__init__.py"):
            found.add(".".join(("worldspec", *init.parent.relative_to(ROOT).parts)))
    assert sorted(found - listed) == [] and sorted(listed - found) == []


def _loaded_by_command(arguments: list[str]) -> tuple[int, list[str]]:
    """The exit status of ``worldspec ARGUMENTS`` run in a fresh process through the console
    script's entry point, and what that process had loaded by then."""
    code = (
        "import json, sys\n"
        "from worldspec.cli import entry_point\n"
        f"status = entry_point({arguments!r})\n"
        "print(json.dumps([status, sorted(sys.modules)]), file=sys.stderr)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    status, loaded = json.loads(out.stderr.strip().splitlines()[-1])
    return status, loaded


#: what the command line loads before it knows which command runs
_COMMAND_LINE = {"worldspec", "worldspec.cli", "worldspec.cli.main", "worldspec.cli.console"}


@pytest.mark.parametrize("arguments", [["--version"], ["--help"], []])
def test_version_and_help_load_no_command(arguments: list[str]) -> None:
    status, loaded = _loaded_by_command(arguments)
    assert status == (2 if not arguments else 0)
    assert sorted(m for m in loaded if m.startswith("worldspec")) == sorted(_COMMAND_LINE)
    assert _offending(loaded, ("lark", "jinja2", "pydantic", "openai", "hypothesis")) == []


def test_a_command_loads_its_own_module_only() -> None:
    status, loaded = _loaded_by_command(["explain", "WS201"])
    assert status == 0
    commands = sorted(m for m in loaded if m.startswith("worldspec.cli."))
    assert commands == ["worldspec.cli.console", "worldspec.cli.explain", "worldspec.cli.main"]
    assert _offending(loaded, ("worldspec.compiler", "worldspec.services", "lark", "jinja2",
                               "pydantic", "openai")) == []


def test_checking_a_world_loads_no_llm_client_model_library_or_property_tests() -> None:
    status, loaded = _loaded_by_command(["check", "examples/messaging"])
    assert status == 0
    assert _offending(loaded, ("pydantic", "openai", "hypothesis", "httpx", "mcp",
                               "worldspec.llm_frontend", "worldspec.rollout",
                               "worldspec.serve")) == []


@pytest.mark.parametrize("world", sorted(p.name for p in (ROOT / "generated").iterdir()
                                         if (p / "world.py").is_file()))
def test_a_generated_world_alone_loads_no_compiler_even_with_site_packages(world: str) -> None:
    """As a rollout worker imports it: with everything installed reachable, importing the
    world loads the runtime and nothing of the compiler, its libraries or the test tools."""
    loaded = _loaded_after_importing([f"generated.{world}"])
    assert _offending(loaded, ("worldspec.dsl", "worldspec.compiler", "worldspec.services",
                               "worldspec.cli", "worldspec.llm_frontend", "lark", "jinja2",
                               "pydantic", "openai", "hypothesis", "re2")) == []
