"""``feature_implementation``: express delivery on quotes, as a policy module defines it.

Planted: ``policies/delivery.py`` states the express surcharge and the quantity from which
express is free (the needle); ``legacy/delivery_rates.py`` holds the same constants with
other values (the decoy). The task names the policy, never its values: the model must find
the module, wire an ``express`` flag through the API and the service, and apply the rule
after every other pricing step. Hidden tests: plain quotes unchanged, the keyword exists,
and (needle) express totals and their display.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, format_cents, price
from suites.locobench.tasks.common import (
    Planted,
    add_import,
    dedent,
    find_constant,
    hidden_header,
    module_name,
    replace_once,
)

__all__ = ["plant", "reference"]

SURCHARGE, FREE_FROM = "EXPRESS_SURCHARGE_CENTS", "EXPRESS_FREE_FROM_UNITS"


def _policy(head: str, surcharge: int, free_from: int) -> str:
    return dedent(f'''
        """{head}

        Express delivery costs a flat surcharge per quote, added after every other pricing
        step. Quotes of at least ``{FREE_FROM}`` units ship express at no extra charge.
        """

        {SURCHARGE} = {surcharge}
        {FREE_FROM} = {free_from}
        ''')


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Add the delivery policy (needle) and its legacy copy (decoy); see the module docstring."""
    p, e, E = plan.pkg, plan.e, plan.E
    surcharge, free_from = rng.randrange(300, 990, 10), rng.randrange(25, 60)
    d_surcharge, d_free = surcharge + 110, free_from + 15
    needle, decoy = f"{p}/policies/delivery.py", f"{p}/legacy/delivery_rates.py"
    files[needle] = _policy("Delivery policy, as agreed with the carriers.", surcharge, free_from)
    files[decoy] = _policy("Delivery rates of the first release.", d_surcharge, d_free)
    qs, us = max(1, free_from - 17), rng.randrange(150, 900)
    uf = rng.randrange(100, 400)

    def base(q: int, u: int) -> int:
        return price(plan, q, u)

    tests = hidden_header(f"""
        import inspect

        from {p}.api.{e}_api import handle_create, handle_quote
        from {p}.repositories.{e}_repository import {E}Repository
        from {p}.services.{e}_service import {E}Service
        """) + dedent(f'''
        def _quote(quantity, unit, **extra):
            service = {E}Service({E}Repository())
            handle_create(service, {{"id": 1, "name": "q", "quantity": quantity, "unit_price_cents": unit}})
            return handle_quote(service, {{"id": 1, **extra}})


        def test_plain_quote_unchanged():
            assert _quote({qs}, {us})["total_cents"] == {base(qs, us)}


        def test_express_false_is_a_plain_quote():
            assert _quote({qs}, {us}, express=False)["total_cents"] == {base(qs, us)}


        def test_service_takes_an_express_keyword():
            param = inspect.signature({E}Service.quote_total).parameters.get("express")
            assert param is not None and param.default is False


        def test_needle_express_adds_the_policy_surcharge():
            assert _quote({qs}, {us}, express=True)["total_cents"] == {base(qs, us) + surcharge}


        def test_needle_express_is_free_from_the_policy_threshold():
            assert _quote({free_from}, {uf}, express=True)["total_cents"] == {base(free_from, uf)}


        def test_needle_express_just_below_the_threshold_pays():
            assert _quote({free_from - 1}, {uf}, express=True)["total_cents"] == {base(free_from - 1, uf) + surcharge}


        def test_needle_service_express_total():
            service = {E}Service({E}Repository())
            service.create(5, "s", {qs}, {us})
            assert service.quote_total(5, express=True) == {base(qs, us) + surcharge}


        def test_needle_display_of_an_express_quote():
            assert _quote({qs}, {us}, express=True)["display"] == "{format_cents(plan, base(qs, us) + surcharge)}"


        def test_decoy_express_surcharge():
            assert _quote({qs}, {us}, express=True)["total_cents"] == {base(qs, us) + d_surcharge}
        ''')
    statement = dedent(f"""
        Quotes must support express delivery.

        - `handle_quote` in `{p}/api/{e}_api.py` accepts an optional boolean `express` in its payload
          (default false).
        - `{E}Service.quote_total` accepts a keyword argument `express: bool = False`.
        - Express quotes follow the package's delivery policy: its surcharge, added after every other
          pricing step, and the quantity from which express is free. Use the policy's constants; do
          not copy their values.
        - Quotes without express do not change, and no other public signature changes.
        """)
    return Planted(
        title="Express delivery on quotes",
        description=f"The {plan.domain} service quotes {e} records but cannot price express delivery yet.",
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[needle],
        decoy_files=[decoy],
        may_change=[f"{p}.services.{e}_service:{E}Service.quote_total"],
    )


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Add ``express`` to the service and the API, using the policy constants found in the
    shown files (the decoy's when the policy is not shown)."""
    p, e = plan.pkg, plan.e
    service_path, api_path = f"{p}/services/{e}_service.py", f"{p}/api/{e}_api.py"
    service, api = context.get(service_path), context.get(api_path)
    if service is None or api is None:
        return {}
    found_s, found_f = find_constant(context, SURCHARGE), find_constant(context, FREE_FROM)
    service = replace_once(service, "def quote_total(self, item_id: int) -> int:",
                           "def quote_total(self, item_id: int, express: bool = False) -> int:")  # fmt: skip
    if found_s and found_f:
        source = module_name(found_s[0])
        service = add_import(service, f"from {source} import {FREE_FROM}, {SURCHARGE}")
        service = replace_once(
            service,
            "        total = pricing.price(item.quantity, item.unit_price_cents)\n        return total\n",
            "        total = pricing.price(item.quantity, item.unit_price_cents)\n"
            f"        if express and item.quantity < {FREE_FROM}:\n"
            f"            total += {SURCHARGE}\n"
            "        return total\n",
        )
    api = replace_once(
        api,
        'total = service.quote_total(int(payload["id"]))',
        'total = service.quote_total(int(payload["id"]), express=bool(payload.get("express", False)))',
    )
    return {service_path: service, api_path: api}
