"""The LoCoBench scaffold: one single-turn prompt per session, the files' contents in it.

Upstream (reference B4) sends one prompt per scenario: "expert {lang} engineer", TASK =
title, DESCRIPTION, REQUIREMENTS = task prompt, CONTEXT FILES = the files' *names* only
(B8.1); the reply is a fenced JSON object ``{approach, files: {path: code}, explanation}``
read by a tolerant extractor. Here the prompt carries every context file's **contents**, in
the scenario's order, and the reply may also be a unified diff (a fenced ``diff`` block).
A reply that does not parse is the model's failure, scored with the reason. Multi-session
scenarios run their sessions in sequence: each session's prompt shows the repository as the
model's earlier answers left it, never the earlier chat.
"""

from __future__ import annotations

import re
import time
from typing import Any

from pytest_egi.agents.loops import Trajectory, call_model, end_with_text, keep_partial
from pytest_egi.models.base import ModelClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task, suite_options
from suites.locobench.data import Scenario, build_scenario, context_view, proxy_tokens
from suites.locobench.replies import ReplyError, parse_reply, replay, replay_one

__all__ = [
    "GENERATION_PARAMS",
    "ReplyError",
    "build_prompt",
    "parse_prompt_files",
    "parse_reply",
    "replay",
    "run_trial",
]

GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 16_384}
"""Temperature 0 and room for whole files in one reply. Defaults only: ``--egi-model-params``
overrides them."""
REASONING_MAX_TOKENS = 65_536

FILE_BEGIN = "----- BEGIN FILE {path} -----"
FILE_END = "----- END FILE {path} -----"
_FILE_RE = re.compile(
    r"^----- BEGIN FILE (?P<path>.+?) -----\n(?P<body>.*?)\n?----- END FILE (?P=path) -----$",
    re.DOTALL | re.MULTILINE,
)

SYSTEM_PROMPT = """You are an expert {language} software engineer working on an existing code base.

Reply with exactly one fenced JSON object:

```json
{{"approach": "<one paragraph>",
 "files": {{"<path>": "<the file's complete new content>"}},
 "explanation": "<short>"}}
```

List only the files you create or change, each with its complete content (a file set to null is
deleted); paths are relative to the project root. Instead of "files" you may reply with one
unified diff (```diff ... ``` with --- a/<path> / +++ b/<path> headers and @@ hunks)."""


def generation_params(client: Any) -> dict[str, Any]:
    """The parameters sent with every call (the reasoning bound for reasoning models)."""
    return scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)


def format_files(view: list[tuple[str, str]]) -> str:
    """The context files block: each file between BEGIN / END lines naming it."""
    return "\n\n".join(
        f"{FILE_BEGIN.format(path=p)}\n{t.rstrip(chr(10))}\n{FILE_END.format(path=p)}" for p, t in view
    )


def parse_prompt_files(text: str) -> dict[str, str]:
    """The files a prompt shows (path -> text), as :func:`format_files` wrote them."""
    return {m.group("path"): m.group("body") + "\n" for m in _FILE_RE.finditer(text)}


def build_prompt(scenario: Scenario, session: int, view: list[tuple[str, str]]) -> str:
    """The user message of session ``session`` (1-based): task, description, requirements,
    context files with their contents (upstream's sections, B4)."""
    n = len(scenario.sessions)
    head = f"SESSION {session} OF {n}\n\n" if n > 1 else ""
    chars = sum(len(t) for _, t in view)
    return (
        f"{head}TASK: {scenario.title}\n\nDESCRIPTION: {scenario.description}\n\n"
        f"REQUIREMENTS:\n{scenario.sessions[session - 1].strip()}\n\n"
        f"CONTEXT FILES ({len(view)} files, {chars} characters, about {proxy_tokens(chars)} tokens):\n\n"
        f"{format_files(view)}\n"
    )


def session_view(scenario: Scenario, files: dict[str, str], ablate: bool) -> list[tuple[str, str]]:
    """What a session's prompt shows: the scenario's files in its order as they are now
    (unchanged needle files ablated with ``ablate``), then files the model added, sorted."""
    base = dict(context_view(scenario, ablate))
    shown = []
    for path in scenario.order:
        if path in files:
            shown.append((path, base[path] if files[path] == scenario.files.get(path) else files[path]))
    extra = sorted(p for p in files if p not in scenario.files and not p.startswith("_egi"))
    shown += [(p, files[p]) for p in extra]
    return shown


def run_trial(task: Task, client: ModelClient, options: Any = None, judge: Any = None) -> Trajectory:
    """Run one scenario: one model call per session, each on a fresh two-message prompt.

    When the model has finished, the sandbox checks of its final tree run once
    (:func:`suites.locobench.scorer.trial_checks`, with the limits of ``options``) and their
    result is kept in the trajectory, so scoring and rescoring read it instead of running them.

    Returns:
        The trajectory: every prompt and reply in order, ``final_answer`` the last reply
        (None when blank or cut off), ``info["locobench"]`` the per-session notes, the
        context size, whether the context ablation ran and, when the answer changed a file,
        ``checks`` (the check result with the sha256 of its inputs: ``env.stored_checks``).

    Raises:
        ProviderError: from the client (an infrastructure failure).
        SandboxError: the sandbox could not start for the checks (an infrastructure failure;
            the trajectory is attached as ``partial_trajectory``).
    """
    from suites.locobench.options import LocoOptions

    opts = suite_options(LocoOptions, options)
    scenario = build_scenario(task.data)
    system = {"role": "system", "content": SYSTEM_PROMPT.format(language=scenario.language)}
    traj = Trajectory(messages=[system])
    files = dict(scenario.files)
    notes: list[dict[str, Any]] = []
    budget = float(task.data.get("timeout_s") or 0)
    begin = time.monotonic()
    with keep_partial(traj):
        for k in range(1, len(scenario.sessions) + 1):
            if budget and time.monotonic() - begin > budget:
                notes.append(
                    {"session": k, "ok": False, "reason": f"the scenario's budget of {budget:g} s ran out"}
                )
                break
            user = {
                "role": "user",
                "content": build_prompt(scenario, k, session_view(scenario, files, opts.ablation)),
            }
            traj.messages.append(user)
            reply = call_model(client, traj, None, generation_params(client), messages=[system, user])
            if reply is None:  # context window exceeded: no answer
                break
            text = reply.get("content")
            end_with_text(traj, text, "text_answer")
            new, note = replay_one(files, text, k)
            notes.append(note)
            files = new
            if traj.termination == "truncated":
                break
    traj.info["locobench"] = {
        "sessions": notes,
        "ablation": opts.ablation,
        "scenario": scenario.id,
        "context_tokens": proxy_tokens(scenario.context_chars),
    }
    from suites.locobench.options import limits
    from suites.locobench.scorer import trial_checks  # heavy (quality and structure tools): on first use

    with keep_partial(traj):  # the model has finished: nothing here reaches it
        checks = trial_checks(scenario, traj.to_dict(), limits(opts))
    if checks is not None:
        traj.info["locobench"]["checks"] = checks
    return traj
