"""The PersonaBench pipeline: retrieve, then one call to the model under test.

Upstream (``retrieval_and_generation.py``): the question's top-5 chunks from the person's
index, put in one prompt ("you are given this relevant information ...; answer as directly
and concisely as possible with only the name(s) of the relevant entities ...; Question: ..."),
one chat call, the reply is the prediction. The prompt here is our own wording of upstream's;
the chunks are inserted as upstream does, the string form of a NumPy array of strings.
"""

from __future__ import annotations

from typing import Any

from pytest_egi.agents.loops import Trajectory, call_model, end_with_text, keep_partial
from pytest_egi.models.base import ModelClient
from pytest_egi.models.offline import NullClient, PolicyClient
from pytest_egi.models.params import scaffold_params
from pytest_egi.suite import Task, suite_options
from suites.personabench.data import person_chunks
from suites.personabench.env import BM25, GT_CONTEXT, MINILM, render_context, retrieve

__all__ = ["GENERATION_PARAMS", "PROMPT", "build_prompt", "resolve_retriever", "run_trial"]

PROMPT = (
    "Here is information that may be relevant: {doc}.\n"
    "Answer the question below as directly and briefly as you can, giving only the name(s) of the "
    "relevant entity or entities, with no extra words or explanation.\n\n"
    "Question: {query}"
)
"""Our wording of upstream's prompt template (same slots, same instruction)."""

GENERATION_PARAMS: dict[str, Any] = {"max_tokens": 1024}
"""Upstream sets no temperature (the API default) and no ``max_tokens``; 1024 tokens bound a
reply that should be a few entity names. ``--egi-model-params`` overrides it."""
REASONING_MAX_TOKENS = 16_384


def build_prompt(chunks: list[str], question: str) -> str:
    """The one user message: the rendered chunks and the raw question."""
    return PROMPT.format(doc=render_context(chunks), query=question)


def resolve_retriever(option: str | None, client: Any) -> tuple[str, bool]:
    """The retriever of this trial and whether it is the BM25 fallback.

    An explicit ``personabench.retriever`` applies to every model. Without one, a model under
    test gets ``all-MiniLM-L6-v2`` (the report's quick profile), or BM25 when the ``minilm``
    extra is not installed (the fallback, flagged); the offline reference policies
    (``egi/oracle``, ``egi/noisy-<p>``, ``egi/null``) get ``gt-context``, upstream's oracle
    retriever, so that their ceiling measures the documents, the gold and the scorer, not a
    retriever.
    """
    if option is not None:
        if option == MINILM:
            from suites.personabench.env.weights import minilm_available

            if not minilm_available():
                return BM25, True
        return option, False
    if isinstance(client, (PolicyClient, NullClient)):
        return GT_CONTEXT, False
    from suites.personabench.env.weights import minilm_available

    return (MINILM, False) if minilm_available() else (BM25, True)


def run_trial(task: Task, client: ModelClient, options: Any = None, judge: Any = None) -> Trajectory:
    """Run one PersonaBench trial: retrieve the top-k chunks for the question, ask the model.

    Args:
        task: a task from ``SUITE.load_tasks``.
        client: the model under test (or an offline reference policy).
        options: the suite's options (``PersonaBenchOptions``); None means the defaults.
        judge: unused (the scorer is lexical); accepted for the common signature.

    Returns:
        The trajectory; ``final_answer`` is the reply text. ``info["personabench"]`` holds the
        retriever, whether it is the BM25 fallback, k and the retrieved segment ids.

    Raises:
        ProviderError: from the client (an infra failure).
        Exception: a retrieval fault (a broken index, a gold segment missing from the
            documents): the item errors, with the partial trajectory attached.
    """
    from suites.personabench import PersonaBenchOptions

    opts = suite_options(PersonaBenchOptions, options)
    d = task.data
    retriever, fallback = resolve_retriever(opts.retriever, client)
    traj = Trajectory(messages=[])
    traj.info["personabench"] = {"retriever": retriever, "bm25_fallback": fallback, "top_k": opts.top_k}
    with keep_partial(traj):
        ids = retrieve(
            d["world"],
            d["community"],
            d["person"],
            d["noise"],
            d["question"],
            retriever,
            d["gold_segments"],
            opts.top_k,
        )
        chunks, all_ids = person_chunks(d["world"], d["community"], d["person"], d["noise"])
        at = {sid: i for i, sid in enumerate(all_ids)}
        traj.info["personabench"]["retrieved_segment_ids"] = ids
        traj.messages.append(
            {"role": "user", "content": build_prompt([chunks[at[i]] for i in ids], d["question"])}
        )
        params = scaffold_params(GENERATION_PARAMS, client, REASONING_MAX_TOKENS)
        reply = call_model(client, traj, None, params)
        if reply is not None:
            end_with_text(traj, reply.get("content"), "text_answer")
    return traj
