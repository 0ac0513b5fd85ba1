"""A requests-per-minute and tokens-per-minute limit shared by every process on the machine.

The algorithm is GCRA (a leaky bucket kept as a "theoretical arrival time" per limit): each
call reserves the next free slot in one short SQLite transaction and sleeps until it, so
callers are served in order, nobody polls, and with ``burst=1`` consecutive requests are at
least ``60 / rpm`` seconds apart across all xdist workers, which keeps any 60-second window at
or below ``rpm`` requests. Tokens are reserved from an estimate before the call (prompt
characters / 4 plus ``max_tokens``) and corrected with the real count afterwards
(:meth:`RateLimiter.settle`). A 429 can push a shared pause (:meth:`RateLimiter.pause`) so
that every worker backs off, not just the one that was told.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_egi.models._sqlite import init_wal_database

__all__ = ["RateLimiter", "estimate_tokens"]

_SCHEMA = "CREATE TABLE IF NOT EXISTS limits (name TEXT PRIMARY KEY, value REAL NOT NULL)"


def estimate_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                    params: dict[str, Any]) -> int:
    """A cheap upper-leaning estimate of a call's tokens: JSON characters / 4 of the
    messages and tools, plus ``max_tokens`` (or ``max_completion_tokens``) when given."""
    chars = len(json.dumps(messages, default=str)) + len(json.dumps(tools or [], default=str))
    out = params.get("max_completion_tokens") or params.get("max_tokens") or 0
    try:
        out = int(out)
    except (TypeError, ValueError):
        out = 0
    return max(1, chars // 4) + max(0, out)


class RateLimiter:
    """Shared rpm/tpm limits for one model identity.

    Args:
        name: the limit's identity (model string and API base); different names do not
            share limits.
        rpm: requests per minute, or None for no request limit.
        tpm: tokens per minute, or None for no token limit.
        state_dir: directory of ``ratelimit.sqlite3`` shared by processes; None keeps the
            state in this process (threads only).
        burst: requests that may go back-to-back before spacing applies (1 = none).
        clock: epoch-seconds clock (shared across processes, so wall time).
        sleep: how to wait (tests may replace it).
    """

    def __init__(self, name: str, *, rpm: int | None = None, tpm: int | None = None,
                 state_dir: Path | None = None, burst: int = 1,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if rpm is not None and rpm <= 0 or tpm is not None and tpm <= 0:
            raise ValueError("rpm and tpm must be positive")
        self.name = name
        self.rpm = rpm
        self.tpm = tpm
        self.burst = max(1, burst)
        self.clock = clock
        self.sleep = sleep
        self.path = Path(state_dir) / "ratelimit.sqlite3" if state_dir is not None else None
        self._lock = threading.Lock()
        self._memory: dict[str, float] = {}
        self._local = threading.local()
        if self.path is not None and self.active:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            init_wal_database(self.path, _SCHEMA)

    @property
    def active(self) -> bool:
        """True when a request or token limit is set."""
        return self.rpm is not None or self.tpm is not None

    # -- state access: one read-modify-write under an exclusive lock
    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
            self._local.conn = conn
        return conn

    def _transact(self, update: Callable[[dict[str, float]], None]) -> None:
        keys = [f"{self.name}|{k}" for k in ("rpm", "tpm", "pause")]
        if self.path is None:
            with self._lock:
                state = {k.rsplit("|", 1)[1]: self._memory[k] for k in keys if k in self._memory}
                update(state)
                for k, v in state.items():
                    self._memory[f"{self.name}|{k}"] = v
            return
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            rows = conn.execute(
                f"SELECT name, value FROM limits WHERE name IN ({','.join('?' * len(keys))})",
                keys).fetchall()
            state = {name.rsplit("|", 1)[1]: value for name, value in rows}
            update(state)
            conn.executemany("INSERT OR REPLACE INTO limits (name, value) VALUES (?, ?)",
                             [(f"{self.name}|{k}", v) for k, v in state.items()])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    # -- public API
    def acquire(self, tokens: int = 0) -> float:
        """Wait for this call's slot; reserve one request and ``tokens`` tokens.

        Args:
            tokens: the estimated tokens of the call (see :func:`estimate_tokens`).

        Returns:
            Seconds waited (0.0 when no limit is set or the slot was free).
        """
        if not self.active:
            return 0.0
        now = self.clock()
        slot = now

        def update(state: dict[str, float]) -> None:
            nonlocal slot
            slot = max(now, state.get("pause", now))
            if self.rpm is not None:
                interval = 60.0 / self.rpm
                tat = state.get("rpm", now)
                slot = max(slot, tat - (self.burst - 1) * interval)
            if self.tpm is not None:
                slot = max(slot, state.get("tpm", now))
            if self.rpm is not None:
                state["rpm"] = max(state.get("rpm", now), slot) + 60.0 / self.rpm
            if self.tpm is not None:
                state["tpm"] = max(state.get("tpm", now), slot) + max(0, tokens) * 60.0 / self.tpm

        self._transact(update)
        wait = slot - now
        if wait > 0:
            self.sleep(wait)
        return max(0.0, wait)

    def settle(self, reserved_tokens: int, actual_tokens: int) -> None:
        """Correct the token reservation with the real count (either direction)."""
        if self.tpm is None or actual_tokens == reserved_tokens:
            return
        delta = (actual_tokens - reserved_tokens) * 60.0 / self.tpm

        def update(state: dict[str, float]) -> None:
            state["tpm"] = state.get("tpm", self.clock()) + delta

        self._transact(update)

    def pause(self, seconds: float) -> None:
        """Hold every caller of this limit (all processes) for ``seconds`` from now."""
        if not self.active or seconds <= 0:
            return
        until = self.clock() + seconds

        def update(state: dict[str, float]) -> None:
            state["pause"] = max(state.get("pause", 0.0), until)

        self._transact(update)
