"""Checker 3: answer.json names the product with offline sync and its first release year."""

import json
from pathlib import Path

EXPECTED = {"product": "Harbor Tasks", "year": 2019}


def check(working_directory):
    path = Path(working_directory) / "answer.json"
    try:
        answer = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        print("FAIL: answer.json not found")
        return False
    except ValueError as exc:
        print(f"FAIL: answer.json is not JSON: {exc}")
        return False
    if (
        not isinstance(answer, dict)
        or answer.get("product") != EXPECTED["product"]
        or answer.get("year") != 2019
    ):
        print(f"FAIL: got {answer!r}")
        return False
    print("PASS")
    return True
