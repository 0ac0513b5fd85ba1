"""Checker 7: actions.csv holds exactly the open action items, sorted by due date then item."""

import csv
from pathlib import Path

EXPECTED = [
    ["draft the agenda", "Bo", "2024-03-12"],
    ["ask for the catering quote", "Dana", "2024-03-15"],
    ["send the invitations", "Ana", "2024-03-15"],
    ["collect supplier quotes", "Chen", "2024-03-20"],
    ["confirm the speakers", "Bo", "2024-03-22"],
]


def read_rows(path):
    return [[c.strip() for c in r] for r in csv.reader(path.read_text(encoding="utf-8").splitlines()) if r]


def check(working_directory):
    path = Path(working_directory) / "actions.csv"
    if not path.is_file():
        print("FAIL: actions.csv not found")
        return False
    rows = read_rows(path)
    if not rows or rows[0] != ["item", "owner", "due"]:
        print("FAIL: header is not item,owner,due")
        return False
    if rows[1:] != EXPECTED:
        print(f"FAIL: rows are {rows[1:]!r}")
        return False
    print("PASS")
    return True
