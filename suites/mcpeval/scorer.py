"""MCPEval scoring as pure functions (reference ``mcpuniverse_mcpeval.md`` §2.4–2.6; upstream
``metrics/static_tool_eval.py``, ``cli/analyzer/tool_analysis.py`` and
``metrics/llm_multi_aspect_eval.py`` of ``SalesforceAIResearch/MCPEval``).

Static tool-call matching (§2.4), :func:`compare_tool_calls`
    A ground-truth call list g₁…gₙ against a predicted call list p₁…pₘ, each call a
    ``{"tool_name": str, "tool_parameters": dict}``. Everything is positional (pairs up to
    min(n, m)). Both modes (``strict`` and ``flexible``) give ``success``, ``overall_score``,
    ``tool_name_score``, ``param_match_score`` and ``order_score``; the result also carries
    upstream's ``counts``, ``missing_tools``, ``extra_tools``, ``param_mismatches`` and
    ``param_matches`` (strict mode), in the exact layout of upstream's task-metrics file.

Aggregates (§2.5)
    :func:`task_values` turns one task's comparison into per-task values;
    :func:`summarize_domain` averages them into ``<domain>.flexible_avg`` (the mean flexible
    overall score: the routed sub-metric) and the reported diagnostics (success rates, name /
    param / order averages, judge means). :func:`task_metrics_file` and
    :func:`summary_analysis_file` return upstream's ``--evaluation-output`` and
    ``<stem>_summary_analysis.json`` layouts as JSON-ready dicts.

LLM judge (§2.6, optional)
    :func:`trajectory_judge_messages` / :func:`completion_judge_messages` build the two judge
    prompts (our paraphrase of upstream's); :func:`parse_judge_verdict` reads a reply strictly.

Deliberate differences from upstream (each documented where it applies):

* A task with **no prediction** is a failure with zero scores in both modes
  (:func:`no_prediction_evaluation`) and counts in every mean; upstream's ``analyze`` skips it
  with a warning (§2.5, §4.4). This differs from an *empty* prediction (the model made no
  call), which is scored normally (and succeeds when the ground truth is empty too). The
  suite scores every trial's calls, as upstream does, whatever the final reply (a blank or
  cut-off reply or the turn limit is the diagnostic ``no_answer``).
* A **malformed predicted call** (no tool name, arguments that are not a JSON object) is a
  call named ``""`` / with ``{}`` parameters (:func:`predicted_calls`); upstream records
  ``{}`` for arguments that are not JSON and crashes the task on the other shapes.
* An **unparsable judge verdict** is missing (None) and left out of the judge means; upstream
  records all-zero aspect scores (§2.6, §2.7 #6). A verdict missing an aspect, or with an
  aspect outside 0–1, is unparsable too (upstream fills a missing aspect with 0).
* **Weights** that do not sum to 1 are rescaled to sum to 1, as upstream's ``analyze`` CLI
  does; upstream's library would silently fall back to the defaults (§2.4).
* Flexible success checks the per-position parameter scores; upstream checks the values of its
  ``param_matches`` dict, which equals that unless a key ``<name>_<i>`` collides with another
  tool's plain name (e.g. a tool literally named ``search_1``). Not seen in any upstream file.
* Bad input (a call without ``tool_name`` or with non-dict ``tool_parameters``) raises
  ``ValueError``; upstream's loader silently drops such entries (§2.2), so callers loading
  upstream files should drop them first (:func:`upstream_calls`).

Upstream data check: :func:`compare_tool_calls` reproduces every strict and flexible score and
success (and the counts, missing/extra tools, mismatches and strict parameter scores) of all
186 records of the three upstream ``task_metrics.json`` files (``benchmarks/playwright/
llm_judger_results/{gpt-4o,gpt-4o-mini,gpt-4.1-mini}``) bit for bit; no record had to be
excluded (``tests/suites/mcpeval/test_mcpeval_upstream.py``). Rebuilt from the calls alone,
:func:`task_metrics_file` and :func:`summary_analysis_file` serialise to the same JSON text as
upstream's files, once the summary means are correctly rounded sums (``math.fsum``): a plain
left-to-right sum in the files' task order is one ulp off on 8 of the 24 stored means. The
stored summary files predate upstream's ``evaluation_config`` key, which
:func:`summary_analysis_file` emits (current upstream ``analyze``).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "call_failure_kind",
    "COMPLETION_ASPECTS",
    "DEFAULT_THRESHOLDS",
    "DEFAULT_WEIGHTS",
    "DOMAIN_METRICS",
    "FLEXIBLE_TOLERANCE",
    "MODES",
    "ROUTED_METRIC",
    "STRICT_TOLERANCE",
    "TASK_VALUE_KEYS",
    "TRAJECTORY_ASPECTS",
    "compare_tool_calls",
    "completion_judge_messages",
    "lcs_length",
    "no_prediction_evaluation",
    "normalize_value",
    "param_score",
    "parse_judge_verdict",
    "predicted_calls",
    "resolve_thresholds",
    "resolve_weights",
    "sub_metric_names",
    "summarize_domain",
    "summary_analysis_file",
    "summary_metrics",
    "task_metrics_file",
    "task_result_entry",
    "task_values",
    "trajectory_judge_messages",
    "upstream_calls",
    "values_equal",
]

Mode = Literal["strict", "flexible"]
MODES: tuple[Mode, Mode] = ("strict", "flexible")
"""The two match types, in upstream's order."""

DEFAULT_WEIGHTS: dict[str, float] = {"name": 0.4, "params": 0.4, "order": 0.2}
"""Weights of the overall score (§2.4): name, parameter and order scores."""
DEFAULT_THRESHOLDS: dict[str, float] = {"flexible_param": 0.6, "flexible_order": 0.5}
"""Flexible success needs every per-call parameter score ≥ ``flexible_param`` and the order
score ≥ ``flexible_order`` (§2.4)."""
STRICT_TOLERANCE = 1e-6
"""Strict numeric equality: |a − b| < this (§2.4)."""
FLEXIBLE_TOLERANCE = 0.2
"""Flexible numeric equality: absolute difference below this when either value is below 1 in
magnitude, else relative difference (to the larger magnitude) below this (§2.4)."""
_WEIGHT_SLACK = 0.001
"""Weights summing to 1 within this are used as given (upstream's check)."""

_MODE_KEYS = ("success", "overall_score", "tool_name_score", "param_match_score", "order_score")


# --------------------------------------------------------------------------------------------
# §2.4: value normalisation and equality
# --------------------------------------------------------------------------------------------


def normalize_value(value: Any) -> Any:
    """A parameter value normalised for comparison (§2.4 "value normalisation").

    Strings are stripped and lower-cased; ints, floats **and bools** become floats (so
    ``True`` equals ``1``); lists and dicts are normalised recursively, dict keys included;
    anything else (None) is returned unchanged.
    """
    if isinstance(value, str):
        return value.strip().lower()
    if isinstance(value, int | float):  # bool is an int
        return float(value)
    if isinstance(value, list | tuple):
        return [normalize_value(v) for v in value]
    if isinstance(value, Mapping):
        return {normalize_value(k): normalize_value(v) for k, v in value.items()}
    return value


def values_equal(ground_truth: Any, prediction: Any, *, flexible: bool) -> bool:
    """Whether a predicted parameter value equals the ground-truth one (§2.4).

    Both values are normalised (:func:`normalize_value`), then:

    * two numbers: strict, |a − b| < 1e-6; flexible, |a − b| < 0.2 when |a| < 1 or |b| < 1,
      else |a − b| / max(|a|, |b|) < 0.2 (both bounds exclusive);
    * flexible, two strings: equal when either contains the other (so an empty predicted
      string matches every ground-truth string, as upstream);
    * otherwise plain equality of the normalised values (``"5"`` ≠ ``5``; numbers nested in
      lists or dicts get no tolerance).
    """
    a, b = normalize_value(ground_truth), normalize_value(prediction)
    if isinstance(a, float) and isinstance(b, float):
        if not flexible:
            return abs(a - b) < STRICT_TOLERANCE
        if abs(a) < 1.0 or abs(b) < 1.0:
            return abs(a - b) < FLEXIBLE_TOLERANCE
        return abs(a - b) / max(abs(a), abs(b)) < FLEXIBLE_TOLERANCE
    if flexible and isinstance(a, str) and isinstance(b, str) and (a in b or b in a):
        return True
    return a == b


def _important(value: Any) -> bool:
    """A ground-truth parameter counted by the flexible score: not None and not an empty
    string, list or dict (§2.4)."""
    if value is None:
        return False
    if isinstance(value, str | list | tuple | Mapping):
        return len(value) > 0
    return True


def param_score(
    ground_truth: Mapping[str, Any], prediction: Mapping[str, Any], *, flexible: bool
) -> tuple[float, dict[str, list[Any]]]:
    """The parameter score sᵢ of one name-matched position, and its mismatches (§2.4).

    * strict: (#ground-truth keys present in the prediction with an equal value) /
      #ground-truth keys; 1 when the ground truth has no parameter. Extra predicted keys are
      ignored.
    * flexible: over the *important* ground-truth keys I (value not None and not an empty
      string/list/dict): Σ (1 if present and equal, 0.5 if present but unequal, 0 if absent)
      / |I|; 1 when I is empty.

    Returns:
        ``(score in [0, 1], {param: [ground-truth value, predicted value]})`` for the keys
        present in both with unequal values (raw values, as upstream stores them).
    """
    common = [k for k in ground_truth if k in prediction]
    mismatches = {
        k: [ground_truth[k], prediction[k]]
        for k in common
        if not values_equal(ground_truth[k], prediction[k], flexible=flexible)
    }
    if flexible:
        important = [k for k, v in ground_truth.items() if _important(v)]
        if not important:
            return 1.0, mismatches
        credit = sum(0.0 if k not in prediction else 0.5 if k in mismatches else 1.0 for k in important)
        return credit / len(important), mismatches
    if not ground_truth:
        return 1.0, mismatches
    return (len(common) - len(mismatches)) / len(ground_truth), mismatches


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two name lists (the order score's
    numerator, §2.4)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


# --------------------------------------------------------------------------------------------
# Inputs: call lists, weights, thresholds
# --------------------------------------------------------------------------------------------


def _check_calls(calls: Any, role: str) -> list[Mapping[str, Any]]:
    if isinstance(calls, str | bytes | Mapping) or not isinstance(calls, Sequence):
        raise ValueError(
            f"{role}: expected a list of tool calls ({{'tool_name', 'tool_parameters'}}), "
            f"got {type(calls).__name__}"
        )
    for i, call in enumerate(calls):
        if not isinstance(call, Mapping):
            raise ValueError(f"{role} tool call {i + 1}: expected an object, got {type(call).__name__}")
        name = call.get("tool_name")
        if role == "prediction" and not isinstance(name, str):
            raise ValueError(f"{role} tool call {i + 1}: 'tool_name' must be a string, got {name!r}")
        if role != "prediction" and (not isinstance(name, str) or not name):
            raise ValueError(
                f"{role} tool call {i + 1}: 'tool_name' must be a non-empty string, got {name!r}")
        params = call.get("tool_parameters")
        if not isinstance(params, Mapping):
            raise ValueError(
                f"{role} tool call {i + 1} ({name}): 'tool_parameters' must be an object (use {{}} for "
                f"a call without arguments), got {type(params).__name__}"
            )
    return list(calls)


def predicted_calls(log: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The model's tool calls as upstream's prediction list, and why each malformed one is so.

    Every call the model made counts, in order, whether the server ran it or refused it:
    upstream's task executor records each call before executing it (§2.1 step 4). A call is
    **malformed** when its tool name is not a non-empty string or its arguments are not a
    JSON object; it stays in the prediction (the model's mistake, scored): its name becomes
    ``""`` (it matches no ground-truth name) and its arguments ``{}`` (no parameter given).
    Upstream records ``{}`` for arguments that are not JSON and crashes the task on a JSON
    array, string or number or a null name (its ``ToolCall`` model refuses them);
    deliberate difference: every shape is scored.

    Args:
        log: the trajectory's executed-call log (``Toolkit.calls``: ``{"name", "arguments",
            ...}``, arguments parsed, or the raw text when they were not JSON).

    Returns:
        ``([{"tool_name", "tool_parameters"}], [one note per malformed call, e.g.
        "call 2 (airbnb_search): arguments are not a JSON object: '{\"city\": '"])``.
    """
    calls: list[dict[str, Any]] = []
    notes: list[str] = []
    for i, entry in enumerate(log):
        name, args = entry.get("name"), entry.get("arguments")
        problems = []
        if not isinstance(name, str) or not name.strip():
            problems.append(f"no tool name ({name!r})")
            name = ""
        if not isinstance(args, Mapping):
            shown = args if isinstance(args, str) else json.dumps(args)
            problems.append(f"arguments are not a JSON object: {shown[:80]!r}")
            args = {}
        if problems:
            notes.append(f"call {i + 1} ({name or 'no name'}): {'; '.join(problems)}")
        calls.append({"tool_name": name, "tool_parameters": dict(args)})
    return calls, notes


def upstream_calls(calls: Iterable[Any]) -> list[dict[str, Any]]:
    """The calls upstream's loader keeps from a task or prediction record (§2.2): entries that
    are objects with both ``tool_name`` and ``tool_parameters``; others are dropped silently.
    Use before :func:`compare_tool_calls` on upstream-format files."""
    return [
        {"tool_name": c["tool_name"], "tool_parameters": c["tool_parameters"]}
        for c in calls
        if isinstance(c, Mapping) and "tool_name" in c and "tool_parameters" in c
    ]


def resolve_weights(weights: Mapping[str, float] | None = None) -> dict[str, float]:
    """The overall-score weights to use (§2.4).

    None gives :data:`DEFAULT_WEIGHTS`. Otherwise exactly the keys ``name``, ``params``,
    ``order``, each finite and ≥ 0; weights whose sum differs from 1 by more than 0.001 are
    rescaled to sum to 1 (upstream's ``analyze`` CLI).

    Raises:
        ValueError: wrong keys, a negative or non-finite weight, or all weights 0.
    """
    if weights is None:
        return dict(DEFAULT_WEIGHTS)
    if set(weights) != set(DEFAULT_WEIGHTS):
        raise ValueError(f"weights: expected exactly the keys name, params, order; got {sorted(weights)}")
    out = {k: weights[k] for k in DEFAULT_WEIGHTS}
    for k, v in out.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise ValueError(f"weights.{k}: expected a finite number >= 0, got {v!r}")
    total = sum(out.values())
    if total <= 0:
        raise ValueError("weights: at least one weight must be > 0")
    if abs(total - 1.0) > _WEIGHT_SLACK:
        out = {k: v / total for k, v in out.items()}
    return {k: float(v) for k, v in out.items()}


def resolve_thresholds(thresholds: Mapping[str, float] | None = None) -> dict[str, float]:
    """The flexible-success thresholds to use (§2.4): None gives :data:`DEFAULT_THRESHOLDS`;
    otherwise exactly the keys ``flexible_param`` and ``flexible_order``, each in [0, 1].

    Raises:
        ValueError: wrong keys or a value outside [0, 1].
    """
    if thresholds is None:
        return dict(DEFAULT_THRESHOLDS)
    if set(thresholds) != set(DEFAULT_THRESHOLDS):
        raise ValueError(
            f"thresholds: expected exactly the keys flexible_param, flexible_order; got {sorted(thresholds)}"
        )
    out = {}
    for k in DEFAULT_THRESHOLDS:
        v = thresholds[k]
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
            raise ValueError(f"thresholds.{k}: expected a number in [0, 1], got {v!r}")
        out[k] = float(v)
    return out


# --------------------------------------------------------------------------------------------
# §2.4: the comparison
# --------------------------------------------------------------------------------------------


def _mode_scores(
    gt: list[Mapping[str, Any]],
    pred: list[Mapping[str, Any]],
    flexible: bool,
    weights: dict[str, float],
    thresholds: dict[str, float],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One mode's five fields, and its per-position details (name matches, exact matches,
    extra tools, parameter scores and mismatches keyed as upstream)."""
    n, m = len(gt), len(pred)
    gt_names = [c["tool_name"] for c in gt]
    pred_names = [c["tool_name"] for c in pred]
    gt_name_set, pred_name_set = set(gt_names), set(pred_names)
    gt_name_count = Counter(gt_names)

    scores: list[float] = []  # sᵢ at name-matched positions
    matches: dict[str, float] = {}
    mismatches: dict[str, dict[str, list[Any]]] = {}
    for i, (g, p) in enumerate(zip(gt, pred, strict=False)):
        if g["tool_name"] != p["tool_name"]:
            continue
        s, bad = param_score(g["tool_parameters"], p["tool_parameters"], flexible=flexible)
        scores.append(s)
        # upstream's key: "<name>_<i>" when the ground truth calls that tool more than once
        key = f"{g['tool_name']}_{i}" if gt_name_count[g["tool_name"]] > 1 else g["tool_name"]
        matches[key] = s
        if bad:
            mismatches[key] = bad
    name_matches = len(scores)
    exact = sum(1 for s in scores if s == 1.0)
    extra = [name for name in pred_names if name not in gt_name_set]

    # name score = #{i ≤ min(n,m): names equal} / n; n = 0: 1 if m = 0 else 0
    name_score = name_matches / n if n else (1.0 if m == 0 else 0.0)
    # param score = mean sᵢ over name-matched positions; none: 1 if n = m = 0 else 0
    param = sum(scores) / len(scores) if scores else (1.0 if n == m == 0 else 0.0)
    # order score = LCS(names) / max(n, 1); 1 when n = m = 0
    order = 1.0 if n == m == 0 else lcs_length(gt_names, pred_names) / max(n, 1)
    if n == m == 0:
        success = True
    elif flexible:
        # every GT position name-matched, every sᵢ ≥ flexible_param, order ≥ flexible_order
        success = (
            name_matches == n
            and all(s >= thresholds["flexible_param"] for s in scores)
            and order >= thresholds["flexible_order"]
        )
    else:
        # every GT position matched with sᵢ = 1, no predicted tool outside GT's names, order 1
        success = exact == n and not extra and order == 1.0
    overall = weights["name"] * name_score + weights["params"] * param + weights["order"] * order
    fields = {
        "success": success,
        "overall_score": overall,
        "tool_name_score": name_score,
        "param_match_score": param,
        "order_score": order,
    }
    details = {
        "name_only_matches": name_matches,
        "exact_matches": exact,
        "missing_tools": [name for name in gt_names if name not in pred_name_set],
        "extra_tools": extra,
        "param_mismatches": mismatches,
        "param_matches": matches,
    }
    return fields, details


def call_failure_kind(
    ground_truth: Sequence[Mapping[str, Any]], prediction: Sequence[Mapping[str, Any]]
) -> str:
    """Why a prediction failed :func:`compare_tool_calls`'s flexible rule, as a failure kind
    (:data:`pytest_egi.outcomes.FAILURE_KINDS`), from the names the matcher compares.

    - no call made, or fewer calls with every one name-matched in place: ``missing_call``;
    - a call but no ground truth (n = 0 < m): ``extra_call``;
    - a ground-truth name absent from the prediction and a predicted name absent from the
      ground truth: ``wrong_tool``; only the first: ``missing_call``; only the second:
      ``extra_call``;
    - the same names, every position name-matched: ``wrong_argument`` (a parameter score
      below the flexible threshold); the same names out of place: ``wrong_tool`` (more
      calls: ``extra_call``; fewer: ``missing_call``).

    Args:
        ground_truth, prediction: ``{"tool_name", "tool_parameters"}`` lists, as
            :func:`compare_tool_calls` takes them.
    """
    gt = [str(c.get("tool_name")) for c in ground_truth]
    pred = [str(c.get("tool_name")) for c in prediction]
    if not pred:
        return "missing_call"
    if not gt:
        return "extra_call"
    missing = [n for n in gt if n not in set(pred)]
    extra = [n for n in pred if n not in set(gt)]
    if missing and extra:
        return "wrong_tool"
    if missing:
        return "missing_call"
    if extra:
        return "extra_call"
    if all(g == p for g, p in zip(gt, pred, strict=False)):
        return "missing_call" if len(pred) < len(gt) else "wrong_argument"
    if len(pred) != len(gt):
        return "extra_call" if len(pred) > len(gt) else "missing_call"
    return "wrong_tool"


def compare_tool_calls(
    ground_truth: Sequence[Mapping[str, Any]],
    prediction: Sequence[Mapping[str, Any]],
    *,
    weights: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Compare a predicted tool-call list with the ground truth, in both modes (§2.4).

    Args:
        ground_truth: g₁…gₙ, each ``{"tool_name": str, "tool_parameters": dict}``.
        prediction: p₁…pₘ, same shape (an empty list: the model made no call).
        weights: ``{"name", "params", "order"}``; default 0.4 / 0.4 / 0.2
            (:func:`resolve_weights`).
        thresholds: ``{"flexible_param", "flexible_order"}``; default 0.6 / 0.5.

    Returns:
        upstream's per-task ``evaluation`` layout (§2.5) without ``task_id``::

            {"counts": {"ground_truth_tool_count": n, "prediction_tool_count": m,
                        "tool_count_match": n == m, "name_only_matches": int,
                        "exact_matches": int (strict sᵢ = 1)},
             "strict":   {"success": bool, "overall_score": float, "tool_name_score": float,
                          "param_match_score": float, "order_score": float},
             "flexible": {... same keys ...},
             "weights": {...}, "thresholds": {...},
             "missing_tools": [GT names, in GT order and with repeats, absent from the
                               prediction's names],
             "extra_tools": [predicted names absent from GT's names],
             "param_mismatches": {key: {param: [gt value, predicted value]}} (strict),
             "param_matches": {key: strict sᵢ}}

        where key is the tool name, or ``<name>_<i>`` (i = 0-based position) when the ground
        truth calls that tool more than once. Scores are in [0, 1].

        Formulas (§2.4): name = #{i ≤ min(n, m): name(gᵢ) = name(pᵢ)} / n; param = mean sᵢ
        (:func:`param_score`) over name-matched positions; order = LCS(names) / max(n, 1);
        overall = w_name·name + w_params·param + w_order·order. n = m = 0 scores 1 everywhere
        and succeeds; n = 0 < m scores 0 and fails. Strict success: every GT position
        matched with sᵢ = 1, no extra tool name, order = 1 (so trailing extra calls reusing
        GT names are not penalised). Flexible success: every GT position name-matched, every
        sᵢ ≥ 0.6, order ≥ 0.5. One call inserted early shifts every later position, which can
        zero the name and param scores while the order score stays high. When every GT
        position is name-matched the GT names are a subsequence of the prediction, so the
        order score is 1: the order threshold only decides the case n = 0 < m.

    Raises:
        ValueError: a malformed call list (message names the list, position and field),
            or bad weights / thresholds.
    """
    gt = _check_calls(ground_truth, "ground truth")
    pred = _check_calls(prediction, "prediction")
    w, t = resolve_weights(weights), resolve_thresholds(thresholds)
    strict, details = _mode_scores(gt, pred, False, w, t)
    flexible, _ = _mode_scores(gt, pred, True, w, t)
    return {
        "counts": {
            "ground_truth_tool_count": len(gt),
            "prediction_tool_count": len(pred),
            "tool_count_match": len(gt) == len(pred),
            "name_only_matches": details["name_only_matches"],
            "exact_matches": details["exact_matches"],
        },
        "strict": strict,
        "flexible": flexible,
        "weights": w,
        "thresholds": t,
        "missing_tools": details["missing_tools"],
        "extra_tools": details["extra_tools"],
        "param_mismatches": details["param_mismatches"],
        "param_matches": details["param_matches"],
    }


def no_prediction_evaluation(
    ground_truth: Sequence[Mapping[str, Any]],
    *,
    weights: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The evaluation of a task with **no prediction** (deliberate difference, §4.4).

    Same layout as :func:`compare_tool_calls`, with every score 0 and both successes False,
    whatever the ground truth (even an empty one, which an empty prediction would match);
    ``missing_tools`` lists every ground-truth name, ``prediction_tool_count`` is 0. Upstream
    skips such a task instead of counting it (§2.5).
    """
    out = compare_tool_calls(ground_truth, [], weights=weights, thresholds=thresholds)
    for mode in MODES:
        out[mode] = {k: (False if k == "success" else 0.0) for k in _MODE_KEYS}
    out["counts"]["tool_count_match"] = False
    return out


# --------------------------------------------------------------------------------------------
# Per-task values and per-domain aggregation (§2.5)
# --------------------------------------------------------------------------------------------

TASK_VALUE_KEYS = (
    "flexible_overall",
    "strict_overall",
    "flexible_success",
    "strict_success",
    "name",
    "strict_param",
    "flexible_param",
    "order",
    "no_answer",
    "judge_trajectory",
    "judge_completion",
)
"""Keys of :func:`task_values` (a trial's ``TaskScore.values``)."""

ROUTED_METRIC = "flexible_avg"
"""The routed per-domain sub-metric: ``<domain>.flexible_avg``."""
DOMAIN_METRICS = (
    "flexible_avg",
    "strict_avg",
    "flexible_success_rate",
    "strict_success_rate",
    "name_avg",
    "strict_param_avg",
    "flexible_param_avg",
    "order_avg",
    "no_answer_rate",
    "judge_trajectory_avg",
    "judge_completion_avg",
    "judge_trajectory_n",
    "judge_completion_n",
    "n_tasks",
)
"""Per-domain sub-metrics of :func:`summarize_domain`, each as ``<domain>.<metric>``."""


def task_values(
    evaluation: Mapping[str, Any] | None,
    *,
    no_answer: bool = False,
    judge_trajectory: float | None = None,
    judge_completion: float | None = None,
) -> dict[str, float | None]:
    """Per-task values (0–1) from one task's evaluation, for ``TaskScore.values``.

    Args:
        evaluation: :func:`compare_tool_calls`'s result, or None for a task with no
            prediction (a failure with zero scores: :func:`no_prediction_evaluation`).
        no_answer: the trial ended without a final answer (blank or cut-off reply, turns
            ran out: :func:`pytest_egi.agents.loops.no_answer_reason`). A diagnostic only:
            the scores come from the calls whatever the reply, as upstream's ``analyze``
            reads nothing but ``tool_calls`` (§2.4).
        judge_trajectory, judge_completion: the judge's overall aspect means
            (:func:`parse_judge_verdict`), or None when not judged or unparsable.

    Returns:
        ``flexible_overall`` / ``strict_overall`` (overall scores), ``flexible_success`` /
        ``strict_success`` (1.0 or 0.0), ``name`` (tool-name score; the same in both
        modes), ``strict_param`` / ``flexible_param``, ``order`` (the same in both modes),
        ``no_answer`` (1.0 or 0.0), ``judge_trajectory`` / ``judge_completion`` (None when
        missing).
    """
    if evaluation is None:
        strict = flexible = {k: (False if k == "success" else 0.0) for k in _MODE_KEYS}
    else:
        strict, flexible = evaluation["strict"], evaluation["flexible"]
    return {
        "flexible_overall": float(flexible["overall_score"]),
        "strict_overall": float(strict["overall_score"]),
        "flexible_success": 1.0 if flexible["success"] else 0.0,
        "strict_success": 1.0 if strict["success"] else 0.0,
        "name": float(flexible["tool_name_score"]),
        "strict_param": float(strict["param_match_score"]),
        "flexible_param": float(flexible["param_match_score"]),
        "order": float(flexible["order_score"]),
        "no_answer": 1.0 if no_answer else 0.0,
        "judge_trajectory": None if judge_trajectory is None else float(judge_trajectory),
        "judge_completion": None if judge_completion is None else float(judge_completion),
    }


def sub_metric_names(domains: Iterable[str]) -> frozenset[str]:
    """Every ``<domain>.<metric>`` :func:`summarize_domain` can return for ``domains``."""
    return frozenset(f"{d}.{m}" for d in domains for m in DOMAIN_METRICS)


def _mean(xs: list[float]) -> float | None:
    """Mean of ``xs`` (correctly rounded sum, so independent of the order), None if empty."""
    return math.fsum(xs) / len(xs) if xs else None


def _fmean(xs: list[float]) -> float:
    """Upstream's summary mean: 0 with no task (an int 0, as upstream writes it)."""
    return math.fsum(xs) / len(xs) if xs else 0


def summarize_domain(domain: str, values: Iterable[Mapping[str, float | None]]) -> dict[str, float | None]:
    """One domain's sub-metrics from its tasks' :func:`task_values` (§2.5).

    Every task counts, a task with no prediction included (its values are zeros: deliberate
    difference, upstream skipped it). Means are plain means over the tasks (upstream's
    ``summary_analysis`` averages).

    Returns:
        ``<domain>.flexible_avg``: mean flexible overall score (the routed sub-metric, 0–1);
        reported, not routed: ``strict_avg`` (mean strict overall), ``flexible_success_rate``
        and ``strict_success_rate`` (share of tasks that succeed), ``name_avg``,
        ``strict_param_avg``, ``flexible_param_avg``, ``order_avg`` (0–1), ``no_answer_rate``
        (share of tasks that ended without a final answer; their calls are scored all the
        same), ``judge_trajectory_avg`` / ``judge_completion_avg`` (mean over the tasks with a
        verdict; None when none has one), ``judge_trajectory_n`` / ``judge_completion_n``
        (tasks with a verdict) and ``n_tasks``. With no task every mean is None.

    Raises:
        ValueError: a values mapping lacks a key of :data:`TASK_VALUE_KEYS` or has a None
            where a score is required.
    """
    cols: dict[str, list[float]] = defaultdict(list)
    n = 0
    for i, v in enumerate(values):
        n += 1
        missing = [k for k in TASK_VALUE_KEYS if k not in v]
        if missing:
            raise ValueError(f"{domain} task {i + 1}: values lack {missing} (build them with task_values)")
        for k in TASK_VALUE_KEYS:
            x = v[k]
            if x is None:
                if not k.startswith("judge_"):
                    raise ValueError(
                        f"{domain} task {i + 1}: values[{k!r}] is None; only judge values may be")
                continue
            cols[k].append(float(x))
    out: dict[str, float | None] = {
        "flexible_avg": _mean(cols["flexible_overall"]),
        "strict_avg": _mean(cols["strict_overall"]),
        "flexible_success_rate": _mean(cols["flexible_success"]),
        "strict_success_rate": _mean(cols["strict_success"]),
        "name_avg": _mean(cols["name"]),
        "strict_param_avg": _mean(cols["strict_param"]),
        "flexible_param_avg": _mean(cols["flexible_param"]),
        "order_avg": _mean(cols["order"]),
        "no_answer_rate": _mean(cols["no_answer"]),
        "judge_trajectory_avg": _mean(cols["judge_trajectory"]),
        "judge_completion_avg": _mean(cols["judge_completion"]),
        "judge_trajectory_n": float(len(cols["judge_trajectory"])),
        "judge_completion_n": float(len(cols["judge_completion"])),
        "n_tasks": float(n),
    }
    return {f"{domain}.{k}": out[k] for k in DOMAIN_METRICS}


_MEAN_OF = {
    "flexible_avg": "flexible_overall",
    "strict_avg": "strict_overall",
    "flexible_success_rate": "flexible_success",
    "strict_success_rate": "strict_success",
    "name_avg": "name",
    "strict_param_avg": "strict_param",
    "flexible_param_avg": "flexible_param",
    "order_avg": "order",
    "no_answer_rate": "no_answer",
    "judge_trajectory_avg": "judge_trajectory",
    "judge_completion_avg": "judge_completion",
}
"""The mean sub-metrics of :func:`summarize_domain` and the task value each averages."""
DOMAIN_COLUMNS = ("n", *(f"{k}.{part}" for k in TASK_VALUE_KEYS for part in ("sum", "n")))
"""One domain's columns for :func:`domain_row` and :func:`finish_domain`: its tasks, and per
value of :data:`TASK_VALUE_KEYS` its sum and how many tasks have it."""


def domain_row(values: Mapping[str, float | None]) -> list[float] | None:
    """One task's :data:`DOMAIN_COLUMNS` (a row of the suite's ``summary_columns``), or None
    when :func:`summarize_domain` would refuse its values (a key missing, or None where a
    score is required)."""
    row = [1.0]
    for k in TASK_VALUE_KEYS:
        if k not in values:
            return None
        x = values[k]
        if x is None and not k.startswith("judge_"):
            return None
        row += [0.0, 0.0] if x is None else [float(x), 1.0]
    return row


def finish_domain(domain: str, sums: Mapping[str, float]) -> dict[str, float | None]:
    """:func:`summarize_domain` from the column sums of its tasks' :func:`domain_row` (each
    column name prefixed ``<domain>.``)."""

    def mean(key: str) -> float | None:
        n = sums[f"{domain}.{key}.n"]
        return sums[f"{domain}.{key}.sum"] / n if n else None

    out: dict[str, float | None] = {m: mean(k) for m, k in _MEAN_OF.items()}
    out["judge_trajectory_n"] = float(round(sums[f"{domain}.judge_trajectory.n"]))
    out["judge_completion_n"] = float(round(sums[f"{domain}.judge_completion.n"]))
    out["n_tasks"] = float(round(sums[f"{domain}.n"]))
    return {f"{domain}.{k}": out[k] for k in DOMAIN_METRICS}


# --------------------------------------------------------------------------------------------
# Upstream file layouts (§2.5)
# --------------------------------------------------------------------------------------------


def task_result_entry(
    task_id: str,
    ground_truth: Sequence[Mapping[str, Any]],
    prediction: Sequence[Mapping[str, Any]] | None,
    evaluation: Mapping[str, Any] | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """One element of the task-metrics file's ``task_results`` (§2.5)::

        {"task_id", "ground_truth_calls", "prediction_calls", "evaluation": {"task_id", ...}}

    ``evaluation`` is :func:`compare_tool_calls`'s result (computed here when None). A task
    with no prediction (``prediction`` None) gets ``prediction_calls: []``, the
    :func:`no_prediction_evaluation`, and an extra ``"no_prediction": true`` (upstream would
    have left the task out).
    """
    if evaluation is None:
        if prediction is None:
            evaluation = no_prediction_evaluation(ground_truth, weights=weights, thresholds=thresholds)
        else:
            evaluation = compare_tool_calls(ground_truth, prediction, weights=weights, thresholds=thresholds)
    entry: dict[str, Any] = {
        "task_id": task_id,
        "ground_truth_calls": [_plain_call(c) for c in ground_truth],
        "prediction_calls": [_plain_call(c) for c in prediction or []],
        "evaluation": {"task_id": task_id, **{k: v for k, v in evaluation.items() if k != "task_id"}},
    }
    if prediction is None:
        entry["no_prediction"] = True
    return entry


def _plain_call(call: Mapping[str, Any]) -> dict[str, Any]:
    return {"tool_name": call["tool_name"], "tool_parameters": dict(call["tool_parameters"])}


def summary_metrics(
    entries: Sequence[Mapping[str, Any]],
    *,
    weights: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Upstream's ``summary_metrics`` (the summary file's ``summary``) over task entries (§2.5).

    ``total_tasks`` = #entries; ``tasks_with_matching_tools`` = #tasks whose
    ``missing_tools`` is shorter than the ground truth; per mode (``exact_match`` = strict,
    ``flexible_match``) ``tasks_with_complete_success`` and the plain means over
    ``total_tasks`` of the name, param, order and overall scores (0 with no task, as upstream);
    then ``weights`` and ``thresholds``. Sums are correctly rounded (``math.fsum``), which
    reproduces the stored upstream summaries bit for bit whatever the task order.
    """
    total = len(entries)
    out: dict[str, Any] = {
        "total_tasks": total,
        "tasks_with_matching_tools": sum(
            1 for e in entries if len(e["evaluation"]["missing_tools"]) < len(e["ground_truth_calls"])
        ),
    }
    for label, mode in (("exact_match", "strict"), ("flexible_match", "flexible")):
        rs = [e["evaluation"][mode] for e in entries]
        out[label] = {
            "tasks_with_complete_success": sum(1 for r in rs if r["success"]),
            "average_name_match_score": _fmean([r["tool_name_score"] for r in rs]),
            "average_param_match_score": _fmean([r["param_match_score"] for r in rs]),
            "average_order_match_score": _fmean([r["order_score"] for r in rs]),
            "average_overall_score": _fmean([r["overall_score"] for r in rs]),
        }
    out["weights"] = resolve_weights(weights)
    out["thresholds"] = resolve_thresholds(thresholds)
    return out


def task_metrics_file(
    entries: Sequence[Mapping[str, Any]],
    *,
    weights: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Upstream's task-metrics file (``analyze --evaluation-output``, §2.5), JSON-ready::

        {"task_results": [task_result_entry, ...], "summary_metrics": summary_metrics(...)}

    ``entries`` come from :func:`task_result_entry`; ``weights`` / ``thresholds`` are those
    the entries were scored with (recorded in ``summary_metrics``).
    """
    return {
        "task_results": [dict(e) for e in entries],
        "summary_metrics": summary_metrics(entries, weights=weights, thresholds=thresholds),
    }


def summary_analysis_file(
    entries: Sequence[Mapping[str, Any]],
    *,
    weights: Mapping[str, float] | None = None,
    thresholds: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Upstream's ``<stem>_summary_analysis.json`` (§2.5), JSON-ready.

    Keys, in upstream's order:

    * ``summary``: :func:`summary_metrics`;
    * ``parameter_mismatches``: {key (tool name or ``<name>_<i>``): {param: #tasks}} from the
      strict ``param_mismatches``;
    * ``tool_usage``: ``ground_truth_tools``, ``prediction_tools`` (calls by tool name),
      ``missing_tools``, ``extra_tools`` (counts over the tasks' lists);
    * ``success_patterns``: ``by_tool_count`` and ``by_tool_combination``, each
      {``strict``|``flexible``: {``success``|``failure``: {key: #tasks}}}, keyed by the
      ground-truth call count (a string, ascending, both outcomes listed once the count is
      seen) or by ``"2x tool_a, 1x tool_b"`` (names in first-call order; most frequent
      first), and ``by_tool`` ({tool: ``success_rate``, ``total_tasks``,
      ``successful_tasks``}, strict, counting every ground-truth call of the tool);
    * ``evaluation_config``: ``weights`` and ``thresholds`` (current upstream; older upstream
      output, such as the stored playwright files, lacks this key).
    """
    mismatch_counts: dict[str, Counter[str]] = defaultdict(Counter)
    usage = {k: Counter() for k in ("ground_truth_tools", "prediction_tools", "missing_tools", "extra_tools")}
    by_count: dict[str, dict[str, dict[int, int]]] = {m: {"success": {}, "failure": {}} for m in MODES}
    by_combo: dict[str, dict[str, Counter[str]]] = {
        m: {"success": Counter(), "failure": Counter()} for m in MODES
    }
    per_tool: dict[str, list[int]] = {}  # tool -> [successes, failures] (strict)
    for e in entries:
        ev = e["evaluation"]
        for key, params in ev.get("param_mismatches", {}).items():
            for param in params:
                mismatch_counts[key][param] += 1
        gt_names = [c["tool_name"] for c in e["ground_truth_calls"]]
        usage["ground_truth_tools"].update(gt_names)
        usage["prediction_tools"].update(c["tool_name"] for c in e["prediction_calls"])
        usage["missing_tools"].update(ev.get("missing_tools", []))
        usage["extra_tools"].update(ev.get("extra_tools", []))
        combo = ", ".join(f"{k}x {name}" for name, k in Counter(gt_names).items())
        for mode in MODES:
            outcome = "success" if ev[mode]["success"] else "failure"
            counts = by_count[mode]
            counts["success"].setdefault(len(gt_names), 0)
            counts["failure"].setdefault(len(gt_names), 0)
            counts[outcome][len(gt_names)] += 1
            by_combo[mode][outcome][combo] += 1
        for name in gt_names:
            tally = per_tool.setdefault(name, [0, 0])
            tally[0 if ev["strict"]["success"] else 1] += 1
    success_patterns = {
        "by_tool_count": {
            m: {o: {str(k): v for k, v in sorted(by_count[m][o].items())} for o in ("success", "failure")}
            for m in MODES
        },
        "by_tool_combination": {
            m: {
                o: dict(sorted(by_combo[m][o].items(), key=lambda kv: kv[1], reverse=True))
                for o in ("success", "failure")
            }
            for m in MODES
        },
        "by_tool": {
            name: {"success_rate": ok / (ok + bad), "total_tasks": ok + bad, "successful_tasks": ok}
            for name, (ok, bad) in per_tool.items()
        },
    }
    summary = summary_metrics(entries, weights=weights, thresholds=thresholds)
    return {
        "summary": summary,
        "parameter_mismatches": {k: dict(v) for k, v in mismatch_counts.items()},
        "tool_usage": {k: dict(v) for k, v in usage.items()},
        "success_patterns": success_patterns,
        "evaluation_config": {"weights": summary["weights"], "thresholds": summary["thresholds"]},
    }


# --------------------------------------------------------------------------------------------
# §2.6: the optional LLM judge
# --------------------------------------------------------------------------------------------

TRAJECTORY_ASPECTS = (
    "planning",
    "execution_flow",
    "tool_selection",
    "tool_usage",
    "adaptability",
    "efficiency",
    "context_awareness",
)
"""The trajectory judge's seven aspects, each 0–1 (§2.6)."""
COMPLETION_ASPECTS = ("requirement_coverage", "accuracy", "completeness", "usefulness")
"""The completion judge's four aspects, each 0–1 (§2.6)."""

_TRAJECTORY_CRITERIA = {
    "planning": "did the agent understand the task and break it into sensible steps?",
    "execution_flow": "were the actions taken in a logical, well-structured sequence?",
    "tool_selection": "was the right tool picked for each step?",
    "tool_usage": "were the tool arguments correct and the tool results read correctly?",
    "adaptability": (
        "how well were errors, unexpected results or changed circumstances handled? A run "
        "with no error and nothing unexpected shows robustness and deserves 0.9-1.0; give "
        "low values only when a real problem was handled badly."
    ),
    "efficiency": "did the agent reach the goal without unnecessary calls or steps?",
    "context_awareness": "did the agent keep track of the relevant context, constraints and state?",
}
_COMPLETION_CRITERIA = {
    "requirement_coverage": "does the outcome address every part of the task?",
    "accuracy": "are the facts and the analysis in the final response correct?",
    "completeness": "is the final response thorough?",
    "usefulness": "would the final response be of practical use to the person who asked?",
}


def _judge_system(kind: str, criteria: Mapping[str, str], focus: str) -> str:
    lines = [
        f"You grade an AI agent's {kind}. {focus}",
        "",
        "Score each criterion from 0.0 (very poor) to 1.0 (excellent):",
        *(f"- {k}: {v}" for k, v in criteria.items()),
        "",
        "Reply with one JSON object and nothing else: a JSON number (not a string) for every "
        "criterion and a short explanation, as in",
        "{",
        *(f'  "{k}": <number from 0.0 to 1.0>,' for k in criteria),
        '  "comments": "<one or two sentences>"',
        "}",
    ]
    return "\n".join(lines)


def _task_text(task: Mapping[str, Any]) -> str:
    text = task.get("description") or task.get("goal")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("judge prompt: the task has neither a 'description' nor a 'goal' text")
    return text


def trajectory_judge_messages(
    task: Mapping[str, Any],
    conversation: Sequence[Mapping[str, Any]],
    *,
    expected_tool_calls: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, str]]:
    """Chat messages asking a judge to grade the model's **trajectory** (§2.6).

    Args:
        task: the task record; its ``description`` (else ``goal``) is shown, as upstream.
        conversation: the model's own messages (OpenAI-style, tool calls and results
            included), never the ground-truth conversation (§2.7 #4).
        expected_tool_calls: optionally the ground-truth calls, shown as a reference *in
            addition to* the model's trajectory.

    Returns:
        ``[{"role": "system", ...}, {"role": "user", ...}]``; the system message lists the
        seven :data:`TRAJECTORY_ASPECTS` and asks for a JSON object of 0–1 numbers.

    Raises:
        ValueError: the task has no description or goal text.
    """
    parts = [
        "Task description:\n" + _task_text(task),
        "The agent's trajectory (the whole conversation):\n"
        + json.dumps(list(conversation), ensure_ascii=False, indent=2, default=str),
    ]
    if expected_tool_calls:
        parts.append(
            "Reference tool calls (one correct way to do the task):\n"
            + json.dumps(list(expected_tool_calls), ensure_ascii=False, indent=2, default=str)
        )
    system = _judge_system(
        "execution trajectory",
        _TRAJECTORY_CRITERIA,
        "Judge how the agent went about the task, every tool call and tool result included.",
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


def completion_judge_messages(
    task: Mapping[str, Any],
    final_response: str | None,
    conversation: Sequence[Mapping[str, Any]] | None = None,
    *,
    expected_answer: str | None = None,
) -> list[dict[str, str]]:
    """Chat messages asking a judge to grade the model's **task completion** (§2.6).

    Args:
        task: the task record; its ``description`` (else ``goal``) is shown.
        final_response: the model's final answer (None or blank is shown as "(no final
            response)").
        conversation: optionally the model's trajectory, for context.
        expected_answer: optionally the ground-truth ``final_response``, shown as a reference
            in addition to the model's answer, never in its place (§2.7 #4).

    Returns:
        ``[{"role": "system", ...}, {"role": "user", ...}]``; the system message lists the
        four :data:`COMPLETION_ASPECTS`.

    Raises:
        ValueError: the task has no description or goal text.
    """
    answer = final_response if final_response and final_response.strip() else "(no final response)"
    parts = ["Task description:\n" + _task_text(task), "The agent's final response:\n" + answer]
    if conversation:
        parts.append(
            "The agent's trajectory (the whole conversation):\n"
            + json.dumps(list(conversation), ensure_ascii=False, indent=2, default=str)
        )
    if expected_answer:
        parts.append("Reference answer (written by a verifier run):\n" + expected_answer)
    system = _judge_system(
        "task completion",
        _COMPLETION_CRITERIA,
        "Judge the final outcome against what the task asked for.",
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n\n".join(parts)}]


_Score = Annotated[float, Field(ge=0.0, le=1.0, strict=True, allow_inf_nan=False)]


class _TrajectoryVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)  # built on the first LLM verdict
    planning: _Score
    execution_flow: _Score
    tool_selection: _Score
    tool_usage: _Score
    adaptability: _Score
    efficiency: _Score
    context_awareness: _Score
    comments: str = Field(default="", strict=True)


class _CompletionVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)
    requirement_coverage: _Score
    accuracy: _Score
    completeness: _Score
    usefulness: _Score
    comments: str = Field(default="", strict=True)


_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n(.*?)\n?```", re.DOTALL)


def _reply_object(reply: str) -> Any:
    """The JSON of a reply that is one JSON object, or that holds exactly one fenced code
    block; anything else is None."""
    text = reply.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    blocks = _FENCE.findall(text)
    if len(blocks) != 1:
        return None
    try:
        return json.loads(blocks[0])
    except ValueError:
        return None


def parse_judge_verdict(
    reply: str | None, kind: Literal["trajectory", "completion"]
) -> dict[str, Any] | None:
    """Read a judge reply strictly (§2.6); None when it gives no usable verdict.

    The reply must be a JSON object, either alone or as the only fenced code block, with a
    JSON number in [0, 1] for every aspect of ``kind`` (:data:`TRAJECTORY_ASPECTS` or
    :data:`COMPLETION_ASPECTS`; booleans, strings such as ``"0.8"``, NaN and out-of-range
    values are refused) and optionally a string ``comments``; other keys (such as a judge's
    own ``overall``) are ignored.

    Returns:
        ``{"aspects": {aspect: score}, "overall": unweighted mean of the aspects,
        "comments": str}``, or None for an unparsable verdict: a missing verdict, never
        zeros (deliberate difference: upstream records zeros, and fills a missing aspect
        with 0).

    Raises:
        ValueError: ``kind`` is neither ``trajectory`` nor ``completion``.
    """
    models = {
        "trajectory": (_TrajectoryVerdict, TRAJECTORY_ASPECTS),
        "completion": (_CompletionVerdict, COMPLETION_ASPECTS),
    }
    if kind not in models:
        raise ValueError(f"judge verdict kind must be 'trajectory' or 'completion', got {kind!r}")
    model, aspects = models[kind]
    if not isinstance(reply, str):
        return None
    data = _reply_object(reply)
    if not isinstance(data, dict):
        return None
    try:
        verdict = model.model_validate(data)
    except ValidationError:
        return None
    scores = {a: float(getattr(verdict, a)) for a in aspects}
    return {"aspects": scores, "overall": sum(scores.values()) / len(scores), "comments": verdict.comments}
