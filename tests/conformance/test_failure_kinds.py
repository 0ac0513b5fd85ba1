"""Issue 28 for every discovered suite: why a trial failed (record field ``failure_kind``), how
an episode ended, and the two answers every suite must count alike.

- ``egi/oracle`` fails no task, so its records carry no failure kind; ``egi/null`` (it says
  "I don't know." every turn and calls no tool) fails by how its episodes end only:
  ``gave_up``, ``no_answer`` or ``turn_limit``.
- An empty reply (empty, whitespace, a zero-width space, None) is ``no_answer`` in every suite,
  never a text answer and never an abstention.
- "I don't know." (in three wordings) is ``gave_up`` in every suite, except where the suite's
  upstream rule credits that abstention (:data:`CREDITED`), where the trial passes.

The variants are scored on ``egi/null``'s stored trajectories (its tasks, its calls: none), with
the closing reply replaced, through each suite's own ``score``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.outcomes import FAILURE_KINDS
from pytest_egi.records import load_records
from pytest_egi.suite import Task
from pytest_egi.trajectories import read_trajectory
from tests.conformance.test_conformance import runs, suite  # noqa: F401 - fixtures

CREDITED = {"herb": frozenset({"unanswerable"})}
"""suite -> the categories where an explicit "I don't know." is the right answer by the
upstream rule (HERB's unanswerable questions: an answer that says the information is missing
is a correct abstention, reference crmarena_herb.md §2 "unanswerable rate")."""

ENDINGS = frozenset({"gave_up", "no_answer", "turn_limit"})
BLANKS = ["", "  \n\t ", "\u200b", None]
REFUSALS = ["I don't know.", "I don’t know.", "I do not know the answer to that."]


def _cases(run_dir: Any, name: str) -> Iterator[tuple[Task, dict[str, Any], Any, Any]]:
    """(task, stored trajectory, options, suite) of each scored record of a run."""
    from pytest_egi.suite import load_suite

    egi = json.loads((run_dir / "egi.json").read_text(encoding="utf-8"))
    the_suite = load_suite(f"suites.{name}")
    options = the_suite.options_model.model_validate((egi["config"]["suite_options"] or {}).get(name, {}))
    for rec in load_records(run_dir):
        if rec["status"] not in ("passed", "failed"):
            continue
        raw = read_trajectory(run_dir, rec)
        task = Task(id=rec["task_id"], category=rec["category"], data=raw["task"])
        yield task, raw["trajectory"], options, the_suite


def _closing(trajectory: dict[str, Any], text: Any) -> dict[str, Any]:
    """``trajectory`` ending on a text reply ``text`` (its last assistant message replaced)."""
    traj = json.loads(json.dumps(trajectory))
    traj.update(final_answer=text, termination="text_answer", finish_reason="stop")
    for message in reversed(traj.get("messages") or []):
        if message.get("role") == "assistant":
            message.update(content=text, tool_calls=None)
            message.pop("tool_calls")
            break
    else:
        traj.setdefault("messages", []).append({"role": "assistant", "content": text})
    return traj


def test_oracle_records_carry_no_failure_kind(suite, runs):  # noqa: F811
    records = load_records(runs.get(suite.name, "egi/oracle").run_dir)
    wrong = [(r["task_id"], r["status"], r.get("failure_kind")) for r in records
             if "failure_kind" not in r or r["failure_kind"] is not None]  # fmt: skip
    assert not wrong, wrong


def test_null_fails_by_how_its_episodes_end(suite, runs):  # noqa: F811
    records = load_records(runs.get(suite.name, "egi/null").run_dir)
    kinds = {r["failure_kind"] for r in records if r["status"] == "failed"}
    assert kinds and kinds <= ENDINGS, kinds
    assert all(r["failure_kind"] is None for r in records if r["status"] != "failed")


@pytest.mark.parametrize("blank", BLANKS, ids=["empty", "whitespace", "zero-width", "none"])
def test_an_empty_reply_is_no_answer_in_every_suite(suite, runs, blank):  # noqa: F811
    seen = 0
    for task, trajectory, options, the_suite in _cases(runs.get(suite.name, "egi/null").run_dir, suite.name):
        traj = _closing(trajectory, blank)
        assert no_answer_reason(traj) is not None
        score = the_suite.score(task, traj, options, None)
        assert (task.id, score.success, score.failure_kind) == (task.id, False, "no_answer")
        seen += 1
    assert seen


@pytest.mark.parametrize("refusal", REFUSALS, ids=["plain", "typographic", "long"])
def test_i_dont_know_counts_the_same_in_every_suite(suite, runs, refusal):  # noqa: F811
    credited = CREDITED.get(suite.name, frozenset())
    outcomes = []
    for task, trajectory, options, the_suite in _cases(runs.get(suite.name, "egi/null").run_dir, suite.name):
        traj = _closing(trajectory, refusal)
        assert no_answer_reason(traj) is None  # an answer in words, not a missing one
        score = the_suite.score(task, traj, options, None)
        outcomes.append((task.id, task.category, score.success, score.failure_kind))
    assert outcomes
    wrong = [o for o in outcomes
             if o[1:] != ((o[1], True, None) if o[1] in credited else (o[1], False, "gave_up"))]  # fmt: skip
    assert not wrong, wrong


def test_the_vocabulary_is_the_one_of_issue_28():
    assert list(FAILURE_KINDS) == [
        "wrong_answer", "wrong_tool", "wrong_argument", "missing_call", "extra_call", "state_differs",
        "policy_violated", "no_answer", "turn_limit", "gave_up",
    ]  # fmt: skip
