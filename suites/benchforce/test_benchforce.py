import pytest

import suites.benchforce as benchforce
from suites.benchforce.agent import run_trial
from suites.benchforce.client import stop_servers


@pytest.fixture(scope="session", autouse=True)
def _benchforce_server():
    """The environment server (started by ``SUITE.prepare``) stops with the session."""
    yield
    stop_servers()


class UpstreamEntryError(RuntimeError):
    """An upstream entry that could not be read or prepared (its message names the entries
    file and the entry): this item errors, the others run."""

    one_line_report = True


def test_task(egi_task, egi_model, egi):
    if egi_task.data.get("load_error"):
        raise UpstreamEntryError(f"benchforce: {egi_task.data['load_error']}")
    if egi_task.data.get("unrunnable"):
        pytest.skip(f"benchforce: upstream entry cannot run: {egi_task.data['unrunnable']}")
    trajectory = run_trial(egi_task, egi_model, egi.options, trial=egi.trial, simulator=egi.simulator)
    egi.record(
        benchforce.SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory
    )
