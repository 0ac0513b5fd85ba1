"""The ``order_management`` environment: an online clothing store's customers and orders, with
upstream's 16 tools (reference A4): their names, argument names, types and required lists, and
their refusals (an :class:`EnvToolError` with upstream's message where upstream returned
``"Error: ..."``).

**Identity first** (upstream's policy rule, enforced here by the tools): every write tool
refuses (``identity_required``) until ``confirm_customer_identity`` has confirmed a customer in
the session, and refuses (``identity_mismatch``) a change to an order of another customer, or
an order created for another customer. The session's confirmed customer lives in the state's
``session`` table, outside the projection. We chose a refusal over a forbidden action because
the rule is about order, which the forbidden-action check cannot see, and a refusal shows the
agent the rule as the environment's answer (upstream's tools did not check it at all; its
stateless matching only asked that the gold ``confirm_customer_identity`` call appear).
Reads are not gated (upstream's policy asks for identity before "processing requests").

Upstream's behaviour kept as it is: ``confirm_customer_identity`` matches the customer id
exactly, else the email exactly, and answers ``not_confirmed`` (an output, not an error) when
neither matches; ``cancel_order`` removes the order from the table; ``update_order`` with no
status changes nothing; ``create_order`` takes the order id from the caller. Ours:
``create_order`` also stamps ``created_date`` with the fixed clock and ``refund_requested``
false (upstream left both out of the new record).

Our own seeded data (never upstream's): names, streets, cities, SKUs and coupon codes from our
own lists, ids in upstream's style (``C1001``, ``O1001``, ``TRK1001``). "Today" is fixed at
:data:`NOW`.

Projection judged (:func:`projection`): every order's customer, addresses, items, status,
total, coupon, return and refund flags and reasons. Every write tool changes it when it sets a
new value.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

from suites.benchforce.env.base import (
    ENTRY_COUNTS,
    Environment,
    EnvToolError,
    Integrity,
    ToolSpec,
    UpstreamData,
    entry_id,
    gold_call,
    make_entry,
    object_params,
    string_param,
)
from suites.benchforce.env.upstream_files import (
    TableSpec,
    check_integrity,
    data_file,
    entries_file,
    read_entries,
    read_tables,
    upstream_data,
)

__all__ = ["ENTRY_COUNT", "ENV", "NOW", "make_entries"]

NOW = "2025-05-20"
"""The fixed clock: "today" for the policy and ``create_order``."""

_FIRST = (
    "Adaeze",
    "Bruno",
    "Cosima",
    "Dariusz",
    "Esme",
    "Florian",
    "Greta",
    "Hiroshi",
    "Ines",
    "Jasper",
    "Kalani",
    "Lorenzo",
    "Mireille",
    "Nikolai",
    "Odette",
    "Pavel",
    "Rania",
    "Stellan",
    "Thandiwe",
    "Valentin",
)
_LAST = (
    "Achterberg",
    "Bellweather",
    "Cardenas",
    "Delacroix",
    "Eastwick",
    "Fontaine",
    "Grimaldi",
    "Holloway",
    "Ivanova",
    "Kingsley",
    "Lachance",
    "Marchetti",
    "Northcott",
    "Oyelaran",
    "Prendergast",
    "Ravensworth",
)
_STREETS = (
    "Juniper Row",
    "Harbor View Rd",
    "Old Mill Lane",
    "Quarry Street",
    "Sycamore Court",
    "Tidewater Ave",
    "Wrenfield Blvd",
    "Ashgrove Place",
    "Copperleaf Drive",
    "Lantern Hill Rd",
)
_CITIES = (
    ("Portland", "OR", "972"),
    ("Madison", "WI", "537"),
    ("Savannah", "GA", "314"),
    ("Boise", "ID", "837"),
    ("Tucson", "AZ", "857"),
    ("Burlington", "VT", "054"),
    ("Omaha", "NE", "681"),
    ("Raleigh", "NC", "276"),
)
_COUPONS = ("WELCOME10", "FALLFIT15", "DENIMDAYS", "STUDENT12", "BUNDLE20", "LOYAL5")
_RETURN_REASONS = ("Wrong size", "Item arrived damaged", "Color differs from the photo", "No longer needed")
_REFUND_REASONS = ("Charged twice", "Coupon not applied at checkout", "Package never arrived", "Overcharged")
_STATUSES = ("processing", "shipped", "delivered", "cancelled")


# -- the world ---------------------------------------------------------------------------------


def _address(rng: random.Random) -> str:
    city, state, zip3 = rng.choice(_CITIES)
    unit = f", Unit {rng.randint(2, 40)}" if rng.random() < 0.3 else ""
    return (
        f"{rng.randint(10, 9899)} {rng.choice(_STREETS)}{unit}, {city}, {state} {zip3}{rng.randint(10, 99)}"
    )


def build_world(seed: int) -> dict[str, Any]:
    """The store's tables for ``seed`` (byte-identical per seed): 30 customers, 70 orders,
    and an empty ``session`` (no customer confirmed)."""
    rng = random.Random(f"benchforce-order_management-{seed}")
    names = [f"{f} {lname}" for f in _FIRST for lname in _LAST]
    rng.shuffle(names)
    customers = {}
    for i in range(30):
        cid = f"C{1001 + i}"
        name = names.pop()
        customers[cid] = {
            "customer_id": cid,
            "name": name,
            "email": name.lower().replace(" ", ".") + "@shopper.example",
            "phone": f"555-{4001 + 3 * i}",
        }
    cids = sorted(customers)
    homes = {cid: _address(rng) for cid in cids}
    orders = {}
    for i in range(70):
        oid = f"O{1001 + i}"
        cid = cids[i % len(cids)] if i < len(cids) else rng.choice(cids)
        status = (
            _STATUSES[i % 4]
            if i < 8
            else rng.choice(("processing", "shipped", "shipped", "delivered", "delivered", "cancelled"))
        )
        billing = homes[cid]
        shipping = billing if rng.random() < 0.7 else _address(rng)
        skus = sorted({f"SKU{rng.randint(100, 999)}" for _ in range(rng.randint(1, 3))})
        orders[oid] = {
            "order_id": oid,
            "customer_id": cid,
            "shipping_address": shipping,
            "billing_address": billing,
            "items": ",".join(skus),
            "order_status": status,
            "total_amount": round(rng.uniform(19, 320), 2),
            "coupon_code": rng.choice(_COUPONS) if rng.random() < 0.4 else "",
            "tracking_number": f"TRK{7001 + i}" if status in ("shipped", "delivered") else "",
            "return_requested": False,
            "refund_requested": False,
            "created_date": (dt.date(2025, 5, 20) - dt.timedelta(days=rng.randint(1, 60))).isoformat(),
        }
    return {"customers": customers, "orders": orders, "session": {"verified_customer_id": None}}


_PROJECTED = (
    "customer_id",
    "shipping_address",
    "billing_address",
    "items",
    "order_status",
    "total_amount",
    "coupon_code",
    "return_requested",
    "return_reason",
    "refund_requested",
    "refund_reason",
)


def projection(state: dict[str, Any]) -> dict[str, Any]:
    """The business fields judging compares (module docstring); plain JSON, keyed by id."""
    return {"orders": {k: {f: v.get(f) for f in _PROJECTED} for k, v in state["orders"].items()}}


# -- lookups and the identity rule -------------------------------------------------------------


def _order(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    order = state["orders"].get(order_id)
    if order is None:
        raise EnvToolError("not_found", "order not found")
    return order


def _require_identity(state: dict[str, Any], customer_id: Any) -> None:
    """The identity rule (module docstring): a write needs the session's confirmed customer to
    be ``customer_id``."""
    verified = (state.get("session") or {}).get("verified_customer_id")
    if verified is None:
        raise EnvToolError(
            "identity_required",
            "the customer's identity is not confirmed; call confirm_customer_identity before "
            "changing an order",
        )
    if verified != customer_id:
        raise EnvToolError(
            "identity_mismatch",
            f"this order belongs to another customer than the confirmed one ({verified})",
        )


def _writable(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    order = _order(state, order_id)
    _require_identity(state, order.get("customer_id"))
    return order


# -- tools (pure functions of the state; upstream's arguments and refusals) ------------------


def confirm_customer_identity(
    state: dict[str, Any], customer_id: str | None = None, verified_email: str | None = None
) -> dict[str, Any]:
    """Confirms by customer id (exact), else by email (exact); the confirmed customer is kept
    in ``state["session"]`` for the identity rule."""
    customers = state["customers"]
    method, match = None, None
    if customer_id and customer_id in customers:
        method, match = "customer_id", customers[customer_id]
    elif verified_email:
        match = next((c for c in customers.values() if c.get("email") == verified_email), None)
        method = "verified_email" if match else None
    if match is None:
        return {"status": "not_confirmed", "reason": "No matching customer found with provided identifiers."}
    state.setdefault("session", {})["verified_customer_id"] = match["customer_id"]
    return {"status": "confirmed", "method": method, "customer": dict(match)}


def get_order(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    return dict(_order(state, order_id))


def create_order(
    state: dict[str, Any],
    order_id: str,
    customer_id: str,
    shipping_address: str,
    billing_address: str,
    items: str,
    order_status: str,
    total_amount: float,
    coupon_code: str = "",
) -> dict[str, Any]:
    if order_id in state["orders"]:
        raise EnvToolError("conflict", "order already exists")
    _require_identity(state, customer_id)
    order = {
        "order_id": order_id,
        "customer_id": customer_id,
        "shipping_address": shipping_address,
        "billing_address": billing_address,
        "items": items,
        "order_status": order_status,
        "total_amount": total_amount,
        "coupon_code": coupon_code,
        "tracking_number": "",
        "return_requested": False,
        "refund_requested": False,
        "created_date": NOW,
    }
    state["orders"][order_id] = order
    return {"message": "Order created", "order": dict(order)}


def cancel_order(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    """Removes the order from the table (upstream's behaviour)."""
    _writable(state, order_id)
    return {"message": "Order cancelled", "order": state["orders"].pop(order_id)}


def update_order(state: dict[str, Any], order_id: str, order_status: str = "") -> dict[str, Any]:
    order = _writable(state, order_id)
    if order_status:
        order["order_status"] = order_status
    return {"message": "Order updated", "order": dict(order)}


def update_shipping_address(
    state: dict[str, Any], order_id: str, new_shipping_address: str
) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["shipping_address"] = new_shipping_address
    return {"message": "Shipping address updated", "order": dict(order)}


def update_billing_address(state: dict[str, Any], order_id: str, new_billing_address: str) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["billing_address"] = new_billing_address
    return {"message": "Billing address updated", "order": dict(order)}


def track_order(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    order = _order(state, order_id)
    return {
        "order_id": order_id,
        "tracking_number": order.get("tracking_number", ""),
        "order_status": order.get("order_status", "unknown"),
    }


def confirm_delivery(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["order_status"] = "delivered"
    return {"message": "Order delivery confirmed", "order": dict(order)}


def return_order(state: dict[str, Any], order_id: str, return_reason: str) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["return_requested"], order["return_reason"] = True, return_reason
    return {"message": "Return process initiated", "order": dict(order)}


def request_refund(state: dict[str, Any], order_id: str, refund_reason: str) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["refund_requested"], order["refund_reason"] = True, refund_reason
    return {"message": "Refund requested", "order": dict(order)}


def apply_coupon(state: dict[str, Any], order_id: str, coupon_code: str) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["coupon_code"] = coupon_code
    return {"message": "Coupon applied", "order": dict(order)}


def remove_coupon(state: dict[str, Any], order_id: str) -> dict[str, Any]:
    order = _writable(state, order_id)
    order["coupon_code"] = ""
    return {"message": "Coupon removed", "order": dict(order)}


def list_orders(state: dict[str, Any], customer_id: str) -> list[dict[str, Any]]:
    return [dict(o) for o in state["orders"].values() if o.get("customer_id") == customer_id]


def get_order_history(state: dict[str, Any], customer_id: str) -> list[dict[str, Any]]:
    return [dict(o) for o in state["orders"].values() if o.get("customer_id") == customer_id]


def generate_order_report(state: dict[str, Any], report_date: str) -> dict[str, Any]:
    rows = [
        dict(o) for o in state["orders"].values() if str(o.get("created_date") or "").startswith(report_date)
    ]
    return {"report_date": report_date, "total_orders": len(rows), "orders": rows}


ORDER_ID = string_param("The order's id (like O1001)")
CUSTOMER_ID = string_param("The customer's id (like C1001)")

TOOLS: dict[str, ToolSpec] = {
    t.name: t
    for t in (
        ToolSpec(
            "confirm_customer_identity",
            "Confirm the customer's identity by their customer ID or the email address on file.",
            object_params(
                {},
                {
                    "customer_id": CUSTOMER_ID,
                    "verified_email": string_param("The customer's email address on file"),
                },
            ),
            confirm_customer_identity,
        ),
        ToolSpec("get_order", "Get an order's details.", object_params({"order_id": ORDER_ID}), get_order),
        ToolSpec(
            "create_order",
            "Create a new order for the confirmed customer.",
            object_params(
                {
                    "order_id": string_param("The new order's id (like O1001)"),
                    "customer_id": CUSTOMER_ID,
                    "shipping_address": string_param("Where to ship the order"),
                    "billing_address": string_param("The billing address"),
                    "items": string_param("Item SKUs, comma-separated"),
                    "order_status": string_param("The order's status (like processing)"),
                    "total_amount": {"type": "number", "description": "The order's total"},
                },
                {"coupon_code": string_param("A coupon code (optional)")},
            ),
            create_order,
            "write",
        ),
        ToolSpec(
            "cancel_order",
            "Cancel an order (it is removed).",
            object_params({"order_id": ORDER_ID}),
            cancel_order,
            "write",
        ),
        ToolSpec(
            "update_order",
            "Update an order's status.",
            object_params(
                {"order_id": ORDER_ID}, {"order_status": string_param("The new status (optional)")}
            ),
            update_order,
            "write",
        ),
        ToolSpec(
            "update_shipping_address",
            "Change where an order ships.",
            object_params(
                {"order_id": ORDER_ID, "new_shipping_address": string_param("The new shipping address")}
            ),
            update_shipping_address,
            "write",
        ),
        ToolSpec(
            "update_billing_address",
            "Change an order's billing address.",
            object_params(
                {"order_id": ORDER_ID, "new_billing_address": string_param("The new billing address")}
            ),
            update_billing_address,
            "write",
        ),
        ToolSpec(
            "track_order",
            "Get an order's tracking number and status.",
            object_params({"order_id": ORDER_ID}),
            track_order,
        ),
        ToolSpec(
            "confirm_delivery",
            "Mark an order as delivered.",
            object_params({"order_id": ORDER_ID}),
            confirm_delivery,
            "write",
        ),
        ToolSpec(
            "return_order",
            "Start a return for an order, with the reason.",
            object_params({"order_id": ORDER_ID, "return_reason": string_param("Why the order is returned")}),
            return_order,
            "write",
        ),
        ToolSpec(
            "request_refund",
            "Request a refund for an order, with the reason.",
            object_params({"order_id": ORDER_ID, "refund_reason": string_param("Why a refund is requested")}),
            request_refund,
            "write",
        ),
        ToolSpec(
            "apply_coupon",
            "Put a coupon code on an order.",
            object_params({"order_id": ORDER_ID, "coupon_code": string_param("The coupon code")}),
            apply_coupon,
            "write",
        ),
        ToolSpec(
            "remove_coupon",
            "Take the coupon code off an order.",
            object_params({"order_id": ORDER_ID}),
            remove_coupon,
            "write",
        ),
        ToolSpec(
            "list_orders",
            "List a customer's orders.",
            object_params({"customer_id": CUSTOMER_ID}),
            list_orders,
        ),
        ToolSpec(
            "get_order_history",
            "Get a customer's order history.",
            object_params({"customer_id": CUSTOMER_ID}),
            get_order_history,
        ),
        ToolSpec(
            "generate_order_report",
            "Summarize the orders created on a day (YYYY-MM-DD) or in a month (YYYY-MM).",
            object_params({"report_date": string_param("YYYY-MM-DD or YYYY-MM")}),
            generate_order_report,
        ),
    )
}

POLICY = f"""You are the order-support assistant of an online clothing store. Today is {NOW}.

- Identity first: before you change anything, confirm who the customer is with
  confirm_customer_identity, using their customer ID or the email address on their account.
  The system refuses every change until a customer is confirmed, and refuses changes to orders
  that belong to someone else.
- Ask for an order ID or other details only when the customer's request needs them.
- Before any change (new order, cancellation, address, return, refund, coupon, delivery),
  repeat the details and ask the customer to confirm; act only after they agree. A cancelled
  order is removed.
- Use the tools to look things up; never invent an order, an id or a result. Tell the customer
  the outcome of every change and the information they asked for; if a tool refuses, say why.
- Share only what the request needs; for anything outside these tools, refer the customer to a
  human representative.
"""
"""The agent's system prompt (our own wording of upstream's order-management policy)."""


# -- the caller's facts ----------------------------------------------------------------------

USER_SLOTS: dict[str, tuple[str, str]] = {
    "name": (r"\b(your|full) name\b|\bwho (am i|is) (speaking|calling)\b", "My name is {}."),
    "customer_id": (r"\bcustomer (id|number)\b", "My customer ID is {}."),
    "email": (r"\be-?mail\b", "My email address is {}."),
    "order_id": (r"\border (id|number)\b|\bwhich order\b", "The order ID is {}."),
    "shipping_address": (r"\bshipping address\b|\bship (it )?to\b", "The shipping address is {}."),
    "billing_address": (r"\bbilling address\b", "The billing address is {}."),
    "reason": (r"\breason\b|\bwhy\b", "The reason is: {}."),
    "coupon": (r"\bcoupon\b|\bpromo\w*\b|\bdiscount code\b", "The coupon code is {}."),
    "items": (r"\bitems?\b|\bskus?\b|\bproducts?\b", "The items are {}."),
    "total": (r"\btotal\b|\bamount\b", "The total is {}."),
    "order_status": (r"\b(new|order) status\b", "The status should be {}."),
    "report_date": (r"\breport\b|\bwhich (date|day|month)\b", "The date is {}."),
}
"""The facts a caller can be asked for: slot -> (question pattern, answer sentence)."""
SLOT_ASKS: dict[str, str] = {
    "name": "your full name",
    "customer_id": "your customer ID",
    "email": "the email on your account",
    "order_id": "the order ID",
    "shipping_address": "the shipping address",
    "billing_address": "the billing address",
    "reason": "the reason",
    "coupon": "the coupon code",
    "items": "the items (SKUs)",
    "total": "the order total",
    "order_status": "the new status",
    "report_date": "which date the report is for",
}
"""How the reference policy asks for each fact (each phrase matches its slot's pattern)."""


# -- entry templates ---------------------------------------------------------------------------


_WRITES = tuple(n for n, t in TOOLS.items() if t.kind == "write")


def _who(s: dict[str, Any], order: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """The order's customer, the identity facts they give, and the gold identity call."""
    c = s["customers"][order["customer_id"]]
    facts = {"name": c["name"], "customer_id": c["customer_id"], "email": c["email"]}
    return (
        c,
        facts,
        gold_call("confirm_customer_identity", customer_id=c["customer_id"], verified_email=c["email"]),
    )


def _entry(
    template: str,
    goal: str,
    facts: dict[str, str],
    actions: list[dict[str, Any]],
    outputs: list[str] | None = None,
) -> dict[str, Any]:
    return make_entry(
        "You are a customer of the store.", template, goal, facts, actions, outputs, writes=_WRITES
    )


def _pick(
    s: dict[str, Any], rng: random.Random, *statuses: str, coupon: bool | None = None
) -> dict[str, Any]:
    rows = [
        o
        for o in s["orders"].values()
        if o["order_status"] in statuses and (coupon is None or bool(o["coupon_code"]) == coupon)
    ]
    return rng.choice(rows)


def _t_shipping(s, rng):
    o = _pick(s, rng, "processing", "shipped")
    _, facts, confirm = _who(s, o)
    new = _address(rng)
    return _entry(
        "shipping_address",
        "change where my order ships.",
        {**facts, "order_id": o["order_id"], "shipping_address": new},
        [
            confirm,
            gold_call("get_order", order_id=o["order_id"]),
            gold_call("update_shipping_address", order_id=o["order_id"], new_shipping_address=new),
        ],
    )


def _t_track(s, rng):
    o = _pick(s, rng, "shipped")
    _, facts, confirm = _who(s, o)
    return _entry(
        "track",
        "know where my order is and its tracking number.",
        {**facts, "order_id": o["order_id"]},
        [confirm, gold_call("track_order", order_id=o["order_id"])],
        [o["tracking_number"]],
    )


def _t_billing(s, rng):
    o = _pick(s, rng, "processing", "shipped", "delivered")
    _, facts, confirm = _who(s, o)
    new = _address(rng)
    return _entry(
        "billing_address",
        "correct the billing address on my order.",
        {**facts, "order_id": o["order_id"], "billing_address": new},
        [
            confirm,
            gold_call("get_order", order_id=o["order_id"]),
            gold_call("update_billing_address", order_id=o["order_id"], new_billing_address=new),
        ],
    )


def _t_cancel(s, rng):
    o = _pick(s, rng, "processing")
    _, facts, confirm = _who(s, o)
    return _entry(
        "cancel",
        "cancel an order I no longer want.",
        {**facts, "order_id": o["order_id"]},
        [
            confirm,
            gold_call("track_order", order_id=o["order_id"]),
            gold_call("cancel_order", order_id=o["order_id"]),
        ],
    )


def _t_return(s, rng):
    o = _pick(s, rng, "delivered")
    _, facts, confirm = _who(s, o)
    reason = rng.choice(_RETURN_REASONS)
    return _entry(
        "return",
        "return an order I received.",
        {**facts, "order_id": o["order_id"], "reason": reason},
        [
            confirm,
            gold_call("get_order", order_id=o["order_id"]),
            gold_call("return_order", order_id=o["order_id"], return_reason=reason),
        ],
    )


def _t_refund(s, rng):
    o = _pick(s, rng, "delivered", "cancelled")
    _, facts, confirm = _who(s, o)
    reason = rng.choice(_REFUND_REASONS)
    return _entry(
        "refund",
        "get a refund on one of my orders.",
        {**facts, "order_id": o["order_id"], "reason": reason},
        [confirm, gold_call("request_refund", order_id=o["order_id"], refund_reason=reason)],
    )


def _t_apply_coupon(s, rng):
    o = _pick(s, rng, "processing", "shipped", coupon=False)
    _, facts, confirm = _who(s, o)
    code = rng.choice(_COUPONS)
    return _entry(
        "apply_coupon",
        "use a coupon on my order.",
        {**facts, "order_id": o["order_id"], "coupon": code},
        [confirm, gold_call("apply_coupon", order_id=o["order_id"], coupon_code=code)],
    )


def _t_remove_coupon(s, rng):
    o = _pick(s, rng, "processing", "shipped", coupon=True)
    _, facts, confirm = _who(s, o)
    return _entry(
        "remove_coupon",
        "take the coupon off my order.",
        {**facts, "order_id": o["order_id"]},
        [
            confirm,
            gold_call("get_order", order_id=o["order_id"]),
            gold_call("remove_coupon", order_id=o["order_id"]),
        ],
    )


def _t_delivered(s, rng):
    o = _pick(s, rng, "shipped")
    _, facts, confirm = _who(s, o)
    return _entry(
        "confirm_delivery",
        "let you know my order has arrived.",
        {**facts, "order_id": o["order_id"]},
        [
            confirm,
            gold_call("track_order", order_id=o["order_id"]),
            gold_call("confirm_delivery", order_id=o["order_id"]),
        ],
    )


def _t_place(s, rng):
    c = s["customers"][rng.choice(sorted(s["customers"]))]
    new_id = f"O{max(int(k[1:]) for k in s['orders']) + 1 + rng.randint(0, 50)}"
    facts = {"name": c["name"], "customer_id": c["customer_id"], "email": c["email"]}
    address = _address(rng)
    items = ",".join(sorted({f"SKU{rng.randint(100, 999)}" for _ in range(rng.randint(1, 3))}))
    total = round(rng.uniform(19, 320), 2)
    return _entry(
        "place_order",
        f"place a new order; my checkout page gave it the number {new_id}.",
        {
            **facts,
            "order_id": new_id,
            "items": items,
            "shipping_address": address,
            "billing_address": address,
            "total": f"{total:.2f}",
        },
        [
            gold_call("confirm_customer_identity", customer_id=c["customer_id"], verified_email=c["email"]),
            gold_call(
                "create_order",
                order_id=new_id,
                customer_id=c["customer_id"],
                shipping_address=address,
                billing_address=address,
                items=items,
                order_status="processing",
                total_amount=total,
            ),
        ],
    )


def _t_history(s, rng):
    c = s["customers"][rng.choice(sorted(s["customers"]))]
    facts = {"name": c["name"], "customer_id": c["customer_id"], "email": c["email"]}
    mine = [o["order_id"] for o in s["orders"].values() if o["customer_id"] == c["customer_id"]]
    return _entry(
        "order_history",
        "hear the numbers of all my orders.",
        facts,
        [
            gold_call("confirm_customer_identity", customer_id=c["customer_id"], verified_email=c["email"]),
            gold_call("get_order_history", customer_id=c["customer_id"]),
        ],
        mine,
    )


TEMPLATES = (
    _t_shipping,
    _t_track,
    _t_billing,
    _t_cancel,
    _t_return,
    _t_refund,
    _t_apply_coupon,
    _t_remove_coupon,
    _t_delivered,
    _t_place,
    _t_history,
)
ENTRY_COUNT = ENTRY_COUNTS["order_management"]
"""Entries the suite generates: upstream's order_management count (its ``entries.py`` holds one
entry). ``make_entries(..., count=N)`` draws more from the same templates."""


def make_entries(state: dict[str, Any], seed: int, count: int | None = None) -> list[dict[str, Any]]:
    """``count`` entries (default :data:`ENTRY_COUNT`), the templates in turn, each over its
    own draw of the world; the first is always a shipping-address change (upstream's one
    entry's request)."""
    rng = random.Random(f"benchforce-order_management-entries-{seed}")
    out = []
    for i in range(ENTRY_COUNT if count is None else count):
        entry = TEMPLATES[i % len(TEMPLATES)](state, rng)
        out.append({"id": entry_id(i), "entry_num": i + 1, **entry})
    return out


# -- upstream's files ----------------------------------------------------------------------------

UPSTREAM_TABLES: dict[str, TableSpec] = {
    "customers": TableSpec("customer_id", required=("name", "email"), optional=("phone",)),
    "orders": TableSpec(
        "order_id",
        required=("customer_id",),
        optional=(
            "shipping_address",
            "billing_address",
            "items",
            "order_status",
            "total_amount",
            "coupon_code",
            "tracking_number",
            "return_requested",
            "refund_requested",
            "created_date",
        ),
        types={
            "shipping_address": str,
            "billing_address": str,
            "items": str,
            "order_status": str,
            "total_amount": float,
            "coupon_code": str,
            "tracking_number": str,
            "return_requested": bool,
            "refund_requested": bool,
            "created_date": str,
        },
        defaults={
            "coupon_code": "",
            "tracking_number": "",
            "return_requested": False,
            "refund_requested": False,
        },
    ),
}
"""How each upstream table maps to ours (customers: a list of records; orders: keyed by id)."""

UPSTREAM_SLOTS: dict[str, str] = {
    "customer_id": "customer_id",
    "verified_email": "email",
    "order_id": "order_id",
    "new_shipping_address": "shipping_address",
    "shipping_address": "shipping_address",
    "new_billing_address": "billing_address",
    "billing_address": "billing_address",
    "return_reason": "reason",
    "refund_reason": "reason",
    "coupon_code": "coupon",
    "items": "items",
    "total_amount": "total",
    "order_status": "order_status",
    "report_date": "report_date",
}
"""Gold argument -> the caller's slot that gives it (for upstream entries' ``user`` block)."""
INSTRUCTION_FACTS = {"name": r"\bYour name is ([^.]+)\."}
"""Facts read from upstream's instructions (slot -> regex, first group)."""


INTEGRITY = Integrity(
    keys={table: spec.key for table, spec in UPSTREAM_TABLES.items()},
    references={("orders", "customer_id"): "customers"},
    non_negative=(("orders", "total_amount"),),
)
"""Every record's id is its key, every order's customer exists, and no total is negative."""


def load_upstream(env_dir: Path) -> UpstreamData:
    """Upstream's order_management files under ``env_dir`` (``data/customers.json``,
    ``data/orders.json``, ``entries.py``), with no customer confirmed in the session.

    Raises:
        FileNotFoundError: a table's file is absent.
        ValueError: a malformed file, or records that cannot be right (:data:`INTEGRITY`);
            the message names the file, the record, the field and the fix.
    """
    world: dict[str, Any] = dict(read_tables(env_dir, UPSTREAM_TABLES))
    check_integrity(world, INTEGRITY, lambda table, _key: data_file(env_dir, table))
    world["session"] = {"verified_customer_id": None}
    return upstream_data(
        ENV, world, read_entries(env_dir), UPSTREAM_SLOTS, INSTRUCTION_FACTS, source=entries_file(env_dir)
    )


ENV = Environment(
    name="order_management",
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
"""The order_management environment."""
