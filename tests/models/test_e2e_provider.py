"""The whole plugin on the toy suite with a LiteLLM model served by the local server.

The server plays a competent agent (``lookup`` the item, then ``submit`` the code it got
back), so every item can pass; faults are injected on top.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_egi.models.secrets import find_secret_leaks
from pytest_egi.records import load_records
from tests.helpers.openai_server import OpenAIServer, Reply, tool_reply
from tests.models.conftest import PLANTED_KEY, PLANTED_SECRET

MODEL = "openai/test-model"


def toy_agent(request: dict) -> Reply:
    """Look the item up, then submit the code the tool returned."""
    last = request["messages"][-1]
    if last["role"] == "tool":
        code = json.loads(last["content"])["code"]
        return tool_reply("submit", json.dumps({"code": code}), call_id="c2")
    item = int(re.search(r"item (\d+)", last["content"]).group(1))
    return tool_reply("lookup", json.dumps({"item": item}), call_id="c1")


def latest_run(pytester: pytest.Pytester) -> Path:
    """The run directory of the latest run (by write time: run ids of one second sort
    randomly)."""
    files = sorted((pytester.path / "reports").glob("*/records.jsonl"),
                   key=lambda p: p.stat().st_mtime_ns)
    return files[-1].parent


def _records(pytester: pytest.Pytester) -> list[dict]:
    """The records of the latest run."""
    # load_records re-joins the volatile usage fields (cache hits, latencies) from timings.jsonl
    return load_records(latest_run(pytester))


def _run(pytester: pytest.Pytester, server: OpenAIServer, *extra: str):
    return pytester.runpytest("toysuites", "--egi-model", MODEL, "--egi-api-base", server.url,
                              "--egi-bootstrap", "0", *extra)


def test_model_run_then_cached_rerun_makes_zero_requests_and_leaks_no_key(
        toy_project, planted_key):
    with OpenAIServer(reply_fn=toy_agent) as server:
        first = _run(toy_project, server)
        first.assert_outcomes(passed=6)
        assert server.count == 12  # lookup + submit per task
        assert all(r.headers["authorization"] == f"Bearer {PLANTED_KEY}"
                   for r in server.completions)
        second = _run(toy_project, server)
        second.assert_outcomes(passed=6)
        assert server.count == 12  # every answer came from the cache
    records = _records(toy_project)
    assert {r["status"] for r in records} == {"passed"}
    assert sum(r["usage"]["cached_calls"] for r in records) == 12
    assert (toy_project.path / ".egi_cache" / "responses" / "responses.sqlite3").is_file()
    everything = [toy_project.path / "reports", toy_project.path / ".egi_cache"]
    for root in everything:
        assert find_secret_leaks(root, [PLANTED_KEY, PLANTED_SECRET]) == [], root


def test_injected_429_and_500_change_nothing_but_the_retry_count(toy_project, planted_key):
    with OpenAIServer(reply_fn=toy_agent, error_rate=0.3, retry_after=0.05, seed=3) as server:
        result = _run(toy_project, server, "--egi-no-cache")
        assert server.injected_errors > 0
    result.assert_outcomes(passed=6)
    assert result.ret == 0


def test_provider_down_is_an_error_not_a_wrong_answer(toy_project, planted_key):
    def down(request: dict) -> Reply:
        return Reply(503, {"error": {"message": f"maintenance window (token {PLANTED_KEY})"}})

    with OpenAIServer(reply_fn=down) as server:
        # -l: tracebacks show every local variable, and still no key
        result = _run(toy_project, server, "--egi-no-cache", "--egi-max-retries", "1", "-l")
        # 5 items x (1 attempt + 1 retry): after five errors and nothing scored the session
        # stops early instead of repeating the outage on every remaining item
        assert server.count == 10
    result.assert_outcomes(errors=5)
    assert result.ret == 1  # early stop: the error rate (100 %) fails the session
    result.stdout.fnmatch_lines(["*egi: stopping, the first 5 items all errored*maintenance window*"])
    records = _records(toy_project)
    assert {r["status"] for r in records} == {"error"}
    assert all("maintenance window" in r["error"] and PLANTED_KEY not in r["error"]
               for r in records)
    assert PLANTED_KEY not in result.stdout.str()
    assert find_secret_leaks(Path(toy_project.path / "reports"), [PLANTED_KEY]) == []


def test_early_stop_also_stops_the_items_queued_on_xdist_workers(toy_project, planted_key):
    """worksteal hands each worker its whole share at the start; xdist's own stop would still
    run all of it. The workers must stop after their current item instead."""
    def down(request: dict) -> Reply:
        return Reply(503, {"error": {"message": "maintenance window"}})

    with OpenAIServer(reply_fn=down, latency=0.2) as server:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-bootstrap",
            "0", "--egi-no-cache", "--egi-max-retries", "0", "--egi-mode", "deep", "-n", "2")
        served = server.count
    # deep: 10 items, 5 per worker; stop at the fifth error, plus at most the item each
    # worker is running when the controller decides
    outcomes = result.parseoutcomes()
    assert 5 <= outcomes["errors"] <= 7, outcomes
    assert served == outcomes["errors"]
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*egi: stopping, the first 5 items all errored*maintenance window*"])


def test_rpm_limit_holds_across_two_xdist_workers(toy_project, planted_key):
    """Two xdist workers share one --egi-rpm budget: consecutive requests at the server are at
    least 60/rpm seconds apart whichever worker sent them (burst 1)."""
    with OpenAIServer(reply_fn=toy_agent) as server:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-bootstrap",
            "0", "--egi-no-cache", "--egi-rpm", "300", "-n", "2",
        )
        result.assert_outcomes(passed=6)
        times = sorted(r.t for r in server.completions)
    assert len(times) == 12
    # the limiter spaces departures 60/300 = 0.2 s apart across both workers; arrivals jitter
    # (a worker's first call is slower, and a late first arrival shortens the span), so
    # check the typical (median) gap and the overall span rather than every single gap
    import statistics

    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert statistics.median(gaps) >= 0.2 * 0.9, gaps  # unlimited: a few ms
    assert times[-1] - times[0] >= 1.5  # unlimited: about 0.4 s
