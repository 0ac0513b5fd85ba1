"""The HERB world: what one run searches, in the original JSON shapes (reference §2.2); built
by :mod:`suites.herb.data.generator` or read by :func:`suites.herb.data.load_corpus`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["World"]


@dataclass
class World:
    """Everything one HERB run searches, in the original JSON shapes.

    Attributes:
        employees: employee id -> ``{employee_id, name, role, location, org}``.
        customers: ``[{id, name, role, company}]``.
        products: product name -> product dict (the ``data/products/<Product>.json`` shape).
        questions: task records (``Task.data`` without the world spec), answerable first per
            product; see :func:`suites.herb.data.generator.generate_world` for the keys.
        spec: how to rebuild this world (``{"seed", "products"}`` or ``{"corpus"}``).
    """

    employees: dict[str, dict[str, Any]]
    customers: list[dict[str, Any]]
    products: dict[str, dict[str, Any]]
    questions: list[dict[str, Any]] = field(default_factory=list)
    spec: dict[str, Any] = field(default_factory=dict)

    @property
    def company_names(self) -> list[str]:
        """All customer company names, deduplicated, in first-seen order."""
        return list(dict.fromkeys(c["company"] for c in self.customers))
