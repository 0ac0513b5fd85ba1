"""``egi-bench``: run [ARGS] | init | doctor | report [RUN] | report --rescore RUN | compare RUN RUN [RUN...].

``run`` runs the main job on the installed suites (pytest on the ``suites`` package's folder, in
the current folder); ``init`` writes the default ``routing.yaml`` there for a team to edit. No
other command calls a model under test: ``report`` re-reads a run, ``--rescore`` re-runs the
suites' scorers on the stored trajectories and re-aggregates with the current (or given)
routing, weights and floors.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.records import RunDir, load_records
from pytest_egi.report.files import write_run
from pytest_egi.report.terminal import summary_lines
from pytest_egi.run.state import RunSettings
from pytest_egi.scoring.aggregate import aggregate_run
from pytest_egi.scoring.config import (
    RoutingConfig,
    apply_floors,
    apply_weights,
    check_routes_produced,
    load_routing,
    parse_bucket_values,
)
from pytest_egi.scoring.gate import settle_gate, undecided_reason
from pytest_egi.scoring.verdict import (
    Verdict,
    describe_selection,
    judge_gate,
    stored_run_stopped,
    verdict_from_egi,
)
from pytest_egi.suite import Task, load_suite

__all__ = ["main"]


class CliError(Exception):
    """A user error: printed as ``egi-bench: error: …`` with exit status 2."""


def _latest_run(reports: Path) -> Path:
    """The newest run folder directly under ``reports`` (one with an egi.json): the one most
    recently updated or started by its ``run.json`` (``updated``, else ``started``), else by
    its egi.json's modification time; ties go to the later egi.json, then the later name.

    Raises:
        CliError: ``reports`` holds no run folder with an egi.json.
    """
    runs = [p for p in reports.glob("*") if (p / "egi.json").is_file()]
    if not runs:
        raise CliError(f"no run with an egi.json under {reports}; run pytest with --egi-model first")
    return max(runs, key=_run_time)


def _run_time(run: Path) -> tuple[float, float, str]:
    """(when the run was last updated or started, seconds since the epoch; its egi.json's
    mtime; its name): the sort key of :func:`_latest_run`."""
    from pytest_egi.run.runlog import MANIFEST_FILE

    mtime = (run / "egi.json").stat().st_mtime
    try:
        manifest = json.loads((run / MANIFEST_FILE).read_text(encoding="utf-8"))
        stamp = manifest.get("updated") or manifest.get("started")
        when = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except (OSError, ValueError, TypeError, AttributeError):  # no run.json, or no time in it
        when = mtime
    return when, mtime, run.name


def _load_egi(run: Path) -> dict[str, Any]:
    path = RunDir(run).egi_json
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CliError(_no_egi_json(run, path)) from None
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None


def _no_egi_json(run: Path, path: Path) -> str:
    """Why ``run`` has no ``egi.json``: a session that never ended (its ``run.json`` and
    journal say how far it got, and how to finish it), or not a run folder at all."""
    from pytest_egi.run.runlog import JOURNAL_FILE, MANIFEST_FILE, RunLogError, read_manifest

    try:
        manifest = read_manifest(run)
    except RunLogError:
        return f"{path}: no such file; is {run} a run directory?"
    try:  # whole lines: a line cut short by the kill is no record
        with open(run / JOURNAL_FILE, "rb") as fh:
            done = sum(1 for line in fh if line.endswith(b"\n"))
    except OSError:
        done = 0
    planned = len(manifest.get("plan") or ())
    of = f" of {planned}" if planned else ""
    return (f"{path}: no such file: the session of {run} stopped before its end ({MANIFEST_FILE}: status "
            f"{manifest.get('status')!r}; {done}{of} items in {JOURNAL_FILE}); finish it by running its "
            f"pytest command again with --egi-resume {run}")


def _importable_suites(egi: dict[str, Any], records: list[dict[str, Any]]) -> None:
    """Put the run's rootdir (then the current folder) on sys.path and import every suite.

    Raises:
        CliError: a suite of the run cannot be imported (re-aggregating without it would
            print a wrong result).
    """
    for folder in (egi.get("config", {}).get("rootdir"), os.getcwd()):
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)
    for module in sorted({r["suite_module"] for r in records if r.get("suite_module")}):
        try:
            load_suite(module)
        except Exception as exc:
            raise CliError(
                f"cannot import suite module {module!r} ({exc}); run egi-bench from the "
                "checkout the run was made in, or set PYTHONPATH to it"
            ) from None


def _settings_from_egi(run: Path, egi: dict[str, Any]) -> RunSettings:
    definition = egi["routing"].get("definition")
    if definition is None:
        raise CliError(f"{run}/egi.json has no routing definition; rescore it with --routing PATH")
    routing = RoutingConfig.model_validate(definition)
    cfg = egi["config"]
    return RunSettings(
        model=egi["model"],
        mode=egi["mode"],
        routing=routing,
        routing_path=Path(egi["routing"]["path"]),
        routing_hash=egi["routing"]["sha256"],
        weights=egi["routing"]["weights"],
        floors=egi["routing"]["floors"],
        seed=cfg.get("seed_override"),
        report_dir=run.parent,
        run_id=run.name,
        max_error_rate=cfg["max_error_rate"],
        strict=cfg["strict"],
        selection=cfg.get("selection") or {},
        api_base=cfg.get("api_base"),
        trials=cfg["trials"],
        suite_options=cfg.get("suite_options") or {},
        bootstrap=cfg.get("bootstrap_resamples", 1000),
        judge_model=None if egi.get("judge") == "egi/rules" else egi.get("judge"),
        simulator_model=None if egi.get("simulator") == "egi/rules" else egi.get("simulator"),
        data_warnings=list(egi.get("data_warnings") or []),
        weights_given=dict(egi["routing"].get("weights_given") or {}),
        # the gate rule the run was judged by (point for a run stored before the option)
        gate_rule=(cfg.get("gate") or {}).get("rule", "point"),
        gate_level=(cfg.get("gate") or {}).get("level", 0.95),
        gate_undecided=(cfg.get("gate") or {}).get("undecided", "fail"),
    )


def _gate_overrides(settings: RunSettings, args: argparse.Namespace) -> RunSettings:
    """``settings`` with the gate rule, level and undecided policy given to ``egi-bench report
    --rescore`` / ``--merge`` (``--egi-gate``, ``--egi-gate-level``, ``--egi-gate-undecided``);
    what is not given stays the run's.

    Raises:
        CliError: a level not strictly between 0 and 1.
    """
    level = getattr(args, "egi_gate_level", None)
    if level is not None and not 0.0 < level < 1.0:
        raise CliError(f"--egi-gate-level: expected a number between 0 and 1 (e.g. 0.95), got {level!r}")
    return replace(
        settings,
        gate_rule=getattr(args, "egi_gate", None) or settings.gate_rule,
        gate_level=settings.gate_level if level is None else level,
        gate_undecided=getattr(args, "egi_gate_undecided", None) or settings.gate_undecided,
    )


def _judge(
    settings: RunSettings, records: list[dict[str, Any]], egi: dict[str, Any], run: Path
) -> tuple[Any, Verdict]:
    """Aggregate ``records`` and judge them as the run ``egi`` (in folder ``run``) was judged
    (same items collected, same stop, same selection, same shard): its verdict, and its
    release gate not judged when the session's was not (a shard, a flagged verdict)."""
    agg = aggregate_run(records, settings, stopped_early=stored_run_stopped(egi), defer_bootstrap=True)
    verdict = verdict_from_egi(egi, agg.error_rate, settings.max_error_rate)
    origin = Path((egi.get("config") or {}).get("rescored_from") or run)  # the run to resume
    shard = (egi.get("session") or {}).get("shard")
    agg.result.gate = judge_gate(agg.result.gate, verdict, shard=shard, run_dir=origin)
    settle_gate(agg, settings)  # the intervals, and the confident gate on them
    return agg, verdict


def session_lines(session: dict[str, Any]) -> list[str]:
    """The lines the plugin prints after the EGI summary for a session's ``session_info``
    (egi.json ``session``): one per crashed worker, then ``session fails: <reason>``."""
    crashes = list(session.get("crashes") or [])
    lines = [f"egi: {c} (an error record; it counts toward --egi-max-error-rate)" for c in crashes]
    lines += [f"session fails: {r}" for r in session.get("reasons") or [] if r not in crashes]
    return lines


def rescore_reasons(settings: RunSettings, agg: Any, verdict: Verdict) -> list[str]:
    """Why a rescored or merged run fails, by the plugin's rule (``EgiSession._exit_status``):
    a floor breached on a measured bucket when the gate is judged, an error rate above the
    run's max error rate. Empty when it passes. (Whether the session ran every item is a fact
    of the original run: it stays in the headline, and leaves the gate not judged, but does
    not fail a rescore.)"""
    reasons = []
    gate = agg.result.gate
    breached = gate.breached if gate.judged else []
    if breached:
        reasons.append(
            "release floor breached: "
            + ", ".join(f"{b} {agg.result.buckets[b].value:.1f} < {settings.floors[b]:g}" for b in breached)
        )
    undecided = undecided_reason(agg)
    if gate.judged and undecided:
        reasons.append(undecided)
    reasons += [r for f, r in zip(verdict.flags, verdict.reasons, strict=True) if f == "INVALID"]
    return reasons


def _check_routing_against_suites(settings: RunSettings, records: list[dict[str, Any]]) -> None:
    """Refuse a route naming a sub-metric a suite of the run never produces, as pytest does
    (``pytest_egi.scoring.config.check_routes_produced``): it would silently change the score.

    Raises:
        CliError: ``invalid routing file <path>: routes[<i>] (<suite>/<name>): ...``.
    """
    assert settings.routing is not None
    for module in sorted({r["suite_module"] for r in records if r.get("suite_module")}):
        suite = load_suite(module)
        try:
            check_routes_produced(
                settings.routing, settings.routing_path, suite.name, getattr(suite, "sub_metrics", None)
            )
        except pytest.UsageError as exc:
            raise CliError(str(exc)) from None


def rescore_records(
    run: Path,
    records: list[dict[str, Any]],
    suite_options: dict[str, dict[str, str]],
    out_dir: Path | None = None,
) -> list[dict[str, Any]]:
    """Re-run each suite's scorer (deterministic rules) on the stored trajectories.

    Errored and skipped records are kept as they are (they were never scored).

    Raises:
        CliError: a stored trajectory is missing, cut short or unreadable (names the file,
            the trial and the offset: :class:`pytest_egi.trajectories.TrajectoryReader`).
    """
    from pytest_egi.outcomes import FailureKindError, checked_failure_kind
    from pytest_egi.run.recorder import trajectory_fields
    from pytest_egi.trajectories import TrajectoryError, TrajectoryReader

    out = []
    options_cache: dict[str, Any] = {}
    moved: dict[str, str] = {}  # store file -> its path relative to out_dir
    reader = TrajectoryReader(run)
    for rec in records:
        if rec["status"] not in ("passed", "failed"):
            out.append(_raw_relative_to(dict(rec), run, out_dir, moved))
            continue
        try:
            raw = reader.read(rec)
        except TrajectoryError as exc:
            raise CliError(str(exc)) from None
        suite = load_suite(rec["suite_module"])
        if suite.name not in options_cache:
            options_cache[suite.name] = suite.options_model.model_validate(suite_options.get(suite.name, {}))
        task = Task(id=rec["task_id"], category=rec["category"], data=raw["task"])
        score = suite.score(task, raw["trajectory"], options_cache[suite.name], None)
        try:
            failure_kind = checked_failure_kind(suite.name, bool(score.success), score.failure_kind,
                                                raw["trajectory"])
        except FailureKindError as exc:
            raise CliError(f"{reader.path_of(rec)}: {exc}") from None
        new = _raw_relative_to(dict(rec), run, out_dir, moved)
        new.update(
            status="passed" if score.success else "failed",
            success=bool(score.success),
            values=dict(score.values),
            details=score.model_dump(mode="json")["details"],
            judge="egi/rules",
            failure_kind=failure_kind,
            **trajectory_fields(raw["trajectory"]),
        )
        out.append(new)
    reader.close()
    return out


def _raw_relative_to(
    rec: dict[str, Any], run: Path, out_dir: Path | None, seen: dict[str, str] | None = None
) -> dict[str, Any]:
    """``rec`` with its trajectory's place (``raw_at``, or an old run folder's file
    ``raw_path``) relative to ``out_dir`` when the rescored run is written there. ``seen``:
    the store files' relative paths found so far (a run's records share a few store files:
    ``os.path.relpath`` once per file, not once per record, about 8 us each)."""
    if out_dir is None:
        return rec
    seen = {} if seen is None else seen
    if rec.get("raw_at"):  # the store's file moves; the offset and length stay
        file, _, place = rec["raw_at"].partition("#")
        moved = seen.get(file)
        if moved is None:
            moved = seen[file] = os.path.relpath(run / file, out_dir)
        rec["raw_at"] = f"{moved}#{place}"
    elif rec.get("raw_path"):
        rec["raw_path"] = os.path.relpath(run / rec["raw_path"], out_dir)
    return rec


def _cmd_report(args: argparse.Namespace) -> int:
    if args.merge:
        if args.run or args.rescore:
            raise CliError("--merge takes the shards' folders itself; drop the RUN argument and --rescore")
        if args.routing:  # never ignore an option silently
            raise CliError("--routing applies with --rescore; a merge judges with the shards' routing")
        return _cmd_merge(args)
    if not args.rescore:
        options = (("--egi-weights", args.egi_weights), ("--egi-floor", args.egi_floor),
                   ("--routing", args.routing), ("--egi-gate", args.egi_gate),
                   ("--egi-gate-level", args.egi_gate_level),
                   ("--egi-gate-undecided", args.egi_gate_undecided))
        given = [flag for flag, value in options if value]
        if given:  # a plain report shows the run as it was judged: never ignore an option silently
            where = "--rescore" if given[0] == "--routing" else "--rescore or --merge"
            raise CliError(f"{given[0]} applies with {where}; egi-bench report RUN shows the run as it "
                           f"was judged (add --rescore to judge it with {given[0]})")
    run = Path(args.run) if args.run else _latest_run(Path(args.reports))
    if getattr(args, "show", None):
        return _show_file(run, args)
    egi = _load_egi(run)
    settings = _settings_from_egi(run, egi)
    try:  # every record is checked against the schema; a bad line is named with its fix
        records = load_records(run)
    except (OSError, ValueError) as exc:
        raise CliError(str(exc)) from None
    _importable_suites(egi, records)
    if not args.rescore:
        shard = (egi.get("session") or {}).get("shard")
        if shard:  # a shard's folder (reports/ID/shard-K-of-N): its session's run is ID
            settings = replace(settings, run_id=egi.get("run_id") or run.parent.name,
                               report_dir=run.parent.parent, shard=(int(shard[0]), int(shard[1])))
        agg, verdict = _judge(settings, records, egi, run)
        for line in summary_lines(settings, agg, records, verdict) + session_lines(egi.get("session") or {}):
            print(line)
        print(f"egi report: {run}")
        return 0
    if args.routing:
        try:
            routing, digest = load_routing(Path(args.routing))
        except pytest.UsageError as exc:
            raise CliError(str(exc)) from None
        settings = replace(settings, routing=routing, routing_path=Path(args.routing), routing_hash=digest)
    assert settings.routing is not None
    _check_routing_against_suites(settings, records)
    given_weights, given_floors = _bucket_options(args)
    try:
        weights = apply_weights(settings.routing, given_weights)
        floors = apply_floors(settings.routing, given_floors)
    except pytest.UsageError as exc:
        raise CliError(str(exc)) from None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    settings = replace(
        settings,
        weights=weights,
        weights_given=given_weights,
        floors=floors,
        report_dir=run,
        run_id=f"rescore-{stamp}-{secrets.token_hex(2)}",
        judge_model=None,
        rootdir=Path(egi["config"].get("rootdir") or os.getcwd()),
        selection=egi["config"].get("selection") or {},
        rescored_from=str(run.resolve()),
    )
    settings = _gate_overrides(settings, args)
    rescored = rescore_records(run, records, settings.suite_options, settings.run_dir)
    agg, verdict = _judge(settings, rescored, egi, run)
    reasons = rescore_reasons(settings, agg, verdict)
    status = 1 if reasons else 0
    original = egi.get("session") or {}
    session = {**original, "exit_status": status,
               "reasons": reasons + list(original.get("crashes") or [])}
    # written before anything is printed: a closed pipe (``| head``) must not lose the run
    written = write_run(settings, rescored, agg, session_info=session, verdict=verdict)
    for line in summary_lines(settings, agg, rescored, verdict) + session_lines(session):
        print(line)
    print(f"egi report: {written['run_dir']} (rescored from {run}, no model called)")
    return status


def _show_file(run: Path, args: argparse.Namespace) -> int:
    """``egi-bench report RUN --show FILE``: print FILE of the run folder as it is.

    Raises:
        CliError: with --rescore or --merge, a path leaving the run folder, or no such file
            (names the suite files the run holds).
    """
    if args.rescore or args.routing or args.egi_weights or args.egi_floor:
        raise CliError("--show prints a file of a stored run; drop --rescore, --routing, --egi-weights "
                       "and --egi-floor")  # fmt: skip
    target = (run / args.show).resolve()
    if not target.is_relative_to(run.resolve()):
        raise CliError(f"--show {args.show}: the path leaves the run folder {run}")
    if not target.is_file():
        found = sorted(str(p.relative_to(run)) for p in run.glob("*/*") if p.is_file()
                       and p.parent.name not in ("raw",))  # fmt: skip
        raise CliError(f"--show {args.show}: no such file in {run}"
                       + (f"; its suite files: {', '.join(found)}" if found else ""))  # fmt: skip
    sys.stdout.flush()
    sys.stdout.buffer.write(target.read_bytes())  # byte for byte (a CSV's \r\n line ends kept)
    return 0


def _bucket_options(args: argparse.Namespace) -> tuple[dict[str, float], dict[str, float]]:
    """(``--egi-weights``, ``--egi-floor``) of a rescore or a merge, parsed: bucket -> value,
    empty when not given.

    Raises:
        CliError: a malformed entry, an unknown bucket, a value out of range.
    """
    try:
        weights = (parse_bucket_values("--egi-weights", args.egi_weights, lo=0, hi=1)
                   if args.egi_weights else {})
        floors = parse_bucket_values("--egi-floor", args.egi_floor, lo=0, hi=100) if args.egi_floor else {}
    except pytest.UsageError as exc:
        raise CliError(str(exc)) from None
    return weights, floors


def _merge_judgement(
    settings: RunSettings, shard_dirs: list[Path], egis: list[dict[str, Any]], args: argparse.Namespace
) -> RunSettings:
    """The floors and weights a merged run is judged with.

    The shards of one run must agree on them (the same records would otherwise read READY or
    NOT READY depending on which shard carried a flag): a bucket on which they differ is
    refused, naming the shards and the values, unless the merge names its own value for it.
    The merge's own ``--egi-floor`` / ``--egi-weights`` then apply over the shards' common
    values, as ``--rescore``'s do over the routing file's (a partial ``--egi-weights`` scales
    the other buckets from the shards' weights).

    Raises:
        CliError: the shards differ on a bucket the merge does not set; a bad option.
    """
    assert settings.routing is not None
    given_weights, given_floors = _bucket_options(args)
    first = shard_dirs[0].name
    options = (("floors", "--egi-floor", given_floors), ("weights", "--egi-weights", given_weights))
    for key, flag, given in options:
        base = egis[0]["routing"].get(key) or {}
        for d, e in zip(shard_dirs[1:], egis[1:], strict=True):
            other = e["routing"].get(key) or {}
            differ = [b for b in sorted(set(base) | set(other))
                      if base.get(b) != other.get(b) and b not in given]
            if differ:
                shown = "; ".join(f"{b} {_show_value(base.get(b))} in {first}, {_show_value(other.get(b))} "
                                  f"in {d.name}" for b in differ)
                example = ",".join(f"{b}={_show_value(base.get(b) or 0)}" for b in differ)
                raise CliError(
                    f"--merge: the shards were judged with different {key}: {shown}; the shards of "
                    f"one run must agree: give the merge the {key} to judge with ({flag} {example}), "
                    "or rerun the odd shard with the others' options"
                )
    base_weights = dict(egis[0]["routing"]["weights"])
    base_floors = dict(egis[0]["routing"]["floors"])
    try:
        weights = apply_weights(settings.routing, given_weights, base=base_weights) if given_weights \
            else base_weights
    except pytest.UsageError as exc:
        raise CliError(str(exc)) from None
    floors = dict(sorted({**base_floors, **given_floors}.items()))
    weights_given = given_weights or dict(egis[0]["routing"].get("weights_given") or {})
    return replace(settings, weights=weights, floors=floors, weights_given=weights_given)


def _show_value(value: Any) -> str:
    """A floor or weight for a message: ``70``, ``0.22``, ``none``."""
    return "none" if value is None else f"{value:g}"


def _shard_dirs(paths: list[Path]) -> list[Path]:
    """The shard folders named on the command line: shard folders themselves, or folders
    holding ``shard-K-of-N`` folders.

    Raises:
        CliError: a path is neither (names it and says what to pass).
    """
    from pytest_egi.run.runlog import MANIFEST_FILE

    found: list[Path] = []
    for path in paths:
        inside = sorted(p for p in path.glob("shard-*-of-*") if (p / MANIFEST_FILE).is_file())
        if not inside and (path / MANIFEST_FILE).is_file():  # a shard's own folder
            found.append(path)
            continue
        if not inside:
            raise CliError(f"--merge {path}: neither a shard's folder (no {MANIFEST_FILE}) nor a "
                           "folder holding shard-K-of-N folders; pass reports/<run_id> or its shards")
        found.extend(inside)
    return found


def merge_shards(
    paths: list[Path], out: Path | None = None
) -> tuple[Path, list[tuple[Path, dict[str, Any]]], list[Path], list[dict[str, Any]]]:
    """Check that shard runs are the complete, like-for-like parts of one run, and gather them.

    Args:
        paths: shard folders (``reports/<ID>/shard-K-of-N``) or folders holding them.
        out: the merged run's folder; default: the shards' common parent folder.

    Returns:
        (the merged run's folder; every shard's records sorted by (suite, task, trial), each
        with the shard folder it came from; the shard folders and their egi.json, in shard
        order).

    Raises:
        CliError: a shard is missing (every missing one is named), did not finish, lacks a
            record for an item of its plan, shares an item with another, or differs from the
            others in model, mode, seed, trials, routing, judge, simulator, suite options,
            selection or suite version (every message names the shard and the fix). A shard
            dealt no item is complete with an empty plan and no record.
    """
    from pytest_egi.run.runlog import (
        RunLogError,
        manifest_differences,
        read_manifest,
        run_in_use,
        run_records,
        shard_dir_name,
    )

    dirs = _shard_dirs(paths)
    shards: dict[int, tuple[Path, dict[str, Any]]] = {}
    first: tuple[Path, dict[str, Any]] | None = None
    for d in dirs:
        try:
            m = read_manifest(d, "--merge")
        except RunLogError as exc:
            raise CliError(str(exc)) from None
        if not m.get("shard"):
            raise CliError(f"--merge {d}: not a shard (run without --egi-shard); nothing to merge")
        k, n = m["shard"]
        if first is None:
            first = (d, m)
        f_dir, f_m = first
        if n != f_m["shard"][1] or m.get("run_id") != f_m.get("run_id"):
            raise CliError(f"--merge: {d} is shard {k}/{n} of run {m.get('run_id')}, but {f_dir} is "
                           f"shard {f_m['shard'][0]}/{f_m['shard'][1]} of run {f_m.get('run_id')}; "
                           "merge the shards of one run")
        diff = manifest_differences(f_m, m)
        if diff:
            named = (x.replace("in the run", f"in {f_dir.name}").replace("here", f"in {d.name}")
                     for x in diff)
            raise CliError(f"--merge: {d} and {f_dir} were not run alike: " + "; ".join(named)
                           + "; rerun the odd shard with the others' options")
        if k in shards:
            raise CliError(f"--merge: shard {k}/{n} given twice ({shards[k][0]} and {d})")
        shards[k] = (d, m)
    assert first is not None
    n = first[1]["shard"][1]
    run_id = first[1].get("run_id")
    missing = [k for k in range(1, n + 1) if k not in shards]
    if len(missing) == 1:
        raise CliError(f"--merge: shard {missing[0]}/{n} of run {run_id} missing (expected folder "
                       f"{shard_dir_name(missing[0], n)}); run it with --egi-run-id {run_id} "
                       f"--egi-shard {missing[0]}/{n}, or pass its folder")
    if missing:
        raise CliError("--merge: " + ", ".join(f"shard {k}/{n}" for k in missing) + f" of run {run_id} "
                       "missing (expected folders " + ", ".join(shard_dir_name(k, n) for k in missing)
                       + f"); run each with --egi-run-id {run_id} and "
                       + ", ".join(f"--egi-shard {k}/{n}" for k in missing) + ", or pass their folders")
    records: dict[tuple[str, str, int], dict[str, Any]] = {}
    owner: dict[tuple[str, str, int], int] = {}
    versions: dict[str, tuple[Any, int]] = {}
    egis: list[dict[str, Any]] = []
    folders: list[Path] = []
    for k in range(1, n + 1):
        d, m = shards[k]
        if m.get("status") != "complete":
            holder = run_in_use(d)
            if holder is not None:
                raise CliError(f"--merge: shard {k}/{n} ({d}) is still running ({holder}); merge "
                               "once it has ended")
            raise CliError(f"--merge: shard {k}/{n} ({d}) did not finish (status {m.get('status')}); "
                           f"continue it with pytest ... --egi-resume {d}")
        try:
            recs = run_records(d)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        ran = {r["nodeid"] for r in recs}
        lacking = [node for node in m.get("plan") or [] if node not in ran]
        if lacking:
            raise CliError(f"--merge: shard {k}/{n} ({d}) has no record for {len(lacking)} item(s) of its "
                           f"plan, e.g. {lacking[0]}; continue it with pytest ... --egi-resume {d}")
        for r in recs:
            key = (r["suite"], r["task_id"], int(r["trial"]))
            if key in owner:
                raise CliError(f"--merge: {r['nodeid']} is in shard {owner[key]}/{n} and in shard {k}/{n}; "
                               "shards of one run never share an item: were they run with the same "
                               "selection?")
            seen = versions.setdefault(r["suite"], (r.get("suite_version"), k))
            if seen[0] != r.get("suite_version"):
                raise CliError(f"--merge: suite {r['suite']} is version {seen[0]} in shard {seen[1]}/{n} and "
                               f"{r.get('suite_version')} in shard {k}/{n}; run every shard with the "
                               "same code")
            owner[key] = k
            records[key] = r
        egis.append(_load_egi(d))
        folders.append(d)
    if out is None:
        parents = {d.resolve().parent for d, _ in shards.values()}
        if len(parents) != 1:
            raise CliError("--merge: the shards are in different folders; say where the merged run "
                           "goes with --out DIR")
        out = parents.pop()
    return out, [(shards[owner[k]][0], records[k]) for k in sorted(records)], folders, egis


def _link_or_copy(src: Path, dst: Path) -> None:
    """Hard-link ``src`` to ``dst`` (same file system), else copy it; replaces ``dst``."""
    import shutil

    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.unlink(missing_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _gather_trajectories(sourced: list[tuple[Path, dict[str, Any]]], out: Path) -> None:
    """Link (or copy) every shard's trajectories into the merged run folder ``out``: each
    trajectory store a record names (``raw_at``) as ``raw/<its name>``, renamed
    ``raw/<name>-<k>.jsonl`` when two shards' stores share a name (two machines, one process
    id), the records' ``raw_at`` following (the offsets stay); an old shard's file per item
    (``raw_path``) at the same relative path."""
    placed: dict[str, Path] = {}  # the merged folder's store name -> the shard's file
    for folder, rec in sourced:
        pointer = rec.get("raw_at")
        if not pointer:
            raw = rec.get("raw_path")
            if raw and (folder / raw).is_file():
                _link_or_copy(folder / raw, out / raw)
            continue
        file, _, place = pointer.partition("#")
        src = (folder / file).resolve()
        base = Path(file).name
        name, k = f"raw/{base}", 1
        while name in placed and placed[name] != src:
            name, k = f"raw/{Path(base).stem}-{k}{Path(base).suffix}", k + 1
        if name not in placed:
            placed[name] = src
            if src.is_file() and src != (out / name).resolve():
                _link_or_copy(src, out / name)
        rec["raw_at"] = f"{name}#{place}"


def _cmd_merge(args: argparse.Namespace) -> int:
    from pytest_egi.collect.checks import merge_data_warnings
    from pytest_egi.run.runlog import now_text, read_manifest, write_manifest

    out, sourced, shard_dirs, egis = merge_shards(
        [Path(p) for p in args.merge], Path(args.out) if args.out else None
    )
    records = [rec for _, rec in sourced]
    egi = egis[0]
    # judged with the shards' common floors and weights, or the merge's own (refused before
    # anything is written when the shards differ)
    settings = _gate_overrides(_merge_judgement(_settings_from_egi(out, egi), shard_dirs, egis, args), args)
    _gather_trajectories(sourced, out)
    warnings: list[dict[str, str]] = []
    for e in egis:
        merge_data_warnings(warnings, list(e.get("data_warnings") or []))
    sessions = [e.get("session") or {} for e in egis]
    collected = [s_.get("items_collected") for s_ in sessions]
    settings = replace(settings, report_dir=out.parent, run_id=out.name, data_warnings=warnings,
                       rootdir=Path(egi["config"].get("rootdir") or os.getcwd()))
    _importable_suites(egi, records)
    agg = aggregate_run(records, settings, defer_bootstrap=True)
    from pytest_egi.scoring.verdict import judge_run

    verdict = judge_run(
        error_rate=agg.error_rate, max_error_rate=settings.max_error_rate, items_ran=len(records),
        items_collected=sum(collected) if None not in collected else None, stop_reason=None,
        selection=settings.selection, deselected=sessions[0].get("items_deselected"),
    )
    # every shard complete, so the merged run is judged unless its verdict is flagged
    agg.result.gate = judge_gate(agg.result.gate, verdict, shard=None, run_dir=out)
    settle_gate(agg, settings)  # the intervals, and the confident gate on them
    reasons = rescore_reasons(settings, agg, verdict)
    session = {"exit_status": 1 if reasons else 0, "reasons": reasons,
               "crashes": [c for s_ in sessions for c in s_.get("crashes") or []],
               "items_collected": verdict.items_collected, "items_ran": verdict.items_ran,
               "items_deselected": sessions[0].get("items_deselected"), "stop_reason": None,
               "interrupted": False, "resumed_from": None, "resumed_items": 0, "shard": None,
               "merged_from": [str(d) for d in shard_dirs]}
    written = write_run(settings, records, agg, session_info=session, verdict=verdict)
    manifest = {k: v for k, v in read_manifest(shard_dirs[0], "--merge").items() if k != "schema"}
    manifest.update(run_id=out.name, shard=None, status="complete", updated=now_text(),
                    plan=sorted(r["nodeid"] for r in records), merged_from=[str(d) for d in shard_dirs])
    write_manifest(out, manifest)
    for line in summary_lines(settings, agg, records, verdict) + session_lines(session):
        print(line)
    print(f"egi report: {written['run_dir']} (merged from {len(shard_dirs)} shards, no model called)")
    return int(session["exit_status"])


def _comparability_notes(
    a: dict[str, Any], b: dict[str, Any], names: tuple[str, str] = ("A", "B")
) -> list[str]:
    """Reasons the two runs' numbers may not be like for like (``names``: how the lines call
    the two runs)."""
    na, nb = names
    notes = []
    if a["routing"]["sha256"] != b["routing"]["sha256"]:
        notes.append("different routing files: rescore one run with the other's routing")
    covered_a = [k for k, v in a["buckets"].items() if v["value"] is not None]
    covered_b = [k for k, v in b["buckets"].items() if v["value"] is not None]
    if covered_a != covered_b:
        notes.append(
            f"different coverage: {na} measured {' '.join(covered_a) or 'no bucket'}, {nb} "
            f"{' '.join(covered_b) or 'no bucket'}; the EGI values are not comparable"
        )
    weights_a, weights_b = a["routing"]["weights"], b["routing"]["weights"]
    if weights_a != weights_b:
        changed = ", ".join(
            f"{k} {weights_a.get(k)}->{weights_b.get(k)}"
            for k in weights_a
            if weights_a.get(k) != weights_b.get(k)
        )
        notes.append(f"different bucket weights ({changed}): the EGI differs by weighting alone")
    if a["routing"]["floors"] != b["routing"]["floors"]:
        notes.append(f"different floors: {na} {a['routing']['floors']}, {nb} {b['routing']['floors']}")
    if sorted(a["suites"]) != sorted(b["suites"]):
        notes.append(f"different suites: {na} ran {sorted(a['suites'])}, {nb} ran {sorted(b['suites'])}")
    for key, label in (("mode", "mode"),):
        if a.get(key) != b.get(key):
            notes.append(f"different {label}: {na} {a.get(key)}, {nb} {b.get(key)}")
    for key in ("seed", "trials", "suite_options", "selection"):
        if a["config"].get(key) != b["config"].get(key):
            notes.append(f"different {key}: {na} {a['config'].get(key)!r}, {nb} {b['config'].get(key)!r}")
    for suite in sorted(set(a["suites"]) & set(b["suites"])):
        ca, cb = a["suites"][suite]["counts"], b["suites"][suite]["counts"]
        if sum(ca.values()) != sum(cb.values()):
            notes.append(f"{suite}: {na} has {sum(ca.values())} items, {nb} {sum(cb.values())}")
    return notes


def _run_flags(egi: dict[str, Any]) -> tuple[list[str], list[str], str | None]:
    """(verdict flags, subset descriptions, headline) of a stored run; an egi.json from before
    these fields existed is a subset when its selection says so."""
    e = egi["egi"]
    subset = e.get("subset")
    if subset is None:
        subset = list(describe_selection((egi.get("config") or {}).get("selection") or {}))
    return list(e.get("flags") or []), list(subset), e.get("headline")


def _egi_figure(egi: dict[str, Any]) -> tuple[float | None, bool, list[float] | None]:
    """(figure, partial, its interval) of a stored run: the full EGI (``egi.value``), or the
    partial value when a bucket was empty (``egi.partial_value``, ``egi.partial_ci95``). An
    egi.json written before ``partial_value`` existed kept the partial figure in ``value``."""
    e = egi["egi"]
    if not e.get("partial"):
        return e.get("value"), False, e.get("ci95")
    if "partial_value" not in e:  # an older egi.json: its value was the partial figure
        return e.get("value"), True, e.get("ci95")
    return e.get("partial_value"), True, e.get("partial_ci95")


def _paired_lines(
    run_a: Path, run_b: Path, a: dict[str, Any], b: dict[str, Any], resamples: int,
    info: dict[str, Any] | None = None,
) -> list[str]:
    """``egi-bench compare``'s paired section: per bucket and for the EGI figure, B - A with
    the paired bootstrap interval over the tasks scored in both runs
    (:func:`pytest_egi.scoring.gate.paired_intervals`), and whether the difference is beyond it (the
    interval excludes 0). One line saying why when it cannot be drawn.

    ``info``, when given, is filled with what the page needs: ``intervals`` (``{"EGI"|bucket:
    (lo, hi) or None}``, 0-100 points), ``sub_metrics`` (``{(suite, sub-metric): (lo, hi) or
    None}``, the sub-metric's scale), ``matched`` (tasks) and ``same_tasks``; empty when the
    intervals were not drawn."""
    from pytest_egi.scoring.gate import paired_intervals

    if resamples <= 0:
        return ["paired: not drawn (--resamples 0)"]
    try:
        records = [load_records(run_a), load_records(run_b)]
    except (OSError, ValueError) as exc:
        return [f"paired: not drawn ({exc})"]
    settings = _settings_from_egi(run_a, a)
    _importable_suites(a, records[0] + records[1])
    seed = settings.run_seed
    subs: dict[tuple[str, str], tuple[float, float] | None] = {}
    intervals, matched = paired_intervals(records[0], records[1], settings.routing, weights=settings.weights,
                                          resamples=resamples, seed=seed, sub_metrics_out=subs)
    if not matched:
        return ["paired: no task scored in both runs (matched by suite and task id)"]
    def scored_tasks(recs: list[dict[str, Any]]) -> int:
        return len({(r["suite"], r["task_id"]) for r in recs if r.get("status") in ("passed", "failed")})

    same_tasks = scored_tasks(records[0]) == scored_tasks(records[1]) == matched
    lines = [f"paired B-A over {matched} tasks scored in both runs (95% bootstrap interval, "
             f"{resamples} resamples, seed {seed}):"]
    if info is not None:
        info.update(intervals=intervals, sub_metrics=subs, matched=matched, same_tasks=same_tasks,
                    header=lines[0])
    if not same_tasks:  # the whole runs' differences (above) are over other task sets
        lines.append("  (the runs scored different tasks: each interval is of the difference over the "
                     "matched tasks only, so no point difference is shown beside it)")
    values: dict[str, tuple[float | None, float | None]] = {}
    (fig_a, part_a, _), (fig_b, part_b, _) = _egi_figure(a), _egi_figure(b)
    cover_a, cover_b = a["egi"].get("covered_buckets"), b["egi"].get("covered_buckets")
    if part_a != part_b or cover_a != cover_b:
        lines.append(f"  EGI      not paired: A's figure covers {', '.join(cover_a or []) or '?'}, B's "
                     f"{', '.join(cover_b or []) or '?'} (different figures)")
        if info is not None:
            info["intervals"] = {k: v for k, v in intervals.items() if k != "EGI"}
    else:
        values["EGI"] = (fig_a, fig_b)
    for k in a["buckets"]:
        values[k] = (a["buckets"][k]["value"], (b["buckets"].get(k) or {}).get("value"))
    for key, (x, y) in values.items():
        interval = intervals.get(key)
        if x is None or y is None or interval is None:
            continue
        lo, hi = interval
        beyond = ("beyond the noise (the interval excludes 0)" if lo > 0 or hi < 0
                  else "within the noise (the interval holds 0)")
        point = f"{y - x:+.1f}  " if same_tasks else ""
        lines.append(f"  {key:8} {point}[{lo:+.1f}, {hi:+.1f}]  {beyond}")
    return lines


def _compare_pair(
    run_a: Path, run_b: Path, a: dict[str, Any], b: dict[str, Any], resamples: int,
    info: dict[str, Any] | None = None,
) -> None:
    """Print the two-run comparison of ``egi-bench compare`` (B against A); ``info`` as
    :func:`_paired_lines`'s."""

    def fmt(x: float | None, digits: int = 1) -> str:
        return "—" if x is None else f"{x:.{digits}f}"

    def delta(x: float | None, y: float | None, digits: int = 1) -> str:
        return "" if x is None or y is None else f"{y - x:+.{digits}f}"

    def ci(x: list[float] | None) -> str:
        return "" if not x else f"[{x[0]:.1f}, {x[1]:.1f}]"

    print(f"A = {a['model']} ({a['run_id']})\nB = {b['model']} ({b['run_id']})")
    labels = {}
    for name, run in (("A", a), ("B", b)):
        flags, subset, headline = _run_flags(run)
        if flags:
            print(f"warning: {name}'s EGI is not a score: {headline}")
            labels[name] = flags[0]
        elif subset:
            print(f"warning: {name} is a subset of its profile ({', '.join(subset)}); its EGI covers "
                  "the selected items only")
            labels[name] = "subset"
    for note in _comparability_notes(a, b):
        print(f"warning: {note}")
    covered_a = [k for k, v in a["buckets"].items() if v["value"] is not None]
    covered_b = [k for k, v in b["buckets"].items() if v["value"] is not None]

    figures = {"A": _egi_figure(a), "B": _egi_figure(b)}

    def egi_cell(name: str) -> str:
        x, partial, _ = figures[name]
        label = labels.get(name)
        if label is not None and label != "subset":
            return label
        tags = [t for t, on in (("partial", partial), ("subset", label == "subset")) if on]
        return fmt(x) + (f" ({', '.join(tags)})" if tags else "")

    def ci_cell(name: str) -> str:
        _, partial, interval = figures[name]
        return ("partial " if partial and interval else "") + ci(interval)

    width = max(8, *(len(egi_cell(n)) for n in ("A", "B")))
    ci_width = max(14, *(len(ci_cell(n)) for n in ("A", "B")))
    print(f"{'':10} {'A':>{width}} {'B':>{width}} {'B-A':>7}   "
          f"{'A 95% CI':>{ci_width}} {'B 95% CI':>{ci_width}}")
    # a difference only between figures of one kind: two full EGIs, or two partial figures
    # over the same buckets (a partial figure is never set against a full EGI)
    alike = figures["A"][1] == figures["B"][1] and (not figures["A"][1] or covered_a == covered_b)
    ok = alike and not any(label != "subset" for label in labels.values())
    xa, xb = figures["A"][0], figures["B"][0]
    print(f"{'EGI':10} {egi_cell('A'):>{width}} {egi_cell('B'):>{width}} "
          f"{delta(xa, xb) if ok else '':>7}   {ci_cell('A'):>{ci_width}} {ci_cell('B'):>{ci_width}}")
    if info is not None:
        info["egi_comparable"] = ok
    rows = [
        (k, a["buckets"][k]["value"], b["buckets"][k]["value"], a["buckets"][k]["ci95"],
         b["buckets"][k]["ci95"])
        for k in a["buckets"]
    ]
    for label, x, y, cx, cy in rows:
        print(f"{label:10} {fmt(x):>{width}} {fmt(y):>{width}} {delta(x, y):>7}   "
              f"{ci(cx):>{ci_width}} {ci(cy):>{ci_width}}")
    for line in _paired_lines(run_a, run_b, a, b, resamples, info):
        print(line)
    for suite in sorted(set(a["suites"]) | set(b["suites"])):
        sa = (a["suites"].get(suite) or {}).get("sub_metrics") or {}
        sb = (b["suites"].get(suite) or {}).get("sub_metrics") or {}
        for m in sorted(set(sa) | set(sb)):
            x, y = sa.get(m), sb.get(m)
            print(f"  {suite}/{m}: {fmt(x, 3)} -> {fmt(y, 3)} {delta(x, y, 3)}")


def _run_cost(egi: dict[str, Any]) -> float | None:
    """The run's cost in USD: every role's ``usage.<role>.cost_usd`` summed (model under test,
    judge, user simulator); None when a role that made calls has an unknown cost."""
    total = 0.0
    for t in (egi.get("usage") or {}).values():
        if not isinstance(t, dict) or not t.get("calls"):
            continue
        if t.get("cost_usd") is None:
            return None
        total += float(t["cost_usd"])
    return total


def _bucket_change(
    a: dict[str, Any], b: dict[str, Any], key: str, paired: dict[str, Any]
) -> tuple[float | None, float | None, list[float] | None, str | None]:
    """(A's value, B's, the interval the judgement used, ``"worse"``/``"better"``/None) of one
    bucket or of ``"EGI"``: beyond its interval when the paired interval of B - A excludes 0;
    without a paired interval, when the two runs' own 95% intervals do not overlap."""
    if key == "EGI":
        x, y = _egi_figure(a)[0], _egi_figure(b)[0]
        cx, cy = _egi_figure(a)[2], _egi_figure(b)[2]
    else:
        ba, bb = a["buckets"].get(key) or {}, b["buckets"].get(key) or {}
        x, y, cx, cy = ba.get("value"), bb.get("value"), ba.get("ci95"), bb.get("ci95")
    if x is None or y is None:
        return x, y, None, None
    intervals = paired.get("intervals")
    if intervals is not None:
        iv = intervals.get(key)
        if iv is None:
            return x, y, None, None
        return x, y, list(iv), "worse" if iv[1] < 0 else "better" if iv[0] > 0 else None
    if cx and cy:
        if cy[1] < cx[0]:
            return x, y, None, "worse"
        if cy[0] > cx[1]:
            return x, y, None, "better"
    return x, y, None, None


def _page_run(label: str, path: Path, egi: dict[str, Any]) -> dict[str, Any]:
    """One run's entry of the compare page (:func:`render_compare_html`'s ``runs``)."""
    from pytest_egi.report.compare_html import gate_verdict

    flags, subset, _ = _run_flags(egi)
    value, partial, interval = _egi_figure(egi)
    not_a_score = bool(flags)
    text = flags[0] if flags else ("—" if value is None else f"{value:.1f}")
    tags = [t for t, on in (("partial", partial and not flags), ("subset", bool(subset))) if on]
    if tags:
        text += f" ({', '.join(tags)})"
    notes = []
    if flags:
        notes.append(f"its EGI is not a score: {egi['egi'].get('headline')}")
    if subset:
        notes.append(f"a subset of its profile ({', '.join(subset)})")
    gate = egi.get("gate") or {}
    reason = gate.get("reason") or gate.get("not_judged_reason") or ""
    return {
        "label": label, "model": egi.get("model"), "run_id": egi.get("run_id"), "path": path.name,
        "egi": value, "egi_text": text, "ci": interval, "partial": partial, "not_a_score": not_a_score,
        "buckets": {k: {"value": v.get("value"), "ci95": v.get("ci95"), "floor": v.get("floor"),
                        "ceiling": v.get("ceiling")} for k, v in egi["buckets"].items()},
        "gate": gate_verdict(egi), "gate_reason": reason, "cost_usd": _run_cost(egi), "notes": notes,
    }


def _page_pair(
    labels: tuple[str, str], paths: tuple[Path, Path], a: dict[str, Any], b: dict[str, Any],
    info: dict[str, Any],
) -> dict[str, Any]:
    """One later run against the baseline, for the compare page and --fail-on-regression."""
    from pytest_egi.report.compare_html import flipped_tasks, gate_verdict, gate_worse

    la, lb = labels
    paired: dict[str, Any] = {}
    regressions = []
    for key in ("EGI", *a["buckets"]):
        if key == "EGI" and not info.get("egi_comparable", False):
            continue
        x, y, iv, beyond = _bucket_change(a, b, key, info)
        paired[key] = {"a": x, "b": y, "delta": None if x is None or y is None else y - x,
                       "interval": iv, "beyond": beyond}
        if beyond == "worse" and key != "EGI":
            how = (f"paired interval [{iv[0]:+.1f}, {iv[1]:+.1f}]" if iv else
                   "its 95% interval below the baseline's")
            regressions.append(f"{key} {x:.1f} -> {y:.1f} ({how})")
    if gate_worse(a, b):
        regressions.append(f"release gate {gate_verdict(a)} -> {gate_verdict(b)}")
    subs_iv = info.get("sub_metrics") or {}
    sub_rows = []
    for suite in sorted(set(a["suites"]) | set(b["suites"])):
        sa = (a["suites"].get(suite) or {}).get("sub_metrics") or {}
        sb = (b["suites"].get(suite) or {}).get("sub_metrics") or {}
        for m in sorted(set(sa) | set(sb)):
            x, y = sa.get(m), sb.get(m)
            iv = subs_iv.get((suite, m))
            beyond = None if iv is None else ("down" if iv[1] < 0 else "up" if iv[0] > 0 else None)
            sub_rows.append({"suite": suite, "metric": m, "a": x, "b": y,
                             "delta": None if x is None or y is None else y - x,
                             "interval": None if iv is None else list(iv), "beyond": beyond})
    try:
        flips = flipped_tasks(load_records(paths[0]), load_records(paths[1]))
    except (OSError, ValueError):
        flips = []
    if info.get("intervals") is not None:
        note = (f"paired {lb} − {la} over the {info['matched']} tasks scored in both runs: "
                f"{info['header'].split('(', 1)[1].rstrip('):')}")
    else:
        note = ("paired intervals not drawn: a bucket counts as beyond its interval when the two runs' "
                "own 95% intervals do not overlap")
    return {"a": la, "b": lb, "paired": paired, "matched": info.get("matched"), "sub_metrics": sub_rows,
            "flips": flips, "regressions": regressions, "notes": _comparability_notes(a, b, (la, lb)),
            "paired_note": note}


def _cmd_compare(args: argparse.Namespace) -> int:
    from pytest_egi.report.compare_html import render_compare_html

    paths = [Path(p) for p in args.runs]
    if len(paths) < 2:
        raise CliError("compare: give two or more run folders (the first is the baseline)")
    egis = [_load_egi(p) for p in paths]
    letters = [chr(ord("A") + i) if i < 26 else f"R{i + 1}" for i in range(len(paths))]
    pairs = []
    for k in range(1, len(paths)):
        if len(paths) > 2:
            print(f"== {letters[k]} against {letters[0]} (the baseline); below, A = {letters[0]} and "
                  f"B = {letters[k]}")
        info: dict[str, Any] = {}
        _compare_pair(paths[0], paths[k], egis[0], egis[k], args.resamples, info)
        pairs.append(_page_pair((letters[0], letters[k]), (paths[0], paths[k]), egis[0], egis[k], info))
    runs = [_page_run(letters[i], paths[i], egis[i]) for i in range(len(paths))]
    out = Path(args.html) if args.html else paths[0] / "compare.html"
    try:
        out.write_text(render_compare_html(runs, pairs), encoding="utf-8")
    except OSError as exc:
        raise CliError(f"--html {out}: cannot write the compare page ({exc.strerror or exc}); "
                       "give a writable path with --html") from None
    regressed = [(p["b"], g) for p in pairs for g in p["regressions"]]
    for label, what in regressed:
        print(f"regression: {label} against {letters[0]}: {what}")
    print(f"egi compare page: {out}")
    return 1 if args.fail_on_regression and regressed else 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    try:
        from pytest_egi.doctor import run_doctor
    except ImportError as exc:  # pragma: no cover - shipped with the package
        raise CliError(f"doctor is unavailable: {exc}") from None
    from pytest_egi.models.params import parse_params

    try:
        params = parse_params("--egi-model-params", args.egi_model_params or "")
    except ValueError as exc:
        raise CliError(str(exc)) from None
    suites, routing = _doctor_paths(args.suites)
    return run_doctor(
        args.egi_api_base, suites, model=args.egi_model, routing=routing,
        cache_dir=Path(".egi_cache/responses"), model_params=params,
    )


def _doctor_paths(given: str | None) -> tuple[Path, Path | None]:
    """The suites folder and routing file ``egi-bench doctor`` checks: ``--suites DIR`` (its
    parent's ``routing.yaml``), else ``./suites`` in a checkout, else the installed suites with
    ``./routing.yaml`` or the installed default, as ``egi-bench run`` would use them."""
    from pytest_egi.run.settings import packaged_routing

    if given is not None or Path("suites").is_dir():
        return Path(given or "suites"), None
    try:
        suites = installed_suites()
    except CliError:
        return Path("suites"), None  # the doctor names it missing
    local = Path("routing.yaml")
    return suites, local if local.is_file() else packaged_routing()


def installed_suites() -> Path:
    """The folder of the importable ``suites`` package (site-packages' copy for an installed
    wheel, the checkout's own in a checkout), found without importing it.

    Raises:
        CliError: no ``suites`` package is importable (names the fix).
    """
    import importlib.util

    from pytest_egi.run.settings import SUITES_PACKAGE

    try:
        spec = importlib.util.find_spec(SUITES_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise CliError(f"no {SUITES_PACKAGE!r} package is importable here: install the wheel "
                       "(pip install pytest-egi) or run from a checkout")
    return Path(folders[0])


def _suite_names(suites: Path) -> list[str]:
    return sorted(p.name for p in suites.iterdir()
                  if p.is_dir() and not p.name.startswith(("_", ".")) and (p / "__init__.py").is_file())


def run_args(argv: list[str], suites: Path, cwd: Path) -> list[str]:
    """pytest's arguments for ``egi-bench run ARGS``: the installed suites folder (or, with
    ``--suite NAME``, repeatable, that suite's folder), no conftest.py above the suites folder
    (``--confcutdir``), the current folder as the rootdir (so
    ``reports/``, ``.egi_cache/`` and a ``routing.yaml`` written by ``egi-bench init`` are
    the current folder's; without one the installed default routing is used), and the
    current folder's ``pytest.ini`` as the ini file when there is one (else none: no ini
    file of site-packages' ancestors is picked up), then ``argv`` without ``--suite``.

    Raises:
        CliError: ``--suite`` without a name, or naming no installed suite (lists them).
    """
    rest: list[str] = []
    picked: list[str] = []
    args = iter(argv)
    for arg in args:
        if arg == "--suite":
            name = next(args, None)
            if name is None:
                raise CliError("--suite needs a suite name, e.g. --suite crmarena")
            picked.append(name)
        elif arg.startswith("--suite="):
            picked.append(arg.partition("=")[2])
        else:
            rest.append(arg)
    names = _suite_names(suites)
    for name in picked:
        if name not in names:
            raise CliError(f"--suite {name!r}: no such suite in {suites}; valid: {', '.join(names)}")
    paths = [str(suites / name) for name in picked] or [str(suites)]
    # no conftest.py above the installed suites is loaded (a venv inside a checkout would
    # otherwise pick up the checkout's, and with it the checkout's suites)
    head = [f"--rootdir={cwd}", f"--confcutdir={suites}"]
    if not any(a in ("-c", "--config-file") or a.startswith(("--config-file=", "-c")) for a in rest):
        ini = cwd / "pytest.ini"
        head.append(f"--config-file={ini if ini.is_file() else os.devnull}")
    return [*paths, *head, *rest]


def _cmd_run(argv: list[str]) -> int:
    """``egi-bench run [--suite NAME]... [PYTEST ARGS]``: pytest on the installed suites
    (:func:`run_args`), in this process replaced by ``python -m pytest`` (its exit status is
    pytest's)."""
    if argv[:1] in (["-h"], ["--help"]):
        print("usage: egi-bench run [--suite NAME]... [PYTEST ARGS...]\n\n"
              "Run the main job on the installed suites in the current folder: pytest on the "
              "suites package's folder,\nwith the current folder as rootdir (reports/, "
              ".egi_cache/ and routing.yaml are looked for there; without a\nrouting.yaml, "
              "the installed default is used). Every argument but --suite goes to pytest, e.g.\n"
              "  egi-bench run --egi-model egi/oracle --egi-mode quick -n 2\n"
              "  egi-bench run --suite crmarena --egi-model gpt-4o-mini")
        return 0
    args = run_args(argv, installed_suites(), Path.cwd())
    # a fresh interpreter: this process has imported pytest_egi already, which pytest could
    # then not rewrite for its assertions (a warning, an error under -W error)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *args])
    return 0  # (not reached)


def _cmd_init(args: argparse.Namespace) -> int:
    """``egi-bench init``: write the installed default ``routing.yaml`` (with its comments)
    into the current folder, where a run finds it (the rootdir of ``egi-bench run``)."""
    from pytest_egi.run.settings import packaged_routing

    source = packaged_routing()
    if source is None:
        raise CliError("the installed suites ship no routing.yaml: reinstall pytest-egi")
    target = Path(args.out)
    if target.exists() and not args.force:
        raise CliError(f"{target} exists; pass --force to overwrite it")
    target.write_bytes(source.read_bytes())
    print(f"wrote {target} (the default routing: buckets, weights, floors, routes, profiles); "
          "edit it, then egi-bench run uses it from this folder")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="egi-bench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("run", help="run the main job on the installed suites (pytest args follow; "
                               "egi-bench run --help)", add_help=False)
    init = sub.add_parser("init", help="write the default routing.yaml into the current folder")
    init.add_argument("--out", default="routing.yaml", metavar="PATH",
                      help="where to write it (default: routing.yaml)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(func=_cmd_init)
    doctor = sub.add_parser("doctor", help="check the installation, suites and providers")
    doctor.add_argument("--egi-api-base", default=None, metavar="URL")
    doctor.add_argument("--suites", default=None, metavar="DIR",
                        help="the suites folder (default: ./suites, else the installed suites)")
    doctor.add_argument("--egi-model", default=None, metavar="MODEL",
                        help="also check this model's provider key and make one tiny call")
    doctor.add_argument("--egi-model-params", default=None, metavar="KEY=VALUE,...",
                        help="generation parameters over the suites' defaults for that call")
    doctor.set_defaults(func=_cmd_doctor)
    report = sub.add_parser(
        "report", help="print a run's EGI summary, or rescore it",
        description="Print a stored run's EGI summary (with the session's 'session fails: ...' "
                    "reasons), or with --rescore re-run the scorers on its stored trajectories, "
                    "re-aggregate, and write the result as a new run folder inside it.",
        epilog="exit status: 0 for report (it displays a stored run, whatever that run's "
               "status was); with --rescore, 1 when the rescored run breaches a floor on a "
               "measured bucket (its release gate judged), its confident gate is UNDECIDED "
               "(unless --egi-gate-undecided pass), or its error rate is above the "
               "run's --egi-max-error-rate (the rule of pytest's exit status), else 0; 2 for a "
               "usage error.",
    )
    report.add_argument("run", nargs="?",
                        help="run directory (default: the newest run under --reports: the one most "
                             "recently updated or started, by its run.json, else by the time its "
                             "egi.json was written)")
    report.add_argument("--reports", default="reports", metavar="DIR")
    report.add_argument(
        "--rescore", action="store_true", help="re-run the scorers on stored trajectories and re-aggregate"
    )
    report.add_argument("--routing", metavar="PATH", help="routing file for --rescore")
    report.add_argument(
        "--merge", nargs="+", metavar="DIR",
        help="merge the shards of one run (--egi-shard K/N): shard folders, or the run's folder "
             "holding them; checks they are complete and alike, then writes one run",
    )
    report.add_argument("--out", metavar="DIR",
                        help="with --merge: the merged run's folder (default: the shards' parent)")
    report.add_argument("--egi-weights", metavar="M1=W,...",
                        help="with --rescore or --merge: bucket weights; the named buckets take the "
                             "given weights, the others are scaled to fill the rest")
    report.add_argument("--egi-floor", metavar="M5=F,...",
                        help="with --rescore or --merge: release floors (0-100) to judge with")
    report.add_argument("--egi-gate", choices=("confident", "point"), default=None,
                        help="with --rescore or --merge: the release gate rule to judge with "
                             "(default: the run's)")
    report.add_argument("--egi-gate-level", type=float, default=None, metavar="LEVEL",
                        help="with --rescore or --merge: the confident gate's level (default: the run's)")
    report.add_argument("--egi-gate-undecided", choices=("fail", "pass"), default=None,
                        help="with --rescore or --merge: whether UNDECIDED fails (default: the run's)")
    report.add_argument("--show", metavar="FILE",
                        help="print one file of the run folder instead of the summary, as it is "
                             "(a suite's own file such as eigent/results.csv); a path relative to "
                             "the run folder, which it may not leave")
    report.set_defaults(func=_cmd_report)
    compare = sub.add_parser(
        "compare", help="compare two or more runs bucket by bucket, and write a page",
        description="Compare runs: the first run is the baseline, each later one is compared with it "
                    "(the terminal shows each pair; A is the baseline). Writes one self-contained HTML "
                    "page over all of them (models by EGI, M1-M6 heatmap and radar profiles, EGI "
                    "against cost, the gate row, the tasks that flipped, paired sub-metric deltas).",
        epilog="exit status: 0; with --fail-on-regression, 1 when a later run's bucket got worse "
               "beyond its interval (the paired 95% bootstrap interval of later - baseline lies "
               "below 0; without paired intervals, the two runs' own 95% intervals do not "
               "overlap) or its release gate verdict is worse (READY > UNDECIDED > NOT READY); 2 "
               "for a usage error.",
    )
    compare.add_argument("runs", nargs="+", metavar="RUN",
                         help="run folders, two or more; the first is the baseline")
    compare.add_argument("--html", metavar="PATH", default=None,
                         help="where to write the compare page (default: compare.html in the first "
                              "run's folder, replaced by the next compare of that run)")
    compare.add_argument("--fail-on-regression", action="store_true",
                         help="exit 1 when a bucket or the release gate got worse beyond its interval "
                              "in a later run against the first")
    compare.add_argument("--resamples", type=int, default=1000, metavar="N",
                         help="paired bootstrap resamples over the tasks in both runs (0: none)")
    compare.set_defaults(func=_cmd_compare)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``egi-bench`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser()
    if argv[:1] != ["run"]:
        args = parser.parse_args(argv)
    try:
        status = _cmd_run(argv[1:]) if argv[:1] == ["run"] else int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except CliError as exc:
        print(f"egi-bench: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader went away (``egi-bench report | head``): stop quietly, as the signal
        # module docs recommend ("Note on SIGPIPE"), with stdout on devnull so that the
        # flush at exit does not raise again
        _stdout_to_devnull()
        return 1


def _stdout_to_devnull() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a stdout without a file descriptor
        os.close(devnull)
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
