"""MCP-Universe's location_navigation domain: the ``google_maps.*`` ops on hand-made answers,
the reference solver on every upstream task file and on our generated tasks (every evaluator
passes; the one-field mistake fails exactly the listed evaluators, with their reasons), and
the solver's tool calls over a real stdio server.

Upstream task files are found as :mod:`tests.suites.mcp_universe.upstream` says; those tests
are skipped when the folder is absent.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import suites.mcp_universe.scorer.ops  # noqa: F401  (registers the domain ops)
from suites._common.mcp_servers import maps as M
from suites.mcp_universe.data.domains import NotSolvable
from suites.mcp_universe.data.domains import location_navigation as L
from suites.mcp_universe.scorer.evaluator import OPS, EvalContext, EvaluatorSpecError, evaluate
from tests.suites.mcp_universe import upstream

TASK_DIR = upstream.TASK_ROOT / "location_navigation"
UPSTREAM_FILES = upstream.task_files("location_navigation")
needs_upstream = upstream.needs_upstream("location_navigation")
SEED = 42
CTX = EvalContext(seed=SEED)
WORLD = M.build_world(SEED)

MISTAKE_REASONS = {
    "google_maps.validate_elevation_meters": "the returned elevation of ",
    "google_maps.place_in_cities_visited_of_routes": "city must be in all routes",
    "google_maps.place_not_in_cities_visited_of_routes": "must not be in all routes",
    "google_maps.city_name_match": "The city name doesn't match",
    "google_maps.is_a_validate_stop": "doesn't exists",
    "google_maps.validate_stop_type": "Can't find the place",
    "google_maps.validate_stop_rating": "Can't find the place",
    "google_maps.places_in_country": "Can't find the place",
    "google_maps.places_in_countries": "Can't find the place",
    "google_maps.validate_direction_of_two_places": "Can't find the place",
    "google_maps.compare_time_of_middle_point": "can't measure distance or duration",
    "google_maps.compare_distance_between_stops": "can't measure distance or time",
    "google_maps.compare_distance_with_and_wo_stops": "can't measure distance or time",
}
"""The reason each op gives for the solver's mistake (a changed city, elevation or place id)."""


def run(ev: dict[str, Any], answer: Any) -> tuple[bool, str]:
    res = evaluate(ev, answer if isinstance(answer, str) else json.dumps(answer), CTX)
    return res.passed, res.reason


def check_reference(task: dict[str, Any], ref: dict[str, Any], skip: set[int] = frozenset()) -> None:
    evs = task["evaluators"]
    good = [evaluate(ev, ref["answer"], CTX, i) for i, ev in enumerate(evs)]
    assert [r.index for r in good if not r.passed] == sorted(skip), [r.reason for r in good if not r.passed]
    bad = [evaluate(ev, ref["mistake"]["answer"], CTX, i) for i, ev in enumerate(evs)]
    failed = [r.index for r in bad if not r.passed]
    assert failed == sorted(set(ref["mistake"]["fails"]) | skip)
    assert ref["mistake"]["fails"], "the mistake must fail at least one evaluator"
    for r in bad:
        if not r.passed and r.index not in skip:
            assert MISTAKE_REASONS[r.op] in r.reason, (r.op, r.reason)
    assert len(json.loads(ref["answer"])) == len(json.loads(ref["mistake"]["answer"]))
    assert all(c["server"] == "google-maps" and c["tool"].startswith("maps_") for c in ref["calls"])
    # it fits the agent's steps (less the answer's) and never repeats a lookup it already made
    assert len(ref["calls"]) <= L.REFERENCE_CALLS == 19
    made = [json.dumps([c["tool"], c["arguments"]], sort_keys=True) for c in ref["calls"]]
    assert len(set(made)) == len(made), "a lookup repeated"


# ---------------------------------------------------------------------------------------------
# Upstream task files and generated tasks
# ---------------------------------------------------------------------------------------------


@needs_upstream
def test_every_upstream_file_uses_only_known_ops():
    ops = {ev.get("op") for f in UPSTREAM_FILES for ev in json.loads(f.read_text())["evaluators"]}
    maps_ops = sorted(o for o in ops if o and o.startswith("google_maps."))
    assert len(UPSTREAM_FILES) == 24 and len(maps_ops) == 18
    assert all(o in OPS for o in ops if o)


@needs_upstream
@pytest.mark.parametrize("path", UPSTREAM_FILES, ids=lambda p: p.stem)
def test_upstream_task_solved_and_mistake_fails_its_evaluators(path):
    task = json.loads(path.read_text())
    task["id"] = path.stem
    ref = L.solve(task, SEED)
    skip = {i for (stem, i) in L.KNOWN_UPSTREAM_DEFECTS if stem == path.stem}
    check_reference(task, ref, skip)


@needs_upstream
def test_upstream_0017_defect_is_the_only_failure_and_says_why():
    task = json.loads((TASK_DIR / "google_maps_task_0017.json").read_text())
    task["id"] = "google_maps_task_0017"
    ref = L.solve(task, SEED)
    res = evaluate(task["evaluators"][14], ref["answer"], CTX, 14)
    assert not res.passed and res.reason.startswith("doesn't match the required distance: ")
    task["id"] = "renamed"  # without the defect entry the solver refuses, naming the evaluator
    with pytest.raises(NotSolvable, match="evaluator 14 "):
        L.solve(task, SEED)


def _tools(ref: dict[str, Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in ref["calls"]:
        out[c["tool"]] = out.get(c["tool"], 0) + 1
    return out


@needs_upstream
def test_upstream_references_batch_their_lookups():
    """The solver plans as an agent with 19 tool calls would: one elevation call for every
    viewpoint, one search per stop for every kind the stops may be, the way back's directions
    and an end's geocode not asked twice, one distance matrix per travel mode."""

    def ref(stem: str) -> dict[str, Any]:
        task = json.loads((TASK_DIR / f"{stem}.json").read_text())
        task["id"] = stem
        return L.solve(task, SEED)

    trip = ref("google_maps_task_0005")  # 3 routes x 3 viewpoints: was 22 calls (9 elevations)
    assert len(trip["calls"]) == 14
    (elev,) = [c for c in trip["calls"] if c["tool"] == "maps_elevation"]
    views = [v for r in json.loads(trip["answer"])["routes"] for v in r["scenic_viewpoints"]]
    assert len(views) == 9 and len(elev["arguments"]["locations"]) == len({v["name"] for v in views})
    there_and_back = ref("google_maps_task_0020")  # 5 + 3 stops: was 49 calls (41 searches)
    assert _tools(there_and_back) == {
        "maps_directions": 1,
        "maps_geocode": 2,
        "maps_search_places": 8,
        "maps_distance_matrix": 2,
    }
    queries = {c["arguments"]["query"] for c in there_and_back["calls"] if c["tool"] == "maps_search_places"}
    assert queries == {"restaurant or hotel or gas station", "cafe or restaurant"}
    sparse = ref("google_maps_task_0017")  # a stop where places are sparse: was 26 calls
    assert len(sparse["calls"]) == 17
    meet = ref("google_maps_task_0028")  # one party walks: one matrix per mode, to every candidate
    matrices = [c["arguments"] for c in meet["calls"] if c["tool"] == "maps_distance_matrix"]
    assert [m["mode"] for m in matrices] == ["driving", "walking"]
    chosen = "place_id:" + json.loads(meet["answer"])["stops"][0]["place id"]
    assert all(m["destinations"][0] == chosen and len(m["destinations"]) == 6 for m in matrices)


def test_generated_road_trips_ask_every_elevation_at_once(generated):
    trips = [t for t in generated if "scenic_viewpoints" in t["output_format"].get("routes", [{}])[0]]
    assert len(trips) >= 4
    for t in trips:
        (elev,) = [c for c in t["reference"]["calls"] if c["tool"] == "maps_elevation"]
        heights = {(p["latitude"], p["longitude"]) for p in elev["arguments"]["locations"]}
        assert len(heights) == len(elev["arguments"]["locations"])
        views = [v for r in json.loads(t["reference"]["answer"])["routes"] for v in r["scenic_viewpoints"]]
        assert len(heights) <= len(views)


@pytest.fixture(scope="module")
def generated():
    return L.generate_tasks(SEED, 45)


def test_generated_tasks_cover_the_shapes_and_ops(generated):
    assert len(generated) == 45
    assert [t["id"] for t in generated[:3]] == [
        "location_navigation-000",
        "location_navigation-001",
        "location_navigation-002",
    ]
    ops = {ev.get("op") for t in generated for ev in t["evaluators"]}
    for op in (
        "city_name_match",
        "places_in_cities_visited",
        "validate_elevation_meters",
        "city_different_from_rest_stops",
        "place_in_cities_visited_of_routes",
        "place_not_in_cities_visited_of_routes",
        "stop_include_keys",
        "is_a_validate_stop",
        "validate_stop_type",
        "validate_stop_rating",
        "compare_distance_between_stops",
        "compare_distance_with_and_wo_stops",
        "are_stops_different",
        "compare_time_of_middle_point",
        "validate_location",
        "places_in_country",
        "places_in_countries",
        "validate_direction_of_two_places",
    ):
        assert f"google_maps.{op}" in ops, op
    for t in generated:
        assert t["mcp_servers"] == [{"name": "google-maps"}] and t["use_specified_server"] is True
        assert set(t) >= {
            "category",
            "question",
            "output_format",
            "evaluators",
            "cleanups",
            "id",
            "reference",
        }


def test_generated_tasks_solved_and_mistakes_fail_their_evaluators(generated):
    for task in generated:
        check_reference(task, task["reference"])
        assert L.solve(task, SEED) == task["reference"]


def test_generation_is_deterministic_and_prefix_stable(generated):
    assert L.generate_tasks(SEED, 5) == generated[:5]
    other = L.generate_tasks(SEED + 1, 3)
    assert [t["question"] for t in other] != [t["question"] for t in generated[:3]]
    assert L.generate_tasks(SEED, 0) == []


def test_solver_calls_succeed_over_stdio(generated):
    from pytest_egi.mcp.client import McpServer
    from suites._common.mcp_servers import server_spec

    shapes = {}
    for t in generated:
        keys = tuple(sorted(t["output_format"]))
        shapes.setdefault((keys, t["evaluators"][-1].get("op")), t)
    server = McpServer(server_spec("maps", SEED, timeout_s=30, name="google-maps"))
    server.start()
    try:
        n = 0
        for t in list(shapes.values())[:6]:
            for c in t["reference"]["calls"]:
                res = server.call_tool(c["tool"], c["arguments"])
                assert not res.is_error, (c, res.text)
                n += 1
        assert n >= 20
        # the same world answers the same way over the wire
        c = next(c for c in generated[1]["reference"]["calls"] if c["tool"] == "maps_search_places")
        assert server.call_tool(c["tool"], c["arguments"]).json() == M.search_places(WORLD, **c["arguments"])
    finally:
        server.close()


def test_solver_reports_a_task_the_world_cannot_answer():
    task = {
        "output_format": {"starting_city": "", "destination_city": "", "routes": []},
        "evaluators": [
            {
                "func": "json",
                "op": "google_maps.city_name_match",
                "op_args": {"key": "starting_city", "values": ["Atlantis"]},
            },
            {
                "func": "json",
                "op": "google_maps.city_name_match",
                "op_args": {"key": "destination_city", "values": ["Paris"]},
            },
        ],
    }
    with pytest.raises(NotSolvable, match="no town called 'Atlantis'"):
        L.solve(task, SEED)


# ---------------------------------------------------------------------------------------------
# Ops on hand-made answers
# ---------------------------------------------------------------------------------------------


def places(town: str, kind: str) -> list[dict[str, Any]]:
    return [p for p in WORLD.places(M.find_town(town)) if p["kind"] == kind]


def stop(p: dict[str, Any]) -> dict[str, str]:
    return {"name": p["name"], "place id": p["place_id"]}


STOPS = "json -> get(stops)"


def test_op_kinds():
    kinds = {n: op.kind for n, op in OPS.items() if n.startswith("google_maps.")}
    assert len(kinds) == 23
    assert kinds["google_maps.stop_include_keys"] == "format"
    assert kinds["google_maps.city_name_match"] == "static"
    assert (
        kinds["google_maps.is_a_validate_stop"]
        == kinds["google_maps.compare_time_of_middle_point"]
        == "dynamic"
    )


def test_city_name_match():
    ev = {
        "func": "json",
        "op": "google_maps.city_name_match",
        "op_args": {"key": "starting_city", "values": ["Johor Bahru", "JB"]},
    }
    assert run(ev, {"starting_city": "johor bahru"}) == (True, "")
    assert run(ev, {"starting_city": "JB"})[0]
    passed, reason = run(ev, {"starting_city": ""})  # upstream: "" is in every string
    assert not passed and reason.startswith("The city name doesn't match: starting_city is ''")
    assert not run(ev, {"starting_city": "Bah"})[0]  # not a whole word
    assert run(ev, {"destination_city": "JB"}) == (
        False,
        "Execution error: the answer has no 'starting_city'",
    )


def test_stop_include_keys_needs_objects():
    ev = {"func": STOPS, "op": "google_maps.stop_include_keys", "op_args": {"keys": ["name", "place id"]}}
    assert run(ev, {"stops": [{"name": "x", "place id": "y"}]}) == (True, "")
    assert run(ev, {"stops": [{"name": "x"}]}) == (False, "place id must in stop (stop 1)")
    passed, reason = run(ev, {"stops": ["name, place id"]})  # upstream's substring test passed this
    assert not passed and reason.startswith("stop 1 must be an object")
    assert run(ev, {"stop": []}) == (False, "Execution error: the stops must be a list, got None")


def test_is_a_validate_stop_and_unknown_ids():
    cafe = places("Kluang", "cafe")[0]
    ev = {"func": STOPS, "op": "google_maps.is_a_validate_stop"}
    assert run(ev, {"stops": [stop(cafe)]}) == (True, "")
    assert run(ev, {"stops": [{"name": "x", "place id": "ChIJnotreal"}]}) == (
        False,
        "the place ChIJnotreal doesn't exists",
    )
    assert run(ev, {"stops": [{"name": "x"}]})[1].startswith(
        "Execution error: the stop {'name': 'x'} has no 'place id'"
    )


def test_validate_stop_type_and_rating_thresholds():
    cafe = next(p for p in places("Kluang", "cafe") if p["rating"] == 4.2)
    gas = places("Kluang", "gas_station")[0]
    ev_type = {
        "func": STOPS,
        "op": "google_maps.validate_stop_type",
        "op_args": ["restaurant", "gas station"],
    }
    assert run(ev_type, {"stops": [stop(gas)]}) == (True, "")  # "gas station" means gas_station
    passed, reason = run(ev_type, {"stops": [stop(cafe)]})
    assert not passed and reason.startswith(f"The type of the place is not valid: {cafe['name']} is ['cafe'")
    wrong_name = {"name": "Some Other Name", "place id": cafe["place_id"]}
    assert run(ev_type, {"stops": [wrong_name]})[1] == (
        f"Can't find the place: Some Other Name {cafe['place_id']} (that id is {cafe['name']!r})"
    )
    ev_rating = {"func": STOPS, "op": "google_maps.validate_stop_rating", "op_args": 4.1999}
    assert run(ev_rating, {"stops": [stop(cafe)]}) == (True, "")  # 4.2 just inside
    ev_rating["op_args"] = 4.2001
    assert run(ev_rating, {"stops": [stop(cafe)]}) == (
        False,
        f"Rating of stop {cafe['name']} is 4.2, while the required rating is 4.2001",
    )


def test_validate_location_checks_every_stop():
    pool = places("Singapore", "swimming_pool")[0]
    cafe = places("Singapore", "cafe")[0]
    ev = {"func": STOPS, "op": "google_maps.validate_location", "op_args": ["swim"]}
    assert run(ev, {"stops": [stop(pool)]}) == (True, "")
    passed, reason = run(ev, {"stops": [stop(pool), stop(cafe)]})  # upstream passed on the first stop
    assert not passed and reason == f"The location doesn't match: {cafe['name']!r} contains none of ['swim']"


def test_places_in_country_whole_words_and_the_pairs_typo():
    hospital = places("Paris", "hospital")[0]
    ev = {"func": STOPS, "op": "google_maps.places_in_country", "op_args": "Pairs"}
    assert run(ev, {"stops": [stop(hospital)]}) == (True, "")  # upstream task 0034's misspelling of Paris
    ev["op_args"] = "Rome"
    assert run(ev, {"stops": [stop(hospital)]}) == (False, f"{hospital['address']} is not in Rome")
    ger = places("Singapore", "cafe")[0]
    ev = {
        "func": STOPS,
        "op": "google_maps.places_in_countries",
        "op_args": ["ore"],
    }  # a fragment of "Singapore"
    assert not run(ev, {"stops": [stop(ger)]})[0]
    ny = places("New York", "library")[0]
    ev["op_args"] = ["NY", "New York"]
    assert run(ev, {"stops": [stop(ny)]}) == (True, "")
    passed, reason = run(ev, {"stops": [stop(ny), stop(ger)]})  # upstream stopped at the first stop
    assert not passed and reason.startswith("The place is not in any of the countries: ")


def test_compare_time_of_middle_point():
    a, b = "Kent Ridge Hill Residences", "Symphony Suites"
    la, lb = WORLD.locate(a), WORLD.locate(b)

    def spread(p: dict[str, Any]) -> float:
        d1 = WORLD.element(la, WORLD.locate(f"place_id:{p['place_id']}"), "driving")["duration"]["value"]
        d2 = WORLD.element(lb, WORLD.locate(f"place_id:{p['place_id']}"), "driving")["duration"]["value"]
        return abs(d1 - d2) / d1

    cafes = sorted(places("Singapore", "cafe"), key=spread)
    inside = cafes[0]
    outside = next(p for p in cafes if 0.1 < spread(p) < 0.2)
    ev = {
        "func": STOPS,
        "op": "google_maps.compare_time_of_middle_point",
        "op_args": {
            "place1": {"place": a, "mode": "driving"},
            "place2": {"place": b, "mode": "driving"},
            "threshold": 0.1,
        },
    }
    assert run(ev, {"stops": [stop(inside)]}) == (True, "")
    passed, reason = run(ev, {"stops": [stop(outside)]})
    assert not passed and reason.startswith("doesn't match the required duration: ") and "> 0.1)" in reason
    # a threshold just above the spread passes, just below fails
    ev["op_args"]["threshold"] = spread(outside) + 1e-9
    assert run(ev, {"stops": [stop(outside)]}) == (True, "")
    ev["op_args"]["threshold"] = spread(outside) - 1e-6
    assert not run(ev, {"stops": [stop(outside)]})[0]
    # upstream asserted one stop; we fail with a reason
    assert run(ev, {"stops": [stop(inside), stop(outside)]}) == (
        False,
        "the length of stops should be one, got 2",
    )
    bad = {"name": "x", "place id": "ChIJnope"}
    assert run(ev, {"stops": [bad]})[1].startswith("can't measure distance or duration between ")
    ev["op_args"]["place1"]["place"] = "Nowhere at all"
    with pytest.raises(EvaluatorSpecError, match="cannot locate 'Nowhere at all'"):
        run(ev, {"stops": [stop(inside)]})


def test_compare_distance_ops():
    a, b = "Merlion Park", "Petronas Twin Towers"
    la, lb = WORLD.locate(a), WORLD.locate(b)
    mid = min(
        (p for t in ("Muar", "Tangkak", "Segamat") for p in places(t, "restaurant")),
        key=lambda p: abs(
            M.haversine_km(la.lat, la.lng, p["lat"], p["lng"])
            - M.haversine_km(lb.lat, lb.lng, p["lat"], p["lng"])
        ),
    )
    args = {"place1": a, "place2": b, "mode": "driving", "threshold": 0.1}
    between = {"func": STOPS, "op": "google_maps.compare_distance_between_stops", "op_args": args}
    detour = {"func": STOPS, "op": "google_maps.compare_distance_with_and_wo_stops", "op_args": args}
    assert run(between, {"stops": [stop(mid)]}) == (True, "")
    assert run(detour, {"stops": [stop(mid)]}) == (True, "")
    near_start = places("Johor Bahru", "restaurant")[0]
    assert run(between, {"stops": [stop(near_start)]})[1].startswith(
        "doesn't match the required distance: legs "
    )
    far = places("Kuala Lumpur", "restaurant")[0]
    assert run(detour, {"stops": [stop(far), stop(near_start)]})[1].startswith(
        "doesn't match the required distance: "
    )
    assert run(between, {"stops": []}) == (False, "there is no intermediate stop, the input should be a list")
    assert run(between, {"stops": [stop(mid), stop(mid)]}) == (
        False,
        "doesn't match the required distance: a leg has zero length",
    )


def test_direction_op():
    ref_n, ref_e = "Kallang MRT Station", "Queenstown MRT Station"
    ln, le = WORLD.locate(ref_n), WORLD.locate(ref_e)
    pools = places("Singapore", "swimming_pool")
    good = next(p for p in pools if p["lat"] < ln.lat and p["lng"] > le.lng)
    wrong = next(p for p in pools if p["lat"] > ln.lat and p["lng"] > le.lng)
    ev = {
        "func": STOPS,
        "op": "google_maps.validate_direction_of_two_places",
        "op_args": [{"place": ref_n, "direction": "south"}, {"place": ref_e, "direction": "east"}],
    }
    assert run(ev, {"stops": [stop(good)]}) == (True, "")
    passed, reason = run(ev, {"stops": [stop(wrong)]})
    assert not passed and reason.endswith(f"{wrong['name']} is not south of {ln.address}")
    ev["op_args"][0]["direction"] = "up"
    with pytest.raises(EvaluatorSpecError, match="unknown direction 'up'"):
        run(ev, {"stops": [stop(good)]})


def road_trip(**route: Any) -> dict[str, Any]:
    base = {
        "cities_visited": ["Kluang", "Muar"],
        "rest_stops": [{"city": "Kluang"}],
        "scenic_viewpoints": [{"city": "Muar"}],
    }
    base.update(route)
    return {"starting_city": "Johor Bahru", "destination_city": "Kuala Lumpur", "routes": [base]}


def test_road_trip_static_ops():
    ev = {"func": "json", "op": "google_maps.places_in_cities_visited", "op_args": "rest_stops"}
    assert run(ev, road_trip()) == (True, "")
    assert run(ev, road_trip(rest_stops=[{"city": "Segamat"}]))[1] == (
        "city[Segamat] is not in rest_stops[['Kluang', 'Muar']] (route 1)"
    )
    diff = {"func": "json", "op": "google_maps.city_different_from_rest_stops"}
    assert run(diff, road_trip()) == (True, "")
    # viewpoints in a subset of the rest-stop towns: upstream passed (the sets differ)
    subset = road_trip(
        rest_stops=[{"city": "Kluang"}, {"city": "Muar"}], scenic_viewpoints=[{"city": "Muar"}]
    )
    passed, reason = run(diff, subset)
    assert not passed and reason.endswith("no viewpoint city differs from the rest-stop cities (route 1)")
    must = {
        "func": "json",
        "op": "google_maps.place_in_cities_visited_of_routes",
        "op_args": ["Toyama", "TOY"],
    }
    assert run(must, road_trip(cities_visited=["Toyama City", "Kanazawa"])) == (True, "")
    passed, reason = run(must, road_trip(cities_visited=["Toyohashi", "Kanazawa"]))  # "TOY" is not Toyohashi
    assert not passed and reason == "city must be in all routes: route 1 does not visit Toyama"
    avoid = {
        "func": "json",
        "op": "google_maps.place_not_in_cities_visited_of_routes",
        "op_args": ["Tacoma", "TAC"],
    }
    assert run(avoid, road_trip(cities_visited=["Olympia", "Kent"])) == (
        True,
        "",
    )  # upstream raised on a list
    assert run(avoid, road_trip(cities_visited=["Olympia", "Tacoma"])) == (
        False,
        "city Tacoma must not be in all routes (route 1)",
    )
    routes = {"func": "json", "op": "google_maps.validate_number_of_routes", "value": 2}
    assert run(routes, road_trip()) == (False, "the answer has 1 route(s), expected 2")
    one = {"func": "json", "op": "google_maps.include_one_place_in_rest_stops", "op_args": {"city": "kluang"}}
    assert run(one, road_trip()) == (True, "")
    uniq = {"func": "json", "op": "google_maps.at_least_unique_city_of_rest_stops_in_routes", "op_args": 2}
    assert run(uniq, road_trip())[1] == "unique cities number: 1, required number is 2 (route 1)"


def test_validate_elevation_meters_tolerance():
    vp = places("Muar", "viewpoint")[0]
    truth = WORLD.elevation(vp["lat"], vp["lng"])
    ev = {"func": "json", "op": "google_maps.validate_elevation_meters"}

    def trip(elev: Any, address: str = vp["address"]) -> dict[str, Any]:
        return road_trip(
            scenic_viewpoints=[
                {"city": "Muar", "name": vp["name"], "address": address, "elevation_meters": elev}
            ]
        )

    assert run(ev, trip(truth)) == (True, "")
    assert run(ev, trip(str(truth))) == (True, "")  # the output format shows a string
    assert run(ev, trip(truth * 1.049)) == (True, "")
    passed, reason = run(ev, trip(truth * 1.051))
    assert not passed and reason.endswith(f"is {truth * 1.051:.2f}, while gt = {truth:.2f}")
    assert run(ev, trip("high"))[1] == f"the elevation of {vp['name']} is 'high', not a number of metres"
    assert (
        run(ev, trip(truth, address="Atlantis"))[1]
        == f"can't get the elevation of {vp['name']} in Muar at Atlantis"
    )


def test_are_stops_different_compares_ids():
    a, b = places("Nice", "hotel")[:2]
    ev = {"func": "json", "op": "google_maps.are_stops_different"}
    assert run(ev, {"route_1_stops": [stop(a)], "route_2_stops": [stop(b)]}) == (True, "")
    renamed = {"name": "Another Name", "place id": a["place_id"]}  # upstream passed the same place renamed
    assert run(ev, {"route_1_stops": [stop(a)], "route_2_stops": [renamed]}) == (
        False,
        "the stops are the same",
    )


def test_check_places_and_ratings():
    cafes = places("Kyoto", "cafe")
    names = [p["name"] for p in cafes[:4]]
    truth = {}
    for n in names:
        hit = M.search_places(WORLD, f"{n}, Kyoto")["places"][0]
        if hit["rating"] > 4.0:
            truth[n] = hit["rating"]
    ev = {
        "func": "json",
        "op": "google_maps.check_places_and_ratings",
        "op_args": {"places": names, "min_rating": 4.0, "location": "Kyoto"},
    }
    assert run(ev, truth) == (True, "")
    extra = dict(truth, **{"Made Up": 4.5})
    assert run(ev, extra)[1].startswith("the places are not the same")


def test_validate_places_reads_the_named_list():
    hotel = places("Nice", "hotel")[0]
    ev = {"func": "json", "op": "google_maps.validate_places", "op_args": {"place_type": "hotels"}}
    assert run(ev, {"hotels": [stop(hotel)]}) == (True, "")  # upstream raised on every answer (.isError)
    assert run(ev, {"hotels": stop(hotel)}) == (True, "")  # one object counts as a list of one
    assert run(ev, {"hotels": [{"name": "x", "place id": "ChIJzz"}]}) == (
        False,
        "the place ChIJzz doesn't exists",
    )
    with pytest.raises(EvaluatorSpecError, match="op_args needs 'place_type'"):
        run({**ev, "op_args": {}}, {"hotels": []})
