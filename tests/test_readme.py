"""The README points only to what the repository holds: every file or folder of the checkout it
names exists, and it cites no design document the checkout does not ship."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_path_of_the_checkout_the_readme_names_exists():
    named = {m.rstrip(".,") for m in re.findall(r"\b(?:pytest_egi|suites|tests|bench)/[\w./-]+", README)}
    assert len(named) >= 20  # the pattern still finds the README's paths
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_the_readme_cites_no_document_missing_from_the_checkout():
    cited = sorted(set(re.findall(r"\b([A-Z][A-Z_]+)(?:\.md)? §", README)))
    assert [name for name in cited if not (ROOT / f"{name}.md").is_file()] == []
