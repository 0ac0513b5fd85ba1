"""HERB: deep search over heterogeneous enterprise data (Choubey et al., 2025, arXiv 2506.23139).

Questions about products whose answers are spread over Slack messages, documents, meeting
transcripts and chats, pull requests and URLs, answered by a tool-using agent (reference §2).
Categories are the answer types ``content``, ``person``, ``company``, ``url``, ``pr`` and
the ``unanswerable`` questions. Native sub-metrics (see ``summarize``): ``person_f1``,
``url_f1``, ``pr_f1``, ``company_f1`` (mean set F1, 0–1), ``content`` (mean 0–100),
``null_rate`` (share of unanswerable questions where the agent abstained, 0–1), plus the
diagnostic ``answerable_overall`` (upstream commit 0c126c0: mean of 100·F1 or content over
answerable questions, 0–100). The world is generated from the profile seed, or loaded from
an original-format corpus with ``--egi-opt herb.corpus=PATH``. See README.md in this folder.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.models.offline import Noise
from pytest_egi.outcomes import ending_kind
from pytest_egi.suite import (
    SuiteProfile,
    SummaryColumns,
    Task,
    TaskScore,
    load_each,
    profile_categories,
    suite_options,
)
from suites.herb.data import SUITE_VERSION, World, company_names, get_world, release_worlds, world_spec
from suites.herb.data.generator import MAX_PRODUCTS, question_counts
from suites.herb.env import get_env
from suites.herb.policy import HerbPolicy
from suites.herb.scorer import score_task

__all__ = ["CATEGORIES", "PROFILE_KEYS", "SUITE", "HerbOptions", "HerbSuite"]

T = TypeVar("T")

CATEGORIES = ("content", "person", "company", "url", "pr", "unanswerable")
"""Answer types of the answerable questions, then the unanswerable ones."""
ID_PREFIX = {"unanswerable": "unans", "unknown": "invalid"}
ENTITY_TYPES = ("person", "url", "pr", "company")


class HerbOptions(BaseModel):
    """``--egi-opt herb.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    corpus: Path | None = None
    """An original-format corpus (data root, products directory or one product file) to use
    instead of the generated world."""
    products: int = Field(default=30, ge=1, le=MAX_PRODUCTS)
    """Products in the generated world (upstream: 30; question totals scale with it)."""
    retriever: Literal["bm25", "hybrid"] = "bm25"
    """``bm25`` (bm25s) or ``hybrid`` = BM25 top-k ∪ dense top-k, as upstream's ensemble."""
    dense_encoder: str | None = None
    """Dense plug-in for ``hybrid``: ``"pkg.module:factory"``; None = built-in hashing encoder."""
    top_k: int = Field(default=20, ge=1)
    """Artifacts per retriever and query (upstream ``similarity_top_k=20``)."""
    max_steps: int = Field(default=10, ge=2)
    """Agent turns per question (upstream ReAct ``max_iterations`` = 10)."""
    index_links: bool = False
    """Also index URLs and PRs for ``retrieve_all`` (upstream reaches them only by link)."""
    faithful_tool_bugs: bool = False
    """Reproduce upstream's two look-up defects (role_to_id_search fails; id_to_role_search
    returns ids)."""


def _options(options: Any) -> HerbOptions:
    return suite_options(HerbOptions, options)


def _category(question: dict[str, Any]) -> str | None:
    """The question's category: its answer type, ``unanswerable``, or None (a broken
    answerable question whose ``type`` cannot be read)."""
    return question["type"] if question.get("answerable") else "unanswerable"


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


PROFILE_KEYS = ("answerable", "unanswerable")
"""Profile keys of routing.yaml's ``modes.<mode>.suites.herb`` read by ``load_tasks``: how many
answerable questions (dealt round-robin over the answer types) and how many unanswerable ones
the profile runs."""


def _profile_counts(profile: SuiteProfile) -> dict[str, int]:
    """The profile's :data:`PROFILE_KEYS` that are set, checked.

    Raises:
        ValueError: a count that is not a whole number >= 0 (names the key and the fix).
    """
    extra = profile.model_extra or {}
    out: dict[str, int] = {}
    for key in PROFILE_KEYS:
        if key not in extra:
            continue
        value = extra[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(
                f"profile key {key!r} must be a whole number >= 0 (the {key} questions to run), got "
                f"{value!r}. Fix: set modes.<mode>.suites.herb.{key} in routing.yaml to a count, or "
                "drop the key to keep them all"
            )
        out[key] = value
    return out


def _wanted(profile: SuiteProfile) -> list[str]:
    """The profile's categories (all when it names none).

    Raises:
        ValueError: an unknown category.
    """
    return profile_categories(profile, CATEGORIES)


def _task_id(category: str, number: int) -> str:
    """The id of the ``number``-th (1-based, world order) question of ``category``."""
    return f"herb-{ID_PREFIX.get(category, category)}-{number:03d}"


def _select(by_cat: Mapping[str, list[T]], profile: SuiteProfile, wanted: list[str], quota: dict[str, int],
            task_id: Callable[[T], str]) -> list[tuple[str, T]]:  # fmt: skip
    """``(category, item)`` of the profile's share of ``by_cat`` (tasks or their ids, each
    category in world order; the draw reads only how many there are): each wanted category
    shuffled with ``"herb-select|<seed>|<category>"``, cut to ``per_category``, the
    ``answerable`` / ``unanswerable`` quotas and ``limit`` dealt (:func:`_deal`), sorted by
    (category order, id). Shared by ``load_tasks`` and ``task_index`` so the two cannot differ."""
    order: dict[str, list[T]] = {}
    for cat in (c for c in CATEGORIES if c in wanted):
        items = list(by_cat.get(cat, []))
        random.Random(f"herb-select|{profile.seed}|{cat}").shuffle(items)
        order[cat] = items[: profile.per_category] if profile.per_category else items
    if "answerable" in quota:
        answerable = {c: ts for c, ts in order.items() if c != "unanswerable"}
        order.update(_deal(answerable, quota["answerable"]))
    if "unanswerable" in quota and "unanswerable" in order:
        order["unanswerable"] = order["unanswerable"][: quota["unanswerable"]]
    if profile.limit is not None:
        order = _deal(order, profile.limit)
    chosen = [(c, x) for c, xs in order.items() for x in xs]
    return sorted(chosen, key=lambda cx: (CATEGORIES.index(cx[0]), task_id(cx[1])))


def _deal(order: dict[str, list[T]], n: int) -> dict[str, list[T]]:
    """At most ``n`` tasks in all, dealt round-robin over the categories of ``order`` (in its
    order), each category's tasks taken from its front."""
    chosen: dict[str, list[T]] = {c: [] for c in order}
    cursor = dict.fromkeys(order, 0)
    taken = 0
    while taken < n and any(cursor[c] < len(order[c]) for c in order):
        for cat in order:
            if taken < n and cursor[cat] < len(order[cat]):
                chosen[cat].append(order[cat][cursor[cat]])
                cursor[cat] += 1
                taken += 1
    return chosen


INVALID = "unknown"
"""The category of a question whose ``type`` cannot be read (its task errors alone); its
ids are ``herb-invalid-NNN``."""


class QuestionError(ValueError):
    """One question that cannot run (its task errors alone); the message names the question's
    place, the field and the fix."""


def _world_name(spec: dict[str, Any]) -> str:
    """The corpus or the generated world, as named in a question's error."""
    if "corpus" in spec:
        return f"HERB corpus {spec['corpus']}"
    return (f"the generated HERB world (seed {spec.get('seed')}, {spec.get('products')} products; "
            "suites/herb/data/generator.py)")  # fmt: skip


def _check_question(spec: dict[str, Any], question: dict[str, Any]) -> None:
    """Refuse a question whose text is empty or whitespace: the agent would be asked nothing,
    and an unanswerable one would credit any abstention. (A corpus's questions are checked
    on load, :func:`suites.herb.data.load_corpus`; this catches a generator bug.)

    Raises:
        QuestionError: naming the product, the field and the fix (the caller names the world
            and the task).
    """
    text = question.get("question")
    if isinstance(text, str) and text.strip():
        return
    if "corpus" in spec:
        fix = ("write the question's text in the product file (or drop the question), and pass the "
               "corrected corpus with --egi-opt herb.corpus=PATH")  # fmt: skip
    else:
        fix = "a generator bug: report it with the seed, and run with another --egi-seed meanwhile"
    raise QuestionError(f"product {question.get('product')!r}: field 'question' must be a non-empty "
                        f"string, got {text!r}. Fix: {fix}.")  # fmt: skip


class HerbSuite:
    """The HERB suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "herb"
    version = SUITE_VERSION
    categories = CATEGORIES
    item_seconds = {"*": 0.17}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    sub_metric_notes = {
        "null_rate": "share of unanswerable questions the agent abstained on explicitly (no "
        "answer never counts); egi/null scores 1.0 here by design (its 'I don't know.' is the "
        "right answer), its floor shows on the entity F1s and content",
        "content": "0-100; deterministic key-fact recall blended with token F1 unless an LLM "
        "judge graded (see 'judge')",
    }
    """Notes shown beside these sub-metrics in every report."""
    null_floor = {"null_rate": 1.0}
    """``egi/null`` abstains on every question, which is right on the unanswerable ones."""
    options_model = HerbOptions
    profile_keys = frozenset(PROFILE_KEYS)
    diagnostics = frozenset({"answerable_overall", "url_pr_f1", "n_answerable", "n_unanswerable"})
    sub_metrics = frozenset({f"{c}_f1" for c in ENTITY_TYPES} | {"content", "null_rate"}) | diagnostics

    def world(self, seed: int, options: Any = None) -> World:
        """The (cached) world tasks are drawn from for ``seed`` and ``options``."""
        return get_world(world_spec(seed, _options(options)))

    def prepare(self, tasks: list[Task], options: Any) -> None:
        """Build each world's retrieval environment (index and look-up tables) before the
        first item, so no item's time budget pays for it (see ``Suite.prepare``)."""
        opts = _options(options)
        for spec_json in sorted({json.dumps(t.data["world"], sort_keys=True) for t in tasks}):
            get_env(json.loads(spec_json), opts)  # lets go of the world before indexing
            company_names(json.loads(spec_json))  # the one thing of the world scoring reads
        release_worlds()  # the run needs the environments, not the worlds they were built from

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: let go of the retrieval
        environments (index, texts, look-up tables), the company names and any world still
        cached; :meth:`prepare` builds them again, the same, if an item comes back."""
        from suites._common.release import clear_caches

        clear_caches("suites.herb.env:_cached_env", "suites.herb.data:_company_names")
        release_worlds()

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """All questions of the world, or the profile's share of them.

        Ids are numbered per category in world order (``herb-person-007``,
        ``herb-unans-012``) and do not depend on the profile. Each category is taken in a
        seeded shuffled order (``"herb-select|<seed>|<category>"``); ``per_category`` keeps that
        many per category; the profile keys ``answerable: N`` / ``unanswerable: N``
        (routing.yaml, :data:`PROFILE_KEYS`) keep N answerable questions, dealt round-robin
        over the answer types ``content, person, company, url, pr``, and N unanswerable ones
        (quick's 40 + 40: 8 per answer type and 40 unanswerable); ``limit`` then deals what is
        left round-robin over the categories, at most that many in all.

        One question never takes the others down (:func:`pytest_egi.suite.load_each`): a
        question that cannot run (a missing or mistyped field, a gold the scorer cannot
        compare, an empty text; :func:`suites.herb.data.load_corpus`) is a task whose item
        errors alone, naming the product file, the task, the question's place, the field and
        the fix. It keeps its number and category, so it is selected as a good question would
        be (fixing it does not change which others run); one of unknown ``type`` is
        ``herb-invalid-NNN`` (category ``unknown``) and always kept.

        Raises:
            ValueError: a problem of the whole input, a usage error: an unknown category, a
                profile count that is not a whole number >= 0, or a corpus that cannot be read
                (a missing file, bad JSON, a product file or metadata record of the wrong
                shape; the message names the file, the field and the fix).
        """
        opts = _options(options)
        spec = world_spec(profile.seed, opts)
        world = get_world(spec)
        wanted = _wanted(profile)
        quota = _profile_counts(profile)
        numbers: dict[str, int] = defaultdict(int)
        entries = []  # (question, task id, category)
        for q in world.questions:
            cat = _category(q) or INVALID
            numbers[cat] += 1
            entries.append((q, _task_id(cat, numbers[cat]), cat))
        sized = {} if "corpus" in spec else {c: n for c, n in question_counts(spec["products"]).items() if n}
        if sized and dict(numbers) != sized:  # never seen (seeds 0-24); task_index counts on it
            raise ValueError(
                f"herb: the generated world of seed {profile.seed} ({spec['products']} products) holds "
                f"{dict(numbers)} questions, not the {sized} it is sized for (a generator limit). "
                "Fix: run with another --egi-seed, and report the seed"
            )

        def build(entry: tuple[dict[str, Any], str, str]) -> Task:
            q, tid, cat = entry
            if q.get("load_error"):
                raise QuestionError(q["load_error"])
            _check_question(spec, q)
            return Task(id=tid, category=cat, data={**q, "world": spec})

        loaded = load_each(entries, build, category=lambda e: e[2], task_id=lambda e, _i: e[1],
                           file=lambda e: e[0].get("file") or _world_name(spec))  # fmt: skip
        by_cat: dict[str, list[Task]] = defaultdict(list)
        for task in loaded:
            by_cat[task.category].append(task)
        chosen = _select(by_cat, profile, wanted, quota, task_id=lambda t: t.id)
        return [t for _, t in chosen] + by_cat[INVALID]

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, category)`` of each task :meth:`load_tasks` returns, in order, without
        generating the world: ids ``herb-<type>-001`` up to the category's count in a
        generated world (:func:`~suites.herb.data.generator.question_counts`; ``load_tasks``
        refuses a world that differs), drawn by the same :func:`_select`. None with a corpus
        (``herb.corpus``) or a profile ``load_tasks`` refuses."""
        spec = world_spec(profile.seed, _options(options))
        if "corpus" in spec:
            return None
        try:
            wanted = _wanted(profile)
            quota = _profile_counts(profile)
            counts = question_counts(spec["products"])
        except ValueError:
            return None
        by_cat = {c: [_task_id(c, n) for n in range(1, counts.get(c, 0) + 1)] for c in CATEGORIES}
        return [(tid, cat) for cat, tid in _select(by_cat, profile, wanted, quota, task_id=lambda t: t)]

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> HerbPolicy:
        """The honest reference agent for ``task`` (oracle at p = 0); see ``policy.py``."""
        return HerbPolicy(task.data, _options(options).max_steps, noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any,
              judge: Any = None) -> TaskScore:  # fmt: skip
        """Score one trajectory (HERB ``evaluate.py`` rules, reference §2.5; see ``scorer.py``).

        Per-task values: ``f1`` (0–1) for person/url/pr/company, ``content`` (0–100),
        ``abstained`` (0/1) for unanswerable. Success: F1 = 1, content ≥ 80, or abstained.
        A trial with no answer (the core's ``no_answer_reason``: blank or cut-off reply,
        turns run out, context overflow) scores 0 and fails; it is never an abstention.
        ``failure_kind``: ``no_answer`` / ``turn_limit`` (no answer), ``gave_up`` (an
        answerable question declined: "I don't know.", ``answerable=false``), else
        ``wrong_answer`` (a wrong or partial answer; an unanswerable question answered).
        """
        companies = None
        if task.category == "company" and not (
            isinstance(trajectory.get("final_answer"), dict) and trajectory["final_answer"].get("entities")
        ):
            companies = company_names(task.data["world"])
        score = score_task(task.data, trajectory.get("final_answer"), companies=companies,
                           judge=judge, no_answer=no_answer_reason(trajectory))  # fmt: skip
        if score.success:
            return score
        # how the episode ended first; a declined unanswerable question passed, so a failed
        # one answered (invented support): wrong_answer, as is a wrong answerable one
        ending = ending_kind(trajectory)
        if ending == "gave_up" and not task.data.get("answerable", True):
            ending = None
        return score.model_copy(update={"failure_kind": ending or "wrong_answer"})

    constant_by_design = frozenset({"unanswerable"})
    """Categories the constant-answer check leaves out: every unanswerable question has the
    same right answer, an abstention, by design. The check would flag it on every run (noise);
    what keeps a constant abstention from scoring is the answerable categories, where it scores
    0 (``egi/null`` shows that floor)."""

    def constant_answer_check(self, tasks: list[Task], options: Any) -> dict[str, str]:
        """Answerable categories where one constant answer scores full marks on every task.

        Each task's gold is submitted as the reference agent would (entities as a structured
        ``submit``, the reference text for content) to every task of its category and scored
        with `score` (F1 = 1, or content 100); see
        :func:`pytest_egi.collect.checks.constant_answer_warnings`. ``unanswerable`` is exempt
        (`constant_by_design`).
        """
        from pytest_egi.collect.checks import constant_answer_warnings

        def answers(task: Task) -> list[Any]:
            gold = task.data.get("ground_truth")
            if task.category == "content":
                return [str(gold)]
            entities = list(gold or [])
            return [{"answer": ", ".join(entities), "entities": entities, "answerable": True}]

        def value(task: Task, answer: Any) -> float:
            values = self.score(task, {"final_answer": answer}, options).values
            return (values["content"] or 0.0) / 100 if task.category == "content" else values["f1"] or 0.0

        def render(answer: Any) -> str:
            text = answer["answer"] if isinstance(answer, dict) else answer
            return repr(text if len(text) <= 60 else text[:59] + "…")

        return constant_answer_warnings(tasks, answers, value, exempt=self.constant_by_design, render=render)

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Native sub-metrics from scored records.

        Returns:
            ``person_f1``, ``url_f1``, ``pr_f1``, ``company_f1`` (mean F1, 0–1),
            ``content`` (mean, 0–100), ``null_rate`` (0–1), and diagnostics:
            ``answerable_overall`` (0–100; mean of 100·F1 or content over answerable
            records, upstream commit 0c126c0), ``url_pr_f1`` (upstream's per-type mean with
            pr folded into url, 0–1), ``n_answerable``, ``n_unanswerable``. A sub-metric with
            no records is None.
        """
        values: dict[str, list[float]] = defaultdict(list)
        key_of = {"content": "content", "unanswerable": "abstained"}
        for rec in records:
            cat = rec.get("category")
            if cat not in CATEGORIES:
                continue
            value = (rec.get("values") or {}).get(key_of.get(cat, "f1"))
            if value is not None:
                values[cat].append(float(value))
        out: dict[str, float | None] = {f"{c}_f1": _mean(values[c]) for c in ENTITY_TYPES}
        out["content"] = _mean(values["content"])
        out["null_rate"] = _mean(values["unanswerable"])
        answerable = [100 * v for c in ENTITY_TYPES for v in values[c]] + values["content"]
        out["answerable_overall"] = _mean(answerable)
        out["url_pr_f1"] = _mean(values["url"] + values["pr"])
        out["n_answerable"] = len(answerable)
        out["n_unanswerable"] = len(values["unanswerable"])
        return out

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`): per
        record, under its category, its value (``f1``, ``content`` or ``abstained``) and a 1
        when that value is not None; ``finish`` gives every key :meth:`summarize` returns."""
        names = [f"{c}.{k}" for c in CATEGORIES for k in ("sum", "n")]
        key_of = {"content": "content", "unanswerable": "abstained"}
        rows = []
        for rec in records:
            row = [0.0] * len(names)
            cat = rec.get("category")
            if cat in CATEGORIES:
                value = (rec.get("values") or {}).get(key_of.get(cat, "f1"))
                if value is not None:
                    at = 2 * CATEGORIES.index(cat)
                    row[at], row[at + 1] = float(value), 1.0
            rows.append(row)

        def finish(sums: Mapping[str, float]) -> dict[str, float | None]:
            def mean(total: float, n: float) -> float | None:
                return total / n if n else None

            def of(c: str) -> tuple[float, float]:
                return sums[f"{c}.sum"], sums[f"{c}.n"]

            out: dict[str, float | None] = {f"{c}_f1": mean(*of(c)) for c in ENTITY_TYPES}
            out["content"] = mean(*of("content"))
            out["null_rate"] = mean(*of("unanswerable"))
            entity_sum = sum(of(c)[0] for c in ENTITY_TYPES)
            entity_n = sum(of(c)[1] for c in ENTITY_TYPES)
            n_answerable = entity_n + of("content")[1]
            out["answerable_overall"] = mean(100 * entity_sum + of("content")[0], n_answerable)
            out["url_pr_f1"] = mean(of("url")[0] + of("pr")[0], of("url")[1] + of("pr")[1])
            out["n_answerable"] = float(round(n_answerable))
            out["n_unanswerable"] = float(round(of("unanswerable")[1]))
            return out

        return SummaryColumns.from_rows(names, rows, finish)


SUITE = HerbSuite()
"""The object the core loads (``suites.herb.SUITE``)."""
