"""The agent's environment: a fresh working directory in the sandbox, the workspace tools, the
task's MCP servers, and the checker / grader runner.

- :class:`Workspace`: one :class:`~pytest_egi.sandbox.Sandbox` per trial (the same runner as
  LoCoBench), seeded with the task's ``env.files``; the folder the checkers are given.
- :func:`workspace_tools`: ``list_files``, ``read_file``, ``write_file``, ``run_command``
  (``sh -c`` in the sandbox with a wall-clock timeout). A bad path or a command that fails,
  hangs or is stopped by a limit is an observation for the model; a sandbox that cannot start
  a command (:class:`~pytest_egi.sandbox.SandboxError`) is an environment fault (the item
  errors).
- :func:`server_specs`: the stdio MCP servers a task's ``env.installed_mcp`` asks for, with
  ``env_file`` values put into each server's environment only (never into task data, records
  or trajectories); what cannot be provided raises :class:`~pytest_egi.suite.CannotRun`.
- :func:`run_script`: one checker or grader in a sandboxed subprocess with a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_egi.agents.tools import Tool, ToolError
from pytest_egi.sandbox import AnswerRefused, Limits, Sandbox
from pytest_egi.suite import CannotRun

__all__ = [
    "CheckerError",
    "ScriptResult",
    "Workspace",
    "parse_env_file",
    "run_script",
    "server_specs",
    "workspace_tools",
]

COMMAND_TIMEOUT_S = 60.0
"""Default wall-clock limit of one ``run_command`` call, seconds."""
MAX_COMMAND_TIMEOUT_S = 300.0
"""The most a ``run_command`` call may ask for, seconds."""
OBSERVATION_CHARS = 4000
"""Characters of a file or of a command's output the model reads (the end is cut)."""
HIDDEN = (".home", ".tmp")
"""The sandbox's own folders in the working directory (not listed to the model)."""


class CheckerError(RuntimeError):
    """A checker or grader crashed, hung, or returned what upstream's runner cannot use: an
    error for that task (never scored); the message names the script and keeps its output."""

    one_line_report = True


class Workspace:
    """The trial's working directory (a sandbox folder), seeded with ``files``.

    Args:
        files: (source path, name in the working directory) pairs, copied in (trusted).
        limits: default limits of the commands run there.
    """

    def __init__(self, files: list[tuple[Path, str]], limits: Limits | None = None) -> None:
        self.box = Sandbox(limits=limits or Limits(wall_s=COMMAND_TIMEOUT_S))
        self.root = self.box.root
        for source, name in files:
            target = self.root / name
            if source.is_dir():
                shutil.copytree(source, target, symlinks=False, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)

    def inside(self, rel: str) -> Path:
        """``rel`` as a path inside the working directory.

        Raises:
            ToolError: the path is absolute, leaves the folder, or runs through a link out of it.
        """
        try:
            from pytest_egi.sandbox import check_answer_path

            clean = check_answer_path(rel) if rel not in ("", ".", "./") else "."
        except AnswerRefused as exc:
            raise ToolError(str(exc)) from None
        target = (self.root / clean).resolve()
        if target != self.root and not target.is_relative_to(self.root):
            raise ToolError(f"path {rel!r} leads outside the working directory")
        return target

    def scrub(self, text: str) -> str:
        """``text`` with the working directory's absolute path made relative (``<root>/a.py``
        -> ``a.py``, ``<root>`` -> ``.``): the folder's name is random, and the records must be
        the same for one seed (serial or ``-n 2``)."""
        root = str(self.root)
        return text.replace(root + "/", "").replace(root, ".")

    def files(self) -> list[str]:
        """Relative paths of the working directory's files, sorted (the sandbox's own
        ``.home`` / ``.tmp`` left out)."""
        return [p for p in self.box.paths()]

    def close(self) -> None:
        """Remove the working directory."""
        self.box.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _clip(text: str, limit: int = OBSERVATION_CHARS) -> str:
    return text if len(text) <= limit else f"[... {len(text) - limit} characters cut ...]\n" + text[-limit:]


def workspace_tools(ws: Workspace) -> list[Tool]:
    """The four workspace tools over ``ws`` (observations are text)."""

    def list_files(path: str = ".") -> str:
        base = ws.inside(path)
        if not base.is_dir():
            raise ToolError(f"{path!r} is not a folder")
        rel_base = "" if base == ws.root else str(base.relative_to(ws.root)) + "/"
        names = [p for p in ws.files() if p.startswith(rel_base)]
        return "\n".join(names) if names else "(no files)"

    def read_file(path: str) -> str:
        target = ws.inside(path)
        if not target.is_file():
            raise ToolError(f"no such file: {path!r}")
        try:
            return _clip(ws.scrub(target.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            raise ToolError(f"{path!r} is not a UTF-8 text file") from None

    def write_file(path: str, content: str) -> str:
        try:
            written = ws.box.apply_files({path: content})
        except AnswerRefused as exc:
            raise ToolError(str(exc)) from None
        return f"wrote {written[0]} ({len(content.encode('utf-8', 'surrogatepass'))} bytes)"

    def run_command(command: str, timeout_s: float = COMMAND_TIMEOUT_S) -> str:
        wall = max(1.0, min(float(timeout_s), MAX_COMMAND_TIMEOUT_S))
        limits = Limits(wall_s=wall, cpu_s=int(wall) + 1, tail_chars=OBSERVATION_CHARS)
        result = ws.box.run(["/bin/sh", "-c", command], limits=limits)  # SandboxError: a fault
        head = f"exit code: {result.exit_code}" if result.stopped is None else f"stopped: {result.reason}"
        return ws.scrub(f"{head}\nstdout:\n{result.stdout_tail}\nstderr:\n{result.stderr_tail}")

    text = {"type": "string"}
    return [
        Tool("list_files", "List the files under a folder of the working directory (recursive).",
             {"type": "object", "properties": {"path": {**text, "description": "folder, default '.'"}},
              "additionalProperties": False}, list_files),
        Tool("read_file", "Read a UTF-8 text file of the working directory.",
             {"type": "object", "properties": {"path": text}, "required": ["path"],
              "additionalProperties": False}, read_file),
        Tool("write_file", "Create or overwrite a text file in the working directory.",
             {"type": "object", "properties": {"path": text, "content": text},
              "required": ["path", "content"], "additionalProperties": False}, write_file, kind="write"),
        Tool("run_command", "Run a shell command (sh -c) in the working directory; no network. "
             f"Stopped after timeout_s seconds (default {COMMAND_TIMEOUT_S:g}, at most "
             f"{MAX_COMMAND_TIMEOUT_S:g}).",
             {"type": "object", "properties": {"command": text, "timeout_s": {"type": "number"}},
              "required": ["command"], "additionalProperties": False}, run_command, kind="write"),
    ]  # fmt: skip


# -- MCP servers ------------------------------------------------------------------------------


def parse_env_file(path: Path) -> dict[str, str]:
    """A dotenv file's ``KEY=VALUE`` lines (``export`` prefix, ``#`` comments, single or double
    quotes allowed), as python-dotenv's ``dotenv_values`` reads the simple cases upstream uses.

    Raises:
        OSError: the file cannot be read.
    """
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        out[key.strip()] = value
    return out


def _env_file_path(folder: Path, name: str) -> Path | None:
    raw = Path(name)
    for candidate in (raw,) if raw.is_absolute() else (folder.parent / raw, folder / raw):
        if candidate.is_file():
            return candidate
    return None


PYTHON_COMMANDS = ("python", "python3")
"""Server commands run with the interpreter running pytest-egi (so a Python server finds the
``mcp`` package installed beside it)."""


def server_specs(data: dict[str, Any], timeout_s: float = 60.0) -> list[Any]:
    """The stdio MCP servers of a task (``config.data.env.installed_mcp.mcpServers``).

    Each server runs its ``command`` with ``args`` from the benchmark folder, its ``env`` plus
    every value of the task's ``env_file`` (resolved like upstream, from the folder's parent,
    else the folder) in its environment only.

    Returns:
        :class:`~pytest_egi.mcp.ServerSpec` objects, in the dataset's order.

    Raises:
        CannotRun: a server given by ``url`` (only stdio servers are started), without a
            command, or whose command is not installed here; an ``env_file`` that is missing.
    """
    from pytest_egi.mcp import ServerSpec

    env = data["config"]["data"].get("env") or {}
    servers = ((env.get("installed_mcp") or {}).get("mcpServers")) or {}
    if not servers:
        return []
    folder = Path(data["folder"])
    secrets: dict[str, str] = {}
    if env.get("env_file"):
        found = _env_file_path(folder, env["env_file"])
        if found is None:
            raise CannotRun(f"its env_file {env['env_file']!r} is not found (looked under {folder.parent} "
                            f"and {folder}); the MCP servers need its credentials")  # fmt: skip
        secrets = parse_env_file(found)
    specs = []
    for name, cfg in servers.items():
        if cfg.get("url") and not cfg.get("command"):
            raise CannotRun(f"MCP server {name!r} is a remote server ({cfg['url']}); only local stdio "
                            "servers are started")  # fmt: skip
        command = cfg.get("command")
        if not command:
            raise CannotRun(f"MCP server {name!r} names no command")
        exe = sys.executable if command in PYTHON_COMMANDS else shutil.which(command)
        if exe is None:
            raise CannotRun(f"MCP server {name!r} needs the command {command!r}, which is not installed here")
        merged = {**(cfg.get("env") or {}), **secrets}
        specs.append(ServerSpec.of(name, exe, cfg.get("args") or [], env=merged, cwd=folder,
                                   timeout_s=timeout_s))  # fmt: skip
    return specs


# -- checkers and graders -----------------------------------------------------------------------

MARKER = "\x1eEGI-EIGENT-RESULT "
"""Starts the launcher's last stdout line (the record separator character: nothing a script
prints by accident)."""

LAUNCHER = r"""
import importlib.util, json, os, sys, traceback
spec = json.loads(sys.argv[1])
sys.path[:0] = [spec["import_root"]] + spec["site"]
out = {}
try:
    mod_spec = importlib.util.spec_from_file_location(spec["kind"], spec["script"])
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    value = getattr(module, spec["function"])(spec["workdir"])
    if spec["kind"] == "checker":
        out = {"passed": bool(value)}
    else:
        completed, total = value
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (completed, total)):
            raise TypeError("grade() returned %r; expected (completed, total) as two integers" % (value,))
        out = {"completed": completed, "total": total}
except BaseException as exc:
    traceback.print_exc()
    out = {"error": "%s: %s" % (type(exc).__name__, exc)}
sys.stdout.flush()
sys.stdout.write("\n" + MARKER + json.dumps(out) + "\n")
sys.stdout.flush()
""".replace("MARKER", repr(MARKER))


@dataclass(frozen=True)
class ScriptResult:
    """One checker's or grader's outcome.

    Attributes:
        type: ``checker`` or ``grader``.
        script: the path as the dataset names it (upstream's CSV ``script`` column).
        passed: checkers: the verdict (upstream: truthy return = PASS).
        completed, total: graders: milestones met and milestones.
        output: what the script printed (the end of stdout, then of stderr), for the record.
    """

    type: str
    script: str
    passed: bool | None = None
    completed: int | None = None
    total: int | None = None
    output: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (kept in the trajectory)."""
        return {"type": self.type, "script": self.script, "passed": self.passed,
                "completed": self.completed, "total": self.total, "output": self.output}  # fmt: skip


_COPIES: dict[str, Path] = {}


def _reachable(path: Path) -> bool:
    """Every folder on the way to ``path`` can be traversed by others, and ``path`` read."""
    try:
        for ancestor in [path, *path.parents]:
            if not ancestor.stat().st_mode & 0o001:
                return False
        return bool(path.stat().st_mode & 0o004)
    except OSError:
        return False


def reachable_folder(folder: Path) -> Path:
    """``folder`` itself when a sandboxed command (run under a user id of its own) can read
    it, else a read-only copy of it (made once per process, under the sandbox's base folder,
    removed at exit). Files beside the folder (upstream's ``backend/browser_log/``) are not
    in the copy."""
    folder = folder.resolve()
    if _reachable(folder) and all(_reachable(p) for p in folder.rglob("*") if p.is_file()):
        return folder
    if str(folder) not in _COPIES:
        import atexit
        import tempfile

        from pytest_egi.sandbox import sandbox_base_dir

        base = Path(tempfile.mkdtemp(prefix="eigent-", dir=sandbox_base_dir()))
        target = base / folder.name
        shutil.copytree(folder, target, symlinks=False)
        for path in [base, *base.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        atexit.register(shutil.rmtree, base, True)
        _COPIES[str(folder)] = target
    return _COPIES[str(folder)]


def run_script(ws: Workspace, entry: dict[str, str], folder: Path, timeout_s: float) -> ScriptResult:
    """Run one checker (``check``) or grader (``grade``) against the working directory, in a
    sandboxed subprocess (no network, writes only there) with a wall-clock timeout.

    The script is imported by path with the folder's parent first on ``sys.path`` (upstream's
    runner runs from ``backend/``); it gets the working directory's absolute path. A folder
    the sandbox's user cannot read is used through a copy (:func:`reachable_folder`).

    Raises:
        CheckerError: the script raised, hung past ``timeout_s``, was killed, or returned what
            upstream's runner cannot use (a grader's result not two integers); the message
            names the script and holds its output.
    """
    from pytest_egi.sandbox import python_env

    kind = entry["type"]
    script = Path(entry["path"])
    readable = reachable_folder(folder)
    if readable != folder.resolve() and script.is_relative_to(folder.resolve()):
        script = readable / script.relative_to(folder.resolve())
    spec = {"kind": kind, "function": "check" if kind == "checker" else "grade", "script": str(script),
            "workdir": str(ws.root), "import_root": str(readable.parent),
            "site": [p for p in python_env()["PYTHONPATH"].split(os.pathsep) if p]}  # fmt: skip
    argv = [sys.executable, "-I", "-S", "-u", "-B", "-c", LAUNCHER, json.dumps(spec)]
    result = ws.box.run(argv, limits=Limits(wall_s=timeout_s, cpu_s=int(timeout_s) + 1, tail_chars=8000))
    stdout, stderr = ws.scrub(result.stdout_tail), ws.scrub(result.stderr_tail)
    printed, found, tail = stdout.rpartition("\n" + MARKER)
    if not found:
        printed, tail = stdout, ""
    output = printed.strip()
    if stderr.strip():
        output = f"{output}\n[stderr]\n{stderr.strip()}".strip()
    where = f"{kind} {entry['script']}"
    if result.stopped is not None:
        raise CheckerError(f"{where} was stopped: {result.reason}; its output: {output[-1500:] or '(none)'}")
    try:
        done = json.loads(tail.strip()) if tail else None
    except json.JSONDecodeError:
        done = None
    if not isinstance(done, dict):
        raise CheckerError(f"{where} ended without a result ({result.reason or 'exit status 0'}); "
                           f"its output: {output[-1500:] or '(none)'}")  # fmt: skip
    if "error" in done:
        raise CheckerError(f"{where} crashed: {done['error']}; its output: {output[-1500:] or '(none)'}")
    if kind == "checker":
        return ScriptResult(kind, entry["script"], passed=bool(done["passed"]), output=output)
    return ScriptResult(kind, entry["script"], completed=int(done["completed"]), total=int(done["total"]),
                        output=output)  # fmt: skip
