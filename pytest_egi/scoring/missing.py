"""One cause per missing sub-metric, and the ceiling a capped formula puts on a bucket.

A routed sub-metric that did not contribute to its bucket (:class:`~pytest_egi.scoring.egi.Missing`)
gets the one cause that applies to this run, decided from the profile, the selection, the
records and the stop state, in this order (:func:`missing_cause`):

- the suite ran no item: ``stopped before it`` (the run stopped early), ``deselected`` (a
  ``-k`` / ``-m`` / ``--deselect`` / node-id selection), else ``not collected`` (no test of
  the suite under the paths given);
- the suite ran, the sub-metric's category did not: ``outside the profile`` (the mode's
  profile names other categories of the suite), ``no task of that kind in the task data``
  (the suite loaded none: a user's task file), ``stopped before it``, ``deselected``;
- its category's items ran: ``all N errored`` (or skipped);
- the suite returns the sub-metric as undefined on the tasks that ran: the suite's note.

The ceiling of a route (:func:`route_ceiling`) is where a suite declares one
(``Suite.oracle_ceiling``: UserBench's ``micro_avg``, whose formula averages 0.2-point search
and question turns with the 1.0 answer); a bucket's ceiling is the weighted mean of its
contributors' ceilings (100 for a route with none), shown when below 100.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_egi.scoring.egi import EgiResult, Missing, transform

__all__ = ["apply_ceilings", "missing_cause", "not_collected_reason", "refine_missing", "route_category"]


def not_collected_reason(suite: str) -> str:
    """The cause of a missing sub-metric whose suite had no test under the paths given (the
    terminal counts these suites on one line)."""
    return f"not collected: no {suite} test under the paths given"


def route_category(sub_metric: str, categories: Iterable[str]) -> str | None:
    """The suite category a sub-metric belongs to: the longest category ``c`` with
    ``sub_metric == c`` or ``sub_metric`` starting with ``c + "."`` (``hospital.accuracy_all``:
    ``hospital``); None when no category names it (a suite-wide sub-metric)."""
    import re

    best = None
    for c in categories:
        if (sub_metric == c or sub_metric.startswith(f"{c}.")) and (best is None or len(c) > len(best)):
            best = c
    if best is None:  # a name that carries its category as a word (``acc_beta``)
        words = set(re.split(r"[._]", sub_metric))
        named = [c for c in categories if c in words]
        best = named[0] if len(named) == 1 else None
    return best


def _selection_text(selection: Mapping[str, Any]) -> str:
    parts = []
    for key, value in selection.items():
        if key == "--egi-shard":
            continue
        parts.append(key if value is True else f"{key} {value!r}" if isinstance(value, str) else key)
    return ", ".join(parts)


def missing_cause(
    miss: Missing,
    *,
    suite: Any,
    records_by_category: Mapping[str, Counter[str]] | None,
    profile_categories: list[str] | None,
    mode: str,
    selection: Mapping[str, Any],
    stopped: str | None,
    not_loaded: set[str],
    deselected_suites: set[str] | None = None,
    collected_suites: set[str] | None = None,
) -> str:
    """The one cause of ``miss`` on this run (see the module's docstring for the order).

    Args:
        miss: the missing route (its ``reason`` is kept when it is a suite's own note, or when
            the suite could not be imported).
        suite: the suite object, or None when it is not importable.
        records_by_category: the suite's records, category -> status -> count; None when
            the suite ran no item in the session.
        profile_categories: the categories the mode's profile names for the suite (None: all).
        mode: the profile's name (``quick``).
        selection: the session's selection (egi.json ``config.selection``).
        stopped: why the run stopped before its end, or None.
        not_loaded: the categories of the suite for which the suite loaded no task.
        deselected_suites: the suites with a deselected item, when known (a serial session);
            None: unknown (then a selection is taken as the cause).
        collected_suites: the suites with a selected item in the session, when known.

    Returns:
        One sentence fragment, e.g. ``outside the profile (quick runs benchforce's hospital
        only)``.
    """
    name, sub_metric = miss.route.split("/", 1)
    chosen = _selection_text(selection)
    if records_by_category is None:
        if suite is None and "cannot import" in miss.reason:
            return miss.reason
        if stopped and (collected_suites is None or name in collected_suites):
            return f"stopped before it: the run stopped ({stopped}) before any {name} item ran"
        if chosen and (deselected_suites is None or name in deselected_suites):
            return f"deselected: no {name} item left after {chosen}"
        return not_collected_reason(name)
    if "reports" in miss.reason and "as undefined" in miss.reason:
        return miss.reason  # the suite's own note: undefined on the tasks that ran
    category = route_category(sub_metric, getattr(suite, "categories", ()) or ())
    if category is None:
        statuses: Counter[str] = sum(records_by_category.values(), Counter())
        return _all_failed_to_score(name, statuses) or miss.reason
    statuses = records_by_category.get(category, Counter())
    if statuses:
        return _all_failed_to_score(f"{category}", statuses) or miss.reason
    if profile_categories is not None and category not in profile_categories:
        return f"outside the profile ({mode} runs {name}'s {', '.join(profile_categories)} only)"
    if category in not_loaded:
        return f"no task of that kind in the task data ({name} loaded no {category} task)"
    if stopped:
        return f"stopped before it: the run stopped ({stopped}) before any {category} item ran"
    if chosen:
        return f"deselected: no {category} item left after {chosen}"
    return f"not collected: no {category} item in this session"


def _all_failed_to_score(what: str, statuses: Counter[str]) -> str | None:
    """``all 3 hospital items errored`` (or were skipped); None when some item was scored
    (then the suite's own reason stands)."""
    if statuses.get("passed") or statuses.get("failed"):
        return None
    n = sum(statuses.values())
    items = "item" if n == 1 else "items"
    errors, skipped = statuses.get("error", 0), statuses.get("skipped", 0)
    if errors and not skipped:
        return f"all {n} {what} {items} errored"
    if skipped and not errors:
        return f"all {n} {what} {items} were skipped"
    return f"all {n} {what} {items} errored ({errors}) or were skipped ({skipped})"


def refine_missing(
    result: EgiResult,
    records: list[dict[str, Any]],
    objects: Mapping[str, Any],
    settings: Any,
    *,
    stopped: str | None,
) -> None:
    """Give each of ``result.missing`` its one cause (:func:`missing_cause`), in place, from the
    run's ``records``, the suite ``objects`` (name -> suite), and ``settings`` (its routing,
    mode, selection and data warnings)."""
    by_suite: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for rec in records:
        by_suite[rec["suite"]][str(rec.get("category"))][rec["status"]] += 1
    not_loaded: dict[str, set[str]] = defaultdict(set)
    for warning in getattr(settings, "data_warnings", None) or []:
        text = str(warning.get("warning", ""))
        for part in text.split("; "):
            if ": no task of this category was loaded" in part:
                not_loaded[str(warning.get("suite"))].add(part.split(":", 1)[0].strip())
    routing, mode = settings.routing, settings.mode
    for miss in result.missing:
        name = miss.route.split("/", 1)[0]
        try:
            profile = routing.profile(mode, name)
        except Exception:  # noqa: BLE001 - a merged run's mode may be unknown here
            profile = None
        miss.reason = missing_cause(
            miss,
            suite=objects.get(name),
            records_by_category=by_suite.get(name),
            profile_categories=list(profile.categories) if profile and profile.categories else None,
            mode=str(mode),
            selection=dict(getattr(settings, "selection", None) or {}),
            stopped=stopped,
            not_loaded=not_loaded.get(name, set()),
            deselected_suites=getattr(settings, "deselected_suites", None),
            collected_suites=getattr(settings, "collected_suites", None),
        )


def route_ceiling(route: Any, values: Mapping[str, float | None], suite: Any) -> float | None:
    """The most ``route`` can score on 0-100 on this run's tasks, where its suite declares a
    ceiling for the sub-metric (``Suite.oracle_ceiling``: the diagnostic holding it) and the
    suite reported it; None otherwise (the route can reach 100)."""
    name = (getattr(suite, "oracle_ceiling", None) or {}).get(route.sub_metric)
    if name is None or values.get(name) is None:
        return None
    return transform(route, {**values, route.sub_metric: values[name]})


def apply_ceilings(
    result: EgiResult, routing: Any, sub_metrics: Mapping[str, Mapping[str, float | None]],
    objects: Mapping[str, Any],
) -> None:
    """Set each contributor's ``ceiling`` and each bucket's ``ceiling`` (the weighted mean of
    its contributors' ceilings, 100 for a route without one) in place; a bucket's stays None
    when no contributor is capped."""
    routes = {r.key: r for r in routing.routes}
    for bucket in result.buckets.values():
        parts: list[tuple[float, float]] = []
        capped = False
        for c in bucket.contributors:
            route = routes[c.route]
            ceiling = route_ceiling(route, sub_metrics.get(route.suite, {}), objects.get(route.suite))
            c.ceiling = None if ceiling is None else round(ceiling, 6)
            capped = capped or ceiling is not None
            parts.append((100.0 if ceiling is None else ceiling, c.weight))
        if capped and parts:
            bucket.ceiling = round(sum(v * w for v, w in parts) / sum(w for _, w in parts), 6)
