"""Rollout records and their journal, for the rollout front end.

The format and the journal live in :mod:`worldspec.services.journals` (``worldspec diff``
replays journals too, and a service imports no front end); this module names them where
the rollout code has always found them.
"""

from __future__ import annotations

from worldspec.services.journals import (
    FORMAT,
    JOURNAL_NAME,
    SUMMARY_NAME,
    Journal,
    RecordError,
    read_records,
    record_files,
    rollout_key,
)

__all__ = ["FORMAT", "JOURNAL_NAME", "SUMMARY_NAME", "Journal", "RecordError",
           "read_records", "record_files", "rollout_key"]
