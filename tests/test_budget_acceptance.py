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


def test_budgeted_runs_fit_their_wall_time_and_dollar_budgets(toy_project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    routing = toy_project.path / "routing.yaml"
    text = routing.read_text()
    with OpenAIServer(latency=LATENCY_S) as server:
        base = ("toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-no-cache",
                "--egi-bootstrap", "0", "--egi-gate", "point", "-q")
        # an earlier run of the model, 10 tasks: what the plans learn each item's time and cost from
        routing.write_text(text.replace("per_category: 3", "per_category: 5"))
        toy_project.runpytest_subprocess(*base)
        learned = _timings(_latest(toy_project.path))
        assert len(learned) == 10 and all(t["usage"]["cost_usd"] > 0 for t in learned)

        # wall time: the items of a 3-second plan over 120 tasks take at most 3.3 s, and fill
        # most of it
        routing.write_text(text.replace("per_category: 3", "per_category: 60"))
        toy_project.runpytest_subprocess(*base, "--egi-budget", "3s")
        run = _latest(toy_project.path)
        phases = ("setup_s", "call_s", "teardown_s")
        spent = math.fsum(t.get(k, 0) for t in _timings(run) for k in phases)
        plan = json.loads((run / "egi.json").read_text())["config"]["budget"]
        assert plan["expected"] <= 3.0 and len(_timings(run)) == sum(plan["kept"].values()) < 120
        assert 0.6 * 3.0 <= spent <= 1.1 * 3.0, (spent, plan["lines"])
        assert server.count >= len(_timings(run)) + 10

        # dollars: a budget of 10.5 items at the cost learned so far keeps 10, and the run's
        # priced usage stays within it
        per_item = math.fsum(t["usage"]["cost_usd"] for t in _timings(run)) / len(_timings(run))
        budget = 10.5 * per_item
        toy_project.runpytest_subprocess(*base, "--egi-budget", f"{budget:.10f}usd")
        egi = json.loads((_latest(toy_project.path) / "egi.json").read_text())
        assert sum(egi["config"]["budget"]["kept"].values()) == 10
        paid = math.fsum(t["usage"]["cost_usd"] for t in _timings(_latest(toy_project.path)))
        assert 0 < paid <= budget and egi["usage"]["model"]["cost_usd"] == pytest.approx(paid)
