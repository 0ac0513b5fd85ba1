"""The model's replies to a LoCoBench session, read and applied: :func:`parse_reply` finds
the answer (a JSON ``files`` mapping or a unified diff, tolerant as upstream's extractor,
reference B4), :func:`replay` applies a trial's replies in order to the scenario's project.
Shared by the scaffold (``agent.py``), which shows each session the tree the earlier replies
left, and the scorer (``scorer.py``), which replays a stored trajectory.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_egi.sandbox import AnswerRefused, PatchError
from suites.locobench.data import Scenario
from suites.locobench.env import apply_reply

__all__ = ["ReplyError", "parse_reply", "replay", "replay_one"]


class ReplyError(ValueError):
    """A reply that is neither a JSON answer nor a unified diff (the model's failure)."""


_FENCE = re.compile(r"```(?P<lang>[A-Za-z0-9_-]*)[ \t]*\n(?P<body>.*?)```", re.DOTALL)


def _json_objects(text: str) -> list[Any]:
    decoder = json.JSONDecoder()
    found = []
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        found.append(obj)
        i = text.find("{", end)
    return found


def parse_reply(text: Any) -> dict[str, Any]:
    """The answer in a reply: ``{"files": {path: text or None}}`` or ``{"diff": text}``.

    Tolerant as upstream's extractor: a fenced ``json`` block, else any JSON object with a
    ``files`` mapping in the text; non-string file contents other than null are turned into
    text (upstream stringifies them). Else a fenced ``diff``/``patch`` block, or a reply that
    is itself a unified diff.

    Raises:
        ReplyError: no answer in either format (the message says what was expected).
    """
    if not isinstance(text, str) or not text.strip():
        raise ReplyError("the reply is empty")
    fences = list(_FENCE.finditer(text))
    candidates: list[Any] = []
    for m in fences:
        if m.group("lang").lower() in ("json", ""):
            candidates += _json_objects(m.group("body"))
    candidates += _json_objects(text)
    for obj in candidates:
        if isinstance(obj, dict) and isinstance(obj.get("files"), dict):
            files = {
                str(k): (
                    v
                    if v is None or isinstance(v, str)
                    else json.dumps(v)
                    if not isinstance(v, (int, float))
                    else str(v)
                )
                for k, v in obj["files"].items()
            }
            return {"files": files}
    for m in fences:
        if m.group("lang").lower() in ("diff", "patch", "udiff"):
            return {"diff": m.group("body")}
    stripped = text.strip()
    if stripped.startswith(("--- ", "diff --git")):
        return {"diff": stripped + "\n"}
    raise ReplyError("the reply holds neither a JSON object with a 'files' mapping nor a unified diff")


def replay(scenario: Scenario, replies: list[Any]) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """Apply the replies of the sessions in order to the project.

    Returns:
        The final tree and, per session, ``{"session", "ok", "format", "changed", "reason"}``
        (a reply that does not parse or is refused changes nothing; the reason says why).
    """
    files = dict(scenario.files)
    notes = []
    for k, reply in enumerate(replies, 1):
        files, note = replay_one(files, reply, k)
        notes.append(note)
    return files, notes


def replay_one(files: dict[str, str], reply: Any, session: int) -> tuple[dict[str, str], dict[str, Any]]:
    """One session's reply applied to ``files`` (see :func:`replay`)."""
    note: dict[str, Any] = {"session": session, "ok": False, "format": None, "changed": [], "reason": None}
    try:
        answer = parse_reply(reply)
        note["format"] = "diff" if "diff" in answer else "files"
        new = apply_reply(files, answer)
    except (ReplyError, AnswerRefused, PatchError) as exc:
        note["reason"] = f"{type(exc).__name__}: {exc}"
        return files, note
    note["ok"] = True
    note["changed"] = sorted(p for p in set(new) | set(files) if new.get(p) != files.get(p))
    return new, note
