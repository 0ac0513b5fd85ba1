"""What a benchmark suite provides to the plugin core.

A suite is one folder ``suites/<name>/`` whose ``__init__.py`` exposes ``SUITE``, an object
satisfying :class:`Suite`. The core never names a suite: it finds ``SUITE`` through the test
module's package (and imports it by module path on the xdist controller).

One task the suite cannot run never takes the others down (DESIGN §9.3). The core's one
mechanism for it:

- :class:`CannotRun` (``raise CannotRun(reason)``), or a :class:`Task` built with
  ``cannot_run=reason``: the item is **skipped** with ``cannot run: <reason>``. Raised while
  loading (inside :func:`load_each`), by ``reference_policy`` (an offline policy that cannot
  play the task), by ``prepare`` (every item of the suite), or by the item's own code.
- :func:`load_each`: builds the tasks of a file entry by entry; an exception while building
  one entry becomes a task that **errors alone** (``Task.load_error``: the file, the task and
  the exception), never a crashed collection. A task id the core cannot use is refused for
  the whole run (:class:`TaskIdError`, a usage error naming the file and the fix).
- Whatever the core calls per task before the item runs (unpickling the task, the suite's
  ``reference_policy``, a failed ``prepare``) is reported on that item, not as a crash.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.models.offline import Noise, ReferencePolicy

__all__ = [
    "TASK_ID_PATTERN",
    "CannotRun",
    "Suite",
    "SuiteProfile",
    "SummaryColumns",
    "Task",
    "TaskIdError",
    "TaskLoadError",
    "TaskScore",
    "load_each",
    "load_suite",
    "profile_categories",
    "suite_options",
    "values_by_category",
]

TASK_ID_PATTERN = r"^[A-Za-z0-9_.:-]+$"
"""What a task id may hold: it names the pytest item (``[<id>]``) and the trajectory file
(``raw/<suite>/<id>.json``), so no ``/``, space or other character a path or a node id
cannot carry."""

_TASK_ID = re.compile(TASK_ID_PATTERN)


class TaskIdError(ValueError):
    """A task id the core cannot use (it does not match :data:`TASK_ID_PATTERN`).

    A usage error (exit 4) for the whole run: the id comes from the user's data, which must be
    fixed. The message names the file (when known), the id, the allowed characters and the
    fix.

    Attributes:
        task_id: the refused id.
        file: the file the task came from, or None when the suite did not say.
    """

    def __init__(self, task_id: Any, file: str | os.PathLike[str] | None = None) -> None:
        self.task_id = task_id
        self.file = None if file is None else str(file)
        where = f"{self.file}: " if self.file else ""
        safe = re.sub(r"[^A-Za-z0-9_.:-]+", "_", str(task_id)).strip("_.") or "task-1"
        super().__init__(
            f"{where}task id {task_id!r} is not allowed: a task id may hold only letters, digits "
            f"and _ . : - (pattern {TASK_ID_PATTERN}), since it names the pytest item and the "
            f"trajectory file; fix: give the task an id of those characters (e.g. {safe!r})")


class TaskLoadError(Exception):
    """One task could not be loaded or prepared (``Task.load_error``, a failed ``prepare``):
    its item errors, alone, with this message (the file, the task and the exception); it is
    never scored. Its record's ``error_kind`` is ``task_load`` (:attr:`kind`): such errors say
    nothing about the provider, so they never count toward stopping a session whose first
    items all errored.

    Attributes:
        hint: the message from its last ``fix:`` (any case) to the end, when it has one: the
            one-line failure reason is cut around it, never through it
            (:func:`pytest_egi.run.recorder.shorten`), so a long file path costs the middle of
            the message, not the suite's fix.
    """

    one_line_report = True
    kind = "task_load"

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        at = message.lower().rfind("fix:")
        self.hint: str | None = message[at:] if at >= 0 else None


class CannotRun(Exception):  # noqa: N818 - read as a statement: raise CannotRun(reason)
    """The suite cannot run this task (or an offline policy cannot play it): the core skips
    the item with ``cannot run: <reason>``.

    Raise it while building a task inside :func:`load_each`, from ``reference_policy``, from
    ``prepare`` (every item of the suite is skipped) or from the item's own code. Not for bad
    data the user must fix (that is a ``ValueError``: a usage error) nor for a fault of the
    environment (an error).

    Attributes:
        reason: why, in one line (``"its gold actions need the table 'wards', absent from
            the data files"``).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def task_id_problem(task_id: Any) -> str | None:
    """None when ``task_id`` is a usable task id (:data:`TASK_ID_PATTERN`), else the problem."""
    if isinstance(task_id, str) and _TASK_ID.match(task_id):
        return None
    return str(TaskIdError(task_id))


class Task(BaseModel):
    """One benchmark item.

    The pytest node id ends in ``[<id>]`` (or ``[<id>-t<k>]`` with several trials).

    Raises:
        TaskIdError: ``id`` does not match :data:`TASK_ID_PATTERN` (a usage error naming the
            id, the allowed characters and the fix; :func:`load_each` adds the file).
    """

    # validators built on the first Task made in the process: a warm collection makes none
    # (pytest_egi.cache.taskcache.LoadedTasks), and unpickling one needs none
    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str = Field(pattern=TASK_ID_PATTERN)
    """Unique within the suite; used in node ids and raw file names."""
    category: str
    """The benchmark's own grouping (CRMArena task type, MCPEval domain, ...)."""
    data: dict[str, Any]
    """The task in the benchmark's native record format (JSON-safe)."""
    cannot_run: str | None = None
    """Why the suite cannot run this task (the core skips its items with ``cannot run:
    <reason>``), or None. The task is still listed, so the report says what was left out."""
    load_error: str | None = None
    """Why this task could not be loaded (:func:`load_each`: the file, the task and the
    exception), or None. Its items error alone with this text; its ``data`` is empty."""

    def __init__(self, /, **data: Any) -> None:
        task_id = data.get("id")
        if isinstance(task_id, str) and not _TASK_ID.match(task_id):
            raise TaskIdError(task_id)
        super().__init__(**data)

    @property
    def runnable(self) -> bool:
        """True when the core runs this task's items (no ``cannot_run``, no ``load_error``):
        the tasks handed to ``prepare``, ``constant_answer_check`` and ``data_warnings``."""
        return self.cannot_run is None and self.load_error is None


E = TypeVar("E")


def _entry_id(entry: Any, index: int, task_id: Callable[[Any, int], str] | None,
              file: str | None) -> str:
    """The id of a placeholder task for an entry that failed to build."""
    candidate: Any = None
    if task_id is not None:
        try:
            candidate = task_id(entry, index)
        except Exception:  # noqa: BLE001 - the entry is broken; fall back to its position
            candidate = None
    elif isinstance(entry, Mapping):
        candidate = entry.get("id")
    if candidate is not None and task_id_problem(str(candidate)) is None:
        return str(candidate)
    stem = re.sub(r"[^A-Za-z0-9_.:-]+", "_", os.path.basename(file or "")).strip("_.") or "entry"
    return f"{stem}-{index + 1}"


def load_each(
    entries: Iterable[E],
    build: Callable[[E], Task | Sequence[Task] | None],
    *,
    category: str | Callable[[E], str],
    file: str | os.PathLike[str] | Callable[[E], str] | None = None,
    task_id: Callable[[E, int], str] | None = None,
    fallback_category: str = "unknown",
) -> list[Task]:
    """Build a suite's tasks entry by entry, so that one bad entry never takes the others down.

    For each entry (a row of a task file, one task file of a folder, ...), ``build(entry)``
    returns its task(s), or None to leave it out. Then:

    - :class:`CannotRun` from ``build``: a task with ``cannot_run`` set (skipped, with the
      reason);
    - :class:`TaskIdError` from ``build``: re-raised with ``file`` named: a task id the core
      cannot use is a usage error for the whole run (the user's data must be fixed);
    - any other exception: a task with ``load_error`` set, naming the file, the task and the
      exception: its items error alone, the other tasks run.

    A placeholder task's id is ``task_id(entry, index)``, else the entry's ``"id"`` (a
    mapping), else ``<file name>-<n>`` (1-based); its category is ``category`` (or
    ``category(entry)``; ``fallback_category`` when that raises too); its ``data`` is empty.

    Args:
        entries: the entries, in file order.
        build: entry -> Task, a sequence of Tasks, or None.
        category: the category of every entry, or entry -> category.
        file: the file the entries came from (named in every message), or entry -> its file.
        task_id: (entry, 0-based index) -> the task id, for placeholders.
        fallback_category: the category of a placeholder whose ``category(entry)`` raised.

    Returns:
        The tasks in entry order.

    Raises:
        TaskIdError: an entry's task id does not match :data:`TASK_ID_PATTERN`.
    """
    out: list[Task] = []
    for index, entry in enumerate(entries):
        where = file(entry) if callable(file) else (None if file is None else str(file))
        try:
            built = build(entry)
        except TaskIdError as exc:
            raise TaskIdError(exc.task_id, exc.file or where) from None
        except Exception as exc:  # noqa: BLE001 - one entry: that task errors alone
            tid = _entry_id(entry, index, task_id, where)
            try:
                cat = category(entry) if callable(category) else category
            except Exception:  # noqa: BLE001
                cat = fallback_category
            if isinstance(exc, CannotRun):
                out.append(Task(id=tid, category=str(cat), data={}, cannot_run=exc.reason))
            else:
                prefix = f"{where}: " if where else ""
                out.append(Task(id=tid, category=str(cat), data={}, load_error=(
                    f"{prefix}task {tid!r} could not be loaded: {type(exc).__name__}: {exc} "
                    "(this task errors alone; fix the entry or leave it out)")))
            continue
        if built is None:
            continue
        out.extend([built] if isinstance(built, Task) else built)
    return out


class SuiteProfile(BaseModel):
    """How much of a suite a mode runs; one entry of ``routing.yaml`` ``modes.<mode>.suites``.

    Suite-specific keys (e.g. ``noise_levels``, ``max_turns``) are kept as extra fields and
    read by the suite.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    seed: int = 42
    """Seed for world generation and sampling."""
    categories: list[str] | None = None
    """Categories to run; None runs all."""
    per_category: int | None = Field(default=None, ge=1)
    """At most this many tasks per category; None keeps all."""
    limit: int | None = Field(default=None, ge=1)
    """At most this many tasks in all; None keeps all."""


class TaskScore(BaseModel):
    """The scorer's verdict on one trial.

    Attributes:
        success: the benchmark's own success rule for this task (drives passed/failed).
        values: per-task values the suite's ``summarize`` aggregates (e.g. ``{"reward": 1.0}``);
            units are the suite's (documented per suite).
        expected: gold, rendered for the failure message.
        got: the model's answer, rendered for the failure message.
        details: anything else worth keeping in the raw file (JSON-safe).
        failure_kind: why a failed trial failed, one of
            :data:`pytest_egi.outcomes.FAILURE_KINDS` (``wrong_answer``, ``wrong_tool``,
            ``no_answer``, ...), from what the scorer compared; None on a passed trial. How the
            episode ended comes first (:func:`pytest_egi.outcomes.ending_kind`). The core
            refuses an unknown kind and a passed trial with one
            (:func:`pytest_egi.outcomes.checked_failure_kind`: the item errors, naming the
            suite and the allowed kinds); a failed trial without one gets how its episode
            ended, else ``wrong_answer``.
    """

    model_config = ConfigDict(defer_build=True)  # built on the first score, not at collection

    success: bool
    values: dict[str, float | None]
    expected: Any = None
    got: Any = None
    details: dict[str, Any] = Field(default_factory=dict)
    failure_kind: str | None = None


@dataclass(frozen=True)
class SummaryColumns:
    """A suite's sub-metrics as a function of per-record column sums (for the bootstrap).

    Returned by the optional :meth:`Suite.summary_columns`. The contract: for any multiset of
    the given records' tasks (tasks drawn with replacement, all trials of a task together,
    each drawn copy of a task under a task id of its own), ``finish`` of the column sums over
    the drawn records equals the suite's ``summarize`` of those records, within 1e-9, for
    every key ``finish`` returns (None where ``summarize`` gives None; a key ``summarize``
    leaves out, such as a category with no record, is left out by ``finish`` too). Means,
    ratios of sums, micro-F1 from TP/FP/FN sums, macro averages over categories and per-task
    quantities (pass^k, a per-task mean over trials: put on the task's first record, since
    trials travel together) are such functions; medians and maxima are not and are left out.

    Attributes:
        names: the m column names.
        values: ``len(records)`` rows of ``m`` floats, one per record in the order given: a
            list of lists (what :meth:`from_rows` and :meth:`per_category` make, without
            numpy: the session end lets the records go before it imports numpy), or a numpy
            array of shape ``(len(records), m)``.
        finish: column name -> column sum over some records -> sub-metric name -> value (or
            None), in the units ``summarize`` uses; it must cover every routed sub-metric of
            the suite for the bootstrap to use it.
    """

    names: tuple[str, ...]
    values: Any
    finish: Callable[[Mapping[str, float]], dict[str, float | None]]

    @classmethod
    def from_rows(
        cls,
        names: Sequence[str],
        rows: Sequence[Sequence[float]],
        finish: Callable[[Mapping[str, float]], dict[str, float | None]],
    ) -> SummaryColumns:
        """Columns from per-record rows of ``len(names)`` floats each.

        Raises:
            ValueError: a row has not ``len(names)`` values (names the row).
        """
        width = len(names)
        values = rows if isinstance(rows, list) else list(rows)  # the suite's rows, not a copy
        for i, row in enumerate(values):
            if len(row) != width:
                raise ValueError(f"summary_columns: row {i + 1} has {len(row)} values for {width} column "
                                 "names")
        return cls(tuple(names), values, finish)

    @classmethod
    def per_category(
        cls,
        records: Sequence[dict[str, Any]],
        categories: Sequence[str],
        columns: Sequence[str],
        rows: Callable[[str, list[dict[str, Any]]], Sequence[Sequence[float]] | None],
        finish_category: Callable[[str, Mapping[str, float]], dict[str, float | None]],
    ) -> SummaryColumns | None:
        """Columns of a ``summarize`` that is one formula per category (the shape of
        :func:`values_by_category`).

        Args:
            records: the scored records.
            categories: the suite's categories; records of any other category get a row of
                zeros (``summarize`` leaves them out too).
            columns: one category's column names; the first must count its records (1 per
                record), so a category with no record is left out of ``finish``.
            rows: ``(category, its records in order)`` -> one row of ``len(columns)`` floats
                per record (per-task quantities on a task's first record), or None when they
                cannot be expressed as sums (the hook then returns None); for a row per
                record's ``values``, :meth:`each_record`.
            finish_category: ``(category, sums)`` -> that category's sub-metrics, with every
                column name prefixed ``<category>.``.

        Returns:
            Columns named ``<category>.<column>``, or None when ``rows`` gave None.
        """
        names = [f"{c}.{col}" for c in categories for col in columns]
        width = len(columns)
        values = [[0.0] * len(names) for _ in records]
        for j, c in enumerate(categories):
            at = [i for i, rec in enumerate(records) if rec.get("category") == c]
            if at:
                part = rows(c, [records[i] for i in at])
                if part is None:
                    return None
                if len(part) != len(at):
                    raise ValueError(f"summary_columns: {len(part)} rows for the {len(at)} records of {c}")
                for i, row in zip(at, part, strict=True):
                    if len(row) != width:
                        raise ValueError(
                            f"summary_columns: a row of {c} has {len(row)} values for {width} columns"
                        )
                    values[i][j * width : (j + 1) * width] = [float(v) for v in row]
        count = columns[0]

        def finish(sums: Mapping[str, float]) -> dict[str, float | None]:
            out: dict[str, float | None] = {}
            for c in categories:
                if sums[f"{c}.{count}"]:
                    out.update(finish_category(c, sums))
            return out

        return cls(tuple(names), values, finish)

    @staticmethod
    def each_record(
        row: Callable[[dict[str, Any]], Sequence[float] | None],
    ) -> Callable[[str, list[dict[str, Any]]], list[Sequence[float]] | None]:
        """The ``rows`` of :meth:`per_category` from one row per record's ``values`` (None
        from ``row`` for any record: None for all)."""

        def rows(_category: str, records: list[dict[str, Any]]) -> list[Sequence[float]] | None:
            out = [row(rec.get("values") or {}) for rec in records]
            return None if any(r is None for r in out) else out  # type: ignore[return-value]

        return rows


@runtime_checkable
class Suite(Protocol):
    """The contract between a benchmark folder and the core (DESIGN §2)."""

    name: str
    """Suite name as used in ``routing.yaml`` and markers (``crmarena``)."""
    version: str
    """Bumped on any change that can move a score; recorded in egi.json."""
    categories: tuple[str, ...]
    """All categories the benchmark defines."""
    options_model: type[BaseModel]
    """Pydantic model of the suite's own options (``--egi-opt <suite>.<key>=<value>``)."""
    sub_metric_notes: dict[str, str]
    """Optional: sub-metric -> a note shown beside it in every report (units, floor behaviour)."""
    profile_keys: frozenset[str]
    """Optional: the suite-specific profile keys it reads; any other extra key in its
    ``routing.yaml`` profile is a usage error (a typo must not silently run everything)."""
    sub_metrics: frozenset[str]
    """Every key ``summarize`` can return (routed or not). A route naming a sub-metric
    outside this set, for a suite that ran, is a usage error; the conformance tests check
    that ``summarize`` returns nothing outside it."""
    diagnostics: frozenset[str]
    """The subset of ``sub_metrics`` reported but not meant for routing (counts, overall
    means, alternative formulas). Every other key of ``sub_metrics`` must be routed."""
    null_floor: dict[str, float | None]
    """Optional: routed sub-metric -> the value ``egi/null`` scores on it by design, in the
    sub-metric's native unit, where that is not the bottom of its route's scale (HERB's
    ``null_rate`` is 1.0: abstaining is the right answer to an unanswerable question). None
    means the sub-metric is undefined under ``egi/null`` and ``summarize`` returns None for it
    (Benchforce's ``accuracy_finished``: no session finished, and a 0 there would read 100 on
    its ``gap`` route); the route is then missing from the EGI with the suite's note as the
    reason. The conformance tests hold ``egi/null`` to this value instead of the floor (0
    after the route's transform); every sub-metric not listed must be at the floor. Say why in
    ``sub_metric_notes``."""

    oracle_ceiling: dict[str, str]
    """Optional: routed sub-metric -> the name of a diagnostic sub-metric holding the most the
    run's tasks allow on it, where a perfect agent cannot reach the top of the route's scale by
    the benchmark's own formula (UserBench's ``micro_avg`` averages 0.2-point search and
    question turns with the 1.0 answer, so its maximum depends on each task's aspects and
    preferences). ``summarize`` computes that diagnostic from the tasks that ran, so the
    report shows the ceiling beside the figure; the conformance tests hold ``egi/oracle`` to
    it instead of the top of the scale. The routed value is not rescaled."""

    opt_in: str
    """Optional: the suite runs only on tasks the user names (an opt-in suite), and this says
    how, in one line (``--egi-opt eigent.dirs=PATH``). When its ``load_tasks`` returns no
    task the core collects nothing for it (no usage error, no item), ``egi-bench doctor``
    says how to opt in, and its routes should be ``optional: true`` in ``routing.yaml`` so a
    run without it is unchanged."""
    conformance_options: dict[str, str]
    """Optional: the ``--egi-opt`` values (key -> text) the conformance kit passes to run the
    suite (an opt-in suite's own example tasks)."""
    item_seconds: dict[str, float]
    """Optional: the expected seconds of one item of each category (``"*"``: any category not
    named), as the offline policies (``egi/oracle``) take on one core of a 2-core machine,
    the suite's world build and server start-up spread over its items. Only a placement hint:
    the first ``-n`` run of a model and profile weighs the suite's items by it when
    placing whole suites on workers (:mod:`pytest_egi.collect.scheduling`); the times that run learns
    replace it from the next run on. Without it the suite's items count the mean of the
    others' (or one each, when no suite declares or learned any)."""
    doctor_checks: Callable[[], list[tuple[str, str]]]
    """Optional: what the suite needs beyond the core's dependencies (an extra, model weights),
    as ``(level, text)`` lines for ``egi-bench doctor`` (level ``ok``, ``info`` or ``warn``;
    never a failure: a suite without them falls back or skips with the reason)."""
    diagnostic_patterns: tuple[str, ...]
    """Optional: :mod:`fnmatch` patterns of diagnostic keys whose names depend on the data
    (``tag.*.checker_pass_rate``): a key ``summarize`` returns that matches one counts as a
    declared diagnostic. Never routed."""

    def load_tasks(self, profile: SuiteProfile, options: BaseModel) -> list[Task]:
        """Return the tasks for ``profile``, deterministically for its seed.

        One task the suite cannot run never takes the others down (DESIGN §9.3):

        * build a file's tasks with :func:`load_each` (``load_each(entries, build,
          file=path, category=...)``): an exception while building one entry becomes a task
          that errors alone (``Task.load_error``, naming the file, the task and the
          exception);
        * a task the suite knows it cannot run (a table it needs is absent, the local data
          cannot answer it) is kept with ``Task(..., cannot_run=reason)`` (or ``raise
          CannotRun(reason)`` inside ``build``): the core skips its items with ``cannot run:
          <reason>``, and hands only runnable tasks to ``prepare``,
          ``constant_answer_check`` and ``data_warnings``; no ad-hoc ``data`` flag and no
          ``pytest.skip`` in the test module are needed.

        Raises:
            ValueError: bad data (message names the file, field and fix): a usage error for
                the whole run, as is a :class:`TaskIdError` (a task id the core cannot use).
        """
        ...

    def task_index(self, profile: SuiteProfile, options: BaseModel) -> list[tuple[str, str]] | None:
        """Optional: the ``(id, category)`` of each task ``load_tasks(profile, options)`` would
        return, in the same order, told without building the tasks or their world (CPU
        milliseconds); None when it cannot be told without loading (a user's task file or
        export named in ``options``).

        A cold collection (no task-cache entry for the suite) then costs only this list: the
        tasks are loaded when the process that runs the suite's first item needs one, and
        stored in the task cache for the next run; the data checks
        (``constant_answer_check``, ``data_warnings``) run then. The core checks the loaded
        tasks against this list: a difference errors every item of the suite, naming the
        first id that differs (a bug of the suite, never a silently different run). The
        conformance kit checks the two agree on the suite's profiles.
        """
        ...

    def reference_policy(self, task: Task, options: BaseModel, noise: Noise) -> ReferencePolicy:
        """Return the reference solution of ``task`` as a policy (oracle when noise.p == 0).

        Called per item (in its setup). Raise :class:`CannotRun` when no reference can be made
        for this task (the item is skipped with the reason); any other exception errors that
        item alone.
        """
        ...

    def score(
        self, task: Task, trajectory: dict[str, Any], options: BaseModel, judge: Any = None
    ) -> TaskScore:
        """Score one stored trajectory (used live and by ``egi-bench report --rescore``).

        Pure given ``judge``: None means the deterministic rules; otherwise an
        :class:`~pytest_egi.judges.LLMJudge` for free-text grading.

        Rules every suite follows:

        * **No answer fails.** When :func:`pytest_egi.agents.loops.no_answer_reason` of the
          trajectory is not None (a None, empty or whitespace final answer, a final reply cut
          off by the token limit, turns run out, the context window overflowed), the trial is
          a failure with the lowest value of every per-task value, and ``got`` says why. It is
          never an abstention and never matches a gold "None"; only an explicit abstention by
          the suite's own rule (a refusal text, a structured ``answerable=false``) is one.
        * **Why it failed.** A failed trial carries ``failure_kind`` (one of
          :data:`pytest_egi.outcomes.FAILURE_KINDS`): :func:`pytest_egi.outcomes.ending_kind`
          first (``no_answer``, ``turn_limit``, or ``gave_up`` for an "I don't know."-style
          answer, :func:`pytest_egi.normalize.is_refusal`, unless the suite's own rule credits
          that abstention), else the kind of the comparison that failed.
        * **Unicode-aware normalisation.** Answer and gold texts are compared after
          :func:`pytest_egi.normalize.fold_text` / :func:`~pytest_egi.normalize.normalize_answer`
          (with the options the upstream formula uses), never with an ASCII-only normaliser.

        Raises:
            JudgeError: the LLM judge gave no usable verdict (an infra error).
        """
        ...

    def constant_answer_check(self, tasks: list[Task], options: BaseModel) -> dict[str, str]:
        """Optional: categories of ``tasks`` where one constant answer scores full marks.

        Called where the tasks are loaded (every process that collects them); the result is
        shown as a data warning in the terminal summary, egi.json (``data_warnings``) and
        report.html. Implement it with :func:`pytest_egi.collect.checks.constant_answer_warnings`,
        giving each task's gold answers and the suite's own per-task score; exempt (and
        document) a category whose gold is constant by design.

        Returns:
            category -> one line, e.g. ``"PVI: the answer 'None' scores 1.00 on all 6 tasks"``.
        """
        ...

    def data_warnings(self, tasks: list[Task], options: BaseModel) -> dict[str, str]:
        """Optional: anything else about the loaded ``tasks`` a user must know before trusting
        the figures (tasks the local data cannot answer, ...), shown like
        :meth:`constant_answer_check`'s warnings.

        Returns:
            category -> one line.
        """
        ...

    def prepare(self, tasks: list[Task], options: BaseModel) -> None:
        """Optional: build, once per process, what the collected ``tasks`` need (a world, a
        search index, a database, a server), before the first item runs.

        Called in each process that runs items (the serial session, or each xdist worker),
        outside every item's pytest-timeout budget, so a slow build never times an item out
        and never leaves a module half imported. Cache what it builds (per process, or with
        :func:`pytest_egi.cache.shared.build_once` across workers); the items then find it ready.
        ``tasks`` holds only runnable tasks (no ``cannot_run``, no ``load_error``).

        Raises:
            ValueError, OSError: bad data (a usage error naming the file, field and fix).
            CannotRun: the suite cannot run here at all (every item of the suite is skipped
                with the reason).
            Exception: anything else is reported on every item of the suite (each errors
                with the exception), never as a crash of the session.
        """
        ...

    def release(self, options: BaseModel) -> None:
        """Optional: let go of what :meth:`prepare` built and what the suite's items cached in
        this process (worlds, indexes, generated data, servers that are not MCP servers), once
        the process has run its last item of the suite: serially after the session's last item
        of it, on an xdist worker when its next item is of another suite. The core then stops
        the MCP servers only this suite's items used (:func:`pytest_egi.mcp.client.release_scope`)
        and unpickles the suite's tasks again if an item of it comes back, after calling
        :meth:`prepare` again (so both must leave the suite able to run its items afresh:
        anything let go of is rebuilt on demand, with the same values).

        Errors: an exception is shown as a warning naming the suite; the items have run.
        """
        ...

    def extra_files(self, records: list[dict[str, Any]]) -> dict[str, Any]:
        """Optional: benchmark-specific files for the run folder, in the original tool's
        layouts (so users can diff against upstream tooling).

        Called by the report writer (live runs and ``egi-bench report --rescore``) with the
        suite's scored records (status passed/failed).

        Returns:
            relative path (under ``<run_dir>/<suite name>/``) -> JSON-safe object, written as
            JSON; a ``str`` for a path not ending in ``.json`` is written as that text, as it
            is (a CSV in the original tool's format). A path leaving that folder is refused
            (ValueError).
        """
        ...

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Aggregate scored records (status passed/failed) into native sub-metrics.

        Returns:
            sub-metric name -> value in the benchmark's native unit (documented per suite),
            or None when it cannot be computed (e.g. no task of that category ran).
        """
        ...

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns | None:
        """Optional: ``summarize`` as a function of per-record column sums (see
        :class:`SummaryColumns` for the contract), so the bootstrap computes all its
        resamples' sub-metrics as one matrix product instead of calling ``summarize`` once
        per resample.

        Called by the bootstrap with the suite's scored records; its ``finish`` must cover
        every routed sub-metric of the suite (else ``summarize`` is used).

        Returns:
            The columns, or None when ``records`` cannot be expressed that way (the bootstrap
            then calls ``summarize`` per resample).
        """
        ...


def load_suite(module: str) -> Suite:
    """Import ``module`` (e.g. ``"suites.crmarena"``) and return its ``SUITE``.

    Raises:
        ImportError: the module cannot be imported or has no ``SUITE``.
    """
    mod = importlib.import_module(module)
    suite = getattr(mod, "SUITE", None)
    if suite is None:
        raise ImportError(f"{module} has no SUITE object (see pytest_egi.suite.Suite)")
    return suite


OptionsT = TypeVar("OptionsT", bound=BaseModel)


def profile_categories(
    profile: SuiteProfile,
    known: Sequence[str],
    *,
    ordered: bool = False,
    message: str = "unknown categories {unknown}; known: {known}",
) -> list[str]:
    """The categories ``profile`` selects: its ``categories``, or every one of ``known`` when
    it names none; in the profile's order, or in ``known``'s with ``ordered``. Shared by the
    suites' ``load_tasks`` and ``task_index``, so the two select alike.

    Raises:
        ValueError: a category not in ``known``: ``message`` with ``{unknown}`` (the list of
            them) and ``{known}`` (the list of ``known``) filled in.
    """
    wanted = list(profile.categories or known)
    unknown = [c for c in wanted if c not in known]
    if unknown:
        raise ValueError(message.format(unknown=unknown, known=list(known)))
    return [c for c in known if c in wanted] if ordered else wanted


def suite_options(model: type[OptionsT], options: Any) -> OptionsT:
    """``options`` as the suite's options ``model``: as it is when already one, defaults for
    None, else validated from its fields (another pydantic model, or a dict such as a raw
    file's ``options``).

    Raises:
        pydantic.ValidationError: the values do not fit ``model``.
    """
    if isinstance(options, model):
        return options
    if options is None:
        return model()
    return model.model_validate(options.model_dump() if hasattr(options, "model_dump") else options)


def values_by_category(
    records: list[dict[str, Any]], categories: tuple[str, ...]
) -> dict[str, list[dict[str, Any]]]:
    """The ``values`` of ``records`` grouped by their ``category``, for a suite's
    ``summarize``: one entry per category of ``categories`` that has a record, in the order
    of ``categories`` (records keep their order); a record of another category is left out,
    and a record without ``values`` counts as ``{}``.
    """
    found: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        if rec.get("category") in categories:
            found.setdefault(rec["category"], []).append(rec.get("values") or {})
    return {c: found[c] for c in categories if c in found}
