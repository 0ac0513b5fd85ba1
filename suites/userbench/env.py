"""The TravelGym environment (reference §2.4-2.7): one task, one episode, upstream's step rules.

The agent's every move is one string (the harness prefixes the tool call's ``content`` with its
``choice``, see ``agent.py``):

- ``[search] <request>``: the search counter increments; every ``search_failure_interval``-th
  search (counter mod 5 == 0) fails on purpose with a "try again later" message (reward 0).
  Otherwise the judge's verdict: ``True`` for an aspect not yet searched returns the field
  description and every option of the aspect, one JSON object per line (reward
  ``search_correct_reward`` 0.2); ``True`` again for that aspect, ``False`` and ``N/A`` each get
  a fixed message (0).
- ``[action] <utterance>``: the user classifies it against the remaining preferences. Type 2 ->
  the preference is revealed implicitly (reward ``preference_correct_reward`` 0.2, active count
  +1, off-topic counter reset). Otherwise, when the off-topic counter has already reached
  ``elicitation_interval`` (3) and preferences remain, the user volunteers a random remaining
  one (passive count +1, counter reset, reward 0): the 4th consecutive non-type-2 utterance
  (upstream's async path, the one its harness runs). Otherwise type 3 / 4 get fixed replies
  and type 1 a neutral reply, and the counter increments.
- ``[answer] <id>[, <id> ...]``: the content is split on commas; every id must match
  ``^[ACFHR]\\d+$``. Each id in turn: a remaining best id -> ``choice_best_reward`` 1.0, a
  remaining correct id -> ``choice_correct_reward`` 0.8 (each removed once credited), anything
  else -> ``-wrong_choice_penalty`` (0); the turn's reward is their sum, floored at 0 (upstream's
  async path, so one answer naming a best and a correct id earns 1.8, which upstream's exact
  ``count(1.0)`` / ``count(0.8)`` then count as neither). In one-choice mode an answer naming an
  aspect letter already answered (or one letter twice) is refused (0), and answering an aspect
  drops its remaining preferences.
- ``[finish]`` (any case) ends the episode with reward 0; anything else is a format error (0).

Each step's reward is ``raw * reward_scale - step_penalty`` (1.0 and 0.0 by default, so the
constants come through unchanged and the scorer's exact ``== 1.0`` / ``== 0.8`` counts hold).
The episode terminates only where upstream's async path (the one its harness runs) ends it:
when no best id remains, or at ``[finish]``; it is truncated when ``step_count >= max_steps``
(20). In one-choice mode too: upstream's sync-only rule that ends a one-choice episode once
every aspect is answered is not applied (reference §2.5, §2.9 item 8).

Deliberate differences from upstream: an answer is checked whole before any id is credited
(every id well formed; in one-choice mode no aspect answered before or named twice), so a
refused answer changes nothing (upstream credited the ids before the bad one, consumed them,
and then returned 0 for the turn); a best id is removed from the correct list only if present
(upstream raised otherwise, §2.9 item 10); the passive reveal draws from a per-trial seeded
generator (upstream used the global ``random``); a judge or user failure raises (an
infrastructure error, not a scored turn).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from suites.userbench.catalogue import ASPECT_OF_LETTER, OPTION_SCHEMAS
from suites.userbench.simulator import TravelUser

__all__ = ["EnvConfig", "GOAL", "ID_PATTERN", "Messages", "TravelEnv"]

ID_PATTERN = re.compile(r"^[ACFHR]\d+$")
"""Upstream's option-id pattern."""
GOAL = "Elicit travel preferences and provide appropriate recommendations."
"""The observation's ``goal`` (upstream's text)."""


class EnvConfig(BaseModel):
    """Upstream's ``TravelGymConfig`` defaults (reference §2.7)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when an env starts

    max_steps: int = Field(default=20, ge=1)
    search_failure_interval: int = Field(default=5, ge=1)
    elicitation_interval: int = Field(default=3, ge=0)
    reward_scale: float = 1.0
    step_penalty: float = 0.0
    search_correct_reward: float = 0.2
    preference_correct_reward: float = 0.2
    choice_best_reward: float = 1.0
    choice_correct_reward: float = 0.8
    wrong_choice_penalty: float = 0.0
    one_choice_per_aspect: bool = True
    normalize_rewards: bool = False


class Messages:
    """The environment's fixed feedback texts (our wording of upstream's)."""

    SEARCH_FAILED = "The search service is having trouble right now. Please try again later."
    SEARCH_OK = "Your search request is correct."
    SEARCH_REPEAT = (
        "Your search request is correct, but you already received the results for <{aspect}> in an "
        "earlier search. Please use those results."
    )
    _REFINE = (
        "Please refine your search request so that it 1. matches what the user needs, 2. makes a single "
        "request at a time, and 3. contains exactly the right search arguments."
    )
    SEARCH_FALSE = "Something in your search request is wrong or inaccurate. " + _REFINE
    SEARCH_NA = "Your search request does not match any travel aspect of this trip. " + _REFINE
    TYPE3 = (
        "Good question, but I don't have a particular preference about that (or I already told you). "
        "Feel free to ask me about other specific details."
    )
    TYPE4 = (
        "That's too broad for me to answer. Could you ask me about one specific detail of what I'd like, "
        "so I can give you a precise answer?"
    )
    FORMAT_WRONG = "Your response format is wrong and could not be parsed."
    INVALID_ID = "Invalid option ID '{id}'. Expected an ID such as H1, F12 or C4."
    ONE_CHOICE_REFUSED = (
        "You already recommended an option for this travel aspect (ID letter '{letter}'). Only one option "
        "per aspect is allowed; please continue with the other travel aspects."
    )
    BEST = "Your recommendation includes the best option!"
    BEST_AND_WRONG = "Your recommendation includes the best option, but also options that are not correct."
    CORRECT = "Your recommendation includes a correct option, but not the best one."
    CORRECT_AND_WRONG = (
        "Your recommendation includes a correct option, but not the best one, and also options that are "
        "not correct."
    )
    WRONG = "Your recommendation includes no correct option."
    RECORDED_ONE = (
        " Your choice is recorded; do not recommend another option for this travel aspect. Please continue "
        "with the other travel aspects."
    )
    RECORDED_MULTI = " Your choice is recorded; do not recommend these options again. Please continue."
    FINISH = "Session ended. You elicited {n}/{total} preferences. Final elicitation ratio: {ratio:.2%}"


class TravelEnv:
    """One TravelGym episode over one task (Gymnasium-style ``reset`` / ``step``).

    Args:
        task: a task record (``data.generate_task``).
        user: the user simulator and search judge.
        config: the environment constants.
        reveal_seed: seeds the passive reveal's choice (e.g. ``"<seed>|<task id>|<trial>"``).
    """

    def __init__(self, task: dict[str, Any], user: TravelUser, config: EnvConfig | None = None,
                 reveal_seed: str = "0") -> None:  # fmt: skip
        self.task = task
        self.user = user
        self.config = config or EnvConfig()
        self._rng = random.Random(reveal_seed)
        self.reset()

    # -- state --------------------------------------------------------------------------
    def reset(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start the episode. Returns (observation, info); the observation's ``feedback`` is the
        user's first message."""
        self.episode_complete = False
        self.step_count = 0
        self.total_reward = 0.0
        self.action_history: list[str] = []
        self.conversation_history: list[dict[str, Any]] = []
        self.elicited: list[dict[str, Any]] = []
        self.remaining: list[dict[str, Any]] = [dict(p) for p in self.task["preferences"]]
        dims = self.task["dimensions"]
        self.state: dict[str, Any] = {
            "search_times": 0,
            "nonpreference_times": 0,
            "search_arguments": list(dims),
            "remaining_best_options": [self.task["best_id"][a] for a in dims],
            "remaining_correct_options": [i for a in dims for i in self.task["correct_ids"][a]],
            "choice_initials": [],
            "active_elicited_preferences": 0,
            "passive_elicited_preferences": 0,
        }
        obs = self._observation(self.task["initial_description"], 0.0, with_counts=False)
        return obs, self._info()

    def _ratio(self) -> float:
        total = len(self.remaining) + len(self.elicited)
        return 0.0 if total == 0 else len(self.elicited) / total

    def _observation(self, feedback: str, reward: float, with_counts: bool = True) -> dict[str, Any]:
        """Upstream's observation keys (``active_`` / ``passive_elicited_preferences`` only after a
        regular step, as upstream)."""
        obs: dict[str, Any] = {
            "task_description": self.task["scenario"],
            "goal": GOAL,
            "feedback": feedback,
            "step_count": self.step_count,
            "episode_complete": self.episode_complete,
            "total_preferences": len(self.remaining) + len(self.elicited),
            "remaining_preferences": len(self.remaining),
            "elicitation_ratio": self._ratio(),
        }
        if with_counts:
            obs["active_elicited_preferences"] = self.state["active_elicited_preferences"]
            obs["passive_elicited_preferences"] = self.state["passive_elicited_preferences"]
        obs["last_reward"] = reward
        return obs

    def _info(self, newly: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        info = {
            "task_id": self.task["id"],
            "preferences_summary": [
                f"{p['aspect']}-{p['subcategory']}: {p['preference'][:50]}..." for p in self.remaining
            ],  # fmt: skip
            "action_history": list(self.action_history),
            "conversation_history": [dict(m) for m in self.conversation_history],
            "elicited_preferences": [p["id"] for p in self.elicited],
            "total_reward": self.total_reward,
        }
        if newly is not None:
            info["newly_elicited_preferences"] = [p["id"] for p in newly]
        return info

    # -- step ---------------------------------------------------------------------------
    def step(self, action_input: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """One move (module docstring). Returns (observation, reward, terminated, truncated, info).

        Raises:
            RuntimeError: the episode is already complete.
            Exception: from the user simulator / judge (an infrastructure failure).
        """
        if self.episode_complete:
            raise RuntimeError("the episode is complete; call reset() to start a new one")
        self.step_count += 1
        action = str(action_input).strip()
        self.action_history.append(action)
        if action.lower().startswith("[finish]"):
            self.episode_complete = True
            total = len(self.remaining) + len(self.elicited)
            text = Messages.FINISH.format(n=len(self.elicited), total=total, ratio=self._ratio())
            return self._observation(text, 0.0, with_counts=False), 0.0, True, False, self._info()
        feedback, elicited_ids, raw = self._evaluate(action)
        newly = [p for p in self.remaining if p["id"] in elicited_ids]
        self.elicited += newly
        self.remaining = [p for p in self.remaining if p["id"] not in elicited_ids]
        reward = raw * self.config.reward_scale - self.config.step_penalty
        if self.config.normalize_rewards:
            reward = max(0.0, min(1.0, reward))
        self.total_reward += reward
        terminated = self.state["remaining_best_options"] == []
        truncated = self.step_count >= self.config.max_steps
        if terminated or truncated:
            self.episode_complete = True
        return self._observation(feedback, reward), reward, terminated, truncated, self._info(newly)

    def _evaluate(self, action: str) -> tuple[str, list[str], float]:
        if action.startswith("[search]"):
            return self._search(action[len("[search]") :].strip())
        if action.startswith("[action]"):
            return self._talk(action[len("[action]") :].strip())
        if action.startswith("[answer]"):
            return self._answer(action[len("[answer]") :].strip())
        return Messages.FORMAT_WRONG, [], 0.0

    def _log(self, agent: str, role: str, content: str, note: str | None = None) -> None:
        entry: dict[str, Any] = {"role": "agent", "content": agent}
        if note is not None:
            entry["note"] = note
        self.conversation_history += [entry, {"role": role, "content": content}]

    def _search(self, request: str) -> tuple[str, list[str], float]:
        self.state["search_times"] += 1
        if self.state["search_times"] % self.config.search_failure_interval == 0:
            self._log(request, "database", Messages.SEARCH_FAILED)
            return Messages.SEARCH_FAILED, [], 0.0
        verdict = self.user.judge_search(request, self.task)
        if verdict.judgement == "True":
            aspect = verdict.aspect
            if aspect not in self.task["dimensions"]:
                raise ValueError(
                    f"the search judge named aspect {aspect!r}, not one of {self.task['dimensions']}"
                )
            if aspect in self.state["search_arguments"]:
                self.state["search_arguments"].remove(aspect)
                header = f"Here are all the options for <{aspect}>:"
                lines = [f"{Messages.SEARCH_OK}\n\n{OPTION_SCHEMAS[aspect]}\n\n{header}"]
                lines += [json.dumps(o) for o in self.task["options"][aspect]]
                self._log(request, "database", Messages.SEARCH_OK + " ... (results not repeated here) ...")
                return "\n".join(lines), [], self.config.search_correct_reward
            text = Messages.SEARCH_REPEAT.format(aspect=aspect)
            self._log(request, "database", text)
            return text, [], 0.0
        text = Messages.SEARCH_FALSE if verdict.judgement == "False" else Messages.SEARCH_NA
        self._log(request, "database", text)
        return text, [], 0.0

    def _talk(self, utterance: str) -> tuple[str, list[str], float]:
        verdict = self.user.classify(utterance, self.task, self.remaining, self.conversation_history)
        if verdict.type == 2:
            pref = next((p for p in self.remaining if p["id"] == verdict.preference_id), None)
            if pref is None:
                raise ValueError(
                    f"the classifier matched {verdict.preference_id!r}, which is not a remaining preference"
                )
            self.state["nonpreference_times"] = 0
            self.state["active_elicited_preferences"] += 1
            reply = self.user.reply("elicit", utterance, self.task, pref, self.conversation_history)
            self._log(utterance, "user", reply, note=f"asked about {pref['id']}: revealed implicitly")
            return reply, [pref["id"]], self.config.preference_correct_reward
        if self.state["nonpreference_times"] >= self.config.elicitation_interval and self.remaining:
            self.state["nonpreference_times"] = 0
            self.state["passive_elicited_preferences"] += 1
            pref = self._rng.choice(self.remaining)
            reply = self.user.reply("proactive", utterance, self.task, pref, self.conversation_history)
            self._log(utterance, "user", reply, note=f"off topic for a while: volunteered {pref['id']}")
            return reply, [pref["id"]], 0.0
        self.state["nonpreference_times"] += 1
        if verdict.type == 3:
            reply = Messages.TYPE3
        elif verdict.type == 4:
            reply = Messages.TYPE4
        else:
            reply = self.user.reply("natural", utterance, self.task, None, self.conversation_history)
        self._log(utterance, "user", reply, note=f"type {verdict.type}")
        return reply, [], 0.0

    def _answer(self, content: str) -> tuple[str, list[str], float]:
        ids = [i.strip() for i in content.split(",")]
        for oid in ids:
            if not ID_PATTERN.match(oid):
                return Messages.INVALID_ID.format(id=oid), [], 0.0
        one_choice = self.config.one_choice_per_aspect
        if one_choice:
            letters = [oid[0] for oid in ids]
            for n, letter in enumerate(letters):
                if letter in self.state["choice_initials"] or letter in letters[:n]:
                    return Messages.ONE_CHOICE_REFUSED.format(letter=letter), [], 0.0
        reward = 0.0
        best = correct = wrong = False
        for oid in ids:
            if oid in self.state["remaining_best_options"]:
                reward += self.config.choice_best_reward
                best = True
                self.state["remaining_best_options"].remove(oid)
                if oid in self.state["remaining_correct_options"]:
                    self.state["remaining_correct_options"].remove(oid)
            elif oid in self.state["remaining_correct_options"]:
                reward += self.config.choice_correct_reward
                correct = True
                self.state["remaining_correct_options"].remove(oid)
            else:
                reward -= self.config.wrong_choice_penalty
                wrong = True
            letter = oid[0]
            if letter not in self.state["choice_initials"]:
                self.state["choice_initials"].append(letter)
            if one_choice:
                aspect = ASPECT_OF_LETTER[letter]
                self.remaining = [p for p in self.remaining if p["aspect"] != aspect]
        reward = max(reward, 0.0)
        if best:
            feedback = Messages.BEST_AND_WRONG if wrong else Messages.BEST
        elif correct:
            feedback = Messages.CORRECT_AND_WRONG if wrong else Messages.CORRECT
        else:
            feedback = Messages.WRONG
        return feedback + (Messages.RECORDED_ONE if one_choice else Messages.RECORDED_MULTI), [], reward
