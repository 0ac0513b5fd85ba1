"""Usage aggregation: per-item usage dicts -> per-suite and per-run totals and percentiles.

Pure functions, called by the plugin at session end on the gathered records.

Record fields read (all optional except ``suite``):

* ``record["suite"]``: the suite name.
* ``record["usage"]``: the model under test's usage for the trial: the
  :meth:`Usage.to_dict() <pytest_egi.models.base.Usage.to_dict>` keys (``calls``,
  ``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``latency_s``, ``cached_calls``)
  plus ``latencies_s`` (list of per-call seconds, network calls only) and optionally
  ``retries``, ``wait_s``, ``unpriced_calls``, ``unpriced_network_calls``, ``no_usage_calls``
  and ``failed_calls``. ``TrialClient.usage_dict()`` has this shape;
  for an offline policy use ``usage_record(trajectory.usage)``.
* ``record["judge_usage"]`` and ``record["simulator_usage"]``: the same shape for the judge
  and the user simulator (absent or None when rules graded / simulated).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from pytest_egi.models.base import Usage

__all__ = ["ROLES", "format_cost", "format_usage_lines", "percentile", "summarize_usage", "usage_record"]

ROLES = {"model": "usage", "judge": "judge_usage", "simulator": "simulator_usage"}
"""Role name in the summary -> record field it is read from."""

_SUMS = ("calls", "cached_calls", "prompt_tokens", "completion_tokens", "cost_usd",
         "uncached_cost_usd", "latency_s", "retries", "wait_s", "unpriced_calls",
         "unpriced_network_calls", "no_usage_calls", "failed_calls")
_FLOATS = ("cost_usd", "uncached_cost_usd", "latency_s", "wait_s")


def usage_record(usage: Usage, latencies_s: Iterable[float] = ()) -> dict[str, Any]:
    """The record shape for a :class:`Usage` without a call log (offline policies).

    Returns:
        ``usage.to_dict()`` plus ``latencies_s`` (a list of seconds).
    """
    out = usage.to_dict()
    out["latencies_s"] = [float(x) for x in latencies_s]
    return out


def percentile(values: list[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks.

    Same as ``numpy.percentile(values, q)`` (method "linear"): position ``(n - 1) * q / 100``
    in the sorted values. None for an empty list.
    """
    if not values:
        return None
    xs = sorted(values)
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _totals(usages: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"items": len(usages)}
    for k in _SUMS:
        if k == "uncached_cost_usd":  # absent (offline policies): what was paid
            total = sum(float(u.get(k, u.get("cost_usd")) or 0) for u in usages)
        else:
            total = sum(float(u.get(k) or 0) for u in usages)
        out[k] = total if k in _FLOATS else int(total)
    out["network_calls"] = out["calls"] - out["cached_calls"]
    out["total_tokens"] = out["prompt_tokens"] + out["completion_tokens"]
    # a cost that cannot be known is unknown (None), never $0; the priced part stays visible
    out["priced_cost_usd"] = out["cost_usd"]
    if out["unpriced_network_calls"]:
        out["cost_usd"] = None
    if out["unpriced_calls"]:
        out["uncached_cost_usd"] = None
    lat = [float(x) for u in usages for x in (u.get("latencies_s") or [])]
    out["latency_p50_s"] = percentile(lat, 50)
    out["latency_p95_s"] = percentile(lat, 95)
    out["latency_max_s"] = max(lat) if lat else None
    return out


def summarize_usage(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals and latency percentiles per run and per suite, for each role.

    Args:
        records: the run's records (see the module docstring for the fields read).

    Returns:
        ``{"model": T, "judge": T, "simulator": T, "suites": {suite: {"model": T,
        "judge": T, "simulator": T}}}`` where each ``T`` has ``items`` (records with that
        role's usage), ``calls``, ``cached_calls``, ``network_calls``, ``prompt_tokens``,
        ``completion_tokens``, ``total_tokens``, ``cost_usd`` (USD paid; None when a call that
        went to the network has no known price or reported no usage: the cost is unknown),
        ``priced_cost_usd`` (USD paid for the calls whose cost is known),
        ``uncached_cost_usd`` (USD with cache hits at their original price; None when any call
        is unpriced), ``latency_s`` (summed seconds), ``latency_p50_s``, ``latency_p95_s``,
        ``latency_max_s`` (seconds over the per-call latencies, None when there are none),
        ``retries``, ``wait_s``, ``unpriced_calls`` (cost unknown), ``unpriced_network_calls``
        (of those, sent to the network), ``no_usage_calls`` (no token usage reported) and
        ``failed_calls`` (calls that raised; their retries count). A role no record used has
        ``items == 0``.
    """
    by_role: dict[str, list[dict[str, Any]]] = {r: [] for r in ROLES}
    by_suite: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for rec in records:
        suite = str(rec.get("suite", "?"))
        slot = by_suite.setdefault(suite, {r: [] for r in ROLES})
        for role, field in ROLES.items():
            u = rec.get(field)
            if isinstance(u, dict):
                by_role[role].append(u)
                slot[role].append(u)
    summary: dict[str, Any] = {role: _totals(us) for role, us in by_role.items()}
    summary["suites"] = {
        suite: {role: _totals(us) for role, us in roles.items()}
        for suite, roles in sorted(by_suite.items())
    }
    return summary


def _fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}s"


def format_cost(t: dict[str, Any]) -> str:
    """The paid cost of one :func:`summarize_usage` group for people: ``$0.0123``, or
    ``cost unknown (12 calls unpriced)`` / ``cost unknown ($0.0100 priced + 3 calls
    unpriced)`` when a call's cost could not be known (never shown as $0)."""
    if t.get("cost_usd") is not None:
        return f"${t['cost_usd']:.4f}"
    n = int(t.get("unpriced_network_calls") or 0)
    calls = f"{n} call{'s' if n != 1 else ''} unpriced"
    priced = float(t.get("priced_cost_usd") or 0.0)
    return f"cost unknown (${priced:.4f} priced + {calls})" if priced else f"cost unknown ({calls})"


_SENT = ("latency_s", "cached_calls", "total_tokens", "cost_usd")
"""Usage fields of which one is set when a role's calls went to a provider (a call's latency)
or its cache; none is for an offline policy's calls."""


def format_usage_lines(summary: dict[str, Any], identities: dict[str, str] | None = None
                       ) -> list[str]:
    """Terminal-summary lines for :func:`summarize_usage`'s result (one per active role,
    then one per suite for the model under test; a role that sent nothing, an offline policy,
    is one short line with no per-suite lines).

    Args:
        summary: the result of :func:`summarize_usage`.
        identities: optional role -> model name (``{"model": "gpt-4o-mini", "judge":
            "egi/rules"}``) shown after the role.
    """
    lines = []
    names = identities or {}
    for role in ROLES:
        t = summary.get(role) or {}
        if not t.get("calls"):
            if role != "model" and names.get(role):
                lines.append(f"{role} {names[role]}: no calls")
            continue
        who = f" {names[role]}" if names.get(role) else ""
        if not any(t.get(k) for k in _SENT):
            # an offline policy: nothing was sent, so no tokens, cost or latency
            lines.append(f"{role}{who}: {t['calls']} calls, offline (no tokens, no cost)")
            continue
        extra = "".join(f", {t[k]} {label}" for k, label in (
            ("failed_calls", "failed"), ("no_usage_calls", "without usage")) if t.get(k))
        lines.append(
            f"{role}{who}: {t['calls']} calls ({t['cached_calls']} cached, {t['retries']} retries"
            f"{extra}), {t['prompt_tokens']} prompt + {t['completion_tokens']} completion tokens,"
            f" {format_cost(t)}, latency p50 {_fmt_s(t['latency_p50_s'])}"
            f" p95 {_fmt_s(t['latency_p95_s'])}"
        )
    for suite, roles in (summary.get("suites") or {}).items():
        t = roles.get("model") or {}
        if t.get("calls") and any(t.get(k) for k in _SENT):
            lines.append(
                f"  {suite}: {t['calls']} calls, {t['total_tokens']} tokens, {format_cost(t)},"
                f" p50 {_fmt_s(t['latency_p50_s'])} p95 {_fmt_s(t['latency_p95_s'])}"
            )
    return lines
