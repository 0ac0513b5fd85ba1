"""Wall time of one run split into 1, 2 and 4 shards run at once (as on N machines), then merged.

Run from the repository root::

    python bench/bench_shards.py                        # 80 items, shards 1, 2, 4
    python bench/bench_shards.py --items 4 --shards 1,2 --model egi/oracle  # smallest, no server

The work: the toy suite of the plugin's tests (``tests/toy_project.py``) with ``--items``
tasks, model ``openai/test-model`` against the local OpenAI-compatible server
(``python -m tests.helpers.openai_server --latency L``, one process; it echoes, so each
item is one chat completion of ``L`` seconds, then fails as unanswered: a model failure,
not an error), the response cache off (``--egi-no-cache``). For each N, the N shards
``--egi-run-id shards-N --egi-shard K/N`` start together as separate pytest processes (each
serial, as on N machines), then ``egi-bench report --merge`` joins them.

Printed per N: the wall time from the first start to the last shard's end, the speed-up
T1 / TN, the ratio to ideal (T1 / N) / TN (1.0 = perfect), the merge time, and whether the
merged ``records.jsonl`` equals N = 1's byte for byte; also the CPU seconds the N shard
processes used together, and this machine's cores and load. Each shard pays its own start-up
(Python, pytest, LiteLLM import: seconds, on this machine's cores), which is what keeps the
ratio below 1 for short runs. ``--model egi/...`` (an offline policy) runs without the
server, for a quick check of the machinery. Nothing is asserted; the exit status is 0 when
every run and merge succeeded.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.toy_project import ROUTING, SUITE_INIT, TEST_MODULE  # noqa: E402

HEADER = "shards  wall_s  cpu_s  speed-up  ratio-to-ideal  merge_s  same-records"


def make_project(root: Path, items: int) -> int:
    """The toy suite with ``items`` tasks (rounded up to even: two categories of
    ``ceil(items / 2)``) in ``root``; returns the task count."""
    per_category = max(1, (items + 1) // 2)
    routing = ROUTING.replace("toy: {per_category: 3}", f"toy: {{per_category: {per_category}}}")
    (root / "routing.yaml").write_text(routing)
    (root / "conftest.py").write_text("")
    toy = root / "toysuites" / "toy"
    toy.mkdir(parents=True)
    (root / "toysuites" / "__init__.py").write_text("")
    (toy / "__init__.py").write_text(SUITE_INIT)
    (toy / "test_toy.py").write_text(TEST_MODULE)
    return 2 * per_category


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The local server in its own process; returns it and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.helpers.openai_server", "--latency", str(latency)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http"):
        proc.kill()
        raise SystemExit(f"the test server did not start: {url!r}")
    return proc, url


def run_shards(
    project: Path, reports: Path, model: list[str], n: int, env: dict[str, str]
) -> tuple[float, float]:
    """Start the N shards at once; wall seconds until the last one ends, and the CPU seconds
    (user + system) the N processes used together.

    Raises:
        SystemExit: a shard exited with a status other than 0 or 1 (its output's end).
    """
    procs = []
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    begin = time.perf_counter()
    for k in range(1, n + 1):
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            "toysuites",
            "-q",
            "-p",
            "no:cacheprovider",
            *model,
            "--egi-no-cache",
            "--egi-bootstrap",
            "0",
            "--egi-max-error-rate",
            "1",
            f"--egi-report-dir={reports}",
            "--egi-run-id",
            f"shards-{n}",
            "--egi-shard",
            f"{k}/{n}",
        ]
        procs.append(
            subprocess.Popen(
                cmd, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        )
    outputs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - begin
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    for k, (proc, out) in enumerate(zip(procs, outputs, strict=True), 1):
        if proc.returncode not in (0, 1):
            raise SystemExit(f"shard {k}/{n} failed ({proc.returncode}):\n{out[-3000:]}")
    return wall, cpu


def merge(reports: Path, n: int, env: dict[str, str]) -> tuple[float, Path]:
    """``egi-bench report --merge reports/shards-N``: seconds and the merged run's folder."""
    folder = reports / f"shards-{n}"
    begin = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", "from pytest_egi.cli import main; main()", "report", "--merge", str(folder)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - begin
    if proc.returncode not in (0, 1):
        raise SystemExit(
            f"merge of {n} shards failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return seconds, folder


def main(argv: list[str] | None = None) -> int:
    """Print the table (``HEADER`` then one row per N); returns 0."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=80, help="toy tasks (default 80)")
    ap.add_argument(
        "--model",
        default="openai/test-model",
        help="model under test (default openai/test-model on the local server)",
    )
    ap.add_argument("--shards", default="1,2,4", help="shard counts, comma-separated (default 1,2,4)")
    ap.add_argument("--latency", type=float, default=0.3, help="server seconds per answer (default 0.3)")
    args = ap.parse_args(argv)
    counts = sorted({int(x) for x in args.shards.split(",")})
    if counts[0] != 1:
        counts.insert(0, 1)  # T1 is the reference
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(
        os.environ,
        PYTHONPATH=path,
        OPENAI_API_KEY=os.environ.get("OPENAI_API_KEY", "sk-local-test-server"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
    )
    server, url = (None, "none") if args.model.startswith("egi/") else start_server(args.latency)
    model = ["--egi-model", args.model] + ([] if server is None else ["--egi-api-base", url])
    rows = []
    items = 0
    try:
        with tempfile.TemporaryDirectory(prefix="egi-bench-shards-") as tmp:
            project, reports = Path(tmp) / "project", Path(tmp) / "reports"
            project.mkdir()
            items = make_project(project, args.items)
            for n in counts:
                wall, cpu = run_shards(project, reports, model, n, env)
                merge_s, folder = merge(reports, n, env)
                rows.append((n, wall, cpu, merge_s, (folder / "records.jsonl").read_bytes()))
    finally:
        if server is not None:
            server.kill()
            server.wait()
    t1, reference = rows[0][1], rows[0][4]
    what = (
        f"one {args.latency:g} s completion each, server {url}"
        if server is not None
        else f"model {args.model}, no server"
    )
    print(f"{items} toy items, {what}")
    print(
        f"this machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
        "(the shards share them; N machines would not)"
    )
    print(HEADER)
    for n, wall, cpu, merge_s, records in rows:
        same = "yes" if records == reference else "NO"
        print(
            f"{n:>6}  {wall:6.2f}  {cpu:5.1f}  {t1 / wall:8.2f}  {t1 / n / wall:14.2f}  "
            f"{merge_s:7.2f}  {same:>12}"
        )
    waiting = f"; T1 includes {items} x {args.latency:g} s of waiting" if server is not None else ""
    print(f"ideal for N shards: T1/N (as if start-up cost nothing){waiting}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
