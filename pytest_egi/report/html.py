"""report.html: one self-contained page (no external assets) rendered with Jinja2."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jinja2

from pytest_egi.models.usage import format_cost

__all__ = ["render_html", "render_html_parts"]

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
    return "".join(render_html_parts(egi, records))


def render_html_parts(
    egi: dict[str, Any], records: list[dict[str, Any]], chunk: int = 2048
) -> Iterator[str]:
    """The page of :func:`render_html` in pieces (their concatenation is the page), each of
    about ``chunk`` template outputs: a run of many tasks is written without holding its
    whole page in memory."""

    def fmt(value: Any, digits: int = 1) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    parts: list[str] = []
    for piece in _ENV.get_template("report.html.j2").generate(egi=egi, records=records, fmt=fmt):
        parts.append(piece)
        if len(parts) >= chunk:
            yield "".join(parts)
            parts.clear()
    if parts:
        yield "".join(parts)
