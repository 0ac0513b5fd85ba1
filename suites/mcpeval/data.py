"""MCPEval tasks: generated from templates over each local server's world, or loaded from a
task file in the original JSONL format.

A task is upstream's record (reference §2.2)::

    {"id", "name", "description", "goal", "tool_calls": [{"tool_name", "tool_parameters"}],
     "final_response"}

plus, for generated tasks, ``plan``: the same calls with every argument that depends on an
earlier result written as a placeholder ``{"$ref": {"step": i, "path": [...], "regex": ...,
"cast": "int"}}`` (read from the JSON result of call ``i`` by ``path``, then the first group
of ``regex`` when given). The reference policy follows the plan and reads those arguments from
the results its own calls returned; ``tool_calls`` is the ground truth the scorer compares
against.

Generation: per domain, templates are instantiated in a fixed cycle with seeded choices over
the world that the domain's server serves (``build_world(seed)``), and each instance is
replayed on the world's tool functions (the functions the server wraps): an instance whose
calls give an error or an empty result is dropped. Descriptions state every concrete input.
"""

from __future__ import annotations

import functools
import json
import random
import re
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from suites._common.mcp_servers import TOOLS

__all__ = [
    "DOMAINS",
    "SERVER_OF",
    "UNSUPPORTED",
    "generate_tasks",
    "generated_task_ids",
    "load_task_file",
    "read_task_entries",
    "replay_problem",
    "resolve_ref",
    "task_id",
    "task_of",
    "tool_domain",
]

DOMAINS = ("airbnb", "healthcare", "sports", "national_parks", "yfinance")
"""MCPEval domains, in report order (``yfinance`` is served by the ``finance`` server)."""
SERVER_OF = {"airbnb": "airbnb", "healthcare": "healthcare", "sports": "sports",
             "national_parks": "national_parks", "yfinance": "finance"}  # fmt: skip
"""Domain → local server name (``suites._common.mcp_servers.SERVERS``)."""
TASKS_PER_DOMAIN = 100
"""Generated tasks per domain (the deep profile runs them all)."""


class Ref(dict):
    """A placeholder argument: read from the result of an earlier call of the same task."""

    def __init__(self, step: int, path: list[Any], regex: str | None = None, cast: str | None = None):
        spec: dict[str, Any] = {"step": step, "path": path}
        if regex:
            spec["regex"] = regex
        if cast:
            spec["cast"] = cast
        super().__init__({"$ref": spec})


def is_ref(value: Any) -> bool:
    """Whether ``value`` is a plan placeholder."""
    return isinstance(value, dict) and set(value) == {"$ref"}


def resolve_ref(ref: dict[str, Any], results: list[Any]) -> Any:
    """The value a placeholder stands for, given the results of the earlier calls.

    Args:
        ref: ``{"$ref": {"step", "path", "regex"?, "cast"?}}``.
        results: per earlier call, its result parsed as JSON when possible (else the text),
            or None when the call failed or was not made.

    Raises:
        LookupError: the result is missing or does not hold the value.
    """
    spec = ref["$ref"]
    step = spec["step"]
    if step >= len(results) or results[step] is None:
        raise LookupError(f"call {step} gave no result")
    value: Any = results[step]
    for key in spec["path"]:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            raise LookupError(f"result of call {step} has no {spec['path']}") from None
    if spec.get("regex"):
        m = re.search(spec["regex"], str(value))
        if not m:
            raise LookupError(f"result of call {step} does not match {spec['regex']!r}")
        value = m.group(1)
    if spec.get("cast") == "int":
        value = int(value)
    return value


def _resolve_args(args: Any, results: list[Any]) -> Any:
    if is_ref(args):
        return resolve_ref(args, results)
    if isinstance(args, dict):
        return {k: _resolve_args(v, results) for k, v in args.items()}
    if isinstance(args, list):
        return [_resolve_args(v, results) for v in args]
    return args


# -- replay on the world functions (the logic each server wraps) ------------------------------


def _replayers(
    domain: str, seed: int, open_world: bool = False
) -> tuple[dict[str, Callable[..., Any]], dict[str, Any]]:
    """Tool name → function(**arguments) over the domain's world (what the server returns,
    parsed), and the world itself; ``open_world``: the world the suite's servers serve (the
    seeded world, and records generated for any other well-formed query), else the seeded
    world alone (what the generated tasks are made from)."""
    from suites._common.mcp_servers import airbnb, finance, healthcare, national_parks, sports

    if domain == "airbnb":
        w = airbnb.build_world(seed, open_world)
        return {
            "airbnb_search": lambda **a: airbnb.search(w, **a),
            "airbnb_listing_details": lambda **a: airbnb.listing_details(w, **a),
        }, w
    if domain == "healthcare":
        w = healthcare.build_world(seed, open_world)
        return {
            "fda_drug_lookup": lambda **a: healthcare.drug_lookup(w, **a),
            "pubmed_search": lambda **a: healthcare.pubmed(w, **a),
            "health_topics_search": lambda **a: healthcare.health_topics(w, **a),
            "clinical_trials_search": lambda **a: healthcare.clinical_trials(w, **a),
            "medical_terminology_lookup": lambda **a: healthcare.terminology(w, **a),
        }, w
    if domain == "sports":
        w = sports.build_world(seed, open_world)
        return {
            "get_teams": lambda **a: sports.get_teams(w, **a),
            "get_players": lambda **a: sports.get_players(w, **a),
            "get_games": lambda **a: sports.get_games(w, **a),
            "get_game": lambda **a: sports.get_game(w, **a),
        }, w
    if domain == "national_parks":
        w = national_parks.build_world(seed, open_world)
        items = national_parks.list_items
        return {
            "findParks": lambda **a: national_parks.find_parks(w, **a),
            "getParkDetails": lambda **a: national_parks.park_details(w, **a),
            "getAlerts": lambda **a: items(w, "alerts", **a),
            "getVisitorCenters": lambda **a: items(w, "visitorCenters", **a),
            "getCampgrounds": lambda **a: items(w, "campgrounds", **a),
            "getEvents": lambda **a: items(w, "events", **a),
        }, w
    if domain == "yfinance":
        w = finance.build_world(seed, open_world)

        def company(ticker: str) -> dict[str, Any]:
            return finance._company(w, ticker)

        def chain(ticker: str, expiration_date: str, option_type: str) -> Any:
            return company(ticker)["options"][expiration_date][option_type]

        return {
            "get_stock_info": lambda ticker: company(ticker)["info"],
            "get_historical_stock_prices": lambda **a: finance.history(w, **a),
            "get_stock_actions": lambda ticker: company(ticker)["actions"],
            "get_financial_statement": lambda ticker, financial_type: company(ticker)["statements"][
                financial_type
            ],
            "get_holder_info": lambda ticker, holder_type: company(ticker)["holders"][holder_type],
            "get_option_expiration_dates": lambda ticker: list(company(ticker)["options"]),
            "get_option_chain": chain,
            "get_recommendations": lambda ticker, recommendation_type: company(ticker)["recommendations"],
        }, w
    raise KeyError(f"unknown MCPEval domain {domain!r}; known: {', '.join(DOMAINS)}")


@functools.lru_cache(maxsize=8)
def _open_replayers(domain: str, seed: int) -> tuple[dict[str, Callable[..., Any]], dict[str, Any]]:
    """:func:`_replayers` of the open world, built once per (domain, seed)."""
    return _replayers(domain, seed, open_world=True)


_COUNT_KEYS = ("total_results", "total", "total_games", "total_players", "total_teams")


def _empty(result: Any) -> bool:
    """An empty output: nothing, or a search that found no record."""
    if not result:
        return True
    if isinstance(result, dict):
        if any(k in result and not result[k] for k in _COUNT_KEYS):
            return True
        if "searchResults" in result and not result["searchResults"]:
            return True
    return False


def replay_problem(domain: str, seed: int, calls: list[dict[str, Any]]) -> str | None:
    """Replay ground-truth ``calls`` (concrete arguments) on the world the domain's server
    serves for ``seed`` (open: a real city, drug, player, park or ticker is answered from
    records generated from the query); the first problem as text (an error result or an empty
    output), or None when every call answers. The check every generated task passes, applied
    to a task file's tasks."""
    from suites._common.mcp_servers._base import BadRequest

    tools, _ = _open_replayers(domain, seed)
    for i, call in enumerate(calls):
        try:
            result = tools[call["tool_name"]](**call["tool_parameters"])
        except (BadRequest, LookupError, TypeError) as exc:
            return f"tool_calls[{i}] {call['tool_name']} fails on the local server ({exc})"
        if _empty(result):
            return f"tool_calls[{i}] {call['tool_name']} returns nothing on the local server"
    return None


# -- templates --------------------------------------------------------------------------------

Call = tuple[str, dict[str, Any]]
Template = Callable[[random.Random, dict[str, Any]], tuple[str, str, str, list[Call]]]
"""(rng, world) → (name, description, goal, plan)."""


def _stay(r: random.Random) -> tuple[str, str]:
    start = date(2025, 6, 10) + timedelta(days=r.randrange(0, 90))
    return start.isoformat(), (start + timedelta(days=r.randrange(2, 7))).isoformat()


def _cities(w: dict[str, Any]) -> list[str]:
    return sorted({v["city"] for v in w["listings"].values()})


def _ab_search(r: random.Random, w: dict[str, Any]) -> Any:
    city = r.choice(_cities(w))
    checkin, checkout = _stay(r)
    adults = r.randint(1, 4)
    return (
        f"Stays in {city}",
        f"Find Airbnb stays in {city} for {adults} adults, checking in on {checkin} and checking out "
        f"on {checkout}.",
        "List available stays matching the trip.",
        [("airbnb_search", {"location": city, "checkin": checkin, "checkout": checkout, "adults": adults})],
    )


def _ab_price(r: random.Random, w: dict[str, Any]) -> Any:
    city = r.choice(_cities(w))
    lo = r.choice([40, 60, 80, 100])
    hi = lo + r.choice([60, 100, 150])
    return (
        f"Budget stays in {city}",
        f"Search Airbnb listings in {city} priced between {lo} and {hi} per night.",
        "Find listings within the budget.",
        [("airbnb_search", {"location": city, "minPrice": lo, "maxPrice": hi})],
    )


def _ab_details(r: random.Random, w: dict[str, Any]) -> Any:
    lid = r.choice(sorted(w["listings"]))
    return (
        f"Listing {lid}",
        f"Show the full details of the Airbnb listing with id {lid}.",
        "Describe the listing.",
        [("airbnb_listing_details", {"id": lid})],
    )


def _ab_search_top(r: random.Random, w: dict[str, Any]) -> Any:
    city = r.choice(_cities(w))
    checkin, checkout = _stay(r)
    adults = r.randint(1, 4)
    stay = {"checkin": checkin, "checkout": checkout, "adults": adults}
    return (
        f"Top stay in {city}",
        f"Search Airbnb stays in {city} for {adults} adults from {checkin} to {checkout}, then show the "
        "details of the first listing in the results for the same dates and guests.",
        "Recommend the top listing with its details.",
        [("airbnb_search", {"location": city, **stay}),
         ("airbnb_listing_details", {"id": Ref(0, ["searchResults", 0, "id"]), **stay})],
    )  # fmt: skip


def _ab_compare(r: random.Random, w: dict[str, Any]) -> Any:
    a, b = r.sample(_cities(w), 2)
    return (
        f"{a} or {b}",
        f"Compare Airbnb stays in {a} and {b}: search each city, then show the details of the first "
        "listing found in each.",
        "Compare the best option in each city.",
        [("airbnb_search", {"location": a}), ("airbnb_search", {"location": b}),
         ("airbnb_listing_details", {"id": Ref(0, ["searchResults", 0, "id"])}),
         ("airbnb_listing_details", {"id": Ref(1, ["searchResults", 0, "id"])})],
    )  # fmt: skip


def _ab_pages(r: random.Random, w: dict[str, Any]) -> Any:
    city = r.choice(_cities(w))
    return (
        f"Browse {city}",
        f"Search Airbnb listings in {city}, show the details of the first two results, then fetch the "
        "next page of results and show the details of its first listing.",
        "Browse two pages of listings.",
        [("airbnb_search", {"location": city}),
         ("airbnb_listing_details", {"id": Ref(0, ["searchResults", 0, "id"])}),
         ("airbnb_listing_details", {"id": Ref(0, ["searchResults", 1, "id"])}),
         ("airbnb_search", {"location": city, "cursor": Ref(0, ["paginationInfo", "nextPageCursor"])}),
         ("airbnb_listing_details", {"id": Ref(3, ["searchResults", 0, "id"])})],
    )  # fmt: skip


def _hc_drug(r: random.Random, w: dict[str, Any]) -> Any:
    drug = r.choice(w["drugs"])["generic"]
    kind = r.choice(["general", "label", "adverse_events"])
    what = {"general": "general information", "label": "labeling information",
            "adverse_events": "reported adverse events"}[kind]  # fmt: skip
    return (
        f"{drug.title()} {kind.replace('_', ' ')}",
        f"Look up the FDA {what} for the drug {drug}.",
        "Report what the FDA database says.",
        [("fda_drug_lookup", {"drug_name": drug, "search_type": kind})],
    )


def _hc_code(r: random.Random, w: dict[str, Any]) -> Any:
    code = r.choice(w["codes"])
    word = r.choice([x for x in code["description"].split() if len(x) > 5] or [code["description"]])
    return (
        f"ICD-10 code for {word.lower()}",
        f"Search ICD-10 codes whose description mentions '{word}', then look up the first code "
        "found by its code.",
        "Identify the ICD-10 code.",
        [("medical_terminology_lookup", {"description": word}),
         ("medical_terminology_lookup", {"code": Ref(0, ["codes", 0, "code"])})],
    )  # fmt: skip


def _conditions(w: dict[str, Any]) -> list[str]:
    return sorted({c for t in w["trials"] for c in t["conditions"]})


def _hc_condition(r: random.Random, w: dict[str, Any]) -> Any:
    cond = r.choice(_conditions(w))
    status = r.choice(["recruiting", "completed", "all"])
    return (
        f"Research on {cond}",
        f"For {cond}: find clinical trials with status '{status}', then search PubMed for '{cond}' "
        "(at most 5 results).",
        "Summarise current research.",
        [("clinical_trials_search", {"condition": cond, "status": status}),
         ("pubmed_search", {"query": cond, "max_results": 5})],
    )  # fmt: skip


def _hc_drug_review(r: random.Random, w: dict[str, Any]) -> Any:
    drug = r.choice(w["drugs"])["generic"]
    return (
        f"Safety review of {drug}",
        f"Review the drug {drug}: look up its general FDA information, then its reported adverse events, "
        f"then search PubMed for '{drug}' (at most 3 results).",
        "Give a safety overview.",
        [("fda_drug_lookup", {"drug_name": drug, "search_type": "general"}),
         ("fda_drug_lookup", {"drug_name": drug, "search_type": "adverse_events"}),
         ("pubmed_search", {"query": drug, "max_results": 3})],
    )  # fmt: skip


def _hc_full(r: random.Random, w: dict[str, Any]) -> Any:
    topic = r.choice([t for t in w["topics"] if t["language"] == "en"])
    keyword = topic["keywords"][0]
    word = r.choice(w["codes"])["description"].split()[0]
    return (
        f"Patient brief on {keyword}",
        f"Prepare a patient brief: get the English health topic '{keyword}', find clinical trials for "
        f"'{keyword}' with status 'all', search PubMed for '{keyword}' (at most 5 results), search ICD-10 "
        f"codes whose description mentions '{word}' and look up the first code found by its code.",
        "Give a full brief.",
        [("health_topics_search", {"topic": keyword, "language": "en"}),
         ("clinical_trials_search", {"condition": keyword, "status": "all"}),
         ("pubmed_search", {"query": keyword, "max_results": 5}),
         ("medical_terminology_lookup", {"description": word}),
         ("medical_terminology_lookup", {"code": Ref(3, ["codes", 0, "code"])})],
    )  # fmt: skip


LEAGUES = ("NBA", "MLB", "NFL")
_GAME_ID = r"Game ID: (\d+)"
_TEAM_ID = r"Team ID: (\d+)"


def _sp_teams(r: random.Random, w: dict[str, Any]) -> Any:
    league = r.choice(LEAGUES)
    return (f"{league} teams", f"List all {league} teams.", "List the teams.",
            [("get_teams", {"league": league})])  # fmt: skip


def _sp_player(r: random.Random, w: dict[str, Any]) -> Any:
    league = r.choice(LEAGUES)
    p = r.choice(w["players"][league])
    return (
        f"{p['first_name']} {p['last_name']}",
        f"Look up the {league} player {p['first_name']} {p['last_name']}.",
        "Describe the player.",
        [("get_players", {"league": league, "first_name": p["first_name"], "last_name": p["last_name"]})],
    )


def _sp_player_games(r: random.Random, w: dict[str, Any]) -> Any:
    league = r.choice(LEAGUES)
    p = r.choice(w["players"][league])
    season = r.choice(sorted({g["season"] for g in w["games"][league]}))
    return (
        f"Games of {p['last_name']}'s team",
        f"Find the {league} player {p['first_name']} {p['last_name']}, then list his team's games of "
        f"the {season} season using the team id from the player's record.",
        "List the team's games.",
        [("get_players", {"league": league, "first_name": p["first_name"], "last_name": p["last_name"]}),
         ("get_games", {"league": league, "seasons": [season],
                        "team_ids": [Ref(0, ["players"], _TEAM_ID, "int")]})],
    )  # fmt: skip


def _sp_date_game(r: random.Random, w: dict[str, Any]) -> Any:
    league = r.choice(LEAGUES)
    day = r.choice(w["games"][league])["date"]
    return (
        f"{league} on {day}",
        f"List the {league} games played on {day}, then get the full record of the first game listed.",
        "Report the game.",
        [("get_games", {"league": league, "dates": [day]}),
         ("get_game", {"league": league, "game_id": Ref(0, ["games"], _GAME_ID, "int")})],
    )  # fmt: skip


def _sp_chain(r: random.Random, w: dict[str, Any]) -> Any:
    league = r.choice(LEAGUES)
    p = r.choice(w["players"][league])
    return (
        f"{p['last_name']}'s season opener",
        f"List the {league} teams, find the player {p['first_name']} {p['last_name']}, list the games "
        "of his team (team id from the player's record) and get the full record of the first game listed.",
        "Report the team's first game.",
        [("get_teams", {"league": league}),
         ("get_players", {"league": league, "first_name": p["first_name"], "last_name": p["last_name"]}),
         ("get_games", {"league": league, "team_ids": [Ref(1, ["players"], _TEAM_ID, "int")]}),
         ("get_game", {"league": league, "game_id": Ref(2, ["games"], _GAME_ID, "int")})],
    )  # fmt: skip


def _states(w: dict[str, Any]) -> list[str]:
    return sorted({s for p in w["parks"] for s in p["states"]})


def _np_state(r: random.Random, w: dict[str, Any]) -> Any:
    state = r.choice(_states(w))
    return (f"Parks in {state}", f"Find the national parks in the state with code {state}.",
            "List the parks.", [("findParks", {"stateCode": state})])  # fmt: skip


def _np_name(r: random.Random, w: dict[str, Any]) -> Any:
    park = r.choice(w["parks"])
    word = park["name"].split()[0]
    return (
        f"About {park['name']}",
        f"Search national parks for '{word}' and get the details of the first park found, by its park code.",
        "Describe the park.",
        [("findParks", {"q": word}), ("getParkDetails", {"parkCode": Ref(0, ["parks", 0, "code"])})],
    )


def _np_trip(r: random.Random, w: dict[str, Any]) -> Any:
    state = r.choice(_states(w))
    return (
        f"Camping in {state}",
        f"Find national parks in the state with code {state}; for the first park found, get its current "
        "alerts and its campgrounds (by its park code).",
        "Plan a camping trip.",
        [("findParks", {"stateCode": state}),
         ("getAlerts", {"parkCode": Ref(0, ["parks", 0, "code"])}),
         ("getCampgrounds", {"parkCode": Ref(0, ["parks", 0, "code"])})],
    )  # fmt: skip


def _np_visit(r: random.Random, w: dict[str, Any]) -> Any:
    park = r.choice(w["parks"])
    start = date(2025, 6, 5) + timedelta(days=r.randrange(0, 60))
    end = start + timedelta(days=r.choice([7, 14, 30]))
    code = park["code"]
    return (
        f"Visiting {code}",
        f"For the park with code {code}: get its details, its visitor centers, and its events between "
        f"{start.isoformat()} and {end.isoformat()}.",
        "Plan a visit.",
        [("getParkDetails", {"parkCode": code}), ("getVisitorCenters", {"parkCode": code}),
         ("getEvents", {"parkCode": code, "dateStart": start.isoformat(), "dateEnd": end.isoformat()})],
    )  # fmt: skip


def _np_full(r: random.Random, w: dict[str, Any]) -> Any:
    park = r.choice(w["parks"])
    word = park["name"].split()[0]
    ref = Ref(0, ["parks", 0, "code"])
    return (
        f"Everything about {word}",
        f"Search national parks for '{word}'; for the first park found (by its park code) get its details, "
        "alerts, visitor centers and campgrounds.",
        "Give a complete overview.",
        [("findParks", {"q": word}), ("getParkDetails", {"parkCode": ref}), ("getAlerts", {"parkCode": ref}),
         ("getVisitorCenters", {"parkCode": ref}), ("getCampgrounds", {"parkCode": ref})],
    )  # fmt: skip


def _tickers(w: dict[str, Any]) -> list[str]:
    return sorted(w["tickers"])


def _yf_info(r: random.Random, w: dict[str, Any]) -> Any:
    t = r.choice(_tickers(w))
    return (f"{t} profile", f"Get the stock information for the ticker {t}.", "Describe the stock.",
            [("get_stock_info", {"ticker": t})])  # fmt: skip


def _yf_history(r: random.Random, w: dict[str, Any]) -> Any:
    t = r.choice(_tickers(w))
    start = date(2025, 1, 6) + timedelta(days=r.randrange(0, 100))
    end = start + timedelta(days=r.choice([7, 14, 30]))
    return (
        f"{t} price history",
        f"Get the daily historical prices of {t} from {start.isoformat()} to {end.isoformat()}, then its "
        "dividends and stock splits.",
        "Summarise the price history.",
        [("get_historical_stock_prices", {"ticker": t, "start_date": start.isoformat(),
                                          "end_date": end.isoformat(), "interval": "1d"}),
         ("get_stock_actions", {"ticker": t})],
    )  # fmt: skip


def _yf_options(r: random.Random, w: dict[str, Any]) -> Any:
    t = r.choice(_tickers(w))
    kind = r.choice(["calls", "puts"])
    return (
        f"{t} {kind}",
        f"List the option expiration dates of {t}, then get the {kind} chain for the first expiration date.",
        "Describe the nearest option chain.",
        [("get_option_expiration_dates", {"ticker": t}),
         ("get_option_chain", {"ticker": t, "expiration_date": Ref(0, [0]), "option_type": kind})],
    )  # fmt: skip


def _yf_fundamentals(r: random.Random, w: dict[str, Any]) -> Any:
    t = r.choice(_tickers(w))
    st = r.choice(["income_stmt", "quarterly_income_stmt", "balance_sheet", "cashflow"])
    ht = r.choice(["major_holders", "institutional_holders", "mutualfund_holders"])
    return (
        f"{t} fundamentals",
        f"For {t}: get the financial statement '{st}', the holder information '{ht}' and the analyst "
        "recommendations (type 'recommendations').",
        "Assess the fundamentals.",
        [("get_financial_statement", {"ticker": t, "financial_type": st}),
         ("get_holder_info", {"ticker": t, "holder_type": ht}),
         ("get_recommendations", {"ticker": t, "recommendation_type": "recommendations"})],
    )  # fmt: skip


def _yf_full(r: random.Random, w: dict[str, Any]) -> Any:
    t = r.choice(_tickers(w))
    first = Ref(1, [0])
    return (
        f"{t} options desk",
        f"For {t}: get the stock information, list the option expiration dates, get the calls and the puts "
        "chains for the first expiration date, and the analyst recommendations (type 'recommendations').",
        "Brief an options trader.",
        [("get_stock_info", {"ticker": t}), ("get_option_expiration_dates", {"ticker": t}),
         ("get_option_chain", {"ticker": t, "expiration_date": first, "option_type": "calls"}),
         ("get_option_chain", {"ticker": t, "expiration_date": first, "option_type": "puts"}),
         ("get_recommendations", {"ticker": t, "recommendation_type": "recommendations"})],
    )  # fmt: skip


TEMPLATES: dict[str, tuple[Template, ...]] = {
    "airbnb": (_ab_search, _ab_search_top, _ab_price, _ab_compare, _ab_details, _ab_pages),
    "healthcare": (_hc_drug, _hc_code, _hc_condition, _hc_drug_review, _hc_full),
    "sports": (_sp_teams, _sp_player_games, _sp_player, _sp_date_game, _sp_chain),
    "national_parks": (_np_state, _np_name, _np_trip, _np_visit, _np_full),
    "yfinance": (_yf_info, _yf_options, _yf_history, _yf_fundamentals, _yf_full),
}
"""Per domain, its templates (1 to 5 calls; later arguments read from earlier results)."""


def _render(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 400 else text[:399] + "…"


def task_id(domain: str, index: int) -> str:
    """The id of generated task ``index`` (0-based) of ``domain``: ``<domain>-<index+1:03d>``."""
    return f"{domain}-{index + 1:03d}"


def generated_task_ids(domain: str, n: int = TASKS_PER_DOMAIN) -> list[str]:
    """The ids of :func:`generate_tasks` ``(domain, seed, n)``, in order, for every seed (it
    returns exactly ``n`` tasks or raises), told without generating."""
    return [task_id(domain, i) for i in range(n)]


def generate_tasks(domain: str, seed: int, n: int = TASKS_PER_DOMAIN) -> list[dict[str, Any]]:
    """``n`` verified tasks of ``domain`` over the world of ``seed`` (deterministic).

    Each template instance is replayed on the world's tool functions; one whose calls raise
    (an error result on the server) or return an empty output, or that repeats an earlier
    task, is dropped.

    Returns:
        Task records (upstream's fields plus ``plan``), ids ``<domain>-NNN``.

    Raises:
        RuntimeError: fewer than ``n`` distinct tasks after many attempts (a world too small).
    """
    from suites._common.mcp_servers._base import BadRequest

    tools, world = _replayers(domain, seed)
    r = random.Random(f"mcpeval|{domain}|{seed}")
    templates = TEMPLATES[domain]
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    attempt = 0
    while len(out) < n:
        if attempt > 50 * n:
            raise RuntimeError(f"mcpeval: only {len(out)} distinct {domain} tasks for seed {seed}")
        name, description, goal, plan = templates[attempt % len(templates)](r, world)
        attempt += 1
        results: list[Any] = []
        calls = []
        try:
            for tool, args in plan:
                concrete = _resolve_args(args, results)
                result = tools[tool](**concrete)
                if _empty(result):
                    raise LookupError("empty output")
                results.append(json.loads(json.dumps(result, default=str)))
                calls.append({"tool_name": tool, "tool_parameters": concrete})
        except (BadRequest, LookupError, KeyError, IndexError):
            continue
        key = json.dumps(calls, sort_keys=True)
        if key in seen:
            continue
        seen.add(key)
        out.append({
            "id": task_id(domain, len(out)),
            "name": name,
            "description": description,
            "goal": goal,
            "tool_calls": calls,
            "final_response": f"Result of {calls[-1]['tool_name']}: {_render(results[-1])}",
            "plan": [{"tool_name": t, "tool_parameters": a} for t, a in plan],
        })  # fmt: skip
    return out


# -- task files ---------------------------------------------------------------------------------

UNSUPPORTED = "unsupported"
"""The category of a loaded task that no local server can run (its item is skipped with the
reason): tools no local server serves, calls of several servers, or no ground-truth call."""
_REQUIRED = {"id": str, "name": str, "description": str, "tool_calls": list}
_ID = re.compile(r"[A-Za-z0-9_.:-]+")
_SERVED = "the airbnb, healthcare, sports, national_parks and yfinance tools"


def tool_domain(tool_names: set[str]) -> str | None:
    """The domain whose server serves every tool in ``tool_names`` (None when none does)."""
    for domain in DOMAINS:
        if tool_names <= set(TOOLS[SERVER_OF[domain]]):
            return domain
    return None


class _BadLine:
    """A JSONL line that is not JSON: an entry of its own (it errors alone)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem


def _read_records(path: Path, text: str) -> tuple[str, list[tuple[str, Any]]]:
    """The file's records as ``(kind, [(where, record)])``: ``task`` (a JSONL line or an
    element of a JSON array of tasks), ``result`` (an element of a JSON array written by
    upstream's ``evaluate``: a model's run, with the task under ``task``) or ``metrics`` (an
    entry of the ``task_results`` of upstream's task-metrics file). ``where`` is the record's
    place (``line 2``, ``record 3``, ``task_results[0]``), without the file. A JSONL line that
    is not JSON is a record of its own (:class:`_BadLine`); a file none of whose lines is JSON
    is refused whole.

    Raises:
        ValueError: a problem of the whole file (names the file and the fix).
    """
    head = text.lstrip()[:1]
    if head == "[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg}); fix: a JSON array of "
                             "task objects, or one JSON task object per line (JSONL)") from None  # fmt: skip
        results = [isinstance(r, dict) and isinstance(r.get("task"), dict) for r in data]
        kind = "result" if results and all(results) else "task"
        return kind, [(f"record {i + 1}", r) for i, r in enumerate(data)]
    if head == "{":
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSONL: one object per line
        if isinstance(data, dict) and "task_results" in data:
            results = data["task_results"]
            if not isinstance(results, list):
                raise ValueError(f"{path}: field 'task_results' must be a list, got "
                                 f"{type(results).__name__}; fix: upstream's layout")  # fmt: skip
            return "metrics", [(f"task_results[{i}]", r) for i, r in enumerate(results)]
        if isinstance(data, dict) and "summary" in data and {"tool_usage", "success_patterns"} & set(data):
            raise ValueError(f"{path}: this is upstream's summary analysis (aggregates, no task); fix: "
                             "give the task file, or the task_metrics.json of the same analysis")  # fmt: skip
    records: list[tuple[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((f"line {n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            records.append((f"line {n}", _BadLine(exc.msg)))
    if records and all(isinstance(r, _BadLine) for _, r in records):
        raise ValueError(f"{path}: not JSON: no line is a JSON object; fix: a JSON array of task objects, or "
                         "one JSON task object per line (JSONL)")  # fmt: skip
    return "task", records


def _check_calls(calls: list[Any], where: str, field: str) -> list[dict[str, Any]]:
    for i, call in enumerate(calls):
        if not (isinstance(call, dict) and isinstance(call.get("tool_name"), str)
                and isinstance(call.get("tool_parameters", {}), dict)):  # fmt: skip
            raise ValueError(f"{where}: field '{field}[{i}]' must be an object with 'tool_name' "
                             "(str) and 'tool_parameters' (object); fix: correct that call")  # fmt: skip
    return [{"tool_name": c["tool_name"], "tool_parameters": dict(c.get("tool_parameters") or {})}
            for c in calls]  # fmt: skip


def _field(record: dict[str, Any], key: str, kind: type, where: str, owner: str = "every task") -> Any:
    if key not in record:
        raise ValueError(f"{where}: field '{key}' is missing; fix: add '{key}' ({kind.__name__}) to {owner}")
    if not isinstance(record[key], kind):
        raise ValueError(f"{where}: field '{key}' must be a {kind.__name__}, got "
                         f"{type(record[key]).__name__}; fix: correct its type")  # fmt: skip
    return record[key]


def _task(kind: str, record: Any, where: str) -> dict[str, Any]:
    """One record as a task (upstream's fields), ``unrunnable`` set when it cannot run here.

    Raises:
        ValueError: the record is malformed (``<where>: field ...; fix: ...``).
    """
    if isinstance(record, _BadLine):
        raise ValueError(f"{where}: not valid JSON ({record.problem}); fix: one JSON task object per line")
    if not isinstance(record, dict):
        raise ValueError(f"{where}: not a JSON object; fix: one JSON task object per "
                         f"{'line' if 'line' in where else 'record'}")  # fmt: skip
    why: list[str] = []
    if kind == "task":
        for key, typ in _REQUIRED.items():
            _field(record, key, typ, where)
        task = dict(record)
        calls = _check_calls(record["tool_calls"], where, "tool_calls")
    elif kind == "result":
        inner = record["task"]
        task = {"id": _field(inner, "id", str, where + " task", "every result's task")}
        for key in ("name", "description"):
            task[key] = _field(inner, key, str, where + " task", "every result's task")
        task["goal"] = inner.get("goal") if isinstance(inner.get("goal"), str) else ""
        if isinstance(inner.get("tool_calls"), list):
            calls = _check_calls(inner["tool_calls"], where + " task", "tool_calls")
        else:
            calls = []
            why.append("it is a result of upstream's evaluate: its 'tool_calls' are a model's calls, and its "
                       "task holds no ground-truth 'tool_calls'")  # fmt: skip
    else:  # metrics
        task = {"id": _field(record, "task_id", str, where, "every task result")}
        calls = _check_calls(_field(record, "ground_truth_calls", list, where, "every task result"), where,
                             "ground_truth_calls")  # fmt: skip
        task.update(name="", description="", goal="")
        why.append("upstream's task-metrics files keep no task text (name, description), so a model "
                   "could not be told the task")  # fmt: skip
    if not _ID.fullmatch(task["id"]):
        raise ValueError(f"{where}: field 'id' {task['id']!r} has characters other than letters, digits "
                         "and _.:-; fix: rename the task")  # fmt: skip
    task["tool_calls"] = calls
    names = {c["tool_name"] for c in calls}
    served = {t for d in DOMAINS for t in TOOLS[SERVER_OF[d]]}
    if kind != "result" and not names:
        why.append("its ground truth lists no call (any agent that calls no tool would succeed)")
    elif names and tool_domain(names) is None:
        lacking = sorted(names - served)
        if lacking:
            why.append(f"no local MCP server serves {', '.join(lacking)} (served: {_SERVED})")
        else:
            spread = sorted({d for d in DOMAINS for t in names if t in TOOLS[SERVER_OF[d]]})
            why.append(f"its calls use the tools of several servers ({', '.join(spread)}); one MCPEval "
                       "task here uses one domain's server")  # fmt: skip
    if why:
        task["unrunnable"] = "; ".join(why)
    return task


def load_task_file(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Tasks from a file in one of upstream MCPEval's layouts.

    * JSONL (``generate-tasks`` / ``verify-tasks``): one task object per line with ``id``,
      ``name``, ``description`` (str), ``goal`` (str, optional), ``tool_calls`` (the ground
      truth: a list of ``{"tool_name": str, "tool_parameters": object}``), ``final_response``
      (optional); a JSON array of such objects is read the same way;
    * a JSON array written by ``evaluate`` (each element a model's run with the task under
      ``task``): the tasks are read from ``task``; the element's own ``tool_calls`` are the
      model's calls, never the ground truth;
    * a task-metrics file of ``analyze`` (``{"task_results": [{"task_id",
      "ground_truth_calls", ...}], ...}``).

    A task's category is the domain whose local server serves every tool its ground truth
    names. A task that cannot run here is kept, with ``unrunnable`` saying why (its item is
    skipped with the reason): no ground-truth call, tools no local server serves (category
    :data:`UNSUPPORTED`), calls of several servers, no task text (a task-metrics entry), or an
    ``evaluate`` result whose task holds no ground truth.

    Returns:
        ``(category, task)`` pairs in file order.

    Raises:
        ValueError: the file cannot be read or is not JSON / JSONL, a record is not an object,
            a field is missing or of the wrong type, an id repeats or has other characters than
            letters, digits and ``_.:-``, the file holds no task, or it is upstream's summary
            analysis (no task); the message names the file, the line or record, the field
            and the fix.
    """
    kind, records = read_task_entries(path)
    out: list[tuple[str, dict[str, Any]]] = []
    ids: set[str] = set()
    for where, record in records:
        try:
            out.append(task_of(kind, record, where, ids))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
    return out


def read_task_entries(path: Path) -> tuple[str, list[tuple[str, Any]]]:
    """The records of a task file before any is checked: ``(kind, [(where, record)])`` (see
    :func:`load_task_file` for the layouts; ``where`` is ``line 2``, ``record 3`` or
    ``task_results[0]``). The suite builds each record alone (:func:`task_of`), so one bad
    record errors alone.

    Raises:
        ValueError: a problem of the whole file: it cannot be read, is not JSON / JSONL (no line
            is JSON), is upstream's summary analysis, or holds no task (names the file and the
            fix).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the task file ({exc.strerror}); fix: give an existing "
                         "task file with --egi-opt mcpeval.tasks=PATH") from None  # fmt: skip
    kind, records = _read_records(path, text)
    if not records:
        raise ValueError(f"{path}: no task in the file; fix: one JSON task object per line")
    return kind, records


def task_of(kind: str, record: Any, where: str, ids: set[str]) -> tuple[str, dict[str, Any]]:
    """One record of a task file as ``(category, task)`` (``unrunnable`` set when it cannot run
    here; ``source`` = ``where``); ``ids`` (the ids seen so far) gets its id.

    Raises:
        ValueError: the record is malformed or repeats an id (``<where>: field ...; fix: ...``,
            without the file).
    """
    task = _task(kind, record, where)
    if task["id"] in ids:
        raise ValueError(f"{where}: field 'id' {task['id']!r} repeats; fix: give every task a unique id")
    ids.add(task["id"])
    task["source"] = where
    names = {c["tool_name"] for c in task["tool_calls"]}
    domain = tool_domain(names) if names else None
    return domain or UNSUPPORTED, task
