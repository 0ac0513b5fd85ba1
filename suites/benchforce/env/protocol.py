"""The Benchforce wire format (reference A3, C1).

Every frame is upstream's envelope, a JSON object ``{"session_id", "role", "message"}`` whose
``message`` is itself a JSON **string** encoding one packet ``{"event": ..., ...}``. Roles are
upstream's: ``client`` (the user side), ``agent``, ``runner``, ``system``, ``debugger``.

Events (C1's design, with upstream's names where upstream has the event):

=========================  ======  ====================================================
event                      from    packet fields → reply
=========================  ======  ====================================================
``session.start``          runner  ``env, seed, entry, data_dir`` → ``session.ready``
                                   ``{policy, tools, now, hash}`` (tools go to the agent)
``user.message``           client  ``text`` → ``ack {seq}``
``agent.message``          agent   ``text`` → ``ack {seq}``
``tool.call``              agent   ``call_id, name, arguments`` → ``tool.result {call_id,
                                   ok: true, output, hash}`` or ``tool.error {call_id,
                                   ok: false, error: {code, message}}``
``user.exit``              client  ``reason`` (the user's ``exit_conversation`` call:
                                   ``goal_met`` or ``gave_up``) → ``ack``
``session.end``            runner  ``reason`` ∈ :data:`END_REASONS` → ``session.ended
                                   {reason, state, hash, transcript}`` (state = projection)
``state.get``              runner  → ``state {state, hash}``
``benchforce.current_sessions``  system  → ``{"status": "success", "data": [ids]}``
=========================  ======  ====================================================

A frame the server cannot use (not JSON, unknown session or event, wrong role) is answered
``{"status": "error", "error": "..."}`` (upstream's wording): a harness fault, never shown to
the model. Invalid *tool* calls (unknown tool, arguments not JSON or failing the tool's JSON
schema, a refused call) are ``tool.error`` frames: the agent reads them.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["END_REASONS", "ROLES", "ProtocolError", "decode", "encode"]

ROLES = frozenset({"client", "agent", "runner", "system", "debugger"})
END_REASONS = ("user_exit", "max_turns", "timeout", "agent_failed", "error")
"""Why a session ended: the user called ``exit_conversation``; the turn limit ran out; the
session's wall-clock budget ran out; the agent's reply was cut off or its context overflowed;
a fault ended it."""


class ProtocolError(ValueError):
    """A frame that breaks the envelope (the message says which field and how)."""


def encode(session_id: str, role: str, packet: dict[str, Any]) -> str:
    """One frame as text: the envelope with ``message`` = the packet's JSON string."""
    return json.dumps(
        {"session_id": session_id, "role": role, "message": json.dumps(packet, sort_keys=True)},
        sort_keys=True,
    )


def decode(text: str | bytes) -> tuple[str, str, dict[str, Any]]:
    """``(session_id, role, packet)`` of one frame.

    Raises:
        ProtocolError: not JSON, a field missing or of the wrong type, an unknown role, or a
            ``message`` that is not a JSON object with an ``event``.
    """
    try:
        frame = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"frame is not JSON ({exc})") from None
    if not isinstance(frame, dict):
        raise ProtocolError("frame must be a JSON object {session_id, role, message}")
    sid, role, message = frame.get("session_id"), frame.get("role"), frame.get("message")
    if not isinstance(sid, str) or not isinstance(role, str):
        raise ProtocolError("frame needs string 'session_id' and 'role'")
    if role not in ROLES:
        raise ProtocolError(f"unknown role {role!r}; one of {sorted(ROLES)}")
    if isinstance(message, str):
        try:
            packet = json.loads(message) if message else {}
        except json.JSONDecodeError as exc:
            raise ProtocolError(f"'message' is not a JSON string ({exc})") from None
    else:
        packet = message
    if not isinstance(packet, dict) or not isinstance(packet.get("event", ""), str):
        raise ProtocolError("'message' must encode a JSON object with a string 'event'")
    return sid, role, packet
