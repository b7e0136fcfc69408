"""A world's policy is a file of its generated package, ``policy.md``, read on first use.

tau2-bench keeps its policy in a markdown file beside its code; a generated world does the
same: ``world.py`` declares ``POLICY = PackageText(__name__, "policy.md")`` and the text is
read when something first asks for it. It must read back exactly the spec's policy, from a
folder, a zip archive and under ``python -OO``; a policy holding a carriage return stays a
literal (a checkout may change a file's line ends, never a literal's).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from worldspec.compiler.api import check_specs
from worldspec.compiler.build import generate_all
from worldspec.runtime.tasks import PackageText
from worldspec.services.loading import compile_worlds, load_package

REPO = Path(__file__).resolve().parents[1]
GENERATED = REPO / "generated"

SHOP = '''world Shop "A shop."
{policy}
entity Order "An order." {{
  key id: str
  total: float
}}

state {{
  orders: table Order
}}

tool get_order(id: str) -> Order "Get an order." {{
  return orders[id]
}}
'''


def _package_files(tmp_path: Path, policy: str) -> dict[str, str]:
    spec = tmp_path / "shop.world"
    tmp_path.mkdir()
    spec.write_text(SHOP.format(policy=policy), encoding="utf-8")
    result = check_specs([spec])
    assert result.ok, [d.message for d in result.errors]
    return generate_all(result).packages[0].files


def _policy_worlds() -> list[Path]:
    return sorted(p for p in GENERATED.iterdir() if (p / "policy.md").is_file())


def test_every_example_policy_is_its_packages_file() -> None:
    """Each example world with a policy reads it from its ``policy.md``: the text the spec
    gives (as the compiler's model holds it), the file's bytes exactly."""
    result = check_specs([REPO / "examples"])
    assert result.ok
    policies = {name: model.policy for name, model in result.model.worlds.items()
                if model.policy}
    folders = _policy_worlds()
    assert len(folders) == len(policies) >= 10
    for folder in folders:
        world = load_package(folder).World
        assert isinstance(vars(world)["POLICY"], PackageText)
        text = (folder / "policy.md").read_bytes().decode("utf-8")
        assert world.POLICY == text == policies[world.WORLD] == world().POLICY
        assert 'POLICY = PackageText(__name__, "policy.md")' in \
            (folder / "world.py").read_text(encoding="utf-8")
    retail = load_package(GENERATED / "tau2_retail").World
    assert "find_user_id_by_email" in retail.POLICY
    assert (REPO / "examples" / "tau2" / "policy.md").read_text(
        encoding="utf-8").strip("\n") == retail.POLICY


def test_a_policy_file_is_read_on_first_use_and_its_loss_is_named(tmp_path: Path) -> None:
    """Importing the world reads no policy file: a package that lost it imports, and asking
    for the policy says which file is missing."""
    shutil.copytree(GENERATED / "tau2_retail", tmp_path / "tau2_retail",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tau2_retail" / "policy.md").unlink()
    world = load_package(tmp_path / "tau2_retail").World
    assert world.WORLD == "Tau2Retail" and world().call("calculate", {"expression": "1+1"})
    with pytest.raises(FileNotFoundError, match=r"policy\.md"):
        _ = world.POLICY


def test_a_checkout_with_crlf_line_ends_reads_the_same_policy(tmp_path: Path) -> None:
    shutil.copytree(GENERATED / "mobile_messaging", tmp_path / "mobile_messaging",
                    ignore=shutil.ignore_patterns("__pycache__"))
    policy = tmp_path / "mobile_messaging" / "policy.md"
    text = policy.read_text(encoding="utf-8")
    assert "\n" in text and "\r" not in text
    policy.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    assert load_package(tmp_path / "mobile_messaging").World.POLICY == text


#: imports a world package from a zip archive (argv: the archive, the package) and prints
#: its policy and whether docstrings are kept
_FROM_ZIP = """
import json, sys
sys.path.insert(0, sys.argv[1])
module = __import__(sys.argv[2])
print(json.dumps({"policy": module.World.POLICY, "loader": type(module.__loader__).__name__,
                  "docstrings": json.dumps.__doc__ is not None}))
"""


@pytest.mark.parametrize("flags", [(), ("-OO",)], ids=["plain", "OO"])
def test_a_policy_reads_back_from_a_zip_archive(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """A wheel or zip keeps the package's files: the policy reads back through the package's
    own loader (zipimport), with and without ``python -OO``."""
    archive = tmp_path / "worlds.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted((GENERATED / "tau2_retail").rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                zipped.write(path, f"tau2_retail/{path.relative_to(GENERATED / 'tau2_retail')}")
    env = {"PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, *flags, "-c", _FROM_ZIP, str(archive), "tau2_retail"],
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["loader"] == "zipimporter" and out["docstrings"] == (flags == ())
    assert out["policy"] == (GENERATED / "tau2_retail" / "policy.md").read_text(encoding="utf-8")


def test_a_policy_with_a_carriage_return_stays_a_literal(tmp_path: Path) -> None:
    """The file is for text with ``\\n`` line ends; a policy holding ``\\r`` is written as
    the literal it always was, and the world's policy is the spec's text either way."""
    cases = {"plain": ("Confirm first.\nNever guess.", True),
             "returns": ("Confirm first.\r\nNever guess.", False),
             "none": ("", False)}
    for name, (text, as_file) in cases.items():
        policy = f"policy {json.dumps(text)}\n" if text else ""
        files = _package_files(tmp_path / name, policy)
        assert ("policy.md" in files) == as_file, name
        assert ('POLICY = PackageText(__name__, "policy.md")' in files["world.py"]) == as_file
        assert ("POLICY: ClassVar[str] = " in files["world.py"]) == (bool(text) and not as_file)
        if as_file:
            assert files["policy.md"] == text
        world = compile_worlds([tmp_path / name / "shop.world"]).worlds["Shop"]
        assert world.POLICY == text == world().POLICY, name
