"""UserBench metric formulas (reference §2.8), kept bit for bit, plus the reported extras.

Per rollout, upstream's harness keeps the list of per-turn rewards ``r_1..r_T`` (``[0]`` when
the rollout ended before any turn was scored). Per environment, over its tasks:

- ``micro_avg`` = mean over tasks of ``sum(r) / T`` (routed to M3 for travel22/33/44);
- ``micro_max`` = mean over tasks of ``max(r)``;
- ``avg_number_of_1`` = mean over tasks of ``r.count(1.0)`` (best picks);
- ``avg_number_of_08`` = mean over tasks of ``r.count(0.8)`` (correct, not best).
  Exact float equality, as upstream: rewards are the environment constants unchanged.

Reported beside them (not routed): ``normalized_score`` (UserRL ``analyze.py``: per aspect the
highest reward of its answer turns, summed, divided by the number of aspects, the digits of
the environment name; the aspect is read from the answered id, not from the first character
of the whole content as upstream did, reference §2.9 item 11), ``active_elicitation_rate`` /
``passive_elicitation_rate`` (mean over tasks of preferences revealed when asked / volunteered
by the user, over the task's preferences), ``best_rate`` (share of tasks where every aspect's
best option was recommended: the item's success rule) and ``tasks``.

Also reported (diagnostics):

- ``micro_avg_ceiling``: the most ``micro_avg`` this run's tasks allow the reference protocol
  (:func:`reference_rewards`): per task the protocol's reward list, through the same
  :func:`task_metrics` and the same mean as ``micro_avg``, so an oracle run equals it exactly
  (the suite's ``oracle_ceiling`` names it). It is the ceiling of an agent that must search
  to see option ids and ask to learn preferences; a blind guess of every best id in the first
  turns would score more, which no agent can plan for.
- ``pass_hat_k`` and ``pass_hat_k_k``: a true pass^k (tau-bench: mean over tasks of
  C(c, k) / C(n, k), :func:`pytest_egi.scoring.egi.pass_hat_k`) of the item's success rule (every
  aspect's best option recommended) over the trials of each task (``--egi-trials``), and the
  k used: the profile's ``pass_k`` when above 1, else the trials each task ran (routing.yaml's
  ``pass_k: 1``, upstream README's setting, leaves k to ``--egi-trials``); None when no task
  ran k trials. Upstream's ``--pass_k`` is not pass^k: its harness topped up to k
  rollouts per task and scored only the last one (reference §2.9 item 9). Here every other
  figure (``micro_avg`` ...) is the mean over all trials of all tasks: the same expectation
  as upstream's last-rollout figure, with k times the sample.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from suites.userbench.data import env_digits

__all__ = [
    "ENV_COLUMNS",
    "ENV_KEYS",
    "env_rows",
    "finish_env",
    "pass_hat_k_by_task",
    "reference_micro_avg",
    "reference_rewards",
    "normalized_score",
    "sub_metric_names",
    "summarize_env",
    "task_metrics",
]

ENV_KEYS = ("micro_avg", "micro_avg_ceiling", "micro_max", "avg_number_of_1", "avg_number_of_08",
            "normalized_score", "active_elicitation_rate", "passive_elicitation_rate", "best_rate",
            "tasks", "pass_hat_k", "pass_hat_k_k")  # fmt: skip
"""The per-environment sub-metrics, ``<env>.<key>``."""


def task_metrics(rewards: list[float]) -> dict[str, float]:
    """Upstream's per-rollout quantities from the per-turn rewards.

    Args:
        rewards: the rewards of the scored turns, in order; empty means the rollout ended
            before any turn was scored, which upstream records as ``[0]``.

    Returns:
        ``micro_avg`` (sum/T), ``micro_max`` (max), ``number_of_1`` (count of exactly 1.0),
        ``number_of_08`` (count of exactly 0.8).
    """
    r = list(rewards) or [0]
    return {
        "micro_avg": sum(r) / len(r),
        "micro_max": max(r),
        "number_of_1": float(r.count(1.0)),
        "number_of_08": float(r.count(0.8)),
    }


def normalized_score(turns: list[dict[str, Any]], env: str) -> float:
    """UserRL's normalised per-aspect score of one rollout.

    Args:
        turns: the scored turns, each ``{"choice", "content", "reward"}``; answer turns are those
            whose choice is ``answer``; the aspect is the first letter of the answered id (the
            content with any ``[answer]`` prefix removed).
        env: the environment name; its digit count is the number of aspects.

    Returns:
        ``sum over aspects of max answer reward / number of aspects`` (0-1).
    """
    best: dict[str, float] = {}
    for t in turns:
        if t.get("choice") != "answer":
            continue
        content = str(t.get("content") or "").strip().removeprefix("[answer]").strip()
        if not content:
            continue
        letter = content[0]
        best[letter] = max(best.get(letter, 0.0), float(t["reward"]))
    return sum(best.values()) / len(env_digits(env))


def reference_rewards(
    task: dict[str, Any], search_failure_interval: int = 5, max_turns: int | None = None
) -> list[float]:
    """The per-turn rewards of the reference protocol on ``task``, in its order (the oracle's
    turns, ``policy.py``): per aspect of ``dimensions``, its search (0.2; a search whose
    running count is a multiple of ``search_failure_interval`` fails with 0.0 and is sent
    again), one concrete question per preference of that aspect (0.2 each) and the answer of
    its best option (1.0); cut at ``max_turns`` when given (the environment truncates there).

    Args:
        task: a task record (``dimensions``; ``preferences``, each with its ``aspect``).

    Returns:
        The reward list, e.g. ``[0.2, 0.2, 0.2, 1.0, 0.2, 0.2, 0.2, 1.0]`` for travel22.
    """
    out: list[float] = []
    searches = 0
    for aspect in task["dimensions"]:
        while True:
            searches += 1
            if searches % search_failure_interval:
                break
            out.append(0.0)
        out.append(0.2)
        out += [0.2 for p in task["preferences"] if p.get("aspect") == aspect]
        out.append(1.0)
    return out[:max_turns] if max_turns is not None else out


def reference_micro_avg(
    task: dict[str, Any], search_failure_interval: int = 5, max_turns: int | None = None
) -> float:
    """The per-task ``micro_avg`` of :func:`reference_rewards` (:func:`task_metrics`'s own
    formula, so the same float as the oracle's): ``(0.2 * A + 0.2 * P + 1.0 * A) / (A +
    failures + P + A)`` without a turn limit."""
    return task_metrics(reference_rewards(task, search_failure_interval, max_turns))["micro_avg"]


def pass_hat_k_by_task(records: list[dict[str, Any]], k: int | None = None) -> tuple[float | None, int]:
    """A true pass^k of one environment's scored records.

    Args:
        records: scored trial records (``task_id``, ``trial``, ``success``).
        k: the k wanted (the profile's ``pass_k`` when above 1); None takes the most trials
            one task ran (``--egi-trials``).

    Returns:
        ``(pass^k, k)``: :func:`pytest_egi.scoring.egi.pass_hat_k` (mean over tasks of
        C(c, k) / C(n, k)) of the success of each task's trials; tasks with fewer than k
        scored trials are left out, None when none has k.
    """
    from pytest_egi.scoring.egi import pass_hat_k

    outcomes: dict[str, list[bool]] = {}
    for rec in records:
        outcomes.setdefault(str(rec.get("task_id")), []).append(bool(rec.get("success")))
    if k is None:
        k = max((len(v) for v in outcomes.values()), default=1)
    return pass_hat_k(outcomes, k), k


def summarize_env(
    env: str, values: list[dict[str, Any]], pass_k: tuple[float | None, int] | None = None
) -> dict[str, float | None]:
    """One environment's sub-metrics (module docstring) from its trials' per-task values
    (``micro_avg``, ``micro_max``, ``number_of_1``, ``number_of_08``, ``normalized_score``,
    ``active_rate``, ``passive_rate``, ``all_best``, ``micro_avg_ceiling``), each the mean over
    the trials; ``pass_k`` is :func:`pass_hat_k_by_task` of the same trials (None: not
    computed). None for all but ``tasks`` when empty; ``tasks`` counts trials (task x trial)."""
    n = len(values)
    hat, k = pass_k if pass_k is not None else (None, None)

    def mean(key: str) -> float | None:
        return sum(float(v.get(key) or 0.0) for v in values) / n if n else None

    ceilings = [v.get("micro_avg_ceiling") for v in values]
    return {
        f"{env}.micro_avg": mean("micro_avg"),
        # undefined when any trial has none (multi-choice mode), never a mean over a part
        f"{env}.micro_avg_ceiling": mean("micro_avg_ceiling") if None not in ceilings else None,
        f"{env}.micro_max": mean("micro_max"),
        f"{env}.avg_number_of_1": mean("number_of_1"),
        f"{env}.avg_number_of_08": mean("number_of_08"),
        f"{env}.normalized_score": mean("normalized_score"),
        f"{env}.active_elicitation_rate": mean("active_rate"),
        f"{env}.passive_elicitation_rate": mean("passive_rate"),
        f"{env}.best_rate": mean("all_best"),
        f"{env}.tasks": float(n),
        f"{env}.pass_hat_k": hat,
        f"{env}.pass_hat_k_k": float(k) if k is not None else None,
    }


_MEAN_OF = {
    "micro_avg": "micro_avg",
    "micro_max": "micro_max",
    "avg_number_of_1": "number_of_1",
    "avg_number_of_08": "number_of_08",
    "normalized_score": "normalized_score",
    "active_elicitation_rate": "active_rate",
    "passive_elicitation_rate": "passive_rate",
    "best_rate": "all_best",
}
"""The per-trial means of :func:`summarize_env` and the value each averages."""
ENV_COLUMNS = ("n", *_MEAN_OF.values(), "micro_avg_ceiling", "ceiling_missing", "pass_k", "pass_k_tasks")
"""One environment's columns for :func:`env_rows` and :func:`finish_env`: per trial a 1, the
averaged values, its ceiling (0 when it has none) and whether it has none; per task (on its
first trial) C(c, k) / C(n, k) and a 1, when it has at least k trials."""


def env_rows(records: list[dict[str, Any]]) -> tuple[list[list[float]], int | None]:
    """:data:`ENV_COLUMNS` of each of one environment's scored records, in their order, and
    the k of pass^k, or None when k would depend on which tasks a resample draws.

    k is what :class:`~suites.userbench.UserbenchSuite`'s ``summarize`` takes: the records'
    ``details.pass_k`` when above 1, else the most trials a task ran. It is fixed, and the
    per-task pass^k columns filled, only when every record has the same ``pass_k`` and
    (for ``pass_k`` 1) every task the same number of trials; else those columns are 0.
    """
    import math

    rows = []
    for rec in records:
        v = rec.get("values") or {}
        ceiling = v.get("micro_avg_ceiling")
        rows.append([1.0, *(float(v.get(k) or 0.0) for k in _MEAN_OF.values()),
                     float(ceiling or 0.0), float(ceiling is None), 0.0, 0.0])  # fmt: skip
    by_task: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        by_task.setdefault(str(rec.get("task_id")), []).append(i)
    asked = {int((rec.get("details") or {}).get("pass_k") or 1) for rec in records}
    lengths = {len(t) for t in by_task.values()}
    if len(asked) != 1 or (asked == {1} and len(lengths) != 1):
        return rows, None
    k = asked.pop() if asked != {1} else lengths.pop()
    for trials in by_task.values():
        if len(trials) >= k:
            c = sum(bool(records[i].get("success")) for i in trials)
            rows[trials[0]][-2:] = [math.comb(c, k) / math.comb(len(trials), k), 1.0]
    return rows, k


def finish_env(env: str, sums: Mapping[str, float], k: int | None) -> dict[str, float | None]:
    """:func:`summarize_env` from the column sums of :func:`env_rows` (each column name
    prefixed ``<env>.``), with pass^k when ``k`` is fixed (else without ``pass_hat_k`` and
    ``pass_hat_k_k``); the environment must have a trial."""

    def col(key: str) -> float:
        return sums[f"{env}.{key}"]

    n = col("n")
    out: dict[str, float | None] = {f"{env}.{m}": col(c) / n for m, c in _MEAN_OF.items()}
    out[f"{env}.micro_avg_ceiling"] = None if col("ceiling_missing") else col("micro_avg_ceiling") / n
    out[f"{env}.tasks"] = float(round(n))
    if k is not None:
        counted = col("pass_k_tasks")
        out[f"{env}.pass_hat_k"] = col("pass_k") / counted if counted else None
        out[f"{env}.pass_hat_k_k"] = float(k)
    return out


def sub_metric_names(envs: tuple[str, ...]) -> frozenset[str]:
    """Every ``<env>.<key>`` the suite can report."""
    return frozenset(f"{e}.{k}" for e in envs for k in ENV_KEYS)
