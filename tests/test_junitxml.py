"""With ``--junitxml``, each benchmark item's ``egi`` property is its record as JSON."""

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
