"""The optional ``Suite.extra_files`` hook: suite-specific files in the run folder."""

from __future__ import annotations

import json
import sys
import types

import pytest

from pytest_egi.report.files import _write_suite_files


class _Suite:
    def __init__(self, files):
        self.files = files
        self.seen = None

    def extra_files(self, records):
        self.seen = [r["task_id"] for r in records]
        return self.files


@pytest.fixture
def fake_suite(monkeypatch):
    def make(files):
        module = types.ModuleType("fake_extra_suite")
        module.SUITE = _Suite(files)
        monkeypatch.setitem(sys.modules, "fake_extra_suite", module)
        return module.SUITE

    return make


def _records():
    base = {"suite": "fake", "suite_module": "fake_extra_suite"}
    return [{**base, "task_id": "a", "status": "passed"}, {**base, "task_id": "b", "status": "error"},
            {**base, "task_id": "c", "status": "failed"}]  # fmt: skip


def test_extra_files_are_written_under_the_suite_folder_from_scored_records(tmp_path, fake_suite):
    suite = fake_suite({"x_summary.json": {"n": 2}, "sub/y.json": [1]})
    _write_suite_files(tmp_path, _records())
    assert suite.seen == ["a", "c"]  # the errored record is not scored
    assert json.loads((tmp_path / "fake" / "x_summary.json").read_text()) == {"n": 2}
    assert json.loads((tmp_path / "fake" / "sub" / "y.json").read_text()) == [1]


def test_an_extra_file_leaving_the_suite_folder_is_refused(tmp_path, fake_suite):
    fake_suite({"../escape.json": {}})
    with pytest.raises(ValueError, match=r"suite fake: extra file path '../escape.json' leaves the run"):
        _write_suite_files(tmp_path, _records())
    assert not (tmp_path / "escape.json").exists()
