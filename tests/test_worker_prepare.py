"""A suite's ``prepare`` on xdist workers: each worker builds only the worlds of the suites it
runs items of, just before the first of them.

The subprocess runs import ``pytest_egi`` from ``PYTHONPATH`` (else the installed copy).
"""

from __future__ import annotations

import pytest

PREPARE_LOG = """

import os as _os


def _prepare(self, tasks, options):
    if options.fail_env:
        raise ValueError("tasks.json: field 'gold' is missing (rebuild the file)")
    with open("prepared.txt", "a") as fh:
        fh.write(f"{_os.getpid()} " + " ".join(sorted(t.id for t in tasks)) + "\\n")


ToySuite.prepare = _prepare
"""


def _with_prepare(pytester: pytest.Pytester) -> None:
    init = pytester.path / "toysuites" / "toy" / "__init__.py"
    init.write_text(init.read_text() + PREPARE_LOG)


def _prepared(pytester: pytest.Pytester) -> list[str]:
    path = pytester.path / "prepared.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_a_worker_given_no_item_of_a_suite_does_not_prepare_it(toy_project):
    """One selected item, two workers: only the worker that runs it builds the suite's world
    (before: both workers did, each at the end of its collection)."""
    _with_prepare(toy_project)
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache",
        "-n", "2", "-k", "alpha-0")
    result.assert_outcomes(passed=1)
    prepared = _prepared(toy_project)
    assert len(prepared) == 1
    assert prepared[0].split(" ", 1)[1] == "alpha-0"  # the selected tasks, as in a serial session


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_each_process_prepares_a_suite_once_before_its_items(toy_project, workers):
    """Six items: a serial session prepares once; each worker that runs items prepares once,
    however many of the suite's items it runs."""
    _with_prepare(toy_project)
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache", *workers)
    result.assert_outcomes(passed=6)
    pids = [line.split(" ", 1)[0] for line in _prepared(toy_project)]
    assert len(pids) == len(set(pids))
    assert 1 <= len(pids) <= (2 if workers else 1)


def test_a_refused_prepare_is_a_usage_error_naming_the_suite(toy_project):
    """Serial: before any item runs (exit status 4). Under xdist the worker's error still ends
    the session as an internal error (exit status 3), as it did when workers prepared at the
    end of their collection."""
    _with_prepare(toy_project)
    result = toy_project.runpytest_subprocess(
        "toysuites", "--egi-model", "egi/oracle", "--egi-bootstrap", "0", "--egi-no-cache",
        "--egi-opt", "toy.fail_env=true")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*toy: tasks.json: field 'gold' is missing (rebuild the file) "
                                 "(from --egi-opt toy.fail_env=true)*"])
    assert _prepared(toy_project) == []
