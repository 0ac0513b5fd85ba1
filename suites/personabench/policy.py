"""The PersonaBench reference reader behind ``egi/oracle`` and ``egi/noisy-<p>`` (DESIGN §6).

It gets the one prompt the model under test gets (the retrieved chunks and the question) and
answers from those chunks only: it knows what the question asks about (the task's ``probe``:
an attribute, and the contact for a Social question; never the answer) and how people write
such facts (:mod:`suites.personabench.data.templates`), finds the statements in the retrieved text
and answers with the entity names, comma-separated. A preference that a later statement
replaced ("..., even though I used to prefer X until recently") is dropped. Where the chunks
state nothing it says so, which scores 0.

On a loaded release (``personabench.data_dir``) the questions carry no probe and the documents
were written by a language model, so the reader finds nothing and answers that it does not
know: it runs the data end to end but is not a ceiling there.

Seeded mistakes at rate p (drawn up front per question, so a higher rate only adds mistakes):
``wrong_answer`` (one item, or the single value, replaced by a made-up one) and
``extra_turn`` (the answer wrapped in a sentence of extra words, which costs precision).
"""

from __future__ import annotations

import re
from typing import Any

from pytest_egi.models.base import assistant_message
from pytest_egi.models.offline import Noise
from suites.personabench.data import templates as T

__all__ = ["NOT_FOUND", "PersonaPolicy", "read_answer", "split_chunks"]

NOT_FOUND = "Not stated in the documents."
INVENTED = "Zorblax Quendry"
"""What a ``wrong_answer`` mistake puts in place of an item: no gold answer has these words."""
PADDING = "Based on the provided records, my best guess would be: {}"
_TARGET = re.compile(r'"target_name":"(?P<v>[^"]+)"')
_CHUNK_START = re.compile(r'\{"time":')


def split_chunks(context: str) -> list[str]:
    """The chunk texts of a rendered context (each starts with ``{"time":``), with the
    string-repr escapes of the NumPy rendering undone."""
    text = context.replace("\\'", "'")
    starts = [m.start() for m in _CHUNK_START.finditer(text)]
    return [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)], strict=True)]


def _found(template: str, chunks: list[str], about: str | None = None) -> list[str]:
    rx = T.pattern(template)
    out: list[str] = []
    for chunk in chunks:
        if about is not None:
            target = _TARGET.search(chunk)
            if target is None or target.group("v") != about:
                continue
        for m in rx.finditer(chunk):
            if m.group("v") not in out:
                out.append(m.group("v"))
    return out


def _preferences(cat: str, chunks: list[str]) -> list[str]:
    liked = _found(T.PREFERENCE[cat], chunks)  # also the new item of each change sentence
    old = {m.group("old") for c in chunks for m in T.pattern(T.PREFERENCE[cat] + T.CHANGE).finditer(c)}
    bought = []
    for chunk in chunks:  # a starter kit in a basket, filed under the category's name
        for m in T.pattern(T.PURCHASE_TITLE).finditer(chunk):
            if f'"{cat.title()}"]' in chunk[m.end() :].split("}", 1)[0]:
                bought.append(m.group("v"))
    return [v for v in dict.fromkeys([*liked, *bought]) if v not in old]


def read_answer(probe: dict[str, Any] | None, chunks: list[str]) -> list[str]:
    """The answer items the chunks state for ``probe`` (empty when none)."""
    if not probe:
        return []
    attr, about = probe.get("attr"), probe.get("about")
    if about is not None:  # a Social question about a contact
        if attr == "relationship":
            return _found(T.RELATION, chunks, about=about)[:1]
        if attr in T.OTHER:
            found = _found(T.OTHER[attr], chunks, about=about)
            return found if attr == "food" else found[:1]
        return []
    if attr == "appearance":
        eyes = _found(T.BASIC["eye_color"], chunks)
        hair = _found(T.BASIC["hair_color"], chunks)
        return [f"Eye color: {v}" for v in eyes[:1]] + [f"Hair color: {v}" for v in hair[:1]]
    if attr == "pets":
        return _found(T.BASIC["pet"], chunks)
    if attr == "vehicles":
        return _found(T.BASIC["vehicle"], chunks)
    if attr == "school_type":
        schools = _found(T.BASIC["school"], chunks)
        kinds = ("University", "College", "Polytechnic", "Institute", "Academy")
        return [next((w for w in s.split() if w in kinds), s) for s in schools[:1]]
    if attr in T.BASIC:
        return _found(T.BASIC[attr], chunks)[:1]
    if attr in T.PREFERENCE:
        return _preferences(attr, chunks)
    if attr == "who_is":
        rx = T.pattern(T.RELATION)
        for chunk in chunks:
            target = _TARGET.search(chunk)
            if target and any(m.group("v") == probe.get("rel") for m in rx.finditer(chunk)):
                return [target.group("v")]
        return []
    return []


class PersonaPolicy:
    """One trial of the reference reader (see the module docstring).

    Args:
        data: the task's ``Task.data``; only ``probe`` is read.
        noise: the trial's mistake source (p = 0: the oracle).
    """

    def __init__(self, data: dict[str, Any], noise: Noise) -> None:
        self.probe = data.get("probe")
        self.noise = noise
        self.wrong_answer = noise.uniform("wrong_answer") < noise.p
        self.padded = noise.uniform("extra_turn") < noise.p
        self.pick = noise.uniform("wrong_answer_pick")

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The answer to the last user message's question, from its retrieved chunks."""
        prompt = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "user"), "")
        items = read_answer(self.probe, split_chunks(str(prompt)))
        if not items:
            return assistant_message(NOT_FOUND)
        if self.wrong_answer:
            self.noise.made.append("wrong_answer")
            items[int(self.pick * len(items))] = INVENTED
        text = ", ".join(items)
        if self.padded:
            self.noise.made.append("extra_turn")
            text = PADDING.format(text)
        return assistant_message(text)
