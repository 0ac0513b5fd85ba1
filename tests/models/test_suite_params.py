"""Each suite sends its upstream generation parameters by default, through the client (so
the user's --egi-model-params override them and a refused one is dropped)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_egi.models import make_client
from pytest_egi.suite import SuiteProfile
from tests.helpers.openai_server import OpenAIServer, chat_reply
from tests.models.conftest import MODEL


@pytest.fixture(scope="module")
def herb_task():
    from suites.herb import SUITE, HerbOptions

    return SUITE.load_tasks(SuiteProfile(seed=42, limit=1), HerbOptions())[0]


@pytest.fixture(scope="module")
def crm_task():
    from suites.crmarena import SUITE, CrmArenaOptions

    tasks = SUITE.load_tasks(SuiteProfile(seed=42, per_category=1), CrmArenaOptions())
    task = tasks[0]
    return task, SUITE.org_for(task, CrmArenaOptions())


def test_herb_sends_its_upstream_temperature_and_a_bound_on_reply_length(herb_task, make_settings,
                                                                       planted_key):
    """Before: HERB sent no max_tokens, and a local server generated until its context was
    full."""
    from suites.herb.agent import run_trial

    with OpenAIServer([chat_reply("I cannot tell.")]) as server:
        client = make_client(MODEL, provider=make_settings(server, cache_dir=None))
        trajectory = run_trial(herb_task, client)
        body = server.completions[0].body
    assert trajectory.turns == 1
    assert (body["temperature"], body["max_tokens"]) == (0.1, 4096)


def test_crmarena_sends_upstreams_parameters_and_the_user_overrides_them(crm_task, make_settings,
                                                                       planted_key):
    from suites.crmarena import CrmArenaOptions
    from suites.crmarena.agent import run_trial

    task, org = crm_task
    with OpenAIServer([chat_reply("<respond>None</respond>")] * 2) as server:
        plain = make_client(MODEL, provider=make_settings(server, cache_dir=None))
        run_trial(task, plain, org, CrmArenaOptions())
        user = make_client(MODEL, provider=make_settings(
            server, cache_dir=None, model_params={"temperature": None, "max_tokens": 300}),
            shared={})
        run_trial(task, user, org, CrmArenaOptions())
        first, second = (r.body for r in server.completions)
    assert (first["temperature"], first["max_tokens"]) == (0.0, 2000)
    assert "temperature" not in second and second["max_tokens"] == 300


@pytest.mark.parametrize(("suite", "plain", "reasoning"), [("crmarena", 2000, 50_000),
                                                           ("herb", 4096, 32_768),
                                                           ("mcpeval", 4096, 32_768)])
def test_reasoning_models_get_the_larger_limit(suite, plain, reasoning):
    import importlib

    agent = importlib.import_module(f"suites.{suite}.agent")
    assert agent.generation_params(SimpleNamespace())["max_tokens"] == plain  # offline policy
    assert agent.generation_params(SimpleNamespace(reasoning=False))["max_tokens"] == plain
    assert agent.generation_params(SimpleNamespace(reasoning=True))["max_tokens"] == reasoning
    assert agent.GENERATION_PARAMS["max_tokens"] == plain  # the defaults are copied, never changed


def test_the_client_knows_a_reasoning_model(make_settings):
    assert make_client("openai/o3", provider=make_settings(None, cache_dir=None)).reasoning
    assert not make_client(MODEL, provider=make_settings(None, cache_dir=None)).reasoning
