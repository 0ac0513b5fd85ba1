"""The Benchforce environments, by upstream name."""

from __future__ import annotations

from suites.benchforce.env.base import ENTRY_COUNTS, Environment, entry_id

__all__ = ["ENTRY_COUNTS", "ENVIRONMENTS", "entry_id", "environment"]

ENVIRONMENTS = ("hospital", "hr_software", "order_management")
"""Every environment the benchmark defines (upstream's names), in upstream's order."""


def environment(name: str) -> Environment:
    """The environment ``name``.

    Raises:
        KeyError: an environment that is not built (yet), naming the known ones.
    """
    if name == "hospital":
        from suites.benchforce.env.hospital import ENV

        return ENV
    if name == "hr_software":
        from suites.benchforce.env.hr_software import ENV

        return ENV
    if name == "order_management":
        from suites.benchforce.env.order_management import ENV

        return ENV
    raise KeyError(f"environment {name!r} is not available; available: {', '.join(ENVIRONMENTS)}")
