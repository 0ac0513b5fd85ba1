"""Secrets given as options are secrets (issue 23): ``--egi-model-params api_key=...`` is sent
to the provider but never written (run.json, egi.json, records, trajectories, the response
cache, the terminal), also when the provider echoes it in a reply or an error."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_egi.models.secrets import (
    find_secret_leaks,
    is_secret_param,
    mask_secret_params,
    redact,
    register_secrets,
    secret_param_values,
)
from pytest_egi.models.settings import ProviderSettings
from pytest_egi.trajectories import read_trajectory
from tests.helpers.openai_server import OpenAIServer, Reply, error_reply, tool_reply

MODEL = "openai/test-model"
PARAM_KEY = "plainparamkey0123456789"
"""A key with no recognisable shape: only the parameter's name marks it as a secret."""
HEADER_KEY = "headersecret98765"


def test_secret_named_parameters_are_found_and_masked():
    names = {n: is_secret_param(n) for n in (
        "api_key", "x_api_key", "access_token", "client_secret", "password", "Authorization",
        "vertex_credentials", "key", "max_tokens", "max_completion_tokens", "budget_tokens",
        "tokenizer", "temperature", "top_k", "seed", "reasoning_effort")}
    assert [n for n, secret in names.items() if secret] == [
        "api_key", "x_api_key", "access_token", "client_secret", "password", "Authorization",
        "vertex_credentials", "key"]
    params = {"api_key": PARAM_KEY, "max_tokens": 4096, "temperature": None, "pin": "1234",
              "extra_headers": json.dumps({"Authorization": f"Bearer {HEADER_KEY}", "X-Trace": "on"})}
    assert secret_param_values(params) == [PARAM_KEY, f"Bearer {HEADER_KEY}"]
    assert mask_secret_params(params) == {
        "api_key": "***", "max_tokens": 4096, "temperature": None, "pin": "1234",
        "extra_headers": '{"Authorization": "***", "X-Trace": "on"}'}


def test_settings_put_every_roles_secret_parameters_in_the_redaction_set():
    text = "echo: judgekeyABCDEF simkeyABCDEF0 mkeyABCDEF01"
    assert redact(text) == text
    ProviderSettings(model_params={"api_key": "mkeyABCDEF01"},
                     judge_params={"api_key": "judgekeyABCDEF"},
                     simulator_params={"access_token": "simkeyABCDEF0"})
    assert redact(text) == "echo: *** *** ***"
    register_secrets(["short"])  # shorter than 6 characters: would mangle ordinary text
    assert redact("a short text") == "a short text"


def _echoing_agent(request: dict) -> Reply:
    """The toy agent (lookup, then submit), with the key echoed in every reply's text; the
    lookup of item 1 is refused with an error that echoes it too."""
    last = request["messages"][-1]
    echo = f"(called with key {PARAM_KEY})"
    if last["role"] == "tool":
        code = json.loads(last["content"])["code"]
        reply = tool_reply("submit", json.dumps({"code": code}), call_id="c2")
    else:
        item = int(re.search(r"item (\d+)", last["content"]).group(1))
        if item == 1:
            return error_reply(400, f"invalid api key {PARAM_KEY} for this project",
                               err_type="invalid_request_error")
        reply = tool_reply("lookup", json.dumps({"item": item}), call_id="c1")
    reply.body["choices"][0]["message"]["content"] = echo
    return reply


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "n2"])
def test_a_key_given_as_a_parameter_is_never_written(toy_project, planted_key, workers):
    with OpenAIServer(reply_fn=_echoing_agent) as server:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-bootstrap", "0",
            "--egi-max-error-rate", "1", "--egi-max-retries", "0",
            "--egi-model-params", f"api_key={PARAM_KEY},temperature=0", "-l", *workers)
        sent = server.completions
    result.assert_outcomes(passed=5, errors=1)
    # the key went to the provider (that is what it is for)
    assert {r.headers["authorization"] for r in sent} == {f"Bearer {PARAM_KEY}"}
    run = next((toy_project.path / "reports").iterdir())
    cache = toy_project.path / ".egi_cache"
    assert (cache / "responses" / "responses.sqlite3").is_file()
    for root in (run, cache):
        assert find_secret_leaks(root, [PARAM_KEY]) == [], root
    assert PARAM_KEY not in result.stdout.str() + result.stderr.str()
    # ... and where it would have been written, it reads ***
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["params"] == {"model": {"api_key": "***", "temperature": 0}}
    egi = json.loads((run / "egi.json").read_text())
    assert egi["config"]["params"]["given"] == {"model": {"api_key": "***", "temperature": 0}}
    records = {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    assert records["alpha-0"]["params"]["model"]["sent"] == {"api_key": "***", "temperature": 0}
    assert "invalid api key *** for this project" in records["alpha-1"]["error"]
    raw = read_trajectory(run, records["alpha-0"])
    assert raw["trajectory"]["messages"][2]["content"] == "(called with key ***)"


def test_the_cache_stores_redacted_replies_and_replays_them(tmp_path: Path, planted_key):
    from pytest_egi.models import make_client

    register_secrets([PARAM_KEY])
    settings = ProviderSettings(cache_dir=tmp_path, max_retries=0)
    with OpenAIServer() as srv:
        srv.enqueue(_echoing_agent({"messages": [{"role": "user", "content": "item 3"}]}))
        client = make_client(MODEL, api_base=srv.url, provider=settings)
        first = client.generate([{"role": "user", "content": "item 3"}])
        again = make_client(MODEL, api_base=srv.url, provider=settings).generate(
            [{"role": "user", "content": "item 3"}])
        assert srv.count == 1
    assert first.message["content"] == again.message["content"] == "(called with key ***)"
    assert find_secret_leaks(tmp_path, [PARAM_KEY]) == []
