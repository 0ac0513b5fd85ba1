"""Provider-layer throughput and fault-tolerance figures against a local OpenAI-compatible server.

Run from the repository root::

    python bench/bench_providers.py                 # all figures (about 2 minutes)
    python bench/bench_providers.py --calls 96      # shorter

What it measures (figures are printed, nothing is asserted):

1. Throughput. ``--calls`` chat completions through the real LiteLLM client
   (``make_client``: retry, rate limiter, usage; cache off) against the server in its own
   process with ``--latency`` seconds per answer, at concurrency 1, 4 and 16. Workers are
   processes forked after LiteLLM is imported (what pytest-xdist workers are, minus pytest)
   and, for comparison, the same processes sending every attempt to one gateway process
   (what ``-n N`` does by default) and threads in one process. Ideal = calls x latency / concurrency;
   the ratio ideal / measured is the efficiency (1.0 = no overhead).
2. Faults. The same calls at concurrency 16 while the server answers ``--error-rate`` of
   requests with 429 (``Retry-After``) or 500: every call must complete (or be a
   ProviderError, never a wrong answer) and answers and token counts must equal the clean run's.
3. Cache. The clean run again over a warm cache: requests reaching the server (expected 0).
4. Rate limit. 16 workers under ``--egi-rpm``-style limit: achieved requests per minute.
5. With ``--pytest K`` (``all``: the whole quick profile): the real plugin, ``pytest suites
   [-k K] --egi-model openai/test-model --egi-api-base <server> --egi-no-cache -n N
   --egi-gateway G`` for each concurrency N and each ``--gateway`` value G: calls counted by
   the server, ideal = calls x latency / N (so pytest and xdist start-up, collection, the
   gateway or each worker's LiteLLM import, and the suites' own work are all in the
   measured time).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_egi.models import ProviderError, make_client  # noqa: E402
from pytest_egi.models.gateway import start_gateway  # noqa: E402
from pytest_egi.models.settings import ProviderSettings  # noqa: E402
from pytest_egi.models.transport import import_litellm  # noqa: E402

MODEL = "openai/test-model"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} over the CRM records",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}},
                "required": ["query"],
            },
        },
    }
    for name in ("execute_soql", "execute_sosl", "submit")
]


def jobs(n: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """``n`` distinct agent-sized conversations (system prompt, a few turns, ~2 KB)."""
    out = []
    for i in range(n):
        messages = [
            {"role": "system", "content": "You are a CRM analyst. Use the tools. " * 20},
            {"role": "user", "content": f"Task {i}: which agent closed the most cases in Q{i % 4 + 1}?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {
                            "name": "execute_soql",
                            "arguments": json.dumps(
                                {"query": f"SELECT OwnerId, COUNT(Id) FROM Case WHERE Q = {i % 4 + 1}"}
                            ),
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": json.dumps([{"OwnerId": f"005{k:03d}", "n": (i * 7 + k) % 13} for k in range(8)]),
            },
            {"role": "user", "content": f"Now answer task {i}."},
        ]
        out.append((f"job{i}", messages))
    return out


def start_server(
    latency: float, error_rate: float = 0.0, retry_after: float | None = None, seed: int = 0
) -> tuple[subprocess.Popen, str]:
    """The test server in its own process; returns (process, api base)."""
    cmd = [
        sys.executable,
        "-m",
        "tests.helpers.openai_server",
        "--latency",
        str(latency),
        "--error-rate",
        str(error_rate),
        "--seed",
        str(seed),
    ]
    if retry_after is not None:
        cmd += ["--retry-after", str(retry_after)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    return proc, url


def server_stats(url: str) -> dict[str, int]:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=5) as r:
        return json.loads(r.read())


def _work(settings: ProviderSettings, my_jobs: list, results: dict, stamps: list) -> None:
    client = make_client(MODEL, provider=settings, trial=1, shared={})
    start = time.time()
    for job_id, messages in my_jobs:
        try:
            r = client.generate(messages, TOOLS, temperature=0.0)
            results[job_id] = {
                "content": r.message.get("content"),
                "tokens": [r.usage.prompt_tokens, r.usage.completion_tokens],
            }
        except ProviderError as exc:
            results[job_id] = {"error": str(exc)}
    u = client.usage_dict()
    stamps.append((start, time.time(), u["retries"], u["wait_s"], u["cached_calls"]))


def _proc_main(settings, my_jobs, barrier, queue) -> None:
    results: dict = {}
    stamps: list = []
    barrier.wait()
    _work(settings, my_jobs, results, stamps)
    queue.put((results, stamps))


def _threads_main(settings, parts, queue) -> None:
    results: dict = {}
    stamps: list = []
    threads = [threading.Thread(target=_work, args=(settings, p, results, stamps)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put((results, stamps))


def run(settings: ProviderSettings, all_jobs: list, concurrency: int, mode: str) -> dict:
    """Run ``all_jobs`` split round-robin over ``concurrency`` workers.

    Args:
        mode: ``processes`` (one forked process per worker, like xdist) or ``threads`` (one
            forked process running ``concurrency`` threads).

    Returns:
        ``{"wall_s", "results": {job: {...}}, "retries", "wait_s", "cached"}``.
    """
    parts = [all_jobs[w::concurrency] for w in range(concurrency)]
    results: dict = {}
    stamps: list = []
    # every run happens in forked children, so this parent never makes a call, never starts
    # a thread and stays safe to fork (LiteLLM is imported once, before any fork)
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    if mode == "threads":
        procs = [ctx.Process(target=_threads_main, args=(settings, parts, queue))]
    else:
        barrier = ctx.Barrier(concurrency)
        procs = [ctx.Process(target=_proc_main, args=(settings, p, barrier, queue)) for p in parts]
    for p in procs:
        p.start()
    for _ in procs:
        r, s = queue.get()
        results.update(r)
        stamps.extend(s)
    for p in procs:
        p.join()
    wall = max(s[1] for s in stamps) - min(s[0] for s in stamps)
    return {
        "wall_s": wall,
        "results": results,
        "retries": sum(s[2] for s in stamps),
        "wait_s": sum(s[3] for s in stamps),
        "cached": sum(s[4] for s in stamps),
    }


def pytest_run(url: str, k: str, n: int, report_dir: Path, gateway: str = "auto") -> dict[str, float]:
    """One real ``pytest suites`` run against a freshly reset server.

    Returns:
        ``{"wall_s", "calls", "startup_s", "steady_s", "exit"}``: wall seconds of the whole
        command; completions served; seconds from the command's start to the first request
        (interpreters, imports, collection, gateway start); seconds from the first request
        to the last answer (last arrival + latency, the server's fixed delay).
    """
    urllib.request.urlopen(url.removesuffix("/v1") + "/reset", data=b"", timeout=5).close()
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "suites",
        "-q",
        "-p",
        "no:cacheprovider",
        "--egi-model",
        MODEL,
        "--egi-api-base",
        url,
        "--egi-no-cache",
        "--egi-report-dir",
        str(report_dir),
        "--egi-bootstrap",
        "0",
        "--egi-gateway",
        gateway,
    ]
    if k:
        cmd += ["-k", k]
    if n > 1:
        cmd += ["-n", str(n)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - t0
    stats = server_stats(url)
    return {
        "wall_s": wall,
        "calls": stats["completions"],
        "exit": proc.returncode,
        "startup_s": stats["first_t"] - t0,
        "steady_s": stats["last_t"] + stats["latency_s"] - stats["first_t"],
    }


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, print every figure, remove the temporary directory."""
    tmp = Path(tempfile.mkdtemp(prefix="egi-bench-"))
    try:
        _main(argv, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _main(argv: list[str] | None, tmp: Path) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=192, help="calls per throughput run")
    ap.add_argument("--latency", type=float, default=0.3, help="server seconds per answer")
    ap.add_argument("--concurrency", default="1,4,16")
    ap.add_argument(
        "--modes",
        default="processes,gateway,threads",
        help="processes (each imports LiteLLM), gateway (processes calling one "
        "gateway process), threads (one process)",
    )
    ap.add_argument("--error-rate", type=float, default=0.1)
    ap.add_argument("--rpm", type=int, default=960, help="limit for the rate-limit figure")
    ap.add_argument(
        "--pytest",
        metavar="K",
        default=None,
        help="also time real pytest runs of `suites -k K` (e.g. crmarena; 'all' for the whole quick profile)",
    )
    ap.add_argument(
        "--gateway", default="auto", help="--egi-gateway values to compare in the pytest runs, e.g. auto,off"
    )
    ap.add_argument("--only-pytest", action="store_true", help="skip figures 1-4")
    ap.add_argument(
        "--repeat", type=int, default=3, help="throughput runs per cell; the best (least disturbed) is shown"
    )
    args = ap.parse_args(argv)

    sys.stdout.reconfigure(line_buffering=True)
    import_litellm()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key-000000")
    levels = [int(x) for x in args.concurrency.split(",")]
    work = jobs(args.calls)
    print(
        f"provider bench: {args.calls} calls, server latency {args.latency * 1000:.0f} ms, "
        f"{os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.2f} at start), "
        f"LiteLLM client (retry + limiter + usage; cache off), best of {args.repeat}"
    )

    if args.pytest:
        k = "" if args.pytest == "all" else args.pytest
        proc, url = start_server(args.latency)
        try:
            print(
                f"\n5. real pytest runs: suites{f' -k {k!r}' if k else ''} (quick profile), echo"
                f" server (every task runs to its turn limit); ideal = calls x latency / n;\n"
                f"   wall ratio = ideal / whole command; steady ratio = ideal / (first request"
                f" to last answer); start-up = command start to first request\n"
                f"   {'gateway':<9}{'n':>4}{'calls':>7}{'ideal s':>9}{'wall s':>8}"
                f"{'ratio':>7}{'start-up s':>12}{'steady s':>10}{'ratio':>7}"
            )
            for gateway in args.gateway.split(","):
                for n in levels:
                    r = pytest_run(url, k, n, tmp / "reports", gateway)
                    ideal = r["calls"] * args.latency / n
                    print(
                        f"   {gateway:<9}{n:>4}{r['calls']:>7}{ideal:>9.2f}{r['wall_s']:>8.2f}"
                        f"{ideal / r['wall_s']:>7.2f}{r['startup_s']:>12.2f}"
                        f"{r['steady_s']:>10.2f}{ideal / r['steady_s']:>7.2f}"
                    )
        finally:
            proc.terminate()
            proc.wait()
        if args.only_pytest:
            return

    proc, url = start_server(args.latency)
    try:
        plain = ProviderSettings(api_base=url, state_dir=tmp / "state", timeout_s=30)
        print(
            f"\n1. throughput (ideal = calls x latency / concurrency)\n"
            f"   {'mode':<10}{'n':>4}{'ideal s':>10}{'measured s':>12}{'ratio':>8}"
        )
        clean = None
        gateway = start_gateway() if "gateway" in args.modes.split(",") else None
        for mode in args.modes.split(","):
            settings = plain
            if mode == "gateway":  # processes that send every attempt to one gateway process
                settings = plain.model_copy(update={"gateway": gateway.socket_path})
            for n in levels:
                r = min(
                    (
                        run(settings, work, n, "threads" if mode == "threads" else "processes")
                        for _ in range(max(1, args.repeat))
                    ),
                    key=lambda x: x["wall_s"],
                )
                ideal = args.calls * args.latency / n
                errors = sum(1 for v in r["results"].values() if "error" in v)
                print(
                    f"   {mode:<10}{n:>4}{ideal:>10.2f}{r['wall_s']:>12.2f}"
                    f"{ideal / r['wall_s']:>8.2f}" + (f"  ({errors} errors)" if errors else "")
                )
                if n == max(levels) and clean is None:
                    clean = r
        if gateway is not None:
            gateway.stop()
        # 3. cache: warm it, then the same run again
        cached = plain.model_copy(update={"cache_dir": tmp / "cache"})
        run(cached, work, max(levels), "processes")
        before = server_stats(url)["completions"]
        again = run(cached, work, max(levels), "processes")
        after = server_stats(url)["completions"]
        same = again["results"] == clean["results"]
        cache_line = (
            f"\n3. cache: rerun of {args.calls} calls over a warm cache: "
            f"{after - before} requests reached the server, {again['cached']} cache "
            f"hits, {again['wall_s']:.2f} s, answers equal the clean run: {same}"
        )
        # 4. rate limit
        n_rl = max(levels)
        rl_jobs = jobs(3 * n_rl)
        limited = plain.model_copy(update={"rpm": args.rpm, "state_dir": tmp / "rl"})
        r = run(limited, rl_jobs, n_rl, "processes")
        # sends are what the limit spaces: the last answer arrives one latency after its send
        achieved = (len(rl_jobs) - 1) / (r["wall_s"] - args.latency) * 60
        unlimited = 60 * n_rl / args.latency
        rl_line = (
            f"\n4. rate limit: {len(rl_jobs)} calls, {n_rl} processes, rpm {args.rpm}: "
            f"{r['wall_s']:.2f} s, sent at {achieved:.0f} rpm "
            f"(limit {args.rpm}; without it ~{unlimited:.0f} rpm)"
        )
        if unlimited <= args.rpm:
            rl_line += (
                f"\n   (the limit is above what {n_rl} processes send anyway: it is not "
                f"exercised; use more concurrency or a lower --rpm)"
            )
    finally:
        proc.terminate()
        proc.wait()

    # 2. faults
    proc, url = start_server(args.latency, args.error_rate, retry_after=0.5, seed=7)
    try:
        faulty = ProviderSettings(
            api_base=url,
            state_dir=tmp / "state2",
            timeout_s=30,
            max_retries=8,
            backoff_base_s=0.2,
            backoff_max_s=2.0,
        )
        n = max(levels)
        r = run(faulty, work, n, "processes")
        stats = server_stats(url)
    finally:
        proc.terminate()
        proc.wait()
    errors = [k for k, v in r["results"].items() if "error" in v]
    answered = {k: v for k, v in r["results"].items() if "error" not in v}
    wrong = [k for k, v in answered.items() if v != clean["results"][k]]
    tokens = [sum(v["tokens"][i] for v in answered.values()) for i in (0, 1)]
    clean_tokens = [sum(v["tokens"][i] for v in clean["results"].values()) for i in (0, 1)]
    print(
        f"\n2. faults: {args.error_rate:.0%} of answers are 429 (Retry-After 0.5 s) or 500, "
        f"{n} processes\n"
        f"   server: {stats['completions']} requests, {stats['injected_errors']} injected errors;"
        f" client: {r['retries']} retries, {r['wait_s']:.1f} s waiting\n"
        f"   {len(answered)}/{len(work)} calls answered, {len(errors)} ProviderErrors (items"
        f" would be errors), {len(wrong)} answers differ from the clean run\n"
        f"   tokens {tokens[0]} + {tokens[1]} vs clean {clean_tokens[0]} + {clean_tokens[1]}: "
        f"{'equal' if tokens == clean_tokens else 'DIFFERENT'}; wall {r['wall_s']:.2f} s "
        f"vs clean {clean['wall_s']:.2f} s"
    )
    print(cache_line)
    print(rl_line)


if __name__ == "__main__":
    main()
