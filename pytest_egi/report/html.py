"""report.html: one self-contained page rendered with Jinja2.

The page has no external asset (no CDN, script, stylesheet, font or link): the summary (EGI
headline, release gate, M1-M6 chart drawn as inline SVG, buckets, suites) is rendered here;
the task table is rendered in the browser, once, by the page's own vanilla JavaScript from ONE
JSON blob (``<script type="application/json" id="egi-data">``) that carries every record's
row and its trajectory (inline, collapsed in a ``<details>``). Filters toggle rows' ``hidden``
flag; sorts move the rows already made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import jinja2

from pytest_egi.models.usage import format_cost

__all__ = [
    "PASSED_TRAJECTORY_BUDGET",
    "TRAJECTORY_CHARS",
    "page_json",
    "render_html",
    "render_html_parts",
    "task_row",
    "trajectory_text",
]

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("pytest_egi.report", "templates"),
    autoescape=jinja2.select_autoescape(["html", "j2"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters["cost"] = format_cost  # "$0.0123", or "cost unknown (...)": never $0 for unknown

#: characters of one trajectory's text inlined in the page (the rest is cut, with a note
#: naming the raw file that holds it whole)
TRAJECTORY_CHARS = 6000
#: characters of passed tasks' trajectories inlined in all; past it a passed task's row says
#: where its trajectory is instead (a failed or errored task's trajectory is always inlined)
PASSED_TRAJECTORY_BUDGET = 4_000_000


def page_json(value: Any) -> str:
    """``value`` as JSON safe inside an HTML ``<script>`` element: ``<``, ``>`` and ``&`` are
    written as ``\\u003c``-style escapes, so no text of a record can close the element."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "\n".join(
            p.get("text", "") if isinstance(p, dict) and "text" in p else json.dumps(p, ensure_ascii=False)
            for p in content
        )
    return json.dumps(content, ensure_ascii=False)


def trajectory_text(raw: dict[str, Any], limit: int = TRAJECTORY_CHARS) -> str:
    """A stored trial (:mod:`pytest_egi.trajectories`: ``{"trajectory": Trajectory.to_dict(),
    ...}``) as plain text for the page: each message as ``[role] content`` (a model's tool
    calls as ``-> name(arguments)``), then the final answer and how the episode ended.

    Args:
        raw: the raw file's content (a bare ``Trajectory.to_dict()`` is read too).
        limit: most characters returned; a longer text is cut and ends with a line saying so.

    Returns:
        The text ('' when the file holds no trajectory).
    """
    traj = raw.get("trajectory") if isinstance(raw.get("trajectory"), dict) else raw
    if not isinstance(traj, dict) or "messages" not in traj:
        return ""
    lines: list[str] = []
    for m in traj.get("messages") or []:
        if not isinstance(m, dict):
            continue
        role = m.get("role", "?")
        name = f" {m['name']}" if m.get("name") else ""
        lines.append(f"[{role}{name}] {_content_text(m.get('content'))}".rstrip())
        for call in m.get("tool_calls") or []:
            fn = call.get("function", call) if isinstance(call, dict) else {}
            lines.append(f"  -> {fn.get('name', '?')}({_content_text(fn.get('arguments'))})")
    lines.append(f"[final answer] {_content_text(traj.get('final_answer'))}")
    lines.append(f"[ended] termination {traj.get('termination')}, {traj.get('turns')} turns, "
                 f"finish_reason {traj.get('finish_reason')}")
    text = "\n".join(lines)
    if len(text) > limit:
        text = text[:limit] + f"\n… cut at {limit:,} of {len(text):,} characters"
    return text


def task_row(record: dict[str, Any], trajectory: str | None) -> dict[str, Any]:
    """One record as the page's task-table row (the JSON blob's ``records`` entries).

    Returns:
        ``{"suite", "task_id", "trial", "category", "status", "expected", "got",
        "failure_kind", "termination", "raw_path", "raw_at", "trajectory"}``; ``got`` is the
        record's error for an errored item; ``failure_kind`` is None when the record has none;
        ``raw_at`` where its trajectory is stored (``pytest_egi.trajectories``), None in a run
        folder of the old layout.
    """
    got = record.get("got")
    if got is None:
        got = record.get("error")
    return {
        "suite": record.get("suite"),
        "task_id": str(record.get("task_id")),
        "trial": record.get("trial"),
        "category": record.get("category"),
        "status": record.get("status"),
        "expected": record.get("expected"),
        "got": got,
        "failure_kind": record.get("failure_kind"),
        "termination": record.get("termination"),
        "raw_path": record.get("raw_path"),
        "raw_at": record.get("raw_at"),
        "trajectory": trajectory,
    }


def _record_rows(records: Iterable[dict[str, Any]], run_dir: Path | None) -> Iterator[str]:
    """The blob's ``records`` array, a record at a time (``[`` ... ``]``)."""
    from pytest_egi.trajectories import TrajectoryError, TrajectoryReader

    yield "["
    budget = PASSED_TRAJECTORY_BUDGET
    first = True
    with TrajectoryReader(run_dir or Path()) as reader:
        for r in records:
            traj: str | None = None
            if run_dir is not None and (r.get("raw_path") or r.get("raw_at")):
                passed = r.get("status") in ("passed", "skipped")
                if not passed or budget > 0:
                    try:
                        raw: dict[str, Any] | None = reader.read(r)
                    except TrajectoryError:
                        raw = None
                    if isinstance(raw, dict):
                        traj = trajectory_text(raw)
                        if passed:
                            budget -= len(traj)
            yield ("" if first else ",\n") + page_json(task_row(r, traj))
            first = False
    yield "]"


def _summary_data(egi: dict[str, Any]) -> dict[str, Any]:
    """What the page's script needs of egi.json besides the records."""
    routes: dict[str, list[str]] = {}
    for b, bk in (egi.get("buckets") or {}).items():
        for c in bk.get("contributors") or []:
            suite = str(c.get("route", "")).split("/", 1)[0]
            if suite and suite not in routes.setdefault(b, []):
                routes[b].append(suite)
    return {
        "run_id": egi.get("run_id"),
        "model": egi.get("model"),
        "bucket_suites": routes,
        "failure_kinds": egi.get("failure_kinds"),
    }


def render_html(egi: dict[str, Any], records: Iterable[dict[str, Any]], run_dir: Path | None = None) -> str:
    """Render the page from egi.json's content and the run's records.

    Args:
        egi: egi.json's content.
        records: the run's records (sorted by suite, task, trial).
        run_dir: the run folder, to inline each record's stored trajectory
            (:class:`pytest_egi.trajectories.TrajectoryReader`; None: no trajectory inlined).
    """
    return "".join(render_html_parts(egi, records, run_dir=run_dir))


def render_html_parts(
    egi: dict[str, Any], records: Iterable[dict[str, Any]], chunk: int = 2048, *, run_dir: Path | None = None
) -> Iterator[str]:
    """The page of :func:`render_html` in pieces (their concatenation is the page), each of
    about ``chunk`` template outputs: a run of many tasks is written without holding its
    whole page in memory (the records are read once, a record at a time)."""

    def fmt(value: Any, digits: int = 1) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    n_records = len(records) if hasattr(records, "__len__") else None  # type: ignore[arg-type]
    parts: list[str] = []
    for piece in _ENV.get_template("report.html.j2").generate(
        egi=egi, n_records=n_records, fmt=fmt, summary_json=page_json(_summary_data(egi)),
        record_rows=_record_rows(records, Path(run_dir) if run_dir is not None else None),
    ):
        parts.append(piece)
        if len(parts) >= chunk:
            yield "".join(parts)
            parts.clear()
    if parts:
        yield "".join(parts)
