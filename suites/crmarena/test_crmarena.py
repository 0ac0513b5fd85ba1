"""CRMArena tasks as pytest items: one item per (task, trial)."""

from suites.crmarena import SUITE
from suites.crmarena.agent import run_trial


def test_task(egi_task, egi_model, egi):
    org = SUITE.org_for(egi_task, egi.options)
    trajectory = run_trial(egi_task, egi_model, org, egi.options)
    egi.record(SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory)
