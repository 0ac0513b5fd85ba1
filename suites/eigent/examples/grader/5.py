"""Grader 5 (3 milestones): the file with its header; the skus to restock; the quantities."""

import csv
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "mcp" / "inventory.json"


def grade(working_directory):
    items = json.loads(DATA.read_text(encoding="utf-8"))
    want = {i["sku"]: str(2 * i["threshold"] - i["stock"]) for i in items if i["stock"] < i["threshold"]}
    path = Path(working_directory) / "restock.csv"
    completed, total = 0, 3
    rows = (
        [r for r in csv.reader(path.read_text(encoding="utf-8").splitlines()) if r] if path.is_file() else []
    )
    if rows and rows[0] == ["sku", "quantity"]:
        completed += 1
    else:
        print("MISS [1]: restock.csv with the header sku,quantity not found")
    got = {r[0]: r[1] for r in rows[1:] if len(r) == 2}
    if got and set(got) == set(want):
        completed += 1
    else:
        print("MISS [2]: the skus to restock are wrong")
    if got and all(want.get(k) == v for k, v in got.items()):
        completed += 1
    else:
        print("MISS [3]: some quantities are wrong")
    print(f"{completed}/{total}")
    return completed, total
