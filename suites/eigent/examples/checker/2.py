"""Checker 2: totals.csv holds the per-region sums of sales.json, sorted by region."""

import csv
import json
from collections import defaultdict
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "files" / "2" / "sales.json"


def expected_rows():
    sums = defaultdict(int)
    for sale in json.loads(SOURCE.read_text(encoding="utf-8")):
        sums[sale["region"]] += sale["amount"]
    return [[region, str(total)] for region, total in sorted(sums.items())]


def check(working_directory):
    path = Path(working_directory) / "totals.csv"
    if not path.is_file():
        print("FAIL: totals.csv not found")
        return False
    rows = [r for r in csv.reader(path.read_text(encoding="utf-8").splitlines()) if r]
    if not rows or rows[0] != ["region", "total"]:
        print(f"FAIL: header is {rows[0] if rows else None!r}, expected ['region', 'total']")
        return False
    if rows[1:] != expected_rows():
        print(f"FAIL: rows are {rows[1:]!r}")
        return False
    print("PASS")
    return True
