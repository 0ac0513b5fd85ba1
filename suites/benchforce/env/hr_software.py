"""The ``hr_software`` environment: support for a SaaS HR product's customer organizations,
their subscriptions, their users and the service's downtime log, with upstream's 15 tool
names, argument names and argument types (reference A4).

Our own seeded data (never upstream's): organization names from our own word lists, ids in
upstream's style (``ORG-000004``, ``SUB-000004``, ``USR-000011``, ``DT-000007``). "Now" is
fixed at :data:`NOW_TS` (2024-05-15 15:00 UTC) for the policy and the tools: no real date is
read anywhere (upstream appended the machine's date to its policy, A10.6).

The business rules are data, used by both the tools and the policy text: :data:`MIN_SEATS`,
:data:`TIER_PRICES`, :data:`VOLUME_DISCOUNTS`, and the SLA credit table :data:`SLA_TARGETS`,
:data:`CREDIT_RATES`, :data:`MINUTES_PER_MONTH` (upstream's numbers).

Differences from upstream's tools (each documented where it lives): a refused call raises
:class:`EnvToolError` (upstream returned ``{"error": ...}`` as a normal result);
``verify_downtime`` only matches outages of the subscription's own organization and compares
times as times (upstream matched any organization's outage by string comparison and crashed
on an unknown subscription); ``calculate`` evaluates arithmetic without ``eval``; seat and
tier changes also keep ``volume_discount_percentage`` in step with the new price; service
credits are rounded to cents. ``get_all_users_in_org`` lists at most
:data:`USER_LIST_CAP` users, as upstream does; our organizations have exactly that many, so
the list is always complete here.

Projection judged (:func:`projection`): each subscription's tier, seats, price per seat,
volume discount and total price; each user's status and (sorted) permissions; whether the
conversation was handed to a human agent. Every write tool changes one of them; reads never do.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import operator
import random
import re
from pathlib import Path
from typing import Any

from suites.benchforce.env.base import (
    ENTRY_CLOSING,
    ENTRY_COUNTS,
    Environment,
    EnvToolError,
    Integrity,
    ToolSpec,
    UpstreamData,
    broken_entry,
    copy_world,
    entry_id,
    gold_call,
    make_entry,
    object_params,
    string_param,
)
from suites.benchforce.env.upstream_files import (
    RESTORE,
    check_integrity,
    entry_id_problem,
    prepare_error,
    read_json,
)

__all__ = [
    "CREDIT_RATES",
    "ENTRY_COUNT",
    "ENV",
    "MINUTES_PER_MONTH",
    "MIN_SEATS",
    "NOW",
    "NOW_TS",
    "SLA_TARGETS",
    "TIER_PRICES",
    "USER_LIST_CAP",
    "VOLUME_DISCOUNTS",
    "load_upstream",
    "service_credits",
]

NOW = "2024-05-15"
"""The fixed date: "today" for the policy."""
NOW_TS = "2024-05-15T15:00:00Z"
"""The fixed clock the tools use (UTC)."""
_NOW = dt.datetime(2024, 5, 15, 15, 0, tzinfo=dt.UTC)

TIERS = ("basic", "professional", "enterprise")
"""Subscription tiers, lowest first."""
MIN_SEATS = {"basic": 5, "professional": 25, "enterprise": 100}
"""Fewest seats a tier allows."""
TIER_PRICES = {"basic": 10, "professional": 20, "enterprise": 40}
"""Monthly price per seat (USD) a tier change sets."""
VOLUME_DISCOUNTS = ((1000, 20), (500, 15), (100, 10))
"""``(seats at least, percent off)``, largest first; fewer than 100 seats get no discount."""
SLA_TARGETS = {"enterprise": 99.99, "professional": 99.95, "basic": 99.9}
"""Monthly availability promised per tier (percent)."""
CREDIT_RATES = {"enterprise": 10, "professional": 5, "basic": 3}
"""Credit per 0.1 percentage point below the target, in percent of the monthly fee."""
MINUTES_PER_MONTH = 43200
"""A month for the SLA: 30 days of 1440 minutes."""
CREDIT_WINDOW_DAYS = 30
"""An incident older than this (before now) cannot be verified or credited."""
USER_LIST_CAP = 3
"""Most users ``get_all_users_in_org`` lists (upstream's cap)."""
STATUSES = ("active", "pending", "suspended", "terminated", "locked")
PERMISSIONS = (
    "admin",
    "manage_users",
    "manage_billing",
    "manage_security",
    "manage_team",
    "view_reports",
    "approve_requests",
    "view_own_profile",
    "submit_requests",
    "access_api",
    "deploy_code",
    "run_reports",
    "export_data",
    "manage_documents",
    "approve_basic_requests",
)
EXCLUSION_TYPES = ("maintenance", "force_majeure", "customer_caused", "third_party")

TABLES = ("organizations", "subscriptions", "users", "downtime_logs")
"""The world's data tables (plus ``handoff``, the conversation's hand-over flag)."""


def volume_discount(seats: int) -> int:
    """Percent off for ``seats`` (:data:`VOLUME_DISCOUNTS`)."""
    return next((pct for least, pct in VOLUME_DISCOUNTS if seats >= least), 0)


def monthly_total(price_per_seat: float, seats: int) -> float:
    """``price_per_seat * seats * (1 - discount)``, rounded to cents."""
    return round(price_per_seat * seats * (100 - volume_discount(seats)) / 100, 2)


def service_credits(tier: str, monthly_fee: float, downtime_minutes: int) -> dict[str, Any]:
    """The SLA credit for ``downtime_minutes`` of verified downtime in one month.

    ``uptime = 100 * (1 - downtime_minutes / MINUTES_PER_MONTH)``; when it is below the tier's
    target, ``credit = monthly_fee * CREDIT_RATES[tier] / 100 * (target - uptime) / 0.1``,
    capped at the monthly fee and rounded to cents (the policy's credit table, upstream's
    formula). Returns ``{"credits", "actual_uptime", "sla_target", "percentage_below_sla"}``
    (percentages rounded to 6 places), or ``{"credits": 0, "message"}`` with no breach.
    """
    uptime = 100 * (1 - downtime_minutes / MINUTES_PER_MONTH)
    target = SLA_TARGETS[tier]
    if uptime >= target:
        return {"credits": 0, "message": f"No SLA breach. Actual uptime: {uptime:.3f}%"}
    below = target - uptime
    credit = min(monthly_fee * CREDIT_RATES[tier] / 100 * below / 0.1, monthly_fee)
    return {
        "credits": round(credit, 2),
        "actual_uptime": round(uptime, 6),
        "sla_target": target,
        "percentage_below_sla": round(below, 6),
    }


# -- the world ---------------------------------------------------------------------------------

_ORG_FIRST = (
    "Amberline",
    "Bluefjord",
    "Cedarpoint",
    "Driftwood",
    "Emberfield",
    "Foxglove",
    "Granitebay",
    "Harborlight",
    "Ironwood",
    "Juniper",
    "Kestrel",
    "Lanternhill",
)
_ORG_SECOND = (
    "Analytics",
    "Foods",
    "Robotics",
    "Studios",
    "Logistics",
    "Health",
    "Textiles",
    "Energy",
    "Media",
    "Outfitters",
    "Labs",
    "Freight",
)
_CITIES = ("Springfield", "Lakeside", "Ridgeview")
_INDUSTRIES = ("technology", "healthcare", "finance", "manufacturing", "retail", "logistics", "media")
_REGIONS = ("us-east", "us-west", "eu-west", "eu-central", "ap-south")
_LANGUAGES = ("en-US", "en-GB", "de-DE", "fr-FR", "es-ES", "ja-JP")
_PAYMENTS = ("credit_card", "ach", "wire_transfer", "sepa", "paypal")
_FIRST = (
    "Aiko",
    "Bruno",
    "Cleo",
    "Dario",
    "Esme",
    "Felix",
    "Greta",
    "Hugo",
    "Ines",
    "Jasper",
    "Kira",
    "Leon",
    "Maren",
    "Nico",
    "Odile",
    "Pavel",
    "Quinn",
    "Rhea",
    "Silas",
    "Tova",
)
_LAST = (
    "Ashdown",
    "Bellamy",
    "Corrigan",
    "Delacroix",
    "Everly",
    "Fitzroy",
    "Gallardo",
    "Holloway",
    "Iverson",
    "Kessler",
    "Lockhart",
    "Marchetti",
)
_DEPARTMENTS = ("IT", "HR", "Finance", "Engineering", "Sales", "Operations", "Security", "Research")
_ROLES = ("manager", "employee", "developer", "analyst", "engineer", "designer")
_SKILLS = ("python", "sql", "security", "data_analysis", "project_management", "cloud", "agile")
_CORE_MODULES = (
    "employee_management",
    "time_attendance",
    "payroll",
    "benefits",
    "performance",
    "learning",
    "recruitment",
    "reporting",
)
_OPTIONAL_MODULES = ("workforce_planning", "compensation", "succession_planning", "expense_management")
_SEATS = {
    "basic": (12, 40, 85, 160),
    "professional": (60, 140, 420, 760),
    "enterprise": (180, 480, 900, 1250),
}
N_ORGS = 12
"""Organizations in our world (4 per tier)."""


def _ts(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sid(n: int) -> str:
    return f"SUB-{n:06d}"


def build_world(seed: int) -> dict[str, Any]:
    """The product's tables for ``seed`` (byte-identical per seed): 12 organizations (4 per
    tier), one subscription each, 3 users each (the first an admin), and 3 downtime log
    entries per organization (one within the credit window, one within it but excluded as
    maintenance, one older than the window)."""
    rng = random.Random(f"benchforce-hr_software-{seed}")
    firsts, seconds = list(_ORG_FIRST), list(_ORG_SECOND)
    rng.shuffle(firsts)
    rng.shuffle(seconds)
    people = [(f, la) for f in _FIRST for la in _LAST]
    rng.shuffle(people)
    organizations: dict[str, Any] = {}
    subscriptions: dict[str, Any] = {}
    users: dict[str, Any] = {}
    logs: dict[str, Any] = {}
    seats_left = {t: list(v) for t, v in _SEATS.items()}
    for i in range(N_ORGS):
        n = i + 1
        oid, sid = f"ORG-{n:06d}", _sid(n)
        name = f"{firsts[i]} {seconds[i]}"
        domain = f"{firsts[i].lower()}{seconds[i].lower()}.example"
        tier = TIERS[i % 3]
        seats = seats_left[tier].pop(rng.randrange(len(seats_left[tier])))
        region = rng.choice(_REGIONS)
        organizations[oid] = {
            "id": oid,
            "name": name,
            "primary_email": f"admin@{domain}",
            "billing_address": f"{10 + 7 * n} Harbor Road, {rng.choice(_CITIES)}",
            "payment_methods": sorted(rng.sample(_PAYMENTS, 2)),
            "subscription_id": sid,
            "industry": rng.choice(_INDUSTRIES),
            "size_category": ("small", "medium", "large", "enterprise")[min(3, seats // 300)],
            "primary_region": region,
            "language": rng.choice(_LANGUAGES),
            "created_date": _ts(_NOW - dt.timedelta(days=rng.randint(400, 3000))),
            "status": "active",
        }
        start = _NOW - dt.timedelta(days=rng.randint(60, 300))
        price = TIER_PRICES[tier]
        subscriptions[sid] = {
            "id": sid,
            "org_id": oid,
            "tier": tier,
            "seats": seats,
            "start_date": _ts(start.replace(hour=0, minute=0)),
            "renewal_date": _ts(start.replace(hour=0, minute=0) + dt.timedelta(days=365)),
            "billing_frequency": rng.choice(("monthly", "annual")),
            "auto_renewal": rng.random() < 0.7,
            "price_per_seat": price,
            "volume_discount_percentage": volume_discount(seats),
            "total_price": monthly_total(price, seats),
            "modules": {
                **{m: True for m in _CORE_MODULES},
                **{m: tier != "basic" and rng.random() < 0.5 for m in _OPTIONAL_MODULES},
            },
            "support_level": {"basic": "standard", "professional": "premium", "enterprise": "platinum"}[tier],
            "usage_limits": {
                "api_calls_per_day": {"basic": 1000, "professional": 10000, "enterprise": "unlimited"}[tier],
                "concurrent_users": seats,
            },
        }
        for j in range(USER_LIST_CAP):
            uid = f"USR-{len(users) + 1:06d}"
            first, last = people.pop()
            admin = j == 0
            roles = ["admin"] if admin else sorted(rng.sample(_ROLES, rng.randint(1, 2)))
            perms = (
                ["admin", "manage_users", "manage_billing"]
                if admin
                else sorted(rng.sample(PERMISSIONS[4:], rng.randint(2, 4)))
            )
            users[uid] = {
                "id": uid,
                "org_id": oid,
                "name": {"first_name": first, "last_name": last},
                "email": f"{first.lower()}.{last.lower()}@{domain}",
                "roles": roles,
                "department": "IT" if admin else rng.choice(_DEPARTMENTS),
                "manager_id": None if admin else f"USR-{len(users) + 1 - j:06d}",
                "last_login": _ts(_NOW - dt.timedelta(days=rng.randint(0, 90), minutes=rng.randint(0, 900))),
                "two_factor_enabled": admin or rng.random() < 0.6,
                "status": "active" if admin else rng.choice(("active", "active", "suspended", "locked")),
                "permissions": perms,
                "title": "IT Administrator"
                if admin
                else f"{rng.choice(('Senior', 'Junior', 'Lead'))} {roles[0]}",
                "skills": sorted(rng.sample(_SKILLS, rng.randint(0, 3))),
            }
        for kind in ("credited", "excluded", "old"):
            lid = f"DT-{len(logs) + 1:06d}"
            days = rng.randint(2, 26) if kind != "old" else rng.randint(40, 80)
            begin = (_NOW - dt.timedelta(days=days)).replace(
                hour=rng.randint(1, 20), minute=rng.choice((0, 15, 30, 45))
            )
            minutes = rng.choice((30, 45, 60, 75, 90, 120, 150))
            logs[lid] = {
                "id": lid,
                "org_id": oid,
                "start_time": _ts(begin),
                "end_time": _ts(begin + dt.timedelta(minutes=minutes)),
                "duration_minutes": minutes,
                "severity": rng.choice(("critical", "high", "medium")),
                "affected_regions": [region],
                "affected_services": sorted(rng.sample(_CORE_MODULES, 2)),
                "exclusions": (
                    [{"type": "maintenance", "description": "Announced database upgrade window"}]
                    if kind == "excluded"
                    else []
                ),
                "resolution": rng.choice(("Automatic recovery", "Service restart", "Failover to backup")),
                "impact_description": f"Affecting 2 service(s) in {region}",
                "detected_by": rng.choice(("monitoring_system", "customer_report")),
            }
    return {
        "organizations": organizations,
        "subscriptions": subscriptions,
        "users": users,
        "downtime_logs": logs,
        "handoff": {"transferred": False},
    }


def projection(state: dict[str, Any]) -> dict[str, Any]:
    """The business fields judging compares (module docstring); plain JSON, keyed by id."""
    sub = ("tier", "seats", "price_per_seat", "volume_discount_percentage", "total_price")
    return {
        "subscriptions": {k: {f: v.get(f) for f in sub} for k, v in state["subscriptions"].items()},
        "users": {
            k: {"status": v.get("status"), "permissions": sorted(v.get("permissions") or [])}
            for k, v in state["users"].items()
        },
        "handoff": {"transferred": bool((state.get("handoff") or {}).get("transferred"))},
    }


# -- lookups -----------------------------------------------------------------------------------


def _org(state: dict[str, Any], org_id: str) -> dict[str, Any]:
    org = state["organizations"].get(org_id)
    if org is None:
        raise EnvToolError("not_found", f"Organization '{org_id}' not found")
    return org


def _user(state: dict[str, Any], user_id: str) -> dict[str, Any]:
    user = state["users"].get(user_id)
    if user is None:
        raise EnvToolError("not_found", f"User '{user_id}' not found")
    return user


def _subscription(state: dict[str, Any], subscription_id: str) -> dict[str, Any]:
    sub = state["subscriptions"].get(subscription_id)
    if sub is None:
        raise EnvToolError("not_found", f"Subscription '{subscription_id}' not found")
    return sub


def _member(state: dict[str, Any], user_id: str, org_id: str) -> dict[str, Any]:
    _org(state, org_id)
    user = _user(state, user_id)
    if user["org_id"] != org_id:
        raise EnvToolError("conflict", f"User '{user_id}' does not belong to organization '{org_id}'")
    return user


def _when(text: str) -> dt.datetime:
    """An ISO 8601 time (``Z`` or an offset; none reads as UTC)."""
    try:
        when = dt.datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        raise EnvToolError(
            "invalid_value", f"Invalid timestamp {text!r}: use ISO 8601, e.g. 2024-05-15T15:00:00Z"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


# -- tools (pure functions of the state) ------------------------------------------------------


def find_user_by_email(state: dict[str, Any], email: str) -> dict[str, Any]:
    want = email.strip().casefold()
    for uid, u in sorted(state["users"].items()):
        if u["email"].casefold() == want:
            keys = ("name", "email", "department", "roles", "org_id", "status")
            return {"user_id": uid, **{k: u.get(k) for k in keys}}
    raise EnvToolError("not_found", f"No user found with the email address '{email}'")


def get_user_details(state: dict[str, Any], user_id: str) -> dict[str, Any]:
    return dict(_user(state, user_id))


def get_all_users_in_org(state: dict[str, Any], org_id: str) -> list[dict[str, Any]]:
    _org(state, org_id)
    keys = ("name", "email", "department", "roles", "status")
    members = [(uid, u) for uid, u in sorted(state["users"].items()) if u["org_id"] == org_id]
    return [{"id": uid, **{k: u.get(k) for k in keys}} for uid, u in members[:USER_LIST_CAP]]


def modify_user_status(state: dict[str, Any], user_id: str, new_status: str, org_id: str) -> dict[str, Any]:
    user = _member(state, user_id, org_id)
    if new_status not in STATUSES:
        raise EnvToolError(
            "invalid_value", f"Invalid status {new_status!r}; must be one of: {', '.join(STATUSES)}"
        )
    user["status"] = new_status
    return {"success": True, "user_id": user_id, "message": f"User status updated to {new_status}"}


def modify_user_permissions(
    state: dict[str, Any], user_id: str, new_permissions: list[str], org_id: str
) -> dict[str, Any]:
    user = _member(state, user_id, org_id)
    bad = [p for p in new_permissions if p not in PERMISSIONS]
    if bad:
        raise EnvToolError(
            "invalid_value",
            f"Invalid permissions: {', '.join(map(str, bad))}; valid ones: {', '.join(sorted(PERMISSIONS))}",
        )
    user["permissions"] = list(new_permissions)
    return {
        "success": True,
        "user_id": user_id,
        "message": f"User permissions updated to: {', '.join(new_permissions)}",
    }


def find_org_by_id(state: dict[str, Any], org_id: str) -> dict[str, Any]:
    _org(state, org_id)
    return {"found": True, "org_id": org_id}


def find_org_by_name(state: dict[str, Any], query: str) -> dict[str, Any]:
    want = query.strip().casefold()
    found = [dict(o) for _, o in sorted(state["organizations"].items()) if want in o["name"].casefold()][:10]
    if not found:
        raise EnvToolError("not_found", f"No organization name contains {query!r}")
    return {"found": True, "organizations": found}


def get_org_details(state: dict[str, Any], org_id: str) -> dict[str, Any]:
    return dict(_org(state, org_id))


def get_subscription_details(state: dict[str, Any], subscription_id: str) -> dict[str, Any]:
    return dict(_subscription(state, subscription_id))


def modify_subscription_seats(
    state: dict[str, Any], subscription_id: str, new_seat_count: int
) -> dict[str, Any]:
    sub = _subscription(state, subscription_id)
    least = MIN_SEATS[sub["tier"]]
    if new_seat_count < least:
        raise EnvToolError("invalid_value", f"The {sub['tier']} tier needs at least {least} seats")
    if new_seat_count < sub["seats"]:
        raise EnvToolError("conflict", "Seats can only be reduced at renewal")
    sub["seats"] = new_seat_count
    sub["volume_discount_percentage"] = volume_discount(new_seat_count)
    sub["total_price"] = monthly_total(sub["price_per_seat"], new_seat_count)
    return {"success": True, "message": f"Updated to {new_seat_count} seats", "new_total": sub["total_price"]}


def modify_subscription_tier(state: dict[str, Any], subscription_id: str, new_tier: str) -> dict[str, Any]:
    sub = _subscription(state, subscription_id)
    if new_tier not in TIERS:
        raise EnvToolError("invalid_value", f"Invalid tier {new_tier!r}; must be one of: {', '.join(TIERS)}")
    if TIERS.index(new_tier) < TIERS.index(sub["tier"]):
        raise EnvToolError("conflict", "A tier can only be downgraded at renewal")
    if sub["seats"] < MIN_SEATS[new_tier]:
        raise EnvToolError("invalid_value", f"The {new_tier} tier needs at least {MIN_SEATS[new_tier]} seats")
    sub["tier"] = new_tier
    sub["price_per_seat"] = TIER_PRICES[new_tier]
    sub["volume_discount_percentage"] = volume_discount(sub["seats"])
    sub["total_price"] = monthly_total(TIER_PRICES[new_tier], sub["seats"])
    return {"success": True, "message": f"Updated to {new_tier} tier", "new_total": sub["total_price"]}


def verify_downtime(state: dict[str, Any], subscription_id: str, incident_timestamp: str) -> dict[str, Any]:
    sub = _subscription(state, subscription_id)
    if sub["tier"] not in ("professional", "enterprise"):
        raise EnvToolError(
            "not_available", "Downtime logs are kept only for professional and enterprise subscriptions"
        )
    when = _when(incident_timestamp)
    if (_NOW - when).days > CREDIT_WINDOW_DAYS:
        raise EnvToolError(
            "invalid_value",
            f"Incidents can only be verified within {CREDIT_WINDOW_DAYS} days (now is {NOW_TS})",
        )
    for _, log in sorted(state["downtime_logs"].items()):
        if log["org_id"] != sub["org_id"]:
            continue
        begin, end = _when(log["start_time"]), _when(log["end_time"])
        if begin <= when <= end:
            if any(e.get("type") in EXCLUSION_TYPES for e in log.get("exclusions") or []):
                return {"verified": False, "message": "Downtime was due to an excluded event"}
            minutes = int((end - begin).total_seconds() // 60)
            return {"verified": True, "duration_minutes": minutes, "tier": sub["tier"]}
    return {"verified": False, "message": "No downtime found at the specified time"}


def calculate_service_credits(
    state: dict[str, Any], subscription_id: str, downtime_minutes: int
) -> dict[str, Any]:
    sub = _subscription(state, subscription_id)
    if downtime_minutes < 0:
        raise EnvToolError("invalid_value", "Downtime minutes cannot be negative")
    return service_credits(sub["tier"], float(sub["total_price"]), downtime_minutes)


def transfer_to_human_agents(state: dict[str, Any], reason: str) -> dict[str, Any]:
    state.setdefault("handoff", {})["transferred"] = True
    return {"status": "transferred", "message": "Transferring to a human agent", "reason": reason}


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


def _arith(node: ast.AST) -> int | float:
    if isinstance(node, ast.Expression):
        return _arith(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arith(node.left), _arith(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_arith(node.operand))
    raise ValueError("only numbers, + - * / and parentheses are allowed")


def calculate(state: dict[str, Any], expression: str) -> dict[str, Any]:
    if not expression.strip() or any(c not in "0123456789+-*/(). " for c in expression):
        raise EnvToolError(
            "invalid_value", "Only numbers, + - * / and parentheses are allowed in the expression"
        )
    try:
        result = _arith(ast.parse(expression.strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError) as exc:
        raise EnvToolError("invalid_value", f"Cannot calculate {expression!r}: {exc}") from None
    return {"result": result}


_ORG_ID = string_param("The organization ID, like ORG-000004.")
_USER_ID = string_param("The user ID, like USR-000011.")
_SUB_ID = string_param("The subscription ID, like SUB-000004.")
TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec(
            "find_user_by_email",
            "Look up a user by email address.",
            object_params({"email": string_param("The user's email address.")}),
            find_user_by_email,
        ),
        ToolSpec(
            "get_user_details",
            "Get a user's full record: roles, department, permissions, skills and status.",
            object_params({"user_id": _USER_ID}),
            get_user_details,
        ),
        ToolSpec(
            "get_all_users_in_org",
            f"List the users of an organization (at most {USER_LIST_CAP}).",
            object_params({"org_id": _ORG_ID}),
            get_all_users_in_org,
        ),
        ToolSpec(
            "modify_user_status",
            f"Set a user's status ({', '.join(STATUSES)}).",
            object_params(
                {
                    "user_id": _USER_ID,
                    "new_status": string_param(f"One of: {', '.join(STATUSES)}."),
                    "org_id": _ORG_ID,
                }
            ),
            modify_user_status,
            "write",
        ),
        ToolSpec(
            "modify_user_permissions",
            "Replace a user's permissions with the given list.",
            object_params(
                {
                    "user_id": _USER_ID,
                    "new_permissions": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": f"The complete new list; valid: {', '.join(PERMISSIONS)}.",
                    },
                    "org_id": _ORG_ID,
                }
            ),
            modify_user_permissions,
            "write",
        ),
        ToolSpec(
            "find_org_by_id",
            "Check that an organization ID exists.",
            object_params({"org_id": _ORG_ID}),
            find_org_by_id,
        ),
        ToolSpec(
            "find_org_by_name",
            "Find organizations whose name contains the query (case-insensitive; at most 10).",
            object_params({"query": string_param("Part of the organization's name.")}),
            find_org_by_name,
        ),
        ToolSpec(
            "get_org_details",
            "Get an organization's record: contacts, subscription ID, region and status.",
            object_params({"org_id": _ORG_ID}),
            get_org_details,
        ),
        ToolSpec(
            "get_subscription_details",
            "Get a subscription's tier, seats, prices, dates and modules.",
            object_params({"subscription_id": _SUB_ID}),
            get_subscription_details,
        ),
        ToolSpec(
            "modify_subscription_seats",
            "Set a subscription's seat count (increases only; reductions wait for renewal).",
            object_params(
                {
                    "subscription_id": _SUB_ID,
                    "new_seat_count": {"type": "integer", "description": "The new total number of seats."},
                }
            ),
            modify_subscription_seats,
            "write",
        ),
        ToolSpec(
            "modify_subscription_tier",
            "Change a subscription's tier (upgrades now; downgrades only at renewal).",
            object_params(
                {"subscription_id": _SUB_ID, "new_tier": string_param(f"One of: {', '.join(TIERS)}.")}
            ),
            modify_subscription_tier,
            "write",
        ),
        ToolSpec(
            "verify_downtime",
            "Check the downtime log for an outage of the subscription's organization at a given time.",
            object_params(
                {
                    "subscription_id": _SUB_ID,
                    "incident_timestamp": string_param("ISO 8601 time, like 2024-05-10T14:30:00Z."),
                }
            ),
            verify_downtime,
        ),
        ToolSpec(
            "calculate_service_credits",
            "Compute the SLA service credit for verified downtime.",
            object_params(
                {
                    "subscription_id": _SUB_ID,
                    "downtime_minutes": {"type": "integer", "description": "Verified downtime in minutes."},
                }
            ),
            calculate_service_credits,
        ),
        ToolSpec(
            "transfer_to_human_agents",
            "Hand the conversation to a human agent (only for requests no tool can handle).",
            object_params({"reason": string_param("Why the caller needs a human agent.")}),
            transfer_to_human_agents,
            "write",
        ),
        ToolSpec(
            "calculate",
            "Evaluate an arithmetic expression (numbers, + - * / and parentheses).",
            object_params({"expression": string_param("For example '150 * 0.9'.")}),
            calculate,
        ),
    )
}

READS_TABLES: dict[str, tuple[str, ...]] = {
    "find_user_by_email": ("users",),
    "get_user_details": ("users",),
    "get_all_users_in_org": ("organizations", "users"),
    "modify_user_status": ("organizations", "users"),
    "modify_user_permissions": ("organizations", "users"),
    "find_org_by_id": ("organizations",),
    "find_org_by_name": ("organizations",),
    "get_org_details": ("organizations",),
    "get_subscription_details": ("subscriptions",),
    "modify_subscription_seats": ("subscriptions",),
    "modify_subscription_tier": ("subscriptions",),
    "verify_downtime": ("subscriptions", "downtime_logs"),
    "calculate_service_credits": ("subscriptions",),
    "transfer_to_human_agents": (),
    "calculate": (),
}
"""The data tables each tool reads (an upstream entry whose gold needs an absent table
cannot run)."""
assert set(READS_TABLES) == set(TOOLS)


def _policy() -> str:
    allowed = {t: MINUTES_PER_MONTH * (100 - SLA_TARGETS[t]) / 100 for t in SLA_TARGETS}
    sla = "\n".join(
        f"  - {t}: {SLA_TARGETS[t]}% availability (at most {allowed[t]:g} "
        f"minutes of downtime a month); credit {CREDIT_RATES[t]}% of the monthly fee for each 0.1 "
        "percentage point below it"
        for t in ("enterprise", "professional", "basic")
    )
    discounts = ", ".join(f"{pct}% off from {least} seats" for least, pct in reversed(VOLUME_DISCOUNTS))
    return f"""You support the customers of an HR software service. The current time is {NOW_TS} (UTC); \
today is {NOW}.

How you work:
- Identify the caller first: ask for their email address and look them up; their organization \
comes from their user record. Subscription, user and configuration changes need a caller with \
admin permission in that organization.
- Before any change (seats, tier, a user's status or permissions, a hand-over to a human), list \
exactly what you will do and wait for the caller's explicit yes.
- Make one tool call per message, and never write to the caller in the same message as a tool call.
- Give only information that the caller or your tools provided; no opinions or advice of your own.
- Refuse requests this policy does not allow. Transfer to a human agent when, and only when, the \
request is outside what your tools can do.
- Tell the caller the outcome of every change and the figures they asked for.

Subscriptions:
- Tiers: basic, professional, enterprise. Fewest seats: {", ".join(f"{t} {n}" for t, n in MIN_SEATS.items())}.
- Seats can be added at any time; they can only be reduced at renewal.
- Upgrades take effect at once; downgrades only at renewal. A tier change sets the price per seat \
to {", ".join(f"{t} ${p}" for t, p in TIER_PRICES.items())} a month.
- Volume discounts: {discounts}.

Service credits (availability SLA per month, a month counted as {MINUTES_PER_MONTH} minutes):
{sla}
  - A credit never exceeds 100% of the monthly fee and applies to the next bill.
- Give a credit only for downtime the caller reported and verify_downtime confirmed, within \
{CREDIT_WINDOW_DAYS} days of the incident. Planned maintenance, force majeure, customer-caused and \
third-party outages are excluded. Downtime logs exist for professional and enterprise \
subscriptions only.
- Timestamps are ISO 8601 in UTC, like 2024-05-10T14:30:00Z.
"""


POLICY = _policy()
"""The agent's system prompt (our own wording of upstream's rules; the numbers come from the
rule constants above)."""

# -- the caller's facts ----------------------------------------------------------------------

USER_SLOTS: dict[str, tuple[str, str]] = {
    "email": (r"\byour (work )?e-?mail\b|\be-?mail address\b", "My email is {}."),
    "name": (r"\b(your|full) name\b|\bwho (am i|is) (speaking|calling)\b", "My name is {}."),
    "org_name": (
        r"\b(organi[sz]ation'?s?|company'?s?) name\b|\bwhich (organi[sz]ation|company)\b",
        "My organization is {}.",
    ),
    "org_id": (r"\borg(ani[sz]ation)? id\b", "Our organization ID is {}."),
    "colleague_email": (
        r"\bcolleague'?s?\b|\bother user\b|\bwhose account\b",
        "My colleague's email is {}.",
    ),
    "new_seat_count": (r"\bseats?\b|\bseat count\b", "We'd like {} seats in total."),
    "tier": (r"\btier\b|\bplan\b", "We'd like the {} tier."),
    "new_status": (r"\bstatus\b", "Their status should be {}."),
    "permissions": (r"\bpermissions?\b|\baccess rights\b", "The permissions should be: {}."),
    "incident_time": (
        r"\bwhen\b|\btime(stamp)?\b|\boutage\b|\bincident\b",
        "The outage was at {} (UTC).",
    ),
}
"""The facts a caller can be asked for: slot -> (question pattern, answer sentence)."""
SLOT_ASKS: dict[str, str] = {
    "email": "your email address",
    "name": "your full name",
    "org_name": "your organization's name",
    "org_id": "your organization ID",
    "colleague_email": "the email of the colleague whose account should change",
    "new_seat_count": "the total number of seats you want",
    "tier": "the tier you want",
    "new_status": "the status to set",
    "permissions": "the permissions to set",
    "incident_time": "when the outage happened (date and time)",
}
"""How the reference policy asks for each fact (each phrase matches its slot's pattern)."""

# -- entry templates ---------------------------------------------------------------------------


_WRITES = tuple(n for n, t in TOOLS.items() if t.kind == "write")


def _entry(
    template: str,
    goal: str,
    facts: dict[str, str],
    actions: list[dict[str, Any]],
    outputs: list[str] | None = None,
) -> dict[str, Any]:
    for a in actions:
        if "email" in a["arguments"]:  # addresses are compared case-insensitively
            a["case_insensitive_args"] = ["email"]
    return make_entry(
        "You are calling the HR software's support line.",
        template,
        goal,
        facts,
        actions,
        outputs,
        writes=_WRITES,
        closing="You don't know your organization or subscription ID. " + ENTRY_CLOSING,
    )


def _admin(s: dict[str, Any], org_id: str) -> dict[str, Any]:
    return next(u for _, u in sorted(s["users"].items()) if u["org_id"] == org_id and "admin" in u["roles"])


def _org_of_tier(s, rng, tiers):
    return rng.choice(
        [
            o
            for _, o in sorted(s["organizations"].items())
            if s["subscriptions"][o["subscription_id"]]["tier"] in tiers
        ]
    )


def _identify(admin: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        gold_call("find_user_by_email", email=admin["email"]),
        gold_call("get_org_details", org_id=admin["org_id"]),
    ]


def _t_calculator(s, rng):
    a, b = rng.randint(12, 99), rng.randint(101, 999)
    return _entry(
        "calculator",
        f"know what {a} * {b} is.",
        {},
        [gold_call("calculate", expression=f"{a} * {b}")],
        [str(a * b)],
    )


def _log_of(s, org_id: str, excluded: bool) -> dict[str, Any]:
    for _, log in sorted(s["downtime_logs"].items()):
        recent = (_NOW - _when(log["start_time"])).days <= CREDIT_WINDOW_DAYS
        if log["org_id"] == org_id and recent and bool(log["exclusions"]) == excluded:
            return log
    raise LookupError(org_id)


def _incident(log: dict[str, Any], rng) -> str:
    return _ts(_when(log["start_time"]) + dt.timedelta(minutes=rng.randint(1, log["duration_minutes"] - 1)))


def _t_downtime_credit(s, rng):
    org = _org_of_tier(s, rng, ("professional", "enterprise"))
    admin, sub = _admin(s, org["id"]), s["subscriptions"][org["subscription_id"]]
    log = _log_of(s, org["id"], excluded=False)
    when = _incident(log, rng)
    credit = service_credits(sub["tier"], float(sub["total_price"]), log["duration_minutes"])["credits"]
    return _entry(
        "downtime_credit",
        "get the service credit we are owed for an outage we had.",
        {"email": admin["email"], "incident_time": when},
        [
            *_identify(admin),
            gold_call("verify_downtime", subscription_id=sub["id"], incident_timestamp=when),
            gold_call(
                "calculate_service_credits",
                subscription_id=sub["id"],
                downtime_minutes=log["duration_minutes"],
            ),
        ],
        [json.dumps(credit)],
    )


def _t_downtime_excluded(s, rng):
    org = _org_of_tier(s, rng, ("professional", "enterprise"))
    admin, sub = _admin(s, org["id"]), s["subscriptions"][org["subscription_id"]]
    when = _incident(_log_of(s, org["id"], excluded=True), rng)
    return _entry(
        "downtime_excluded",
        "claim a service credit for an outage we had.",
        {"email": admin["email"], "incident_time": when},
        [*_identify(admin), gold_call("verify_downtime", subscription_id=sub["id"], incident_timestamp=when)],
        ["excluded"],
    )


def _t_add_seats(s, rng):
    org = rng.choice([o for _, o in sorted(s["organizations"].items())])
    admin, sub = _admin(s, org["id"]), s["subscriptions"][org["subscription_id"]]
    seats = sub["seats"] + rng.choice((5, 10, 20, 40, 60))
    return _entry(
        "add_seats",
        "add seats to our subscription.",
        {"email": admin["email"], "new_seat_count": str(seats)},
        [
            *_identify(admin),
            gold_call("modify_subscription_seats", subscription_id=sub["id"], new_seat_count=seats),
        ],
    )


def _t_upgrade_tier(s, rng):
    ok = [
        (o, t)
        for _, o in sorted(s["organizations"].items())
        for t in TIERS
        if TIERS.index(t) > TIERS.index(s["subscriptions"][o["subscription_id"]]["tier"])
        and s["subscriptions"][o["subscription_id"]]["seats"] >= MIN_SEATS[t]
    ]
    org, tier = rng.choice(ok)
    admin, sub = _admin(s, org["id"]), s["subscriptions"][org["subscription_id"]]
    return _entry(
        "upgrade_tier",
        f"upgrade our subscription to the {tier} tier.",
        {"email": admin["email"], "tier": tier},
        [*_identify(admin), gold_call("modify_subscription_tier", subscription_id=sub["id"], new_tier=tier)],
    )


def _colleague(s, rng) -> tuple[dict[str, Any], dict[str, Any]]:
    target = rng.choice([u for _, u in sorted(s["users"].items()) if "admin" not in u["roles"]])
    return _admin(s, target["org_id"]), target


def _t_user_status(s, rng):
    admin, target = _colleague(s, rng)
    status = "active" if target["status"] != "active" else rng.choice(("suspended", "locked", "terminated"))
    verb = {"active": "reactivate", "suspended": "suspend", "locked": "lock", "terminated": "terminate"}[
        status
    ]
    return _entry(
        "user_status",
        f"{verb} a colleague's account.",
        {"email": admin["email"], "colleague_email": target["email"], "new_status": status},
        [
            gold_call("find_user_by_email", email=admin["email"]),
            gold_call("find_user_by_email", email=target["email"]),
            gold_call("modify_user_status", user_id=target["id"], new_status=status, org_id=target["org_id"]),
        ],
    )


def _t_user_permissions(s, rng):
    admin, target = _colleague(s, rng)
    while True:
        perms = sorted(rng.sample(PERMISSIONS[3:], rng.randint(2, 4)))
        if perms != sorted(target["permissions"]):
            break
    return _entry(
        "user_permissions",
        "change a colleague's permissions.",
        {"email": admin["email"], "colleague_email": target["email"], "permissions": ", ".join(perms)},
        [
            gold_call("find_user_by_email", email=admin["email"]),
            gold_call("find_user_by_email", email=target["email"]),
            gold_call(
                "modify_user_permissions",
                user_id=target["id"],
                new_permissions=perms,
                org_id=target["org_id"],
            ),
        ],
    )


def _t_seats_to_discount(s, rng):
    org = rng.choice(
        [
            o
            for _, o in sorted(s["organizations"].items())
            if s["subscriptions"][o["subscription_id"]]["seats"] < 1000
        ]
    )
    admin, sub = _admin(s, org["id"]), s["subscriptions"][org["subscription_id"]]
    nxt = min(least for least, _ in VOLUME_DISCOUNTS if least > sub["seats"])
    return _entry(
        "seats_to_discount",
        "know how many more seats we need to reach the next volume discount.",
        {"email": admin["email"]},
        [
            *_identify(admin),
            gold_call("get_subscription_details", subscription_id=sub["id"]),
            gold_call("calculate", expression=f"{nxt} - {sub['seats']}"),
        ],
        [str(nxt - sub["seats"])],
    )


def _t_subscription_overview(s, rng):
    org = rng.choice([o for _, o in sorted(s["organizations"].items())])
    admin, sub = _admin(s, org["id"]), s["subscriptions"][org["subscription_id"]]
    return _entry(
        "subscription_overview",
        "know our subscription tier and when it renews.",
        {"email": admin["email"]},
        [*_identify(admin), gold_call("get_subscription_details", subscription_id=sub["id"])],
        [sub["tier"], sub["renewal_date"][:10]],
    )


_OUT_OF_SCOPE = (
    "move our single sign-on to a new identity provider.",
    "get a custom payroll integration built for us.",
    "have our billing address changed.",
)


def _t_transfer(s, rng):
    org = rng.choice([o for _, o in sorted(s["organizations"].items())])
    admin = _admin(s, org["id"])
    goal = rng.choice(_OUT_OF_SCOPE)
    return _entry(
        "transfer",
        goal,
        {"email": admin["email"]},
        [
            gold_call("find_user_by_email", email=admin["email"]),
            gold_call("transfer_to_human_agents", reason=f"The caller wants to {goal[:-1]}"),
        ],
    )


TEMPLATES = (
    _t_calculator,
    _t_downtime_credit,
    _t_downtime_excluded,
    _t_add_seats,
    _t_upgrade_tier,
    _t_user_status,
    _t_user_permissions,
    _t_seats_to_discount,
    _t_subscription_overview,
    _t_transfer,
)
ENTRY_COUNT = ENTRY_COUNTS["hr_software"]
"""Entries generated (upstream's hr_software count)."""


def make_entries(state: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """``ENTRY_COUNT`` entries, the templates in turn, each over its own draw of the world."""
    rng = random.Random(f"benchforce-hr_software-entries-{seed}")
    out = []
    for i in range(ENTRY_COUNT):
        entry = TEMPLATES[i % len(TEMPLATES)](state, rng)
        out.append({"id": entry_id(i), "entry_num": i + 1, **entry})
    return out


# -- upstream's files --------------------------------------------------------------------------

USERS_FILES = tuple(f"data_users_part_{i}.json" for i in range(1, 7))
"""Upstream's users table, split in six files (read when present)."""
TABLE_FILES = {
    "organizations": "data_organizations.json",
    "subscriptions": "data_subscriptions.json",
    "downtime_logs": "data_downtime_logs.json",
}
ENTRIES_FILE = "entries_dump.json"
INTEGRITY = Integrity(
    keys={"organizations": "id", "subscriptions": "id", "users": "id", "downtime_logs": "id"},
    references={
        ("organizations", "subscription_id"): "subscriptions",
        ("subscriptions", "org_id"): "organizations",
        ("users", "org_id"): "organizations",
        ("users", "manager_id"): "users",
        ("downtime_logs", "org_id"): "organizations",
    },
    non_negative=(
        ("subscriptions", "seats"),
        ("subscriptions", "price_per_seat"),
        ("subscriptions", "volume_discount_percentage"),
        ("subscriptions", "total_price"),
        ("downtime_logs", "duration_minutes"),
    ),
)
"""Every record's id is its key, every organization, subscription, user (manager) a record
names exists, and no seat count, price, discount or downtime is negative."""


def _bad(path: Path, where: str, problem: str, fix: str) -> ValueError:
    """The one form of every upstream file error: ``<path>: <where> <problem>; fix: <fix>``."""
    return ValueError(f"{path}: {where} {problem}; fix: {fix}")


_FIX = f"repair the file or {RESTORE}"


def _need(path: Path, where: str, rec: Any, fields: dict[str, type | tuple[type, ...]]) -> None:
    if not isinstance(rec, dict):
        raise _bad(path, where, "is not an object", _FIX)
    for key, kind in fields.items():
        value = rec.get(key)
        if not isinstance(value, kind) or isinstance(value, bool) and kind in (int, (int, float)):
            name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            if key not in rec:
                raise _bad(path, f"{where}: field {key!r}", "is missing", f"give it a {name} value")
            raise _bad(path, f"{where}: field {key!r}", f"is {json.dumps(value)[:60]}, expected {name}", _FIX)


def _keyed(path: Path, data: Any, what: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise _bad(
            path,
            "the top level",
            f"is a {type(data).__name__}",
            f"make it an object of {what} records keyed by id",
        )
    for key, rec in data.items():
        _need(path, f"record {key!r}", rec, {})
        if rec.get("id", key) != key:
            raise _bad(
                path,
                f"record {key!r}: field 'id'",
                f"is {rec.get('id')!r} but the record is stored under {key!r}",
                "make them equal",
            )
    return data


def _convert_org(rec: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "name",
        "primary_email",
        "billing_address",
        "payment_methods",
        "subscription_id",
        "industry",
        "size_category",
        "primary_region",
        "language",
        "created_date",
        "status",
    )
    return {"id": rec["id"], **{k: rec.get(k) for k in keys}}


def _convert_sub(rec: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "org_id",
        "tier",
        "seats",
        "start_date",
        "renewal_date",
        "billing_frequency",
        "auto_renewal",
        "price_per_seat",
        "volume_discount_percentage",
        "total_price",
        "modules",
        "support_level",
        "usage_limits",
    )
    return {"id": rec["id"], **{k: rec.get(k) for k in keys}}


def _convert_user(rec: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "org_id",
        "name",
        "email",
        "roles",
        "department",
        "manager_id",
        "last_login",
        "two_factor_enabled",
        "status",
        "permissions",
        "title",
        "skills",
    )
    return {"id": rec["id"], **{k: rec.get(k) for k in keys}}


def _convert_log(rec: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "org_id",
        "start_time",
        "end_time",
        "duration_minutes",
        "severity",
        "affected_regions",
        "affected_services",
        "exclusions",
        "resolution",
        "impact_description",
        "detected_by",
    )
    return {"id": rec["id"], **{k: rec.get(k) for k in keys}}


def _read_table(folder: Path, table: str) -> dict[str, Any] | None:
    """One table in our shape, or None when its file is absent (upstream loads it empty)."""
    path = folder / TABLE_FILES[table]
    if not path.is_file():
        return None
    data = read_json(path)
    if table == "organizations":
        for key, rec in _keyed(path, data, "organization").items():
            _need(
                path,
                f"record {key!r}",
                {"id": key, **rec},
                {"id": str, "name": str, "subscription_id": str},
            )
        return {k: _convert_org({"id": k, **v}) for k, v in data.items()}
    if table == "subscriptions":
        for key, rec in _keyed(path, data, "subscription").items():
            where = f"record {key!r}"
            _need(
                path,
                where,
                {"id": key, **rec},
                {
                    "org_id": str,
                    "tier": str,
                    "seats": int,
                    "price_per_seat": (int, float),
                    "total_price": (int, float),
                },
            )
            if rec["tier"] not in TIERS:
                raise _bad(path, f"{where}: field 'tier'", f"is {rec['tier']!r}", f"use one of {list(TIERS)}")
        return {k: _convert_sub({"id": k, **v}) for k, v in data.items()}
    if not isinstance(data, list):
        raise _bad(
            path, "the top level", f"is a {type(data).__name__}", "make it a list of downtime log records"
        )
    logs: dict[str, Any] = {}
    for i, rec in enumerate(data):
        where = f"record {i + 1}"
        _need(path, where, rec, {"id": str, "org_id": str, "start_time": str, "end_time": str})
        for key in ("start_time", "end_time"):
            try:
                _when(rec[key])
            except EnvToolError:
                raise _bad(
                    path,
                    f"{where}: field {key!r}",
                    f"is {rec[key]!r}",
                    "use ISO 8601 like 2024-05-15T15:00:00Z",
                ) from None
        if rec["id"] in logs:
            raise _bad(path, f"{where}: field 'id'", f"repeats {rec['id']!r}", "make ids unique")
        logs[rec["id"]] = _convert_log(rec)
    return logs


def _read_users(folder: Path) -> tuple[dict[str, Any] | None, dict[str, Path]]:
    """Upstream's users files merged in our shape (None when none is present) and the file
    each user was read from (user id -> path)."""
    found = [folder / f for f in USERS_FILES if (folder / f).is_file()]
    if not found:
        return None, {}
    users: dict[str, Any] = {}
    source: dict[str, Path] = {}
    for path in found:
        data = _keyed(path, read_json(path), "user")
        for key, rec in data.items():
            _need(
                path,
                f"record {key!r}",
                {"id": key, **rec},
                {"org_id": str, "email": str, "status": str, "permissions": list, "roles": list},
            )
            users[key] = _convert_user({"id": key, **rec})
            source[key] = path
    return users, source


def _read_entries(folder: Path) -> list[dict[str, Any]]:
    """``entries_dump.json``'s entries; one that is malformed (not an object, a field missing
    or of the wrong type, a repeated or unusable id) is kept as a
    :func:`~suites.benchforce.env.base.broken_entry` whose ``load_error`` names the file, the
    entry and the fix, so only its item errors.

    Raises:
        FileNotFoundError: no such file.
        ValueError: the file is not a JSON list.
    """
    path = folder / ENTRIES_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing; upstream keeps the hr_software entries there; fix: {RESTORE}"
        )
    data = read_json(path)
    if not isinstance(data, list):
        raise _bad(path, "the top level", f"is a {type(data).__name__}", "make it a list of entries")
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(data):
        try:
            _check_entry(path, i, entry, seen)
        except ValueError as exc:
            eid = entry.get("id") if isinstance(entry, dict) else None
            out.append(broken_entry(i, eid, str(exc), seen))
        else:
            out.append(entry)
        seen.add(out[-1]["id"])
    return out


def _check_entry(path: Path, i: int, entry: Any, seen: set[str]) -> None:
    where = f"entry {i + 1}"
    _need(path, where, entry, {"id": str, "instructions": str, "actions": list})
    problem = entry_id_problem(entry, seen)
    if problem is not None:
        raise ValueError(f"{path}: {where}{problem}")
    for j, action in enumerate(entry["actions"]):
        _need(path, f"{where} ({entry['id']}) action {j}", action, {"name": str, "arguments": dict})
    outputs = entry.get("outputs", [])
    if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
        raise _bad(
            path,
            f"{where} ({entry['id']}): field 'outputs'",
            f"is {json.dumps(outputs)[:60]}",
            "make it a list of strings",
        )


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_NAME = re.compile(r"\{'first_name': '([^']+)', 'last_name': '([^']+)'\}")
_ORG_NAME = re.compile(r"\bat ([A-Z][\w&\- ]*?[\w])(?: \(|\.|,)")
_UNKNOWN_ORG = re.compile(r"\bdon'?t know (your |the )?(org(ani[sz]ation)?( id)?)\b", re.IGNORECASE)
_FACT_OF_ARG = {
    "incident_timestamp": "incident_time",
    "new_seat_count": "new_seat_count",
    "new_tier": "tier",
    "new_status": "new_status",
    "new_permissions": "permissions",
}


def _caller(entry: dict[str, Any]) -> dict[str, Any]:
    """The deterministic caller's ``user`` block for an upstream entry: facts from the
    instructions (email, name, organization name) and from the gold arguments the caller must
    supply (incident time, seats, tier, status, permissions; the organization ID only when the
    instructions do not say the caller does not know it); the goal is the instructions'
    request, with the persona, contact and "you don't know" sentences left out."""
    text = entry["instructions"]
    facts: dict[str, str] = {}
    if m := _EMAIL.search(text):
        facts["email"] = m.group(0).rstrip(".")
    if m := _NAME.search(text):
        facts["name"] = f"{m.group(1)} {m.group(2)}"
    if m := _ORG_NAME.search(_NAME.sub("someone", text)):
        facts["org_name"] = m.group(1)
    for action in entry["actions"]:
        for key, value in (action.get("arguments") or {}).items():
            if key in _FACT_OF_ARG and value != "*":
                facts[_FACT_OF_ARG[key]] = ", ".join(value) if isinstance(value, list) else str(value)
            if key == "org_id" and not _UNKNOWN_ORG.search(text):
                facts["org_id"] = str(value)
    request = _NAME.sub("someone", text)
    request = re.sub(r"\((?:[^()]*@[^()]*)\)", "", request)
    kept = []
    for sentence in re.split(r"(?<=[.!?])\s+", request):
        if m := re.search(r"\bI need to (.*)", sentence):
            kept.append("I need to " + m.group(1))
            continue
        if (
            "@" in sentence
            or _UNKNOWN_ORG.search(sentence)
            or re.search(r"\b(name is|you are|don'?t know)\b", sentence, re.I)
        ):
            continue
        kept.append(sentence)
    goal_text = " ".join(kept).strip() or "get help with my account."
    goal_text = re.sub(r"\bYou (just )?(want|need)\b", r"I \1\2", goal_text)
    goal_text = re.sub(r"\byour\b", "my", goal_text)
    return {"goal": f"get help with this: {goal_text}", "facts": facts}


def _why_unrunnable(entry: dict[str, Any], world: dict[str, Any], absent: dict[str, str]) -> str | None:
    """Why an upstream entry cannot run on these files (None when it can): a gold action naming
    no tool, reading an absent table, with a ``*`` in a write, with arguments the tool's schema
    refuses (the server would refuse them too), or refused by the tool."""
    from suites.benchforce.env.base import schema_problem

    for j, action in enumerate(entry["actions"]):
        name = action["name"]
        if name not in TOOLS:
            return f"gold action {j} names no hr_software tool: {name!r}"
        missing = [t for t in READS_TABLES[name] if t in absent]
        if missing:
            return f"gold action {j} ({name}) reads {missing[0]}, and {absent[missing[0]]}"
        if TOOLS[name].kind == "write" and "*" in (action.get("arguments") or {}).values():
            wild = next(k for k, v in action["arguments"].items() if v == "*")
            return f"gold action {j} ({name}) has a '*' wildcard for {wild!r}, so its final state is unknown"
    state = copy_world(world)
    for j, action in enumerate(entry["actions"]):
        args = dict(action.get("arguments") or {})
        if "*" in args.values():
            continue  # a read with a wildcard cannot change the state
        tool = TOOLS[action["name"]]
        problem = schema_problem(tool.parameters, args)
        if problem is not None:
            return f"gold action {j} ({tool.name}) has arguments the tool's schema refuses: {problem}"
        try:
            tool.fn(state, **args)
        except EnvToolError as exc:
            return f"gold action {j} ({tool.name}) is refused by the tool: {exc}"
    return None


def load_upstream(env_dir: Path) -> UpstreamData:
    """Upstream's hr_software files under ``env_dir`` (``.../src/environments/hr_software``).

    Reads ``data_organizations.json`` and ``data_subscriptions.json`` (objects keyed by id),
    ``data_downtime_logs.json`` (a list, keyed by ``id`` here), ``data_users_part_1.json`` ...
    ``data_users_part_6.json`` (objects keyed by id, merged; upstream does not publish them),
    and ``entries_dump.json``; each record is converted to our fields explicitly. A data file
    that is absent leaves its table empty, as upstream does, and every entry whose gold reads
    that table is unrunnable. Entries are numbered 1-based in file order (``entry_num``; the
    dump has none, A10.3) and get the ``user`` block the deterministic caller plays.

    Returns:
        :class:`UpstreamData` with the world, the entries, and ``unrunnable`` (entry id ->
        one-line reason: an absent table, a ``*`` wildcard in a write, a gold call the tools
        refuse or a tool name that does not exist).

    Raises:
        FileNotFoundError: no ``entries_dump.json``.
        ValueError: a malformed file, or records that cannot be right (:data:`INTEGRITY`: a
            subscription naming no organization, negative seats, ...); the message names the
            file (its full path), the record, the field and the fix.
    """
    folder = Path(env_dir)
    entries = _read_entries(folder)
    world: dict[str, Any] = {"handoff": {"transferred": False}}
    absent: dict[str, str] = {}
    for table, file in TABLE_FILES.items():
        data = _read_table(folder, table)
        world[table] = data or {}
        if data is None:
            absent[table] = f"{file} is not in {str(folder)!r}"
    users, user_files = _read_users(folder)
    world["users"] = users or {}
    if users is None:
        absent["users"] = f"no users file ({USERS_FILES[0]} ... {USERS_FILES[-1]}) is in {str(folder)!r}"
    check_integrity(
        world,
        INTEGRITY,
        lambda table, key: user_files[key] if table == "users" else folder / TABLE_FILES[table],
        unchecked=set(absent),
    )
    out, unrunnable, errors = [], {}, {}
    source = folder / ENTRIES_FILE
    for i, entry in enumerate(entries):
        if entry.get("load_error"):
            errors[entry["id"]] = entry["load_error"]
            out.append(entry)
            continue
        try:
            item = {
                "id": entry["id"],
                "entry_num": i + 1,
                "instructions": entry["instructions"],
                "actions": [{**a, "arguments": dict(a["arguments"])} for a in entry["actions"]],
                "outputs": list(entry.get("outputs") or []),
                "forbidden_actions": list(entry.get("forbidden_actions") or []),
                "user": _caller(entry),
            }
            why = _why_unrunnable(item, world, absent)
        except Exception as exc:  # a fault of ours or an entry shape nobody foresaw: this entry only
            error = errors[entry["id"]] = prepare_error(source, {**entry, "entry_num": i + 1}, exc)
            out.append({"id": entry["id"], "entry_num": i + 1, "actions": [], "load_error": error})
            continue
        out.append(item)
        if why is not None:
            unrunnable[item["id"]] = why
    return UpstreamData(world=world, entries=out, unrunnable=unrunnable, errors=errors)


ENV = Environment(
    name="hr_software",
    policy=POLICY,
    now=NOW,
    tools=TOOLS,
    build_world=build_world,
    projection=projection,
    make_entries=make_entries,
    user_slots=USER_SLOTS,
    slot_asks=SLOT_ASKS,
    load_upstream=load_upstream,
    integrity=INTEGRITY,
)
"""The hr_software environment."""
