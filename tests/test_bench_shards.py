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
    assert lines[1] == "shards  wall_s  speed-up  ratio-to-ideal  merge_s  same-records"
    rows = [line.split() for line in lines[2:4]]
    assert [r[0] for r in rows] == ["1", "2"]
    assert rows[0][2:4] == ["1.00", "1.00"]  # N = 1 is the reference
    assert all(re.fullmatch(r"\d+\.\d\d", v) for r in rows for v in r[1:5])
    assert [r[5] for r in rows] == ["yes", "yes"]  # merged 2 shards == 1 shard, byte for byte
