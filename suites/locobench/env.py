"""The environment: an answer applied to the project, then checked in the sandbox.

:func:`apply_reply` applies one parsed reply (whole files or a unified diff) to the project
held in memory, with the sandbox's path and size rules (an answer that writes outside the
project or is too large is refused, with the reason). :func:`run_checks` writes the final
tree and the harness's own files (hidden tests, a copy of the regression tests, a smoke test
that compiles every file and imports every module) into a
:class:`~pytest_egi.sandbox.Sandbox` and runs pytest there once, reading the outcomes from
its JUnit XML report (never from its output).

The result is content-addressed (:func:`checks_key`, :func:`stored_checks`,
:func:`read_checks`): the trial runs the checks once, when the model has finished, and keeps
the result in its trajectory with the sha256 of everything that determines it (final tree,
harness files, smoke test, limits, :data:`CHECKS_VERSION`); the scorer reads that result only
when the digest it recomputes is the same, else it runs the checks again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_egi.sandbox import (
    AnswerCaps,
    AnswerRefused,
    JUnitReport,
    Limits,
    RunResult,
    Sandbox,
    apply_unified_diff,
    check_answer_path,
    python_argv,
    python_env,
)
from suites.locobench.structure import module_of
from suites.locobench.tasks.common import HIDDEN_DIR

__all__ = [
    "CHECKS_VERSION",
    "Checked",
    "apply_reply",
    "checks_key",
    "importable_modules",
    "read_checks",
    "run_checks",
    "smoke_test",
    "stored_checks",
]

REPORT = f"{HIDDEN_DIR}/report.xml"
SMOKE = "test_egi_smoke"
CHECKS_VERSION = 1
"""The check runner's version, part of :func:`checks_key`. Bump it whenever a change to
:func:`run_checks` (its pytest command, :func:`smoke_test`, :func:`classify`, the run's JSON
form) or to the sandbox could change a result for the same files: results stored by a
trajectory under another version are then never read, the checks run again."""


def apply_reply(
    files: Mapping[str, str], answer: dict[str, Any], caps: AnswerCaps | None = None
) -> dict[str, str]:
    """``files`` with a parsed reply applied (a new dict; ``files`` is not changed).

    Args:
        answer: ``{"files": {path: text or None}}`` (None deletes) or ``{"diff": text}``.

    Raises:
        AnswerRefused: a path outside the project or under the harness's folder, too many
            files, a file or the answer too large, content that is not text.
        PatchError: a diff that does not parse or apply (names file and hunk).
    """
    caps = caps or AnswerCaps()
    if "diff" in answer:
        from pytest_egi.sandbox.patch import parse_unified_diff

        touched = {}
        for fd in parse_unified_diff(answer["diff"]):
            for p in (fd.old_path, fd.new_path):
                if p is not None:
                    touched[check_answer_path(p, (HIDDEN_DIR,))] = True
        changes = apply_unified_diff(answer["diff"], {p: files[p] for p in touched if p in files})
    else:
        changes = answer["files"]
    if len(changes) > caps.max_files:
        raise AnswerRefused(f"the answer changes {len(changes)} files; at most {caps.max_files} are allowed")
    out = dict(files)
    total = 0
    checked = {}
    for raw, text in changes.items():
        rel = check_answer_path(raw, (HIDDEN_DIR, ".home", ".tmp"))
        if text is not None and not isinstance(text, str):
            raise AnswerRefused(f"file {rel!r}: its content must be text, got {type(text).__name__}")
        size = len(text.encode("utf-8", errors="surrogatepass")) if text else 0
        if size > caps.max_file_bytes:
            raise AnswerRefused(
                f"file {rel!r} has {size} bytes; at most {caps.max_file_bytes} are allowed per file"
            )
        if text and "\0" in text:
            raise AnswerRefused(f"file {rel!r}: its content holds a NUL character (not a text file)")
        total += size
        checked[rel] = text
    if total > caps.max_total_bytes:
        raise AnswerRefused(
            f"the answer has {total} bytes; at most {caps.max_total_bytes} are allowed in all"
        )
    prefixes = {p + "/" for p in out}
    for rel, text in checked.items():
        if text is None:
            out.pop(rel, None)
        elif any(rel.startswith(p) for p in prefixes) or any(q.startswith(rel + "/") for q in out):
            raise AnswerRefused(f"file path {rel!r}: a file and a folder of the project would share a name")
        else:
            out[rel] = text
    return out


def importable_modules(files: Mapping[str, str]) -> list[str]:
    """The dotted modules of ``files`` the smoke test imports: every ``.py`` file inside a
    package chain from the project root (each folder with an ``__init__.py``), tests left out."""
    out = []
    for path in sorted(files):
        parts = path.split("/")
        if not path.endswith(".py") or "tests" in parts[:-1] or parts[-1].startswith("test_"):
            continue
        if all("/".join(parts[:k]) + "/__init__.py" in files for k in range(1, len(parts))):
            name = module_of(path)
            if name and all(p.isidentifier() for p in name.split(".")):
                out.append(name)
    return out


def smoke_test(modules: list[str]) -> str:
    """The harness's smoke test module: every project file compiles, every module imports."""
    return f'''"""Smoke test of the project (the harness's own): it compiles and imports."""

import importlib
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODULES = {json.dumps(modules)}
SKIP = {{"{HIDDEN_DIR}", ".home", ".tmp"}}


def test_every_file_compiles():
    failed = []
    for path in sorted(ROOT.rglob("*.py")):
        if SKIP & set(path.relative_to(ROOT).parts):
            continue
        try:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
        except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
            failed.append(f"{{path.relative_to(ROOT)}}: {{exc}}")
    assert not failed, "; ".join(failed[:5])


def test_every_module_imports():
    failed = []
    for name in MODULES:
        try:
            importlib.import_module(name)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the module is broken
            failed.append(f"{{name}}: {{type(exc).__name__}}: {{exc}}")
    assert not failed, "; ".join(failed[:5])
'''


@dataclass
class Checked:
    """What one sandbox run of the checks found.

    Attributes:
        groups: ``hidden`` / ``needle`` / ``decoy`` / ``regression`` / ``smoke`` -> test
            name -> passed.
        failures: test name -> its failure message (failed tests only).
        reason: why the run gave no usable report (stopped, killed, no JUnit file), else None.
        isolation: the sandbox's isolation level.
        run: the sandbox's result (exit status, stopped, tails), JSON-safe.
    """

    groups: dict[str, dict[str, bool]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    isolation: str = ""
    run: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (a deep copy): ``{"groups": {group: [[test, passed], ...]},
        "failures": [[test, message], ...], "reason", "isolation", "run"}``. Tests are kept as
        lists of pairs in the run's order, since the trajectory store sorts an object's keys
        and the scorer's texts list tests in that order."""
        return {
            "groups": {g: [[k, ok] for k, ok in cases.items()] for g, cases in self.groups.items()},
            "failures": [[k, v] for k, v in self.failures.items()],
            "reason": self.reason,
            "isolation": self.isolation,
            "run": json.loads(json.dumps(self.run)),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Checked:
        """The :class:`Checked` of a :meth:`to_dict` form (a deep copy).

        Raises:
            ValueError: not that form (a key missing or extra, a value of another type).
        """
        fields = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or set(data) != fields:
            raise ValueError(f"a stored check result has the keys {sorted(fields)}")

        def pairs(value: Any, kind: type, what: str) -> dict[str, Any]:
            if not isinstance(value, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], kind)
                for p in value
            ):
                raise ValueError(f"a stored check result's {what} must be a list of [test, {kind.__name__}]")
            out = dict(value)
            if len(out) != len(value):
                raise ValueError(f"a stored check result's {what} names a test twice")
            return out

        groups = data["groups"]
        if not isinstance(groups, dict):
            raise ValueError("a stored check result's groups must map a group to its tests")
        reason, isolation, run = data["reason"], data["isolation"], data["run"]
        if not (reason is None or isinstance(reason, str)) or not isinstance(isolation, str):
            raise ValueError("a stored check result's reason must be text or null, its isolation text")
        if not isinstance(run, dict):
            raise ValueError("a stored check result's run must be an object")
        return cls(
            groups={g: pairs(cases, bool, f"group {g!r}") for g, cases in groups.items()},
            failures=pairs(data["failures"], str, "failures"),
            reason=reason,
            isolation=isolation,
            run=json.loads(json.dumps(run)),
        )


def _group(classname: str, name: str) -> str:
    module = next((p for p in classname.split(".") if p.startswith("test_")), "")
    if module == SMOKE:
        return "smoke"
    if module.startswith("test_regression"):
        return "regression"
    if "needle" in name.split("_"):
        return "needle"
    if "decoy" in name.split("_"):
        return "decoy"
    return "hidden"


def classify(report: JUnitReport) -> tuple[dict[str, dict[str, bool]], dict[str, str]]:
    """The JUnit cases by group (see :class:`Checked`) and the failure messages."""
    groups: dict[str, dict[str, bool]] = {}
    failures = {}
    for case in report.cases:
        if case.outcome == "skipped":
            continue
        group = _group(case.classname, case.name)
        key = f"{case.classname.split('.')[-1]}::{case.name}"
        groups.setdefault(group, {})[key] = case.outcome == "passed"
        if case.outcome != "passed":
            failures[key] = case.message
    return groups, failures


_TIMING = re.compile(r" in \d+(\.\d+)?s\b")


def _steady(text: str, root: str) -> str:
    """``text`` without what changes from run to run: the workspace's path (``<project>``)
    and pytest's durations (same seed, same records)."""
    return _TIMING.sub("", text.replace(root, "<project>"))


def _run_dict(result: RunResult, root: str) -> dict[str, Any]:
    """The run, JSON-safe; its output tails only when it wrote no test report (the report's
    outcomes and messages say the rest, and a traceback's layout varies between runs)."""
    out: dict[str, Any] = {
        "exit_code": result.exit_code,
        "stopped": result.stopped,
        "reason": result.reason,
        "hints": list(result.hints),
    }
    if result.junit is None or result.stopped is not None:
        out["stdout_tail"] = _steady(result.stdout_tail, root)[-1500:]
        out["stderr_tail"] = _steady(result.stderr_tail, root)[-1500:]
    return out


def run_checks(files: Mapping[str, str], hidden: Mapping[str, str], limits: Limits) -> Checked:
    """Run the smoke test, the hidden tests and the regression tests on ``files`` in a sandbox.

    Args:
        files: the final project tree.
        hidden: the harness's files (under :data:`HIDDEN_DIR`).
        limits: the sandbox limits (the wall clock covers the whole pytest run).

    Raises:
        SandboxError: the sandbox could not start (an infrastructure error).
    """
    own = dict(hidden)
    own[f"{HIDDEN_DIR}/{SMOKE}.py"] = smoke_test(importable_modules(files))
    with Sandbox(dict(files), limits=limits, protected=(HIDDEN_DIR,)) as box:
        for path, text in own.items():
            box.write(path, text)
        argv = python_argv(
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "--rootdir",
            ".",
            "--continue-on-collection-errors",
            "--ignore",
            f"{HIDDEN_DIR}/mutants",
            HIDDEN_DIR,
            f"--junitxml={REPORT}",
        )
        result = box.run(argv, env=python_env(), junit=REPORT)
        root = str(box.root)
    checked = Checked(isolation=result.isolation, run=_run_dict(result, root))
    if result.stopped is not None:
        checked.reason = f"the checks were {result.reason}"
    elif result.junit is None or not result.junit.cases:
        tail = (result.stderr_tail or result.stdout_tail).strip()[-300:]
        checked.reason = f"the checks wrote no test report ({result.reason or 'no tests ran'}): {tail}"
    if checked.reason:
        checked.reason = _steady(checked.reason, root)
    if result.junit is not None:
        checked.groups, failures = classify(result.junit)
        checked.failures = {k: _steady(v, root) for k, v in failures.items()}
    return checked


def _digest(obj: Any) -> str:
    """sha256 (hex) of ``obj``'s canonical JSON (sorted keys, ASCII, no spaces)."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def checks_key(files: Mapping[str, str], hidden: Mapping[str, str], limits: Limits) -> str:
    """The sha256 (64 hex digits) of everything that determines :func:`run_checks`'s result:
    :data:`CHECKS_VERSION`, the final tree ``files``, the harness's files ``hidden``, the
    smoke test's text (its module list comes from ``files``) and every field of ``limits``.
    Equal keys, same checks; any change to one of them changes the key."""
    return _digest(
        {
            "version": CHECKS_VERSION,
            "files": dict(files),
            "hidden": dict(hidden),
            "smoke": smoke_test(importable_modules(files)),
            "limits": dataclasses.asdict(limits),
        }
    )


def stored_checks(key: str, checked: Checked) -> dict[str, Any]:
    """The form a trajectory keeps a check result in: ``{"version": CHECKS_VERSION, "key":
    key (:func:`checks_key` of the checked inputs), "result": checked.to_dict(), "sha256":
    digest of key and result}`` (the last seals the result: an edited result is not read)."""
    result = checked.to_dict()
    return {
        "version": CHECKS_VERSION,
        "key": key,
        "result": result,
        "sha256": _digest({"key": key, "result": result}),
    }


def read_checks(stored: Any, key: str) -> Checked | None:
    """The check result kept in ``stored`` (:func:`stored_checks`'s form) when it belongs to
    the inputs whose :func:`checks_key` is ``key``; None when ``stored`` is missing, of
    another version or key, edited after it was sealed, or malformed (the caller then runs
    the checks). Never raises."""
    if not isinstance(stored, dict) or stored.get("version") != CHECKS_VERSION or stored.get("key") != key:
        return None
    try:
        if stored.get("sha256") != _digest({"key": key, "result": stored.get("result")}):
            return None
        return Checked.from_dict(stored["result"])
    except (TypeError, ValueError):  # not JSON-serialisable (a live object), or malformed
        return None
