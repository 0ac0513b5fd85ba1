"""Shared rpm/tpm limits: the algorithm on a fake clock, then two real processes."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_egi.models import make_client
from pytest_egi.models.ratelimit import RateLimiter, estimate_tokens
from pytest_egi.models.settings import ProviderSettings
from tests.helpers.openai_server import OpenAIServer
from tests.models.conftest import MODEL

REPO = Path(__file__).resolve().parents[2]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize("shared_file", [False, True])
def test_rpm_spaces_requests_evenly(tmp_path, shared_file):
    clock = FakeClock()
    limiter = RateLimiter("m", rpm=60, state_dir=tmp_path if shared_file else None,
                          clock=clock, sleep=clock.sleep)
    waits = [limiter.acquire() for _ in range(4)]
    assert waits == pytest.approx([0.0, 1.0, 1.0, 1.0])
    assert clock.now == pytest.approx(1003.0)
    clock.now += 10  # idle time is not banked beyond the burst
    assert limiter.acquire() == 0.0 and limiter.acquire() == pytest.approx(1.0)


def test_burst_then_spacing(tmp_path):
    clock = FakeClock()
    limiter = RateLimiter("m", rpm=60, burst=3, state_dir=tmp_path, clock=clock, sleep=clock.sleep)
    assert [limiter.acquire() for _ in range(5)] == pytest.approx([0, 0, 0, 1, 1])


def test_tpm_reserves_estimate_and_settles_with_actual(tmp_path):
    clock = FakeClock()
    limiter = RateLimiter("m", tpm=600, state_dir=tmp_path, clock=clock, sleep=clock.sleep)
    assert limiter.acquire(100) == 0.0  # 100 tokens at 10 tokens/s -> next slot in 10 s
    limiter.settle(100, 50)  # only 50 were used: give 5 s back
    assert limiter.acquire(10) == pytest.approx(5.0)
    assert limiter.acquire(10) == pytest.approx(1.0)


def test_pause_holds_every_caller_and_limits_are_per_name(tmp_path):
    clock = FakeClock()
    a = RateLimiter("a", rpm=600, state_dir=tmp_path, clock=clock, sleep=clock.sleep)
    a2 = RateLimiter("a", rpm=600, state_dir=tmp_path, clock=clock, sleep=clock.sleep)
    b = RateLimiter("b", rpm=600, state_dir=tmp_path, clock=clock, sleep=clock.sleep)
    a.pause(5.0)
    assert b.acquire() == 0.0
    assert a2.acquire() == pytest.approx(5.0)  # another instance sees the same pause


def test_no_limit_never_waits_or_touches_disk(tmp_path):
    limiter = RateLimiter("m", state_dir=tmp_path)
    assert not limiter.active and limiter.acquire(10**9) == 0.0
    assert not (tmp_path / "ratelimit.sqlite3").exists()


def test_estimate_tokens_counts_prompt_chars_and_max_tokens():
    msgs = [{"role": "user", "content": "x" * 400}]
    base = estimate_tokens(msgs, None, {})
    assert 100 <= base <= 115
    assert estimate_tokens(msgs, None, {"max_tokens": 50}) == base + 50


WORKER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from pytest_egi.models import make_client
    from pytest_egi.models.transport import import_litellm
    from pytest_egi.models.settings import ProviderSettings
    api_base, state, cache, worker, n, rpm = sys.argv[1:7]
    import_litellm()
    # warm up LiteLLM's HTTP client (the first call builds it, ~0.3 s) outside the limit,
    # so that arrival times at the server reflect the limiter's send times
    warm = ProviderSettings(api_base=api_base, max_retries=0)
    make_client("openai/test-model", provider=warm).generate([{"role": "user", "content": "warmup"}])
    print("ready", flush=True)
    sys.stdin.readline()
    settings = ProviderSettings(api_base=api_base, state_dir=Path(state), cache_dir=Path(cache),
                                rpm=int(rpm), max_retries=0)
    client = make_client("openai/test-model", provider=settings, trial=1)
    for i in range(int(n)):
        client.generate([{"role": "user", "content": f"worker {worker} call {i}"}])
    print(json.dumps(client.usage_dict()), flush=True)
""")

RPM = 120  # one request every 0.5 s across both processes
CALLS_PER_WORKER = 4


@pytest.fixture
def two_workers(tmp_path_factory):
    """Two processes (like two xdist workers) share one rpm limit and one cache.

    Yields (server, tmp dir, arrival times, request bodies, each worker's usage dict); the
    server stays up for the tests.
    """
    tmp = tmp_path_factory.mktemp("rpm")
    env = dict(os.environ, OPENAI_API_KEY="sk-egi-dummy-key-for-rpm-test",
               PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with OpenAIServer() as server:
        procs = [subprocess.Popen(
            [sys.executable, "-c", WORKER, server.url, str(tmp / "state"), str(tmp / "cache"),
             str(w), str(CALLS_PER_WORKER), str(RPM)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env) for w in range(2)]
        try:
            for p in procs:  # both have imported LiteLLM: start them together
                assert p.stdout.readline().strip() == "ready", p.stderr.read()
            for p in procs:
                p.stdin.write("go\n")
                p.stdin.flush()
            outs = [p.communicate(timeout=60) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
        for p, (_, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err
        calls = [r for r in server.completions if r.body["messages"][0]["content"] != "warmup"]
        arrivals = [r.t for r in calls]
        bodies = [r.body["messages"][0]["content"] for r in calls]
        usages = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
        yield server, tmp, arrivals, bodies, usages


def test_two_processes_share_the_rpm_limit_and_the_cache(two_workers):
    server, tmp, arrivals, bodies, usages = two_workers
    assert len(arrivals) == 2 * CALLS_PER_WORKER
    assert {b.split()[1] for b in bodies} == {"0", "1"}  # both workers were served
    interval = 60.0 / RPM
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    # consecutive requests are ~60/rpm apart (no limit: a few ms), so no 60 s window holds
    # more than rpm requests; the tolerance absorbs scheduling noise on a loaded machine
    assert min(gaps) >= interval - 0.15, gaps
    assert arrivals[-1] - arrivals[0] >= (len(arrivals) - 1) * interval - 0.1
    # the workers waited for their slots instead of failing
    assert sum(u["calls"] for u in usages) == 2 * CALLS_PER_WORKER
    assert sum(u["wait_s"] for u in usages) > 1.0

    # a second run over the cache the two workers wrote makes zero requests
    before = server.count
    settings = ProviderSettings(api_base=server.url, cache_dir=tmp / "cache",
                                state_dir=tmp / "state", rpm=RPM, max_retries=0)
    client = make_client(MODEL, provider=settings, trial=1)
    for w in range(2):
        for i in range(CALLS_PER_WORKER):
            reply = client.generate([{"role": "user", "content": f"worker {w} call {i}"}])
            assert reply.message["content"] == f"echo: worker {w} call {i}"
    assert server.count == before == len(arrivals) + 2  # + the two warm-up calls
    usage = client.usage_dict()
    assert (usage["calls"], usage["cached_calls"], usage["wait_s"]) == (8, 8, 0.0)
