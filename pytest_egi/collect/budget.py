"""Runs sized by a budget (``--egi-budget 30m`` or ``--egi-budget 5usd``).

Before any item runs, the collected EGI items are cut to a subset that is expected to fit the
budget, by the EGI-Bench report's subsetting rules (:func:`plan_subset`):

1. every (suite, category) keeps at least one task while that fits;
2. the tasks per category shrink (one cap for all categories) before any category is dropped;
3. when even one task per category does not fit, categories are dropped one at a time, each
   time the one whose bucket is most covered elsewhere (the most other kept categories feed
   every bucket it feeds);
4. which tasks a category keeps is a seeded draw (the run's seed), in collection order.

The expected cost of a task (:func:`learn_costs`) is the mean over the items of the same
suite in earlier runs of the same model in the report folder (their ``timings.jsonl``:
seconds of the item's call, and the cost actually paid), else a default (stated in the plan).
The wall time is the sum over the kept items divided by the xdist worker count. Under ``-n``
each worker makes the plan where it collects (the same plan: the same earlier runs, the same
seed) and the controller prints the first worker's (:data:`PLAN_FILE` in the shared folder).

The plan is printed before any item runs (also under ``--collect-only``), recorded in
egi.json (``config.budget``), and the run is labelled a subset (``--egi-budget`` in its
selection: :data:`pytest_egi.scoring.verdict.SUBSET_KEYS`).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "Budget",
    "BudgetPlan",
    "TaskCost",
    "add_budget_options",
    "expected_width",
    "learn_costs",
    "parse_budget",
    "plan_lines",
    "plan_subset",
]

DEFAULT_SECONDS = 60.0
"""Seconds per task assumed for a suite no earlier run of the model measured (a model call
loop of a few turns); an offline policy (``egi/...``) is assumed :data:`OFFLINE_SECONDS`."""
OFFLINE_SECONDS = 0.05
PLAN_FILE = "budget-plan.json"
"""Under ``-n``: the plan a worker made, in the session's shared directory, for the controller."""
DEFAULT_USD = 0.02
"""USD per task assumed for a suite no earlier run of the model measured (offline: 0)."""


@dataclass(frozen=True)
class Budget:
    """``--egi-budget``: ``amount`` of ``kind`` (``seconds`` of wall time, or ``usd``)."""

    kind: str
    amount: float
    text: str


_UNITS = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_budget(text: str) -> Budget:
    """``30m``, ``90s``, ``1.5h`` (wall time) or ``5usd`` / ``$5`` (dollars).

    Raises:
        pytest.UsageError: anything else, or a budget that is not positive.
    """
    t = text.strip().lower()
    m = re.fullmatch(r"\$?\s*([0-9]*\.?[0-9]+)\s*(s|sec|m|min|h|usd)?", t)
    if m is None or (m.group(2) is None and not t.startswith("$")):
        raise pytest.UsageError(
            f"--egi-budget: expected a wall time (30m, 90s, 1.5h) or dollars (5usd), got {text!r}")
    value = float(m.group(1))
    if value <= 0:
        raise pytest.UsageError(f"--egi-budget: the budget must be above 0, got {text!r}")
    if t.startswith("$") or m.group(2) == "usd":
        return Budget("usd", value, text)
    return Budget("seconds", value * _UNITS[m.group(2)], text)


@dataclass(frozen=True)
class TaskCost:
    """Expected cost of one item of a suite: ``seconds`` (wall time of its call), ``usd``, and
    where the figures come from (``source``)."""

    seconds: float
    usd: float
    source: str


def learn_costs(report_dir: Path, model: str, suites: Sequence[str]) -> dict[str, TaskCost]:
    """Per suite, the mean seconds and USD per item over the earlier runs of ``model`` in
    ``report_dir`` (each run folder's egi.json ``model`` and ``timings.jsonl``: ``call_s``
    plus ``setup_s`` / ``teardown_s`` when present, ``usage.cost_usd``); a suite none of them
    ran gets the defaults (:data:`DEFAULT_SECONDS`, :data:`DEFAULT_USD`; an offline policy
    ``egi/...``: :data:`OFFLINE_SECONDS`, 0). Unreadable files are skipped (they only guide
    the plan). Runs are read in folder-name order, so every process gets the same figures."""
    seconds: dict[str, list[float]] = {s: [] for s in suites}
    usd: dict[str, list[float]] = {s: [] for s in suites}
    for run in sorted(Path(report_dir).glob("*/egi.json")) if Path(report_dir).is_dir() else []:
        try:
            if json.loads(run.read_text(encoding="utf-8")).get("model") != model:
                continue
            lines = (run.parent / "timings.jsonl").read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError):
            continue
        for line in lines:
            try:
                t = json.loads(line)
            except ValueError:
                continue
            if t.get("suite") in seconds:
                phases = ("setup_s", "call_s", "teardown_s")
                seconds[t["suite"]].append(sum(float(t.get(k) or 0.0) for k in phases))
                usd[t["suite"]].append(float(((t.get("usage") or {}).get("cost_usd")) or 0.0))
    offline = model.startswith("egi/")
    out = {}
    for s in suites:
        if seconds[s]:
            out[s] = TaskCost(math.fsum(seconds[s]) / len(seconds[s]), math.fsum(usd[s]) / len(usd[s]),
                              f"{len(seconds[s])} items of earlier runs of {model}")
        else:
            out[s] = TaskCost(OFFLINE_SECONDS if offline else DEFAULT_SECONDS,
                              0.0 if offline else DEFAULT_USD, "no earlier run of this model: default")
    return out


def expected_width(report_dir: Path, model: str, items: int) -> float | None:
    """The EGI interval's expected width (0-100 points) over ``items`` items: the latest
    earlier run of ``model`` in ``report_dir`` (by folder name) with an interval (``egi.ci95``,
    or ``egi.partial_ci95``), scaled as ``width * sqrt(its items / items)`` (a bootstrap
    interval narrows as one over the square root of the number of tasks); None without one."""
    if items <= 0 or not Path(report_dir).is_dir():
        return None
    for run in sorted(Path(report_dir).glob("*/egi.json"), reverse=True):
        try:
            egi = json.loads(run.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        interval = (egi.get("egi") or {}).get("ci95") or (egi.get("egi") or {}).get("partial_ci95")
        before = sum((egi.get("counts") or {}).values())
        if egi.get("model") == model and interval and before:
            return (interval[1] - interval[0]) * math.sqrt(before / items)
    return None


@dataclass
class BudgetPlan:
    """What a budgeted run keeps.

    Attributes:
        kept: (suite, category) -> the task ids kept, in collection order (a category
            dropped is absent).
        cap: the tasks per category (None: no cap was needed).
        dropped: (suite, category) strata dropped whole, in the order dropped.
        cost: the expected cost of the kept items, in the budget's unit (seconds of wall time
            or USD).
        fits: whether ``cost`` is within the budget (False only when even the cheapest
            category alone exceeds it: one is always kept).
    """

    kept: dict[tuple[str, str], list[str]]
    cap: int | None
    dropped: list[tuple[str, str]] = field(default_factory=list)
    cost: float = 0.0
    fits: bool = True


def plan_subset(
    strata: Mapping[tuple[str, str], Sequence[str]],
    unit_cost: Mapping[str, float],
    budget: float,
    buckets_of: Mapping[tuple[str, str], frozenset[str] | set[str]],
    *,
    seed: int,
) -> BudgetPlan:
    """Choose the tasks of a budgeted run (the module docstring's rules).

    Args:
        strata: (suite, category) -> its task ids in collection order (each task counts once;
            the caller multiplies ``unit_cost`` by the trials).
        unit_cost: suite -> expected cost of one task (budget unit: seconds of wall time, i.e.
            already divided by the worker count, or USD).
        budget: the budget in that unit (> 0).
        buckets_of: (suite, category) -> the buckets its sub-metrics feed (routing.yaml).
        seed: the run's seed (which tasks a category keeps).

    Returns:
        The plan; everything when it all fits (``cap`` None).
    """
    def cost(counts: Mapping[tuple[str, str], int]) -> float:
        return math.fsum(unit_cost[s] * n for (s, _), n in counts.items())

    full = {k: len(v) for k, v in strata.items() if v}
    if cost(full) <= budget:
        return BudgetPlan({k: list(strata[k]) for k in full}, None, [], cost(full), True)
    cap = max(full.values())
    while cap > 1 and cost({k: min(n, cap) for k, n in full.items()}) > budget:
        cap -= 1
    live = dict(full)
    dropped: list[tuple[str, str]] = []
    while len(live) > 1 and cost({k: min(n, cap) for k, n in live.items()}) > budget:
        def covered_elsewhere(key: tuple[str, str]) -> tuple[int, float, tuple[str, str]]:
            feeds = buckets_of.get(key) or frozenset()
            others = [k for k in live if k != key]
            cover = min((sum(1 for k in others if b in (buckets_of.get(k) or ())) for b in feeds),
                        default=len(others))
            return (cover, unit_cost[key[0]] * min(live[key], cap), key)
        victim = max(live, key=covered_elsewhere)
        dropped.append(victim)
        del live[victim]
    kept: dict[tuple[str, str], list[str]] = {}
    for key in sorted(live):
        ids = list(strata[key])
        n = min(len(ids), cap)
        chosen = set(random.Random(f"{seed}:{key[0]}:{key[1]}").sample(range(len(ids)), n))
        kept[key] = [ids[i] for i in range(len(ids)) if i in chosen]
    total = cost({k: len(v) for k, v in kept.items()})
    return BudgetPlan(kept, cap, dropped, total, total <= budget)


def plan_lines(plan: BudgetPlan, budget: Budget, costs: Mapping[str, TaskCost], *, workers: int,
               trials: int, full: Mapping[tuple[str, str], int], width: float | None = None) -> list[str]:
    """The plan for people: one line for the whole run, then one per suite (tasks kept of
    collected, expected time and cost, where the figures come from), then the dropped
    categories."""
    def money(x: float) -> str:
        return f"${x:.2f}"

    def wall(x: float) -> str:
        return f"{x / 60:.1f} min" if x >= 60 else f"{x:.1f} s"

    suites = sorted({s for s, _ in full})
    per_suite = {s: sum(len(v) for (t, _), v in plan.kept.items() if t == s) for s in suites}
    of = {s: sum(n for (t, _), n in full.items() if t == s) for s in suites}
    secs = math.fsum(costs[s].seconds * per_suite[s] * trials for s in suites) / max(1, workers)
    usd = math.fsum(costs[s].usd * per_suite[s] * trials for s in suites)
    kept_tasks = sum(per_suite.values())
    head = (f"egi budget {budget.text}: {kept_tasks} of {sum(of.values())} tasks"
            + (f" (at most {plan.cap} per category)" if plan.cap is not None else " (all of them fit)")
            + f", expected {wall(secs)} wall time"
            + (f" on {workers} workers" if workers > 1 else "") + f", {money(usd)}"
            + (f", expected EGI interval {width:.1f} points wide" if width is not None else "")
            + ("" if plan.fits else " — over the budget even with one category: the cheapest kept"))
    lines = [head]
    for s in suites:
        lines.append(f"  {s}: {per_suite[s]} of {of[s]} tasks, ~{costs[s].seconds:.2f} s and "
                     f"{money(costs[s].usd)} per task ({costs[s].source})")
    for s, c in plan.dropped:
        lines.append(f"  dropped: {s} {c} (its buckets are the most covered by the other categories)")
    return lines


def add_budget_options(group: Any) -> None:
    """Register ``--egi-budget`` on the plugin's option group."""
    group.addoption(
        "--egi-budget", dest="egi_budget", metavar="30m|5usd", default=None, type=parse_budget,
        help="Run a seeded subset expected to fit this wall time (30m, 90s, 1.5h) or cost (5usd), "
             "from earlier runs of the model; the plan is printed before any item runs "
             "(also with --collect-only) and the run is labelled a subset",
    )


class BudgetPlugin:
    """Cuts the collected items to the budget's plan (registered by the plugin when
    ``--egi-budget`` is given)."""

    def __init__(self, budget: Budget, settings: Any) -> None:
        self.budget = budget
        self.settings = settings

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        """Keep the plan's items; the others are deselected (``pytest_deselected``)."""
        from pytest_egi.run.state import case_of

        s = self.settings
        strata: dict[tuple[str, str], list[str]] = {}
        for item in items:
            case = case_of(item)
            if case is not None:
                ids = strata.setdefault((case.suite.name, case.category), [])
                if case.task_id not in ids:
                    ids.append(case.task_id)
        if not strata:
            return
        suites = sorted({k[0] for k in strata})
        costs = learn_costs(s.report_dir, s.model, suites)
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None:
            workers = int(workerinput.get("workercount") or 1)
        else:
            workers = int(getattr(config.option, "numprocesses", None) or 1)
        trials = max(1, int(s.trials))
        if self.budget.kind == "seconds":
            unit = {n: costs[n].seconds * trials / workers for n in suites}
        else:
            unit = {n: costs[n].usd * trials for n in suites}
        buckets_of: dict[tuple[str, str], set[str]] = {}
        routes = s.routing.routes if s.routing is not None else []
        for (suite, category) in strata:
            buckets_of[(suite, category)] = {r.bucket for r in routes if r.suite == suite
                                             and (category in r.sub_metric or not any(
                                                 c in r.sub_metric for (t, c) in strata if t == suite))}
        plan = plan_subset(strata, unit, self.budget.amount, buckets_of, seed=s.run_seed)
        keep = {(suite, tid) for (suite, _), ids in plan.kept.items() for tid in ids}
        kept, dropped = [], []
        for item in items:
            case = case_of(item)
            (kept if case is None or (case.suite.name, case.task_id) in keep else dropped).append(item)
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
        else:  # every task fits: the run is the whole selection, not a subset of it
            s.selection.pop("--egi-budget", None)
        full = {k: len(v) for k, v in strata.items()}
        width = expected_width(s.report_dir, s.model, sum(len(v) for v in plan.kept.values()) * trials)
        lines = plan_lines(plan, self.budget, costs, workers=workers, trials=trials, full=full, width=width)
        s.budget_plan = {
            "budget": self.budget.text, "kind": self.budget.kind, "amount": self.budget.amount,
            "seed": s.run_seed, "cap": plan.cap, "expected": round(plan.cost, 6), "fits": plan.fits,
            "expected_width": None if width is None else round(width, 6),
            "kept": {f"{a}/{b}": len(v) for (a, b), v in sorted(plan.kept.items())},
            "dropped": [f"{a}/{b}" for a, b in plan.dropped],
            "costs": {n: c.__dict__ for n, c in costs.items()}, "lines": lines, "all_fit": not dropped,
        }
        if workerinput is not None:  # for the controller, which collects nothing
            from pytest_egi.cache.shared import shared_dir
            from pytest_egi.records import atomic_write_text

            directory = shared_dir()
            if directory is not None:
                atomic_write_text(Path(directory) / PLAN_FILE, json.dumps(s.budget_plan))
            return
        self._print(config, lines)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under ``-n``, on the controller: the plan the first worker made (every worker makes
        the same one, from the same earlier runs), printed once before any item runs."""
        if self.settings.budget_plan is not None or self.settings.shared_dir is None:
            return
        try:
            plan = json.loads((Path(self.settings.shared_dir) / PLAN_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        self.settings.budget_plan = plan
        if plan.get("all_fit"):
            self.settings.selection.pop("--egi-budget", None)
        self._print(node.config, plan["lines"])

    @staticmethod
    def _print(config: pytest.Config, lines: list[str]) -> None:
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            for line in lines:
                reporter.write_line(line)


def register_budget(config: pytest.Config, settings: Any) -> None:
    """With ``--egi-budget``: refuse what it cannot be combined with yet, mark the run a subset
    (``selection["--egi-budget"]``), and register :class:`BudgetPlugin`.

    Under ``-n`` every worker makes the same plan (from the same earlier runs) and the
    controller prints the first worker's (:data:`PLAN_FILE`).

    Raises:
        pytest.UsageError: with ``--egi-shard`` or ``--egi-resume`` (the message names the fix).
    """
    budget = config.option.egi_budget
    opt = config.option
    for on, name in ((opt.egi_shard, "--egi-shard"), (opt.egi_resume, "--egi-resume")):
        if on:
            raise pytest.UsageError(f"--egi-budget cannot be combined with {name} yet: run the budgeted "
                                    f"subset serially, or choose the items with -k / -m")
    settings.selection["--egi-budget"] = budget.text
    config.pluginmanager.register(BudgetPlugin(budget, settings), "egi-budget")
