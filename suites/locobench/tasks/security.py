"""``security_analysis``: request text evaluated as code (``eval``), found by bandit.

Planted: ``services/input_parsing.py`` parses a quantity given as text with ``eval`` (bandit
B307), and ``handle_create`` sends every quantity through it. ``policies/input_policy.py``
(the needle) states how such text must be read: decimal digits only, at most
``QUANTITY_MAX_DIGITS`` of them, anything else refused with the package's ``ValidationError``;
``legacy/input_policy_v1.py`` (the decoy) allows more digits. Checked: the bandit finding is
gone (a static check), an exploit is refused without running, plain quantities still parse,
and (needle) the digit limit of the policy holds.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, api_primary
from suites.locobench.tasks.common import (
    Planted,
    add_import,
    dedent,
    find_constant,
    hidden_header,
    module_name,
)

__all__ = ["BANDIT_TEST_ID", "plant", "reference"]

LIMIT = "QUANTITY_MAX_DIGITS"
BANDIT_TEST_ID = "B307"
"""bandit's test for ``eval`` (``blacklist_calls``: use of possibly insecure function)."""


def _policy(head: str, digits: int) -> str:
    return dedent(f'''
        """{head}

        A quantity given as text is written in decimal digits only (no sign, no space, no other
        character), at most ``{LIMIT}`` digits; anything else is refused with the package's
        ``ValidationError``. Text from a request is never evaluated as code.
        """

        {LIMIT} = {digits}
        ''')


def parsing_module(plan: Plan) -> str:
    """The planted ``services/input_parsing.py`` (``eval`` on request text)."""
    return dedent('''
        """Parsing of request values given as text."""


        def parse_quantity(text: str) -> int:
            """The quantity written in ``text`` (``"12"`` -> 12)."""
            return int(eval(text))
        ''')


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Plant the ``eval`` parser, the input policy (needle) and its legacy copy (decoy)."""
    p, e, E = plan.pkg, plan.e, plan.E
    digits = rng.choice((3, 4))
    decoy_digits = digits + rng.choice((2, 3))
    needle, decoy = f"{p}/policies/input_policy.py", f"{p}/legacy/input_policy_v1.py"
    target = f"{p}/services/input_parsing.py"
    files[needle] = _policy("Input policy: how request values given as text are read.", digits)
    files[decoy] = _policy("Input rules of the first release.", decoy_digits)
    files[target] = parsing_module(plan)
    api = api_primary(plan).replace('int(payload["quantity"])', 'parse_quantity(str(payload["quantity"]))')
    files[f"{p}/api/{e}_api.py"] = add_import(api, f"from {p}.services.input_parsing import parse_quantity")
    small = rng.randrange(2, 9)
    tests = hidden_header(f"""
        import pathlib

        from {p}.api.{e}_api import handle_create, handle_get
        from {p}.errors import ValidationError
        from {p}.repositories.{e}_repository import {E}Repository
        from {p}.services.{e}_service import {E}Service
        from {p}.services.input_parsing import parse_quantity
        """) + dedent(f'''
        def test_digits_are_parsed():
            assert parse_quantity("{small}") == {small}
            assert parse_quantity("0{small}") == {small}


        def test_create_with_a_text_quantity():
            service = {E}Service({E}Repository())
            handle_create(service, {{"id": 1, "name": "t", "quantity": "{small}", "unit_price_cents": 250}})
            assert handle_get(service, {{"id": 1}})["quantity"] == {small}


        def test_an_exploit_is_refused_and_not_run():
            marker = pathlib.Path("pwned.txt")
            with pytest.raises(ValidationError):
                parse_quantity("__import__('pathlib').Path('pwned.txt').write_text('x')")
            assert not marker.exists()


        def test_signs_and_expressions_are_refused():
            for text in ("-3", "2*3", "1e3", " 4", ""):
                with pytest.raises(ValidationError):
                    parse_quantity(text)


        def test_needle_the_policy_digit_limit_is_accepted():
            assert parse_quantity("{"9" * digits}") == {int("9" * digits)}


        def test_needle_one_digit_more_is_refused():
            with pytest.raises(ValidationError):
                parse_quantity("{"1" * (digits + 1)}")


        def test_decoy_the_legacy_digit_limit_is_accepted():
            assert parse_quantity("{"1" * decoy_digits}") == {int("1" * decoy_digits)}
        ''')
    statement = dedent(f"""
        Review `{target}` and the code that calls it for security problems, and fix what you find.
        Quantities given as text must be read as the package's input policy says. `parse_quantity`
        and the handlers keep their signatures; requests that are valid today keep working.
        """)
    return Planted(
        title="Security review of request parsing",
        description=f"A security scan of the {plan.domain} service flagged how request values are parsed.",
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[needle],
        decoy_files=[decoy],
        static_checks=[
            {
                "kind": "bandit_gone",
                "file": target,
                "test_id": BANDIT_TEST_ID,
                "name": "test_bandit_finding_is_gone",
            }
        ],
    )


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Parse digits only, with the digit limit read from the shown files (the decoy's when
    the policy is not shown), raising the package's ``ValidationError``."""
    p = plan.pkg
    target = f"{p}/services/input_parsing.py"
    found = find_constant(context, LIMIT)
    if target not in context or found is None:
        return {}
    text = dedent(f'''
        """Parsing of request values given as text."""

        from {p}.errors import ValidationError
        from {module_name(found[0])} import {LIMIT}


        def parse_quantity(text: str) -> int:
            """The quantity written in ``text`` (``"12"`` -> 12): decimal digits only, at most
            ``{LIMIT}`` of them; ValidationError otherwise (the input policy)."""
            if not (text.isascii() and text.isdigit()) or len(text) > {LIMIT}:
                raise ValidationError(f"quantity must be at most {{{LIMIT}}} decimal digits, got {{text!r}}")
            return int(text)
        ''')
    return {target: text}
