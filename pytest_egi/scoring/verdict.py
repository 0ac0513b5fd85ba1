"""Whether a run's EGI is a result: INVALID, INTERRUPTED, INCOMPLETE, or a subset.

The figure is computed for every run, but it is only a score when the run finished, ran every
item it collected, and errored on no more items than ``--egi-max-error-rate`` allows.
:func:`judge_run` decides this from the session's facts; the terminal, egi.json, report.html
and ``egi-bench report`` / ``compare`` all show the same verdict in the EGI headline itself
(``pytest_egi.report.terminal.egi_headline``), never a plain score above a reason.

Flags, most severe first:

- ``INTERRUPTED``: the session stopped before every collected item ran (Ctrl-C, ``-x``,
  ``--maxfail``, the early stop when the first items all errored).
- ``INCOMPLETE``: fewer items reported than were collected, with no stop (e.g. xdist gave up
  restarting crashed workers).
- ``INVALID``: the share of errored items is above ``--egi-max-error-rate``; the errored
  items are not scored, so the figure is over a biased remainder.

Separately, a run whose items were chosen on the command line (``-k``, ``-m``, ``--lf``,
``--sw``, ``--deselect``, node ids) is a **subset** of its profile: its figure stands, labelled.

The release gate is judged only on a run whose figure stands for its selected items: on a
flagged run, or one shard of a sharded run, it is **not judged** (:func:`judge_gate`,
:func:`gate_not_judged_reason`; ``gate.release_ready`` null in egi.json).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pytest_egi.scoring.egi import GateResult

__all__ = [
    "FLAGS",
    "SUBSET_KEYS",
    "Verdict",
    "describe_selection",
    "gate_not_judged_reason",
    "judge_gate",
    "judge_run",
    "session_selection",
    "stopped_before_end",
    "stored_run_stopped",
    "verdict_from_egi",
]

FLAGS = ("INTERRUPTED", "INCOMPLETE", "INVALID")
"""Verdict flags, most severe first."""

SUBSET_KEYS = ("-k", "-m", "--lf", "--sw", "--deselect", "node ids", "--egi-shard", "--egi-budget",
               "--egi-target-ci")
"""``RunSettings.selection`` keys that leave items of the profile out (``--egi-shard`` is added
by the session: one shard is a part of its run until merged). ``--ff`` only reorders: it is
recorded, but does not by itself make a subset."""


@dataclass(frozen=True)
class Verdict:
    """The verdict on one run.

    Attributes:
        flags: subset of :data:`FLAGS`, in that order; empty when the figure is a score.
        reasons: one line per flag, in the same order (``5 of 10 items ran (...)``).
        items_ran: EGI items with a record (any status, skipped included).
        items_collected: EGI items collected after deselection; None when unknown.
        stop_reason: why the session stopped early, or None.
        subset: descriptions of the selection that made the run a subset (``-k "alpha"``,
            ``--lf``, ``4 items deselected``); empty for a run of the whole profile.
    """

    flags: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    items_ran: int = 0
    items_collected: int | None = None
    stop_reason: str | None = None
    subset: tuple[str, ...] = field(default_factory=tuple)

    @property
    def status(self) -> str:
        """``valid``, or the most severe flag in lower case (``interrupted``, ...)."""
        return self.flags[0].lower() if self.flags else "valid"


def describe_selection(selection: dict[str, Any], deselected: int | None = None) -> tuple[str, ...]:
    """The parts of ``selection`` that make a subset, for people: ``('-k "alpha"', '--lf')``.

    ``deselected`` (items deselected during collection) adds ``N items deselected`` when no
    listed option explains it.
    """
    parts: list[str] = []
    for key in SUBSET_KEYS:
        value = selection.get(key)
        if not value:
            continue
        if value is True:
            parts.append(key)
        elif isinstance(value, list):
            parts.append(f"{key} {' '.join(value)}" if len(value) <= 2 else f"{len(value)} {key}")
        else:
            parts.append(f'{key} "{value}"')
    if deselected and not parts:
        parts.append(f"{deselected} items deselected")
    return tuple(parts)


def judge_run(
    *,
    error_rate: float,
    max_error_rate: float,
    items_ran: int,
    items_collected: int | None,
    stop_reason: str | None,
    selection: dict[str, Any] | None = None,
    deselected: int | None = None,
) -> Verdict:
    """Decide the verdict from the session's facts (see the module docstring).

    Args:
        error_rate: errored items / non-skipped items, 0-1 (``Aggregate.error_rate``).
        max_error_rate: ``--egi-max-error-rate``, 0-1.
        items_ran: EGI items with a record.
        items_collected: EGI items collected (after deselection), or None when unknown.
        stop_reason: why the session stopped early (pytest's ``shouldstop``/``shouldfail``,
            ``KeyboardInterrupt``, the early stop), or None.
        selection: ``RunSettings.selection``.
        deselected: items deselected during collection, when known.

    A stop after the last item ran is no interruption; with ``items_collected`` unknown, a
    stop reason alone makes the run INTERRUPTED.
    """
    flags: list[str] = []
    reasons: list[str] = []
    of = f"{items_ran} of {items_collected} items ran" if items_collected is not None else (
        f"{items_ran} items ran"
    )
    missing = items_collected is not None and items_ran < items_collected
    if stopped_before_end(items_ran=items_ran, items_collected=items_collected, stop_reason=stop_reason):
        flags.append("INTERRUPTED")
        reasons.append(f"{of} ({stop_reason})")
    elif missing:
        flags.append("INCOMPLETE")
        reasons.append(f"{of}; the others reported no result")
    if error_rate > max_error_rate:
        flags.append("INVALID")
        reasons.append(f"errored items {error_rate:.1%} above --egi-max-error-rate {max_error_rate:.1%}")
    return Verdict(
        tuple(flags), tuple(reasons), items_ran, items_collected, stop_reason,
        describe_selection(selection or {}, deselected),
    )


def stopped_before_end(*, items_ran: int, items_collected: int | None, stop_reason: str | None) -> bool:
    """Whether the run is INTERRUPTED (:func:`judge_run`'s rule): it stopped (``stop_reason``)
    before all of its ``items_collected`` items ran, or with that count unknown."""
    missing = items_collected is not None and items_ran < items_collected
    return bool(stop_reason) and (missing or items_collected is None)


def _stored_counts(egi: dict[str, Any]) -> tuple[int, int | None, str | None]:
    """(items ran, items collected, stop reason) of a stored run (egi.json)."""
    session = egi.get("session") or {}
    items_ran = session.get("items_ran")
    if items_ran is None:
        items_ran = sum((egi.get("counts") or {}).values())
    return items_ran, session.get("items_collected"), session.get("stop_reason")


def stored_run_stopped(egi: dict[str, Any]) -> bool:
    """:func:`stopped_before_end` of a stored run (egi.json): known before it is
    re-aggregated (``egi-bench report``, ``--rescore``)."""
    items_ran, items_collected, stop_reason = _stored_counts(egi)
    return stopped_before_end(items_ran=items_ran, items_collected=items_collected, stop_reason=stop_reason)


def gate_not_judged_reason(
    verdict: Verdict, *, shard: tuple[int, int] | list[int] | None, run_dir: Path | str
) -> str | None:
    """Why the release gate is not judged on a run, in one sentence; None when it is judged.

    Not judged when the figures do not stand for the items the run selected:

    - ``INTERRUPTED``: the items that did not run are not in the buckets (``interrupted after
      1 of 424 items; continue it with --egi-resume <run_dir>``);
    - ``INCOMPLETE``: the same, for items that never reported;
    - ``INVALID``: the errored items are not scored, so the buckets are over a biased
      remainder (a floor met there says nothing of the run);
    - a shard (``shard`` is ``(K, N)``): a part of its run; the gate is judged on the merged
      run (``egi-bench report --merge <run_dir's parent>``).

    A subset (``-k``, ``-m``, ...) is judged: its figures stand for the items it selected.
    With several, the most severe flag's reason is given (a flagged shard must first be
    continued, then merged).

    Args:
        verdict: the run's verdict.
        shard: ``(K, N)`` of a shard's session, or None.
        run_dir: the run's folder (continued with ``--egi-resume``; a shard's parent folder is
            what ``--merge`` takes).
    """
    run_dir = Path(run_dir)
    resume = f"--egi-resume {run_dir}"
    if verdict.flags:
        flag = verdict.flags[0]
        ran = verdict.items_ran
        of = (f"{ran} of {verdict.items_collected} items" if verdict.items_collected is not None
              else f"{ran} item{'' if ran == 1 else 's'}")
        if flag == "INTERRUPTED":
            return f"interrupted after {of}; continue it with {resume}"
        if flag == "INCOMPLETE":
            return f"incomplete: {of} reported a result; run the others with {resume}"
        return (f"invalid: {verdict.reasons[0]}, so the buckets hold the scored items only; run "
                f"the errored items again with {resume}")
    if shard:
        return (f"shard {shard[0]}/{shard[1]}: the gate is judged on the merged run (egi-bench report "
                f"--merge {run_dir.parent})")
    return None


def judge_gate(
    gate: GateResult, verdict: Verdict, *, shard: tuple[int, int] | list[int] | None, run_dir: Path | str
) -> GateResult:
    """``gate`` as judged on this run: itself, or :meth:`GateResult.not_judged` with
    :func:`gate_not_judged_reason` when the run cannot be judged."""
    reason = gate_not_judged_reason(verdict, shard=shard, run_dir=run_dir)
    return gate if reason is None else gate.not_judged(reason)


def verdict_from_egi(egi: dict[str, Any], error_rate: float, max_error_rate: float) -> Verdict:
    """The verdict of a stored run (egi.json), re-judged with ``error_rate`` and
    ``max_error_rate`` (``egi-bench report --rescore`` may change either). An egi.json
    written before these fields existed gives a verdict on the error rate alone."""
    session = egi.get("session") or {}
    items_ran, items_collected, stop_reason = _stored_counts(egi)
    return judge_run(
        error_rate=error_rate,
        max_error_rate=max_error_rate,
        items_ran=items_ran,
        items_collected=items_collected,
        stop_reason=stop_reason,
        selection=session_selection((egi.get("config") or {}).get("selection") or {}, session.get("shard")),
        deselected=session.get("items_deselected"),
    )


def session_selection(selection: dict[str, Any], shard: Sequence[int] | None) -> dict[str, Any]:
    """The selection a session is judged with: the run's ``selection`` (egi.json
    ``config.selection``), plus ``--egi-shard: "K/N"`` for shard ``(K, N)`` of a run, which
    makes its EGI a subset; a new dict, ``selection`` unchanged."""
    out = dict(selection)
    if shard:
        out["--egi-shard"] = f"{shard[0]}/{shard[1]}"
    return out
