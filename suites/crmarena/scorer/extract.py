"""Reading the final answer out of an agent's reply (CRMArena ``exact_match``, step 2).

Upstream (``Evaluator.parse_answers`` in ``crm_sandbox/env/env.py``, reference §1.6) sends the
reply to gpt-4o with a task-specific prompt (IDs by default, two-letter states for BRI, month
names for MTA) asking for JSON ``{"extracted_answers": [...]}``, ``["None"]`` when there is
none. Two readers stand in for it here:

* :func:`rule_extract` (default, recorded as ``egi/rules``): deterministic. It reads the
  answer the way a person grading by hand would, in this order:

  1. **an answer label** (``Final answer:`` or ``final answer is`` anywhere; ``Answer:``,
     ``**Answer:**`` or a ``### Answer`` heading opening a line; ``The answer is``, ``my
     answer would be``): the first sentence (or list) after the last label is the answer, up
     to its first reason (``since``, ``because``, ``which``, ``who``, ``with``, ``;`` ...)
     when the part before it names the answer; nothing there is no answer;
  2. **a concluding sentence** (one that opens with *therefore*, *thus*, *so*, *in
     conclusion*, *in summary*, *overall*, *based on ...*): the last one that names an
     entity or says there is none;
  3. **a decision sentence** (one with a decision word: lowest / highest / most / best /
     fewer / faster ..., routes or assigns, violated, purchased, matches ...): the first one
     whose entity sits in the decision word's own clause (``Both 005A and 005B have the
     lowest transfer count; 005C had 4.`` reads 005A, 005B), else the first one that names an
     entity or says there is none;
  4. **every entity named**, except those named **in passing**.

  An entity is named in passing when, inside its clause, it follows a word that makes it a
  side remark (*although*, *while*, *compared to*, *than*, *followed by*, *next*, *second*,
  *other than*, *instead of*, *rather than*, *unlike*, *ahead of*, *not*, *against*,
  *reviewed* ...), when it sits in parentheses while the sentence names an entity outside
  them (``005A had the lowest time (005B: 55 min)``), or when it comes before a ``but`` /
  ``however`` / ``so`` / ``therefore`` clause that names another one (``005B closed more
  overall, but for this issue the best is 005A``). When every entity is named in passing,
  they all count, unless the reply says there is none.

  A reply that names no entity is ``["None"]`` when it **says there is none** in plain
  words ("None", "No policy was violated in this case.", "None of the policies were
  breached", "I found no violation", "There are no matching records", "the agent did not
  violate any policy"), and ``[]`` (**no answer**, never a match, not even for a None gold)
  when it does not ("I don't know.", "I could not determine the answer", a question back).
  Entities are ids with the task's key prefix (``005`` User, ``01t`` Product2, ``ka0``
  Knowledge, ``a1M`` Issue; 18 or 15 characters), US states (two-letter codes in capitals, or
  full names mapped to codes) for BRI, month names for MTA (any letter case, except a
  lower-case ``may``; months that only date the question, as in *between January and June
  2023* or *March 15, 2024*, are not answers).

  Limits: a reply that says there was no violation and names the article it checked without
  one of the passing words (``No policy was violated; article ka0... was followed.``) reads
  as that article; a tie split over two sentences keeps only the sentence the rules pick.
  ``--egi-judge-model`` reads such replies as upstream's extractor does.

* :func:`llm_extract` (``--egi-judge-model``): the judge model with our own wording of
  upstream's extraction prompt (:func:`extraction_messages`): same JSON shape, same entity
  kinds, ``["None"]`` for a reply that says there is none; in addition it is told to give
  only the entities of the final answer (not candidates named in passing) and ``[]`` for a
  reply that gives no answer (upstream's prompt has no such case, so "I don't know" extracts
  to ``None`` there). A reply with no readable JSON list is asked again and then raises
  :class:`~pytest_egi.judges.JudgeError` (an infra error), where upstream falls back to
  heuristics that take the raw judge text as the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pytest_egi.judges import RULES_JUDGE, JudgeError
from pytest_egi.normalize import fold_text
from suites.crmarena.env.schema import KEY_PREFIXES
from suites.crmarena.env.sftime import MONTH_NAMES

__all__ = [
    "ANSWER_PREFIX",
    "US_STATES",
    "Extraction",
    "extraction_messages",
    "fold_lines",
    "llm_extract",
    "parse_extraction",
    "rule_extract",
    "says_none",
]

ANSWER_PREFIX: dict[str, str] = {
    "case_routing": KEY_PREFIXES["User"],
    "handle_time": KEY_PREFIXES["User"],
    "transfer_count": KEY_PREFIXES["User"],
    "named_entity_disambiguation": KEY_PREFIXES["Product2"],
    "policy_violation_identification": KEY_PREFIXES["Knowledge__kav"],
    "top_issue_identification": KEY_PREFIXES["Issue__c"],
}
"""Key prefix of the answer ids, per ``task`` value."""

US_STATES: dict[str, str] = {
    "Alabama": "AL", "Alaska": "AK", "Arizona": "AZ", "Arkansas": "AR", "California": "CA",
    "Colorado": "CO", "Connecticut": "CT", "Delaware": "DE", "Florida": "FL", "Georgia": "GA",
    "Hawaii": "HI", "Idaho": "ID", "Illinois": "IL", "Indiana": "IN", "Iowa": "IA",
    "Kansas": "KS", "Kentucky": "KY", "Louisiana": "LA", "Maine": "ME", "Maryland": "MD",
    "Massachusetts": "MA", "Michigan": "MI", "Minnesota": "MN", "Mississippi": "MS",
    "Missouri": "MO", "Montana": "MT", "Nebraska": "NE", "Nevada": "NV", "New Hampshire": "NH",
    "New Jersey": "NJ", "New Mexico": "NM", "New York": "NY", "North Carolina": "NC",
    "North Dakota": "ND", "Ohio": "OH", "Oklahoma": "OK", "Oregon": "OR", "Pennsylvania": "PA",
    "Rhode Island": "RI", "South Carolina": "SC", "South Dakota": "SD", "Tennessee": "TN",
    "Texas": "TX", "Utah": "UT", "Vermont": "VT", "Virginia": "VA", "Washington": "WA",
    "West Virginia": "WV", "Wisconsin": "WI", "Wyoming": "WY", "District of Columbia": "DC",
}  # fmt: skip
"""Full state name -> two-letter code (BRI answers)."""

_STATE_CODES = frozenset(US_STATES.values())

# -- entity mentions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    value: str


def _id_mentions(text: str, prefix: str) -> list[_Mention]:
    key = re.escape(prefix)
    pattern = rf"(?<![A-Za-z0-9])({key}[A-Za-z0-9]{{15}}|{key}[A-Za-z0-9]{{12}})(?![A-Za-z0-9])"
    return [_Mention(m.start(), m.end(), m.group(1)) for m in re.finditer(pattern, text)]


_STATE_NAME_RE = re.compile(
    r"(?<![A-Za-z])("
    + "|".join(sorted((re.escape(n) for n in US_STATES), key=len, reverse=True))
    + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_STATE_CODE_RE = re.compile(r"(?<![A-Za-z0-9])([A-Z]{2})(?![A-Za-z0-9])")
_NOT_IDAHO = re.compile(
    r"(?:\b(?:case|account|user|record|order|contact|product|article|issue|agent|owner|an|the|its|this|that|"
    r"your|my)\s+$)",
    re.IGNORECASE,
)


def _state_mentions(text: str) -> list[_Mention]:
    found: list[_Mention] = []
    names = {n.lower(): code for n, code in US_STATES.items()}
    for m in _STATE_NAME_RE.finditer(text):
        found.append(_Mention(m.start(), m.end(), names[m.group(1).lower()]))
    taken = [(m.start, m.end) for m in found]
    for m in _STATE_CODE_RE.finditer(text):
        code = m.group(1)
        if code not in _STATE_CODES or any(a <= m.start() < b for a, b in taken):
            continue
        before, after = text[: m.start()], text[m.end() :]
        if code == "ID" and (_NOT_IDAHO.search(before) or re.match(r"\s*[:#=]", after)):
            continue  # "the case ID", "ID: 500..." (an identifier, not Idaho)
        if code == "OK" and re.match(r"[,.!]", after) and not before.strip(" *_`>-").strip():
            continue  # "OK, ..." opening a reply (not Oklahoma)
        found.append(_Mention(m.start(), m.end(), code))
    return sorted(found, key=lambda m: m.start)


_MONTH = "(?:" + "|".join(MONTH_NAMES) + ")"
_MONTH_RE = re.compile(rf"(?<![A-Za-z])({_MONTH})(?![A-Za-z])", re.IGNORECASE)
_DATE_CONTEXT = [
    # a full date: "March 15, 2024", "15 March 2024"
    re.compile(rf"(?<![A-Za-z]){_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}", re.IGNORECASE),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s+\d{{4}}", re.IGNORECASE),
    # a range or bound: "between January and June 2023", "from May to July", "since March 2023"
    re.compile(
        rf"\b(?:from|between|since|until|till|through|starting(?:\s+(?:in|from))?|beginning(?:\s+(?:in|of))?|"
        rf"ending(?:\s+in)?|as\s+of|up\s+to)\s+(?:the\s+(?:start|end|beginning)\s+of\s+)?{_MONTH}"
        rf"(?:\s+\d{{4}})?(?:\s*(?:to|through|until|till|and|-)\s*{_MONTH}(?:\s+\d{{4}})?)?",
        re.IGNORECASE,
    ),
    # "January 2023 - June 2023", "Jan 2023 to June 2023"
    re.compile(
        rf"(?<![A-Za-z]){_MONTH}\s+\d{{4}}\s*(?:-|to|through|until)\s*{_MONTH}\s+\d{{4}}", re.IGNORECASE
    ),
]


def _month_mentions(text: str) -> list[_Mention]:
    dated = [(m.start(), m.end()) for rx in _DATE_CONTEXT for m in rx.finditer(text)]
    found = []
    for m in _MONTH_RE.finditer(text):
        word = m.group(1)
        if word == "may" or any(a <= m.start() < b for a, b in dated):
            continue  # the modal verb "may"; a month that only dates the question
        found.append(_Mention(m.start(), m.end(), word.capitalize()))
    return found


def _mentions(task_type: str, text: str) -> list[_Mention]:
    if task_type == "best_region_identification":
        return _state_mentions(text)
    if task_type == "monthly_trend_analysis":
        return _month_mentions(text)
    prefix = ANSWER_PREFIX.get(task_type)
    if prefix is None:
        raise ValueError(f"no answer entity for task type {task_type!r}")
    return _id_mentions(text, prefix)


# -- plain-language None -----------------------------------------------------------------------

_NONE_STATEMENTS = [
    re.compile(r"(?<![A-Za-z])none(?![A-Za-z])", re.IGNORECASE),
    re.compile(
        r"\bno\b(?!\s+(?:other|idea|clue|information|info|way|access|data|answer|further|more)\b)"
        r"(?:\s+[\w-]+){0,3}?\s+(?:polic(?:y|ies)|violations?|breach(?:es)?|records?|matches|results?|agents?|"
        r"products?|items?|orders?|purchases?|issues?|articles?|states?|months?|cases?|entries|one|such|"
        r"(?:knowledge\s+)?articles?)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:\bnot\b|n't\b|\bnever\b)(?!\s+(?:sure|clear|certain|possible|able|enough|known|determin\w*)\b)"
        r"\s+(?:[\w-]+\s+){0,3}?(?:violat|breach|contraven|infring|break|broke)\w*",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:\bnot\b|n't\b|\bunable\s+to\b)\s+(?:find|locate|identify|see|detect)\s+(?:any|a|an)\b"
        r"(?:\s+[\w-]+){0,3}?\s+(?:records?|orders?|purchases?|products?|items?|cases?|agents?|match(?:es)?|"
        r"violations?|breach(?:es)?|articles?|issues?|months?|states?|results?|entries)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\bnothing\s+(?:was\s+|is\s+)?(?:found|violat\w*|match\w*|breach\w*)", re.IGNORECASE),
    re.compile(r"\bzero\s+(?:violations?|records?|matches|results?|agents?)\b", re.IGNORECASE),
    re.compile(
        r"\b(?:fully\s+)?(?:complied|complies|comply|compliant|adhered|adheres)\s+(?:with|to)\s+"
        r"(?:all|every|each|the|our|company|its|their)\b",
        re.IGNORECASE,
    ),
]


def says_none(text: str) -> bool:
    """True when ``text`` says in plain words that there is no answer record: "None",
    "No policy was violated", "None of the policies were breached", "I found no violation",
    "there are no matching records", "did not violate any policy", "fully complied with the
    policies". Not for a reply that gives no answer ("I don't know", "I could not determine
    it", "I have no information"): that is no answer, never an abstention."""
    return any(rx.search(text) for rx in _NONE_STATEMENTS)


# -- clauses, passing mentions ---------------------------------------------------------------

_PASSING = re.compile(
    r"\b(?:although|though|while|whereas|compared\s+(?:to|with)|in\s+comparison\s+(?:to|with)|relative\s+to|"
    r"versus|vs|than|followed\s+by|next|second|runner[\s-]*up|other\s+than|excluding|besides|apart\s+from|"
    r"instead\s+of|rather\s+than|unlike|ahead\s+of|behind|above|below|not|against|checked|reviewed|reviewing|consulted|"
    r"previously|formerly|originally)\b",
    re.IGNORECASE,
)
_BOUNDARY = re.compile(
    r"[;,:\n]|[.!?](?=\s|$)|\s-+\s|"
    r"(?=\b(?:but|however|yet|although|though|while|whereas|so|therefore|thus|hence)\b)",
    re.IGNORECASE,
)
_CONTRAST = re.compile(
    r"\W*(?:but|however|yet|so|therefore|thus|hence)\b(?!\s+(?:also|so|equally|far|that|many|much)\b)",
    re.IGNORECASE,
)


def _paren_spans(text: str) -> list[tuple[int, int]]:
    """(open, close) index pairs of the outermost parentheses (an unclosed one runs to the end)."""
    spans, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i))
    if depth:
        spans.append((start, len(text)))
    return spans


def _clause(text: str, lo: int, hi: int, pos: int) -> tuple[int, int]:
    """(start, end) of the clause of ``text[lo:hi]`` that holds ``pos``."""
    start = lo
    for m in _BOUNDARY.finditer(text, lo, pos):
        start = m.end()
    after = _BOUNDARY.search(text, pos, hi)
    return start, after.start() if after else hi


@dataclass(frozen=True)
class _Reading:
    kept: list[str]  # not named in passing
    decisive: list[str]  # kept, in a clause that carries a decision word
    named: list[str]  # every entity named


def _read(task_type: str, text: str) -> _Reading:
    """The entities named in ``text``, first-mention order, repeats once (see the module
    docstring for "named in passing")."""
    # "vs." and "e.g." end no sentence; same length, so positions stay
    text = re.sub(r"\b(vs|e\.g|i\.e|approx)\.", lambda m: m.group(0)[:-1] + " ", text, flags=re.IGNORECASE)
    mentions = _mentions(task_type, text)
    if not mentions:
        return _Reading([], [], [])
    spans = _paren_spans(text)
    masked = list(text)
    for a, b in spans:
        masked[a : b + 1] = " " * (min(b, len(text) - 1) - a + 1)
    outer_text = "".join(masked)
    keep: list[bool] = []
    inside: list[bool] = []
    starts: list[int] = []
    decisive: list[bool] = []
    for m in mentions:
        span = next(((a, b) for a, b in spans if a < m.start <= b), None)
        source, lo, hi = (outer_text, 0, len(text)) if span is None else (text, span[0] + 1, span[1])
        start, end = _clause(source, lo, hi, m.start)
        keep.append(_PASSING.search(source, start, m.start) is None)
        inside.append(span is not None)
        starts.append(start)
        decisive.append(_DECISION.search(source, start, end) is not None)
    if any(k and not i for k, i in zip(keep, inside, strict=True)):  # asides in parentheses
        keep = [k and not i for k, i in zip(keep, inside, strict=True)]
    contrast = [
        starts[i]
        for i, m in enumerate(mentions)
        if keep[i] and not inside[i] and _CONTRAST.match(outer_text, starts[i])
    ]
    if contrast:  # "X ..., but Y": the claim after "but" stands
        cut = max(contrast)
        keep = [
            k and (m.start >= cut or inside[i]) for i, (k, m) in enumerate(zip(keep, mentions, strict=True))
        ]

    def values(flags: list[bool]) -> list[str]:
        return list(dict.fromkeys(m.value for f, m in zip(flags, mentions, strict=True) if f))

    return _Reading(
        values(keep),
        values([k and d for k, d in zip(keep, decisive, strict=True)]),
        values([True] * len(mentions)),
    )


# -- sentences, labels, conclusions ---------------------------------------------------------------

_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_LABEL = re.compile(
    # "Final answer: X", "final answer is X" anywhere
    r"\bfinal\s+answer\**[ \t]*(?:is\b|would\s+be\b|:|=|\n)\**"
    # "Answer: X", "**Answer:** X", "### Answer" opening a line
    r"|(?:^|\n)[ \t#>*_]*answer\**[ \t]*(?::|=|\n|$)\**"
    # "The answer (to your question) is X", "my answer would be X"
    r"|\b(?:the|my)\s+answer(?:\s+to\s+(?:your|the|this)\s+(?:question|query|request))?\s+(?:is|would\s+be)\b",
    re.IGNORECASE,
)
_EXPLANATION = re.compile(
    r";|[ \t]-+[ \t]|"
    r"\b(?:since|because|as(?!\s+well\b)|which|who|whose|with|having|due\s+to|given\s+that|after)\b",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"^[\W_]*(?:so\b|therefore\b|thus\b|hence\b|consequently\b|in\s+conclusion\b|in\s+summary\b|to\s+summari[sz]e\b|"
    r"in\s+short\b|overall\b|as\s+a\s+result\b|based\s+on\b|according\s+to\s+(?:the|my|these|this)\b)",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:lowest|highest|most|fewest|least|best|top|quickest|fastest|slowest|shortest|longest|greatest|"
    r"smallest|largest|minimum|maximum|fewer|lower|higher|faster|quicker|shorter|longer|greater|better|"
    r"peak(?:ed|s)?|spike[sd]?|recommend\w*|should\s+(?:be\s+)?(?:go|routed|assigned|"
    r"handled|get)|rout(?:e|ed|ing)\b|assign(?:ed|ing)?\b|violat\w*|breach\w*|contraven\w*|broke|purchased|bought|"
    r"ordered|correspond\w*|refers?\s+to|match(?:es|ed|ing)?|identified)\b",
    re.IGNORECASE,
)


def fold_lines(text: str) -> str:
    """:func:`~pytest_egi.normalize.fold_text` per line: typographic marks folded, NFKC,
    spaces collapsed, but line breaks (lists, paragraphs) kept."""
    return "\n".join(fold_text(line) for line in str(text).splitlines())


def _units(text: str) -> list[str]:
    """Sentences of ``text``; a list (and the line that introduces it with a colon) is one unit."""
    units: list[str] = []
    in_list = False
    for line in text.split("\n"):
        if not line.strip():
            in_list = False
            continue
        if _LIST_ITEM.match(line) and (in_list or (units and units[-1].rstrip().endswith(":"))):
            units[-1] += "\n" + line
            in_list = True
            continue
        if _LIST_ITEM.match(line):
            units.append(line)
            in_list = True
            continue
        in_list = False
        units.extend(s for s in _SENTENCE_END.split(line) if s.strip())
    return units


def _decide(task_type: str, unit: str) -> tuple[list[str], str] | None:
    """What ``unit`` answers: its entities not named in passing (those in a clause with a
    decision word, when there are any), ``["None"]`` when it names none and says there is
    none, every entity when all are named in passing, or None when it names no entity and does
    not say there is none. The second item says which (``"named"``, ``"says none"``, ``"named
    in passing only"``)."""
    reading = _read(task_type, unit)
    if reading.decisive:
        return reading.decisive, "decisive"
    if reading.kept:
        return reading.kept, "named"
    if says_none(unit):
        return ["None"], "says none"
    if reading.named:
        return reading.named, "named in passing only"
    return None


@dataclass(frozen=True)
class Extraction:
    """One reading of a reply.

    Attributes:
        answers: the answer's entities (deduplicated, first-mention order), ``["None"]`` when
            the reply says there is none, ``[]`` when it gives no answer.
        extractor: who read it: ``"egi/rules"``, or the judge model's name.
        rule: for the rules, the step that decided (``"answer label"``, ``"concluding
            sentence"``, ``"decision sentence"``, ``"every entity named"``, ``"says none"``,
            ``"no answer"``); for the judge, ``"judge"``.
    """

    answers: list[str]
    extractor: str
    rule: str


def rule_extract(task_type: str, answer: str) -> Extraction:
    """The deterministic reader (module docstring, steps 1-4).

    Args:
        task_type: the record's ``task`` value (not ``knowledge_qa``).
        answer: the reply text (line breaks kept; see :func:`fold_lines`).

    Returns:
        An :class:`Extraction` by ``egi/rules``.

    Raises:
        ValueError: ``task_type`` has no entity kind (``knowledge_qa`` or an unknown value).
    """
    text = fold_lines(answer)
    if task_type not in ANSWER_PREFIX and task_type not in (
        "best_region_identification",
        "monthly_trend_analysis",
    ):
        raise ValueError(f"no answer entity for task type {task_type!r}")
    labels = list(_LABEL.finditer(text))
    if labels:
        region = text[labels[-1].end() :].lstrip()
        region = re.split(r"\n\s*\n", region, maxsplit=1)[0]
        for unit in _units(region)[:1]:
            cut = _EXPLANATION.search(unit)  # "X, since ...": the answer comes before the reason
            decided = _decide(task_type, unit[: cut.start()]) if cut else None
            decided = decided or _decide(task_type, unit)
            if decided is not None:
                return Extraction(decided[0], RULES_JUDGE, "answer label")
        return Extraction([], RULES_JUDGE, "no answer")
    units = _units(text)
    for unit in reversed(units):
        if _CONCLUSION.match(unit):
            decided = _decide(task_type, unit)
            if decided is not None and decided[1] != "named in passing only":
                return Extraction(decided[0], RULES_JUDGE, "concluding sentence")
    decisions = [(unit, _decide(task_type, unit)) for unit in units if _DECISION.search(unit)]
    for wanted in (("decisive",), ("named", "says none")):  # the entity in the decision's clause first
        for _, decided in decisions:
            if decided is not None and decided[1] in wanted:
                return Extraction(decided[0], RULES_JUDGE, "decision sentence")
    survivors: list[str] = []
    named: list[str] = []
    for unit in units:
        reading = _read(task_type, unit)
        survivors += reading.kept
        named += reading.named
    if survivors:
        return Extraction(list(dict.fromkeys(survivors)), RULES_JUDGE, "every entity named")
    if says_none(text):
        return Extraction(["None"], RULES_JUDGE, "says none")
    if named:
        return Extraction(list(dict.fromkeys(named)), RULES_JUDGE, "every entity named")
    return Extraction([], RULES_JUDGE, "no answer")


# -- the LLM extractor (--egi-judge-model) -----------------------------------------------------

_ENTITY: dict[str, tuple[str, str]] = {
    "case_routing": ("agent (User) Ids", "18-character Salesforce Ids beginning with 005"),
    "handle_time": ("agent (User) Ids", "18-character Salesforce Ids beginning with 005"),
    "transfer_count": ("agent (User) Ids", "18-character Salesforce Ids beginning with 005"),
    "named_entity_disambiguation": (
        "product (Product2) Ids",
        "18-character Salesforce Ids beginning with 01t",
    ),
    "policy_violation_identification": (
        "knowledge article Ids",
        "18-character Salesforce Ids beginning with ka0 (the article whose policy was violated)",
    ),
    "top_issue_identification": ("issue (Issue__c) Ids", "18-character Salesforce Ids beginning with a1M"),
    "monthly_trend_analysis": ("months", 'full English month names, capitalised (e.g. "May", "June")'),
    "best_region_identification": (
        "US states",
        'two-letter state codes (e.g. "NY", "CA"), full names converted',
    ),
}

_EXAMPLES: dict[str, str] = {
    "ids": (
        'Reply: "The agent with the lowest average handle time is 005Ws0000lQoeU9IAJ."\n'
        'Output: {"extracted_answers": ["005Ws0000lQoeU9IAJ"]}\n'
        'Reply: "005Ws0000lQoeURIAZ handled more cases overall, but for this issue the best fit is '
        '005Ws0000lQoeU9IAJ."\n'
        'Output: {"extracted_answers": ["005Ws0000lQoeU9IAJ"]}\n'
        'Reply: "I couldn\'t find any records matching your criteria."\n'
        'Output: {"extracted_answers": ["None"]}\n'
        'Reply: "I don\'t know."\n'
        'Output: {"extracted_answers": []}'
    ),
    "months": (
        'Reply: "Between January and June 2023, June had the most cases."\n'
        'Output: {"extracted_answers": ["June"]}\n'
        'Reply: "May and July show the highest activity."\n'
        'Output: {"extracted_answers": ["May", "July"]}\n'
        'Reply: "No month stands out."\n'
        'Output: {"extracted_answers": ["None"]}'
    ),
    "states": (
        'Reply: "I found two states matching your criteria: New York and California."\n'
        'Output: {"extracted_answers": ["NY", "CA"]}\n'
        'Reply: "TX closes cases fastest (1.2 days), compared with FL (2.5 days)."\n'
        'Output: {"extracted_answers": ["TX"]}\n'
        'Reply: "I couldn\'t find any records matching your criteria."\n'
        'Output: {"extracted_answers": ["None"]}'
    ),
}


def extraction_messages(task_type: str, answer: str) -> list[dict[str, str]]:
    """The judge's messages for one reply: our wording of upstream's extraction prompt.

    Upstream's prompt (``Evaluator.parse_answers``) asks to extract the entity kind of the task
    "mentioned in the agent's final response", all of them when several, "None" when there is
    none, as JSON ``{"extracted_answers": [...]}`` directly parsable by ``json.loads``, with a
    few examples. Ours keeps that and adds two rules upstream leaves to the model: only the
    entities the reply gives as its answer (not those named in passing), and ``[]`` for a
    reply that gives no answer at all (see the module docstring).

    Args:
        task_type: the record's ``task`` value.
        answer: the reply text, sent as the user message unchanged (as upstream).

    Returns:
        ``[system, user]`` messages in OpenAI format.
    """
    entity, form = _ENTITY[task_type]
    examples = _EXAMPLES[
        "months" if task_type == "monthly_trend_analysis" else "states"
        if task_type == "best_region_identification" else "ids"
    ]  # fmt: skip
    system = (
        f"You extract the {entity} that an AI agent's reply gives as its final answer.\n"
        "Guidelines:\n"
        f"- Extract only {entity}: {form}. Copy Ids exactly as written.\n"
        f"- Extract the {entity} the reply gives as its answer; if it gives several (a tie, a list), "
        "extract all of them.\n"
        f"- Leave out {entity} the reply names only in passing: candidates it compared, ranked lower or "
        "rejected, records it checked on the way.\n"
        "- If the reply states that there is no such record (no matching record, no agent qualifies, "
        'no policy was violated), answer ["None"].\n'
        "- If the reply gives no answer at all (it does not know, cannot tell, declines, or asks a "
        "question back), answer [].\n"
        "- Reply with one JSON object only, directly parsable by json.loads(), no explanation: "
        '{"extracted_answers": [...]}\n\n'
        f"Examples:\n{examples}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": str(answer)}]


_JSON = re.compile(r"\{.*\}|\[.*\]", re.DOTALL)


def parse_extraction(reply: str) -> list[str] | None:
    """The extracted answers in a judge reply, or None when it holds no usable list.

    Reads the first JSON object (``{"extracted_answers": [...]}``) or list in ``reply``
    (inside a code fence too). Items are stripped of spaces and quotes; a null item or a lone
    ``none`` in any letter case is ``"None"`` (upstream maps a null first item to ``"None"``);
    repeats count once.
    """
    match = _JSON.search(reply or "")
    if not match:
        return None
    try:
        data = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict):
        data = data.get("extracted_answers")
    if not isinstance(data, list) or not all(x is None or isinstance(x, (str, int)) for x in data):
        return None
    items = []
    for x in data:
        text = "None" if x is None else str(x).strip().strip("\"'` ").strip()
        if text.lower() == "none":
            text = "None"
        if text:
            items.append(text)
    return list(dict.fromkeys(items))


def llm_extract(judge: Any, task_type: str, answer: str) -> Extraction:
    """Extract with the judge model (``--egi-judge-model``), as upstream does with gpt-4o.

    The call goes through the judge's client (response cache, retries, usage counted as judge
    usage); a reply with no usable list is asked again (never cached) up to the judge's
    ``max_attempts``.

    Args:
        judge: a :class:`~pytest_egi.judges.LLMJudge`.
        task_type: the record's ``task`` value (not ``knowledge_qa``).
        answer: the reply text.

    Returns:
        An :class:`Extraction` by ``judge.name`` (rule ``"judge"``).

    Raises:
        JudgeError: no usable extraction after the judge's attempts (an infra error, never a
            wrong answer).
        ProviderError: the judge's provider failed (an infra error).
    """
    got = judge.ask(extraction_messages(task_type, answer), parse_extraction)
    if got is None:
        raise JudgeError(
            f'judge {judge.name} gave no usable {{"extracted_answers": [...]}} in '
            f"{judge.max_attempts} attempt(s) for a {task_type} answer"
        )
    return Extraction(got, judge.name, "judge")
