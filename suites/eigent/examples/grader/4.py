"""Grader 4 (4 milestones): the definition, each file's uses, and the test script passing with
no calc_total left."""

import subprocess
import sys
from pathlib import Path


def _text(path):
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def grade(working_directory):
    root = Path(working_directory)
    completed, total = 0, 4
    cart, checkout, test = (_text(root / p) for p in ("shop/cart.py", "shop/checkout.py", "test_shop.py"))
    checks = [
        (
            "def compute_total" in cart and "calc_total" not in cart,
            "shop/cart.py does not define compute_total",
        ),
        (
            "compute_total" in checkout and "calc_total" not in checkout,
            "shop/checkout.py still uses calc_total",
        ),
        ("compute_total" in test and "calc_total" not in test, "test_shop.py still uses calc_total"),
    ]
    for k, (ok, why) in enumerate(checks, 1):
        if ok:
            completed += 1
        else:
            print(f"MISS [{k}]: {why}")
    left = any("calc_total" in _text(p) for p in root.rglob("*.py"))
    run = subprocess.run(
        [sys.executable, "test_shop.py"], cwd=root, capture_output=True, text=True, timeout=20
    )
    if not left and run.returncode == 0:
        completed += 1
    else:
        print("MISS [4]: test_shop.py does not pass with the new name")
    print(f"{completed}/{total}")
    return completed, total
