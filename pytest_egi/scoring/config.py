"""The EGI definition (``routing.yaml``) and the run options, as validated pydantic models.

Every validation error becomes one :class:`pytest.UsageError` (exit status 4) naming the
file or flag, the field, and what would be valid.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pytest_egi.options import BUCKETS, parse_bucket_values, parse_fraction, parse_mode, parse_suite_option
from pytest_egi.suite import SuiteProfile

__all__ = [
    "BUCKETS",
    "Bucket",
    "Mode",
    "Route",
    "RoutingConfig",
    "TRANSFORMS",
    "apply_floors",
    "apply_weights",
    "check_routes_produced",
    "describe_weights",
    "load_routing",
    "parse_bucket_values",
    "parse_fraction",
    "parse_mode",
    "parse_suite_option",
]

TRANSFORMS = ("fraction", "percent", "invert_fraction", "clip_invert", "gap")
"""Closed set of transforms to [0, 100] (DESIGN §4); implemented in ``scoring.transform``."""

BucketId = Literal["M1", "M2", "M3", "M4", "M5", "M6"]
TransformName = Literal["fraction", "percent", "invert_fraction", "clip_invert", "gap"]


class Bucket(BaseModel):
    """One EGI bucket."""

    model_config = ConfigDict(extra="forbid")

    name: str
    """Human name (``Task Outcome Accuracy``)."""
    weight: float = Field(ge=0.0, le=1.0)
    """Weight in the EGI sum; the six weights sum to 1."""
    floor: float | None = Field(default=None, ge=0.0, le=100.0)
    """Release-gate floor on 0-100, or None for no floor."""


class Route(BaseModel):
    """One row of the routing table: suite sub-metric -> bucket."""

    model_config = ConfigDict(extra="forbid")

    suite: str
    sub_metric: str
    bucket: BucketId
    transform: TransformName
    weight: float = Field(default=1.0, gt=0.0)
    """Weight within the bucket (equal by default)."""
    ceiling: float | None = Field(default=None, gt=0.0)
    """``clip_invert`` only: the value at and above which the score is 0."""
    baseline: str | None = None
    """``gap`` only: the sub-metric subtracted from ``sub_metric``."""
    optional: bool = False
    """The route counts only when its suite ran in the session (an opt-in suite): when no
    item of the suite was collected, the route is left out of the EGI without being listed
    as missing, so runs without the suite are unchanged. All routes of one suite (a route
    family) are optional or none is."""

    @model_validator(mode="after")
    def _transform_args(self) -> Route:
        if self.transform == "clip_invert" and self.ceiling is None:
            raise ValueError("transform clip_invert needs a 'ceiling' (a positive number)")
        if self.transform != "clip_invert" and self.ceiling is not None:
            raise ValueError(f"'ceiling' only applies to clip_invert, not {self.transform}")
        if self.transform == "gap" and not self.baseline:
            raise ValueError("transform gap needs a 'baseline' sub-metric name")
        if self.transform != "gap" and self.baseline is not None:
            raise ValueError(f"'baseline' only applies to gap, not {self.transform}")
        return self

    @property
    def key(self) -> str:
        """``suite/sub_metric``, unique across routes."""
        return f"{self.suite}/{self.sub_metric}"


class Mode(BaseModel):
    """A run profile (``quick`` or ``deep``)."""

    model_config = ConfigDict(extra="forbid")

    seed: int = 42
    suites: dict[str, SuiteProfile] = Field(default_factory=dict)


class RoutingConfig(BaseModel):
    """The whole of ``routing.yaml``: the single ground-truth schema of the EGI definition."""

    model_config = ConfigDict(extra="forbid")

    version: int
    buckets: dict[BucketId, Bucket]
    suites: list[str]
    routes: list[Route]
    modes: dict[Literal["quick", "deep"], Mode]

    @model_validator(mode="after")
    def _consistent(self) -> RoutingConfig:
        missing = [b for b in BUCKETS if b not in self.buckets]
        if missing:
            raise ValueError(f"buckets: missing {', '.join(missing)} (all of M1-M6 are required)")
        total = sum(b.weight for b in self.buckets.values())
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"buckets: weights sum to {total:.4f}, they must sum to 1")
        if len(set(self.suites)) != len(self.suites):
            raise ValueError("suites: a suite is listed twice")
        seen: set[str] = set()
        for i, route in enumerate(self.routes):
            where = f"route {i + 1} ({route.key})"
            if route.suite not in self.suites:
                raise ValueError(
                    f"{where}.suite: unknown suite {route.suite!r}; valid: {', '.join(self.suites)}"
                )
            if route.key in seen:
                raise ValueError(f"{where}: duplicate route {route.key}")
            seen.add(route.key)
            family = {r.optional for r in self.routes if r.suite == route.suite}
            if len(family) > 1:
                raise ValueError(
                    f"{where}.optional: the routes of {route.suite} disagree on 'optional'; a suite's "
                    "routes are all optional (counted only when the suite ran) or none is"
                )
        for mode_name, mode in self.modes.items():
            for suite in mode.suites:
                if suite not in self.suites:
                    raise ValueError(
                        f"modes.{mode_name}.suites: unknown suite {suite!r}; valid: {', '.join(self.suites)}"
                    )
        for need in ("quick", "deep"):
            if need not in self.modes:
                raise ValueError(f"modes: missing {need!r} (both quick and deep are required)")
        return self

    def routes_for(self, suite: str) -> list[Route]:
        """The routes of one suite, in file order."""
        return [r for r in self.routes if r.suite == suite]

    def profile(self, mode: str, suite: str) -> SuiteProfile:
        """The profile of ``suite`` in ``mode`` (seed inherited from the mode when unset)."""
        m = self.modes[mode]  # type: ignore[index]
        prof = m.suites.get(suite)
        if prof is None:
            return SuiteProfile(seed=m.seed)
        if "seed" not in prof.model_fields_set:
            prof = prof.model_copy(update={"seed": m.seed})
        return prof


def _location(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as users count: list positions from 1 (``routes.2.bucket``
    is ``routes #3.bucket``, the third route of the file)."""
    out = ""
    for p in loc:
        if p == "function-after":
            continue
        out += f" #{p + 1}" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _format_error(path: Path, exc: ValidationError, data: Any = None) -> str:
    """The message of an invalid routing file: one line per error, located as users count
    (:func:`_location`); an error inside a route names it as the other route errors do:
    ``route 3 (herb/person_f1).bucket``."""
    lines = [f"invalid routing file {path}:"]
    routes = data.get("routes") if isinstance(data, dict) else None
    for err in exc.errors():
        loc = _location(err["loc"])
        at = err["loc"]
        if len(at) > 1 and at[0] == "routes" and isinstance(at[1], int) and isinstance(routes, list) \
                and at[1] < len(routes) and isinstance(routes[at[1]], dict):
            route, rest = routes[at[1]], _location(at[2:])
            loc = f"route {at[1] + 1} ({route.get('suite')}/{route.get('sub_metric')})"
            loc += f".{rest}" if rest else ""
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "literal_error":
            msg = f"{msg} (got {err.get('input')!r})"
        lines.append(f"  {loc or '<root>'}: {msg}")
    return "\n".join(lines)


def _parse_yaml(path: Path, raw: bytes) -> Any:
    """``raw`` (the bytes of ``path``) parsed with PyYAML's safe loader.

    Raises:
        pytest.UsageError: malformed YAML (names the line and column).
    """
    import yaml

    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise pytest.UsageError(f"invalid routing file {path}: malformed YAML{where}: {problem}") from None


def load_routing(path: Path, cache_dir: Path | None = None) -> tuple[RoutingConfig, str]:
    """Load and validate ``routing.yaml``.

    Args:
        path: the file.
        cache_dir: the task cache folder (:func:`pytest_egi.cache.taskcache.task_cache_dir`), where
            the parsed YAML is kept, keyed by the file's sha256 and the installed packages
            (PyYAML's version among them), so a warm run neither imports PyYAML nor parses the
            file again (the result is validated every time); None parses it every time.

    Returns:
        (config, sha256 hex digest of the file bytes).

    Raises:
        pytest.UsageError: file missing, malformed YAML, or a schema violation; the message
            names the file, the field and what would be valid.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise pytest.UsageError(
            f"cannot read routing file {path}: {exc.strerror}. "
            "Pass --egi-routing PATH or set egi_routing in the ini file."
        ) from None
    digest = hashlib.sha256(raw).hexdigest()
    if cache_dir is None:
        data = _parse_yaml(path, raw)
    else:
        from pytest_egi.cache.taskcache import CacheEntries

        data = CacheEntries(cache_dir, {"sha256": digest}, ()).get("routing", lambda: _parse_yaml(path, raw))
    if not isinstance(data, dict):
        raise pytest.UsageError(f"invalid routing file {path}: the top level must be a mapping")
    try:
        config = RoutingConfig.model_validate(data)
    except ValidationError as exc:
        raise pytest.UsageError(_format_error(path, exc, data)) from None
    return config, digest


def apply_weights(
    config: RoutingConfig,
    weights: dict[str, float],
    base: dict[str, float] | None = None,
    *,
    flag: str = "--egi-weights",
) -> dict[str, float]:
    """Bucket weights after ``--egi-weights`` overrides, which may name only some buckets.

    The named buckets take the given weights; the others keep their proportions and are
    scaled to fill the rest (1 minus the named weights). With the routing file's weights
    (0.28, 0.22, 0.16, 0.14, 0.14, 0.06) and ``M1=0.20,M5=0.30``, the other four (0.22, 0.16,
    0.14, 0.06; sum 0.58) are scaled by 0.50 / 0.58: M2 0.189655, M3 0.137931, M4 0.120690,
    M6 0.051724 (EGI-Bench report, "Normalisation": the weights sum to 1).

    Args:
        config: the routing table (the base weights, unless ``base`` is given).
        weights: bucket -> weight in [0, 1] as given (:func:`parse_bucket_values`, which
            already refuses an unknown bucket, a negative or a non-number); empty: the base.
        base: the weights the others are scaled from (e.g. the shards' own in a merge);
            None: the routing file's.
        flag: the option named in errors.

    Returns:
        The six weights, M1..M6 order; they sum to 1.

    Raises:
        pytest.UsageError: the named weights sum above 1; all six are named and do not sum to
            1; or weight is left over for buckets whose base weights are all 0 (the message
            names the buckets and the fix).
    """
    start = dict(base) if base is not None else {b: config.buckets[b].weight for b in BUCKETS}  # type: ignore[index]
    given = {b: float(w) for b, w in weights.items()}
    bad = [b for b in given if b not in BUCKETS]
    if bad:
        raise pytest.UsageError(f"{flag}: unknown bucket {bad[0]!r}; the buckets are {', '.join(BUCKETS)}")
    negative = [f"{b}={w:g}" for b, w in given.items() if w < 0 or math.isnan(w)]
    if negative:
        raise pytest.UsageError(f"{flag}: {negative[0]}: a bucket weight is a number in [0, 1]")
    listing = ", ".join(f"{b}={w:g}" for b, w in given.items())
    named = math.fsum(given.values())
    if len(given) == len(BUCKETS):
        if not math.isclose(named, 1.0, abs_tol=1e-6):
            raise pytest.UsageError(
                f"{flag}: all six bucket weights are given and they sum to {named:.4f} ({listing}); "
                "they must sum to 1 (or name only some buckets: the others are scaled to fill the rest)"
            )
        return {b: given[b] for b in BUCKETS}
    if named > 1.0 + 1e-9:
        raise pytest.UsageError(
            f"{flag}: the named bucket weights alone sum to {named:.4f} ({listing}), above 1; "
            "the six weights must sum to 1"
        )
    rest = max(0.0, 1.0 - named)
    others = [b for b in BUCKETS if b not in given]
    pool = math.fsum(start[b] for b in others)
    if pool <= 0 and rest > 1e-9:
        raise pytest.UsageError(
            f"{flag}: {rest:.4f} of the weight is left for {' '.join(others)}, whose weights are all "
            f"0 to scale from; name their weights too ({listing} leaves {rest:.4f})"
        )
    out = {}
    for b in BUCKETS:
        if b in given:
            out[b] = given[b]
        else:
            out[b] = round(start[b] * rest / pool, 12) if pool > 0 else 0.0
    return out


def describe_weights(weights: dict[str, float], given: dict[str, float] | None) -> str | None:
    """One line saying which bucket weights a run used, when ``--egi-weights`` changed them
    (``given``: what it named); None when it did not.

    Example: ``bucket weights (--egi-weights M1=0.2,M5=0.3; the other buckets scaled to fill
    0.5): M1 0.2, M2 0.189655, M3 0.137931, M4 0.12069, M5 0.3, M6 0.051724``.
    """
    if not given:
        return None
    named = ",".join(f"{b}={given[b]:g}" for b in BUCKETS if b in given)
    rest = 1.0 - math.fsum(given.values())
    scaled = (f"; the other buckets scaled to fill {rest:.6g}" if len(given) < len(BUCKETS) else "")
    used = ", ".join(f"{b} {round(weights[b], 6):g}" for b in BUCKETS if b in weights)
    return f"bucket weights (--egi-weights {named}{scaled}): {used}"


def apply_floors(config: RoutingConfig, floors: dict[str, float]) -> dict[str, float]:
    """Bucket floors after ``--egi-floor`` overrides (buckets without a floor are absent)."""
    merged = {b: bk.floor for b, bk in config.buckets.items() if bk.floor is not None}
    merged.update(floors)
    return dict(sorted(merged.items()))  # type: ignore[arg-type]


def validate_suite_options(model: type[BaseModel], suite: str, values: dict[str, Any]) -> BaseModel:
    """Validate ``--egi-opt`` values for one suite against its options model.

    A key the model does not declare is refused even when the model itself would ignore it
    (pydantic's default ``extra="ignore"``): a misspelt option must not silently run the
    default.

    Raises:
        pytest.UsageError: naming the suite, key and the problem.
    """
    known = set(model.model_fields) | {
        f.alias for f in model.model_fields.values() if f.alias is not None
    }
    unknown = sorted(set(values) - known)
    if unknown:  # whatever the model's own ``extra`` setting: a typo must not be ignored
        raise pytest.UsageError(
            f"--egi-opt {suite}.{unknown[0]}: unknown option for {suite}; "
            f"valid keys for {suite}: {', '.join(model.model_fields)}"
        )
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        parts = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            parts.append(f"--egi-opt {suite}.{loc}: {err['msg']}")
        valid = ", ".join(model.model_fields)
        raise pytest.UsageError("\n".join(parts) + f"\n(valid keys for {suite}: {valid})") from None


def check_routes_produced(
    config: RoutingConfig, path: Path, suite: str, sub_metrics: frozenset[str] | None
) -> None:
    """Refuse a route of ``suite`` naming a sub-metric the suite never produces.

    Called for each suite that was collected in the session. ``sub_metrics`` is the suite's
    declared ``Suite.sub_metrics`` (every key its ``summarize`` can return); None (a suite
    that declares nothing) skips the check. A ``gap`` route's ``baseline`` is checked too.

    Raises:
        pytest.UsageError: ``invalid routing file <path>: route <n> (<suite>/<name>): ...`` (routes
            numbered from 1 in file order)
            naming the route and the suite's real sub-metrics.
    """
    if sub_metrics is None:
        return
    for i, route in enumerate(config.routes):
        if route.suite != suite:
            continue
        for field, name in (("sub_metric", route.sub_metric), ("baseline", route.baseline)):
            if name is not None and name not in sub_metrics:
                raise pytest.UsageError(
                    f"invalid routing file {path}: route {i + 1} ({route.key}): {field} {name!r} "
                    f"is not a sub-metric of {suite}; its sub-metrics: {', '.join(sorted(sub_metrics))}"
                )
