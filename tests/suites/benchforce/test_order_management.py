"""The order_management environment: upstream's tools and refusals, the identity rule, the
projection, the entry templates, and oracle / null through the suite."""

from __future__ import annotations

import pytest

from pytest_egi.models.offline import Noise, NullClient, PolicyClient
from pytest_egi.suite import SuiteProfile, Task
from suites.benchforce import SUITE
from suites.benchforce.agent import run_trial
from suites.benchforce.env import environment
from suites.benchforce.env.base import EnvToolError, apply_call, copy_world, dry_run, state_hash
from suites.benchforce.env.order_management import ENTRY_COUNT, ENV, NOW, TEMPLATES, make_entries

SEED = 42
WORLD = ENV.build_world(SEED)

UPSTREAM_ARGUMENTS = {
    "confirm_customer_identity": ([], {"customer_id": "string", "verified_email": "string"}),
    "get_order": (["order_id"], {}),
    "create_order": (
        [
            "order_id",
            "customer_id",
            "shipping_address",
            "billing_address",
            "items",
            "order_status",
            "total_amount",
        ],
        {"coupon_code": "string"},
    ),
    "cancel_order": (["order_id"], {}),
    "update_order": (["order_id"], {"order_status": "string"}),
    "update_shipping_address": (["order_id", "new_shipping_address"], {}),
    "update_billing_address": (["order_id", "new_billing_address"], {}),
    "track_order": (["order_id"], {}),
    "confirm_delivery": (["order_id"], {}),
    "return_order": (["order_id", "return_reason"], {}),
    "request_refund": (["order_id", "refund_reason"], {}),
    "apply_coupon": (["order_id", "coupon_code"], {}),
    "remove_coupon": (["order_id"], {}),
    "list_orders": (["customer_id"], {}),
    "get_order_history": (["customer_id"], {}),
    "generate_order_report": (["report_date"], {}),
}
"""Upstream's get_metadata(): tool -> (required, optional arguments with their types); every
required argument is a string except create_order's total_amount (a number)."""



def _state():
    return copy_world(WORLD)


def _run(state, name, **args):
    return apply_call(ENV, state, name, args)


def _order(state, **match):
    return next(o for o in state["orders"].values() if all(o[k] == v for k, v in match.items()))


def _confirm(state, order):
    return _run(state, "confirm_customer_identity", customer_id=order["customer_id"])


def test_registered_with_upstreams_tool_names_arguments_and_types():
    assert environment("order_management") is ENV and len(ENV.tools) == 16
    assert list(ENV.tools) == list(UPSTREAM_ARGUMENTS)
    for name, (required, optional) in UPSTREAM_ARGUMENTS.items():
        props = ENV.tools[name].parameters["properties"]
        assert ENV.tools[name].parameters["required"] == required, name
        assert list(props) == required + list(optional), name
        types = {k: ("number" if k == "total_amount" else "string") for k in required} | optional
        assert {k: p["type"] for k, p in props.items()} == types, name


def test_identity_is_confirmed_by_id_else_email_and_a_miss_is_an_output():
    state = _state()
    c = state["customers"]["C1005"]
    other = state["customers"]["C1006"]
    miss = _run(state, "confirm_customer_identity", customer_id="C9999", verified_email="nobody@x.example")
    assert miss == {
        "status": "not_confirmed",
        "reason": "No matching customer found with provided identifiers.",
    }
    assert state["session"]["verified_customer_id"] is None
    assert _run(state, "confirm_customer_identity", verified_email=c["email"])["method"] == "verified_email"
    assert state["session"]["verified_customer_id"] == "C1005"
    # upstream: a matching customer id wins over the email
    out = _run(state, "confirm_customer_identity", customer_id="C1006", verified_email=c["email"])
    assert (out["status"], out["method"], out["customer"]) == ("confirmed", "customer_id", other)
    assert state["session"]["verified_customer_id"] == "C1006"


def test_every_write_is_refused_before_identity_and_for_another_customers_order():
    state = _state()
    order = _order(state, order_status="processing")
    stranger = next(c for c in state["customers"] if c != order["customer_id"])
    before = state_hash(ENV, state)
    for name, args in _write_calls(order).items():
        with pytest.raises(EnvToolError) as info:
            _run(state, name, **args)
        assert info.value.code == "identity_required", name
        assert str(info.value) == (
            "the customer's identity is not confirmed; call confirm_customer_identity before "
            "changing an order"
        )
    _run(state, "confirm_customer_identity", customer_id=stranger)
    for name, args in _write_calls(order).items():
        with pytest.raises(
            EnvToolError,
            match=rf"^this order belongs to another customer than the confirmed one \({stranger}\)$",
        ):
            _run(state, name, **args)
    assert state_hash(ENV, state) == before


def test_unknown_orders_and_existing_ids_are_refused_as_upstream():
    state = _state()
    order = _order(state, order_status="shipped")
    _confirm(state, order)
    with pytest.raises(EnvToolError, match="^order not found$") as info:
        _run(state, "update_shipping_address", order_id="O0000", new_shipping_address="x")
    assert info.value.code == "not_found"
    for read in ("get_order", "track_order"):
        with pytest.raises(EnvToolError, match="^order not found$"):
            _run(state, read, order_id="O0000")
    create = _write_calls(order)["create_order"]
    with pytest.raises(EnvToolError, match="^order already exists$"):
        _run(state, "create_order", **{**create, "order_id": order["order_id"]})


def _write_calls(order):
    """One call per write tool that changes ``order`` (or adds one for its customer)."""
    oid = order["order_id"]
    return {
        "create_order": dict(
            order_id="O9001",
            customer_id=order["customer_id"],
            shipping_address="1 Test Row, Omaha, NE 68101",
            billing_address="1 Test Row, Omaha, NE 68101",
            items="SKU111",
            order_status="processing",
            total_amount=42.5,
        ),
        "cancel_order": dict(order_id=oid),
        "update_order": dict(order_id=oid, order_status="on_hold"),
        "update_shipping_address": dict(order_id=oid, new_shipping_address="2 New Rd, Boise, ID 83702"),
        "update_billing_address": dict(order_id=oid, new_billing_address="3 Bill St, Tucson, AZ 85701"),
        "confirm_delivery": dict(order_id=oid),
        "return_order": dict(order_id=oid, return_reason="Too small"),
        "request_refund": dict(order_id=oid, refund_reason="Charged twice"),
        "apply_coupon": dict(order_id=oid, coupon_code="TESTCODE"),
        "remove_coupon": dict(order_id=oid),
    }


def test_projection_is_changed_by_every_write_and_by_no_read():
    order = _order(WORLD, order_id="O1001")
    assert (order["order_status"], order["coupon_code"]) == ("processing", "STUDENT12")
    proj = ENV.projection(WORLD)
    assert set(proj) == {"orders"} and len(proj["orders"]) == 70
    assert "session" not in proj and "tracking_number" not in proj["orders"][order["order_id"]]
    writes = {n for n, t in ENV.tools.items() if t.kind == "write"}
    calls = _write_calls(order)
    assert set(calls) == writes and len(writes) == 10
    for name, args in calls.items():
        state = _state()
        _confirm(state, order)
        before = state_hash(ENV, state)
        _run(state, name, **args)
        assert state_hash(ENV, state) != before, name
    reads = {
        "confirm_customer_identity": dict(customer_id=order["customer_id"]),
        "get_order": dict(order_id=order["order_id"]),
        "track_order": dict(order_id=order["order_id"]),
        "list_orders": dict(customer_id=order["customer_id"]),
        "get_order_history": dict(customer_id=order["customer_id"]),
        "generate_order_report": dict(report_date=order["created_date"][:7]),
    }
    assert set(reads) == set(ENV.tools) - writes
    state = _state()
    before = state_hash(ENV, state)
    for name, args in reads.items():
        _run(state, name, **args)
    assert state_hash(ENV, state) == before


def test_upstreams_write_effects():
    state = _state()
    order = _order(state, order_id="O1001")
    oid = order["order_id"]
    _confirm(state, order)
    assert (
        _run(state, "update_order", order_id=oid)["order"]["order_status"] == "processing"
    )  # no status: no change
    assert _run(state, "remove_coupon", order_id=oid)["order"]["coupon_code"] == ""
    out = _run(state, "return_order", order_id=oid, return_reason="Too small")["order"]
    assert (out["return_requested"], out["return_reason"]) == (True, "Too small")
    created = _run(state, "create_order", **_write_calls(order)["create_order"])["order"]
    assert (created["created_date"], created["tracking_number"], created["coupon_code"]) == (NOW, "", "")
    report = _run(state, "generate_order_report", report_date=NOW)
    assert report["total_orders"] == 1 and report["orders"][0]["order_id"] == "O9001"
    assert _run(state, "cancel_order", order_id=oid)["message"] == "Order cancelled"
    assert oid not in state["orders"]  # upstream removes a cancelled order


def test_templates_dry_run_and_the_generator_makes_more_than_upstreams_count():
    assert ENTRY_COUNT == 1 and len(make_entries(WORLD, SEED)) == 1
    entries = make_entries(WORLD, SEED, count=3 * len(TEMPLATES))
    assert len(entries) == 33 and len({e["id"] for e in entries}) == 33
    assert [e["template"] for e in entries[: len(TEMPLATES)]] == [
        "shipping_address",
        "track",
        "billing_address",
        "cancel",
        "return",
        "refund",
        "apply_coupon",
        "remove_coupon",
        "confirm_delivery",
        "place_order",
        "order_history",
    ]
    writes = {n for n, t in ENV.tools.items() if t.kind == "write"}
    for e in entries:
        assert e["actions"][0]["name"] == "confirm_customer_identity", e["id"]
        gold_writes = {a["name"] for a in e["actions"]} & writes
        assert gold_writes or e["outputs"], e["id"]  # a do-nothing agent cannot pass
        assert {f["name"] for f in e["forbidden_actions"]} == writes - gold_writes
        assert set(e["user"]["facts"]) <= set(ENV.slot_asks)
        after = dry_run(ENV, WORLD, e["actions"])
        assert (after != ENV.projection(WORLD)) == bool(gold_writes), e["id"]
    # without the identity call first, every write template's gold is refused
    with pytest.raises(ValueError, match="identity is not confirmed"):
        dry_run(ENV, WORLD, entries[0]["actions"][1:])


@pytest.mark.parametrize("name", ["hospital", "order_management"])
def test_slot_asks_are_answered_by_their_own_slot(name):
    """The contract of ``Environment.slot_asks``: each phrase, as the caller reads it (folded,
    lower-cased), matches its own slot's pattern."""
    import re

    from pytest_egi.normalize import fold_text

    env = environment(name)
    assert set(env.slot_asks) == set(env.user_slots)
    for slot, phrase in env.slot_asks.items():
        assert re.search(env.user_slots[slot][0], fold_text(phrase).casefold()), slot


def _tasks(count):
    entries = make_entries(WORLD, SEED, count=count)
    return [
        Task(
            id=f"order_management.{e['id']}",
            category="order_management",
            data={**e, "env": "order_management", "seed": SEED, "max_turns": 15},
        )
        for e in entries
    ]


def test_the_suite_loads_upstreams_count_and_oracle_passes_null_fails_every_template():
    loaded = SUITE.load_tasks(SuiteProfile(seed=SEED, categories=["order_management"]), None)
    assert [t.id for t in loaded] == ["order_management.entry_0"] and loaded[0].data[
        "template"
    ] == "shipping_address"
    records = []
    for task in _tasks(len(TEMPLATES)):
        noise = Noise(0.0, f"{SEED}|benchforce|{task.id}|1")
        oracle = PolicyClient("egi/oracle", SUITE.reference_policy(task, None, noise), noise)
        traj = run_trial(task, oracle).to_dict()
        score = SUITE.score(task, traj, None)
        assert score.success and score.values["finished"] == 1.0, (task.id, score.got)
        records.append({"task_id": task.id, "category": "order_management", "values": score.values})
        null = SUITE.score(task, run_trial(task, NullClient()).to_dict(), None)
        # the caller gave up and hung up: finished (upstream's terminate), not passed
        assert not null.success and null.values["finished"] == null.values["gave_up"] == 1.0, task.id
    summary = SUITE.summarize(records)
    assert (
        summary["order_management.accuracy_all"] == 1.0 and summary["order_management.finished_rate"] == 1.0
    )
