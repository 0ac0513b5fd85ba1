"""MCP-Universe's location_navigation domain over the local ``google-maps`` server.

Task shapes (upstream's, with our own wording in generated tasks):

- *road trip*: ``{"starting_city", "destination_city", "routes": [{"route_id", "route_name",
  "cities_visited", "rest_stops"?, "scenic_viewpoints"?}]}`` judged by route/city/stop counts,
  ``city_name_match``, ``places_in_cities_visited``, ``validate_elevation_meters``,
  ``city_different_from_rest_stops``, must-visit / avoid cities, rest-stop city rules;
- *stops along a route*: ``{"stops" | "route_1_stops", "route_2_stops": [{"name", "place id"}]}``
  at the k-section points of a drive (``compare_distance_between_stops``,
  ``compare_distance_with_and_wo_stops``) with types and a rating floor, and
  ``are_stops_different`` for two routes;
- *meeting point*: one stop whose travel times from 2-4 places are balanced
  (``compare_time_of_middle_point`` for every pair, driving or walking);
- *place by direction*: a place of a kind in a city north/south/east/west of two landmarks
  (``validate_location``, ``places_in_country(ies)``, ``validate_direction_of_two_places``).

:func:`solve` reads what a task asks from its evaluators (counts, types, rating floor,
addresses, directions), so it answers generated tasks and upstream task files alike; it makes
the tool calls a correct agent makes (directions, geocoding, place searches, distance
matrices, elevations) against the world of the seed, and checks its own answer with the
evaluators before returning it.

It plans within the agent's steps (:data:`REFERENCE_CALLS`) as a competent agent would: a
lookup already made is never repeated (an end geocoded once; the way back's directions are
known), one search asks for every kind a stop may be (``cafe or hotel``; one search per kind
only where the nearest places crowd the wanted ones out), one distance matrix per travel mode
(every leg of a drive, or every party to every candidate meeting place), and one elevation
call for every viewpoint of every route. :func:`generate_tasks` skips a candidate whose
reference would still not fit.
"""

from __future__ import annotations

import json
import math
import random
import re
from functools import lru_cache
from typing import Any

from suites._common.mcp_servers import maps as M
from suites._common.mcp_servers._base import BadRequest
from suites.mcp_universe.agent import MAX_ITERATIONS
from suites.mcp_universe.data.domains import NotSolvable
from suites.mcp_universe.scorer.evaluator import EvalContext, evaluate
from suites.mcp_universe.scorer.ops.google_maps import contains_name, type_matches

__all__ = ["DOMAIN", "KNOWN_UPSTREAM_DEFECTS", "SERVERS", "generate_tasks", "solve"]

DOMAIN = "location_navigation"
SERVERS = ("google-maps",)
SERVER = "google-maps"

KNOWN_UPSTREAM_DEFECTS: dict[tuple[str, int], str] = {
    ("google_maps_task_0017", 14): (
        "evaluator 14 checks route_1_stops (Anaheim → Yosemite) against the second route's ends "
        "(Yosemite → San Jose), so no correct answer passes it"
    ),
}
"""(upstream task file stem, evaluator index) → why no correct answer passes that evaluator
(a defect of the task file, not of an op). :func:`solve` returns the correct answer anyway and
leaves these indices out of its self-check."""

LOOKUP_OPS = frozenset(
    "google_maps." + n
    for n in (
        "is_a_validate_stop",
        "validate_stop_type",
        "validate_stop_rating",
        "places_in_country",
        "places_in_countries",
        "compare_time_of_middle_point",
        "compare_distance_between_stops",
        "compare_distance_with_and_wo_stops",
        "validate_direction_of_two_places",
    )
)
"""Ops that look a stop up by its place id (an unknown id fails each of them)."""

REFERENCE_CALLS = MAX_ITERATIONS - 1
"""The most tool calls a reference may make: the agent's step budget less the answer's step."""

_GET = re.compile(r"get\((\w+)\)")


class _Calls(list):
    """The tool calls of one reference, in order, with the result of every lookup made so far
    (a lookup already made is answered from memory, not made again)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[tuple[str, str], Any] = {}

    def asked(self, tool: str, **arguments: Any) -> bool:
        """Whether this exact lookup was made already."""
        return (tool, json.dumps(arguments, sort_keys=True)) in self.seen


def _call(calls: _Calls, world: M.MapsWorld, tool: str, **arguments: Any) -> Any:
    """Make a tool call (the server's own function on the same world), record it if the server
    accepts it, and return its result; a lookup already made returns the remembered result
    (or raises the remembered refusal) without a new call."""
    key = (tool, json.dumps(arguments, sort_keys=True))
    if key in calls.seen:
        result = calls.seen[key]
        if isinstance(result, BadRequest):
            raise result
        return result
    fn = {
        "maps_geocode": M.geocode,
        "maps_search_places": M.search_places,
        "maps_distance_matrix": M.distance_matrix,
        "maps_elevation": M.elevation,
        "maps_directions": M.directions,
        "maps_place_details": M.place_details,
    }[tool]
    try:
        result = fn(world, **arguments)  # a refused call (BadRequest) is not recorded
    except BadRequest as exc:
        calls.seen[key] = exc
        raise
    calls.seen[key] = result
    calls.append({"server": SERVER, "tool": tool, "arguments": arguments})
    return result


def _evaluators(task: dict[str, Any]) -> list[dict[str, Any]]:
    return list(task.get("evaluators") or [])


def _stem(task: dict[str, Any]) -> str:
    return str(task.get("id") or task.get("name") or "")


# ---------------------------------------------------------------------------------------------
# Reading what a task asks
# ---------------------------------------------------------------------------------------------


def _count(evs: list[dict[str, Any]], func: str) -> int | None:
    for ev in evs:
        if ev.get("op") == "=" and " ".join(str(ev.get("func", "")).split()) == func:
            return int(ev["value"])
    return None


def _ops(evs: list[dict[str, Any]], name: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, ev) for i, ev in enumerate(evs) if ev.get("op") == "google_maps." + name]


def _list_key(func: str) -> str | None:
    keys = _GET.findall(func or "")
    return keys[-1] if keys and "foreach" not in func else None


# ---------------------------------------------------------------------------------------------
# Road trips
# ---------------------------------------------------------------------------------------------


def _town_of(name: str, what: str) -> M.Town:
    town = M.find_town(name)
    if town is None:
        loc_towns = M.towns_in(name)
        if not loc_towns:
            raise NotSolvable(f"the maps world has no town called {name!r} ({what})")
        town = loc_towns[0]
    return town


def _solve_road_trip(task: dict[str, Any], world: M.MapsWorld) -> dict[str, Any]:
    evs = _evaluators(task)
    calls = _Calls()
    names = {ev["op_args"]["key"]: ev["op_args"]["values"][0] for _, ev in _ops(evs, "city_name_match")}
    if "starting_city" not in names or "destination_city" not in names:
        raise NotSolvable(
            "a road-trip task needs city_name_match evaluators for starting_city and destination_city"
        )
    start = _town_of(names["starting_city"], "starting_city")
    dest = _town_of(names["destination_city"], "destination_city")
    n_routes = _count(evs, "json -> get(routes) -> len") or 1
    n_cities = _count(evs, "json -> get(routes) -> foreach -> get(cities_visited) -> len") or 2
    n_rest = _count(evs, "json -> get(routes) -> foreach -> get(rest_stops) -> len") or 0
    n_views = _count(evs, "json -> get(routes) -> foreach -> get(scenic_viewpoints) -> len") or 0
    template = (task.get("output_format") or {}).get("routes", [{}])[0]
    want_rest = "rest_stops" in template or n_rest > 0
    want_views = "scenic_viewpoints" in template or n_views > 0
    n_rest = n_rest or (1 if want_rest else 0)
    n_views = n_views or (1 if want_views else 0)
    must = [
        _town_of(ev["op_args"][0], "must-visit city")
        for _, ev in _ops(evs, "place_in_cities_visited_of_routes")
    ]
    avoid = [
        _town_of(ev["op_args"][0], "city to avoid")
        for _, ev in _ops(evs, "place_not_in_cities_visited_of_routes")
    ]
    include = [M.find_town(ev["op_args"]["city"]) for _, ev in _ops(evs, "include_one_place_in_rest_stops")]
    need_diff = bool(_ops(evs, "city_different_from_rest_stops"))
    unique = max(
        [int(ev["op_args"]) for _, ev in _ops(evs, "at_least_unique_city_of_rest_stops_in_routes")] or [1]
    )

    a = world.locate(start.name)
    b = world.locate(dest.name)
    assert a is not None and b is not None
    _call(calls, world, "maps_directions", origin=start.name, destination=dest.name, mode="driving")
    pool = [t for t in world.corridor(a, b) if t not in avoid and t not in must and t not in include]
    fixed = [t for t in must + [t for t in include if t] if t not in (start, dest)]
    if len(pool) + len(fixed) < n_cities:
        raise NotSolvable(f"only {len(pool) + len(fixed)} towns lie between {start.name} and {dest.name}")

    def frac(t: M.Town) -> float:
        return M.haversine_km(a.lat, a.lng, t.lat, t.lng) / (
            M.haversine_km(a.lat, a.lng, t.lat, t.lng) + M.haversine_km(t.lat, t.lng, b.lat, b.lng)
        )

    routes = []
    points: list[dict[str, float]] = []  # the viewpoints' locations, for one batched elevation call
    searched: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def find(kind_query: str, town: M.Town, used: set[str]) -> dict[str, Any]:
        key = (kind_query, town.name)
        if key not in searched:
            try:
                searched[key] = _call(
                    calls, world, "maps_search_places", query=f"{kind_query} in {town.name}"
                )["places"]
            except BadRequest:
                searched[key] = []
        for p in searched[key]:
            if p["place_id"] not in used and M.find_town(p["formatted_address"].split(", ")[1]) in (
                town,
                None,
            ):
                return p
        raise NotSolvable(f"no {kind_query} left in {town.name}")

    for r in range(n_routes):
        k = n_cities - len(fixed)
        step = max(1, len(pool) // max(1, n_routes + 1))
        chosen = [pool[(r * step + i) % len(pool)] for i in range(k)] if k > 0 else []
        if len(set(chosen)) < k:
            chosen = pool[:k]
        cities = sorted(fixed + chosen, key=frac)
        free = [t for t in cities if t not in must]  # stops avoid must-visit towns (see _mistake)
        if not free:
            free = cities
        used: set[str] = set()
        rest_towns = ([t for t in include if t] + free)[: max(unique, 1)]
        rest_stops = []
        for i in range(n_rest):
            town = rest_towns[i % len(rest_towns)]
            p = find("rest stop", town, used)
            used.add(p["place_id"])
            rest_stops.append(
                {
                    "city": town.name,
                    "rest_stop_id": str(i + 1),
                    "name": p["name"],
                    "address": p["formatted_address"],
                    "amenities": ["restrooms", "parking", "food"],
                }
            )
        view_towns = [t for t in reversed(free) if t not in rest_towns[: len(rest_stops)]] or list(
            reversed(free)
        )
        if need_diff and not [t for t in view_towns if t.name not in {s["city"] for s in rest_stops}]:
            raise NotSolvable("no town left for a viewpoint away from the rest stops")
        views = []
        for i in range(n_views):
            town = view_towns[i % len(view_towns)]
            p = find("scenic viewpoint", town, used)
            used.add(p["place_id"])
            loc = p["location"]
            point = {"latitude": loc["lat"], "longitude": loc["lng"]}
            if point not in points:
                points.append(point)
            views.append(
                {
                    "city": town.name,
                    "viewpoint_id": str(i + 1),
                    "name": p["name"],
                    "address": p["formatted_address"],
                    "elevation_meters": points.index(point),  # filled in from the one elevation call
                    "description": f"A lookout near {town.name}",
                }
            )
        route: dict[str, Any] = {
            "route_id": str(r + 1),
            "route_name": f"Route {r + 1} via {cities[len(cities) // 2].name}",
            "cities_visited": [t.name for t in cities],
        }
        if want_rest:
            route["rest_stops"] = rest_stops
        if want_views:
            route["scenic_viewpoints"] = views
        routes.append(route)
    if points:  # one elevation call for every viewpoint of every route
        heights = _call(calls, world, "maps_elevation", locations=points)["results"]
        for route in routes:
            for view in route.get("scenic_viewpoints", []):
                view["elevation_meters"] = heights[view["elevation_meters"]]["elevation"]
    answer = {"starting_city": start.name, "destination_city": dest.name, "routes": routes}
    mistake, fails = _road_trip_mistake(answer, evs, pool, must, avoid)
    return {"calls": calls, "answer": answer, "mistake": (mistake, fails)}


def _road_trip_mistake(
    answer: dict[str, Any],
    evs: list[dict[str, Any]],
    pool: list[M.Town],
    must: list[M.Town],
    avoid: list[M.Town],
) -> tuple[dict[str, Any], list[int]]:
    bad = json.loads(json.dumps(answer))
    route = bad["routes"][0]
    stop_cities = {s["city"] for key in ("rest_stops", "scenic_viewpoints") for s in route.get(key, [])}
    if must:
        spare = next((t.name for t in pool if t.name not in route["cities_visited"]), "Springfield")
        route["cities_visited"] = [spare if c == must[0].name else c for c in route["cities_visited"]]
        return bad, [i for i, _ in _ops(evs, "place_in_cities_visited_of_routes")]
    free = [c for c in route["cities_visited"] if c not in stop_cities]
    if avoid and free:
        route["cities_visited"] = [avoid[0].name if c == free[0] else c for c in route["cities_visited"]]
        return bad, [i for i, _ in _ops(evs, "place_not_in_cities_visited_of_routes")]
    if route.get("scenic_viewpoints") and _ops(evs, "validate_elevation_meters"):
        vp = route["scenic_viewpoints"][0]
        vp["elevation_meters"] = round(float(vp["elevation_meters"]) * 1.25 + 5, 2)
        return bad, [i for i, _ in _ops(evs, "validate_elevation_meters")]
    bad["starting_city"] = "Springfield"
    return bad, [i for i, ev in _ops(evs, "city_name_match") if ev["op_args"]["key"] == "starting_city"]


# ---------------------------------------------------------------------------------------------
# Stop lists
# ---------------------------------------------------------------------------------------------


class _Need:
    """What a task asks of one stop list."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.count = 1
        self.types: list[str] = []
        self.rating: float | None = None
        self.countries: list[list[str]] = []
        self.words: list[str] = []
        self.directions: list[dict[str, str]] = []
        self.legs: dict[str, Any] | None = None
        self.middles: list[dict[str, Any]] = []

    def accepts(self, p: dict[str, Any]) -> bool:
        if self.types and not any(type_matches(t, p["types"]) for t in self.types):
            return False
        if self.rating is not None and (p.get("rating") or 0) < self.rating:
            return False
        if any(
            not any(contains_name(p["formatted_address"], c, typo=True) for c in cs) for cs in self.countries
        ):
            return False
        if self.words and not any(w.lower() in p["name"].lower() for w in self.words):
            return False
        return True

    def query(self) -> str:
        """One search query for every kind the stops may be (``cafe or hotel or park``)."""
        if self.types:
            return " or ".join(t.replace("_", " ") for t in self.types)
        if self.words:
            return self.words[0]
        return "restaurant"

    def single_queries(self) -> list[str]:
        """One query per kind (when one query for every kind is crowded out by the nearest places)."""
        return [t.replace("_", " ") for t in self.types] if len(self.types) > 1 else [self.query()]


def _needs(evs: list[dict[str, Any]]) -> dict[str, _Need]:
    needs: dict[str, _Need] = {}
    for ev in evs:
        func = " ".join(str(ev.get("func", "")).split())
        key = _list_key(func)
        if key is None or key == "routes":
            continue
        need = needs.setdefault(key, _Need(key))
        op, args = ev.get("op"), ev.get("op_args")
        if op == "=" and func.endswith("-> len"):
            need.count = int(ev["value"])
        elif op == "google_maps.validate_stop_type":
            need.types = list(args)
        elif op == "google_maps.validate_stop_rating":
            need.rating = float(args)
        elif op == "google_maps.places_in_country":
            need.countries.append([args])
        elif op == "google_maps.places_in_countries":
            need.countries.append(list(args))
        elif op == "google_maps.validate_location":
            need.words = list(args)
        elif op == "google_maps.validate_direction_of_two_places":
            need.directions = list(args)
        elif op == "google_maps.compare_distance_between_stops" and need.legs is None:
            need.legs = dict(args)
        elif op == "google_maps.compare_time_of_middle_point":
            need.middles.append(dict(args))
    return needs


def _candidates(
    calls: _Calls,
    world: M.MapsWorld,
    need: _Need,
    lat: float,
    lng: float,
    radius_m: float,
    query: str | None = None,
) -> list[dict[str, Any]]:
    """The places one search (by default every kind the stops may be, in one query) finds
    around a point that the task's rules accept, nearest first."""
    try:
        res = _call(
            calls,
            world,
            "maps_search_places",
            query=query or need.query(),
            location={"latitude": round(lat, 6), "longitude": round(lng, 6)},
            radius=radius_m,
        )
    except BadRequest:
        return []
    return [p for p in res["places"] if need.accepts(p)]


def _interp(a: M.Location, b: M.Location, f: float) -> tuple[float, float]:
    return a.lat + (b.lat - a.lat) * f, a.lng + (b.lng - a.lng) * f


def _solve_legs(calls: _Calls, world: M.MapsWorld, need: _Need, taken: set[str]) -> list[dict[str, Any]]:
    """Stops near the k/(n+1) points of the drive, then improved one stop at a time (among the
    searched candidates) until the legs are even and the detour small."""
    legs = need.legs or {}
    p1, p2, mode = legs["place1"], legs["place2"], legs.get("mode", "driving")
    if not calls.asked("maps_directions", origin=p2, destination=p1, mode=mode):  # the way back: known
        _call(calls, world, "maps_directions", origin=p1, destination=p2, mode=mode)
    g1 = _call(calls, world, "maps_geocode", address=p1)["location"]
    g2 = _call(calls, world, "maps_geocode", address=p2)["location"]
    a = M.Location(g1["lat"], g1["lng"], p1, "", "")
    b = M.Location(g2["lat"], g2["lng"], p2, "", "")
    total = M.haversine_km(a.lat, a.lng, b.lat, b.lng)
    threshold = float(legs.get("threshold", 0.1))
    spacing_m = total * 1000 / (need.count + 1)
    radius0 = round(min(max(spacing_m / 4, 8_000.0), 50_000.0))
    pools: list[dict[str, dict[str, Any]]] = []
    for k in range(1, need.count + 1):
        lat, lng = _interp(a, b, k / (need.count + 1))
        pool: dict[str, dict[str, Any]] = {}
        # one search around the point, wide enough for the stops' spacing; when it finds
        # nothing, one search per kind over the widest radius
        for p in _candidates(calls, world, need, lat, lng, radius0):
            if p["place_id"] not in taken:
                pool.setdefault(p["place_id"], p)
        for query in need.single_queries() if not pool else []:
            for p in _candidates(calls, world, need, lat, lng, 50_000, query):
                if p["place_id"] not in taken:
                    pool.setdefault(p["place_id"], p)
        if not pool:
            raise NotSolvable(f"no {need.query()!r} near the {k}/{need.count + 1} point of {p1} → {p2}")
        pools.append(pool)

    def where(p: dict[str, Any]) -> tuple[float, float]:
        return p["location"]["lat"], p["location"]["lng"]

    def score(sel: list[dict[str, Any]]) -> float:
        pts = [(a.lat, a.lng)] + [where(p) for p in sel] + [(b.lat, b.lng)]
        d = [M.haversine_km(*u, *v) for u, v in zip(pts, pts[1:], strict=False)]
        if min(d) == 0:
            return math.inf
        return max((max(d) - min(d)) / min(d), abs(sum(d) - total) / total)

    def improve(sel: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], float]:
        best = score(sel)
        for _ in range(8):
            improved = False
            for k, pool in enumerate(pools):
                for c in pool.values():
                    if any(c["place_id"] == s["place_id"] for s in sel):
                        continue
                    trial = sel[:k] + [c] + sel[k + 1 :]
                    t = score(trial)
                    if t < best:
                        sel, best, improved = trial, t, True
            if not improved or best < 0.05:
                break
        return sel, best

    targets = [_interp(a, b, (k + 1) / (need.count + 1)) for k in range(need.count)]
    sel = [
        min(pool.values(), key=lambda p: M.haversine_km(*t, *where(p)))
        for t, pool in zip(targets, pools, strict=True)
    ]
    sel, best = improve(sel)
    if best > threshold * 0.6 and need.count > 1:
        # legs still uneven: keep the stop that lies farthest from its point (where places are
        # sparse) and search again at the points that split the drive evenly around it
        off = [M.haversine_km(*t, *where(p)) for t, p in zip(targets, sel, strict=True)]
        j = off.index(max(off))
        s_j = M.Location(*where(sel[j]), "", "", "")
        for k, pool in enumerate(pools):
            if k == j:
                continue
            if k < j:
                lat, lng = _interp(a, s_j, (k + 1) / (j + 1))
            else:
                lat, lng = _interp(s_j, b, (k - j) / (need.count - j))
            for p in _candidates(calls, world, need, lat, lng, radius0):
                if p["place_id"] not in taken:
                    pool.setdefault(p["place_id"], p)
        sel, best = improve(sel)
    taken.update(p["place_id"] for p in sel)
    ids = [p1] + [f"place_id:{p['place_id']}" for p in sel] + [p2]
    _call(calls, world, "maps_distance_matrix", origins=ids[:-1], destinations=ids[1:], mode=mode)
    return sel


def _party_time(world: M.MapsWorld, loc: M.Location, mode: str, lat: float, lng: float) -> float:
    return M.haversine_km(loc.lat, loc.lng, lat, lng) * M.ROAD_FACTOR[mode] / M.SPEED_KMH[mode]


def _solve_middle(calls: _Calls, world: M.MapsWorld, need: _Need) -> list[dict[str, Any]]:
    parties: dict[str, M.Location] = {}
    for c in need.middles:
        for side in ("place1", "place2"):
            addr = c[side]["place"]
            if addr not in parties:
                g = _call(calls, world, "maps_geocode", address=addr)
                loc = world.locate(addr)
                assert loc is not None and g["location"]["lat"] == loc.lat
                parties[addr] = loc

    def spread(lat: float, lng: float) -> float:
        worst = 0.0
        for c in need.middles:
            t1 = _party_time(world, parties[c["place1"]["place"]], c["place1"]["mode"], lat, lng)
            t2 = _party_time(world, parties[c["place2"]["place"]], c["place2"]["mode"], lat, lng)
            worst = max(worst, abs(t1 - t2) / t1 if t1 else 1.0)
        return worst

    lats = [p.lat for p in parties.values()]
    lngs = [p.lng for p in parties.values()]
    span = max(max(lats) - min(lats), max(lngs) - min(lngs), 0.05)
    c_lat, c_lng, half = (max(lats) + min(lats)) / 2, (max(lngs) + min(lngs)) / 2, span * 1.5
    threshold = min(float(c["threshold"]) for c in need.middles)

    def cost(lat: float, lng: float) -> float:  # total travel distance: prefer central meeting points
        return sum(M.haversine_km(p.lat, p.lng, lat, lng) for p in parties.values())

    def reach(lat: float, lng: float) -> float:
        return min(M.haversine_km(p.lat, p.lng, lat, lng) for p in parties.values())

    good: list[tuple[float, float, float]] = []
    n = 20
    for _ in range(5):
        grid = [
            (spread(c_lat + half * i / n, c_lng + half * j / n), c_lat + half * i / n, c_lng + half * j / n)
            for i in range(-n, n + 1)
            for j in range(-n, n + 1)
        ]
        good += [g for g in grid if g[0] < threshold * 0.6]
        # refine around the most central balanced point (far away, every point is "balanced")
        _, c_lat, c_lng = min(grid, key=lambda g: (max(g[0] - threshold / 2, 0.0), cost(g[1], g[2])))
        half /= 4
        n = 12

    good.sort(key=lambda g: cost(g[1], g[2]))
    typical = sorted(reach(g[1], g[2]) for g in good[:200])[len(good[:200]) // 2] if good else 1.0
    radius_km = min(max(1.0, typical / 2), 20.0)
    step = radius_km / 111.32
    seeds: list[tuple[float, float]] = []
    cells: set[tuple[int, int]] = set()
    for _, lat, lng in good:  # one seed per cell of the radius' size, most central first
        cell = (round(lat / step), round(lng / step))
        if cell not in cells:
            cells.add(cell)
            seeds.append((lat, lng))
        if len(seeds) >= 30:
            break
    seeds = seeds or [(c_lat, c_lng)]
    by_mode: dict[str, list[str]] = {}
    for c in need.middles:
        for side in ("place1", "place2"):
            by_mode.setdefault(c[side]["mode"], [])
            if c[side]["place"] not in by_mode[c[side]["mode"]]:
                by_mode[c[side]["mode"]].append(c[side]["place"])
    # searches around the most central balanced points, as many as the step budget leaves
    # after the distance matrices (one per travel mode) and the answer
    searches = max(1, REFERENCE_CALLS - len(calls) - len(by_mode) - 1)
    found: dict[str, tuple[float, dict[str, Any]]] = {}
    for lat, lng in seeds[:searches]:
        for p in _candidates(calls, world, need, lat, lng, radius_km * 1000):
            found.setdefault(p["place_id"], (_exact_spread(world, need, parties, p), p))
        if found and min(v[0] for v in found.values()) <= threshold * 0.5:
            break
    ranked = sorted(found.values(), key=lambda v: v[0])
    if not ranked or ranked[0][0] > threshold:
        raise NotSolvable(f"no {need.query()!r} balances the travel times within {threshold}")
    # the travel times from every party to the most balanced candidates, one matrix per mode
    destinations = [f"place_id:{p['place_id']}" for _, p in ranked[:25]]
    for mode, origins in by_mode.items():
        _call(calls, world, "maps_distance_matrix", origins=origins, destinations=destinations, mode=mode)
    return [ranked[0][1]]


def _exact_spread(
    world: M.MapsWorld, need: _Need, parties: dict[str, M.Location], p: dict[str, Any]
) -> float:
    stop = world.locate(f"place_id:{p['place_id']}")
    worst = 0.0
    for c in need.middles:
        e1 = world.element(parties[c["place1"]["place"]], stop, c["place1"]["mode"])
        e2 = world.element(parties[c["place2"]["place"]], stop, c["place2"]["mode"])
        if e1["status"] != "OK" or e2["status"] != "OK" or e1["duration"]["value"] == 0:
            return math.inf
        d1, d2 = e1["duration"]["value"], e2["duration"]["value"]
        worst = max(worst, abs(d1 - d2) / d1)
    return worst


def _solve_direction(calls: _Calls, world: M.MapsWorld, need: _Need) -> list[dict[str, Any]]:
    refs = []
    for d in need.directions:
        g = _call(calls, world, "maps_geocode", address=d["place"])["location"]
        refs.append((g["lat"], g["lng"], d["direction"]))
    lat = sum(r[0] for r in refs) / len(refs)
    lng = sum(r[1] for r in refs) / len(refs)
    for r_lat, r_lng, direction in refs:
        if direction in ("north", "south"):
            lat = r_lat + (0.03 if direction == "north" else -0.03)
        else:
            lng = r_lng + (0.03 if direction == "east" else -0.03)

    def ok(p: dict[str, Any]) -> bool:
        q = p["location"]
        return all(
            {"north": q["lat"] > a, "south": q["lat"] < a, "east": q["lng"] > b, "west": q["lng"] < b}[d]
            for a, b, d in refs
        )

    out: list[dict[str, Any]] = []
    for radius in (5_000, 15_000):
        for p in _candidates(calls, world, need, lat, lng, radius):
            if ok(p) and p not in out:
                out.append(p)
        if len(out) >= need.count:
            return out[: need.count]
    raise NotSolvable(f"no {need.query()!r} lies in the asked directions")


def _solve_stops(task: dict[str, Any], world: M.MapsWorld) -> dict[str, Any]:
    evs = _evaluators(task)
    needs = _needs(evs)
    if not needs:
        raise NotSolvable("the task's evaluators name no stop list")
    calls = _Calls()
    answer: dict[str, list[dict[str, str]]] = {}
    taken: set[str] = set()
    for key, need in needs.items():
        if need.legs:
            places = _solve_legs(calls, world, need, taken)
        elif need.middles:
            places = _solve_middle(calls, world, need)
        elif need.directions:
            places = _solve_direction(calls, world, need)
        else:
            raise NotSolvable(f"no rule says where the stops of {key!r} are")
        answer[key] = [{"name": p["name"], "place id": p["place_id"]} for p in places]
    first = next(iter(needs))
    bad = json.loads(json.dumps(answer))
    pid = bad[first][0]["place id"]
    bad[first][0]["place id"] = pid[:-1] + ("A" if pid[-1] != "A" else "B")
    fails = [
        i
        for i, ev in enumerate(evs)
        if ev.get("op") in LOOKUP_OPS and _list_key(str(ev.get("func", ""))) == first
    ]
    return {"calls": calls, "answer": answer, "mistake": (bad, fails)}


# ---------------------------------------------------------------------------------------------
# solve
# ---------------------------------------------------------------------------------------------


def solve(task: dict[str, Any], seed: int) -> dict[str, Any]:
    """The reference of a location_navigation task (generated or an upstream file): the tool
    calls, the answer JSON, and a one-field mistake with the evaluator indices it fails.

    The answer is checked with every evaluator (except the :data:`KNOWN_UPSTREAM_DEFECTS` of
    the task) before it is returned.

    Raises:
        NotSolvable: the local world cannot answer the task (the message says why).
    """
    world = M.build_world(seed)
    evs = _evaluators(task)
    is_road_trip = any("get(routes)" in str(ev.get("func", "")) for ev in evs) or "routes" in (
        task.get("output_format") or {}
    )
    got = _solve_road_trip(task, world) if is_road_trip else _solve_stops(task, world)
    answer_text = json.dumps(got["answer"], ensure_ascii=False)
    skip = {i for (stem, i) in KNOWN_UPSTREAM_DEFECTS if stem == _stem(task)}
    ctx = EvalContext(seed=seed)
    for i, ev in enumerate(evs):
        if i in skip:
            continue
        res = evaluate(ev, answer_text, ctx, i)
        if not res.passed:
            raise NotSolvable(
                f"the local world gives no answer passing evaluator {i} ({ev.get('op')}): {res.reason}"
            )
    bad, fails = got["mistake"]
    return {
        "calls": got["calls"],
        "answer": answer_text,
        "mistake": {
            "calls": got["calls"],
            "answer": json.dumps(bad, ensure_ascii=False),
            "fails": sorted(fails),
        },
    }


# ---------------------------------------------------------------------------------------------
# Generated tasks (our own wording)
# ---------------------------------------------------------------------------------------------

_ROAD_TRIPS = [
    ("Johor Bahru", "Kuala Lumpur"),
    ("Los Angeles", "San Francisco"),
    ("Seattle", "Portland"),
    ("Paris", "Nice"),
    ("Osaka", "Tokyo"),
    ("Sydney", "Brisbane"),
    ("Brisbane", "Rockhampton"),
    ("Lyon", "Marseille"),
    ("Tusayan", "Estes Park"),
    ("Toronto", "Sudbury"),
    ("Bakersfield", "San Jose"),
    ("Paris", "Lyon"),
    ("Nagoya", "Toyama"),
    ("Flagstaff", "Moab"),
    ("Singapore", "Malacca"),
]
_ROUTES = [
    ("Merlion Park", "Petronas Twin Towers"),
    ("Sydney Opera House", "Holiday Inn Express & Suites Sunshine Coast"),
    ("Eiffel Tower", "Vieux Port de Marseille"),
    ("Griffith Observatory", "Golden Gate Bridge"),
    ("Osaka Castle", "Tokyo Tower"),
    ("Grand Canyon Plaza Hotel", "Elk Meadow Lodge and RV Resort"),
    ("Space Needle", "Portland"),
    ("Burj Khalifa", "Oryx Hotel"),
    ("Place Bellecour", "Chemin de Fer de Provence"),
    ("Empire State Building", "Willis Tower"),
    ("Yosemite Valley Visitor Center", "Union Square San Francisco"),
]
_MEETUPS = [
    ["Kent Ridge Hill Residences", "Symphony Suites"],
    ["J Gateway Condo", "Park Place Residences at PLQ"],
    ["Merlion Park", "Park Rosewood Suites", "Queenstown MRT Station"],
    ["Sheraton Jumeirah Beach Resort", "Oryx Hotel"],
    ["Signature 1 Hotel Barsha Heights", "Royal M Hotel by Gewan Abu Dhabi"],
    ["Eiffel Tower", "Louvre Museum"],
    ["Space Needle", "Pike Place Market"],
    ["Golden Gate Bridge", "Union Square San Francisco"],
    ["Tokyo Tower", "Shibuya Station"],
    ["Griffith Observatory", "Union Station Los Angeles"],
    ["Raffles Hotel", "Kallang MRT Station", "Kent Ridge Hill Residences"],
    ["Sheraton Jumeirah Beach Resort", "Burj Khalifa", "Oryx Hotel", "Royal M Hotel by Gewan Abu Dhabi"],
]
_DIRECTIONS = [
    (
        "Singapore",
        ["Singapore"],
        ["Kallang MRT Station", "Queenstown MRT Station", "Merlion Park", "Raffles Hotel"],
    ),
    ("Paris", ["Paris", "France"], ["Eiffel Tower", "Arc de Triomphe", "Louvre Museum"]),
    ("Rome", ["Rome", "Roma", "RM"], ["Villa Borghese", "Colosseum"]),
    (
        "New York",
        ["NY", "New York"],
        ["Empire State Building", "Queensbridge Park", "NewYork-Presbyterian/Weill Cornell Medical Center"],
    ),
    ("Tokyo", ["Tokyo", "Japan"], ["Tokyo Tower", "Shibuya Station"]),
    ("Seattle", ["Seattle", "WA"], ["Space Needle", "Pike Place Market"]),
    (
        "Dubai",
        ["Dubai"],
        ["Burj Khalifa", "Sheraton Jumeirah Beach Resort", "Signature 1 Hotel Barsha Heights"],
    ),
]
_DIR_KINDS = [
    ("library", ["library"]),
    ("hospital", ["hospital"]),
    ("museum", ["museum"]),
    ("swimming pool", ["swim"]),
    ("park", ["park"]),
]
_TYPE_SETS = [
    ["restaurant"],
    ["cafe"],
    ["cafe", "hotel"],
    ["restaurant", "gas_station"],
    ["restaurant", "hotel", "gas_station"],
    ["hotel"],
    ["cafe", "restaurant"],
    ["cafe", "hotel", "park"],
]
_STOP_FORMAT = [{"name": "NAME", "place id": "Place ID"}]
_PATTERN = ["trip", "route", "meet", "dir", "trip", "route", "meet", "two", "trip", "dir", "route", "meet"]


def _landmark(name: str) -> M.Landmark | None:
    return next((lm for lm in M.LANDMARK_LIST if lm.name == name), None)


def _addr(name: str) -> str:
    lm = _landmark(name)
    if lm is not None:
        return lm.address
    town = M.find_town(name)
    assert town is not None, name
    return town.tail()


def _ordinal_points(n: int) -> str:
    return {
        1: "halfway point",
        2: "two points that split it into thirds",
        3: "three points that split it into quarters",
        4: "four points that split it into fifths",
    }.get(n, f"{n} evenly spaced points")


def _type_words(types: list[str]) -> str:
    words = [t.replace("_", " ") for t in types]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _city_values(name: str) -> list[str]:
    town = M.find_town(name)
    extra = list(town.aliases) if town else []
    return [name, f"{name} City", *extra]


def _gen_trip(r: random.Random, i: int) -> dict[str, Any]:
    start, dest = r.choice(_ROAD_TRIPS)
    variant = ("full", "must", "avoid", "rest", "views", "full")[(i // 4) % 6]
    world_free = M.build_world(0)
    a, b = world_free.locate(start), world_free.locate(dest)
    assert a is not None and b is not None
    corridor = world_free.corridor(a, b)
    n_cities = min(r.randint(2, 5), max(2, len(corridor) - 1))
    n_routes = r.randint(1, 3)
    n_rest = r.randint(1, 2) if variant in ("full", "rest", "must", "avoid") else 0
    n_views = r.randint(1, 2) if variant in ("full", "views", "avoid") else 0
    if variant == "full":
        n_cities = max(n_cities, 2)
    route_fmt: dict[str, Any] = {
        "route_id": "1",
        "route_name": "ROUTE NAME",
        "cities_visited": ["[City 1]", "[City 2]", "..."],
    }
    if n_rest:
        route_fmt["rest_stops"] = [
            {
                "city": "[City]",
                "rest_stop_id": "1",
                "name": "[Name]",
                "address": "[Address]",
                "amenities": ["[Amenity]"],
            }
        ]
    if n_views:
        route_fmt["scenic_viewpoints"] = [
            {
                "city": "[City]",
                "viewpoint_id": "1",
                "name": "[Name]",
                "address": "[Address]",
                "elevation_meters": "[Elevation in meters]",
                "description": "[Description]",
            }
        ]
    evs: list[dict[str, Any]] = [
        {"func": "json"},
        {"func": "json -> get(routes) -> len", "op": "=", "value": n_routes},
        {
            "func": "json",
            "op": "google_maps.city_name_match",
            "op_args": {"key": "starting_city", "values": _city_values(start)},
        },
        {
            "func": "json",
            "op": "google_maps.city_name_match",
            "op_args": {"key": "destination_city", "values": _city_values(dest)},
        },
        {
            "func": "json -> get(routes) -> foreach -> get(cities_visited) -> len",
            "op": "=",
            "value": n_cities,
        },
    ]
    parts = [
        f"I am driving from '{start}' to '{dest}' and want to pass through exactly {n_cities} towns "
        "on the way "
        f"(not counting the two ends). Please give me {n_routes} driving route option(s)."
    ]
    if n_rest:
        evs.append(
            {"func": "json -> get(routes) -> foreach -> get(rest_stops) -> len", "op": "=", "value": n_rest}
        )
        evs.append({"func": "json", "op": "google_maps.places_in_cities_visited", "op_args": "rest_stops"})
        parts.append(
            f"For every route, list {n_rest} rest stop(s) located in the towns the route passes through."
        )
    if n_views:
        evs.append(
            {
                "func": "json -> get(routes) -> foreach -> get(scenic_viewpoints) -> len",
                "op": "=",
                "value": n_views,
            }
        )
        evs.append(
            {"func": "json", "op": "google_maps.places_in_cities_visited", "op_args": "scenic_viewpoints"}
        )
        evs.append({"func": "json", "op": "google_maps.validate_elevation_meters"})
        parts.append(
            f"Also list {n_views} scenic viewpoint(s) per route in those towns, "
            "each with its elevation in metres."
        )
    if variant == "full" and n_rest and n_views and n_cities >= 2:
        evs.append({"func": "json", "op": "google_maps.city_different_from_rest_stops"})
        parts.append("At least one viewpoint town must be a town without any of the rest stops.")
    pick = corridor[len(corridor) // 2] if corridor else None
    if variant == "must" and pick is not None:
        evs.append(
            {
                "func": "json",
                "op": "google_maps.place_in_cities_visited_of_routes",
                "op_args": [pick.name, f"{pick.name} City"],
            }
        )
        parts.append(f"Every route has to stop in '{pick.name}', where we are meeting family.")
    if variant == "avoid" and pick is not None:
        evs.append(
            {
                "func": "json",
                "op": "google_maps.place_not_in_cities_visited_of_routes",
                "op_args": [pick.name],
            }
        )
        parts.append(f"Please keep '{pick.name}' off every route.")
    if variant == "rest" and n_rest >= 2 and n_cities >= 2:
        evs.append(
            {"func": "json", "op": "google_maps.at_least_unique_city_of_rest_stops_in_routes", "op_args": 2}
        )
        parts.append("The rest stops of a route should be in two different towns.")
    return {
        "category": "general",
        "question": " ".join(parts),
        "output_format": {
            "starting_city": "[Starting City]",
            "destination_city": "[Destination City]",
            "routes": [route_fmt],
        },
        "evaluators": evs,
    }


def _stop_evs(key: str, count: int, types: list[str], rating: float | None) -> list[dict[str, Any]]:
    get = f"json -> get({key})"
    evs = [
        {"func": f"{get} -> len", "op": "=", "value": count},
        {"func": get, "op": "google_maps.stop_include_keys", "op_args": {"keys": ["name", "place id"]}},
        {"func": get, "op": "google_maps.is_a_validate_stop"},
        {"func": get, "op": "google_maps.validate_stop_type", "op_args": types},
    ]
    if rating is not None:
        evs.append({"func": get, "op": "google_maps.validate_stop_rating", "op_args": rating})
    return evs


def _leg_evs(key: str, p1: str, p2: str) -> list[dict[str, Any]]:
    args = {"place1": _addr(p1), "place2": _addr(p2), "mode": "driving", "threshold": 0.1}
    return [
        {
            "func": f"json -> get({key})",
            "op": "google_maps.compare_distance_between_stops",
            "op_args": dict(args),
        },
        {
            "func": f"json -> get({key})",
            "op": "google_maps.compare_distance_with_and_wo_stops",
            "op_args": dict(args),
        },
    ]


def _gen_route(r: random.Random, i: int, two: bool) -> dict[str, Any]:
    p1, p2 = r.choice(_ROUTES)
    n = r.randint(1, 3)
    types = r.choice(_TYPE_SETS)
    rating = r.choice([None, 4.1999, 4.1999])
    keys = ["route_1_stops", "route_2_stops"] if two else ["stops"]
    evs: list[dict[str, Any]] = [{"func": "json"}]
    question = (
        f"Plan a drive from {p1} to {p2} with exactly {n} stop(s) at the place(s) closest to the "
        f"{_ordinal_points(n)} of the route. Each stop must be a {_type_words(types)}"
    )
    question += " rated 4.2 or higher." if rating else "."
    evs += _stop_evs(keys[0], n, types, rating) + _leg_evs(keys[0], p1, p2)
    if two:
        n2 = r.randint(1, 2)
        question += (
            f" Then plan the drive back from {p2} to {p1} with {n2} stop(s) placed the same way, "
            f"same kind and rating rule, none of them reused from the first drive."
        )
        evs += _stop_evs(keys[1], n2, types, rating) + _leg_evs(keys[1], p2, p1)
        evs.append({"func": "json", "op": "google_maps.are_stops_different"})
        fmt: dict[str, Any] = {k: _STOP_FORMAT for k in keys}
    else:
        fmt = {"stops": _STOP_FORMAT}
    question += " Give each stop's name and Place ID."
    return {"category": "general", "question": question, "output_format": fmt, "evaluators": evs}


def _gen_meet(r: random.Random, i: int) -> dict[str, Any]:
    group = r.choice(_MEETUPS)
    kind = r.choice(["cafe", "restaurant"])
    rating = r.choice([None, 4.1999])
    walker = (
        group[1]
        if len(group) == 2
        and r.random() < 0.3
        and M.haversine_km(
            *(lambda a, b: (a.lat, a.lng, b.lat, b.lng))(_landmark(group[0]), _landmark(group[1]))
        )
        < 12
        else None
    )
    evs: list[dict[str, Any]] = [{"func": "json"}] + _stop_evs("stops", 1, [kind], rating)
    for x in range(len(group)):
        for y in range(x + 1, len(group)):
            evs.append(
                {
                    "func": "json -> get(stops)",
                    "op": "google_maps.compare_time_of_middle_point",
                    "op_args": {
                        "place1": {
                            "place": _addr(group[x]),
                            "mode": "walking" if group[x] == walker else "driving",
                        },
                        "place2": {
                            "place": _addr(group[y]),
                            "mode": "walking" if group[y] == walker else "driving",
                        },
                        "threshold": 0.1,
                    },
                }
            )
    who = ", ".join(group[:-1]) + " and " + group[-1]
    how = f" ({walker} will walk, the others drive)" if walker else " (everyone drives)"
    q = (
        f"Friends based at {who} want one {kind} to meet at where each one's travel time{how} is as even as "
        f"possible (within 10% of each other)."
    )
    if rating:
        q += " The place needs a rating of at least 4.2."
    q += " Report its name and Place ID."
    return {"category": "general", "question": q, "output_format": {"stops": _STOP_FORMAT}, "evaluators": evs}


def _gen_dir(r: random.Random, i: int) -> dict[str, Any]:
    city, country_names, marks = r.choice(_DIRECTIONS)
    kind, words = r.choice(_DIR_KINDS)
    m1, m2 = r.sample(marks, 2)
    d1, d2 = r.choice(["north", "south"]), r.choice(["east", "west"])
    evs: list[dict[str, Any]] = [
        {"func": "json"},
        {"func": "json -> get(stops) -> len", "op": "=", "value": 1},
        {
            "func": "json -> get(stops)",
            "op": "google_maps.stop_include_keys",
            "op_args": {"keys": ["name", "place id"]},
        },
        {"func": "json -> get(stops)", "op": "google_maps.validate_location", "op_args": words},
        {"func": "json -> get(stops)", "op": "google_maps.is_a_validate_stop"},
        {"func": "json -> get(stops)", "op": "google_maps.places_in_countries", "op_args": country_names}
        if len(country_names) > 1
        else {
            "func": "json -> get(stops)",
            "op": "google_maps.places_in_country",
            "op_args": country_names[0],
        },
        {
            "func": "json -> get(stops)",
            "op": "google_maps.validate_direction_of_two_places",
            "op_args": [{"place": _addr(m1), "direction": d1}, {"place": _addr(m2), "direction": d2}],
        },
    ]
    q = (
        f"Find one {kind} in {city} lying {d1} of {m1} (by latitude) and {d2} of {m2} (by longitude). "
        f"Give its name and Place ID."
    )
    return {"category": "general", "question": q, "output_format": {"stops": _STOP_FORMAT}, "evaluators": evs}


class _Generator:
    """The generated tasks of one seed, made in order and kept (a longer list extends the
    shorter one, so a smaller count is always a prefix)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(f"egi-mcp-universe:{DOMAIN}:{seed}")
        self.tasks: list[str] = []
        self.attempts = 0

    def upto(self, count: int) -> list[str]:
        while len(self.tasks) < count:
            self.attempts += 1
            if self.attempts > count * 6 + 30:
                raise RuntimeError(
                    f"{DOMAIN}: could not generate {count} solvable tasks for seed {self.seed}"
                )
            k = len(self.tasks)
            shape = _PATTERN[k % len(_PATTERN)]
            if shape == "trip":
                task = _gen_trip(self.rng, k)
            elif shape == "meet":
                task = _gen_meet(self.rng, k)
            elif shape == "dir":
                task = _gen_dir(self.rng, k)
            else:
                task = _gen_route(self.rng, k, two=shape == "two")
            task.update({"mcp_servers": [{"name": SERVER}], "use_specified_server": True, "cleanups": []})
            task["id"] = f"{DOMAIN}-{k:03d}"
            try:
                task["reference"] = solve(task, self.seed)
            except NotSolvable:
                continue
            if len(task["reference"]["calls"]) > REFERENCE_CALLS:
                continue  # an agent could not make these calls and answer within its steps
            self.tasks.append(json.dumps(task))
        return self.tasks[:count]


@lru_cache(maxsize=8)
def _generator(seed: int) -> _Generator:
    return _Generator(seed)


def generate_tasks(seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` tasks of our own wording in upstream's task-file format, each with its
    ``reference`` (:func:`solve`); deterministic for the seed, a smaller count a prefix.

    Candidate tasks the world of the seed cannot answer are skipped (deterministically).
    """
    if count <= 0:
        return []
    return [json.loads(t) for t in _generator(seed).upto(count)]
