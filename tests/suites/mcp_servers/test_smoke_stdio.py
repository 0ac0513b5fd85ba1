"""Each local MCP server as a real stdio subprocess: spawned, tools listed with the expected
names and input schemas, one real call with a checked result, clean exit.

The servers start concurrently (one module-scoped fixture) to keep the wall time near one
start-up.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from pytest_egi.mcp.client import McpServer, _child_pids
from suites._common.mcp_servers import SERVERS, TOOLS, server_spec
from suites._common.mcp_servers.web_corpus import build_corpus
from suites.mcp_universe.env.servers import HIDDEN_TOOLS

SEED = 42

REQUIRED = {
    "airbnb": {"airbnb_search": ["location"], "airbnb_listing_details": ["id"]},
    "healthcare": {
        "fda_drug_lookup": ["drug_name"],
        "pubmed_search": ["query"],
        "health_topics_search": ["topic"],
        "clinical_trials_search": ["condition"],
        "medical_terminology_lookup": [],
    },
    "sports": {
        "get_teams": ["league"],
        "get_players": ["league"],
        "get_games": ["league"],
        "get_game": ["league", "game_id"],
    },
    "national_parks": {
        "findParks": [],
        "getParkDetails": ["parkCode"],
        "getAlerts": [],
        "getVisitorCenters": [],
        "getCampgrounds": [],
        "getEvents": [],
    },
    "finance": {
        "get_historical_stock_prices": ["ticker", "start_date", "end_date"],
        "get_stock_info": ["ticker"],
        "get_yahoo_finance_news": ["ticker"],
        "get_stock_actions": ["ticker"],
        "get_financial_statement": ["ticker", "financial_type"],
        "get_holder_info": ["ticker", "holder_type"],
        "get_option_expiration_dates": ["ticker"],
        "get_option_chain": ["ticker", "expiration_date", "option_type"],
        "get_recommendations": ["ticker", "recommendation_type"],
    },
    "calculator": {"calculate": ["expression"]},
    "search": {"search": ["query"]},
    "fetch": {"fetch": ["url"]},
    "repository": {
        "get_me": [],
        "search_repositories": ["query"],
        "create_repository": ["name"],
        "fork_repository": ["owner", "repo"],
        "create_branch": ["owner", "repo", "branch"],
        "list_branches": ["owner", "repo"],
        "list_commits": ["owner", "repo"],
        "get_file_contents": ["owner", "repo"],
        "create_or_update_file": ["owner", "repo", "path", "content", "message", "branch"],
        "push_files": ["owner", "repo", "branch", "files", "message"],
        "delete_file": ["owner", "repo", "path", "message", "branch"],
        "create_issue": ["owner", "repo", "title"],
        "get_issue": ["owner", "repo", "issue_number"],
        "list_issues": ["owner", "repo"],
        "update_issue": ["owner", "repo", "issue_number"],
        "add_issue_comment": ["owner", "repo", "issue_number", "body"],
        "get_issue_comments": ["owner", "repo", "issue_number"],
        "search_issues": ["query"],
        "create_pull_request": ["owner", "repo", "title", "head", "base"],
        "get_pull_request": ["owner", "repo", "pullNumber"],
        "list_pull_requests": ["owner", "repo"],
        "merge_pull_request": ["owner", "repo", "pullNumber"],
        "search_code": ["query"],
    },
    "maps": {
        "maps_geocode": ["address"],
        "maps_reverse_geocode": ["latitude", "longitude"],
        "maps_search_places": ["query"],
        "maps_place_details": ["place_id"],
        "maps_distance_matrix": ["origins", "destinations"],
        "maps_elevation": ["locations"],
        "maps_directions": ["origin", "destination"],
    },
}
"""Domain → tool → its required parameters (upstream's)."""

PROPERTIES = {
    "airbnb_search": {
        "location",
        "checkin",
        "checkout",
        "adults",
        "children",
        "infants",
        "pets",
        "minPrice",
        "maxPrice",
        "cursor",
        "ignoreRobotsText",
    },
    "getEvents": {"parkCode", "limit", "start", "dateStart", "dateEnd", "q"},
    "get_games": {"league", "dates", "seasons", "team_ids", "cursor"},
    "clinical_trials_search": {"condition", "status", "max_results"},
    "get_recommendations": {"ticker", "recommendation_type", "months_back"},
    "search": {"query"},
    "fetch": {"url", "max_length", "start_index", "raw"},
    "create_repository": {"name", "description", "private", "autoInit"},
    "maps_search_places": {"query", "location", "radius"},
    "maps_distance_matrix": {"origins", "destinations", "mode"},
}


def _check_call(domain: str, server: McpServer) -> None:
    if domain == "airbnb":
        data = server.call_tool("airbnb_search", {"location": "Kyoto", "adults": 2}).json()
        assert data["searchUrl"].startswith("https://www.airbnb.com/s/Kyoto/homes?")
        assert len(data["searchResults"]) == 6
    elif domain == "healthcare":
        data = server.call_tool("fda_drug_lookup", {"drug_name": "metformin", "search_type": "label"}).json()
        assert data["status"] == "success" and data["results"][0]["generic_name"] == "METFORMIN"
    elif domain == "sports":
        data = server.call_tool("get_teams", {"league": "NFL"}).json()
        assert data["total_teams"] == 12 and data["teams"].count("Team ID: ") == 12
    elif domain == "national_parks":
        data = server.call_tool("findParks", {"limit": 3}).json()
        assert (data["total"], data["limit"], len(data["parks"])) == (24, 3, 3)
    elif domain == "finance":
        data = server.call_tool("get_option_expiration_dates", {"ticker": "ORBT"}).json()
        assert data[:2] == ["2025-06-06", "2025-06-13"]
    elif domain == "search":
        city = build_corpus(SEED).cities["city-0"]
        data = server.call_tool("search", {"query": city["name"]}).json()
        assert data["search_parameters"] == {"engine": "google", "q": city["name"]}
        assert data["organic_results"][0]["link"] == city["url"]
        assert len(data["organic_results"]) == 10
    elif domain == "fetch":
        city = build_corpus(SEED).cities["city-0"]
        text = server.call_tool("fetch", {"url": city["url"], "start_index": 5000}).text
        assert text.startswith(f"Contents of {city['url']}:\n")
        assert f"lies on the River {city['river']}" in text
    elif domain == "repository":
        data = server.call_tool("search_repositories", {"query": "repo:OSU-NLP-Group/TravelPlanner"}).json()
        assert [i["full_name"] for i in data["items"]] == ["OSU-NLP-Group/TravelPlanner"]
        assert server.call_tool("get_me").json()["login"] == "egi-agent"
    elif domain == "maps":
        data = server.call_tool(
            "maps_distance_matrix",
            {
                "origins": ["Merlion Park, Singapore"],
                "destinations": ["Petronas Twin Towers"],
                "mode": "driving",
            },
        ).json()
        assert data["origin_addresses"] == ["1 Fullerton Rd, Singapore"]
        assert data["results"][0]["elements"][0]["status"] == "OK"
        assert data["results"][0]["elements"][0]["distance"]["value"] == 395235
    else:
        assert server.call_tool("calculate", {"expression": "2 * (3 + 4)"}).text == "14"


@pytest.fixture(scope="module")
def servers():
    started = {d: McpServer(server_spec(d, SEED, timeout_s=30)) for d in SERVERS}
    with ThreadPoolExecutor(len(started)) as pool:
        list(pool.map(McpServer.start, started.values()))
    yield started
    for s in started.values():
        s.close()


@pytest.mark.parametrize("domain", list(SERVERS))
def test_server_over_stdio(servers, domain):
    server = servers[domain]
    pid = server.pid
    assert pid in _child_pids()
    tools = {t.name: t for t in server.list_tools() if t.name not in HIDDEN_TOOLS}  # the harness's own
    assert tuple(tools) == TOOLS[domain]
    for name, required in REQUIRED[domain].items():
        schema = tools[name].input_schema
        assert schema["type"] == "object"
        assert sorted(schema.get("required", [])) == sorted(required), name
        assert tools[name].description
        if name in PROPERTIES:
            assert set(schema["properties"]) == PROPERTIES[name]
    _check_call(domain, server)
    server.close()  # clean exit: stdin closed, the process exits by itself and is reaped
    assert pid not in _child_pids()
