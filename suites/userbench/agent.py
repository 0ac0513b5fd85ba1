"""The UserBench agent loop (reference §2.4, upstream ``eval.py``'s rollout), on the core's loop
primitives (``call_model``, ``keep_partial``, ``Trajectory``).

Each assistant turn must call the single tool ``interact_with_env(thought, choice, content)``;
the harness prefixes the content with ``[<choice>]`` (unless it already starts with it, or the
choice is not one of ``action`` / ``answer`` / ``search``, when the content goes as it is) and
takes one environment step. The tool message back is the observation's ``feedback``. Only the
first tool call of a turn is executed (upstream read ``tool_calls[0]``); any other call of that
turn is answered "not executed". The episode ends when the environment terminates or
truncates, when the turns run out, or, as upstream's rollout did, at a reply with no tool call
or a call whose arguments lack a string ``thought``, ``choice`` or ``content``.

The per-turn rewards are kept in ``info["userbench"]`` with the turn history; they are the
score whatever ends the episode (upstream kept the rewards of a rollout that stopped early).

The user simulator and search judge is :class:`~suites.userbench.simulator.RuleUser`
(``egi/rules``), or with ``--egi-simulator-model`` an
:class:`~suites.userbench.simulator.LLMUser` over the simulator client the core passes; its
tokens are counted apart from the agent's (the trajectory's ``usage`` is the agent's alone), and
its failure is an item error that nothing of reaches the agent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pytest_egi.agents.loops import Trajectory, call_model, end_with_text, keep_partial
from pytest_egi.models.base import ModelClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task
from suites.userbench.env import EnvConfig, TravelEnv
from suites.userbench.simulator import LLMUser, RuleUser, TravelUser

__all__ = ["MODE_SENTENCE", "NOT_EXECUTED", "SYSTEM_PROMPT", "TOOL_SCHEMA", "format_action", "run_trial",
           "system_prompt"]

TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "interact_with_env",
        "description": "Interact with the travel-planning environment described in the system prompt, one "
        "step at a time, by choosing `search`, `action` or `answer`.",
        "parameters": {
            "type": "object",
            "properties": {
                "thought": {"type": "string", "description": "Your reasoning about what to do next and why."},
                "choice": {
                    "type": "string",
                    "enum": ["action", "answer", "search"],
                    "description": "What to do next: `action`, `answer` or `search`.",
                },
                "content": {
                    "type": "string",
                    "description": "For `action`, what you say to the user; for `search`, the search "
                    "request; for `answer`, the option ID you recommend. Follow the system prompt's formats.",
                },
            },
            "required": ["thought", "choice", "content"],
        },
    },
}
"""Upstream's single tool (``schema/interact_tool.yaml``): same name, arguments and enum; our wording."""

SYSTEM_PROMPT = (
    "You are a travel-planning agent working with a user and a search database. The user's first "
    "message may leave out what they care about, so find out their preferences, search, and recommend "
    "options.\n"
    "Act only by calling the tool `interact_with_env`, once per turn, with your thought, a choice and "
    "its content:\n"
    "- `search`: send one clear search request to the database for one travel aspect (flight, hotel, "
    "apartment, restaurant or rental car), with all the arguments the user gave for it (cities and "
    "dates). One request at a time.\n"
    "- `action`: talk to the user. Ask specific, concrete questions about one detail at a time; vague "
    "or general questions get no useful answer.\n"
    "- `answer`: recommend one option by giving only its option ID from the search results (for "
    "example H3 or F12).\n"
    "The user wants, for each aspect, the cheapest option that meets all of their preferences."
)
"""Our wording of upstream's system message (the parquet ``prompt``'s first message), without
its mode sentence (:data:`MODE_SENTENCE`)."""
MODE_SENTENCE = {
    False: "\nSeveral aspects need an answer; you may answer more than once, with one option ID per answer.",
    True: "\nSeveral aspects need an answer, and you may recommend only one option per aspect, so learn "
    "the user's preferences before you recommend.",
}
"""Our wording of the one bullet that differs between upstream's ``*_multiturn`` (False: may
answer several times, one id each) and ``*_multiturn_onechoice`` (True) prompts."""


def system_prompt(task_data: dict[str, Any], one_choice: bool) -> str:
    """The system message of an episode: upstream's own (``system_prompt``, from the parquet
    row of a task loaded with ``userbench.data_dir``, read from the folder of the mode), else
    :data:`SYSTEM_PROMPT` with the mode's sentence."""
    own = task_data.get("system_prompt")
    return own if isinstance(own, str) and own.strip() else SYSTEM_PROMPT + MODE_SENTENCE[one_choice]


NOT_EXECUTED = "Not executed: only one interaction with the environment is allowed per turn."

GENERATION_PARAMS: dict[str, Any] = {"temperature": 1.0, "max_tokens": 2048}
"""Upstream's ``max_tokens`` 2048; the temperature comes from the profile (routing.yaml: 1.0)."""
REASONING_MAX_TOKENS = 32_768


def format_action(choice: str, content: str) -> str:
    """Upstream's prefixing: ``[<choice>] <content>`` for a known choice whose content does not
    already start with its prefix; otherwise the content as it is."""
    if choice in ("action", "answer", "search") and not content.startswith(f"[{choice}]"):
        return f"[{choice}] {content}"
    return content


def _arguments(call: dict[str, Any]) -> dict[str, str] | str:
    """The call's arguments, or why they cannot be taken (upstream's rollout stopped there)."""
    raw = (call.get("function") or {}).get("arguments")
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as exc:
        return f"arguments are not valid JSON ({exc.msg})"
    if not isinstance(args, dict):
        return "arguments must be a JSON object"
    missing = [k for k in ("thought", "choice", "content") if not isinstance(args.get(k), str)]
    if missing:
        return f"arguments need string fields {', '.join(missing)}"
    return args


@contextmanager
def _simulator_usage(user: TravelUser, info: dict[str, Any]) -> Iterator[None]:
    """Keep the LLM simulator's usage in ``info`` however the episode ends (before
    ``keep_partial`` takes the partial trajectory of an error)."""
    try:
        yield
    finally:
        usage = getattr(user, "usage", None)
        if usage is not None:
            info["simulator_usage"] = usage.to_dict()


def run_trial(
    task: Task,
    client: ModelClient,
    options: Any = None,
    trial: int = 1,
    simulator: Any = None,
    user: TravelUser | None = None,
) -> Trajectory:
    """Run one UserBench episode.

    Args:
        task: from ``SUITE.load_tasks`` (``data`` is the task record plus ``seed``,
            ``max_turns``, ``temperature``).
        client: the model under test (or an offline reference policy).
        options: the suite's options (``one_choice``: default multi-choice, ``max_turns``).
        trial: 1-based trial index (seeds the passive reveal with the task).
        simulator: the user simulator's model client (``--egi-simulator-model``, the core's
            ``egi.simulator``): the user and search judge are an :class:`LLMUser` over it; None
            keeps :class:`RuleUser`.
        user: a user simulator to use instead (tests); it wins over ``simulator``.

    Returns:
        The trajectory; its ``usage`` is the agent's alone. ``info["userbench"]`` holds
        ``rewards``, ``turns``, ``ended`` (how the episode ended, in the record's words:
        the trajectory's ``termination``, ``submitted`` / ``max_turns`` / ``text_answer`` /
        ``truncated`` / ``context_exceeded``, or ``malformed_call``, a malformed tool call that
        ended it), ``active`` / ``passive`` (elicited counts),
        ``best_remaining``, ``answers``, ``simulator`` (the simulator model's name, or
        ``egi/rules``) and ``simulator_usage`` (the LLM simulator's usage dict, None for rules;
        kept in a partial trajectory too).

    Raises:
        ProviderError: from the client (an item error).
        SimulatorError: the LLM simulator's model failed or gave no usable verdict after one
            re-ask (an item error; the turn is not scored and the agent hears nothing of it).
    """
    if user is None:
        user = LLMUser(simulator) if simulator is not None else RuleUser()
    data = task.data
    max_turns = int(getattr(options, "max_turns", None) or data.get("max_turns") or 20)
    one_choice = bool(getattr(options, "one_choice", False))
    config = EnvConfig(max_steps=max_turns, one_choice_per_aspect=one_choice)
    env = TravelEnv(data, user, config, reveal_seed=f"{data.get('seed', 0)}|{task.id}|{trial}")
    obs, _ = env.reset()
    messages = [{"role": "system", "content": system_prompt(data, one_choice)},
                {"role": "user", "content": obs["feedback"]}]
    traj = Trajectory(messages=messages)
    params = scaffold_params({**GENERATION_PARAMS, "temperature": data.get("temperature", 1.0)}, client,
                             REASONING_MAX_TOKENS)  # fmt: skip
    rewards: list[float] = []
    turns: list[dict[str, Any]] = []
    answers: list[str] = []
    info: dict[str, Any] = {
        "rewards": rewards, "turns": turns, "answers": answers, "ended": "max_turns",
        "simulator": user.name, "simulator_usage": None, "one_choice": one_choice, "max_turns": max_turns,
    }  # fmt: skip
    traj.info["userbench"] = info
    with keep_partial(traj), _simulator_usage(user, info):
        while traj.turns < max_turns:
            message = call_model(client, traj, [TOOL_SCHEMA], params)
            if message is None:
                info["ended"] = "context_exceeded"
                break
            calls = message.get("tool_calls") or []
            if not calls:
                # the text is the episode's final answer (blank or cut off: none), so an
                # "I don't know." reply reads as one in the record, as in every suite
                end_with_text(traj, message.get("content"), "text_answer")
                info["ended"] = traj.termination  # text_answer, or truncated when cut off
                break
            first = calls[0]
            args = _arguments(first)
            if isinstance(args, str):
                traj.tool_calls.append({"name": "interact_with_env", "arguments": None, "error": True})
                traj.messages.append(
                    {"role": "tool", "tool_call_id": first.get("id"), "content": f"Error: {args}"}
                )
                info["ended"] = "malformed_call"
                traj.termination = "text_answer"
                break
            action = format_action(args["choice"], args["content"])
            obs, reward, terminated, truncated, _ = env.step(action)
            rewards.append(reward)
            turns.append({"choice": args["choice"], "content": args["content"], "reward": reward,
                          "active": obs.get("active_elicited_preferences", 0),
                          "passive": obs.get("passive_elicited_preferences", 0)})  # fmt: skip
            if args["choice"] == "answer":
                answers.append(args["content"])
            traj.tool_calls.append({"name": "interact_with_env", "arguments": args, "error": False})
            traj.messages.append(
                {"role": "tool", "tool_call_id": first.get("id"), "content": obs["feedback"]}
            )
            for extra in calls[1:]:
                traj.messages.append(
                    {"role": "tool", "tool_call_id": extra.get("id"), "content": NOT_EXECUTED}
                )
            if terminated or truncated:
                info["ended"] = "submitted" if terminated else "max_turns"  # the env's turn limit
                traj.termination = "submitted" if terminated else "max_turns"
                break
    info["active"] = env.state["active_elicited_preferences"]
    info["passive"] = env.state["passive_elicited_preferences"]
    info["best_remaining"] = list(env.state["remaining_best_options"])
    # the options recommended; with none, a closing text reply (``end_with_text``) stands
    traj.final_answer = list(answers) or traj.final_answer
    return traj
