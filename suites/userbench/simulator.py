"""The simulated traveller and the search judge behind the TravelGym environment.

:class:`TravelUser` is the interface the environment calls (reference §2.5): judge a search
request against the task's ground-truth arguments, classify an utterance against the remaining
preferences (upstream's types 1-4), and voice a reply. Upstream uses one LLM for all three
(GPT-4o, temperature 0); the default here is :class:`RuleUser` (deterministic rules, reference
§3.3), and an LLM simulator (``--egi-simulator-model``) implements the same interface.

An implementation never sees search results or the agent's recommendations (upstream's user
does not), and must raise on an infrastructure failure (an LLM call that fails): the
environment does not turn that into a scored observation (DESIGN §8), unlike upstream, which
fell back to "N/A" / type 1.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple, Protocol

from pytest_egi.normalize import fold_text
from suites.userbench.catalogue import ASPECT_WORDS, ASPECTS, CITIES, KINDS, kind_of

__all__ = [
    "GENERIC_PREFERENCE_WORDS",
    "Classification",
    "RuleUser",
    "SearchVerdict",
    "TravelUser",
    "normalize_utterance",
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


def _has(text: str, phrase: str) -> bool:
    return f" {normalize_utterance(phrase).strip()} " in text


def _aspects_named(text: str, among: tuple[str, ...] | list[str] = ASPECTS) -> list[str]:
    return [a for a in among if any(_has(text, w) for w in ASPECT_WORDS[a])]


class RuleUser:
    """The deterministic user simulator and search judge (reference §3.3).

    Search judge: the request must name exactly one aspect of the trip (none named: ``N/A``;
    an aspect outside the trip, or several: ``False``), contain every ground-truth argument of
    that aspect (cities and dates, whole words; ``May 3``, ``May 3rd`` and ``2025-05-03`` are
    the same date) and name no other known city (``False`` otherwise).

    Classifier: the topic of an utterance is the preference kind (of the aspects it names, or
    of all aspects when it names none) with the longest keyword found in it (whole words). A
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
        args = task["arguments"][aspect]
        if not all(_has(text, str(v)) for v in args.values()):
            return SearchVerdict("False")
        allowed = {str(v) for v in args.values()}
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
        for aspect in scope:
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
