"""One Benchforce trial: the agent under test talks with the simulated caller while the
environment server executes its tool calls (reference A3, C1).

The session opens on the server (``session.start``: the server answers with the policy and
the tools), the caller opens with its goal, and the core's
:func:`~pytest_egi.agents.loops.run_dialogue_loop` runs the agent: native function calling,
each tool call sent to the server as ``tool.call`` (:class:`ServerToolkit`), each text reply
going to the caller. Every utterance is logged on the server too, so the session's transcript
holds the whole conversation. The session ends (``session.end``) with one of upstream's
endings, corrected (A10.5): ``user_exit`` (the caller called ``exit_conversation``),
``max_turns`` (the agent gave ``max_turns`` replies, upstream's count; or spent
:data:`CALLS_PER_TURN` model calls per allowed reply), ``timeout`` (the session's wall-clock
budget ran out), ``agent_failed`` (the reply was cut off or the context overflowed), ``error``
(a provider or simulator failure: the item errors and the server still frees the session).
A server fault (:class:`~suites.benchforce.env.client.EnvironmentFault`: it died, hung past
``server_timeout_s`` or broke the protocol) makes the item an error and stops the server, so
the next session runs on a fresh one: a server in an unknown state is never reused.

The caller is the deterministic :class:`~suites.benchforce.simulator.RuleUser`, or with
``--egi-simulator-model`` an :class:`~suites.benchforce.simulator.LLMUser`, whose tokens are
counted apart from the agent's (the trajectory's ``usage`` is the agent's alone, A10.4).
"""

from __future__ import annotations

import json
import time
from typing import Any

from pytest_egi.agents.loops import Trajectory, run_dialogue_loop
from pytest_egi.agents.tools import Toolkit, ToolOutcome
from pytest_egi.models.base import ModelClient
from pytest_egi.suite import Task
from suites.benchforce.env import environment
from suites.benchforce.env.client import EnvironmentFault, EnvSession, ServerProcess, shared_server
from suites.benchforce.simulator import LLMUser, RuleUser

__all__ = ["CALLS_PER_TURN", "GENERATION_PARAMS", "ServerToolkit", "run_trial"]

CALLS_PER_TURN = 8
"""Model calls allowed per allowed agent reply (tool-calling turns included); upstream has
no bound (a recursive tool loop), this one stops a model that never replies in text."""
GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 2048}
"""Defaults only (``--egi-model-params`` overrides them)."""


class ServerToolkit(Toolkit):
    """The agent's tools, executed on the server: ``call`` sends ``tool.call`` and returns the
    ``tool.result`` output, or the ``tool.error`` message as the model's mistake (an
    observation). Server faults raise :class:`~suites.benchforce.env.client.EnvironmentFault`."""

    def __init__(self, session: EnvSession, schemas: list[dict[str, Any]]) -> None:
        super().__init__(tools={})
        self.session = session
        self._schemas = schemas

    def schemas(self) -> list[dict[str, Any]]:
        """The tool schemas the server gave at ``session.ready``."""
        return list(self._schemas)

    def call(self, name: str, arguments: str | dict[str, Any] | None) -> ToolOutcome:
        """One call on the server (class docstring); logged in :attr:`calls` with ``error``
        and, for an error, the server's ``code``."""
        reply = self.session.tool_call(name, arguments if arguments is not None else {})
        parsed: Any = arguments
        if isinstance(arguments, str):
            try:
                parsed = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                parsed = arguments
        if reply.get("event") == "tool.result":
            self.calls.append({"name": name, "arguments": parsed, "error": False})
            output = reply.get("output")
            return ToolOutcome(
                content=output if isinstance(output, str) else json.dumps(output, sort_keys=True)
            )
        error = reply.get("error") or {}
        self.calls.append({"name": name, "arguments": parsed, "error": True, "code": error.get("code")})
        return ToolOutcome(content=f"Error: {error.get('message')}", error=True)


class _Caller:
    """The simulator as the dialogue loop sees it: logs both sides on the server, checks the
    session's wall-clock budget, and sends the caller's ``exit_conversation``."""

    def __init__(self, user: RuleUser | LLMUser, session: EnvSession, deadline: float) -> None:
        self.user, self.session, self.deadline = user, session, deadline
        self.ending: str | None = None

    def reply(self, agent_message: str) -> tuple[str, bool]:
        self.session.say("agent", agent_message or "")
        if time.monotonic() > self.deadline:
            self.ending = "timeout"
            return "", True
        text, done = self.user.reply(agent_message)
        self.session.say("client", text)
        if done:
            self.session.user_exit(str(self.user.exit_reason))
            self.ending = "user_exit"
        return text, done


def _wants_change(entry: dict[str, Any], env: Any) -> bool:
    return any(
        env.tools.get(a["name"]) is not None and env.tools[a["name"]].kind == "write"
        for a in entry["actions"]
    )


def _server_fields(server: ServerProcess, starts_before: int) -> dict[str, Any]:
    """``server_starts`` (the server process's start count now) and ``server_restarted``
    (this session found the server dead and started it again: it had been started before, and
    the count rose while connecting)."""
    return {"server_restarted": 0 < starts_before < server.starts, "server_starts": server.starts}


def _keep_failed_session(
    exc: BaseException, traj: Trajectory | None, known: dict[str, Any], server: ServerProcess
) -> None:
    """Attach what is known of a failed session to ``exc.partial_trajectory`` (made when the
    failure came before the dialogue loop): ``info["benchforce"]`` gets ``known`` (session id,
    environment, server start fields, ...), ``ending`` ``error``, and the transcript: the one
    ``session.end`` returned when the server could still end the session, else the server's
    on-disk transcript of the session (:meth:`ServerProcess.transcript`), else None."""
    partial = getattr(exc, "partial_trajectory", None)
    if partial is None:
        base = traj if traj is not None else Trajectory(messages=[])
        base.termination = "error"
        base.info.setdefault("error", f"{type(exc).__name__}: {exc}")
        partial = base.to_dict()
    if "server_starts" not in known:
        known.update(_server_fields(server, known.pop("_starts_before", 0)))
    known.pop("_starts_before", None)
    transcript = known.pop("transcript", None)
    if transcript is None:
        transcript = server.transcript(known["session_id"])
    partial.setdefault("info", {})["benchforce"] = {**known, "ending": "error", "transcript": transcript}
    exc.partial_trajectory = partial  # type: ignore[attr-defined]


def run_trial(
    task: Task, client: ModelClient, options: Any = None, trial: int = 1, simulator: Any = None
) -> Trajectory:
    """Run one Benchforce trial.

    Args:
        task: from ``SUITE.load_tasks`` (``data``: the entry plus ``env``, ``seed``, ``max_turns``).
        client: the model under test (or an offline reference policy).
        options: the suite's options (``max_turns``, ``timeout_s``, ``server_timeout_s``, ``data_dir``).
        trial: the 1-based trial (part of the session id).
        simulator: the user simulator's model client (``--egi-simulator-model``, the core's
            ``egi.simulator``): the caller is an :class:`~suites.benchforce.simulator.LLMUser`
            with the entry's ``instructions`` as its agenda; None: the deterministic
            :class:`~suites.benchforce.simulator.RuleUser`.

    Returns:
        The trajectory; its ``usage`` is the agent's alone. ``info["benchforce"]`` holds the
        session id, ending, exit reason, the final state projection and hash from the server,
        the transcript, ``simulator`` (the simulator model's name, or ``egi/rules``),
        ``simulator_usage`` (the simulator's usage dict; None for rules), ``server_restarted``
        (true when this session found the server dead and started it again) and
        ``server_starts`` (the server process's start count).

    Raises:
        EnvironmentFault: the server failed (the item errors); the server is then stopped,
            so the next session starts a fresh one (its state is unknown: a hung server is
            never reused).
        SimulatorError: the simulator's model failed (the item errors, nothing reaches the agent).
        ProviderError: from the client.

        Every failure carries ``exc.partial_trajectory``: the messages so far, and
        ``info["benchforce"]`` with what is known (session id, environment, server start
        fields, ``ending`` ``error``, and the transcript: from ``session.end`` when the server
        could still end the session, else read from the server's transcript file).
    """
    data = task.data
    env = environment(data["env"])
    max_turns = int(getattr(options, "max_turns", None) or data.get("max_turns") or 15)
    timeout_s = float(getattr(options, "timeout_s", None) or 600.0)
    server_timeout_s = float(getattr(options, "server_timeout_s", None) or 30.0)
    data_dir = getattr(options, "data_dir", None)
    entry = {k: v for k, v in data.items() if k not in ("env", "seed", "max_turns")}
    sid = f"egi.{data['env']}.{int(data.get('entry_num') or 0):03d}.{trial:02d}"
    user: RuleUser | LLMUser
    if simulator is not None:
        user = LLMUser(simulator, str(data.get("instructions") or ""))
    else:
        user = RuleUser(
            data.get("user") or {}, list(data.get("outputs") or []), _wants_change(data, env), env.user_slots
        )
    server = shared_server()
    known: dict[str, Any] = {
        "env": env.name,
        "session_id": sid,
        "max_turns": max_turns,
        "simulator": user.name if isinstance(user, LLMUser) else "egi/rules",
        "_starts_before": server.starts,
    }
    traj: Trajectory | None = None
    try:
        traj, ready, ended, ending = _session(
            server,
            sid,
            known,
            env,
            data,
            entry,
            data_dir,
            user,
            client,
            max_turns,
            timeout_s,
            server_timeout_s,
        )
    except Exception as exc:
        if isinstance(user, LLMUser):
            known["simulator_usage"] = user.usage.to_dict()
        server_fault = isinstance(exc, EnvironmentFault) or known.pop("_server_fault", False)
        _keep_failed_session(exc, traj, known, server)  # reads the transcript file: before the stop
        if server_fault:  # the server's state is unknown: never reused, the next session starts a fresh one
            server.stop(graceful=False)
        raise
    replies = [m for m in traj.messages if m.get("role") == "assistant" and not m.get("tool_calls")]
    traj.info["benchforce"] = {
        "env": env.name,
        "session_id": sid,
        "ending": ending,
        "exit_reason": user.exit_reason,
        "max_turns": max_turns,
        "agent_replies": len(replies),
        "initial_hash": ready["hash"],
        "final_hash": ended["hash"],
        "final_state": ended["state"],
        "transcript": ended["transcript"],
        "simulator": user.name if isinstance(user, LLMUser) else "egi/rules",
        "simulator_usage": user.usage.to_dict() if isinstance(user, LLMUser) else None,
        "server_restarted": known["server_restarted"],
        "server_starts": known["server_starts"],
    }
    return traj


def _session(
    server: ServerProcess,
    sid: str,
    known: dict[str, Any],
    env: Any,
    data: dict[str, Any],
    entry: dict[str, Any],
    data_dir: Any,
    user: RuleUser | LLMUser,
    client: ModelClient,
    max_turns: int,
    timeout_s: float,
    server_timeout_s: float,
) -> tuple[Trajectory, dict[str, Any], dict[str, Any], str]:
    """One session on ``server``: (trajectory, ``session.ready``, ``session.ended``, ending).
    What becomes known on the way (server start fields, initial hash, the transcript
    ``session.end`` returned for a failed session) goes into ``known``."""
    with EnvSession(server, sid, timeout_s=server_timeout_s) as session:
        known.update(_server_fields(server, known.pop("_starts_before")))
        ready = session.start(env.name, int(data["seed"]), entry, str(data_dir) if data_dir else None)
        known["initial_hash"] = ready["hash"]
        try:
            opening = user.opening()
            session.say("client", opening)
            caller = _Caller(user, session, time.monotonic() + timeout_s)
            messages = [{"role": "system", "content": ready["policy"]}, {"role": "user", "content": opening}]
            traj = run_dialogue_loop(
                client,
                messages,
                caller,
                toolkit=ServerToolkit(session, ready["tools"]),
                max_turns=max_turns * CALLS_PER_TURN,
                max_user_turns=max_turns - 1,
                params=dict(GENERATION_PARAMS),
            )
        except EnvironmentFault:
            raise
        except Exception:  # a provider or simulator failure: the server still ends the session
            try:
                known["transcript"] = session.end("error")["transcript"]
            except EnvironmentFault:  # ... unless it failed too: then it is not reused
                known["_server_fault"] = True
            raise
        try:
            if traj.termination == "max_user_turns":  # the last reply never reached the caller
                session.say("agent", str(traj.messages[-1].get("content") or ""))
            ending = caller.ending or (
                "max_turns" if traj.termination in ("max_turns", "max_user_turns") else "agent_failed"
            )
            ended = session.end(ending)
        except Exception as exc:
            exc.partial_trajectory = traj.to_dict()  # type: ignore[attr-defined]
            raise
    return traj, ready, ended, ending
