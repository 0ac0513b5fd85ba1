"""The UserBench reference policy behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

It acts as a model would, through the one tool: for each aspect of the trip, in order, it
searches once with the arguments the user's first message states (kept in the task as
``arguments``), asks one concrete question per hidden preference (the catalogue's question for
the preference's subcategory: the task's plan), and recommends one option. The option is
computed from what its own turns returned, never from the gold ids: the options listed by its
search, and the preferences it understood from the user's replies (a reply carrying a known
implicit statement is understood as that statement's predicate, active or volunteered). It
picks the cheapest option on the searched route / city that meets every understood
preference. A question whose preference the user already volunteered is not asked again; a
search that hit the backend failure is sent again. On a scenario read from upstream's files
(``userbench.scenarios``), whose preferences carry no predicate, the search names the
scenario's own arguments, the question names the preference's subcategory, and the pick is the
task's best id once every preference of the aspect is understood, else a ``wrong``-pool option
(:meth:`UserbenchPolicy._pick_unchecked`): with no predicate to compute it from, the best id
is read from the task there.

Seeded mistakes (drawn up front for every step whatever the rate, so a higher rate only adds
mistakes, as :class:`~pytest_egi.models.offline.Noise` requires): ``extra_turn`` (an off-topic
remark before an aspect), ``wrong_argument`` (a search with the wrong city first),
``vague_question`` / ``skipped_question`` (a vague question before the concrete one, or no
question: the preference stays unknown, so the pick is a cheaper option that violates it),
``wrong_answer`` (the cheapest option that breaks an understood preference, or an off-target
one).
"""

from __future__ import annotations

import json
from collections import deque
from typing import Any

from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.models.offline import Noise
from suites.userbench.catalogue import CITIES, ID_LETTER, kind_of, satisfies, statement_index
from suites.userbench.data import on_target, option_price
from suites.userbench.env import Messages
from suites.userbench.simulator import argument_values, free_subcategory

__all__ = ["DONE_TEXT", "UserbenchPolicy", "search_request"]

DONE_TEXT = "I have recommended an option for every part of your trip."
"""The policy's closing text reply (no tool call) if the episode is still open when it is done."""
_CHAT = "By the way, I hope the weather is kind to you on this trip!"


def search_request(aspect: str, args: dict[str, Any]) -> str:
    """A search request naming ``aspect`` and every one of its arguments (this suite's argument
    keys, else, for a scenario read from upstream's files, each argument as ``<key> <value>``)."""
    ours = {"flight": {"origin", "destination", "date"}, "hotel": {"city", "check_in", "check_out"},
            "apartment": {"city", "check_in", "check_out"}, "restaurant": {"city", "date"},
            "rental_car": {"city", "pickup_date", "return_date"}}  # fmt: skip
    if set(args) != ours[aspect]:
        parts = [f"{k.replace('_', ' ')} {', '.join(argument_values(v))}" for k, v in args.items()]
        return f"{aspect.replace('_', ' ').capitalize()} with " + "; ".join(parts)
    if aspect == "flight":
        return f"One-way flight from {args['origin']} to {args['destination']} on {args['date']}"
    if aspect in ("hotel", "apartment"):
        stay = f"check in {args['check_in']}, check out {args['check_out']}"
        return f"{aspect.capitalize()} in {args['city']}, {stay}"
    if aspect == "restaurant":
        return f"Restaurant in {args['city']} for dinner on {args['date']}"
    return f"Rental car in {args['city']}, pick up {args['pickup_date']}, return {args['return_date']}"


class UserbenchPolicy:
    """One trial's reference agent (module docstring).

    Args:
        task: the task record (``dimensions``, ``arguments``, ``preferences``).
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, task: dict[str, Any], noise: Noise) -> None:
        self.task = task
        self.noise = noise
        # a reply carrying a statement is understood as (aspect, subcategory, its predicate);
        # a scenario read from upstream's files has statements but no predicates
        self.statements: dict[str, tuple[str, str, Any]] = {
            st: (a, sub, v.predicate) for st, (a, sub, v) in statement_index().items()
        }
        self.statements.update({p["implicit_statement"]: (p["aspect"], p["subcategory"], p.get("predicate"))
                                for p in task["preferences"]})  # fmt: skip
        self.checkable = all("predicate" in p for p in task["preferences"])
        self.learned: dict[str, dict[str, dict[str, Any] | None]] = {a: {} for a in task["dimensions"]}
        self.options: dict[str, list[dict[str, Any]]] = {}
        self.steps: deque[tuple[Any, ...]] = deque()
        self.pending: tuple[Any, ...] | None = None
        self.n_calls = 0
        for aspect in task["dimensions"]:
            extra, bad_search = self._fault("extra_turn"), self._fault("wrong_argument")
            if extra:
                self.steps.append(("chat",))
            if bad_search:
                self.steps.append(("bad_search", aspect))
            self.steps.append(("search", aspect))
            for pref in task["preferences"]:
                if pref["aspect"] != aspect:
                    continue
                faulty = self.noise.uniform("question") < self.noise.p
                kind = self.noise.choice("question_kind", ["vague_question", "skipped_question"])
                if faulty:
                    self.noise.made.append(kind)
                if faulty and kind == "skipped_question":
                    continue
                if faulty:
                    self.steps.append(("vague", aspect))
                self.steps.append(("ask", pref))
            self.steps.append(("answer", aspect, self._fault("wrong_answer")))

    def _fault(self, kind: str) -> bool:
        hit = self.noise.uniform(kind) < self.noise.p
        if hit:
            self.noise.made.append(kind)
        return hit

    # -- reading observations -------------------------------------------------------------
    def _read(self, content: str) -> None:
        for statement, (aspect, sub, predicate) in self.statements.items():
            if statement in content and aspect in self.learned:
                self.learned[aspect][sub] = predicate
        if self.pending and self.pending[0] == "search":
            aspect = self.pending[1]
            if content.startswith(Messages.SEARCH_FAILED):
                self.steps.appendleft(self.pending)
            else:
                found = [json.loads(line) for line in content.split("\n") if line.startswith("{")]
                if found:
                    self.options[aspect] = found

    # -- acting ----------------------------------------------------------------------------
    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The next assistant message: one ``interact_with_env`` call, or the closing text."""
        last = messages[-1] if messages else {}
        if last.get("role") == "tool":
            self._read(str(last.get("content") or ""))
        self.pending = None
        while self.steps:
            step = self.steps.popleft()
            move = self._move(step)
            if move is not None:
                self.pending = step
                choice, content, thought = move
                self.n_calls += 1
                args = json.dumps({"thought": thought, "choice": choice, "content": content})
                return assistant_message(None, [tool_call(f"call_{self.n_calls}", "interact_with_env", args)])
        return assistant_message(DONE_TEXT)

    def _move(self, step: tuple[Any, ...]) -> tuple[str, str, str] | None:
        """(choice, content, thought) for ``step``, or None when it is no longer needed."""
        kind = step[0]
        if kind == "chat":
            return "action", _CHAT, "Keep the conversation friendly."
        if kind == "bad_search":
            args = dict(self.task["arguments"][step[1]])
            key = next((k for k in ("destination", "city") if k in args),
                       next((k for k, v in args.items() if isinstance(v, str)), None))  # fmt: skip
            if key is not None:
                args[key] = next(c for c in CITIES if c not in argument_values(args))
            else:
                args = {}
            return "search", search_request(step[1], args), f"Search the {step[1]} options."
        if kind == "search":
            args = self.task["arguments"][step[1]]
            return "search", search_request(step[1], args), f"Search the {step[1]} options."
        if kind == "vague":
            return "action", f"Do you have any other preferences for the {step[1].replace('_', ' ')}?", "Ask."
        if kind == "ask":
            pref = step[1]
            if pref["subcategory"] in self.learned[pref["aspect"]]:
                return None  # the user already volunteered it
            phrase = free_subcategory(pref)
            if phrase is None:
                question = kind_of(pref["aspect"], pref["subcategory"]).question
            else:
                aspect_words = pref["aspect"].replace("_", " ")
                question = f"For the {aspect_words}, what would you like about the {phrase}?"
            return "action", question, f"Ask about the {pref['aspect']} {pref['subcategory']}."
        aspect, wrong = step[1], step[2]
        return "answer", self._pick(aspect, wrong), f"Recommend the {aspect} option."

    def _pick(self, aspect: str, wrong: bool) -> str:
        """The cheapest on-target option meeting every understood preference (or, for a
        ``wrong_answer`` mistake, breaking one; else an off-target option)."""
        options = self.options.get(aspect)
        if not options:
            return f"{ID_LETTER[aspect]}1"  # never saw the options: a guess
        if not self.checkable:
            return self._pick_unchecked(aspect, options, wrong)
        args = self.task["arguments"][aspect]
        preds = list(self.learned[aspect].values())
        target = [o for o in options if on_target(aspect, o, args)]
        if wrong:
            bad = [o for o in target if not all(satisfies(o, p) for p in preds)]
            pool = bad or [o for o in options if o not in target] or options
        else:
            pool = [o for o in target if all(satisfies(o, p) for p in preds)] or target or options
        return min(pool, key=lambda o: option_price(aspect, o))["id"]

    def _pick_unchecked(self, aspect: str, options: list[dict[str, Any]], wrong: bool) -> str:
        """The pick on a scenario read from upstream's files, whose preferences are text with no
        predicate: the task's best id once every preference of the aspect is understood (asked
        or volunteered), else (or for a ``wrong_answer`` mistake) the first listed option of the
        scenario's ``wrong`` pool (then ``noise``, then any option that is not correct)."""
        mine = [p for p in self.task["preferences"] if p["aspect"] == aspect]
        if not wrong and all(p["subcategory"] in self.learned[aspect] for p in mine):
            return str(self.task["best_id"][aspect])
        kinds = (self.task.get("option_kinds") or {}).get(aspect) or {}
        correct = set((self.task.get("correct_ids") or {}).get(aspect) or [])
        for pool in ("wrong", "noise"):
            found = [o["id"] for o in options if (kinds.get(o["id"]) or {}).get("pool") == pool]
            if found:
                return str(found[0])
        return str(next((o["id"] for o in options if o["id"] not in correct), options[0]["id"]))
