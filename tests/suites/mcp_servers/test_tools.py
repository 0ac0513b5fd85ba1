"""Tool logic of every local MCP server, through the SDK's in-memory transport (``mcp.Client``
on the server object: the real MCP request path without a subprocess).

Expected values are read from the same seeded world (``build_world``) the server serves.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import anyio
import pytest

from suites._common.mcp_servers import (
    SERVERS,
    airbnb,
    build_server,
    fetch,
    finance,
    healthcare,
    national_parks,
    repository,
    search,
    sports,
)
from suites._common.mcp_servers._base import BadRequest, make_server
from suites._common.mcp_servers.calculator import calculate

SEED = 7
_SERVERS: dict[str, Any] = {}


def call(domain: str, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """(is_error, text) of one call on the domain's in-process server."""
    from mcp import Client

    server = _SERVERS.get(domain)
    if server is None:
        server = _SERVERS[domain] = build_server(domain, SEED)

    async def run() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error), "\n".join(b.text for b in result.content)

    return anyio.run(run)


def ok(domain: str, tool: str, args: dict[str, Any]) -> Any:
    error, text = call(domain, tool, args)
    assert not error, text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def err(domain: str, tool: str, args: dict[str, Any]) -> str:
    error, text = call(domain, tool, args)
    assert error, text
    return text


@pytest.mark.parametrize(
    "domain", [d for d in SERVERS if d not in ("calculator", "maps")]
)  # maps: test_maps.py
def test_worlds_are_deterministic_per_seed(domain):
    module = {
        "airbnb": airbnb,
        "healthcare": healthcare,
        "sports": sports,
        "national_parks": national_parks,
        "finance": finance,
        "search": search,
        "fetch": fetch,
        "repository": repository,
    }[domain]
    assert module.build_world(SEED) == module.build_world(SEED)
    assert module.build_world(SEED) != module.build_world(SEED + 1)


def test_unknown_tool_and_schema_errors_are_error_results():
    assert err("sports", "get_teamz", {}) == "Unknown tool: get_teamz"
    text = err("sports", "get_game", {"league": "NBA", "game_id": "seven"})
    assert text.startswith(
        "Error executing tool get_game: 1 validation error for get_gameArguments\ngame_id\n"
    )
    assert "Input should be 'NBA', 'MLB' or 'NFL'" in err("sports", "get_teams", {"league": "NHL"})
    assert "Field required" in err("national_parks", "getParkDetails", {})


def test_a_bug_in_a_tool_is_a_protocol_error_not_a_result():
    from mcp import Client, MCPError

    def broken(x: int) -> str:
        """Always fails."""
        return {}["missing"]

    def refuses(x: int) -> str:
        """Refuses."""
        raise BadRequest(f"x={x} is not allowed")

    server = make_server("t", "", [(broken, False), (refuses, False)])

    async def run() -> None:
        async with Client(server) as client:
            with pytest.raises(MCPError) as info:
                await client.call_tool("broken", {"x": 1})
            assert info.value.code == -32603
            assert info.value.message == "tool 'broken' failed: KeyError: 'missing'"
            result = await client.call_tool("refuses", {"x": 1})
            assert (
                result.is_error
                and result.content[0].text == "Error executing tool refuses: x=1 is not allowed"
            )

    anyio.run(run)


# -- airbnb ------------------------------------------------------------------------------


def test_airbnb_search_filters_sorts_and_pages():
    world = airbnb.build_world(SEED)
    lisbon = [x for x in world["listings"].values() if x["city"] == "Lisbon"]
    first = ok("airbnb", "airbnb_search", {"location": "lisbon"})
    ranked = sorted(lisbon, key=lambda x: (-x["rating"], -x["reviews"], x["id"]))
    assert [r["id"] for r in first["searchResults"]] == [x["id"] for x in ranked[:6]]
    assert first["searchResults"][0]["url"] == f"https://www.airbnb.com/rooms/{ranked[0]['id']}"
    second = ok(
        "airbnb", "airbnb_search", {"location": "Lisbon", "cursor": first["paginationInfo"]["nextPageCursor"]}
    )
    assert [r["id"] for r in second["searchResults"]] == [x["id"] for x in ranked[6:12]]
    assert second["paginationInfo"]["nextPageCursor"] is None
    cheap = ok(
        "airbnb", "airbnb_search", {"location": "Lisbon, Portugal", "maxPrice": 120, "adults": 3, "pets": 1}
    )
    expect = [x["id"] for x in ranked if x["nightly"] <= 120 and x["max_guests"] >= 3 and x["pets_allowed"]]
    assert [r["id"] for r in cheap["searchResults"]] == expect[:6]
    assert ok("airbnb", "airbnb_search", {"location": "Atlantis"})["searchResults"] == []


def test_airbnb_search_prices_a_stay_and_drops_booked_listings():
    world = airbnb.build_world(SEED)
    data = ok(
        "airbnb", "airbnb_search", {"location": "Prague", "checkin": "2025-07-01", "checkout": "2025-07-04"}
    )
    for hit in data["searchResults"]:
        lst = world["listings"][hit["id"]]
        total = lst["nightly"] * 3 + lst["cleaning_fee"]
        assert hit["structuredDisplayPrice"]["primaryLine"]["accessibilityLabel"] == f"${total} total"
        assert all("2025-07-04" <= b0 or "2025-07-01" >= b1 for b0, b1 in lst["booked"])
    assert "checkout (2025-07-01) must be after checkin" in err(
        "airbnb", "airbnb_search", {"location": "Prague", "checkin": "2025-07-04", "checkout": "2025-07-01"}
    )
    assert "checkin must be a date in YYYY-MM-DD format" in err(
        "airbnb", "airbnb_search", {"location": "Prague", "checkin": "July 1", "checkout": "2025-07-04"}
    )
    assert "is in the past (today is 2025-06-05)" in err(
        "airbnb", "airbnb_search", {"location": "Prague", "checkin": "2025-06-01", "checkout": "2025-06-04"}
    )


def test_airbnb_listing_details():
    world = airbnb.build_world(SEED)
    lst = next(iter(world["listings"].values()))
    data = ok(
        "airbnb",
        "airbnb_listing_details",
        {"id": lst["id"], "checkin": "2025-08-10", "checkout": "2025-08-15"},
    )
    sections = {s["id"]: s for s in data["details"]}
    assert list(sections) == [
        "LOCATION_DEFAULT",
        "POLICIES_DEFAULT",
        "HIGHLIGHTS_DEFAULT",
        "DESCRIPTION_DEFAULT",
        "AMENITIES_DEFAULT",
        "BOOK_IT_DEFAULT",
    ]
    assert (sections["LOCATION_DEFAULT"]["lat"], sections["LOCATION_DEFAULT"]["lng"]) == (
        lst["lat"],
        lst["lng"],
    )
    assert sections["BOOK_IT_DEFAULT"]["total"] == lst["nightly"] * 5 + lst["cleaning_fee"]
    assert data["listingUrl"].startswith(f"https://www.airbnb.com/rooms/{lst['id']}?check_in=2025-08-10")
    no_dates = ok("airbnb", "airbnb_listing_details", {"id": lst["id"]})
    assert "BOOK_IT_DEFAULT" not in {s["id"] for s in no_dates["details"]}
    assert err("airbnb", "airbnb_listing_details", {"id": "123"}) == (
        "Error executing tool airbnb_listing_details: no listing with id '123' "
        "(ids come from airbnb_search results)"
    )


# -- healthcare ------------------------------------------------------------------------


def test_fda_drug_lookup_three_kinds_and_unknown_drug():
    world = healthcare.build_world(SEED)
    drug = next(d for d in world["drugs"] if d["generic"] == "warfarin")
    general = ok("healthcare", "fda_drug_lookup", {"drug_name": "warfarin"})
    assert general["total_results"] == len(drug["products"]) and general["results"] == drug["products"]
    brand = drug["products"][0]["brand_name"].lower()
    label = ok("healthcare", "fda_drug_lookup", {"drug_name": brand, "search_type": "label"})
    assert (
        label["results"][0]["indications_and_usage"]
        == "Warfarin is a anticoagulant indicated for blood clots."
    )
    events = ok("healthcare", "fda_drug_lookup", {"drug_name": "warfarin", "search_type": "adverse_events"})
    assert events["results"] == drug["events"]
    assert err("healthcare", "fda_drug_lookup", {"drug_name": "unobtainium"}).endswith(
        "No drug named 'unobtainium' was found in the FDA database"
    )


def test_pubmed_search_words_limit_and_date_range():
    world = healthcare.build_world(SEED)
    data = ok("healthcare", "pubmed_search", {"query": "asthma", "max_results": 100})
    expect = [a for a in world["articles"] if "asthma" in (a["title"] + a["abstract"]).lower()]
    assert data["total_results"] == len(expect) > 0
    dates = [a["_date"] for a in sorted(expect, key=lambda a: (a["_date"], a["pmid"]), reverse=True)]
    assert [a["pmid"] for a in data["articles"]] == [
        a["pmid"] for a in sorted(expect, key=lambda a: (a["_date"], a["pmid"]), reverse=True)
    ]
    recent = ok("healthcare", "pubmed_search", {"query": "asthma", "max_results": 100, "date_range": "2"})
    assert recent["total_results"] == sum(d >= "2023-06-05" for d in dates)
    assert ok("healthcare", "pubmed_search", {"query": "asthma"})["total_results"] == min(5, len(expect))
    assert "date_range must be a number of years" in err(
        "healthcare", "pubmed_search", {"query": "asthma", "date_range": "recent"}
    )


def test_health_topics_search_by_language():
    en = ok("healthcare", "health_topics_search", {"topic": "migraine"})
    es = ok("healthcare", "health_topics_search", {"topic": "migraña", "language": "es"})
    assert [t["title"] for t in en["topics"]] == ["Living with migraine"]
    assert [t["title"] for t in es["topics"]] == ["Vivir con migraña"]
    assert ok("healthcare", "health_topics_search", {"topic": "scurvy"})["total_results"] == 0


def test_clinical_trials_search_status_mapping():
    world = healthcare.build_world(SEED)
    every = ok(
        "healthcare", "clinical_trials_search", {"condition": "diabetes", "status": "all", "max_results": 100}
    )
    expect = [t for t in world["trials"] if any("diabetes" in c.lower() for c in t["conditions"])]
    assert [t["nct_id"] for t in every["trials"]] == [t["nct_id"] for t in expect]
    done = ok("healthcare", "clinical_trials_search", {"condition": "diabetes", "status": "completed"})
    assert all(t["status"] == "COMPLETED" for t in done["trials"]) and done["requested_status"] == "completed"
    active = ok("healthcare", "clinical_trials_search", {"condition": "diabetes", "status": "active"})
    assert all(t["status"] == "RECRUITING" for t in active["trials"])


def test_medical_terminology_lookup():
    assert ok("healthcare", "medical_terminology_lookup", {"code": "i50"})["codes"] == [
        {"code": "I50.22", "description": "Chronic systolic (congestive) heart failure"},
        {"code": "I50.9", "description": "Heart failure, unspecified"},
    ]
    by_text = ok(
        "healthcare", "medical_terminology_lookup", {"description": "asthma uncomplicated", "max_results": 2}
    )
    assert [c["code"] for c in by_text["codes"]] == ["J45.20", "J45.40"] and by_text[
        "search_type"
    ] == "description"
    assert err("healthcare", "medical_terminology_lookup", {}).endswith(
        "At least one of 'code' or 'description' must be provided"
    )


# -- sports ------------------------------------------------------------------------------


def test_sports_teams_players_games_and_game():
    world = sports.build_world(SEED)
    team = world["teams"]["MLB"][3]
    teams = ok("sports", "get_teams", {"league": "MLB"})
    assert f"Team ID: {team['id']}\nFull Name: {team['full_name']}" in teams["teams"]
    player = world["players"]["NBA"][17]
    found = ok(
        "sports",
        "get_players",
        {"league": "NBA", "first_name": player["first_name"], "last_name": player["last_name"][:3]},
    )
    assert f"Player ID: {player['id']}\nFirst Name: {player['first_name']}" in found["players"]
    all_nba = ok("sports", "get_players", {"league": "NBA"})
    assert all_nba["total_players"] == 25 and all_nba["next_cursor"] == world["players"]["NBA"][24]["id"]
    page2 = ok("sports", "get_players", {"league": "NBA", "cursor": all_nba["next_cursor"]})
    assert f"Player ID: {world['players']['NBA'][25]['id']}\n" in page2["players"]
    game = world["games"]["NFL"][5]
    by_date = ok(
        "sports", "get_games", {"league": "NFL", "dates": [game["date"]], "team_ids": [game["home_team_id"]]}
    )
    assert f"Game ID: {game['id']}\n" in by_date["games"]
    one = ok("sports", "get_game", {"league": "NFL", "game_id": game["id"]})
    home = next(t for t in world["teams"]["NFL"] if t["id"] == game["home_team_id"])
    assert (
        f"Score: {home['full_name']} {game['home_team_score']} - {game['visitor_team_score']}" in one["game"]
    )
    future = [g for g in world["games"]["MLB"] if g["date"] >= "2025-06-05"][0]
    assert "Status: Scheduled" in ok("sports", "get_game", {"league": "MLB", "game_id": future["id"]})["game"]
    assert err("sports", "get_game", {"league": "MLB", "game_id": game["id"]}).endswith(
        f"Game ID {game['id']} not found in MLB"
    )
    seasons = ok("sports", "get_games", {"league": "MLB", "seasons": [2025], "team_ids": [team["id"]]})
    assert seasons["total_games"] == sum(
        g["season"] == 2025 and team["id"] in (g["home_team_id"], g["visitor_team_id"])
        for g in world["games"]["MLB"]
    )
    assert "dates must be a date in YYYY-MM-DD format" in err(
        "sports", "get_games", {"league": "NBA", "dates": ["x"]}
    )


# -- national parks ----------------------------------------------------------------------


def test_find_parks_and_details():
    world = national_parks.build_world(SEED)
    park = world["parks"][4]
    state = park["states"][0]
    data = ok("national_parks", "findParks", {"stateCode": state.lower()})
    assert park["code"] in [p["code"] for p in data["parks"]]
    assert data["total"] == sum(state in p["states"] for p in world["parks"])
    activity = park["activities"][0]
    both = ok(
        "national_parks", "findParks", {"activities": f"{activity},{park['activities'][1]}", "limit": 50}
    )
    assert park["code"] in [p["code"] for p in both["parks"]]
    paged = ok("national_parks", "findParks", {"limit": 5, "start": 20})
    assert [p["code"] for p in paged["parks"]] == [p["code"] for p in world["parks"][20:25]]
    assert "Invalid state code(s): XX" in err("national_parks", "findParks", {"stateCode": "CA,XX"})
    details = ok("national_parks", "getParkDetails", {"parkCode": park["code"].upper()})
    assert details == park
    assert err("national_parks", "getParkDetails", {"parkCode": "zzzz"}).endswith(
        "No park found with park code: 'zzzz' (codes come from findParks)"
    )


@pytest.mark.parametrize(
    ("tool", "key"),
    [
        ("getAlerts", "alerts"),
        ("getVisitorCenters", "visitorCenters"),
        ("getCampgrounds", "campgrounds"),
        ("getEvents", "events"),
    ],
)
def test_park_lists_filter_by_park_and_page(tool, key):
    world = national_parks.build_world(SEED)
    codes = sorted({it["parkCode"] for it in world[key]})[:2]
    data = ok("national_parks", tool, {"parkCode": ",".join(codes), "limit": 50})
    assert data[key] == [it for it in world[key] if it["parkCode"] in codes]
    first = ok("national_parks", tool, {})
    assert (first["total"], first["limit"], first["start"]) == (len(world[key]), 10, 0)
    assert first[key] == world[key][:10]


def test_get_events_date_window_and_search():
    world = national_parks.build_world(SEED)
    data = ok(
        "national_parks", "getEvents", {"dateStart": "2025-06-10", "dateEnd": "2025-06-30", "limit": 50}
    )
    assert data["events"] == [
        e for e in world["events"] if "2025-06-10" <= e["dateTime"]["dateStart"] <= "2025-06-30"
    ]
    talks = ok("national_parks", "getEvents", {"q": "night sky", "limit": 50})
    assert talks["total"] == sum(e["title"] == "Night Sky Program" for e in world["events"])
    assert "dateEnd must be a date" in err("national_parks", "getEvents", {"dateEnd": "06/30/2025"})


# -- finance -----------------------------------------------------------------------------


def test_historical_prices_end_exclusive_and_intervals():
    world = finance.build_world(SEED)
    prices = world["tickers"]["HLXA"]["prices"]
    rows = ok(
        "finance",
        "get_historical_stock_prices",
        {"ticker": "hlxa", "start_date": "2025-05-01", "end_date": "2025-06-02"},
    )
    assert rows == [p for p in prices if "2025-05-01" <= p["Date"][:10] < "2025-06-02"]
    assert "2025-05-26" not in {r["Date"][:10] for r in rows}  # a market holiday
    weeks = ok(
        "finance",
        "get_historical_stock_prices",
        {"ticker": "HLXA", "start_date": "2025-05-05", "end_date": "2025-05-17", "interval": "1wk"},
    )
    assert [w["Date"][:10] for w in weeks] == ["2025-05-05", "2025-05-12"]
    assert weeks[0]["Close"] == next(p for p in prices if p["Date"].startswith("2025-05-09"))["Close"]
    assert weeks[0]["Volume"] == sum(
        p["Volume"] for p in prices if "2025-05-05" <= p["Date"][:10] <= "2025-05-09"
    )
    assert "interval '1h' is not available" in err(
        "finance",
        "get_historical_stock_prices",
        {"ticker": "HLXA", "start_date": "2025-05-05", "end_date": "2025-05-17", "interval": "1h"},
    )
    assert err(
        "finance",
        "get_historical_stock_prices",
        {"ticker": "AAPL", "start_date": "2025-05-05", "end_date": "2025-05-17"},
    ).endswith("Company ticker AAPL not found.")


def test_stock_info_news_and_actions():
    world = finance.build_world(SEED)
    company = world["tickers"]["PTRA"]
    info = ok("finance", "get_stock_info", {"ticker": "PTRA"})
    assert info["currentPrice"] == company["prices"][-1]["Close"] and info["symbol"] == "PTRA"
    assert company["prices"][-1]["Date"].startswith("2025-06-04")  # the last close before today
    news = ok("finance", "get_yahoo_finance_news", {"ticker": "PTRA"})
    assert news.count("Title: ") == 4 and news.startswith(f"Title: {company['news'][0]['title']}\nSummary: ")
    actions = ok("finance", "get_stock_actions", {"ticker": "PTRA"})
    assert actions == [
        {"Date": p["Date"], "Dividends": p["Dividends"], "Stock Splits": p["Stock Splits"]}
        for p in company["prices"]
        if p["Dividends"] or p["Stock Splits"]
    ]


def test_financial_statements_and_holders():
    world = finance.build_world(SEED)
    company = world["tickers"]["QNTM"]
    for kind in finance.FINANCIAL_TYPES:
        rows = ok("finance", "get_financial_statement", {"ticker": "QNTM", "financial_type": kind})
        assert rows == company["statements"][kind]
        assert len(rows) == (5 if kind.startswith("quarterly") else 4)
    income = company["statements"]["income_stmt"][0]
    assert (
        abs(income["Gross Profit"] - (income["Total Revenue"] - income["Cost Of Revenue"])) <= 1
    )  # rounding
    assert "invalid financial type ttm. Please use one of the following: income_stmt" in err(
        "finance", "get_financial_statement", {"ticker": "QNTM", "financial_type": "ttm"}
    )
    for kind in finance.HOLDER_TYPES:
        assert (
            ok("finance", "get_holder_info", {"ticker": "QNTM", "holder_type": kind})
            == company["holders"][kind]
        )
    assert "invalid holder type funds" in err(
        "finance", "get_holder_info", {"ticker": "QNTM", "holder_type": "funds"}
    )


def test_options_and_recommendations():
    world = finance.build_world(SEED)
    company = world["tickers"]["SKYR"]
    dates = ok("finance", "get_option_expiration_dates", {"ticker": "SKYR"})
    assert dates == list(company["options"]) and all(date.fromisoformat(d).weekday() == 4 for d in dates)
    calls = ok(
        "finance", "get_option_chain", {"ticker": "SKYR", "expiration_date": dates[2], "option_type": "calls"}
    )
    spot = company["prices"][-1]["Close"]
    assert all(c["inTheMoney"] == (c["strike"] < spot) for c in calls)
    assert calls[0]["contractSymbol"].startswith(
        "SKYR" + date.fromisoformat(dates[2]).strftime("%y%m%d") + "C"
    )
    assert "No options available for the date 2025-06-07" in err(
        "finance",
        "get_option_chain",
        {"ticker": "SKYR", "expiration_date": "2025-06-07", "option_type": "calls"},
    )
    assert err(
        "finance",
        "get_option_chain",
        {"ticker": "SKYR", "expiration_date": dates[0], "option_type": "straddle"},
    ).endswith("Invalid option type. Please use 'calls' or 'puts'.")
    recs = ok("finance", "get_recommendations", {"ticker": "SKYR", "recommendation_type": "recommendations"})
    assert [r["period"] for r in recs] == ["0m", "-1m", "-2m", "-3m"]
    ups = ok(
        "finance",
        "get_recommendations",
        {"ticker": "SKYR", "recommendation_type": "upgrades_downgrades", "months_back": 6},
    )
    expect, seen = [], set()
    for row in company["upgrades_downgrades"]:
        if row["GradeDate"][:10] >= "2024-12-05" and row["Firm"] not in seen:
            seen.add(row["Firm"])
            expect.append(row)
    assert ups == expect and len({u["Firm"] for u in ups}) == len(ups)


# -- calculator --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("2 + 3 * 4", "14"),
        ("(1250.5 - 1100) / 1100 * 100", str((1250.5 - 1100) / 1100 * 100)),
        ("7 // 2", "3"),
        ("-2 ** 2", "-4"),
        ("sqrt(16) + abs(-1.5)", "5.5"),
        ("round(2.675, 2)", "2.67"),
        ("max(1, 9, 3)", "9"),
        ("10 / 4", "2.5"),
        ("6.0 * 2", "12"),
    ],
)
def test_calculator_values(expression, value):
    assert calculate(expression) == value
    assert ok("calculator", "calculate", {"expression": expression}) in (value, json.loads(value))


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "division by zero"),
        ("2 ** 5000", "exponent 5000 is too large (at most 1000)"),
        ("x + 1", "unknown name 'x': only numbers, operators and functions are allowed"),
        ("open('f')", "unknown function 'open'"),
        ("2 +", "cannot parse '2 +'"),
        ("", "expression is empty"),
        ("sqrt(-1)", "cannot compute 'sqrt(-1)': math domain error"),
    ],
)
def test_calculator_mistakes(expression, message):
    with pytest.raises(BadRequest) as info:
        calculate(expression)
    assert message in str(info.value)
    assert err("calculator", "calculate", {"expression": expression}).startswith(
        "Error executing tool calculate: "
    )
