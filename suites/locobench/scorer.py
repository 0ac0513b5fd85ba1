"""Scoring one LoCoBench trial: the four dimensions, from real checks (reference C2).

Per-task values (all 0-1):

- ``fc`` (functional_correctness): the share of the hidden tests that pass (plain and
  needle tests, plus the static checks a category has, such as "the bandit finding is
  gone"); 0 when the project no longer compiles or imports (the smoke test) or a regression
  test breaks, or when the checks were stopped (timeout, memory, ...).
  A scenario without hidden tests (upstream's files ship none) has only that gate: 1 when
  the project compiles, imports and passes its own tests after the answer, else 0.
- ``lcu`` (longcontext_utilization): the share of the needle tests that pass (tests that
  pass only when facts stated in specific context files were used); None for a scenario
  without needle tests (an upstream scenario).
- ``cq`` (code_quality): ``quality.code_quality`` on the changed files.
- ``se`` (software_engineering): ``structure.software_engineering`` on the final tree.
- ``decoy``: 1 when a decoy test passed (the answer used a decoy module's conflicting fact:
  a context confusion), else 0.

A trial with no answer (the core's ``no_answer_reason``), a reply that does not parse, or an
answer that changes nothing scores 0 on every dimension (never credited).

LoCoBench's total, LCBS = 5 × (0.4·SE + 0.3·FC + 0.2·CQ + 0.1·LCU) (reference B5), is kept
as a diagnostic; it is NOT comparable with the paper's numbers (different checks).

The sandbox checks run once per trial: :func:`trial_checks` (called by the agent when the
model has finished) keeps their result in the trajectory (``info["locobench"]["checks"]``,
content-addressed: ``suites.locobench.env.checks_key``), and the scorer reads it there when
the key recomputed from the replayed files and the scenario is the same; otherwise (a
trajectory from before, another scenario or other limits, an edited or malformed result) it
runs the checks itself. Read or run, the score is the same.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.outcomes import ending_kind
from pytest_egi.sandbox import Limits
from pytest_egi.suite import TaskScore
from suites.locobench.data import Scenario
from suites.locobench.env import Checked, checks_key, read_checks, run_checks, stored_checks
from suites.locobench.quality import bandit_findings, code_quality
from suites.locobench.replies import replay
from suites.locobench.structure import software_engineering

__all__ = [
    "LCBS_WEIGHTS",
    "hidden_test_names",
    "lcbs",
    "score_replies",
    "static_checks",
    "trial_checks",
]

LCBS_WEIGHTS = {"se": 0.4, "fc": 0.3, "cq": 0.2, "lcu": 0.1}
"""LoCoBench's dimension weights (``config.yaml``, reference B5)."""


def lcbs(se: float, fc: float, cq: float, lcu: float | None) -> float:
    """LCBS = 5 × (0.4·SE + 0.3·FC + 0.2·CQ + 0.1·LCU), 0-5 (LCU None counts 0)."""
    w = {k: 5 * v for k, v in LCBS_WEIGHTS.items()}  # 2.0, 1.5, 1.0, 0.5: exact, so the top is 5.0
    return w["se"] * se + w["fc"] * fc + w["cq"] * cq + w["lcu"] * (lcu or 0.0)


def hidden_test_names(source: str) -> dict[str, list[str]]:
    """The hidden test functions of a hidden test module, by group: ``needle`` (a ``needle``
    word in the name), ``decoy`` (a ``decoy`` word), ``hidden`` (the others)."""
    if not source:
        return {"hidden": [], "needle": [], "decoy": []}
    names = [
        n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")
    ]
    out: dict[str, list[str]] = {"hidden": [], "needle": [], "decoy": []}
    for name in names:
        words = name.split("_")
        out["needle" if "needle" in words else "decoy" if "decoy" in words else "hidden"].append(name)
    return out


def static_checks(scenario: Scenario, files: dict[str, str]) -> dict[str, bool]:
    """The category's static checks on the final tree: check name -> passed
    (``bandit_gone``: bandit no longer reports the planted finding in that file)."""
    out = {}
    for check in scenario.planted.static_checks if scenario.planted else []:
        if check["kind"] == "bandit_gone":
            text = files.get(check["file"])
            found = bandit_findings({check["file"]: text}) if text is not None else []
            out[check["name"]] = not any(f[2] == check["test_id"] for f in found)
    return out


def _zero(reason: str, details: dict[str, Any], lcu_defined: bool) -> TaskScore:
    values = {"fc": 0.0, "cq": 0.0, "se": 0.0, "lcu": 0.0 if lcu_defined else None, "decoy": 0.0, "lcbs": 0.0}
    return TaskScore(
        success=False,
        values=values,
        expected="all hidden tests pass",
        got=reason,
        details={**details, "reason": reason},
    )


def score_replies(scenario: Scenario, trajectory: dict[str, Any], limits: Limits) -> TaskScore:
    """Score a trajectory's replies on ``scenario`` (module docstring), with the failure kind
    of a failed trial: ``no_answer`` / ``turn_limit``, ``gave_up`` ("I don't know."-style
    final reply), else ``wrong_answer`` (the code fails a hidden test, changes no file, or
    does not parse). The sandbox checks are read from the trajectory when it keeps them for
    these inputs (:func:`trial_checks`), else run here.

    Raises:
        SandboxError: the sandbox could not start (an infrastructure error).
        RuntimeError: a code-quality tool failed (an infrastructure error).
    """
    score = _score_replies(scenario, trajectory, limits)
    if score.success:
        return score
    return score.model_copy(update={"failure_kind": ending_kind(trajectory, _last_reply(trajectory))
                                    or "wrong_answer"})


def _last_reply(trajectory: dict[str, Any]) -> Any:
    """The final answer, else the text of the last assistant message (the code replies)."""
    if trajectory.get("final_answer") is not None:
        return trajectory["final_answer"]
    replies = [m.get("content") for m in trajectory.get("messages") or [] if m.get("role") == "assistant"]
    return replies[-1] if replies else None


@dataclass
class _Answer:
    """A trajectory's answer as the scorer sees it: ``zero`` the reason it scores 0 without
    checks (no answer, no reply applied, no file changed), else None; ``final`` the replayed
    tree, ``changed`` its changed paths (sorted); ``details`` the score's details so far."""

    details: dict[str, Any]
    zero: str | None = None
    final: dict[str, str] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)


def _answer(scenario: Scenario, trajectory: dict[str, Any]) -> _Answer:
    details: dict[str, Any] = {"scenario": scenario.id, "difficulty": scenario.difficulty}
    missing = no_answer_reason(trajectory)
    if missing is not None:
        return _Answer(details, f"no answer: {missing}")
    replies = [m.get("content") for m in trajectory.get("messages", []) if m.get("role") == "assistant"]
    final, notes = replay(scenario, replies)
    details["sessions"] = notes
    if not any(n["ok"] for n in notes):
        return _Answer(details, "; ".join(f"session {n['session']}: {n['reason']}" for n in notes))
    changed = sorted(p for p in set(final) | set(scenario.files) if final.get(p) != scenario.files.get(p))
    details["changed"] = changed
    if not changed:
        return _Answer(details, "the answer changed no file")
    return _Answer(details, None, final, changed)


def _stored(trajectory: dict[str, Any]) -> Any:
    """The trajectory's stored check result (``info["locobench"]["checks"]``), else None."""
    info = trajectory.get("info")
    mine = info.get("locobench") if isinstance(info, dict) else None
    return mine.get("checks") if isinstance(mine, dict) else None


def _checks(scenario: Scenario, final: dict[str, str], limits: Limits, trajectory: dict[str, Any]) -> Checked:
    """The checks of ``final``: read from the trajectory when stored there for exactly these
    inputs (same :func:`~suites.locobench.env.checks_key`), else run in the sandbox.

    Raises:
        SandboxError: the sandbox could not start (an infrastructure error).
    """
    hidden = scenario.hidden_files()
    stored = _stored(trajectory)
    if stored is not None:
        found = read_checks(stored, checks_key(final, hidden, limits))
        if found is not None:
            return found
    return run_checks(final, hidden, limits)


def trial_checks(scenario: Scenario, trajectory: dict[str, Any], limits: Limits) -> dict[str, Any] | None:
    """Run the sandbox checks the scorer needs for a finished trial, once, to keep in its
    trajectory (``info["locobench"]["checks"]``); the scorer then reads them instead of
    running them (:func:`score_replies`).

    Args:
        scenario: the trial's scenario.
        trajectory: the finished trajectory (``Trajectory.to_dict()`` form).
        limits: the sandbox limits the scorer will be given (``options.limits``).

    Returns:
        ``suites.locobench.env.stored_checks``'s form (version, key, result, seal), or None
        when the trajectory scores 0 without checks (no answer, no reply applied, no file
        changed): nothing runs then.

    Raises:
        SandboxError: the sandbox could not start (an infrastructure error: the item errors).
    """
    answer = _answer(scenario, trajectory)
    if answer.zero is not None:
        return None
    hidden = scenario.hidden_files()
    key = checks_key(answer.final, hidden, limits)
    return stored_checks(key, run_checks(answer.final, hidden, limits))


def _score_replies(scenario: Scenario, trajectory: dict[str, Any], limits: Limits) -> TaskScore:
    """The score of :func:`score_replies`, without its failure kind.

    Raises:
        SandboxError: the sandbox could not start (an infrastructure error).
        RuntimeError: a code-quality tool failed (an infrastructure error).
    """
    names = hidden_test_names(scenario.hidden_tests)
    lcu_defined = bool(names["needle"])
    answer = _answer(scenario, trajectory)
    details = answer.details
    if answer.zero is not None:
        return _zero(answer.zero, details, lcu_defined)
    final, changed = answer.final, answer.changed
    checked = _checks(scenario, final, limits, trajectory)
    details["isolation"] = checked.isolation
    details["run"] = checked.run
    statics = static_checks(scenario, final)
    found = (
        checked.groups.get("hidden", {}) | checked.groups.get("needle", {}) | checked.groups.get("decoy", {})
    )
    passed = {k.split("::")[-1] for k, ok in found.items() if ok}
    plain_ok = [n in passed for n in names["hidden"]] + list(statics.values())
    needle_ok = [n in passed for n in names["needle"]]
    decoy_hit = any(n in passed for n in names["decoy"])
    smoke = checked.groups.get("smoke", {})
    regression = checked.groups.get("regression", {})
    broken = []
    if checked.reason:
        broken.append(checked.reason)
    if len(smoke) < 2 or not all(smoke.values()):
        broken.append(
            "the project no longer compiles or imports: "
            + "; ".join(checked.failures.get(k, "") for k, ok in smoke.items() if not ok)[:400]
        )
    if regression and not all(regression.values()):
        bad = [k for k, ok in regression.items() if not ok]
        broken.append(f"{len(bad)} regression test(s) broke: {', '.join(bad[:3])}")
    cases = plain_ok + needle_ok
    if cases:
        fc = 0.0 if broken else sum(cases) / len(cases)
    else:  # an upstream scenario without hidden tests: only the compile, import and test gate
        fc = 0.0 if broken else 1.0
    lcu = (sum(needle_ok) / len(needle_ok)) if lcu_defined else None
    quality = code_quality({p: final[p] for p in changed if p in final}, scenario.files)
    structure = software_engineering(
        scenario.files,
        final,
        changed,
        layering=scenario.layering,
        package=scenario.package,
        renamed=scenario.planted.renamed if scenario.planted else None,
    )
    values = {"fc": fc, "cq": quality.score, "se": structure.score, "lcu": lcu, "decoy": float(decoy_hit)}
    values["lcbs"] = lcbs(structure.score, fc, quality.score, lcu)
    failed = sorted(k.split("::")[-1] for k, ok in found.items() if not ok and "decoy" not in k.split("_"))
    failed += sorted(k for k, ok in statics.items() if not ok)
    details.update(
        tests={
            "hidden": names["hidden"] + sorted(statics),
            "needle": names["needle"],
            "decoy": names["decoy"],
            "passed": sorted(passed | {k for k, ok in statics.items() if ok}),
            "failures": {k.split("::")[-1]: v for k, v in sorted(checked.failures.items())},
        },
        broken=broken,
        quality=quality.to_dict(),
        structure=structure.to_dict(),
    )
    got = (
        "; ".join(broken)
        if broken
        else (
            f"{sum(cases)}/{len(cases)} hidden tests pass"
            + (f"; failing: {', '.join(failed[:4])}" if failed else "")
        )
    )
    return TaskScore(
        success=fc == 1.0,
        values=values,
        expected=f"{len(cases)}/{len(cases)} hidden tests pass",
        got=got,
        details=details,
    )
