"""The MCPEval agent loop (reference §2.3): the domain's system prompt, the user message =
task name + description (the goal is never shown), the domain server's tools over MCP, and a
function-calling loop that stops at the first assistant turn without tool calls or at the turn
limit. Every call is executed on the server (a stdio subprocess, one per worker).
"""

from __future__ import annotations

from typing import Any

from pytest_egi.agents.loops import Trajectory, run_tool_loop
from pytest_egi.models.base import ModelClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task
from suites.mcpeval.data import SERVER_OF

__all__ = [
    "GENERATION_PARAMS",
    "SYSTEM_PROMPTS",
    "build_messages",
    "generation_params",
    "run_trial",
    "server_for",
]

GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 4096}
"""Upstream's task runs use temperature 0 (reference §2.3); 4096 tokens bound one reply (a
tool call or an answer needs far less). Defaults only: ``--egi-model-params`` overrides them."""
REASONING_MAX_TOKENS = 32_768
"""The bound for reasoning models, whose hidden reasoning counts against ``max_tokens``."""

_COMMON = ("Use the available tools to complete the user's task. Call the tools the task needs with "
           "the exact values it states, use values from earlier results where the task says so, and "
           "answer from what the tools returned once you are done.")  # fmt: skip
SYSTEM_PROMPTS: dict[str, str] = {
    "airbnb": "You are a travel assistant who finds Airbnb stays and reads listing details. " + _COMMON,
    "healthcare": "You are a healthcare information assistant with access to drug data, medical "
    "literature, health topics, clinical trials and ICD-10 codes. " + _COMMON,
    "sports": "You are a sports assistant with data on NBA, MLB and NFL teams, players and games. " + _COMMON,
    "national_parks": "You are a national parks assistant with data on parks, alerts, visitor centers, "
    "campgrounds and events. " + _COMMON,
    "yfinance": "You are a financial data assistant with access to stock prices, company information, "
    "statements, holders, options and analyst recommendations. Today is 2025-06-05. " + _COMMON,
}
"""Per domain, our own wording of upstream's task-runner system prompt."""


def generation_params(client: Any) -> dict[str, Any]:
    """The parameters sent with every call to ``client`` (the reasoning bound when LiteLLM
    marks the model as a reasoning model, ``client.reasoning``)."""
    return scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)


def build_messages(task: Task) -> list[dict[str, Any]]:
    """The system prompt of the task's domain and the user message ``<name>: <description>``."""
    d = task.data
    return [
        {"role": "system", "content": SYSTEM_PROMPTS[task.category]},
        {"role": "user", "content": f"{d['name']}: {d['description']}"},
    ]


def server_for(domain: str, seed: int) -> Any:
    """The process-wide server of ``domain`` (started on first use), with its open world: a
    well-formed query the seeded world cannot answer (a real city, drug, player, park or
    ticker, as upstream task files name) is answered from records generated from the query."""
    from pytest_egi.mcp import shared_server
    from suites._common.mcp_servers import server_spec

    return shared_server(server_spec(SERVER_OF[domain], seed, extra_args=("--open-world",)))


def run_trial(task: Task, client: ModelClient, options: Any = None, judge: Any = None) -> Trajectory:
    """Run one MCPEval trial.

    Args:
        task: from ``SUITE.load_tasks`` (``data["seed"]`` names the world, ``data["max_turns"]``
            the turn limit).
        client: the model under test (or an offline reference policy).
        options: the suite's options; ``max_turns`` overrides the profile's when set.
        judge: unused while acting.

    Returns:
        The trajectory; ``tool_calls`` are the calls executed on the server.

    Raises:
        McpServerError: the server failed (an environment fault: the item errors; the server
            is stopped and starts again for the next task).
        ProviderError: from the client.
    """
    from pytest_egi.mcp import McpToolkit

    max_turns = getattr(options, "max_turns", None) or task.data.get("max_turns") or 20
    server = server_for(task.category, task.data["seed"])
    toolkit = McpToolkit.of_servers(server)
    trajectory = run_tool_loop(client, build_messages(task), toolkit, max_turns=max_turns,
                               text_is_final=True, params=generation_params(client))  # fmt: skip
    trajectory.info["mcpeval"] = {"domain": task.category, "server": server.spec.name, "max_turns": max_turns}
    return trajectory
