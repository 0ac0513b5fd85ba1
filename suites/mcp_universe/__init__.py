"""MCP-Universe (Luo et al., 2025, arXiv 2508.14704): tasks judged by executable evaluators on
the agent's final answer, over local MCP servers.

Each task gives the agent a question (with the answer's JSON ``output_format``), the MCP servers
of its domain and a step budget; the agent's final answer, and for repository tasks the state it
left behind, are checked by the task's evaluators (:mod:`suites.mcp_universe.scorer.evaluator`: the
``->`` pipeline, the built-in and the domain ops). A task passes iff every evaluator passes.

Categories are the domains: ``financial_analysis`` (yfinance + calculator, function calling),
``location_navigation`` (google-maps, ReAct), ``web_search`` (google-search + fetch, ReAct) and
``repository_management`` (github, ReAct; reported, not routed). Native sub-metrics per domain
(see :func:`summarize_domain`): ``<domain>.pass_rate`` (SR, routed to M2), the average evaluator
score (AE), average steps over passed tasks and over all (AS), and the pass rate per evaluator
kind. Tasks are our own, generated from each domain's seeded world, or the original task files
of a folder with ``--egi-opt mcp_universe.task_dir=PATH``; a profile's ``per_category`` /
``limit`` keep a seeded sample. A task file the suite cannot run is skipped alone, one that
cannot be loaded errors alone (``Task.cannot_run`` / ``Task.load_error``, the core's mechanism,
issue 22). Differences from upstream (README.md
here, "Differences from upstream"): no answer fails every evaluator; faults are errors; local
seeded worlds; op fixes; seeded subsets; task files that cannot run are skipped alone.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.models.offline import Noise
from pytest_egi.outcomes import ending_kind
from pytest_egi.suite import (
    SuiteProfile,
    SummaryColumns,
    Task,
    TaskScore,
    profile_categories,
    suite_options,
    values_by_category,
)
from suites.mcp_universe.data.tasks import (
    DOMAINS,
    ROUTED_DOMAINS,
    TEMPLATE_ENV,
    UNKNOWN_DOMAIN,
    domain_module,
    seeded_sample,
)

__all__ = [
    "KINDS",
    "SUITE",
    "McpUniverseOptions",
    "McpUniverseSuite",
    "summarize_domain",
]

T = TypeVar("T")

KINDS = ("format", "static", "dynamic")
_SUMMARY_KEYS = (
    "pass_rate",
    "evaluator_score",
    "avg_steps_passed",
    "avg_steps",
    "tasks",
    *(f"{k}_pass_rate" for k in KINDS),
)


class McpUniverseOptions(BaseModel):
    """``--egi-opt mcp_universe.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    task_dir: Path | None = None
    """A folder of original MCP-Universe task files (searched recursively; a file under a
    folder named after a domain is of that domain), run instead of the generated tasks."""
    agent: Literal["auto", "react", "function_call"] = "auto"
    """The agent for every task; ``auto`` uses each domain's agent in upstream's configs."""
    max_iterations: int | None = Field(default=None, ge=1)
    """Model calls per task; None uses the profile's ``max_iterations`` (default 20)."""


def _options(options: Any) -> McpUniverseOptions:
    return suite_options(McpUniverseOptions, options)


def summarize_domain(domain: str, values: list[dict[str, Any]]) -> dict[str, float | None]:
    """One domain's sub-metrics from its tasks' per-task values.

    Formulas (paper §4, reference §1.6; upstream ships no aggregation script, its issue #9):
    ``pass_rate`` (SR) = passed tasks / tasks; ``evaluator_score`` (AE) = mean over tasks of
    passed evaluators / evaluators; ``avg_steps_passed`` (AS) = mean model calls over passed
    tasks (None when none passed); ``avg_steps`` = the same over all tasks; ``<kind>_pass_rate``
    = passed evaluators of that kind / evaluators of that kind over all tasks (None when the
    domain has none); ``tasks`` = the count. Rates are 0–1; steps are model calls.
    """
    n = len(values)
    passed = [v for v in values if v.get("passed")]
    out: dict[str, float | None] = {
        f"{domain}.pass_rate": len(passed) / n,
        f"{domain}.evaluator_score": sum(float(v.get("evaluator_score") or 0.0) for v in values) / n,
        f"{domain}.avg_steps_passed": (sum(float(v["steps"]) for v in passed) / len(passed))
        if passed
        else None,
        f"{domain}.avg_steps": sum(float(v.get("steps") or 0.0) for v in values) / n,
        f"{domain}.tasks": float(n),
    }
    for kind in KINDS:
        total = sum(float(v.get(f"{kind}_total") or 0.0) for v in values)
        ok = sum(float(v.get(f"{kind}_passed") or 0.0) for v in values)
        out[f"{domain}.{kind}_pass_rate"] = ok / total if total else None
    return out


DOMAIN_COLUMNS = ("n", "passed", "evaluator_score", "steps_passed", "steps",
                  *(f"{k}_{part}" for k in KINDS for part in ("total", "passed")))  # fmt: skip
"""One domain's columns for :func:`domain_row` and :func:`finish_domain`: tasks, passed
tasks, and the sums :func:`summarize_domain` divides."""


def domain_row(v: dict[str, Any]) -> list[float] | None:
    """One task's :data:`DOMAIN_COLUMNS`, or None when :func:`summarize_domain` would raise
    on its values (a passed task without ``steps``)."""
    passed = bool(v.get("passed"))
    if passed and "steps" not in v:
        return None
    row = [1.0, float(passed), float(v.get("evaluator_score") or 0.0),
           float(v["steps"]) if passed else 0.0, float(v.get("steps") or 0.0)]  # fmt: skip
    for kind in KINDS:
        row += [float(v.get(f"{kind}_total") or 0.0), float(v.get(f"{kind}_passed") or 0.0)]
    return row


def finish_domain(domain: str, sums: Mapping[str, float]) -> dict[str, float | None]:
    """:func:`summarize_domain` from the column sums of its tasks' :func:`domain_row` (each
    column name prefixed ``<domain>.``); the domain must have a task."""

    def col(key: str) -> float:
        return sums[f"{domain}.{key}"]

    n, passed = col("n"), col("passed")
    out: dict[str, float | None] = {
        f"{domain}.pass_rate": passed / n,
        f"{domain}.evaluator_score": col("evaluator_score") / n,
        f"{domain}.avg_steps_passed": col("steps_passed") / passed if passed else None,
        f"{domain}.avg_steps": col("steps") / n,
        f"{domain}.tasks": float(round(n)),
    }
    for kind in KINDS:
        total = col(f"{kind}_total")
        out[f"{domain}.{kind}_pass_rate"] = col(f"{kind}_passed") / total if total else None
    return out


class McpUniverseSuite:
    """The MCP-Universe suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "mcp_universe"
    version = "2"
    categories = DOMAINS
    item_seconds = {"*": 0.9}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    options_model = McpUniverseOptions
    profile_keys = frozenset({"max_iterations"})
    sub_metrics = frozenset(f"{d}.{k}" for d in DOMAINS for k in _SUMMARY_KEYS)
    diagnostics = frozenset(k for k in sub_metrics if k not in {f"{d}.pass_rate" for d in ROUTED_DOMAINS})
    null_floor: dict[str, float] = {}
    sub_metric_notes = {
        **{
            f"{d}.pass_rate": "share of tasks whose every evaluator passed (SR, 0-1); a task with no "
            "answer fails"
            for d in DOMAINS
        },
        "repository_management.pass_rate": "SR (0-1), reported only: routing.yaml routes no "
        "repository signal",
    }

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """The generated tasks of the profile's domains (``<domain>-NNN``, upstream-sized), or
        every file of the task folder (all domains: the profile's categories are for generated
        tasks). ``per_category`` (generated tasks) and ``limit`` (both) keep a seeded sample
        (:func:`~suites.mcp_universe.data.tasks.seeded_sample`: per domain with salt
        ``per_category|<domain>``, then over all with salt ``limit``, from the profile seed),
        in their original order.

        One task file never stops the others: a file the suite cannot run (a server it does not
        offer; upstream's web_search files, which ask about the real world) is a task whose item
        is skipped with the reason; a file that cannot be loaded (a bad field) or whose
        evaluators cannot be checked on the local data is a task whose item errors, naming the
        file, the task and the fix (``Task.cannot_run`` / ``Task.load_error``: the core skips or
        errors the item before it runs); a file the reference solver cannot
        answer (or that it fails on) runs, and egi/oracle errors on it with the reason
        (:meth:`reference_policy`).

        Raises:
            ValueError: unknown category, a bad profile ``max_iterations``, or a task folder
                that is not a folder or holds no task file.
        """
        from suites.mcp_universe.data.tasks import generated_tasks, load_task_dir

        opts = _options(options)
        wanted = _wanted(profile)
        max_iterations = opts.max_iterations or _profile_iterations(profile)
        agent = None if opts.agent == "auto" else opts.agent
        run = {"seed": profile.seed, "max_iterations": max_iterations, "agent": agent}
        if opts.task_dir is None:
            chosen = _select({d: generated_tasks(d, profile.seed) for d in wanted}, profile)
            return [_task(t, domain, run) for domain, t in chosen]
        by_domain: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for domain, task in load_task_dir(opts.task_dir, keep_errors=True):
            by_domain[domain].append(_with_reference(domain, task, profile.seed))
        return [_task(t, domain, run) for domain, t in _select(by_domain, profile, per_category=False)]

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, domain)`` of each task :meth:`load_tasks` returns, in order, without generating
        them (:func:`~suites.mcp_universe.data.tasks.generated_task_ids`, the same
        :func:`_select`); None for a task folder (``mcp_universe.task_dir``) or a profile
        ``load_tasks`` refuses (it then says why)."""
        from suites.mcp_universe.data.tasks import generated_task_ids

        opts = _options(options)
        if opts.task_dir is not None:
            return None
        try:
            wanted = _wanted(profile)
            opts.max_iterations or _profile_iterations(profile)
        except ValueError:
            return None
        return [(tid, domain) for domain, tid in
                _select({d: generated_task_ids(d) for d in wanted}, profile)]  # fmt: skip

    def prepare(self, tasks: list[Task], options: Any) -> None:
        """Start every server the runnable tasks use (once per process, before the first item).
        A server that cannot start is left to the items that use it (each errors with the
        server's message), so the others still run."""
        from pytest_egi.mcp import McpServerError
        from suites.mcp_universe.data.tasks import task_servers
        from suites.mcp_universe.env.servers import server_for

        wanted: set[tuple[str, int]] = set()
        for t in tasks:
            if t.runnable:
                wanted.update((n, t.data["seed"]) for n in task_servers(t.data, t.category))
        for name, seed in sorted(wanted):
            try:
                server_for(name, seed).start()
            except McpServerError:
                continue

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: let go of the worlds its
        evaluators and reference data generated here (the finance companies, the maps
        places, the search corpus, the repositories); they are generated again, the same,
        if an item comes back. (The core stops the MCP servers its items used.)"""
        from suites._common.release import clear_caches

        clear_caches("suites.mcp_universe.data.domains.location_navigation:_generator",
                     "suites._common.mcp_servers.maps:build_world",
                     "suites._common.mcp_servers.search:search_index",
                     "suites._common.mcp_servers.web_corpus:build_corpus",
                     "suites._common.mcp_servers.repository:_world_json")  # fmt: skip
        yfinance = sys.modules.get("suites.mcp_universe.scorer.ops.yfinance")
        if yfinance is not None:
            yfinance.forget_worlds()

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> Any:
        """The reference agent for ``task`` (oracle at p = 0); see ``policy.py``.

        (A task that cannot run or could not be loaded, ``Task.cannot_run`` /
        ``Task.load_error``, is skipped or errors in the core before this is called.)

        Raises:
            RuntimeError: the task (an original file) has no reference the local data can
                give (the domain solver's reason); the item errors, it is not scored.
        """
        from suites.mcp_universe.policy import McpUniversePolicy

        reference = task.data.get("reference")
        if reference is None:
            raise RuntimeError(
                f"mcp_universe: no reference solution for task {task.id!r} on the local data: "
                f"{task.data.get('unsolvable') or 'none was computed'}"
            )
        return McpUniversePolicy(reference, noise)

    def data_warnings(self, tasks: list[Task], options: Any) -> dict[str, str]:
        """Per domain: the task files the reference solver cannot answer (they run, but
        egi/oracle errors on them), with the first one's reason. (The core counts those that
        cannot run, skipped, and those that could not be loaded, which error alone.)"""
        out: dict[str, str] = {}
        for domain in (*DOMAINS, UNKNOWN_DOMAIN):
            mine = [t for t in tasks if t.category == domain]
            unsolved = [t for t in mine if t.data.get("unsolvable")]
            if unsolved:
                out[domain] = (f"{domain}: {len(unsolved)} of {len(mine)} task file(s) have no reference "
                               "solution on the local data, so egi/oracle errors on them (first: "
                               f"{unsolved[0].id}: {unsolved[0].data['unsolvable']})")  # fmt: skip
        return out

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """Run the task's evaluators on the final answer (reference §1.5–1.6).

        Per-task values: ``passed`` (1/0), ``evaluator_score`` (passed / evaluators, 0–1),
        ``steps`` (model calls), and ``<kind>_passed`` / ``<kind>_total`` counts per evaluator
        kind. No answer (the core's ``no_answer_reason``, including a ReAct budget that ran
        out) fails every evaluator, with that reason. Stateful checks read the state stored in
        the trajectory, so rescoring reproduces the score. ``failure_kind``: ``turn_limit``
        (the budget ran out) / ``no_answer``, ``gave_up`` ("I don't know."-style), else
        ``state_differs`` (a ``github.*`` state check failed) or ``wrong_answer``.

        Raises:
            JudgeError: the LLM judge (``--egi-judge-model``) gave no usable verdict.
        """
        from suites.mcp_universe.scorer.evaluator import (
            EvalContext,
            EvaluatorResult,
            evaluate,
            evaluator_kind,
        )

        evaluators = task.data["evaluators"]
        answer = trajectory.get("final_answer")
        why = no_answer_reason(trajectory)
        info = (trajectory.get("info") or {}).get("mcp_universe") or {}
        ctx = EvalContext(
            seed=int(task.data["seed"]), state=info.get("state") or {}, env=TEMPLATE_ENV, judge=judge
        )
        if why is not None:
            results = [
                EvaluatorResult(
                    i,
                    ev.get("func") or "",
                    ev.get("op") or "",
                    evaluator_kind(ev),
                    False,
                    f"no answer: {why}",
                    ev.get("desc") or "",
                )
                for i, ev in enumerate(evaluators)
            ]
        else:
            text = answer if isinstance(answer, str) else _as_text(answer)
            results = [evaluate(ev, text, ctx, i) for i, ev in enumerate(evaluators)]
        passed = all(r.passed for r in results)
        values: dict[str, float | None] = {
            "passed": 1.0 if passed else 0.0,
            "evaluator_score": sum(r.passed for r in results) / len(results),
            "steps": float(trajectory.get("turns") or 0),
        }
        for kind in KINDS:
            mine = [r for r in results if r.kind == kind]
            values[f"{kind}_passed"] = float(sum(r.passed for r in mine))
            values[f"{kind}_total"] = float(len(mine))
        failing = [f"evaluator {r.index} ({r.op or r.func}): {r.reason}" for r in results if not r.passed]
        details: dict[str, Any] = {"evaluators": [r.to_dict() for r in results]}
        if ctx.notes:
            details["judge_notes"] = ctx.notes
        kind = None
        if not passed:  # a failed github.* check reads the repository's state, the rest the answer
            state = any(not r.passed and str(r.op).startswith("github.") for r in results)
            kind = ending_kind(trajectory) or ("state_differs" if state else "wrong_answer")
        return TaskScore(
            success=passed,
            failure_kind=kind,
            values=values,
            expected=[r.desc or f"{r.func} {r.op}".strip() for r in results],
            got={"failed": failing, "answer": _clip(answer if why is None else f"no answer ({why})")},
            details=details,
        )

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Per domain that ran: :func:`summarize_domain`; domains with no record are left out."""
        out: dict[str, float | None] = {}
        for domain, values in values_by_category(records, DOMAINS).items():
            out.update(summarize_domain(domain, values))
        return out

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns | None:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`):
        per domain, :data:`DOMAIN_COLUMNS`; ``finish`` gives every key :meth:`summarize`
        returns, for the domains with a task. None when :meth:`summarize` would raise."""
        return SummaryColumns.per_category(
            records, DOMAINS, DOMAIN_COLUMNS, SummaryColumns.each_record(domain_row), finish_domain
        )

    def extra_files(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """``<domain>_results.json``: per task, upstream's report line (Passed / Not Passed,
        Score = passed evaluators / evaluators) and each evaluator's outcome and reason."""
        out: dict[str, dict[str, Any]] = defaultdict(dict)
        for rec in records:
            if rec.get("category") not in DOMAINS or not rec.get("values"):
                continue
            evs = (rec.get("details") or {}).get("evaluators") or []
            key = str(rec.get("task_id")) + (f"-t{rec['trial']}" if rec.get("trial") else "")
            out[f"{rec['category']}_results.json"][key] = {
                "passed": bool(rec["values"].get("passed")),
                "score": rec["values"].get("evaluator_score"),
                "evaluators": evs,
            }
        return dict(out)


def _task(record: dict[str, Any], domain: str, run: dict[str, Any]) -> Task:
    """The task of a task record: ``not_runnable`` becomes ``Task.cannot_run`` (the core skips
    the item with the reason, its file first), ``load_error`` becomes ``Task.load_error`` (the
    item errors alone: ``<file>: task '<id>' could not be loaded: <field, problem, fix>``)."""
    data = {k: v for k, v in record.items() if k not in ("not_runnable", "load_error")}
    source = str(record.get("source") or "")
    reason, error = record.get("not_runnable"), record.get("load_error")
    if reason and source and not reason.startswith(source):
        reason = f"{source}: {reason}"
    if error:
        error = error.removeprefix(f"{source}: ") if source else error
        error = f"{source or 'mcp_universe'}: task {record['id']!r} could not be loaded: {error}"
    return Task(id=record["id"], category=domain, data={**data, **run}, cannot_run=reason or None,
                load_error=error or None)  # fmt: skip


def _with_reference(domain: str, task: dict[str, Any], seed: int) -> dict[str, Any]:
    """A task file's task with its ``reference`` computed from the local data (what egi/oracle
    replays); or, when there is none, the reason: ``not_runnable`` (the local data cannot
    answer the question: upstream's web_search files), ``load_error`` (its evaluators cannot be
    run on the local data, e.g. a date before the price history), ``unsolvable`` (the solver
    cannot answer it, or failed on it: the file and the task are named). Never raises; a task
    that did not load is returned as it is.
    """
    import json

    from suites.mcp_universe.data.domains import NotSolvable, Unanswerable
    from suites.mcp_universe.scorer.evaluator import EvaluatorSpecError

    if task.get("reference") is not None or task.get("not_runnable") or task.get("load_error"):
        return task
    where = task.get("source", task["id"])
    try:
        reference = domain_module(domain).solve(task, seed)
    except Unanswerable as exc:
        return {**task, "not_runnable": str(exc)}
    except NotSolvable as exc:
        return {**task, "unsolvable": str(exc)}
    except EvaluatorSpecError as exc:
        error = (f"{where}: its evaluators cannot be checked on the local data: {exc}; fix: change "
                 "the evaluator's value or op_args, or leave the task out")  # fmt: skip
        return {**task, "load_error": error}
    except Exception as exc:  # a defect of the solver: this task alone goes without a reference
        why = f"the reference solver failed on {where} (task {task['id']}): {type(exc).__name__}: {exc}"
        return {**task, "unsolvable": why}
    return {**task, "reference": json.loads(json.dumps(reference))}  # plain JSON, as a record holds it


def _wanted(profile: SuiteProfile) -> list[str]:
    """The profile's domains (all when it names none).

    Raises:
        ValueError: an unknown category.
    """
    return profile_categories(profile, DOMAINS,
                              message="unknown categories {unknown} in the profile; known: {known}")


def _select(by_domain: Mapping[str, Sequence[T]], profile: SuiteProfile,
            per_category: bool = True) -> list[tuple[str, T]]:  # fmt: skip
    """``(domain, item)`` of the profile's share of ``by_domain`` (tasks or their ids; the draw
    reads only how many each domain has): with ``per_category``, a seeded sample of each
    domain (salt ``per_category|<domain>``), then the domains in report order
    (:data:`DOMAINS`, then the unknown one), then a seeded sample of ``limit`` in all (salt
    ``limit``), each kept in its original order. Shared by ``load_tasks`` and ``task_index``
    so the two cannot differ."""
    out: list[tuple[str, T]] = []
    for domain in (*DOMAINS, UNKNOWN_DOMAIN):
        items = list(by_domain.get(domain, []))
        if per_category:
            items = seeded_sample(items, profile.per_category, profile.seed, f"per_category|{domain}")
        out += [(domain, x) for x in items]
    return seeded_sample(out, profile.limit, profile.seed, "limit")


def _profile_iterations(profile: SuiteProfile) -> int:
    """The profile's ``max_iterations`` (20 when absent).

    Raises:
        ValueError: not a whole number of at least 1.
    """
    value = (profile.model_extra or {}).get("max_iterations", 20)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_iterations in the profile is {value!r}; fix: give a whole number "
                         "of model calls of at least 1 (upstream's configs use 20)")  # fmt: skip
    return value


def _as_text(answer: Any) -> str:
    import json

    return json.dumps(answer)


def _clip(value: Any, limit: int = 2000) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return value[: limit - 1] + "…"
    return value


SUITE = McpUniverseSuite()
"""The object the core loads (``suites.mcp_universe.SUITE``)."""
