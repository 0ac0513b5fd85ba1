"""What every task category shares: the planted task's shape and the reference's helpers.

A category module (``tasks/<category>.py``) has two functions:

- ``plant(plan, rng, files) -> Planted``: changes the base project ``files`` in place (a
  policy module holding the needle facts, a decoy under ``legacy/``, a planted bug or
  layering violation, ...) and returns the task: its statement, hidden tests, needle and
  decoy files, and what the software-engineering checks must allow.
- ``reference(plan, planted, context, session) -> {path: new text}``: the reference solution
  of one session, **computed from the files the prompt showed** (``context``), never from
  the hidden tests. Facts it needs (a constant's value, a method's name) are looked up in the
  context as an engineer would, preferring live modules over ``legacy/`` ones: when the needle
  file is missing from the context (the ablation control), the only definition left is the
  decoy's, and the reference uses it, as a model that did not see the needle would.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "HIDDEN_DIR",
    "Planted",
    "dedent",
    "find_class_method",
    "add_import",
    "find_constant",
    "find_exception",
    "hidden_header",
    "module_name",
    "replace_once",
]

HIDDEN_DIR = "_egi_hidden"
"""Folder of the hidden tests in the workspace (an answer may not write there)."""


@dataclass
class Planted:
    """A task planted in a project.

    Attributes:
        title: the task's title (upstream ``title``).
        description: what the situation is (upstream ``description``).
        sessions: the requirements, one text per session (upstream ``task_prompt``; one
            session except ``multi_session_development``).
        hidden_tests: the hidden test module's text (tests named ``test_needle_*`` need a
            needle fact, ``test_decoy_*`` pass only when the decoy was used, the others are
            plain functional tests).
        needle_files: the files holding the facts the needle tests need.
        decoy_files: the near-duplicate modules with conflicting facts.
        renamed: ``"module:Qual.name" -> new name`` the task asks to rename (the
            software-engineering checks accept the old name's disappearance).
        may_change: qualified names (``"module:Qual.name"``) whose signature the task asks to
            change (new parameters with defaults are always accepted).
        static_checks: checks run on the answer's files outside the sandbox, each
            ``{"kind": "bandit_gone", "file": path, "test_id": "B307", "name": ...}``.
        mutants: (``integration_testing``) project variants the model's tests should fail on,
            each ``{"name", "files": {path: text}, "decoy": bool}``.
        model_tests: (``integration_testing``) the test file the model must write.
        regression_quotes: whether the visible regression tests check quote totals.
        info: anything the reference needs that the plan does not hold (JSON-safe).
    """

    title: str
    description: str
    sessions: list[str]
    hidden_tests: str
    needle_files: list[str]
    decoy_files: list[str]
    renamed: dict[str, str] = field(default_factory=dict)
    may_change: list[str] = field(default_factory=list)
    static_checks: list[dict[str, Any]] = field(default_factory=list)
    mutants: list[dict[str, Any]] = field(default_factory=list)
    model_tests: str | None = None
    regression_quotes: bool = True
    info: dict[str, Any] = field(default_factory=dict)


def dedent(text: str) -> str:
    """``textwrap.dedent`` without the leading newline."""
    return textwrap.dedent(text).lstrip("\n")


def module_name(path: str) -> str:
    """``pkg/services/x.py`` -> ``pkg.services.x`` (``__init__.py`` -> its package)."""
    name = path[:-3] if path.endswith(".py") else path
    parts = name.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def replace_once(text: str, old: str, new: str) -> str:
    """``text`` with its one ``old`` replaced.

    Raises:
        ValueError: ``old`` occurs other than once (a generator bug, never a model's).
    """
    count = text.count(old)
    if count != 1:
        raise ValueError(f"generator: expected one {old!r}, found {count}")
    return text.replace(old, new)


def _live_first(paths: list[str]) -> list[str]:
    return sorted(paths, key=lambda p: ("/legacy/" in p, p))


def find_constant(context: Mapping[str, str], name: str) -> tuple[str, Any] | None:
    """Where the module-level constant ``name`` is defined in the shown files, and its value:
    ``(path, value)``, a live module's definition before a ``legacy/`` one; None when no
    shown file defines it."""
    pattern = re.compile(rf"^{re.escape(name)}\s*=\s*(.+)$", re.MULTILINE)
    for path in _live_first([p for p in context if p.endswith(".py")]):
        m = pattern.search(context[path])
        if m:
            try:
                return path, ast.literal_eval(m.group(1).strip())
            except (ValueError, SyntaxError):
                continue
    return None


def find_class_method(
    context: Mapping[str, str], cls: str, method: str | None = None
) -> tuple[str, str] | None:
    """Where class ``cls`` is defined (a live module before ``legacy/``) and, with
    ``method`` None, the name of its first public method that is not ``__init__``; with
    ``method`` given, that method's own name if the class defines it. Returns ``(path,
    method name)`` or None."""
    for path in _live_first([p for p in context if p.endswith(".py")]):
        try:
            tree = ast.parse(context[path])
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                names = [
                    n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
                ]
                if method is None and names:
                    return path, names[0]
                if method in names:
                    return path, method
    return None


def hidden_header(imports: str) -> str:
    """The start of a hidden test module."""
    return (
        '"""Hidden tests of this scenario (never shown to the model)."""\n\nimport pytest  # noqa: F401\n\n'
        + (dedent(imports) + "\n\n")
    )


def add_import(text: str, line: str) -> str:
    """``text`` with the import ``line`` added to its top-level imports (standard library
    first, then the package, each group sorted); a line already present is not repeated."""
    import sys

    lines = text.split("\n")
    if line in lines:
        return text
    tree = ast.parse(text)
    spans = [
        (n.lineno - 1, n.end_lineno or n.lineno)
        for n in tree.body
        if isinstance(n, (ast.Import, ast.ImportFrom))
    ]
    if not spans:
        doc = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) else None
        at = (doc.end_lineno or 0) if doc is not None else 0
        return "\n".join([*lines[:at], "", line, *lines[at:]])
    first, last = spans[0][0], spans[-1][1]
    block = [ln for ln in lines[first:last] if ln.strip()] + [line]

    def top(ln: str) -> str:
        return ln.split()[1].split(".")[0]

    stdlib = sorted((ln for ln in block if top(ln) in sys.stdlib_module_names), key=lambda ln: ln.split()[1])
    own = sorted((ln for ln in block if top(ln) not in sys.stdlib_module_names), key=lambda ln: ln.split()[1])
    merged = stdlib + ([""] if stdlib and own else []) + own
    return "\n".join([*lines[:first], *merged, *lines[last:]])


def find_exception(context: Mapping[str, str], suffix: str) -> tuple[str, str] | None:
    """The first exception class whose name ends with ``suffix`` defined in the shown files
    (a live module before a ``legacy/`` one): ``(path, class name)``, or None."""
    for path in _live_first([p for p in context if p.endswith(".py")]):
        try:
            tree = ast.parse(context[path])
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name.endswith(suffix) and node.bases:
                return path, node.name
    return None
