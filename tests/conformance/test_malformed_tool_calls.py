"""DESIGN §9.5 for every discovered suite: a malformed tool call is the model's mistake and is
scored (a failure with its reason), never an error.

Each suite runs once (in a fresh pytest process, on the conformance profile with
:data:`PER_CATEGORY` tasks of every category) with a LiteLLM model served by the scripted
OpenAI-compatible server of ``tests/helpers/openai_server.py``: every turn that offers tools
gets one malformed call (:data:`tests.helpers.malformed_calls.SHAPES`), then the model answers
in text. A suite whose agent never offers tools is skipped with that reason; :data:`VARIANTS`
adds the runs with the options that switch a suite to native function calling. The criterion
is :func:`tests.conformance.checks.check_malformed_scored`.
"""

from __future__ import annotations

import pytest

from pytest_egi.records import load_records
from tests.conformance.checks import (
    ROOT,
    check_malformed_scored,
    conformance_routing,
    discover_suites,
    run_suite,
)
from tests.helpers.malformed_calls import SHAPES, MalformedAgent
from tests.helpers.openai_server import OpenAIServer

MODEL = "openai/test-model"
PER_CATEGORY = 2
"""Tasks per category: enough conversations for an agent that stops at its first malformed call
to meet every shape (each conversation starts at the next shape)."""
VARIANTS: dict[str, list[tuple[str, ...]]] = {"crmarena": [("--egi-opt", "crmarena.strategy=tool_call")]}
"""Suite -> extra option sets for runs of its function-calling agent (its default talks in text)."""


def _cases() -> list:
    cases = []
    for suite in discover_suites():
        cases.append(pytest.param(suite, (), id=suite))
        for extra in VARIANTS.get(suite, []):
            cases.append(pytest.param(suite, extra, id=f"{suite}-{extra[-1]}"))
    return cases


@pytest.mark.parametrize(("suite", "extra"), _cases())
def test_malformed_tool_calls_are_scored_failures_never_errors(suite, extra, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-egi-malformed-calls-test")
    routing = tmp_path / "routing.yaml"
    text = (ROOT / "routing.yaml").read_text(encoding="utf-8")
    routing.write_text(conformance_routing(text, suite, per_category=PER_CATEGORY), encoding="utf-8")
    agent = MalformedAgent()
    with OpenAIServer(reply_fn=agent) as server:
        run = run_suite(ROOT / "suites" / suite, ROOT, routing, MODEL, tmp_path / "run",
                        "--egi-api-base", server.url, *extra)  # fmt: skip
    if not agent.tool_requests:
        options = " ".join(extra) or "default options"
        pytest.skip(f"{suite}: its agent made no function-calling request ({options})")
    problems = check_malformed_scored(suite, load_records(run.run_dir), dict(agent.sent), list(SHAPES))
    assert not problems, "\n".join(problems)
