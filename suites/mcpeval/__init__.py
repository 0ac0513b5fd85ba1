"""MCPEval (Liu et al., 2025, arXiv 2507.12806): tool-call trajectory matching over MCP servers.

Each task asks the model to do something with one domain's MCP server (Airbnb stays,
healthcare lookups, sports data, national parks, yfinance market data); the model's executed
tool calls are compared with the task's ground-truth calls by upstream's static rules
(:func:`suites.mcpeval.scorer.compare_tool_calls`). Categories are the domains. Native
sub-metrics per domain (see ``summarize``): ``<domain>.flexible_avg`` (routed to M2) and the
reported success rates and name / parameter / order averages (0–1). Tasks are generated from
templates over each local server's seeded world (:mod:`suites.mcpeval.data`), or loaded from
a file in one of upstream's layouts with ``--egi-opt mcpeval.tasks=PATH`` (a task that cannot
run here is skipped alone with its reason). The servers run with their open worlds, so tasks
naming real-world values run. Differences from upstream (README.md's table): the calls are
scored whatever the final reply (``no_answer_rate`` is a diagnostic), malformed calls are
scored as calls without parameters, every task that ran is scored, and the worlds are
synthetic. See README.md here.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.models.offline import Noise
from pytest_egi.outcomes import ending_kind
from pytest_egi.suite import (
    SuiteProfile,
    SummaryColumns,
    Task,
    TaskScore,
    load_each,
    profile_categories,
    suite_options,
    values_by_category,
)
from suites.mcpeval.data import (
    DOMAINS,
    UNSUPPORTED,
    generate_tasks,
    generated_task_ids,
    read_task_entries,
    replay_problem,
    task_of,
    tool_domain,
)
from suites.mcpeval.policy import McpevalPolicy
from suites.mcpeval.scorer import (
    DOMAIN_COLUMNS,
    call_failure_kind,
    compare_tool_calls,
    completion_judge_messages,
    domain_row,
    finish_domain,
    parse_judge_verdict,
    predicted_calls,
    sub_metric_names,
    summarize_domain,
    summary_analysis_file,
    task_metrics_file,
    task_result_entry,
    task_values,
    trajectory_judge_messages,
)

__all__ = ["SUITE", "McpevalOptions", "McpevalSuite"]


class McpevalOptions(BaseModel):
    """``--egi-opt mcpeval.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    tasks: Path | None = None
    """A task file in the original MCPEval JSONL format, run instead of the generated tasks
    (each task's domain is the server that serves the tools its ``tool_calls`` name)."""
    max_turns: int | None = Field(default=None, ge=1)
    """Turn limit per task; None uses the profile's ``max_turns`` (20)."""


def _options(options: Any) -> McpevalOptions:
    return suite_options(McpevalOptions, options)


T = TypeVar("T")


def _wanted(profile: SuiteProfile) -> list[str]:
    """The profile's categories (all domains when it names none).

    Raises:
        ValueError: an unknown category.
    """
    return profile_categories(profile, DOMAINS)


def _max_turns(profile: SuiteProfile) -> int:
    """The profile's ``max_turns`` (20 when absent).

    Raises:
        ValueError, TypeError: not a whole number.
    """
    return int((profile.model_extra or {}).get("max_turns") or 20)


def _select(by_domain: Mapping[str, Sequence[T]], profile: SuiteProfile,
            domains: Sequence[str]) -> list[tuple[str, T]]:  # fmt: skip
    """``(domain, item)`` of the profile's share of ``by_domain`` (tasks or their ids): the
    ``domains`` in order, the first ``per_category`` of each, then the first ``limit`` in all.
    Shared by ``load_tasks`` and ``task_index`` so the two cannot differ."""
    out: list[tuple[str, T]] = []
    for domain in domains:
        items = list(by_domain.get(domain, []))
        out += [(domain, x) for x in (items[: profile.per_category] if profile.per_category else items)]
    return out[: profile.limit]


@lru_cache(maxsize=16)
def _generated(domain: str, seed: int) -> tuple[dict[str, Any], ...]:
    return tuple(generate_tasks(domain, seed))


_ID = re.compile(r"[A-Za-z0-9_.:-]+")


def _file_tasks(path: Path, seed: int, extra: dict[str, Any]) -> list[Task]:
    """The tasks of a user's task file, record by record (see :meth:`McpevalSuite.load_tasks`).

    Raises:
        ValueError: a problem of the whole file (:func:`~suites.mcpeval.data.read_task_entries`).
    """
    kind, records = read_task_entries(path)
    ids: set[str] = set()
    used: set[str] = set()

    def inner(record: Any) -> Any:
        return record.get("task") if kind == "result" and isinstance(record, dict) else record

    def task_id(entry: tuple[str, Any], _index: int) -> str:
        where, record = entry
        task = inner(record)
        own = task.get("task_id" if kind == "metrics" else "id") if isinstance(task, dict) else None
        if not (isinstance(own, str) and _ID.fullmatch(own)) or own in used:
            own = re.sub(r"[^A-Za-z0-9_.:-]+", "-", f"{path.stem}-{where}").strip("-.")
        used.add(own)
        return own

    def category(entry: tuple[str, Any]) -> str:
        calls = inner(entry[1]).get("ground_truth_calls" if kind == "metrics" else "tool_calls")
        names = {c.get("tool_name") for c in calls if isinstance(c, dict)}
        return tool_domain({n for n in names if isinstance(n, str)}) or UNSUPPORTED

    def build(entry: tuple[str, Any]) -> Task:
        where, record = entry
        domain, task = task_of(kind, record, where, ids)
        used.add(task["id"])
        if "unrunnable" not in task:
            problem = replay_problem(domain, seed, task["tool_calls"])
            if problem is not None:
                task["unrunnable"] = (f"its ground truth cannot run on the local {domain} server "
                                      f"(seed {seed}): {problem}")  # fmt: skip
        reason = task.pop("unrunnable", None)
        return Task(id=task["id"], category=domain, data={**task, **extra, "file": str(path)},
                    cannot_run=None if reason is None else f"{where} of {path.name}: {reason}")  # fmt: skip

    return load_each(records, build, file=str(path), category=category, task_id=task_id,
                     fallback_category=UNSUPPORTED)  # fmt: skip


class McpevalSuite:
    """The MCPEval suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "mcpeval"
    version = "1"
    categories = DOMAINS
    item_seconds = {"*": 0.15}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    options_model = McpevalOptions
    profile_keys = frozenset({"max_turns"})
    sub_metrics = sub_metric_names(DOMAINS)
    diagnostics = frozenset(k for k in sub_metrics if not k.endswith(".flexible_avg"))
    null_floor: dict[str, float] = {}
    sub_metric_notes = {
        f"{d}.flexible_avg": "mean flexible overall tool-call match score (0-1); "
        "a task with no tool call scores 0"
        for d in DOMAINS
    }

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """The generated tasks of the profile's domains (``<domain>-NNN``, template order), or
        the task file's tasks (every domain in it, whatever the profile's categories);
        ``per_category`` / ``limit`` keep the first ones of each domain.

        A task file is read record by record (:func:`pytest_egi.suite.load_each`): a
        malformed record (not an object, a line that is not JSON, a field missing or of the
        wrong type, a repeated or unusable id) is a task whose item errors alone, naming the
        file, the task, the line or record, the field and the fix. A task that cannot run here
        is skipped with the reason (``Task.cannot_run``: ``<line|record> of <file name>:
        <reason>``): see :func:`~suites.mcpeval.data.load_task_file`, and a ground truth
        whose calls fail or return nothing on the local server (replayed on the open world
        the servers serve). A malformed record's category is the domain of the tools it
        names, else ``unsupported``; its id is its own when readable and free, else
        ``<file stem>-<line|record>-<n>``.

        Raises:
            ValueError: a problem of the whole input, a usage error: an unknown category, or a
                task file that cannot be read, is not JSON / JSONL, holds no task or is
                upstream's summary analysis (names the file and the fix).
        """
        opts = _options(options)
        wanted = _wanted(profile)
        extra = {"seed": profile.seed, "max_turns": _max_turns(profile)}
        by_domain: dict[str, list[Task]] = defaultdict(list)
        if opts.tasks is not None:
            for task in _file_tasks(Path(opts.tasks), profile.seed, extra):
                by_domain[task.category].append(task)
            return [t for _, t in _select(by_domain, profile, (*DOMAINS, UNSUPPORTED))]
        for domain in wanted:
            by_domain[domain] = [Task(id=t["id"], category=domain, data={**t, **extra})
                                 for t in _generated(domain, profile.seed)]  # fmt: skip
        return [t for _, t in _select(by_domain, profile, [d for d in DOMAINS if d in wanted])]

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, domain)`` of each task :meth:`load_tasks` returns, in order, without
        generating them (:func:`~suites.mcpeval.data.generated_task_ids`, the same
        :func:`_select`); None for a task file (``mcpeval.tasks``) or a profile ``load_tasks``
        refuses."""
        if _options(options).tasks is not None:
            return None
        try:
            wanted = _wanted(profile)
            _max_turns(profile)
        except (TypeError, ValueError):
            return None
        by_domain = {d: generated_task_ids(d) for d in wanted}
        return [(tid, d) for d, tid in _select(by_domain, profile, [d for d in DOMAINS if d in wanted])]

    def prepare(self, tasks: list[Task], options: Any) -> None:
        """Start the MCP server of every domain the runnable tasks use (once per process,
        before the first item; stopped at session end)."""
        from suites.mcpeval.agent import server_for

        for domain, seed in sorted({(t.category, t.data["seed"]) for t in tasks}):
            server_for(domain, seed).start()

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: let go of the generated
        tasks and the open worlds' replayers kept here, and of the shared servers' worlds
        its scorer read (made again, the same, if an item comes back). (The core stops the
        MCP servers its items used.)"""
        from suites._common.release import clear_caches

        clear_caches("suites.mcpeval:_generated", "suites.mcpeval.data:_open_replayers",
                     "suites._common.mcp_servers.maps:build_world",
                     "suites._common.mcp_servers.search:search_index",
                     "suites._common.mcp_servers.web_corpus:build_corpus",
                     "suites._common.mcp_servers.repository:_world_json")  # fmt: skip

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> McpevalPolicy:
        """The reference agent for ``task`` (oracle at p = 0); see ``policy.py``. (A task that
        cannot run, ``Task.cannot_run``, is skipped by the core before this is called.)"""
        return McpevalPolicy(task.data, task.category, noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """Compare the calls the model made with the ground truth (reference §2.4).

        Per-task values: :func:`~suites.mcpeval.scorer.task_values` (0–1). Success: flexible
        success. The calls are scored whatever the final reply, as upstream's ``analyze``
        reads only ``tool_calls``: a blank or cut-off reply, or turns run out (the core's
        ``no_answer_reason``), is the diagnostic ``no_answer``, never a zero. No tool call
        made is an empty prediction (zero scores, a failure). A malformed call (no tool name,
        arguments that are not a JSON object) counts as a call with no parameters
        (:func:`~suites.mcpeval.scorer.predicted_calls`); ``got`` and ``details`` say which.

        ``failure_kind`` of a failed trial: how the episode ended first (``no_answer``,
        ``turn_limit``, ``gave_up``: :func:`pytest_egi.outcomes.ending_kind`), else the
        matcher's (:func:`~suites.mcpeval.scorer.call_failure_kind`: ``wrong_tool``,
        ``wrong_argument``, ``missing_call``, ``extra_call``).

        With an LLM judge (``--egi-judge-model``), the trajectory and the final response are
        also graded on upstream's aspects (reference §2.6): ``judge_trajectory`` and
        ``judge_completion`` are the verdicts' overall scores (0–1), reported, never routed,
        and None when the judge gave no usable verdict (missing, never zero). Rescoring
        without a judge leaves them None.
        """
        gold = task.data["tool_calls"]
        pred, malformed = predicted_calls(trajectory.get("tool_calls") or [])
        why = no_answer_reason(trajectory)
        evaluation = compare_tool_calls(gold, pred)
        got: list[str] | str = [f"{c['tool_name']}({c['tool_parameters']})" for c in pred]
        if not pred:
            got = "no prediction (no tool call made)"
        elif malformed or why is not None:
            got = [*got, *(f"malformed {m}" for m in malformed),
                   *([f"no final answer: {why}"] if why is not None else [])]  # fmt: skip
        entry = task_result_entry(task.id, gold, pred, evaluation)
        verdicts = _judge(judge, task, trajectory) if judge is not None else {}
        details: dict[str, Any] = {"task_result": entry}
        if malformed:
            details["malformed_calls"] = malformed
        if why is not None:
            details["no_answer"] = why
        if judge is not None:
            details["judge"] = verdicts
        success = bool(evaluation["flexible"]["success"])
        return TaskScore(
            success=success,
            failure_kind=None if success else ending_kind(trajectory) or call_failure_kind(gold, pred),
            values=task_values(
                evaluation,
                no_answer=why is not None,
                judge_trajectory=_overall(verdicts.get("trajectory")),
                judge_completion=_overall(verdicts.get("completion")),
            ),
            expected=[f"{c['tool_name']}({c['tool_parameters']})" for c in gold],
            got=got,
            details=details,
        )

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Per domain that ran: :func:`~suites.mcpeval.scorer.summarize_domain` (0–1 means,
        counts); domains with no record are left out."""
        out: dict[str, float | None] = {}
        for domain, values in values_by_category(records, DOMAINS).items():
            out.update(summarize_domain(domain, values))
        return out

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns | None:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`):
        per domain, :data:`~suites.mcpeval.scorer.DOMAIN_COLUMNS` (tasks, each value's sum
        and count); ``finish`` gives every key :meth:`summarize` returns, for the domains
        with a task. None when a record's values would make :meth:`summarize` raise."""
        return SummaryColumns.per_category(
            records, DOMAINS, DOMAIN_COLUMNS, SummaryColumns.each_record(domain_row), finish_domain
        )

    def extra_files(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """Upstream's per-domain files: ``<domain>_task_metrics.json`` and
        ``<domain>_summary_analysis.json`` (reference §2.5) over the scored records."""
        entries: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for rec in records:
            entry = (rec.get("details") or {}).get("task_result")
            if rec.get("category") in DOMAINS and entry:
                entries[rec["category"]].append(entry)
        out: dict[str, Any] = {}
        for domain, es in sorted(entries.items()):
            out[f"{domain}_task_metrics.json"] = task_metrics_file(es)
            out[f"{domain}_summary_analysis.json"] = summary_analysis_file(es)
        return out


def _judge(judge: Any, task: Task, trajectory: dict[str, Any]) -> dict[str, Any]:
    """Ask the LLM judge for upstream's two gradings (reference §2.6); each verdict is the
    parsed dict or None when the judge gave no usable one."""
    conversation = trajectory.get("messages") or []
    final = trajectory.get("final_answer")
    final_text = final if isinstance(final, str) else (None if final is None else str(final))
    return {
        "trajectory": judge.ask(
            trajectory_judge_messages(
                task.data, conversation, expected_tool_calls=task.data.get("tool_calls")
            ),
            lambda reply: parse_judge_verdict(reply, "trajectory"),
        ),
        "completion": judge.ask(
            completion_judge_messages(
                task.data, final_text, conversation, expected_answer=task.data.get("final_response")
            ),
            lambda reply: parse_judge_verdict(reply, "completion"),
        ),
    }


def _overall(verdict: dict[str, Any] | None) -> float | None:
    return None if verdict is None else float(verdict["overall"])


SUITE = McpevalSuite()
"""The object the core loads (``suites.mcpeval.SUITE``)."""
