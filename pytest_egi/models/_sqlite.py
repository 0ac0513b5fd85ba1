"""Shared set-up of the small SQLite stores (response cache, rate limiter)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from filelock import FileLock

__all__ = ["init_wal_database"]


def init_wal_database(path: Path, schema: str, timeout_s: float = 60.0) -> None:
    """Create ``path`` in WAL mode with ``schema`` (idempotent SQL), once across processes.

    A file lock beside the database serialises the first initialisation between xdist
    workers; WAL lets readers and one writer work at the same time afterwards.
    """
    with FileLock(str(path) + ".lock", timeout=timeout_s):
        conn = sqlite3.connect(path, timeout=timeout_s)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(schema)
            conn.commit()
        finally:
            conn.close()
