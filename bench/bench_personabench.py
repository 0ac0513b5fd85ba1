"""PersonaBench quick profile with each retriever, and the NumPy MiniLM against
sentence-transformers. Prints figures; asserts nothing.

    python bench/bench_personabench.py [--workers 2] [--retrievers gt-context,bm25,all-MiniLM-L6-v2]
                                       [--st-python /path/to/python-with-sentence-transformers]

- run: for each retriever, wall seconds of ``pytest suites/personabench --egi-model egi/oracle
  --egi-mode quick -n <workers> --egi-opt personabench.retriever=<r>`` (440 items: 3 people of
  communities 0 and 1 at noise 0.0 and 0.7), the peak RSS of the largest process of that run
  (the controller or an xdist worker; ``ru_maxrss`` of the waited-for children, so each
  retriever runs in its own child), and the oracle's Overall F1 and Recall@5 per level (the
  reader is perfect, so what it loses is the retriever's miss);
- embeddings: with ``--st-python``, that interpreter embeds a few sentences and two generated
  session chunks (one over 256 word-pieces) with ``SentenceTransformer`` on the same weights, and
  the largest absolute difference to :mod:`suites.personabench.env.minilm` is printed; without it,
  the documented sentence-transformers similarities of three sentences are compared.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

RETRIEVERS = ("gt-context", "bm25", "all-MiniLM-L6-v2")
_CHILD = """
import json, resource, subprocess, sys, time
begin = time.perf_counter()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - begin
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"rc": proc.returncode, "wall": wall, "peak_mib": peak, "tail": proc.stdout[-1500:]}))
"""
ST_SCRIPT = """
import json, sys, zipfile, tempfile
from sentence_transformers import SentenceTransformer
texts = json.loads(sys.stdin.read())
zip_path = sys.argv[1]  # the weights package's model.zip, as this runtime reads it
with tempfile.TemporaryDirectory() as d:
    zipfile.ZipFile(zip_path).extractall(d)
    model = SentenceTransformer(d, device="cpu")
    print(json.dumps(model.encode(texts, convert_to_numpy=True).tolist()))
"""


def run(retriever: str, workers: int) -> dict:
    """One quick oracle run in a fresh child (so its ``ru_maxrss`` is this run's)."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            str(ROOT / "suites" / "personabench"),
            "-q",
            "-p",
            "no:cacheprovider",
            "--egi-model",
            "egi/oracle",
            "--egi-mode",
            "quick",
            "--egi-report-dir",
            out,
            "--egi-bootstrap",
            "0",
            "--egi-opt",
            f"personabench.retriever={retriever}",
        ]
        cmd += ["-n", str(workers)] if workers > 1 else []
        proc = subprocess.run([sys.executable, "-c", _CHILD, *cmd], cwd=ROOT, capture_output=True, text=True)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        runs = list(Path(out).glob("*/egi.json"))
        if runs:
            result["subs"] = json.loads(runs[0].read_text())["suites"]["personabench"]["sub_metrics"]
    return result


def embeddings(st_python: str | None) -> None:
    from suites.personabench.data import person_chunks
    from suites.personabench.env.minilm import _weights_zip, load_minilm

    sentences = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
    chunks, _ = person_chunks({"seed": 42, "communities": 2, "people": 10}, 0, "Bram Northcott", 0.0)
    texts = [*sentences, "Which city do I currently live in?", chunks[0], chunks[5], "word " * 400]
    begin = time.perf_counter()
    mine = load_minilm().encode(texts)
    print(f"numpy MiniLM: {len(texts)} texts in {time.perf_counter() - begin:.2f} s (weights loaded once)")
    cos = mine[:3] @ mine[:3].T
    print(
        "similarities (documented by sentence-transformers: 0.6660 0.1046 0.1411):",
        f"{cos[0, 1]:.4f} {cos[0, 2]:.4f} {cos[1, 2]:.4f}",
    )
    if st_python:
        proc = subprocess.run(
            [st_python, "-c", ST_SCRIPT, str(_weights_zip())],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print("sentence-transformers run failed:", proc.stderr[-800:])
            return
        ref = np.array(json.loads(proc.stdout.strip().splitlines()[-1]), dtype=np.float32)
        diff = np.abs(mine - ref).max()
        print(f"max |numpy - sentence-transformers| over {len(texts)} texts x 384: {diff:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--retrievers", default=",".join(RETRIEVERS))
    parser.add_argument("--st-python", default=None)
    args = parser.parse_args()
    embeddings(args.st_python)
    for retriever in args.retrievers.split(","):
        r = run(retriever, args.workers)
        status = "ok" if r["rc"] in (0, 1) else f"pytest exit {r['rc']}: {r['tail']}"
        print(
            f"quick, -n {args.workers}, retriever {retriever}: {r['wall']:.1f} s wall, "
            f"peak RSS {r['peak_mib']:.0f} MiB ({status})"
        )
        subs = r.get("subs") or {}
        for level in ("0.0", "0.7"):
            f1 = subs.get(f"noise_{level}.Overall.f1")
            rec = subs.get(f"noise_{level}.Overall.retrieval_recall")
            print(f"  noise {level}: oracle Overall F1 {f1}, Recall@5 {rec}")


if __name__ == "__main__":
    main()
