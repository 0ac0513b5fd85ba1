"""Grader 7 (4 milestones): the file with its header; the open items and no done one; their
owners; their due dates."""

import csv
from pathlib import Path

OPEN = {
    "draft the agenda": ("Bo", "2024-03-12"),
    "ask for the catering quote": ("Dana", "2024-03-15"),
    "send the invitations": ("Ana", "2024-03-15"),
    "collect supplier quotes": ("Chen", "2024-03-20"),
    "confirm the speakers": ("Bo", "2024-03-22"),
}


def grade(working_directory):
    path = Path(working_directory) / "actions.csv"
    completed, total = 0, 4
    rows = (
        [[c.strip() for c in r] for r in csv.reader(path.read_text(encoding="utf-8").splitlines()) if r]
        if path.is_file()
        else []
    )
    if rows and rows[0] == ["item", "owner", "due"]:
        completed += 1
    else:
        print("MISS [1]: actions.csv with the header item,owner,due not found")
    got = {r[0].lower(): r for r in rows[1:] if len(r) == 3}
    if got and set(got) == set(OPEN):
        completed += 1
    else:
        print("MISS [2]: not exactly the open action items")
    if got and all(OPEN.get(k, ("",))[0] == r[1] for k, r in got.items()):
        completed += 1
    else:
        print("MISS [3]: some owners are wrong")
    if got and all(OPEN.get(k, ("", ""))[1] == r[2] for k, r in got.items()):
        completed += 1
    else:
        print("MISS [4]: some due dates are wrong")
    print(f"{completed}/{total}")
    return completed, total
