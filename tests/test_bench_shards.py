"""The shard benchmark (``bench/bench_shards.py``) runs at its smallest setting."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_shards.py"


def test_the_shard_benchmark_prints_its_table():
    proc = subprocess.run([sys.executable, str(BENCH), "--items", "4", "--shards", "1,2",
                           "--model", "egi/oracle"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "4 toy items, model egi/oracle, no server"
    assert re.fullmatch(r"this machine: \d+ cores, load average \d+\.\d .*", lines[1])
    assert lines[2] == "shards  wall_s  cpu_s  speed-up  ratio-to-ideal  merge_s  same-records"
    rows = [line.split() for line in lines[3:5]]
    assert [r[0] for r in rows] == ["1", "2"]
    assert rows[0][3:5] == ["1.00", "1.00"]  # N = 1 is the reference
    assert all(re.fullmatch(r"\d+\.\d\d?", v) for r in rows for v in r[1:6])
    assert [r[6] for r in rows] == ["yes", "yes"]  # merged 2 shards == 1 shard, byte for byte
