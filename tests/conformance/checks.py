"""The contract every suite follows (a suite is done only when it holds), as checker functions.

Each checker takes what one or more runs of a suite produced and returns a list of problems,
one sentence each naming the suite, the policy and the sub-metric; an empty list means the
check holds. The same functions judge the repository's suites (``test_conformance.py``) and a
deliberately broken toy suite (``test_checks.py``), which shows that each check can fail.

The criteria, exactly:

- **declarations**: ``Suite.diagnostics`` is a subset of ``Suite.sub_metrics``; every route of
  the suite (and every ``gap`` baseline) names a declared sub-metric that is not a
  diagnostic; every declared sub-metric that is not a diagnostic is routed; every key of the
  optional ``Suite.null_floor`` is a routed sub-metric; every key of the optional
  ``Suite.oracle_ceiling`` is a routed sub-metric and every value a declared diagnostic.
- **summarize keys**: on the oracle run over every category, every key ``summarize`` returns
  is in ``Suite.sub_metrics``, every routed sub-metric comes back as a finite number, every
  key not routed is in ``Suite.diagnostics``, and every value is a finite number or None.
- **complete runs**: under each offline policy, every item is scored (passed or failed);
  none errored or was skipped (an errored item would leave the denominator and could hide a
  scorer that is off the ceiling).
- **oracle at the ceiling**: ``egi/oracle`` scores exactly 100 (to 1e-9) on every route after
  the route's transform (native 1.0 for ``fraction``, 100 for ``percent``, 0 for
  ``invert_fraction`` and ``clip_invert``, the baseline's value for ``gap``), except a
  sub-metric listed in ``Suite.oracle_ceiling``, which must equal (to 1e-9) the diagnostic
  named there: the most the run's tasks allow, where a perfect agent cannot reach the top of
  the scale by the benchmark's own formula (UserBench's ``micro_avg`` averages search and
  question turns worth 0.2 with the answer's 1.0).
- **null at the floor**: ``egi/null`` scores 0 (to 1e-9) on every route after its transform,
  except a sub-metric listed in ``Suite.null_floor``, which must equal that native value; a
  listed value of None means the sub-metric is undefined under ``egi/null`` (Benchforce's
  ``accuracy_finished`` when no session finished) and must come back as None.
- **noisy between**: with ``T_p(r)`` the 0-100 value of route ``r`` under policy ``p`` and
  ``mean_p`` its unweighted mean over the suite's routes: ``mean_null < mean_noisy-0.2 <
  mean_oracle`` (strictly), and for every route ``T_noisy-0.5(r) <= T_noisy-0.2(r)``. A route
  documented as undefined under ``egi/null`` leaves the means but keeps the second check.
- **serial = -n 2**: for one seed and policy (``egi/noisy-0.2``), ``records.jsonl`` and every
  stored trajectory (read by its record: where it is stored differs) are byte-identical
  between a serial run and ``-n 2``.
- **JSON-safe records**: every record, as the controller received it in memory, holds only
  dict (string keys), list, str, int, finite float, bool and None, and equals itself after
  ``json.loads(json.dumps(...))``; every line of ``records.jsonl`` parses as strict JSON (no
  ``NaN`` or ``Infinity``).
- **rescore reproduces**: ``egi-bench report --rescore`` of a run gives exactly (``==``) the
  same sub-metrics, bucket values and EGI as the run.
- **summary columns** (for a suite with the optional ``summary_columns``): on the scored
  records of ``egi/oracle``, of ``egi/noisy-0.2`` and of both as two trials of each task, the
  columns have one row per record; ``finish`` of all the records' column sums gives every
  routed sub-metric; over 30 resamples of the tasks (with replacement, all trials of a task
  together, a repeated task under an id of its own; alternately within each category and over
  all tasks) ``finish`` of the drawn records' column sums equals ``summarize`` of them (1e-9)
  on every key it returns, None where ``summarize`` gives None, a key ``summarize`` leaves
  out left out too; and the bootstrap with the hook gives the intervals it gives without.
- **malformed tool calls scored** (``test_malformed_tool_calls.py``): driven by LiteLLM against
  a scripted OpenAI-compatible server that answers every function-calling turn with a
  malformed call (arguments not JSON, a JSON array / string / number, null arguments, a null /
  empty / unknown tool name, no call id: ``tests.helpers.malformed_calls``), then text, every
  item is a scored failure with a reason (``status`` failed, ``got`` given, no ``error``),
  none errored, skipped or passed, and every shape reached the suite's agent.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pytest_egi.records import load_records
from pytest_egi.scoring.config import Route, RoutingConfig
from pytest_egi.scoring.egi import transform
from pytest_egi.trajectories import TrajectoryReader

ROOT = Path(__file__).resolve().parents[2]
"""The repository (its ``suites/`` folder and ``routing.yaml``)."""
POLICIES = ("egi/oracle", "egi/null", "egi/noisy-0.2", "egi/noisy-0.5")
"""The offline policies every suite is run under."""
DIST_POLICY = "egi/noisy-0.2"
"""The policy run both serially and with ``-n 2`` (it passes some items and fails others)."""
PER_CATEGORY = 3
"""Tasks per category in the conformance profile."""
TOL = 1e-9
CAPTURE_ENV = "EGI_CONFORMANCE_CAPTURE"
"""Set for a run: the file ``tests.conformance.capture`` pickles the received records into."""


def discover_suites(root: Path = ROOT) -> list[str]:
    """Names of the suites under ``root/suites``: every ``suites/<name>/__init__.py`` (name
    not starting with ``_``) whose module exposes ``SUITE``. Imports each candidate."""
    import importlib

    names = []
    for init in sorted((root / "suites").glob("*/__init__.py")):
        name = init.parent.name
        if name.startswith("_"):
            continue
        if getattr(importlib.import_module(f"suites.{name}"), "SUITE", None) is not None:
            names.append(name)
    return names


def conformance_routing(routing_text: str, suite: str, per_category: int = PER_CATEGORY) -> str:
    """The routing file for a conformance run of ``suite``, as YAML text.

    Buckets, routes and suites are kept; ``modes.quick.suites.<suite>`` becomes the suite's
    ``deep`` profile (the whole benchmark: its own keys and seed kept) with every category
    and ``per_category`` tasks of each (``categories`` and ``limit`` dropped), so every routed
    sub-metric can be produced by a small run.
    """
    data = yaml.safe_load(routing_text)
    deep = dict((data["modes"].get("deep") or {}).get("suites", {}).get(suite) or {})
    for key in ("categories", "limit"):
        deep.pop(key, None)
    deep["per_category"] = per_category
    data["modes"]["quick"]["suites"][suite] = deep
    return yaml.safe_dump(data, sort_keys=False)


@dataclass
class Run:
    """One pytest run of a suite under an offline policy.

    Attributes:
        policy: the model under test (``egi/oracle`` ...).
        run_dir: the run directory (``reports/<run_id>``).
        exit_code: pytest's exit status.
        output: pytest's stdout and stderr.
        captured: every record as the controller received it (unpickled, before any JSON).
    """

    policy: str
    run_dir: Path
    exit_code: int
    output: str
    captured: list[Any] = field(default_factory=list)

    @property
    def egi(self) -> dict[str, Any]:
        """The run's ``egi.json``."""
        return json.loads((self.run_dir / "egi.json").read_text(encoding="utf-8"))

    @property
    def records_text(self) -> str:
        """The run's ``records.jsonl`` as written."""
        return (self.run_dir / "records.jsonl").read_text(encoding="utf-8")

    def sub_metrics(self, suite: str) -> dict[str, Any]:
        """The suite's sub-metrics as reported in ``egi.json``."""
        return self.egi["suites"][suite]["sub_metrics"]


def _env(capture: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_ADDOPTS", None)
    if capture is not None:
        env[CAPTURE_ENV] = str(capture)
    return env


def conformance_options(name: str) -> dict[str, str]:
    """The ``--egi-opt`` values a conformance run of suite ``name`` needs: its optional
    ``Suite.conformance_options`` (an opt-in suite's own example tasks), else none."""
    import importlib

    suite = getattr(importlib.import_module(f"suites.{name}"), "SUITE", None)
    return dict(getattr(suite, "conformance_options", None) or {})


def conformance_args(name: str) -> list[str]:
    """:func:`conformance_options` of suite ``name`` as ``--egi-opt`` arguments."""
    return [a for k, v in conformance_options(name).items() for a in ("--egi-opt", f"{name}.{k}={v}")]


def run_suite(target: Path, rootdir: Path, routing: Path, policy: str, out: Path,
              *extra: str, timeout_s: float = 600) -> Run:  # fmt: skip
    """Run ``pytest target`` in a fresh process under ``policy`` (mode quick of ``routing``).

    The repository comes first on ``PYTHONPATH`` (its ``pytest_egi`` and the capture plugin);
    the run directory is the only one under ``out/reports``. A suite folder of ``rootdir``
    gets its :func:`conformance_args` (an opt-in suite's example tasks).

    Raises:
        RuntimeError: pytest exited other than 0 or 1, or wrote no run directory (the
            output is in the message).
    """
    out.mkdir(parents=True, exist_ok=True)
    capture = out / "captured.pickle"
    cmd = [sys.executable, "-m", "pytest", str(target), "--rootdir", str(rootdir),
           "-p", "no:cacheprovider", "-p", "tests.conformance.capture",
           "--egi-model", policy, "--egi-mode", "quick", "--egi-routing", str(routing),
           "--egi-report-dir", str(out / "reports"), "--egi-bootstrap", "0", "-q", *extra]  # fmt: skip
    if target.parent == rootdir / "suites" and (target / "__init__.py").is_file():
        cmd += conformance_args(target.name)
    proc = subprocess.run(cmd, cwd=rootdir, env=_env(capture), capture_output=True, text=True,
                          timeout=timeout_s)  # fmt: skip
    output = proc.stdout + proc.stderr
    runs = sorted((out / "reports").glob("*/egi.json"))
    if proc.returncode not in (0, 1) or len(runs) != 1:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{output[-4000:]}")
    captured = pickle.loads(capture.read_bytes()) if capture.exists() else []
    return Run(policy, runs[0].parent, proc.returncode, output, captured)


def rescore(run_dirs: list[Path], rootdir: Path) -> list[dict[str, Any]]:
    """``egi-bench report --rescore`` of each run (one fresh process for all); returns each
    rescored run's ``egi.json``.

    Raises:
        RuntimeError: the command failed (its output is in the message).
    """
    code = ("import sys\nfrom pytest_egi.cli import main\n"
            "sys.exit(max(main(['report', '--rescore', r]) for r in sys.argv[1:]))")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", code, *map(str, run_dirs)], cwd=rootdir, env=_env(),
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    if proc.returncode not in (0, 1):  # 1: a rescored run that breaches a floor (egi/null's)
        raise RuntimeError(f"egi-bench report --rescore exited {proc.returncode}:\n"
                           f"{(proc.stdout + proc.stderr)[-4000:]}")  # fmt: skip
    out = []
    for run in run_dirs:
        (new,) = sorted(run.glob("rescore-*/egi.json"))[-1:]
        out.append(json.loads(new.read_text(encoding="utf-8")))
    return out


def routes_of(routing: RoutingConfig, suite: str) -> list[Route]:
    """The suite's routes, in file order."""
    return [r for r in routing.routes if r.suite == suite]


def _fmt(x: Any) -> str:
    return repr(round(x, 6)) if isinstance(x, float) else repr(x)


def _native_ceiling(route: Route) -> str:
    return {"fraction": "1.0", "percent": "100", "invert_fraction": "0.0", "clip_invert": "0.0",
            "gap": f"equal to {route.baseline}"}[route.transform]  # fmt: skip


def _native_floor(route: Route) -> str:
    return {"fraction": "0.0", "percent": "0", "invert_fraction": "1.0",
            "clip_invert": f"{route.ceiling} or more",
            "gap": f"{route.baseline} + 1.0"}[route.transform]  # fmt: skip


def check_declarations(suite: Any, routes: list[Route]) -> list[str]:
    """``sub_metrics``, ``diagnostics`` and ``null_floor`` agree with each other and the routes."""
    name = suite.name
    declared = set(getattr(suite, "sub_metrics", None) or ())
    diagnostics = set(getattr(suite, "diagnostics", None) or ())
    problems = []
    if not declared:
        problems.append(f"{name}: Suite.sub_metrics is missing or empty; declare every key summarize returns")
    for key in sorted(diagnostics - declared):
        problems.append(f"{name}: diagnostic {key!r} is not in Suite.sub_metrics")
    used = set()
    for route in routes:
        for key in filter(None, (route.sub_metric, route.baseline)):
            used.add(key)
            if key not in declared:
                problems.append(f"{name}: route {key} -> {route.bucket} names a sub-metric not in "
                                f"Suite.sub_metrics")  # fmt: skip
            elif key in diagnostics:
                problems.append(f"{name}: route {key} -> {route.bucket} names a declared diagnostic")
    for key in sorted(declared - diagnostics - used):
        problems.append(f"{name}: sub-metric {key!r} is neither routed nor in Suite.diagnostics")
    routed = {r.sub_metric for r in routes}
    for key in sorted(set(getattr(suite, "null_floor", None) or {}) - routed):
        problems.append(f"{name}: Suite.null_floor names {key!r}, which is not a routed sub-metric")
    for key, ceiling in sorted((getattr(suite, "oracle_ceiling", None) or {}).items()):
        if key not in routed:
            problems.append(f"{name}: Suite.oracle_ceiling names {key!r}, which is not a routed sub-metric")
        if ceiling not in diagnostics:
            problems.append(f"{name}: Suite.oracle_ceiling gives {ceiling!r} as the ceiling of {key!r}, "
                            "which is not a declared diagnostic")  # fmt: skip
    return problems


def check_summarize_keys(suite: Any, routes: list[Route], summary: dict[str, Any]) -> list[str]:
    """What ``summarize`` returned on a run over every category, against the declarations (a
    key matching one of the optional ``Suite.diagnostic_patterns`` is a declared diagnostic)."""
    from fnmatch import fnmatchcase

    name = suite.name
    patterns = tuple(getattr(suite, "diagnostic_patterns", None) or ())
    matched = {k for k in summary if any(fnmatchcase(k, p) for p in patterns)}
    declared = set(getattr(suite, "sub_metrics", None) or ()) | matched
    diagnostics = set(getattr(suite, "diagnostics", None) or ()) | matched
    routed = {k for r in routes for k in (r.sub_metric, r.baseline) if k}
    problems = []
    for key in sorted(set(summary) - declared):
        problems.append(f"{name}: summarize returned {key!r}, which is not in Suite.sub_metrics")
    for key in sorted(routed):
        value = summary.get(key)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            problems.append(f"{name}: routed sub-metric {key!r} was not produced by summarize "
                            f"(got {_fmt(value)}) on a run over every category")  # fmt: skip
    for key in sorted(set(summary) - routed - diagnostics):
        problems.append(f"{name}: summarize returned {key!r}, which is neither routed nor in "
                        f"Suite.diagnostics")  # fmt: skip
    for key, value in sorted(summary.items()):
        if key not in routed and value is not None and (
            isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
        ):
            problems.append(f"{name}: summarize returned {key!r} = {_fmt(value)}; expected a finite "
                            f"number or None")  # fmt: skip
    return problems


def resample_tasks(records: list[dict[str, Any]], rng: Any,
                   stratified: bool) -> tuple[list[dict[str, Any]], list[int]]:  # fmt: skip
    """One bootstrap-like resample of ``records``: as many tasks as there are, drawn with
    replacement (within each category when ``stratified``, else over all tasks, so a category
    can be left out), all trials of a task together, each repeat of a task under a task id of
    its own (``<id>#<k>``), as :func:`pytest_egi.scoring.egi.bootstrap_egi` presents them.

    Returns:
        The drawn records, and the index in ``records`` of each.
    """
    by_task: dict[Any, list[int]] = {}
    for i, rec in enumerate(records):
        by_task.setdefault(rec["task_id"], []).append(i)
    groups: dict[str, list[list[int]]] = {}
    for task in by_task.values():
        groups.setdefault(records[task[0]]["category"] if stratified else "", []).append(task)
    seen: dict[int, int] = {}
    drawn: list[dict[str, Any]] = []
    rows: list[int] = []
    for _cat, tasks in sorted(groups.items()):
        for _ in range(len(tasks)):
            task = tasks[rng.randrange(len(tasks))]
            k = seen[task[0]] = seen.get(task[0], -1) + 1
            drawn += [dict(records[j], task_id=f"{records[j]['task_id']}#{k}") if k else records[j]
                      for j in task]  # fmt: skip
            rows += task
    return drawn, rows


def check_summary_columns(suite: Any, routes: list[Route], records: list[dict[str, Any]],
                          policy: str, resamples: int = 30, seed: int = 0) -> list[str]:  # fmt: skip
    """The optional ``summary_columns`` hook against ``summarize`` on the scored
    ``records``: one row per record; ``finish`` of the column sums over all the records gives
    every routed sub-metric; and over ``resamples`` resamples of the tasks
    (:func:`resample_tasks`, alternately within each category and over all tasks), ``finish``
    of the column sums of the drawn records equals (to 1e-9) ``summarize`` of them on every
    key ``finish`` returns, None where ``summarize`` gives None, and a key ``summarize``
    leaves out is left out. Only the first problem of each kind is reported."""
    import random

    import numpy as np

    name = suite.name
    cols = suite.summary_columns(records)
    if cols is None:
        return [f"{name}: {policy}: summary_columns returned None on the run's records"]
    values = np.asarray(cols.values, dtype=np.float64)
    if values.shape != (len(records), len(cols.names)):
        return [f"{name}: {policy}: summary_columns values have shape {values.shape}; expected "
                f"({len(records)}, {len(cols.names)})"]  # fmt: skip
    routed = {k for r in routes for k in (r.sub_metric, r.baseline) if k}
    whole = cols.finish(dict(zip(cols.names, values.sum(axis=0).tolist(), strict=True)))
    problems = [f"{name}: {policy}: summary_columns' finish leaves out routed sub-metric {k!r}"
                for k in sorted(routed - set(whole))]  # fmt: skip
    rng = random.Random(seed)
    kinds: set[str] = set()
    for i in range(resamples):
        drawn, rows = resample_tasks(records, rng, stratified=i % 2 == 0)
        got = cols.finish(dict(zip(cols.names, values[rows].sum(axis=0).tolist(), strict=True)))
        want = suite.summarize(drawn)
        for key, value in sorted(got.items()):
            if key not in want:
                kind, text = f"extra {key}", "summarize leaves it out"
            elif value is None or want[key] is None:
                if (value is None) == (want[key] is None):
                    continue
                kind, text = f"none {key}", f"summarize gives {_fmt(want[key])}"
            elif abs(value - want[key]) <= TOL * max(1.0, abs(value), abs(want[key])):
                continue
            else:
                kind, text = f"value {key}", f"summarize gives {want[key]!r}"
            if kind not in kinds:
                kinds.add(kind)
                problems.append(f"{name}: {policy}: resample {i}: finish gives {key} = {value!r}; {text}")
    return problems


def check_complete(suite: str, policy: str, records: list[dict[str, Any]]) -> list[str]:
    """Every item of an offline-policy run was scored (passed or failed)."""
    if not records:
        return [f"{suite}: {policy} recorded no item"]
    problems = []
    for status in sorted({str(r.get("status")) for r in records} - {"passed", "failed"}):
        bad = [r for r in records if str(r.get("status")) == status]
        problems.append(f"{suite}: {policy}: {len(bad)} of {len(records)} items ended {status} "
                        f"(first: {bad[0].get('nodeid')}: {bad[0].get('error')}); an offline "
                        f"policy is always scored")  # fmt: skip
    return problems


def check_ceiling(suite: Any, routes: list[Route], values: dict[str, Any],
                  policy: str = "egi/oracle") -> list[str]:  # fmt: skip
    """Every route at 100 after its transform, or, for a sub-metric in the suite's
    ``oracle_ceiling``, at the value of the diagnostic named there (the most this run's tasks
    allow)."""
    name = suite.name
    ceilings = dict(getattr(suite, "oracle_ceiling", None) or {})
    problems = []
    for route in routes:
        native = values.get(route.sub_metric)
        if route.sub_metric in ceilings:
            key = ceilings[route.sub_metric]
            want = values.get(key)
            if not isinstance(want, (int, float)) or not math.isfinite(want):
                problems.append(f"{name}: {policy} reported no value for {key}, the ceiling of "
                                f"{route.sub_metric} (Suite.oracle_ceiling)")  # fmt: skip
            elif not isinstance(native, (int, float)) or abs(native - want) > TOL:
                problems.append(f"{name}: {policy} scores {route.sub_metric} = {_fmt(native)}; the "
                                f"most this run's tasks allow ({key}, Suite.oracle_ceiling) is "
                                f"{_fmt(want)}")  # fmt: skip
            continue
        y = transform(route, values)
        if y is None:
            problems.append(f"{name}: {policy} produced no value for {route.sub_metric} "
                            f"(got {_fmt(native)})")  # fmt: skip
        elif abs(y - 100.0) > TOL:
            problems.append(f"{name}: {policy} scores {route.sub_metric} = {_fmt(native)} ({y:.3f} "
                            f"after {route.transform}); the ceiling is {_native_ceiling(route)}")  # fmt: skip
    return problems


def check_floor(suite: Any, routes: list[Route], values: dict[str, Any],
                policy: str = "egi/null") -> list[str]:  # fmt: skip
    """Every route at 0 after its transform, or at the suite's documented ``null_floor``."""
    documented = dict(getattr(suite, "null_floor", None) or {})
    problems = []
    for route in routes:
        native = values.get(route.sub_metric)
        if route.sub_metric in documented:
            want = documented[route.sub_metric]
            if want is None:
                if native is not None:
                    problems.append(f"{suite.name}: {policy} scores {route.sub_metric} = "
                                    f"{_fmt(native)}; Suite.null_floor documents it as undefined "
                                    "(None) under egi/null")  # fmt: skip
                continue
            if not isinstance(native, (int, float)) or abs(native - want) > TOL:
                problems.append(f"{suite.name}: {policy} scores {route.sub_metric} = {_fmt(native)}; "
                                f"its documented floor (Suite.null_floor) is {_fmt(want)}")  # fmt: skip
            continue
        y = transform(route, values)
        if y is None:
            problems.append(f"{suite.name}: {policy} produced no value for {route.sub_metric} "
                            f"(got {_fmt(native)})")  # fmt: skip
        elif abs(y) > TOL:
            problems.append(f"{suite.name}: {policy} scores {route.sub_metric} = {_fmt(native)} ({y:.3f} "
                            f"after {route.transform}); the floor is {_native_floor(route)}, or a "
                            f"value documented in Suite.null_floor")  # fmt: skip
    return problems


def check_noisy(
    suite: str,
    routes: list[Route],
    by_policy: dict[str, dict[str, Any]],
    null_undefined: frozenset[str] = frozenset(),
) -> list[str]:
    """``mean_null < mean_noisy-0.2 < mean_oracle`` over the routes (0-100), and
    ``noisy-0.5 <= noisy-0.2`` on every route. ``null_undefined``: sub-metrics documented as
    undefined under ``egi/null`` (``Suite.null_floor`` value None): out of the means, but still
    held to the second check."""
    scaled = {p: [transform(r, by_policy[p]) for r in routes] for p in POLICIES}
    problems = []
    present = []
    monotone = []
    for i, route in enumerate(routes):
        expected_none = {"egi/null"} if route.sub_metric in null_undefined else set()
        missing = [p for p in POLICIES if scaled[p][i] is None and p not in expected_none]
        if missing:
            problems.append(f"{suite}: {route.sub_metric} has no value under {', '.join(missing)}")
        elif expected_none:
            monotone.append(i)
        else:
            present.append(i)
    if not present:
        return problems or [f"{suite}: no routed sub-metric"]
    mean = {p: sum(scaled[p][i] for i in present) / len(present) for p in POLICIES}  # type: ignore[misc]
    lo, mid, hi = mean["egi/null"], mean["egi/noisy-0.2"], mean["egi/oracle"]
    if not lo < mid:
        problems.append(f"{suite}: egi/noisy-0.2 is not above egi/null: mean routed score {mid:.3f} vs "
                        f"{lo:.3f} (0-100 after each route's transform)")  # fmt: skip
    if not mid < hi:
        problems.append(f"{suite}: egi/noisy-0.2 is not below egi/oracle: mean routed score {mid:.3f} vs "
                        f"{hi:.3f} (0-100 after each route's transform)")  # fmt: skip
    for i in sorted(present + monotone):
        a, b = scaled["egi/noisy-0.5"][i], scaled["egi/noisy-0.2"][i]
        if a > b + TOL:  # type: ignore[operator]
            problems.append(f"{suite}: egi/noisy-0.5 scores {routes[i].sub_metric} above egi/noisy-0.2 "
                            f"({a:.3f} > {b:.3f}); scores must not rise with the mistake rate")  # fmt: skip
    return problems


def _unsafe(obj: Any, path: str) -> list[str]:
    """Where ``obj`` holds something JSON cannot carry unchanged, as ``path: reason``."""
    if obj is None or isinstance(obj, (str, bool, int)):
        return []
    if isinstance(obj, float):
        return [] if math.isfinite(obj) else [f"{path or '<record>'} is {obj} (JSON has no NaN or "
                                              f"infinity; use None for a missing value)"]  # fmt: skip
    if isinstance(obj, dict):
        out = []
        for key, value in obj.items():
            if not isinstance(key, str):
                out.append(f"{path or '<record>'} has the non-string key {key!r}")
            out += _unsafe(value, f"{path}.{key}" if path else str(key))
        return out
    if isinstance(obj, list):
        return [p for i, v in enumerate(obj) for p in _unsafe(v, f"{path}[{i}]")]
    return [f"{path or '<record>'} is a {type(obj).__name__} ({obj!r:.60}), not a JSON type"]


def check_json_safe(suite: str, records: list[Any], records_text: str) -> list[str]:
    """Records as received and as written are strict JSON."""
    problems = []
    for rec in records:
        where = rec.get("nodeid") if isinstance(rec, dict) else repr(rec)[:80]
        found = _unsafe(rec, "")
        if not found:
            try:
                if json.loads(json.dumps(rec, allow_nan=False)) != rec:
                    found = ["it changes on a JSON round trip"]
            except (TypeError, ValueError) as exc:
                found = [str(exc)]
        problems += [f"{suite}: record {where}: {p}" for p in found]

    def refuse(token: str) -> Any:
        raise ValueError(f"{token} is not JSON")

    for n, line in enumerate(records_text.splitlines(), 1):
        try:
            json.loads(line, parse_constant=refuse)
        except ValueError as exc:
            problems.append(f"{suite}: records.jsonl line {n}: {exc}")
    return problems


def _first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else key)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path or '<whole>'}: {_fmt(a)} vs {_fmt(b)}"


def check_identical(suite: str, serial: Path, dist: Path) -> list[str]:
    """``records.jsonl`` and each record's stored trajectory byte-identical between two run
    directories (serial, -n 2)."""
    problems = []
    a = (serial / "records.jsonl").read_bytes()
    b = (dist / "records.jsonl").read_bytes()
    if a != b:
        la, lb = a.decode().splitlines(), b.decode().splitlines()
        if len(la) != len(lb):
            problems.append(f"{suite}: records.jsonl has {len(la)} lines serially, {len(lb)} with -n 2")
        for n, (x, y) in enumerate(zip(la, lb, strict=False), 1):
            if x != y:
                try:
                    what = _first_difference(json.loads(x), json.loads(y))
                except ValueError:
                    what = f"{x[:80]!r} vs {y[:80]!r}"
                problems.append(f"{suite}: records.jsonl differs at line {n} (serial vs -n 2), {what}")
                break
    # each record's stored trajectory, read by its place (which process wrote it, at which
    # offset, differs between the runs: raw_at, kept out of records.jsonl)
    with TrajectoryReader(serial) as ra, TrajectoryReader(dist) as rb:
        texts_a = {r["raw_path"]: ra.read_text(r) for r in load_records(serial) if r.get("raw_path")}
        texts_b = {r["raw_path"]: rb.read_text(r) for r in load_records(dist) if r.get("raw_path")}
    if set(texts_a) != set(texts_b):
        only = sorted(set(texts_a) ^ set(texts_b))
        problems.append(f"{suite}: the runs stored trajectories of different trials (serial vs -n 2): "
                        f"{only[:3]}")
    differ = [name for name in sorted(set(texts_a) & set(texts_b)) if texts_a[name] != texts_b[name]]
    if differ:
        problems.append(f"{suite}: {len(differ)} stored trajectories differ (serial vs -n 2), "
                        f"first {differ[0]}")  # fmt: skip
    return problems


def check_rescore(suite: str, run: dict[str, Any], rescored: dict[str, Any]) -> list[str]:
    """Rescoring gives exactly the run's sub-metrics, bucket values and EGI (its full value, or
    its partial value when a bucket is empty)."""
    problems = []
    a, b = run["suites"][suite]["sub_metrics"], rescored["suites"][suite]["sub_metrics"]
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            problems.append(f"{suite}: rescoring {run['model']} changes {key}: {_fmt(a.get(key))} -> "
                            f"{_fmt(b.get(key))}")  # fmt: skip
    for bucket in run["buckets"]:
        x, y = run["buckets"][bucket]["value"], rescored["buckets"][bucket]["value"]
        if x != y:
            problems.append(f"{suite}: rescoring {run['model']} changes {bucket}: {_fmt(x)} -> {_fmt(y)}")
    for key, label in (("value", "EGI"), ("partial_value", "EGI (partial)")):  # DESIGN §4
        if run["egi"].get(key) != rescored["egi"].get(key):
            problems.append(f"{suite}: rescoring {run['model']} changes {label}: "
                            f"{_fmt(run['egi'].get(key))} -> {_fmt(rescored['egi'].get(key))}")  # fmt: skip
    return problems


def check_malformed_scored(suite: str, records: list[dict[str, Any]], sent: dict[str, int],
                           shapes: list[str]) -> list[str]:  # fmt: skip
    """The malformed-tool-calls criterion (module docstring) on one run's records.

    Args:
        suite: the suite's name (for the messages).
        records: the run's records (``load_records``).
        sent: shape -> how many times the scripted model sent it.
        shapes: every shape the model was to send.
    """
    problems = []
    if not records:
        problems.append(f"{suite}: the run wrote no record")
    for rec in records:
        where = f"{suite} {rec.get('task_id')}"
        status = rec.get("status")
        if status != "failed":
            reason = rec.get("error") or rec.get("got")
            problems.append(f"{where}: a model sending malformed tool calls made the item {status}, "
                            f"not a scored failure ({reason})")  # fmt: skip
        elif rec.get("got") in (None, "") or rec.get("error") is not None:
            got, error = rec.get("got"), rec.get("error")
            problems.append(f"{where}: failed with no reason (got {got!r}, error {error!r})")
    unsent = [s for s in shapes if not sent.get(s)]
    if unsent:
        problems.append(f"{suite}: the shapes {', '.join(unsent)} never reached its agent (too few "
                        "conversations offered tools)")  # fmt: skip
    return problems
