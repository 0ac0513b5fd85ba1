"""CRMArena tasks in the original record schema: seeded generation on an org, and file loading.

Record schema (HF ``Salesforce/CRMArena``, reference §1.2), exactly these keys in this order::

    {"idx": int, "task": str, "query": str, "answer": [str | None, ...],
     "reward_metric": "exact_match" | "fuzzy_match",
     "metadata": {"required": str, "optional": str}}

Gold answers are computed by `reference.solve_directly` on the org (reference §4.2): the same
SOQL/SOSL program the oracle replays, so oracle, environment and gold agree by construction.
Queries are our own wording. ``metadata.required`` carries the task parameters as
``Label: value`` lines (today, product/contact/case ids, the new case's text) plus the rules an
agent needs (e.g. the routing policy); ``metadata.optional`` carries domain definitions (quarters,
seasons, periods) like the original's aided-mode hints.

Answer kinds per category: a unique answer, a tie (several gold items, arg-min/arg-max returning
all tied keys) or ``[None]``. Each category aims at 15% ties and 15% None where the type allows
(NCR and KQA: unique only; PVI: unique or None, 35% None; MTA and BRI: unique or tie); when a
kind cannot be found, the slot is filled with another kind.

TCU follows the original tool semantics (`get_agent_transferred_cases_by_period`): agents who made
no transfer are absent from the ranking. Since the natural reading of "fewest transfers" would
count them as 0, every TCU task states the rule in ``metadata.required``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator
from datetime import date, timedelta

from suites.crmarena.env.sftime import MONTH_NAMES, SEASON_START_MONTH, add_months

from .content import CATALOG, FAQ_FACTS, GENERAL_ARTICLES, ISSUES
from .reference import solve_directly
from .task_file import CATEGORIES, load_task_file

__all__ = ["CATEGORIES", "REWARD_METRICS", "generate_tasks", "load_task_file", "DOMAIN_DETAILS"]

REWARD_METRICS = {task: ("fuzzy_match" if task == "knowledge_qa" else "exact_match") for task in CATEGORIES}
_ALLOWED_KINDS = {
    "case_routing": ("unique",),
    "knowledge_qa": ("unique",),
    "policy_violation_identification": ("unique", "none"),
    "monthly_trend_analysis": ("unique", "tie"),
    "best_region_identification": ("unique", "tie"),
}
_NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")

DOMAIN_DETAILS = """# Domain details
## Quarters of the year
- Q1: January 1 to March 31; Q2: April 1 to June 30; Q3: July 1 to September 30;
  Q4: October 1 to December 31 (all inclusive).
## Seasons
- Spring: March 1 to May 31; Summer: June 1 to August 31; Fall (Autumn): September 1 to November 30.
- Winter <year>: December 1 of <year> to the end of February of the following year.
## Time periods
- "The past N days/weeks/months/quarters" ends at the start (00:00 UTC) of today and begins N units
  earlier; a quarter is 3 months.
- A month with significantly more cases is the month with the largest number of cases; months of
  different years with the same name count together."""

_AGENT_RULES = """\
- An agent "handled more than N cases" in a period when they received more than N owner assignments
  (CaseHistory__c, Field__c = 'Owner Assignment') in it.
- Handle time of a case = ClosedDate - CreatedDate. Only closed cases created in the period that were
  never transferred (exactly one owner assignment in the period) count.
- A transfer is an owner assignment whose OldValue__c is the agent who gave the case away."""

_TRANSFER_RANKING = (
    "\n- Rank only agents who transferred at least one case in the period; agents without any "
    "transfer are left out of the comparison."
)

_ROUTING_POLICY = """\
- Routing policy: route the case to the agent with the most closed cases for the same issue. On a
  tie, prefer the agent with the most closed cases for the same product; if still tied, the agent
  with the fewest open (not closed) cases."""


def _record(idx: int, task: str, query: str, answer: list, required: str, optional: str) -> dict:
    return {
        "idx": idx,
        "task": task,
        "query": query,
        "answer": answer,
        "reward_metric": REWARD_METRICS[task],
        "metadata": {"required": required, "optional": optional},
    }


def _kind(answer: list) -> str:
    if answer == [None]:
        return "none"
    return "tie" if len(answer) > 1 else "unique"


def _count_words(count: int, rng: random.Random) -> str:
    return _NUMBER_WORDS[count] if count < len(_NUMBER_WORDS) and rng.random() < 0.4 else str(count)


class _Context:
    """Org facts the candidate generators draw from (read with plain SQL, generation side only)."""

    def __init__(self, org, rng: random.Random) -> None:
        self.org = org
        self.rng = rng
        sql = org.connection.execute
        first, last = sql('SELECT MIN("CreatedDate"), MAX("CreatedDate") FROM "Case"').fetchone()
        self.first_day = date.fromisoformat(first[:10]) if first else date(2022, 1, 1)
        self.last_day = date.fromisoformat(last[:10]) if last else date(2023, 12, 31)
        self.products = sql('SELECT "Id", "Name" FROM "Product2" ORDER BY rowid').fetchall()
        self.catalog = {p.name: (phrase, p) for phrase, items in CATALOG.values() for p in items}

    def today_between(self, low: date, high: date) -> date:
        """A seeded date in [low, high]."""
        return low + timedelta(days=self.rng.randrange(max(1, (high - low).days + 1)))

    def period_phrase(
        self, relative_units: tuple[str, ...] = ("day", "week", "month", "quarter")
    ) -> tuple[str, date]:
        """A period phrase and a matching "today" (named periods end before today)."""
        rng = self.rng
        if relative_units and rng.random() < 0.5:
            unit = rng.choice(relative_units)
            count = rng.choice(
                {
                    "day": (30, 45, 60, 90),
                    "week": (2, 3, 4, 6, 8),
                    "month": (1, 2, 3, 4, 6),
                    "quarter": (1, 2, 3, 4),
                }[unit]
            )
            today = self.today_between(
                self.first_day + timedelta(days=100), self.last_day + timedelta(days=20)
            )
            words = f"{unit}" if count == 1 else f"{_count_words(count, rng)} {unit}s"
            return f"the {rng.choice(('past', 'last'))} {words}", today
        year = rng.randrange(self.first_day.year, self.last_day.year + 1)
        kind = rng.choice(("month", "quarter", "season"))
        if kind == "month":
            month = rng.randrange(1, 13)
            phrase, start = f"{MONTH_NAMES[month - 1]} {year}", date(year, month, 1)
            end = add_months(start, 1)
        elif kind == "quarter":
            quarter = rng.randrange(1, 5)
            ordinal = ("first", "second", "third", "fourth")[quarter - 1]
            phrase = rng.choice((f"Q{quarter} {year}", f"the {ordinal} quarter of {year}"))
            start = date(year, 3 * quarter - 2, 1)
            end = add_months(start, 3)
        else:
            season = rng.choice(sorted(SEASON_START_MONTH))
            phrase = rng.choice((f"{season} {year}", f"the {season.lower()} of {year}"))
            start = date(year, SEASON_START_MONTH[season], 1)
            end = add_months(start, 3)
        return phrase, end + timedelta(days=rng.randrange(1, 240))


def _required(today: date | None = None, **lines: str) -> str:
    parts = [f"Today's date: {today.isoformat()}"] if today else []
    parts += [f"{label.replace('_', ' ')}: {value}" for label, value in lines.items()]
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------
# Candidate generators: yield (query, required, optional)
# --------------------------------------------------------------------------------------------


def _case_routing(ctx: _Context) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    issues = ctx.org.connection.execute('SELECT "Name" FROM "Issue__c" ORDER BY rowid').fetchall()
    symptoms = dict(ISSUES)
    while issues and ctx.products:
        issue = rng.choice(issues)[0]
        product = rng.choice(ctx.products)[1]
        symptom = symptoms.get(issue, "it stopped working as expected")
        if rng.random() < 0.5:
            subject = f"{issue} on my {product}"
            description = (
                f"I'm writing about my {product}. It looks like a {issue.lower()} problem: {symptom}."
            )
        else:
            subject = f"Problem with my {product}"
            description = f"Hello, my {product} has a {issue.lower()} issue: {symptom}. Can someone help?"
        query = rng.choice(
            (
                "A new case just came in. Which agent should it be routed to?",
                "Route this new case to the most suitable agent. Who should get it?",
                "Which agent is the best fit to handle this new case?",
            )
        )
        required = (
            _required(**{"Case_subject": subject, "Case_description": description}) + "\n" + _ROUTING_POLICY
        )
        yield query, required, DOMAIN_DETAILS


def _agent_period_task(ctx: _Context, transfers: bool) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    while True:
        phrase, today = ctx.period_phrase()
        threshold = rng.choice((0, 1, 1, 2, 2, 3, 4))
        minimum = rng.random() < 0.5
        if threshold == 0:
            among = rng.choice(("agents who handled any cases", "all agents who managed cases"))
        else:
            among = (
                f"agents who handled {rng.choice(('more than', 'over'))} {_count_words(threshold, rng)} "
                f"case{'s' if threshold != 1 else ''}"
            )
        if transfers:
            word = "fewest" if minimum else "most"
            query = rng.choice(
                (
                    f"Which agent transferred the {word} cases in {phrase}, among {among}?",
                    f"In {phrase}, who made the {word} case transfers among {among}?",
                )
            )
        else:
            word = rng.choice(
                ("lowest", "shortest", "quickest") if minimum else ("highest", "longest", "slowest")
            )
            query = rng.choice(
                (
                    f"Which agent had the {word} average handle time in {phrase}, among {among}?",
                    f"In {phrase}, identify the agent with the {word} handle time among {among}.",
                )
            )
        required = _required(today) + (_TRANSFER_RANKING if transfers else "")
        yield query, required, DOMAIN_DETAILS + "\n## Agent metrics\n" + _AGENT_RULES


def _named_entity(ctx: _Context) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    items = ctx.org.connection.execute(
        'SELECT o."AccountId", o."EffectiveDate", o."Status", p."Name" FROM "OrderItem" i '
        'JOIN "Order" o ON o."Id" = i."OrderId" JOIN "Product2" p ON p."Id" = i."Product2Id" ORDER BY i.rowid'
    ).fetchall()
    contacts = dict(
        ctx.org.connection.execute('SELECT "AccountId", "Id" FROM "Contact" ORDER BY rowid DESC').fetchall()
    )
    offsets = (
        ("3 days ago", 3),
        ("three days ago", 3),
        ("five days ago", 5),
        ("10 days ago", 10),
        ("a week ago", 7),
        ("last week", 7),
        ("two weeks ago", 14),
        ("a fortnight ago", 14),
        ("a month ago", None),
        ("last month", None),
    )
    while items and contacts:
        account, day, _, name = rng.choice(items)
        if account not in contacts:
            continue
        phrase, _ = ctx.catalog.get(name, (None, None))
        vague = ctx.catalog[name][1].vague if name in ctx.catalog else " ".join(name.lower().split()[-2:])
        if phrase and rng.random() < 0.4:
            vague = phrase
        text, days = rng.choice(offsets)
        purchase = date.fromisoformat(day) + timedelta(days=rng.choice((0, 0, 0, 0, 1, -2)))
        today = purchase + timedelta(days=days) if days is not None else add_months(purchase, 1)
        verb = rng.choice(("bought", "purchased", "ordered"))
        query = rng.choice(
            (
                f"Can you show me the {vague} I {verb} {text}?",
                f"Display the {vague} that I {verb} {text}.",
                f"Could you pull up the {vague} I {verb} {text}?",
            )
        )
        yield query, _required(today, Customer_contact_Id=contacts[account]), ""


def _policy_violation(ctx: _Context) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    cases = [
        row[0]
        for row in ctx.org.connection.execute(
            'SELECT DISTINCT "CaseId" FROM "LiveChatTranscript" UNION '
            'SELECT "ParentId" FROM "EmailMessage" WHERE "Subject" LIKE \'RE:%\' ORDER BY 1'
        ).fetchall()
    ]
    while cases:
        query = rng.choice(
            (
                "Did the agent breach a company policy in this case? "
                "If so, which knowledge article was violated?",
                "Was any policy violated by the agent here? "
                "If yes, name the knowledge article that was breached.",
                "Check whether the agent broke a policy in this case, and if so, which knowledge article.",
            )
        )
        required = (
            _required(Case_Id=rng.choice(cases)) + "\n- Answer None if the agent followed every policy."
        )
        yield query, required, ""


def _knowledge_qa(ctx: _Context) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    general = {q: para for _, _, pairs in GENERAL_ARTICLES for q, _, para in pairs}
    candidates: list[str] = []
    for title, body in ctx.org.connection.execute(
        'SELECT "Title", "FAQ_Answer__c" FROM "Knowledge__kav" '
        "WHERE \"PublishStatus\" = 'Online' ORDER BY rowid"
    ).fetchall():
        product = title[:-4] if title.endswith(" FAQ") else None
        for question, _ in re.findall(r"Q:\s*(.+?)\s*\nA:\s*(.+?)\s*(?=\n\s*\n|\Z)", body or "", re.S):
            if question in general:
                candidates.append(general[question])
                continue
            for fact in FAQ_FACTS:
                if product and fact.question.format(product=product) == question:
                    candidates += [p.format(product=product) for p in fact.paraphrases]
                    break
            else:
                candidates.append(question)
    rng.shuffle(candidates)
    required = (
        "- Use the information retrieved from the knowledge articles to answer the question "
        "in a concise manner"
    )
    for question in candidates:
        yield question, required, ""


def _product_task(ctx: _Context, monthly: bool) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    while ctx.products:
        product_id, name = rng.choice(ctx.products)
        if monthly:
            unit = rng.choice(("month", "quarter"))
            count = rng.choice((4, 6, 8, 9, 10, 12) if unit == "month" else (2, 3, 4, 5, 6))
            phrase = f"the {rng.choice(('past', 'last'))} {_count_words(count, rng)} {unit}s"
            today = ctx.today_between(ctx.first_day + timedelta(days=150), ctx.last_day + timedelta(days=20))
            query = rng.choice(
                (
                    f"Is there a month in {phrase} where we received significantly more cases "
                    f"for the {name} than in other months?",
                    f"Over {phrase}, in which month did the {name} get significantly more cases "
                    "than in the other months?",
                )
            )
        else:
            phrase, today = ctx.period_phrase()
            query = rng.choice(
                (
                    f"What was the most common issue with the {name} in {phrase}?",
                    f"Which issue was reported most often for the {name} during {phrase}?",
                )
            )
        yield query, _required(today, Product_Id=product_id), DOMAIN_DETAILS


def _best_region(ctx: _Context) -> Iterator[tuple[str, str, str]]:
    rng = ctx.rng
    while True:
        phrase, today = ctx.period_phrase()
        query = rng.choice(
            (
                f"Which state had the quickest average case closure time in {phrase}?",
                f"In {phrase}, which shipping state closed cases fastest on average?",
                f"Identify the state with the shortest average time to close cases in {phrase}.",
            )
        )
        yield query, _required(today), DOMAIN_DETAILS


def _candidates(task: str, ctx: _Context) -> Iterator[tuple[str, str, str]]:
    generators = {
        "case_routing": lambda: _case_routing(ctx),
        "handle_time": lambda: _agent_period_task(ctx, transfers=False),
        "transfer_count": lambda: _agent_period_task(ctx, transfers=True),
        "named_entity_disambiguation": lambda: _named_entity(ctx),
        "policy_violation_identification": lambda: _policy_violation(ctx),
        "knowledge_qa": lambda: _knowledge_qa(ctx),
        "top_issue_identification": lambda: _product_task(ctx, monthly=False),
        "monthly_trend_analysis": lambda: _product_task(ctx, monthly=True),
        "best_region_identification": lambda: _best_region(ctx),
    }
    return generators[task]()


def generate_tasks(org, seed: int, per_category: int, categories: Iterable[str] | None = None) -> list[dict]:
    """Generate ``per_category`` tasks for each of the nine categories, gold computed on ``org``.

    Args:
        org: The `Org` the tasks refer to (generated or loaded).
        seed: Random seed for the task draw; same org + seed + per_category -> same records.
        per_category: Tasks per category (quick uses 6, deep 130).
        categories: ``task`` values to generate (None: all nine). Each category's draw does
            not depend on the others, but ``idx`` numbering does.

    Returns:
        Records in the original schema, ``idx`` unique and increasing (category order of
        `CATEGORIES`). A category may hold fewer records if the org cannot support more distinct
        tasks (for example a loaded org with few knowledge articles), or none at all when the
        org has no record a task of it can be drawn from (the caller refuses that).
    """
    records: list[dict] = []
    for task in CATEGORIES:
        if categories is not None and task not in categories:
            continue
        memo: dict = {}  # query text -> result, for this category's draw (the org does not change)
        rng = random.Random(f"crmarena-tasks/{seed}/{task}")
        ctx = _Context(org, rng)
        allowed = _ALLOWED_KINDS.get(task, ("unique", "tie", "none"))
        none_share = 0.35 if task == "policy_violation_identification" else 0.15
        quota = {
            "tie": round(per_category * 0.15) if "tie" in allowed else 0,
            "none": round(per_category * none_share) if "none" in allowed else 0,
        }
        quota = {
            kind: max(1 if kind in allowed else 0, n) if per_category >= 4 else n for kind, n in quota.items()
        }
        quota["unique"] = per_category - quota["tie"] - quota["none"]
        chosen: dict[str, list[dict]] = {"unique": [], "tie": [], "none": []}
        spare: dict[str, list[dict]] = {"unique": [], "tie": [], "none": []}
        seen: set[tuple[str, str]] = set()
        budget = 10 * per_category + 100
        for attempt, (query, required, optional) in enumerate(_candidates(task, ctx)):
            if attempt >= budget or all(len(chosen[k]) >= quota[k] for k in chosen):
                break
            if (query, required) in seen:
                continue
            seen.add((query, required))
            record = _record(0, task, query, [], required, optional)
            record["answer"] = solve_directly(org, record, memo)
            if task == "knowledge_qa" and not _kqa_answer_in_article(org, record):
                continue
            kind = _kind(record["answer"])
            if kind not in allowed:
                continue
            if len(chosen[kind]) < quota[kind]:
                chosen[kind].append(record)
            elif len(spare[kind]) < per_category:
                spare[kind].append(record)
        shortfall = per_category - sum(len(v) for v in chosen.values())
        for kind in ("unique", "tie", "none"):
            while shortfall > 0 and spare[kind]:
                chosen[kind].append(spare[kind].pop(0))
                shortfall -= 1
        picked = chosen["unique"] + chosen["tie"] + chosen["none"]
        rng.shuffle(picked)
        for record in picked[:per_category]:
            record["idx"] = len(records)
            records.append(record)
    return records


def _kqa_answer_in_article(org, record: dict) -> bool:
    """Keep a KQA task only if the solver's answer is the A-text paired with the question's FAQ."""
    answer = record["answer"][0]
    if not answer:
        return False
    rows = org.connection.execute(
        'SELECT "Title", "FAQ_Answer__c" FROM "Knowledge__kav" WHERE "FAQ_Answer__c" LIKE ?',
        (f"%A: {answer}%",),
    ).fetchall()
    question = record["query"]
    for title, body in rows:
        product = title[:-4] if title.endswith(" FAQ") else None
        for q_text, a_text in re.findall(r"Q:\s*(.+?)\s*\nA:\s*(.+?)\s*(?=\n\s*\n|\Z)", body or "", re.S):
            if a_text.strip() != answer:
                continue
            if q_text == question or any(
                q_text == q and para == question for _, _, pairs in GENERAL_ARTICLES for q, _, para in pairs
            ):
                return True
            for fact in FAQ_FACTS:
                if (
                    product
                    and fact.question.format(product=product) == q_text
                    and question in {p.format(product=product) for p in fact.paraphrases}
                ):
                    return True
    return False
