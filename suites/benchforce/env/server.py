"""The Benchforce environment server: a real WebSocket server that owns every session's state
and executes the tools (reference C1; upstream's relay let the agent run its own tools, A10.2).

Run as ``python -m suites.benchforce.env.server [--transcript-dir DIR]``: it listens on
127.0.0.1 on an ephemeral port, prints ``{"port": N}`` as its first stdout line, and serves
until its stdin closes (the harness closes it at session end; a harness that dies closes it
too) or it is terminated. The wire format is :mod:`suites.benchforce.env.protocol`.

Per session the server keeps the environment's state (a copy of the seeded world), applies
each ``tool.call`` after validating its arguments against the tool's JSON schema, and appends
every frame it receives or sends to ``<transcript-dir>/<session_id>/transcript.jsonl`` (upstream's
``history/<session>/transcript.jsonl``) as ``{"seq", "direction", "role", "message"}`` with a
per-session sequence number from 1; ``session.ended`` returns the transcript, so the harness
keeps it with the trajectory. No wall-clock time is recorded: one seed gives one transcript.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suites.benchforce.env import environment
from suites.benchforce.env.base import Environment, EnvToolError, copy_world, schema_problem, state_hash
from suites.benchforce.env.protocol import END_REASONS, ProtocolError, decode, encode

__all__ = ["Server", "main"]


@dataclass
class _Session:
    env: Environment
    state: dict[str, Any]
    transcript: list[dict[str, Any]] = field(default_factory=list)
    path: Path | None = None


class Server:
    """The sessions of one server process, independent of the socket (the handler feeds it
    decoded frames; tests may drive it directly).

    Args:
        transcript_dir: where per-session transcripts are written; None keeps them in memory only.
    """

    def __init__(self, transcript_dir: Path | None = None) -> None:
        self.transcript_dir = transcript_dir
        self.sessions: dict[str, _Session] = {}
        self._worlds: dict[tuple[str, int, str | None], dict[str, Any]] = {}

    def world(self, env: Environment, seed: int, data_dir: str | None) -> dict[str, Any]:
        """The seeded world of ``env`` (built once per process), or upstream's data files."""
        key = (env.name, seed, data_dir)
        if key not in self._worlds:
            if data_dir is not None:
                from suites.benchforce.data import load_world

                self._worlds[key] = load_world(env, Path(data_dir))
            else:
                self._worlds[key] = env.build_world(seed)
        return self._worlds[key]

    def _log(self, sid: str, direction: str, role: str, packet: dict[str, Any]) -> None:
        session = self.sessions.get(sid)
        if session is None:
            return
        line = {"seq": len(session.transcript) + 1, "direction": direction, "role": role, "message": packet}
        session.transcript.append(line)
        if session.path is not None:
            with session.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(line, sort_keys=True) + "\n")

    def handle(self, text: str | bytes) -> tuple[str, bool]:
        """One received frame → (the reply frame, close the connection after it)."""
        try:
            sid, role, packet = decode(text)
        except ProtocolError as exc:
            return json.dumps({"status": "error", "error": str(exc)}), False
        event = packet.get("event")
        if role == "system":
            if event == "benchforce.current_sessions":
                return json.dumps({"status": "success", "data": sorted(self.sessions)}), True
            return json.dumps({"status": "error", "error": f"unknown system query {event!r}"}), True
        if event == "session.start":
            return self._start(sid, role, packet), False
        if sid not in self.sessions:
            return json.dumps({"status": "error", "error": f"session {sid!r} not started"}), False
        self._log(sid, "recv", role, packet)
        try:
            reply = self._dispatch(sid, role, event, packet)
        except ProtocolError as exc:
            reply = {"event": "response.error", "error": str(exc)}
            self._log(sid, "sent", "system", reply)
            return json.dumps({"status": "error", "error": str(exc)}), False
        self._log(sid, "sent", "system", reply)
        if event == "session.end":  # the reply carries the whole transcript, then the session goes
            reply = {**reply, "transcript": list(self.sessions.pop(sid).transcript)}
        return encode(sid, "system", reply), False

    def _start(self, sid: str, role: str, packet: dict[str, Any]) -> str:
        if sid in self.sessions:
            return json.dumps({"status": "error", "error": f"session {sid!r} already started"})
        try:
            env = environment(str(packet.get("env")))
            world = self.world(env, int(packet.get("seed", 0)), packet.get("data_dir"))
        except (KeyError, ValueError, TypeError, OSError) as exc:
            return json.dumps({"status": "error", "error": f"cannot start session: {exc}"})
        path = None
        if self.transcript_dir is not None:
            (self.transcript_dir / sid).mkdir(parents=True, exist_ok=True)
            path = self.transcript_dir / sid / "transcript.jsonl"
            path.write_text("", encoding="utf-8")
        session = self.sessions[sid] = _Session(env=env, state=copy_world(world), path=path)
        self._log(sid, "recv", role, packet)
        reply = {
            "event": "session.ready",
            "policy": env.policy,
            "now": env.now,
            "tools": env.schemas(),
            "hash": state_hash(env, session.state),
        }
        self._log(sid, "sent", "system", reply)
        return encode(sid, "system", reply)

    def _dispatch(self, sid: str, role: str, event: Any, packet: dict[str, Any]) -> dict[str, Any]:
        session = self.sessions[sid]
        expected = {
            "user.message": "client",
            "user.exit": "client",
            "agent.message": "agent",
            "tool.call": "agent",
            "session.end": "runner",
            "state.get": "runner",
        }
        if event not in expected:
            raise ProtocolError(f"unknown event {event!r}")
        if role != expected[event]:
            raise ProtocolError(f"event {event!r} must come from role {expected[event]!r}, not {role!r}")
        if event == "tool.call":
            return self._tool_call(session, packet)
        if event == "session.end":
            reason = packet.get("reason")
            if reason not in END_REASONS:
                raise ProtocolError(f"session.end reason {reason!r} is not one of {list(END_REASONS)}")
            return {
                "event": "session.ended",
                "reason": reason,
                "state": session.env.projection(session.state),
                "hash": state_hash(session.env, session.state),
            }
        if event == "state.get":
            return {
                "event": "state",
                "state": session.env.projection(session.state),
                "hash": state_hash(session.env, session.state),
            }
        return {"event": "ack", "seq": len(session.transcript)}

    def _tool_call(self, session: _Session, packet: dict[str, Any]) -> dict[str, Any]:
        call_id, name, raw = packet.get("call_id"), packet.get("name"), packet.get("arguments")

        def error(code: str, message: str) -> dict[str, Any]:
            return {
                "event": "tool.error",
                "call_id": call_id,
                "name": name,
                "ok": False,
                "error": {"code": code, "message": message},
            }

        tool = session.env.tools.get(str(name))
        if tool is None:
            return error(
                "unknown_tool", f"unknown tool '{name}'. Available tools: {', '.join(session.env.tools)}"
            )
        if isinstance(raw, str):
            try:
                raw = json.loads(raw) if raw.strip() else {}
            except json.JSONDecodeError as exc:
                return error("invalid_arguments", f"arguments for '{name}' are not valid JSON ({exc.msg})")
        if raw is None:
            raw = {}
        problem = schema_problem(tool.parameters, raw)
        if problem is not None:
            return error("invalid_arguments", f"invalid arguments for '{name}': {problem}")
        try:
            output = tool.fn(session.state, **raw)
        except EnvToolError as exc:
            return error(exc.code, str(exc))
        return {
            "event": "tool.result",
            "call_id": call_id,
            "name": name,
            "ok": True,
            "output": output,
            "hash": state_hash(session.env, session.state),
        }


async def _serve(server: Server) -> None:
    from websockets.asyncio.server import serve

    async def handler(ws: Any) -> None:
        async for text in ws:
            reply, close = server.handle(text)
            await ws.send(reply)
            if close:
                await ws.close()
                return

    # upstream's limits: 100 MB frames; keepalive pings off (the harness times every reply)
    async with serve(handler, "127.0.0.1", 0, max_size=100 * 2**20, ping_interval=None) as ws_server:
        port = next(iter(ws_server.sockets)).getsockname()[1]
        print(json.dumps({"port": port}), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # returns at EOF: the harness is done


def main(argv: list[str] | None = None) -> None:
    """Command-line entry (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m suites.benchforce.env.server")
    parser.add_argument("--transcript-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    asyncio.run(_serve(Server(args.transcript_dir)))


if __name__ == "__main__":
    main()
