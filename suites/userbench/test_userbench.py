import pytest

import suites.userbench as userbench
from suites.userbench.agent import run_trial

if getattr(userbench, "SUITE", None) is None:
    pytest.skip(
        "userbench is a draft: set EGI_DRAFT_SUITES=userbench to run it (see STATUS.md)",
        allow_module_level=True,
    )


def test_task(egi_task, egi_model, egi):
    userbench.skip_if_not_runnable(egi_task)
    trajectory = run_trial(egi_task, egi_model, egi.options, trial=egi.trial, simulator=egi.simulator)
    egi.record(
        userbench.SUITE.score(egi_task, trajectory.to_dict(), egi.options, judge=egi.judge), trajectory
    )
