"""``bug_investigation``: a seeded bug in the pricing chain, 3 to 6 calls from the symptom.

Two kinds, chosen by the seed:

- ``off_by_one``: the discount step compares the bulk threshold with ``>`` while the discount
  policy (``policies/discounts.py``, the needle) says a quote of exactly the threshold gets
  the bulk rate; the decoy (``legacy/discount_rules.py``) says the opposite, as the code does.
- ``wrong_constant``: the surcharge step adds a literal a few cents off the handling fee that
  ``config.py`` (the needle) sets; ``legacy/settings_v1.py`` (the decoy) sets another.

The symptom is described at the API (``handle_quote``); hidden tests check the quote at the
bug's trigger (needle) and around it; the visible regression tests keep passing.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, format_cents, price, step_module
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

RULE = "BULK_PRICING_INCLUSIVE"


def _discount_policy(head: str, inclusive: bool) -> str:
    rule = ("starts at ``BULK_MIN_UNITS`` units (see ``config``): a quote of exactly that many\n"
            "units already gets the bulk rate." if inclusive else
            "starts above ``BULK_MIN_UNITS`` units (see ``config``): a quote of exactly that many\n"
            "units pays the full price.")  # fmt: skip
    return f'"""{head}\n\nBulk pricing {rule}\n"""\n\n{RULE} = {inclusive}\n'


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Plant one of the two bugs (see the module docstring)."""
    p, e, E = plan.pkg, plan.e, plan.E
    kind = rng.choice(("off_by_one", "wrong_constant"))
    header = hidden_header(f"""
        from {p}.api.{e}_api import handle_create, handle_quote
        from {p}.repositories.{e}_repository import {E}Repository
        from {p}.services.{e}_service import {E}Service
        """) + dedent("""
        def _quote(quantity, unit):
            service = {E}Service({E}Repository())
            handle_create(service, {{"id": 1, "name": "q", "quantity": quantity, "unit_price_cents": unit}})
            return handle_quote(service, {{"id": 1}})
        """).format(E=E)
    unit = rng.randrange(300, 1500)
    t = plan.const["BULK_MIN_UNITS"]
    if kind == "off_by_one":
        needle, decoy = f"{p}/policies/discounts.py", f"{p}/legacy/discount_rules.py"
        files[needle] = _discount_policy("Discount policy, as the sales team set it.", True)
        files[decoy] = _discount_policy("Discount rules of the first release.", False)
        files[f"{p}/services/discounts.py"] = step_module(plan, "discounts", bulk_op=">")
        at, below, above = price(plan, t, unit), price(plan, t - 1, unit), price(plan, t + 3, unit)
        wrong = price(plan, t, unit, bulk_inclusive=False)
        tests = header + dedent(f'''


            def test_below_the_threshold_pays_the_full_price():
                assert _quote({t - 1}, {unit})["total_cents"] == {below}


            def test_above_the_threshold_gets_the_bulk_rate():
                assert _quote({t + 3}, {unit})["total_cents"] == {above}


            def test_needle_the_threshold_itself_gets_the_bulk_rate():
                assert _quote({t}, {unit})["total_cents"] == {at}


            def test_needle_display_at_the_threshold():
                assert _quote({t}, {unit})["display"] == "{format_cents(plan, at)}"


            def test_decoy_the_threshold_pays_the_full_price():
                assert _quote({t}, {unit})["total_cents"] == {wrong}
            ''')
        description = ("Customers report that some quotes that should get the bulk discount under the "
                       "package's discount policy are priced in full.")  # fmt: skip
        info = {"kind": kind}
    else:
        needle, decoy = f"{p}/config.py", f"{p}/legacy/settings_v1.py"
        fee = plan.const["HANDLING_FEE_CENTS"]
        step = plan.const["ROUND_TO_CENTS"] if "rounding" in plan.steps else 0
        literal = fee - rng.choice([o for o in (9, 18, 27, 36) if o > step])
        files[f"{p}/services/surcharges.py"] = step_module(plan, "surcharges", fee=str(literal))
        qs = (t - 2, t + 4)
        good = [price(plan, q, unit) for q in qs]
        bad = [price(plan, q, unit, const={**plan.const, "HANDLING_FEE_CENTS": plan.decoy["HANDLING_FEE_CENTS"]})
               for q in qs]  # fmt: skip
        tests = header + dedent(f"""


            def test_display_matches_the_total():
                reply = _quote({qs[0]}, {unit})
                units, cents = divmod(reply["total_cents"], 100)
                assert reply["display"].endswith(f"{{units}}.{{cents:02d}}")


            def test_needle_small_quote_charges_the_configured_fee():
                assert _quote({qs[0]}, {unit})["total_cents"] == {good[0]}


            def test_needle_bulk_quote_charges_the_configured_fee():
                assert _quote({qs[1]}, {unit})["total_cents"] == {good[1]}


            def test_decoy_quote_charges_the_legacy_fee():
                assert _quote({qs[0]}, {unit})["total_cents"] == {bad[0]}
            """)
        description = ("Quotes come out a few cents off: the handling fee they include is not the one "
                       "the configuration sets.")  # fmt: skip
        info = {"kind": kind, "literal": literal}
    statement = dedent(f"""
        The symptom shows in `handle_quote` (`{p}/api/{e}_api.py`); the cause is somewhere in the
        pricing chain behind it. Find the cause and fix it there, without changing any other
        behaviour or any public signature.
        """)
    return Planted(
        title="Wrong quote totals",
        description=description,
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[needle],
        decoy_files=[decoy],
        regression_quotes=kind == "off_by_one",
        info=info,
    )


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Fix the bug the shown files reveal: the threshold rule read from the discount policy
    (the decoy's rule, when the policy is not shown, says the code is right: no change), or
    the literal fee replaced by the configured constant (imported from where it is found)."""
    p = plan.pkg
    if planted.info["kind"] == "off_by_one":
        path = f"{p}/services/discounts.py"
        rule = find_constant(context, RULE)
        if path not in context or rule is None or rule[1] is not True:
            return {}
        return {
            path: replace_once(
                context[path], "if quantity > BULK_MIN_UNITS:", "if quantity >= BULK_MIN_UNITS:"
            )
        }
    path = f"{p}/services/surcharges.py"
    found = find_constant(context, "HANDLING_FEE_CENTS")
    if path not in context or found is None:
        return {}
    text = replace_once(
        context[path], f"amount_cents += {planted.info['literal']}", "amount_cents += HANDLING_FEE_CENTS"
    )
    return {path: add_import(text, f"from {module_name(found[0])} import HANDLING_FEE_CENTS")}
