"""With ``--junitxml``, each benchmark item's ``egi`` property is its record as JSON, and the
test suite's properties carry the run's EGI, its interval, the six buckets and the gate."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pytest_egi.records import split_timing

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("extra", [[], ["-n", "2"]], ids=["serial", "n2"])
def test_egi_property_is_the_record_as_json(toy_project, extra, monkeypatch):
    # the subprocess imports this checkout's pytest_egi (pytester puts only its folder first)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    xml = toy_project.path / "junit.xml"
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/noisy-0.5", "--egi-bootstrap", "0", f"--junitxml={xml}",
        "-p", "no:cacheprovider", *extra,
    )
    assert result.ret in (0, 1), result.stdout.str()
    (run,) = (toy_project.path / "reports").iterdir()
    written = {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}
    found = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        values = [p.get("value") for p in case.iter("property") if p.get("name") == "egi"]
        assert len(values) == 1, case.get("name")
        record = json.loads(values[0])
        found[record["task_id"]] = record
        assert split_timing(record)[0] == written[record["task_id"]]
    assert sorted(found) == sorted(written) and len(found) == 6
    assert {r["status"] for r in found.values()} == {"passed", "failed"}
    _assert_suite_properties(ET.parse(xml).getroot(), json.loads((run / "egi.json").read_text()))


def _value(text: str) -> object:
    """A suite property's value: JSON, or a text as it is."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _assert_suite_properties(root: ET.Element, egi: dict) -> None:
    """The ``<testsuite><properties>`` hold egi.json's EGI, buckets and gate: texts as they are,
    anything else as JSON."""
    (suite,) = root.iter("testsuite")
    raw = {p.get("name"): p.get("value") for p in suite.find("properties").iter("property")}
    assert raw["egi_gate"] == "NOT READY" and raw["egi_status"] == "valid"  # as a CI tool compares them
    props = {name: _value(value) for name, value in raw.items()}
    # the toy routing measures M1 and M4 only: a partial figure, no full EGI
    assert props["egi"] is None and egi["egi"]["value"] is None
    assert props["egi_partial_value"] == egi["egi"]["partial_value"] is not None
    assert props["egi_covered_buckets"] == ["M1", "M4"]
    assert props["egi_status"] == "valid"
    for bucket in ("M1", "M2", "M3", "M4", "M5", "M6"):
        assert props[f"egi_{bucket}"] == egi["buckets"][bucket]["value"]
    assert props["egi_M1"] is not None and props["egi_M2"] is None
    # M2 and M5 carry floors and are not measured: NOT READY
    assert props["egi_gate"] == "NOT READY" == egi["gate"]["verdict"]
    assert props["egi_gate_release_ready"] is False
    assert props["egi_gate_unmeasured"] == ["M2", "M5"]
    assert props["egi_gate_reason"] == egi["gate"]["reason"]
    assert props["egi_run_id"] == egi["run_id"]


def test_suite_properties_without_an_egi_item_are_absent(toy_project, monkeypatch):
    """A junit run with a model but no EGI item writes no egi.json, hence no egi suite property."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    toy_project.makepyfile(test_plain="def test_plain():\n    assert True\n")
    xml = toy_project.path / "junit.xml"
    result = toy_project.runpytest_subprocess(
        "test_plain.py", "--egi-model", "egi/oracle", f"--junitxml={xml}", "-p", "no:cacheprovider")
    assert result.ret == 0, result.stdout.str()
    (suite,) = ET.parse(xml).getroot().iter("testsuite")
    assert suite.get("tests") == "1" and suite.find("properties") is None
