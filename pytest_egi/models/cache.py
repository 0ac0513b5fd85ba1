"""On-disk response cache: one SQLite file in WAL mode, safe across processes and threads.

The key is a SHA-256 over the model, the API base, the messages, the tool schemas, the
sampling parameters, the trial index and a namespace (:func:`cache_key`), so a second
identical run answers from disk with zero network calls while trials stay independent.
Only the response is stored (assistant message, token counts, ``finish_reason``), never a
request or a key: the client redacts every secret of a reply before storing it (a provider
may echo a key). Failed calls and replies without choices are never stored, and a caller
that finds a stored reply unusable (a judge verdict that does not parse) deletes it
(:meth:`ResponseCache.delete`), so the next identical call goes to the network.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from pytest_egi.models._sqlite import init_wal_database
from pytest_egi.models.replies import escape_text, has_lone_surrogate

__all__ = ["CACHE_FORMAT", "ResponseCache", "cache_key"]

CACHE_FORMAT = "egi-response-cache/2"
"""Bumped when the stored value's shape changes (old entries then simply miss)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    created REAL NOT NULL,
    value TEXT NOT NULL
)
"""


def cache_key(
    *,
    model: str,
    api_base: str | None,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    params: dict[str, Any],
    trial: int | None,
    namespace: str = "",
) -> str:
    """The cache key of one call: hex SHA-256 of a canonical JSON of everything that can
    change the answer.

    Args:
        model: the LiteLLM model string.
        api_base: the base URL (a different server is a different model), or None.
        messages: the conversation, OpenAI format.
        tools: tool schemas, or None.
        params: sampling parameters (``temperature``, ``max_tokens``, ``seed``, ...).
        trial: the trial index (None when trials may share answers).
        namespace: free text separating roles or runs (``"judge"``, ``"model"``).
    """
    payload = {
        "format": CACHE_FORMAT,
        "model": model,
        "api_base": (api_base or "").rstrip("/"),
        "messages": messages,
        "tools": tools or None,
        "params": params,
        "trial": trial,
        "namespace": namespace,
    }
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)
    # surrogatepass: a lone surrogate in the conversation (a tool's output) still gives a key;
    # any other text encodes as plain UTF-8, so keys of valid text do not change
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """A key -> JSON value store in ``<directory>/responses.sqlite3``.

    Each thread gets its own connection; SQLite's WAL mode and a 60 s busy timeout make
    concurrent readers and writers in several processes (xdist workers) safe. Storage errors
    (a full disk, a folder turned read-only, here or when the cache is created) are reported
    once per process as a warning and treated as a miss, or a write not kept: a broken cache
    never fails a call nor stops the run; the calls then go to the network.

    Args:
        directory: where the database lives (created if missing).
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / "responses.sqlite3"
        self._local = threading.local()
        self._warned = False
        self._broken: Exception | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            init_wal_database(self.path, _SCHEMA)
        except (OSError, sqlite3.Error) as exc:  # a full disk, a read-only folder: no cache
            self._broken = exc
            self._warn(exc)

    def _conn(self) -> sqlite3.Connection:
        if self._broken is not None:
            raise sqlite3.OperationalError(f"the cache could not be created: {self._broken}")
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def _warn(self, exc: Exception) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"response cache {self.path} unusable, calls go to the network: {exc}",
                          RuntimeWarning, stacklevel=3)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored value for ``key``, or None on a miss (or an unreadable cache)."""
        try:
            row = self._conn().execute("SELECT value FROM responses WHERE key = ?",
                                       (key,)).fetchone()
        except sqlite3.Error as exc:
            self._warn(exc)
            return None
        if row is None:
            return None
        try:
            return json.loads(row[0])
        except json.JSONDecodeError:
            return None

    def put(self, key: str, value: dict[str, Any], *, model: str) -> None:
        """Store ``value`` (JSON-safe) under ``key``; last writer wins.

        A lone surrogate (text that is not valid Unicode, e.g. in a model's reply) is stored
        as its JSON escape (``\\ud800``), so the entry reads back as it was given."""
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if has_lone_surrogate(text):  # SQLite takes UTF-8 only
            text = escape_text(text)
        try:
            self._conn().execute(
                "INSERT OR REPLACE INTO responses (key, model, created, value) VALUES (?, ?, ?, ?)",
                (key, model, time.time(), text),
            )
        except sqlite3.Error as exc:
            self._warn(exc)

    def delete(self, key: str) -> None:
        """Remove the entry for ``key`` (no error when absent or the cache is unusable)."""
        try:
            self._conn().execute("DELETE FROM responses WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            self._warn(exc)

    def __len__(self) -> int:
        try:
            return int(self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        except sqlite3.Error:
            return 0

    def clear(self) -> None:
        """Delete every entry."""
        self._conn().execute("DELETE FROM responses")

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None
