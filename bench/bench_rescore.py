"""What ``egi-bench report --rescore`` costs on a stored run. Prints figures; asserts nothing.

    python bench/bench_rescore.py [--run DIR] [--mode quick|deep] [--model egi/noisy-0.3]
                                  [--suites a,b] [--without-suite locobench] [--repeat 3]
                                  [--baseline CHECKOUT]

Without ``--run``, a run is made first in a temporary folder (``pytest suites[/<suite>...]
--egi-model <model> --egi-mode <mode> -n 2``; a deep run of every suite takes 10-20 minutes
on a 2-core machine, so give ``--run`` a kept one, made with ``--egi-report-dir DIR
--egi-run-id ID``). ``--without-suite NAME`` rescores a copy of the run without that suite's
records (its ``raw/`` shared by a link): in a run folder made before LoCoBench kept its
checks' results in the trajectories, its scorer runs each answer's tests in the sandbox again,
minutes for a deep run, which would hide every other cost.

Each rescore runs in a fresh interpreter (imports counted, as a user's ``egi-bench`` pays
them), writing its ``rescore-*`` folder inside the run, removed afterwards. Printed: the
records rescored, wall and CPU seconds (user + system of the process, median of
``--repeat``) and records per second of wall time, and the load average of the machine
before and after (the CPU seconds are the figure to read on a shared machine).

``--baseline CHECKOUT`` rescores the same run with another checkout's code as well (its
``.venv/bin/python`` when it has one, run from its root so that its ``pytest_egi`` and
``suites`` are the ones imported), the two alternating run by run: "before" is the baseline's
figures, "after" this checkout's, with the CPU ratio. Each checkout rescores a stand-in for
the run whose ``egi.json`` names that checkout as the rootdir (:func:`shadow`), so that each
imports its own ``suites``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RESCORE = "import sys; from pytest_egi.cli import main; sys.exit(main(['report', '--rescore', sys.argv[1]]))"


def make_run(out: Path, mode: str, model: str, suites: list[str]) -> Path:
    """Run ``suites`` (all when empty) at ``mode`` with ``model`` and ``-n 2`` into ``out``;
    returns the run folder.

    Raises:
        SystemExit: pytest wrote no run folder (the end of its output is in the message).
    """
    paths = [str(ROOT / "suites" / s) for s in suites] or [str(ROOT / "suites")]
    cmd = [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider", "-n", "2",
           "--egi-model", model, "--egi-mode", mode, "--egi-report-dir", str(out),
           "--egi-run-id", "bench"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    run = out / "bench"
    if not (run / "egi.json").is_file():
        raise SystemExit(f"the run wrote no egi.json (pytest exited {proc.returncode}):\n"
                         f"{proc.stdout[-2000:]}")
    return run


def without_suite(run: Path, suite: str, out: Path) -> Path:
    """A copy of ``run`` in ``out`` without ``suite``'s records and timings (``raw/`` linked)."""
    out.mkdir(parents=True)
    for name in ("egi.json", "run.json", "results.csv"):
        if (run / name).exists():
            shutil.copy2(run / name, out / name)
    os.symlink(run / "raw", out / "raw")
    marks = (f'"suite": "{suite}"', f'"suite":"{suite}"')
    for name in ("records.jsonl", "timings.jsonl"):
        if (run / name).exists():
            lines = (run / name).read_text(encoding="utf-8").splitlines(keepends=True)
            kept = "".join(x for x in lines if not any(m in x for m in marks))
            (out / name).write_text(kept, encoding="utf-8")
    return out


def shadow(run: Path, root: Path, out: Path) -> Path:
    """A folder ``out`` standing for ``run`` (every entry linked, ``rescore-*`` left out) whose
    ``egi.json`` names ``root`` as the rootdir. The rescore puts a run's rootdir first on
    ``sys.path`` unless it is there already (``pytest_egi.cli._importable_suites``): rescoring
    ``run`` itself from another checkout with that checkout on ``PYTHONPATH`` would import the
    suites of the checkout the run was made in, and time their code, not ``root``'s."""
    out.mkdir(parents=True)
    for entry in run.iterdir():
        if entry.name.startswith("rescore-"):
            continue
        if entry.name == "egi.json":
            egi = json.loads(entry.read_text(encoding="utf-8"))
            egi.setdefault("config", {})["rootdir"] = str(root)
            (out / entry.name).write_text(json.dumps(egi), encoding="utf-8")
        else:
            os.symlink(entry.resolve(), out / entry.name)
    return out


def rescore_once(run: Path, root: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one ``egi-bench report --rescore run`` in a
    fresh interpreter with the code of checkout ``root`` (its ``.venv/bin/python`` when it has
    one, run from ``root`` with ``root`` first on ``PYTHONPATH``); its ``rescore-*`` folder is
    removed.

    Raises:
        SystemExit: the rescore exited other than 0 or 1 (1: the rescored run fails its gate).
    """
    python = root / ".venv" / "bin" / "python" if root != ROOT else Path(sys.executable)
    if not python.exists():
        python = Path(sys.executable)
    paths = [str(root), *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    proc = subprocess.run([str(python), "-c", RESCORE, str(run)], cwd=root, env=env,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"rescore exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    for folder in run.glob("rescore-*"):
        shutil.rmtree(folder)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _figures(runs: list[tuple[float, float]]) -> tuple[float, float, str]:
    """Median wall and CPU seconds of ``runs`` and their walls as text."""
    return (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs),
            ", ".join(f"{w:.2f}" for w, _ in runs))  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    """Parse the options, make or take the run, and print the rescore's figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, help="a kept run folder (default: make one)")
    ap.add_argument("--mode", default="quick", choices=("quick", "deep"))
    ap.add_argument("--model", default="egi/noisy-0.3")
    ap.add_argument("--suites", default="", help="comma-separated suites of the run made (default: all)")
    ap.add_argument("--without-suite", default="", help="comma-separated suites whose records are left out")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another checkout whose code rescores the run too (before)")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    baseline_runs: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run or make_run(Path(tmp) / "reports", args.mode, args.model,
                                   [s for s in args.suites.split(",") if s])  # fmt: skip
        for i, suite in enumerate(s for s in args.without_suite.split(",") if s):
            run = without_suite(run, suite, Path(tmp) / f"without-{i}-{suite}")
        records = sum(1 for line in (run / "records.jsonl").open(encoding="utf-8") if line.strip())
        roots = [args.baseline.resolve(), ROOT] if args.baseline else [ROOT]
        shadows = {root: shadow(run, root, Path(tmp) / f"shadow-{i}") for i, root in enumerate(roots)}
        for root in roots:  # bytecode written, the page cache warm: what a user's second rescore sees
            rescore_once(shadows[root], root)
        runs = []
        for _ in range(max(1, args.repeat)):  # alternated: both see the same load, on average
            if args.baseline:
                baseline_runs.append(rescore_once(shadows[roots[0]], roots[0]))
            runs.append(rescore_once(shadows[ROOT]))
    load_after = os.getloadavg()
    wall, cpu, walls = _figures(runs)
    left_out = f" (without {args.without_suite})" if args.without_suite else ""
    print(f"rescore of {run.name}{left_out}: {records} records, wall {wall:.2f} s, CPU {cpu:.2f} s, "
          f"{records / wall:.0f} records/s (median of {len(runs)}; walls {walls})")
    if baseline_runs:
        b_wall, b_cpu, b_walls = _figures(baseline_runs)
        print(f"before ({args.baseline}): wall {b_wall:.2f} s, CPU {b_cpu:.2f} s (walls {b_walls}); "
              f"after (this checkout): wall {wall:.2f} s, CPU {cpu:.2f} s; "
              f"CPU after / before {cpu / b_cpu:.2f}")
    print(f"load average (1, 5, 15 min) before {' '.join(f'{x:.1f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.1f}' for x in load_after)}")


if __name__ == "__main__":
    main()
