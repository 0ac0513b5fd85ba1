"""A stand-in for a simulator model: reads the LLM simulator's prompt and answers it correctly, as
JSON, by asking :class:`~suites.userbench.simulator.RuleUser` (so a whole episode can run over
the LLM path, in process or behind the local OpenAI-compatible server)."""

from __future__ import annotations

import json
from typing import Any

from suites.userbench.simulator import CLASSIFY_SYSTEM, SEARCH_JUDGE_SYSTEM, RuleUser

__all__ = ["rule_reply"]

_RULES = RuleUser()


def rule_reply(task: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """The simulator model's reply text (a fenced JSON object) to the LLM simulator's
    ``messages`` for ``task``: the rule judge's verdict, the rule classifier's type, or the
    preference's implicit statement (the hint) as the user's reply ("Fine by me." otherwise).

    Raises:
        IndexError: ``messages`` is not one of the LLM simulator's prompts.
    """
    system, user = messages[0]["content"], messages[1]["content"]
    if system == SEARCH_JUDGE_SYSTEM:
        v = _RULES.judge_search(user.split("\n")[1], task)
        reply: dict[str, Any] = {"alignment_judgement": v.judgement, "alignment_aspect": v.aspect}
    elif system == CLASSIFY_SYSTEM:
        utterance = user.split("The agent's latest message:\n")[1].split("\n\nPreferences")[0]
        ids = [line.split(" ")[0] for line in user.split("Preferences you still hold:\n")[1].split("\n")]
        remaining = [p for p in task["preferences"] if p["id"] in ids]
        c = _RULES.classify(utterance, task, remaining, [])
        reply = {"type": str(c.type), "preference_id": c.preference_id}
    else:
        hint = user.split("Hint: ")[1].split("\n")[0] if "Hint: " in user else "Fine by me."
        reply = {"thought": "answer as the traveller", "response": hint}
    return f"```json\n{json.dumps(reply)}\n```"
