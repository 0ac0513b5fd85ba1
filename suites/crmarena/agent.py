"""The CRMArena scaffold: prompt, the ``react`` and ``tool_call`` strategies, and the
reference policy that replays a task's reference composition through them.

Source: CRMArena ``chat_agent.py`` / ``tool_call_agent.py`` (reference §1.4-§1.5):
20 agent turns, temperature 0 and max_tokens 2000 (50k for reasoning models) by default
(:data:`GENERATION_PARAMS`), one thought plus one action per turn, ``<execute>`` wins when
both tags appear, an invalid action costs its turn and earns the invalid-format reminder,
the first ``<respond>`` (or the ``respond`` tool) ends the episode, observations are
``Salesforce instance output: <rows>`` with no truncation unless ``max_observation_chars``
is set.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Generator
from typing import Any

from pytest_egi.agents.loops import Action, Trajectory, run_react_loop, run_tool_loop
from pytest_egi.agents.tools import Tool, Toolkit
from pytest_egi.models.base import ModelClient, assistant_message, tool_call
from pytest_egi.models.offline import Noise
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task
from suites.crmarena.data.reference import (
    ReferenceSolutionError,
    parse_today,
    reference_solution,
    wrong_answer,
)
from suites.crmarena.env.errors import SalesforceError
from suites.crmarena.env.schema import OBJECTS

__all__ = [
    "GENERATION_PARAMS",
    "CrmReferencePolicy",
    "build_messages",
    "format_answer",
    "generation_params",
    "run_trial",
]

OUTPUT_PREFIX = "Salesforce instance output: "
INVALID_FORMAT = (
    "Invalid output format! Use the following format: <thought> your thought </thought> "
    "followed by <execute> a SOQL or SOSL query </execute> or <respond> your answer </respond>."
)
EXTERNAL_TASKS = ("knowledge_qa", "named_entity_disambiguation")
"""Task types whose user is a customer (external-facing prompt), reference §1.1."""

GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 2000}
"""Upstream's generation parameters (reference §1.5). Defaults only: ``--egi-model-params``
overrides them (``KEY=null`` removes one) and the client drops what the model refuses
(``temperature=0`` for OpenAI's reasoning models)."""
REASONING_MAX_TOKENS = 50_000
"""Upstream's ``max_tokens`` for reasoning models (their hidden reasoning counts against it)."""


def generation_params(client: Any) -> dict[str, Any]:
    """The parameters this scaffold sends with every call to ``client``: upstream's, with
    the reasoning-model limit when LiteLLM marks the model as one (``client.reasoning``)."""
    return scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)


_TAG = {tag: re.compile(rf"<{tag}>(.*?)</{tag}>", re.DOTALL) for tag in ("execute", "respond")}

_EXAMPLES = """\
Example 1 (SOQL): how many cases did the agent 005XXXXXXXXXXXXXXX close?
<thought>I count the agent's closed cases.</thought>
<execute>SELECT COUNT() FROM Case WHERE OwnerId = '005XXXXXXXXXXXXXXX' AND Status = 'Closed'</execute>

Example 2 (SOQL with a relationship): which state is the account of case 500XXXXXXXXXXXXXXX in?
<thought>I follow the case's account.</thought>
<execute>SELECT Account.ShippingState FROM Case WHERE Id = '500XXXXXXXXXXXXXXX'</execute>

Example 3 (SOSL): find knowledge articles about returns.
<thought>I search the knowledge base.</thought>
<execute>FIND {returns} IN ALL FIELDS RETURNING Knowledge__kav(Id, Title, Summary)</execute>
"""


def _schema_block() -> str:
    lines = []
    for obj, fields in OBJECTS.items():
        lines.append(f"## {obj}")
        lines += [f"- {name}: {desc}" for name, desc in fields.items()]
    return "\n".join(lines)


def build_messages(record: dict[str, Any], *, strategy: str, aided: bool) -> list[dict[str, Any]]:
    """System prompt + first user message for one task record (reference §1.5 outline)."""
    who = "a customer" if record["task"] in EXTERNAL_TASKS else "an internal employee"
    if strategy == "react":
        protocol = (
            "In each turn write exactly one <thought>...</thought> followed by exactly one "
            "action: <execute>a SOQL or SOSL query</execute> to query the Salesforce instance, "
            "or <respond>your final answer</respond> to answer.\n\n" + _EXAMPLES
        )
    else:
        protocol = (
            "Use the tools issue_soql_query and issue_sosl_query to query the Salesforce "
            "instance, and the respond tool to give your final answer."
        )
    context = record["metadata"].get("required") or ""
    if aided and record["metadata"].get("optional"):
        context += "\n" + record["metadata"]["optional"]
    system = (
        f"You are an expert Salesforce agent helping {who}.\n"
        "Rules:\n"
        "- Never invent observations; rely only on query results.\n"
        "- When the answer is several records, return their values separated by commas; when "
        "there is no matching record, answer None.\n"
        "- Answer with the requested Ids, state codes or month names only, no extra words.\n\n"
        f"{protocol}\n\n# Salesforce objects available\n{_schema_block()}\n\n"
        f"# Additional task context\n{context}"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": record["query"]}]


def parse_react(text: str) -> Action:
    """Parse ``<execute>``/``<respond>``; execute wins when both appear (reference §1.4)."""
    m = _TAG["execute"].search(text)
    if m:
        return Action("execute", m.group(1).strip())
    m = _TAG["respond"].search(text)
    if m:
        return Action("respond", m.group(1).strip())
    return Action("invalid")


def format_answer(answer: list[str | None]) -> str:
    """Render an answer list the way the prompt asks: comma-separated, ``None`` for null."""
    return ", ".join("None" if a is None else str(a) for a in answer)


def _observe(org: Any, query: str, cap: int | None, today: Any) -> str:
    text = org.execute(query, today=today)
    if cap is not None and len(text) > cap:
        text = text[:cap] + f" ... [truncated to {cap} characters]"
    return text


def _task_today(record: dict[str, Any]) -> Any:
    """The task's "today" (for TODAY, LAST_N_DAYS:n ...), or None to use the org's."""
    try:
        return parse_today(record)
    except (ReferenceSolutionError, ValueError):
        return None


def toolkit_for(org: Any, cap: int | None, today: Any = None) -> Toolkit:
    """The ``tool_call`` strategy's tools: SOQL, SOSL, and ``respond`` (submit)."""
    query_schema = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "the query text"}},
        "required": ["query"],
    }
    return Toolkit.of(
        Tool(
            "issue_soql_query",
            "Run a SOQL query on the Salesforce instance.",
            query_schema,
            lambda query: _observe(org, query, cap, today),
        ),
        Tool(
            "issue_sosl_query",
            "Run a SOSL search on the Salesforce instance.",
            query_schema,
            lambda query: _observe(org, query, cap, today),
        ),
        Tool(
            "respond",
            "Give the final answer to the user.",
            {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
            lambda content: content,
            kind="submit",
        ),
    )


def run_trial(task: Task, client: ModelClient, org: Any, options: Any) -> Trajectory:
    """Run one task with the configured strategy; returns the trajectory.

    A query the model got wrong comes back as its ``ERRORCODE: message`` observation
    (`Org.execute`); the episode goes on and is scored.

    Raises:
        ProviderError: the model's provider failed (the item becomes an error).
        Exception: an environment fault while executing a query (an unreadable org database,
            an engine bug): it propagates with ``partial_trajectory`` attached and the item
            becomes an error, never a scored answer.
    """
    record = task.data
    messages = build_messages(record, strategy=options.strategy, aided=options.aided)
    params = generation_params(client)
    cap = options.max_observation_chars
    today = _task_today(record)
    if options.strategy == "tool_call":
        return run_tool_loop(
            client, messages, toolkit_for(org, cap, today), max_turns=options.max_turns, params=params
        )
    return run_react_loop(
        client,
        messages,
        parse=parse_react,
        execute=lambda q: _observe(org, q, cap, today),
        max_turns=options.max_turns,
        invalid_format_message=INVALID_FORMAT,
        params=params,
    )


def parse_observation(text: str) -> list[dict[str, Any]] | SalesforceError:
    """Turn an observation back into rows (or the error), as a reader of the text would."""
    if text.startswith(OUTPUT_PREFIX):
        return ast.literal_eval(text[len(OUTPUT_PREFIX) :])
    code, _, message = text.partition(": ")
    return SalesforceError(code.strip(), message.strip())


class CrmReferencePolicy:
    """Replays the task's reference composition (SOQL/SOSL program) through the scaffold.

    It reads only the task text (query + ``metadata.required``) and its own query results
    from the conversation, never the gold answer. Seeded mistakes (``egi/noisy-<p>``), each
    drawn independently at rate p:

    - ``extra_turn`` (per query): a malformed query first, then the right one (recovered);
    - ``wrong_argument`` (per query): a malformed query whose failure the policy does not
      recover from: it re-issues the query but its final answer is wrong;
    - ``wrong_answer`` (once): a plausible wrong answer of the right shape (the runner-up id
      seen in results, the next state or month, half of the KQA text).
    """

    def __init__(self, task: Task, noise: Noise) -> None:
        self.record = task.data
        self.noise = noise
        self.program: Generator[str, Any, list[str | None]] = reference_solution(self.record)
        self.started = False
        self.retry_query: str | None = None
        self.poisoned = False
        self.observed: list[Any] = []
        self.call_n = 0

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        try:
            if self.retry_query is not None:
                query, self.retry_query = self.retry_query, None
                return self._query(query, tools)
            if not self.started:
                self.started = True
                query = next(self.program)
            else:
                observation = parse_observation(messages[-1].get("content") or "")
                self.observed.append(observation)
                query = self.program.send(observation)
        except StopIteration as stop:
            return self._answer(list(stop.value), tools)
        recovered = self.noise.happens("extra_turn")
        unrecovered = self.noise.happens("wrong_argument")
        if recovered or unrecovered:
            self.poisoned = self.poisoned or unrecovered
            self.retry_query = query
            return self._query(_malformed(query), tools)
        return self._query(query, tools)

    def _query(self, query: str, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        self.call_n += 1
        if tools:
            is_sosl = query.lstrip().upper().startswith("FIN")
            name = "issue_sosl_query" if is_sosl else "issue_soql_query"
            call = tool_call(f"call_{self.call_n}", name, json.dumps({"query": query}))
            return assistant_message(None, [call])
        return assistant_message(f"<thought>I query the org.</thought>\n<execute>{query}</execute>")

    def _answer(self, answer: list[str | None], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        if self.noise.happens("wrong_answer") or self.poisoned:
            answer = wrong_answer(self.record, answer, self.observed)
        text = format_answer(answer)
        if tools:
            call = tool_call("call_respond", "respond", json.dumps({"content": text}))
            return assistant_message(None, [call])
        return assistant_message(f"<thought>I have the answer.</thought>\n<respond>{text}</respond>")


def _malformed(query: str) -> str:
    """A query with a misspelt keyword (SELECT -> SELEC, FIND -> FIN): a MALFORMED_QUERY."""
    return query.replace("SELECT", "SELEC", 1) if "SELECT" in query else query.replace("FIND", "FIN", 1)
