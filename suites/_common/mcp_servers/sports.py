"""Sports: MCPEval's sports domain (upstream: a FastMCP server over the balldontlie API).

Tools (upstream names and parameters): ``get_teams(league)``, ``get_players(league,
first_name?, last_name?, cursor?)``, ``get_games(league, dates?, seasons?, team_ids?,
cursor?)``, ``get_game(league, game_id)``; ``league`` is one of NBA, MLB, NFL. Results keep
upstream's shape: a JSON object with ``status``, ``league``, a count, and the records rendered
as text blocks (``"Team ID: 3\\nFull Name: ..."``) separated by ``-----``, plus ``next_cursor``
for the paginated lists (25 records a page; the cursor is the last id of the page).

World: 12 synthetic teams per league, 10 players per team, and a season of games per league
(NBA and NFL season 2024, MLB seasons 2024 and 2025); games before today (2025-06-05) are
final with scores, later ones scheduled. Ids are unique across leagues.

Open world (``--open-world``, ``build_world(seed, open_world=True)``; upstream task files name
real players, dates and ids): a player search by name that finds nobody is answered with one
player of that name (on one of the league's teams), generated from (seed, league, names); a
game list (dates, seasons or team ids, 1-999) that finds nothing is answered with games
generated from the query (two a date, else eight a season), whose 13-digit ids encode the
date and the teams, so ``get_game`` with such an id reads the same game; any other unknown
game id (or team id in a game) is generated from (seed, league, id) alone. Without the flag
the world and every result are exactly the closed world above.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any, Literal

from suites._common.mcp_servers._base import (
    TODAY,
    BadRequest,
    make_server,
    open_key,
    open_rng,
    parse_date,
    rng,
)

__all__ = ["LEAGUES", "build_server", "build_world", "get_game", "get_games", "get_players", "get_teams"]

LEAGUES = ("NBA", "MLB", "NFL")
PAGE = 25
League = Literal["NBA", "MLB", "NFL"]

_CITIES = [
    ("Harbor City", "HC"),
    ("Riverton", "RIV"),
    ("Mesa Verde", "MV"),
    ("Northfield", "NOR"),
    ("Bayside", "BAY"),
    ("Granite Falls", "GF"),
    ("Lakeshore", "LAK"),
    ("Summit", "SUM"),
    ("Cedar Park", "CP"),
    ("Port Royal", "PR"),
    ("Silver Springs", "SS"),
    ("Westbrook", "WB"),
    ("Eastport", "EP"),
    ("Red Rock", "RR"),
    ("Iron Valley", "IV"),
    ("Clearwater", "CW"),
]
_MASCOTS = {
    "NBA": [
        "Comets",
        "Foxes",
        "Titans",
        "Hornets",
        "Blaze",
        "Storm",
        "Owls",
        "Kings",
        "Waves",
        "Jets",
        "Lynx",
        "Pilots",
    ],
    "MLB": [
        "Mariners",
        "Badgers",
        "Pioneers",
        "Sox",
        "Herons",
        "Miners",
        "Rangers",
        "Bison",
        "Cardinals",
        "Gulls",
        "Anchors",
        "Rockets",
    ],
    "NFL": [
        "Wolves",
        "Stallions",
        "Guardians",
        "Falcons",
        "Bulldogs",
        "Raptors",
        "Thunder",
        "Knights",
        "Bears",
        "Sentinels",
        "Mustangs",
        "Ironmen",
    ],
}
_CONF = {"NBA": ["East", "West"], "MLB": ["American", "National"], "NFL": ["AFC", "NFC"]}
_DIV = {
    "NBA": ["Atlantic", "Central", "Pacific"],
    "MLB": ["East", "Central", "West"],
    "NFL": ["North", "South", "West"],
}
_FIRST = [
    "Marcus",
    "Jalen",
    "Tyler",
    "Andre",
    "Luis",
    "Kenji",
    "Owen",
    "Mateo",
    "Darius",
    "Caleb",
    "Noah",
    "Isaiah",
    "Miles",
    "Victor",
    "Elias",
    "Rafael",
    "Jordan",
    "Trevor",
    "Devin",
    "Hugo",
    "Felix",
    "Omar",
    "Samuel",
    "Theo",
    "Bryce",
    "Cole",
    "Adrian",
    "Julian",
    "Grant",
    "Rowan",
]
_LAST = [
    "Whitfield",
    "Okafor",
    "Bramley",
    "Castellano",
    "Nakamura",
    "Hollis",
    "Vance",
    "Delgado",
    "Prescott",
    "Achebe",
    "Lindqvist",
    "Moreau",
    "Kowalski",
    "Ferreira",
    "Ashby",
    "Quinlan",
    "Renner",
    "Salazar",
    "Thornton",
    "Underwood",
    "Yilmaz",
    "Zeller",
    "Barros",
    "Caldwell",
    "Dunmore",
    "Ellison",
    "Fairbanks",
    "Galloway",
    "Hargrove",
    "Ingram",
]
_POS = {
    "NBA": ["G", "F", "C", "G-F", "F-C"],
    "MLB": ["Pitcher", "Catcher", "First Base", "Shortstop", "Outfielder"],
    "NFL": ["Quarterback", "Running Back", "Wide Receiver", "Linebacker", "Cornerback", "Tight End"],
}
_COLLEGES = [
    "State University",
    "Lakeside College",
    "Northern Tech",
    "Coastal University",
    "Valley A&M",
    "None",
]
_SEASONS = {
    "NBA": [(2024, date(2024, 10, 22), date(2025, 4, 13))],
    "MLB": [(2024, date(2024, 3, 28), date(2024, 9, 29)), (2025, date(2025, 3, 27), date(2025, 9, 28))],
    "NFL": [(2024, date(2024, 9, 5), date(2025, 1, 5))],
}
_GAMES_PER_SEASON = 60


def build_world(seed: int, open_world: bool = False) -> dict[str, Any]:
    """``{"teams": {league: [team]}, "players": {league: [player]}, "games": {league: [game]}}``.

    With ``open_world`` the dict also holds ``"open_world": True`` and ``"seed"``: a player
    search, a game list or a game id that finds nothing here is answered from records
    generated from the query (module docstring); the records here are the same either way."""
    if open_world:
        return {**build_world(seed), "open_world": True, "seed": seed}
    r = rng(seed, "sports")
    teams: dict[str, list[dict[str, Any]]] = {}
    players: dict[str, list[dict[str, Any]]] = {}
    games: dict[str, list[dict[str, Any]]] = {}
    next_team, next_player, next_game = 1, 1, 1
    for league in LEAGUES:
        cities = r.sample(_CITIES, 12)
        teams[league] = []
        for i, ((city, abbr), mascot) in enumerate(zip(cities, _MASCOTS[league], strict=True)):
            teams[league].append(
                {
                    "id": next_team,
                    "name": mascot,
                    "city": city,
                    "full_name": f"{city} {mascot}",
                    "abbreviation": (abbr + mascot[0])[:3].upper(),
                    "conference": _CONF[league][i % 2],
                    "division": _DIV[league][i // 4],
                    "venue": f"{city} {r.choice(['Arena', 'Field', 'Stadium', 'Park'])}",
                }
            )
            next_team += 1
        players[league] = []
        for team in teams[league]:
            for _ in range(10):
                first, last = r.choice(_FIRST), r.choice(_LAST)
                height_in = r.randint(70, 86) if league == "NBA" else r.randint(68, 78)
                players[league].append(
                    {
                        "id": next_player,
                        "first_name": first,
                        "last_name": last,
                        "position": r.choice(_POS[league]),
                        "height": f"{height_in // 12}-{height_in % 12}",
                        "weight": str(r.randint(170, 320)),
                        "jersey_number": str(r.randint(0, 99)),
                        "college": r.choice(_COLLEGES),
                        "age": r.randint(20, 38),
                        "experience": f"{r.randint(1, 15)}th Season",
                        "draft_year": r.randint(2008, 2024),
                        "team_id": team["id"],
                    }
                )
                next_player += 1
        games[league] = []
        for season, start, end in _SEASONS[league]:
            span = (end - start).days
            for k in range(_GAMES_PER_SEASON):
                home, away = r.sample(teams[league], 2)
                day = start + timedelta(days=round(k * span / _GAMES_PER_SEASON) + r.randint(0, 2))
                played = day < TODAY
                lo, hi = {"NBA": (88, 135), "MLB": (0, 11), "NFL": (3, 41)}[league]
                hs, vs = (r.randint(lo, hi), r.randint(lo, hi)) if played else (0, 0)
                if played and hs == vs and league != "NFL":
                    hs += 1
                games[league].append(
                    {
                        "id": next_game,
                        "date": day.isoformat(),
                        "season": season,
                        "home_team_id": home["id"],
                        "visitor_team_id": away["id"],
                        "home_team_score": hs,
                        "visitor_team_score": vs,
                        "status": "Final" if played else "Scheduled",
                        "postseason": False,
                        "week": (day - start).days // 7 + 1,
                        "attendance": r.randint(12_000, 68_000) if played else None,
                    }
                )
                next_game += 1
    return {"teams": teams, "players": players, "games": games}


def _league(league: str) -> str:
    value = str(league).strip().upper()
    if value not in LEAGUES:
        raise BadRequest(f"league must be one of NBA, MLB, NFL, got {league!r}")
    return value


def _team(world: dict[str, Any], league: str, team_id: int) -> dict[str, Any]:
    found = next((t for t in world["teams"][league] if t["id"] == team_id), None)
    return found if found is not None else _open_team(world, league, team_id)


# -- open world: records generated from the query -------------------------------------------------

_NAME = re.compile(r"[A-Za-z][A-Za-z .'-]{0,39}")
"""A player name (part) an open world answers a search for."""
_OPEN_GAME_BASE = 9 * 10**12
"""Ids of the games an open world generates for a list query: ``9DDDDDHHHAAAK`` (13 digits;
D: days since 2000-01-01, H / A: home and visitor team ids, K: 0-9), so a game listed by
``get_games`` reads the same from ``get_game`` with its id alone."""
_EPOCH = date(2000, 1, 1)


def _season_window(league: str, season: int) -> tuple[date, date]:
    """First and last day of a league's season (the world's calendar shifted to ``season``)."""
    if league == "MLB":
        return date(season, 3, 28), date(season, 9, 29)
    if league == "NBA":
        return date(season, 10, 22), date(season + 1, 4, 13)
    return date(season, 9, 5), date(season + 1, 1, 5)


def _season_of(league: str, day: date) -> int:
    return day.year if league == "MLB" or day.month >= 8 else day.year - 1


def _open_team(world: dict[str, Any], league: str, team_id: int) -> dict[str, Any]:
    """A team id the league does not have here, in an open world: generated from (seed,
    league, id) alone."""
    if not world.get("open_world"):
        raise BadRequest(f"Team ID {team_id} not found in {league}")
    r = open_rng(world["seed"], "sports", f"team-{league}", team_id)
    city, abbr = r.choice(_CITIES)
    mascot = r.choice(_MASCOTS[league])
    return {
        "id": team_id, "name": mascot, "city": city, "full_name": f"{city} {mascot}",
        "abbreviation": (abbr + mascot[0])[:3].upper(), "conference": r.choice(_CONF[league]),
        "division": r.choice(_DIV[league]),
        "venue": f"{city} {r.choice(['Arena', 'Field', 'Stadium', 'Park'])}",
    }  # fmt: skip


def _open_player(world: dict[str, Any], league: str, first: str | None, last: str | None) -> dict[str, Any]:
    """The player an open world finds for a name search (a function of (seed, league, the
    names given)); his team is one of the league's teams here."""
    key = f"{open_key(first or '')}|{open_key(last or '')}"
    r = open_rng(world["seed"], "sports", f"player-{league}", key)
    height_in = r.randint(70, 86) if league == "NBA" else r.randint(68, 78)
    return {
        "id": 100_000 + r.randrange(900_000),
        "first_name": (first or "").strip() or r.choice(_FIRST),
        "last_name": (last or "").strip() or r.choice(_LAST),
        "position": r.choice(_POS[league]), "height": f"{height_in // 12}-{height_in % 12}",
        "weight": str(r.randint(170, 320)), "jersey_number": str(r.randint(0, 99)),
        "college": r.choice(_COLLEGES), "age": r.randint(20, 38),
        "experience": f"{r.randint(1, 15)}th Season",
        "draft_year": r.randint(2008, 2024), "team_id": r.choice(world["teams"][league])["id"],
    }  # fmt: skip


def _open_game(world: dict[str, Any], league: str, game_id: int) -> dict[str, Any]:
    """A game id the league does not have here, in an open world: the date and teams of an
    id made by :func:`_open_games` (see :data:`_OPEN_GAME_BASE`), else drawn from the id;
    scores from (seed, league, id) alone."""
    r = open_rng(world["seed"], "sports", f"game-{league}", game_id)
    rest = game_id - _OPEN_GAME_BASE
    day, home, away = None, rest // 10**4 % 1000, rest // 10 % 1000
    if 0 <= rest < 10**12 and home and away and home != away:
        day = _EPOCH + timedelta(days=rest // 10**7)
    if day is None:
        start, end = _season_window(league, 2024)
        day = start + timedelta(days=r.randint(0, (end - start).days))
        home, away = (t["id"] for t in r.sample(world["teams"][league], 2))
    season = _season_of(league, day)
    played = day < TODAY
    lo, hi = {"NBA": (88, 135), "MLB": (0, 11), "NFL": (3, 41)}[league]
    hs, vs = (r.randint(lo, hi), r.randint(lo, hi)) if played else (0, 0)
    if played and hs == vs and league != "NFL":
        hs += 1
    return {
        "id": game_id, "date": day.isoformat(), "season": season, "home_team_id": home,
        "visitor_team_id": away,
        "home_team_score": hs, "visitor_team_score": vs, "status": "Final" if played else "Scheduled",
        "postseason": False, "week": max(1, (day - _season_window(league, season)[0]).days // 7 + 1),
        "attendance": r.randint(12_000, 68_000) if played else None,
    }  # fmt: skip


def _open_games(
    world: dict[str, Any], league: str, days: list[date], seasons: list[int], team_ids: list[int]
) -> list[dict[str, Any]]:
    """The games an open world lists for a query that finds none here: two on each asked
    date (at most ten dates), else eight over each asked season (at most three), else eight
    over the 2024 season; each involves the asked teams in turn (as the home team)."""
    key = f"{sorted(days)}|{sorted(seasons)}|{sorted(team_ids)}"
    r = open_rng(world["seed"], "sports", f"games-{league}", key)
    if days:
        when = [d for d in sorted(days)[:10] for _ in range(2)]
    else:
        when = []
        for season in sorted(seasons)[:3] or [2024]:
            start, end = _season_window(league, season)
            when += [start + timedelta(days=round(k * (end - start).days / 8)) for k in range(8)]
    here = [t["id"] for t in world["teams"][league]]
    games = []
    for i, day in enumerate(when):
        home = team_ids[i % len(team_ids)] if team_ids else r.choice(here)
        away = r.choice([t for t in here if t != home])
        game_id = _OPEN_GAME_BASE + (day - _EPOCH).days * 10**7 + home * 10**4 + away * 10 + i % 10
        games.append(_open_game(world, league, game_id))
    return games


def _team_text(team: dict[str, Any], league: str) -> str:
    lines = [
        f"Team ID: {team['id']}",
        f"Full Name: {team['full_name']}",
        f"Name: {team['name']}",
        f"Abbreviation: {team['abbreviation']}",
        f"City: {team['city']}",
        f"{'League' if league == 'MLB' else 'Conference'}: {team['conference']}",
        f"Division: {team['division']}",
    ]
    return "\n".join(lines)


def _player_text(world: dict[str, Any], p: dict[str, Any], league: str) -> str:
    team = _team(world, league, p["team_id"])
    lines = [
        f"Player ID: {p['id']}",
        f"First Name: {p['first_name']}",
        f"Last Name: {p['last_name']}",
        f"Position: {p['position']}",
        f"Height: {p['height']}",
        f"Weight: {p['weight']}",
        f"Jersey Number: {p['jersey_number']}",
        f"College: {p['college']}",
        f"Age: {p['age']}",
        f"Draft Year: {p['draft_year']}",
        f"Team ID: {team['id']}",
        f"Team Name: {team['full_name']}",
    ]
    return "\n".join(lines)


def _game_text(world: dict[str, Any], g: dict[str, Any], league: str) -> str:
    home, away = _team(world, league, g["home_team_id"]), _team(world, league, g["visitor_team_id"])
    hs, vs = g["home_team_score"], g["visitor_team_score"]
    winner = (
        "N/A"
        if g["status"] != "Final"
        else home["full_name"]
        if hs > vs
        else away["full_name"]
        if vs > hs
        else "Tie"
    )
    lines = [
        f"Game ID: {g['id']}",
        f"Date: {g['date']}",
        f"Season: {g['season']}",
        f"Status: {g['status']}",
        f"Postseason: {g['postseason']}",
        f"Venue: {home['venue']}",
    ]
    if league == "NFL":
        lines.append(f"Week: {g['week']}")
    if league == "MLB" and g["attendance"]:
        lines.append(f"Attendance: {g['attendance']}")
    lines += [
        f"Score: {home['full_name']} {hs} - {vs} {away['full_name']}",
        f"Home Team: {home['full_name']} ({home['abbreviation']}), Team ID {home['id']}",
        f"Visitor Team: {away['full_name']} ({away['abbreviation']}), Team ID {away['id']}",
        f"Winner: {winner}",
    ]
    return "\n".join(lines)


def _page(records: list[dict[str, Any]], cursor: int | None) -> tuple[list[dict[str, Any]], int | None]:
    start = 0 if not cursor else next((i + 1 for i, rec in enumerate(records) if rec["id"] == cursor), None)
    if start is None:
        raise BadRequest(f"cursor {cursor} is not the next_cursor of a previous page")
    page = records[start : start + PAGE]
    more = start + PAGE < len(records)
    return page, (page[-1]["id"] if more and page else None)


def get_teams(world: dict[str, Any], league: str) -> dict[str, Any]:
    """All teams of a league."""
    league = _league(league)
    teams = world["teams"][league]
    return {
        "status": "success",
        "league": league,
        "total_teams": len(teams),
        "teams": "\n-----\n".join(_team_text(t, league) for t in teams),
    }


def get_players(
    world: dict[str, Any],
    league: str,
    first_name: str | None = None,
    last_name: str | None = None,
    cursor: int | None = None,
) -> dict[str, Any]:
    """Players filtered by name (case-insensitive prefix), 25 a page."""
    league = _league(league)
    hits = [
        p
        for p in world["players"][league]
        if (not first_name or p["first_name"].lower().startswith(first_name.strip().lower()))
        and (not last_name or p["last_name"].lower().startswith(last_name.strip().lower()))
    ]
    named = [n for n in (first_name, last_name) if n and n.strip()]
    if not hits and world.get("open_world") and named and all(_NAME.fullmatch(n.strip()) for n in named):
        hits = [_open_player(world, league, first_name, last_name)]
    page, nxt = _page(hits, cursor)
    text = "\n-----\n".join(_player_text(world, p, league) for p in page) or "No players found."
    if nxt:
        text += f"\n\nPagination Information:\nnext_cursor: {nxt}"
    return {
        "status": "success",
        "league": league,
        "total_players": len(page),
        "players": text,
        "next_cursor": nxt,
    }


def get_games(
    world: dict[str, Any],
    league: str,
    dates: list[str] | None = None,
    seasons: list[int] | None = None,
    team_ids: list[int] | None = None,
    cursor: int | None = None,
) -> dict[str, Any]:
    """Games filtered by dates, seasons and team ids (a game of either team), 25 a page."""
    league = _league(league)
    wanted_dates = {parse_date(d, "dates").isoformat() for d in dates or []}
    def wanted(g: dict[str, Any]) -> bool:
        teams = (g["home_team_id"], g["visitor_team_id"])
        return ((not wanted_dates or g["date"] in wanted_dates) and (not seasons or g["season"] in seasons)
                and (not team_ids or any(t in team_ids for t in teams)))  # fmt: skip

    hits = [g for g in world["games"][league] if wanted(g)]
    asked = bool(wanted_dates or seasons or team_ids)
    if not hits and asked and world.get("open_world") and all(1 <= t <= 999 for t in team_ids or []):
        days = [date.fromisoformat(d) for d in wanted_dates]
        made = _open_games(world, league, days, list(seasons or []), list(team_ids or []))
        hits = [g for g in made if wanted(g)]
    page, nxt = _page(hits, cursor)
    text = "\n\n-----\n\n".join(_game_text(world, g, league) for g in page) or "No games found."
    if nxt:
        text += f"\n\nPagination Information:\nnext_cursor: {nxt}"
    return {
        "status": "success",
        "league": league,
        "total_games": len(page),
        "games": text,
        "next_cursor": nxt,
    }


def get_game(world: dict[str, Any], league: str, game_id: int) -> dict[str, Any]:
    """One game; :class:`BadRequest` when the league has no game with that id."""
    league = _league(league)
    game = next((g for g in world["games"][league] if g["id"] == game_id), None)
    if game is None and world.get("open_world") and game_id >= 1:
        game = _open_game(world, league, game_id)
    if game is None:
        raise BadRequest(f"Game ID {game_id} not found in {league}")
    return {
        "status": "success",
        "league": league,
        "game_id": game_id,
        "game": _game_text(world, game, league),
    }


def build_server(seed: int, open_world: bool = False) -> Any:
    """Sports (NBA/MLB/NFL) MCP server over a seeded synthetic world."""
    world = build_world(seed, open_world=open_world)

    def get_teams_tool(league: League) -> dict[str, Any]:
        """Get a list of teams for the NBA, NFL or MLB.

        Args:
            league: The sports league to get teams for (NBA, MLB, or NFL)
        """
        return get_teams(world, league)

    def get_players_tool(
        league: League, first_name: str | None = None, last_name: str | None = None, cursor: int | None = None
    ) -> dict[str, Any]:
        """Gets a list of players for the NBA, NFL or MLB.

        Args:
            league: The sports league to get players for (NBA, MLB, or NFL)
            first_name: The first name of the player to search for (optional)
            last_name: The last name of the player to search for (optional)
            cursor: Cursor for pagination (optional)
        """
        return get_players(world, league, first_name, last_name, cursor)

    def get_games_tool(
        league: League,
        dates: list[str] | None = None,
        seasons: list[int] | None = None,
        team_ids: list[int] | None = None,
        cursor: int | None = None,
    ) -> dict[str, Any]:
        """Gets the list of games for the NBA, NFL or MLB.

        Args:
            league: The sports league to get games for (NBA, MLB, or NFL)
            dates: Get games for specific dates, format: YYYY-MM-DD (optional)
            seasons: Get games for specific seasons, format: YYYY (optional)
            team_ids: Get games for specific team IDs (optional)
            cursor: Cursor for pagination (optional)
        """
        return get_games(world, league, dates, seasons, team_ids, cursor)

    def get_game_tool(league: League, game_id: int) -> dict[str, Any]:
        """Get a specific game from one of the following leagues NBA, MLB, NFL.

        Args:
            league: The sports league to get the game for (NBA, MLB, or NFL)
            game_id: The id of the game from the get_games tool
        """
        return get_game(world, league, game_id)

    tools = []
    for fn, name in (
        (get_teams_tool, "get_teams"),
        (get_players_tool, "get_players"),
        (get_games_tool, "get_games"),
        (get_game_tool, "get_game"),
    ):
        fn.__name__ = name
        tools.append((fn, True))
    return make_server("sports", "Teams, players and games of the NBA, MLB and NFL.", tools)


if __name__ == "__main__":
    from suites._common.mcp_servers._base import OPEN_WORLD_FLAG, main

    main(build_server, flags=OPEN_WORLD_FLAG)
