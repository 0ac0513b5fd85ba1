"""``egi-bench compare``'s page: one self-contained HTML file over two or more runs.

Its SVG charts are drawn here (no CDN, no script library): the models by EGI with their
intervals, a models x M1-M6 heatmap, radar profiles, EGI against cost, a gate row; then,
for each later run against the first (the baseline), the tasks that flipped (pass->fail,
fail->pass, matched by suite, task id and trial) and each bucket's and sub-metric's paired
difference, marked where it is beyond its interval. The data sits in one JSON blob in the
page; its small script only filters the flipped-task table.
"""

from __future__ import annotations

import math
from typing import Any

from markupsafe import escape

from pytest_egi.records import natural_key
from pytest_egi.report.html import _ENV, page_json

__all__ = [
    "BUCKETS",
    "flipped_tasks",
    "gate_verdict",
    "render_compare_html",
]

BUCKETS = ("M1", "M2", "M3", "M4", "M5", "M6")
_COLORS = ("#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563")
_GATE_RANK = {"READY": 2, "UNDECIDED": 1, "NOT READY": 0}


def gate_verdict(egi: dict[str, Any]) -> str | None:
    """A run's release-gate verdict: ``READY``, ``UNDECIDED``, ``NOT READY``, or None when
    the gate was not judged (egi.json's ``gate.verdict``; an egi.json without it: from
    ``gate.release_ready``)."""
    gate = egi.get("gate") or {}
    if gate.get("judged") is False:
        return None
    if gate.get("verdict"):
        return str(gate["verdict"])
    ready = gate.get("release_ready")
    return None if ready is None else ("READY" if ready else "NOT READY")


def gate_worse(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """True when run B's gate verdict ranks below run A's (READY > UNDECIDED > NOT READY);
    False when either was not judged."""
    va, vb = gate_verdict(a), gate_verdict(b)
    if va not in _GATE_RANK or vb not in _GATE_RANK:
        return False
    return _GATE_RANK[vb] < _GATE_RANK[va]


def flipped_tasks(records_a: list[dict[str, Any]], records_b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trials scored in both runs whose outcome changed, matched by (suite, task id, trial).

    Returns:
        ``[{"suite", "task_id", "trial", "category", "from", "to", "direction", "got_a",
        "got_b"}]`` with ``direction`` ``"pass->fail"`` or ``"fail->pass"``, in (suite, task id,
        trial) order.
    """
    scored = ("passed", "failed")
    index = {(r["suite"], str(r["task_id"]), r.get("trial")): r
             for r in records_a if r.get("status") in scored}
    out = []
    for r in records_b:
        key = (r["suite"], str(r["task_id"]), r.get("trial"))
        old = index.get(key)
        if old is None or r.get("status") not in scored or old["status"] == r["status"]:
            continue
        out.append({
            "suite": key[0], "task_id": key[1], "trial": key[2], "category": r.get("category"),
            "from": old["status"], "to": r["status"],
            "direction": "pass->fail" if old["status"] == "passed" else "fail->pass",
            "got_a": old.get("got"), "got_b": r.get("got"),
            "failure_kind": r.get("failure_kind") if r["status"] == "failed" else old.get("failure_kind"),
        })
    out.sort(key=lambda f: (f["suite"], natural_key(f["task_id"]), f["trial"] or 0))
    return out


def _e(text: Any) -> str:
    return str(escape(str(text)))


def _x(v: float, x0: float, w: float) -> float:
    return round(x0 + w * max(0.0, min(100.0, v)) / 100.0, 2)


def _egi_bars(runs: list[dict[str, Any]]) -> str:
    """Horizontal bars of each run's EGI figure with its interval whisker (0-100)."""
    x0, w, h = 260, 420, 30
    height = len(runs) * h + 30
    out = [f'<svg id="egi-bars" width="900" height="{height}" role="img" aria-label="EGI by model" '
           'font-family="system-ui,sans-serif">']
    for t in (0, 25, 50, 75, 100):
        x = _x(t, x0, w)
        out.append(f'<line x1="{x}" x2="{x}" y1="0" y2="{height - 22}" stroke="#e4e7ec"/>'
                   f'<text x="{x}" y="{height - 8}" font-size="11" text-anchor="middle" '
                   f'fill="#667085">{t}</text>')
    for i, r in enumerate(runs):
        y = i * h + 4
        out.append(f'<text x="0" y="{y + 16}" font-size="13"><tspan '
                   f'font-weight="600">{_e(r["label"])}</tspan> '
                   f'{_e(r["model"])}</text>')
        out.append(f'<rect x="{x0}" y="{y}" width="{w}" height="22" fill="#f1f3f6"/>')
        v = r["egi"]
        if v is not None and not r["not_a_score"]:
            out.append(f'<rect class="egi-bar" x="{x0}" y="{y}" width="{_x(v, 0, w)}" height="22" '
                       f'fill="{r["color"]}"><title>{_e(r["label"])} EGI {v:.1f}</title></rect>')
            if r["ci"]:
                lo, hi = _x(r["ci"][0], x0, w), _x(r["ci"][1], x0, w)
                out.append(f'<line x1="{lo}" x2="{hi}" y1="{y + 11}" y2="{y + 11}" stroke="#111" '
                           f'stroke-width="1.5"/>'
                           f'<line x1="{lo}" x2="{lo}" y1="{y + 6}" y2="{y + 16}" stroke="#111"/>'
                           f'<line x1="{hi}" x2="{hi}" y1="{y + 6}" y2="{y + 16}" stroke="#111"/>')
        text = r["egi_text"]
        out.append(f'<text x="{x0 + w + 8}" y="{y + 16}" font-size="13">{_e(text)}</text>')
    out.append("</svg>")
    return "".join(out)


def _heat(v: float | None) -> str:
    if v is None:
        return "#f1f3f6"
    t = max(0.0, min(1.0, v / 100.0))  # red (0) -> amber (50) -> green (100)
    if t < 0.5:
        r, g, b = 220, int(60 + 2 * t * 140), 60
    else:
        r, g, b = int(220 - (t - 0.5) * 2 * 180), 200, int(60 + (t - 0.5) * 2 * 40)
    return f"#{r:02x}{g:02x}{b:02x}"


def _heatmap(runs: list[dict[str, Any]]) -> str:
    """Models (rows) x buckets (columns), each cell coloured by its 0-100 value."""
    x0, cw, ch = 260, 72, 30
    width, height = x0 + cw * len(BUCKETS) + 10, 28 + ch * len(runs)
    out = [f'<svg id="heatmap" width="{width}" height="{height}" role="img" aria-label="models by M1 to M6" '
           'font-family="system-ui,sans-serif">']
    for j, b in enumerate(BUCKETS):
        out.append(f'<text x="{x0 + j * cw + cw / 2}" y="16" font-size="13" font-weight="600" '
                   f'text-anchor="middle">{b}</text>')
    for i, r in enumerate(runs):
        y = 24 + i * ch
        out.append(f'<text x="0" y="{y + 19}" font-size="13"><tspan '
                   f'font-weight="600">{_e(r["label"])}</tspan> '
                   f'{_e(r["model"])}</text>')
        for j, b in enumerate(BUCKETS):
            bk = r["buckets"].get(b) or {}
            v = bk.get("value")
            floor = bk.get("floor")
            below = v is not None and floor is not None and v < floor
            edge = ' stroke="#111" stroke-width="2"' if below else ""
            shown = "—" if v is None else f"{v:.1f}"
            why = f" (below its floor {floor:g})" if below else ""
            out.append(
                f'<rect class="cell" data-run="{_e(r["label"])}" data-bucket="{b}" '
                f'x="{x0 + j * cw + 1}" y="{y}" '
                f'width="{cw - 2}" height="{ch - 2}" fill="{_heat(v)}"{edge}>'
                f'<title>{_e(r["label"])} {b} {shown}{why}</title></rect>'
                f'<text x="{x0 + j * cw + cw / 2}" y="{y + 19}" font-size="12" text-anchor="middle" '
                f'fill="#111">{shown}</text>')
    out.append("</svg>")
    return "".join(out)


def _radar(runs: list[dict[str, Any]]) -> str:
    """Each run's M1-M6 profile on six axes (0 at the centre, 100 at the rim): a dot per
    measured bucket, joined to its measured neighbours; a closed, filled polygon only when all
    six are measured. A bucket the run did not measure is not drawn (never plotted at 0): the
    outline is left open there and the legend names it."""
    cx, cy, rad = 190, 170, 130
    out = ['<svg id="radar" width="760" height="350" role="img" aria-label="M1 to M6 profiles" '
           'font-family="system-ui,sans-serif">']

    def pt(k: int, v: float) -> tuple[float, float]:
        ang = -math.pi / 2 + 2 * math.pi * k / len(BUCKETS)
        return round(cx + rad * v / 100 * math.cos(ang), 2), round(cy + rad * v / 100 * math.sin(ang), 2)

    for ring in (25, 50, 75, 100):
        pts = " ".join(f"{x},{y}" for x, y in (pt(k, ring) for k in range(len(BUCKETS))))
        out.append(f'<polygon points="{pts}" fill="none" stroke="#e4e7ec"/>')
    for k, b in enumerate(BUCKETS):
        x, y = pt(k, 100)
        lx, ly = pt(k, 114)
        out.append(f'<line x1="{cx}" y1="{cy}" x2="{x}" y2="{y}" stroke="#e4e7ec"/>'
                   f'<text x="{lx}" y="{ly + 4}" font-size="13" font-weight="600" '
                   f'text-anchor="middle">{b}</text>')
    n = len(BUCKETS)
    for i, r in enumerate(runs):
        vals = [(r["buckets"].get(b) or {}).get("value") for b in BUCKETS]
        run = _e(r["label"])
        if all(v is not None for v in vals):
            pts = " ".join(f"{x},{y}" for x, y in (pt(k, v) for k, v in enumerate(vals)))
            out.append(f'<polygon class="profile" data-run="{run}" points="{pts}" fill="{r["color"]}" '
                       f'fill-opacity="0.12" stroke="{r["color"]}" stroke-width="2"/>')
        else:  # a segment between each two neighbouring measured buckets, none past a gap
            segs = []
            for k in range(n):
                v, w = vals[k], vals[(k + 1) % n]
                if v is not None and w is not None and n > 1:
                    (x1, y1), (x2, y2) = pt(k, v), pt((k + 1) % n, w)
                    segs.append(f"M{x1},{y1} L{x2},{y2}")
            out.append(f'<path class="profile open" data-run="{run}" d="{" ".join(segs)}" fill="none" '
                       f'stroke="{r["color"]}" stroke-width="2"/>')
        for k, v in enumerate(vals):
            if v is not None:
                x, y = pt(k, v)
                out.append(f'<circle class="vertex" data-run="{run}" data-bucket="{BUCKETS[k]}" cx="{x}" '
                           f'cy="{y}" r="3.5" fill="{r["color"]}"><title>{run} {BUCKETS[k]} {v:.1f}</title>'
                           '</circle>')
        missing = [b for b, v in zip(BUCKETS, vals, strict=True) if v is None]
        note = f" (not measured: {' '.join(missing)})" if missing else ""
        out.append(f'<rect x="370" y="{30 + i * 22}" width="12" height="12" fill="{r["color"]}"/>'
                   f'<text x="388" y="{41 + i * 22}" font-size="12">{run} '
                   f'{_e(r["model"])}{_e(note)}</text>')
    out.append("</svg>")
    return "".join(out)


def _cost_plot(runs: list[dict[str, Any]]) -> str:
    """EGI (y, 0-100) against the model's cost in USD (x); a run whose cost is unknown or
    whose EGI is not a score is listed under the plot, not drawn."""
    x0, y0, w, h = 60, 20, 440, 240
    known = [r for r in runs if r["cost_usd"] is not None and r["egi"] is not None and not r["not_a_score"]]
    top = max([r["cost_usd"] for r in known] + [0.0])
    top = top * 1.1 if top > 0 else 1.0
    out = [f'<svg id="cost-plot" width="620" height="{h + 60}" role="img" aria-label="EGI against cost" '
           'font-family="system-ui,sans-serif">',
           f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="none" stroke="#d0d5dd"/>']
    for t in (0, 25, 50, 75, 100):
        y = round(y0 + h - h * t / 100, 2)
        out.append(f'<line x1="{x0}" x2="{x0 + w}" y1="{y}" y2="{y}" stroke="#f1f3f6"/>'
                   f'<text x="{x0 - 6}" y="{y + 4}" font-size="11" text-anchor="end" '
                   f'fill="#667085">{t}</text>')
    for k in range(5):
        c = top * k / 4
        x = round(x0 + w * k / 4, 2)
        out.append(f'<text x="{x}" y="{y0 + h + 16}" font-size="11" text-anchor="middle" fill="#667085">'
                   f'${c:.4g}</text>')
    out.append(f'<text x="{x0 + w / 2}" y="{y0 + h + 36}" font-size="12" text-anchor="middle">'
               'cost of the run (USD: egi.json usage, model, judge and simulator)</text>'
               f'<text x="14" y="{y0 + h / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {y0 + h / 2})">EGI</text>')
    for r in known:
        x = round(x0 + w * r["cost_usd"] / top, 2)
        y = round(y0 + h - h * r["egi"] / 100, 2)
        out.append(f'<circle class="point" data-run="{_e(r["label"])}" cx="{x}" cy="{y}" r="6" '
                   f'fill="{r["color"]}">'
                   f'<title>{_e(r["label"])} {_e(r["model"])}: EGI {r["egi"]:.1f}, '
                   f'${r["cost_usd"]:.4f}</title></circle>'
                   f'<text x="{x + 9}" y="{y + 4}" font-size="12">{_e(r["label"])}</text>')
    out.append("</svg>")
    return "".join(out)


def render_compare_html(runs: list[dict[str, Any]], pairs: list[dict[str, Any]]) -> str:
    """The compare page.

    Args:
        runs: one entry per run, in the order given (the first is the baseline): ``{"label",
            "model", "run_id", "path", "egi" (0-100 or None), "egi_text", "ci" ([lo, hi] or
            None), "partial", "not_a_score", "buckets" ({bucket: {"value", "ci95", "floor",
            "ceiling"}}), "gate" (verdict or None), "gate_reason", "cost_usd" (USD or None),
            "notes"}``.
        pairs: one entry per later run against the baseline: ``{"a", "b" (labels),
            "paired" ({"EGI"|bucket: {"delta", "interval", "beyond"}}), "matched",
            "sub_metrics" ([{"suite", "metric", "a", "b", "delta", "interval", "beyond"}]),
            "flips" (:func:`flipped_tasks`), "regressions" ([text]), "notes" ([text]),
            "paired_note"}``.

    Returns:
        The page's HTML text.
    """
    for i, r in enumerate(runs):
        r["color"] = _COLORS[i % len(_COLORS)]
    charts = {"egi_bars": _egi_bars(runs), "heatmap": _heatmap(runs), "radar": _radar(runs),
              "cost": _cost_plot(runs)}
    data = {"runs": [{k: v for k, v in r.items() if k != "color"} for r in runs], "pairs": pairs}
    return _ENV.get_template("compare.html.j2").render(
        runs=runs, pairs=pairs, charts=charts, buckets=BUCKETS, data_json=page_json(data),
    )
