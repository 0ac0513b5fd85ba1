"""What the harness costs above bare pytest. Prints figures; asserts nothing.

    python bench/bench_harness_cost.py [--sizes 1,1000,5000,20000] [--workers 1,2] [--quick]
    python bench/bench_harness_cost.py --cold [--quick] [--repeat N]
    python bench/bench_harness_cost.py --modes quick   (the collection and main job at one profile)
    python bench/bench_harness_cost.py --main-job [--quick] [--repeat N]

A throwaway suite is written to a temporary folder (never inside the shipped ``suites``): one
package ``costsuites.noop`` whose ``SUITE`` loads N tasks and whose test does nothing but
``egi.record`` a trivial score, and its ``routing.yaml`` (one route). Beside it, a bare
parametrized pytest test with the same N items. Both run as subprocesses of this interpreter,
with this checkout's ``pytest_egi`` first on ``sys.path``, one after the other at each size,
serially and with ``-n 2``. Every figure is printed beside its anchor (bare pytest, measured in
the same run):

- wall seconds and CPU seconds (user + system of the run and all its processes);
- CPU per item above bare pytest (ms): ``(cpu_egi - cpu_bare) / N``;
- peak RSS (MB) of the controller and of the largest xdist worker: each process's own
  ``ru_maxrss``, written at ``pytest_unconfigure`` by a probe plugin loaded with ``-p``; for
  the main job also the peak PSS (MB) of the process that ran the items together with every
  process under it (its MCP servers: the fork server, the forks and their launchers; sandboxed
  runs), sampled by the probe every 0.25 s (PSS counts a page shared by n processes as 1/n in
  each, so the sum is the tree's real share of memory);
- collection (``--collect-only -q``) of the real ``suites`` at the quick and deep profiles
  with ``--egi-model egi/oracle``, against ``--collect-only`` of one bare test (wall and CPU,
  median of ``--repeat``), three ways: without the task cache (``--egi-no-cache``), with a
  cold one (a fresh ``--egi-cache`` folder: the tasks are loaded and stored) and a warm one
  (the same folder again: the tasks are read back, ``pytest_egi/cache/taskcache.py``);
- ``pytest_egi.scoring.aggregate.aggregate`` over 100,000 synthetic records of the throwaway suite
  (bootstrap off), in this process;
- the bootstrap's share of a 5,000-item run: the time ``aggregate`` spends in its 1,000
  bootstrap resamples of that run's 5,000 records (least of ``--repeat`` tries), over the
  serial run's wall time; with the suite's ``summary_columns`` hook (resamples summed as one
  matrix product) and without it (its ``summarize`` called on every resample); numpy's
  import, which the bootstrap pays once per session, is timed apart (a fresh interpreter,
  median of at least 3) and printed beside them.

- the main job (``--suites`` at the quick profile with ``egi/oracle``; the deep profile too
  unless ``--quick``) serially and with ``-n 2``: wall and CPU seconds (median of ``--repeat``),
  peak RSS of the controller and of the largest worker; the ``-n 2`` wall over the serial wall.

Runs are made as on a user's machine: ``PYTHONDONTWRITEBYTECODE`` is removed from the runs'
environment and one warm-up collection writes the bytecode first (without bytecode caching,
every module of the plugin and the suites is compiled again on every run: about 0.3 s more per
collection here, paid by the harness and not by the one-test anchor).

``--cold``: only the cold collection, beside bare pytest's ``--collect-only`` of one test
measured alternately with it: ``--suites`` at each profile with a fresh ``--egi-cache`` (cold)
and the same folder again (warm), then each suite alone cold, with the CPU seconds, the CPU
above bare, wall seconds and the collecting process's peak RSS, and the targets (issue 27:
2 s quick, 8 s deep, 150 MB).

``--main-job``: only the main job, quick and deep (quick only with ``--quick``, ``--modes deep``
for one), ``--repeat`` times (default 3): its seconds and the range over the repetitions of each
memory figure.

``--quick`` (a smoke run): sizes 1 and 1,000 serially unless given, one repetition, no deep
profile, 10,000 aggregated records, the bootstrap share taken on the largest size run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ROUTING = """\
version: 1
buckets:
  M1: {name: Outcome, weight: 0.28}
  M2: {name: Tools, weight: 0.22, floor: 70}
  M3: {name: Planning, weight: 0.16}
  M4: {name: Grounding, weight: 0.14}
  M5: {name: Safety, weight: 0.14, floor: 70}
  M6: {name: Engineering, weight: 0.06}
suites: [noop]
routes:
  - {suite: noop, sub_metric: score, bucket: M1, transform: fraction}
modes:
  quick:
    seed: 1
    suites:
      noop: {limit: __N__}
  deep:
    seed: 1
    suites:
      noop: {limit: __N__}
"""

SUITE_INIT = '''\
"""A suite whose tasks do nothing: the harness's own cost."""
from pydantic import BaseModel

from pytest_egi.suite import Task, TaskScore


class Options(BaseModel):
    pass


class NoopSuite:
    name = "noop"
    version = "1"
    categories = ("c0", "c1")
    options_model = Options
    sub_metrics = frozenset({"score"})
    diagnostics = frozenset()

    def load_tasks(self, profile, options):
        return [Task(id=f"t{i:05d}", category=self.categories[i % 2], data={"i": i})
                for i in range(profile.limit or 1)]

    def reference_policy(self, task, options, noise):
        raise NotImplementedError("the noop test calls no model")

    def score(self, task, trajectory, options, judge=None):
        return TaskScore(success=True, values={"score": 1.0}, expected="ok", got="ok")

    def summarize(self, records):
        values = [r["values"]["score"] for r in records]
        return {"score": sum(values) / len(values) if values else None}

    def summary_columns(self, records):
        from pytest_egi.suite import SummaryColumns

        def finish(sums):
            return {"score": sums["score"] / sums["n"] if sums["n"] else None}

        rows = [[r["values"]["score"], 1.0] for r in records]
        return SummaryColumns.from_rows(("score", "n"), rows, finish)


SUITE = NoopSuite()
'''

SUITE_TEST = """\
from costsuites.noop import SUITE


def test_task(egi_task, egi):
    egi.record(SUITE.score(egi_task, {}, egi.options), {"messages": [], "final_answer": "ok"})
"""

BARE_TEST = """\
import os

import pytest


@pytest.mark.parametrize("i", range(int(os.environ.get("BENCH_N", "1"))))
def test_task(i):
    assert i >= 0
"""

PROBE = """\\
import json
import os
import resource
import threading
import time

_PEAK = {"tree_pss_kb": 0}


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    ppid = int(fh.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(name))
    return kids


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _sample() -> None:
    me = os.getpid()
    while True:
        kids, tree, todo = _children(), [], [me]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(kids.get(pid, ()))
        _PEAK["tree_pss_kb"] = max(_PEAK["tree_pss_kb"], sum(_pss_kb(p) for p in tree))
        time.sleep(0.25)


def pytest_configure(config):
    runs_items = hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None)
    if runs_items and os.environ.get("BENCH_TREE") and os.environ.get("BENCH_PROBE"):
        threading.Thread(target=_sample, daemon=True, name="bench-tree-pss").start()


def pytest_unconfigure(config):
    out = os.environ.get("BENCH_PROBE")
    if out:
        ru = resource.getrusage(resource.RUSAGE_SELF)
        role = "worker" if hasattr(config, "workerinput") else "controller"
        row = {"role": role, "maxrss_kb": ru.ru_maxrss, "tree_pss_kb": _PEAK["tree_pss_kb"]}
        with open(out, "a") as fh:
            fh.write(json.dumps(row) + "\\n")
"""


@dataclass
class Figures:
    """One pytest run: wall and CPU seconds (all its processes), peak RSS in MB of the
    controller and of the largest worker (None when it ran serially)."""

    wall: float
    cpu: float
    controller_mb: float
    worker_mb: float | None
    tree_mb: float | None = None
    """Peak PSS in MB of the process that ran the items (the largest worker, or the serial
    controller) together with every process under it: its MCP servers (the fork server, the
    forks, their launchers), sandboxed runs. Sampled every 0.25 s (``BENCH_TREE`` set), so a
    process living less than that may be missed; None when not sampled."""


def write_project(folder: Path) -> None:
    """The throwaway suite, the bare test, the probe plugin and a ``pytest.ini`` in ``folder``."""
    (folder / "pytest.ini").write_text("[pytest]\naddopts = -p no:anyio\n")
    (folder / "conftest.py").write_text("")
    (folder / "_benchprobe.py").write_text(PROBE)
    suite = folder / "costsuites" / "noop"
    suite.mkdir(parents=True)
    (folder / "costsuites" / "__init__.py").write_text("")
    (suite / "__init__.py").write_text(SUITE_INIT)
    (suite / "test_noop.py").write_text(SUITE_TEST)
    (folder / "bare").mkdir()
    (folder / "bare" / "test_bare.py").write_text(BARE_TEST)
    (folder / "one").mkdir()
    (folder / "one" / "test_one.py").write_text("def test_one():\n    assert True\n")
    set_size(folder, 1)


def set_size(folder: Path, n: int) -> None:
    """Make both the throwaway suite and the bare test hold ``n`` items."""
    (folder / "routing.yaml").write_text(ROUTING.replace("__N__", str(n)))


def _env(folder: Path, n: int) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(folder), *filter(None, [env.get("PYTHONPATH")])])
    env["BENCH_N"] = str(n)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's machine caches bytecode
    return env


def run(cmd: list[str], cwd: Path, env: dict[str, str], ok: tuple[int, ...] = (0,)) -> Figures:
    """Run ``cmd`` with the probe plugin and return its figures.

    Raises:
        SystemExit: the run exited with a status not in ``ok`` (with the end of its output).
    """
    with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as probe:
        env = dict(env, BENCH_PROBE=probe.name)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd + ["-p", "_benchprobe"], cwd=cwd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rows = [json.loads(line) for line in probe.read().splitlines() if line.strip()]
    if proc.returncode not in ok:
        raise SystemExit(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
        )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ctrl = max((r["maxrss_kb"] for r in rows if r["role"] == "controller"), default=0) / 1024
    workers = [r["maxrss_kb"] / 1024 for r in rows if r["role"] == "worker"]
    ran_items = [r for r in rows if r["role"] == "worker"] or [r for r in rows if r["role"] == "controller"]
    trees = [r.get("tree_pss_kb", 0) / 1024 for r in ran_items]
    tree = max(trees) if trees and max(trees) > 0 else None
    return Figures(wall, cpu, ctrl, max(workers) if workers else None, tree)


def pytest_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]


def item_runs(
    folder: Path, sizes: list[int], workers: list[int]
) -> dict[tuple[int, int], tuple[Figures, Figures]]:
    """(size, workers) -> (throwaway suite's figures, bare pytest's figures)."""
    out = {}
    for n in sizes:
        set_size(folder, n)
        env = _env(folder, n)
        for w in workers:
            xdist = ["-n", str(w)] if w > 1 else []
            with tempfile.TemporaryDirectory() as reports:
                egi = run(pytest_cmd("costsuites", "--egi-model", "egi/oracle", "--egi-report-dir", reports,
                                     *xdist), folder, env)  # fmt: skip
            bare = run(pytest_cmd("bare", "-p", "no:egi", *xdist), folder, env)
            out[(n, w)] = (egi, bare)
            print(
                f"  ran {n} item{'s' if n != 1 else ''}, workers {w}: egi {egi.wall:.1f} s, "
                f"bare {bare.wall:.1f} s",
                file=sys.stderr,
            )
    return out


CACHE_STATES = ("no cache", "cold cache", "warm cache")


def collection(
    folder: Path, modes: list[str], repeat: int, path: str
) -> tuple[dict[tuple[str, str], tuple[float, float]], tuple[float, float]]:
    """Median (wall s, CPU s) of ``--collect-only`` of ``path`` (the real suites) per (mode,
    task cache state of :data:`CACHE_STATES`), and of one bare test."""
    env = _env(folder, 1)
    times: dict[tuple[str, str], list[Figures]] = {(m, c): [] for m in modes for c in CACHE_STATES}
    bare: list[Figures] = []
    for _ in range(repeat):
        for m in modes:
            cmd = pytest_cmd(path, "--collect-only", "--egi-model", "egi/oracle", "--egi-mode", m,
                             "-p", "no:anyio")  # fmt: skip
            times[(m, "no cache")].append(run(cmd + ["--egi-no-cache"], ROOT, env))
            with tempfile.TemporaryDirectory() as cache:
                times[(m, "cold cache")].append(run(cmd + ["--egi-cache", cache], ROOT, env))
                times[(m, "warm cache")].append(run(cmd + ["--egi-cache", cache], ROOT, env))
        bare.append(run(pytest_cmd("one", "--collect-only", "-p", "no:egi"), folder, env))

    def median(figures: list[Figures]) -> tuple[float, float]:
        return statistics.median(f.wall for f in figures), statistics.median(f.cpu for f in figures)

    return {k: median(v) for k, v in times.items()}, median(bare)


MAIN_JOB_RUNS = ((1, "serial"), (2, "-n 2, first run"), (2, "-n 2, later run"))
"""The main job's runs, in this order, in one fresh ``--egi-cache`` folder per repetition: the
serial run fills the task cache (and learns no item times: only ``-n`` does), so the first
``-n 2`` run places the suites with nothing learned (their declared ``item_seconds``, else
item counts) and the later one by the first one's item times."""


def main_job(folder: Path, modes: list[str], repeat: int, path: str) -> dict[tuple[str, str], Figures]:
    """(mode, run of :data:`MAIN_JOB_RUNS`) -> median figures of ``pytest <path> --egi-model
    egi/oracle --egi-mode <mode>`` serially and with ``-n 2`` (first and later run); RSS
    figures are the largest of the runs."""
    return summarize_runs(main_job_runs(folder, modes, repeat, path))


def summarize_runs(every: dict[tuple[str, str], list[Figures]]) -> dict[tuple[str, str], Figures]:
    """The median wall and CPU seconds of each (mode, run) and the largest RSS and PSS figures."""
    out: dict[tuple[str, str], Figures] = {}
    for key, figures in every.items():
        workers_mb = [f.worker_mb for f in figures if f.worker_mb is not None]
        trees_mb = [f.tree_mb for f in figures if f.tree_mb is not None]
        out[key] = Figures(
            statistics.median(f.wall for f in figures),
            statistics.median(f.cpu for f in figures),
            max(f.controller_mb for f in figures),
            max(workers_mb) if workers_mb else None,
            max(trees_mb) if trees_mb else None,
        )
    return out


def main_job_runs(
    folder: Path, modes: list[str], repeat: int, path: str
) -> dict[tuple[str, str], list[Figures]]:
    """(mode, run of :data:`MAIN_JOB_RUNS`) -> the figures of each of the ``repeat`` runs (see
    :func:`main_job`)."""
    env = dict(_env(folder, 1), BENCH_TREE="1")
    out: dict[tuple[str, str], list[Figures]] = {}
    for m in modes:
        runs: dict[str, list[Figures]] = {label: [] for _w, label in MAIN_JOB_RUNS}
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:
                for w, label in MAIN_JOB_RUNS:
                    with tempfile.TemporaryDirectory() as reports:
                        xdist = ["-n", str(w)] if w > 1 else []
                        runs[label].append(run(pytest_cmd(
                            path, "--egi-model", "egi/oracle", "--egi-mode", m, "--egi-report-dir", reports,
                            "--egi-cache", cache, "-p", "no:anyio", *xdist), ROOT, env))  # fmt: skip
                    f = runs[label][-1]
                    memory = [f"controller {f.controller_mb:.0f} MB"]
                    memory += [f"largest worker {f.worker_mb:.0f} MB"] if f.worker_mb else []
                    memory += [f"with its servers {f.tree_mb:.0f} MB PSS"] if f.tree_mb else []
                    print(f"  main job {m}, {label}: {f.wall:.1f} s; {', '.join(memory)}", file=sys.stderr)
        for label, figures in runs.items():
            out[(m, label)] = figures
    return out


def main_job_only(args: argparse.Namespace) -> None:
    """``--main-job``: only the main job (:func:`main_job_runs`), quick and deep (quick only
    with ``--quick``; ``--modes`` names them), ``--repeat`` times (default 3): per run, the
    median wall and CPU seconds and the range over the repetitions of the controller's peak
    RSS, the largest worker's peak RSS and that worker's peak PSS with its servers, with the
    load average."""
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    repeat = args.repeat or 3
    modes = args.modes.split(",") if args.modes else ["quick"] if args.quick else ["quick", "deep"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder)
        warm_up(folder, args.suites)
        every = main_job_runs(folder, modes, repeat, args.suites)

    def span(values: list[float | None]) -> str:
        got = sorted(v for v in values if v is not None)
        if not got:
            return "-"
        return f"{got[0]:.0f}" if round(got[0]) == round(got[-1]) else f"{got[0]:.0f}-{got[-1]:.0f}"

    print(f"main job: {args.suites} with egi/oracle ({repeat} repetitions, a fresh task cache each; "
          "median seconds, ranges of MB)")  # fmt: skip
    print("profile | run | wall s | CPU s | controller RSS MB | largest worker RSS MB "
          "| largest worker with its servers, PSS MB")
    for (m, label), figures in every.items():
        wall = statistics.median(f.wall for f in figures)
        cpu = statistics.median(f.cpu for f in figures)
        mbs = [span([f.controller_mb for f in figures]), span([f.worker_mb for f in figures]),
               span([f.tree_mb for f in figures])]  # fmt: skip
        print(f"{m} | {label} | {wall:.2f} | {cpu:.2f} | " + " | ".join(mbs))
    print(f"load average (1, 5, 15 min) at start: {load_start}; at end: "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def cold_collection_per_suite(
    folder: Path, mode: str, repeat: int, path: str = "suites"
) -> dict[str, Figures]:
    """Suite -> median figures of a cold ``--collect-only`` of ``suites/<suite>`` (a fresh
    ``--egi-cache``: its tasks loaded and stored), to find which suite a cold collection pays
    for; the controller's peak RSS is that of the one collecting process. Every suite under
    ``path`` when it is the ``suites`` folder, else the one suite folder ``path`` names."""
    env = _env(folder, 1)
    if (ROOT / path).resolve() == (ROOT / "suites").resolve():
        names = [f"suites/{p.parent.name}" for p in sorted((ROOT / "suites").glob("*/test_*.py"))]
    else:
        names = [path]
    out: dict[str, Figures] = {}
    for name in names:
        runs = []
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as cache:  # exit 5: an opt-in suite collects nothing alone
                runs.append(run(pytest_cmd(name, "--collect-only", "--egi-model", "egi/oracle",
                                           "--egi-mode", mode, "--egi-cache", cache, "-p", "no:anyio"),
                                ROOT, env, ok=(0, 5)))  # fmt: skip
        short = name.removeprefix("suites/")
        out[short] = Figures(statistics.median(f.wall for f in runs), statistics.median(f.cpu for f in runs),
                             max(f.controller_mb for f in runs), None)  # fmt: skip
        print(f"  cold collection {mode} {short}: {out[short].cpu:.2f} s CPU", file=sys.stderr)
    return out


COLD_TARGETS = {"quick": 2.0, "deep": 8.0}
"""CPU seconds a cold collection of the shipped suites should stay within (issue 27), and
:data:`COLD_RSS_TARGET_MB` for the one collecting process's peak RSS."""
COLD_RSS_TARGET_MB = 150


def cold_collection(
    folder: Path, modes: list[str], repeat: int, path: str
) -> tuple[dict[tuple[str, str], Figures], Figures]:
    """(mode, ``"cold"`` or ``"warm"``) -> median figures of ``--collect-only`` of ``path``
    with a fresh ``--egi-cache`` (the first run: cold, its tasks loaded and stored) and the
    same folder again (warm), the peak RSS the largest of the runs; and bare pytest's
    ``--collect-only`` of one test (median figures), measured alternately with them."""
    env = _env(folder, 1)
    runs: dict[tuple[str, str], list[Figures]] = {(m, s): [] for m in modes for s in ("cold", "warm")}
    bare: list[Figures] = []
    for _ in range(repeat):
        for m in modes:
            cmd = pytest_cmd(path, "--collect-only", "--egi-model", "egi/oracle", "--egi-mode", m,
                             "-p", "no:anyio")  # fmt: skip
            with tempfile.TemporaryDirectory() as cache:
                runs[(m, "cold")].append(run(cmd + ["--egi-cache", cache], ROOT, env))
                runs[(m, "warm")].append(run(cmd + ["--egi-cache", cache], ROOT, env))
            bare.append(run(pytest_cmd("one", "--collect-only", "-p", "no:egi"), folder, env))

    def median(figures: list[Figures]) -> Figures:
        return Figures(statistics.median(f.wall for f in figures), statistics.median(f.cpu for f in figures),
                       max(f.controller_mb for f in figures), None)  # fmt: skip

    return {k: median(v) for k, v in runs.items()}, median(bare)


def print_cold(
    path: str, repeat: int, figures: dict[tuple[str, str], Figures], bare: Figures,
    per_suite: dict[str, dict[str, Figures]],
) -> None:
    """Print the cold (and warm) collection of ``path`` and of each suite beside bare pytest."""
    print(f"cold collection: {path} --collect-only with a fresh --egi-cache (median of {repeat}), "
          f"beside bare pytest --collect-only of 1 test (CPU {bare.cpu:.2f} s, wall {bare.wall:.2f} s, "
          f"peak RSS {bare.controller_mb:.0f} MB)")  # fmt: skip
    print("profile | task cache | CPU s | CPU above bare s | wall s | peak RSS MB | target CPU s / MB")
    for (m, state), f in figures.items():
        target = f"{COLD_TARGETS.get(m, 0):.0f} / {COLD_RSS_TARGET_MB}" if state == "cold" else "-"
        above = f.cpu - bare.cpu
        print(f"{m} | {state} | {f.cpu:.2f} | {above:.2f} | {f.wall:.2f} | {f.controller_mb:.0f} | {target}")
    for m, suites in per_suite.items():
        print(f"cold collection of each suite alone, {m} (median of {repeat})")
        print("suite | CPU s | CPU above bare s | wall s | peak RSS MB")
        for name, f in suites.items():
            print(f"{name} | {f.cpu:.2f} | {f.cpu - bare.cpu:.2f} | {f.wall:.2f} | {f.controller_mb:.0f}")
    print()


def warm_up(folder: Path, path: str) -> None:
    """Collect once, so the runs that are measured find the bytecode written."""
    env = _env(folder, 1)
    run(pytest_cmd(path, "--collect-only", "--egi-model", "egi/oracle", "-p", "no:anyio"), ROOT, env)
    run(pytest_cmd("costsuites", "bare", "one", "--collect-only", "--egi-model", "egi/oracle"), folder, env)


def synthetic_records(n: int) -> list[dict]:
    """``n`` records of the throwaway suite as the recorder writes them (all passed)."""
    base = {"schema": 1, "suite": "noop", "suite_module": "costsuites.noop", "suite_version": "1",
            "trial": 1, "model": "egi/oracle", "judge": "egi/rules", "status": "passed",
            "success": True, "expected": "ok", "got": "ok", "details": {}, "usage": {},
            "error": None, "error_kind": None, "termination": "submitted", "finish_reason": None,
            "turns": 0, "no_answer": False}  # fmt: skip
    return [
        dict(
            base,
            task_id=f"t{i:05d}",
            category=f"c{i % 2}",
            nodeid=f"costsuites/noop/test_noop.py::test_task[t{i:05d}]",
            values={"score": 1.0},
            raw_path=f"raw/noop/t{i:05d}.json",
        )  # fmt: skip
        for i in range(n)
    ]


def aggregate_s(folder: Path, n: int, resamples: int, columns: bool = True) -> float:
    """Seconds ``pytest_egi.scoring.aggregate.aggregate`` takes over ``n`` synthetic records; with
    ``columns`` False, as if the throwaway suite had no ``summary_columns`` hook."""
    sys.path[:0] = [str(ROOT), str(folder)]
    from costsuites.noop import NoopSuite

    from pytest_egi.scoring.aggregate import aggregate
    from pytest_egi.scoring.config import apply_floors, apply_weights, load_routing

    routing, _ = load_routing(folder / "routing.yaml")
    weights, floors = apply_weights(routing, {}), apply_floors(routing, {})
    records = synthetic_records(n)
    # imports, numpy's among them (the bootstrap imports it once per session: numpy_import_s)
    aggregate(records[:10], routing, weights=weights, floors=floors, bootstrap_resamples=1)
    hook = NoopSuite.summary_columns
    if not columns:
        del NoopSuite.summary_columns
    try:
        start = time.perf_counter()
        aggregate(records, routing, weights=weights, floors=floors, bootstrap_resamples=resamples)
        return time.perf_counter() - start
    finally:
        NoopSuite.summary_columns = hook


def numpy_import_s() -> float:
    """Seconds a fresh interpreter takes to import numpy: what a session's bootstrap adds
    once, on top of its resamples (the bootstrap figures leave it out)."""
    code = "import time; t = time.perf_counter(); import numpy; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default=None, help="item counts, comma-separated (default 1,1000,5000,20000)"
    )
    parser.add_argument(
        "--workers", default=None, help="worker counts, comma-separated; 1 = serial (default 1,2)"
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help="repetitions of the collection runs (default 3)"
    )
    parser.add_argument("--suites", default="suites", help="what to collect, relative to the checkout")
    parser.add_argument("--quick", action="store_true", help="a fast smoke run (see the module docstring)")
    parser.add_argument("--modes", default=None,
                        help="profiles of the collection and main-job runs (also with --main-job), "
                             "comma-separated (default quick,deep; quick with --quick)")
    parser.add_argument("--per-suite", action="store_true",
                        help="also a cold collection of each suite alone (CPU and peak RSS)")
    parser.add_argument("--cold", action="store_true",
                        help="only the cold collection (all suites, then each alone) beside bare pytest")
    parser.add_argument("--main-job", action="store_true",
                        help="only the main job (serial, -n 2 first and later run), its memory as ranges")
    args = parser.parse_args()
    if args.cold:
        cold_only(args)
        return
    if args.main_job:
        main_job_only(args)
        return
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())  # printed at the end
    sizes = [int(s) for s in (args.sizes or ("1,1000" if args.quick else "1,1000,5000,20000")).split(",")]
    workers = [int(w) for w in (args.workers or ("1" if args.quick else "1,2")).split(",")]
    repeat = args.repeat or (1 if args.quick else 3)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder)
        warm_up(folder, args.suites)
        runs = item_runs(folder, sizes, workers)
        modes = args.modes.split(",") if args.modes else ["quick"] if args.quick else ["quick", "deep"]
        collect, collect_bare = collection(folder, modes, repeat, args.suites)
        jobs = main_job(folder, modes, repeat, args.suites)
        per_suite = {}
        if args.per_suite:
            per_suite = {m: cold_collection_per_suite(folder, m, repeat, args.suites) for m in modes}
        set_size(folder, 2)
        n_agg = 10_000 if args.quick else 100_000
        agg = aggregate_s(folder, n_agg, 0)
        serial = sorted(n for n, w in runs if w == 1)
        n_boot = 5000 if 5000 in serial or not serial else serial[-1]
        if (n_boot, 1) not in runs:
            runs.update(item_runs(folder, [n_boot], [1]))
        # the least disturbed of a few tries: this process competes with whatever else runs
        boot = {
            columns: min(aggregate_s(folder, n_boot, 1000, columns) - aggregate_s(folder, n_boot, 0, columns)
                         for _ in range(repeat))
            for columns in (True, False)
        }  # fmt: skip
        numpy_s = statistics.median(numpy_import_s() for _ in range(max(repeat, 3)))
    print("harness cost per item (throwaway suite vs bare pytest, same items, same run)")
    head = ("items", "workers", "wall s egi/bare", "CPU s egi/bare", "CPU ms/item above bare",
            "controller RSS MB egi/bare", "worker RSS MB egi/bare")  # fmt: skip
    print(" | ".join(head))
    for (n, w), (e, b) in sorted(runs.items()):
        worker = f"{e.worker_mb:.0f} / {b.worker_mb:.0f}" if e.worker_mb and b.worker_mb else "-"
        above = (e.cpu - b.cpu) / n * 1000
        ctrl = f"{e.controller_mb:.0f} / {b.controller_mb:.0f}"
        wall, cpu = f"{e.wall:.2f} / {b.wall:.2f}", f"{e.cpu:.2f} / {b.cpu:.2f}"
        print(f"{n} | {w} | {wall} | {cpu} | {above:.2f} | {ctrl} | {worker}")
    print()
    bare = f"bare pytest --collect-only of 1 test: wall {collect_bare[0]:.2f} s, CPU {collect_bare[1]:.2f} s"
    print(f"collection (median of {repeat}; {bare})")
    print(f"profile | task cache | {args.suites} --collect-only wall s / CPU s | above bare wall s / CPU s")
    for (m, state), (wall, cpu) in collect.items():
        above = f"{wall - collect_bare[0]:.2f} / {cpu - collect_bare[1]:.2f}"
        print(f"{m} | {state} | {wall:.2f} / {cpu:.2f} | {above}")
    print()
    print("aggregation and bootstrap")
    print(f"aggregate of {n_agg} records, bootstrap off: {agg:.2f} s")
    wall = runs[(n_boot, 1)][0].wall
    for columns, how in ((True, "with summary_columns"), (False, "summarize per resample")):
        print(f"bootstrap (1000 resamples, {how}) of a {n_boot}-item run: {boot[columns]:.2f} s, "
              f"{100 * boot[columns] / wall:.1f}% of the run's serial wall time ({wall:.2f} s)")  # fmt: skip
    print(f"numpy import, once per session by the bootstrap (not in the two figures above): {numpy_s:.2f} s, "
          f"{100 * numpy_s / wall:.1f}% of that run")  # fmt: skip
    print()
    for m, suites in per_suite.items():
        print(f"cold collection of each suite alone, {m} (median of {repeat}; "
              f"bare: CPU {collect_bare[1]:.2f} s)")
        print("suite | wall s | CPU s | CPU above bare s | peak RSS MB")
        for name, f in suites.items():
            above = f.cpu - collect_bare[1]
            print(f"{name} | {f.wall:.2f} | {f.cpu:.2f} | {above:.2f} | {f.controller_mb:.0f}")
        print()
    print(f"main job: {args.suites} with egi/oracle (median of {repeat}; a fresh task cache per repetition)")
    print("profile | run | wall s | CPU s | controller RSS MB | largest worker RSS MB "
          "| largest worker with its servers, PSS MB | wall over serial")
    for (m, label), f in jobs.items():
        worker = f"{f.worker_mb:.0f}" if f.worker_mb is not None else "-"
        tree = f"{f.tree_mb:.0f}" if f.tree_mb is not None else "-"
        ratio = f.wall / jobs[(m, "serial")].wall
        figures = f"{f.wall:.2f} | {f.cpu:.2f} | {f.controller_mb:.0f} | {worker} | {tree}"
        print(f"{m} | {label} | {figures} | {ratio:.2f}")
    print(f"load average (1, 5, 15 min) at start: {load_start}; at end: "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


def cold_only(args: argparse.Namespace) -> None:
    """``--cold``: the cold and warm collection of ``--suites`` and the cold collection of each
    suite alone, quick and deep (quick only with ``--quick``), beside bare pytest; nothing else."""
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())
    repeat = args.repeat or (1 if args.quick else 3)
    modes = args.modes.split(",") if args.modes else ["quick"] if args.quick else ["quick", "deep"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_project(folder)
        warm_up(folder, args.suites)
        figures, bare = cold_collection(folder, modes, repeat, args.suites)
        per_suite = {m: cold_collection_per_suite(folder, m, repeat, args.suites) for m in modes}
    print_cold(args.suites, repeat, figures, bare, per_suite)
    print(f"load average (1, 5, 15 min) at start: {load_start}; at end: "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
