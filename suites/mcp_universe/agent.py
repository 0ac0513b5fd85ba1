"""MCP-Universe's two agents (reference §1.4), over the local MCP servers.

Both get the task's question with the output-format instruction appended (when the task has
an ``output_format``) and at most ``max_iterations`` model calls (20, upstream's benchmark
configs):

- **ReAct** (:func:`run_react`): every iteration sends ONE user message, rebuilt from a
  template holding the instruction, the servers' tools, the question, the step budget and the
  history so far. The model answers with JSON: ``{"thought", "action": {"server", "tool",
  "arguments"}}`` to call a tool, ``{"thought", "answer"}`` to finish (an object without
  ``thought``, or with extra keys beside ``thought``, is taken as the answer, as upstream
  does). A reply that is not JSON burns the step (an error line goes to the history); an
  action without ``server``/``tool`` is recorded as "Invalid action"; a tool's error result
  goes back to the model cut to 300 characters. Running out of steps ends with upstream's
  kind of fixed apology, which is no answer (termination ``max_turns``).
- **Function calling** (:func:`run_function_call`): OpenAI tools named ``<server>__<tool>``
  with the MCP input schemas; from the second call on a user message says how many steps
  remain; the first reply without a tool call is the answer.

Around the loop (:func:`run_trial`): stateful servers (the repository server) are reset
before the trial; after it, their state is snapshotted into the trajectory (the ops read it
there, so rescoring reproduces the score; the repository server's snapshot is what the trial
changed, a delta against its seeded base, see
:func:`suites._common.mcp_servers.repository.state_view`) and the task's ``cleanups`` run as
upstream's do.
An environment fault (a server that dies or hangs) raises; it is never shown to the model.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_egi.agents.loops import (
    Trajectory,
    call_model,
    end_with_text,
    keep_partial,
    run_tool_loop,
)
from pytest_egi.models.base import ModelClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task
from suites.mcp_universe.data.tasks import AGENT_OF, task_servers
from suites.mcp_universe.env.servers import HIDDEN_TOOLS, server_for

__all__ = [
    "APOLOGY",
    "GENERATION_PARAMS",
    "INSTRUCTIONS",
    "MAX_ITERATIONS",
    "build_question",
    "output_format_prompt",
    "parse_react_reply",
    "react_prompt",
    "run_trial",
]

MAX_ITERATIONS = 20
"""Model calls per task in upstream's benchmark configs (every domain we run)."""
GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 4096}
"""Defaults only (``--egi-model-params`` overrides them)."""
REASONING_MAX_TOKENS = 32_768
"""The bound for reasoning models, whose hidden reasoning counts against ``max_tokens``."""
APOLOGY = "Sorry, I could not reach a satisfactory answer within the allowed number of steps."
"""What the ReAct agent returns when its steps run out (our wording of upstream's fixed text)."""
ERROR_NOTE_LIMIT = 300
"""Characters of a tool error the ReAct history keeps (upstream truncates to 300)."""

INSTRUCTIONS: dict[str, str] = {
    "financial_analysis": "You are a financial analysis agent. Use the calculator tool for any "
    "arithmetic you need.",
    "location_navigation": "You are a navigation and trip-planning agent with map tools.",
    "repository_management": "You are an agent that manages code repositories on the user's behalf.",
    "web_search": "You are a research agent: search the web and read pages to answer the question.",
}
"""Per domain, our wording of the agent instruction of upstream's benchmark configs."""


def output_format_prompt(output_format: Any) -> str:
    """The instruction appended to the question when the task gives an ``output_format``
    (our wording of upstream's: JSON only, matching the skeleton, no fences)."""
    if isinstance(output_format, str):
        return output_format.strip()
    skeleton = json.dumps(output_format, indent=2)
    return (
        "Give the final answer as JSON that follows this format:\n"
        f"{skeleton}\n"
        "Write only the JSON: no markdown, no code fences, no extra text, and no leading word "
        "such as json. Property names must be in double quotes."
    )


def build_question(task: dict[str, Any]) -> str:
    """The question as the agent receives it: the task's question, then the output-format
    instruction after a blank line when the task has an ``output_format``."""
    q = task["question"]
    fmt = task.get("output_format")
    return q if fmt is None else f"{q}\n\n{output_format_prompt(fmt)}"


def _tool_lines(servers: dict[str, Any]) -> str:
    lines = []
    for name, server in servers.items():
        for spec in server.list_tools():
            if spec.name in HIDDEN_TOOLS:
                continue
            schema = json.dumps(spec.input_schema or {}, separators=(",", ":"))
            lines.append(
                f"- server: {name}, tool: {spec.name}\n  description: {spec.description or ''}\n"
                f"  arguments (JSON schema): {schema}"
            )
    return "\n".join(lines)


def react_prompt(instruction: str, tools: str, question: str, max_steps: int, history: list[str]) -> str:
    """The one user message of a ReAct iteration (our wording of upstream's template)."""
    parts = [
        instruction,
        "You solve the task step by step. At each step reply with ONE JSON object and nothing else:\n"
        '- to use a tool: {"thought": "<your reasoning>", "action": {"server": "<server>", "tool": '
        '"<tool>", "arguments": {<arguments>}}}\n'
        '- to finish: {"thought": "<your reasoning>", "answer": <the final answer>}',
        f"Available tools:\n{tools}",
        f"You have at most {max_steps} steps.",
        f"Question: {question}",
    ]
    if history:
        parts.append("What you did so far:\n" + "\n\n".join(history))
    return "\n\n".join(parts)


def parse_react_reply(text: str) -> tuple[str, Any]:
    """Read one ReAct reply (upstream's rules).

    Returns:
        ``("answer", text)``, ``("action", {"server", "tool", "arguments", "thought"})``,
        ``("invalid_action", (thought, action))``, ``("result", (thought, result))``,
        ``("parse_error", message)`` (not JSON) or ``("format_error", message)`` (JSON of the
        wrong shape).
    """
    s = (text or "").strip().strip("`").strip()
    if s.startswith("json"):
        s = s[4:].strip()
    try:
        parsed = json.loads(s)
    except json.JSONDecodeError:
        return "parse_error", "I could not parse my last reply as JSON. Let me try again."
    if not isinstance(parsed, dict) or not parsed:
        return "format_error", "My last reply was not a JSON object with thought and action or answer."
    if "thought" not in parsed:
        return "answer", json.dumps(parsed)
    thought = parsed["thought"]
    if "answer" in parsed:
        answer = parsed["answer"]
        return "answer", answer if isinstance(answer, str) else json.dumps(answer)
    if "action" in parsed:
        action = parsed["action"]
        if not isinstance(action, dict) or "server" not in action or "tool" not in action:
            return "invalid_action", (thought, action)
        return "action", {
            "server": action["server"],
            "tool": action["tool"],
            "arguments": action.get("arguments") or {},
            "thought": thought,
        }
    if "result" in parsed:
        return "result", (thought, parsed["result"])
    rest = {k: v for k, v in parsed.items() if k != "thought"}
    if rest:
        return "answer", json.dumps(rest)
    return "format_error", "My last reply had a thought but no action and no answer."


def _call_tool(servers: dict[str, Any], server: str, tool: str, arguments: Any) -> tuple[str, bool, Any]:
    """Run one ReAct action: (observation, error, result text for cleanups)."""
    if server not in servers:
        return f"Error: no server named {server!r}; servers: {', '.join(servers)}", True, None
    if tool in HIDDEN_TOOLS:
        return f"Error: unknown tool {tool!r}", True, None
    if not isinstance(arguments, dict):
        return "Error: arguments must be a JSON object", True, None
    result = servers[server].call_tool(tool, arguments)  # McpServerError (a fault) propagates
    if result.is_error:
        return result.text[:ERROR_NOTE_LIMIT], True, None
    return result.text, False, result.text


def run_react(
    client: ModelClient,
    servers: dict[str, Any],
    instruction: str,
    question: str,
    max_iterations: int,
    params: dict[str, Any],
) -> tuple[Trajectory, list[dict[str, Any]]]:
    """The ReAct loop (module docstring). Returns the trajectory and the executed calls with
    their results (``{"server", "name", "arguments", "result"}``, for cleanups).

    The trajectory's ``messages`` hold the first prompt, each reply, and after each reply the
    history lines it added (each call actually sends the whole prompt rebuilt).
    """
    tools = _tool_lines(servers)
    history: list[str] = []
    traj = Trajectory(
        messages=[
            {"role": "user", "content": react_prompt(instruction, tools, question, max_iterations, history)}
        ]
    )
    traj.info["invalid_actions"] = 0
    executed: list[dict[str, Any]] = []
    with keep_partial(traj):
        for step in range(1, max_iterations + 1):
            prompt = react_prompt(instruction, tools, question, max_iterations, history)
            reply = call_model(client, traj, None, params, messages=[{"role": "user", "content": prompt}])
            if reply is None:
                return traj, executed
            kind, payload = parse_react_reply(str(reply.get("content") or ""))
            added = [f"Step {step}:"]
            if kind == "answer":
                end_with_text(traj, payload, "submitted")
                return traj, executed
            if kind == "action":
                observation, error, result = _call_tool(
                    servers, payload["server"], payload["tool"], payload["arguments"]
                )
                traj.tool_calls.append(
                    {
                        "name": payload["tool"],
                        "server": payload["server"],
                        "arguments": payload["arguments"],
                        "error": error,
                    }
                )
                if not error:
                    executed.append(
                        {
                            "server": payload["server"],
                            "name": payload["tool"],
                            "arguments": payload["arguments"],
                            "result": result,
                        }
                    )
                added += [
                    f"Thought: {payload['thought']}",
                    f"Action: Using tool `{payload['tool']}` in server `{payload['server']}`",
                    f"Action Input: {json.dumps(payload['arguments'])}",
                    f"Result: {observation}",
                ]
            elif kind == "invalid_action":
                traj.info["invalid_actions"] += 1
                added += [f"Thought: {payload[0]}", f"Action: {payload[1]}", "Result: Invalid action"]
            elif kind == "result":
                added += [f"Thought: {payload[0]}", f"Result: {payload[1]}"]
            else:
                traj.info["invalid_actions"] += 1
                added += [f"Error: {payload}"]
            history.append("\n".join(added))
            traj.messages.append({"role": "user", "content": history[-1]})
        traj.termination = "max_turns"
        traj.final_answer = None
        traj.info["apology"] = APOLOGY
    return traj, executed


def run_function_call(
    client: ModelClient,
    servers: dict[str, Any],
    instruction: str,
    question: str,
    max_iterations: int,
    params: dict[str, Any],
) -> tuple[Trajectory, list[dict[str, Any]]]:
    """The function-calling loop (module docstring); returns the trajectory and the executed
    calls with their results (for cleanups)."""
    from pytest_egi.mcp import McpToolkit

    toolkit = McpToolkit.of_servers(*servers.values(), prefix=True, hidden=HIDDEN_TOOLS)
    messages = [{"role": "system", "content": instruction}, {"role": "user", "content": question}]
    traj = run_tool_loop(
        client,
        messages,
        toolkit,
        max_turns=max_iterations,
        text_is_final=True,
        params=params,
        turn_note=lambda taken, most: f"{most - taken} steps remaining.",
    )
    reached = [c for c in toolkit.calls if "server" in c]
    executed = [
        {"server": c["server"], "name": c["name"], "arguments": c["arguments"], "result": r.text}
        for c, r in zip(reached, toolkit.results, strict=True)
        if not r.is_error
    ]
    return traj, executed


def _has_tool(server: Any, name: str) -> bool:
    return any(t.name == name for t in server.list_tools())


def run_trial(task: Task, client: ModelClient, options: Any = None, judge: Any = None) -> Trajectory:
    """Run one MCP-Universe task.

    Args:
        task: from ``SUITE.load_tasks`` (``data["seed"]`` names the worlds, ``data["agent"]``
            the agent, ``data["max_iterations"]`` the budget).
        client: the model under test (or an offline reference policy).
        options: unused (the suite folds its options into ``task.data``).
        judge: unused while acting.

    Returns:
        The trajectory; ``info["mcp_universe"]`` holds the domain, agent, servers, budget, the
        stateful servers' ``state`` after the trial (server name → its ``egi_snapshot_state``;
        for ``github`` a delta against the seeded base) and the cleanups run.

    Raises:
        McpServerError: a server failed (an environment fault: the item errors).
        ProviderError: from the client.
    """
    from suites.mcp_universe.env.cleanups import run_cleanups

    d = task.data
    names = task_servers(d, task.category)
    servers = {n: server_for(n, d["seed"]) for n in names}
    stateful = [n for n, s in servers.items() if _has_tool(s, "egi_snapshot_state")]
    for n in stateful:  # every trial starts from the seeded world
        servers[n].call_tool("egi_reset_state", {})
    agent = d.get("agent") or AGENT_OF[task.category]
    max_iterations = int(d.get("max_iterations") or MAX_ITERATIONS)
    params = scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)
    run = run_react if agent == "react" else run_function_call
    traj, executed = run(
        client, servers, INSTRUCTIONS[task.category], build_question(d), max_iterations, params
    )
    state: dict[str, Any] = {}
    for n in stateful:
        state[n] = json.loads(servers[n].call_tool("egi_snapshot_state", {}).text)

    def call(server: str, tool: str, arguments: dict[str, Any]) -> Any:
        return servers[server].call_tool(tool, arguments)

    cleaned = [c.to_dict() for c in run_cleanups(d.get("cleanups") or [], executed, call)] if stateful else []
    traj.info["mcp_universe"] = {
        "domain": task.category,
        "agent": agent,
        "servers": list(names),
        "max_iterations": max_iterations,
        "state": state,
        "cleanups": cleaned,
    }
    return traj
