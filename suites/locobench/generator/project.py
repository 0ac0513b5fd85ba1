"""The base project every scenario starts from: a layered Python package made from a seed.

Layers (stated in the package docstring, checked by the software-engineering score): ``api``
calls ``services``; ``services`` call ``repositories``, other services, ``policies``,
``utils``, ``config`` and ``errors``; ``repositories`` use ``models``; ``models`` use
``utils``; nothing imports ``api`` or ``legacy`` (the decoys). Two record kinds: the primary
one is priced by a quote pipeline (``api.<e>_api.handle_quote`` -> ``services.<e>_service``
-> ``services.pricing.price`` -> one module per pricing step, each calling the next: the
call chain's depth is the scenario's hop count), the secondary one is registered with a
region. Constants live in ``config.py``; ``legacy/settings_v1.py`` is a decoy with the same
names and other values that no module imports.

Everything here is a pure function of :class:`Plan`, so the same seed gives the same tree.
"""

from __future__ import annotations

import random
import textwrap
from dataclasses import dataclass, field

from suites.locobench.generator.vocab import DOMAINS, PREFIXES, REGIONS

__all__ = [
    "ALLOWED_IMPORTS",
    "STEP_RULES",
    "Plan",
    "base_files",
    "layer_of",
    "make_plan",
    "price",
]

STEP_RULES = ("discounts", "surcharges", "rounding", "minimums")
"""Pricing steps a quote pipeline can have (each a module ``services/<name>.py``)."""

ALLOWED_IMPORTS: dict[str, frozenset[str]] = {
    "api": frozenset({"services", "utils", "config", "errors"}),
    "services": frozenset({"services", "repositories", "models", "policies", "utils", "config", "errors"}),
    "repositories": frozenset({"repositories", "models", "utils", "config", "errors"}),
    "models": frozenset({"models", "utils"}),
    "utils": frozenset({"utils", "config", "errors"}),
    "policies": frozenset(),
    "config": frozenset(),
    "errors": frozenset({"errors"}),
    "legacy": frozenset({"legacy", "models", "utils", "config", "errors"}),
    "reporting": frozenset({"reporting", "utils", "config"}),
    "analytics": frozenset({"analytics", "utils", "config"}),
    "housekeeping": frozenset({"housekeeping", "utils", "config"}),
    "notifications": frozenset({"notifications", "utils", "config"}),
    "": frozenset(),
}
"""Layer -> the layers its modules may import (the package's layering rules). The layer of a
module is its first part under the package (``services`` for ``pkg.services.pricing``; a
top-level module such as ``pkg.config`` is its own layer). Nothing may import ``legacy``."""


def layer_of(module: str, package: str) -> str | None:
    """The layer of a dotted module name of ``package`` (None when it is not in it; ``""``
    for the package's ``__init__``)."""
    parts = module.split(".")
    if parts[0] != package:
        return None
    return parts[1] if len(parts) > 1 else ""


def _title(word: str) -> str:
    return "".join(p.capitalize() for p in word.split("_"))


@dataclass(frozen=True)
class Plan:
    """What a generated project is made of (all from the seed).

    Attributes:
        pkg: the package name (``harbor_fleet``).
        domain: the domain word (``fleet``).
        e, s: the primary (priced) and secondary (registered) record kinds, snake case.
        steps: the pricing steps in call order (modules ``services/<step>.py``).
        const: ``config.py``'s constants (cents, basis points, units).
        decoy: the decoy's values of the same constants (each differs).
        regions: the regions a secondary record may have (``config.ALLOWED_REGIONS``).
        currency: the currency code ``utils.money.format_cents`` prints.
    """

    pkg: str
    domain: str
    e: str
    s: str
    steps: tuple[str, ...]
    const: dict[str, int] = field(hash=False)
    decoy: dict[str, int] = field(hash=False)
    regions: tuple[str, ...]
    currency: str

    @property
    def E(self) -> str:  # noqa: N802 - the class name of the primary record
        """Class name of the primary record (``Trip``)."""
        return _title(self.e)

    @property
    def S(self) -> str:  # noqa: N802 - the class name of the secondary record
        """Class name of the secondary record (``Vehicle``)."""
        return _title(self.s)


def draw_domain(rng: random.Random) -> tuple[str, str, str]:
    """The first draw of :func:`make_plan`: ``(domain, primary entity, secondary entity)``
    of :data:`~suites.locobench.generator.vocab.DOMAINS` (a scenario's id names the domain,
    so the id is told from this draw alone, without building the project)."""
    return rng.choice(DOMAINS)


def make_plan(rng: random.Random, depth: int) -> Plan:
    """A plan for a project whose quote pipeline has ``depth`` steps (2-4)."""
    domain, e, s = draw_domain(rng)
    pkg = f"{rng.choice(PREFIXES)}_{domain}"
    extra = [x for x in STEP_RULES if x not in ("discounts", "surcharges")]
    rng.shuffle(extra)
    steps = ["discounts", "surcharges", *extra[: max(0, min(depth, 4) - 2)]]
    rng.shuffle(steps)
    const = {
        "MAX_QUANTITY": rng.randrange(200, 900, 10),
        "BULK_MIN_UNITS": rng.randrange(8, 16),
        "BULK_RATE_BP": rng.randrange(500, 1600, 50),
        "HANDLING_FEE_CENTS": rng.randrange(150, 460, 10),
        "ROUND_TO_CENTS": rng.choice((5, 10, 25)),
        "MIN_CHARGE_CENTS": rng.randrange(500, 1600, 50),
    }
    decoy = {}
    for key, value in const.items():
        shift = {"BULK_MIN_UNITS": 3, "ROUND_TO_CENTS": 0, "MAX_QUANTITY": 100}.get(key, value // 5 or 1)
        decoy[key] = value + shift if key != "ROUND_TO_CENTS" else (10 if value != 10 else 25)
    regions = tuple(sorted(rng.sample(REGIONS, 4)))
    return Plan(pkg, domain, e, s, tuple(steps), const, decoy, regions, rng.choice(("EUR", "USD", "GBP")))


def apply_step(
    step: str, amount: int, quantity: int, const: dict[str, int], *, bulk_inclusive: bool = True
) -> int:
    """One pricing step, as ``services/<step>.py`` computes it (cents)."""
    if step == "discounts":
        hit = quantity >= const["BULK_MIN_UNITS"] if bulk_inclusive else quantity > const["BULK_MIN_UNITS"]
        return amount - amount * const["BULK_RATE_BP"] // 10_000 if hit else amount
    if step == "surcharges":
        return amount + const["HANDLING_FEE_CENTS"]
    if step == "rounding":
        r = const["ROUND_TO_CENTS"]
        return -(-amount // r) * r
    if step == "minimums":
        return max(amount, const["MIN_CHARGE_CENTS"])
    raise ValueError(f"unknown pricing step {step!r}")


def price(
    plan: Plan, quantity: int, unit_price_cents: int, const: dict[str, int] | None = None, **kw: bool
) -> int:
    """The quote total the project computes (the ground truth of hidden tests), in cents."""
    amount = quantity * unit_price_cents
    for step in plan.steps:
        amount = apply_step(step, amount, quantity, const or plan.const, **kw)
    return amount


def format_cents(plan: Plan, amount: int) -> str:
    """What ``utils.money.format_cents`` prints for ``amount`` cents."""
    return f"{plan.currency} {amount // 100}.{amount % 100:02d}"


def _dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def package_init(plan: Plan) -> str:
    """``<pkg>/__init__.py``: what the package is, and its layering rules."""
    p = plan.pkg
    return _dedent(f'''
        """{_title(plan.domain)} service: {plan.e} and {plan.s} records, quotes and their API.

        Architecture (the layering rules every module follows):

        - ``{p}.api`` calls ``{p}.services`` (and ``utils``, ``config``, ``errors``) only;
        - ``{p}.services`` call ``{p}.repositories``, other services, ``{p}.models``,
          ``{p}.policies``, ``{p}.utils``, ``{p}.config`` and ``{p}.errors``;
        - ``{p}.repositories`` use ``{p}.models``, ``{p}.utils``, ``{p}.config`` and ``{p}.errors``;
        - ``{p}.models`` use ``{p}.utils`` only;
        - ``{p}.policies`` and ``{p}.config`` import nothing;
        - nothing imports ``{p}.api``, and nothing imports ``{p}.legacy`` (kept for reference only).
        """
        ''')


def config_module(plan: Plan, const: dict[str, int] | None = None, decoy: bool = False) -> str:
    """``config.py`` (or, with ``decoy``, the legacy copy with the decoy's values)."""
    c = const or (plan.decoy if decoy else plan.const)
    head = ("Settings of the first release, kept for reference." if decoy
            else "Settings shared by every layer.")  # fmt: skip
    regions = ", ".join(repr(r) for r in plan.regions)
    return _dedent(f'''
        """{head}"""

        CURRENCY = "{plan.currency}"
        MAX_QUANTITY = {c["MAX_QUANTITY"]}
        BULK_MIN_UNITS = {c["BULK_MIN_UNITS"]}
        BULK_RATE_BP = {c["BULK_RATE_BP"]}
        HANDLING_FEE_CENTS = {c["HANDLING_FEE_CENTS"]}
        ROUND_TO_CENTS = {c["ROUND_TO_CENTS"]}
        MIN_CHARGE_CENTS = {c["MIN_CHARGE_CENTS"]}
        ALLOWED_REGIONS = ({regions},)
        ''')


def errors_module(plan: Plan, extra: str = "") -> str:
    """``errors.py``: the package's exceptions (``extra``: more classes, appended)."""
    base = _title(plan.domain)
    return (
        _dedent(f'''
        """Exceptions raised by the {plan.domain} service."""


        class {base}Error(Exception):
            """Base class of every error the service raises."""


        class ValidationError({base}Error, ValueError):
            """Input that breaks a rule of the service."""


        class NotFoundError({base}Error, LookupError):
            """A record that does not exist."""
        ''')
        + extra
    )


def money_module(plan: Plan) -> str:
    """``utils/money.py``."""
    return _dedent(f'''
        """Money helpers: amounts are integers in cents."""

        from {plan.pkg}.config import CURRENCY


        def format_cents(amount_cents: int) -> str:
            """``amount_cents`` as ``"<CURRENCY> <units>.<cents>"`` (``"EUR 12.05"``)."""
            return f"{{CURRENCY}} {{amount_cents // 100}}.{{amount_cents % 100:02d}}"


        def apply_basis_points(amount_cents: int, basis_points: int) -> int:
            """The share of ``amount_cents`` given by ``basis_points`` (1/100 of a percent),
            rounded down."""
            return amount_cents * basis_points // 10_000
        ''')


def validation_module(plan: Plan) -> str:
    """``utils/validation.py``."""
    return _dedent(f'''
        """Checks shared by the services."""

        from {plan.pkg}.errors import ValidationError


        def require_positive(name: str, value: int) -> int:
            """``value`` when it is a positive integer; ValidationError otherwise."""
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValidationError(f"{{name}} must be a positive integer, got {{value!r}}")
            return value


        def require_text(name: str, value: str) -> str:
            """``value`` stripped, when it is non-empty text; ValidationError otherwise."""
            if not isinstance(value, str) or not value.strip():
                raise ValidationError(f"{{name}} must be non-empty text, got {{value!r}}")
            return value.strip()
        ''')


def text_module() -> str:
    """``utils/text.py``."""
    return _dedent('''
        """Text helpers."""


        def slugify(text: str) -> str:
            """Lower-case words of ``text`` joined by dashes (``"Big Box" -> "big-box"``)."""
            words = "".join(ch.lower() if ch.isalnum() else " " for ch in text).split()
            return "-".join(words)


        def shorten(text: str, limit: int = 40) -> str:
            """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
            return text if len(text) <= limit else text[: limit - 3] + "..."
        ''')


def model_primary(plan: Plan) -> str:
    """``models/<e>.py``."""
    return _dedent(f'''
        """The {plan.e} record."""

        from dataclasses import dataclass


        @dataclass
        class {plan.E}:
            """One {plan.e}: how many units at what unit price."""

            id: int
            name: str
            quantity: int
            unit_price_cents: int
            status: str = "open"

            def subtotal_cents(self) -> int:
                """Quantity times unit price, in cents, before any pricing step."""
                return self.quantity * self.unit_price_cents
        ''')


def model_secondary(plan: Plan, extra_field: str = "") -> str:
    """``models/<s>.py`` (``extra_field``: one more field line, indented)."""
    body = _dedent(f'''
        """The {plan.s} record."""

        from dataclasses import dataclass


        @dataclass
        class {plan.S}:
            """One {plan.s}, registered in a region."""

            id: int
            name: str
            region: str
            active: bool = True
        ''')
    return body + (f"    {extra_field}\n" if extra_field else "")


def repository_primary(plan: Plan, lookup: str = "fetch") -> str:
    """``repositories/<e>_repository.py`` (``lookup``: the name of its look-up method)."""
    return _dedent(f'''
        """In-memory storage of {plan.e} records."""

        from {plan.pkg}.errors import NotFoundError
        from {plan.pkg}.models.{plan.e} import {plan.E}


        class {plan.E}Repository:
            """{plan.E} records by id, in the order they were added."""

            def __init__(self) -> None:
                self._items: dict[int, {plan.E}] = {{}}

            def add(self, item: {plan.E}) -> {plan.E}:
                """Store ``item`` (replacing one with the same id) and return it."""
                self._items[item.id] = item
                return item

            def {lookup}(self, item_id: int) -> {plan.E}:
                """The {plan.e} with ``item_id``; NotFoundError when there is none."""
                try:
                    return self._items[item_id]
                except KeyError:
                    raise NotFoundError(f"{plan.e} {{item_id}} not found") from None

            def list_all(self) -> list[{plan.E}]:
                """Every {plan.e}, in the order added."""
                return list(self._items.values())

            def remove(self, item_id: int) -> None:
                """Forget the {plan.e} with ``item_id`` (nothing when there is none)."""
                self._items.pop(item_id, None)
        ''')


def repository_secondary(plan: Plan, extra_methods: str = "") -> str:
    """``repositories/<s>_repository.py`` (``extra_methods``: more methods, indented)."""
    return (
        _dedent(f'''
        """In-memory storage of {plan.s} records."""

        from {plan.pkg}.errors import NotFoundError
        from {plan.pkg}.models.{plan.s} import {plan.S}


        class {plan.S}Repository:
            """{plan.S} records by id, in the order they were added."""

            def __init__(self) -> None:
                self._items: dict[int, {plan.S}] = {{}}

            def add(self, item: {plan.S}) -> {plan.S}:
                """Store ``item`` (replacing one with the same id) and return it."""
                self._items[item.id] = item
                return item

            def find(self, item_id: int) -> {plan.S}:
                """The {plan.s} with ``item_id``; NotFoundError when there is none."""
                if item_id not in self._items:
                    raise NotFoundError(f"{plan.s} {{item_id}} not found")
                return self._items[item_id]

            def list_all(self) -> list[{plan.S}]:
                """Every {plan.s}, in the order added."""
                return list(self._items.values())
        ''')
        + extra_methods
    )


def repositories_base(plan: Plan, lookup: str = "get_by_id") -> str:
    """``repositories/base.py``: the repository interface (its look-up method's name)."""
    return _dedent(f'''
        """The interface every repository of the package follows."""

        from typing import Protocol, TypeVar

        T = TypeVar("T")


        class Repository(Protocol[T]):
            """Storage of one record kind, by integer id."""

            def add(self, item: T) -> T:
                """Store ``item`` and return it."""
                ...

            def {lookup}(self, item_id: int) -> T:
                """The record with ``item_id``; NotFoundError when there is none."""
                ...

            def list_all(self) -> list[T]:
                """Every record, in the order added."""
                ...
        ''')


def pricing_module(plan: Plan) -> str:
    """``services/pricing.py``: the pipeline's entry, calling the first step."""
    first = plan.steps[0]
    return _dedent(f'''
        """Quote pricing: the subtotal goes through every pricing step in turn."""

        from {plan.pkg}.services import {first}


        def price(quantity: int, unit_price_cents: int) -> int:
            """The quote total in cents for ``quantity`` units at ``unit_price_cents``."""
            return {first}.apply(quantity * unit_price_cents, quantity)
        ''')


def step_module(plan: Plan, step: str, *, bulk_op: str = ">=", fee: str = "HANDLING_FEE_CENTS") -> str:
    """``services/<step>.py``: one pricing step, then the next step of the chain.

    Args:
        bulk_op: the comparison of the discount threshold (``>=``: the rule; ``>``: a planted
            off-by-one).
        fee: the handling fee expression (``HANDLING_FEE_CENTS``, or a planted literal).
    """
    k = plan.steps.index(step)
    nxt = plan.steps[k + 1] if k + 1 < len(plan.steps) else None
    imports = [f"from {plan.pkg}.services import {nxt}"] if nxt else []
    tail = f"return {nxt}.apply(amount_cents, quantity)" if nxt else "return amount_cents"
    if step == "discounts":
        doc = "Bulk discount: large quotes get ``BULK_RATE_BP`` basis points off."
        imports.insert(0, f"from {plan.pkg}.config import BULK_MIN_UNITS, BULK_RATE_BP")
        imports.insert(1, f"from {plan.pkg}.utils.money import apply_basis_points")
        body = (f"if quantity {bulk_op} BULK_MIN_UNITS:\n"
                f"        amount_cents -= apply_basis_points(amount_cents, BULK_RATE_BP)")  # fmt: skip
    elif step == "surcharges":
        doc = "Handling fee: every quote pays it once."
        if fee == "HANDLING_FEE_CENTS":
            imports.insert(0, f"from {plan.pkg}.config import HANDLING_FEE_CENTS")
        body = f"amount_cents += {fee}"
    elif step == "rounding":
        doc = "Rounding: totals go up to the next multiple of ``ROUND_TO_CENTS``."
        imports.insert(0, f"from {plan.pkg}.config import ROUND_TO_CENTS")
        body = "amount_cents = -(-amount_cents // ROUND_TO_CENTS) * ROUND_TO_CENTS"
    else:
        doc = "Minimum charge: no quote costs less than ``MIN_CHARGE_CENTS``."
        imports.insert(0, f"from {plan.pkg}.config import MIN_CHARGE_CENTS")
        body = "amount_cents = max(amount_cents, MIN_CHARGE_CENTS)"
    import_text = "\n".join(sorted(imports, key=lambda line: line.split(" import ")[0]))
    return (f'"""{doc}"""\n\n{import_text}\n\n\n'
            f"def apply(amount_cents: int, quantity: int) -> int:\n"
            f'    """{doc.split(":")[0]} of a quote of ``quantity`` units, then the next step."""\n'
            f"    {body}\n    {tail}\n")  # fmt: skip


def service_primary(plan: Plan, lookup: str = "fetch", quote_extra: str = "") -> str:
    """``services/<e>_service.py``."""
    return _dedent(f'''
        """Business rules for {plan.e} records: creating them and quoting them."""

        from {plan.pkg}.config import MAX_QUANTITY
        from {plan.pkg}.errors import ValidationError
        from {plan.pkg}.models.{plan.e} import {plan.E}
        from {plan.pkg}.repositories.{plan.e}_repository import {plan.E}Repository
        from {plan.pkg}.services import pricing
        from {plan.pkg}.utils.validation import require_positive, require_text


        class {plan.E}Service:
            """Creates, reads and quotes {plan.e} records."""

            def __init__(self, repository: {plan.E}Repository) -> None:
                self._repository = repository

            def create(self, item_id: int, name: str, quantity: int, unit_price_cents: int) -> {plan.E}:
                """Validate and store a new {plan.e}."""
                require_positive("quantity", quantity)
                require_positive("unit_price_cents", unit_price_cents)
                if quantity > MAX_QUANTITY:
                    raise ValidationError(f"quantity must be at most {{MAX_QUANTITY}}, got {{quantity}}")
                item = {plan.E}(item_id, require_text("name", name), quantity, unit_price_cents)
                return self._repository.add(item)

            def get(self, item_id: int) -> {plan.E}:
                """The {plan.e} with ``item_id``."""
                return self._repository.{lookup}(item_id)

            def quote_total(self, item_id: int) -> int:
                """The quote total of the {plan.e} with ``item_id``, in cents."""
                item = self._repository.{lookup}(item_id)
                total = pricing.price(item.quantity, item.unit_price_cents)
                {quote_extra or "return total"}
        ''')


def service_secondary(plan: Plan, register: str = "") -> str:
    """``services/<s>_service.py`` (``register``: replaces its ``register`` method)."""
    method = register or _dedent(f'''
            def register(self, item_id: int, name: str, region: str) -> {plan.S}:
                """Validate and store a new {plan.s}; its region must be an allowed one."""
                if region not in ALLOWED_REGIONS:
                    raise ValidationError(f"region must be one of {{ALLOWED_REGIONS}}, got {{region!r}}")
                item = {plan.S}(item_id, require_text("name", name), region)
                return self._repository.add(item)
        ''')
    head = _dedent(f'''
        """Business rules for {plan.s} records."""

        from {plan.pkg}.config import ALLOWED_REGIONS
        from {plan.pkg}.errors import ValidationError
        from {plan.pkg}.models.{plan.s} import {plan.S}
        from {plan.pkg}.repositories.{plan.s}_repository import {plan.S}Repository
        from {plan.pkg}.utils.validation import require_text


        class {plan.S}Service:
            """Registers and reads {plan.s} records."""

            def __init__(self, repository: {plan.S}Repository) -> None:
                self._repository = repository

            @property
            def repository(self) -> {plan.S}Repository:
                """The storage this service uses."""
                return self._repository

            def get(self, item_id: int) -> {plan.S}:
                """The {plan.s} with ``item_id``."""
                return self._repository.find(item_id)

        ''')
    return head + textwrap.indent(method, "    ")


def api_primary(plan: Plan, quote_call: str = 'service.quote_total(int(payload["id"]))') -> str:
    """``api/<e>_api.py``."""
    return _dedent(f'''
        """Handlers for {plan.e} requests: a payload dict in, a response dict out."""

        from {plan.pkg}.services.{plan.e}_service import {plan.E}Service
        from {plan.pkg}.utils.money import format_cents


        def handle_create(service: {plan.E}Service, payload: dict) -> dict:
            """Create a {plan.e} from ``id``, ``name``, ``quantity`` and ``unit_price_cents``."""
            item = service.create(
                int(payload["id"]), str(payload["name"]), int(payload["quantity"]), int(payload["unit_price_cents"])
            )
            return {{"id": item.id, "status": "created"}}


        def handle_get(service: {plan.E}Service, payload: dict) -> dict:
            """The {plan.e} named by ``id``."""
            item = service.get(int(payload["id"]))
            return {{"id": item.id, "name": item.name, "quantity": item.quantity, "status": item.status}}


        def handle_quote(service: {plan.E}Service, payload: dict) -> dict:
            """The quote of the {plan.e} named by ``id``: total in cents and as text."""
            total = {quote_call}
            return {{"id": int(payload["id"]), "total_cents": total, "display": format_cents(total)}}
        ''')


def api_secondary(plan: Plan) -> str:
    """``api/<s>_api.py`` (through the service: the layering rules hold)."""
    return _dedent(f'''
        """Handlers for {plan.s} requests: a payload dict in, a response dict out."""

        from {plan.pkg}.services.{plan.s}_service import {plan.S}Service


        def handle_register(service: {plan.S}Service, payload: dict) -> dict:
            """Register a {plan.s} from ``id``, ``name`` and ``region``."""
            item = service.register(int(payload["id"]), str(payload["name"]), str(payload["region"]))
            return {{"id": item.id, "region": item.region, "status": "registered"}}


        def handle_get(service: {plan.S}Service, payload: dict) -> dict:
            """The {plan.s} named by ``id``."""
            item = service.get(int(payload["id"]))
            return {{"id": item.id, "name": item.name, "region": item.region, "active": item.active}}
        ''')


def regression_tests(plan: Plan, *, quotes: bool = True, region_check: bool = True) -> dict[str, str]:
    """The visible regression tests (``tests/``), passing on the project as planted.

    Args:
        quotes: also check quote totals (off when the scenario plants a bug that changes
            them, so the visible tests do not show it).
        region_check: also check that a secondary record's region is validated (off when the
            scenario plants an API that skips the service's checks).
    """
    p, e, s = plan.pkg, plan.e, plan.s
    small = max(1, plan.const["BULK_MIN_UNITS"] - 5)
    large = plan.const["BULK_MIN_UNITS"] + 7
    quote_tests = ""
    if quotes:
        quote_tests = _dedent(f'''


            def test_quote_of_a_small_{e}():
                service = make_service()
                handle_create(service, {{"id": 1, "name": "first", "quantity": {small}, "unit_price_cents": 1234}})
                assert handle_quote(service, {{"id": 1}})["total_cents"] == {price(plan, small, 1234)}


            def test_quote_of_a_large_{e}():
                service = make_service()
                handle_create(service, {{"id": 2, "name": "second", "quantity": {large}, "unit_price_cents": 999}})
                reply = handle_quote(service, {{"id": 2}})
                assert reply["total_cents"] == {price(plan, large, 999)}
                assert reply["display"] == "{format_cents(plan, price(plan, large, 999))}"
            ''')
    primary = (
        _dedent(f"""
        import pytest

        from {p}.api.{e}_api import handle_create, handle_get, handle_quote
        from {p}.errors import NotFoundError, ValidationError
        from {p}.repositories.{e}_repository import {plan.E}Repository
        from {p}.services.{e}_service import {plan.E}Service


        def make_service():
            return {plan.E}Service({plan.E}Repository())


        def test_create_then_get():
            service = make_service()
            assert handle_create(service, {{"id": 7, "name": " box ", "quantity": 3, "unit_price_cents": 500}}) == {{
                "id": 7,
                "status": "created",
            }}
            assert handle_get(service, {{"id": 7}}) == {{"id": 7, "name": "box", "quantity": 3, "status": "open"}}


        def test_unknown_{e}_is_not_found():
            with pytest.raises(NotFoundError):
                handle_get(make_service(), {{"id": 99}})


        def test_quantity_is_validated():
            with pytest.raises(ValidationError):
                handle_create(make_service(), {{"id": 1, "name": "x", "quantity": 0, "unit_price_cents": 100}})
            with pytest.raises(ValidationError):
                handle_create(
                    make_service(), {{"id": 1, "name": "x", "quantity": {plan.const["MAX_QUANTITY"] + 1}, "unit_price_cents": 100}}
                )
        """)
        + quote_tests
    )
    secondary = _dedent(f'''
        import pytest

        from {p}.api.{s}_api import handle_get, handle_register
        from {p}.errors import ValidationError
        from {p}.repositories.{s}_repository import {plan.S}Repository
        from {p}.services.{s}_service import {plan.S}Service


        def make_service():
            return {plan.S}Service({plan.S}Repository())


        def test_register_then_get():
            service = make_service()
            reply = handle_register(service, {{"id": 3, "name": "Main", "region": "{plan.regions[0]}"}})
            assert reply == {{"id": 3, "region": "{plan.regions[0]}", "status": "registered"}}
            assert handle_get(service, {{"id": 3}})["name"] == "Main"

        ''')
    if region_check:
        secondary = (
            secondary.rstrip("\n")
            + "\n\n\n"
            + _dedent("""


            def test_region_must_be_allowed():
                with pytest.raises(ValidationError):
                    handle_register(make_service(), {"id": 4, "name": "Side", "region": "nowhere"})
            """)
        )
    utils = _dedent(f'''
        from {p}.utils.money import apply_basis_points, format_cents
        from {p}.utils.text import shorten, slugify


        def test_format_cents():
            assert format_cents(1205) == "{plan.currency} 12.05"


        def test_basis_points_round_down():
            assert apply_basis_points(999, 1000) == 99


        def test_text_helpers():
            assert slugify("Big  Box!") == "big-box"
            assert shorten("abcdef", 5) == "ab..."
        ''')
    return {
        f"tests/test_{e}_api.py": primary,
        f"tests/test_{s}_api.py": secondary,
        "tests/test_utils.py": utils,
    }


def base_files(plan: Plan) -> dict[str, str]:
    """Every file of the base project (no filler, no task planted), path -> text."""
    p = plan.pkg
    files = {
        f"{p}/__init__.py": package_init(plan),
        f"{p}/config.py": config_module(plan),
        f"{p}/errors.py": errors_module(plan),
        f"{p}/models/__init__.py": '"""Records of the service."""\n',
        f"{p}/models/{plan.e}.py": model_primary(plan),
        f"{p}/models/{plan.s}.py": model_secondary(plan),
        f"{p}/repositories/__init__.py": '"""Storage of records."""\n',
        f"{p}/repositories/{plan.e}_repository.py": repository_primary(plan),
        f"{p}/repositories/{plan.s}_repository.py": repository_secondary(plan),
        f"{p}/services/__init__.py": '"""Business rules."""\n',
        f"{p}/services/{plan.e}_service.py": service_primary(plan),
        f"{p}/services/{plan.s}_service.py": service_secondary(plan),
        f"{p}/services/pricing.py": pricing_module(plan),
        f"{p}/api/__init__.py": '"""Request handlers."""\n',
        f"{p}/api/{plan.e}_api.py": api_primary(plan),
        f"{p}/api/{plan.s}_api.py": api_secondary(plan),
        f"{p}/utils/__init__.py": '"""Helpers shared by every layer."""\n',
        f"{p}/utils/money.py": money_module(plan),
        f"{p}/utils/validation.py": validation_module(plan),
        f"{p}/utils/text.py": text_module(),
        f"{p}/policies/__init__.py": '"""Business policies, as written by the business."""\n',
        f"{p}/legacy/__init__.py": '"""Code of the first release, kept for reference; nothing imports it."""\n',
        f"{p}/legacy/settings_v1.py": config_module(plan, decoy=True),
    }
    for step in plan.steps:
        files[f"{p}/services/{step}.py"] = step_module(plan, step)
    files.update(regression_tests(plan))
    return files
