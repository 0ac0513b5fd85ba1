"""Code quality of the files an answer changed: ``ruff``, ``radon`` and ``bandit``, mapped to 0-1.

Reference C2 (CQ, "on changed files only"); upstream's CQ (B5) is a comment-ratio heuristic
plus a constant security term, replaced here by three real tools. Each tool reads the final
text of the changed ``.py`` files (it never runs them); the mapping, documented in the
README:

- ``ruff`` (pinned rule set :data:`RUFF_SELECT`, line length :data:`RUFF_LINE_LENGTH`):
  ``v`` = violations per 100 changed lines (lines the answer added or rewrote), score
  ``1 / (1 + v)``;
- ``radon``: the mean cyclomatic complexity of the changed files' blocks, banded by radon's
  ranks (A 1.0, B 0.75, C 0.5, D 0.25, E/F 0), and the mean maintainability index, banded
  by radon's ranks (A 1.0, B 0.5, C 0); score = their mean (1.0 when no block);
- ``bandit`` (test ``B101``, ``assert``, skipped: tests use it): severity-weighted findings
  ``w`` (LOW 1, MEDIUM 2, HIGH 4), score ``1 / (1 + w)``.

``code_quality`` = the mean of the three. A changed file that does not parse scores 0 (no
tool can read it), and so does an answer that changed nothing (a non-answer is never
credited).
"""

from __future__ import annotations

import ast
import difflib
import json
import logging
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BANDIT_SKIP", "RUFF_SELECT", "Quality", "bandit_findings", "changed_lines", "code_quality"]

RUFF_SELECT = "E,F,W,B"
"""ruff's rule set: pycodestyle errors and warnings, pyflakes, flake8-bugbear."""
RUFF_LINE_LENGTH = 120
BANDIT_SKIP = ("B101",)
BANDIT_WEIGHTS = {"LOW": 1, "MEDIUM": 2, "HIGH": 4}
CC_BANDS = ((5, 1.0), (10, 0.75), (20, 0.5), (30, 0.25))
"""radon's complexity ranks A-D: (highest complexity of the rank, score); above D scores 0."""
MI_BANDS = ((19, 1.0), (9, 0.5))
"""radon's maintainability ranks: MI above 19 is A (1.0), above 9 is B (0.5), else C (0)."""


@dataclass
class Quality:
    """The code-quality verdict on an answer's changed files.

    Attributes:
        score: ``code_quality``, 0-1.
        ruff, radon, bandit: each tool's score, 0-1 (None when nothing was checked).
        ruff_violations: ``"path:line CODE message"`` lines.
        bandit_findings: ``"path:line TEST severity message"`` lines.
        changed_lines: lines added or rewritten over the changed files.
        mean_complexity, mean_mi: radon's raw figures (None when no block / file).
        unparsable: changed files that do not parse.
    """

    score: float
    ruff: float | None = None
    radon: float | None = None
    bandit: float | None = None
    ruff_violations: list[str] = field(default_factory=list)
    bandit_findings: list[str] = field(default_factory=list)
    changed_lines: int = 0
    mean_complexity: float | None = None
    mean_mi: float | None = None
    unparsable: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-safe form (the trial's ``details``)."""
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in self.__dict__.items()}


def changed_lines(old: str | None, new: str) -> int:
    """Lines of ``new`` that are not in ``old`` (all of them for a new file)."""
    if old is None:
        return len(new.splitlines())
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    return sum(j2 - j1 for tag, _i1, _i2, j1, j2 in matcher.get_opcodes() if tag in ("replace", "insert"))


def _write(files: Mapping[str, str], root: Path) -> list[Path]:
    out = []
    for rel, text in sorted(files.items()):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        out.append(path)
    return out


def _ruff(paths: list[Path], root: Path) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "ruff",
        "check",
        "--isolated",
        "--no-cache",
        "--select",
        RUFF_SELECT,
        "--line-length",
        str(RUFF_LINE_LENGTH),
        "--output-format",
        "json",
        "--exit-zero",
        *(str(p.relative_to(root)) for p in paths),
    ]
    done = subprocess.run(
        argv, cwd=root, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise RuntimeError(f"ruff failed (status {done.returncode}): {done.stderr.strip()[-300:]}")
    found = json.loads(done.stdout or "[]")
    return sorted(
        f"{Path(v['filename']).resolve().relative_to(root.resolve()).as_posix()}:"
        f"{v['location']['row']} {v['code']} {v['message']}"
        for v in found
    )


def bandit_findings(files: Mapping[str, str]) -> list[tuple[str, int, str, str, str]]:
    """bandit's findings on ``files`` (path -> text): ``(path, line, test id, severity,
    message)``, sorted; :data:`BANDIT_SKIP` left out."""
    with warnings.catch_warnings():  # stevedore (under bandit) warns of its own deprecated argument
        warnings.simplefilter("ignore", DeprecationWarning)
        from bandit.core import config as bandit_config
        from bandit.core import manager

    logging.getLogger("bandit").setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory(prefix="egi-cq-") as tmp:
        root = Path(tmp)
        paths = _write(files, root)
        with warnings.catch_warnings():  # stevedore (under bandit) warns of its own deprecated argument
            warnings.simplefilter("ignore", DeprecationWarning)
            mgr = manager.BanditManager(
                bandit_config.BanditConfig(),
                "file",
                quiet=True,
                profile={"include": set(), "exclude": set(BANDIT_SKIP)},
            )
            mgr.discover_files([str(p) for p in paths])
            mgr.run_tests()
        issues = mgr.get_issue_list()
        return sorted(
            (Path(i.fname).relative_to(root).as_posix(), int(i.lineno), i.test_id, str(i.severity), i.text)
            for i in issues
        )


def _band(value: float, bands: tuple[tuple[float, float], ...], descending: bool) -> float:
    for limit, score in bands:
        if (value <= limit) if not descending else (value > limit):
            return score
    return 0.0


def _radon(files: Mapping[str, str]) -> tuple[float, float | None, float | None]:
    from radon.complexity import cc_visit
    from radon.metrics import mi_visit

    blocks = [b.complexity for text in files.values() for b in cc_visit(text)]
    mis = [float(mi_visit(text, multi=True)) for text in files.values()]
    cc = sum(blocks) / len(blocks) if blocks else None
    mi = sum(mis) / len(mis) if mis else None
    cc_score = 1.0 if cc is None else _band(cc, CC_BANDS, descending=False)
    mi_score = 1.0 if mi is None else _band(mi, MI_BANDS, descending=True)
    return (cc_score + mi_score) / 2, cc, mi


def code_quality(changed: Mapping[str, str], original: Mapping[str, str]) -> Quality:
    """Score the changed files (path -> final text; ``original`` holds the texts before the
    answer, a new file absent). Only ``.py`` files are checked.

    Returns:
        The :class:`Quality`; score 0 when nothing changed or a changed file does not parse.

    Raises:
        RuntimeError: ruff itself failed (an infrastructure error, not the answer's).
    """
    py = {p: t for p, t in changed.items() if p.endswith(".py")}
    if not changed:
        return Quality(0.0)
    if not py:
        return Quality(1.0)  # only non-Python files changed: nothing the tools can fault
    bad = []
    for path, text in sorted(py.items()):
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            bad.append(path)
    lines = sum(changed_lines(original.get(p), t) for p, t in py.items())
    if bad:
        return Quality(0.0, 0.0, 0.0, 0.0, changed_lines=lines, unparsable=bad)
    with tempfile.TemporaryDirectory(prefix="egi-cq-") as tmp:
        root = Path(tmp)
        violations = _ruff(_write(py, root), root)
    v = len(violations) * 100 / max(lines, 1)
    ruff_score = 1 / (1 + v)
    radon_score, cc, mi = _radon(py)
    findings = bandit_findings(py)
    weighted = sum(BANDIT_WEIGHTS.get(f[3], 1) for f in findings)
    bandit_score = 1 / (1 + weighted)
    score = (ruff_score + radon_score + bandit_score) / 3
    return Quality(
        score,
        ruff_score,
        radon_score,
        bandit_score,
        violations,
        [f"{p}:{n} {t} {s} {m}" for p, n, t, s, m in findings],
        lines,
        cc,
        mi,
    )
