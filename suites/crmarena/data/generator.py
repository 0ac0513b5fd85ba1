"""Seeded generator of the synthetic CRMArena org, with latent structure behind every task type.

Latent variables (never stored in the org; reference §4.2 "Data generation"):

- **Agents** (User): a speed factor (handle-time multiplier), an activity level, a transfer
  propensity and 3 strong issues. Cases of a strong issue go to that agent ~6x as often and close
  ~30% faster, so agents have more *closed* cases for their strong issues (NCR).
- **Products**: a popularity, a seasonal peak month (cases ~6x more frequent in the peak month,
  MTA) and a dominant issue plus two secondary ones (TII).
- **Regions** (Account.ShippingState): a closure-time factor spread between 0.6 and 1.5, so one
  region is clearly fastest over long periods (BRI).
- **Transfers**: an agent's cases get 1-2 extra owner assignments in CaseHistory__c with
  probability = the agent's transfer propensity (HTU uses only non-transferred cases, TCU counts
  transfers); Case.OwnerId is the last owner.
- **Orders**: every case points at an OrderItem of an Activated order placed 2-40 days earlier by
  the same account; extra orders (15% Draft, some holding two products of one category) make the
  purchase-history lookups of NED ambiguous on purpose (ties, None).
- **Policies**: about a fifth of the cases (all of them closed) carry one agent statement in a
  chat or email that either complies with or breaks one of six policy articles (PVI); one
  outdated, archived policy version is a distractor.

Handle times are multiples of 15 minutes, which makes equal averages (ties) possible. Everything is
drawn from one `random.Random` seeded with the seed and scale, and rows are inserted in a fixed
order, so the same seed gives byte-identical tables.
"""

from __future__ import annotations

import math
import random
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from suites.crmarena.env.schema import AUXILIARY_PREFIXES, KEY_PREFIXES, OBJECTS, make_id
from suites.crmarena.env.sftime import add_months, format_datetime

from .content import (
    CATALOG,
    FAQ_FACTS,
    FIRST_NAMES,
    GENERAL_ARTICLES,
    ISSUES,
    LAST_NAMES,
    POLICIES,
    STATES,
    slug,
)

__all__ = ["ScaleConfig", "SCALES", "populate"]


@dataclass(frozen=True)
class ScaleConfig:
    """Size of a generated org."""

    agents: int
    accounts: int
    categories: int
    issues: int
    states: int
    cases: int
    start: date
    months: int
    extra_orders: int
    policy_case_share: float


SCALES: dict[str, ScaleConfig] = {
    "quick": ScaleConfig(30, 150, 6, 12, 8, 480, date(2022, 1, 1), 24, 320, 0.2),
    "deep": ScaleConfig(50, 420, 12, 20, 12, 1100, date(2022, 1, 1), 36, 800, 0.2),
}

_COMPANY_DOMAIN = "summitsports.example"
_TIME_ZONES = ("America/Los_Angeles", "America/Denver", "America/Chicago", "America/New_York")
_OPEN_STATUSES = (("New", 2), ("Working", 5), ("Escalated", 1))
_PRIORITIES = (("Low", 3), ("Medium", 5), ("High", 2), ("Critical", 0.5))
_GENERIC_RESOLUTIONS = (
    "I have logged the problem and emailed you the troubleshooting steps.",
    "I have escalated this to our product team and we will follow up within two business days.",
    "Please try the reset steps in our help center and reply here if the problem continues.",
    "I have noted the details on your case so the next agent has the full picture.",
)


class _Ids:
    """Deterministic 18-character ids: per object, a seeded offset plus a running counter."""

    def __init__(self, rng: random.Random) -> None:
        prefixes = {**KEY_PREFIXES, **AUXILIARY_PREFIXES}
        self._next = {name: rng.randrange(62**5, 62**6) for name in prefixes}
        self._prefixes = prefixes

    def new(self, object_name: str) -> str:
        """Next id of ``object_name``."""
        serial = self._next[object_name]
        self._next[object_name] = serial + 1 + (serial % 3 == 0)  # small gaps, like a real org
        return make_id(self._prefixes[object_name], serial)


@dataclass
class _Agent:
    id: str
    first: str
    last: str
    email: str
    speed: float
    activity: float
    transfer_rate: float
    strong: frozenset[int]


@dataclass
class _ProductInfo:
    id: str
    name: str
    category: str
    price: float
    sale_price: float
    popularity: float
    peak_month: int
    issue_weights: list[float]
    entry_ids: tuple[str, str] = ("", "")


@dataclass
class _CaseDraft:
    created: datetime
    order: int
    product: int
    issue: int
    account: int
    owners: list[int]
    closed: datetime | None
    status: str
    priority: str
    transfer_times: list[datetime] = field(default_factory=list)


def _weighted(rng: random.Random, weights: list[float]) -> int:
    return rng.choices(range(len(weights)), weights=weights)[0]


def _pick_agent(rng: random.Random, agents: list[_Agent], issue: int, exclude: set[int]) -> int:
    """Draw an agent for a case of ``issue``: activity-weighted, 6x for the agent's strong issues."""
    weights = [
        0.0 if index in exclude else agent.activity * (6 if issue in agent.strong else 1)
        for index, agent in enumerate(agents)
    ]
    return _weighted(rng, weights)


def _moment(day: date, minute_of_day: int) -> datetime:
    return datetime(day.year, day.month, day.day, minute_of_day // 60, minute_of_day % 60, tzinfo=UTC)


def populate(connection: sqlite3.Connection, seed: int, scale: str) -> None:
    """Fill the empty object tables of ``connection`` with a seeded org.

    Args:
        connection: Connection whose 16 tables exist and are empty (`org.create_tables`).
        seed: Random seed.
        scale: ``quick`` or ``deep`` (see `SCALES`).

    Raises:
        ValueError: For an unknown scale.
    """
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; use one of {sorted(SCALES)}")
    config = SCALES[scale]
    rng = random.Random(f"crmarena-org/{seed}/{scale}")
    ids = _Ids(rng)
    rows: dict[str, list[tuple]] = {name: [] for name in OBJECTS}
    start = datetime(config.start.year, config.start.month, config.start.day, tzinfo=UTC)
    end_day = add_months(config.start, config.months)
    end = datetime(end_day.year, end_day.month, end_day.day, tzinfo=UTC)

    # -- issues, agents ------------------------------------------------------------------------
    issues = rng.sample(range(len(ISSUES)), config.issues)
    issue_ids = [ids.new("Issue__c") for _ in issues]
    issue_hours = [rng.uniform(8, 60) for _ in issues]
    rows["Issue__c"] = [(issue_ids[i], ISSUES[issues[i]][0]) for i in range(len(issues))]

    names = rng.sample(
        [(first, last) for first in FIRST_NAMES for last in LAST_NAMES], config.agents + config.accounts
    )
    agents: list[_Agent] = []
    for first, last in names[: config.agents]:
        agent = _Agent(
            ids.new("User"),
            first,
            last,
            f"{first}.{last}@{_COMPANY_DOMAIN}".lower(),
            speed=rng.lognormvariate(0, 0.35),
            activity=rng.uniform(0.5, 1.5),
            transfer_rate=rng.choice((0.03, 0.08, 0.15, 0.25, 0.35)),
            strong=frozenset(rng.sample(range(len(issues)), 3)),
        )
        agents.append(agent)
        rows["User"].append(
            (
                agent.id,
                first,
                last,
                f"{first} {last}",
                (first[0] + last[:4]).lower(),
                agent.email,
                f"(555) {rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}",
                f"{first}.{last}@summitsports.crm".lower(),
                rng.choice(_TIME_ZONES),
                "en_US",
                "UTF-8",
                "en_US",
            )
        )

    # -- catalog, price books --------------------------------------------------------------------
    catalog_id = ids.new("ProdCatalog")
    products: list[_ProductInfo] = []
    for category in rng.sample(sorted(CATALOG), config.categories):
        category_id = ids.new("ProductCategory")
        rows["ProductCategory"].append((category_id, category, catalog_id))
        for item in CATALOG[category][1]:
            weights = [0.25] * len(issues)
            for weight, issue in zip((6.0, 2.5, 1.5), rng.sample(range(len(issues)), 3), strict=True):
                weights[issue] = weight
            info = _ProductInfo(
                ids.new("Product2"),
                item.name,
                category,
                item.price,
                round(item.price * 0.8, 2),
                popularity=rng.uniform(0.6, 1.8),
                peak_month=rng.randrange(12),
                issue_weights=weights,
            )
            products.append(info)
            rows["Product2"].append((info.id, item.name, item.description, 1, f"SKU-{len(products):05d}"))
            rows["ProductCategoryProduct"].append((ids.new("ProductCategoryProduct"), category_id, info.id))
    standard, sale = ids.new("Pricebook2"), ids.new("Pricebook2")
    rows["Pricebook2"] = [
        (
            standard,
            "Standard Price Book",
            "List prices for all products",
            1,
            format_datetime(start - timedelta(days=365)),
            format_datetime(end + timedelta(days=365)),
        ),
        (
            sale,
            "Spring Sale",
            "Seasonal 20% discount (inactive)",
            0,
            format_datetime(start + timedelta(days=60)),
            format_datetime(start + timedelta(days=120)),
        ),
    ]
    for info in products:
        entry_standard, entry_sale = ids.new("PricebookEntry"), ids.new("PricebookEntry")
        info.entry_ids = (entry_standard, entry_sale)
        rows["PricebookEntry"] += [
            (entry_standard, standard, info.id, info.price),
            (entry_sale, sale, info.id, info.sale_price),
        ]

    # -- regions, accounts, contacts -------------------------------------------------------------
    states = rng.sample(STATES, config.states)
    factors = [0.6 + 0.9 * i / (len(states) - 1) for i in range(len(states))]
    rng.shuffle(factors)
    state_weights = [rng.uniform(0.6, 1.4) for _ in states]
    account_ids, contact_ids, account_state, account_first, account_email = [], [], [], [], []
    for first, last in names[config.agents :]:
        state = _weighted(rng, state_weights)
        account_id, contact_id = ids.new("Account"), ids.new("Contact")
        email = f"{first}.{last}{rng.randrange(10, 99)}@mail.example".lower()
        rows["Account"].append(
            (
                account_id,
                first,
                last,
                f"{first} {last}",
                email,
                f"(555) {rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}",
                make_id(AUXILIARY_PREFIXES["RecordType"], 7_000_001),
                rng.choice(states[state][1]),
                states[state][0],
            )
        )
        rows["Contact"].append(
            (
                contact_id,
                account_id,
                first,
                last,
                f"{first} {last}",
                email,
                agents[rng.randrange(len(agents))].id,
            )
        )
        account_ids.append(account_id)
        contact_ids.append(contact_id)
        account_state.append(state)
        account_first.append(first)
        account_email.append(email)

    # -- cases (drafts first, ids after sorting by time) ----------------------------------------
    span = [add_months(config.start, k) for k in range(config.months)]
    popularity = [p.popularity for p in products]
    drafts: list[_CaseDraft] = []
    for index in range(config.cases):
        product = _weighted(rng, popularity)
        peak = products[product].peak_month
        month_weights = []
        for first_day in span:
            distance = min((first_day.month - 1 - peak) % 12, (peak - first_day.month + 1) % 12)
            month_weights.append(1 + 5 * math.exp(-(distance**2) / 1.2))
        first_day = span[_weighted(rng, month_weights)]
        days = (add_months(first_day, 1) - first_day).days
        created = _moment(first_day + timedelta(days=rng.randrange(days)), rng.randrange(8 * 60, 20 * 60))
        issue = _weighted(rng, products[product].issue_weights)
        account = rng.randrange(len(account_ids))
        owners = [_pick_agent(rng, agents, issue, set())]
        if rng.random() < agents[owners[0]].transfer_rate:
            for _ in range(1 if rng.random() < 0.8 else 2):
                owners.append(_pick_agent(rng, agents, issue, set(owners)))
        final = agents[owners[-1]]
        minutes = (
            issue_hours[issue]
            * 60
            * final.speed
            * factors[account_state[account]]
            * rng.lognormvariate(0, 0.25)
            * (0.7 if issue in final.strong else 1.0)
        )
        minutes = max(15, int(round(minutes / 15)) * 15)
        closed: datetime | None = created + timedelta(minutes=minutes)
        if closed >= end or rng.random() < 0.04:
            closed = None
        status = (
            "Closed"
            if closed
            else rng.choices([s for s, _ in _OPEN_STATUSES], [w for _, w in _OPEN_STATUSES])[0]
        )
        horizon = (closed or created + timedelta(hours=6)) - created
        transfer_times = [created + horizon * (k + 1) / len(owners) for k in range(len(owners) - 1)]
        transfer_times = [t.replace(second=0, microsecond=0) for t in transfer_times]
        priority = rng.choices([p for p, _ in _PRIORITIES], [w for _, w in _PRIORITIES])[0]
        drafts.append(
            _CaseDraft(
                created, index, product, issue, account, owners, closed, status, priority, transfer_times
            )
        )
    drafts.sort(key=lambda d: (d.created, d.order))

    # -- orders: one per case plus extra purchases ------------------------------------------------
    orders: list[
        tuple[date, int, int, str, list[int], int | None]
    ] = []  # day, seq, account, status, products, case
    for position, draft in enumerate(drafts):
        items = [draft.product]
        if rng.random() < 0.25:
            items.append(rng.randrange(len(products)))
        day = draft.created.date() - timedelta(days=rng.randint(2, 40))
        orders.append((day, len(orders), draft.account, "Activated", items, position))
    by_category: dict[str, list[int]] = {}
    for index, info in enumerate(products):
        by_category.setdefault(info.category, []).append(index)
    total_days = (end_day - config.start).days
    for _ in range(config.extra_orders):
        day = config.start + timedelta(days=rng.randrange(total_days))
        status = "Activated" if rng.random() < 0.85 else "Draft"
        if rng.random() < 0.15:
            items = rng.sample(by_category[rng.choice(sorted(by_category))], 2)
        else:
            items = rng.sample(range(len(products)), rng.choice((1, 1, 2, 3)))
        orders.append((day, len(orders), rng.randrange(len(account_ids)), status, items, None))
    orders.sort(key=lambda o: (o[0], o[1]))
    case_item: dict[int, str] = {}
    for day, _, account, status, items, case_position in orders:
        order_id = ids.new("Order")
        rows["Order"].append((order_id, account_ids[account], day.isoformat(), standard, status))
        for slot, product in enumerate(items):
            item_id = ids.new("OrderItem")
            info = products[product]
            rows["OrderItem"].append(
                (item_id, order_id, info.entry_ids[0], info.id, float(rng.choice((1, 1, 1, 2))), info.price)
            )
            if slot == 0 and case_position is not None:
                case_item[case_position] = item_id

    # -- case rows, history ------------------------------------------------------------------------
    history: list[tuple[datetime, int, int, str, str | None, str | None, str]] = []
    case_ids: list[str] = []
    for position, draft in enumerate(drafts):
        case_id = ids.new("Case")
        case_ids.append(case_id)
        info = products[draft.product]
        issue_name, symptom = ISSUES[issues[draft.issue]]
        rows["Case"].append(
            (
                case_id,
                account_ids[draft.account],
                contact_ids[draft.account],
                agents[draft.owners[-1]].id,
                draft.status,
                draft.priority,
                f"{issue_name} on my {info.name}",
                f"I'm writing about my {info.name}. It looks like a {issue_name.lower()} problem: {symptom}.",
                format_datetime(draft.created),
                format_datetime(draft.closed) if draft.closed else None,
                issue_ids[draft.issue],
                case_item[position],
            )
        )
        history.append((draft.created, position, 0, "Case Creation", None, None, case_id))
        history.append(
            (draft.created, position, 1, "Owner Assignment", None, agents[draft.owners[0]].id, case_id)
        )
        for k, moment in enumerate(draft.transfer_times):
            history.append(
                (
                    moment,
                    position,
                    2 + k,
                    "Owner Assignment",
                    agents[draft.owners[k]].id,
                    agents[draft.owners[k + 1]].id,
                    case_id,
                )
            )
        if draft.closed:
            history.append((draft.closed, position, 9, "Case Closed", None, None, case_id))
    history.sort(key=lambda h: (h[0], h[1], h[2]))
    rows["CaseHistory__c"] = [
        (ids.new("CaseHistory__c"), case_id, kind, old, new, format_datetime(moment))
        for moment, _, _, kind, old, new, case_id in history
    ]

    # -- knowledge -----------------------------------------------------------------------------------
    for policy in POLICIES:
        rule = policy.rule.format(limit=policy.limit)
        rows["Knowledge__kav"].append(
            (
                ids.new("Knowledge__kav"),
                policy.title,
                f"Company policy: {policy.title.lower()}.",
                f"Q: {policy.question}\nA: {rule}",
                slug(policy.title),
                "Online",
                "en_US",
            )
        )
    refund = POLICIES[0]
    rows["Knowledge__kav"].append(
        (
            ids.new("Knowledge__kav"),
            refund.title,
            "Outdated 2021 version of the refund policy.",
            f"Q: {refund.question}\nA: {refund.rule.format(limit=60)}",
            slug(refund.title) + "-2021",
            "Archived",
            "en_US",
        )
    )
    for title, summary, pairs in GENERAL_ARTICLES:
        body = "\n\n".join(f"Q: {q}\nA: {a}" for q, a, _ in pairs)
        rows["Knowledge__kav"].append(
            (ids.new("Knowledge__kav"), title, summary, body, slug(title), "Online", "en_US")
        )
    for info in products:
        pairs = []
        for fact in FAQ_FACTS:
            if fact.categories and info.category not in fact.categories:
                continue
            pairs.append(f"Q: {fact.question.format(product=info.name)}\nA: {rng.choice(fact.answers)}")
        rows["Knowledge__kav"].append(
            (
                ids.new("Knowledge__kav"),
                f"{info.name} FAQ",
                f"Care, warranty and usage answers for the {info.name}.",
                "\n\n".join(pairs),
                slug(info.name) + "-faq",
                "Online",
                "en_US",
            )
        )

    # -- chats and emails ----------------------------------------------------------------------------
    closed_positions = [p for p, d in enumerate(drafts) if d.closed]
    policy_cases = set(rng.sample(closed_positions, round(config.policy_case_share * len(drafts))))
    for position, draft in enumerate(drafts):
        info = products[draft.product]
        agent = agents[draft.owners[-1]]
        first = account_first[draft.account]
        _, symptom = ISSUES[issues[draft.issue]]
        statement = rng.choice(_GENERIC_RESOLUTIONS)
        channel = "chat" if rng.random() < 0.3 else ("email" if rng.random() < 0.5 else None)
        if position in policy_cases:
            policy = rng.choice(POLICIES)
            violating = rng.random() < 0.55
            value = rng.choice(policy.violating_values if violating else policy.compliant_values)
            statement = policy.action.format(value=value)
            channel = "chat" if rng.random() < 0.65 else "email"
        if channel == "chat":
            body = "\n".join(
                (
                    f"Customer: Hi, I need help with my {info.name}. {symptom[0].upper() + symptom[1:]}.",
                    f"Agent: Thanks for reaching out, {first}. I'm sorry to hear that. "
                    "Let me look at your order.",
                    "Customer: Thanks, I'd like this sorted out quickly.",
                    f"Agent: {statement}",
                    "Customer: Thank you for your help.",
                )
            )
            rows["LiveChatTranscript"].append(
                (
                    ids.new("LiveChatTranscript"),
                    case_ids[position],
                    account_ids[draft.account],
                    contact_ids[draft.account],
                    agent.id,
                    body,
                    format_datetime(draft.created + timedelta(minutes=rng.randrange(10, 40))),
                    ids.new("LiveChatVisitor"),
                )
            )
        rows["EmailMessage"].append(
            (
                ids.new("EmailMessage"),
                case_ids[position],
                rows["Case"][position][6],
                rows["Case"][position][7],
                account_email[draft.account],
                agent.id,
                format_datetime(draft.created + timedelta(minutes=5)),
            )
        )
        if channel == "email":
            reply_at = (
                draft.created + ((draft.closed or draft.created + timedelta(hours=8)) - draft.created) / 2
            )
            rows["EmailMessage"].append(
                (
                    ids.new("EmailMessage"),
                    case_ids[position],
                    "RE: " + rows["Case"][position][6],
                    f"Hi {first},\n\n{statement}\n\nBest regards,\n"
                    f"{agent.first} {agent.last}\nSummit Sports Support",
                    agent.email,
                    contact_ids[draft.account],
                    format_datetime(reply_at.replace(microsecond=0)),
                )
            )

    for object_name, fields in OBJECTS.items():
        if rows[object_name]:
            marks = ", ".join("?" * len(fields))
            connection.executemany(f'INSERT INTO "{object_name}" VALUES ({marks})', rows[object_name])
