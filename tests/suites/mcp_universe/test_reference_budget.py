"""Every domain's references fit the agents' step budget, and the oracle passes them through
the real agent.

The agents allow :data:`suites.mcp_universe.agent.MAX_ITERATIONS` model calls per task and the
answer takes one of them, so a reference may make at most ``MAX_ITERATIONS - 1`` tool calls; a
longer one runs out of steps (the ReAct agent returns its apology) and the oracle fails a task
it knows the answer to.
"""

from __future__ import annotations

import pytest

from pytest_egi.models.offline import Noise, PolicyClient
from pytest_egi.suite import SuiteProfile
from suites.mcp_universe import SUITE
from suites.mcp_universe.agent import MAX_ITERATIONS, run_trial
from suites.mcp_universe.data.domains import location_navigation as L
from suites.mcp_universe.data.tasks import DOMAINS, UPSTREAM_COUNTS, generated_tasks

SEED = 42
BUDGET = MAX_ITERATIONS - 1


def test_the_budget_is_the_agents_steps_less_the_answer():
    assert MAX_ITERATIONS == 20
    assert BUDGET == L.REFERENCE_CALLS == 19


@pytest.mark.parametrize("domain", DOMAINS)
def test_every_generated_reference_fits_the_step_budget(domain):
    tasks = generated_tasks(domain, SEED)
    assert len(tasks) == UPSTREAM_COUNTS[domain]
    over = {t["id"]: len(t["reference"]["calls"]) for t in tasks if len(t["reference"]["calls"]) > BUDGET}
    assert over == {}, f"references longer than {BUDGET} tool calls"
    over = {
        t["id"]: len(t["reference"]["mistake"]["calls"])
        for t in tasks
        if len(t["reference"]["mistake"]["calls"]) > BUDGET
    }
    assert over == {}, f"mistaken references longer than {BUDGET} tool calls"


@pytest.mark.parametrize("domain", DOMAINS)
def test_oracle_passes_every_generated_task_through_the_agent(domain):
    tasks = SUITE.load_tasks(SuiteProfile(seed=SEED, categories=[domain]), None)
    assert len(tasks) == UPSTREAM_COUNTS[domain]
    SUITE.prepare(tasks, None)
    failed = {}
    for task in tasks:
        noise = Noise(0.0, f"{SEED}|mcp_universe|{task.id}|0")
        client = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
        traj = run_trial(task, client)
        score = SUITE.score(task, traj.to_dict(), None)
        if not score.success:
            failed[task.id] = (traj.termination, score.got["failed"][:2])
        else:
            assert score.values["steps"] == len(task.data["reference"]["calls"]) + 1
    assert failed == {}


def test_generation_skips_a_candidate_whose_reference_does_not_fit(monkeypatch):
    """With a budget of 6 calls, the generator keeps only tasks whose reference fits, and
    still makes the count asked for (deterministically: the same tasks twice)."""
    monkeypatch.setattr(L, "REFERENCE_CALLS", 6)
    first = L._Generator(SEED).upto(12)
    assert first == L._Generator(SEED).upto(12)
    import json

    lengths = [len(json.loads(t)["reference"]["calls"]) for t in first]
    assert len(lengths) == 12 and max(lengths) <= 6
    unbounded = [json.loads(t) for t in L._generator(SEED).upto(12)]
    assert max(len(t["reference"]["calls"]) for t in unbounded) > 6  # the cap did skip some
