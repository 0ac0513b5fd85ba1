"""A failure line is shortened around its fix hint, never through it (issue 23): an errored
item's one-line reason (its record's ``error``, the terminal's line) keeps ``(to stop sending
temperature, pass --egi-model-params temperature=null)`` whole, however long the provider's
own text is."""

from __future__ import annotations

import json

from pytest_egi.run.recorder import MAX_RENDER, shorten
from tests.helpers.openai_server import OpenAIServer, Reply, chat_reply, error_reply

MODEL = "openai/test-model"
HINT = "(to stop sending temperature, pass --egi-model-params temperature=null)"
REFUSAL = ("Unsupported value: 'temperature' does not support 0 with this model. Only the "
           "default (1) value is supported.")


def _refuses_temperature(request: dict) -> Reply:
    if "temperature" in request:  # OpenAI's answer for a reasoning model
        return error_reply(400, REFUSAL, err_type="invalid_request_error",
                           code="unsupported_value")
    return chat_reply("ok")


def test_the_failure_line_keeps_the_fix_hint_whole(toy_project, planted_key):
    with OpenAIServer(reply_fn=_refuses_temperature) as server:
        result = toy_project.runpytest_subprocess(
            "toysuites", "--egi-model", MODEL, "--egi-api-base", server.url, "--egi-bootstrap",
            "0", "--egi-no-cache", "--egi-max-retries", "0", "--egi-model-params", "temperature=0",
            "-k", "alpha-0")
    result.assert_outcomes(errors=1)
    run = next((toy_project.path / "reports").iterdir())
    [record] = map(json.loads, (run / "records.jsonl").read_text().splitlines())
    where = f"model {MODEL} at {server.url}: client_error (HTTP 400) after 1 attempt: "
    full = (f"ProviderError: {where}BadRequestError: litellm.BadRequestError: OpenAIException - "
            f"{REFUSAL} {HINT}")
    assert len(full) > MAX_RENDER  # the provider's text is what gets shortened
    cut = MAX_RENDER - len(HINT) - len("... ")
    assert record["error"] == full[:cut].rstrip() + "... " + HINT
    result.stdout.fnmatch_lines([f"toysuites/toy/test_toy.py::test_task[alpha-0]: {record['error']}"])


def test_shorten_cuts_around_the_hint_never_through_it():
    text = "E: " + "x" * 400 + " (fix: do y)"
    assert shorten(text, 40) == "E: " + "x" * 22 + "... (fix: do y)"
    # a hint named by the exception, in the middle: the text after it is cut first
    mid = "E: no key (set KEY=...): " + "z" * 100
    assert shorten(mid, 40, hint="(set KEY=...)") == "E: no key (set KEY=...): " + "z" * 12 + "..."
    # no hint: a plain cut, as before
    assert shorten("a" * 50, 20) == "a" * 17 + "..."
    # a hint longer than the limit stays whole
    assert shorten("E: x (" + "h" * 60 + ")", 20) == "... (" + "h" * 60 + ")"
