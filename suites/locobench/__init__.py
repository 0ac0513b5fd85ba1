"""LoCoBench: long-context software engineering, scored by hidden tests in a sandbox
(Qiu et al., 2025, arXiv 2509.09614; reference Part B, design C2).

A scenario is a seeded, generated multi-file Python project (layers ``models`` /
``repositories`` / ``services`` / ``api`` / ``utils``, an import chain of set depth,
docstrings, visible regression tests and filler modules up to the difficulty's context size)
with a task of one of upstream's eight categories, a reference solution and hidden tests never
shown to the model. The model gets the files' contents (upstream sent only their names, B8.1)
and answers with whole files or a unified diff; the answer is applied to a copy of the project
and checked in the core's sandbox (``pytest_egi.sandbox``): compile + import smoke test, hidden
and regression tests, results read from JUnit XML.

Routed sub-metrics (0-1): ``functional_correctness`` (M1: hidden-test pass rate, 0 when the
project no longer imports or a regression test breaks), ``longcontext_utilization`` (M3:
needle-test pass rate), ``software_engineering`` and ``code_quality`` (M6). Diagnostics:
``lcbs`` (LoCoBench's 5·(.4 SE + .3 FC + .2 CQ + .1 LCU), 0-5, not comparable with the
paper's), ``decoy_confusion_rate``, ``n_scenarios``. Upstream-format scenario files load with
``--egi-opt locobench.scenarios=DIR``. Differences from upstream: README.md in this folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pytest_egi.models.offline import Noise
from pytest_egi.suite import (
    SuiteProfile,
    SummaryColumns,
    Task,
    TaskScore,
    load_each,
    profile_categories,
    suite_options,
)
from suites.locobench.data import (
    CATEGORIES,
    DIFFICULTIES,
    build_scenario,
    read_upstream,
    scenario_files,
    scenario_id,
    upstream_fields,
)
from suites.locobench.options import LocoOptions, limits

__all__ = ["CATEGORIES", "DIFFICULTIES", "SUITE", "LocoOptions", "LocoSuite"]


T = TypeVar("T")


def _options(options: Any) -> LocoOptions:
    return suite_options(LocoOptions, options)


def _profile_keys(profile: SuiteProfile) -> tuple[list[str], float | None]:
    extra = profile.model_extra or {}
    diff = extra.get("difficulty")
    if diff is None:
        wanted = list(DIFFICULTIES)
    else:
        wanted = [diff] if isinstance(diff, str) else list(diff) if isinstance(diff, list) else []
        unknown = [d for d in wanted if d not in DIFFICULTIES] or ([] if wanted else [diff])
        if unknown:
            raise ValueError(
                f"routing.yaml: modes.<mode>.suites.locobench.difficulty must be one of "
                f"{list(DIFFICULTIES)} or a list of them, got {diff!r}. Fix: e.g. difficulty: easy"
            )
    timeout = extra.get("timeout_s")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        raise ValueError(
            f"routing.yaml: modes.<mode>.suites.locobench.timeout_s must be a number of seconds > 0, "
            f"got {timeout!r}. Fix: e.g. timeout_s: 1800 (upstream's task_timeout)"
        )
    return wanted, (float(timeout) if timeout is not None else None)


def _deal(by_cat: dict[str, list[T]], n: int) -> list[T]:
    """At most ``n`` items, dealt round-robin over the categories in order."""
    out: list[T] = []
    cursor = dict.fromkeys(by_cat, 0)
    while len(out) < n and any(cursor[c] < len(ts) for c, ts in by_cat.items()):
        for c, ts in by_cat.items():
            if len(out) < n and cursor[c] < len(ts):
                out.append(ts[cursor[c]])
                cursor[c] += 1
    return out


def _categories(profile: SuiteProfile) -> list[str]:
    """The profile's categories (all when it names none), in its order.

    Raises:
        ValueError: an unknown category.
    """
    return profile_categories(profile, CATEGORIES,
                              message="unknown locobench categories {unknown}; known: {known}")


Pool = dict[str, list[tuple[str, str, dict[str, Any]]]]


def _generated_specs(profile: SuiteProfile, opts: LocoOptions, cats: list[str], wanted: list[str]) -> Pool:
    """Category -> ``(category, scenario id, spec)`` of the generated pool: per category the
    wanted difficulties (easy first) and ``per_cell`` indexes of each, ids told by
    :func:`~suites.locobench.data.scenario_id` (nothing built)."""
    return {
        c: [
            (c, scenario_id(spec), spec)
            for d in DIFFICULTIES
            if d in wanted
            for i in range(opts.per_cell)
            for spec in ({"seed": profile.seed, "category": c, "difficulty": d, "index": i},)
        ]
        for c in cats
    }


def _choose(by_cat: dict[str, list[tuple[str, str, T]]], profile: SuiteProfile) -> list[tuple[str, str, T]]:
    """The profile's share of ``by_cat`` (``(category, id, item)`` per category): the first
    ``per_category`` of each, then at most ``limit`` dealt round-robin over the categories,
    sorted by (category order, id). Shared by ``load_tasks`` and ``task_index`` so the two
    cannot differ."""
    if profile.per_category:
        by_cat = {c: xs[: profile.per_category] for c, xs in by_cat.items()}
    chosen = _deal(by_cat, profile.limit) if profile.limit else [x for xs in by_cat.values() for x in xs]
    return sorted(chosen, key=lambda x: (CATEGORIES.index(x[0]), x[1]))


class LocoSuite:
    """The LoCoBench suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "locobench"
    version = "1"
    categories = CATEGORIES
    item_seconds = {"*": 2.2}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    options_model = LocoOptions
    profile_keys = frozenset({"difficulty", "timeout_s"})
    diagnostics = frozenset({"lcbs", "decoy_confusion_rate", "n_scenarios"})
    sub_metrics = (
        frozenset(
            {"functional_correctness", "software_engineering", "code_quality", "longcontext_utilization"}
        )
        | diagnostics
    )
    sub_metric_notes = {
        "functional_correctness": "hidden-test pass rate (0-1); 0 when the project no longer imports or a "
        "regression test breaks",
        "longcontext_utilization": "pass rate of the needle tests (facts stated only in specific context "
        "files)",
        "code_quality": "ruff, radon and bandit on the changed files, mapped to 0-1 (README)",
        "software_engineering": "imports resolve, no new import cycle, layering, call sites, signatures "
        "(0-1)",
        "lcbs": "LoCoBench's 5*(.4 SE + .3 FC + .2 CQ + .1 LCU), 0-5: NOT comparable with the paper's "
        "numbers",
    }

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """The generated scenarios of the profile (or the upstream scenario files of
        ``locobench.scenarios``).

        Generated: per (category, difficulty) ``per_cell`` scenarios (``<index>`` 0..n-1),
        ids ``python_<domain>_<category>_<difficulty>_<NN>``; the profile's ``difficulty``
        keeps those difficulties; within a category tasks go easy first, then by index;
        ``per_category`` keeps that many per category, ``limit`` deals at most that many
        round-robin over the categories. ``timeout_s`` is each scenario's budget for the
        model's sessions (upstream's ``task_timeout``).

        Raises:
            ValueError: an unknown category or difficulty, a bad ``timeout_s``, or a bad
                scenario folder (names the file, the field and the fix).
        """
        opts = _options(options)
        wanted, timeout = _profile_keys(profile)
        cats = _categories(profile)
        if opts.scenarios is not None:
            tasks = self._upstream_tasks(Path(opts.scenarios), timeout)
            by_cat = {c: [(t.category, t.id, t) for t in tasks if t.category == c] for c in cats}
            return [t for _, _, t in _choose(by_cat, profile)]
        chosen = _choose(_generated_specs(profile, opts, cats, wanted), profile)
        return [self._generated_task(spec, timeout) for _, _, spec in chosen]

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, category)`` of each task :meth:`load_tasks` returns, in order, without building
        a scenario (:func:`~suites.locobench.data.scenario_id` of the same specs, the same
        :func:`_choose`); None with ``locobench.scenarios`` (upstream's files) or a profile
        ``load_tasks`` refuses."""
        opts = _options(options)
        if opts.scenarios is not None:
            return None
        try:
            wanted, _ = _profile_keys(profile)
            cats = _categories(profile)
        except ValueError:
            return None
        chosen = _choose(_generated_specs(profile, opts, cats, wanted), profile)
        return [(tid, cat) for cat, tid, _ in chosen]

    @staticmethod
    def _generated_task(spec: dict[str, Any], timeout: float | None) -> Task:
        scenario = build_scenario({"spec": spec})
        data = {"spec": spec, **upstream_fields(scenario)}
        if timeout is not None:
            data["timeout_s"] = timeout
        return Task(id=scenario.id, category=spec["category"], data=data)

    def _upstream_tasks(self, root: Path, timeout: float | None) -> list[Task]:
        def build(path: Path) -> Task:
            info = read_upstream(path, root)
            record = info["record"]
            data = {"upstream": info, **{k: record[k] for k in ("id", "task_category", "difficulty")}}
            if timeout is not None:
                data["timeout_s"] = timeout
            build_scenario(data)  # reads every context file now: a missing one errors this task alone
            return Task(id=record["id"], category=record["task_category"], data=data)

        return load_each(
            scenario_files(root),
            build,
            file=str,
            category=lambda p: _field_of(p, "task_category", "unknown"),
            task_id=lambda p, i: _field_of(p, "id", p.stem),
        )

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: let go of the scenarios
        (generated projects, read upstream projects) kept here; they are made again, the
        same, if an item comes back."""
        from suites._common.release import clear_caches

        clear_caches("suites.locobench.data:_build", "suites.locobench.data:_load_upstream")

    def reference_policy(self, task: Task, options: Any, noise: Noise):
        """The reference policy of ``task`` (oracle at p = 0); see ``policy.py``.

        Raises:
            CannotRun: an upstream scenario (no reference solution).
        """
        from suites.locobench.policy import LocoPolicy

        return LocoPolicy(build_scenario(task.data), noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """Score one trajectory: the replies applied in order, then the sandbox checks of the
        final tree, read from the trajectory when it keeps them for exactly that tree,
        scenario and limits, else run (``scorer.py``). Deterministic rules; ``judge`` is
        unused.

        Raises:
            SandboxError: the sandbox could not start (the item errors, never a wrong answer).
        """
        from suites.locobench.scorer import score_replies

        return score_replies(build_scenario(task.data), trajectory, limits(_options(options)))

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Means over the scored records.

        Returns:
            ``functional_correctness``, ``software_engineering``, ``code_quality``,
            ``longcontext_utilization`` (0-1; LCU over the records that have needle tests),
            and diagnostics ``lcbs`` (0-5, from the four means), ``decoy_confusion_rate``
            (0-1), ``n_scenarios``. None when no record.
        """
        cols = self.summary_columns(records)
        sums = {name: sum(row[i] for row in cols.values) for i, name in enumerate(cols.names)}
        return cols.finish(sums)

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns:
        """:meth:`summarize` from column sums (every sub-metric is a ratio of sums)."""
        names = ("n", "fc", "cq", "se", "lcu", "lcu_n", "decoy")
        rows = []
        for rec in records:
            if rec.get("category") not in CATEGORIES:
                rows.append([0.0] * len(names))
                continue
            v = rec.get("values") or {}
            lcu = v.get("lcu")
            rows.append(
                [
                    1.0,
                    float(v.get("fc") or 0),
                    float(v.get("cq") or 0),
                    float(v.get("se") or 0),
                    float(lcu or 0),
                    0.0 if lcu is None else 1.0,
                    float(v.get("decoy") or 0),
                ]
            )

        def finish(s: Mapping[str, float]) -> dict[str, float | None]:
            n = s["n"]
            if not n:
                return dict.fromkeys(self.sub_metrics - {"n_scenarios"}, None) | {"n_scenarios": 0.0}
            fc, cq, se = s["fc"] / n, s["cq"] / n, s["se"] / n
            lcu = s["lcu"] / s["lcu_n"] if s["lcu_n"] else None
            from suites.locobench.scorer import lcbs

            return {
                "functional_correctness": fc,
                "code_quality": cq,
                "software_engineering": se,
                "longcontext_utilization": lcu,
                "lcbs": lcbs(se, fc, cq, lcu),
                "decoy_confusion_rate": s["decoy"] / n,
                "n_scenarios": float(round(n)),
            }

        return SummaryColumns.from_rows(names, rows, finish)


def _field_of(path: Path, key: str, default: str) -> str:
    """A scenario file's ``key`` when it can be read as a string, else ``default`` (for the
    placeholder task of a file that could not be loaded)."""
    import json

    try:
        value = json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return default
    return value if isinstance(value, str) else default


SUITE = LocoSuite()
"""The object the core loads (``suites.locobench.SUITE``)."""
