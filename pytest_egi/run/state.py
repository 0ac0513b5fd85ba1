"""Typed stash keys and the resolved run settings, declared in one place."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # annotations only: importing this module must stay light (no pydantic)
    from pytest_egi.cache.taskcache import LoadedTasks
    from pytest_egi.scoring.config import RoutingConfig
    from pytest_egi.suite import Suite, Task

__all__ = [
    "ITEM_KEY", "SESSION_KEY", "SETTINGS_KEY", "Case", "ItemState", "RunSettings", "case_of", "item_state",
    "loaded_tasks_of",
]


@dataclass(frozen=True, slots=True)
class Case:
    """One pytest item's parameter: a task, its trial, and where it came from.

    Attributes:
        suite: the suite object.
        suite_module: importable module holding ``SUITE`` (e.g. ``suites.crmarena``).
        tasks: the suite's loaded tasks (shared by its cases; the Task objects are
            unpickled when a case first needs its :attr:`task`).
        index: this case's task in ``tasks``.
        trial: 1-based trial index.
        trials: trials per task in this run.
        options: the suite's validated options.
        seed: the profile seed used to build the task.
    """

    suite: Suite
    suite_module: str
    tasks: LoadedTasks
    index: int
    trial: int
    trials: int
    options: Any
    seed: int

    @property
    def task(self) -> Task:
        """The task (the suite's tasks are unpickled on the first access in a process)."""
        return self.tasks.task(self.index)

    @property
    def task_id(self) -> str:
        """The task's id, without unpickling the task."""
        return self.tasks.ids[self.index]

    @property
    def category(self) -> str:
        """The task's category, without unpickling the task."""
        return self.tasks.categories[self.index]

    @property
    def id(self) -> str:
        """The pytest id: ``<task_id>`` or ``<task_id>-t<k>``."""
        task_id = self.tasks.ids[self.index]
        return task_id if self.trials == 1 else f"{task_id}-t{self.trial}"


@dataclass
class RunSettings:
    """Options resolved at configure time (routing.yaml < ini < command line).

    Attributes:
        model: ``--egi-model`` or None (then egi items are skipped with a reason).
        mode: ``quick`` or ``deep``.
        routing: the validated routing table (None when no model is given).
        routing_path: where it was read; routing_hash its sha256.
        weights, floors: bucket weights and floors after overrides.
        seed: ``--egi-seed`` override of every profile seed, or None.
        report_dir: parent of run directories; run_id: this run's folder name.
        max_error_rate: errored share above which the session fails.
        strict: plain pytest exit status (any failed item fails the session).
        api_base: ``--egi-api-base``.
        trials: trials per task.
        suite_options: raw ``--egi-opt`` values, suite -> key -> text.
        bootstrap: bootstrap resamples for CIs (0 disables).
        provider: provider settings object (cache, retries, rate limits), when configured.
    """

    model: str | None
    mode: str
    routing: RoutingConfig | None
    routing_path: Path
    routing_hash: str
    weights: dict[str, float]
    floors: dict[str, float]
    seed: int | None
    report_dir: Path
    run_id: str
    max_error_rate: float
    strict: bool
    api_base: str | None
    trials: int
    suite_options: dict[str, dict[str, str]]
    bootstrap: int
    judge_model: str | None = None
    simulator_model: str | None = None
    provider: Any = None
    validated_options: dict[str, Any] = field(default_factory=dict)
    rootdir: Path | None = None
    """The pytest rootdir (where ``suites`` packages import from); recorded for the CLI."""
    selection: dict[str, Any] = field(default_factory=dict)
    deselected_suites: set[str] | None = None
    collected_suites: set[str] | None = None
    """The suites with a selected item in the session, when the controller knows (at its end);
    None otherwise."""
    """The suites with a deselected item, when the controller knows (a serial session, at its
    end); None under xdist or outside a session (a missing sub-metric's cause,
    :func:`pytest_egi.scoring.missing.missing_cause`)."""
    """``-k`` / ``-m`` expressions of the run, recorded so a subset is never mistaken for a run."""
    rescored_from: str | None = None
    """For ``egi-bench report --rescore``: the run directory the records came from."""
    weights_given: dict[str, float] = field(default_factory=dict)
    """What ``--egi-weights`` named (bucket -> weight), before the other buckets were scaled to
    fill the rest (:func:`pytest_egi.scoring.config.apply_weights`); empty when not given."""
    data_warnings: list[dict[str, str]] = field(default_factory=list)
    """Warnings about the suites' data (``Suite.constant_answer_check``), as
    ``{"suite", "category", "warning"}``, once per suite and category (``pytest_egi.collect.checks``)."""
    shared_dir: Path | None = None
    """On an xdist controller: the session's shared directory (see ``pytest_egi.cache.shared``),
    created for the first worker and removed at unconfigure."""
    shard: tuple[int, int] | None = None
    """``--egi-shard K/N`` as ``(K, N)``: this session runs shard K of N of the selected items
    and writes ``<report_dir>/<run_id>/shard-K-of-N``; None runs them all."""
    paths: list[str] = field(default_factory=list)
    """The test paths the session collects from (pytest's arguments, or ``testpaths``), relative
    to the rootdir where inside it, sorted: part of what a resumed or merged run must share."""
    resume_from: Path | None = None
    """``--egi-resume RUN_DIR``: the run directory this session continues, or None."""
    resumed: dict[tuple[str, str, int], str | None] = field(default_factory=dict)
    """On resume: (suite, task id, trial) -> suite version of every complete record of the
    run; those items are not run again."""
    resume_damaged: list[str] = field(default_factory=list)
    """On resume: the results whose stored trajectory is missing or not whole
    (``<suite>/<task id> (trial k): <why>``); those items run again."""
    gate_rule: str = "point"
    """``--egi-gate``: ``confident`` (the plugin's default: judged on the intervals,
    :mod:`pytest_egi.scoring.gate`) or ``point`` (on the point values); ``point`` here, for settings
    made without the option (a run stored before it existed was judged that way)."""
    gate_level: float = 0.95
    """``--egi-gate-level``: the confidence level (0-1) of the confident gate's intervals."""
    budget_plan: dict[str, Any] | None = None
    """``--egi-budget``: the plan the items were cut to (``pytest_egi.collect.budget``), for egi.json."""
    target_ci: dict[str, Any] | None = None
    """``--egi-target-ci``: the target, the width last checked and what ended the run
    (``pytest_egi.collect.target``), for egi.json."""
    gate_undecided: str = "fail"
    """``--egi-gate-undecided``: ``fail`` (an UNDECIDED gate fails the session) or ``pass``."""
    _run_dir: tuple[Any, Any, Any, Path] | None = field(default=None, init=False, repr=False, compare=False)
    """:attr:`run_dir` as last made, with the ``report_dir``, ``run_id`` and ``shard`` objects it
    was made from (asked for once per item)."""

    @property
    def run_seed(self) -> int:
        """The seed of this run: ``--egi-seed``, else the mode's seed in the routing file (the
        bootstrap's seed and the one reported).

        Raises:
            AttributeError: no routing file is loaded (a run without a model).
        """
        if self.seed is not None:
            return self.seed
        return self.routing.modes[self.mode].seed  # type: ignore[union-attr]

    @property
    def run_dir(self) -> Path:
        """``<report_dir>/<run_id>``, or ``<report_dir>/<run_id>/shard-K-of-N`` for a shard."""
        made = self._run_dir
        if made is not None and (made[0], made[1], made[2]) == (self.report_dir, self.run_id, self.shard):
            return made[3]
        path = self.report_dir / self.run_id
        if self.shard is not None:
            from pytest_egi.run.runlog import shard_dir_name

            path = path / shard_dir_name(*self.shard)
        self._run_dir = (self.report_dir, self.run_id, self.shard, path)
        return path


SETTINGS_KEY = pytest.StashKey[RunSettings]()
"""config.stash: the resolved run settings."""
SESSION_KEY = pytest.StashKey["EgiSession"]()
"""config.stash: the controller-side collector (not on xdist workers)."""


@dataclass(slots=True)
class ItemState:
    """What the plugin keeps on one item while it runs: one entry of ``item.stash``
    (:data:`ITEM_KEY`), removed when the item's protocol ends. One entry, not one per field:
    an item's stash then stays as small as bare pytest's (a dict that grows past five keys
    keeps its larger table, about 130 bytes per item, for the rest of the session).

    Attributes:
        client: the model client of the item (to list an offline policy's mistakes).
        recorder: the item's :class:`pytest_egi.run.recorder.EgiRecorder` (an errored item's
            judge and simulator usage).
        record: the record written by ``egi.record`` (or by the error path).
        raw: ``(path relative to the run directory, JSON text)`` of the item's trajectory
            file, until the item's report carries it to the controller.
    """

    client: Any = None
    recorder: Any = None
    record: dict[str, Any] | None = None
    raw: tuple[str, str] | None = None


ITEM_KEY = pytest.StashKey[ItemState]()
"""item.stash: the item's :class:`ItemState`."""


def item_state(item: pytest.Item) -> ItemState:
    """The item's :class:`ItemState` (made on first use)."""
    state = item.stash.get(ITEM_KEY, None)
    if state is None:
        state = item.stash[ITEM_KEY] = ItemState()
    return state


def loaded_tasks_of(items: list[pytest.Item]) -> list[LoadedTasks]:
    """The loaded tasks of the items' suites, each once (items of one suite share them)."""
    seen: dict[int, LoadedTasks] = {}
    for item in items:
        case = case_of(item)
        if case is not None:
            seen.setdefault(id(case.tasks), case.tasks)
    return list(seen.values())


def case_of(item: pytest.Item) -> Case | None:
    """The item's :class:`Case` (its ``egi_case`` parameter), or None for any other item."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return None
    case = callspec.params.get("egi_case")
    return case if isinstance(case, Case) else None

