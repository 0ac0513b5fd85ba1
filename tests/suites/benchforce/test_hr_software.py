"""The hr_software environment on our own seeded world: the tools (refused calls included),
the SLA credit table, the projection, the generated entries, and the oracle and null policies
through a run of the suite."""

from __future__ import annotations

import json
import re

import pytest

import suites.benchforce as benchforce
from pytest_egi.suite import SuiteProfile
from suites.benchforce.env import environment
from suites.benchforce.env.base import EnvToolError, apply_call, copy_world, dry_run, state_hash
from suites.benchforce.env.hr_software import (
    ENTRY_COUNT,
    ENV,
    NOW_TS,
    TEMPLATES,
    USER_LIST_CAP,
    build_world,
    service_credits,
)
from tests.helpers.suite_run import run_suite

SEED = 42
UPSTREAM_TOOLS = [
    "find_user_by_email",
    "get_user_details",
    "get_all_users_in_org",
    "modify_user_status",
    "modify_user_permissions",
    "find_org_by_id",
    "find_org_by_name",
    "get_org_details",
    "get_subscription_details",
    "modify_subscription_seats",
    "modify_subscription_tier",
    "verify_downtime",
    "calculate_service_credits",
    "transfer_to_human_agents",
    "calculate",
]


@pytest.fixture(scope="module")
def world():
    return build_world(SEED)


@pytest.fixture(scope="module")
def tasks():
    return benchforce.SUITE.load_tasks(
        SuiteProfile(seed=SEED, categories=["hr_software"], max_turns=15), None
    )


def _call(state, name, **args):
    return apply_call(ENV, state, name, args)


def _refused(state, name, **args) -> tuple[str, str]:
    with pytest.raises(EnvToolError) as info:
        apply_call(ENV, state, name, args)
    return info.value.code, str(info.value)


def test_registered_with_upstreams_tool_names_and_argument_types():
    assert environment("hr_software") is ENV and "hr_software" in benchforce.SUITE.categories
    assert list(ENV.tools) == UPSTREAM_TOOLS
    props = {n: t.parameters["properties"] for n, t in ENV.tools.items()}
    required = {n: t.parameters["required"] for n, t in ENV.tools.items()}
    assert required["modify_user_status"] == ["user_id", "new_status", "org_id"]
    assert required["modify_user_permissions"] == ["user_id", "new_permissions", "org_id"]
    assert props["modify_user_permissions"]["new_permissions"]["type"] == "array"
    assert props["modify_subscription_seats"]["new_seat_count"]["type"] == "integer"
    assert props["calculate_service_credits"]["downtime_minutes"]["type"] == "integer"
    assert list(props["find_org_by_name"]) == ["query"] and list(props["calculate"]) == ["expression"]
    assert list(props["verify_downtime"]) == ["subscription_id", "incident_timestamp"]
    assert {n for n, t in ENV.tools.items() if t.kind == "write"} == {
        "modify_user_status",
        "modify_user_permissions",
        "modify_subscription_seats",
        "modify_subscription_tier",
        "transfer_to_human_agents",
    }


def test_policy_states_the_rules_with_the_fixed_clock_and_no_real_date():
    policy = ENV.policy
    assert ENV.now == "2024-05-15" and NOW_TS in policy
    # the only dates are the fixed clock and the timestamp example (upstream appended today's)
    assert set(re.findall(r"\d{4}-\d{2}-\d{2}", policy)) == {"2024-05-15", "2024-05-10"}
    for line in (
        "enterprise: 99.99% availability (at most 4.32 minutes of downtime a month); credit 10% of",
        "professional: 99.95% availability (at most 21.6 minutes of downtime a month); credit 5% of",
        "basic: 99.9% availability (at most 43.2 minutes of downtime a month); credit 3% of",
        "Fewest seats: basic 5, professional 25, enterprise 100.",
        "Volume discounts: 10% off from 100 seats, 15% off from 500 seats, 20% off from 1000 seats.",
        "Make one tool call per message",
        "wait for the caller's explicit yes",
    ):
        assert line in " ".join(policy.split()), line


def test_world_is_seeded_and_shaped_like_upstreams(world):
    assert json.dumps(build_world(SEED)) == json.dumps(world)
    assert json.dumps(build_world(SEED + 1)) != json.dumps(world)
    assert sorted(world) == ["downtime_logs", "handoff", "organizations", "subscriptions", "users"]
    assert list(world["organizations"])[:2] == ["ORG-000001", "ORG-000002"]
    assert list(world["users"])[0] == "USR-000001" and list(world["downtime_logs"])[0] == "DT-000001"
    for org in world["organizations"].values():
        members = [u for u in world["users"].values() if u["org_id"] == org["id"]]
        assert (
            len(members) == USER_LIST_CAP
            and world["subscriptions"][org["subscription_id"]]["org_id"] == org["id"]
        )


def test_user_and_org_tools(world):
    s = copy_world(world)
    admin = s["users"]["USR-000001"]
    found = _call(s, "find_user_by_email", email=admin["email"].upper())
    assert found["user_id"] == "USR-000001" and found["org_id"] == "ORG-000001"
    assert set(found) == {"user_id", "name", "email", "department", "roles", "org_id", "status"}
    assert _call(s, "get_user_details", user_id="USR-000001") == admin
    listed = _call(s, "get_all_users_in_org", org_id="ORG-000001")
    assert [u["id"] for u in listed] == ["USR-000001", "USR-000002", "USR-000003"]
    assert _call(s, "find_org_by_id", org_id="ORG-000002") == {"found": True, "org_id": "ORG-000002"}
    name = s["organizations"]["ORG-000003"]["name"]
    assert [
        o["id"] for o in _call(s, "find_org_by_name", query=name.split()[0].lower())["organizations"]
    ] == ["ORG-000003"]
    assert _call(s, "get_org_details", org_id="ORG-000003")["subscription_id"] == "SUB-000003"
    assert _call(s, "get_subscription_details", subscription_id="SUB-000003")["org_id"] == "ORG-000003"
    assert _refused(s, "find_user_by_email", email="nobody@none.example") == (
        "not_found",
        "No user found with the email address 'nobody@none.example'",
    )
    assert _refused(s, "get_user_details", user_id="USR-999999") == (
        "not_found",
        "User 'USR-999999' not found",
    )
    assert _refused(s, "get_all_users_in_org", org_id="ORG-999999") == (
        "not_found",
        "Organization 'ORG-999999' not found",
    )
    assert _refused(s, "find_org_by_name", query="zzz") == (
        "not_found",
        "No organization name contains 'zzz'",
    )
    assert _refused(s, "get_subscription_details", subscription_id="SUB-9") == (
        "not_found",
        "Subscription 'SUB-9' not found",
    )


def test_get_all_users_in_org_lists_at_most_three_as_upstream(world):
    s = copy_world(world)
    extra = {**s["users"]["USR-000002"], "id": "USR-000999", "email": "x@y.example"}
    s["users"]["USR-000999"] = extra
    assert len(_call(s, "get_all_users_in_org", org_id="ORG-000001")) == 3


def test_user_write_tools_and_their_refusals(world):
    s = copy_world(world)
    out = _call(s, "modify_user_status", user_id="USR-000002", new_status="terminated", org_id="ORG-000001")
    assert out["success"] is True and s["users"]["USR-000002"]["status"] == "terminated"
    _call(
        s,
        "modify_user_permissions",
        user_id="USR-000002",
        new_permissions=["view_reports"],
        org_id="ORG-000001",
    )
    assert s["users"]["USR-000002"]["permissions"] == ["view_reports"]
    assert _refused(
        s, "modify_user_status", user_id="USR-000002", new_status="gone", org_id="ORG-000001"
    ) == (
        "invalid_value",
        "Invalid status 'gone'; must be one of: active, pending, suspended, terminated, locked",
    )
    assert _refused(
        s, "modify_user_status", user_id="USR-000004", new_status="active", org_id="ORG-000001"
    ) == (
        "conflict",
        "User 'USR-000004' does not belong to organization 'ORG-000001'",
    )
    assert _refused(s, "modify_user_status", user_id="USR-000002", new_status="active", org_id="ORG-000077")[
        1
    ] == ("Organization 'ORG-000077' not found")
    code, message = _refused(
        s,
        "modify_user_permissions",
        user_id="USR-000002",
        new_permissions=["root", "admin"],
        org_id="ORG-000001",
    )
    assert code == "invalid_value" and message.startswith(
        "Invalid permissions: root; valid ones: access_api, "
    )
    assert s["users"]["USR-000002"]["permissions"] == ["view_reports"]  # a refused call changes nothing


def _sub(tier: str, seats: int, price: float, total: float) -> dict:
    return {
        "subscriptions": {
            "SUB-000001": {
                "id": "SUB-000001",
                "org_id": "ORG-000001",
                "tier": tier,
                "seats": seats,
                "price_per_seat": price,
                "volume_discount_percentage": 0,
                "total_price": total,
            }
        },
        "downtime_logs": {},
        "users": {},
        "organizations": {},
    }


def test_seat_and_tier_rules():
    s = _sub("professional", 90, 20, 1800.0)
    out = _call(s, "modify_subscription_seats", subscription_id="SUB-000001", new_seat_count=120)
    # 120 seats x $20, 10% off from 100 seats: 2160.0
    assert out == {"success": True, "message": "Updated to 120 seats", "new_total": 2160.0}
    assert s["subscriptions"]["SUB-000001"]["volume_discount_percentage"] == 10
    assert _refused(s, "modify_subscription_seats", subscription_id="SUB-000001", new_seat_count=110) == (
        "conflict",
        "Seats can only be reduced at renewal",
    )
    assert _refused(s, "modify_subscription_seats", subscription_id="SUB-000001", new_seat_count=20) == (
        "invalid_value",
        "The professional tier needs at least 25 seats",
    )
    out = _call(s, "modify_subscription_tier", subscription_id="SUB-000001", new_tier="enterprise")
    # 120 seats x $40, 10% off: 4320.0
    assert out["new_total"] == 4320.0 and s["subscriptions"]["SUB-000001"]["price_per_seat"] == 40
    assert _refused(s, "modify_subscription_tier", subscription_id="SUB-000001", new_tier="basic") == (
        "conflict",
        "A tier can only be downgraded at renewal",
    )
    assert (
        _refused(s, "modify_subscription_tier", subscription_id="SUB-000001", new_tier="gold")[0]
        == "invalid_value"
    )
    small = _sub("basic", 40, 10, 400.0)
    assert _refused(
        small, "modify_subscription_tier", subscription_id="SUB-000001", new_tier="enterprise"
    ) == (
        "invalid_value",
        "The enterprise tier needs at least 100 seats",
    )


def test_service_credits_by_hand():
    # enterprise, $3600/month, 30 min: uptime 100*(1-30/43200) = 99.930556%, 0.059444 points
    # below 99.99 -> 0.59444 steps of 0.1 -> 3600 * 10% * 0.59444 = 214.00
    assert service_credits("enterprise", 3600.0, 30)["credits"] == 214.0
    # professional, $2000, 60 min: 99.861111%, 0.088889 below 99.95 -> 2000 * 5% * 0.88889 = 88.89
    assert service_credits("professional", 2000.0, 60)["credits"] == 88.89
    # basic, $850, 120 min: 99.722222%, 0.177778 below 99.9 -> 850 * 3% * 1.77778 = 45.33
    assert service_credits("basic", 850.0, 120)["credits"] == 45.33
    # within the SLA: enterprise allows 4.32 minutes
    assert service_credits("enterprise", 3600.0, 4) == {
        "credits": 0,
        "message": "No SLA breach. Actual uptime: 99.991%",
    }
    # capped at the monthly fee: 1000 min -> 23.05 steps x 10% = 230% -> 100%
    assert service_credits("enterprise", 500.0, 1000)["credits"] == 500.0
    s = _sub("enterprise", 100, 40, 3600.0)
    assert (
        _call(s, "calculate_service_credits", subscription_id="SUB-000001", downtime_minutes=30)["credits"]
        == 214.0
    )
    assert _refused(s, "calculate_service_credits", subscription_id="SUB-000001", downtime_minutes=-5) == (
        "invalid_value",
        "Downtime minutes cannot be negative",
    )


def _log(lid: str, org: str, start: str, end: str, exclusions=()) -> dict:
    return {"id": lid, "org_id": org, "start_time": start, "end_time": end, "exclusions": list(exclusions)}


def test_verify_downtime():
    s = _sub("professional", 50, 20, 1000.0)
    s["downtime_logs"] = {
        "DT-000001": _log("DT-000001", "ORG-000001", "2024-05-10T10:00:00Z", "2024-05-10T11:15:00Z"),
        "DT-000002": _log(
            "DT-000002",
            "ORG-000001",
            "2024-05-12T02:00:00Z",
            "2024-05-12T03:00:00Z",
            [{"type": "maintenance", "description": "planned"}],
        ),
        "DT-000003": _log("DT-000003", "ORG-000002", "2024-05-13T08:00:00Z", "2024-05-13T09:00:00Z"),
    }

    def verify(ts):
        return _call(s, "verify_downtime", subscription_id="SUB-000001", incident_timestamp=ts)

    assert verify("2024-05-10T10:30:00Z") == {
        "verified": True,
        "duration_minutes": 75,
        "tier": "professional",
    }
    assert verify("2024-05-10T12:30:00+02:00")["verified"] is True  # 10:30 UTC
    assert verify("2024-05-12T02:30:00Z") == {
        "verified": False,
        "message": "Downtime was due to an excluded event",
    }
    # another organization's outage is not this subscription's (upstream matched any)
    assert verify("2024-05-13T08:30:00Z") == {
        "verified": False,
        "message": "No downtime found at the specified time",
    }
    assert _refused(
        s, "verify_downtime", subscription_id="SUB-000001", incident_timestamp="2024-04-01T10:00:00Z"
    ) == (
        "invalid_value",
        "Incidents can only be verified within 30 days (now is 2024-05-15T15:00:00Z)",
    )
    assert _refused(
        s, "verify_downtime", subscription_id="SUB-000001", incident_timestamp="last tuesday"
    ) == (
        "invalid_value",
        "Invalid timestamp 'last tuesday': use ISO 8601, e.g. 2024-05-15T15:00:00Z",
    )
    basic = _sub("basic", 50, 10, 500.0)
    assert _refused(basic, "verify_downtime", subscription_id="SUB-000001", incident_timestamp=NOW_TS) == (
        "not_available",
        "Downtime logs are kept only for professional and enterprise subscriptions",
    )


def test_calculate_and_transfer(world):
    s = copy_world(world)
    assert _call(s, "calculate", expression="88 * 123") == {"result": 10824}
    assert _call(s, "calculate", expression="(150 - 30) * 0.5 / 4") == {"result": 15.0}
    assert _refused(s, "calculate", expression="__import__('os')") == (
        "invalid_value",
        "Only numbers, + - * / and parentheses are allowed in the expression",
    )
    assert _refused(s, "calculate", expression="2 ** 64")[1] == (
        "Cannot calculate '2 ** 64': only numbers, + - * / and parentheses are allowed"
    )
    assert _refused(s, "calculate", expression="1 / 0")[1] == "Cannot calculate '1 / 0': division by zero"
    out = _call(s, "transfer_to_human_agents", reason="custom integration")
    assert out["status"] == "transferred" and s["handoff"] == {"transferred": True}


def test_projection_is_non_empty_changed_by_every_write_and_unchanged_by_reads(world, tasks):
    proj = ENV.projection(world)
    assert all(proj[t] for t in ("subscriptions", "users")) and proj["handoff"] == {"transferred": False}
    reordered = {k: dict(reversed(list(v.items()))) for k, v in reversed(list(world.items()))}
    assert state_hash(ENV, reordered) == state_hash(ENV, world)
    before = state_hash(ENV, world)
    writes = {n for n, t in ENV.tools.items() if t.kind == "write"}
    seen_writes, seen_reads = set(), set()
    for task in tasks:
        for action in task.data["actions"]:
            state = copy_world(world)
            apply_call(ENV, state, action["name"], action["arguments"])
            changed = state_hash(ENV, state) != before
            assert changed == (action["name"] in writes), action
            (seen_writes if changed else seen_reads).add(action["name"])
    assert seen_writes == writes
    # the reads no template uses leave the state alone too
    state = copy_world(world)
    for name, args in (
        ("get_user_details", {"user_id": "USR-000001"}),
        ("get_all_users_in_org", {"org_id": "ORG-000001"}),
        ("find_org_by_id", {"org_id": "ORG-000001"}),
        ("find_org_by_name", {"query": "a"}),
    ):
        apply_call(ENV, state, name, args)
        seen_reads.add(name)
    assert state_hash(ENV, state) == before
    assert seen_reads | seen_writes == set(UPSTREAM_TOOLS)


def test_every_template_gold_dry_runs_and_entries_have_upstreams_shape(world, tasks):
    assert len(tasks) == ENTRY_COUNT == 28
    assert {t.data["template"] for t in tasks} == {f.__name__.removeprefix("_t_") for f in TEMPLATES}
    initial = ENV.projection(world)
    for task in tasks:
        entry = task.data
        assert {"id", "entry_num", "instructions", "actions", "outputs", "forbidden_actions", "user"} <= set(
            entry
        )
        assert entry["outputs"] or any(ENV.tools[a["name"]].kind == "write" for a in entry["actions"]), (
            task.id
        )
        after = dry_run(ENV, world, entry["actions"])
        assert (after != initial) == any(ENV.tools[a["name"]].kind == "write" for a in entry["actions"])
        assert set(entry["user"]["facts"]) <= set(ENV.user_slots)
    credit = next(t for t in tasks if t.data["template"] == "downtime_credit").data
    minutes = credit["actions"][-1]["arguments"]["downtime_minutes"]
    sub = world["subscriptions"][credit["actions"][-1]["arguments"]["subscription_id"]]
    assert credit["outputs"] == [
        json.dumps(service_credits(sub["tier"], sub["total_price"], minutes)["credits"])
    ]


def test_slot_asks_match_their_own_slot():
    for slot, ask in ENV.slot_asks.items():
        assert re.search(ENV.user_slots[slot][0], ask.casefold()), slot


def _run(pytester, monkeypatch, model):
    return run_suite(pytester, "benchforce", model, "-k", "hr_software", mode="deep")


def test_oracle_passes_all_28_and_null_none_through_the_suite(pytester, monkeypatch):
    result, egi = _run(pytester, monkeypatch, "egi/oracle")
    result.assert_outcomes(passed=28, deselected=65)  # hospital 64 + order_management 1
    subs = egi["suites"]["benchforce"]["sub_metrics"]
    assert subs["hr_software.accuracy_all"] == subs["hr_software.finished_rate"] == 1.0
    assert subs["hr_software.accuracy_finished"] == 1.0 and subs["hr_software.entries"] == 28.0
    result, egi = _run(pytester, monkeypatch, "egi/null")
    result.assert_outcomes(failed=28, deselected=65)  # hospital 64 + order_management 1
    subs = egi["suites"]["benchforce"]["sub_metrics"]
    # every caller gave up and hung up: finished under upstream's rule, none passed
    assert subs["hr_software.accuracy_all"] == subs["hr_software.accuracy_finished"] == 0.0
    assert subs["hr_software.finished_rate"] == subs["hr_software.gave_up_rate"] == 1.0
    assert subs["hr_software.goal_met_rate"] == 0.0
