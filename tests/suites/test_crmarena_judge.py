"""CRMArena answer extraction by the judge model (``--egi-judge-model``), end to end: the model
under test and the judge are LiteLLM model strings served by a local OpenAI-compatible server on
127.0.0.1 that sends scripted replies.

Upstream asks gpt-4o to extract the answer (reference §1.6); here the judge model does, through
its client (response cache, usage counted as judge usage), and the record names who extracted
what. A judge that fails is an error of the item, never a wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_egi.suite import SuiteProfile
from suites.crmarena import SUITE, CrmArenaOptions
from tests.helpers.openai_server import OpenAIServer, Reply, chat_reply, error_reply

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pvi() -> dict[str, Any]:
    """The first quick PVI task whose gold is None, and the first whose gold is an article."""
    tasks = [t for t in SUITE.load_tasks(SuiteProfile(seed=42, per_category=6), CrmArenaOptions())
             if t.category == "PVI"]  # fmt: skip
    return {
        "none": next(t for t in tasks if t.data["answer"] == [None]),
        "article": next(t for t in tasks if t.data["answer"] != [None]),
    }


def _serve(model_reply: str, *judge_replies: Reply):
    """A reply function: the model under test answers ``model_reply`` in ReAct tags; the judge
    answers ``judge_replies`` in turn (the last one again when they run out)."""
    queue = list(judge_replies)

    def reply(request: dict[str, Any]) -> Reply:
        if request["model"] == "test-model":
            return chat_reply(f"<thought>I checked the transcript.</thought><respond>{model_reply}</respond>")
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return reply


def _run(pytester: pytest.Pytester, server: OpenAIServer, task_id: str, reports: str, *extra: str):
    # in a subprocess: litellm's lazy imports do not survive pytester's in-process
    # sys.modules snapshot/restore
    return pytester.runpytest_subprocess(
        str(ROOT / "suites" / "crmarena"), "--rootdir", str(ROOT), "-p", "no:cacheprovider",
        "--egi-model", "openai/test-model", "--egi-api-base", server.url,
        "--egi-judge-model", "openai/judge-model", "--egi-judge-api-base", server.url,
        "--egi-report-dir", str(pytester.path / reports), "--egi-bootstrap", "0", "-k", task_id, *extra,
    )  # fmt: skip


def _record(pytester: pytest.Pytester, reports: str) -> dict[str, Any]:
    run = next((pytester.path / reports).iterdir())
    return json.loads((run / "records.jsonl").read_text().splitlines()[0])


def _egi(pytester: pytest.Pytester, reports: str) -> dict[str, Any]:
    return json.loads(next((pytester.path / reports).glob("*/egi.json")).read_text())


def _judge_requests(server: OpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.completions if r.body["model"] == "judge-model"]


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


def test_judge_extracts_a_plain_language_none_and_the_call_is_cached(pytester, api_key, pvi):
    task = pvi["none"]
    reply = "No policy was violated in this case."
    cache = str(pytester.path / "cache")
    with OpenAIServer(reply_fn=_serve(reply, chat_reply('{"extracted_answers": ["None"]}'))) as server:
        result = _run(pytester, server, task.id, "first", "--egi-cache", cache)
        result.assert_outcomes(passed=1)
        assert server.count == 2  # one model turn, one extraction
        (request,) = _judge_requests(server)
        # a second run over the same cache asks nobody
        again = _run(pytester, server, task.id, "second", "--egi-cache", cache)
        again.assert_outcomes(passed=1)
        assert server.count == 2
    assert request["temperature"] == 0 and "tools" not in request
    system, user = request["messages"]
    assert system["role"] == "system" and "knowledge article Ids" in system["content"]
    assert '{"extracted_answers": [...]}' in system["content"]
    assert user == {"role": "user", "content": reply}  # the reply as it was, as upstream
    record = _record(pytester, "first")
    assert record["status"] == "passed" and record["judge"] == "openai/judge-model"
    assert record["details"]["extracted"] == ["None"]
    assert record["details"]["extractor"] == "openai/judge-model"
    assert record["details"]["extraction_rule"] == "judge"
    assert record["judge_usage"]["calls"] == 1 and record["judge_usage"]["prompt_tokens"] == 10
    assert _egi(pytester, "first")["judge"] == "openai/judge-model"
    cached = _record(pytester, "second")  # the replayed extraction gives the same record
    assert (cached["details"], cached["judge_usage"]) == (record["details"], record["judge_usage"])


@pytest.mark.parametrize(
    ("which", "reply", "judge_says", "outcome", "extracted"),
    [
        # the final answer's article, not the one checked on the way
        ("article", "The agent breached {gold}; {other} was followed.", ["{gold}"], "passed", ["{gold}"]),
        # the judge's [] (no answer) is never credited on a None gold
        ("none", "I don't know.", [], "failed", []),
    ],
)
def test_judge_extraction_decides_the_reward(
    pytester, api_key, pvi, which, reply, judge_says, outcome, extracted
):
    task = pvi[which]
    gold = task.data["answer"][0] or "None"
    other = "ka0Ws00006hROhZZZZ"

    def fill(text: str) -> str:
        return text.format(gold=gold, other=other)

    judge_reply = chat_reply(json.dumps({"extracted_answers": [fill(x) for x in judge_says]}))
    with OpenAIServer(reply_fn=_serve(fill(reply), judge_reply)) as server:
        result = _run(pytester, server, task.id, "reports", "--egi-no-cache")
        result.assert_outcomes(**{outcome: 1})  # a wrong answer is a failed item, not an error
        assert len(_judge_requests(server)) == 1
    record = _record(pytester, "reports")
    assert record["status"] == outcome
    assert record["values"] == {"reward": 1.0 if outcome == "passed" else 0.0}
    assert record["details"]["extracted"] == [fill(x) for x in extracted]
    assert record["details"]["extractor"] == "openai/judge-model"


@pytest.mark.parametrize(
    ("judge_reply", "calls", "message"),
    [
        # no JSON list in three attempts (none of them cached)
        (
            chat_reply("The answer is None."),
            3,
            'JudgeError: judge openai/judge-model gave no usable {"extracted_answers": [...]} in 3 '
            "attempt(s) for a policy_violation_identification answer",
        ),
        # the judge's provider fails
        (error_reply(500, "the judge's provider broke"), 1, "the judge's provider broke"),
    ],
)
def test_a_failing_judge_is_an_error_not_a_wrong_answer(pytester, api_key, pvi, judge_reply, calls, message):
    task = pvi["none"]
    with OpenAIServer(reply_fn=_serve("No policy was violated in this case.", judge_reply)) as server:
        result = _run(pytester, server, task.id, "reports", "--egi-no-cache", "--egi-max-retries", "0")
        result.assert_outcomes(errors=1)
        assert len(_judge_requests(server)) == calls
    record = _record(pytester, "reports")
    assert record["status"] == "error" and not record.get("values")
    assert message in record["error"]
