"""Checker 4: calc_total renamed to compute_total everywhere, and test_shop.py passes."""

import subprocess
import sys
from pathlib import Path


def check(working_directory):
    root = Path(working_directory)
    left = [
        str(p.relative_to(root)) for p in root.rglob("*.py") if "calc_total" in p.read_text(encoding="utf-8")
    ]
    if left:
        print(f"FAIL: calc_total is still used in {', '.join(sorted(left))}")
        return False
    if "def compute_total" not in (root / "shop" / "cart.py").read_text(encoding="utf-8"):
        print("FAIL: shop/cart.py does not define compute_total")
        return False
    run = subprocess.run(
        [sys.executable, "test_shop.py"], cwd=root, capture_output=True, text=True, timeout=20
    )
    if run.returncode != 0:
        print(f"FAIL: test_shop.py failed: {run.stderr.strip()[-300:]}")
        return False
    print("PASS")
    return True
