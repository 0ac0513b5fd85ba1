"""``google_maps.*`` ops of MCP-Universe's location_navigation domain.

Each op keeps the semantics of upstream's evaluator of the same name (the answer keys it
reads, its ``op_args``, its thresholds and reasons) and recomputes the truth from the maps
world of ``ctx.seed`` (:func:`suites._common.mcp_servers.maps.build_world`, cached), through
the same functions the ``google-maps`` server answers the agent with: a place id is looked up
as ``maps_place_details`` would, a travel time or distance is the ``maps_distance_matrix``
element, an elevation is ``maps_elevation`` at the point the geocoder gives for the address.

Answer shapes read: a *stop list* ``[{"name", "place id"}, ...]`` (the leaf of ``json ->
get(stops)``) or a *road trip* ``{"starting_city", "destination_city", "routes": [{"cities_visited",
"rest_stops": [{"city", ...}], "scenic_viewpoints": [{"city", "address", "elevation_meters",
...}]}]}`` (the leaf of ``json``).

Kinds: ``stop_include_keys`` is a format check; the ops that only compare the answer with
itself or with literal ``op_args`` (``city_name_match``, ``are_stops_different``,
``validate_location``, ``places_in_cities_visited``, ``city_different_from_rest_stops``,
``place_in_cities_visited_of_routes``, ``place_not_in_cities_visited_of_routes``,
``validate_number_of_routes``, ``include_one_place_in_rest_stops``,
``at_least_unique_city_of_rest_stops_in_routes``) are static; those that look the world up are
dynamic.

Names are compared after :func:`~suites._common.mcp_servers.maps.norm` (case, accents and
punctuation ignored) and as whole words, where upstream compares raw substrings; each op's
docstring lists its other deviations from upstream (each fixes a check that crashes or passes
when it should not). A bad ``op_args`` (a missing key, an address the maps world cannot locate,
an unknown direction) is the task's fault: :class:`EvaluatorSpecError`, never a failed
evaluator.
"""

from __future__ import annotations

from typing import Any

from suites._common.mcp_servers._base import BadRequest
from suites._common.mcp_servers.maps import Location, MapsWorld, build_world, norm, search_places
from suites.mcp_universe.scorer.evaluator import AnswerError, EvalContext, EvaluatorSpecError, domain_op

__all__ = ["contains_name", "locate_arg", "resolve_stop", "type_matches"]

Result = tuple[bool, str]
OK: Result = (True, "")


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _world(ctx: EvalContext) -> MapsWorld:
    return build_world(ctx.seed)


def _arg(op_args: Any, key: str, op: str) -> Any:
    if not isinstance(op_args, dict) or key not in op_args:
        raise EvaluatorSpecError(f"google_maps.{op}: op_args needs {key!r}, got {op_args!r}")
    return op_args[key]


def _names(op_args: Any, op: str) -> list[str]:
    if isinstance(op_args, str):
        return [op_args]
    if isinstance(op_args, list) and op_args and all(isinstance(v, str) for v in op_args):
        return list(op_args)
    raise EvaluatorSpecError(f"google_maps.{op}: op_args must be a name or a list of names, got {op_args!r}")


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise AnswerError(f"{what} must be a string, got {value!r}")
    return value


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise AnswerError(f"{what} must be an object, got {value!r}")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise AnswerError(f"{what} must be a list, got {value!r}")
    return value


def _field(obj: Any, key: str, what: str) -> Any:
    o = _obj(obj, what)
    if key not in o:
        raise AnswerError(f"{what} has no {key!r}")
    return o[key]


def _stops(leaf: Any, allow_object: bool = False) -> list[dict[str, Any]]:
    if allow_object and isinstance(leaf, dict):
        leaf = [leaf]
    stops = _list(leaf, "the stops")
    return [_obj(s, f"stop {i + 1}") for i, s in enumerate(stops)]


def _routes(leaf: Any) -> list[dict[str, Any]]:
    routes = _list(_field(leaf, "routes", "the answer"), "routes")
    return [_obj(r, f"route {i + 1}") for i, r in enumerate(routes)]


def contains_name(text: str, name: str, typo: bool = False) -> bool:
    """``name`` occurs in ``text`` as whole words (after :func:`norm`). With ``typo``, a
    one-word name of 5+ letters also matches a word that differs by one swap of adjacent
    letters (upstream task 0034 spells Paris "Pairs")."""
    t, n = norm(text), norm(name)
    if not n:
        return False
    if f" {n} " in f" {t} ":
        return True
    if typo and " " not in n and len(n) >= 5:
        for w in t.split():
            if len(w) == len(n):
                diff = [i for i in range(len(n)) if w[i] != n[i]]
                if (
                    len(diff) == 2
                    and diff[1] == diff[0] + 1
                    and w[diff[0]] == n[diff[1]]
                    and w[diff[1]] == n[diff[0]]
                ):
                    return True
    return False


def resolve_stop(
    world: MapsWorld, stop: dict[str, Any], check_name: bool = True
) -> tuple[dict[str, Any] | None, str]:
    """The place a stop names: ``(place, "")`` or ``(None, reason)``.

    The place is found by its ``place id``; with ``check_name`` its ``name`` must name that
    place (one contains the other as whole words). Upstream found it by a text search for the
    name and kept the result with that id, so a wrong name failed the same way.
    """
    pid = stop.get("place id")
    name = stop.get("name")
    if "place id" not in stop:
        raise AnswerError(f"the stop {stop!r} has no 'place id'")
    if not isinstance(pid, str):
        return None, f"Can't find the place: {name} {pid} (the place id is not a string)"
    place = world.place(pid)
    if place is None:
        return None, f"Can't find the place: {name} {pid}"
    if check_name:
        if not isinstance(name, str) or not (
            contains_name(place["name"], name) or contains_name(name, place["name"])
        ):
            return None, f"Can't find the place: {name} {pid} (that id is {place['name']!r})"
    return place, ""


def locate_arg(world: MapsWorld, address: Any, op: str) -> Location:
    """Locate an address given in ``op_args``.

    Raises:
        EvaluatorSpecError: the maps world cannot locate it (a task the local world cannot
            judge, never the answer's fault).
    """
    loc = world.locate(address) if isinstance(address, str) else None
    if loc is None:
        raise EvaluatorSpecError(f"google_maps.{op}: the maps world cannot locate {address!r} (from op_args)")
    return loc


def _element(world: MapsWorld, a: Location, b: Location | None, mode: str, op: str) -> dict[str, Any]:
    if mode not in ("driving", "walking", "bicycling", "transit"):
        raise EvaluatorSpecError(f"google_maps.{op}: unknown mode {mode!r}")
    return world.element(a, b, mode)


def type_matches(required: str, types: list[str]) -> bool:
    """Upstream's rule: the required type is a substring of one of the place's types; we
    first write spaces and hyphens as underscores (``gas station`` → ``gas_station``: upstream
    task 0017 asks for "gas station", which no Google type contains)."""
    want = "_".join(norm(required).split())
    return bool(want) and any(want in t for t in types)


# ---------------------------------------------------------------------------------------------
# Road-trip ops (the answer object)
# ---------------------------------------------------------------------------------------------


@domain_op("google_maps.city_name_match", kind="static")
def city_name_match(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """``answer[op_args.key]`` names the city: it occurs in one of ``op_args.values``.

    Deviation: upstream tests ``city.lower() in candidate.lower()``, which an empty string (or
    any fragment such as ``"a"``) passes; we need a non-empty name occurring as whole words
    (case, accents and punctuation ignored, so ``"Kuala Lumpur, Malaysia"`` matches the
    candidate ``"Kuala Lumpur Malaysia"``).
    """
    key = _arg(op_args, "key", "city_name_match")
    values = _arg(op_args, "values", "city_name_match")
    city = _text(_field(leaf, key, "the answer"), key)
    if norm(city) and any(contains_name(c, city) for c in values):
        return OK
    return False, f"The city name doesn't match: {key} is {city!r}, expected one of {values[:4]}..."


@domain_op("google_maps.places_in_cities_visited", kind="static")
def places_in_cities_visited(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every place listed under ``op_args`` (``rest_stops`` / ``scenic_viewpoints``) of every
    route is in a city of that route's ``cities_visited`` (names compared after :func:`norm`;
    upstream compares the raw strings)."""
    kind = _names(op_args, "places_in_cities_visited")[0]
    for i, route in enumerate(_routes(leaf)):
        cities = [
            _text(c, "a visited city")
            for c in _list(_field(route, "cities_visited", f"route {i + 1}"), "cities_visited")
        ]
        for place in _list(_field(route, kind, f"route {i + 1}"), kind):
            city = _text(_field(place, "city", f"a place of {kind}"), "city")
            if norm(city) not in {norm(c) for c in cities}:
                return False, f"city[{city}] is not in {kind}[{cities}] (route {i + 1})"
    return OK


@domain_op("google_maps.city_different_from_rest_stops", kind="static")
def city_different_from_rest_stops(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """In every route, at least one scenic viewpoint is in a city that has no rest stop.

    Deviation: upstream fails only when the two sets of cities are equal, so viewpoints in a
    subset of the rest-stop cities (no viewpoint city different from them, which the task
    asks for) passed.
    """
    for i, route in enumerate(_routes(leaf)):
        rest = {
            norm(_text(_field(s, "city", "a rest stop"), "city"))
            for s in _list(_field(route, "rest_stops", f"route {i + 1}"), "rest_stops")
        }
        views = {
            norm(_text(_field(s, "city", "a viewpoint"), "city"))
            for s in _list(_field(route, "scenic_viewpoints", f"route {i + 1}"), "scenic_viewpoints")
        }
        if not views - rest:
            return False, (
                f"rest_stop_cities[{sorted(rest)}] and scenic_viewpoint_cities[{sorted(views)}]: "
                f"no viewpoint city differs from the rest-stop cities (route {i + 1})"
            )
    return OK


@domain_op("google_maps.validate_elevation_meters", kind="dynamic")
def validate_elevation_meters(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every scenic viewpoint's ``elevation_meters`` is within 5% of the elevation at its
    ``address`` (``|given - truth| / |truth| < 0.05``).

    Deviations: the address is located with the maps geocoder (a seeded place's or landmark's
    own address gives its exact point); upstream took the only result of a text search and
    asserted there was exactly one. A truth of 0 m (a division by zero upstream) is handled by
    an absolute floor: a difference of at most 1 m always passes. A non-numeric elevation
    fails with its reason.
    """
    world = _world(ctx)
    for i, route in enumerate(_routes(leaf)):
        for vp in _list(_field(route, "scenic_viewpoints", f"route {i + 1}"), "scenic_viewpoints"):
            name = _field(vp, "name", "a viewpoint")
            city = vp.get("city")
            address = _field(vp, "address", "a viewpoint")
            given = _field(vp, "elevation_meters", "a viewpoint")
            loc = world.locate(address) if isinstance(address, str) else None
            if loc is None:
                return False, f"can't get the elevation of {name} in {city} at {address}"
            try:
                e = float(given)
            except (TypeError, ValueError):
                return False, f"the elevation of {name} is {given!r}, not a number of metres"
            truth = world.elevation(loc.lat, loc.lng)
            if abs(e - truth) > 1.0 and abs(e - truth) / abs(truth) >= 0.05:
                return False, (
                    f"the returned elevation of {name} in {city} at {address} is {e:.2f}, "
                    f"while gt = {truth:.2f}"
                )
    return OK


def _cities(route: dict[str, Any], i: int) -> list[str]:
    return [
        _text(c, "a visited city")
        for c in _list(_field(route, "cities_visited", f"route {i + 1}"), "cities_visited")
    ]


@domain_op("google_maps.place_in_cities_visited_of_routes", kind="static")
def place_in_cities_visited_of_routes(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every route visits the city (one of the names in ``op_args``).

    Deviation: upstream tests raw substrings, so the alias ``"TOY"`` (for Toyama) is found in
    ``"Toyohashi"``; we match whole words.
    """
    names = _names(op_args, "place_in_cities_visited_of_routes")
    for i, route in enumerate(_routes(leaf)):
        if not any(contains_name(c, n) for c in _cities(route, i) for n in names):
            return False, f"city must be in all routes: route {i + 1} does not visit {names[0]}"
    return OK


@domain_op("google_maps.place_not_in_cities_visited_of_routes", kind="static")
def place_not_in_cities_visited_of_routes(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """No route visits the city (any of the names in ``op_args``).

    Deviation: upstream calls ``.lower()`` on ``op_args``, which the task files give as a
    list, so the evaluator raised and failed on every answer; we take a name or a list of
    names and match whole words.
    """
    names = _names(op_args, "place_not_in_cities_visited_of_routes")
    for i, route in enumerate(_routes(leaf)):
        hit = next((c for c in _cities(route, i) for n in names if contains_name(c, n)), None)
        if hit is not None:
            return False, f"city {hit} must not be in all routes (route {i + 1})"
    return OK


@domain_op("google_maps.validate_number_of_routes", kind="static")
def validate_number_of_routes(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """``answer.routes`` has ``value`` routes (a single route object counts as one).
    Upstream gave no reason on failure."""
    routes = _field(leaf, "routes", "the answer")
    n = len(routes) if isinstance(routes, list) else 1
    return (True, "") if n == value else (False, f"the answer has {n} route(s), expected {value}")


@domain_op("google_maps.include_one_place_in_rest_stops", kind="static")
def include_one_place_in_rest_stops(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every route has a rest stop in ``op_args.city`` (case-insensitive). Upstream gave no
    reason on failure."""
    want = _arg(op_args, "city", "include_one_place_in_rest_stops")
    for i, route in enumerate(_routes(leaf)):
        stops = _list(_field(route, "rest_stops", f"route {i + 1}"), "rest_stops")
        if not any(norm(_text(_field(s, "city", "a rest stop"), "city")) == norm(want) for s in stops):
            return False, f"route {i + 1} has no rest stop in {want}"
    return OK


@domain_op("google_maps.at_least_unique_city_of_rest_stops_in_routes", kind="static")
def at_least_unique_city_of_rest_stops_in_routes(
    leaf: Any, value: Any, op_args: Any, ctx: EvalContext
) -> Result:
    """Every route's rest stops are in at least ``op_args`` (a number) different cities."""
    if not isinstance(op_args, int):
        raise EvaluatorSpecError(
            "google_maps.at_least_unique_city_of_rest_stops_in_routes: "
            f"op_args must be a number, got {op_args!r}"
        )
    for i, route in enumerate(_routes(leaf)):
        cities = {
            norm(_text(_field(s, "city", "a rest stop"), "city"))
            for s in _list(_field(route, "rest_stops", f"route {i + 1}"), "rest_stops")
        }
        if len(cities) < op_args:
            return False, f"unique cities number: {len(cities)}, required number is {op_args} (route {i + 1})"
    return OK


# ---------------------------------------------------------------------------------------------
# Stop-list ops (the leaf of ``json -> get(stops)``)
# ---------------------------------------------------------------------------------------------


@domain_op("google_maps.stop_include_keys", kind="format")
def stop_include_keys(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop is an object holding every key of ``op_args.keys``.

    Deviation: upstream tests ``key in stop``, which a string stop passes as a substring test
    (``"name, place id"`` "has" both keys); a stop must be an object.
    """
    keys = _arg(op_args, "keys", "stop_include_keys")
    for i, stop in enumerate(_list(leaf, "the stops")):
        if not isinstance(stop, dict):
            return False, f"stop {i + 1} must be an object with {keys}, got {stop!r}"
        for key in keys:
            if key not in stop:
                return False, f"{key} must in stop (stop {i + 1})"
    return OK


@domain_op("google_maps.is_a_validate_stop", kind="dynamic")
def is_a_validate_stop(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop's ``place id`` is a place of the maps world (``maps_place_details`` finds it)."""
    world = _world(ctx)
    for stop in _stops(leaf):
        place, _ = resolve_stop(world, stop, check_name=False)
        if place is None:
            return False, f"the place {stop.get('place id')} doesn't exists"
    return OK


@domain_op("google_maps.validate_places", kind="dynamic")
def validate_places(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every place under ``answer[op_args.place_type]`` (a list or one object) has a known
    ``place id``.

    Deviation: upstream read ``.isError`` off the decoded JSON, which raised on every answer.
    """
    key = _arg(op_args, "place_type", "validate_places")
    places = _field(leaf, key, "the answer")
    world = _world(ctx)
    for stop in _stops(places, allow_object=True):
        place, _ = resolve_stop(world, stop, check_name=False)
        if place is None:
            return False, f"the place {stop.get('place id')} doesn't exists"
    return OK


@domain_op("google_maps.are_stops_different", kind="static")
def are_stops_different(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """``route_1_stops`` and ``route_2_stops`` are not the same set of places.

    Deviation: upstream failed only when both the names and the ids were the same sets, so
    the same places under other names passed; a place is its id, so we compare the ids.
    """
    ids = []
    for key in ("route_1_stops", "route_2_stops"):
        stops = _stops(_field(leaf, key, "the answer"))
        ids.append(
            {
                s.get("place id") if isinstance(s.get("place id"), str) else repr(s.get("place id"))
                for s in stops
            }
        )
    if ids[0] == ids[1]:
        return False, "the stops are the same"
    return OK


@domain_op("google_maps.validate_stop_type", kind="dynamic")
def validate_stop_type(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop's place has one of the required types (``op_args``: a list of types, matched
    as in :func:`type_matches`)."""
    required = _names(op_args, "validate_stop_type")
    world = _world(ctx)
    for stop in _stops(leaf):
        place, reason = resolve_stop(world, stop)
        if place is None:
            return False, reason
        if not any(type_matches(t, place["types"]) for t in required):
            return (
                False,
                f"The type of the place is not valid: {place['name']} is {place['types']}, "
                f"required one of {required}",
            )
    return OK


@domain_op("google_maps.validate_location", kind="static")
def validate_location(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop's ``name`` contains one of ``op_args`` (case-insensitive substring).

    Deviation: upstream passed as soon as one stop matched (and so ignored the others).
    """
    words = _names(op_args, "validate_location")
    stops = _stops(leaf)
    if not stops:
        return False, "The location doesn't match: no stop given"
    for stop in stops:
        name = _text(_field(stop, "name", "a stop"), "name")
        if not any(w.lower() in name.lower() for w in words):
            return False, f"The location doesn't match: {name!r} contains none of {words}"
    return OK


@domain_op("google_maps.places_in_country", kind="dynamic")
def places_in_country(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop's place has the country (``op_args``, a name) in its formatted address.

    Deviations: whole-word matching (upstream's substring test found ``"ny"`` in
    ``"Germany"``), with :func:`contains_name`'s one-swap tolerance for a misspelt name
    (upstream task 0034 asks for ``"Pairs"``, which no address contains).
    """
    country = _names(op_args, "places_in_country")[0]
    world = _world(ctx)
    for stop in _stops(leaf):
        place, reason = resolve_stop(world, stop)
        if place is None:
            return False, reason
        if not contains_name(place["address"], country, typo=True):
            return False, f"{place['address']} is not in {country}"
    return OK


@domain_op("google_maps.places_in_countries", kind="dynamic")
def places_in_countries(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop's place has one of the names in ``op_args`` in its formatted address.

    Deviations: upstream passed as soon as the first stop matched (later stops unchecked);
    whole-word matching as in ``places_in_country``.
    """
    names = _names(op_args, "places_in_countries")
    world = _world(ctx)
    stops = _stops(leaf)
    if not stops:
        return False, "The place is not in any of the countries: no stop given"
    for stop in stops:
        place, reason = resolve_stop(world, stop)
        if place is None:
            return False, reason
        if not any(contains_name(place["address"], n, typo=True) for n in names):
            return (
                False,
                f"The place is not in any of the countries: {place['address']} names none of {names}",
            )
    return OK


@domain_op("google_maps.validate_stop_rating", kind="dynamic")
def validate_stop_rating(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop's place has a rating of at least ``op_args`` (task files give 4.1999 for
    "at least 4.2"; ratings have one decimal)."""
    if not isinstance(op_args, (int, float)):
        raise EvaluatorSpecError(
            f"google_maps.validate_stop_rating: op_args must be a number, got {op_args!r}"
        )
    world = _world(ctx)
    for stop in _stops(leaf, allow_object=True):
        place, reason = resolve_stop(world, stop)
        if place is None:
            return False, reason
        if place["rating"] < op_args:
            return (
                False,
                f"Rating of stop {place['name']} is {place['rating']}, "
                f"while the required rating is {op_args}",
            )
    return OK


@domain_op("google_maps.compare_time_of_middle_point", kind="dynamic")
def compare_time_of_middle_point(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """The one stop is a fair meeting point: with ``d1`` the travel time from
    ``op_args.place1.place`` (mode ``place1.mode``) to the stop and ``d2`` from ``place2``,
    ``|d1 - d2| / d1 <= op_args.threshold``.

    Deviations: upstream asserted a one-stop list (an assertion used as a check); we fail
    with a reason. ``d1 = 0`` (the stop at place1) passes only if ``d2`` is 0 too (a division
    by zero upstream).
    """
    stops = _stops(leaf, allow_object=True)
    if len(stops) != 1:
        return False, f"the length of stops should be one, got {len(stops)}"
    p1, p2 = (
        _arg(op_args, "place1", "compare_time_of_middle_point"),
        _arg(op_args, "place2", "compare_time_of_middle_point"),
    )
    threshold = _arg(op_args, "threshold", "compare_time_of_middle_point")
    world = _world(ctx)
    if "place id" not in stops[0]:
        raise AnswerError(f"the stop {stops[0]!r} has no 'place id'")
    stop_id = f"place_id:{stops[0]['place id']}"
    stop = world.locate(stop_id)
    durations = []
    for p in (p1, p2):
        where = locate_arg(
            world, _arg(p, "place", "compare_time_of_middle_point"), "compare_time_of_middle_point"
        )
        el = _element(
            world,
            where,
            stop,
            _arg(p, "mode", "compare_time_of_middle_point"),
            "compare_time_of_middle_point",
        )
        if el["status"] != "OK":
            return (
                False,
                f"can't measure distance or duration between {p['place']}, {stop_id}, "
                "this usually means the place is not found",
            )
        durations.append(el["duration"]["value"])
    d1, d2 = durations
    if d1 == 0:
        return (True, "") if d2 == 0 else (False, f"doesn't match the required duration: {d1} s vs {d2} s")
    if abs(d1 - d2) / d1 > threshold:
        return False, (
            f"doesn't match the required duration: {d1} s from place1 vs {d2} s from place2 "
            f"({abs(d1 - d2) / d1:.3f} > {threshold})"
        )
    return OK


@domain_op("google_maps.validate_direction_of_two_places", kind="dynamic")
def validate_direction_of_two_places(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Every stop lies in each required direction of each reference place: for
    ``{"place": address, "direction": "north"}`` the stop's latitude is greater than the
    reference's (south: smaller; east / west: longitude greater / smaller).

    Deviation: the reference is located with the maps geocoder (upstream: the first text
    search result); an unknown direction or a reference the world cannot locate is a task
    error.
    """
    if not isinstance(op_args, list):
        raise EvaluatorSpecError(
            f"google_maps.validate_direction_of_two_places: op_args must be a list, got {op_args!r}"
        )
    world = _world(ctx)
    refs = []
    for ref in op_args:
        direction = _arg(ref, "direction", "validate_direction_of_two_places")
        if direction not in ("north", "south", "east", "west"):
            raise EvaluatorSpecError(
                f"google_maps.validate_direction_of_two_places: unknown direction {direction!r}"
            )
        refs.append(
            (
                locate_arg(
                    world,
                    _arg(ref, "place", "validate_direction_of_two_places"),
                    "validate_direction_of_two_places",
                ),
                direction,
            )
        )
    for stop in _stops(leaf):
        place, reason = resolve_stop(world, stop)
        if place is None:
            return False, reason
        for ref, direction in refs:
            ok = {
                "north": place["lat"] > ref.lat,
                "south": place["lat"] < ref.lat,
                "east": place["lng"] > ref.lng,
                "west": place["lng"] < ref.lng,
            }[direction]
            if not ok:
                return False, (
                    f"the direction from {[ref.lat, ref.lng]} to {[place['lat'], place['lng']]} is wrong: "
                    f"{place['name']} is not {direction} of {ref.address}"
                )
    return OK


def _legs(
    leaf: Any, op_args: Any, op: str, ctx: EvalContext
) -> tuple[list[int], Location, Location, str, float] | Result:
    stops = _stops(leaf)
    if not stops:
        return False, "there is no intermediate stop, the input should be a list"
    world = _world(ctx)
    a = locate_arg(world, _arg(op_args, "place1", op), op)
    b = locate_arg(world, _arg(op_args, "place2", op), op)
    mode, threshold = _arg(op_args, "mode", op), _arg(op_args, "threshold", op)
    points: list[tuple[str, Location | None]] = [(op_args["place1"], a)]
    for s in stops:
        if "place id" not in s:
            raise AnswerError(f"the stop {s!r} has no 'place id'")
        ref = f"place_id:{s['place id']}"
        points.append((ref, world.locate(ref)))
    points.append((op_args["place2"], b))
    dists = []
    for (n1, l1), (n2, l2) in zip(points, points[1:], strict=False):
        if l1 is None:
            return (
                False,
                f"can't measure distance or time between {n1}, {n2}, it usually means the place is not found",
            )
        el = _element(world, l1, l2, mode, op)
        if el["status"] != "OK":
            return (
                False,
                f"can't measure distance or time between {n1}, {n2}, it usually means the place is not found",
            )
        dists.append(el["distance"]["value"])
    return dists, a, b, mode, threshold


@domain_op("google_maps.compare_distance_between_stops", kind="dynamic")
def compare_distance_between_stops(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """The stops split the trip from ``op_args.place1`` to ``place2`` into legs of nearly equal
    road distance: ``(max(legs) - min(legs)) / min(legs) <= op_args.threshold``.

    Deviation: a zero-length leg (two consecutive stops at one point) fails with its reason
    (a division by zero upstream).
    """
    got = _legs(leaf, op_args, "compare_distance_between_stops", ctx)
    if isinstance(got[0], bool):
        return got  # type: ignore[return-value]
    dists, _, _, _, threshold = got  # type: ignore[misc]
    if min(dists) == 0:
        return False, "doesn't match the required distance: a leg has zero length"
    spread = (max(dists) - min(dists)) / min(dists)
    if spread > threshold:
        return (
            False,
            f"doesn't match the required distance: legs {dists} m differ by {spread:.3f} > {threshold}",
        )
    return OK


@domain_op("google_maps.compare_distance_with_and_wo_stops", kind="dynamic")
def compare_distance_with_and_wo_stops(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """The stops are on the way: the road distance through them differs from the direct one
    by at most ``op_args.threshold`` of the direct one."""
    got = _legs(leaf, op_args, "compare_distance_with_and_wo_stops", ctx)
    if isinstance(got[0], bool):
        return got  # type: ignore[return-value]
    dists, a, b, mode, threshold = got  # type: ignore[misc]
    world = _world(ctx)
    el = _element(world, a, b, mode, "compare_distance_with_and_wo_stops")
    if el["status"] != "OK" or el["distance"]["value"] == 0:
        raise EvaluatorSpecError(
            "google_maps.compare_distance_with_and_wo_stops: "
            f"no route between {op_args['place1']!r} and {op_args['place2']!r}"
        )
    direct = el["distance"]["value"]
    detour = abs(sum(dists) - direct) / direct
    if detour > threshold:
        return (
            False,
            f"doesn't match the required distance: {sum(dists)} m with the stops vs {direct} m "
            f"without ({detour:.3f} > {threshold})",
        )
    return OK


@domain_op("google_maps.check_places_and_ratings", kind="dynamic")
def check_places_and_ratings(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """The answer ``{place name: rating}`` lists exactly the places of ``op_args.places`` whose
    rating (first search result for ``"<place>, <op_args.location>"``) is above
    ``op_args.min_rating``, each with that rating. A place the world cannot find is a task
    error (upstream: a failure)."""
    places = _arg(op_args, "places", "check_places_and_ratings")
    min_rating = _arg(op_args, "min_rating", "check_places_and_ratings")
    location = _arg(op_args, "location", "check_places_and_ratings")
    answer = _obj(leaf, "the answer")
    world = _world(ctx)
    truth = {}
    for name in places:
        try:
            hit = search_places(world, f"{name}, {location}")["places"][0]
        except BadRequest:
            raise EvaluatorSpecError(
                f"google_maps.check_places_and_ratings: the maps world has no {name!r} in {location!r}"
            ) from None
        if (hit.get("rating") or 0) > min_rating:
            truth[name] = hit["rating"]
    if set(answer) != set(truth):
        return False, f"the places are not the same, llm_response: {answer}, ground_truth: {truth}"
    for name, rating in answer.items():
        if rating != truth[name]:
            return False, f"Rating of {name} is {rating}, while the required rating is {truth[name]}"
    return OK
