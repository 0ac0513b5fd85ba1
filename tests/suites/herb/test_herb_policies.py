"""The reference policies on the quick profile: ceiling, floor, monotone noise, honesty."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pytest_egi.models.base import ModelResponse, assistant_message, tool_call
from pytest_egi.suite import Task, TaskScore
from suites.herb import SUITE, HerbOptions
from suites.herb.agent import SYSTEM_PROMPT, run_trial
from suites.herb.policy import INVENTED, corrupt_value
from suites.herb.scorer import normalize
from tests.suites.herb.helpers import record, run

Runs = dict[str, list[tuple[Task, TaskScore]]]
SUB_METRICS = ("person_f1", "url_f1", "pr_f1", "company_f1", "content", "null_rate")


def _summary(runs: Runs, model: str) -> dict[str, Any]:
    return SUITE.summarize([record(t, s) for t, s in runs[model]])


def test_oracle_is_the_ceiling(quick_runs: Runs) -> None:
    out = _summary(quick_runs, "egi/oracle")
    assert {k: out[k] for k in SUB_METRICS} == {
        "person_f1": 1.0, "url_f1": 1.0, "pr_f1": 1.0, "company_f1": 1.0, "content": 100.0,
        "null_rate": 1.0}  # fmt: skip
    assert out["answerable_overall"] == 100.0
    assert (out["n_answerable"], out["n_unanswerable"]) == (40, 40)
    assert all(s.success for _, s in quick_runs["egi/oracle"])


def test_null_is_the_floor_and_abstaining_is_right_when_unanswerable(quick_runs: Runs) -> None:
    out = _summary(quick_runs, "egi/null")
    assert {k: out[k] for k in SUB_METRICS} == {
        "person_f1": 0.0, "url_f1": 0.0, "pr_f1": 0.0, "company_f1": 0.0, "content": 0.0,
        "null_rate": 1.0}  # fmt: skip
    for task, score in quick_runs["egi/null"]:
        assert score.success is (task.category == "unanswerable")
        if task.category == "unanswerable":
            assert score.details["abstention"] == "refusal phrase"
            assert score.details["note"].startswith("abstaining is the correct behaviour")


def test_noise_is_monotone(quick_runs: Runs) -> None:
    oracle, null = _summary(quick_runs, "egi/oracle"), _summary(quick_runs, "egi/null")
    p2, p5 = _summary(quick_runs, "egi/noisy-0.2"), _summary(quick_runs, "egi/noisy-0.5")
    for key in SUB_METRICS:
        lo, hi = sorted((oracle[key], null[key]))
        if oracle[key] != null[key]:
            assert lo < p2[key] < hi, key  # strictly between
        assert p5[key] <= p2[key] <= oracle[key], key
    assert p5["answerable_overall"] < p2["answerable_overall"] < 100.0
    assert p2["null_rate"] < 1.0  # no_abstention mistakes were made


def test_each_task_falls_with_the_rate(quick_runs: Runs) -> None:
    by_model = {m: [next(iter(s.values.values())) for _, s in runs]
                for m, runs in quick_runs.items()}  # fmt: skip
    for o, a, b in zip(
        by_model["egi/oracle"], by_model["egi/noisy-0.2"], by_model["egi/noisy-0.5"], strict=True
    ):
        assert b <= a <= o


def test_runs_are_deterministic(quick_tasks: list[Task], opts: HerbOptions, quick_runs: Runs) -> None:
    again = [run("egi/noisy-0.5", t, opts)[1] for t in quick_tasks[::7]]
    assert again == [s for _, s in quick_runs["egi/noisy-0.5"][::7]]


def test_oracle_reads_tool_results_not_the_gold(quick_tasks: list[Task], opts: HerbOptions) -> None:
    for task in quick_tasks[::5]:
        blind = Task(
            id=task.id,
            category=task.category,
            data={**task.data, "ground_truth": ["eid_nothing"], "facts": ["nothing"], "citations": []},
        )
        honest, _ = run("egi/oracle", task, opts)
        tampered, _ = run("egi/oracle", blind, opts)
        assert honest.final_answer == tampered.final_answer
        answer = honest.final_answer
        observed = "\n".join(m["content"] for m in honest.messages if m["role"] == "tool")
        assert all(e in observed for e in answer["entities"])  # every entity was seen in a tool


def test_oracle_uses_only_offered_tools_within_budget(quick_tasks: list[Task], opts: HerbOptions) -> None:
    for task in quick_tasks[::4]:
        traj, _ = run("egi/oracle", task, opts)
        assert traj.termination == "submitted" and traj.turns <= 4
        assert not any(c["error"] for c in traj.tool_calls)
        assert traj.tool_calls[-1]["name"] == "submit"
        assert traj.info["herb"]["top_k"] == 20
    assert traj.messages[0] == {"role": "system", "content": SYSTEM_PROMPT}


def test_mistakes_are_recorded_and_budget_is_kept(quick_tasks: list[Task]) -> None:
    from pytest_egi.models import make_client

    opts = HerbOptions()
    task = next(t for t in quick_tasks if t.category == "person")
    client = make_client("egi/noisy-1.0", suite=SUITE, task=task, options=opts,
                         noise_key=f"42|herb|{task.id}|0")  # fmt: skip
    traj = run_trial(task, client, opts)
    assert client.noise.made and traj.turns <= opts.max_steps
    assert SUITE.score(task, traj.to_dict(), opts).values == {"f1": 0.0}


def test_invented_content_shares_no_word_with_any_reference(world: Any) -> None:
    words = set(normalize(INVENTED).split())
    for q in world.questions:
        if q["answerable"] and q["type"] == "content":
            assert not words & set(normalize(q["ground_truth"]).split())
    assert corrupt_value("99.9%") == "106.9%" and corrupt_value("Redis") != "Redis"


class _Scripted:
    """A model that searches once, then answers in plain text (no submit)."""

    name = "scripted/plain-text"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        if not any(m["role"] == "tool" for m in messages):
            args = json.dumps({"input": messages[1]["content"]})
            return ModelResponse(message=assistant_message(None, [tool_call("c1", "retrieve_all", args)]))
        observed = messages[-1]["content"]
        return ModelResponse(message=assistant_message(self.answer(observed)))


def test_plain_text_answer_is_scored_by_extraction(quick_tasks: list[Task], opts: HerbOptions) -> None:
    task = next(t for t in quick_tasks if t.data["recipe"]["kind"] == "bug_fix_pr")
    bug = task.data["recipe"]["bug"]

    def answer(observed: str) -> str:
        link = re.search(rf"fixing the {re.escape(bug)} bug is ready for review: (\S+)", observed)
        return f"<think>looking</think>The fix is {link.group(1)}." if link else "I don't know."

    traj = run_trial(task, _Scripted(answer), opts)
    assert traj.termination == "text_answer"
    score = SUITE.score(task, traj.to_dict(), opts)
    assert score.values == {"f1": 1.0} and score.details["entities_from"] == "text extraction"


def test_running_out_of_turns(quick_tasks: list[Task]) -> None:
    class Searcher:
        name = "scripted/searcher"

        def generate(self, messages: Any, tools: Any = None, **params: Any) -> ModelResponse:
            args = json.dumps({"input": "status"})
            return ModelResponse(message=assistant_message(None, [tool_call("c", "retrieve_all", args)]))

    opts = HerbOptions(max_steps=3)
    answerable = next(t for t in quick_tasks if t.category == "content")
    unanswerable = next(t for t in quick_tasks if t.category == "unanswerable")
    traj = run_trial(answerable, Searcher(), opts)
    assert (traj.termination, traj.turns, traj.final_answer) == ("max_turns", 3, None)
    assert SUITE.score(answerable, traj.to_dict(), opts).values == {"content": 0.0}
    # running out of turns is no answer: a failure, never an abstention (upstream credits it)
    traj = run_trial(unanswerable, Searcher(), opts)
    score = SUITE.score(unanswerable, traj.to_dict(), opts)
    assert score.values == {"abstained": 0.0} and not score.success
    assert score.details["no_answer"] == "the turn limit ran out (max_turns)"


@pytest.mark.parametrize("bugs", [False, True])
def test_faithful_tool_bugs_hurt_the_role_questions(quick_tasks: list[Task], bugs: bool) -> None:
    opts = HerbOptions(faithful_tool_bugs=bugs)
    tasks = [t for t in quick_tasks if t.category == "person" and t.data["recipe"]["kind"] == "meeting_role"]
    assert tasks
    values = [run("egi/oracle", t, opts)[1].values["f1"] for t in tasks]
    assert values == [0.0 if bugs else 1.0] * len(tasks)
