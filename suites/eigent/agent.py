"""One Eigent task as a tool-using agent, then its checkers and graders.

The agent (:func:`run_trial`) gets the task's question and the workspace tools (and the tools
of the task's MCP servers, named ``<server>__<tool>``) in a native function-calling loop of
at most ``max_turns`` model calls; the first reply without a tool call ends the episode (its
text is the final answer). Then every checker and every grader of the task runs against the
working directory (:func:`~suites.eigent.env.run_script`), in the dataset's order, and their
results go into the trajectory (``info["eigent"]["results"]``), so scoring and rescoring read
them there. A checker that crashes or hangs raises :class:`~suites.eigent.env.CheckerError`
with the trajectory so far (the results before it included) attached: the item errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_egi.agents.loops import Trajectory, run_tool_loop
from pytest_egi.agents.tools import Tool, Toolkit, ToolOutcome
from pytest_egi.models.base import ModelClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task
from suites.eigent.env import Workspace, run_script, server_specs, workspace_tools

__all__ = [
    "GENERATION_PARAMS",
    "SYSTEM_PROMPT",
    "CombinedToolkit",
    "build_toolkit",
    "run_trial",
    "workspace_files",
]

GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 4096}
"""Defaults only (``--egi-model-params`` overrides them)."""
REASONING_MAX_TOKENS = 32_768
SYSTEM_PROMPT = (
    "You are an agent working in a local working directory. Use the tools to inspect files, "
    "write files and run shell commands there (there is no network). Create every file the task "
    "asks for in the working directory, with exactly the name it gives. When the task is done, "
    "reply with a short summary and no tool call."
)
"""Our instruction (upstream's Eigent workforce prompts are not part of the benchmark)."""


class CombinedToolkit(Toolkit):
    """The workspace tools and the MCP servers' tools in one toolkit with one call log."""

    def __init__(self, tools: list[Tool], mcp: Any = None) -> None:
        super().__init__(tools={t.name: t for t in tools})
        self.mcp = mcp
        if mcp is not None:
            mcp.calls = self.calls  # one log, in call order

    def schemas(self) -> list[dict[str, Any]]:
        """Workspace tools first, then the servers' tools."""
        return super().schemas() + (self.mcp.schemas() if self.mcp is not None else [])

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        """A workspace tool runs here; any other name goes to the MCP servers (which judge an
        unknown name themselves) when the task has some."""
        if name in self.tools or self.mcp is None:
            return super().call(name, arguments)
        return self.mcp.call(name, arguments)


def workspace_files(data: dict[str, Any]) -> list[tuple[Path, str]]:
    """The task's ``env.files`` as (source, name in the working directory): each path is
    resolved like a script path (the folder's parent, else the folder) and copied under its
    base name.

    Raises:
        FileNotFoundError: a listed file does not exist (an error of the task's folder).
    """
    from suites.eigent.data import find_script

    folder = Path(data["folder"])
    out = []
    for name in (data["config"]["data"].get("env") or {}).get("files") or []:
        raw = Path(name)
        found = next((c for c in ((raw,) if raw.is_absolute() else (folder.parent / raw, folder / raw))
                      if c.exists()), None) or find_script(folder, name)  # fmt: skip
        if found is None:
            raise FileNotFoundError(f"{data['dataset_file']}: env.files: {name!r} not found")
        out.append((Path(found), Path(name).name))
    return out


def build_toolkit(ws: Workspace, specs: list[Any]) -> CombinedToolkit:
    """The trial's toolkit: the workspace tools, plus the servers of ``specs`` (shared per
    process: started once per worker, stopped at session end)."""
    mcp = None
    if specs:
        from pytest_egi.mcp import McpToolkit, shared_server

        mcp = McpToolkit.of_servers(*(shared_server(s) for s in specs), prefix=True)
    return CombinedToolkit(workspace_tools(ws), mcp)


def run_trial(task: Task, client: ModelClient, options: Any) -> Trajectory:
    """Run one task: the agent in a fresh working directory, then every checker and grader.

    Args:
        task: a task of :meth:`SUITE.load_tasks <suites.eigent.EigentSuite.load_tasks>`.
        client: the model under test (or an offline policy).
        options: the suite options (``max_turns``, ``checker_timeout_s``).

    Returns:
        The trajectory; ``info["eigent"]`` holds ``results`` (one
        :class:`~suites.eigent.env.ScriptResult` dict per checker and grader, in order),
        ``files`` (the working directory's files after the agent stopped), ``mcp_servers``
        (their names) and ``model`` (the model that ran).

    Raises:
        CannotRun: the task asks for an MCP server or credentials we cannot provide.
        CheckerError: a checker or grader crashed or hung (the item errors; the trajectory and
            the results so far are attached).
        McpServerError, SandboxError: an environment fault.
    """
    from pytest_egi.agents.loops import keep_partial

    d = task.data
    specs = server_specs(d)  # CannotRun before anything starts
    folder = Path(d["folder"])
    params = scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)
    with Workspace(workspace_files(d)) as ws:
        toolkit = build_toolkit(ws, specs)
        messages = [{"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": d["config"]["data"]["question"]}]  # fmt: skip
        traj = run_tool_loop(client, messages, toolkit, max_turns=int(options.max_turns), params=params)
        info: dict[str, Any] = {"mcp_servers": [s.name for s in specs],
                                "model": getattr(client, "name", None),
                                "results": []}  # fmt: skip
        traj.info["eigent"] = info
        with keep_partial(traj):
            info["files"] = ws.files()
            for entry in d["scripts"]:
                info["results"].append(
                    run_script(ws, entry, folder, float(options.checker_timeout_s)).to_dict()
                )
    return traj
