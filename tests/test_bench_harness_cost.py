"""The harness-cost benchmark still runs and prints its tables (figures are not checked)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_bench(*args: str) -> list[str]:
    """The bench's printed lines (asserting it exited 0)."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_harness_cost.py"), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


def test_bench_prints_every_table():
    lines = run_bench("--sizes", "1", "--quick", "--suites", "suites/crmarena")
    assert lines[0] == "harness cost per item (throwaway suite vs bare pytest, same items, same run)"
    assert lines[1] == (
        "items | workers | wall s egi/bare | CPU s egi/bare | CPU ms/item above bare | "
        "controller RSS MB egi/bare | worker RSS MB egi/bare"
    )
    assert lines[2].startswith("1 | 1 | ")
    assert (
        "profile | task cache | suites/crmarena --collect-only wall s / CPU s | above bare wall s / CPU s"
    ) in lines
    for state in ("no cache", "cold cache", "warm cache"):
        assert any(line.startswith(f"quick | {state} | ") for line in lines)
    assert "aggregation and bootstrap" in lines
    assert any(line.startswith("aggregate of 10000 records, bootstrap off: ") for line in lines)
    for how in ("with summary_columns", "summarize per resample"):
        assert any(line.startswith(f"bootstrap (1000 resamples, {how}) of a 1-item run: ") for line in lines)
    # numpy's one-time import is timed apart, not inside the first bootstrap figure
    [numpy] = [line for line in lines if line.startswith("numpy import, once per session by the bootstrap")]
    assert 0 < float(numpy.split(": ")[1].split(" s,")[0]) < 30
    assert ("main job: suites/crmarena with egi/oracle (median of 1; a fresh task cache per "
            "repetition)") in lines
    assert (
        "profile | run | wall s | CPU s | controller RSS MB | largest worker RSS MB "
        "| largest worker with its servers, PSS MB | wall over serial"
    ) in lines
    serial = next(line for line in lines if line.startswith("quick | serial | "))
    first = next(line for line in lines if line.startswith("quick | -n 2, first run | "))
    later = next(line for line in lines if line.startswith("quick | -n 2, later run | "))
    # serially: no worker, the ratio's anchor
    assert serial.split(" | ")[5] == "-" and serial.endswith(" | 1.00")
    assert float(first.split(" | ")[5]) > 0 and float(later.split(" | ")[5]) > 0  # workers' RSS measured
    # the process that ran the items, with what runs under it: the serial controller, the workers
    assert all(float(line.split(" | ")[6]) > 0 for line in (serial, first, later))
    assert lines[-1].startswith("load average (1, 5, 15 min) at start: ")


def test_bench_cold_prints_the_cold_collection_beside_bare_pytest():
    lines = run_bench("--cold", "--quick", "--suites", "suites/benchforce")
    assert lines[0].startswith(
        "cold collection: suites/benchforce --collect-only with a fresh --egi-cache (median of 1), "
        "beside bare pytest --collect-only of 1 test (CPU "
    )
    assert lines[1] == (
        "profile | task cache | CPU s | CPU above bare s | wall s | peak RSS MB | target CPU s / MB"
    )
    cold, warm = lines[2].split(" | "), lines[3].split(" | ")
    assert cold[:2] == ["quick", "cold"] and cold[-1] == "2 / 150"
    assert warm[:2] == ["quick", "warm"] and warm[-1] == "-"
    assert float(cold[2]) > 0 and float(cold[5]) > 0  # CPU and peak RSS measured
    assert lines[4] == "cold collection of each suite alone, quick (median of 1)"
    assert lines[5] == "suite | CPU s | CPU above bare s | wall s | peak RSS MB"
    assert lines[6].startswith("benchforce | ")
    assert lines[-1].startswith("load average (1, 5, 15 min) at start: ")
    assert not any(line.startswith("harness cost per item") for line in lines)  # only the cold figures


def test_bench_main_job_prints_its_memory_as_ranges():
    lines = run_bench("--main-job", "--quick", "--repeat", "1", "--suites", "suites/crmarena")
    assert lines[0] == ("main job: suites/crmarena with egi/oracle (1 repetitions, a fresh task cache each; "
                        "median seconds, ranges of MB)")  # fmt: skip
    assert lines[1] == ("profile | run | wall s | CPU s | controller RSS MB | largest worker RSS MB "
                        "| largest worker with its servers, PSS MB")  # fmt: skip
    rows = {line.split(" | ")[1]: line.split(" | ") for line in lines[2:5]}
    assert set(rows) == {"serial", "-n 2, first run", "-n 2, later run"}
    assert rows["serial"][5] == "-" and float(rows["serial"][6]) > 0
    assert float(rows["-n 2, later run"][5]) > 0 and float(rows["-n 2, later run"][6]) > 0
    assert lines[-1].startswith("load average (1, 5, 15 min) at start: ")
