"""The MCPEval reference policy behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

It acts as a model would: it follows the task's plan (the calls the description asks for,
stored by the generator with placeholders for the arguments that depend on earlier results),
makes one tool call per turn, reads each placeholder's value from the result its own earlier
call returned (never from the ground truth ``tool_calls``), and ends with a text answer built
from the tool outputs. A task loaded from a file has no plan: its ``tool_calls`` are the plan.

Seeded mistakes (every step draws its numbers whatever the rate, so a higher rate only adds
mistakes): a faulty step (probability p) makes one of ``wrong_argument`` (one argument garbled),
``wrong_tool`` (the same arguments sent to another tool of the server), ``skipped_call`` (the
call is not made) or ``extra_call`` (the call is made twice). A placeholder whose source call
failed or was skipped cannot be read: the step that needs it is not made.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.models.offline import Noise
from suites._common.mcp_servers import TOOLS
from suites.mcpeval.data import SERVER_OF, is_ref, resolve_ref

__all__ = ["McpevalPolicy", "STEP_MISTAKES"]

STEP_MISTAKES = ("wrong_argument", "wrong_tool", "skipped_call", "extra_call")
"""What a faulty step does (chosen independently of the rate)."""
GARBLED = "unknown-value"
"""What a ``wrong_argument`` mistake puts in a text argument (shares no substring with a
real value, so flexible matching does not forgive it)."""


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError):
        return text


def _garble(args: dict[str, Any]) -> dict[str, Any]:
    if not args:
        return {"query": GARBLED}
    key = sorted(args)[0]
    value = args[key]
    if isinstance(value, bool):
        bad: Any = not value
    elif isinstance(value, (int, float)):
        bad = value * 3 + 7
    elif isinstance(value, list):
        bad = [GARBLED]
    else:
        bad = GARBLED
    return {**args, key: bad}


class McpevalPolicy:
    """One trial's reference agent (see the module docstring).

    Args:
        task: the task record (``plan`` or ``tool_calls``).
        domain: its MCPEval domain (the server's tool list gives wrong-tool choices).
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, task: dict[str, Any], domain: str, noise: Noise) -> None:
        plan = task.get("plan") or task["tool_calls"]
        self.steps = [(c["tool_name"], c.get("tool_parameters") or {}) for c in plan]
        self.noise = noise
        self.tools = list(TOOLS[SERVER_OF[domain]])
        # per step: (faulty, kind); drawn up front so a higher rate only adds mistakes
        self.faults: list[tuple[bool, str]] = []
        for _ in self.steps:
            faulty = noise.uniform("step") < noise.p
            kind = noise.choice("step_kind", list(STEP_MISTAKES))
            self.faults.append((faulty, kind))
        self.results: list[Any] = [None] * len(self.steps)
        self.queue: list[tuple[int, str, dict[str, Any]]] = []  # (step, tool, args) to send
        self.next_step = 0
        self.pending: int | None = None
        self.n_calls = 0
        self.outputs: list[str] = []

    def _plan_step(self) -> None:
        """Queue the calls of the next plan step that can be made (none when done)."""
        while not self.queue and self.next_step < len(self.steps):
            i = self.next_step
            self.next_step += 1
            tool, args = self.steps[i]
            try:
                concrete = self._resolve(args)
            except LookupError:
                continue  # its source result is missing: the step cannot be made
            faulty, kind = self.faults[i]
            if faulty:
                self.noise.made.append(kind)
                if kind == "skipped_call":
                    continue
                if kind == "wrong_argument":
                    concrete = _garble(concrete)
                elif kind == "wrong_tool":
                    others = [t for t in self.tools if t != tool] or [tool]
                    tool = others[(i + len(tool)) % len(others)]
                elif kind == "extra_call":
                    self.queue.append((-1, tool, concrete))
            self.queue.append((i, tool, concrete))

    def _resolve(self, args: Any) -> Any:
        if is_ref(args):
            return resolve_ref(args, self.results)
        if isinstance(args, dict):
            return {k: self._resolve(v) for k, v in args.items()}
        if isinstance(args, list):
            return [self._resolve(v) for v in args]
        return args

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The next assistant message: one tool call, or the final answer."""
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            content = str(last.get("content") or "")
            self.outputs.append(content)
            if self.pending is not None and self.pending >= 0:
                parsed = _parse(content)  # an error result is plain text: nothing to read from
                self.results[self.pending] = parsed if isinstance(parsed, (dict, list)) else None
            self.pending = None
        self._plan_step()
        if self.queue:
            step, tool, args = self.queue.pop(0)
            self.pending = step
            self.n_calls += 1
            call = tool_call(f"call_{self.n_calls}", tool, json.dumps(args))
            return assistant_message(None, [call])
        return assistant_message(self.answer())

    def answer(self) -> str:
        """The final answer, built from the tool outputs (the last two, shortened)."""
        if not self.outputs:
            return "I could not get any result from the tools."
        parts = [o if len(o) <= 600 else o[:599] + "…" for o in self.outputs[-2:]]
        return "Here is what the tools returned:\n" + "\n\n".join(parts)
