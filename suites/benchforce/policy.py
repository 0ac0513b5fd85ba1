"""The Benchforce reference agent behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

It acts as a model would, through the same scaffold and the server's tools: it asks the caller
for the facts it needs (in the environment's ``slot_asks`` words), runs the
entry's gold actions one tool call per turn as its plan (the reads before the first write
first, then, when the plan changes anything, it states the changes and asks the caller to
confirm, then the rest), and ends by reporting the outcome and what its read calls returned
(from the tool outputs it received). An expected output that no tool output contains (a figure
a correct agent works out from the records, such as the seats missing to a discount) is said only
when every planned call ran as planned and succeeded, so a faulty step also loses it.

Seeded mistakes (every draw is made whatever the rate, so a higher rate only adds mistakes):
a faulty step (probability p) is one of ``wrong_argument`` (one argument garbled),
``wrong_tool`` (the arguments sent to another tool), ``skipped_call`` or ``extra_call`` (the
call made twice); and with probability p the final reply leaves out the looked-up details
(``silent``).
"""

from __future__ import annotations

import json
from typing import Any

from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.models.offline import Noise
from pytest_egi.normalize import fold_text
from suites.benchforce.env.base import Environment

__all__ = ["STEP_MISTAKES", "BenchforcePolicy"]

STEP_MISTAKES = ("wrong_argument", "wrong_tool", "skipped_call", "extra_call")


def _garble(args: dict[str, Any], key: str) -> dict[str, Any]:
    """``args`` with ``key``'s value made wrong: a date a day off, an id or name made unknown,
    a whole number one more, a list without its last item (or ``["unknown"]`` when empty)."""
    value = args[key]
    if isinstance(value, str) and len(value) == 10 and value[4] == "-":  # a date: a day later
        bad: Any = value[:8] + f"{min(int(value[8:]) + 1, 28):02d}" if value[8:] != "28" else value[:8] + "27"
    elif isinstance(value, str):
        bad = f"{value}x" if value[:1].isalpha() and value[1:].isdigit() else f"Unknown {value}"
    elif isinstance(value, int) and not isinstance(value, bool):
        bad = value + 1
    elif isinstance(value, list):
        bad = value[:-1] if value else ["unknown"]
    else:
        bad = value
    return {**args, key: bad}


class BenchforcePolicy:
    """One trial's reference agent (module docstring).

    Args:
        entry: the entry (``actions``, ``user.facts``).
        env: its environment (tool kinds, names for wrong-tool choices).
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, entry: dict[str, Any], env: Environment, noise: Noise) -> None:
        self.noise = noise
        self.env = env
        actions = [(a["name"], dict(a.get("arguments") or {})) for a in entry["actions"]]
        writes = [i for i, (n, _) in enumerate(actions) if env.tools.get(n) and env.tools[n].kind == "write"]
        first_write = writes[0] if writes else len(actions)
        names = list(env.tools)
        script: list[tuple[str, Any]] = [("ask", list((entry.get("user") or {}).get("facts") or {}))]
        for i, (name, args) in enumerate(actions):
            if i == first_write:
                script.append(("confirm", actions[first_write:]))
            faulty = noise.uniform("step") < noise.p
            kind = noise.choice("step_kind", list(STEP_MISTAKES))
            key = noise.choice("garble_key", sorted(args)) if args else None
            if faulty:
                noise.made.append(kind)
                if kind == "skipped_call":
                    continue
                if kind == "wrong_argument" and key is not None:
                    args = _garble(args, key)
                elif kind == "wrong_tool":
                    others = [n for n in names if n != name]
                    name = others[(i + len(name)) % len(others)]
                elif kind == "extra_call":
                    script.append(("call", (name, args)))
            script.append(("call", (name, args)))
        self.expected = [str(o) for o in entry.get("outputs") or []]
        self.faithful = not noise.made
        self.silent = noise.uniform("silent") < noise.p
        if self.silent:
            noise.made.append("silent")
        script.append(("final", bool(writes)))
        self.script = script
        self.outputs: list[str] = []
        self.n_calls = 0
        self.final_text = ""

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The next assistant message: a question, one tool call, or the final report."""
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            self.outputs.append(str(last.get("content") or ""))
        if not self.script:
            return assistant_message(self.final_text)
        step, value = self.script.pop(0)
        if step == "ask":
            wanted = [self.env.slot_asks[k] for k in value if k in self.env.slot_asks]
            if not wanted:
                return self(messages, tools)
            return assistant_message(
                "I can help with that. Could you please tell me " + ", ".join(wanted) + "?"
            )
        if step == "confirm":
            plan = "; ".join(
                f"{n.replace('_', ' ')} with " + ", ".join(f"{k}={v}" for k, v in a.items()) for n, a in value
            )
            return assistant_message(f"To confirm, I am about to run: {plan}. Shall I proceed?")
        if step == "call":
            name, args = value
            self.n_calls += 1
            return assistant_message(None, [tool_call(f"call_{self.n_calls}", name, json.dumps(args))])
        parts = ["Your request has been completed successfully." if value else "I looked that up for you."]
        found = [o for o in self.outputs if not o.startswith("Error:")]
        if found and not self.silent:
            parts.append("Here is what I found: " + " ".join(found))
            seen = fold_text(" ".join(found)).casefold()
            derived = [o for o in self.expected if fold_text(o).casefold() not in seen]
            clean = self.faithful and len(found) == len(self.outputs)
            if derived and clean:
                parts.append("From these records: " + "; ".join(derived) + ".")
        self.final_text = " ".join(parts)
        return assistant_message(self.final_text)
