"""Write a run directory: egi.json, records.jsonl, timings.jsonl, results.csv, report.html."""

from __future__ import annotations

import contextlib
import csv
import json
import platform
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_egi.doctor import installed_version
from pytest_egi.models.usage import summarize_usage
from pytest_egi.records import (
    RunDir,
    atomic_file,
    atomic_write_text,
    dump_json,
    record_sort_key,
    split_timing,
    write_json,
)
from pytest_egi.report.terminal import egi_headline
from pytest_egi.scoring.aggregate import Aggregate
from pytest_egi.scoring.verdict import Verdict, judge_run

__all__ = [
    "RecordLines", "RecordsDigest", "build_egi_json", "write_record_files", "write_report_files", "write_run"
]


@dataclass
class RecordsDigest:
    """What egi.json and the terminal summary take from the records themselves, so that
    the session end can let the records go before it draws the bootstrap's resamples.

    Attributes:
        items: the number of records.
        usage: :func:`~pytest_egi.models.usage.summarize_usage` of the records.
        params: the generation parameters given and sent, per role (:func:`_params_config`).
    """

    items: int
    usage: dict[str, Any]
    params: dict[str, Any]

    @classmethod
    def of(cls, settings: Any, records: Sequence[dict[str, Any]]) -> RecordsDigest:
        """The digest of ``records`` (a run's, any order)."""
        return cls(len(records), summarize_usage(list(records)), _params_config(settings, records))


def build_egi_json(
    settings: Any,
    digest: RecordsDigest,
    agg: Aggregate,
    session_info: dict[str, Any] | None = None,
    verdict: Verdict | None = None,
) -> dict[str, Any]:
    """The content of egi.json (DESIGN §7) from the records' ``digest`` and ``agg``;
    ``session_info`` = exit status, its reasons and the item counts; ``verdict``
    (:mod:`pytest_egi.scoring.verdict`) labels the EGI. Without one, the run is judged on its error
    rate and selection alone."""
    items = digest.items
    res = agg.result
    if verdict is None:
        verdict = judge_run(
            error_rate=agg.error_rate,
            max_error_rate=settings.max_error_rate,
            items_ran=items,
            items_collected=None,
            stop_reason=None,
            selection=getattr(settings, "selection", {}) or {},
        )
    routing = settings.routing
    suites_run = sorted(agg.suites)
    buckets = {}
    for b, br in res.buckets.items():
        entry = {
            "name": br.name,
            "weight": br.weight,
            "value": br.value,
            "floor": br.floor,
            "ceiling": br.ceiling,  # where a suite's formula caps the bucket below 100
            "ci95": list(agg.ci[b]) if agg.ci.get(b) else None,
            "contributors": [c.__dict__ for c in br.contributors],
        }
        buckets[b] = entry
    seed = settings.run_seed
    interval = agg.ci.get("EGI")  # of the run's figure: the full EGI, or its partial value
    return {
        "run_id": settings.run_id,
        "model": settings.model,
        "mode": settings.mode,
        "judge": settings.judge_model or "egi/rules",
        "simulator": settings.simulator_model or "egi/rules",
        "egi": {
            # the full EGI only: null unless all six buckets are measured (DESIGN §4)
            "value": res.egi,
            "partial": res.partial,
            # the labelled partial figure over the covered buckets' weight, kept apart
            "partial_value": res.partial_value,
            "covered_weight": res.covered_weight,
            "covered_buckets": list(res.covered),
            "ci95": list(interval) if interval and not res.partial else None,
            "partial_ci95": list(interval) if interval and res.partial else None,
            "status": verdict.status,
            "flags": list(verdict.flags),
            "flag_reasons": list(verdict.reasons),
            "subset": list(verdict.subset),
            "headline": egi_headline(agg, verdict),
        },
        "buckets": buckets,
        # the point rule's keys; the confident rule adds its own (pytest_egi.scoring.gate.GateDecision)
        "gate": {**res.gate.__dict__, **(agg.gate_decision.to_dict() if agg.gate_decision else {})},
        "suites": {
            name: {
                "version": s.version,
                "counts": s.counts,
                "sub_metrics": s.sub_metrics,
                "pass_k": s.pass_k,
                "note": s.note,
                "sub_metric_notes": s.sub_metric_notes,
                "no_answer_share": s.no_answer_share,
                "terminations": s.terminations,
            }
            for name, s in agg.suites.items()
        },
        # failed trials per failure kind (pytest_egi.outcomes), per suite and per bucket
        "failure_kinds": {
            "suites": {name: s.failure_kinds for name, s in agg.suites.items() if s.failure_kinds},
            "buckets": agg.failure_kinds_by_bucket,
        },
        "missing": [m.__dict__ for m in res.missing],
        "data_warnings": list(getattr(settings, "data_warnings", None) or []),
        "counts": agg.counts,
        "error_rate": agg.error_rate,
        "session": session_info or {},
        "routing": {
            "path": str(settings.routing_path),
            "sha256": settings.routing_hash,
            "version": routing.version,
            "weights": settings.weights,
            # what --egi-weights named; the other buckets were scaled to fill the rest
            "weights_given": dict(getattr(settings, "weights_given", None) or {}),
            "floors": settings.floors,
            # only what the file set: a value left to its default (a suite profile's seed) must
            # read back as unset, so the mode's value applies again (rescore, merge)
            "definition": routing.model_dump(mode="json", exclude_unset=True),
        },
        "profile": {
            name: routing.profile(settings.mode, name).model_dump(mode="json") for name in suites_run
        },
        "usage": digest.usage,
        "config": {
            "rootdir": str(getattr(settings, "rootdir", "") or ""),
            "selection": getattr(settings, "selection", {}) or {},
            "rescored_from": getattr(settings, "rescored_from", None),
            "seed": seed,
            "seed_override": settings.seed,
            "trials": settings.trials,
            "max_error_rate": settings.max_error_rate,
            "strict": settings.strict,
            "api_base": settings.api_base,
            "suite_options": settings.suite_options,
            "bootstrap_resamples": settings.bootstrap,
            "gate": {"rule": getattr(settings, "gate_rule", "point"),
                     "level": getattr(settings, "gate_level", 0.95),
                     "undecided": getattr(settings, "gate_undecided", "fail")},
            "budget": getattr(settings, "budget_plan", None),
            "target_ci": getattr(settings, "target_ci", None),
            "params": digest.params,
        },
        "versions": {
            "python": platform.python_version(),
            "pytest": installed_version("pytest"),
            "pytest-egi": installed_version("pytest-egi"),
            "pytest-xdist": installed_version("pytest-xdist"),
            "litellm": installed_version("litellm"),
            "platform": platform.platform(),
            "suites": {name: s.version for name, s in agg.suites.items()},
        },
    }


def _params_config(settings: Any, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What generation parameters each role was given and what went out, per suite.

    Returns:
        ``{"given": {role: {...}}, "sent": {role: {suite: {...}}}, "dropped": {role: {name:
        reason}}}``: ``given`` is ``--egi-model-params`` / ``--egi-judge-params`` /
        ``--egi-simulator-params`` (a null value removes a suite default; a secret-named
        parameter's value is shown as ``***``); ``sent`` and
        ``dropped`` come from the records of LiteLLM calls (empty for offline policies).
    """
    provider = getattr(settings, "provider", None)
    from pytest_egi.models.secrets import mask_secret_params

    given = {role: mask_secret_params(provider.params_for(role)) for role in ("model", "judge", "simulator")
             } if hasattr(provider, "params_for") else {}
    sent: dict[str, dict[str, Any]] = {}
    dropped: dict[str, dict[str, str]] = {}
    for rec in records:
        for role, entry in (rec.get("params") or {}).items():
            sent.setdefault(role, {}).setdefault(rec["suite"], entry.get("sent") or {})
            dropped.setdefault(role, {}).update(entry.get("dropped") or {})
    return {"given": {r: v for r, v in given.items() if v}, "sent": sent,
            "dropped": {r: v for r, v in dropped.items() if v}}


CSV_FIELDS = (
    "suite",
    "category",
    "task_id",
    "trial",
    "status",
    "success",
    "termination",
    "finish_reason",
    "no_answer",
    "failure_kind",
    "expected",
    "got",
    "error",
    "raw_path",
)


def _write_results_csv(path: Path, records: list[dict[str, Any]]) -> None:
    """``results.csv``: one row per record (:data:`CSV_FIELDS`, then every value key in
    sorted order), written a row at a time."""
    value_keys = sorted({k for r in records for k in (r.get("values") or {})})
    with atomic_file(path) as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([*CSV_FIELDS, *value_keys])
        for r in records:
            values = r.get("values") or {}
            writer.writerow([r.get(f) for f in CSV_FIELDS] + [values.get(k) for k in value_keys])


def _write_suite_files(
    root: Any,
    records: list[dict[str, Any]],
    prepare: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
) -> None:
    """Each suite's optional extra files (``Suite.extra_files``) under ``<run>/<suite>/``.

    Only scored (passed/failed) records are passed, each through ``prepare`` when given
    (``write_run``: as records.jsonl holds them, without their timing); a suite without the
    hook, or one that cannot be imported, writes nothing. A relative path that leaves the
    suite's folder is refused (ValueError).
    """
    from collections import defaultdict

    from pytest_egi.suite import load_suite

    by_suite: dict[str, list[dict[str, Any]]] = defaultdict(list)
    modules: dict[str, str] = {}
    for rec in records:
        if rec.get("status") in ("passed", "failed") and rec.get("suite_module"):
            by_suite[rec["suite"]].append(rec)
            modules[rec["suite"]] = rec["suite_module"]
    for name, recs in sorted(by_suite.items()):
        try:
            suite = load_suite(modules[name])
        except ImportError:
            continue
        hook = getattr(suite, "extra_files", None)
        if hook is None:
            continue
        base = Path(root) / name
        for rel, obj in sorted(hook([prepare(r) for r in recs] if prepare else recs).items()):
            target = (base / rel).resolve()
            if not target.is_relative_to(base.resolve()):
                raise ValueError(f"suite {name}: extra file path {rel!r} leaves the run folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            # text for a file in the original tool's own text format (a CSV), JSON otherwise
            raw_text = isinstance(obj, str) and not rel.endswith(".json")
            atomic_write_text(target, obj if raw_text else dump_json(obj))


def write_run(
    settings: Any,
    records: list[dict[str, Any]],
    agg: Aggregate,
    config: Any = None,
    session_info: dict[str, Any] | None = None,
    verdict: Verdict | None = None,
) -> dict[str, str]:
    """Write every run file atomically (:func:`write_record_files`, then
    :func:`write_report_files`); returns ``{"run_dir": ..., "egi_json": ...}`` paths."""
    ordered = write_record_files(settings, records)
    digest = RecordsDigest.of(settings, ordered)
    return write_report_files(settings, agg, digest, ordered, session_info=session_info, verdict=verdict)


def write_record_files(settings: Any, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write the files made from the records alone, atomically, a piece at a time:
    records.jsonl, timings.jsonl, results.csv and each suite's extra files. Besides the
    records, no copy of them and no whole file's text is held (a run of many items).

    Args:
        settings: the run's settings (``run_dir``).
        records: the run's records, in any order (written sorted by (suite, task, trial)).

    Returns:
        The records in the order written (a new list of the same dicts).
    """
    rd = RunDir(settings.run_dir)
    ordered = sorted(records, key=record_sort_key)
    with atomic_file(rd.records_jsonl) as out, atomic_file(rd.timings_jsonl) as times:
        for r in ordered:
            stable, timing = split_timing(r)
            out.write(json.dumps(stable, sort_keys=True, ensure_ascii=False) + "\n")
            times.write(json.dumps(timing, sort_keys=True) + "\n")
    # the CSV's fields are none that split_timing takes out
    _write_results_csv(rd.results_csv, ordered)
    _write_suite_files(rd.root, ordered, lambda r: split_timing(r)[0])
    return ordered


class RecordLines:
    """The records of a run's records.jsonl, read a line at a time on each iteration (a
    sized iterable: ``len()`` is the count given), each with its ``raw_at`` from the line of
    ``timings.jsonl`` beside it (written side by side). What report.html's task table is
    rendered from after the session end has let the records go.

    Args:
        path: the records.jsonl file.
        count: how many records it holds.
    """

    def __init__(self, path: Path, count: int) -> None:
        self.path = Path(path)
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[dict[str, Any]]:
        timings = self.path.with_name("timings.jsonl")
        with open(self.path, encoding="utf-8") as fh, contextlib.ExitStack() as stack:
            # written side by side, a line each per record: its line gives the record's raw_at
            times = stack.enter_context(open(timings, encoding="utf-8")) if timings.is_file() else None
            for line in fh:
                if line.strip():
                    record = json.loads(line)
                    timing = next(times, None) if times is not None else None
                    if timing is not None and '"raw_at"' in timing:
                        t = json.loads(timing)
                        if (t.get("suite"), t.get("task_id"), t.get("trial")) == (
                                record["suite"], record["task_id"], record["trial"]):
                            record["raw_at"] = t["raw_at"]
                    yield record


def write_report_files(
    settings: Any,
    agg: Aggregate,
    digest: RecordsDigest,
    records: Sequence[dict[str, Any]] | None = None,
    *,
    session_info: dict[str, Any] | None = None,
    verdict: Verdict | None = None,
) -> dict[str, str]:
    """Write report.html, then egi.json (a piece at a time), after :func:`write_record_files`:
    a folder with an egi.json has all of them (a write that fails leaves none of these two).

    Args:
        settings: the run's settings.
        agg: the run's aggregate (its intervals drawn).
        digest: :meth:`RecordsDigest.of` the records.
        records: the run's records sorted by (suite, task, trial); None: report.html's task
            table reads them back from records.jsonl a line at a time.
        session_info, verdict: as :func:`build_egi_json`'s.

    Returns:
        ``{"run_dir": ..., "egi_json": ...}`` paths.
    """
    from pytest_egi.report.html import render_html_parts

    rd = RunDir(settings.run_dir)
    rows: Sequence[dict[str, Any]] | RecordLines
    rows = records if records is not None else RecordLines(rd.records_jsonl, digest.items)
    egi = build_egi_json(settings, digest, agg, session_info, verdict)
    with atomic_file(rd.report_html) as page:
        for part in render_html_parts(egi, rows, run_dir=rd.root):
            page.write(part)
    # egi.json last: a run folder with an egi.json has every other file of its session written
    try:
        write_json(rd.egi_json, egi)
    except OSError:  # (a full disk): no page of a run whose egi.json is not there
        with contextlib.suppress(OSError):
            rd.report_html.unlink(missing_ok=True)
        raise
    return {"run_dir": str(rd.root), "egi_json": str(rd.egi_json)}

