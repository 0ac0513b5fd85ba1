"""Runs that stop once the EGI interval is narrow enough (``--egi-target-ci 3``).

The selected EGI items run in a seeded, stratified order (:func:`stratified_order`): one task
of every (suite, category) in turn, each category's tasks in a seeded shuffle, so that the
tasks run at any moment are a stratified sample of the selection. After each finished item,
once every category has at least :data:`MIN_PER_STRATUM` tasks scored and :data:`MIN_TASKS` in
all (a percentile interval over fewer tasks is too unsure of its own width), and then each time
the number of tasks has grown by :data:`CHECK_GROWTH` (a tenth), the EGI's 95% bootstrap interval
is computed over the records so far, with the run's own resamples and seed, so the interval
checked is the interval the run reports when it ends there. When it is narrower than the
target (its width, upper minus lower bound, in EGI points), the items left are not run.

What ended the run is said (in the terminal, last before the run folder; in egi.json,
``config.target_ci``): the target was reached, or every selected task ran first (with
``--egi-budget``: the budget was spent). The run is labelled a subset (``--egi-target-ci`` in
its selection) unless every selected task ran; the items not run count as deselected, so the
run is complete, not interrupted, and ``run.json``'s plan holds only the items that ran.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

__all__ = [
    "CHECK_GROWTH",
    "MIN_PER_STRATUM",
    "MIN_TASKS",
    "TargetPlugin",
    "add_target_options",
    "parse_target",
    "register_target",
    "stratified_order",
]

MIN_PER_STRATUM = 2
"""Tasks every (suite, category) must have scored before the interval is first checked."""
MIN_TASKS = 20
"""Tasks scored in all before the interval is first checked."""
CHECK_GROWTH = 0.1
"""After the first check, the next comes once the scored tasks grew by this share (at least one)."""


def parse_target(text: str) -> float:
    """``--egi-target-ci``: a width in EGI points (0-100 scale), above 0.

    Raises:
        pytest.UsageError: not a number, or not above 0.
    """
    try:
        value = float(text)
    except ValueError:
        raise pytest.UsageError(
            f"--egi-target-ci: expected a width in EGI points (for instance 3), got {text!r}") from None
    if not (0 < value < 100) or math.isnan(value):
        raise pytest.UsageError(
            f"--egi-target-ci: the width must be above 0 and below 100 EGI points, got {text!r}")
    return value


def add_target_options(group: Any) -> None:
    """Register ``--egi-target-ci`` on the plugin's option group."""
    group.addoption(
        "--egi-target-ci", dest="egi_target_ci", metavar="POINTS", default=None, type=parse_target,
        help="Run the selected tasks in a seeded stratified order and stop once the EGI's 95%% "
             "interval is narrower than POINTS (with --egi-budget: or when the budget is spent); "
             "the run says which ended it and is labelled a subset",
    )


def stratified_order(strata: dict[tuple[str, str], list[str]], seed: int) -> list[tuple[str, str]]:
    """The order tasks run in: each (suite, category)'s task ids in a seeded shuffle, then one
    task of each category in turn (categories in sorted order) until all are taken.

    Args:
        strata: (suite, category) -> task ids (each once).
        seed: the run's seed.

    Returns:
        (suite, task id) pairs, every task once.
    """
    queues = {}
    for key in sorted(strata):
        ids = list(strata[key])
        random.Random(f"{seed}:target:{key[0]}:{key[1]}").shuffle(ids)
        queues[key] = ids
    order: list[tuple[str, str]] = []
    depth = 0
    while any(depth < len(q) for q in queues.values()):
        order += [(key[0], q[depth]) for key, q in queues.items() if depth < len(q)]
        depth += 1
    return order


class TargetPlugin:
    """Orders the items, checks the interval as records arrive, and skips the items left once it
    is narrow enough (registered by :func:`register_target`)."""

    def __init__(self, target: float, settings: Any) -> None:
        self.target = target
        self.settings = settings
        self.records: dict[tuple[str, str, int], dict[str, Any]] = {}
        self.strata: dict[tuple[str, str], set[str]] = {}
        self.next_check = 0
        self.width: float | None = None
        self.reached_after: int | None = None
        self.not_run: list[str] = []
        self.selected_tasks = 0

    @pytest.hookimpl(wrapper=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> Any:
        """Once every other plugin chose the items (``-k``, ``--egi-budget``...), put the EGI
        items in :func:`stratified_order` (a task's trials stay together), after the other
        items, which keep their order."""
        from pytest_egi.run.state import case_of

        result = yield

        by_task: dict[tuple[str, str], list[pytest.Item]] = {}
        strata: dict[tuple[str, str], list[str]] = {}
        others = []
        for item in items:
            case = case_of(item)
            if case is None:
                others.append(item)
                continue
            key = (case.suite.name, case.task_id)
            if key not in by_task:
                strata.setdefault((case.suite.name, case.category), []).append(case.task_id)
            by_task.setdefault(key, []).append(item)
        order = stratified_order(strata, self.settings.run_seed)
        items[:] = others + [item for key in order for item in by_task[key]]
        self.selected_tasks = len(order)
        return result

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
        """Once the target is reached, an EGI item left is not run (no report: it counts as
        deselected)."""
        from pytest_egi.run.state import case_of

        if self.reached_after is not None and case_of(item) is not None:
            self.not_run.append(item.nodeid)
            item.config.hook.pytest_deselected(items=[item])  # (pytest's closing line counts it)
            return True
        return None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Keep each finished EGI record; check the interval when due (module docstring)."""
        if self.reached_after is not None:
            return
        fresh = False
        for name, value in report.user_properties:
            if name == "egi" and isinstance(value, dict) and value.get("status") != "skipped":
                key = (value["suite"], value["task_id"], int(value["trial"]))
                fresh = fresh or key not in self.records
                self.records[key] = value
                stratum = (value["suite"], value.get("category") or "")
                self.strata.setdefault(stratum, set()).add(value["task_id"])
        if not fresh:
            return
        tasks = len({(k[0], k[1]) for k in self.records})
        fewest = min(len(v) for v in self.strata.values())
        if tasks < max(self.next_check, MIN_TASKS) or fewest < MIN_PER_STRATUM:
            return
        self.next_check = tasks + max(1, math.ceil(tasks * CHECK_GROWTH))
        self.width = self._width()
        if self.width is not None and self.width < self.target:
            self.reached_after = tasks

    def _width(self) -> float | None:
        """The width of the EGI's 95% interval over the records so far (None: none yet)."""
        from pytest_egi.scoring.aggregate import aggregate

        s = self.settings
        if s.routing is None or not s.bootstrap:
            return None
        records = [self.records[k] for k in sorted(self.records)]
        agg = aggregate(records, s.routing, weights=s.weights, floors=s.floors,
                        bootstrap_resamples=s.bootstrap, seed=s.run_seed, notices=[])  # fmt: skip
        interval = agg.ci.get("EGI")
        return None if not interval else float(interval[1] - interval[0])

    def summary(self) -> dict[str, Any]:
        """What egi.json's ``config.target_ci`` records: the target, the width last checked, the
        tasks scored and selected, what ended the run (``reached`` or ``ran out``), and the
        sentence that says so."""
        tasks = len({(k[0], k[1]) for k in self.records})
        budget = getattr(self.settings, "budget_plan", None)
        if self.reached_after is not None:
            ended, line = "reached", (
                f"egi target: the EGI interval is {self.width:.2f} points wide (< {self.target:g}) after "
                f"{self.reached_after} of {self.selected_tasks} tasks; the other "
                f"{self.selected_tasks - self.reached_after} were not run")
        else:
            spent = "the budget was spent" if budget is not None else "every selected task ran"
            width = "not computed" if self.width is None else f"{self.width:.2f} points wide"
            ended, line = "ran out", (
                f"egi target: not reached, {spent} ({tasks} of {self.selected_tasks} tasks); the EGI "
                f"interval last checked is {width}, the target {self.target:g}")
        return {"target": self.target, "width": None if self.width is None else round(self.width, 6),
                "tasks": tasks, "selected_tasks": self.selected_tasks, "ended": ended,
                "not_run": len(self.not_run), "line": line}



def register_target(config: pytest.Config, settings: Any) -> TargetPlugin:
    """With ``--egi-target-ci``: refuse what it cannot be combined with, mark the run a subset
    (``selection["--egi-target-ci"]``), and register :class:`TargetPlugin`.

    Raises:
        pytest.UsageError: with ``-n`` (the order the items run in is the workers'),
            ``--egi-shard``, ``--egi-resume``, or ``--egi-bootstrap 0`` (no interval to check);
            the message names the fix.
    """
    opt = config.option
    for on, name in ((getattr(opt, "numprocesses", None), "-n"), (opt.egi_shard, "--egi-shard"),
                     (opt.egi_resume, "--egi-resume")):
        if on:
            raise pytest.UsageError(f"--egi-target-ci cannot be combined with {name} yet: run it serially, "
                                    "or drop --egi-target-ci and choose the size with --egi-budget")
    if not settings.bootstrap:
        raise pytest.UsageError("--egi-target-ci needs the bootstrap interval: drop --egi-bootstrap 0")
    settings.selection["--egi-target-ci"] = f"{opt.egi_target_ci:g}"
    plugin = TargetPlugin(opt.egi_target_ci, settings)
    config.pluginmanager.register(plugin, "egi-target-ci")
    return plugin

