"""The ``egi`` fixture object: what a suite's test function uses to record a trial."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from pytest_egi.agents.loops import Trajectory, no_answer_reason
from pytest_egi.judges import RULES_JUDGE
from pytest_egi.models.replies import escape_obj, has_lone_surrogate
from pytest_egi.models.secrets import holds_secret_json, redact_obj
from pytest_egi.outcomes import checked_failure_kind
from pytest_egi.records import RECORD_SCHEMA, RunDir, dump_json_line
from pytest_egi.run.state import Case, RunSettings, case_of, item_state
from pytest_egi.suite import TaskScore

__all__ = ["EgiRecorder", "base_record", "failure_line", "hint_span", "json_safe", "keep_raw", "render",
           "shorten", "store_record", "trajectory_fields", "trial_usage"]

MAX_RENDER = 300


def render(value: Any) -> str:
    """A short, readable rendering of an expected/got value for failure messages and reports:
    strings as they are, lists as ``[a, b]`` without quotes, anything else by ``repr``."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(str(v) for v in value) + "]"
    else:
        text = repr(value)
    return text if len(text) <= MAX_RENDER else text[: MAX_RENDER - 3] + "..."


def hint_span(text: str, hint: str | None = None) -> tuple[int, int] | None:
    """Where the fix hint of a failure text is: ``hint`` itself when given and found (the
    last occurrence), else a parenthesised group that ends the text (``... (to stop sending
    temperature, pass --egi-model-params temperature=null)``), when it is at most half of
    :data:`MAX_RENDER`; None when there is none.

    Returns:
        ``(start, end)`` indices of the hint in ``text``.
    """
    if hint:
        at = text.rfind(hint.strip())
        if at >= 0:
            return at, at + len(hint.strip())
    end = len(text.rstrip())
    if not end or text[end - 1] != ")":
        return None
    depth = 0
    for i in range(end - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            return (i, end) if end - i <= MAX_RENDER // 2 else None
    return None


def shorten(text: str, limit: int = MAX_RENDER, hint: str | None = None) -> str:
    """``text`` cut to about ``limit`` characters for a one-line failure reason, never cutting
    its fix hint (:func:`hint_span`): the text around the hint is shortened instead (the part
    after it first, then the part before it, each keeping its start and marked ``...``). A
    hint longer than ``limit`` is kept whole anyway.

    Args:
        text: the failure text (``ExceptionType: message``).
        limit: the length to aim for, in characters.
        hint: the hint text when the exception names it (``exc.hint``); else a trailing
            parenthesised group is taken as the hint.
    """
    if len(text) <= limit:
        return text
    span = hint_span(text, hint)
    if span is None:
        return text[: limit - 3] + "..."
    before, kept, after = text[: span[0]], text[span[0]: span[1]], text[span[1]:]
    room = max(0, limit - len(kept))
    if len(before) + len(after) > room and after.strip():
        keep_after = max(0, room - len(before))
        after = after[: max(0, keep_after - 3)] + "..." if keep_after < len(after) else after
    if len(before) + len(after) > room:
        gap = " " if before.endswith(" ") else ""
        before = before[: max(0, room - len(after) - 3 - len(gap))].rstrip() + "..." + gap
    return before + kept + after


def base_record(item: pytest.Item, case: Case, settings: RunSettings) -> dict[str, Any]:
    """The fields every record has, before the outcome is known."""
    return {
        "schema": RECORD_SCHEMA,
        "suite": case.suite.name,
        "suite_module": case.suite_module,
        "suite_version": case.suite.version,
        "task_id": case.task_id,
        "category": case.category,
        "trial": case.trial,
        "nodeid": item.nodeid,
        "model": settings.model,
        "judge": settings.judge_model or RULES_JUDGE,
        "status": None,
        "success": None,
        "values": {},
        "expected": None,
        "got": None,
        "details": {},
        "usage": {},
        "raw_path": None,
        "error": None,
        "error_kind": None,
        "termination": None,
        "finish_reason": None,
        "turns": None,
        "no_answer": None,
        "failure_kind": None,
    }


def failure_line(record: Mapping[str, Any]) -> str:
    """The one-line reason of a failed trial: ``<task> [<category>] <failure kind>: expected
    <expected>, got <got> (ended: <termination>)``, in the words the record holds
    (``failure_kind``, ``termination``)."""
    kind = record.get("failure_kind")
    ended = record.get("termination")
    return (f"{record['task_id']} [{record['category']}]{f' {kind}' if kind else ''}: "
            f"expected {record['expected']}, got {record['got']}"
            + (f" (ended: {ended})" if ended else ""))


def trajectory_fields(trajectory: Mapping[str, Any] | None, *, errored: bool = False) -> dict[str, Any]:
    """The record fields taken from a trajectory (``Trajectory.to_dict()`` form).

    Args:
        trajectory: the trajectory, the partial one of an errored item, or None (none exists).
        errored: the item is an error: ``termination`` is ``"error"`` whatever the trajectory
            says, and ``no_answer`` is None (errored items are not scored).

    Returns:
        ``termination`` (str | None: the episode's termination), ``finish_reason`` (str | None:
        the provider's finish_reason of the last model call), ``turns`` (int | None: the
        trajectory's calls to the model under test, each call that asks for a tool included;
        a benchmark's own count of dialogue turns is one of its values) and
        ``no_answer`` (bool | None: the scored trial ended without an answer, by the shared
        rule :func:`~pytest_egi.agents.loops.no_answer_reason`).
    """
    traj = trajectory or {}
    return {
        "termination": "error" if errored else traj.get("termination"),
        "finish_reason": traj.get("finish_reason"),
        "turns": traj.get("turns"),
        "no_answer": None if errored else no_answer_reason(traj) is not None,
    }


def trial_usage(client: Any, recorder: Any) -> dict[str, Any]:
    """The record fields describing one trial's model calls, for a scored or an errored item.

    Args:
        client: the model under test's client (``item_state(item).client``), or None.
        recorder: the item's :class:`EgiRecorder` (judge and simulator), or None.

    Returns:
        Some of ``usage`` (LiteLLM: ``TrialClient.usage_dict()``: tokens, per-call
        latencies, retries, cache hits, failed calls), ``judge_usage``, ``simulator_usage``
        and ``params`` (``{role: {"sent": {...}, "dropped": {name: reason}}}``, the
        generation parameters the LiteLLM clients sent); offline policies give none of them
        (their usage comes from the trajectory).
    """
    out: dict[str, Any] = {}
    params: dict[str, Any] = {}
    judge = getattr(recorder, "judge", None)
    judge_client = getattr(judge, "client", None)
    simulator = getattr(recorder, "simulator", None)
    for role, field, who in (("model", "usage", client), ("judge", "judge_usage", judge_client),
                             ("simulator", "simulator_usage", simulator)):
        if hasattr(who, "usage_dict"):  # LiteLLM: per-call latencies, retries, cache hits
            out[field] = who.usage_dict()
        sent = who.params_record() if hasattr(who, "params_record") else None
        if sent is not None:
            params[role] = sent
    if "judge_usage" not in out and getattr(judge, "usage", None) is not None:
        out["judge_usage"] = judge.usage.to_dict()
    if params:
        out["params"] = params
    return out


def json_safe(obj: Any) -> Any:
    """``obj`` (a record, a trajectory file's payload) ready to leave the process: every
    secret redacted (:func:`~pytest_egi.models.secrets.redact_obj`) and every lone surrogate
    (text that is not valid Unicode) written in its JSON-safe escaped form
    (:func:`~pytest_egi.models.replies.escape_obj`: ``"\\ud800"``), which no UTF-8 writer,
    SQLite or execnet channel refuses; ``obj`` itself, uncopied, when it needs neither (one
    C-speed serialization and a few searches)."""
    text = json.dumps(obj, ensure_ascii=False, default=str)
    if holds_secret_json(text):
        obj = redact_obj(obj)
    if has_lone_surrogate(text):
        obj = escape_obj(obj)
    return obj


def store_record(item: pytest.Item, record: dict[str, Any]) -> dict[str, Any]:
    """Keep the record on the item (stash) and in ``user_properties`` for the controller.

    Secret values (API keys and tokens) are redacted first and text that is not valid Unicode
    is escaped (:func:`json_safe`): a record never aborts a session.

    Returns:
        The record as stored.
    """
    record = json_safe(record)
    item_state(item).record = record
    item.user_properties.append(("egi", record))
    return record


def keep_raw(item: pytest.Item, case: Case, payload: dict[str, Any]) -> str:
    """Prepare the item's trajectory (secrets redacted, text that is not valid Unicode
    escaped: :func:`json_safe`; canonical JSON, checked for secrets on the text written).

    It is not written here: with the item's next report, an xdist worker on the controller's
    host appends it to its trajectory store in the run directory, and any other process hands
    it to the controller (``report.egi_raw``), which appends it to its own just before the
    item's journal line (``pytest_egi.run.items._write_or_send_raw``); the writer names its
    place in the record (``raw_at``: :mod:`pytest_egi.trajectories`). So a remote xdist worker
    needs no access to the run directory, and a trajectory is on disk by the time its record is.

    Returns:
        The trajectory's name, the record's ``raw_path`` (``raw/<suite>/<task_id>[-t<k>].json``).
    """
    rel = RunDir.raw_name(case.suite.name, case.task_id, case.trial, case.trials)
    text = dump_json_line(payload)  # serialized once: the secret check runs on this text
    if holds_secret_json(text) or has_lone_surrogate(text):
        text = dump_json_line(json_safe(payload))
    item_state(item).raw = (rel, text)
    return rel


class EgiRecorder:
    """Records one trial: writes the trajectory, builds the record, decides the outcome.

    Attributes:
        task: the task of this item.
        options: the suite's validated options.
        trial: 1-based trial index.
        seed: the profile seed.
        judge: an ``LLMJudge`` when ``--egi-judge-model`` is set, else None (rules).
        simulator: the user-simulator client when ``--egi-simulator-model`` is set, else None.
    """

    def __init__(self, item: pytest.Item, settings: RunSettings, judge: Any, simulator: Any):
        self._item = item
        self._settings = settings
        self._case: Case = case_of(item)  # type: ignore[assignment]
        self.task = self._case.task
        self.options = self._case.options
        self.trial = self._case.trial
        self.seed = self._case.seed
        self.judge = judge
        self.simulator = simulator

    def record(self, score: TaskScore, trajectory: Trajectory | dict[str, Any]) -> None:
        """Record the trial and set the item's outcome.

        Stores the trajectory (task, trajectory, score: :func:`keep_raw`), attaches the
        record for the controller, and fails the item (expected vs got) when
        ``score.success`` is False.

        Raises:
            RuntimeError: called twice for one item.
            pytest.fail.Exception: the model did not solve the task (the item fails).
        """
        if item_state(self._item).record is not None:
            raise RuntimeError("egi.record() called twice for one item")
        traj = trajectory.to_dict() if isinstance(trajectory, Trajectory) else dict(trajectory)
        failure_kind = checked_failure_kind(
            self._case.suite.name, bool(score.success), score.failure_kind, traj)
        case, settings = self._case, self._settings
        judge_name = getattr(self.judge, "name", None) or RULES_JUDGE
        payload = {
            "suite": case.suite.name,
            "task_id": case.task_id,
            "trial": case.trial,
            "category": case.category,
            "model": settings.model,
            "judge": judge_name,
            "task": case.task.data,
            "trajectory": traj,
            "score": score.model_dump(mode="json"),
        }
        noise = getattr(item_state(self._item).client, "noise", None)
        if noise is not None:
            payload["policy_mistakes"] = list(noise.made)
        rel = keep_raw(self._item, case, payload)
        record = base_record(self._item, case, settings)
        record.update(
            status="passed" if score.success else "failed",
            success=bool(score.success),
            values=dict(score.values),
            expected=render(score.expected),
            got=render(score.got),
            details=score.model_dump(mode="json")["details"],
            usage=dict(traj.get("usage") or {}),
            judge=judge_name,
            raw_path=rel,
            failure_kind=failure_kind,
            **trajectory_fields(traj),
        )
        record.update(trial_usage(item_state(self._item).client, self))
        record = store_record(self._item, record)  # the message below shows it as stored
        if not score.success:
            pytest.fail(failure_line(record), pytrace=False)
