"""Issue 29's acceptance for budgeted runs: against a local OpenAI-compatible server with a fixed
latency per call and a priced model name (LiteLLM's local cost map), a run sized by
``--egi-budget`` stays within 10% of its wall-time budget, and within its dollar budget."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.helpers.openai_server import OpenAIServer

MODEL = "openai/gpt-4o-mini"
"""Priced in LiteLLM's local cost map, so every call's usage has a cost."""
LATENCY_S = 0.1


def _latest(project: Path) -> Path:
    return max((project / "reports").iterdir(), key=lambda p: p.stat().st_mtime_ns)


def _timings(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "timings.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module", autouse=True)
def _litellm_imported() -> None:
    """LiteLLM imported before pytester's in-process runs (which unload what they import)."""
    from pytest_egi.models.transport import import_litellm

    import_litellm()


def test_budgeted_runs_fit_their_wall_time_and_dollar_budgets(toy_project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    routing = toy_project.path / "routing.yaml"
    routing.write_text(routing.read_text().replace("per_category: 3", "per_category: 60"))
    with OpenAIServer(latency=LATENCY_S) as server:
        base = ("toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-no-cache",
                "--egi-bootstrap", "0", "--egi-gate", "point", "-q")
        # no earlier run of the model: 60 s per task by default, so 2 minutes keep one task of
        # each category; the run is what the next plans learn from
        first = toy_project.runpytest(*base, "--egi-budget", "2m")
        head = "egi budget 2m: 2 of 120 tasks (at most 1 per category), expected 2.0 min wall time, $0.04"
        assert head in first.stdout.lines
        learned = _timings(_latest(toy_project.path))
        assert len(learned) == 2 and all(t["usage"]["cost_usd"] > 0 for t in learned)

        # wall time: the items of a 3-second plan take at most 3.3 s; the first such plan learned
        # from the two warm-up items above (their first calls are slower), so it under-fills; the
        # second learns from every item so far, and fills most of the budget
        for _ in range(2):
            toy_project.runpytest(*base, "--egi-budget", "3s")
            run = _latest(toy_project.path)
            phases = ("setup_s", "call_s", "teardown_s")
            spent = math.fsum(t.get(k, 0) for t in _timings(run) for k in phases)
            plan = json.loads((run / "egi.json").read_text())["config"]["budget"]
            assert plan["expected"] <= 3.0 and len(_timings(run)) == sum(plan["kept"].values())
            assert spent <= 1.1 * 3.0, (spent, plan["lines"])
        assert spent >= 0.6 * 3.0, (spent, plan["lines"])
        assert server.count >= len(_timings(run)) + 2

        # dollars: a budget of 10.5 items at the cost learned so far keeps 10, and the run's
        # priced usage stays within it
        per_item = math.fsum(t["usage"]["cost_usd"] for t in _timings(run)) / len(_timings(run))
        budget = 10.5 * per_item
        toy_project.runpytest(*base, "--egi-budget", f"{budget:.10f}usd")
        egi = json.loads((_latest(toy_project.path) / "egi.json").read_text())
        assert sum(egi["config"]["budget"]["kept"].values()) == 10
        paid = math.fsum(t["usage"]["cost_usd"] for t in _timings(_latest(toy_project.path)))
        assert 0 < paid <= budget and egi["usage"]["model"]["cost_usd"] == pytest.approx(paid)
