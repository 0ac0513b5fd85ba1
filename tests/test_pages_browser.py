"""report.html and the compare page opened in a real headless browser (Debian's Chromium
driven by Playwright's Python API, never a browser Playwright downloads).

One browser per module; the runs are made once per session: the oracle's and egi/noisy-0.3's
quick runs of one small suite (HERB), and a synthetic run of 5,000 records for the page's
speed. Screenshots go to a folder under pytest's tmp dir, or to ``$EGI_SCREENSHOTS`` to keep
them. Skipped, with the reason, where Playwright or the browser is not installed
(``pip install -e '.[browser]'`` and ``apt-get install chromium``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_egi.records import load_records

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("EGI_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SUITE = "herb"


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install -e '.[browser]')"
    if not CHROMIUM.exists():
        return f"no browser at {CHROMIUM} (apt-get install chromium, or set EGI_CHROMIUM)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture(scope="session")
def shots(tmp_path_factory) -> Path:
    """Where the screenshots go: $EGI_SCREENSHOTS, else a folder of pytest's tmp dir."""
    keep = os.environ.get("EGI_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        return Path(keep)
    return tmp_path_factory.mktemp("screenshots")


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The two quick runs, made side by side (each a pytest process)."""
    tmp = tmp_path_factory.mktemp("runs")
    procs = {}
    for model in ("egi/oracle", "egi/noisy-0.3"):
        out = tmp / model.replace("/", "-")
        procs[model] = (out, subprocess.Popen(
            [sys.executable, "-m", "pytest", f"suites/{SUITE}", "--egi-model", model, "--egi-mode", "quick",
             "--egi-report-dir", str(out), "--egi-bootstrap", "200", "-p", "no:cacheprovider", "-q"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    found = {}
    for model, (out, proc) in procs.items():
        proc.wait(timeout=600)
        [found[model]] = [p for p in out.iterdir() if (p / "egi.json").exists()]
    return found


def _open(browser, path: Path, width: int = 1280):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    return page, errors


def _visible_rows(page) -> list[dict[str, str]]:
    return page.eval_on_selector_all(
        "#tasks tbody tr:not([hidden]):not(.traj-row)",
        "rows => rows.map(r => ({suite: r.cells[0].textContent, task: r.cells[1].textContent, "
        "status: r.cells[4].textContent, kind: r.cells[5].textContent}))",
    )


@pytest.mark.parametrize("model", ["egi/oracle", "egi/noisy-0.3"])
def test_report_page_renders_filters_and_sorts(browser, runs, shots, model):
    run = runs[model]
    egi = json.loads((run / "egi.json").read_text())
    records = load_records(run)
    html = (run / "report.html").read_text()
    assert "href=" not in html and "src=" not in html  # nothing to fetch, no link to break
    page, errors = _open(browser, run / "report.html")
    assert errors == []
    assert page.text_content("p.headline").split()[0] == "EGI"
    verdict = page.text_content("#gate .gate-verdict")
    assert verdict == egi["gate"]["verdict"]
    assert page.locator("#bucket-chart g.bucket-bar").count() == 6
    assert page.locator("#bucket-chart line.floor").count() == 2  # M2 and M5
    measured = [b for b, v in egi["buckets"].items() if v["value"] is not None]
    assert page.locator("#bucket-chart rect.value").count() == len(measured)
    assert page.locator("#suite-overview tr").count() == 1 + len(egi["suites"])
    # a suite's many sub-metrics collapsed under their count, opened one a line
    n_subs = len(egi["suites"][SUITE]["sub_metrics"])
    assert n_subs > 6 and page.text_content("#suite-overview details.subs summary") == f"{n_subs} sub-metrics"
    page.click("#suite-overview details.subs summary")
    assert page.locator("#suite-overview details.subs div.subm").count() == n_subs
    # numeric headers sit over their right-aligned numbers
    aligns = page.eval_on_selector_all("#suite-overview th",
                                       "hs => hs.map(h => getComputedStyle(h).textAlign)")
    assert aligns == ["left", "left", "right", "right", "right", "right", "right", "right", "left"]
    # the partial headline: a gap between the interval's text and the coverage badge
    if egi["egi"].get("partial"):
        ci = page.locator("p.headline span.muted").bounding_box()
        badge = page.locator("p.headline span.badge:has-text('of weight covered')").bounding_box()
        assert badge["x"] - (ci["x"] + ci["width"]) >= 4
    # each contributor with its transform, one a line
    for b, bk in egi["buckets"].items():
        shown = page.eval_on_selector_all(
            f"xpath=//table//tr[td[1][text()='{b}']]/td[@class='contributors']/div",
            "ds => ds.map(d => d.textContent)")
        assert shown == [f"{c['route']}: {c['transform']}" for c in bk["contributors"]]
    rows = _visible_rows(page)
    assert len(rows) == len(records) < 200
    statuses = [r["status"] for r in rows]
    rank = {"error": 0, "failed": 1, "passed": 2, "skipped": 3}
    assert [rank[s] for s in statuses] == sorted(rank[s] for s in statuses)  # failures first
    assert page.text_content("h2:has-text('Tasks')") == f"Tasks ({len(records)})"
    # a trajectory is inline, collapsed, and shown on opening it
    assert page.locator("#tasks tr.traj-row").count() == 0
    page.locator("#tasks tbody tr details summary").first.click()
    assert page.locator("#tasks tr.traj-row pre").text_content().startswith("[system]")
    # filter by status, then by category
    passed = sum(r["status"] == "passed" for r in records)
    page.select_option("#f-status", "passed")
    rows = _visible_rows(page)
    assert len(rows) == passed and {r["status"] for r in rows} <= {"passed"}
    assert page.text_content("#shown") == f"{passed} of {len(records)} match"
    page.select_option("#f-status", "")
    category = records[0]["category"]
    page.select_option("#f-category", category)
    assert len(_visible_rows(page)) == sum(r["category"] == category for r in records)
    page.screenshot(path=str(shots / f"report-{model.replace('/', '-')}.png"), full_page=False)
    page.select_option("#f-category", "")
    # sort by task id, then the other way
    page.click("#tasks th[data-key='task_id']")
    ids = [r["task"] for r in _visible_rows(page)]
    assert ids[0] == min(ids, key=_natural) and ids[-1] == max(ids, key=_natural)
    page.click("#tasks th[data-key='task_id']")
    assert _visible_rows(page)[0]["task"] == max(ids, key=_natural)
    page.close()


def _natural(text: str) -> list:
    import re

    return [(0, int(t), "") if t.isdigit() else (1, 0, t.lower()) for t in re.findall(r"\d+|\D+", text)]


def _synthetic_run(folder: Path, template: Path, n: int = 5000) -> Path:
    """A run folder of ``n`` records over three suites (ids task-1 .. task-n, every 7th failed
    with a failure kind, every 50th errored), each with a short stored trajectory; its egi.json
    is the template run's."""
    from pytest_egi.report.html import render_html

    folder.mkdir()
    egi = json.loads((template / "egi.json").read_text())
    suites = ["alpha", "beta", "gamma"]
    kinds = ["wrong final answer", "wrong tool", "missing call"]
    records = []
    (folder / "raw").mkdir()
    for i in range(1, n + 1):
        status = "error" if i % 50 == 0 else "failed" if i % 7 == 0 else "passed"
        rec = {
            "suite": suites[i % 3], "task_id": f"task-{i}", "trial": 1, "category": f"cat{i % 4}",
            "status": status, "expected": f"answer {i}", "got": f"answer {i if status == 'passed' else -i}",
            "failure_kind": kinds[(i // 7) % 3] if status == "failed" else None,
            "raw_path": f"raw/task-{i}.json",
        }
        (folder / rec["raw_path"]).write_text(json.dumps({"trajectory": {
            "messages": [{"role": "system", "content": "You are an agent."},
                         {"role": "user", "content": f"Question {i}?"},
                         {"role": "assistant", "content": f"answer {i}"}],
            "final_answer": rec["got"], "termination": "submitted", "turns": 1, "finish_reason": "stop"}}))
        records.append(rec)
    page = render_html(egi, records, run_dir=folder)
    (folder / "report.html").write_text(page)
    return folder


def test_report_page_at_5000_tasks(browser, runs, shots, tmp_path):
    run = _synthetic_run(tmp_path / "big", runs["egi/oracle"])
    size = (run / "report.html").stat().st_size
    start = time.perf_counter()
    page, errors = _open(browser, run / "report.html")
    loaded = time.perf_counter() - start
    assert errors == []
    assert page.locator("#tasks tbody tr").count() == 5000  # every row made once
    # the first 200 shown (failures first), the others a click away
    assert len(_visible_rows(page)) == 200
    assert page.text_content("#shown") == "5000 of 5000 match; the first 200 shown"
    page.click("#more")
    assert len(_visible_rows(page)) == 400
    # failures first (errored, then failed), natural order of ids inside
    head = _visible_rows(page)[:3]
    assert [r["task"] for r in head] == ["task-150", "task-300", "task-450"]  # not task-1050 first
    render_ms = int(page.get_attribute("body", "data-render-ms"))
    page.select_option("#f-suite", "beta")
    page.select_option("#f-kind", "wrong tool")
    filter_ms = int(page.get_attribute("body", "data-filter-ms"))  # the second filter, with its layout
    rows = _visible_rows(page)
    kinds = ["wrong final answer", "wrong tool", "missing call"]
    failed = [i for i in range(1, 5001) if i % 7 == 0 and i % 50]
    matching = sum(1 for i in failed if i % 3 == 1 and (i // 7) % 3 == 1)
    assert page.text_content("#shown") == f"{matching} of 5000 match; the first 200 shown"
    assert len(rows) == 200
    assert {r["kind"] for r in rows} == {"wrong tool"} and {r["suite"] for r in rows} == {"beta"}
    # why it failed, counted: per suite
    counts = page.eval_on_selector_all(
        "#failure-kinds table:first-of-type tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    order = sorted(kinds)
    assert counts[0] == ["suite", *order, "total"]
    # each count's header right-aligned over it, the kinds' columns of one width
    aligns = page.eval_on_selector_all("#failure-kinds table:first-of-type th",
                                       "hs => hs.map(h => getComputedStyle(h).textAlign)")
    assert aligns == ["left", "right", "right", "right", "right"]
    widths = page.eval_on_selector_all("#failure-kinds table:first-of-type th",
                                       "hs => hs.map(h => Math.round(h.getBoundingClientRect().width))")
    assert len(set(widths)) == 1
    for row, (k, suite) in zip(counts[1:], enumerate(["alpha", "beta", "gamma"]), strict=True):
        mine = [i for i in failed if i % 3 == k]
        got = [sum(kinds[(i // 7) % 3] == kind for i in mine) for kind in order]
        assert row == [suite, *(str(v) if v else "" for v in got), str(len(mine))]
    page.screenshot(path=str(shots / "report-5000.png"))
    print(f"\n5,000-task page: {size / 1e6:.2f} MB, opened in {loaded:.2f} s (its script: {render_ms} ms), "
          f"a filter {filter_ms} ms")
    assert loaded < 30 and render_ms < 10_000 and filter_ms < 1000  # generous: a loaded 2-core machine
    page.close()


def test_compare_page(browser, runs, shots, tmp_path, capsys):
    from pytest_egi.cli import main

    out = tmp_path / "compare.html"
    oracle, noisy = runs["egi/oracle"], runs["egi/noisy-0.3"]
    status = main(["compare", str(oracle), str(noisy), str(oracle), "--html", str(out),
                   "--resamples", "200", "--fail-on-regression"])
    printed = capsys.readouterr().out
    assert status == 1 and "regression: B against A: " in printed
    html = out.read_text()
    assert "href=" not in html and "src=" not in html
    page, errors = _open(browser, out)
    assert errors == []
    assert page.locator("#egi-bars rect.egi-bar").count() == 3
    assert page.locator("#heatmap rect.cell").count() == 3 * 6
    assert page.locator("#radar .profile").count() == 3
    # the radar plots only what a run measured: a dot per measured bucket, none at 0 for the others
    egis = [json.loads((r / "egi.json").read_text()) for r in (oracle, noisy, oracle)]
    for label, egi in zip("ABC", egis, strict=True):
        measured = [b for b, v in egi["buckets"].items() if v["value"] is not None]
        dots = page.eval_on_selector_all(f"#radar circle.vertex[data-run='{label}']",
                                         "cs => cs.map(c => c.dataset.bucket)")
        assert dots == measured and len(measured) < 6
    # nothing wider than the window at 1280 px (the flipped tasks' long answers wrap)
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert page.locator("#cost-plot circle.point").count() == 3  # offline policies cost $0
    assert page.locator("#gate-row .badge").count() == 3
    flips = load_records(noisy)
    failed = {(r["suite"], r["task_id"], r["trial"]) for r in flips if r["status"] == "failed"}
    table = page.locator("table.flips[data-pair='B'] tbody tr")
    assert table.count() == len(failed)  # every oracle task passed
    page.select_option(".f-dir[data-pair='B']", "fail->pass")
    assert page.locator("table.flips[data-pair='B'] tbody tr:not([hidden])").count() == 0
    page.select_option(".f-dir[data-pair='B']", "pass->fail")
    assert page.locator("table.flips[data-pair='B'] tbody tr:not([hidden])").count() == len(failed)
    page.screenshot(path=str(shots / "compare.png"), full_page=True)
    page.close()
