"""report.html and the compare page without a browser: what is in the page's HTML and JSON
blob, and ``egi-bench compare`` over three runs with ``--fail-on-regression``.
(tests/test_pages_browser.py opens both pages in a real browser.)"""

from __future__ import annotations

import json
import re
import sys

import pytest

from pytest_egi.cli import main
from pytest_egi.report.compare_html import _radar, flipped_tasks, gate_worse
from pytest_egi.report.html import render_html, trajectory_text
from pytest_egi.trajectories import read_trajectory


def _blob(html: str, element: str = "egi-data") -> dict:
    text = html.split(f'<script type="application/json" id="{element}">', 1)[1].split("</script>", 1)[0]
    return json.loads(text)


def _toy_runs(toy_project, monkeypatch, models):
    runs = {}
    for model in models:
        folder = model.replace("/", "-")
        toy_project.runpytest("toysuites", "--egi-model", model, "--egi-mode", "deep",
                              "--egi-bootstrap", "300", "--egi-report-dir", folder)
        runs[model] = next((toy_project.path / folder).iterdir())
    monkeypatch.syspath_prepend(str(toy_project.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    return runs


@pytest.fixture
def toy_runs(toy_project, monkeypatch):
    """The toy suite's runs by egi/oracle, egi/noisy-0.3 and egi/null (deep mode, 300
    resamples), by model."""
    return _toy_runs(toy_project, monkeypatch, ("egi/oracle", "egi/noisy-0.3", "egi/null"))


@pytest.fixture
def toy_noisy(toy_project, monkeypatch):
    """The toy suite's run by egi/noisy-0.3."""
    return _toy_runs(toy_project, monkeypatch, ("egi/noisy-0.3",))["egi/noisy-0.3"]


def test_report_page_is_self_contained_and_its_rows_are_one_json_blob(toy_noisy):
    run = toy_noisy
    html = (run / "report.html").read_text()
    # nothing fetched, no link that breaks when the page is mailed (the old table linked raw/)
    assert re.search(r"\b(href|src)\s*=", html) is None
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    rows = _blob(html)["records"]
    assert [(r["task_id"], r["status"]) for r in rows] == [(r["task_id"], r["status"]) for r in records]
    # each row's trajectory is inline: the raw file's conversation as text
    raw = read_trajectory(run, records[0])
    assert rows[0]["trajectory"] == trajectory_text(raw) and rows[0]["trajectory"].startswith("[")
    assert rows[0]["raw_path"] == records[0]["raw_path"]
    # no text of a record can close the page's script
    egi = json.loads((run / "egi.json").read_text())
    evil = "</script><script>document.title='owned'</script><!--"
    html = render_html(egi, [{"suite": "toy", "task_id": "t-1", "trial": 1, "category": "a",
                              "status": "failed", "expected": "x", "got": evil}])
    assert evil not in html and html.count("</script>") == 2  # the blob's and the code's
    assert _blob(html)["records"][0]["got"] == evil
    # the bucket chart draws a ceiling where egi.json has one, and none where it has none
    assert egi["buckets"]["M1"].get("ceiling") is None
    assert 'class="ceiling"' not in render_html(egi, [])
    egi["buckets"]["M1"]["ceiling"] = 80.0
    egi["buckets"]["M1"]["value"] = 60.0
    html = render_html(egi, [])
    assert html.count('class="ceiling"') == 1
    assert "60.0 <tspan fill=\"#6d28d9\">(75% of ceiling 80.0)</tspan>" in html
    # each bucket contributor's transform (egi.json buckets.<M>.contributors[].transform), one a line
    assert [c["transform"] for c in egi["buckets"]["M1"]["contributors"]] == [
        "fraction(1.000) = 100.0", "fraction(0.600) = 60.0"]
    assert ('<td class="contributors"><div>toy/acc_alpha: fraction(1.000) = 100.0</div>'
            '<div>toy/acc_beta: fraction(0.600) = 60.0</div></td>') in html
    # a suite's sub-metrics one a line; past six, collapsed under their count
    subs = egi["suites"]["toy"]["sub_metrics"]
    assert f'<div class="subm">acc <span class="v">{subs["acc"]:.3f}</span></div>' in html
    egi["suites"]["toy"]["sub_metrics"] = {f"m{i}": i / 10 for i in range(7)}
    html = render_html(egi, [])
    assert ('<details class="subs"><summary>7 sub-metrics</summary><div class="subm">m0 '
            '<span class="v">0.000</span></div>') in html


def test_radar_never_plots_an_unmeasured_bucket():
    full = {b: {"value": 50.0} for b in ("M1", "M2", "M3", "M4", "M5", "M6")}
    part = {**full, "M4": {"value": None}, "M6": {"value": None}}
    runs = [{"label": "A", "model": "egi/oracle", "color": "#111", "buckets": full},
            {"label": "B", "model": "egi/null", "color": "#222", "buckets": part}]
    svg = _radar(runs)
    # all six measured: a closed polygon; else an open outline, no point for the missing buckets
    assert svg.count('<polygon class="profile" data-run="A"') == 1
    assert svg.count('class="profile') == 2 and '<path class="profile open" data-run="B"' in svg
    assert re.findall(r'class="vertex" data-run="B" data-bucket="(M\d)"', svg) == ["M1", "M2", "M3", "M5"]
    assert len(re.findall(r'class="vertex" data-run="A"', svg)) == 6
    # nothing of B drawn at the centre (190, 170), where a 0 would be
    [d] = re.findall(r'data-run="B" d="([^"]*)"', svg)
    assert "190.0,170.0" not in d and "190,170" not in d
    # segments only between neighbouring measured buckets: M1-M2, M2-M3 (M3-M4, M4-M5, M5-M6, M6-M1 open)
    assert d.count("M") == 2
    assert "B egi/null (not measured: M4 M6)" in svg


def test_trajectory_text_names_roles_tool_calls_and_the_ending_and_cuts_long_ones():
    raw = {"trajectory": {
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "Weather in Oslo?"},
                     {"role": "assistant", "content": None, "tool_calls": [
                         {"id": "1", "type": "function",
                          "function": {"name": "weather", "arguments": '{"city": "Oslo"}'}}]},
                     {"role": "tool", "name": "weather", "content": "rain"},
                     {"role": "assistant", "content": [{"type": "text", "text": "Rain."}]}],
        "final_answer": "Rain.", "termination": "submitted", "turns": 2, "finish_reason": "stop"}}
    assert trajectory_text(raw) == (
        "[system] Be brief.\n[user] Weather in Oslo?\n[assistant]\n  -> weather({\"city\": \"Oslo\"})\n"
        "[tool weather] rain\n[assistant] Rain.\n[final answer] Rain.\n"
        "[ended] termination submitted, 2 turns, finish_reason stop")
    cut = trajectory_text(raw, limit=20)
    assert cut == "[system] Be brief.\n[" + f"\n… cut at 20 of {len(trajectory_text(raw)):,} characters"
    assert trajectory_text({"task": {}}) == ""


def test_gate_worse_ranks_ready_undecided_not_ready_and_ignores_an_unjudged_gate():
    def run(verdict, judged=True):
        return {"gate": {"verdict": verdict, "judged": judged}}

    assert gate_worse(run("READY"), run("UNDECIDED")) and gate_worse(run("UNDECIDED"), run("NOT READY"))
    assert not gate_worse(run("NOT READY"), run("READY")) and not gate_worse(run("READY"), run("READY"))
    assert not gate_worse(run("READY"), run(None, judged=False))
    # an egi.json from before gate.verdict: release_ready says it
    assert gate_worse({"gate": {"release_ready": True}}, {"gate": {"release_ready": False}})


def test_flipped_tasks_are_matched_by_suite_task_and_trial():
    def rec(task, status, trial=1, suite="s"):
        return {"suite": suite, "task_id": task, "trial": trial, "status": status, "category": "c",
                "got": f"{task} {status}"}

    a = [rec("t-2", "passed"), rec("t-10", "failed"), rec("t-3", "passed"), rec("t-4", "error"),
         rec("t-2", "failed", trial=2), rec("t-2", "passed", suite="other")]
    b = [rec("t-2", "failed"), rec("t-10", "passed"), rec("t-3", "passed"), rec("t-4", "failed"),
         rec("t-2", "failed", trial=2), rec("t-5", "failed")]
    flips = flipped_tasks(a, b)
    assert [(f["task_id"], f["trial"], f["direction"]) for f in flips] == [  # t-2 before t-10
        ("t-2", 1, "pass->fail"), ("t-10", 1, "fail->pass")]
    assert flips[0]["got_a"] == "t-2 passed" and flips[0]["got_b"] == "t-2 failed"


def test_compare_three_runs_writes_a_page_and_fails_on_a_regression(toy_runs, capsys):
    oracle, noisy, null = (str(toy_runs[m]) for m in ("egi/oracle", "egi/noisy-0.3", "egi/null"))
    # the baseline first; the page goes into its folder
    assert main(["compare", oracle, noisy, null, "--resamples", "300"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "== B against A (the baseline); below, A = A and B = B"
    assert "== C against A (the baseline); below, A = A and B = C" in out
    page = toy_runs["egi/oracle"] / "compare.html"
    assert out[-1] == f"egi compare page: {page}"
    regressions = [line for line in out if line.startswith("regression: ")]
    assert regressions and all(line.startswith(("regression: B against A: M", "regression: C against A: M"))
                               for line in regressions)
    assert any(line.startswith("regression: C against A: M1 100.0 -> 0.0 (paired interval [-100.0, -100.0]")
               for line in regressions)
    data = _blob(page.read_text(), "egi-compare-data")
    assert [r["model"] for r in data["runs"]] == ["egi/oracle", "egi/noisy-0.3", "egi/null"]
    b, c = data["pairs"]
    noisy_records = [json.loads(x) for x in
                     (toy_runs["egi/noisy-0.3"] / "records.jsonl").read_text().splitlines()]
    assert len(b["flips"]) == sum(r["status"] == "failed" for r in noisy_records) > 0
    assert {f["direction"] for f in b["flips"]} == {"pass->fail"}
    assert c["paired"]["M1"]["beyond"] == "worse" and c["paired"]["M1"]["interval"] == [-100.0, -100.0]
    [acc] = [m for m in c["sub_metrics"] if m["metric"] == "acc"]
    assert (acc["a"], acc["b"], acc["delta"], acc["interval"], acc["beyond"]) == (
        1.0, 0.0, -1.0, [-1.0, -1.0], "down")
    assert "<b>▼ down, beyond its interval</b>" in page.read_text()
    # --fail-on-regression: 1 when a later run got worse, 0 when it only got better
    assert main(["compare", oracle, null, "--resamples", "300", "--fail-on-regression",
                 "--html", str(toy_runs["egi/null"].parent / "c.html")]) == 1
    capsys.readouterr()
    assert main(["compare", null, oracle, "--resamples", "300", "--fail-on-regression",
                 "--html", str(toy_runs["egi/null"].parent / "d.html")]) == 0
    out = capsys.readouterr().out
    assert "regression:" not in out
    # without paired intervals the runs' own intervals decide
    assert main(["compare", oracle, null, "--resamples", "0", "--fail-on-regression",
                 "--html", str(toy_runs["egi/null"].parent / "e.html")]) == 1
    assert "regression: B against A: M1 100.0 -> 0.0 (its 95% interval below the baseline's)" in (
        capsys.readouterr().out)
    # usage errors
    assert main(["compare", oracle]) == 2
    assert capsys.readouterr().err == (
        "egi-bench: error: compare: give two or more run folders (the first is the baseline)\n")
    nowhere = toy_runs["egi/null"].parent / "no" / "such" / "c.html"
    assert main(["compare", oracle, oracle, "--html", str(nowhere), "--resamples", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"egi-bench: error: --html {nowhere}: cannot write the compare page")
