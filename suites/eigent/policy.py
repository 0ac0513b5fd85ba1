"""The reference policy behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

An Eigent folder's reference solution is our extension of the format: ``solution/<n>.json``
beside ``dataset/<n>.json`` (upstream's runner ignores it)::

    {"steps": [{"tool": "run_command", "arguments": {"command": "grep -ril sync docs"}},
               {"tool": "write_file", "arguments": {"path": "solve.py",
                                                    "content_file": "solution/3/solve.py"}},
               {"tool": "run_command", "arguments": {"command": "python3 solve.py"}}],
     "answer": "Wrote answer.json."}

The policy makes each step as one tool call through the same tools a model gets (workspace
tools, or an MCP tool ``<server>__<tool>``), one per turn, then replies with ``answer`` as text.
``content_file`` (a path under the benchmark folder) is read into ``content`` when the policy
is built: the reference solution's own files, never a checker or a grader. The answer a task
asks for is produced by those steps in the working directory (a reference script the policy
runs computes it from the task's files and tool results); nothing is written behind the
agent's back.

Seeded mistakes: every decision (each step, and the final reply) may go wrong with probability
p, drawn for every decision whatever the rate, so a higher rate only adds mistakes. A trial
whose first faulty decision is step k stops after the steps before it (at most all but the
last step, which the shipped solutions make the one that completes the deliverable) and still
claims to be done: unfinished work, as a model that stops early leaves it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.models.offline import Noise
from pytest_egi.suite import CannotRun

__all__ = ["EigentPolicy", "load_solution"]


def load_solution(data: dict[str, Any]) -> dict[str, Any]:
    """The task's reference solution with every ``content_file`` read into ``content``.

    Raises:
        CannotRun: the task has no ``solution/<n>.json`` (egi/oracle cannot play it).
        ValueError: the solution file is malformed (names the file and the step).
    """
    path = data.get("solution")
    if not path:
        stem = Path(data["dataset_file"]).stem
        raise CannotRun(f"no reference solution for this task (solution/{stem}.json "
                        "beside dataset/ is our extension; upstream ships none)")  # fmt: skip
    folder = Path(data["folder"])
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read the reference solution: {exc}") from None
    steps = raw.get("steps") if isinstance(raw, dict) else None
    if not isinstance(steps, list) or not steps:
        raise ValueError(f"{path}: field steps: expected a non-empty list of {{tool, arguments}}")
    out = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict) or not isinstance(step.get("tool"), str):
            raise ValueError(f"{path}: field steps[{i}].tool: expected a tool name")
        args = dict(step.get("arguments") or {})
        if "content_file" in args:
            source = (folder / args.pop("content_file")).resolve()
            if not source.is_relative_to(folder):
                raise ValueError(f"{path}: field steps[{i}].arguments.content_file leaves the folder")
            args["content"] = source.read_text(encoding="utf-8")
        out.append({"tool": step["tool"], "arguments": args})
    return {"steps": out, "answer": str(raw.get("answer") or "Done.")}


class EigentPolicy:
    """One trial's reference agent (module docstring).

    Args:
        solution: :func:`load_solution`'s result.
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, solution: dict[str, Any], noise: Noise) -> None:
        steps = solution["steps"]
        draws = [noise.uniform("decision") < noise.p for _ in range(len(steps) + 1)]
        first = next((i for i, bad in enumerate(draws) if bad), None)
        self.steps = steps if first is None else steps[: min(first, len(steps) - 1)]
        if first is not None:
            noise.made.append("stopped_early")
        self.answer = solution["answer"]
        self.next = 0

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The next assistant message: one tool call, or the closing text."""
        if self.next < len(self.steps):
            step = self.steps[self.next]
            self.next += 1
            return assistant_message(None, [tool_call(f"call_{self.next}", step["tool"],
                                                      json.dumps(step["arguments"]))])  # fmt: skip
        return assistant_message(self.answer)
