"""The maps server (MCP-Universe's google-maps): tool logic through the SDK's in-memory
transport, the seeded world, and the errors a model gets."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import anyio
import pytest

from suites._common.mcp_servers import maps as M

SEED = 42
_SERVER: dict[int, Any] = {}


def call(tool: str, args: dict[str, Any], seed: int = SEED) -> tuple[bool, str]:
    """(is_error, text) of one call on the in-process maps server."""
    from mcp import Client

    server = _SERVER.get(seed)
    if server is None:
        server = _SERVER[seed] = M.build_server(seed)

    async def run() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error), "\n".join(b.text for b in result.content)

    return anyio.run(run)


def ok(tool: str, args: dict[str, Any], seed: int = SEED) -> Any:
    error, text = call(tool, args, seed)
    assert not error, text
    return json.loads(text)


def err(tool: str, args: dict[str, Any]) -> str:
    error, text = call(tool, args)
    assert error, text
    return text


def test_geocode_landmark_address_and_name_agree():
    by_name = ok("maps_geocode", {"address": "Merlion Park, Singapore"})
    by_address = ok("maps_geocode", {"address": "1 Fullerton Rd, Singapore 049213"})
    assert by_name == by_address
    assert by_name["location"] == {"lat": 1.2868, "lng": 103.8545}
    assert by_name["formatted_address"] == "1 Fullerton Rd, Singapore"
    assert by_name["place_id"].startswith("ChIJ")


def test_geocode_town_and_street_address_and_unknown():
    town = ok("maps_geocode", {"address": "Kluang"})
    assert town["location"] == {"lat": 2.0251, "lng": 103.3328}
    assert town["formatted_address"] == "Kluang, Johor, Malaysia"
    street = ok("maps_geocode", {"address": "12 Foo St, Kluang, Malaysia"})
    # a street address lands within 35% of the town's radius, the same point for every seed
    assert M.haversine_km(2.0251, 103.3328, street["location"]["lat"], street["location"]["lng"]) <= 38 * 0.35
    assert street == ok("maps_geocode", {"address": "12 Foo St, Kluang, Malaysia"}, seed=7)
    assert (
        err("maps_geocode", {"address": "Atlantis"})
        == "Error executing tool maps_geocode: Geocoding failed: ZERO_RESULTS"
    )


def test_search_places_shape_kind_filter_and_location_order():
    data = ok("maps_search_places", {"query": "rest stop in Muar"})
    places = data["places"]
    assert 1 <= len(places) <= 20
    assert set(places[0]) == {"name", "formatted_address", "location", "place_id", "rating", "types"}
    assert all(
        "rest_stop" in p["types"] and ", Muar, Johor, Malaysia" in p["formatted_address"] for p in places
    )
    near = ok(
        "maps_search_places",
        {"query": "cafe", "location": {"latitude": 1.30, "longitude": 103.85}, "radius": 2000},
    )
    dists = [M.haversine_km(1.30, 103.85, p["location"]["lat"], p["location"]["lng"]) for p in near["places"]]
    assert dists == sorted(dists) and max(dists) <= 2.0
    assert all("cafe" in p["types"] for p in near["places"])
    # a place's own address finds exactly that place (the elevation check relies on it)
    one = places[3]
    again = ok("maps_search_places", {"query": one["formatted_address"]})
    assert again["places"] == [one]
    text = err("maps_search_places", {"query": "cafe in Atlantis"})
    assert text == "Error executing tool maps_search_places: Place search failed: ZERO_RESULTS"


def test_place_details_and_edited_ids():
    place = ok("maps_search_places", {"query": "museum in Rome"})["places"][0]
    details = ok("maps_place_details", {"place_id": place["place_id"]})
    assert set(details) == {
        "name",
        "formatted_address",
        "location",
        "formatted_phone_number",
        "website",
        "rating",
        "reviews",
        "opening_hours",
    }
    assert (details["name"], details["rating"], details["location"]) == (
        place["name"],
        place["rating"],
        place["location"],
    )
    edited = place["place_id"][:-1] + ("A" if place["place_id"][-1] != "A" else "B")
    assert err("maps_place_details", {"place_id": edited}).endswith("Place details request failed: NOT_FOUND")
    assert err("maps_place_details", {"place_id": "hello"}).endswith(
        "Place details request failed: INVALID_REQUEST"
    )
    # another seed's world does not know this seed's ids
    assert M.build_world(SEED + 1).place(place["place_id"]) is None


def test_distance_matrix_is_haversine_times_road_factor_at_fixed_speed():
    w = M.build_world(SEED)
    stop = ok("maps_search_places", {"query": "cafe in Seremban"})["places"][0]
    data = ok(
        "maps_distance_matrix",
        {
            "origins": ["Kuala Lumpur", "Sydney Opera House"],
            "destinations": [f"place_id:{stop['place_id']}", "Nowhere"],
            "mode": "walking",
        },
    )
    assert data["origin_addresses"] == ["Kuala Lumpur, Malaysia", "Bennelong Point, Sydney, NSW, Australia"]
    assert data["destination_addresses"] == [stop["formatted_address"], ""]
    el = data["results"][0]["elements"][0]
    km = M.haversine_km(3.1390, 101.6869, stop["location"]["lat"], stop["location"]["lng"])
    assert el["distance"]["value"] == round(km * 1000 * 1.2)
    assert el["duration"]["value"] == round(el["distance"]["value"] / (5.0 / 3.6))
    assert data["results"][0]["elements"][1] == {"status": "NOT_FOUND"}
    assert data["results"][1]["elements"][0] == {"status": "ZERO_RESULTS"}  # Sydney → Malaysia: no road
    assert w.element(w.locate("Paris"), w.locate("Paris"), "driving")["distance"] == {
        "text": "0 m",
        "value": 0,
    }
    text = err("maps_distance_matrix", {"origins": [], "destinations": ["Paris"]})
    assert text.endswith("Distance matrix request failed: INVALID_REQUEST")


def test_directions_match_the_matrix_and_name_towns_on_the_way():
    route = ok(
        "maps_directions", {"origin": "Johor Bahru", "destination": "Kuala Lumpur", "mode": "driving"}
    )["routes"][0]
    matrix = ok("maps_distance_matrix", {"origins": ["Johor Bahru"], "destinations": ["Kuala Lumpur"]})
    el = matrix["results"][0]["elements"][0]
    assert (route["distance"], route["duration"]) == (el["distance"], el["duration"])
    assert abs(sum(s["distance"]["value"] for s in route["steps"]) - el["distance"]["value"]) <= len(
        route["steps"]
    )
    towns = [re.search(r"<b>([^<]+)</b>$", s["instructions"]).group(1) for s in route["steps"]]
    w = M.build_world(SEED)
    corridor = [t.name for t in w.corridor(w.locate("Johor Bahru"), w.locate("Kuala Lumpur"))]
    assert (
        len(towns) == 9 and sorted(towns[:-1], key=corridor.index) == towns[:-1]
    )  # 8 towns, in travel order
    assert "Kluang" in towns and towns[-1] == "Kuala Lumpur, Malaysia"
    assert {s["travel_mode"] for s in route["steps"]} == {"DRIVING"}
    assert err("maps_directions", {"origin": "Tokyo", "destination": "Sydney"}).endswith(
        "Directions request failed: ZERO_RESULTS"
    )


def test_elevation_and_reverse_geocode():
    data = ok(
        "maps_elevation",
        {"locations": [{"latitude": 1.3, "longitude": 103.8}, {"latitude": 45.0, "longitude": 6.0}]},
    )
    values = [r["elevation"] for r in data["results"]]
    assert values == [M.build_world(SEED).elevation(1.3, 103.8), M.build_world(SEED).elevation(45.0, 6.0)]
    assert all(15.0 <= v <= 1415.0 for v in values)
    assert data["results"][0]["location"] == {"lat": 1.3, "lng": 103.8}
    assert err("maps_elevation", {"locations": [{"latitude": 95, "longitude": 0}]}).endswith(
        "INVALID_REQUEST"
    )
    rev = ok("maps_reverse_geocode", {"latitude": 2.0, "longitude": 102.5})
    assert rev["formatted_address"].endswith(", Muar, Johor, Malaysia")
    assert [c["types"][0] for c in rev["address_components"]] == [
        "street_number",
        "route",
        "locality",
        "administrative_area_level_1",
        "country",
    ]
    assert err("maps_reverse_geocode", {"latitude": 0.0, "longitude": -30.0}).endswith("ZERO_RESULTS")


def test_world_is_deterministic_per_seed():
    a, b, c = M.MapsWorld(SEED), M.MapsWorld(SEED), M.MapsWorld(SEED + 1)
    town = M.find_town("Toyama")
    assert a.places(town) == b.places(town)
    assert a.places(town) != c.places(town)
    assert a.elevation(36.7, 137.2) == b.elevation(36.7, 137.2) != c.elevation(36.7, 137.2)
    assert len(a.places(M.find_town("Singapore"))) == 20_000
    ratings = [p["rating"] for p in a.places(town)]
    assert min(ratings) >= 2.5 and max(ratings) <= 5.0
    assert not math.isclose(sum(r >= 4.2 for r in ratings) / len(ratings), 0.0)
    for p in a.places(town)[:50]:  # every id resolves to its place; names carry their kind
        assert a.place(p["place_id"]) == p
    pools = [
        p
        for p in a.places(M.find_town("Paris"))
        if p["kind"] in ("library", "hospital", "museum", "swimming_pool")
    ]
    words = {"library": "library", "hospital": "hospital", "museum": "museum", "swimming_pool": "swim"}
    assert all(words[p["kind"]] in p["name"].lower() for p in pools)


@pytest.mark.parametrize(
    ("text", "town"),
    [
        ("9035 Village Dr, YOSEMITE NATIONAL PARK, CA 95389", "Yosemite Valley"),
        ("00184 Roma RM, Italy", "Rome"),
        ("55 George St, Rockhampton City QLD 4700", "Rockhampton"),
        ("somewhere in Greater Sudbury", "Sudbury"),
    ],
)
def test_town_names_and_aliases_are_found_in_addresses(text, town):
    assert M.towns_in(text)[0].name == town


def test_places_near_rules_out_by_latitude_only_what_the_distance_rules_out():
    """places_near skips a town or place whose latitude alone puts it beyond the radius before
    computing the distance: the places found are those of the distance test over every place
    of every town whose disc reaches the point (points near towns, at the edge of their discs
    and of the radius, on both hemispheres)."""
    import random

    world = M.MapsWorld(3)
    rng = random.Random(5)
    towns = rng.sample(M.TOWN_LIST, 12)
    for town in towns:
        for radius_km in (0.5, 2.0, town.radius_km, 25.0):
            lat = town.lat + rng.uniform(-1, 1) * town.radius_km / 111.32
            lng = town.lng + rng.uniform(-1, 1) * town.radius_km / 111.32
            every = [
                p
                for t in M.TOWN_LIST
                if M.haversine_km(lat, lng, t.lat, t.lng) <= radius_km + t.radius_km
                for p in world.places(t)
                if M.haversine_km(lat, lng, p["lat"], p["lng"]) <= radius_km
            ]
            assert world.places_near(lat, lng, radius_km) == every
    # a place exactly on the radius along a meridian is kept (the margin covers the rounding)
    place = world.places(towns[0])[0]
    radius_km = M.haversine_km(place["lat"] + 0.01, place["lng"], place["lat"], place["lng"])
    assert place in world.places_near(place["lat"] + 0.01, place["lng"], radius_km)
    assert not M._beyond_by_latitude(place["lat"] + 0.01, place["lat"], radius_km)
    assert M._beyond_by_latitude(place["lat"] + 0.01, place["lat"], radius_km * 0.999)


def test_a_world_keeps_the_places_of_its_most_recently_used_towns_only(monkeypatch):
    """A maps world keeps at most PLACES_KEPT generated places (before: every town's, 38,000
    places, about 36 MB, over a deep MCP-Universe run); a town let go of comes back the same,
    and so do its places looked up by id and by name. A town's places of one kind share one
    list of types (every place of that kind does)."""
    monkeypatch.setattr(M, "PLACES_KEPT", 1_000)
    world = M.MapsWorld(42)
    towns = [t for t in M.TOWN_LIST if t.n_places <= 800][:8]
    first = world.places(towns[0])
    some = first[7]
    assert world.named(towns[0], some["address"]) == some
    for town in towns[1:]:
        world.places(town)
    kept = list(world._places)
    assert sum(len(world._places[i]) for i in kept) <= 1_000 and towns[0].index not in kept
    assert set(world._index) <= set(kept)  # the look-up tables go with their places
    again = world.places(towns[0])
    assert again is not first and again == first
    same_kind = [p for p in again if p["kind"] == some["kind"]]
    assert len(same_kind) > 1 and same_kind[0]["types"] is same_kind[1]["types"]
    assert world.place(some["place_id"]) == some
    assert world.named(towns[0], some["address"]) == some
