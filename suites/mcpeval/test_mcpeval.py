from suites.mcpeval import SUITE, skip_if_unrunnable
from suites.mcpeval.agent import run_trial


def test_task(egi_task, egi_model, egi):
    skip_if_unrunnable(egi_task)
    trajectory = run_trial(egi_task, egi_model, egi.options, judge=egi.judge)
    egi.record(SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory)
