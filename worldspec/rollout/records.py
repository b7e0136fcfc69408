"""Rollout records and their journal, for the rollout front end.

The format (:class:`RolloutRecord`, the schema of a record) and the journal live in
:mod:`worldspec.services.journals` (``worldspec diff`` replays journals too, and a service
imports no front end); this module names them where the rollout code has always found them,
and says when a record passed.
"""

from __future__ import annotations

from worldspec.services.journals import (
    FORMAT,
    JOURNAL_NAME,
    SUMMARY_NAME,
    Journal,
    RecordError,
    RolloutRecord,
    json_line,
    read_records,
    record_files,
    rollout_key,
)

__all__ = ["FORMAT", "JOURNAL_NAME", "SUMMARY_NAME", "Journal", "RecordError", "RolloutRecord",
           "json_line", "read_records", "record_files", "record_passed", "rollout_key"]


def record_passed(record: RolloutRecord) -> bool:
    """Whether a finished rollout did its task: the record's ``passed`` (every check and the
    frame held). A record written before ``passed`` was recorded passes when its reward is 1
    (every check held then, since rewards were the checks' weighted share)."""
    if "passed" in record:
        return bool(record["passed"])
    return float(record.get("reward") or 0.0) >= 1.0 - 1e-9
