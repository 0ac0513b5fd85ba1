"""The session's lines in pytest's terminal output outside the EGI summary: the header (model,
mode, routing, seed, run folder, the xdist placement, shard and resume) and the count of items
this session runs (a shard, a resume)."""

from __future__ import annotations

import pytest

from pytest_egi.collect.parametrize import RESUMED_SKIPPED_KEY
from pytest_egi.collect.xdist import worksteal_chosen
from pytest_egi.run.state import RunSettings

__all__ = ["collection_line", "header_lines"]


def header_lines(config: pytest.Config, s: RunSettings) -> list[str]:
    """Model, mode, routing file and hash, seed, run directory (and with ``-v`` the xdist mode
    we chose, with what the suites' placement on the workers is weighed by: scheduling
    internals stay out of the default header)."""
    seed = s.run_seed
    lines = [
        f"egi: model {s.model}, mode {s.mode}, seed {seed}, trials {s.trials}, "
        f"judge {s.judge_model or 'egi/rules'}",
        f"egi: routing {s.routing_path} (sha256 {s.routing_hash[:12]}), run {s.run_dir}",
    ]
    if worksteal_chosen(config) and int(config.getoption("verbose", 0) or 0) > 0:
        from pytest_egi.collect.scheduling import learned_durations

        basis = ("learned item times (last -n run, same model and profile)" if learned_durations(config)
                 else "declared item times, else item counts (no item times learned for this model and "
                 "profile)")
        lines.append(f"egi: xdist suite-affine work stealing, suites placed by {basis}; --dist to choose")
    if s.shard:
        lines.append(f"egi: shard {s.shard[0]}/{s.shard[1]} of run {s.run_id}: a deterministic "
                     f"1/{s.shard[1]} of the selected items, balanced by suite and category")
    if s.resume_from is not None:
        done = len(s.resumed)
        what = "items already have a complete record and do not" if done != 1 else (
            "item already has a complete record and does not")
        lines.append(f"egi: resuming {s.resume_from}: {done} {what} run again")
        if s.resume_damaged:
            n = len(s.resume_damaged)
            lines.append(f"egi: {n} {'result runs' if n == 1 else 'results run'} again: the stored "
                         f"trajectory is missing or not whole ({s.resume_damaged[0]}"
                         + (f"; and {n - 1} more" if n > 1 else "") + ")")
    return lines


def collection_line(config: pytest.Config, s: RunSettings, items: list[pytest.Item]) -> str:
    """After pytest's "collected N items": how many of them this session runs when it is a
    shard or a resume (pytest's count is before those choices)."""
    skipped = config.stash.get(RESUMED_SKIPPED_KEY, 0)
    parts = []
    if s.shard:
        parts.append(f"shard {s.shard[0]}/{s.shard[1]}")
    if skipped:
        parts.append(f"{skipped} already recorded")
    return f"egi: {len(items)} items to run ({', '.join(parts)})"
