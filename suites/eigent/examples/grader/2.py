"""Grader 2 (4 milestones): the file; its header; the set of regions; the sums."""

import csv
import json
from collections import defaultdict
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "files" / "2" / "sales.json"


def grade(working_directory):
    sums = defaultdict(int)
    for sale in json.loads(SOURCE.read_text(encoding="utf-8")):
        sums[sale["region"]] += sale["amount"]
    path = Path(working_directory) / "totals.csv"
    completed, total = 0, 4
    if not path.is_file():
        print("MISS [1]: totals.csv not found")
        print(f"{completed}/{total}")
        return completed, total
    completed += 1
    rows = [r for r in csv.reader(path.read_text(encoding="utf-8").splitlines()) if r]
    if rows and rows[0] == ["region", "total"]:
        completed += 1
    else:
        print("MISS [2]: header is not region,total")
    body = [r for r in rows[1:] if len(r) == 2]
    if {r[0] for r in body} == set(sums) and len(body) == len(sums):
        completed += 1
    else:
        print("MISS [3]: not one row per region")
    if all(r[1].strip() == str(sums.get(r[0])) for r in body) and body:
        completed += 1
    else:
        print("MISS [4]: some totals are wrong")
    print(f"{completed}/{total}")
    return completed, total
