"""CRMArena: customer-service agent tasks over a Salesforce org (Huang et al., NAACL 2025).

Nine task types for three personas, each a category and a sub-metric (mean reward, 0-1):
NCR case routing, HTU handle time, TCU transfer count (service manager); NED named-entity
disambiguation, PVI policy violation, KQA knowledge QA (service agent); TII top issue,
MTA monthly trend, BRI best region (service analyst). The org is a local SQLite
Salesforce-like org generated from the profile seed (or a user's own export with
``--egi-opt crmarena.org=PATH``); tasks are in the original record schema (or a user's
task file with ``--egi-opt crmarena.tasks=PATH``, sampled per type with the profile seed).
The answer is read out of the reply by rules (``egi/rules``) or, with ``--egi-judge-model``, by
the judge model as upstream does with gpt-4o (``extract.py``). See README.md in this folder,
whose "Deliberate differences from upstream" table lists every difference.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_egi.agents.loops import no_answer_reason
from pytest_egi.models.offline import Noise
from pytest_egi.outcomes import ending_kind
from pytest_egi.suite import SuiteProfile, SummaryColumns, Task, TaskScore, load_each

__all__ = ["SUITE", "CrmArenaOptions", "CrmArenaSuite", "TASK_TYPES"]

TASK_TYPES: dict[str, str] = {
    "case_routing": "NCR",
    "handle_time": "HTU",
    "transfer_count": "TCU",
    "named_entity_disambiguation": "NED",
    "policy_violation_identification": "PVI",
    "knowledge_qa": "KQA",
    "top_issue_identification": "TII",
    "monthly_trend_analysis": "MTA",
    "best_region_identification": "BRI",
}
"""The record's ``task`` value -> category (paper abbreviation, also the sub-metric name)."""


class CrmArenaOptions(BaseModel):
    """``--egi-opt crmarena.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    strategy: Literal["react", "tool_call"] = "react"
    """Agent protocol: text ReAct tags or native function calling (reference §1.4)."""
    max_turns: int = Field(default=20, ge=1)
    """Agent turns per task (upstream default 20)."""
    aided: bool = True
    """Append ``metadata.optional`` to the prompt (upstream scripts default to aided)."""
    max_observation_chars: int | None = Field(default=None, ge=100)
    """Cap on one observation's length; None = no truncation, as upstream."""
    org: Path | None = None
    """A SQLite export of an org (tables/columns = Salesforce API names) to use instead."""
    tasks: Path | None = None
    """A task file in the original record format (JSON list or JSONL) to use instead."""


DEEP_PER_CATEGORY = 130
"""Records per category when the profile sets no ``per_category`` (upstream's deep size)."""
_DRAW_SIZE = {"quick": 6, "deep": DEEP_PER_CATEGORY}
"""The most records per category each generated org scale is sized for: every category of
it gives that many distinct tasks (checked over many seeds; ``load_tasks`` refuses a short one)."""


def _scale(profile: SuiteProfile) -> str:
    """The generated org's size: the profile's ``org_scale``, else ``deep`` above 6 tasks per
    category, else ``quick``."""
    return getattr(profile, "org_scale", None) or ("deep" if (profile.per_category or 0) > 6 else "quick")


def _full_draw(scale: str, per_category: int) -> bool:
    """Whether a generated org of ``scale`` is sized for ``per_category`` records of every
    category (:data:`_DRAW_SIZE`): then ``task_index`` tells the ids and ``load_tasks``
    refuses a category that comes up short."""
    return per_category <= _DRAW_SIZE.get(scale, 0)


def _task_id(category: str, idx: int) -> str:
    """A generated task's id: ``<category>-<idx:04d>`` (``NCR-0003``)."""
    return f"{category}-{idx:04d}"


@functools.cache
def _generated_org(seed: int, scale: str) -> Any:
    from suites.crmarena.env.org import Org

    return Org.generate(seed=seed, scale=scale)


@functools.cache
def _user_org(path: Path, categories: tuple[str, ...] | None = None) -> Any:
    from suites.crmarena.env.org import Org

    return Org.from_sqlite(path, categories)


class CrmArenaSuite:
    """The CRMArena suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "crmarena"
    version = "3"
    categories = tuple(TASK_TYPES.values())
    item_seconds = {"*": 0.04}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    options_model = CrmArenaOptions
    profile_keys = frozenset({"org_scale"})
    """``org_scale: quick|deep`` picks the org size (default: deep above 6 tasks per type)."""
    diagnostics = frozenset({"overall", "KQA_em"})
    sub_metrics = frozenset(TASK_TYPES.values()) | diagnostics

    def org(
        self,
        options: CrmArenaOptions,
        seed: int,
        scale: str = "quick",
        categories: tuple[str, ...] | None = None,
    ) -> Any:
        """The org the tasks run on (cached per process).

        Args:
            categories: For a user's export, the categories it must support (None: all nine);
                see :meth:`suites.crmarena.env.org.Org.from_sqlite`.
        """
        if options.org is not None:
            wanted = set(self.categories if categories is None else categories)
            return _user_org(options.org.resolve(), tuple(c for c in self.categories if c in wanted))
        return _generated_org(seed, scale)

    def load_tasks(self, profile: SuiteProfile, options: CrmArenaOptions) -> list[Task]:
        """Tasks of the profile: ``per_category`` of each selected task type (seeded).

        Generated tasks are drawn with the profile seed; a user's task file with more records of
        a type than ``per_category`` keeps a sample drawn with the profile seed
        (:func:`suites.crmarena.data.task_file.sample_per_type`), not the first ones in the file.

        A user's org export (``crmarena.org``) is loaded for the categories that will run and
        must pass its integrity check. A selected category the org cannot give a single task
        of is refused, never silently dropped.

        A user's task file (``crmarena.tasks``) is read record by record
        (:func:`pytest_egi.suite.load_each`): a record that cannot run (not an object, a
        missing or mistyped field, an unknown task type, a repeated ``idx``, a JSONL line that
        is not JSON, a gold id absent from the org) is a task whose item errors alone, with a
        message naming the file, the task, the record, the field and the fix; the other
        records run. Its id is ``<type>-<idx>`` when both are readable and the id is free, else
        ``<type or crmarena>-<record|line>-<n>``. A record of a known type is sampled like a
        good one (fixing it does not change which others run); one of no known type is always
        kept.

        Raises:
            ValueError: a problem of the whole input, a usage error (exit 4): an unknown
                category in the profile, a task file that is missing, not JSON or not a list
                of records (:func:`suites.crmarena.data.task_file.read_entries`), an org export that
                fails its integrity check or lacks what the selected categories read, or a
                category left with no task (names the file, the category, the table/field and
                the fix).
            TaskIdError: never for a task file (ids are built here from ``idx``).
        """
        from suites.crmarena.data.tasks import generate_tasks
        from suites.crmarena.env.schema import CATEGORY_NEEDS

        scale = _scale(profile)
        wanted = self._wanted(profile)
        if options.tasks is not None:
            return self._file_tasks(profile, options, scale, wanted)
        run = tuple(c for c in self.categories if c in wanted)
        org = self.org(options, profile.seed, scale, run)
        task_values = {t for t, c in TASK_TYPES.items() if c in run}
        per_category = profile.per_category or DEEP_PER_CATEGORY
        records = generate_tasks(
            org,
            seed=profile.seed,
            per_category=per_category,
            categories=None if options.org is None else task_values,
        )
        if options.org is None and _full_draw(scale, per_category):
            drawn = Counter(TASK_TYPES[r["task"]] for r in records)
            short = {c: drawn[c] for c in self.categories if drawn[c] != per_category}
            if short:  # never seen over seeds 0-59 (quick) and 0-7 (deep); task_index counts on it
                raise ValueError(
                    f"crmarena: the generated {scale} org of seed {profile.seed} gave fewer than "
                    f"{per_category} distinct tasks for {short} (a generator limit). Fix: run with "
                    "another --egi-seed or a smaller per_category, and report the seed"
                )
        tasks: list[Task] = []
        per_cat: dict[str, int] = {}
        for record in records:
            category = TASK_TYPES[record["task"]]
            if category not in wanted:
                continue
            if profile.per_category and per_cat.get(category, 0) >= profile.per_category:
                continue
            per_cat[category] = per_cat.get(category, 0) + 1
            tasks.append(Task(id=_task_id(category, record["idx"]), category=category,
                              data=self._task_data(record, options, profile.seed, scale, run)))  # fmt: skip
        for category in run:
            if not per_cat.get(category):
                counts = org.manifest()
                reads = "; ".join(
                    f"{obj} ({', '.join(fields)}; {counts.get(obj, 0)} rows)"
                    for obj, fields in CATEGORY_NEEDS[category].items()
                )
                raise ValueError(
                    f"{org.source}: CRMArena category {category} would have no task: the org holds no "
                    f"record a {category} task can be drawn from. It reads {reads}. Fix: add such "
                    f"records to the export, or run without {category} "
                    "(routing.yaml modes.<mode>.suites.crmarena.categories)."
                )
        if profile.limit:
            tasks = tasks[: profile.limit]
        return tasks

    def task_index(self, profile: SuiteProfile, options: CrmArenaOptions) -> list[tuple[str, str]] | None:
        """``(id, category)`` of each task :meth:`load_tasks` returns, in order, without
        generating the org: on a generated org every category draws ``per_category`` records
        (130 when unset), numbered in category order (``idx`` = place of the category times
        that count, plus the place within it), so ``<category>-<idx:04d>`` of the profile's
        categories, cut to ``limit``.

        None (``load_tasks`` then loads) with a user's org export or task file
        (``crmarena.org`` / ``crmarena.tasks``), a profile ``load_tasks`` refuses, or a draw
        outside what the generated orgs are sized for (:func:`_full_draw`: at most 6 per
        category on the quick org, 130 on the deep one), where a category may come up short.
        Within it a short category is a load error (``load_tasks``), never a silently smaller
        run, so the index and the loaded tasks agree whenever the load succeeds.
        """
        if options.org is not None or options.tasks is not None:
            return None
        try:
            wanted = self._wanted(profile)
        except ValueError:
            return None
        per_category = profile.per_category or DEEP_PER_CATEGORY
        if not _full_draw(_scale(profile), per_category):
            return None
        out = [(_task_id(c, k * per_category + j), c) for k, c in enumerate(self.categories)
               if c in wanted for j in range(per_category)]  # fmt: skip
        return out[: profile.limit]

    def _wanted(self, profile: SuiteProfile) -> set[str]:
        """The profile's categories (all nine when it names none).

        Raises:
            ValueError: an unknown category (a usage error).
        """
        wanted = set(profile.categories or self.categories)
        unknown = wanted - set(self.categories)
        if unknown:
            raise ValueError(
                f"routing.yaml categories: unknown {sorted(unknown)}; valid: {list(self.categories)}"
            )
        return wanted

    @staticmethod
    def _task_data(record: dict[str, Any], options: CrmArenaOptions, seed: int, scale: str,
                   run: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
        """``Task.data`` of a record: the record and the org it runs on."""
        data = dict(record)
        data["_org"] = {"seed": seed, "scale": scale}
        if options.org is not None:  # the export was checked for these categories only
            data["_org"]["categories"] = list(run)
        return data

    def _file_tasks(self, profile: SuiteProfile, options: CrmArenaOptions, scale: str,
                    wanted: set[str]) -> list[Task]:  # fmt: skip
        """The tasks of the user's task file, record by record (see :meth:`load_tasks`)."""
        from suites.crmarena.data.task_file import (
            RecordError,
            gold_problem,
            read_entries,
            sample_per_type,
            validate_record,
        )

        path = options.tasks
        assert path is not None
        seen: dict[int, str] = {}
        entries = []  # (where, raw item, category or None, the record or its problem)
        for where, item in read_entries(path):
            try:
                checked: dict[str, Any] | RecordError = validate_record(where, item, seen)
            except RecordError as exc:
                checked = exc
            raw_task = item.get("task") if isinstance(item, dict) else None
            category = TASK_TYPES.get(raw_task) if isinstance(raw_task, str) else None
            entries.append((where, item, category, checked))
        entries = [e for e in entries if e[2] is None or e[2] in wanted]
        entries = sample_per_type(entries, profile.per_category, profile.seed,
                                  key=lambda e: e[1]["task"] if e[2] is not None else None)  # fmt: skip
        present = {e[2] for e in entries if isinstance(e[3], dict)}
        run = tuple(c for c in self.categories if c in present)
        org = self.org(options, profile.seed, scale, run)
        used: set[str] = set()
        cache: dict[str, set[str]] = {}

        def task_id(entry: Any, _index: int) -> str:
            where, item, category, _ = entry
            idx = item.get("idx") if isinstance(item, dict) else None
            readable = category is not None and isinstance(idx, int) and not isinstance(idx, bool)
            tid = f"{category}-{idx:04d}" if readable else None
            if tid is None or tid in used:
                tid = f"{category or self.name}-{where.replace(' ', '-')}"
            used.add(tid)
            return tid

        def build(entry: Any) -> Task:
            _, _, category, checked = entry
            if isinstance(checked, Exception):
                raise checked
            problem = gold_problem(checked, org, cache)
            if problem is not None:
                raise RecordError(f"{entry[0]}: {problem}")
            return Task(id=task_id(entry, 0), category=category,
                        data=self._task_data(checked, options, profile.seed, scale, run))  # fmt: skip

        tasks = load_each(entries, build, file=str(path), task_id=task_id,
                          category=lambda e: e[2] or "unknown")  # fmt: skip
        if profile.limit:
            tasks = tasks[: profile.limit]
        return tasks

    def prepare(self, tasks: list[Task], options: CrmArenaOptions) -> None:
        """Open (or generate) every org the collected tasks run on before the first item, so
        no item's time budget pays for it (see ``Suite.prepare``)."""
        for task in tasks:
            self.org_for(task, options)

    def org_for(self, task: Task, options: CrmArenaOptions) -> Any:
        """The org a task was generated on."""
        spec = task.data.get("_org") or {"seed": 42, "scale": "quick"}
        categories = spec.get("categories")
        if categories is not None:
            categories = tuple(categories)
        return self.org(options, spec["seed"], spec["scale"], categories)

    def release(self, options: CrmArenaOptions) -> None:
        """Once this process has run its last item of the suite: let go of the orgs (their
        in-memory databases) and the parsed dates kept here; :meth:`prepare` opens or
        generates them again, the same, if an item comes back."""
        from suites._common.release import clear_caches

        _generated_org.cache_clear()
        _user_org.cache_clear()
        clear_caches("suites.crmarena.data.reference:_parse_moment")

    def reference_policy(self, task: Task, options: CrmArenaOptions, noise: Noise) -> Any:
        """Replays the task's reference composition through the active strategy."""
        from suites.crmarena.agent import CrmReferencePolicy

        return CrmReferencePolicy(task, noise)

    def score(
        self, task: Task, trajectory: dict[str, Any], options: CrmArenaOptions, judge: Any = None
    ) -> TaskScore:
        """Score the final answer by the original rules (see ``scorer``). A trial with no
        answer (the core's ``no_answer_reason``: blank or cut-off reply, turns run out,
        context overflow) scores 0 and fails.

        Args:
            judge: None (the answer is read by rules, ``egi/rules``) or the run's
                :class:`~pytest_egi.judges.LLMJudge` (``--egi-judge-model``), which extracts
                the answer as upstream's gpt-4o does (``extract.llm_extract``).

        Returns:
            ``values = {"reward": 0-1}`` (KQA also ``"em"``); ``details`` hold ``extracted``
            (the answer list read from the reply), ``extractor`` (``"exact"``, ``"egi/rules"``
            or the judge's name; exact_match tasks) and ``extraction_rule``. ``failure_kind``:
            ``no_answer`` / ``turn_limit`` (no answer), ``gave_up`` ("I don't know."-style, or
            an exact-match reply the reader finds no answer in), else ``wrong_answer``.

        Raises:
            JudgeError, ProviderError: the judge failed (the item is an error, not a score).
        """
        from suites.crmarena.agent import format_answer
        from suites.crmarena.scorer import score_answer

        no_answer = no_answer_reason(trajectory)
        result = score_answer(task.data, trajectory.get("final_answer"), no_answer=no_answer, judge=judge)
        values = {"reward": result["reward"]}
        if "em" in result:
            values["em"] = result["em"]
        gold = task.data["answer"]
        got = trajectory.get("final_answer")
        details = {"extracted": result["extracted"], "termination": trajectory.get("termination")}
        for key in ("extractor", "extraction_rule"):
            if key in result:
                details[key] = result[key]
        if "no_answer" in result:
            got = f"(no answer: {result['no_answer']})"
            details["no_answer"] = result["no_answer"]
        kind = None
        if not result["success"]:  # an empty extraction: the reply gave no answer in words
            kind = ending_kind(trajectory) or ("gave_up" if result.get("extracted") == [] else "wrong_answer")
        return TaskScore(
            success=result["success"],
            values=values,
            expected=gold[0] if task.data["reward_metric"] == "fuzzy_match" else format_answer(gold),
            got=got,
            details=details,
            failure_kind=kind,
        )

    def constant_answer_check(self, tasks: list[Task], options: CrmArenaOptions) -> dict[str, str]:
        """Categories where one constant answer scores reward 1 on every task (see
        :func:`pytest_egi.collect.checks.constant_answer_warnings`): each task's gold, as the prompt asks
        for it (comma-separated ids, ``None``; the reference text for KQA), tried on every task
        of its category with `score`'s rule (``scorer.score_answer``)."""
        from pytest_egi.collect.checks import constant_answer_warnings
        from suites.crmarena.agent import format_answer
        from suites.crmarena.scorer import score_answer

        def answers(task: Task) -> list[str]:
            gold = task.data["answer"]
            return [str(gold[0]) if task.data["reward_metric"] == "fuzzy_match" else format_answer(gold)]

        return constant_answer_warnings(tasks, answers, lambda task, a: score_answer(task.data, a)["reward"])

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Per task type, the mean reward (0-1): the nine routed sub-metrics; plus
        ``overall`` (mean over all tasks) and ``KQA_em`` as diagnostics."""
        out: dict[str, float | None] = {}
        for category in self.categories:
            rewards = [r["values"]["reward"] for r in records if r["category"] == category]
            out[category] = sum(rewards) / len(rewards) if rewards else None
        all_rewards = [r["values"]["reward"] for r in records]
        out["overall"] = sum(all_rewards) / len(all_rewards) if all_rewards else None
        ems = [r["values"]["em"] for r in records if r["category"] == "KQA" and "em" in r["values"]]
        out["KQA_em"] = sum(ems) / len(ems) if ems else None
        return out

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`):
        per record its reward and a 1 under its task type, all tasks, and KQA's ``em``;
        ``finish`` gives every key :meth:`summarize` returns."""
        cats = self.categories
        names = [f"{c}.{k}" for c in cats for k in ("reward", "n")]
        names += ["all.reward", "all.n", "KQA_em.sum", "KQA_em.n"]
        at = {c: 2 * i for i, c in enumerate(cats)}
        rows = []
        for r in records:
            row = [0.0] * len(names)
            reward = float(r["values"]["reward"])
            if r["category"] in at:
                row[at[r["category"]]], row[at[r["category"]] + 1] = reward, 1.0
            row[-4], row[-3] = reward, 1.0
            if r["category"] == "KQA" and "em" in r["values"]:
                row[-2], row[-1] = float(r["values"]["em"]), 1.0
            rows.append(row)

        def finish(sums: Mapping[str, float]) -> dict[str, float | None]:
            def ratio(key: str) -> float | None:
                return sums[f"{key}.reward"] / sums[f"{key}.n"] if sums[f"{key}.n"] else None

            out = {c: ratio(c) for c in cats}
            out["overall"] = ratio("all")
            out["KQA_em"] = sums["KQA_em.sum"] / sums["KQA_em.n"] if sums["KQA_em.n"] else None
            return out

        return SummaryColumns.from_rows(names, rows, finish)


SUITE = CrmArenaSuite()
