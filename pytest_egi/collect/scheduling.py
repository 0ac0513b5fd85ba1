"""Suite-affine xdist scheduling: the items of one suite go to as few workers as load allows.

An xdist worker builds a suite's world (its ``prepare``: indexes, MCP servers, imported SDKs)
just before the first item of that suite it is given, and keeps it to the end. Under
``worksteal`` every worker gets half of every suite, so every worker builds every world:
memory per worker is the sum of all worlds, and the same start-up work is done twice.

:class:`SuiteAffineScheduling` (a ``worksteal`` variant) hands out whole suites instead:

- The initial queues: suites longest first, each to the worker with the least work so far
  (longest-processing-time first); a worker's queue is its suites one after the other, in
  that order. A suite's work is its item count times its mean item time, as learned from the
  last ``-n`` run of the same model and profile (:data:`DURATIONS_FILE` in the task cache
  folder); for a suite not seen yet, the sum of its items' declared times (the suite's
  optional ``item_seconds`` by category, :class:`pytest_egi.suite.Suite`, written by the
  workers beside the groups); else its item count times the mean item time of the others;
  with nothing learned or declared, the item counts alone decide.
  Among the workers whose load would stay within :data:`AFFINITY_SLACK` of the least loaded
  one's, a suite goes to the one already given suites that import the most of the same
  packages (learned too: the top-level packages a worker imported for a suite's ``prepare``
  and first item), so one worker pays for a heavy SDK that two suites use.
- A worker left with fewer than two queued items steals from the worker with the longest queue
  (at most half of it, never its running and next item, as ``worksteal``), choosing, from
  that queue's end: whole suites the victim has not started (moving them costs no extra world);
  else items of suites the thief has already started; else the last items, of a suite the
  thief does not hold only when their expected time is more than twice the time a worker's
  first item of that suite took beyond its mean (its world's build): else the thief stops.

The controller collects nothing, so a worker writes what it collected (``egi-groups.json``:
each item's suite, by collection index) into the session's shared directory at the end of its
collection (:class:`SchedulerHooks`). Items of no suite (plain tests), and every item when that
file is missing (a worker on another host), are grouped by their test module.

Used only when the plugin chooses the distribution (``-n`` without ``--dist``); an explicit
``--dist`` is always kept (:class:`SchedulerHooks`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler.worksteal import MIN_PENDING, WorkStealingScheduling

__all__ = ["DURATIONS_FILE", "GROUPS_FILE", "IMPORTS_FILE", "SchedulerHooks", "SuiteAffineScheduling",
           "declared_seconds", "learned_durations", "read_declared", "read_durations", "read_groups",
           "read_packages", "top_level_packages", "write_durations", "write_groups"]


DURATIONS_FILE = "egi-durations.json"
"""In the task cache folder: ``{"seconds": {"<model> <mode>": {group: [seconds, items]}},
"packages": {group: [package, ...]}}``: each group's total item time (setup + call +
teardown, as xdist reports it, so a worker's first item of a suite includes its ``prepare``)
and item count in the last ``-n`` run of that model and profile (``quick``, ``deep``) that
ran it; and every top-level package a worker was seen to import for the group's ``prepare``
and first item."""

IMPORTS_FILE = "egi-imports-{worker}.json"
"""In the session's shared directory, per worker: ``{group: [package, ...]}``."""

AFFINITY_SLACK = 0.2
"""How much more load (a share of the mean load per worker) a suite may add to a worker
that shares packages with it, rather than go to the least loaded one."""

GROUPS_FILE = "egi-groups.json"
"""In the session's shared directory: ``{"ids": [first, last node id], "count": n,
"names": [suite, ...], "index": [position in names, or -1, per collected item],
"declared": {suite: seconds}}`` (the last: the sum of the suite's items' declared times,
for the suites that declare ``item_seconds``)."""


def _read_learned(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((Path(folder) / DURATIONS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_durations(folder: Path | None, model: str) -> dict[str, float]:
    """Mean seconds per item of each group ``model`` ran in its last ``-n`` run, from
    :data:`DURATIONS_FILE` in ``folder``; empty when there is none (or it is unreadable: it
    only guides the placement)."""
    if folder is None:
        return {}
    try:
        seconds = _read_learned(folder)["seconds"][model]
        return {g: float(total) / int(n) for g, (total, n) in seconds.items() if int(n) > 0}
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}


def read_packages(folder: Path | None) -> dict[str, frozenset[str]]:
    """The packages learned for each group (:data:`DURATIONS_FILE`); empty when none."""
    if folder is None:
        return {}
    try:
        return {g: frozenset(map(str, pkgs)) for g, pkgs in _read_learned(folder)["packages"].items()}
    except (KeyError, TypeError, AttributeError):
        return {}


def write_durations(folder: Path, model: str, totals: dict[str, tuple[float, int]],
                    packages: dict[str, list[str]] | None = None) -> None:  # fmt: skip
    """Record this run's ``{group: (seconds, items)}`` for ``model`` and the packages seen
    per group in :data:`DURATIONS_FILE` (a group this run did not run keeps its earlier
    figures; other models' are kept; packages add to those seen before)."""
    from pytest_egi.records import atomic_write_text

    data = _read_learned(folder)
    seconds = data.get("seconds") if isinstance(data.get("seconds"), dict) else {}
    entry = seconds.get(model) if isinstance(seconds.get(model), dict) else {}
    entry.update({g: [round(total, 6), n] for g, (total, n) in sorted(totals.items())})
    seconds[model] = entry
    known = data.get("packages") if isinstance(data.get("packages"), dict) else {}
    for group, pkgs in (packages or {}).items():
        known[group] = sorted(set(known.get(group) or ()) | set(pkgs))
    path = Path(folder) / DURATIONS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"packages": known, "seconds": seconds}, sort_keys=True, indent=1)
    atomic_write_text(path, text + "\n")


def top_level_packages() -> set[str]:
    """The top-level packages imported in this process (``sys.modules``, no private ones)."""
    import sys

    return {name.partition(".")[0] for name in list(sys.modules) if not name.startswith("_")}


def write_groups(directory: Path, nodeids: Sequence[str], suites: Sequence[str | None],
                 seconds: Sequence[float | None] | None = None) -> None:  # fmt: skip
    """Write each collected item's suite (None: not an EGI item) for the controller.

    Args:
        directory: the session's shared directory (``pytest_egi.cache.shared.shared_dir``).
        nodeids: the collected items' node ids, in collection order (what xdist sends).
        suites: the suite of each item, aligned with ``nodeids``.
        seconds: each item's declared time in seconds (:func:`declared_seconds`), aligned
            with ``nodeids``; None for an item whose suite declares none. A suite is given a
            declared total only when every one of its items has a time.

    Every worker collects the same items and writes the same content, atomically.
    """
    from pytest_egi.records import atomic_write_text

    names: dict[str, int] = {}
    index = [-1 if s is None else names.setdefault(s, len(names)) for s in suites]
    declared: dict[str, float] = {}
    undeclared: set[str] = set()
    for suite, secs in zip(suites, seconds if seconds is not None else [None] * len(suites), strict=True):
        if suite is None:
            continue
        if secs is None:
            undeclared.add(suite)
        else:
            declared[suite] = declared.get(suite, 0.0) + float(secs)
    content = {"ids": [nodeids[0], nodeids[-1]] if nodeids else [], "count": len(nodeids),
               "names": list(names), "index": index,
               "declared": {k: round(v, 6) for k, v in declared.items() if k not in undeclared}}  # fmt: skip
    atomic_write_text(Path(directory) / GROUPS_FILE, json.dumps(content, separators=(",", ":")))


def declared_seconds(suite: Any, category: str) -> float | None:
    """The declared seconds of one item of ``category`` of ``suite`` (its optional
    ``item_seconds``: the category's entry, else ``"*"``), or None when it declares none (or
    a value that is not a non-negative number: a hint, never an error)."""
    table = getattr(suite, "item_seconds", None)
    if not isinstance(table, dict):
        return None
    value = table.get(category, table.get("*"))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        return None
    return float(value)


def read_declared(directory: Path | None, collection: Sequence[str]) -> dict[str, float]:
    """``{"suite:<name>": declared seconds of its items}`` written by :func:`write_groups` for
    this very collection (same count, first and last node id); empty otherwise."""
    if directory is None:
        return {}
    try:
        data = json.loads((Path(directory) / GROUPS_FILE).read_text(encoding="utf-8"))
        ends = [collection[0], collection[-1]] if collection else []
        if data.get("count") != len(collection) or data.get("ids") != ends:
            return {}
        return {"suite:" + str(k): float(v) for k, v in (data.get("declared") or {}).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def read_groups(directory: Path | None, collection: Sequence[str]) -> list[str]:
    """The scheduling group of each item of ``collection`` (node ids in collection order).

    An item's group is ``suite:<name>`` when :func:`write_groups` wrote one for this very
    collection (same count, same first and last node id), else ``module:<test module path>``.
    """
    modules: dict[str, str] = {}  # one group string per module (not per item: 20,000 items)
    by_module = [modules.setdefault(m, "module:" + m) for m in (n.split("::", 1)[0] for n in collection)]
    if directory is None:
        return by_module
    try:
        data = json.loads((Path(directory) / GROUPS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return by_module
    ends = [collection[0], collection[-1]] if collection else []
    index = data.get("index", ())
    if data.get("count") != len(collection) or data.get("ids") != ends or len(index) != len(collection):
        return by_module
    suites = ["suite:" + name for name in data["names"]]
    return [by_module[i] if k < 0 else suites[k] for i, k in enumerate(index)]


class SuiteAffineScheduling(WorkStealingScheduling):
    """``worksteal`` that keeps each group of items (a suite) on as few workers as it can.

    Args:
        config: the controller's pytest config.
        log: xdist's log producer.
        groups: ``collection -> group per item`` (node ids in, one hashable per item out);
            default :func:`read_groups` on the session's shared directory.
        expected: group -> mean seconds per item (:func:`read_durations`) for the initial
            placement; None or empty: item counts alone.
        declared: group -> the declared seconds of all its items (:func:`read_declared`), or
            ``collection -> that``, for the groups ``expected`` lacks; default (None):
            :func:`read_declared` on the session's shared directory when ``groups`` is the
            default too, else none.
        packages: group -> the packages it imports (:func:`read_packages`), for the placement
            among workers within :data:`AFFINITY_SLACK`; None or empty: the least loaded.

    See the module docstring for the rules. ``node2groups`` maps each worker to the groups of
    the items it has started or been given (the worlds it holds, or will).
    """

    def __init__(self, config: pytest.Config, log: Any = None,
                 groups: Callable[[Sequence[str]], Sequence[Any]] | None = None,
                 expected: dict[Any, float] | None = None,
                 packages: dict[Any, frozenset[str]] | None = None,
                 declared: dict[Any, float] | Callable[[Sequence[str]], dict[Any, float]] | None = None,
                 ) -> None:  # fmt: skip
        super().__init__(config, log)
        self._groups_of = groups
        self._declared_of = declared
        self._expected = dict(expected or {})
        self._packages = dict(packages or {})
        self.groups: list[Any] = []
        self.node2groups: dict[Any, set[Any]] = {}
        self.node2started: dict[Any, set[Any]] = {}
        self._first: dict[Any, list[float]] = {}  # group -> durations of a worker's first item of it
        self._rest: dict[Any, list[float]] = {}  # group -> [sum, count] of the other items' durations

    def add_node(self, node: Any) -> None:
        super().add_node(node)
        self.node2groups[node] = set()
        self.node2started[node] = set()

    def remove_node(self, node: Any) -> str | None:
        self.node2groups.pop(node, None)
        self.node2started.pop(node, None)
        return super().remove_node(node)

    def _read_groups(self, collection: Sequence[str]) -> list[Any]:
        if self._groups_of is not None:
            return list(self._groups_of(collection))
        from pytest_egi.run.state import SETTINGS_KEY

        settings = self.config.stash.get(SETTINGS_KEY, None)
        return read_groups(getattr(settings, "shared_dir", None), collection)

    def _read_declared(self, collection: Sequence[str]) -> dict[Any, float]:
        declared = self._declared_of
        if callable(declared):
            return dict(declared(collection))
        if declared is not None:
            return dict(declared)
        if self._groups_of is not None:
            return {}
        from pytest_egi.run.state import SETTINGS_KEY

        settings = self.config.stash.get(SETTINGS_KEY, None)
        return read_declared(getattr(settings, "shared_dir", None), collection)

    def totals(self) -> dict[Any, tuple[float, int]]:
        """Each group's total item seconds and item count so far (the items whose duration
        xdist reported)."""
        out: dict[Any, tuple[float, int]] = {}
        for group in set(self._first) | set(self._rest):
            first = self._first.get(group, [])
            rest = self._rest.get(group, [0.0, 0])
            out[group] = (sum(first) + rest[0], len(first) + rest[1])
        return out

    def schedule(self) -> None:
        """Hand each worker whole groups, longest first, to the least loaded worker."""
        assert self.collection_is_completed
        if self.collection is not None:  # a node added later (a crashed one replaced)
            self.check_schedule()
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        self.collection = next(iter(self.node2collection.values()))
        if not self.collection:
            return
        self.groups = self._read_groups(self.collection)
        members: dict[Any, list[int]] = {}
        for index, group in enumerate(self.groups):
            members.setdefault(group, []).append(index)
        expected = self._expected
        declared = {g: v for g, v in self._read_declared(self.collection).items()
                    if g in members and g not in expected}  # fmt: skip
        known = [expected[g] for g in members if g in expected]
        known += [declared[g] / len(members[g]) for g in declared]
        fallback = sum(known) / len(known) if known else 1.0
        work = {g: len(ix) * expected[g] if g in expected else declared.get(g, len(ix) * fallback)
                for g, ix in members.items()}  # fmt: skip
        nodes = [node for node in self.node2pending if not node.shutting_down]
        load = dict.fromkeys(nodes, 0.0)
        held: dict[Any, set[str]] = {node: set() for node in nodes}  # packages of its groups
        slack = AFFINITY_SLACK * sum(work.values()) / max(1, len(nodes))
        queues: dict[Any, list[int]] = {node: [] for node in nodes}
        for group, indices in sorted(members.items(), key=lambda kv: (-work[kv[0]], kv[1][0])):
            least = min(load.values())
            pkgs = self._packages.get(group, frozenset())
            near = [n for n in nodes if load[n] <= least + slack]
            # the most packages in common, then the first of the least loaded
            node = min(near, key=lambda n: (-len(pkgs & held[n]), load[n]))
            load[node] += work[group]
            held[node] |= pkgs
            queues[node].extend(indices)
        for node, queue in queues.items():
            if queue:
                self._send(node, queue)
        self.check_schedule()

    def _send(self, node: Any, indices: list[int]) -> None:
        self.node2groups[node].update(self.groups[i] for i in indices)
        self.node2pending[node].extend(indices)
        node.send_runtest_some(indices)

    def _send_tests(self, node: Any, num: int) -> None:
        indices = self.pending[:num]
        if indices:
            del self.pending[:num]
            self._send(node, indices)

    def mark_test_complete(self, node: Any, item_index: int, duration: float | None = None) -> None:
        group = self.groups[item_index]
        if duration is not None:  # a worker's first item of a group includes its prepare
            if group in self.node2started[node]:
                self._rest.setdefault(group, [0.0, 0])[0] += duration
                self._rest[group][1] += 1
            else:
                self._first.setdefault(group, []).append(duration)
        self.node2started[node].add(group)
        super().mark_test_complete(node, item_index, duration)

    def worth_splitting(self, group: Any, count: int) -> bool:
        """Whether a worker that does not hold ``group`` should take ``count`` of its items:
        when their expected time (the group's mean item duration, else that of every group)
        is more than twice its start (how much longer a worker's first item of it took than
        that mean: the world built first; for a group not yet started anywhere, the longest
        start seen). True while no item's duration is known."""
        known = [r for r in self._rest.values() if r[1]]
        if not known:
            return True
        overall = sum(r[0] for r in known) / sum(r[1] for r in known)

        def mean(g: Any) -> float:
            rest = self._rest.get(g)
            return rest[0] / rest[1] if rest and rest[1] else overall

        def start(g: Any) -> float:
            first = self._first[g]
            return max(0.0, sum(first) / len(first) - mean(g))

        cost = start(group) if group in self._first else max(map(start, self._first), default=0.0)
        return count * mean(group) > 2 * cost

    def check_schedule(self) -> None:
        """Send returned or stolen items to idle workers; else have an idle worker steal."""
        nodes_up = [(node, pending) for node, pending in self.node2pending.items() if not node.shutting_down]

        def idle_nodes() -> list[Any]:
            return [node for node, pending in nodes_up if len(pending) < MIN_PENDING]

        idle = idle_nodes()
        if not idle:
            return
        if self.pending:
            for i, node in enumerate(idle):
                self._send_tests(node, len(self.pending) // (len(idle) - i))
            idle = idle_nodes()
            if not idle:
                return
        if self.steal_requested_from_node is not None:
            return  # one steal at a time
        victim, queue = max(nodes_up, key=lambda np: len(np[1]), default=(None, []))
        num = min(len(queue) // 2, max(0, len(queue) - MIN_PENDING))
        if victim is None or num == 0:
            for node in idle:  # nothing left to take: they run their last item now
                node.shutdown()
            return
        chosen = self.steal_choice(victim, idle[0], num)
        if not chosen:  # nothing worth moving: the idle workers run their last item now
            for node in idle:
                node.shutdown()
            return
        victim.send_steal(chosen)
        self.steal_requested_from_node = victim

    def steal_choice(self, victim: Any, thief: Any, num: int) -> list[int]:
        """Which of ``victim``'s queued items ``thief`` asks for (collection indices, in queue
        order; at most ``num``, at least one when the victim has more than ``MIN_PENDING``).

        Whole groups the victim has not started, taken from the queue's end while they fit in
        ``num``; if none fits, the last ``num`` items, those of groups the thief already holds
        first, of another group only when :meth:`worth_splitting` (else nothing: an empty
        list). The victim's running and next item (the first ``MIN_PENDING``) always stay.
        """
        queue = self.node2pending[victim]
        stealable = queue[MIN_PENDING:]
        started = self.node2started[victim] | {self.groups[i] for i in queue[:MIN_PENDING]}
        by_group: dict[Any, list[int]] = {}
        for index in stealable:
            by_group.setdefault(self.groups[index], []).append(index)
        whole: set[int] = set()
        for group in reversed(list(by_group)):  # from the queue's end
            if group not in started and len(whole) + len(by_group[group]) <= num:
                whole.update(by_group[group])
        if whole:
            return [i for i in stealable if i in whole]
        held = self.node2groups[thief]
        allowed = {g for g, members in by_group.items()
                   if g in held or self.worth_splitting(g, min(num, len(members)))}  # fmt: skip
        ranked = sorted((k for k in range(len(stealable)) if self.groups[stealable[k]] in allowed),
                        key=lambda k: (self.groups[stealable[k]] not in held, -k))  # fmt: skip
        picked = set(ranked[:num])
        return [index for k, index in enumerate(stealable) if k in picked]


class SchedulerHooks:
    """xdist hooks: on the controller, :class:`SuiteAffineScheduling` when ``use()`` says
    the plugin chose the distribution (``-n`` without ``--dist``); on a worker, write the
    collected items' suites (:func:`write_groups`).

    Args:
        use: whether this session's distribution is ours to choose (read when xdist asks).
        suite_of: an item's suite name, or None for an item that is not an EGI task.
    """

    def __init__(self, use: Callable[[], bool], suite_of: Callable[[pytest.Item], str | None]) -> None:
        self._use = use
        self._suite_of = suite_of
        self._scheduler: SuiteAffineScheduling | None = None
        self._imports: dict[str, list[str]] = {}  # on a worker: group -> packages it imported

    @staticmethod
    def _durations_key(config: pytest.Config) -> tuple[Path | None, str | None]:
        from pytest_egi.cache.taskcache import task_cache_dir
        from pytest_egi.run.state import SETTINGS_KEY

        settings = config.stash.get(SETTINGS_KEY, None)
        model = getattr(settings, "model", None)
        # per model and profile: the same suite's items take other times in another profile
        return task_cache_dir(config), f"{model} {settings.mode}" if model else None

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        if not self._use():
            return None
        folder, _model = self._durations_key(config)
        self._scheduler = SuiteAffineScheduling(
            config, log, expected=learned_durations(config), packages=read_packages(folder))
        return self._scheduler

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # outside the plugin's lazy prepare
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        """On a worker, note the packages a suite's ``prepare`` and first item imported
        (:data:`IMPORTS_FILE`, read by the controller at session end)."""
        suite = self._suite_of(item) if hasattr(item.config, "workerinput") else None
        group = None if suite is None else "suite:" + suite
        if group is None or group in self._imports:
            return (yield)
        before = top_level_packages()
        try:
            return (yield)
        finally:
            self._imports[group] = sorted(top_level_packages() - before)
            self._write_imports(item.config)

    def _write_imports(self, config: pytest.Config) -> None:
        from pytest_egi.cache.shared import shared_dir
        from pytest_egi.records import atomic_write_text

        directory = shared_dir()
        if directory is None:
            return
        worker = str(config.workerinput.get("workerid", "gw"))  # type: ignore[attr-defined]
        try:
            path = Path(directory) / IMPORTS_FILE.format(worker=worker)
            atomic_write_text(path, json.dumps(self._imports))
        except OSError:
            pass  # it only guides the next run's placement

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """On the controller: keep this run's item times per suite for the next run's
        placement (:func:`write_durations`)."""
        if self._scheduler is None:
            return
        from pytest_egi.run.state import SETTINGS_KEY

        folder, model = self._durations_key(session.config)
        totals = {g: t for g, t in self._scheduler.totals().items() if isinstance(g, str) and t[1]}
        packages: dict[str, list[str]] = {}
        directory = getattr(session.config.stash.get(SETTINGS_KEY, None), "shared_dir", None)
        for path in sorted(Path(directory).glob(IMPORTS_FILE.format(worker="*"))) if directory else ():
            try:
                for group, pkgs in json.loads(path.read_text(encoding="utf-8")).items():
                    packages.setdefault(group, []).extend(pkgs)
            except (OSError, ValueError, AttributeError):
                continue
        if folder is not None and model and totals:
            try:
                write_durations(folder, model, totals, packages)
            except OSError:
                pass  # a read-only cache folder: the next run places by item counts

    @pytest.hookimpl(tryfirst=True)  # before xdist tells the controller collection is over
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from pytest_egi.cache.shared import shared_dir

        directory = shared_dir()
        if hasattr(session.config, "workerinput") and directory is not None:
            from pytest_egi.run.state import case_of

            items = session.items
            seconds = []
            for item in items:
                case = case_of(item)
                seconds.append(None if case is None else declared_seconds(case.suite, case.category))
            write_groups(directory, [item.nodeid for item in items], [self._suite_of(item) for item in items],
                         seconds)  # fmt: skip


def learned_durations(config: pytest.Config) -> dict[str, float]:
    """The mean seconds per item of each group in the last ``-n`` run of this session's model
    and profile (:func:`read_durations` in the task cache folder, under ``"<model> <mode>"``):
    what the initial placement weighs the suites by. Empty when there is none (no such file,
    no entry for this model and profile, ``--egi-no-cache``, no model): the placement is then
    by item counts."""
    folder, model = SchedulerHooks._durations_key(config)
    return read_durations(folder, model) if model else {}
