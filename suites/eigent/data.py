"""Eigent benchmark folders: the dataset schema and the loader.

A benchmark folder (upstream ``backend/benchmark/``) holds ``dataset/<n>.json``, one task each:

- ``metadata``: ``difficulty`` (``easy`` | ``medium`` | ``hard``), ``description``, ``tags``;
- ``data``: ``name``, ``question``, ``env`` (``files``, ``browser_port``,
  ``installed_mcp.mcpServers``, ``env_file``);
- ``model_kwargs`` (optional): ``model_platform``, ``model_type``, ``api_key``, ``api_url``;
- ``tests``: ``checker`` and ``grader``, lists of script paths as upstream's runner opens them
  (relative to the folder's parent, upstream's ``backend/``: ``benchmark/checker/0.py``).

Every checker script must define ``check(working_directory)`` and every grader
``grade(working_directory)`` (checked on the script's syntax tree at load time; the scripts are
only ever executed in the sandbox). Our own extension, ignored by upstream's runner:
``solution/<n>.json``, the reference solution the offline policies replay (see
:mod:`suites.eigent.policy`).

Anything malformed is a :class:`DatasetError` (a ``ValueError``: a usage error, exit 4)
naming the file, the field and the fix.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "DIFFICULTIES",
    "BenchmarkConfig",
    "DatasetError",
    "find_script",
    "load_folder",
    "parse_dataset",
    "script_defines",
]

DIFFICULTIES = ("easy", "medium", "hard")
"""Upstream's difficulty levels (the suite's categories)."""


class DatasetError(ValueError):
    """A malformed dataset file, checker or grader: a usage error naming file, field and fix."""


class Metadata(BaseModel):
    """``metadata`` of a dataset file."""

    model_config = ConfigDict(extra="allow")
    difficulty: Literal["easy", "medium", "hard"]
    description: str = ""
    tags: list[str] = Field(default_factory=list)


class McpServerConfig(BaseModel):
    """One entry of ``env.installed_mcp.mcpServers`` (the usual MCP client config shape)."""

    model_config = ConfigDict(extra="allow")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str | None = None


class InstalledMcp(BaseModel):
    """``env.installed_mcp``."""

    model_config = ConfigDict(extra="allow")
    mcpServers: dict[str, McpServerConfig] = Field(default_factory=dict)  # noqa: N815 - upstream's key


class Env(BaseModel):
    """``data.env`` (upstream ``benchmark/environment.py`` ``Env``)."""

    model_config = ConfigDict(extra="allow")
    files: list[str] = Field(default_factory=list)
    browser_port: int = 9222
    installed_mcp: InstalledMcp = Field(default_factory=InstalledMcp)
    env_file: str | None = None


class Data(BaseModel):
    """``data``."""

    model_config = ConfigDict(extra="allow")
    name: str
    question: str
    env: Env = Field(default_factory=Env)


class ModelKwargs(BaseModel):
    """``model_kwargs`` (upstream defaults: ``openai`` / ``gpt-4o``)."""

    model_config = ConfigDict(extra="allow")
    model_platform: str = "openai"
    model_type: str = "gpt-4o"
    api_key: str | None = None
    api_url: str | None = None


class Tests(BaseModel):
    """``tests``."""

    model_config = ConfigDict(extra="allow")
    checker: list[str] = Field(default_factory=list)
    grader: list[str] = Field(default_factory=list)


class BenchmarkConfig(BaseModel):
    """One dataset file (upstream ``BenchmarkConfig``, with ``metadata.difficulty`` required)."""

    model_config = ConfigDict(extra="allow")
    metadata: Metadata
    data: Data
    model_kwargs: ModelKwargs | None = None
    tests: Tests


def parse_dataset(path: Path) -> BenchmarkConfig:
    """Parse one ``dataset/<n>.json``.

    Raises:
        DatasetError: not JSON, or a field missing or of the wrong type (names the file, the
            field and the fix).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read the dataset file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                           "fix: write the dataset file as one JSON object") from None  # fmt: skip
    if not isinstance(raw, dict):
        raise DatasetError(f"{path}: the top level must be a JSON object with metadata, data and tests")
    try:
        return BenchmarkConfig.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "<root>"
        msg = err["msg"]
        if err["type"] == "missing":
            fix = f"add {field!r}"
        elif err["type"] == "literal_error":
            fix = (
                f"use one of {', '.join(DIFFICULTIES)}"
                if field == "metadata.difficulty"
                else "use an allowed value"
            )
            msg = f"{msg} (got {err.get('input')!r})"
        else:
            fix = "give it the documented type (see suites/eigent/README.md, 'Folder format')"
        raise DatasetError(f"{path}: field {field}: {msg}; fix: {fix}") from None


def find_script(folder: Path, script: str) -> Path | None:
    """Where a ``tests`` path points: relative to the folder's parent (upstream's runner runs
    from ``backend/`` with paths like ``benchmark/checker/0.py``), else to the folder itself,
    else as an absolute path; None when none exists."""
    raw = Path(script)
    for candidate in (raw,) if raw.is_absolute() else (folder.parent / raw, folder / raw):
        if candidate.is_file():
            return candidate.resolve()
    return None


def script_defines(path: Path, name: str) -> bool:
    """``path`` (Python source) defines a top-level function (or assigns a name) ``name``.

    Raises:
        DatasetError: the script does not parse (names the line).
    """
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        raise DatasetError(f"{path}: not valid Python (line {exc.lineno}: {exc.msg})") from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return True
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return True
    return False


def _resolve_scripts(folder: Path, dataset: Path, cfg: BenchmarkConfig) -> list[dict[str, str]]:
    out = []
    for kind, fn in (("checker", "check"), ("grader", "grade")):
        for i, script in enumerate(getattr(cfg.tests, kind)):
            field = f"tests.{kind}[{i}]"
            found = find_script(folder, script)
            if found is None:
                raise DatasetError(
                    f"{dataset}: field {field}: script {script!r} not found (looked under "
                    f"{folder.parent} and {folder}); fix: give the path as upstream does "
                    f"('{folder.name}/{kind}/<n>.py', relative to the folder's parent)"
                )
            if not script_defines(found, fn):
                raise DatasetError(
                    f"{found}: field {fn}: the {kind} (named in {dataset} {field}) defines no "
                    f"function {fn}(working_directory); fix: define {fn}(working_directory) "
                    + ("returning True/False" if kind == "checker" else "returning (completed, total)")
                )
            out.append({"type": kind, "script": script, "path": str(found)})
    return out


def load_folder(folder: Path, index: int) -> list[dict[str, Any]]:
    """The tasks of one benchmark folder, in upstream's order (``sorted(dataset/*.json)``).

    Args:
        folder: the benchmark folder (holds ``dataset/``).
        index: its position among ``eigent.dirs`` (kept for ordering and ids).

    Returns:
        One dict per dataset file: ``id``, ``category`` (the difficulty) and the task data
        (the parsed config, resolved script paths, the folder, the reference solution file
        when present).

    Raises:
        DatasetError: no ``dataset/`` folder or no dataset file, a malformed dataset file, a
            script that does not resolve or lacks ``check`` / ``grade``, a task that names no
            checker, or two files with the same ``data.name``.
    """
    folder = folder.expanduser().resolve()
    dataset_dir = folder / "dataset"
    if not dataset_dir.is_dir():
        raise DatasetError(f"{folder}: no dataset/ folder; fix: give eigent.dirs the benchmark folder "
                           "that holds dataset/<n>.json (upstream's backend/benchmark)")  # fmt: skip
    files = sorted(dataset_dir.glob("*.json"))
    if not files:
        raise DatasetError(f"{dataset_dir}: no dataset file (<n>.json)")
    out: list[dict[str, Any]] = []
    names: dict[str, Path] = {}
    for path in files:
        cfg = parse_dataset(path)
        if cfg.data.name in names:
            raise DatasetError(f"{path}: field data.name: {cfg.data.name!r} is also the name in "
                               f"{names[cfg.data.name]}; fix: give each task its own name")  # fmt: skip
        names[cfg.data.name] = path
        if not cfg.tests.checker:
            raise DatasetError(f"{path}: field tests.checker: empty; fix: name at least one checker "
                               "script (the task passes when every checker passes)")  # fmt: skip
        scripts = _resolve_scripts(folder, path, cfg)
        solution = folder / "solution" / f"{path.stem}.json"
        out.append(
            {
                "id": _task_id(folder, cfg.data.name, index),
                "category": cfg.metadata.difficulty,
                # model_kwargs.api_key is never used and never stored (records hold the task data)
                "config": cfg.model_dump(
                    mode="json", exclude_none=True, exclude={"model_kwargs": {"api_key"}}
                ),
                "scripts": scripts,
                "folder": str(folder),
                "dataset_file": str(path),
                "order": [index, path.name],
                "solution": str(solution) if solution.is_file() else None,
            }
        )
    return out


def _task_id(folder: Path, name: str, index: int) -> str:
    import re

    stem = re.sub(r"[^A-Za-z0-9_.:-]+", "_", folder.name).strip("_.") or "benchmark"
    safe = re.sub(r"[^A-Za-z0-9_.:-]+", "_", name).strip("_.") or "task"
    return f"{stem}.{safe}" if index == 0 else f"{stem}{index + 1}.{safe}"
