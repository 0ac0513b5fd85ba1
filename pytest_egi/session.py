"""The controller-side collector: gathers records, aggregates, writes the run, sets the exit.

Registered only in the controlling process (never on an xdist worker). Records reach it via
``pytest_runtest_logreport`` — the same path with or without ``-n`` — and everything is
computed once, in ``pytest_sessionfinish``, from records sorted by (suite, task, trial), so
``-n 2`` and a serial run give identical numbers.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_egi.aggregate import Aggregate, aggregate
from pytest_egi.report.files import write_run
from pytest_egi.report.terminal import summary_lines
from pytest_egi.shared import request_stop
from pytest_egi.state import RunSettings

__all__ = ["EARLY_STOP_ERRORS", "EgiSession"]

EARLY_STOP_ERRORS = 5
"""Finished items that must all have errored, with nothing scored, to stop the session."""
_SESSION_STOP_KEY = pytest.StashKey[str]()

_KEEP_STATUS = (
    pytest.ExitCode.INTERRUPTED,
    pytest.ExitCode.INTERNAL_ERROR,
    pytest.ExitCode.USAGE_ERROR,
    pytest.ExitCode.NO_TESTS_COLLECTED,
)


class EgiSession:
    """Collects egi records during the session and reports at its end.

    Attributes:
        settings: the run settings.
        records: by (suite, task_id, trial); the last report of an item wins.
        other_failures: failed reports of non-egi tests in the same session.
        aggregate: set at session end when any record was collected.
    """

    def __init__(self, settings: RunSettings, config: pytest.Config) -> None:
        self.settings = settings
        self.config = config
        self.records: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.other_failures = 0
        self.aggregate: Aggregate | None = None
        self.written: dict[str, str] = {}
        self.exit_reasons: list[str] = []
        self.stopped = False
        self.something_worked = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Pick the ``("egi", record)`` entry out of each report's user_properties."""
        found = False
        for name, value in report.user_properties:
            if name == "egi" and isinstance(value, dict):
                self.records[(value["suite"], value["task_id"], int(value["trial"]))] = value
                found = True
        if report.failed and not found and report.when != "teardown":
            self.other_failures += 1
        if found:
            self._stop_if_nothing_works()

    def _stop_if_nothing_works(self) -> None:
        """Stop early when the first EARLY_STOP_ERRORS finished items all errored (a dead
        endpoint or a missing key): the remaining items would only repeat the error."""
        if self.stopped or self.something_worked or self.settings.max_error_rate >= 1.0:
            return
        statuses = [r["status"] for r in self.records.values() if r["status"] != "skipped"]
        if any(s != "error" for s in statuses):
            self.something_worked = True
            return
        if len(statuses) < EARLY_STOP_ERRORS:
            return
        last = next(r for r in reversed(list(self.records.values())) if r["status"] == "error")
        reason = (
            f"egi: stopping, the first {len(statuses)} items all errored "
            f"(last: {last['error']}); the remaining items would repeat it"
        )
        self.stopped = True
        self.exit_reasons.append(reason)
        dsession = self.config.pluginmanager.getplugin("dsession")
        if dsession is not None:
            dsession.shouldstop = reason
            if self.settings.shared_dir is not None:  # workers stop after their current item
                request_stop(self.settings.shared_dir, reason)
        else:
            self.config.stash[_SESSION_STOP_KEY] = reason

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Keep the session, to stop it early in serial runs."""
        self.session = session

    def pytest_runtest_logfinish(self) -> None:
        """Apply an early stop decided in ``pytest_runtest_logreport`` (serial runs)."""
        reason = self.config.stash.get(_SESSION_STOP_KEY, None)
        if reason and getattr(self, "session", None) is not None:
            self.session.shouldstop = reason

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Aggregate, write the run directory, and set the exit status (DESIGN §5)."""
        if not self.records or self.settings.routing is None:
            return
        s = self.settings
        records = list(self.records.values())
        self.aggregate = aggregate(
            records,
            s.routing,
            weights=s.weights,
            floors=s.floors,
            bootstrap_resamples=s.bootstrap,
            seed=s.seed if s.seed is not None else s.routing.modes[s.mode].seed,  # type: ignore[index]
        )
        status = self._exit_status(int(exitstatus))
        info = {"exit_status": status, "reasons": list(self.exit_reasons)}
        self.written = write_run(s, records, self.aggregate, self.config, session_info=info)
        session.exitstatus = status

    def _exit_status(self, exitstatus: int) -> int:
        agg = self.aggregate
        assert agg is not None
        if exitstatus in _KEEP_STATUS and not self.stopped:
            return exitstatus
        breached = agg.result.gate.breached
        if breached:
            self.exit_reasons.append(
                "release floor breached: "
                + ", ".join(
                    f"{b} {agg.result.buckets[b].value:.1f} < {self.settings.floors[b]:g}" for b in breached
                )
            )
        if agg.error_rate > self.settings.max_error_rate:
            self.exit_reasons.append(
                f"errored items {agg.error_rate:.1%} above --egi-max-error-rate "
                f"{self.settings.max_error_rate:.1%}"
            )
        if self.exit_reasons:
            return int(pytest.ExitCode.TESTS_FAILED)
        if self.settings.strict or self.other_failures:
            return exitstatus
        return int(pytest.ExitCode.OK)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """Print the EGI table, the gate line, sub-metrics, and where the report went."""
        if self.aggregate is None:
            return
        tr = terminalreporter
        tr.write_sep("=", "EGI summary", bold=True)
        for line in summary_lines(self.settings, self.aggregate, list(self.records.values())):
            tr.write_line(line)
        for reason in self.exit_reasons:
            tr.write_line(f"session fails: {reason}", red=True, bold=True)
        tr.write_line(f"egi report: {self.written.get('run_dir')}")
