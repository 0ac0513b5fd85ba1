"""LoCoBench with the oracle: wall time of the quick profile at ``-n 2``, peak RSS per
worker, and the context-ablation figure. Prints figures; asserts nothing.

    python bench/bench_locobench.py [--mode quick|deep] [--workers 2] [--no-ablation]

- run: wall seconds of ``pytest suites/locobench --egi-model egi/oracle --egi-mode <mode>
  -n <workers>``, items per second, and the peak RSS of each pytest process (the controller
  and every xdist worker, each measured by itself: ``bench/_rss_plugin.py``); the sandboxed
  checks run in subprocesses of the workers and are not counted in a worker's RSS;
- ablation (reference C2, "context ablation control"): the same run with
  ``--egi-opt locobench.ablation=true`` (each needle file's text in the prompt replaced by
  filler of the same size, the project unchanged); utilization = score(full) - score(ablated)
  on ``longcontext_utilization`` and ``functional_correctness``, and the decoy confusion rate
  of each run. The oracle is an honest reader: without the needle it uses the decoy's facts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KEYS = ("functional_correctness", "longcontext_utilization", "software_engineering", "code_quality",
        "decoy_confusion_rate", "lcbs")  # fmt: skip


def run(mode: str, workers: int, *extra: str) -> tuple[float, int, dict, dict[str, int]]:
    """Wall seconds, items, the suite's sub-metrics and peak RSS per process (KiB)."""
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as rss:
        cmd = [sys.executable, "-m", "pytest", str(ROOT / "suites" / "locobench"), "-q",
               "-p", "no:cacheprovider", "-p", "bench._rss_plugin", "--egi-model", "egi/oracle",
               "--egi-mode", mode, "--egi-report-dir", out, "--egi-bootstrap", "0",
               *(("-n", str(workers)) if workers > 1 else ()), *extra]  # fmt: skip
        begin = time.perf_counter()
        proc = subprocess.run(
            cmd, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "EGI_BENCH_RSS_DIR": rss}
        )
        wall = time.perf_counter() - begin
        if proc.returncode not in (0, 1):
            raise SystemExit(f"run failed ({proc.returncode}):\n{proc.stdout[-3000:]}")
        egi = json.loads(next(Path(out).rglob("egi.json")).read_text())
        peaks = {p.stem: int(p.read_text()) for p in Path(rss).glob("*.txt")}
    suite = egi["suites"]["locobench"]
    return wall, sum(suite["counts"].values()), suite["sub_metrics"], peaks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", default="quick")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-ablation", action="store_true")
    args = parser.parse_args()
    wall, items, full, peaks = run(args.mode, args.workers)
    print(f"locobench {args.mode}, egi/oracle, -n {args.workers}: {wall:.1f} s wall, {items} items, "
          f"{items / wall:.2f} items/s")  # fmt: skip
    for name, kib in sorted(peaks.items()):
        print(f"  peak RSS {name}: {kib / 1024:.0f} MiB")
    print("  " + ", ".join(f"{k} {full[k]:.3f}" for k in KEYS if full.get(k) is not None))
    if args.no_ablation:
        return
    wall_a, _, ablated, _ = run(args.mode, args.workers, "--egi-opt", "locobench.ablation=true")
    print(f"ablation (needle files replaced by filler in the prompt), {wall_a:.1f} s wall:")
    print("  " + ", ".join(f"{k} {ablated[k]:.3f}" for k in KEYS if ablated.get(k) is not None))
    for key in ("longcontext_utilization", "functional_correctness"):
        print(f"  utilization on {key}: score(full) - score(ablated) = {full[key]:.3f} - {ablated[key]:.3f} "
              f"= {full[key] - ablated[key]:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
