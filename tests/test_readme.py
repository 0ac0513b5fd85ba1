"""The README and the pages under docs/ point only to what the repository holds: every file or
folder of the checkout they name exists, every docs/ page the README links exists, and they
cite no design document the checkout does not ship."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))
TEXT = README + "\n" + DOCS


def test_every_path_of_the_checkout_the_readme_names_exists():
    named = {m.rstrip(".,") for m in re.findall(r"\b(?:pytest_egi|suites|tests|bench)/[\w./-]+", TEXT)}
    assert len(named) >= 20  # the pattern still finds the README's paths
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_the_readme_cites_no_document_missing_from_the_checkout():
    cited = sorted(set(re.findall(r"\b([A-Z][A-Z_]+)(?:\.md)? §", TEXT)))
    assert [name for name in cited if not (ROOT / f"{name}.md").is_file()] == []


def test_the_docs_pages_the_readme_links_exist_and_hold_the_internals():
    linked = set(re.findall(r"\(docs/([\w-]+\.md)(?:#[\w-]+)?\)", README))
    assert {"internals.md", "performance.md", "development.md"} <= linked
    assert sorted(p for p in linked if not (ROOT / "docs" / p).is_file()) == []
    internals = (ROOT / "docs" / "internals.md").read_text(encoding="utf-8")
    for heading in ("## Layout of the core", "## The model gateway", "## Scheduling", "## The task cache"):
        assert heading in internals


def test_the_readme_starts_with_the_commands_ci_runs():
    """README's two commands are its first lines, and .ci/run runs the same test command."""
    first = README.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert README.index("```bash") < README.index("## ")
    assert len(first) == 2 and "pytest suites --egi-model egi/oracle" in first[0]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    tests_command = first[1].split("&& ", 1)[1].replace("python3 -m", "python -m")
    assert tests_command in ci
    assert "about 25 minutes" in README.split("## ", 1)[0]
