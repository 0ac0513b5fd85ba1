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

Upstream's ``--pass_k`` scored only the last rollout; a true pass^k is not computed yet.
"""

from __future__ import annotations

from typing import Any

from suites.userbench.data import env_digits

__all__ = [
    "ENV_KEYS",
    "reference_micro_avg",
    "normalized_score",
    "sub_metric_names",
    "summarize_env",
    "task_metrics",
]

ENV_KEYS = ("micro_avg", "micro_max", "avg_number_of_1", "avg_number_of_08", "normalized_score",
            "active_elicitation_rate", "passive_elicitation_rate", "best_rate", "tasks")  # fmt: skip
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


def reference_micro_avg(task: dict[str, Any], search_failure_interval: int = 5) -> float:
    """The ``micro_avg`` of the reference protocol on ``task`` (the most a task allows to an
    agent that searches each aspect once with the right arguments, asks one concrete question
    per preference and recommends each aspect's best option): turns are the searches (A, plus
    one retry per forced failure), the P questions and the A answers; rewards 0.2 per
    successful search, 0.2 per question, 1.0 per answer.

    Returns:
        ``(0.2 * A + 0.2 * P + 1.0 * A) / (A + failures + P + A)``.
    """
    a = len(task["dimensions"])
    p = len(task["preferences"])
    searches, failures = 0, 0
    while searches - failures < a:
        searches += 1
        failures += searches % search_failure_interval == 0
    return (0.2 * a + 0.2 * p + 1.0 * a) / (searches + p + a)


def summarize_env(env: str, values: list[dict[str, Any]]) -> dict[str, float | None]:
    """One environment's sub-metrics (module docstring) from its tasks' per-task values
    (``micro_avg``, ``micro_max``, ``number_of_1``, ``number_of_08``, ``normalized_score``,
    ``active_rate``, ``passive_rate``, ``all_best``); None for all but ``tasks`` when empty."""
    n = len(values)

    def mean(key: str) -> float | None:
        return sum(float(v.get(key) or 0.0) for v in values) / n if n else None

    return {
        f"{env}.micro_avg": mean("micro_avg"),
        f"{env}.micro_max": mean("micro_max"),
        f"{env}.avg_number_of_1": mean("number_of_1"),
        f"{env}.avg_number_of_08": mean("number_of_08"),
        f"{env}.normalized_score": mean("normalized_score"),
        f"{env}.active_elicitation_rate": mean("active_rate"),
        f"{env}.passive_elicitation_rate": mean("passive_rate"),
        f"{env}.best_rate": mean("all_best"),
        f"{env}.tasks": float(n),
    }


def sub_metric_names(envs: tuple[str, ...]) -> frozenset[str]:
    """Every ``<env>.<key>`` the suite can report."""
    return frozenset(f"{e}.{k}" for e in envs for k in ENV_KEYS)
