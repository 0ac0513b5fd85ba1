"""report.html: one self-contained page (no external assets) rendered with Jinja2."""

from __future__ import annotations

from typing import Any

import jinja2

from pytest_egi.models.usage import format_cost

__all__ = ["render_html"]

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("pytest_egi.report", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["cost"] = format_cost  # "$0.0123", or "cost unknown (...)": never $0 for unknown


def render_html(egi: dict[str, Any], records: list[dict[str, Any]]) -> str:
    """Render the page from egi.json's content and the run's records."""

    def fmt(value: Any, digits: int = 1) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    return _ENV.get_template("report.html.j2").render(egi=egi, records=records, fmt=fmt)
