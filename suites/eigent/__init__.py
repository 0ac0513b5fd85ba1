"""Eigent-format benchmark folders (eigent-ai/eigent ``backend/benchmark/``) as an opt-in suite.

A folder holds ``dataset/<n>.json`` tasks (difficulty, description, tags; a question; an
``env`` with files, MCP servers and an ``env_file``; optional ``model_kwargs``; checker and
grader scripts), ``checker/<n>.py`` exporting ``check(working_directory) -> bool`` and
``grader/<n>.py`` exporting ``grade(working_directory) -> (completed, total)``. Tasks come only
from the folders named with ``--egi-opt eigent.dirs=PATH[,PATH...]``; with none the suite
collects nothing and its routes (``optional: true`` in ``routing.yaml``) are left out of the
EGI, so the default EGI stays the eight-benchmark definition. ``suites/eigent/examples/`` is
our own folder of nine tasks (:data:`EXAMPLES`).

Each task runs the model under test as a function-calling agent (:mod:`suites.eigent.agent`)
in a fresh sandboxed working directory with workspace tools (list, read, write files; run a
command with a timeout) and the tools of the task's stdio MCP servers; then every checker and
grader runs against the directory in a sandboxed subprocess with a timeout
(:mod:`suites.eigent.env`). The item passes when every checker passes. Sub-metrics
(:mod:`suites.eigent.scorer`): ``checker_pass_rate`` (routed to M1) and
``milestone_completion`` (routed to M3), and the same per difficulty and per tag
(diagnostics). The run folder gets ``eigent/results.csv`` in upstream's columns and values.

Differences from upstream (README.md here, "Differences from upstream"): our own agent and
tools instead of Eigent's workforce (no browser); a trial without an answer fails whatever the
folder holds; a crashing or hanging checker is an error for its task, not the end of the run;
checkers run sandboxed; ``model_kwargs`` honoured only within the model under test's provider;
the CSV's file name; our ``solution/<n>.json`` extension for the offline policies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.models.offline import Noise
from pytest_egi.outcomes import ending_kind
from pytest_egi.suite import SuiteProfile, Task, TaskScore, load_each, suite_options
from suites.eigent.data import DIFFICULTIES
from suites.eigent.scorer import aggregate_values, results_csv, summarize_records, task_values

__all__ = ["EXAMPLES", "SUITE", "EigentOptions", "EigentSuite"]

EXAMPLES = Path(__file__).resolve().parent / "examples"
"""Our own example benchmark folder (nine tasks; used by the tests and the README)."""

_KEYS = tuple(aggregate_values([]).keys())


class EigentOptions(BaseModel):
    """``--egi-opt eigent.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    dirs: list[Path] | None = None
    """Benchmark folders (each holding ``dataset/``), comma-separated; none: no task."""
    max_turns: int = Field(default=30, ge=1)
    """Model calls per task."""
    checker_timeout_s: float = Field(default=60.0, gt=0)
    """Wall-clock limit of one checker or grader run, seconds."""

    @field_validator("dirs", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            parts = [p.strip() for p in value.split(",") if p.strip()]
            return [Path(p).expanduser().resolve() for p in parts] or None
        return value


def _options(options: Any) -> EigentOptions:
    return suite_options(EigentOptions, options)


class EigentSuite:
    """The Eigent suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "eigent"
    version = "1"
    categories = DIFFICULTIES
    options_model = EigentOptions
    opt_in = "--egi-opt eigent.dirs=PATH[,PATH...] (an Eigent benchmark folder holding dataset/)"
    conformance_options = {"dirs": str(EXAMPLES)}
    sub_metrics = frozenset({*_KEYS, *(f"{d}.{k}" for d in DIFFICULTIES for k in _KEYS)})
    diagnostics = frozenset(k for k in sub_metrics if k not in {"checker_pass_rate", "milestone_completion"})
    diagnostic_patterns = ("tag.*.checker_pass_rate", "tag.*.milestone_completion")
    null_floor: dict[str, float] = {}
    sub_metric_notes = {
        "checker_pass_rate": "passed checker runs / checker runs (0-1); a trial with no answer passes none",
        "milestone_completion": "grader milestones completed / milestones (0-1), summed over grader runs",
    }

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """Every dataset file of every folder of ``eigent.dirs`` (none: no task), in upstream's
        order (folders as given, ``sorted(dataset/*.json)`` in each). Task id
        ``<folder name>.<data.name>`` (``<folder name><k>.<name>`` for the k-th folder, k >= 2),
        category the difficulty. ``per_category`` keeps the first tasks of each difficulty,
        ``limit`` the first tasks overall.

        Raises:
            ValueError: a folder without ``dataset/``, a malformed dataset file, a checker or
                grader that does not resolve or lacks ``check`` / ``grade`` (names the file, the
                field and the fix), or the profile's categories naming an unknown difficulty.
        """
        from suites.eigent.data import load_folder

        opts = _options(options)
        unknown = [c for c in profile.categories or () if c not in DIFFICULTIES]
        if unknown:
            raise ValueError(f"unknown categories {unknown} in the profile; known: {list(DIFFICULTIES)}")
        if not opts.dirs:
            return []
        entries = [t for i, folder in enumerate(opts.dirs) for t in load_folder(Path(folder), i)]
        run = {"max_turns": opts.max_turns}
        tasks = load_each(entries, lambda e: Task(id=e["id"], category=e["category"], data={**e, **run}),
                          category=lambda e: e["category"], file=lambda e: e["dataset_file"])  # fmt: skip
        wanted = set(profile.categories or DIFFICULTIES)
        kept, seen = [], dict.fromkeys(DIFFICULTIES, 0)
        for t in tasks:
            if t.category not in wanted or (
                profile.per_category and seen[t.category] >= profile.per_category
            ):
                continue
            seen[t.category] += 1
            kept.append(t)
        return kept[: profile.limit] if profile.limit else kept

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> Any:
        """The task's reference solution (``solution/<n>.json``) replayed through the tools.

        Raises:
            CannotRun: the task has no reference solution (the item is skipped).
            ValueError: its solution file is malformed (the item errors).
        """
        from suites.eigent.policy import EigentPolicy, load_solution

        return EigentPolicy(load_solution(task.data), noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """Score from the checker and grader results stored in the trajectory
        (:func:`~suites.eigent.scorer.task_values`); success = every checker passed and the
        trial gave an answer. Pure: rescoring reads the stored results. ``failure_kind``:
        ``no_answer`` / ``turn_limit``, ``gave_up`` ("I don't know."-style), else
        ``state_differs`` (a checker found the workspace not as the task wants)."""
        info = (trajectory.get("info") or {}).get("eigent") or {}
        results = info.get("results") or []
        why = no_answer_reason(trajectory)
        values = task_values(results, why is not None)
        cfg = task.data.get("config") or {}
        failing = [f"{r['script']}: FAIL" for r in results if r["type"] == "checker" and not r["passed"]]
        failing += [f"{r['script']}: {r['completed']}/{r['total']}" for r in results
                    if r["type"] == "grader" and r["completed"] != r["total"]]  # fmt: skip
        ran = f"{int(values['checkers_passed'])}/{int(values['checkers_total'])} passed"
        got: dict[str, Any] = {"checkers": ran,
                               "not_met": failing, "files": info.get("files") or []}  # fmt: skip
        if why is not None:
            got["no_answer"] = why
        details: dict[str, Any] = {
            "benchmark": (cfg.get("data") or {}).get("name"),
            "tags": list((cfg.get("metadata") or {}).get("tags") or []),
            "results": results,
            "order": task.data.get("order"),
        }
        for key in ("model", "model_kwargs", "mcp_servers"):
            if info.get(key) is not None:
                details[key] = info[key]
        success = bool(values["passed"]) and why is None
        return TaskScore(
            success=success,
            failure_kind=None if success else ending_kind(trajectory) or "state_differs",
            values=values,
            expected="every checker passes: "
            + ", ".join(r["script"] for r in results if r["type"] == "checker"),
            got=got,
            details=details,
        )

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """:func:`~suites.eigent.scorer.summarize_records` over the scored records."""
        return summarize_records(records, DIFFICULTIES)

    def extra_files(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """``results.csv``: upstream's results CSV (:func:`~suites.eigent.scorer.results_csv`)
        for the scored trials, in upstream's order (folders as given, dataset files sorted by
        name, then trials); the ``model`` column is the model that ran the trial."""
        rows = []
        for rec in records:
            d = rec.get("details") or {}
            if d.get("results") is None:
                continue
            order = d.get("order") or [0, ""]
            rows.append(((order[0], order[1], int(rec.get("trial") or 1)),
                         (str(d.get("benchmark")), str(d.get("model") or rec.get("model")),
                          d["results"])))  # fmt: skip
        rows.sort(key=lambda r: r[0])
        return {"results.csv": results_csv(r[1] for r in rows)} if rows else {}


SUITE = EigentSuite()
"""The object the core loads (``suites.eigent.SUITE``)."""
