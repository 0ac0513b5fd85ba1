"""Our own word lists for generated projects (no upstream text)."""

from __future__ import annotations

DOMAINS: tuple[tuple[str, str, str], ...] = (
    # (domain, primary entity: priced by the quote pipeline, secondary entity: registered)
    ("ledger", "invoice", "account"),
    ("fleet", "trip", "vehicle"),
    ("library", "loan", "member"),
    ("warehouse", "shipment", "dock"),
    ("events", "booking", "venue"),
    ("payroll", "timesheet", "employee"),
    ("travel", "itinerary", "traveler"),
    ("garden", "order", "grower"),
)
"""Domains of the generated projects, each with its two record kinds."""

PREFIXES = ("north", "cedar", "harbor", "summit", "atlas", "orbit", "maple", "river", "copper", "delta")
"""First word of a package name (``harbor_fleet``)."""

REGIONS = ("north", "south", "east", "west", "central", "coastal", "alpine", "valley")
"""Region names a secondary record may carry."""

FILLER_TOPICS = (
    "audit", "backlog", "calendar", "capacity", "catalog", "channel", "cohort", "coverage", "digest",
    "dispatch", "envelope", "forecast", "funnel", "gauge", "harvest", "holiday", "inbox", "journal",
    "kiosk", "ladder", "lineage", "margin", "milestone", "newsletter", "outreach", "pantry", "parcel",
    "pipeline", "quarter", "quota", "ranking", "recap", "roster", "runway", "season", "segment",
    "signal", "snapshot", "survey", "tally", "template", "ticket", "timeline", "tracker", "turnover",
    "uptime", "usage", "voucher", "waitlist", "workload",
)  # fmt: skip
"""Topics of the filler modules (plausible, irrelevant to every task)."""

FILLER_AREAS = ("reporting", "analytics", "housekeeping", "notifications")
"""Sub-packages the filler modules live in."""

LABELS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
"""Words used as sample labels in filler code."""
