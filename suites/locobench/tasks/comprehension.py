"""``code_comprehension``: questions whose answers are computed values and locations.

The model writes ``<pkg>/answers.py`` with ``ANSWERS = {"q1": int, "q2": str, "q3": [str]}``:

- q1: the total ``handle_quote`` returns for a given quantity and unit price: the pipeline's
  steps, in their call order, with ``config.py``'s constants (the needle; the decoy
  ``legacy/settings_v1.py`` has other values);
- q2: the dotted name of the module that applies the handling fee;
- q3: the dotted names of the functions a quote goes through, from ``handle_quote`` to the
  last pricing step.

Hidden tests compare each answer exactly (upstream's "exact-match JSON answers", C2, as a
Python module so that the answer is code the other scores can read).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, price
from suites.locobench.tasks.common import Planted, dedent, find_constant, hidden_header

__all__ = ["plant", "reference"]

CONSTANTS = ("BULK_MIN_UNITS", "BULK_RATE_BP", "HANDLING_FEE_CENTS", "ROUND_TO_CENTS", "MIN_CHARGE_CENTS")


def call_path(plan: Plan) -> list[str]:
    """The functions a quote goes through, from ``handle_quote`` to the last step."""
    p, e, E = plan.pkg, plan.e, plan.E
    return [f"{p}.api.{e}_api.handle_quote", f"{p}.services.{e}_service.{E}Service.quote_total",
            f"{p}.services.pricing.price", *(f"{p}.services.{step}.apply" for step in plan.steps)]  # fmt: skip


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Pick the quote asked about (the bulk rate applies, and the decoy's constants give
    another total)."""
    p = plan.pkg
    while True:
        q = plan.const["BULK_MIN_UNITS"] + rng.randrange(0, 12)
        u = rng.randrange(250, 2500)
        if price(plan, q, u) != price(plan, q, u, const=plan.decoy):
            break
    answer, wrong = price(plan, q, u), price(plan, q, u, const=plan.decoy)
    module = f"{p}.services.surcharges"
    tests = hidden_header(f"""
        from {p}.answers import ANSWERS
        """) + dedent(f'''
        def test_answers_is_a_dict_of_the_three_questions():
            assert isinstance(ANSWERS, dict) and {{"q1", "q2", "q3"}} <= set(ANSWERS)


        def test_needle_q1_quote_total():
            assert ANSWERS["q1"] == {answer}


        def test_q2_module_applying_the_handling_fee():
            assert ANSWERS["q2"] == "{module}"


        def test_q3_call_path():
            assert list(ANSWERS["q3"]) == {call_path(plan)!r}


        def test_decoy_q1_with_the_legacy_settings():
            assert ANSWERS["q1"] == {wrong}
        ''')
    statement = dedent(f"""
        Answer three questions about the code in a new module `{p}/answers.py` that defines one
        constant, `ANSWERS = {{"q1": <int>, "q2": "<str>", "q3": [<str>, ...]}}`:

        - q1: what `total_cents` does `handle_quote` return for a {plan.e} of {q} units at {u} cents each?
        - q2: the dotted name of the module that applies the handling fee (such as `{p}.utils.money`).
        - q3: the functions a quote goes through, in call order, from `handle_quote` to the last pricing
          step, each as a dotted name (`package.module.function`; a method as
          `package.module.Class.method`).

        Change no other file.
        """)
    return Planted(
        title="Questions about the quote pipeline",
        description=f"A new team member needs to understand how the {plan.domain} service prices a quote.",
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[f"{p}/config.py"],
        decoy_files=[f"{p}/legacy/settings_v1.py"],
        info={"quantity": q, "unit": u},
    )


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """q1 computed with the constants read from the shown files (the decoy's when
    ``config.py`` is not shown); q2 and q3 from the call chain."""
    const = {}
    for name in CONSTANTS:
        found = find_constant(context, name)
        const[name] = found[1] if found else plan.const[name] * 0
    q, u = planted.info["quantity"], planted.info["unit"]
    total = price(plan, q, u, const={**plan.const, **const})
    path = "\n".join(f"        {name!r}," for name in call_path(plan))
    text = (f'"""Answers to the questions about the quote pipeline."""\n\nANSWERS = {{\n'
            f'    "q1": {total},\n    "q2": "{plan.pkg}.services.surcharges",\n    "q3": [\n{path}\n    ],\n}}\n')  # fmt: skip
    return {f"{plan.pkg}/answers.py": text.replace("        '", '        "').replace("',\n", '",\n')}
