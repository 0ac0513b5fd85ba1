from suites.personabench import SUITE
from suites.personabench.agent import run_trial


def test_task(egi_task, egi_model, egi):
    trajectory = run_trial(egi_task, egi_model, egi.options, judge=egi.judge)
    egi.record(SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory)
