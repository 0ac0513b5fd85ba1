"""Sentence templates shared by the generator (to plant facts) and the reference policy.

The generator writes facts into artifacts with :data:`PATTERNS`; the reference policy finds
them again in *tool outputs* with :func:`pattern_regex` (knowing the question's parameters,
as a reference solution would, but never the answer). Content answers are written with
:data:`CONTENT_CLAUSES`, so the reference text and the oracle's answer agree token for token.
All wording is ours (synthetic); none is copied from the HERB release.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

__all__ = [
    "CONTENT_CLAUSES",
    "CONTENT_FACTS",
    "ENTITY_LEADS",
    "PATTERNS",
    "QUESTIONS",
    "compose_content",
    "compose_entities",
    "human_date",
    "pattern_regex",
    "question_text",
]

PATTERNS: dict[str, str] = {
    "title": "Meeting: {product} {meeting}",
    "target": "Target for {feature}: {metric} of {value}.",
    "revision": "we agreed to change the {metric} target for {feature} from {old} to {new}.",
    "segment": "The {segment} segment is worth {size} and is led by {competitor}.",
    "pr_ready": "PR for {feature} is ready for review: {link}",
    "fix_ready": "PR fixing the {bug} bug is ready for review: {link}",
    "bug_report": "{cust} reported the {bug} issue",
    "bug_also": "{cust} is also seeing the {bug} issue",
    "fix_summary": "Fixes the {bug} bug. Root cause: {cause}. Fix: {fix}.",
    "url_share": "Useful read for the {feature} work: {link}",
    "url_desc": "An article on how {competitor} approaches {feature}: {claim}.",
    "request": "{cust} asked for {request}.",
    "options": "For the {component} we evaluated {a} and {b}.",
    "decision": "Decision: {tech} for the {component}, because {reason}.",
    "sprint": "Sprint goal: {goal}.",
    "revert": "{link} was reverted by {revert} because {reason}.",
    "doc_share": "I published the {title}: {link}",
}
"""Planted-fact sentences; ``{field}`` slots are filled by the generator."""

_GROUPS = {
    "link": r"https?://[^\s]+",
    "revert": r"https?://[^\s]+",
    "cust": r"CUST-\d+",
}
_TEXT = r"[^\n]+?"
_FIELD = re.compile(r"\{(\w+)\}")


def pattern_regex(name: str, **known: str) -> re.Pattern[str]:
    """Compile ``PATTERNS[name]`` with the ``known`` slots fixed and the others captured.

    Unknown slots become named groups (links and customer ids by shape, text lazily up to
    the next literal); a final period must be followed by whitespace or the end, so values
    such as ``99.9%`` are captured whole.

    Raises:
        KeyError: unknown pattern name.
    """
    template = PATTERNS[name]
    out: list[str] = []
    pos = 0
    for m in _FIELD.finditer(template):
        out.append(re.escape(template[pos : m.start()]))
        slot = m.group(1)
        if slot in known:
            out.append(re.escape(str(known[slot])))
        else:
            out.append(f"(?P<{slot}>{_GROUPS.get(slot, _TEXT)})")
        pos = m.end()
    tail = template[pos:]
    if tail.endswith("."):
        out.append(re.escape(tail[:-1]) + r"\.(?=\s|$)")
    else:
        out.append(re.escape(tail))
    return re.compile("".join(out), re.IGNORECASE)


def human_date(iso: str) -> str:
    """``2025-03-14`` -> ``March 14, 2025`` (how questions name a day)."""
    d = date.fromisoformat(iso[:10])
    return f"{d:%B} {d.day}, {d.year}"


QUESTIONS: dict[str, str] = {
    # person
    "prd_team": "Find the employee IDs of the author and all reviewers of the {product} PRD.",
    "pr_reviewers": "Find the employee IDs of the people who reviewed the {product} pull "
    "request that adds {feature}.",
    "meeting_role": "Find the employee IDs of the {role}s who attended the {product} {meeting}.",
    # company
    "bug_reporters": "Which customer companies reported the {bug} issue in {product}?",
    "request_customers": "Which customer companies asked for {request} during the {product} "
    "customer feedback session?",
    # url
    "competitor_url": "Find the URL shared for the {product} {feature} work that describes "
    "how {competitor} approaches it.",
    "author_docs": "Find the links to the documents that {name} authored for {product}.",
    # pr
    "reviewed_by": "Find the links to the {product} pull requests reviewed by {name}.",
    "reverted": "Which {product} pull requests were reverted? Give their links.",
    "bug_fix_pr": "Find the link to the pull request that fixed the {bug} bug in {product}.",
    # content
    "target_revision": "What {metric} target did the {product} PRD first set for {feature}, "
    "and what did the PRD review change it to?",
    "target": "What {metric} target does the {product} PRD set for {feature}?",
    "segment": "According to the {product} market research report, how large is the "
    "{segment} segment and which competitor leads it?",
    "bug_cause": "What caused the {bug} bug in {product}, and how was it fixed?",
    "customer_request": "What did {company} ask for during the {product} customer feedback session?",
    "tech_choice": "Which options did the {product} system design evaluate for the "
    "{component}, which one did the design review choose, and why?",
    "sprint_goal": "What sprint goal was agreed in the {product} sprint planning meeting on {day}?",
}
"""Question wording per recipe kind (the parameters are visible in the question)."""

KIND_TYPE: dict[str, str] = {
    "prd_team": "person", "pr_reviewers": "person", "meeting_role": "person",
    "bug_reporters": "company", "request_customers": "company",
    "competitor_url": "url", "author_docs": "url",
    "reviewed_by": "pr", "reverted": "pr", "bug_fix_pr": "pr",
    "target_revision": "content", "target": "content", "segment": "content",
    "bug_cause": "content", "customer_request": "content", "tech_choice": "content",
    "sprint_goal": "content",
}  # fmt: skip
"""Recipe kind -> answer type (the original ``type`` field)."""


def question_text(kind: str, params: dict[str, Any]) -> str:
    """The question for recipe ``kind`` with ``params`` (``date`` is shown as a day)."""
    values = dict(params)
    if "date" in values:
        values["day"] = human_date(values["date"])
    return QUESTIONS[kind].format(**values)


CONTENT_CLAUSES: dict[str, list[tuple[str, tuple[str, ...]]]] = {
    "target_revision": [
        ("The {product} PRD first set the {metric} target for {feature} at {old}.", ("old",)),
        ("The PRD review changed it to {new}.", ("new",)),
    ],
    "target": [("The {product} PRD sets the {metric} target for {feature} at {value}.", ("value",))],
    "segment": [
        ("The {segment} segment is worth {size}.", ("size",)),
        ("It is led by {competitor}.", ("competitor",)),
    ],
    "bug_cause": [
        ("The {bug} bug was caused by {cause}.", ("cause",)),
        ("It was fixed by {fix}.", ("fix",)),
    ],
    "customer_request": [("{company} asked for {request}.", ("request",))],
    "tech_choice": [
        ("The {product} system design evaluated {a} and {b} for the {component}.", ("a", "b")),
        ("The design review chose {tech} because {reason}.", ("tech", "reason")),
    ],
    "sprint_goal": [("The sprint goal agreed on {day} was to {goal}.", ("goal",))],
}
"""Content answers as clauses; a clause is written only when all its slots are known."""

CONTENT_FACTS: dict[str, tuple[str, ...]] = {
    "target_revision": ("old", "new"),
    "target": ("value",),
    "segment": ("size", "competitor"),
    "bug_cause": ("cause", "fix"),
    "customer_request": ("request",),
    "tech_choice": ("a", "b", "reason"),
    "sprint_goal": ("goal",),
}
"""The slots whose values are a content answer's atomic key facts."""


def compose_content(kind: str, params: dict[str, Any], values: dict[str, str]) -> str:
    """Write a content answer from question ``params`` and found ``values``.

    Clauses whose slots are not all in ``values`` are left out (a partial answer); with no
    clause left the result is the empty string.
    """
    slots = dict(params)
    if "date" in slots:
        slots["day"] = human_date(slots["date"])
    slots.update(values)
    parts = [t.format(**slots) for t, need in CONTENT_CLAUSES[kind] if all(k in values for k in need)]
    return " ".join(parts)


ENTITY_LEADS: dict[str, str] = {
    "prd_team": "The author and reviewers of the {product} PRD are",
    "pr_reviewers": "The pull request adding {feature} was reviewed by",
    "meeting_role": "The {role}s who attended the {product} {meeting} are",
    "bug_reporters": "The {bug} issue was reported by",
    "request_customers": "{request} was requested by",
    "competitor_url": "The URL about {competitor} is",
    "author_docs": "{name} authored",
    "reviewed_by": "{name} reviewed",
    "reverted": "The reverted pull requests are",
    "bug_fix_pr": "The {bug} bug was fixed in",
}
"""Opening words of an entity answer's text."""


def compose_entities(kind: str, params: dict[str, Any], entities: list[str]) -> str:
    """The answer text naming ``entities`` for an entity-type recipe ``kind``."""
    lead = ENTITY_LEADS[kind].format(**params)
    return f"{lead[0].upper()}{lead[1:]} {', '.join(entities)}."
