"""The MCP-Universe reference policy behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

It acts through the same agent a model would use and speaks that agent's protocol: with the
ReAct agent (no ``tools`` offered) it writes the JSON ``{"thought", "action"}`` /
``{"thought", "answer"}`` replies; with function calling it emits ``<server>__<tool>`` tool
calls and ends with the answer as text. It makes the reference's tool calls in order, one per
turn, then answers.

The reference (``calls``, ``answer``, ``mistake``) is the domain solver's
(:mod:`suites.mcp_universe.data.domains`): computed from the same local worlds the servers serve,
never from the evaluators' expected values (the evaluators recompute their truth on their
own at scoring time).

Seeded mistakes: every decision (each reference call, and the final answer) may go wrong with
probability p, drawn for every decision whatever the rate (so a higher rate only adds
mistakes, and a task with more steps is more likely to go wrong, as for a model). A trial with
at least one faulty decision makes one of

- ``wrong_answer``: the reference's ``mistake`` (a value changed in the answer, or a write
  call dropped or altered: what a wrong lookup or a wrong write leads to): the evaluators it
  names fail;
- ``no_answer``: the calls are made but the reply after them is blank (failure kind
  ``no_answer``, as the record says; it was named ``gave_up``, which the failure kinds keep for
  a reply that declines in words).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_egi.mcp.schema import openai_name
from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.models.offline import Noise

__all__ = ["MISTAKES", "McpUniversePolicy"]

MISTAKES = ("wrong_answer", "no_answer")
"""What a faulty trial does (chosen independently of the rate)."""


class McpUniversePolicy:
    """One trial's reference agent (see the module docstring).

    Args:
        reference: ``{"calls": [{"server", "tool", "arguments"}], "answer": str, "mistake":
            {"calls", "answer", "fails"}}``.
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, reference: dict[str, Any], noise: Noise) -> None:
        draws = [noise.uniform("decision") < noise.p for _ in range(len(reference["calls"]) + 1)]
        faulty = any(draws)
        kind = noise.choice("mistake", list(MISTAKES))
        self.mistake = kind if faulty else None
        plan = reference["mistake"] if self.mistake == "wrong_answer" else reference
        if self.mistake is not None:
            noise.made.append(kind)
        self.calls = [dict(c) for c in plan["calls"]]
        self.answer = "" if self.mistake == "no_answer" else str(plan["answer"])
        self.next = 0

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The next assistant message: one tool call (or ReAct action), or the answer."""
        react = not tools
        if self.next < len(self.calls):
            call = self.calls[self.next]
            self.next += 1
            if react:
                action = {"server": call["server"], "tool": call["tool"], "arguments": call["arguments"]}
                text = json.dumps(
                    {"thought": f"I need {call['tool']} from {call['server']}.", "action": action}
                )
                return assistant_message(text)
            name = openai_name(call["tool"], call["server"])
            return assistant_message(
                None, [tool_call(f"call_{self.next}", name, json.dumps(call["arguments"]))]
            )
        if not react or not self.answer:
            return assistant_message(self.answer)
        try:
            answer: Any = json.loads(self.answer)
        except json.JSONDecodeError:
            answer = self.answer
        return assistant_message(json.dumps({"thought": "I have what the task asks for.", "answer": answer}))
