"""The controller-side collector: gathers records, aggregates, writes the run, sets the exit.

Registered only in the controlling process (never on an xdist worker). Records reach it via
``pytest_runtest_logreport`` — the same path with or without ``-n`` — and everything is
computed once, in ``pytest_sessionfinish``, from records sorted by (suite, task, trial), so
``-n 2`` and a serial run give identical numbers.
"""

from __future__ import annotations

import signal
import sys
from typing import Any

import pytest

from pytest_egi.cache.shared import request_stop
from pytest_egi.records import natural_key, read_collected, record_sort_key
from pytest_egi.report.files import RecordsDigest, write_record_files, write_report_files
from pytest_egi.run.interrupt import REASONS
from pytest_egi.run.items import error_status, name_place
from pytest_egi.run.runlog import Journal, read_manifest
from pytest_egi.run.state import RunSettings, case_of, loaded_tasks_of
from pytest_egi.scoring.aggregate import Aggregate, aggregate_run
from pytest_egi.scoring.gate import settle_gate, undecided_reason
from pytest_egi.scoring.verdict import Verdict, judge_gate, judge_run, session_selection, stopped_before_end
from pytest_egi.trajectories import store_for

__all__ = ["CRASH_TEXT", "EARLY_STOP_ERRORS", "EgiSession"]

CRASH_TEXT = (
    "the pytest-xdist worker running this item died without reporting a result (killed by a "
    "signal such as SIGKILL or SIGSEGV, os.abort or os._exit, or pytest-timeout's thread method)"
)
"""The ``error`` of the record of an item whose xdist worker crashed."""
INTERRUPTED_TEXT = "the pytest-xdist worker running this item was interrupted (KeyboardInterrupt)"
"""The ``error`` of the record of an item whose xdist worker got a KeyboardInterrupt."""

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

    Records are not kept in memory while the session runs: an item's record is held from its
    first report until the item ends, then appended to the journal (``journal.jsonl``) and
    dropped; at session end they are read back from the journal (plus, on ``--egi-resume``,
    the run's earlier complete records from its folder). So the controller's memory does not
    grow with the number of items finished.

    Attributes:
        settings: the run settings.
        other_failures: failed reports of non-egi tests in the same session.
        aggregate: set at session end when any record was collected.
        resumed: how many complete records the resumed run already had (0 when not resuming).
        recorded: how many records this session reported (an item reported twice counts once
            per report of a new record; at most the item count).
    """

    def __init__(self, settings: RunSettings, config: pytest.Config,
                 resumed_records: list[dict[str, Any]] | None = None) -> None:
        self.settings = settings
        self.config = config
        # the resumed run's records are read again from its folder at session end
        self.resumed = len(resumed_records or [])
        self.recorded = 0
        self.journal: Journal | None = None
        self._unjournaled: dict[str, tuple[str, str, int]] = {}
        # records of items that reported but have not ended yet (dropped once journaled)
        self._pending: dict[tuple[str, str, int], dict[str, Any]] = {}
        # while nothing has worked yet: the non-skipped records so far, for the early stop
        self._early: dict[tuple[str, str, int], dict[str, Any]] | None = (
            {} if settings.max_error_rate < 1.0 else None
        )
        self._usage: dict[str, Any] | None = None
        self._reports: dict[str, list[pytest.TestReport]] = {}
        self._in_flight: dict[str, dict[str, Any]] = {}
        self._remote_collected: dict[str, Any] | None = None
        self.manifest: dict[str, Any] | None = None
        self.plan: list[str] | None = None
        self._plan_in_manifest: list[str] | None = None
        self.interrupted: str | None = None
        self.other_failures = 0
        self.aggregate: Aggregate | None = None
        self.written: dict[str, str] = {}
        self.exit_reasons: list[str] = []
        self.stopped = False
        # a resumed run's records are all results (passed or failed): something worked
        self.something_worked = bool(self.resumed)
        if self.resumed:
            self._early = None
        self.early_stop: str | None = None
        self.crashes: list[str] = []
        # the failed benchmark items (node ids), and per suite their count, failure kinds and
        # first few reasons (:meth:`_tally_failure`), for the terminal summary
        self._bench_failed: set[str] = set()
        self.failures: dict[str, dict[str, Any]] = {}
        self.items_collected: int | None = None
        self.items_deselected: int | None = None
        self.verdict: Verdict | None = None
        self.empty_shard = False
        # a run file that could not be written (a full disk, a folder turned read-only):
        # {"path", "error", "errno", "reason"} of the first failure; nothing more is written
        self.write_failure: dict[str, Any] | None = None
        self._manifest_status: str | None = None  # the status run.json holds (last written)
        self._stopped_marked: str | None = None  # "" once run.json says stopped, else why not

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Pick the ``("egi", record)`` entry out of each report's user_properties, and append
        the trajectory the report carries (``report.egi_raw``) to this process's store
        (:mod:`pytest_egi.trajectories`), naming its place in the record (``raw_at``), before
        any other plugin sees the report (which then no longer holds it)."""
        raw = getattr(report, "egi_raw", None)
        if raw is not None:
            del report.egi_raw
            if self.write_failure is None:
                try:
                    name_place(report, store_for(self.settings.run_dir, "main").append(raw[1]))
                except OSError as exc:
                    self._write_failed(exc)
        failed = getattr(report, "egi_write_error", None)
        if failed is not None:  # a local xdist worker could not write the trajectory file
            del report.egi_write_error
            self._write_failed(OSError(failed[2], failed[1], failed[0]))
        base = getattr(report, "egi_base", None)
        if base is not None:  # a remote worker's item started (see pytest_handlecrashitem)
            del report.egi_base
            self._in_flight[report.nodeid] = base
        collected = getattr(report, "egi_collected", None)
        if collected is not None:  # a remote worker's collected EGI items (see _collected)
            del report.egi_collected
            self._remote_collected = collected
        found = False
        for name, value in report.user_properties:
            if name == "egi" and isinstance(value, dict):
                key = (value["suite"], value["task_id"], int(value["trial"]))
                if key not in self._pending:
                    self.recorded += 1
                elif "raw_at" not in value and "raw_at" in self._pending[key]:
                    # a later report's copy of the record (a remote worker's teardown): its
                    # trajectory was stored by this process with the first one
                    value["raw_at"] = self._pending[key]["raw_at"]
                self._pending[key] = value
                self._unjournaled[report.nodeid] = key
                if self._early is not None:
                    # a skipped item, or one whose task could not be loaded, says nothing
                    # about whether the provider works
                    if value["status"] == "skipped" or value.get("error_kind") == "task_load":
                        self._early.pop(key, None)
                    else:
                        self._early[key] = value
                found = True
        if found:
            self._reports.setdefault(report.nodeid, []).append(report)
        if found and report.when == "???":  # a crashed worker's item: no logfinish follows
            self.pytest_runtest_logfinish(report.nodeid)
        if report.failed and not found and report.when != "teardown":
            self.other_failures += 1
        if found:
            self._stop_if_nothing_works()
        if self.interrupted:
            self._stop_scheduling(self.interrupted)
        elif self.write_failure is not None:  # (xdist resets its stop when its loop starts)
            self._stop_scheduling(self.write_failure["reason"])

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        """The item ended: append its final record to the run's journal (``journal.jsonl``),
        flushed, so a kill from now on loses nothing of it; then apply an early stop decided
        in ``pytest_runtest_logreport`` (serial runs)."""
        self._in_flight.pop(nodeid, None)
        key = self._unjournaled.pop(nodeid, None)
        if key is not None and key in self._pending:
            record = self._pending.pop(key)
            # after a failed write nothing more is written: the item runs again on resume
            if self.write_failure is None:
                try:
                    if self.journal is None:
                        self._write_manifest("running")
                        self.journal = Journal(self.settings.run_dir)
                    self.journal.append(record)
                except OSError as exc:
                    self._write_failed(exc)
            if record.get("status") == "failed":
                self._tally_failure(record, nodeid)
        for report in self._reports.pop(nodeid, ()):
            # every plugin has seen the item's reports (junitxml wrote the record at teardown);
            # pytest's terminal keeps them to the end, so the record (now in the journal)
            # leaves them: memory must not grow with the number of items. What the short test
            # summary asks of it again (an errored item's ERROR word) stays as one flag.
            if error_status(report) is not None:
                report.egi_error = True
            report.user_properties[:] = [p for p in report.user_properties if p[0] != "egi"]
        reason = self.config.stash.get(_SESSION_STOP_KEY, None)
        if reason and getattr(self, "session", None) is not None:
            self.session.shouldstop = reason

    def interrupt(self, reason: str = REASONS[signal.SIGINT]) -> None:
        """The first Ctrl-C or SIGTERM (``pytest_egi.run.interrupt``; ``reason`` is its stop reason,
        ``interrupted by Ctrl-C`` or ``interrupted by SIGTERM``): finish the items in flight,
        start no other, then end the session as interrupted (exit status 2, ``run.json``
        ``interrupted`` with the reason). Runs in a signal handler."""
        self.interrupted = reason
        sigterm = reason == REASONS[signal.SIGTERM]
        message = (
            f"egi: {'SIGTERM' if sigterm else 'Ctrl-C'}: finishing the items in flight, then stopping; "
            f"every finished item is kept in {self.settings.run_dir} (--egi-resume continues it). "
            + ("Send SIGTERM again to stop at once." if sigterm else "Press Ctrl-C again to stop at once.")
        )
        capman = self.config.pluginmanager.getplugin("capturemanager")
        terminal = self.config.pluginmanager.getplugin("terminalreporter")
        try:  # past an item's output capture, to the terminal
            if capman is not None and terminal is not None:
                with capman.global_and_fixture_disabled():
                    terminal.write_line("")
                    terminal.write_line(message, yellow=True, bold=True)
            else:
                sys.stderr.write(f"\n{message}\n")
        except Exception:  # noqa: BLE001 - a message must never stop the stop
            pass
        self._stop_scheduling(reason)

    def _stop_scheduling(self, reason: str) -> None:
        """Stop the session after the items in flight: serial, pytest's ``shouldstop``; under
        xdist, the controller's (reset when its loop starts, so set again on each report) and
        a stop request each local worker reads after its item."""
        dsession = self.config.pluginmanager.getplugin("dsession")
        if dsession is not None:
            if not getattr(dsession, "shouldstop", None):
                dsession.shouldstop = reason
            if self.settings.shared_dir is not None and not self.stopped:
                request_stop(self.settings.shared_dir, reason)
        elif getattr(self, "session", None) is not None:
            self.session.shouldstop = reason

    def _write_manifest(self, status: str, stop_reason: str | None = None) -> None:
        """Write ``run.json`` (``pytest_egi.run.runlog``) with the run's status and plan, and
        with ``interrupted`` the reason the session stopped before its end (``stop_reason``:
        ``interrupted by Ctrl-C``, ``interrupted by SIGTERM``, ``-x``'s, an early stop's)."""
        from pytest_egi.run.runlog import now_text, write_manifest

        self._manifest_base()
        assert self.manifest is not None
        if self.plan is None:  # xdist: what the workers collected, once they have
            collected = self._collected()
            if collected is not None:
                self.plan = list(collected.get("items") or {})
        if self.plan is not None and self.plan is not self._plan_in_manifest:
            known = self.manifest.get("plan") or []
            self.manifest["plan"] = sorted(set(known).union(self.plan))
            self._plan_in_manifest = self.plan  # merged once (sets of every node id: MBs)
        self.manifest.update(status=status, updated=now_text())
        self.manifest.pop("stop_reason", None)
        if stop_reason:
            self.manifest["stop_reason"] = stop_reason
        write_manifest(self.settings.run_dir, self.manifest)
        self._manifest_status = status

    def _manifest_base(self) -> None:
        """Make :attr:`manifest` (once): this session's options, and on ``--egi-resume`` the
        run's start, its earlier resumes, its plan and where a merged run was merged from."""
        from pytest_egi.run.runlog import manifest_for, now_text

        if self.manifest is None:
            self.manifest = {**manifest_for(self.settings), "started": now_text()}
            if self.settings.resume_from is not None:
                old = read_manifest(self.settings.resume_from)
                self.manifest["started"] = old.get("started") or self.manifest["started"]
                self.manifest["resumed"] = [*old.get("resumed", []), now_text()]
                self.manifest["plan"] = old.get("plan")
                if old.get("merged_from"):  # a merged run, resumed: its provenance stays
                    self.manifest["merged_from"] = old["merged_from"]

    def _write_failed(self, exc: OSError) -> None:
        """A run file could not be written (``exc``: its ``filename`` the file, a full disk's
        ``ENOSPC``, a read-only folder's ``EACCES``...): the first such failure stops the run
        like a Ctrl-C (the items in flight finish, none starts), nothing more is written to
        the run folder, and ``run.json`` is marked ``stopped`` with the reason (when it can
        be written). The session ends with exit status 2 and one line naming the file, the
        error and ``--egi-resume`` (:meth:`write_failure_line`)."""
        if self.write_failure is not None:
            return
        path = exc.filename if exc.filename is not None else self.settings.run_dir
        error = exc.strerror or str(exc) or type(exc).__name__
        reason = f"egi: stopping, cannot write {path} ({error})"
        self.write_failure = {"path": str(path), "error": error, "errno": exc.errno, "reason": reason}
        self._mark_stopped()
        self._stop_scheduling(reason)

    def _mark_stopped(self) -> None:
        """Try to mark ``run.json`` ``stopped`` with the write failure as its stop reason;
        :attr:`_stopped_marked` says whether it worked ("" when it did, else the error)."""
        assert self.write_failure is not None
        try:
            self._write_manifest("stopped", f"cannot write {self.write_failure['path']} "
                                            f"({self.write_failure['error']})")
        except OSError as exc:
            self._stopped_marked = exc.strerror or str(exc)
        else:
            self._stopped_marked = ""

    def write_failure_line(self) -> str | None:
        """The one line a session stopped by a failed write ends with (None when none failed):
        ``egi: the run stopped: cannot write <file> (<error>); every item recorded before is
        kept: free space on that disk, then continue it with --egi-resume <run>``, saying when
        ``run.json`` could not be marked stopped either."""
        failure = self.write_failure
        if failure is None:
            return None
        import errno as errnos

        run_dir = self.settings.run_dir
        if failure["errno"] in (errnos.ENOSPC, errnos.EDQUOT, errnos.EFBIG):
            fix = "free space on that disk"
        elif failure["errno"] in (errnos.EACCES, errnos.EPERM, errnos.EROFS):
            fix = "make the folder writable"
        else:
            fix = "fix that"
        line = f"egi: the run stopped: cannot write {failure['path']} ({failure['error']}); "
        from pytest_egi.run.runlog import MANIFEST_FILE

        if self._manifest_status is None and not (run_dir / MANIFEST_FILE).is_file():
            # no run.json: nothing of the run was recorded, there is nothing to continue
            return line + f"nothing was recorded; {fix}, then start the run again (without --egi-resume)"
        line += f"every item recorded before is kept; {fix}, then continue it with --egi-resume {run_dir}"
        if self._stopped_marked:
            says = f"; it still says {self._manifest_status}" if self._manifest_status else ""
            line += f" (run.json could not be marked stopped either ({self._stopped_marked}){says})"
        return line

    def _collected(self) -> dict[str, Any] | None:
        """xdist: what the workers collected, ``{"items": [node id, ...],
        "deselected": n}``: from the shared directory (``write_collected``), or from a remote
        worker's first setup report (``egi_collected``); None before any worker said."""
        collected = read_collected(self.settings.shared_dir, records=False)
        return collected if collected is not None else self._remote_collected

    def _stop_if_nothing_works(self) -> None:
        """Stop early when nothing has worked yet and either the first EARLY_STOP_ERRORS
        finished items all errored (a dead endpoint), or one errored for a reason no later
        call can escape (a missing API key, an exhausted quota: ``SESSION_FATAL_KINDS``)."""
        if self.stopped or self.something_worked or self._early is None:
            return
        from pytest_egi.models.base import SESSION_FATAL_KINDS

        statuses = [r["status"] for r in self._early.values()]
        if any(s != "error" for s in statuses):
            self.something_worked = True
            self._early = None  # never asked again: hold nothing per item
            return
        last = next((r for r in reversed(list(self._early.values())) if r["status"] == "error"), None)
        if last is None:
            return
        if last.get("error_kind") in SESSION_FATAL_KINDS:
            # a missing key or an exhausted quota: every later call would fail the same way
            reason = f"egi: stopping, {last['error']}"
            self.early_stop = f"a provider failure no later call can escape ({last['error_kind']})"
        elif len(statuses) < EARLY_STOP_ERRORS:
            return
        else:
            reason = (
                f"egi: stopping, the first {len(statuses)} items all errored "
                f"(last: {last['error']}); the remaining items would repeat it"
            )
            self.early_stop = f"the first {len(statuses)} items all errored"
        self.stopped = True
        self._early = None
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

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Count the EGI items collected (a serial run; under xdist the workers collect and
        report them through the shared directory, ``pytest_egi.records.write_collected``)."""
        from pytest_egi.collect.parametrize import deselected_count

        egi_items = [item.nodeid for item in session.items if case_of(item) is not None]
        self.items_collected = len(egi_items)
        self.items_deselected = deselected_count(self.config)
        self.plan = egi_items

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """xdist: the worker running ``crashitem`` died. Its EGI item gets an ``error`` record
        (with the trajectory file when one was written before the crash), which counts toward
        ``--egi-max-error-rate``; the crash is named in the session's reasons.

        The record is built from the item's base record: the one the workers wrote to the
        shared directory after collection (``write_collected``), or, from a worker on another
        host (no shared directory there), the one its setup report carried (``egi_base``).
        An item whose worker died before its setup report keeps xdist's own failure report."""
        node = getattr(report, "node", None)
        worker = getattr(getattr(node, "gateway", None), "id", None) or "?"
        dsession = self.config.pluginmanager.getplugin("dsession")
        stop = str(getattr(dsession, "shouldstop", "") or "")
        interrupted = node is not None and stop == f"{node} received keyboard-interrupt"
        what = "was interrupted (KeyboardInterrupt)" if interrupted else "crashed"
        self.crashes.append(f"worker {worker} {what} running {crashitem}")
        collected = read_collected(self.settings.shared_dir) or {}
        entry = (collected.get("items") or {}).get(crashitem)
        base = entry["record"] if entry is not None else self._in_flight.pop(crashitem, None)
        if base is None:  # not an EGI item: xdist's own failure report stands
            return
        record = dict(base)
        error = INTERRUPTED_TEXT if interrupted else CRASH_TEXT
        record.update(status="error", success=None, error=error)
        report.user_properties = [p for p in report.user_properties if p[0] != "egi"]
        report.user_properties.append(("egi", record))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Aggregate, judge the run, write the run directory, and set the exit status (DESIGN §5).

        Runs first: under xdist every report has arrived when the session finishes, and the
        workers' own shutdown (stopping their servers, ``teardown_nodes``) then overlaps none
        of this work instead of coming before it.

        The journal is closed first; every finished item is in it, so a failure further on
        loses nothing. A session ended by a usage error (a refused ``--egi-resume``, found
        while collecting) ran nothing and leaves the run folder as it was. A run file that
        cannot be written (a full disk, a folder turned read-only), now or earlier in the
        session, stops the run: ``run.json`` says ``stopped`` when it can be written, no other
        file is written, the exit status is 2 (interrupted), and the terminal says so in one
        line (:meth:`_write_failed`); ``--egi-resume`` continues the run once the disk is
        fixed."""
        if self.journal is not None:
            try:
                self.journal.close()
            except OSError as exc:
                self._write_failed(exc)
        if int(exitstatus) == pytest.ExitCode.USAGE_ERROR:
            return
        if self.write_failure is None:
            try:
                self._finish(session, exitstatus)
            except OSError as exc:  # a run file that could not be written at the session's end
                if exc.filename is None:
                    raise  # not a write of ours
                self._write_failed(exc)
        if self.write_failure is not None:  # the run stopped: nothing more is written
            self.aggregate = None
            if self._stopped_marked:  # not marked when it failed: try again (space freed?)
                self._mark_stopped()
            session.exitstatus = pytest.ExitCode.INTERRUPTED

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        """:meth:`pytest_sessionfinish`'s work: the manifest's status (``interrupted`` first,
        ``complete`` once the run's files are written, so a run whose files could not all be
        written never reads complete), the records read back, aggregated, judged and written.

        Raises:
            OSError: a run file could not be written (``filename`` names it).
        """
        stop = self._stop_reason(session, int(exitstatus))
        self.empty_shard = self._is_empty_shard(int(exitstatus), stop)
        if self.empty_shard and self.plan is None:
            self.plan = []
        final = self.journal is not None or self.resumed or self.empty_shard
        if final and stop:
            self._write_manifest("interrupted", stop)
        if not (self.recorded or self.resumed or self.empty_shard) or self.settings.routing is None:
            if final and not stop:
                self._write_manifest("complete")
            return
        s = self.settings
        _release_tasks(session.items)
        records = self._records()
        if not records and not self.empty_shard:
            if final and not stop:
                self._write_manifest("complete")
            return
        collected = self._collected()
        if collected is not None:  # xdist: what the workers collected
            self.items_collected = len(collected.get("items") or {})
            self.items_deselected = int(collected.get("deselected") or 0)
        if self.items_collected is not None:
            self.items_collected += self.resumed
        self._drop_target_not_run()
        if self.config.pluginmanager.getplugin("dsession") is None:
            from pytest_egi.collect.parametrize import DESELECTED_SUITES_KEY

            s.deselected_suites = set(self.config.stash.get(DESELECTED_SUITES_KEY, set()))
            s.collected_suites = {c.suite.name for c in map(case_of, session.items) if c is not None}
        elif collected is not None:  # xdist: the workers' base records name their suites
            items = collected.get("items") or {}
            entries = list(items.values()) if isinstance(items, dict) else []  # (remote: node ids)
            if entries and all(isinstance(e, dict) and "record" in e for e in entries):
                s.collected_suites = {e["record"]["suite"] for e in entries}
        if s.collected_suites is not None:  # (with a resumed run's suites)
            s.collected_suites |= {r["suite"] for r in records}
        stopped = stopped_before_end(items_ran=len(records), items_collected=self.items_collected,
                                     stop_reason=stop)
        # the intervals are drawn further on, once the records have been let go of
        self.aggregate = aggregate_run(records, s, stopped_early=stopped, defer_bootstrap=True,
                                       stop_reason=stop)
        self.verdict = judge_run(
            error_rate=self.aggregate.error_rate,
            max_error_rate=s.max_error_rate,
            items_ran=len(records),
            items_collected=self.items_collected,
            stop_reason=stop,
            selection=session_selection(s.selection, s.shard),
            deselected=self.items_deselected,
        )
        result = self.aggregate.result
        result.gate = judge_gate(result.gate, self.verdict, shard=s.shard, run_dir=s.run_dir)
        if int(exitstatus) == pytest.ExitCode.NO_TESTS_COLLECTED and (self.resumed or self.empty_shard):
            # resumed with every item already complete, or a shard dealt no item: complete
            exitstatus = pytest.ExitCode.OK
        # the files made from the records, and what egi.json and the terminal summary take
        # from them; then the records go, before the bootstrap imports numpy and draws its
        # resamples (the peak memory of a run of many items: records and numpy never coexist)
        write_record_files(s, records)
        digest = RecordsDigest.of(s, records)
        del records
        # the intervals, then the gate (the confident rule judges on them) and the exit status
        settle_gate(self.aggregate, s)
        status = self._exit_status(int(exitstatus))
        if final:
            self._manifest_base()  # (a merged run, resumed: where it was merged from)
        info = {
            "interrupted": bool(self.interrupted),
            "resumed_from": str(s.resume_from) if s.resume_from else None,
            "resumed_items": self.resumed,
            "merged_from": (self.manifest or {}).get("merged_from"),
            "shard": list(s.shard) if s.shard else None,
            "exit_status": status,
            "reasons": list(self.exit_reasons) + list(self.crashes),
            "crashes": list(self.crashes),
            "items_collected": self.verdict.items_collected,
            "items_ran": self.verdict.items_ran,
            "items_deselected": self.items_deselected,
            "stop_reason": self.verdict.stop_reason,
        }
        self.written = write_report_files(s, self.aggregate, digest, session_info=info, verdict=self.verdict)
        if final and not stop:
            self._write_manifest("complete")
        self._usage = digest.usage  # for the terminal summary, then dropped
        session.exitstatus = status

    def _drop_target_not_run(self) -> None:
        """``--egi-target-ci`` reached its target: the items it did not run count as deselected,
        and leave the run's plan (``run.json``), so the run is a complete subset."""
        target = self.config.pluginmanager.get_plugin("egi-target-ci")
        if target is None:
            return
        self.settings.target_ci = target.summary()
        if not target.not_run:  # every selected task ran: the run is the whole selection
            self.settings.selection.pop("--egi-target-ci", None)
            return
        gone = set(target.not_run)
        if self.items_collected is not None:
            self.items_collected -= len(gone)
        self.items_deselected = (self.items_deselected or 0) + len(gone)
        if self.plan is not None:
            self.plan = [nodeid for nodeid in self.plan if nodeid not in gone]
        if self.manifest is not None and self.manifest.get("plan"):
            self.manifest["plan"] = [nodeid for nodeid in self.manifest["plan"] if nodeid not in gone]
            self._plan_in_manifest = self.plan

    def _is_empty_shard(self, exitstatus: int, stop: str | None) -> bool:
        """A shard (``--egi-shard K/N``) that was dealt no EGI item (more shards than selected
        items) and ended normally: it is a complete shard with an empty plan, so it writes
        its folder (run.json complete, an empty records.jsonl, egi.json) for
        ``egi-bench report --merge``, and exits 0 rather than pytest's 5."""
        if not self.settings.shard or self.recorded or self.resumed or stop or self.interrupted:
            return False
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            return True
        collected = self._collected()
        count = len(collected.get("items") or {}) if collected is not None else self.items_collected
        return exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) and count == 0

    def _records(self) -> list[dict[str, Any]]:
        """Every record of the run, read back at session end, one per (suite, task, trial),
        sorted: the resumed run's complete records (``--egi-resume``), then this session's
        journal lines (a later one for the same item wins), then the records of items that
        reported but never ended (an interrupted item: not in the journal)."""
        from pytest_egi.run.runlog import read_journal, run_records

        by_key: dict[tuple[str, str, int], dict[str, Any]] = {}
        if self.resumed:
            assert self.settings.resume_from is not None
            # the run as it was before this session appended (records.jsonl is rewritten
            # only after this is read)
            before = self.journal.start if self.journal is not None else None
            for rec in run_records(self.settings.resume_from, journal_end=before):
                key = record_sort_key(rec)
                if key in self.settings.resumed:  # the items this session did not run again
                    by_key[key] = rec
        if self.journal is not None:
            for rec in read_journal(self.journal.path, start=self.journal.start):
                by_key[record_sort_key(rec)] = rec
        for key, rec in self._pending.items():
            by_key[key] = rec
        return [by_key[k] for k in sorted(by_key)]

    def _stop_reason(self, session: pytest.Session, exitstatus: int) -> str | None:
        """Why the session stopped before its end, or None: our early stop, ``-x`` /
        ``--maxfail`` (pytest's or xdist's ``shouldfail`` / ``shouldstop``), Ctrl-C."""
        if self.early_stop:
            return self.early_stop
        dsession = self.config.pluginmanager.getplugin("dsession")
        for value in (getattr(dsession, "shouldstop", None), session.shouldfail, session.shouldstop):
            if value:
                return value if isinstance(value, str) else "stopped"
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            return "KeyboardInterrupt"
        return None

    def _exit_status(self, exitstatus: int) -> int:
        """The session's exit status; appends why it fails to ``exit_reasons``. A breached floor
        fails it only when the gate is judged (not on a shard, nor on a run whose verdict is
        flagged: :func:`pytest_egi.scoring.verdict.gate_not_judged_reason`)."""
        agg, verdict = self.aggregate, self.verdict
        assert agg is not None and verdict is not None
        gate = agg.result.gate
        above = floors_above_ceilings(agg, self.settings.floors)
        if above:  # the floor itself is wrong: that, not a breach of it, is the reason
            self.exit_reasons += above
            return int(pytest.ExitCode.USAGE_ERROR)
        if gate.judged and gate.breached:
            self.exit_reasons.append(
                "release floor breached: "
                + ", ".join(
                    f"{b} {agg.result.buckets[b].value:.1f} < {self.settings.floors[b]:g}"
                    for b in gate.breached
                )
            )
        undecided = undecided_reason(agg)
        if gate.judged and undecided:
            self.exit_reasons.append(undecided)
        for flag, reason in zip(verdict.flags, verdict.reasons, strict=True):
            if flag == "INVALID":
                self.exit_reasons.append(reason)
            elif not self.stopped:  # our early stop already said why it stopped
                self.exit_reasons.append(f"{flag.lower()}: {reason}")
        if exitstatus in _KEEP_STATUS and not self.stopped:
            return exitstatus
        if self.exit_reasons:
            return int(pytest.ExitCode.TESTS_FAILED)
        if self.settings.strict or self.other_failures:
            return exitstatus
        return int(pytest.ExitCode.OK)

    def _compact(self, terminalreporter: Any) -> bool:
        """At default verbosity (no ``-v``, no ``-rA``) the failed benchmark items are counted
        per suite in the EGI summary (:func:`pytest_egi.report.terminal.failure_lines`) instead
        of one ``FAILURES`` entry and one short-summary line each."""
        reportchars = str(getattr(self.config.option, "reportchars", "") or "")
        return int(self.config.getoption("verbose", 0) or 0) <= 0 and "A" not in reportchars

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        """The outermost wrapper of the terminal summary: pytest's reporter prints its
        ``FAILURES`` sections before the other plugins' summaries and its short test summary
        after them (in its own wrapper's ``finally``); this prints the EGI summary after all
        of that, so the verdict is the last thing before pytest's closing line
        (:meth:`write_summary`). At default verbosity the failed benchmark items are left out
        of pytest's two lists for that while (non-benchmark tests keep theirs) and put back
        before pytest counts them for its closing line."""
        tr = terminalreporter
        failed = tr.stats.get("failed")
        if failed and self._bench_failed and self._compact(tr):
            tr.stats["failed"] = [r for r in failed if getattr(r, "nodeid", None) not in self._bench_failed]
        try:
            return (yield)
        finally:
            if failed is not None:
                tr.stats["failed"] = failed
            self.write_summary(tr)

    def _tally_failure(self, record: dict[str, Any], nodeid: str) -> None:
        """Count a failed benchmark item for the summary: per suite, its ``failure_kind``
        (when the suite's scorer set one) and, for the first few by task id, its one-line
        reason (the failed report's text)."""
        self._bench_failed.add(nodeid)
        tally = self.failures.setdefault(record["suite"], {"count": 0, "kinds": {}, "examples": []})
        tally["count"] += 1
        kind = record.get("failure_kind")
        if kind:
            tally["kinds"][kind] = tally["kinds"].get(kind, 0) + 1
        reason = ""
        for report in self._reports.get(nodeid, ()):
            if report.failed and report.longrepr is not None:
                reason = str(report.longrepr).strip().splitlines()[-1] if str(report.longrepr).strip() else ""
        # the reason starts "<task> [<category>] <kind>: expected ...": the task is the label
        head = f"{record['task_id']} [{record.get('category')}]"
        for lead in (f"{head}: ", f"{head} ", f"{record['task_id']}: "):
            reason = reason.removeprefix(lead)
        examples = tally["examples"]
        key = (record["task_id"], int(record.get("trial", 1)))
        label = record["task_id"] if int(record.get("trials", 1) or 1) <= 1 else f"{key[0]} (trial {key[1]})"
        examples.append((key, label, reason))
        examples.sort(key=lambda e: (natural_key(e[0][0]), e[0][1]))
        del examples[_EXAMPLES:]

    def write_summary(self, terminalreporter: Any) -> None:
        """Print the EGI summary: the failed benchmark items per suite, the suites' lines and
        the missing sub-metrics (with ``-v`` the sub-metric tables and the buckets'
        contributors), then the verdict — EGI with its interval, M1-M6, the gate with its
        reason, why the session fails, the run folder — last; after a failed write, the one
        line saying so (:meth:`write_failure_line`) instead."""
        from pytest_egi.report.terminal import detail_lines, failure_lines, verdict_lines

        line = self.write_failure_line()
        if line is not None:
            terminalreporter.write_line(line, red=True, bold=True)
            return
        if self.aggregate is None:
            return
        tr = terminalreporter
        width = int(getattr(getattr(tr, "_tw", None), "fullwidth", 0) or 80)
        if self.empty_shard:  # nothing to score: the table would be all dashes
            tr.write_sep("=", "EGI summary", bold=True)
            k, n = self.settings.shard
            tr.write_line(f"egi: shard {k}/{n} of run {self.settings.run_id} had no items to run (fewer "
                          f"selected items than shards); it is complete with an empty plan, and "
                          f"egi-bench report --merge takes it with the others", yellow=True, bold=True)
            tr.write_line(f"egi report: {self.written.get('run_dir')}")
            return
        compact = self._compact(tr)
        failures = {suite: {**f, "examples": [(label, reason) for _key, label, reason in f["examples"]]}
                    for suite, f in self.failures.items()}
        details = failure_lines(failures, all_shown=not compact, width=width)
        # (the suites' failure kinds are in the failed items' lines above)
        details += detail_lines(self.settings, self.aggregate, None, usage=self._usage, verbose=not compact,
                                width=width, kinds=not failures)
        self._usage = None
        tr.write_sep("-", "EGI suites")
        for text in details:
            tr.write_line(text)
        tr.write_sep("=", "EGI summary", bold=True)
        lines = verdict_lines(self.settings, self.aggregate, self.verdict, width)
        flagged = bool(self.verdict and self.verdict.flags)
        subset = bool(self.verdict and self.verdict.subset)
        tr.write_line(lines[0], red=flagged, yellow=not flagged and subset, bold=True)
        for text in lines[1:]:
            tr.write_line(text, yellow=text.startswith("release gate: NOT JUDGED"))
        for crash in self.crashes:
            tr.write_line(f"egi: {crash} (an error record; it counts toward --egi-max-error-rate)", red=True)
        for reason in self.exit_reasons:
            tr.write_line(f"session fails: {reason}", red=True, bold=True)
        if self.settings.target_ci is not None:  # --egi-target-ci: what ended the run
            tr.write_line(self.settings.target_ci["line"], bold=True)
        tr.write_line(f"egi report: {self.written.get('run_dir')}")


_EXAMPLES = 3
"""Failed benchmark items listed per suite at default verbosity (the first by task id)."""


def floors_above_ceilings(agg: Aggregate, floors: dict[str, float]) -> list[str]:
    """A usage error per floored bucket whose floor is above its ceiling on this run's tasks
    (``BucketResult.ceiling``: no agent could pass it), naming the bucket, floor and ceiling."""
    out = []
    for b, floor in floors.items():
        ceiling = agg.result.buckets[b].ceiling
        if ceiling is not None and floor > ceiling + 1e-9:
            out.append(f"usage error: the floor of {b} ({floor:g}) is above its ceiling ({ceiling:.1f}): "
                       f"the most {b}'s routed sub-metrics allow on this run's tasks, so no agent can "
                       f"pass it; set a floor at or below {ceiling:.1f} (--egi-floor {b}=..., or "
                       "routing.yaml)")
    return out


def _release_tasks(items: list[pytest.Item]) -> None:
    """Let go of the Task objects of the items' suites (``LoadedTasks.release``), once every
    item has run: the records read back for aggregation reuse that memory."""
    for tasks in loaded_tasks_of(items):
        tasks.release()
