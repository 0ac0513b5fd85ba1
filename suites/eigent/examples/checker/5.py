"""Checker 5: restock.csv lists the items below their threshold with 2*threshold - stock."""

import csv
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "mcp" / "inventory.json"


def expected_rows():
    items = json.loads(DATA.read_text(encoding="utf-8"))
    return sorted(
        [i["sku"], str(2 * i["threshold"] - i["stock"])] for i in items if i["stock"] < i["threshold"]
    )


def check(working_directory):
    path = Path(working_directory) / "restock.csv"
    if not path.is_file():
        print("FAIL: restock.csv not found")
        return False
    rows = [r for r in csv.reader(path.read_text(encoding="utf-8").splitlines()) if r]
    if not rows or rows[0] != ["sku", "quantity"]:
        print("FAIL: header is not sku,quantity")
        return False
    if rows[1:] != expected_rows():
        print(f"FAIL: rows are {rows[1:]!r}")
        return False
    print("PASS")
    return True
