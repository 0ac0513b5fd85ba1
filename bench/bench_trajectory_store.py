"""How to store trajectories at 100k items: one file per item, or one append-only file per process.
Prints figures; asserts nothing; changes nothing in the plugin.

    python bench/bench_trajectory_store.py [--sizes 5000,100000] [--kb 1,20] [--dirs DISK,TMPFS]

Two ways, each in a fresh folder of each ``--dirs`` entry (default: a folder under the
checkout's ``reports/``, on this disk, and one under ``/dev/shm``, a tmpfs), ``N`` trajectories
of ``K`` KB of JSON text each (the main job's quick run writes about 20 KB per item, the
throwaway suite of ``bench_harness_cost.py`` about 1 KB):

- **files** (what the plugin did before its trajectory store): ``raw/<suite>/<task>.json`` through
  :func:`pytest_egi.records.atomic_write_text` (a temporary file, then ``os.replace``);
  opening one task's trajectory is ``open`` + ``read`` + ``json.loads`` of its file;
- **append**: one ``raw/<pid>.jsonl`` per process, opened once; each trajectory is one line,
  written and flushed (``write`` + ``flush``, no ``fsync``, as the files way does none), its
  offset and length kept (in the item's record, say ``raw/<pid>.jsonl#<offset>+<length>``);
  opening one task's trajectory is ``open`` + ``seek`` + ``read(length)`` + ``json.loads``.
  The plugin now stores trajectories this way (``pytest_egi/trajectories.py``: one
  ``os.write`` per line on a file opened ``O_APPEND``, the record's ``raw_at``).

Figures per way: write time per item (wall and this process's CPU, user + system, in ms),
the time to open 1,000 random trajectories (ms each), the folder's size on disk (``du``), and
the time to delete the folder (``shutil.rmtree``; a run folder is deleted or copied whole).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_egi.records import atomic_write_text  # noqa: E402


def payload(i: int, kb: int) -> str:
    """A trajectory-like JSON line of about ``kb`` KB (messages with tool calls)."""
    turn = {"role": "assistant", "content": "x" * 180, "tool_calls": [{"name": "search", "arguments": "{}"}]}
    turns = max(1, kb * 1024 // 260)
    return json.dumps({"suite": "s", "task_id": f"t-{i:06d}", "trajectory": {"messages": [turn] * turns}})


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def write_files(root: Path, n: int, kb: int) -> tuple[float, float]:
    texts = [payload(i, kb) for i in range(min(n, 64))]
    w0, c0 = _clock()
    for i in range(n):
        atomic_write_text(root / "raw" / "s" / f"t-{i:06d}.json", texts[i % len(texts)])
    w1, c1 = _clock()
    return (w1 - w0) / n * 1000, (c1 - c0) / n * 1000


def write_append(root: Path, n: int, kb: int) -> tuple[tuple[float, float], list[tuple[int, int]]]:
    texts = [(payload(i, kb) + "\n").encode() for i in range(min(n, 64))]
    (root / "raw").mkdir(parents=True, exist_ok=True)
    index: list[tuple[int, int]] = []
    w0, c0 = _clock()
    with open(root / "raw" / f"{os.getpid()}.jsonl", "ab") as fh:
        for i in range(n):
            data = texts[i % len(texts)]
            index.append((fh.tell(), len(data)))
            fh.write(data)
            fh.flush()
    w1, c1 = _clock()
    return ((w1 - w0) / n * 1000, (c1 - c0) / n * 1000), index


def open_files(root: Path, picks: list[int]) -> float:
    t0 = time.perf_counter()
    for i in picks:
        json.loads((root / "raw" / "s" / f"t-{i:06d}.json").read_text(encoding="utf-8"))
    return (time.perf_counter() - t0) / len(picks) * 1000


def open_append(root: Path, picks: list[int], index: list[tuple[int, int]]) -> float:
    path = root / "raw" / f"{os.getpid()}.jsonl"
    t0 = time.perf_counter()
    for i in picks:
        offset, length = index[i]
        with open(path, "rb") as fh:
            fh.seek(offset)
            json.loads(fh.read(length))
    return (time.perf_counter() - t0) / len(picks) * 1000


def du_mb(root: Path) -> float:
    out = subprocess.run(["du", "-sk", str(root)], capture_output=True, text=True).stdout.split()
    return int(out[0]) / 1024 if out else float("nan")


def remove_s(root: Path) -> float:
    t0 = time.perf_counter()
    shutil.rmtree(root)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,100000", help="trajectories per way, comma-separated")
    parser.add_argument("--kb", default="1,20", help="KB per trajectory, comma-separated")
    parser.add_argument("--dirs", default=None,
                        help="parent folders, comma-separated (default: disk, /dev/shm)")
    parser.add_argument("--most-mb", type=int, default=4096, help="skip a case that would write more")
    args = parser.parse_args()
    dirs = args.dirs.split(",") if args.dirs else [str(ROOT / "reports"), "/dev/shm"]
    print("load average at start: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print("where | items | KB each | way | write ms/item wall | write ms/item CPU | open one ms | "
          "size MB | delete s")
    rng = random.Random(0)
    for parent in dirs:
        Path(parent).mkdir(parents=True, exist_ok=True)
        for n in (int(s) for s in args.sizes.split(",")):
            for kb in (int(k) for k in args.kb.split(",")):
                if n * kb / 1024 > args.most_mb:
                    print(f"{parent} | {n} | {kb} | - | skipped (more than --most-mb {args.most_mb})")
                    continue
                picks = [rng.randrange(n) for _ in range(1000)]
                for way in ("files", "append"):
                    root = Path(tempfile.mkdtemp(prefix="egi-store-", dir=parent))
                    if way == "files":
                        wall, cpu = write_files(root, n, kb)
                        one = open_files(root, picks)
                    else:
                        (wall, cpu), index = write_append(root, n, kb)
                        one = open_append(root, picks, index)
                    size = du_mb(root)
                    gone = remove_s(root)
                    print(f"{parent} | {n} | {kb} | {way} | {wall:.3f} | {cpu:.3f} | {one:.3f} | "
                          f"{size:.0f} | {gone:.2f}")  # fmt: skip
    print("load average at end: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
