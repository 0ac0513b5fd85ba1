"""The HERB agent scaffold: a ReAct-style function-calling loop over the HERB tools.

Upstream runs a LlamaIndex ``ReActAgent`` (``max_iterations=10`` in the paper's setting,
temperature 0.1) with a context blurb describing the six source kinds and the structured
versus unstructured tools, and takes its last chat response as the answer (reference §2.4).
Here the model calls the same nine tools natively and ends with ``submit``
(``{answer, entities, answerable}``); a plain-text reply also ends the episode and is scored
by text extraction. Not reproduced (see README "Deviations"): upstream's GPT-4o "finish"
check with retries and its fallback RAG answer, which replaces an honest "I don't know".
"""

from __future__ import annotations

from typing import Any

from pytest_egi.agents.loops import Trajectory, run_tool_loop
from pytest_egi.models.base import ModelClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task, suite_options
from suites.herb.env import get_env

__all__ = ["GENERATION_PARAMS", "SYSTEM_PROMPT", "build_messages", "generation_params", "run_trial"]

GENERATION_PARAMS: dict[str, Any] = {"temperature": 0.1, "max_tokens": 4096}
"""Upstream's temperature (0.1, reference §2.4) and a bound on one reply's length. Upstream
sets no ``max_tokens`` (the provider's default); without one a local server may generate
until its context is full (minutes per call), so 4096 tokens bound one turn, far above what a
tool call or an answer needs. Defaults only: ``--egi-model-params`` overrides them
(``KEY=null`` removes one) and the client drops what the model refuses."""
REASONING_MAX_TOKENS = 32_768
"""The bound for reasoning models, whose hidden reasoning counts against ``max_tokens``."""


def generation_params(client: Any) -> dict[str, Any]:
    """The parameters this scaffold sends with every call to ``client`` (the reasoning
    bound when LiteLLM marks the model as a reasoning model, ``client.reasoning``)."""
    return scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)


SYSTEM_PROMPT = """You answer questions about a company's products from its internal data.

The data comes from six kinds of sources:
- Employee directory: employee names, employee IDs (eid_...) and roles.
- Slack conversations: messages in product channels, with timestamps, the sender's employee
  ID, and links to documents, web pages and pull requests.
- Meeting records: transcripts with a date, a meeting ID and the participants' employee IDs,
  and the chat messages posted during meetings.
- Internal documents: each with its ID, link, date, author's employee ID, type and content.
- GitHub pull requests: title, author, state, summary and reviews, for features and fixes.
- Web URLs: descriptions of external pages the team shared.

Tools:
- Unstructured search: retrieve_all returns the Slack messages, documents, meeting
  transcripts and meeting chats most relevant to a query.
- Structured search returns exact metadata: employees (name_to_id_search, id_to_name_search,
  role_to_id_search, id_to_role_search), customers (company_to_id_search,
  id_to_company_search), pull requests (pr_search) and URLs or document links (url_search).
  Pull requests and URLs are only reachable through their links.

Answers often need several sources: search, follow the ids and links you find, and check
the details. When you are done, call submit with the answer text, the entities that make up
the answer (employee IDs, customer company names, URLs or pull request links; leave it empty
for a descriptive answer), and answerable=false if the sources do not contain the answer."""
"""Our own wording of upstream's ``CONTEXT_AGENT`` blurb, plus the submit instruction."""


def build_messages(task: Task) -> list[dict[str, Any]]:
    """The opening messages: the system prompt and the question as the user's message."""
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": task.data["question"]},
    ]


def run_trial(task: Task, client: ModelClient, options: Any = None, judge: Any = None) -> Trajectory:
    """Run one HERB trial: the model answers ``task`` with the HERB tools.

    Args:
        task: a task from ``SUITE.load_tasks`` (its ``data["world"]`` names the world).
        client: the model under test (or an offline reference policy).
        options: the suite's options (``HerbOptions``); None means the defaults.
        judge: unused while acting (grading happens in ``SUITE.score``); accepted so every
            suite's ``run_trial`` has the same signature.

    Returns:
        The trajectory; ``final_answer`` is the submit dict, the final text, or None when the
        turn budget ran out. ``info["herb"]`` records the retrieval settings used.

    Raises:
        ProviderError: from the client (an infra failure).
        Exception: an environment fault inside a tool (a broken retrieval index, a bug in a
            look-up): it propagates with ``partial_trajectory`` attached and the item becomes
            an error; only the model's own mistakes are shown to it as ``Error: ...``.
    """
    from suites.herb import HerbOptions

    opts = suite_options(HerbOptions, options)
    env = get_env(task.data["world"], opts)
    toolkit = env.toolkit(top_k=opts.top_k, faithful_tool_bugs=opts.faithful_tool_bugs)
    trajectory = run_tool_loop(client, build_messages(task), toolkit, max_turns=opts.max_steps,
                               text_is_final=True, params=generation_params(client))  # fmt: skip
    trajectory.info["herb"] = {
        "retriever": opts.retriever, "top_k": opts.top_k, "max_steps": opts.max_steps,
        "index_links": opts.index_links, "faithful_tool_bugs": opts.faithful_tool_bugs,
        "product": task.data.get("product"),
    }  # fmt: skip
    return trajectory
