"""End to end on the toy suite: every record carries termination and finish_reason, a context
overflow is a scored failure (not an error), and the no-answer share is in every report."""

from __future__ import annotations

import json

import pytest

from pytest_egi.trajectories import read_trajectory

WRAPPED_TEST_MODULE = """
from pytest_egi.agents.loops import run_tool_loop
from pytest_egi.models.base import ContextWindowExceeded, ModelResponse, ProviderError, assistant_message
from toysuites.toy import SUITE


class Faulty:
    '''The oracle, except on the second call of some tasks (the first one is the lookup).'''

    def __init__(self, inner, task_id):
        self.inner, self.task_id, self.calls = inner, task_id, 0
        self.name = inner.name

    def generate(self, messages, tools=None, **params):
        self.calls += 1
        response = self.inner.generate(messages, tools, **params)
        if self.calls < 2:
            return response
        if self.task_id == "alpha-1":  # the submit is cut off by the token limit
            response.finish_reason = "length"
        elif self.task_id == "alpha-2":
            raise ProviderError("HTTP 503 after 3 attempts")
        elif self.task_id == "beta-0":
            raise ContextWindowExceeded("maximum context length is 8192 tokens")
        elif self.task_id == "beta-1":  # an empty reply
            return ModelResponse(message=assistant_message("  "), finish_reason="stop")
        return response


def test_task(egi_task, egi_model, egi):
    messages = [{"role": "user", "content": f"What is the code of item {egi_task.data['item']}?"}]
    trajectory = run_tool_loop(Faulty(egi_model, egi_task.id), messages,
                               SUITE.toolkit(egi_task, egi.options), max_turns=egi.options.max_turns)
    egi.record(SUITE.score(egi_task, trajectory.to_dict(), egi.options), trajectory)
"""


@pytest.fixture
def faulty_project(toy_project: pytest.Pytester) -> pytest.Pytester:
    (toy_project.path / "toysuites" / "toy" / "test_toy.py").write_text(WRAPPED_TEST_MODULE)
    return toy_project


def test_records_and_reports_say_how_each_trial_ended(faulty_project: pytest.Pytester) -> None:
    result = faulty_project.runpytest(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-max-error-rate", "1"
    )
    # the context overflow is a failure, not an error: only the provider outage errors
    result.assert_outcomes(passed=2, failed=3, errors=1)
    run = next((faulty_project.path / "reports").iterdir())
    records = {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    got = {
        k: (r["status"], r["termination"], r["finish_reason"], r["turns"], r["no_answer"])
        for k, r in records.items()
    }
    assert got == {
        "alpha-0": ("passed", "submitted", "tool_calls", 2, False),
        "alpha-1": ("failed", "truncated", "length", 2, True),
        "alpha-2": ("error", "error", "tool_calls", 1, None),
        "beta-0": ("failed", "context_exceeded", "tool_calls", 1, True),
        "beta-1": ("failed", "text_answer", "stop", 2, True),
        "beta-2": ("passed", "submitted", "tool_calls", 2, False),
    }
    # why each failed (issue 28): the toy suite gives no kind, so the core's ending rule does;
    # an error has none (infrastructure, not a failure kind)
    assert {k: r["failure_kind"] for k, r in records.items()} == {
        "alpha-0": None, "alpha-1": "no_answer", "alpha-2": None,
        "beta-0": "no_answer", "beta-1": "no_answer", "beta-2": None,
    }  # fmt: skip
    # the errored item's partial trajectory says why it ended
    raw = read_trajectory(run, records["alpha-2"])
    assert raw["trajectory"]["termination"] == "error"
    assert raw["trajectory"]["info"]["error"] == "ProviderError: HTTP 503 after 3 attempts"
    raw = read_trajectory(run, records["beta-0"])
    assert raw["trajectory"]["info"]["context_exceeded"] == "maximum context length is 8192 tokens"
    # 3 of the 5 scored trials ended with no answer
    toy = json.loads((run / "egi.json").read_text())["suites"]["toy"]
    assert toy["no_answer_share"] == 0.6
    assert toy["terminations"] == {
        "context_exceeded": 1,
        "error": 1,
        "submitted": 2,
        "text_answer": 1,
        "truncated": 1,
    }
    assert toy["sub_metrics"]["acc"] == 0.4  # the overflow is in the denominator
    result.stdout.fnmatch_lines(
        [
            "  toy: 3 failed (3 no_answer)",  # the failed items, counted by kind
            "toy v1: 1 error, 3 failed, 2 passed",
            "  no answer 60.0% of scored trials; ended by: 1 context_exceeded, 1 error, 2 submitted, "
            "1 text_answer, 1 truncated",
        ]
    )
    egi = json.loads((run / "egi.json").read_text())
    # each failed toy task feeds acc_<category> (M1) and acc (M4)
    assert egi["failure_kinds"] == {"suites": {"toy": {"no_answer": 3}},
                                    "buckets": {"M1": {"no_answer": 3}, "M4": {"no_answer": 3}}}
    html = (run / "report.html").read_text()
    assert "no answer: 60.0% of scored trials" in html and "1 context_exceeded" in html
    header = (run / "results.csv").read_text().splitlines()[0]
    assert header.startswith(
        "suite,category,task_id,trial,status,success,termination,finish_reason,no_answer,"
    )


BAD_KIND_MODULE = """
from pytest_egi.agents.loops import run_tool_loop
from toysuites.toy import SUITE


def test_task(egi_task, egi_model, egi):
    messages = [{"role": "user", "content": f"What is the code of item {egi_task.data['item']}?"}]
    trajectory = run_tool_loop(egi_model, messages, SUITE.toolkit(egi_task, egi.options),
                               max_turns=egi.options.max_turns)
    score = SUITE.score(egi_task, trajectory.to_dict(), egi.options)
    if not score.success:
        score = score.model_copy(update={"failure_kind": "timeout"})
    egi.record(score, trajectory)
"""


def test_an_unknown_failure_kind_errors_the_item_naming_the_suite(toy_project: pytest.Pytester) -> None:
    (toy_project.path / "toysuites" / "toy" / "test_toy.py").write_text(BAD_KIND_MODULE)
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/null", "--egi-bootstrap", "0",
                                   "--egi-max-error-rate", "1")
    result.assert_outcomes(errors=6)
    run = next((toy_project.path / "reports").iterdir())
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert {(r["status"], r["failure_kind"]) for r in records} == {("error", None)}
    assert records[0]["error"] == (
        "FailureKindError: suite 'toy' gave failure_kind 'timeout', which is not a failure kind; "
        "allowed: wrong_answer, wrong_tool, wrong_argument, missing_call, extra_call, state_differs, "
        "policy_violated, no_answer, turn_limit, gave_up")
