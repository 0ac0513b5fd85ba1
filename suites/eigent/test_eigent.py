from suites.eigent import SUITE
from suites.eigent.agent import run_trial
from suites.eigent.models import choose_client


def test_task(egi_task, egi_model, egi, request):
    client, model_kwargs = choose_client(egi_task, egi_model, request.node)
    trajectory = run_trial(egi_task, client, egi.options)
    if model_kwargs is not None:
        trajectory.info["eigent"]["model_kwargs"] = model_kwargs
    egi.record(SUITE.score(egi_task, trajectory.to_dict(), egi.options), trajectory)
