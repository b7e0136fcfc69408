"""A required ``json`` parameter takes null as a value; other required parameters do not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from worldspec.services.loading import compile_worlds

SPEC = """
world Echo "Echo a value back."
config { results: bfcl }
state { seen: list[json] = [] }
tool echo(value: json "Anything.", label: str "A name.") -> json "Echo." {
  append value to seen
  return {"value": value, "label": label}
}
"""


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp("echo") / "echo.world"
    path.write_text(SPEC, encoding="utf-8")
    return compile_worlds([path]).worlds["Echo"]


def test_null_is_a_value_of_a_required_json_parameter(echo: Any) -> None:
    episode = echo()
    assert episode.call("echo", {"value": None, "label": "x"}) == {"value": None, "label": "x"}
    assert episode.export_state()["seen"] == [None]
    schema = episode.TOOLS["echo"].params[0].schema
    assert "null" in schema["type"]


def test_a_missing_json_argument_and_a_null_str_argument_still_fail(echo: Any) -> None:
    episode = echo()
    assert episode.call("echo", {"label": "x"}) == {
        "error": 'Missing required argument "value".'}
    assert episode.call("echo", {"value": 1, "label": None}) == {
        "error": 'Missing required argument "label".'}
    assert episode.export_state()["seen"] == []
