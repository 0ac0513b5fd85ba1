"""Seeded generator of PersonaBench communities in the release layout (reference §1.2–1.4).

A community is ten people in a social graph (typed relationships, stored both ways), each with
a hidden profile: basic facts, preference lists, facts that changed over time (the former item
stated in an earlier session), and what they tell their contacts about themselves. From it the
generator writes, per noise level, every person's private documents in upstream's three
session kinds (``conversation_data``, ``user_ai_interaction_data``,
``purchase_history_data``; same keys, 12-digit ``segment_id`` = community(3) + person(3) +
segment(6), renumbered per level, times like ``2024/Oct/14/09:14 AM``), the questions
(``eval_info_all.json``; ``q_id`` = community(3) + person(3) + question(3)) and, per level, the
gold map from each answer item to the alternative segments that state it
(``qa_gt_context_all_noise_{x}.json``).

Noise level r: the share of sessions that state no answer is r (within 0.02). As upstream,
each level is generated afresh (its own session grouping, wording, times and ids); the
distractor sessions are of the same three kinds, with the same contacts, in the same style.

Everything is drawn from ``random.Random`` seeded with (seed, community[, person, level]); the
values come from :mod:`suites.personabench.data.vocab` and the sentences from
:mod:`suites.personabench.data.templates`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from suites.personabench.data import templates as T
from suites.personabench.data import vocab as V

__all__ = [
    "NOISE_LEVELS",
    "PEOPLE",
    "Statement",
    "community_questions",
    "generate_community",
    "segment_id",
    "q_id",
]

NOISE_LEVELS = (0.0, 0.3, 0.5, 0.7)
PEOPLE = 10
"""People per community (upstream: 10)."""
EXTRA_EDGES = 2
"""Relationships beyond a spanning tree: 9 + 2 = 11 (upstream: 11, i.e. 22 directed edges)."""
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def q_id(community: int, person: int, question: int) -> str:
    """Upstream's 9-digit question id."""
    return f"{community:03d}{person:03d}{question:03d}"


def segment_id(community: int, person: int, segment: int) -> str:
    """Upstream's 12-digit segment id."""
    return f"{community:03d}{person:03d}{segment:06d}"


@dataclass
class Statement:
    """One sentence of a session.

    Attributes:
        text: the sentence.
        speaker: ``"self"`` (the person) or ``"other"`` (the contact).
        keys: (question index, answer item key) pairs it supports; empty for an outdated
            statement (it states a former item).
        contact: the contact's name when it must be said in a conversation with them.
        purchase: a purchase-basket item instead of a sentence.
        early: an outdated statement (its session is dated before every change statement).
        change: states a change (its session is dated after every outdated statement).
    """

    text: str
    speaker: str = "self"
    keys: list[tuple[int, str]] = field(default_factory=list)
    contact: str | None = None
    purchase: dict[str, Any] | None = None
    early: bool = False
    change: bool = False


def _names(rng: random.Random, n: int, used: set[str]) -> list[str]:
    out = []
    while len(out) < n:
        name = f"{rng.choice(V.FIRST)} {rng.choice(V.LAST)}"
        if name not in used:
            used.add(name)
            out.append(name)
    return out


def _graph(
    rng: random.Random, names: list[str], genders: list[str]
) -> tuple[dict, dict[int, dict[int, str]]]:
    """Upstream's ``social_graph.json`` and neighbour -> label tables (label = what the target
    is to the source)."""
    n = len(names)
    pairs: list[tuple[int, int]] = []
    for i in range(1, n):  # a random spanning tree, then extra edges
        pairs.append((rng.randrange(i), i))
    while len(pairs) < n - 1 + EXTRA_EDGES:
        a, b = sorted(rng.sample(range(n), 2))
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((a, b))
    labels: dict[int, dict[int, str]] = {i: {} for i in range(n)}
    edges = []
    for k, (a, b) in enumerate(pairs):
        kind = "family" if k % 5 == 0 else rng.choice(V.RELATIONS_OTHER)
        if kind == "family":
            family = rng.choice(("sibling", "cousin"))
            if family == "cousin":
                ab = ba = "cousin"
            else:
                ab = "sister" if genders[b] == "female" else "brother"
                ba = "sister" if genders[a] == "female" else "brother"
        else:
            ab = ba = kind
        labels[a][b], labels[b][a] = ab, ba
        desc = f"{names[a]} and {names[b]} know each other as {ab if ab == ba else 'siblings'}."
        edges.append(
            {"source": a + 1, "target": b + 1, "properties": {"relationship": ab, "description": desc}}
        )
        edges.append(
            {"source": b + 1, "target": a + 1, "properties": {"relationship": ba, "description": desc}}
        )
    nodes = [
        {"node": i + 1, "properties": {"name": names[i], "persona": rng.choice(V.PERSONA)}} for i in range(n)
    ]
    return {"nodes": nodes, "edges": edges}, labels


def _profile(rng: random.Random) -> dict[str, Any]:
    """A person's hidden profile (only ever written into documents and gold)."""
    school = rng.choice(V.UNIVERSITIES)
    country = rng.choice(V.COUNTRIES)
    birth_country = rng.choice(V.COUNTRIES)
    pet_kind, pet_names = rng.choice(V.PETS)
    prefs: dict[str, list[str]] = {}
    for cat in V.HARD_PREFERENCES:
        n = 1 if cat in V.SINGLE_PREFERENCES else 5
        prefs[cat] = rng.sample(V.PREFERENCES[cat][1], n)
    for cat in V.EASY_PREFERENCES:
        prefs[cat] = rng.sample(V.PREFERENCES[cat][1], rng.randint(2, 4))
    outdated: dict[str, str] = {}
    for cat in rng.sample([c for c in V.HARD_PREFERENCES if c not in V.SINGLE_PREFERENCES], 3):
        now = {w for item in prefs[cat] for w in item.lower().split()}  # no word shared with a current item
        outdated[cat] = rng.choice([v for v in V.PREFERENCES[cat][1] if not set(v.lower().split()) & now])
    jobs = rng.sample(V.JOBS, 2)
    return {
        "school": school,
        "school_type": next(w for w in V.SCHOOL_TYPE if w in school.split()),
        "age": rng.randint(24, 68),
        "nationality": [V.NATIONALITY[birth_country]],
        "employer": rng.choice(V.EMPLOYERS),
        "employment_status": rng.choice(("Employed", "Self-Employed")),
        "appearance": [{"Eye color": rng.choice(V.EYES)}, {"Hair color": rng.choice(V.HAIR)}],
        "country": country,
        "major": rng.choice(V.MAJORS),
        "city": rng.choice(V.CITIES),
        "vehicles": rng.sample(V.VEHICLES, rng.randint(1, 2)),
        "occupation": jobs[0],
        "birth_city": rng.choice(V.CITIES),
        "birth_country": birth_country,
        "degree": rng.choice(V.DEGREES),
        "previous_job": jobs[1],
        "pets": [{pet_kind: name} for name in rng.sample(pet_names, rng.randint(1, 2))],
        "prefs": prefs,
        "outdated": outdated,
        "foods": rng.sample(V.OTHER_FOODS, rng.randint(3, 5)),
        "traits": [pair[rng.randrange(2)] for pair in V.PERSONALITY],
    }


BASIC_QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("school", ("Where did I go to school?", "Which school did I attend?")),
    ("age", ("How old am I right now?", "What is my current age?")),
    ("nationality", ("What is my nationality?", "What is my country of origin?")),
    ("employer", ("Where am I currently employed?", "Who is my current employer?")),
    ("employment_status", ("Am I currently employed or not? E.g., Employed, Self Employed, Unemployed ...",)),
    ("appearance", ("What do I look like?", "How would you describe my appearance?")),
    ("country", ("Which country do I currently live in?", "What country is my home now?")),
    ("major", ("What did I study during my degree?", "What was my major?")),
    ("city", ("Which city do I currently live in?", "What city am I living in now?")),
    ("vehicles", ("Which types of cars or vehicles do I have?", "What vehicles do I own?")),
    ("occupation", ("What do I do for a living?", "What is my job?")),
    ("birth_city", ("Which city was I born in?", "What is my city of birth?")),
    ("birth_country", ("Where was I born (country)?", "In which country was I born?")),
    ("degree", ("What is the highest degree I have earned?", "What degree do I hold?")),
    ("previous_job", ("What did I do for work previously?", "What was my previous job?")),
    ("pets", ("Which animals do I keep as pets?", "What pets do I have?")),
    ("school_type", ("How would you classify the school I studied in?",)),
)
"""Basic-information attributes in question order, with paraphrases of each question."""


def _basic_statements(attr: str, value: Any) -> list[tuple[str, str]]:
    """(answer item key, sentence) pairs that state a basic attribute."""
    if attr == "appearance":
        eye, hair = value[0]["Eye color"], value[1]["Hair color"]
        return [
            (str(tuple(value[0].items())), T.fill(T.BASIC["eye_color"], eye)),
            (str(tuple(value[1].items())), T.fill(T.BASIC["hair_color"], hair)),
        ]
    if attr == "pets":
        return [
            (str(tuple(p.items())), T.fill(T.BASIC["pet"], f"{k} {v}")) for p in value for k, v in p.items()
        ]
    if attr == "vehicles":
        return [(v, T.fill(T.BASIC["vehicle"], v)) for v in value]
    if attr == "nationality":
        return [(v, T.fill(T.BASIC["nationality"], v)) for v in value]
    return [(str(value), T.fill(T.BASIC[attr], str(value)))]


class _Person:
    """Questions and statements of one person with documents."""

    def __init__(
        self,
        c: int,
        p: int,
        name: str,
        profile: dict[str, Any],
        contacts: dict[str, str],
        profiles: dict[str, dict[str, Any]],
        rng: random.Random,
    ) -> None:
        self.c, self.p, self.name = c, p, name
        self.qa: list[dict[str, Any]] = []
        self.probes: list[dict[str, Any]] = []
        self.statements: list[Statement] = []
        self._rng = rng
        prof = profile
        for attr, phrasings in BASIC_QUESTIONS:
            answer = prof[attr]
            qi = self._ask(rng.choice(phrasings), answer, "Basic information", "easy", None, {"attr": attr})
            if attr == "school_type":  # the school's name says its kind: the school sentence
                self._alias(qi, prof["school_type"], "school")
                continue
            for key, text in _basic_statements(attr, answer):
                self._state(text, qi, key)
        for cat in (*V.HARD_PREFERENCES, *V.EASY_PREFERENCES):
            items = prof["prefs"][cat]
            old = prof["outdated"].get(cat)
            difficulty = "easy" if cat in V.EASY_PREFERENCES else "hard"
            answer: Any = items[0] if cat in V.SINGLE_PREFERENCES else list(items)
            qi = self._ask(
                rng.choice(V.PREFERENCES[cat][0]),
                answer,
                "Preference",
                difficulty,
                [old] if old else None,
                {"attr": cat},
            )
            changed = rng.choice(items) if old else None
            for item in items:
                text = T.fill(T.PREFERENCE[cat], item)
                if item == changed:
                    self.statements.append(Statement(T.fill(T.PREFERENCE[cat], old), early=True))
                    self._state(text + T.CHANGE.replace("{old}", old), qi, item, change=True)
                elif cat in V.PURCHASABLE and rng.random() < 0.3:
                    product = {
                        "title": T.fill(T.PURCHASE_TITLE, item),
                        "description": f"Everything a newcomer needs to get started with {item}.",
                        "brand": rng.choice(("Northwind", "Keel and Co", "Fieldcraft")),
                        "categories": ["Sports and Outdoors" if cat == "sport" else "Hobbies", cat.title()],
                    }  # noqa: E501
                    st = Statement("", keys=[(qi, item)], purchase=product)
                    self.statements.append(st)
                else:
                    self._state(text, qi, item)
        self.traits = prof["traits"]
        for other, label in contacts.items():
            qi = self._ask(
                rng.choice((f"What is {other}'s relationship to me?", f"Who is {other} in relation to me?")),
                label,
                "Social",
                "easy",
                None,
                {"attr": "relationship", "about": other},
            )
            self._state(T.fill(T.RELATION, label), qi, other, contact=other)
            if label in V.RELATIONS_FAMILY + ("sister", "brother"):
                qj = self._ask(
                    f"Who in my family is my {label}?",
                    other,
                    "Social",
                    "easy",
                    None,
                    {"attr": "who_is", "rel": label},
                )
                self._alias(qj, other, "relationship", about=other)
        for other in list(contacts)[:2]:
            oprof = profiles[other]
            qi = self._ask(
                rng.choice((f"What does {other} do for work?", f"What is {other}'s job?")),
                oprof["occupation"],
                "Social",
                "hard",
                None,
                {"attr": "occupation", "about": other},
            )  # noqa: E501
            self._state(
                T.fill(T.OTHER["occupation"], oprof["occupation"]),
                qi,
                oprof["occupation"],
                speaker="other",
                contact=other,
            )
            qi = self._ask(
                rng.choice((f"What foods does {other} enjoy?", f"Which dishes does {other} love?")),
                list(oprof["foods"]),
                "Social",
                "hard",
                None,
                {"attr": "food", "about": other},
            )
            for food in oprof["foods"]:
                self._state(T.fill(T.OTHER["food"], food), qi, food, speaker="other", contact=other)
        self._subjective(rng)

    def _ask(
        self, question: str, answer: Any, qtype: str, difficulty: str, outdated: Any, probe: dict[str, Any]
    ) -> int:
        qi = len(self.qa)
        self.qa.append(
            {
                "q_id": q_id(self.c, self.p, qi),
                "question": question,
                "answer": answer,
                "type": qtype,
                "difficulty": difficulty,
                "outdated_value": outdated,
            }
        )
        self.probes.append(probe)
        return qi

    def _state(
        self,
        text: str,
        qi: int,
        key: str,
        speaker: str = "self",
        contact: str | None = None,
        change: bool = False,
    ) -> None:
        self.statements.append(Statement(text, speaker, [(qi, key)], contact, change=change))
        if self._rng.random() < 0.1:  # a second, alternative statement of the same item
            self.statements.append(Statement(text, speaker, [(qi, key)], contact, change=change))

    def _alias(self, qi: int, key: str, attr: str, about: str | None = None) -> None:
        """Question ``qi`` is answered by the statements of another attribute's question."""
        for st in self.statements:
            for q, _ in list(st.keys):
                probe = self.probes[q]
                if probe["attr"] == attr and probe.get("about") == about:
                    st.keys.append((qi, key))
                    break

    def _subjective(self, rng: random.Random) -> None:
        """Personality questions: generated, never scored (as upstream)."""
        letters = "ABCDEFGHIJ"
        for pair, trait in zip(V.PERSONALITY, self.traits, strict=True):
            a, b = (pair[0], pair[1]) if rng.random() < 0.5 else (pair[1], pair[0])
            question = (
                f"which term can better describe my personality? please choose between A: {a} or B: {b}. "
                "Answer with the option's letter from the given choices directly."
            )
            self._ask(question, "A" if a == trait else "B", "Subjective", "easy", None, {"attr": "trait"})
        options = [t for pair in V.PERSONALITY for t in pair]
        rng.shuffle(options)
        listed = ", ".join(f"{letters[i]}: {t}" for i, t in enumerate(options))
        answer = sorted(letters[i] for i, t in enumerate(options) if t in self.traits)
        question = (
            f"which term can better describe my personality? Please choose 5 options from {listed}. "
            "Answer with the option's letters from the given choices directly."
        )
        self._ask(question, answer, "Subjective", "hard", None, {"attr": "traits"})


def _time(rng: random.Random, slot: float) -> str:
    """A timestamp in upstream's format, ``slot`` in [0, 1) across one year."""
    day = int(slot * 360)
    month, mday = day // 30, day % 28 + 1
    hour, minute = rng.randint(7, 21), rng.randint(0, 59)
    h12 = hour % 12 or 12
    return f"2024/{MONTHS[month]}/{mday:02d}/{h12:02d}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def _filler(rng: random.Random, lines: tuple[str, ...]) -> str:
    return rng.choice(lines).format(topic=rng.choice(V.FILLER_TOPICS))


def _conversation(rng: random.Random, me: str, other: str, said: list[Statement]) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    n = max(6, 2 * len(said) + 2)
    mine = [s.text for s in said if s.speaker == "self"]
    theirs = [s.text for s in said if s.speaker == "other"]
    for i in range(n):
        speaker = me if i % 2 == 0 else other
        pool = mine if speaker == me else theirs
        line = _filler(rng, V.FILLER_LINES)
        if pool and (rng.random() < 0.6 or i >= n - 2 * len(pool)):
            line = f"{pool.pop(0)}. {line}" if rng.random() < 0.5 else f"{line} {pool.pop(0)}."
        turns.append({"role": speaker, "content": line})
    for rest in mine:  # anything left goes into a closing line
        turns.append({"role": me, "content": f"Oh and before I forget: {rest}."})
    for rest in theirs:
        turns.append({"role": other, "content": f"Also, {rest}."})
    return turns


def _chat(rng: random.Random, said: list[Statement]) -> list[dict[str, str]]:
    turns: list[dict[str, str]] = []
    for st in said or [None]:
        opener = _filler(rng, V.AI_FILLER[:1] + V.AI_FILLER[2:3])
        turns.append({"role": "user", "content": f"{st.text}. {opener}" if st else opener})
        turns.append({"role": "assistant", "content": _filler(rng, V.AI_FILLER[1:2] + V.AI_FILLER[3:])})
    return turns


def _basket(rng: random.Random, said: list[Statement]) -> list[dict[str, Any]]:
    items = [dict(s.purchase) for s in said if s.purchase]
    for product in rng.sample(V.PRODUCTS, rng.randint(1, 3)):
        title, desc, brand, cats = product
        items.append({"title": title, "description": desc, "brand": brand, "categories": list(cats)})
    rng.shuffle(items)
    return items


def _documents(
    c: int, p: int, person: _Person, contacts: list[str], level: float, rng: random.Random
) -> tuple[dict[str, Any], dict[int, dict[str, list[str]]]]:
    """One person's three document files at ``level`` and the gold map (question -> item ->
    segment ids)."""
    stmts = list(person.statements)
    rng.shuffle(stmts)
    sessions: list[dict[str, Any]] = []  # {kind, contact, said}
    buyable = [s for s in stmts if s.purchase]
    for i in range(0, len(buyable), 2):
        sessions.append({"kind": "purchase", "contact": None, "said": buyable[i : i + 2]})
    pending = [s for s in stmts if not s.purchase]
    while pending:
        first = pending.pop(0)
        size = rng.randint(2, 3)
        if first.contact is not None:
            kind, contact = "conversation", first.contact
        elif rng.random() < 0.3:
            kind, contact = "user_ai", None
        else:
            kind, contact = "conversation", rng.choice(contacts)
        group = [first]
        for st in list(pending):
            if len(group) >= size:
                break
            fits = st.contact in (None, contact) if kind == "conversation" else st.contact is None
            clash = (st.early and any(g.change for g in group)) or (st.change and any(g.early for g in group))
            same = any(g.text == st.text for g in group)
            if fits and not clash and not same:
                group.append(st)
                pending.remove(st)
        sessions.append({"kind": kind, "contact": contact, "said": group})
    signal = len(sessions)
    if not all(any(s.keys for s in sess["said"]) for sess in sessions):  # an outdated sentence alone
        for sess in sessions:
            if not any(s.keys for s in sess["said"]):
                donor = next(
                    x
                    for x in sessions
                    if len([s for s in x["said"] if s.keys]) > 1
                    and x["kind"] == sess["kind"]
                    and x["contact"] == sess["contact"]
                    and not any(s.change for s in x["said"])
                )
                moved = next(s for s in donor["said"] if s.keys)
                donor["said"].remove(moved)
                sess["said"].append(moved)
    noise = round(level * signal / (1 - level)) if level < 1 else 0
    for _ in range(noise):
        roll = rng.random()
        kind = "purchase" if roll < 0.08 else "user_ai" if roll < 0.3 else "conversation"
        sessions.append(
            {"kind": kind, "contact": rng.choice(contacts) if kind == "conversation" else None, "said": []}
        )
    rng.shuffle(sessions)

    def when(sess: dict[str, Any]) -> int:
        if any(s.early for s in sess["said"]):
            return 0
        return 2 if any(s.change for s in sess["said"]) else 1

    slots = sorted(rng.random() for _ in sessions)
    order = sorted(range(len(sessions)), key=lambda i: (when(sessions[i]), i))
    gold: dict[int, dict[str, list[str]]] = {}
    conv: dict[str, list[dict[str, Any]]] = {}
    chats: list[dict[str, Any]] = []
    baskets: list[dict[str, Any]] = []
    counters = {"conversation": 0, "user_ai_interaction": 0, "purchase_history": 0}
    for seg, i in enumerate(order):
        sess = sessions[i]
        sid = segment_id(c, p, seg)
        time = _time(rng, slots[seg])
        for st in sess["said"]:
            for qi, key in st.keys:
                ids = gold.setdefault(qi, {}).setdefault(key, [])
                if sid not in ids:
                    ids.append(sid)
        if sess["kind"] == "conversation":
            counters["conversation"] += 1
            other = sess["contact"]
            conv.setdefault(other, []).append(
                {
                    "session": f"conversation---session---{counters['conversation']}",
                    "time": time,
                    "target_name": other,
                    "conversation": _conversation(rng, person.name, other, sess["said"]),
                    "segment_id": sid,
                }
            )
        elif sess["kind"] == "user_ai":
            counters["user_ai_interaction"] += 1
            chats.append(
                {
                    "session": f"user_ai_interaction---session---{counters['user_ai_interaction']}",
                    "time": time,
                    "user_ai_interaction": _chat(rng, sess["said"]),
                    "segment_id": sid,
                }
            )
        else:
            counters["purchase_history"] += 1
            baskets.append(
                {
                    "session": f"purchase_history---session---{counters['purchase_history']}",
                    "time": time,
                    "purchase_history": _basket(rng, sess["said"]),
                    "segment_id": sid,
                }
            )
    docs = {
        "conversation_data": {
            "Name": person.name,
            "Data": [
                {"Target_name": other, "Conversations": conv[other]} for other in contacts if other in conv
            ],
        },
        "user_ai_interaction_data": {"Name": person.name, "Data": chats},
        "purchase_history_data": {"Name": person.name, "Data": baskets},
    }
    for qi in gold:  # alternatives in segment order, at most two (upstream: 1-2)
        for key in gold[qi]:
            gold[qi][key] = sorted(gold[qi][key])[:2]
    return docs, gold


def _people(seed: int, c: int) -> tuple[Any, Any, list[str], list[_Person]]:
    """Community ``c``'s social graph, its labels, names and people with their questions: the
    first stage of :func:`generate_community`, whose own generators the documents never touch."""
    rng = random.Random(f"personabench|{seed}|community|{c}")
    names = _names(rng, PEOPLE, set())
    genders = [rng.choice(("female", "male")) for _ in names]
    graph, labels = _graph(rng, names, genders)
    profiles = {
        name: _profile(random.Random(f"personabench|{seed}|{c}|profile|{i}")) for i, name in enumerate(names)
    }
    persons: list[_Person] = []
    for i, name in enumerate(names):
        contacts = {names[j]: labels[i][j] for j in sorted(labels[i])}
        prng = random.Random(f"personabench|{seed}|{c}|questions|{i}")
        persons.append(_Person(c, i, name, profiles[name], contacts, profiles, prng))
    return graph, labels, names, persons


def community_questions(seed: int, c: int) -> list[list[dict[str, Any]]]:
    """Each person's questions (``eval_info_all`` order; ``q_id``, ``type``, ``difficulty``
    among the keys) of generated community ``c``, exactly as :func:`generate_community` gives
    them, without writing a document (a few CPU milliseconds)."""
    return [pp.qa for pp in _people(seed, c)[3]]


def generate_community(
    seed: int, c: int, people: int = PEOPLE, levels: tuple[float, ...] = NOISE_LEVELS
) -> dict[str, Any]:
    """One community in the release layout, as objects.

    Returns:
        ``{"social_graph": {...}, "eval_info_all": [...], "noise": {level: {"private": {name:
        {"conversation_data", "user_ai_interaction_data", "purchase_history_data"}},
        "qa_gt_context_all": [...]}}, "probes": {q_id: probe}}``. ``probes`` says what each
        question asks about (attribute, contact), for the reference policy; it holds no answer.
        Every person has documents (upstream: the first three), so ``people`` of them can be
        evaluated.
    """
    graph, labels, names, persons = _people(seed, c)
    out: dict[str, Any] = {
        "social_graph": graph,
        "eval_info_all": [{"Name": pp.name, "Eval_Info": {"qa": pp.qa}} for pp in persons],
        "noise": {},
        "probes": {qa["q_id"]: probe for pp in persons for qa, probe in zip(pp.qa, pp.probes, strict=True)},
    }
    for level in levels:
        private: dict[str, Any] = {}
        gt: list[dict[str, Any]] = []
        for i, pp in enumerate(persons[:people]):
            drng = random.Random(f"personabench|{seed}|{c}|docs|{i}|{level}")
            contacts = [names[j] for j in sorted(labels[i])]
            docs, gold = _documents(c, i, pp, contacts, level, drng)
            private[pp.name] = docs
            for qi, qa in enumerate(pp.qa):
                if qa["type"] == "Subjective":
                    continue
                gt.append(
                    {
                        "q_id": qa["q_id"],
                        "question": qa["question"],
                        "answer": qa["answer"],
                        "segment_id": {k: gold[qi][k] for k in sorted(gold[qi])},
                    }
                )
        out["noise"][level] = {"private": private, "qa_gt_context_all": gt}
    return out
