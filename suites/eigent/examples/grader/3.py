"""Grader 3 (3 milestones): a JSON object with product and year; the product; the year."""

import json
from pathlib import Path


def grade(working_directory):
    completed, total = 0, 3
    try:
        answer = json.loads((Path(working_directory) / "answer.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        answer = None
    if isinstance(answer, dict) and {"product", "year"} <= set(answer):
        completed += 1
    else:
        print("MISS [1]: answer.json is not a JSON object with product and year")
        answer = {}
    if str(answer.get("product", "")).strip().lower() == "harbor tasks":
        completed += 1
    else:
        print("MISS [2]: wrong product")
    if answer.get("year") == 2019:
        completed += 1
    else:
        print("MISS [3]: wrong year")
    print(f"{completed}/{total}")
    return completed, total
