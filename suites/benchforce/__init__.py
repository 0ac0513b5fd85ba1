"""Benchforce: tool-using customer-support conversations over a real WebSocket environment.

Each entry is a caller with a goal in one environment (``hospital``, ``hr_software``,
``order_management``). The agent under test talks with a simulated caller
(:mod:`suites.benchforce.simulator`) and acts through the environment's tools, which a
WebSocket server (:mod:`suites.benchforce.env.server`, a real subprocess, one per worker) executes
on the session's own state. An entry passes iff the final state equals the dry run of its gold
actions, no forbidden action ran, and every expected output was said
(:mod:`suites.benchforce.scorer`). Categories are the environments. Native sub-metrics per
environment: ``<env>.accuracy_all`` (M1), ``<env>.finished_rate`` (M2: sessions the caller
ended, goal met or not, upstream's ``terminate``; a turn limit or timeout is unfinished),
``<env>.accuracy_finished`` (M5, ``gap`` against ``accuracy_all``), routed for the
environments the EGI-Bench report routes (:data:`ROUTED_ENVIRONMENTS`: ``hospital``,
``hr_software``; ``order_management``'s are reported only), and reported diagnostics
(upstream's stateless accuracy, each criterion's rate, endings and the caller's reasons,
agent tokens / replies / tool calls). Differences from upstream: see README.md here.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from pytest_egi.models.offline import Noise
from pytest_egi.suite import SuiteProfile, SummaryColumns, Task, TaskScore, profile_categories, suite_options
from suites.benchforce.env import ENTRY_COUNTS, ENVIRONMENTS, entry_id, environment
from suites.benchforce.scorer import (
    DIAGNOSTIC_KEYS,
    ENV_COLUMNS,
    ROUTED_KEYS,
    SUMMARY_KEYS,
    env_rows,
    finish_env,
    score_trial,
    summarize_env,
)

__all__ = ["MIN_MAX_TURNS", "ROUTED_ENVIRONMENTS", "SUITE", "BenchforceOptions", "BenchforceSuite"]

ROUTED_ENVIRONMENTS = ("hospital", "hr_software")
"""The environments whose ``accuracy_all`` / ``finished_rate`` / ``accuracy_finished`` are
routed (``routing.yaml``): the ones the EGI-Bench report routes. ``order_management`` (one
upstream entry: its three routes would move in steps of 1) is run by the deep profile and
reported, not routed."""

MIN_MAX_TURNS = 2
"""The fewest agent replies a session may allow: the caller answers every reply but the last,
so with one reply the caller never speaks after its opening and no session can finish."""


def max_turns_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a session's ``max_turns`` (``"is 1; it must be ..."``), or None
    when it can."""
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_MAX_TURNS:
        return (
            f"is {value!r}; it must be a whole number of at least {MIN_MAX_TURNS}: the "
            "caller answers every agent reply but the last, so it needs at least one reply after "
            "its opening to answer a question or end the call"
        )
    return None


class BenchforceOptions(BaseModel):
    """``--egi-opt benchforce.<key>=<value>``."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int | None = None
    """Agent replies allowed per session (at least :data:`MIN_MAX_TURNS`, 2: the caller
    answers every reply but the last, so it needs at least one reply after its opening);
    None uses the profile's ``max_turns`` (15)."""
    timeout_s: float = Field(default=600.0, gt=0)
    """Wall-clock budget of one session (upstream's ``termination_timer``); running out ends
    the session as ``timeout`` (unfinished, scored)."""
    server_timeout_s: float = Field(default=30.0, gt=0)
    """The longest wait for one server reply; longer is an environment fault (the item errors)."""
    data_dir: Path | None = None
    """A checkout of upstream's repository (the folder holding ``src/environments/``): the
    environments that can read upstream's files run upstream's entries on upstream's data."""

    @field_validator("max_turns")
    @classmethod
    def _at_least_two(cls, value: int | None) -> int | None:
        problem = None if value is None else max_turns_problem(value)
        if problem is not None:
            raise PydanticCustomError("max_turns_too_small", problem)
        return value


def _options(options: Any) -> BenchforceOptions:
    return suite_options(BenchforceOptions, options)


def _wanted(profile: SuiteProfile) -> list[str]:
    """The profile's environments, in :data:`ENVIRONMENTS` order (all when it names none).

    Raises:
        ValueError: an unknown environment.
    """
    return profile_categories(profile, ENVIRONMENTS, ordered=True,
                              message="unknown environments {unknown}; known: {known}")


def _max_turns(profile: SuiteProfile, opts: BenchforceOptions) -> Any:
    """The run's ``max_turns`` (the option, else the profile's, else 15).

    Raises:
        ValueError: below :data:`MIN_MAX_TURNS` or not a whole number (says why).
    """
    max_turns = opts.max_turns or (profile.model_extra or {}).get("max_turns", 15)
    problem = max_turns_problem(max_turns)
    if problem is not None:
        raise ValueError(f"the profile's max_turns {problem}")
    return max_turns


def _per_category(count: int, profile: SuiteProfile) -> int:
    """How many of an environment's ``count`` entries the profile keeps (the first ones)."""
    return min(count, profile.per_category) if profile.per_category else count


class BenchforceSuite:
    """The Benchforce suite object (see :class:`pytest_egi.suite.Suite`)."""

    name = "benchforce"
    version = "3"
    categories = ENVIRONMENTS
    item_seconds = {"*": 0.13}  # egi/oracle, quick, one core (a placement hint: pytest_egi/scheduling.py)
    options_model = BenchforceOptions
    profile_keys = frozenset({"max_turns"})
    sub_metrics = frozenset(f"{e}.{k}" for e in ENVIRONMENTS for k in SUMMARY_KEYS)
    diagnostics = frozenset(
        {f"{e}.{k}" for e in ENVIRONMENTS for k in DIAGNOSTIC_KEYS}
        | {f"{e}.{k}" for e in ENVIRONMENTS if e not in ROUTED_ENVIRONMENTS for k in ROUTED_KEYS}
    )
    null_floor: dict[str, float | None] = {
        **{f"{e}.finished_rate": 1.0 for e in ROUTED_ENVIRONMENTS},
        **{f"{e}.accuracy_finished": 0.0 for e in ROUTED_ENVIRONMENTS},
    }
    """``egi/null`` under upstream's definition of finished: the caller gives up after 3
    failed turns and hangs up (``exit_conversation``), which upstream counts as finished, so
    every session finishes (``finished_rate`` 1.0, M2 reads 100) and none passes
    (``accuracy_finished`` 0.0 = ``accuracy_all``: the M5 gap route reads 100). Faithful to
    upstream and EGI-Bench's formulas; M1 carries the floor (README, "Differences")."""
    sub_metric_notes = {
        **{
            f"{e}.accuracy_all": "passed entries / entries (0-1), trials grouped per entry"
            for e in ENVIRONMENTS
        },
        **{
            f"{e}.finished_rate": "share of sessions the caller ended (0-1), goal met or not (upstream's "
            "terminate); a turn limit or timeout is unfinished; a caller that gives up finishes "
            "(egi/null: 1.0)"
            for e in ENVIRONMENTS
        },
        **{
            f"{e}.accuracy_finished": "accuracy_all over the finished sessions (0-1), entries with a "
            "finished session; undefined when none finished, so its gap route is left out rather "
            "than read as 100"
            for e in ENVIRONMENTS
        },
    }
    assert set(ROUTED_KEYS) | set(DIAGNOSTIC_KEYS) == set(SUMMARY_KEYS)

    def load_tasks(self, profile: SuiteProfile, options: Any) -> list[Task]:
        """The generated entries of the profile's environments (``<env>.entry_<n>``, template
        order); ``per_category`` / ``limit`` keep the first ones.

        Raises:
            ValueError: the profile's ``max_turns`` is below :data:`MIN_MAX_TURNS` or not a
                whole number (the message says why), an unknown or not yet built environment
                named in the profile's categories (no categories: every built one, or with
                ``data_dir`` every built one that reads upstream's files), or generated gold
                actions that cannot be dry-run (message names the entry, the action and why). An upstream
                entry (``data_dir``) that cannot run is kept with ``Task.cannot_run`` (the
                reason: the core skips its item); one that could not be read or prepared
                (malformed, or its preparation raised) is kept with ``Task.load_error`` (naming
                the entries file and the entry: its item errors alone): one entry never stops
                the collection of the others (issue 22, the core's mechanism).
            FileNotFoundError: ``data_dir`` has no folder for a wanted environment.
        """
        from suites.benchforce.scorer import expected_state

        opts = _options(options)
        wanted = _wanted(profile)
        max_turns = _max_turns(profile, opts)
        out: list[Task] = []
        for name in wanted:
            env = environment(name)
            entries, unrunnable, errors = self._entries(env, profile, opts)
            for entry in entries:
                data = {**entry, "env": name, "seed": profile.seed, "max_turns": max_turns}
                if opts.data_dir is not None:
                    data["data_dir"] = str(opts.data_dir)
                error, reason = errors.get(entry["id"]), unrunnable.get(entry["id"])
                if error is None and reason is None:
                    try:
                        expected_state(env, profile.seed, entry["actions"], data.get("data_dir"))
                    except ValueError as exc:
                        if opts.data_dir is None:  # our own generated gold must always dry-run
                            raise ValueError(
                                f"{name} entry {entry['id']!r}: its gold cannot be right: {exc}"
                            ) from None
                        reason = f"its gold actions cannot run on these files: {exc}"
                    except Exception as exc:
                        if opts.data_dir is None:
                            raise
                        # an upstream entry whose dry run raised: this entry errors, not the collection
                        error = self._prepare_error(env, opts, entry, exc)
                data.pop("load_error", None)
                out.append(Task(id=f"{name}.{entry['id']}", category=name, data=data, load_error=error,
                                cannot_run=None if error is not None else reason))  # fmt: skip
        if profile.limit is not None:
            out = out[: profile.limit]
        return out

    def task_index(self, profile: SuiteProfile, options: Any) -> list[tuple[str, str]] | None:
        """``(id, environment)`` of each task :meth:`load_tasks` returns, in order, without
        building a world or an entry (:data:`~suites.benchforce.env.ENTRY_COUNTS` ids
        :func:`~suites.benchforce.env.entry_id`, cut as ``_entries`` cuts); None with
        ``data_dir`` (upstream's files) or a profile ``load_tasks`` refuses."""
        opts = _options(options)
        if opts.data_dir is not None:
            return None
        try:
            wanted = _wanted(profile)
            _max_turns(profile, opts)
        except ValueError:
            return None
        out = [(f"{name}.{entry_id(i)}", name) for name in wanted
               for i in range(_per_category(ENTRY_COUNTS[name], profile))]  # fmt: skip
        return out[: profile.limit]

    @staticmethod
    def _entries(
        env: Any, profile: SuiteProfile, opts: BenchforceOptions
    ) -> tuple[list[dict[str, Any]], dict[str, str], dict[str, str]]:
        """The environment's entries (generated, or upstream's with ``data_dir``), cut to
        ``per_category``, the ones that cannot run (id -> why) and the ones that could not be
        read or prepared (id -> the error, naming the file and the entry)."""
        if opts.data_dir is not None:
            from suites.benchforce.data import load_upstream

            upstream = load_upstream(env, opts.data_dir)
            entries, unrunnable, errors = upstream.entries, upstream.unrunnable, upstream.errors
        else:
            entries = env.make_entries(env.build_world(profile.seed), profile.seed)
            unrunnable, errors = {}, {}
            if [e["id"] for e in entries] != [entry_id(i) for i in range(ENTRY_COUNTS[env.name])]:
                raise ValueError(f"{env.name}: the generated entries are not ENTRY_COUNTS' "
                                 f"{ENTRY_COUNTS[env.name]} entry ids (a bug in the generator)")  # fmt: skip
        entries = entries[: _per_category(len(entries), profile)]
        return entries, unrunnable, errors

    @staticmethod
    def _prepare_error(env: Any, opts: BenchforceOptions, entry: dict[str, Any], exc: Exception) -> str:
        from suites.benchforce.data import env_dir
        from suites.benchforce.env.upstream_files import entries_file, prepare_error

        folder = env_dir(opts.data_dir, env.name)  # type: ignore[arg-type]
        return prepare_error(entries_file(folder) or folder, entry, exc)

    def prepare(self, tasks: list[Task], options: Any) -> None:
        """Start this process's environment server before the first item (stopped at
        session end by the test module's session fixture, or at exit)."""
        from suites.benchforce.env.client import shared_server

        if tasks:
            shared_server().start()

    def release(self, options: Any) -> None:
        """Once this process has run its last item of the suite: stop its environment server
        (started again on next use) and let go of the worlds and upstream files its scorer
        kept (made again, the same, if an item comes back)."""
        from suites._common.release import clear_caches
        from suites.benchforce.env.client import stop_servers

        stop_servers()
        clear_caches("suites.benchforce.scorer:_world", "suites.benchforce.data:_load")

    def reference_policy(self, task: Task, options: Any, noise: Noise) -> Any:
        """The reference agent for ``task`` (oracle at p = 0); see ``policy.py``. (An entry
        that cannot run or could not be loaded, ``Task.cannot_run`` / ``Task.load_error``, is
        skipped or errors in the core before this is called.)"""
        from suites.benchforce.policy import BenchforcePolicy

        return BenchforcePolicy(task.data, environment(task.category), noise)

    def score(self, task: Task, trajectory: dict[str, Any], options: Any, judge: Any = None) -> TaskScore:
        """:func:`~suites.benchforce.scorer.score_trial` (pure on the stored trajectory)."""
        return TaskScore(**score_trial(environment(task.category), task.data, trajectory))

    def summarize(self, records: list[dict[str, Any]]) -> dict[str, float | None]:
        """Per environment that ran: :func:`~suites.benchforce.scorer.summarize_env`."""
        by_env: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for rec in records:
            if rec.get("category") in ENVIRONMENTS:
                by_env[rec["category"]].append(rec)
        out: dict[str, float | None] = {}
        for name in ENVIRONMENTS:
            if by_env[name]:
                out.update(summarize_env(name, by_env[name]))
        return out

    def summary_columns(self, records: list[dict[str, Any]]) -> SummaryColumns:
        """:meth:`summarize` from column sums (:class:`~pytest_egi.suite.SummaryColumns`):
        per environment, :data:`~suites.benchforce.scorer.ENV_COLUMNS`; ``finish`` gives every
        key :meth:`summarize` returns but the medians (``tokens_median``, ``replies_median``,
        ``tool_calls_median``: diagnostics), for the environments with a trial."""
        return SummaryColumns.per_category(  # type: ignore[return-value]  # env_rows never gives None
            records, ENVIRONMENTS, ENV_COLUMNS, lambda _env, recs: env_rows(recs), finish_env
        )


SUITE = BenchforceSuite()
