"""The run folder (``reports/<run_id>``, or ``reports/<run_id>/shard-K-of-N``) and its lock:
where this session writes, what a resumed session continues, and the refusals that keep one
folder to one run (DESIGN §7)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_egi.run.state import RunSettings

if TYPE_CHECKING:
    from pytest_egi.run.runlog import RunLock

__all__ = ["release_lock", "resolve_run_dir"]

RUN_LOCK_KEY: pytest.StashKey[RunLock] = pytest.StashKey()
"""config.stash: the run folder's lock this session holds (released at unconfigure)."""


def resolve_run_dir(config: pytest.Config, settings: RunSettings) -> list[dict[str, Any]]:
    """Settle where this session writes, and on ``--egi-resume`` what it continues.

    Without ``--egi-resume``, the run folder must not already hold a run (only possible with
    ``--egi-run-id``). With it, the folder's manifest must match this session
    (:func:`pytest_egi.run.runlog.manifest_differences`); the session then writes into that
    folder, keeps its shard, and skips the items with a complete record.

    Returns:
        The run's complete records (passed/failed, trajectory on disk) when resuming, else [].

    Raises:
        pytest.UsageError: the folder already holds a run, is not a run, or was made with
            other options (every difference is named).
    """
    from pytest_egi.run.runlog import (
        MANIFEST_FILE,
        RunLogError,
        complete_records,
        manifest_differences,
        manifest_for,
        read_manifest,
        run_records,
        shard_dir_name,
    )

    opt = config.option
    if not opt.egi_resume:
        _refuse_unnamed_shard(opt)
        _refuse_mixed_layout(settings)
        _lock_run_dir(config, settings.run_dir)  # a session still writing it is named first
        if (settings.run_dir / MANIFEST_FILE).exists():
            raise pytest.UsageError(
                f"--egi-run-id {settings.run_id}: {settings.run_dir} already holds a run; "
                f"continue it with --egi-resume {settings.run_dir}, or pick another --egi-run-id"
            )
        return []
    run_dir = Path(opt.egi_resume)
    if not run_dir.is_absolute():
        run_dir = Path(config.invocation_params.dir) / run_dir
    if run_dir.exists() and not run_dir.is_dir():
        raise pytest.UsageError(f"--egi-resume {opt.egi_resume}: not a folder; pass a run folder "
                                "(reports/<run_id>)")
    from pytest_egi.run.runlog import run_in_use

    holder = run_in_use(run_dir) if run_dir.is_dir() else None
    if holder is not None:
        raise pytest.UsageError(f"--egi-resume {opt.egi_resume}: the run is still going ({holder}); "
                                "wait for it to end or stop it, then resume")
    try:
        old = read_manifest(run_dir)
        shard = tuple(old["shard"]) if old.get("shard") else None
        if opt.egi_shard and tuple(opt.egi_shard) != shard:
            raise RunLogError(
                f"--egi-resume {opt.egi_resume}: the run is "
                + (f"shard {shard[0]}/{shard[1]}" if shard else "not a shard")
                + f", not --egi-shard {opt.egi_shard[0]}/{opt.egi_shard[1]}; drop --egi-shard "
                "(a resumed run keeps its own)"
            )
        if shard and run_dir.name != shard_dir_name(*shard):
            raise RunLogError(f"--egi-resume {opt.egi_resume}: a shard's folder must be named "
                              f"{shard_dir_name(*shard)} (inside its run's folder)")
        run_id = run_dir.resolve().parent.name if shard else run_dir.resolve().name
        if opt.egi_run_id and opt.egi_run_id != run_id:
            raise RunLogError(f"--egi-resume {opt.egi_resume}: the run's id is {run_id}, not "
                              f"--egi-run-id {opt.egi_run_id}; drop --egi-run-id")
        differences = manifest_differences(old, manifest_for(settings))
        if differences:
            raise RunLogError(
                f"--egi-resume {opt.egi_resume}: this session differs from the run: "
                + "; ".join(differences)
                + ". Resume with the run's options, or start a new run without --egi-resume"
            )
        damaged: list[str] = []
        records = complete_records(run_dir, run_records(run_dir), damaged)
    except (RunLogError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None
    _lock_run_dir(config, run_dir)
    from pytest_egi.records import remove_stale_temp_files

    remove_stale_temp_files(run_dir)  # a failed write's leftovers (the run is ours now)
    settings.shard = shard  # type: ignore[assignment]
    settings.run_id = run_id
    settings.report_dir = run_dir.resolve().parent.parent if shard else run_dir.resolve().parent
    settings.resume_from = run_dir
    settings.resumed = {(r["suite"], r["task_id"], int(r["trial"])): r.get("suite_version") for r in records}
    settings.resume_damaged = damaged
    return records


def _refuse_unnamed_shard(opt: Any) -> None:
    """``--egi-shard K/N`` needs ``--egi-run-id``: the shards of one run are merged from one
    run folder (``reports/ID/shard-K-of-N``), and ``egi-bench report --merge`` refuses shards
    of different runs, so a shard in a folder of its own (a fresh random run id) could never
    be merged with the others. A resumed shard keeps its run's id (``--egi-resume``).

    Raises:
        pytest.UsageError: ``--egi-shard`` without ``--egi-run-id`` (names both and the fix).
    """
    if opt.egi_shard and not opt.egi_run_id:
        k, n = opt.egi_shard
        raise pytest.UsageError(
            f"--egi-shard {k}/{n} needs --egi-run-id: without it this shard would write into a "
            f"run folder of its own, which egi-bench report --merge cannot join with the other "
            f"shards; pass --egi-run-id NAME so the {n} shards share one run folder "
            f"(reports/NAME/shard-K-of-{n})"
        )


def _refuse_mixed_layout(settings: RunSettings) -> None:
    """A run folder holds either one run or the shards of one run, never both."""
    from pytest_egi.run.runlog import JOURNAL_FILE, MANIFEST_FILE

    top = settings.report_dir / settings.run_id
    if settings.shard is None and any(top.glob("shard-*-of-*")):
        raise pytest.UsageError(
            f"--egi-run-id {settings.run_id}: {top} holds shards of a run; add --egi-shard K/N to "
            "run one of them, or pick another --egi-run-id"
        )
    # a merged run's folder has a manifest but no journal: its shards may be run again
    if settings.shard is not None and (top / MANIFEST_FILE).exists() and (top / JOURNAL_FILE).exists():
        raise pytest.UsageError(
            f"--egi-run-id {settings.run_id}: {top} holds a run made without --egi-shard; pick "
            "another --egi-run-id for the shards"
        )


def _lock_run_dir(config: pytest.Config, run_dir: Path) -> None:
    """Hold the run folder's lock for this session (``pytest_egi.run.runlog.RunLock``).

    Raises:
        pytest.UsageError: another session holds it (names its pid, host and start).
    """
    from pytest_egi.run.runlog import RunLock

    lock = RunLock(run_dir)
    holder = lock.acquire()
    if holder is not None:
        raise pytest.UsageError(
            f"{run_dir} is in use by another session ({holder}); wait for it to end or stop it, "
            f"then continue the run with --egi-resume {run_dir}"
        )
    config.stash[RUN_LOCK_KEY] = lock


def release_lock(config: pytest.Config) -> None:
    """Release the run folder's lock this session holds, if any (and remove what the lock
    made when the session wrote nothing: ``RunLock.remove_if_unused``)."""
    lock = config.stash.get(RUN_LOCK_KEY, None)
    if lock is not None:
        del config.stash[RUN_LOCK_KEY]
        lock.release()
        lock.remove_if_unused()
