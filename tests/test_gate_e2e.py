"""The confident release gate end to end, on the toy suite (pytester, in process).

The toy routing here sends ``acc`` (mean success, 0-1) to M5 (floor 70) and drops M2's floor;
40 tasks (20 per category). ``egi/noisy-p`` answers wrong with probability p, so M5 sits near
``100 (1 - p)`` with a bootstrap interval about ±14 points wide at 40 tasks: a floor near the
value is too close to call, one far below passes, one far above is breached.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


def _latest(path: Path) -> Path:
    """The newest run folder (run ids of one second sort by their random suffix)."""
    return max((path / "reports").iterdir(), key=lambda run: (run / "egi.json").stat().st_mtime_ns)


def _egi(path: Path) -> dict:
    return json.loads((_latest(path) / "egi.json").read_text())


@pytest.fixture
def near_floor(toy_project):
    routing = toy_project.path / "routing.yaml"
    text = routing.read_text().replace("bucket: M4", "bucket: M5")
    text = text.replace("per_category: 3", "per_category: 20")
    routing.write_text(text.replace("M2: {name: Tools, weight: 0.22, floor: 70}",
                                    "M2: {name: Tools, weight: 0.22}"))
    return toy_project


def _run(project, *args: str):
    return project.runpytest("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-bootstrap", "400", *args)


def test_the_three_outcomes_where_the_interval_says(near_floor):
    # the floor at the value: too close to call, UNDECIDED, exit 1
    result = _run(near_floor)
    egi = _egi(near_floor.path)
    m5 = egi["buckets"]["M5"]
    lo, hi = m5["ci95"]
    assert lo < m5["value"] < hi and hi - lo > 10
    gate = egi["gate"]
    assert lo < 70 <= hi, (lo, hi)  # this seeded run's M5 straddles 70
    assert (gate["rule"], gate["level"], gate["verdict"]) == ("confident", 0.95, "UNDECIDED")
    assert gate["buckets"]["M5"] == {"outcome": "too close to call", "value": m5["value"],
                                     "interval": [lo, hi], "floor": 70.0, "pessimistic": m5["value"],
                                     "judged_on": "interval"}
    assert gate["undecided"] == ["M5"] and gate["release_ready"] is False and gate["breached"] == []
    assert result.ret == 1
    reason = (f"release gate undecided at 95%: M5 {m5['value']:.1f} [{lo:.1f}, {hi:.1f}] too close to "
              "call at floor 70 (more tasks would likely settle it; --egi-gate-undecided pass lets it "
              "through)")
    assert egi["session"]["reasons"] == [reason]
    lines = result.stdout.lines
    assert (f"release gate: UNDECIDED (confident, 95% intervals) — M5 {m5['value']:.1f} [{lo:.1f}, "
            f"{hi:.1f}] too close to call at floor 70") in lines
    assert f"  M5 {m5['value']:.1f}  95% CI [{lo:.1f}, {hi:.1f}]  floor 70: too close to call" in lines
    # one suite feeds M5: all of the variance is the toy suite's, over its 40 tasks
    sugg = gate["suggestions"][0]
    h, d = sugg["half_width"], sugg["distance"]
    assert h == pytest.approx(m5["value"] - lo if m5["value"] >= 70 else hi - m5["value"])
    assert d == pytest.approx(abs(m5["value"] - 70))
    if d > 0:
        import math
        expected = max(1, math.floor(round(40 / (d / h) ** 2 - 40, 9)) + 1)
        assert sugg["alone"] == {"toy": expected} and sugg["together"] == {"toy": expected}
        assert any(line.startswith(f"  to settle M5 (interval ±{h:.1f}")
                   and f"~{expected} more tasks of toy" in line for line in lines)
    html = (_latest(near_floor.path) / "report.html").read_text()
    assert "Gate rule: <b>confident</b>" in html and "<b>UNDECIDED</b>" in html

    # --egi-gate-undecided pass: the same verdict, exit 0
    result = _run(near_floor, "--egi-gate-undecided", "pass")
    assert result.ret == 0
    assert _egi(near_floor.path)["gate"]["verdict"] == "UNDECIDED"

    # a floor below the interval: pass, READY, exit 0
    result = _run(near_floor, "--egi-floor", f"M5={math_floor(lo) - 1}")
    gate = _egi(near_floor.path)["gate"]
    outcome = (gate["verdict"], gate["buckets"]["M5"]["outcome"], gate["release_ready"])
    assert outcome == ("READY", "pass", True)
    assert result.ret == 0
    assert ("release gate: READY (confident, 95% intervals) — every floored bucket's interval at or "
            "above its floor") in result.stdout.lines

    # a floor above the interval: breach, NOT READY, exit 1 with the usual reason
    floor = math_floor(hi) + 1
    result = _run(near_floor, "--egi-floor", f"M5={floor}")
    egi = _egi(near_floor.path)
    assert (egi["gate"]["verdict"], egi["gate"]["breached"]) == ("NOT READY", ["M5"])
    assert result.ret == 1
    assert egi["session"]["reasons"] == [f"release floor breached: M5 {m5['value']:.1f} < {floor}"]

    # a floor between the value and the upper bound: the point rule breaches, the confident
    # rule cannot tell
    floor = (m5["value"] + hi) / 2
    point = _run(near_floor, "--egi-floor", f"M5={floor}", "--egi-gate", "point")
    assert point.ret == 1 and _egi(near_floor.path)["gate"]["breached"] == ["M5"]
    assert "rule" not in _egi(near_floor.path)["gate"]  # today's egi.json gate, as it was
    assert _egi(near_floor.path)["config"]["gate"] == {"rule": "point", "level": 0.95, "undecided": "fail"}
    confident = _run(near_floor, "--egi-floor", f"M5={floor}")
    assert confident.ret == 1 and _egi(near_floor.path)["gate"]["verdict"] == "UNDECIDED"


def math_floor(x: float) -> int:
    import math

    return math.floor(x)


def test_a_wider_level_turns_a_pass_into_undecided(near_floor):
    _run(near_floor)
    lo95 = _egi(near_floor.path)["buckets"]["M5"]["ci95"][0]
    # a floor just under the 95% lower bound passes at 95% and is too close to call at 99.9%
    floor = lo95 - 0.5
    result = _run(near_floor, "--egi-floor", f"M5={floor}")
    assert result.ret == 0 and _egi(near_floor.path)["gate"]["verdict"] == "READY"
    result = _run(near_floor, "--egi-floor", f"M5={floor}", "--egi-gate-level", "0.999")
    gate = _egi(near_floor.path)["gate"]
    assert (gate["verdict"], gate["level"]) == ("UNDECIDED", 0.999)
    assert gate["buckets"]["M5"]["interval"][0] < floor
    assert result.ret == 1
    head = "release gate: UNDECIDED (confident, 99.9% intervals)"
    assert any(line.startswith(head) for line in result.stdout.lines)


def test_without_an_interval_the_point_rule_decides_and_says_so(near_floor):
    result = near_floor.runpytest("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-bootstrap", "0")
    gate = _egi(near_floor.path)["gate"]
    assert gate["no_interval"] == "no interval for M5 (--egi-bootstrap 0): judged on the point value"
    assert gate["buckets"]["M5"]["judged_on"] == "point value"
    value = gate["buckets"]["M5"]["value"]
    assert gate["verdict"] == ("READY" if value >= 70 else "NOT READY")
    assert result.ret == (0 if value >= 70 else 1)
    assert "  no interval for M5 (--egi-bootstrap 0): judged on the point value" in result.stdout.lines


def test_bad_level_is_a_usage_error(near_floor):
    result = near_floor.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-gate-level", "95")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*--egi-gate-level: expected a number between 0 and 1 (e.g. 0.95), got '95'*"])


def test_compare_gives_the_paired_interval(toy_project, monkeypatch, capsys):
    import sys

    from pytest_egi.cli import main
    from pytest_egi.records import load_records
    from pytest_egi.scoring.egi import bootstrap_egi
    from pytest_egi.suite import load_suite

    for model, folder in (("egi/noisy-0.6", "noisy"), ("egi/oracle", "oracle")):
        toy_project.runpytest("toysuites", "--egi-model", model, "--egi-mode", "deep", "--egi-bootstrap", "0",
                              "--egi-report-dir", folder)
    monkeypatch.syspath_prepend(str(toy_project.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    noisy, oracle = (next((toy_project.path / f).iterdir()) for f in ("noisy", "oracle"))
    egi = json.loads((noisy / "egi.json").read_text())
    m1 = egi["buckets"]["M1"]["value"]

    # a run against itself: every paired difference is 0
    assert main(["compare", str(noisy), str(noisy), "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert ("paired B-A over 10 tasks scored in both runs (95% bootstrap interval, 300 resamples, "
            "seed 7):") in out
    assert "  M1       +0.0  [+0.0, +0.0]  within the noise (the interval holds 0)" in out

    # against the oracle (100 on every resample): B - A is 100 minus A's own resampled value,
    # so the paired interval is 100 minus A's interval drawn with the same seed
    assert main(["compare", str(noisy), str(oracle), "--resamples", "1000"]) == 0
    out = capsys.readouterr().out
    records = [r for r in load_records(noisy) if r["status"] in ("passed", "failed")]
    from pytest_egi.scoring.config import load_routing

    routing = load_routing(toy_project.path / "routing.yaml")[0]
    suite = load_suite("toysuites.toy")
    weights = egi["routing"]["weights"]
    ci = bootstrap_egi({"toy": records}, {"toy": suite.summarize}, routing, weights=weights,
                       floors={}, resamples=1000, seed=7)
    lo, hi = ci["M1"]
    assert hi < 100  # the noisy run's M1 is below the oracle's beyond its noise
    assert (f"  M1       {100 - m1:+.1f}  [{100 - hi:+.1f}, {100 - lo:+.1f}]  "
            "beyond the noise (the interval excludes 0)") in out
    assert main(["compare", str(noisy), str(oracle), "--resamples", "0"]) == 0
    assert "paired: not drawn (--resamples 0)" in capsys.readouterr().out

    # figures over other buckets are not paired; other task sets show intervals only
    other = toy_project.path / "other" / noisy.name
    shutil.copytree(noisy, other)
    stored = json.loads((other / "egi.json").read_text())
    covered = stored["egi"]["covered_buckets"]
    stored["egi"]["covered_buckets"] = covered[:-1]
    (other / "egi.json").write_text(json.dumps(stored))
    lines = (other / "records.jsonl").read_text().splitlines(keepends=True)
    (other / "records.jsonl").write_text("".join(lines[:-1]))
    assert main(["compare", str(noisy), str(other), "--resamples", "300"]) == 0
    out = capsys.readouterr().out
    assert (f"  EGI      not paired: A's figure covers {', '.join(covered)}, B's {', '.join(covered[:-1])} "
            "(different figures)") in out
    assert "paired B-A over 9 tasks scored in both runs" in out
    assert "  M1       [" in out and "  M1       +" not in out.split("paired B-A")[1]


def test_rescore_judges_with_the_runs_rule_or_the_one_given(near_floor, monkeypatch, capsys):
    import sys

    from pytest_egi.cli import main

    assert _run(near_floor).ret == 1  # UNDECIDED under the confident rule
    monkeypatch.syspath_prepend(str(near_floor.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    run = _latest(near_floor.path)
    m5 = _egi(near_floor.path)["buckets"]["M5"]["value"]
    assert m5 >= 70  # the point rule passes it
    assert main(["report", "--rescore", str(run)]) == 1  # the run's own rule: confident
    out = capsys.readouterr().out
    assert "session fails: release gate undecided at 95%: M5" in out
    assert main(["report", "--rescore", str(run), "--egi-gate", "point"]) == 0
    out = capsys.readouterr().out
    assert "release gate: READY (every floored bucket at or above its floor)" in out
    assert main(["report", str(run), "--egi-gate", "point"]) == 2
    assert "--egi-gate applies with --rescore or --merge" in capsys.readouterr().err
