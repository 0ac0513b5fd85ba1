"""egi-bench report / report --rescore / compare on a real run of the toy suite."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from pytest_egi.cli import main


@pytest.fixture
def toy_run(toy_project, monkeypatch):
    toy_project.runpytest(
        "toysuites", "--egi-model", "egi/noisy-0.3", "--egi-mode", "deep", "--egi-bootstrap", "0"
    )
    monkeypatch.syspath_prepend(str(toy_project.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    run = next((toy_project.path / "reports").iterdir())
    return run


def test_report_reprints_the_same_numbers(toy_run, capsys):
    egi = json.loads((toy_run / "egi.json").read_text())
    assert main(["report", str(toy_run)]) == 0
    out = capsys.readouterr().out
    assert f"{egi['egi']['partial_value']:.1f}" in out  # the toy routing covers M1 and M4 only
    assert "toy v1: " in out


def test_rescore_with_new_weights_calls_no_model(toy_run, capsys):
    before = json.loads((toy_run / "egi.json").read_text())
    assert (
        main(
            [
                "report",
                "--rescore",
                str(toy_run),
                "--egi-weights",
                "M1=0.42,M2=0.08,M3=0.16,M4=0.14,M5=0.14,M6=0.06",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "rescored from" in out and "no model called" in out
    rescored_dir = next(p for p in toy_run.iterdir() if p.name.startswith("rescore-"))
    after = json.loads((rescored_dir / "egi.json").read_text())
    # same sub-metrics (same trajectories, same deterministic scorer) ...
    assert after["suites"]["toy"]["sub_metrics"] == before["suites"]["toy"]["sub_metrics"]
    # ... re-weighted: M1 weight 0.42, M4 0.14 -> partial figure (0.42*M1 + 0.14*M4) / 0.56
    m1, m4 = after["buckets"]["M1"]["value"], after["buckets"]["M4"]["value"]
    assert after["egi"]["value"] is None  # M2, M3, M5, M6 are empty: no EGI
    assert after["egi"]["partial_value"] == pytest.approx((0.42 * m1 + 0.14 * m4) / 0.56, abs=1e-6)
    assert after["egi"]["covered_weight"] == pytest.approx(0.56)
    assert after["routing"]["weights"]["M1"] == 0.42


@pytest.mark.parametrize(("weights", "message"), [
    ("M1=0.9,M5=0.3", "--egi-weights: the named bucket weights alone sum to 1.2000 (M1=0.9, M5=0.3), "
                      "above 1; the six weights must sum to 1"),
    ("M1=0.2,M2=0.2,M3=0.2,M4=0.2,M5=0.2,M6=0.2",
     "--egi-weights: all six bucket weights are given and they sum to 1.2000 (M1=0.2, M2=0.2, M3=0.2, "
     "M4=0.2, M5=0.2, M6=0.2); they must sum to 1 (or name only some buckets: the others are scaled "
     "to fill the rest)"),
    ("M1=-0.1", "--egi-weights: 'M1=-0.1' is outside [0, 1]"),
    ("M7=0.1", "--egi-weights: bad entry 'M7=0.1'; expected BUCKET=NUMBER with BUCKET in M1-M6, "
               "e.g. --egi-weights M1=0.3,M4=0.12"),
])
def test_rescore_bad_weights_is_a_clear_error(toy_run, capsys, weights, message):
    assert main(["report", "--rescore", str(toy_run), "--egi-weights", weights]) == 2
    assert capsys.readouterr().err == f"egi-bench: error: {message}\n"
    assert not any(p.name.startswith("rescore-") for p in toy_run.iterdir())  # nothing written


def test_rescore_with_a_partial_weight_override_scales_the_others(toy_run, capsys):
    """The report's own example, M1=0.20,M5=0.30: the other four (0.22, 0.16, 0.14, 0.06; sum
    0.58) are scaled to fill 0.50."""
    assert main(["report", "--rescore", str(toy_run), "--egi-weights", "M1=0.20,M5=0.30"]) == 0
    out = capsys.readouterr().out
    rescored = next(p for p in toy_run.iterdir() if p.name.startswith("rescore-"))
    egi = json.loads((rescored / "egi.json").read_text())
    want = {"M1": 0.20, "M2": 0.22 * 0.5 / 0.58, "M3": 0.16 * 0.5 / 0.58, "M4": 0.14 * 0.5 / 0.58,
            "M5": 0.30, "M6": 0.06 * 0.5 / 0.58}
    assert egi["routing"]["weights"] == pytest.approx(want, abs=1e-12)
    assert egi["routing"]["weights_given"] == {"M1": 0.2, "M5": 0.3}
    assert sum(egi["routing"]["weights"].values()) == pytest.approx(1.0)
    assert ("bucket weights (--egi-weights M1=0.2,M5=0.3; the other buckets scaled to fill 0.5): "
            "M1 0.2, M2 0.189655, M3 0.137931, M4 0.12069, M5 0.3, M6 0.051724") in out.splitlines()
    # the partial figure with these weights: M1 and M4 covered, (0.2*M1 + 0.12069*M4) / 0.32069
    m1, m4 = egi["buckets"]["M1"]["value"], egi["buckets"]["M4"]["value"]
    w4 = 0.14 * 0.5 / 0.58
    assert egi["egi"]["partial_value"] == pytest.approx((0.2 * m1 + w4 * m4) / (0.2 + w4), abs=1e-6)
    html = (rescored / "report.html").read_text()
    assert ("bucket weights from --egi-weights M1=0.2,M5=0.3 (the other buckets scaled to fill the "
            "rest)") in html


def test_report_on_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert f"egi-bench: error: {tmp_path}/egi.json: no such file" in capsys.readouterr().err


def test_compare(toy_run, toy_project, capsys):
    toy_project.runpytest(
        "toysuites",
        "--egi-model",
        "egi/oracle",
        "--egi-mode",
        "deep",
        "--egi-bootstrap",
        "0",
        "--egi-report-dir",
        "oracle",
    )
    oracle = next((toy_project.path / "oracle").iterdir())
    assert main(["compare", str(toy_run), str(oracle)]) == 0
    out = capsys.readouterr().out
    assert "\nwarning: " not in out  # same routing, coverage, suites, mode, seed, options
    a = json.loads((toy_run / "egi.json").read_text())["suites"]["toy"]["sub_metrics"]["acc"]
    assert f"  toy/acc: {a:.3f} -> 1.000 {1.0 - a:+.3f}" in out
    toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0",
                          "--egi-report-dir", "quick", "-k", "alpha")
    quick = next((toy_project.path / "quick").iterdir())
    assert main(["compare", str(toy_run), str(quick)]) == 0
    out = capsys.readouterr().out
    assert "warning: different mode: A deep, B quick" in out
    assert "warning: different selection: A {}, B {'-k': 'alpha'}" in out
    assert "warning: toy: A has 10 items, B 3" in out


def test_rescore_of_a_rescore_still_finds_the_trajectories(toy_run, capsys):
    assert main(["report", "--rescore", str(toy_run)]) == 0
    first = next(p for p in toy_run.iterdir() if p.name.startswith("rescore-"))
    egi = json.loads((first / "egi.json").read_text())
    assert egi["config"]["rescored_from"] == str(toy_run.resolve())
    assert main(["report", "--rescore", str(first)]) == 0
    again = next(p for p in first.iterdir() if p.name.startswith("rescore-"))
    assert json.loads((again / "egi.json").read_text())["suites"] == egi["suites"]


def test_rescored_records_point_at_the_stores_each_path_found_once(toy_run, monkeypatch):
    from pytest_egi import cli
    from pytest_egi.records import load_records

    records = load_records(toy_run)
    stores = {r["raw_at"].partition("#")[0] for r in records if r.get("raw_at")}
    assert len(records) > len(stores) >= 1  # many records, a few store files
    calls = []
    relpath = os.path.relpath

    def counted(path, start=None):
        calls.append(str(path))
        return relpath(path, start)

    monkeypatch.setattr(cli.os.path, "relpath", counted)
    out_dir = toy_run / "rescore-x"
    rescored = cli.rescore_records(toy_run, records, {}, out_dir)
    assert sorted(calls) == sorted(str(toy_run / file) for file in stores)  # once per store file
    for old, new in zip(records, rescored, strict=True):
        file, _, place = old["raw_at"].partition("#")
        assert new["raw_at"] == f"{relpath(toy_run / file, out_dir)}#{place}"


def test_report_fails_loudly_when_a_suite_cannot_be_imported(toy_run, capsys, monkeypatch):
    records = (toy_run / "records.jsonl").read_text().replace('"toysuites.toy"', '"nosuch.toy"')
    (toy_run / "records.jsonl").write_text(records)
    assert main(["report", str(toy_run)]) == 2
    assert "cannot import suite module 'nosuch.toy'" in capsys.readouterr().err


def test_compare_after_a_reweighting_rescore_names_the_weights(toy_run, capsys):
    assert main(["report", "--rescore", str(toy_run), "--egi-weights",
                 "M1=0.30,M2=0.20,M3=0.16,M4=0.14,M5=0.14,M6=0.06"]) == 0
    rescored = next(p for p in toy_run.iterdir() if p.name.startswith("rescore-"))
    capsys.readouterr()
    assert main(["compare", str(toy_run), str(rescored)]) == 0
    out = capsys.readouterr().out
    assert "warning: different bucket weights (M1 0.28->0.3, M2 0.22->0.2)" in out
    assert "different coverage" not in out


def test_report_and_rescore_keep_an_interrupted_run_labelled(toy_project, monkeypatch, capsys):
    toy_project.runpytest("toysuites", "--egi-model", "egi/null", "--egi-bootstrap", "0", "-x")
    monkeypatch.syspath_prepend(str(toy_project.path))
    run = next((toy_project.path / "reports").iterdir())
    capsys.readouterr()
    headline = (
        "EGI INTERRUPTED: 1 of 6 items ran (stopping after 1 failures) — the figure over the "
        "items that were scored (0.0, partial: 42% of weight) is not a score"
    )
    gate = f"release gate: NOT JUDGED — interrupted after 1 of 6 items; continue it with --egi-resume {run}"
    assert main(["report", str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (headline in out, gate in out) == (True, True)  # (the verdict last, as in the session)
    assert main(["report", "--rescore", str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (headline in out, gate in out) == (True, True)  # the run to continue is the original
    rescored = next(p for p in run.iterdir() if p.name.startswith("rescore-"))
    egi = json.loads((rescored / "egi.json").read_text())
    assert (egi["egi"]["flags"], egi["egi"]["headline"]) == (["INTERRUPTED"], headline)
    assert (egi["gate"]["release_ready"], egi["gate"]["judged"]) == (None, False)
    assert egi["gate"]["not_judged_reason"] == gate.removeprefix("release gate: NOT JUDGED — ")
    assert "INTERRUPTED" in (rescored / "report.html").read_text()


def test_compare_labels_a_subset_and_an_interrupted_run(toy_run, toy_project, capsys):
    toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-mode", "deep",
                          "--egi-bootstrap", "0", "--egi-report-dir", "subset", "-k", "alpha")
    toy_project.runpytest("toysuites", "--egi-model", "egi/null", "--egi-mode", "deep",
                          "--egi-bootstrap", "0", "--egi-report-dir", "stopped", "-x")
    subset = next((toy_project.path / "subset").iterdir())
    stopped = next((toy_project.path / "stopped").iterdir())
    # the toy routing covers M1 and M4 only: both figures are partial, over the same buckets
    a = json.loads((toy_run / "egi.json").read_text())["egi"]["partial_value"]
    assert main(["compare", str(toy_run), str(subset)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert 'warning: B is a subset of its profile (-k "alpha"); its EGI covers the selected items only' in out
    assert (f"{'EGI':10} {f'{a:.1f} (partial)':>23} {'100.0 (partial, subset)':>23} {100.0 - a:>+7.1f}"
            in [x.rstrip() for x in out])
    assert main(["compare", str(toy_run), str(stopped)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert (
        "warning: B's EGI is not a score: EGI INTERRUPTED: 1 of 10 items ran (stopping after 1 "
        "failures) — the figure over the items that were scored (0.0, partial: 42% of weight) is "
        "not a score"
    ) in out
    assert f"{'EGI':10} {f'{a:.1f} (partial)':>14} {'INTERRUPTED':>14}" in [x.rstrip() for x in out]


def test_rescore_refuses_a_route_to_a_sub_metric_the_suite_never_produces(toy_run, toy_project, capsys):
    """A typo in a routed sub-metric (acc_alpa for acc_alpha) is refused by rescore as pytest
    refuses it, instead of silently dropping that route from the score."""
    from tests.toy_project import ROUTING

    routing = toy_project.path / "typo.yaml"
    routing.write_text(ROUTING.replace("sub_metric: acc_alpha,", "sub_metric: acc_alpa,"))
    message = (f"invalid routing file {routing}: route 1 (toy/acc_alpa): sub_metric 'acc_alpa' "
               "is not a sub-metric of toy; its sub-metrics: acc, acc_alpha, acc_beta")
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-routing", str(routing))
    assert result.ret == 4 and message in result.stderr.str()
    capsys.readouterr()
    assert main(["report", "--rescore", str(toy_run), "--routing", str(routing)]) == 2
    assert capsys.readouterr().err == f"egi-bench: error: {message}\n"
    assert not [p for p in toy_run.iterdir() if p.name.startswith("rescore-")]


class _ClosedPipe(io.StringIO):
    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_rescore_writes_its_run_before_printing_into_a_closed_pipe(toy_run, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main(["report", "--rescore", str(toy_run)]) == 1
    assert capsys.readouterr().err == ""
    rescored = [p for p in toy_run.iterdir() if p.name.startswith("rescore-")]
    assert len(rescored) == 1 and (rescored[0] / "egi.json").is_file()


@pytest.mark.parametrize("command", ["report", "compare"])
def test_report_and_compare_into_a_closed_pipe_exit_quietly(toy_run, toy_project, command):
    """``egi-bench report RUN | head``: no BrokenPipeError traceback, exit status 1 (as the
    Python docs' "Note on SIGPIPE" recommends)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write
    args = [str(toy_run)] if command == "report" else [str(toy_run), str(toy_run)]
    try:
        proc = subprocess.run([sys.executable, "-m", "pytest_egi.cli", command, *args],
                              stdout=write_end, stderr=subprocess.PIPE, text=True,
                              cwd=toy_project.path, timeout=120)
    finally:
        os.close(write_end)
    assert (proc.returncode, proc.stderr) == (1, "")


@pytest.fixture
def floor_breach_run(toy_project, monkeypatch):
    """A toy run that fails its session: M1 below an --egi-floor of 90."""
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/noisy-0.3", "--egi-mode", "deep",
                                   "--egi-bootstrap", "0", "--egi-floor", "M1=90")
    assert result.ret == 1
    monkeypatch.syspath_prepend(str(toy_project.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    run = next((toy_project.path / "reports").iterdir())
    m1 = json.loads((run / "egi.json").read_text())["buckets"]["M1"]["value"]
    assert m1 < 90
    return run, f"session fails: release floor breached: M1 {m1:.1f} < 90"


def test_report_of_a_failed_run_prints_why_it_failed(floor_breach_run, capsys):
    run, line = floor_breach_run
    assert json.loads((run / "egi.json").read_text())["session"]["exit_status"] == 1
    assert main(["report", str(run)]) == 0  # it displays a stored run
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [line, f"egi report: {run}"]


def test_rescore_exits_1_when_the_rescored_run_breaches_a_floor(floor_breach_run, capsys):
    run, line = floor_breach_run
    capsys.readouterr()
    # rescored with routing.yaml's own floors (M2, M5: unmeasured here), it passes
    assert main(["report", "--rescore", str(run)]) == 0
    assert "session fails" not in capsys.readouterr().out
    before = set(run.iterdir())
    assert main(["report", "--rescore", str(run), "--egi-floor", "M1=90"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == line
    (rescored,) = set(run.iterdir()) - before
    session = json.loads((rescored / "egi.json").read_text())["session"]
    assert (session["exit_status"], session["reasons"]) == (1, [line.removeprefix("session fails: ")])
    assert main(["report", str(rescored)]) == 0
    assert capsys.readouterr().out.splitlines()[-2] == line


def test_rescore_exits_1_when_the_error_rate_is_above_the_max(toy_project, monkeypatch, capsys):
    result = toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-mode", "deep",
                                   "--egi-bootstrap", "0", "--egi-opt", "toy.fail_every=2")
    assert result.ret == 1
    monkeypatch.syspath_prepend(str(toy_project.path))
    for name in [m for m in sys.modules if m.startswith("toysuites")]:
        monkeypatch.delitem(sys.modules, name)
    run = next((toy_project.path / "reports").iterdir())
    line = "session fails: errored items 60.0% above --egi-max-error-rate 5.0%"
    capsys.readouterr()
    assert main(["report", str(run)]) == 0
    assert line in capsys.readouterr().out.splitlines()
    assert main(["report", "--rescore", str(run)]) == 1
    assert capsys.readouterr().out.splitlines()[-2] == line


def test_report_help_documents_the_exit_status(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("exit status: 0 for report (it displays a stored run, whatever that run's status "
            "was); with --rescore, 1 when the rescored run breaches a floor on a measured bucket "
            "(its release gate judged), its confident gate is UNDECIDED (unless --egi-gate-undecided "
            "pass), or its error rate is above the run's --egi-max-error-rate "
            "(the rule of pytest's exit status), else 0; 2 for a usage error.") in help_text


def test_report_without_a_run_shows_the_newest_run_not_the_last_name(toy_project, monkeypatch, capsys):
    for run_id in ("zeta", "alpha"):  # made in the opposite alphabetical order
        toy_project.runpytest("toysuites", "--egi-model", "egi/oracle", "--egi-mode", "deep",
                              "--egi-bootstrap", "0", "--egi-run-id", run_id)
    monkeypatch.syspath_prepend(str(toy_project.path))
    reports = toy_project.path / "reports"
    capsys.readouterr()
    assert main(["report", "--reports", str(reports)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"egi report: {reports / 'alpha'}"
    # run.json's time decides (a resumed run is updated after it started) ...
    zeta = json.loads((reports / "zeta" / "run.json").read_text())
    (reports / "zeta" / "run.json").write_text(json.dumps({**zeta, "updated": "2999-01-01T00:00:00Z"}))
    assert main(["report", "--reports", str(reports)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"egi report: {reports / 'zeta'}"
    # ... else, for a run without one, the time its egi.json was written
    for run_id, when in (("zeta", 1_000_000), ("alpha", 2_000_000)):
        (reports / run_id / "run.json").unlink()
        os.utime(reports / run_id / "egi.json", (when, when))
    assert main(["report", "--reports", str(reports)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"egi report: {reports / 'alpha'}"


def test_report_help_says_which_run_is_the_default(capsys):
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert ("run directory (default: the newest run under --reports: the one most recently updated "
            "or started, by its run.json, else by the time its egi.json was written)") in help_text


def test_a_plain_report_refuses_options_it_would_ignore(toy_run, capsys):
    assert main(["report", str(toy_run), "--egi-floor", "M4=90"]) == 2
    assert capsys.readouterr().err == (
        "egi-bench: error: --egi-floor applies with --rescore or --merge; egi-bench report RUN shows the "
        "run as it was judged (add --rescore to judge it with --egi-floor)\n")


def test_report_on_a_run_that_never_ended_says_how_far_it_got_and_how_to_finish_it(tmp_path, capsys):
    """A run killed mid-session has run.json and a journal but no egi.json: the error says so
    and names the resume, not "is it a run directory?"."""
    run = tmp_path / "reports" / "kill2"
    run.mkdir(parents=True)
    manifest = {"run_id": "kill2", "model": "egi/noisy-0.3", "status": "running",
                "plan": ["t::a", "t::b", "t::c"]}
    (run / "run.json").write_text(json.dumps(manifest), encoding="utf-8")
    (run / "journal.jsonl").write_text('{"task_id": "a"}\n{"task_id": "b"', encoding="utf-8")  # b cut short
    for argv in (["report", str(run)], ["report", "--rescore", str(run)]):
        assert main(argv) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert (f"egi-bench: error: {run / 'egi.json'}: no such file: the session of {run} stopped before "
                f"its end (run.json: status 'running'; 1 of 3 items in journal.jsonl); finish it by running "
                f"its pytest command again with --egi-resume {run}") in err
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert f"{tmp_path / 'empty' / 'egi.json'}: no such file; is {tmp_path / 'empty'} a run directory?" in (
        capsys.readouterr().err)
