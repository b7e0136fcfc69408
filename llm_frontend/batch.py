"""Batch runs: many items, a journal that makes them resumable, outputs, progress and a summary.

An *item* is one unit of work (one description to turn into a world, one task
slot of a world), identified by :func:`item_key`: the SHA-256 of its kind and
its input, as canonical JSON. Two equal inputs are one item, so a batch never
does the same work twice.

The **journal** is a JSON Lines file, append-only: one :class:`ItemRecord` per
finished item, written with ``flush`` and ``fsync`` before the next item's
result is reported. On resume, items whose key has an ``accepted`` or
``rejected`` record are skipped; ``error`` records (the model could not be
reached, a bug) are tried again, and so are ``rejected`` ones with
``retry_rejected`` (say, with more repair rounds). The journal is not trusted
blindly: an accepted record's output is checked against the SHA-256 the record
holds (:func:`restore_output`), rewritten from the journal when it is missing or
changed, and the item is done again when the journal cannot rebuild it. A run
killed at any moment loses at most the items in flight; a torn last line (the
kill came mid-write) is ignored. The latest record of a key wins. A record holds
whatever text the model sent, lone surrogates (``"\\ud800"``, valid JSON that is
not Unicode) included: each is written as its JSON escape
(:func:`~worldspec.services.journals.json_line`), so the line is valid UTF-8 and
reads back as the same text.

**Outputs** are written atomically (a temporary file in the same folder,
``fsync``, ``os.replace``) under content-hashed names (``stem-<sha12>.world``),
so a crash never leaves half a file and equal outputs are one file.

The **progress** line shows done/total, the acceptance rate and the tokens
spent; it is rewritten in place with ``\\r`` on a terminal and stays quiet
otherwise. The **summary** counts accepted and rejected items (with reasons),
errors, the histogram of repair rounds and the tokens, over the whole journal
and for this run.

**Where items run**: a :class:`SplitWork` cuts an item's work in three, so that
the middle part can run on any :mod:`~worldspec.services.executors` executor
(this event loop, or Ray actors): ``prepare`` (driver) makes the payload,
a :class:`ClientWorker` does the work with its own model client, ``settle``
(driver) makes the record and writes the outputs. Only the driver writes the
journal and the outputs, so where the work ran never shows in them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from worldspec.runtime.values import escape_surrogates
from worldspec.services.executors import Executor, ItemWorker, LocalExecutor, WorkerLost
from worldspec.services.files import append_line_durably, write_atomically
from worldspec.services.journals import json_line
from worldspec.services.model_client import LLMClient, LLMConfig, LLMError, Usage
from worldspec.services.progress import StatusLine

__all__ = ["BatchItem", "BatchSummary", "ClientWork", "ClientWorker", "InputError", "ItemRecord",
           "Journal", "Progress", "SplitWork", "WorkDone", "file_sha256", "item_key",
           "read_input_text",
           "read_jsonl", "restore_output", "run_batch", "sha256_text", "write_atomically",
           "write_output"]

STATUSES = ("accepted", "rejected", "error")


class InputError(Exception):
    """The input is unusable (a missing file, a bad JSONL line); the message says where."""


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_key(kind: str, payload: Mapping[str, Any]) -> str:
    """The content hash that identifies an item: kind and input as canonical JSON (a lone
    surrogate an input file's ``"\\ud800"`` made is hashed as its escape)."""
    canonical = json.dumps({"kind": kind, "input": payload}, sort_keys=True,
                           ensure_ascii=False, separators=(",", ":"))
    return sha256_text(escape_surrogates(canonical))


@dataclass(frozen=True)
class BatchItem:
    """One unit of work: its key, its input and a short label for messages."""

    key: str
    kind: str
    payload: Mapping[str, Any]
    label: str

    @classmethod
    def make(cls, kind: str, payload: Mapping[str, Any], label: str) -> BatchItem:
        return cls(item_key(kind, payload), kind, payload, label)


@dataclass
class ItemRecord:
    """How one item ended: the journal's line."""

    key: str
    status: str
    label: str = ""
    rounds: int = 0
    reason: str = ""
    detail: str = ""
    usage: Usage = field(default_factory=Usage)
    output: str | None = None
    output_sha256: str | None = None
    #: what the kind of work needs to rebuild its outputs (a task's text, its world, ...)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status in ("accepted", "rejected")

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "status": self.status, "label": self.label,
                "rounds": self.rounds, "reason": self.reason, "detail": self.detail,
                "usage": self.usage.to_json(), "output": self.output,
                "output_sha256": self.output_sha256, "data": self.data}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> ItemRecord:
        key, status = raw.get("key"), raw.get("status")
        if not isinstance(key, str) or status not in STATUSES:
            raise ValueError("a journal record needs a key and a known status")
        usage = raw.get("usage")
        data = raw.get("data")
        rounds = raw.get("rounds")
        return cls(key=key, status=str(status), label=str(raw.get("label", "")),
                   rounds=rounds if isinstance(rounds, int) else 0,
                   reason=str(raw.get("reason", "")), detail=str(raw.get("detail", "")),
                   usage=Usage.from_json(usage if isinstance(usage, dict) else {}),
                   output=_optional_str(raw.get("output")),
                   output_sha256=_optional_str(raw.get("output_sha256")),
                   data=data if isinstance(data, dict) else {})


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# ------------------------------------------------------------------ journal
class Journal:
    """An append-only JSONL record of finished items, safe against a kill at any point."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: dict[str, ItemRecord] = {}
        #: lines that could not be read (a torn last line after a kill)
        self.skipped_lines = 0

    @classmethod
    def open(cls, path: str | Path) -> Journal:
        """Read the journal at ``path`` (a missing file is an empty journal)."""
        journal = cls(Path(path))
        try:
            text = journal.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return journal
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the journal '{path}': {exc}") from exc
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                record = ItemRecord.from_json(raw if isinstance(raw, dict) else {})
            except ValueError:
                journal.skipped_lines += 1
                continue
            journal.records[record.key] = record
        return journal

    def finished(self, key: str) -> bool:
        record = self.records.get(key)
        return record is not None and record.finished

    def append(self, record: ItemRecord) -> None:
        """Write ``record`` durably (flushed and fsynced) and remember it."""
        line = json_line(record.to_json(), sort_keys=True) + "\n"
        append_line_durably(self.path, line)
        self.records[record.key] = record


# ------------------------------------------------------------------ outputs
def write_output(folder: Path, stem: str, text: str, suffix: str = ".world") -> tuple[Path, str]:
    """Write ``text`` as ``folder/stem-<sha12><suffix>``; the path and the full SHA-256."""
    digest = sha256_text(text)
    path = folder / f"{stem}-{digest[:12]}{suffix}"
    existing = path.read_text(encoding="utf-8") if path.is_file() else None
    if existing != text:
        write_atomically(path, text)
    return path, digest


def file_sha256(path: Path) -> str | None:
    """The SHA-256 of a file's text, or None when it cannot be read."""
    try:
        return sha256_text(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def restore_output(record: ItemRecord, text_field: str = "text", *,
                   root: Path | None = None) -> str:
    """Make an accepted record's output match the journal: ``ok`` (it does), ``rewrote``
    (it was missing or changed, and was written again from ``record.data[text_field]``) or
    ``lost`` (it does not match and the journal cannot rebuild it: do the item again).
    A relative output path is read below ``root`` when given."""
    if record.status != "accepted" or not record.output or not record.output_sha256:
        return "ok"
    path = Path(record.output)
    if root is not None and not path.is_absolute():
        path = root / path
    if file_sha256(path) == record.output_sha256:
        return "ok"
    text = record.data.get(text_field)
    if isinstance(text, str) and sha256_text(text) == record.output_sha256:
        write_atomically(path, text)
        return "rewrote"
    return "lost"


# -------------------------------------------------------------------- input
def read_input_text(path: str | Path, kind: str = "a JSONL file") -> str:
    """The text of an input file; :class:`InputError` says in words why it cannot be read."""
    try:
        if Path(path).exists() and not Path(path).is_dir() and not Path(path).is_file():
            # a pipe or a device would block the read, or never end
            raise InputError(f"'{path}' is a pipe or a device, not {kind}")
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"'{path}' does not exist") from None
    except IsADirectoryError:
        raise InputError(f"'{path}' is a directory, not {kind}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"'{path}' is not UTF-8 text (bad byte at offset {exc.start})") \
            from None
    except OSError as exc:
        raise InputError(f"'{path}' cannot be read: {exc.strerror or exc}") from None


def read_jsonl(path: str | Path) -> list[tuple[int, Any]]:
    """The values of a JSON Lines file with their line numbers; blank lines are skipped."""
    text = read_input_text(path)
    values: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except ValueError as exc:
            raise InputError(f"{path}:{number}: not valid JSON ({exc})") from None
    if not values:
        raise InputError(f"'{path}' holds no items")
    return values


# ----------------------------------------------------------------- progress
class Progress(StatusLine):
    """A synthesis batch's status line: items done, accepted (and the rate), errors, tokens."""

    def __init__(self, total: int, stream: TextIO, *, enabled: bool | None = None,
                 label: str = "") -> None:
        super().__init__(stream, enabled=enabled)
        self.total = total
        self.label = label
        self.counts: Counter[str] = Counter()
        self.tokens = 0

    def start(self, done: Sequence[ItemRecord]) -> None:
        for record in done:
            self.counts[record.status] += 1
        self.draw()

    def update(self, record: ItemRecord, tokens: int) -> None:
        self.counts[record.status] += 1
        self.tokens = tokens
        self.draw()

    def line(self) -> str:
        done = sum(self.counts.values())
        finished = self.counts["accepted"] + self.counts["rejected"]
        rate = f"{self.counts['accepted'] / finished:.0%}" if finished else "-"
        errors = f", {self.counts['error']} errors" if self.counts["error"] else ""
        return (f"{self.label}{done}/{self.total} done, {self.counts['accepted']} accepted "
                f"({rate}){errors}, {self.tokens:,} tokens")


# ------------------------------------------------------------------ summary
@dataclass
class BatchSummary:
    """What a batch did, over the whole journal and in this run."""

    kind: str
    total: int = 0
    #: items already finished in the journal before this run
    resumed: int = 0
    records: list[ItemRecord] = field(default_factory=list)
    #: tokens spent in this run (the records hold each item's own)
    run_usage: Usage = field(default_factory=Usage)
    #: outputs of finished items rewritten from the journal (missing or changed on disk)
    restored: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for r in self.records if r.status == status)

    @property
    def reasons(self) -> Counter[str]:
        return Counter(r.reason for r in self.records if r.status != "accepted")

    @property
    def rounds(self) -> dict[int, int]:
        histogram = Counter(r.rounds for r in self.records if r.status != "error")
        return dict(sorted(histogram.items()))

    @property
    def usage(self) -> Usage:
        total = Usage()
        for record in self.records:
            total.add(record.usage)
        return total

    @property
    def ok(self) -> bool:
        return self.count("accepted") == self.total

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "items": self.total, "resumed": self.resumed,
                "accepted": self.count("accepted"), "rejected": self.count("rejected"),
                "errors": self.count("error"), "reasons": dict(sorted(self.reasons.items())),
                "rounds": {str(k): v for k, v in self.rounds.items()},
                "usage": self.usage.to_json(), "run_usage": self.run_usage.to_json(),
                "restored": list(self.restored),
                "items_detail": [self._detail(r) for r in self.records]}

    @staticmethod
    def _detail(record: ItemRecord) -> dict[str, Any]:
        detail: dict[str, Any] = {"label": record.label, "status": record.status,
                                  "rounds": record.rounds, "reason": record.reason,
                                  "detail": record.detail, "output": record.output,
                                  "tokens": record.usage.total_tokens}
        for name in ("coverage", "draft"):  # what a world's record adds
            if record.data.get(name):
                detail[name] = record.data[name]
        return detail

    def render_text(self) -> str:
        accepted, rejected, errors = (self.count(s) for s in STATUSES)
        resumed = f" ({self.resumed} finished before, resumed)" if self.resumed else ""
        lines = [f"{self.kind}: {self.total} item(s){resumed}: {accepted} accepted, "
                 f"{rejected} rejected, {errors} error(s)"]
        lines += [f"  rewrote {path} from the journal (it was missing or changed)"
                  for path in self.restored]
        for reason, count in sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {count} x {reason}")
        if self.rounds:
            shown = ", ".join(f"{k}: {v}" for k, v in self.rounds.items())
            lines.append(f"  repair rounds (rounds: items): {shown}")
        total = self.usage
        replayed = f" ({total.replayed_requests} answered from the request journal)" \
            if total.replayed_requests else ""
        lines.append(f"  tokens: {total.total_tokens:,} (prompt {total.prompt_tokens:,}, "
                     f"cached {total.cached_tokens:,}, completion "
                     f"{total.completion_tokens:,}) in {total.requests} request(s){replayed}, "
                     f"{total.retries} retried; this run: {self.run_usage.spent_tokens:,}")
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------- run
Worker = Callable[[BatchItem, Usage], Awaitable[ItemRecord]]

#: The work on one payload, given the worker's client and a usage to add the tokens to: a
#: module-level function, so that it travels to a Ray worker by reference.
ClientWork = Callable[[LLMClient, Any, Usage], Awaitable[Any]]


@dataclass
class WorkDone:
    """What a worker sends back for one item: its value, or why it failed, and its tokens."""

    value: Any
    usage: Usage
    #: ``(reason, detail)`` when the work raised
    error: tuple[str, str] | None = None


async def _guarded(work: Callable[[Usage], Awaitable[Any]]) -> WorkDone:
    spent = Usage()
    try:
        value = await work(spent)
    except LLMError as exc:
        return WorkDone(None, spent, ("model request failed", str(exc)))
    except Exception as exc:
        return WorkDone(None, spent, ("internal error", f"{type(exc).__name__}: {exc}"))
    return WorkDone(value, spent)


@dataclass
class ClientWorker:
    """An :class:`~worldspec.services.executors.ItemWorker` with one model client per worker
    process (bounded by ``config.concurrency``), doing ``work(client, payload, usage)``.

    Only ``config`` and ``work`` travel to a Ray worker, which opens its own client; in this
    process ``client``, when given, is used (and left open) instead.
    """

    config: LLMConfig
    work: ClientWork
    client: LLMClient | None = None
    _opened: bool = False

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "work": self.work, "client": None, "_opened": False}

    async def start(self) -> None:
        if self.client is None:
            self.client = LLMClient(self.config)
            self._opened = True

    async def run(self, payload: Any) -> WorkDone:
        client = self.client
        assert client is not None, "start() the worker first"
        return await _guarded(lambda spent: self.work(client, payload, spent))

    async def stop(self) -> None:
        if self._opened and self.client is not None:
            await self.client.aclose()
            self.client = None
            self._opened = False


@dataclass
class _InProcessWorker:
    """A :data:`Worker` closure as an item worker: it runs here only (a closure holding an
    open client cannot travel)."""

    work: Worker

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("this batch's work is a closure over live objects and runs in this "
                        "process only; give run_batch a SplitWork to run it elsewhere")

    async def start(self) -> None:
        return None

    async def run(self, item: BatchItem) -> WorkDone:
        return await _guarded(lambda spent: self.work(item, spent))

    async def stop(self) -> None:
        return None


@dataclass(frozen=True)
class SplitWork:
    """A batch's work in three parts, so that the middle one can run on another machine.

    ``prepare(item)`` (driver, at dispatch) gives the payload, ``worker.run(payload)`` (a
    worker) does the work, ``settle(item, value)`` (driver) turns its value into the item's
    record, writing outputs. Only the driver touches the journal and the outputs.
    """

    worker: ItemWorker
    prepare: Callable[[BatchItem], Any]
    settle: Callable[[BatchItem, Any], ItemRecord]


def _whole(item: BatchItem, record: Any) -> ItemRecord:
    assert isinstance(record, ItemRecord)
    return record


async def run_batch(kind: str, items: Sequence[BatchItem], work: Worker | SplitWork, *,
                    journal: Journal | None = None, concurrency: int = 4,
                    progress: Progress | None = None,
                    on_record: Callable[[ItemRecord], None] | None = None,
                    executor: Executor | None = None, retry_rejected: bool = False,
                    verify: Callable[[ItemRecord], str] | None = restore_output
                    ) -> BatchSummary:
    """Run ``work`` on every item not finished in ``journal``, ``concurrency`` at a time.

    ``work(item, usage)`` returns the item's record and adds the tokens it
    spends to ``usage`` (so an item that fails midway still reports its cost);
    a :class:`SplitWork` does the same in three parts and may run on any
    ``executor`` (default: this event loop, ``concurrency`` items at once).
    A :class:`~worldspec.services.model_client.LLMError` or any other exception becomes an
    ``error`` record; records are journaled as soon as they exist, then passed
    to ``on_record`` (to materialise outputs).

    Finished items are skipped, but first ``verify(record)`` (default
    :func:`restore_output`) checks each one's output: ``rewrote`` is reported in
    the summary, ``lost`` sends the item back to work. ``retry_rejected`` works
    on rejected items again.
    """
    unique: dict[str, BatchItem] = {}
    for item in items:
        unique.setdefault(item.key, item)
    summary = BatchSummary(kind, total=len(unique))

    def stands(key: str) -> bool:
        if journal is None or not journal.finished(key):
            return False
        record = journal.records[key]
        if retry_rejected and record.status == "rejected":
            return False
        verdict = verify(record) if verify is not None else "ok"
        if verdict == "rewrote" and record.output:
            summary.restored.append(record.output)
        return verdict != "lost"

    standing = {key for key in unique if stands(key)}
    done = [journal.records[k] for k in unique if journal is not None and k in standing]
    summary.resumed = len(done)
    summary.records.extend(done)
    todo = [item for key, item in unique.items() if key not in standing]
    if progress is not None:
        progress.start(done)
    split = work if isinstance(work, SplitWork) else \
        SplitWork(_InProcessWorker(work), lambda item: item, _whole)

    def finish(item: BatchItem, outcome: Any) -> None:
        if isinstance(outcome, WorkDone):
            spent = outcome.usage
            if outcome.error is not None:
                record = ItemRecord(item.key, "error", item.label, reason=outcome.error[0],
                                    detail=outcome.error[1])
            else:
                try:
                    record = split.settle(item, outcome.value)
                except Exception as exc:
                    record = ItemRecord(item.key, "error", item.label, reason="internal error",
                                        detail=f"{type(exc).__name__}: {exc}")
        else:  # the executor lost the item (every worker died under it) or prepare failed
            spent = Usage()
            reason = "worker lost" if isinstance(outcome, WorkerLost) else "internal error"
            record = ItemRecord(item.key, "error", item.label, reason=reason,
                                detail=f"{type(outcome).__name__}: {outcome}")
        record.usage = spent
        record.label = record.label or item.label
        summary.run_usage.add(spent)
        if journal is not None:
            journal.append(record)
        summary.records.append(record)
        if on_record is not None:
            on_record(record)
        if progress is not None:
            progress.update(record, summary.usage.total_tokens)

    runner = executor or LocalExecutor(concurrency=concurrency)
    try:
        await runner.run(split.worker, todo, prepare=split.prepare, finish=finish)
    finally:
        if progress is not None:
            progress.close()
    order = {key: index for index, key in enumerate(unique)}
    summary.records.sort(key=lambda r: order.get(r.key, len(order)))
    return summary
