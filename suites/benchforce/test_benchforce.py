import pytest

import suites.benchforce as benchforce
from suites.benchforce.agent import run_trial
from suites.benchforce.env.client import stop_servers


@pytest.fixture(scope="session", autouse=True)
def _benchforce_server():
    """The environment server (started by ``SUITE.prepare``) stops with the session."""
    yield
    stop_servers()


def test_task(egi_task, egi_model, egi):
    trajectory = run_trial(egi_task, egi_model, egi.options, trial=egi.trial, simulator=egi.simulator)
    egi.record(
        benchforce.SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory
    )
