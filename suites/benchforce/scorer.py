"""Judging one Benchforce session, and the per-environment sub-metrics (reference A7, C1).

An entry's trial **passes** iff all three hold, each reported on its own:

- ``state_match``: the final state projection (from the server) equals the projection after
  dry-running the entry's gold ``actions`` on a copy of the same world (the step upstream
  meant but never wired, A10.2); a failure lists the field-level diff.
- ``no_forbidden``: no successful call matched one of the entry's ``forbidden_actions``
  (``{"name", "arguments"?}``; given arguments must all match).
- ``outputs_said``: every expected output appears, case-insensitively, in the agent's replies
  joined together, each match consumed once (upstream's rule).

An entry with neither a write in its gold nor an expected output (some upstream look-ups)
leaves the state criterion vacuous, so for it a fourth criterion applies: ``gold_calls``, every
gold action matched by some call, errored ones included (upstream's stateless rule below).

A trial with no answer (the core's ``no_answer_reason``: turns or context ran out, a cut-off
reply) fails. Upstream's ``stateless_accuracy`` (every gold action matched by some call, A7.3)
is computed beside it, reported only.

Per environment (:func:`summarize_env`; upstream's ``accuracy.aggregate``, A7.2, fixing A10.1
and A10.5): a session is **finished** when the *caller* ended it (its ``exit_conversation``:
upstream's ``benchforce.terminate`` packet), whether or not its goal was met; a turn-limit
cut-off (upstream sent terminate there too, A10.5: our repair) and a timeout are unfinished.
Trials are grouped **per entry** (A10.1: upstream's grouping put a whole run in one group):

- ``accuracy_all`` = mean over entries of the entry's mean pass over its trials;
- ``finished_rate`` = finished trials / trials (upstream's ``finished_entries`` / ``total_entries``);
- ``accuracy_finished`` = the same as ``accuracy_all`` over the finished trials only: mean over
  the entries with a finished trial of the entry's mean pass over its finished trials; None
  (undefined, so its ``gap`` route is missing from the EGI with the reason) when none finished.

With one trial per entry an entry's mean pass is upstream's "all its iterations pass"; with
several, upstream's all-pass rule is ``pass_all_trials``. The caller's reasons stay diagnostics
(``goal_met_rate``, ``gave_up_rate``).
"""

from __future__ import annotations

import functools
import json
import statistics
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.normalize import fold_text
from pytest_egi.outcomes import ending_kind
from suites.benchforce.env.base import Environment, dry_run

__all__ = [
    "ENV_COLUMNS",
    "SUMMARY_KEYS",
    "env_rows",
    "finish_env",
    "score_trial",
    "state_diff",
    "stateless_match",
    "summarize_env",
]

ROUTED_KEYS = ("accuracy_all", "finished_rate", "accuracy_finished")
DIAGNOSTIC_KEYS = (
    "entries",
    "trials",
    "pass_all_trials",
    "stateless_accuracy",
    "state_match_rate",
    "no_forbidden_rate",
    "outputs_said_rate",
    "goal_met_rate",
    "gave_up_rate",
    "max_turns_rate",
    "timeout_rate",
    "tokens_mean",
    "tokens_median",
    "replies_mean",
    "replies_median",
    "tool_calls_mean",
    "tool_calls_median",
    "invalid_tool_calls_mean",
)
SUMMARY_KEYS = ROUTED_KEYS + DIAGNOSTIC_KEYS


@functools.lru_cache(maxsize=8)
def _world(env_name: str, seed: int) -> str:
    from suites.benchforce.env import environment

    return json.dumps(environment(env_name).build_world(seed))


def expected_state(
    env: Environment, seed: int, actions: list[dict[str, Any]], data_dir: str | None = None
) -> dict[str, Any]:
    """:func:`dry_run` on the seeded world of ``env`` (built once per process), or on the world
    read from upstream's files under ``data_dir`` (:mod:`suites.benchforce.data`)."""
    if data_dir is not None:
        from suites.benchforce.data import load_world

        return dry_run(env, load_world(env, Path(data_dir)), actions)
    return dry_run(env, json.loads(_world(env.name, seed)), actions)


def state_diff(expected: Any, got: Any, path: str = "") -> list[str]:
    """Field-level differences, one line each (``appointments.A3061: missing``,
    ``referrals.R6003.status: expected 'cancelled', got 'pending'``), sorted by path."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out: list[str] = []
        for key in sorted(set(expected) | set(got)):
            where = f"{path}.{key}" if path else str(key)
            if key not in got:
                out.append(f"{where}: missing (expected {json.dumps(expected[key], sort_keys=True)})")
            elif key not in expected:
                out.append(f"{where}: unexpected {json.dumps(got[key], sort_keys=True)}")
            else:
                out += state_diff(expected[key], got[key], where)
        return out
    return [] if expected == got else [f"{path}: expected {expected!r}, got {got!r}"]


def _norm(value: Any) -> str:
    return str(value).strip().lower() if not isinstance(value, (list, dict)) else json.dumps(value).lower()


def _args_match(gold: dict[str, Any], call_args: Any, case_insensitive: list[str] | None = None) -> bool:
    if not isinstance(call_args, dict):
        return False
    for key, value in gold.items():
        if value == "*":
            continue
        if key not in call_args:
            return False
        if _norm(value) != _norm(call_args[key]):
            return False
    return True


def stateless_match(actions: list[dict[str, Any]], calls: list[dict[str, Any]]) -> bool:
    """Upstream's ``stateless_accuracy`` for one session (A7.3): every gold action is matched
    by some call of the same name whose arguments include each gold argument (``*`` skipped;
    values compared after strip and lowercase, lists and dicts stringified). Extra calls,
    order and duplicates are ignored, as upstream does. (Upstream's US-address normalisation
    is not applied: no generated argument is an address.)"""
    return all(
        any(
            c.get("name") == a.get("name") and _args_match(a.get("arguments") or {}, c.get("arguments"))
            for c in calls
        )
        for a in actions
    )


def _forbidden(patterns: list[dict[str, Any]], calls: list[dict[str, Any]]) -> list[str]:
    hits = []
    for call in calls:
        if call.get("error"):
            continue
        for pat in patterns:
            if call.get("name") == pat.get("name") and _args_match(
                pat.get("arguments") or {}, call.get("arguments")
            ):
                hits.append(f"{call.get('name')}({json.dumps(call.get('arguments'), sort_keys=True)})")
    return hits


def _outputs_said(outputs: list[str], replies: list[str]) -> list[str]:
    """The expected outputs not said (upstream: substring of all replies joined, consumed)."""
    said = fold_text("\n".join(replies)).casefold()
    missing = []
    for out in outputs:
        needle = fold_text(out).casefold()
        at = said.find(needle)
        if at < 0:
            missing.append(out)
        else:
            said = said[:at] + "\x00" + said[at + len(needle) :]
    return missing


def score_trial(env: Environment, data: dict[str, Any], trajectory: dict[str, Any]) -> dict[str, Any]:
    """The verdict on one stored trajectory: ``{"success", "values", "expected", "got", "details"}``.

    ``values`` (per trial, all 0/1 except the counts): ``passed``, ``finished`` (the caller
    ended the session, module docstring), ``goal_met`` and ``gave_up`` (its reason),
    ``max_turns``, ``timeout``, ``state_match``,
    ``no_forbidden``, ``outputs_said``, ``stateless``, and the agent-side ``tokens`` (prompt +
    completion tokens the model under test reported), ``replies`` (its text replies to the
    caller: upstream's efficiency ``turns``, the exchanges completed, A7.4; not the record's
    ``turns``, which counts every model call, a call that asks for a tool included),
    ``tool_calls`` and ``invalid_tool_calls``.

    ``failure_kind`` of a failed trial, the first that holds: ``policy_violated`` (a forbidden
    action ran, whatever the ending), ``no_answer`` / ``turn_limit`` / ``gave_up`` (how the
    episode ended: :func:`pytest_egi.outcomes.ending_kind`), ``turn_limit`` (the session's
    ending ``max_turns`` or ``timeout``: the turn or wall-clock budget ran out), then
    ``state_differs``, ``missing_call`` (a look-up entry's gold calls not all made) and
    ``wrong_answer`` (an expected output not said).
    """
    info = (trajectory.get("info") or {}).get("benchforce") or {}
    calls = list(trajectory.get("tool_calls") or [])
    replies = [
        str(m.get("content") or "")
        for m in trajectory.get("messages") or []
        if m.get("role") == "assistant" and not m.get("tool_calls")
    ]
    expected = expected_state(env, int(data["seed"]), data["actions"], data.get("data_dir"))
    final = info.get("final_state")
    diff = state_diff(expected, final) if final is not None else ["no final state recorded"]
    forbidden = _forbidden(list(data.get("forbidden_actions") or []), calls)
    missing = _outputs_said(list(data.get("outputs") or []), replies)
    why = no_answer_reason(trajectory)
    ending, reason = info.get("ending"), info.get("exit_reason")
    finished = ending == "user_exit"  # the caller hung up (upstream's terminate), goal met or not
    stateless = stateless_match(data["actions"], calls)
    vacuous = not data.get("outputs") and not any(
        env.tools.get(a.get("name")) is not None and env.tools[a["name"]].kind == "write"
        for a in data["actions"]
    )
    calls_ok = stateless or not vacuous
    passed = not diff and not forbidden and not missing and calls_ok and why is None
    usage = trajectory.get("usage") or {}
    values = {
        "passed": float(passed),
        "finished": float(finished),
        "goal_met": float(finished and reason == "goal_met"),
        "gave_up": float(finished and reason == "gave_up"),
        "max_turns": float(ending == "max_turns"),
        "timeout": float(ending == "timeout"),
        "state_match": float(not diff),
        "no_forbidden": float(not forbidden),
        "outputs_said": float(not missing),
        "stateless": float(stateless),
        "tokens": float((usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)),
        "replies": float(len(replies)),
        "tool_calls": float(len(calls)),
        "invalid_tool_calls": float(sum(1 for c in calls if c.get("error"))),
    }
    problems = (
        [f"state differs: {'; '.join(diff[:8])}" + (f" (+{len(diff) - 8} more)" if len(diff) > 8 else "")]
        if diff
        else []
    )
    problems += [f"forbidden action ran: {', '.join(forbidden)}"] if forbidden else []
    problems += [f"not said: {missing}"] if missing else []
    problems += ["a look-up entry's gold calls were not all made"] if not calls_ok else []
    problems += [f"no answer: {why}"] if why else []
    got = "; ".join(problems) if problems else "final state, actions and outputs as expected"
    kind = None
    if not passed:
        kind = "policy_violated" if forbidden else ending_kind(trajectory)
        if kind is None and ending in ("max_turns", "timeout"):  # the caller was cut off
            kind = "turn_limit"
        kind = kind or ("state_differs" if diff else "missing_call" if not calls_ok else "wrong_answer")
    return {
        "success": passed,
        "failure_kind": kind,
        "values": values,
        "expected": {
            "actions": [
                f"{a['name']}({json.dumps(a.get('arguments'), sort_keys=True)})" for a in data["actions"]
            ],
            "outputs": list(data.get("outputs") or []),
        },
        "got": f"{got} (ending {ending}, exit reason {reason})",
        "details": {
            "criteria": {
                "state_match": not diff,
                "no_forbidden": not forbidden,
                "outputs_said": not missing,
                **({"gold_calls": stateless} if vacuous else {}),
            },
            "state_diff": diff,
            "forbidden_ran": forbidden,
            "outputs_missing": missing,
            "stateless_accuracy": bool(values["stateless"]),
            "ending": ending,
            "exit_reason": reason,
            "final_hash": info.get("final_hash"),
        },
    }


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _entry_means(by_entry: Mapping[str, list[dict[str, Any]]], finished_only: bool = False) -> list[float]:
    """Per entry, its mean ``passed`` over its trials (over its finished trials only, leaving
    out an entry with none, when ``finished_only``)."""
    out = []
    for vs in by_entry.values():
        kept = [v for v in vs if v.get("finished")] if finished_only else vs
        if kept:
            out.append(_mean([float(v.get("passed") or 0.0) for v in kept]))
    return out


def summarize_env(env: str, records: list[dict[str, Any]]) -> dict[str, float | None]:
    """One environment's sub-metrics from its scored records (module docstring). Rates 0–1;
    ``tokens``/``replies``/``tool_calls`` are per-trial means and medians of the agent side.

    ``accuracy_finished`` is None when no trial finished."""
    by_entry: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_entry[str(rec.get("task_id"))].append(rec.get("values") or {})
    vals = [v for vs in by_entry.values() for v in vs]

    def col(key: str) -> list[float]:
        return [float(v.get(key) or 0.0) for v in vals]

    finished_entries = _entry_means(by_entry, finished_only=True)
    out: dict[str, float | None] = {
        "accuracy_all": _mean(_entry_means(by_entry)),
        "finished_rate": _mean(col("finished")),
        # undefined (None) when no trial finished: a 0 here would read 100 on the gap route
        "accuracy_finished": _mean(finished_entries) if finished_entries else None,
        "entries": float(len(by_entry)),
        "trials": float(len(vals)),
        "pass_all_trials": _mean([float(all(v.get("passed") for v in vs)) for vs in by_entry.values()]),
        "stateless_accuracy": _mean(col("stateless")),
        "state_match_rate": _mean(col("state_match")),
        "no_forbidden_rate": _mean(col("no_forbidden")),
        "outputs_said_rate": _mean(col("outputs_said")),
        "goal_met_rate": _mean(col("goal_met")),
        "gave_up_rate": _mean(col("gave_up")),
        "max_turns_rate": _mean(col("max_turns")),
        "timeout_rate": _mean(col("timeout")),
        "invalid_tool_calls_mean": _mean(col("invalid_tool_calls")),
    }
    for key in ("tokens", "replies", "tool_calls"):
        out[f"{key}_mean"] = _mean(col(key))
        out[f"{key}_median"] = float(statistics.median(col(key)))
    return {f"{env}.{k}": out[k] for k in SUMMARY_KEYS}


_RATE_OF = {
    "stateless_accuracy": "stateless",
    "state_match_rate": "state_match",
    "no_forbidden_rate": "no_forbidden",
    "outputs_said_rate": "outputs_said",
    "goal_met_rate": "goal_met",
    "gave_up_rate": "gave_up",
    "max_turns_rate": "max_turns",
    "timeout_rate": "timeout",
    "invalid_tool_calls_mean": "invalid_tool_calls",
    "tokens_mean": "tokens",
    "replies_mean": "replies",
    "tool_calls_mean": "tool_calls",
}
"""Per-trial means of :func:`summarize_env` and the value each averages."""
ENV_COLUMNS = ("trials", "entries", "entry_accuracy", "entry_pass_all", "finished",
               "entries_finished", "entry_finished_accuracy", *_RATE_OF.values())  # fmt: skip
"""One environment's columns for :func:`env_rows` and :func:`finish_env`: per trial a 1 and its
``finished`` value; per entry (on its first trial) a 1, its mean ``passed`` over its trials,
whether all passed, whether any trial finished and its mean ``passed`` over its finished
trials (0 when none); and the averaged values."""


def env_rows(records: list[dict[str, Any]]) -> list[list[float]]:
    """:data:`ENV_COLUMNS` of each of one environment's records, in their order; an entry's
    quantities (grouped by ``task_id``, as :func:`summarize_env` groups) on its first record."""
    by_entry: dict[str, list[int]] = defaultdict(list)
    for i, rec in enumerate(records):
        by_entry[str(rec.get("task_id"))].append(i)
    vals = [rec.get("values") or {} for rec in records]
    rows = []
    for v in vals:
        rows.append([1.0, 0.0, 0.0, 0.0, float(v.get("finished") or 0.0), 0.0, 0.0,
                     *(float(v.get(k) or 0.0) for k in _RATE_OF.values())])  # fmt: skip
    for trials in by_entry.values():
        passed = [float(vals[i].get("passed") or 0.0) for i in trials]
        done = [float(vals[i].get("passed") or 0.0) for i in trials if vals[i].get("finished")]
        first = rows[trials[0]]
        first[1:4] = [1.0, _mean(passed), float(all(vals[i].get("passed") for i in trials))]
        first[5:7] = [float(bool(done)), _mean(done) if done else 0.0]
    return rows


def finish_env(env: str, sums: Mapping[str, float]) -> dict[str, float | None]:
    """:func:`summarize_env` but its medians, from the column sums of :func:`env_rows` (each
    column name prefixed ``<env>.``); the environment must have a trial."""

    def col(key: str) -> float:
        return sums[f"{env}.{key}"]

    trials, entries, finished = col("trials"), col("entries"), col("entries_finished")
    out: dict[str, float | None] = {
        "accuracy_all": col("entry_accuracy") / entries,
        "finished_rate": col("finished") / trials,
        "accuracy_finished": col("entry_finished_accuracy") / finished if finished else None,
        "entries": float(round(entries)),
        "trials": float(round(trials)),
        "pass_all_trials": col("entry_pass_all") / entries,
        **{k: col(c) / trials for k, c in _RATE_OF.items()},
    }
    return {f"{env}.{k}": out[k] for k in SUMMARY_KEYS if k in out}
