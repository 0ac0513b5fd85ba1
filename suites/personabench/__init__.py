"""PersonaBench: answering from a person's private documents under noise (Salesforce,
arXiv 2502.20616; reference ``personabench_userbench.md`` §1).

Communities of people whose profile facts, preferences and relationships are stated implicitly
in their private documents (person-to-person conversations, user–AI chats, purchase baskets).
A retrieval-augmented pipeline answers first-person questions ("Which city do I live in?"):
one chunk per session, one index per person, the raw question as the query, the top 5 chunks,
one call to the model under test (``agent.py``). Noise levels 0.0 / 0.3 / 0.5 / 0.7 are the
share of sessions that carry no answer.

Categories are ``noise_<x>.<category>`` with the upstream category keys
(``Basic_information_easy``, ``Preference_easy``, ``Preference_hard``, ``Social_easy``) plus
``Social_hard`` (upstream merged it into ``Social_easy``; fixed). Routed sub-metrics:
``noise_<x>.<category>.f1`` (mean word-set F1, 0–1, rounded to 3 decimals as upstream). Reported,
not routed: precision and recall per category, ``Overall``, ``outdated_information.recall``
(lower is better), Recall@5 and NDCG@5 per category (real retrievers only), and
``bm25_fallback_trials``. Subjective questions are generated but not scored, as upstream.

Differences from upstream (README "Differences from upstream"): the integer-answer and
Social-hard scoring mistakes are fixed; the normaliser keeps letters of any script after
folding typographic marks; all-MiniLM-L6-v2 runs on NumPy from the packaged weights (BM25 when
that extra is absent, flagged); the offline reference policies read ``gt-context`` retrieval
unless ``personabench.retriever`` is set; the world is generated (our own names and wording),
or loaded from the release with ``--egi-opt personabench.data_dir=PATH``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.models.offline import Noise
from pytest_egi.outcomes import ending_kind
from pytest_egi.suite import SuiteProfile, SummaryColumns, Task, TaskScore, profile_categories, suite_options
from suites.personabench.data import community, community_ids, world_spec
from suites.personabench.data.generator import NOISE_LEVELS, community_questions
from suites.personabench.policy import PersonaPolicy
from suites.personabench.scorer import category_of, prf, retrieval_scores, word_set

__all__ = ["CATEGORIES", "CATS", "SUITE", "PersonaBenchOptions", "PersonaBenchSuite"]

T = TypeVar("T")

CATS = ("Basic_information_easy", "Preference_easy", "Preference_hard", "Social_easy", "Social_hard")
"""Score categories (upstream's keys, with Social hard no longer folded into Social easy)."""
CATEGORIES = tuple(f"noise_{x}.{c}" for x in NOISE_LEVELS for c in CATS)
PROFILE_KEYS = ("people", "communities", "noise_levels")
"""routing.yaml profile keys: ``people`` (the first N people of each community), ``communities``
(indices), ``noise_levels``."""


class PersonaBenchOptions(BaseModel):
    """``--egi-opt personabench.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    data_dir: Path | None = None
    """The release layout (``eval_data/eval_data_v1``, holding ``synthetic_data/community_<i>``)
    to load instead of the generated communities."""
    retriever: Literal["all-MiniLM-L6-v2", "bm25", "gt-context"] | None = None
    """None: a model under test gets all-MiniLM-L6-v2 (BM25 without the ``minilm`` extra),
    the offline reference policies ``gt-context``. Set, it applies to every model."""
    top_k: int = Field(default=5, ge=1)
    """Chunks retrieved per question (upstream ``--num_chunks`` 5)."""
    communities: int = Field(default=2, ge=1, le=50)
    """Generated communities (upstream released 2)."""


def _options(options: Any) -> PersonaBenchOptions:
    return suite_options(PersonaBenchOptions, options)


def _profile_keys(profile: SuiteProfile) -> tuple[int | None, list[int] | None, list[float]]:
    """(people, communities, noise levels) from the profile, checked.

    Raises:
        ValueError: a key of the wrong shape (names the key and the fix).
    """
    extra = profile.model_extra or {}
    people = extra.get("people")
    if people is not None and (isinstance(people, bool) or not isinstance(people, int) or people < 1):
        raise ValueError(
            f"profile key 'people' must be a whole number >= 1, got {people!r}. Fix: set "
            "modes.<mode>.suites.personabench.people in routing.yaml, or drop it to keep everyone"
        )
    comms = extra.get("communities")
    if comms is not None and (
        not isinstance(comms, list) or not all(isinstance(c, int) and c >= 0 for c in comms)
    ):
        raise ValueError(
            f"profile key 'communities' must be a list of community indices, got {comms!r}. Fix: "
            "e.g. communities: [0, 1]"
        )
    named = sorted(
        {float(c[len("noise_") :].rsplit(".", 1)[0]) for c in profile.categories or () if c in CATEGORIES}
    )
    levels = extra.get("noise_levels", named or list(NOISE_LEVELS))  # default: the categories' levels
    if not isinstance(levels, list) or not levels or any(float(x) not in NOISE_LEVELS for x in levels):
        raise ValueError(
            f"profile key 'noise_levels' must be a non-empty list of {list(NOISE_LEVELS)}, got "
            f"{levels!r}. Fix: e.g. noise_levels: [0.0, 0.7]"
        )
    return people, comms, [float(x) for x in levels]


def _task_key(level: float, qa: dict[str, Any]) -> tuple[str, str]:
    """``(id, category)`` of question ``qa`` at noise ``level``: ``n<level>-<q_id>``,
    ``noise_<level>.<type>_<difficulty>``."""
    return f"n{level}-{qa['q_id']}", f"noise_{level}.{category_of(str(qa['type']), str(qa['difficulty']))}"


def _cut(by_cat: Mapping[str, list[T]], profile: SuiteProfile,
         task_id: Callable[[T], str]) -> list[tuple[str, T]]:  # fmt: skip
    """``(category, item)`` of the profile's share of ``by_cat`` (tasks or their ids): each
    category in id order cut to ``per_category`` (the first ones: few people, so few indexes
    to build), then the first ``limit``, sorted by (category order, id). Shared by
    ``load_tasks`` and ``task_index`` so the two cannot differ."""
    out: list[tuple[str, T]] = []
    for cat in CATEGORIES:
        items = sorted(by_cat.get(cat, []), key=task_id)
        if profile.per_category:
            items = items[: profile.per_category]
        out.extend((cat, x) for x in items)
    if profile.limit is not None:
        out = out[: profile.limit]
    return sorted(out, key=lambda cx: (CATEGORIES.index(cx[0]), task_id(cx[1])))


def _mean3(xs: list[float]) -> float | None:
    return round(sum(xs) / len(xs), 3) if xs else None


class PersonaBenchSuite:
    """The PersonaBench suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "personabench"
    version = "1"
    categories = CATEGORIES
    item_seconds = {"*": 0.015}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)

    def doctor_checks(self) -> list[tuple[str, str]]:
        """``egi-bench doctor``'s line on the MiniLM retriever: its weights and runtime
        installed, or the BM25 fallback a model under test then gets, and how to install them."""
        from suites.personabench.env.weights import INSTALL_HINT, minilm_available

        if minilm_available():
            return [("ok", "all-MiniLM-L6-v2 weights and runtime installed (the default retriever)")]
        return [("info", "all-MiniLM-L6-v2 weights not installed: a model under test gets the BM25 "
                         f"retriever, flagged not comparable; to install them: {INSTALL_HINT}")]

    options_model = PersonaBenchOptions
    profile_keys = frozenset(PROFILE_KEYS)
    sub_metric_notes = {f"noise_{x}.{c}.f1": "word-set F1, 0-1" for x in NOISE_LEVELS for c in CATS}
    diagnostics = frozenset(
        [
            f"noise_{x}.{c}.{m}"
            for x in NOISE_LEVELS
            for c in CATS
            for m in ("precision", "recall", "retrieval_recall", "ndcg", "n")
        ]
        + [
            f"noise_{x}.Overall.{m}"
            for x in NOISE_LEVELS
            for m in ("precision", "recall", "f1", "retrieval_recall", "ndcg")
        ]
        + [f"noise_{x}.outdated_information.recall" for x in NOISE_LEVELS]
        + ["bm25_fallback_trials"]
    )
    sub_metrics = frozenset(f"noise_{x}.{c}.f1" for x in NOISE_LEVELS for c in CATS) | diagnostics

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """The scored questions of the profile's people, communities and noise levels.

        One task per (noise level, question); id ``n<x>-<q_id>`` (``n0.7-001002013``),
        category ``noise_<x>.<category>``. The first ``people`` people of each community
        (``eval_info_all`` order; upstream ``--num_people``), every scored question (Subjective
        left out, as upstream). ``categories`` / ``per_category`` / ``limit`` then cut, in id
        order (community, person, question): a cut keeps the first people, so a small run builds
        few retrieval indexes (a dense index embeds every session of a person at a level).

        Raises:
            ValueError: bad profile keys, an unknown category, or bad data (names the file, the
                field and the fix).
        """
        opts = _options(options)
        people, comms, levels = _profile_keys(profile)
        spec = world_spec(profile.seed, opts)
        if "data_dir" not in spec:
            spec["people"] = people or 10
        wanted = profile_categories(profile, CATEGORIES)
        available = community_ids(spec)
        chosen = comms if comms is not None else available
        absent = [c for c in chosen if c not in available]
        by_cat: dict[str, list[Task]] = defaultdict(list)
        if absent and "data_dir" not in spec:
            raise ValueError(
                f"communities {absent} are not in the world (it has {available}). Fix: set "
                "modes.<mode>.suites.personabench.communities to existing indices, or generate more "
                "with --egi-opt personabench.communities=N"
            )
        for c in absent:  # a release folder without this community: one skipped item says so
            cat = f"noise_{levels[0]}.{CATS[0]}"
            reason = f"community_{c} is not in the data folder {spec['data_dir']} (it holds {available})"
            by_cat[cat].append(Task(id=f"community_{c:03d}", category=cat, data={}, cannot_run=reason))
        chosen = [c for c in chosen if c in available]
        for c in chosen:
            comm = community(spec, c)
            for person in comm["eval_info_all"][: people or None]:
                name = person["Name"]
                for level in levels:
                    for qa in person["Eval_Info"]["qa"]:
                        if qa["type"] == "Subjective":
                            continue
                        task = self._task(spec, comm, c, name, level, qa)
                        if task.category in wanted:
                            by_cat[task.category].append(task)
        return [t for _, t in _cut(by_cat, profile, task_id=lambda t: t.id)]

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, category)`` of each task :meth:`load_tasks` returns, in order, from the
        generated people's questions alone
        (:func:`~suites.personabench.data.generator.community_questions`: no document, no
        retrieval data), keyed by the same :func:`_task_key` and cut by the same :func:`_cut`.
        None with ``personabench.data_dir`` or a profile ``load_tasks`` refuses."""
        opts = _options(options)
        if opts.data_dir is not None:
            return None
        try:
            people, comms, levels = _profile_keys(profile)
            wanted = profile_categories(profile, CATEGORIES)
        except ValueError:
            return None  # load_tasks refuses it, naming the problem
        chosen = comms if comms is not None else list(range(opts.communities))
        if any(c >= opts.communities for c in chosen):
            return None  # load_tasks refuses it, naming the problem
        by_cat: dict[str, list[str]] = defaultdict(list)
        for c in chosen:
            for qas in community_questions(profile.seed, c)[: people or None]:
                for level in levels:
                    for qa in qas:
                        if qa["type"] == "Subjective":
                            continue
                        tid, category = _task_key(level, qa)
                        if category in wanted:
                            by_cat[category].append(tid)
        return [(tid, cat) for cat, tid in _cut(by_cat, profile, task_id=lambda t: t)]

    def _task(
        self, spec: dict[str, Any], comm: dict[str, Any], c: int, name: str, level: float, qa: dict[str, Any]
    ) -> Task:
        tid, category = _task_key(level, qa)
        cat = category_of(str(qa["type"]), str(qa["difficulty"]))
        if cat not in CATS:
            raise ValueError(
                f"PersonaBench data {spec.get('data_dir', 'generated world')}: question {qa['q_id']}: "
                f"type/difficulty {qa['type']!r}/{qa['difficulty']!r} makes category {cat!r}, not one "
                f"of {list(CATS)}. Fix: use upstream's types (Basic information, Preference, Social, "
                "Subjective) and difficulties (easy, hard)"
            )
        if level in comm.get("missing", {}):
            return Task(
                id=tid,
                category=category,
                data={},
                cannot_run=(
                    f"noise level {level} has no files in the data folder ({comm['missing'][level]} absent)"
                ),
            )
        lv = comm["noise"][level]
        if name not in lv["private"]:
            return Task(
                id=tid,
                category=category,
                data={},
                cannot_run=(f"{name} has no private_data at noise {level} in the data folder"),
            )
        gold = next((g["segment_id"] for g in lv["qa_gt_context_all"] if g.get("q_id") == qa["q_id"]), None)
        if gold is None:
            where = spec.get("data_dir", "generated world")
            raise ValueError(
                f"PersonaBench data {where}: qa_gt_context_all_noise_{level}.json has no entry for "
                f"q_id {qa['q_id']} ({qa['question']!r}). Fix: add its segment_id map, or remove the "
                "question from eval_info_all.json"
            )
        data = {
            "q_id": qa["q_id"],
            "question": qa["question"],
            "answer": qa["answer"],
            "type": qa["type"],
            "difficulty": qa["difficulty"],
            "outdated_value": qa.get("outdated_value"),
            "noise": level,
            "community": c,
            "person": name,
            "gold_segments": gold,
            "probe": comm["probes"].get(qa["q_id"]),
            "world": spec,
        }
        return Task(id=tid, category=category, data=data)

    def prepare(self, tasks: list[Task], options: Any) -> None:
        """With ``personabench.retriever=all-MiniLM-L6-v2``, embed every (person, level) index
        the tasks need before the first item (shared across xdist workers; the second worker
        walks the list from the other end, so the two build different indexes). Otherwise the
        indexes are built when a trial first needs one (the retriever of an unset option
        depends on the model, which ``prepare`` does not know)."""
        import json
        import os

        from suites.personabench.env.weights import minilm_available

        if _options(options).retriever != "all-MiniLM-L6-v2" or not minilm_available():
            return
        from suites.personabench.env import _dense_index
        keys = sorted(
            {
                (
                    json.dumps(t.data["world"], sort_keys=True),
                    t.data["community"],
                    t.data["person"],
                    t.data["noise"],
                )
                for t in tasks
                if t.data
            }
        )
        worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
        if worker[2:].isdigit() and int(worker[2:]) % 2:
            keys.reverse()
        for key in keys:
            _dense_index(*key)

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: let go of the communities,
        the people's chunks, the dense indexes and the MiniLM encoder kept here (made or
        loaded again, the same, if an item comes back)."""
        from suites._common.release import clear_caches

        clear_caches("suites.personabench.data:_community", "suites.personabench.data:_person_chunks",
                     "suites.personabench.env:_dense_index",
                     "suites.personabench.env.minilm:load_minilm")  # fmt: skip

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> PersonaPolicy:
        """The reference reader for ``task`` (oracle at p = 0); see ``policy.py``."""
        return PersonaPolicy(task.data, noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """Score one trajectory (upstream ``eval.py``; see ``scorer.py``).

        Per-task values (0–1): ``precision``, ``recall``, ``f1``; ``outdated_recall`` (None
        when the question has no outdated value); ``retrieval_recall`` and ``ndcg`` (None for
        ``gt-context``, which upstream does not score); ``bm25_fallback`` (1 when BM25 stood in
        for MiniLM). Success: F1 = 1. No answer (the core's ``no_answer_reason``) scores 0.
        ``failure_kind``: ``no_answer`` / ``turn_limit``, ``gave_up`` ("I don't know."-style:
        :func:`pytest_egi.normalize.is_refusal`; its words are still scored lexically, as
        upstream), else ``wrong_answer``.
        """
        d = task.data
        info = (trajectory.get("info") or {}).get("personabench") or {}
        retriever = info.get("retriever")
        retrieved = info.get("retrieved_segment_ids") or []
        rec, ndcg = (
            (None, None)
            if retriever in (None, "gt-context")
            else retrieval_scores(retrieved, d["gold_segments"])
        )
        why = no_answer_reason(trajectory)
        gold = word_set(d["answer"])
        pred: set[str] = set() if why else word_set(trajectory.get("final_answer"))
        precision, recall, f1 = prf(gold, pred)
        outdated = None
        if d.get("outdated_value") is not None:
            outdated = prf(word_set(d["outdated_value"]), pred)[1]
        values = {
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "outdated_recall": outdated,
            "retrieval_recall": rec,
            "ndcg": ndcg,
            "bm25_fallback": 1.0 if info.get("bm25_fallback") else 0.0,
        }
        got = f"no answer: {why}" if why else trajectory.get("final_answer")
        return TaskScore(
            success=f1 == 1.0,
            failure_kind=None if f1 == 1.0 else ending_kind(trajectory) or "wrong_answer",
            values=values,
            expected=d["answer"],
            got=got,
            details={
                "gold_words": sorted(gold),
                "predicted_words": sorted(pred),
                "retriever": retriever,
                "retrieved_segment_ids": retrieved,
            },
        )

    def data_warnings(self, tasks: list[Task], options: Any) -> dict[str, str]:
        """The BM25 fallback, when a model under test would retrieve with BM25 because the
        ``minilm`` extra is missing (figures not comparable with upstream's MiniLM rows)."""
        from suites.personabench.env.weights import INSTALL_HINT, minilm_available

        opts = _options(options)
        if opts.retriever in (None, "all-MiniLM-L6-v2") and not minilm_available() and tasks:
            return {
                "retriever": (
                    "all-MiniLM-L6-v2 is not installed, so a model under test retrieves with BM25: "
                    "not comparable with upstream's MiniLM figures (the offline policies use "
                    f"gt-context). Install: {INSTALL_HINT}"
                )
            }
        return {}

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Native sub-metrics (0–1, means rounded to 3 decimals as upstream) per noise level:
        ``<category>.{f1,precision,recall,retrieval_recall,ndcg,n}``, ``Overall.*`` and
        ``outdated_information.recall``; plus ``bm25_fallback_trials`` (a count). A category
        with no record is left out; a retrieval mean with no scored retrieval is None."""
        per: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        fallback = 0
        for rec in records:
            cat = rec.get("category")
            if cat not in CATEGORIES:
                continue
            level, name = cat.rsplit(".", 1)
            values = rec.get("values") or {}
            fallback += int(values.get("bm25_fallback") or 0)
            for key in ("precision", "recall", "f1", "retrieval_recall", "ndcg"):
                if values.get(key) is not None:
                    per[(level, name)][key].append(float(values[key]))
                    per[(level, "Overall")][key].append(float(values[key]))
            if values.get("outdated_recall") is not None:
                per[(level, "outdated_information")]["recall"].append(float(values["outdated_recall"]))
            per[(level, name)]["n"].append(1.0)
        out: dict[str, float | None] = {}
        for (level, name), cols in per.items():
            if name == "outdated_information":
                out[f"{level}.outdated_information.recall"] = _mean3(cols["recall"])
                continue
            for key in ("precision", "recall", "f1", "retrieval_recall", "ndcg"):
                out[f"{level}.{name}.{key}"] = _mean3(cols[key])
            if name != "Overall":
                out[f"{level}.{name}.n"] = float(len(cols["n"]))
        out["bm25_fallback_trials"] = float(fallback)
        return dict(sorted(out.items()))

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`), for
        the bootstrap: per category its record count ``n``, and for each mean a sum and a
        count of the records that have the value (``<key>.sum``, ``<key>.count``; the
        outdated recall as ``outdated.*``); ``bm25_fallback``. A noise level's ``Overall``
        sums its categories' columns. Every sub-metric is a mean (or a count), so ``finish``
        gives all the keys :meth:`summarize` does."""
        width = len(_COLUMNS)
        at = {cat: i * width for i, cat in enumerate(CATEGORIES)}
        fallback = len(CATEGORIES) * width
        rows = []
        for rec in records:
            row = [0.0] * (fallback + 1)
            rows.append(row)
            start = at.get(rec.get("category"))  # type: ignore[arg-type]
            if start is None:
                continue
            values = rec.get("values") or {}
            row[fallback] = float(int(values.get("bm25_fallback") or 0))
            row[start] = 1.0
            for j, key in enumerate(_MEANS):
                if values.get(key) is not None:
                    row[start + 1 + 2 * j] = float(values[key])
                    row[start + 2 + 2 * j] = 1.0
        names = tuple(f"{cat}.{col}" for cat in CATEGORIES for col in _COLUMNS) + ("bm25_fallback",)
        return SummaryColumns.from_rows(names, rows, _finish_columns)


_MEANS = ("precision", "recall", "f1", "retrieval_recall", "ndcg", "outdated_recall")
"""The per-record values :meth:`PersonaBenchSuite.summarize` averages (``outdated_recall``
as ``outdated_information.recall``)."""
_COLUMNS = ("n", *(f"{k}.{part}" for k in _MEANS for part in ("sum", "count")))
"""One category's columns in :meth:`PersonaBenchSuite.summary_columns`."""


def _finish_columns(sums: dict[str, float]) -> dict[str, float | None]:
    """:meth:`PersonaBenchSuite.summarize` from the column sums of
    :meth:`PersonaBenchSuite.summary_columns` (means rounded to 3 decimals, as upstream)."""

    def mean(total: float, count: float) -> float | None:
        return round(total / count, 3) if count else None

    out: dict[str, float | None] = {}
    levels: dict[str, dict[str, float]] = {}
    for cat in CATEGORIES:
        n = sums[f"{cat}.n"]
        if not n:
            continue
        level, _name = cat.rsplit(".", 1)
        overall = levels.setdefault(level, defaultdict(float))
        for key in _MEANS:
            total, count = sums[f"{cat}.{key}.sum"], sums[f"{cat}.{key}.count"]
            overall[f"{key}.sum"] += total
            overall[f"{key}.count"] += count
            if key != "outdated_recall":
                out[f"{cat}.{key}"] = mean(total, count)
        out[f"{cat}.n"] = n
    for level, overall in levels.items():
        for key in _MEANS[:-1]:
            out[f"{level}.Overall.{key}"] = mean(overall[f"{key}.sum"], overall[f"{key}.count"])
        if overall["outdated_recall.count"]:
            out[f"{level}.outdated_information.recall"] = mean(
                overall["outdated_recall.sum"], overall["outdated_recall.count"])
    out["bm25_fallback_trials"] = sums["bm25_fallback"]
    return dict(sorted(out.items()))


SUITE = PersonaBenchSuite()
"""The object the core loads (``suites.personabench.SUITE``)."""
