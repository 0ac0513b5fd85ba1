"""What running from an installed package needs, without building one (tests/test_wheel.py
builds it): the default routing found beside the suites package, ``egi-bench run``'s pytest
arguments, ``egi-bench init`` and ``egi-bench doctor``'s installation lines."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from pytest_egi import cli
from pytest_egi.doctor import _check_installation, _Report
from pytest_egi.run.settings import packaged_routing

ROOT = Path(__file__).resolve().parents[1]


def test_the_packaged_routing_is_the_checkouts():
    path = packaged_routing()
    assert path == ROOT / "suites" / "routing.yaml"
    assert path.read_bytes() == (ROOT / "routing.yaml").read_bytes()


def test_run_args_point_pytest_at_the_installed_suites(tmp_path):
    suites = ROOT / "suites"
    assert cli.run_args(["--egi-model", "egi/oracle"], suites, tmp_path) == [
        str(suites), f"--rootdir={tmp_path}", f"--confcutdir={suites}", f"--config-file={os.devnull}",
        "--egi-model", "egi/oracle"]
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    assert cli.run_args(["--suite", "herb", "--suite=crmarena", "-q"], suites, tmp_path) == [
        str(suites / "herb"), str(suites / "crmarena"), f"--rootdir={tmp_path}", f"--confcutdir={suites}",
        f"--config-file={tmp_path / 'pytest.ini'}", "-q"]
    # an ini file the user names is theirs
    given = cli.run_args(["-c", "x.ini"], suites, tmp_path)
    assert given == [str(suites), f"--rootdir={tmp_path}", f"--confcutdir={suites}", "-c", "x.ini"]


def test_run_refuses_an_unknown_suite(tmp_path):
    with pytest.raises(cli.CliError) as info:
        cli.run_args(["--suite", "crm"], ROOT / "suites", tmp_path)
    assert str(info.value) == (
        f"--suite 'crm': no such suite in {ROOT / 'suites'}; valid: benchforce, crmarena, eigent, herb, "
        "locobench, mcp_universe, mcpeval, personabench, userbench")
    with pytest.raises(cli.CliError, match="^--suite needs a suite name, e.g. --suite crmarena$"):
        cli.run_args(["--suite"], ROOT / "suites", tmp_path)


def test_init_writes_the_default_routing_once(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["init"]) == 0
    assert (tmp_path / "routing.yaml").read_bytes() == (ROOT / "routing.yaml").read_bytes()
    (tmp_path / "routing.yaml").write_text("edited\n")
    assert cli.main(["init"]) == 2
    assert capsys.readouterr().err == "egi-bench: error: routing.yaml exists; pass --force to overwrite it\n"
    assert (tmp_path / "routing.yaml").read_text() == "edited\n"
    assert cli.main(["init", "--force"]) == 0
    assert (tmp_path / "routing.yaml").read_bytes() == (ROOT / "routing.yaml").read_bytes()


def test_doctor_paths_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli._doctor_paths(None) == (ROOT / "suites", ROOT / "suites" / "routing.yaml")
    (tmp_path / "routing.yaml").write_text("x")
    assert cli._doctor_paths(None) == (ROOT / "suites", Path("routing.yaml"))
    assert cli._doctor_paths("elsewhere") == (Path("elsewhere"), None)


def test_doctor_names_the_installation(monkeypatch):
    out = io.StringIO()
    missing = {"safetensors", "fastapi"}
    monkeypatch.setattr("shutil.which", lambda name: None)
    _check_installation(_Report(out), ROOT / "suites", ROOT / "suites" / "routing.yaml",
                        lambda name: None if name in missing else "1.0")
    lines = out.getvalue().splitlines()
    assert f"  ok    suites package 'suites' importable from {ROOT / 'suites'}" in lines
    assert (f"  info  routing: the installed default {ROOT / 'suites' / 'routing.yaml'} (egi-bench init "
            "writes an editable copy into this folder)") in lines
    assert ("  info  extra [minilm] not installed (missing safetensors): "
            "pip install 'pytest-egi[minilm]'") in lines
    assert "  info  extra [proxy] not installed (missing fastapi): pip install 'pytest-egi[proxy]'" in lines
    assert "  ok    extra [dev] installed" in lines
    browser = [line for line in lines if "browser tests" in line]
    assert len(browser) == 1 and "a Chromium (chromium or chromium-browser on PATH)" in browser[0]


@pytest.mark.parametrize("available", [True, False])
def test_personabench_tells_the_doctor_about_its_weights(monkeypatch, available):
    import suites.personabench.env.weights as weights
    from suites.personabench import SUITE

    monkeypatch.setattr(weights, "minilm_available", lambda: available)
    ((level, text),) = SUITE.doctor_checks()
    if available:
        assert level == "ok"
        assert text == "all-MiniLM-L6-v2 weights and runtime installed (the default retriever)"
    else:
        assert level == "info"
        assert text.startswith("all-MiniLM-L6-v2 weights not installed: a model under test gets the BM25 "
                               "retriever")
        assert weights.INSTALL_HINT in text
