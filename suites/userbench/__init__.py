"""UserBench (Qian et al., 2025, arXiv 2507.22034): multi-turn travel planning with a user who
hides preferences (TravelGym).

Each task is a trip (two to four aspects among flight, hotel, apartment, restaurant and rental
car) whose traveller holds hidden preferences per aspect; the agent talks to the user, searches
a fixed option database and recommends option ids through the single tool
``interact_with_env(thought, choice, content)`` (``agent.py``; environment rules in ``env.py``).
The user and the search judge are deterministic rules by default (``simulator.py``); the world
is generated from the seed (``data.py``, ``catalogue.py``). Categories are upstream's
environments ``travel22`` ... ``travel2222``; native sub-metrics per environment
(``scorer.py``): ``<env>.micro_avg`` (routed to M3 for travel22/33/44), ``micro_max``,
``avg_number_of_1``, ``avg_number_of_08``, ``normalized_score``, the active and passive
elicitation rates, ``best_rate``, ``tasks``, ``micro_avg_ceiling`` (the most ``micro_avg`` the
tasks allow; ``oracle_ceiling``) and a true pass^k over trials (``pass_hat_k``, ``pass_hat_k_k``).

Default mode is multi-choice, as upstream's harness ran (``eval.py``'s defaults, the
``<env>_multiturn`` rows): the agent may answer several times, and one answer may name several
ids, whose rewards add up within the turn (upstream's async step). ``--egi-opt
userbench.one_choice=true`` selects one-choice (one recommendation per aspect, the
``*_onechoice`` rows). The episode ends only where upstream's async step ends it (every best
id recommended, ``[finish]``, or the turn limit), in either mode.

``--egi-opt userbench.data_dir=PATH`` loads upstream's released parquet rows instead of the
generated tasks (``upstream.py``); with ``userbench.scenarios=DIR`` (upstream's
``travelgym/data`` folder) each row gets its scenario and runs; without it those items are
skipped with the reason (the core's data warning counts them per environment). A row the suite
cannot run on the given files (no scenario) is skipped alone with its reason; a malformed row
(a bad field, a repeated id, a malformed scenario) errors alone, naming the file, the task, the
row, the field and the fix (issue 22).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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
from suites.userbench.data import (
    ENVIRONMENTS,
    TEST_SIZES,
    env_digits,
    generate_tasks,
    generated_task_ids,
)
from suites.userbench.policy import UserbenchPolicy
from suites.userbench.scorer import (
    ENV_COLUMNS,
    env_rows,
    finish_env,
    normalized_score,
    pass_hat_k_by_task,
    reference_micro_avg,
    sub_metric_names,
    summarize_env,
    task_metrics,
)

__all__ = ["SUITE", "UserbenchOptions", "UserbenchSuite"]

ROUTED_ENVIRONMENTS = ("travel22", "travel33", "travel44")
"""The environments whose ``micro_avg`` routing.yaml routes (the default eval set, reference §2.2)."""


class UserbenchOptions(BaseModel):
    """``--egi-opt userbench.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    one_choice: bool = False
    """One recommendation per aspect (``true`` / ``1`` / ``yes``); the default ``false`` is
    multi-choice, upstream harness's setting (pydantic's boolean parsing, unlike upstream's
    ``type=bool`` flag)."""
    max_turns: int | None = Field(default=None, ge=1)
    """Turn limit (= environment ``max_steps``); None uses the profile's ``max_turns`` (20)."""
    data_dir: Path | None = None
    """Upstream's ``data/`` folder (``<env>_multiturn[_onechoice]/<split>.parquet``) to load
    instead of the generated tasks (``upstream.py``)."""
    scenarios: Path | None = None
    """Upstream's ``travelgym/data`` folder (``travelgym_data_<digits>.json``): the scenarios of
    the ``data_dir`` rows, which then run (``upstream.scenario_task``)."""
    data_split: str = Field(default="test", pattern=r"^[A-Za-z0-9_-]+$")
    """The parquet file's stem under ``data_dir`` (upstream: ``test``, ``train``)."""


def _options(options: Any) -> UserbenchOptions:
    return suite_options(UserbenchOptions, options)


def _wanted(profile: SuiteProfile) -> list[str]:
    """The profile's environments, in :data:`ENVIRONMENTS` order (all when it names none).

    Raises:
        ValueError: an unknown category.
    """
    return profile_categories(profile, ENVIRONMENTS, ordered=True,
                              message="userbench: unknown categories {unknown}; known: {known}")


def _common(profile: SuiteProfile) -> dict[str, Any]:
    """The run settings every task of the profile carries (seed, max_turns, temperature,
    pass_k).

    Raises:
        ValueError, TypeError: a profile value that is not a number.
    """
    extra = profile.model_extra or {}
    return {"seed": profile.seed, "max_turns": int(extra.get("max_turns") or 20),
            "temperature": float(extra.get("temperature", 1.0)),
            "pass_k": int(extra.get("pass_k") or 1)}  # fmt: skip


def _count(env: str, profile: SuiteProfile) -> int:
    """How many generated tasks of ``env`` the profile runs (``per_category``, else upstream's
    test-split size): shared by ``load_tasks`` and ``task_index``."""
    return profile.per_category or TEST_SIZES[env]


@lru_cache(maxsize=32)
def _generated(env: str, seed: int, count: int) -> tuple[dict[str, Any], ...]:
    return tuple(generate_tasks(env, seed, count))


class UserbenchSuite:
    """The UserBench suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "userbench"
    version = "2"
    categories = ENVIRONMENTS
    item_seconds = {"*": 0.06}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    options_model = UserbenchOptions
    profile_keys = frozenset({"max_turns", "pass_k", "temperature"})
    sub_metrics = sub_metric_names(ENVIRONMENTS)
    diagnostics = frozenset(
        k for k in sub_metrics if k not in {f"{e}.micro_avg" for e in ROUTED_ENVIRONMENTS}
    )
    null_floor: dict[str, float | None] = {}
    oracle_ceiling: dict[str, str] = {f"{e}.micro_avg": f"{e}.micro_avg_ceiling" for e in ROUTED_ENVIRONMENTS}
    """Routed sub-metric -> the diagnostic holding the most this run's tasks allow (the
    reference protocol's ``micro_avg``, ``scorer.reference_rewards``); egi/oracle equals it."""
    sub_metric_notes = {
        f"{e}.micro_avg": "mean over tasks of the per-turn average reward (0-1); an agent that asks one "
        "question per preference and picks every best option scores (1.2A+0.2P)/(2A+P), not 1: "
        f"{e}.micro_avg_ceiling (in multi-choice, listing other correct options too, 0.8 each, lifts "
        "micro_avg above it, as upstream's metric allows)"
        for e in ROUTED_ENVIRONMENTS
    } | {
        f"{e}.pass_hat_k": "true pass^k (tau-bench) of the item's success over each task's trials, k = "
        f"{e}.pass_hat_k_k; upstream's --pass_k scored only the last rollout"
        for e in ROUTED_ENVIRONMENTS
    }

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """The generated tasks of the profile's environments (``<env>-NNN``): ``per_category``
        of each (default: upstream's test-split size), then ``limit`` in all. With
        ``data_dir``, upstream's parquet rows of those environments instead (same cuts; ids as
        :func:`~suites.userbench.upstream.upstream_task_id`), runnable with their scenarios
        (``scenarios``), else skipped with the reason (``Task.cannot_run``: ``<file>, row
        <i>: <reason>``); a malformed row or scenario is a task whose item errors alone
        (:func:`pytest_egi.suite.load_each`: the file, the task, the row, the field and the
        fix).

        Raises:
            ValueError: unknown category; with ``data_dir``, a missing or unreadable file or
                column, or with ``scenarios`` a missing folder or a scenario file that is not
                one JSON object (the message names the file and fix).
        """
        opts = _options(options)
        wanted = _wanted(profile)
        common = _common(profile)
        out: list[Task] = []
        for env in wanted:
            if opts.data_dir is not None:
                from suites.userbench.upstream import load_upstream_tasks  # pyarrow on first use

                rows = load_upstream_tasks(opts.data_dir, env, opts.one_choice, opts.data_split,
                                           opts.scenarios, profile.seed)  # fmt: skip
                found = rows[: profile.per_category] if profile.per_category else rows
            else:
                found = list(_generated(env, profile.seed, _count(env, profile)))
            out += load_each(found, lambda t, env=env: _task(t, env, common), category=env,
                             file=lambda t: (t.get("source") or {}).get("file"),
                             task_id=lambda t, _i: t["id"])  # fmt: skip
        if profile.limit is not None:
            out = out[: profile.limit]
        return out

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: let go of the generated
        tasks kept here (generated again, the same, if needed)."""
        _generated.cache_clear()

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, environment)`` of each task :meth:`load_tasks` returns, in order, without
        generating them (:func:`~suites.userbench.data.generated_task_ids` of the same counts);
        None with ``data_dir`` (upstream's rows) or a profile ``load_tasks`` refuses."""
        if _options(options).data_dir is not None:
            return None
        try:
            wanted = _wanted(profile)
            _common(profile)
        except (TypeError, ValueError):
            return None
        out = [(tid, env) for env in wanted for tid in generated_task_ids(env, _count(env, profile))]
        return out[: profile.limit]

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> UserbenchPolicy:
        """The reference agent for ``task`` (oracle at p = 0); see ``policy.py``. (A task that
        cannot run, ``Task.cannot_run``, is skipped by the core before this is called.)"""
        return UserbenchPolicy(task.data, noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """Score the per-turn rewards the environment gave (``info["userbench"]``).

        Values: :func:`~suites.userbench.scorer.task_metrics` of the rewards, the normalised
        score, ``active_rate`` / ``passive_rate`` (revealed preferences over the task's) and
        ``all_best``. Success: every aspect's best option was recommended.

        The rewards stand whatever ended the episode (turns ran out, a reply without a tool
        call, the context overflowed), as in upstream's harness: UserBench scores each turn,
        not a final answer, so the core's no-answer rule shows as a failed item and credits
        nothing (no turn, no reward); an episode with no scored turn is upstream's ``[0]``.

        ``failure_kind`` of a failed trial: ``wrong_argument`` (the episode ended on a malformed
        ``interact_with_env`` call), else how it ended (``turn_limit``, ``no_answer``,
        ``gave_up``: :func:`pytest_egi.outcomes.ending_kind`), else ``wrong_answer`` (not every
        aspect's best option was recommended).
        """
        info = (trajectory.get("info") or {}).get("userbench") or {}
        max_turns = int(getattr(options, "max_turns", None) or task.data.get("max_turns") or 20)
        rewards = [float(r) for r in info.get("rewards") or []]
        metrics = task_metrics(rewards)
        n_prefs = len(task.data["preferences"]) or 1  # generated and loaded tasks have some
        remaining = info.get("best_remaining")
        all_best = remaining == [] if remaining is not None else False
        values: dict[str, float | None] = {
            **metrics,
            "normalized_score": normalized_score(info.get("turns") or [], task.category),
            "active_rate": float(info.get("active") or 0) / n_prefs,
            "passive_rate": float(info.get("passive") or 0) / n_prefs,
            "all_best": 1.0 if all_best else 0.0,
            # the reference protocol's micro_avg, in either mode (the episode ends at the last
            # best id in both); in multi-choice an agent that also lists other correct options
            # (0.8 each, or summed in one answer) scores above it, as upstream's metric allows
            "micro_avg_ceiling": reference_micro_avg(task.data, max_turns=max_turns),
        }
        expected = [task.data["best_id"][a] for a in task.data["dimensions"]]
        got = f"answers {info.get('answers') or []}, rewards {rewards}, ended: {info.get('ended', 'unknown')}"
        kind = None
        if not all_best:  # a malformed call is the model's mistake; then how the episode ended
            kind = ("wrong_argument" if info.get("ended") == "malformed_call"
                    else ending_kind(trajectory) or "wrong_answer")
        return TaskScore(success=all_best, values=values, expected=expected, got=got, failure_kind=kind,
                         details={"rewards": rewards, "env": task.category,
                                  "aspects": len(env_digits(task.category)),
                                  "pass_k": int(task.data.get("pass_k") or 1)})  # fmt: skip

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Per environment that ran: :func:`~suites.userbench.scorer.summarize_env` of its
        trials, with pass^k over each task's trials (k: the profile's ``pass_k`` when above 1,
        kept in each record's ``details``, else the trials each task ran)."""
        out: dict[str, float | None] = {}
        for env, values in values_by_category(records, ENVIRONMENTS).items():
            mine = [r for r in records if r.get("category") == env]
            k = max(int((r.get("details") or {}).get("pass_k") or 1) for r in mine)
            out.update(summarize_env(env, values, pass_hat_k_by_task(mine, k if k > 1 else None)))
        return out

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`):
        per environment, :data:`~suites.userbench.scorer.ENV_COLUMNS`; ``finish`` gives every
        key :meth:`summarize` returns, for the environments with a trial, but ``pass_hat_k``
        and ``pass_hat_k_k`` (diagnostics) of an environment whose k depends on the tasks
        drawn (:func:`~suites.userbench.scorer.env_rows`)."""
        ks: dict[str, int | None] = {}  # per environment, the k of its pass^k (env_rows)

        def rows(env: str, recs: list[dict[str, Any]]) -> list[list[float]]:
            out, ks[env] = env_rows(recs)
            return out

        return SummaryColumns.per_category(  # type: ignore[return-value]  # rows never gives None
            records, ENVIRONMENTS, ENV_COLUMNS, rows, lambda env, sums: finish_env(env, sums, ks.get(env))
        )


def _task(record: dict[str, Any], env: str, common: dict[str, Any]) -> Task:
    """The task of one record (generated, or an upstream row): skipped with its reason when it
    carries ``not_runnable`` (``<file>, row <i>: <reason>``).

    Raises:
        RowError: the record carries ``load_error`` (a malformed row or scenario).
    """
    from suites.userbench.upstream import RowError

    if record.get("load_error"):
        raise RowError(record["load_error"])
    data = {k: v for k, v in record.items() if k != "not_runnable"}
    reason = record.get("not_runnable")
    if reason:
        source = record.get("source") or {}
        reason = f"{source.get('file')}, row {source.get('row')}: {reason}"
    return Task(id=record["id"], category=env, data={**data, **common}, cannot_run=reason or None)


SUITE = UserbenchSuite()
