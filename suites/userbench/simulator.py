"""The simulated traveller and the search judge behind the TravelGym environment.

:class:`TravelUser` is the interface the environment calls (reference §2.5): judge a search
request against the task's ground-truth arguments, classify an utterance against the remaining
preferences (upstream's types 1-4), and voice a reply. Upstream uses one LLM for all three
(GPT-4o, temperature 0); the default here is :class:`RuleUser` (deterministic rules, reference
§3.3), and :class:`LLMUser` (``--egi-simulator-model``) implements the same interface with the
model the core passes (``egi.simulator``).

An implementation never sees search results or the agent's recommendations (upstream's user
does not), and must raise on an infrastructure failure (an LLM call that fails): the
environment does not turn that into a scored observation (DESIGN §8), unlike upstream, which
fell back to "N/A" / type 1 (or an apology as the user's reply) and scored the turn.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal, NamedTuple, Protocol

from pytest_egi.agents.simulator import SimulatorError, simulator_generate, simulator_name
from pytest_egi.models.base import ModelClient, Usage
from pytest_egi.models.params import scaffold_params
from pytest_egi.normalize import fold_text
from suites.userbench.catalogue import ASPECT_WORDS, ASPECTS, CITIES, KINDS, kind_of

__all__ = [
    "GENERIC_PREFERENCE_WORDS",
    "SIMULATOR_PARAMS",
    "argument_values",
    "free_subcategory",
    "Classification",
    "LLMUser",
    "RuleUser",
    "SearchVerdict",
    "SimulatorError",
    "TravelUser",
    "VerdictError",
    "format_history",
    "normalize_utterance",
    "parse_json_object",
]

ReplyMode = Literal["elicit", "proactive", "natural"]


class SearchVerdict(NamedTuple):
    """The search judge's verdict (upstream ``alignment_judgement`` / ``alignment_aspect``).

    Attributes:
        judgement: ``"True"`` (every argument of one aspect present and correct, nothing else),
            ``"False"`` (about the trip but wrong, incomplete or several requests at once) or
            ``"N/A"`` (about no aspect of the trip).
        aspect: the aspect searched when ``"True"``, else None.
    """

    judgement: Literal["True", "False", "N/A"]
    aspect: str | None = None


class Classification(NamedTuple):
    """The utterance classifier's verdict (upstream's judge types).

    Attributes:
        type: 1 not about preferences; 2 a concrete question matching a remaining preference;
            3 a concrete question about a preference the user does not (or no longer) hold;
            4 too vague or general.
        preference_id: the matched preference (``"P2"``) for type 2, else None.
    """

    type: Literal[1, 2, 3, 4]
    preference_id: str | None = None


class TravelUser(Protocol):
    """The user simulator and search judge the environment calls.

    Attributes:
        name: recorded in every report (``egi/rules`` for :class:`RuleUser`, else the model).
    """

    name: str

    def judge_search(self, request: str, task: dict[str, Any]) -> SearchVerdict:
        """Judge a search request (the text after ``[search]``) against ``task["arguments"]``."""
        ...

    def classify(
        self,
        utterance: str,
        task: dict[str, Any],
        remaining: list[dict[str, Any]],
        history: list[dict[str, Any]],
    ) -> Classification:
        """Classify the agent's utterance against the ``remaining`` (not yet elicited) preferences."""
        ...

    def reply(
        self,
        mode: ReplyMode,
        utterance: str,
        task: dict[str, Any],
        preference: dict[str, Any] | None,
        history: list[dict[str, Any]],
    ) -> str:
        """The user's reply: ``elicit`` reveals ``preference`` (asked about) implicitly,
        ``proactive`` volunteers ``preference`` after the agent drifted off topic, ``natural``
        answers neutrally without inventing a preference (``preference`` None)."""
        ...


GENERIC_PREFERENCE_WORDS: tuple[str, ...] = (
    "prefer", "preference", "preferences", "requirement", "requirements", "like", "want", "need", "needs",
    "important", "matter", "matters", "wish", "wishes", "expect", "expectations", "anything else",
)  # fmt: skip
"""Words of a question about preferences in general (type 4 when nothing concrete is named)."""

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")  # fmt: skip


def normalize_utterance(text: str) -> str:
    """Lower-case, folded text with punctuation as spaces, padded with one space on each side,
    so a phrase is matched as whole words with ``f" {phrase} " in text``. Ordinal suffixes go
    (``3rd`` -> ``3``) and ISO dates become month-day (``2025-05-03`` -> ``may 3``).
    """
    s = fold_text(text).lower()
    s = re.sub(r"\b\d{4}-(\d{2})-(\d{2})\b", lambda m: f"{_MONTHS[int(m[1]) - 1]} {int(m[2])}", s)
    s = re.sub(r"\b(\d+)(st|nd|rd|th)\b", r"\1", s)
    s = re.sub(r"[^a-z0-9:+\-]+", " ", s)
    s = re.sub(r"(?<![a-z0-9])-|-(?![a-z0-9])", " ", s)  # a dash that is not inside a word
    return f" {' '.join(s.split())} "


def argument_values(arguments: Any) -> list[str]:
    """The leaf values of a search-argument object (strings and numbers, in order, nested
    objects and lists flattened), as text: what a correct request must contain."""
    if isinstance(arguments, dict):
        return [v for x in arguments.values() for v in argument_values(x)]
    if isinstance(arguments, list):
        return [v for x in arguments for v in argument_values(x)]
    if isinstance(arguments, bool) or arguments is None:
        return []
    return [str(arguments)]


def free_subcategory(preference: dict[str, Any]) -> str | None:
    """The subcategory of a preference that is no kind of the catalogue (one read from
    upstream's scenario files), as words (``seat_class`` -> ``seat class``); None for a
    catalogue kind. The rule classifier takes such a phrase, found whole in an utterance, as
    the topic before any catalogue keyword."""
    aspect, sub = preference.get("aspect"), str(preference.get("subcategory") or "")
    if aspect in KINDS and any(k.subcategory == sub for k in KINDS[aspect]):
        return None
    phrase = " ".join(sub.replace("_", " ").split())
    return phrase or None


def _has(text: str, phrase: str) -> bool:
    return f" {normalize_utterance(phrase).strip()} " in text


def _aspects_named(text: str, among: tuple[str, ...] | list[str] = ASPECTS) -> list[str]:
    return [a for a in among if any(_has(text, w) for w in ASPECT_WORDS[a])]


class RuleUser:
    """The deterministic user simulator and search judge (reference §3.3).

    Search judge: the request must name exactly one aspect of the trip (none named: ``N/A``;
    an aspect outside the trip, or several: ``False``), contain every ground-truth argument of
    that aspect (each leaf value of its argument object, :func:`argument_values`: cities and
    dates, whole words; ``May 3``, ``May 3rd`` and ``2025-05-03`` are the same date) and name
    no other known city (``False`` otherwise).

    Classifier: the topic of an utterance is the preference kind (of the aspects it names, or
    of all aspects when it names none) with the longest keyword found in it (whole words); a
    preference of the task outside the catalogue (upstream's scenario files) is a topic when
    its subcategory's words are found whole (:func:`free_subcategory`), before any keyword. A
    remaining preference of that kind -> type 2 (the first in ``P`` order); a topic but no such
    preference -> type 3; no topic but an aspect word or a general preference word -> type 4;
    otherwise type 1.

    Replies: ``elicit`` is the preference's stored implicit statement; ``proactive`` adds a
    lead-in to it; ``natural`` is a neutral line that states no preference.
    """

    name = "egi/rules"

    def judge_search(self, request: str, task: dict[str, Any]) -> SearchVerdict:
        """See the class docstring."""
        text = normalize_utterance(request)
        named = _aspects_named(text)
        trip = [a for a in named if a in task["dimensions"]]
        if not trip:
            return SearchVerdict("False") if named else SearchVerdict("N/A")
        if len(named) > 1:
            return SearchVerdict("False")
        aspect = trip[0]
        values = argument_values(task["arguments"][aspect])
        if not all(_has(text, v) for v in values):
            return SearchVerdict("False")
        allowed = set(values)
        if any(_has(text, c) for c in CITIES if c not in allowed):
            return SearchVerdict("False")
        return SearchVerdict("True", aspect)

    def classify(
        self,
        utterance: str,
        task: dict[str, Any],
        remaining: list[dict[str, Any]],
        history: list[dict[str, Any]],
    ) -> Classification:
        """See the class docstring."""
        text = normalize_utterance(utterance)
        named = _aspects_named(text)
        scope = named or list(ASPECTS)
        best_len, topics = 0, set()
        for pref in task.get("preferences") or []:  # kinds outside the catalogue (upstream's scenarios)
            phrase = free_subcategory(pref)
            if phrase and pref["aspect"] in scope and _has(text, phrase):
                topics.add((pref["aspect"], pref["subcategory"]))
        for aspect in [] if topics else scope:
            for kind in KINDS[aspect]:
                n = max((len(k) for k in kind.keywords if _has(text, k)), default=0)
                if n > best_len:
                    best_len, topics = n, {(aspect, kind.subcategory)}
                elif n and n == best_len:
                    topics.add((aspect, kind.subcategory))
        if topics:
            for pref in remaining:
                if (pref["aspect"], pref["subcategory"]) in topics:
                    return Classification(2, pref["id"])
            return Classification(3)
        if named or any(_has(text, w) for w in GENERIC_PREFERENCE_WORDS):
            return Classification(4)
        return Classification(1)

    def reply(
        self,
        mode: ReplyMode,
        utterance: str,
        task: dict[str, Any],
        preference: dict[str, Any] | None,
        history: list[dict[str, Any]],
    ) -> str:
        """See the class docstring."""
        if mode == "natural":
            return "Sure, that sounds fine. Let me know what else you need from me to plan this trip."
        assert preference is not None, f"reply mode {mode!r} needs a preference"
        statement = preference["implicit_statement"]
        if mode == "proactive":
            return f"By the way, something I should mention: {statement}"
        return statement


def concrete_question(preference: dict[str, Any]) -> str:
    """The catalogue's concrete question about ``preference``'s kind (names its aspect)."""
    return kind_of(preference["aspect"], preference["subcategory"]).question


# ---------------------------------------------------------------------------- the LLM user

SIMULATOR_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 2048}
"""Upstream's simulator settings (GPT-4o, temperature 0.0, ``max_tokens`` 2048, reference §2.6);
``--egi-simulator-params`` overrides them."""
SIMULATOR_REASONING_MAX_TOKENS = 8192
"""``max_tokens`` for a reasoning simulator model (hidden reasoning counts against it)."""

_JSON_ONLY = "Reply with only this JSON object, and no other text:"

SEARCH_JUDGE_SYSTEM = f"""You judge search requests in a travel-planning exercise. A travel agent \
sends a request to a search database; you decide whether it asks for exactly one aspect of the trip \
with every argument of that aspect, as listed in the ground truth, stated correctly.

{_JSON_ONLY}
{{"alignment_judgement": "True" or "False" or "N/A", "alignment_aspect": "<aspect>"}}

- "True": the request is for one aspect of the ground truth and states all of that aspect's \
arguments, each one correct. Give that aspect in "alignment_aspect", spelled as in the ground \
truth: flight, hotel, apartment, restaurant or rental_car.
- "False": the request is about the trip, but an argument is missing or wrong, the request is \
unclear, or it asks for more than one thing at once.
- "N/A": the request has nothing to do with any aspect in the ground truth.
Be strict: give "True" only when every argument of the aspect is clearly there and right."""
"""The search judge's system prompt (our wording of upstream's ``JUDGE_SEARCH_SYSTEM``; upstream's
format named only True/False although its code also read N/A)."""

SEARCH_JUDGE_USER = """Search request from the agent:
{request}

Ground-truth search arguments:
{arguments}"""

CLASSIFY_SYSTEM = f"""You play the traveller in a travel-planning conversation with an agent. First \
decide what kind of message the agent's latest one is, measured against the preferences you hold \
and have not told the agent yet.

{_JSON_ONLY}
{{"type": 1 or 2 or 3 or 4, "preference_id": "<id>"}}

- 1: ordinary conversation; not a question about your preferences.
- 2: a concrete, specific question about one of the preferences listed; give that preference's id \
in "preference_id" (if several fit, the one that best fits the conversation).
- 3: a concrete, specific question about a preference you do not hold (or have already told the agent).
- 4: a vague or general question about preferences rather than one specific detail (\
"Any preferences for the car?" is vague; "Which car model would you like?" is concrete).
"preference_id" is needed for type 2 only. A question counts as type 2 or 3 only when it is concrete."""
"""The utterance classifier's system prompt (our wording of upstream's ``JUDGE_PROMPT_SYSTEM``)."""

CLASSIFY_USER = """The trip:
{scenario}

The conversation so far:
{history}

The agent's latest message:
{utterance}

Preferences you still hold:
{preferences}"""

_REPLY_FORMAT = f"""{_JSON_ONLY}
{{"thought": "<how you will answer>", "response": "<what you say to the agent>"}}"""

ELICIT_SYSTEM = f"""You play the traveller in a travel-planning conversation with an agent. The \
agent has just asked about something you do care about. Answer naturally, as a real person would, \
and let the preference below come through indirectly: never state it outright ("my preference \
is ..."). The hint is one way to put it; adapt it to the conversation. Keep the answer short and \
consistent with what you said before.

{_REPLY_FORMAT}"""
"""The reply when a question matched a preference (our wording of upstream's
``RESPONSE_PREFERENCE_SYSTEM``)."""

PROACTIVE_SYSTEM = f"""You play the traveller in a travel-planning conversation with an agent. The \
conversation has gone on for several turns without touching what you care about. Answer the \
agent's latest message naturally and, on your own initiative, bring in the preference below, \
indirectly: never state it outright. The hint is one way to put it; adapt it so the change of \
topic feels natural. If the hint does not make clear which part of the trip it concerns (flight, \
hotel, apartment, restaurant or rental car), say which part, while keeping the preference itself \
indirect.

{_REPLY_FORMAT}"""
"""The passive reveal (our wording of upstream's ``RESPONSE_ELICIT_SYSTEM``)."""

PREFERENCE_USER = """The preference ({id}, {aspect}):
{preference}
Hint: {hint}

The conversation so far:
{history}

The agent's latest message:
{utterance}"""

NATURAL_SYSTEM = f"""You play the traveller in a travel-planning conversation with an agent. The \
agent's latest message does not concern any preference you hold. Reply briefly and neutrally, a \
little half-heartedly. Do not ask questions, and do not reveal or make up any preference: if you \
are asked about one, say you have no particular preference.

{_REPLY_FORMAT}"""
"""The neutral reply (our wording of upstream's ``RESPONSE_NATURAL_SYSTEM``)."""

NATURAL_USER = """The conversation so far:
{history}

The agent's latest message:
{utterance}"""

REASK = (
    "That reply could not be used: {reason}. Answer again with only the JSON object described in "
    "the instructions, and nothing else."
)
"""The one follow-up after an unusable reply (the reply and this message are added to the call)."""

_FENCE = re.compile(r"^```(?:json)?[ \t]*\n(.*)\n[ \t]*```$", re.DOTALL)


class VerdictError(ValueError):
    """A simulator reply that is not the JSON object asked for (the message says why)."""




def parse_json_object(text: str | None) -> dict[str, Any]:
    """The JSON object that is the whole of ``text`` (surrounding whitespace aside), or the whole
    of one code fence (```` ```json ... ``` ````) that is the whole of ``text``.

    Unlike upstream's parser, which took the first ``{...}`` found anywhere in the reply, prose
    around the object is refused: a verdict is what the model answered, not a guess at it.

    Raises:
        VerdictError: empty text, text that is not JSON, or JSON that is not an object.
    """
    s = (text or "").strip()
    if not s:
        raise VerdictError("the reply is empty")
    fence = _FENCE.match(s)
    if fence:
        s = fence.group(1).strip()
    try:
        obj = json.loads(s)
    except json.JSONDecodeError as exc:
        raise VerdictError(f"the reply is not a JSON object ({exc.msg} at character {exc.pos})") from None
    if not isinstance(obj, dict):
        raise VerdictError(f"the reply is JSON but not an object (a {type(obj).__name__})")
    return obj


def format_history(history: list[dict[str, Any]]) -> str:
    """The conversation as the simulator reads it: one paragraph per entry, ``Agent:`` /
    ``User:`` / ``Database:`` and the entry's content, with the simulator's own note on the
    agent's line (``[Note: ...]``) when there is one (upstream's ``build_history_into_prompt``
    with notes). ``(nothing yet)`` when empty."""
    if not history:
        return "(nothing yet)"
    parts = []
    for entry in history:
        role = str(entry.get("role") or "unknown")
        line = f"{role.capitalize()}: {entry.get('content', '')}"
        if role == "agent" and entry.get("note"):
            line += f"\n[Note: {entry['note']}]"
        parts.append(line)
    return "\n\n".join(parts)


_ASPECT_ALIASES = {"rental car": "rental_car", "car rental": "rental_car", "rental-car": "rental_car"}


class LLMUser:
    """A model as the user simulator and search judge (:class:`TravelUser`), upstream's design
    (reference §2.5-2.6): every call is one system prompt and one user prompt, answered with a
    JSON object.

    - ``judge_search``: :data:`SEARCH_JUDGE_SYSTEM`, then the request and every aspect's
      ground-truth arguments; the verdict ``{"alignment_judgement", "alignment_aspect"}``.
      ``"True"`` / ``"False"`` / ``"N/A"`` (JSON ``true`` / ``false`` also accepted); for
      ``"True"`` the aspect must be one of the trip's (``rental car`` means ``rental_car``).
    - ``classify``: :data:`CLASSIFY_SYSTEM`, then the scenario, the conversation with the
      simulator's notes, the utterance and the remaining preferences (id, aspect, text); the
      verdict ``{"type": 1-4, "preference_id"}`` (type as a number or a digit string; for type 2
      the id of a remaining preference).
    - ``reply``: :data:`ELICIT_SYSTEM` / :data:`PROACTIVE_SYSTEM` (the preference and its
      implicit statement as the hint) or :data:`NATURAL_SYSTEM`; the reply
      ``{"thought", "response"}``, ``response`` a non-empty string, which the agent hears.

    A reply that is not such an object (:func:`parse_json_object`, then the checks above) is
    asked again once, with the reply and :data:`REASK` added to the conversation; a second
    unusable reply raises :class:`SimulatorError` (kind ``bad_verdict``). Upstream instead fell
    back to a failed search, a type-1 turn or an apology, each scored.

    Its token usage is kept in :attr:`usage`, apart from the agent's.

    Args:
        client: the simulator's model client (the core's ``egi.simulator``).
        params: generation parameters (None: :data:`SIMULATOR_PARAMS` through
            :func:`~pytest_egi.models.params.scaffold_params`; the LiteLLM client then applies
            ``--egi-simulator-params`` over them).

    Attributes:
        name: the simulator model's name (recorded in ``info["userbench"]["simulator"]``).
        usage: the simulator's summed usage.
        calls: every exchange so far, ``{"purpose", "messages", "reply"}`` (for tests and the
            raw trajectory's reader).
    """

    def __init__(self, client: ModelClient, params: dict[str, Any] | None = None) -> None:
        self.client = client
        self.name = simulator_name(client)
        self.params = (
            dict(params)
            if params is not None
            else scaffold_params(SIMULATOR_PARAMS, client, SIMULATOR_REASONING_MAX_TOKENS)
        )
        self.usage = Usage()
        self.calls: list[dict[str, Any]] = []

    # -- the model call ------------------------------------------------------------------
    def _generate(self, messages: list[dict[str, Any]]) -> str:
        response = simulator_generate(self.client, self.name, messages, None, self.params, self.usage)
        return str((response.message or {}).get("content") or "")

    def _ask(self, purpose: str, system: str, user: str, check: Any) -> Any:
        """One exchange: ``check(parsed object)`` gives the result or raises VerdictError; one
        re-ask on an unusable reply, then SimulatorError."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        reason = ""
        for attempt in (1, 2):
            text = self._generate(messages)
            self.calls.append({"purpose": purpose, "messages": [dict(m) for m in messages], "reply": text})
            try:
                return check(parse_json_object(text))
            except VerdictError as exc:
                reason = str(exc)
            if attempt == 1:
                messages = messages + [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": REASK.format(reason=reason)},
                ]
        raise SimulatorError(
            f"the user simulator {self.name} gave no usable {purpose} verdict after one re-ask: {reason}",
            kind="bad_verdict",
        )

    # -- TravelUser ------------------------------------------------------------------------
    def judge_search(self, request: str, task: dict[str, Any]) -> SearchVerdict:
        """See the class docstring.

        Raises:
            SimulatorError: the model failed, or no usable verdict after one re-ask.
        """
        arguments = "\n\n".join(
            f"Aspect: {aspect}\n{json.dumps(args, indent=2)}" for aspect, args in task["arguments"].items()
        )
        dims = list(task["dimensions"])

        def check(obj: dict[str, Any]) -> SearchVerdict:
            raw = obj.get("alignment_judgement")
            if isinstance(raw, bool):
                raw = "True" if raw else "False"
            judgement = {"true": "True", "false": "False", "n/a": "N/A"}.get(str(raw).strip().lower())
            if raw is None or judgement is None:
                raise VerdictError(
                    f'"alignment_judgement" must be "True", "False" or "N/A", not {json.dumps(raw)}'
                )
            if judgement != "True":
                return SearchVerdict(judgement)  # type: ignore[arg-type]
            aspect = str(obj.get("alignment_aspect") or "").strip().lower()
            aspect = _ASPECT_ALIASES.get(aspect, aspect)
            if aspect not in dims:
                raise VerdictError(
                    f'a "True" verdict needs "alignment_aspect" among {dims}, not '
                    f"{json.dumps(obj.get('alignment_aspect'))}"
                )
            return SearchVerdict("True", aspect)

        user = SEARCH_JUDGE_USER.format(request=request, arguments=arguments)
        return self._ask("search", SEARCH_JUDGE_SYSTEM, user, check)

    def classify(
        self,
        utterance: str,
        task: dict[str, Any],
        remaining: list[dict[str, Any]],
        history: list[dict[str, Any]],
    ) -> Classification:
        """See the class docstring.

        Raises:
            SimulatorError: the model failed, or no usable verdict after one re-ask.
        """
        ids = [p["id"] for p in remaining]
        prefs = "\n".join(f"{p['id']} ({p['aspect']}): {p['preference']}" for p in remaining) or "(none)"

        def check(obj: dict[str, Any]) -> Classification:
            raw = obj.get("type")
            kind = raw if isinstance(raw, int) and not isinstance(raw, bool) else None
            if isinstance(raw, str) and raw.strip() in ("1", "2", "3", "4"):
                kind = int(raw.strip())
            if kind not in (1, 2, 3, 4):
                raise VerdictError(f'"type" must be 1, 2, 3 or 4, not {json.dumps(raw)}')
            if kind != 2:
                return Classification(kind)  # type: ignore[arg-type]
            pid = str(obj.get("preference_id") or "").strip()
            if pid not in ids:
                raise VerdictError(
                    f'a type-2 verdict needs "preference_id" among the remaining preferences {ids}, '
                    f"not {json.dumps(obj.get('preference_id'))}"
                )
            return Classification(2, pid)

        user = CLASSIFY_USER.format(scenario=task["scenario"], history=format_history(history),
                                    utterance=utterance, preferences=prefs)  # fmt: skip
        return self._ask("classification", CLASSIFY_SYSTEM, user, check)

    def reply(
        self,
        mode: ReplyMode,
        utterance: str,
        task: dict[str, Any],
        preference: dict[str, Any] | None,
        history: list[dict[str, Any]],
    ) -> str:
        """See the class docstring.

        Raises:
            SimulatorError: the model failed, or no usable reply after one re-ask.
        """

        def check(obj: dict[str, Any]) -> str:
            response = obj.get("response")
            if not isinstance(response, str) or not response.strip():
                raise VerdictError(f'"response" must be a non-empty string, not {json.dumps(response)}')
            return response.strip()

        history_text = format_history(history)
        if mode == "natural":
            user = NATURAL_USER.format(history=history_text, utterance=utterance)
            return self._ask("reply", NATURAL_SYSTEM, user, check)
        assert preference is not None, f"reply mode {mode!r} needs a preference"
        user = PREFERENCE_USER.format(
            id=preference["id"], aspect=preference["aspect"], preference=preference["preference"],
            hint=preference["implicit_statement"], history=history_text, utterance=utterance,
        )  # fmt: skip
        return self._ask("reply", ELICIT_SYSTEM if mode == "elicit" else PROACTIVE_SYSTEM, user, check)
