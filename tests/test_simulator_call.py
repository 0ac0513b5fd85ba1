"""The core's simulator call: failures become SimulatorError (an item error, never the
agent's), and the simulator's tokens are counted apart from the agent's."""

from __future__ import annotations

import pytest

from pytest_egi.agents.simulator import SimulatorError, simulator_generate, simulator_name
from pytest_egi.models.base import ContextWindowExceeded, ModelResponse, ProviderError, Usage


class _Client:
    def __init__(self, outcome):
        self.outcome, self.seen = outcome, []

    def generate(self, messages, tools, **params):
        self.seen.append((messages, tools, params))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def test_the_reply_is_returned_and_its_usage_is_the_simulators():
    usage = Usage()
    reply = ModelResponse({"role": "assistant", "content": "hi"}, Usage(calls=1, prompt_tokens=7))
    client = _Client(reply)
    messages = [{"role": "user", "content": "start"}]
    assert simulator_generate(client, "sim/m", messages, None, {"temperature": 0.0}, usage) is reply
    assert (usage.calls, usage.prompt_tokens) == (1, 7)
    sent, tools, params = client.seen[0]
    assert sent == messages and sent is not messages and tools is None and params == {"temperature": 0.0}


@pytest.mark.parametrize(
    ("error", "message", "kind"),
    [
        (ProviderError("server_error: 500", kind="server_error"), "the user simulator sim/m failed: "
         "server_error: 500", "server_error"),  # fmt: skip
        (ContextWindowExceeded("too long"), "the user simulator sim/m failed: its context window "
         "overflowed (too long)", "context_window"),  # fmt: skip
    ],
)
def test_a_failure_is_a_simulator_error_with_its_kind(error, message, kind):
    usage = Usage()
    with pytest.raises(SimulatorError) as info:
        simulator_generate(_Client(error), "sim/m", [], None, {}, usage)
    assert str(info.value) == message and info.value.kind == kind
    assert isinstance(info.value, ProviderError) and usage.calls == 0


def test_the_simulators_name_is_its_model_name_else_its_class():
    named = _Client(None)
    named.name = "openai/sim"
    assert simulator_name(named) == "openai/sim" and simulator_name(_Client(None)) == "_Client"
