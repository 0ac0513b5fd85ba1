
import suites.userbench as userbench
from suites.userbench.agent import run_trial


def test_task(egi_task, egi_model, egi):
    trajectory = run_trial(egi_task, egi_model, egi.options, trial=egi.trial, simulator=egi.simulator)
    egi.record(
        userbench.SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory
    )
