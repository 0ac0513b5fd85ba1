"""The open worlds (``--open-world``) of the airbnb, healthcare, sports and national_parks servers:
a well-formed query the seeded world cannot answer (a real city, drug, player, park) is
answered from records generated from the query itself, the same in every process whatever was
asked before, and the seeded world is left exactly as it was."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from suites._common.mcp_servers import airbnb, build_server, healthcare, national_parks, sports

SEED = 42
ROOT = Path(__file__).resolve().parents[3]
MODULES = {"airbnb": airbnb, "healthcare": healthcare, "sports": sports, "national_parks": national_parks}

CLOSED_WORLD_SHA256 = {
    ("airbnb", 7): "6221bb1ff0b0caf2",
    ("airbnb", 42): "e7dc2eed322af5a6",
    ("healthcare", 7): "9425cc2e6a938ac1",
    ("healthcare", 42): "b98e4054d4e40006",
    ("sports", 7): "028f762bf8aff32c",
    ("sports", 42): "a90ea1b3c2404e67",
    ("national_parks", 7): "3fecb8d354c55343",
    ("national_parks", 42): "538ade79a2f27694",
}
"""First 16 hex digits of the SHA-256 of ``json.dumps(build_world(seed), sort_keys=True)``
before the open worlds existed."""

REAL_QUERIES: list[tuple[str, str, dict[str, Any]]] = [
    ("airbnb", "airbnb_search",
     {"location": "Paris, France", "checkin": "2025-07-10", "checkout": "2025-07-14", "adults": 2}),
    ("airbnb", "airbnb_listing_details", {"id": "670214003022775198"}),
    ("healthcare", "fda_drug_lookup", {"drug_name": "semaglutide", "search_type": "adverse_events"}),
    ("healthcare", "pubmed_search", {"query": "GLP-1 receptor agonists weight loss", "max_results": 3}),
    ("healthcare", "health_topics_search", {"topic": "sleep apnea", "language": "es"}),
    ("healthcare", "clinical_trials_search", {"condition": "long covid", "status": "completed"}),
    ("healthcare", "medical_terminology_lookup", {"code": "K21.9"}),
    ("healthcare", "medical_terminology_lookup", {"description": "gastro-esophageal reflux"}),
    ("sports", "get_players", {"league": "NBA", "first_name": "LeBron", "last_name": "James"}),
    ("sports", "get_games", {"league": "NBA", "dates": ["2023-12-25"]}),
    ("sports", "get_games", {"league": "MLB", "seasons": [2023], "team_ids": [14]}),
    ("sports", "get_game", {"league": "NFL", "game_id": 7654321}),
    ("national_parks", "findParks", {"q": "Yosemite"}),
    ("national_parks", "findParks", {"stateCode": "NY"}),
    ("national_parks", "getParkDetails", {"parkCode": "grsm"}),
    ("national_parks", "getEvents", {"parkCode": "yose", "dateStart": "2025-07-01", "dateEnd": "2025-07-31"}),
    ("national_parks", "getCampgrounds", {"parkCode": "yose"}),
]  # fmt: skip


def _call(server: Any, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    from mcp import Client

    async def run() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error), "\n".join(b.text for b in result.content)

    return anyio.run(run)


def _empty(text: str) -> bool:
    data = json.loads(text)
    counts = [data.get(k) for k in ("total_results", "total", "total_games", "total_players") if k in data]
    return data.get("searchResults") == [] or 0 in counts


@pytest.mark.parametrize(("domain", "seed"), sorted(CLOSED_WORLD_SHA256))
def test_the_seeded_world_is_byte_for_byte_unchanged(domain, seed):
    world = MODULES[domain].build_world(seed)
    digest = hashlib.sha256(json.dumps(world, sort_keys=True).encode()).hexdigest()
    assert digest[:16] == CLOSED_WORLD_SHA256[(domain, seed)]
    opened = MODULES[domain].build_world(seed, open_world=True)
    assert opened == {**world, "open_world": True, "seed": seed}


def test_real_world_queries_are_answered_only_in_the_open_world():
    servers = {d: (build_server(d, SEED), MODULES[d].build_server(SEED, open_world=True)) for d in MODULES}
    for domain, tool, args in REAL_QUERIES:
        closed, opened = servers[domain]
        error, text = _call(closed, tool, args)
        assert error or _empty(text), (tool, args, text[:200])
        error, text = _call(opened, tool, args)
        assert not error and not _empty(text), (tool, args, text[:300])


def test_what_the_seeded_world_answers_stays_the_same():
    closed, opened = build_server("airbnb", SEED), airbnb.build_server(SEED, open_world=True)
    for args in (
        {"location": "Lisbon"},
        {"location": "Prague", "maxPrice": 10},
    ):  # a hit, and a filtered miss
        assert _call(closed, "airbnb_search", args) == _call(opened, "airbnb_search", args)
    closed, opened = build_server("healthcare", SEED), healthcare.build_server(SEED, open_world=True)
    args = {"condition": "asthma", "status": "recruiting"}
    assert _call(closed, "clinical_trials_search", args) == _call(opened, "clinical_trials_search", args)


def test_malformed_keys_stay_errors_in_the_open_world():
    w = airbnb.build_world(SEED, open_world=True)
    with pytest.raises(airbnb.BadRequest, match="no listing with id 'unknown-value'"):
        airbnb.listing_details(w, "unknown-value")
    w = national_parks.build_world(SEED, open_world=True)
    with pytest.raises(national_parks.BadRequest, match="No park found with park code: 'yosemite'"):
        national_parks.park_details(w, "yosemite")  # a code has four letters
    w = healthcare.build_world(SEED, open_world=True)
    assert healthcare.terminology(w, code="not a code")["total_results"] == 0


def _answers(order: list[int]) -> list[str]:
    """Every real query's answer on fresh open worlds, asked in ``order``; listed in query order."""
    worlds = {d: m.build_world(SEED, open_world=True) for d, m in MODULES.items()}
    fns = {
        "airbnb_search": lambda w, a: airbnb.search(w, **a),
        "airbnb_listing_details": lambda w, a: airbnb.listing_details(w, **a),
        "fda_drug_lookup": lambda w, a: healthcare.drug_lookup(w, **a),
        "pubmed_search": lambda w, a: healthcare.pubmed(w, **a),
        "health_topics_search": lambda w, a: healthcare.health_topics(w, **a),
        "clinical_trials_search": lambda w, a: healthcare.clinical_trials(w, **a),
        "medical_terminology_lookup": lambda w, a: healthcare.terminology(w, **a),
        "get_players": lambda w, a: sports.get_players(w, **a),
        "get_games": lambda w, a: sports.get_games(w, **a),
        "get_game": lambda w, a: sports.get_game(w, **a),
        "findParks": lambda w, a: national_parks.find_parks(w, **a),
        "getParkDetails": lambda w, a: national_parks.park_details(w, **a),
        "getEvents": lambda w, a: national_parks.list_items(w, "events", **a),
        "getCampgrounds": lambda w, a: national_parks.list_items(w, "campgrounds", **a),
    }
    out: dict[int, str] = {}
    for i in order:
        domain, tool, args = REAL_QUERIES[i]
        out[i] = json.dumps(fns[tool](worlds[domain], dict(args)), sort_keys=True)
    return [out[i] for i in range(len(REAL_QUERIES))]


def test_same_query_same_answer_whatever_was_asked_before_and_in_another_process():
    forward = _answers(list(range(len(REAL_QUERIES))))
    assert _answers(list(reversed(range(len(REAL_QUERIES))))) == forward
    code = ("import json; from tests.suites.mcp_servers.test_open_worlds import REAL_QUERIES, _answers; "
            "print(json.dumps(_answers(list(range(len(REAL_QUERIES))))))")  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert json.loads(proc.stdout) == forward


def test_a_record_found_by_search_reads_the_same_by_its_id():
    w = airbnb.build_world(SEED, open_world=True)
    hit = airbnb.search(w, "Paris, France")["searchResults"][0]
    details = airbnb.listing_details(w, hit["id"])
    fresh = airbnb.listing_details(airbnb.build_world(SEED, open_world=True), hit["id"])
    assert details == fresh  # the id alone gives the listing
    assert hit["structuredContent"]["mapCategoryInfo"][0]["body"].endswith(", Paris, France")
    assert f"{hit['avgRatingA11yLabel'][:4]} from" in details["details"][3]["htmlDescription"]["htmlText"]

    w = sports.build_world(SEED, open_world=True)
    listed = sports.get_games(w, "NBA", dates=["2023-12-25"])["games"].split("\n\n-----\n\n")
    for text in listed:
        game_id = int(re.search(r"Game ID: (\d+)", text).group(1))
        assert sports.get_game(sports.build_world(SEED, open_world=True), "NBA", game_id)["game"] == text
        assert "Date: 2023-12-25" in text and "Season: 2023" in text

    w = national_parks.build_world(SEED, open_world=True)
    found = national_parks.find_parks(w, q="Yosemite")["parks"][0]
    assert (found["code"], found["name"].split()[0]) == ("yose", "Yosemite")
    by_code = national_parks.park_details(national_parks.build_world(SEED, open_world=True), "yose")
    assert {k: by_code[k] for k in ("states", "activities", "entranceFees")} == {
        k: found[k] for k in ("states", "activities", "entranceFees")
    }
    in_state = national_parks.find_parks(w, stateCode="NY")["parks"]
    assert [p["states"][0] for p in in_state] == ["NY", "NY"] and all(p["code"][:2] == "ny" for p in in_state)


def test_an_open_world_player_plays_for_a_team_of_the_league():
    w = sports.build_world(SEED, open_world=True)
    text = sports.get_players(w, "NBA", "LeBron", "James")["players"]
    team_id = int(re.search(r"Team ID: (\d+)", text).group(1))
    assert team_id in {t["id"] for t in w["teams"]["NBA"]}
    assert sports.get_games(w, "NBA", team_ids=[team_id])["total_games"] > 0
