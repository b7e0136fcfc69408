"""The work of ``worldspec port`` on one class, as a batch worker does it (here or on Ray).

:func:`port_work` is a :data:`~llm_frontend.batch.ClientWork`: it gets the worker's model
client, a :class:`PortPayload` the driver prepared (the class's source travels with it) and a
usage record, and returns a picklable :class:`PortResult`. Nothing here writes outputs or the
batch journal; the request journal (every model request and answer) is written where the
payload says.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worldspec.port.compare import Original
from worldspec.port.translate import PortOptions, RequestJournal, port_class
from worldspec.services.model_client import LLMClient, Usage

__all__ = ["PortPayload", "PortResult", "port_work"]


@dataclass(frozen=True)
class PortPayload:
    """One class to port, with everything needed to do it on another machine."""

    file: str
    source: str
    class_name: str
    data: dict[str, Any] | None
    load: str | None
    seed_key: str | None
    ignore: tuple[str, ...]
    options: PortOptions
    requests: str | None
    #: whether to print each step on stderr (a long port, e.g. a model answered by hand)
    progress: bool = False
    #: every initial data file as (name, object), in order (``data`` is the first one's)
    inits: tuple[tuple[str, dict[str, Any]], ...] = ()
    #: the interpreter with the original's dependencies (None: worldspec's own)
    python: str | None = None
    #: the root of the original's package (None: found from its ``__init__.py`` folders)
    package_root: str | None = None


@dataclass
class PortResult:
    """What came of one class: the outcome as JSON, the world text (of a rejected port, the
    last world that checked clean, or None), the skeleton's notes."""

    accepted: bool
    text: str | None
    outcome: dict[str, Any]
    notes: list[str]


def _file_here(payload: PortPayload) -> Path:
    """The class's file on this machine: its own path when it holds the same text, else a
    copy in a temporary folder (a Ray worker on another machine)."""
    path = Path(payload.file)
    try:
        if path.read_text(encoding="utf-8") == payload.source:
            return path
    except (OSError, UnicodeDecodeError):
        pass
    folder = Path(tempfile.mkdtemp(prefix="worldspec-port-"))
    copy = folder / path.name
    copy.write_text(payload.source, encoding="utf-8")
    return copy


async def port_work(client: LLMClient, payload: PortPayload, spent: Usage) -> PortResult:
    """Read, skeleton, check that the original loads (before any model request), translate,
    compare and repair one class."""
    from worldspec.port.preflight import preflight
    from worldspec.port.skeleton import emit_skeleton, module_finder, read_class, resolved_load

    info = read_class(payload.source, payload.class_name, Path(payload.file).name,
                      module_source=module_finder(Path(payload.file)), load=payload.load)
    skeleton = emit_skeleton(info, payload.data, source_name=Path(payload.file).name)
    original = Original(_file_here(payload), payload.class_name, payload.data,
                        resolved_load(info, payload.load), payload.seed_key, payload.ignore,
                        python=payload.python,
                        package_root=Path(payload.package_root) if payload.package_root
                        else None, init_data_files=payload.inits)
    refusal = await asyncio.to_thread(preflight, original, payload.options.compare.limits,
                                      trusted=payload.options.compare.trusted_original)
    if refusal is not None:
        return PortResult(False, None, {"reason": "the original does not load",
                                        "detail": refusal, "rounds": 0}, skeleton.notes)
    journal = RequestJournal(client, payload.requests)
    label = f"{Path(payload.file).name}:{payload.class_name}"

    def on_step(text: str) -> None:
        print(f"\nport {label}: {text}", file=sys.stderr, flush=True)

    outcome = await port_class(journal, skeleton, original, payload.options, usage=spent,
                               on_step=on_step if payload.progress else None)
    return PortResult(outcome.accepted, outcome.text, outcome.to_json(), skeleton.notes)
