"""National parks: MCPEval's national_parks domain (upstream: npm ``mcp-server-nationalparks``
over the NPS API).

Tools (upstream names and parameters): ``findParks(stateCode?, q?, limit?, start?,
activities?)``, ``getParkDetails(parkCode)``, ``getAlerts(parkCode?, limit?, start?, q?)``,
``getVisitorCenters(parkCode?, limit?, start?, q?)``, ``getCampgrounds(parkCode?, limit?,
start?, q?)``, ``getEvents(parkCode?, limit?, start?, dateStart?, dateEnd?, q?)``. Results are
JSON text shaped as upstream's: lists as ``{total, limit, start, <parks|alerts|visitorCenters|
campgrounds|events>: [...]}`` and a park's details as one object. ``limit`` defaults to 10 and
is capped at 50; ``start`` is the offset; ``parkCode`` and ``stateCode`` take comma-separated
lists; ``q`` matches name/title or description (case-insensitive substring); ``activities``
keeps parks offering every listed activity. An unknown ``parkCode`` for ``getParkDetails`` or
an invalid state code is an error result.

World: 24 synthetic parks across real US states, with alerts, visitor centers, campgrounds and
events dated around today (2025-06-05).

Open world (``--open-world``, ``build_world(seed, open_world=True)``; upstream task files name
real parks and codes): a park search that finds nothing is answered with a park generated for
the query (by name: one park named after ``q``, code from the first two letters of its first
two words, ``yose`` for "Yosemite"; by state only: two parks whose codes start with the
state), and a four-letter code that is not in the world (details, alerts, visitor centers,
campgrounds, events) with the park generated from (seed, code) alone: the same park, except
that a search by name shows the name it searched for. Each such park has at least one alert
and a weekly ranger walk on Saturdays over the next months. Without the flag the world and
every result are exactly the closed world above.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from suites._common.mcp_servers._base import TODAY, BadRequest, make_server, open_rng, parse_date, rng

__all__ = ["STATE_CODES", "build_server", "build_world", "find_parks", "list_items", "park_details"]

STATE_CODES = [
    "AL",
    "AK",
    "AZ",
    "AR",
    "CA",
    "CO",
    "CT",
    "DE",
    "FL",
    "GA",
    "HI",
    "ID",
    "IL",
    "IN",
    "IA",
    "KS",
    "KY",
    "LA",
    "ME",
    "MD",
    "MA",
    "MI",
    "MN",
    "MS",
    "MO",
    "MT",
    "NE",
    "NV",
    "NH",
    "NJ",
    "NM",
    "NY",
    "NC",
    "ND",
    "OH",
    "OK",
    "OR",
    "PA",
    "RI",
    "SC",
    "SD",
    "TN",
    "TX",
    "UT",
    "VT",
    "VA",
    "WA",
    "WV",
    "WI",
    "WY",
    "DC",
    "AS",
    "GU",
    "MP",
    "PR",
    "VI",
]
_STATES = [
    "CA",
    "UT",
    "AZ",
    "WY",
    "MT",
    "CO",
    "WA",
    "OR",
    "AK",
    "TN",
    "NC",
    "ME",
    "FL",
    "TX",
    "NM",
    "MI",
    "VA",
    "SD",
    "NV",
    "HI",
    "KY",
    "MN",
    "ID",
    "AR",
]
_NAME_A = [
    "Cedar",
    "Granite",
    "Silver",
    "Eagle",
    "Thunder",
    "Whispering",
    "Red",
    "Blue",
    "Hidden",
    "Crystal",
    "Stone",
    "Pine",
    "Falcon",
    "Echo",
    "Sunset",
    "Bear",
    "Juniper",
    "Aspen",
    "Coral",
    "Shadow",
    "Willow",
    "Copper",
    "Misty",
    "Raven",
]
_NAME_B = [
    "Canyon",
    "Hollow",
    "Peaks",
    "Mesa",
    "Lakes",
    "Ridge",
    "Dunes",
    "Falls",
    "Basin",
    "Bluffs",
    "Gorge",
    "Valley",
]
_DESIGNATIONS = [
    "National Park",
    "National Park",
    "National Park",
    "National Monument",
    "National Preserve",
    "National Recreation Area",
]
_ACTIVITIES = [
    "Hiking",
    "Camping",
    "Fishing",
    "Boating",
    "Stargazing",
    "Wildlife Watching",
    "Horseback Riding",
    "Rock Climbing",
    "Biking",
    "Kayaking",
    "Snowshoeing",
    "Birdwatching",
    "Guided Tours",
    "Swimming",
]
_TOPICS = [
    "Geology",
    "Glaciers",
    "Volcanoes",
    "Forests",
    "Deserts",
    "Waterfalls",
    "Native American Heritage",
    "Pioneer History",
    "Caves",
    "Night Sky",
]
_FEATURES = [
    "sandstone arches",
    "alpine lakes",
    "old-growth forest",
    "lava fields",
    "slot canyons",
    "river gorges",
    "coastal cliffs",
    "limestone caves",
    "wildflower meadows",
    "glacial valleys",
]
_ALERT_CATEGORIES = ["Information", "Caution", "Danger", "Park Closure"]
_ALERT_SUBJECTS = [
    "Trail closure",
    "Road construction",
    "Fire restrictions",
    "Bear activity",
    "Flash flood risk",
    "Campground water outage",
    "Shuttle schedule change",
    "Extreme heat",
]
_EVENT_KINDS = [
    ("Ranger-Led Hike", "Guided Tour"),
    ("Night Sky Program", "Talk"),
    ("Junior Ranger Day", "Family"),
    ("Wildflower Walk", "Guided Tour"),
    ("Volunteer Trail Work", "Volunteer"),
    ("Campfire Talk", "Talk"),
]


Records = list[dict[str, Any]]
Bundle = tuple[dict[str, Any], Records, Records, Records, Records]


def _park_bundle(r: Any, base: str, code: str, state: str) -> Bundle:
    """One park (named ``base``, code ``code``, first state ``state``) and its alerts, visitor
    centers, campgrounds and events, drawn from ``r``."""
    words = base.split()
    parks: list[dict[str, Any]] = []
    alerts: list[dict[str, Any]] = []
    centers: list[dict[str, Any]] = []
    camps: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    designation = r.choice(_DESIGNATIONS)
    states = [state] + ([r.choice(_STATES)] if r.random() < 0.15 else [])
    states = list(dict.fromkeys(states))
    feature = r.choice(_FEATURES)
    lat, lng = round(r.uniform(25, 48), 6), round(r.uniform(-124, -70), 6)
    city = f"{words[0]}ville"
    fee = r.choice([0, 20, 25, 30, 35])
    parks.append(
        {
            "name": f"{base} {designation}",
            "code": code,
            "designation": designation,
            "states": states,
            "description": f"{base} protects {feature} and the wildlife that depends on them, "
            "with trails for "
            f"every level and {r.randint(2, 9)} scenic overlooks.",
            "url": f"https://www.nps.gov/{code}/index.htm",
            "activities": sorted(r.sample(_ACTIVITIES, r.randint(4, 8))),
            "topics": sorted(r.sample(_TOPICS, 3)),
            "weatherInfo": f"Summer highs reach {r.randint(70, 105)}F; "
            f"winter lows drop to {r.randint(-10, 45)}F. "
            "Afternoon storms are common in July and August.",
            "directionsInfo": f"From {city}, follow State Route {r.randint(10, 399)} "
            f"for {r.randint(5, 60)} miles "
            "to the main entrance.",
            "location": {
                "latitude": str(lat),
                "longitude": str(lng),
                "address": {
                    "line1": f"{r.randint(1, 9999)} Park Entrance Road",
                    "line2": "",
                    "city": city,
                    "stateCode": state,
                    "postalCode": f"{r.randint(10000, 99999)}",
                },
            },
            "contacts": {
                "phoneNumbers": [
                    {
                        "type": "Voice",
                        "number": f"({r.randint(200, 989)}) 555-{r.randint(1000, 9999)}",
                        "extension": "",
                        "description": "",
                    }
                ],
                "emailAddresses": [{"address": f"{code}_info@nps.gov", "description": ""}],
            },
            "entranceFees": (
                [
                    {
                        "title": "Private Vehicle",
                        "cost": f"${fee}.00",
                        "description": "Admits one vehicle and its passengers for 7 days.",
                    },
                    {
                        "title": "Per Person",
                        "cost": f"${fee // 2}.00",
                        "description": "Admits one visitor on foot or bicycle for 7 days.",
                    },
                ]
                if fee
                else []
            ),
            "entrancePasses": [
                {
                    "title": f"{base} Annual Pass",
                    "cost": f"${fee * 2 + 25}.00",
                    "description": "Unlimited entry for twelve months from purchase.",
                }
            ],
            "operatingHours": [
                {
                    "name": base,
                    "description": "Open all year, 24 hours a day.",
                    "standardHours": [
                        f"{d}: All Day"
                        for d in (
                            "Monday",
                            "Tuesday",
                            "Wednesday",
                            "Thursday",
                            "Friday",
                            "Saturday",
                            "Sunday",
                        )
                    ],
                }
            ],
            "images": [
                {
                    "url": f"https://www.nps.gov/common/uploads/{code}-{i}.jpg",
                    "title": f"{base} view {i}",
                    "altText": f"A view of the {feature} at {base}",
                    "caption": "",
                    "credit": "NPS Photo",
                }
                for i in (1, 2)
            ],
        }
    )
    for _ in range(r.randint(0, 3)):
        subject = r.choice(_ALERT_SUBJECTS)
        category = r.choice(_ALERT_CATEGORIES)
        alerts.append(
            {
                "title": f"{subject} at {base}",
                "parkCode": code,
                "type": category,
                "description": f"{subject} is in effect in parts of the park. Check at a visitor center "
                "before heading out.",
                "url": f"https://www.nps.gov/{code}/planyourvisit/conditions.htm",
                "lastUpdated": (TODAY - timedelta(days=r.randint(0, 40))).isoformat(),
            }
        )
    for i in range(r.randint(1, 2)):
        open_h, close_h = r.choice([8, 9]), r.choice([16, 17, 18])
        centers.append(
            {
                "name": f"{words[i % len(words)]} Visitor Center",
                "parkCode": code,
                "description": f"Exhibits on the {feature}, a park film, restrooms and trip planning.",
                "url": f"https://www.nps.gov/{code}/planyourvisit/visitorcenters.htm",
                "directionsInfo": f"{r.randint(1, 20)} miles past the main entrance.",
                "location": {
                    "latitude": str(round(lat + r.uniform(-0.1, 0.1), 6)),
                    "longitude": str(round(lng + r.uniform(-0.1, 0.1), 6)),
                },
                "operatingHours": [
                    {
                        "name": "Summer hours",
                        "description": "",
                        "standardHours": [
                            f"{d}: {open_h}:00AM - {close_h - 12}:00PM"
                            for d in (
                                "Monday",
                                "Tuesday",
                                "Wednesday",
                                "Thursday",
                                "Friday",
                                "Saturday",
                                "Sunday",
                            )
                        ],
                    }
                ],
            }
        )
    for _ in range(r.randint(1, 3)):
        total = r.randint(12, 320)
        reservable = r.randint(0, total)
        camps.append(
            {
                "name": f"{r.choice(_NAME_A)} "
                f"{r.choice(['Flat', 'Spring', 'Point', 'Meadow', 'Creek'])} Campground",
                "parkCode": code,
                "description": f"Campground near the {feature}.",
                "url": f"https://www.nps.gov/{code}/planyourvisit/camping.htm",
                "reservationInfo": "Reserve up to six months ahead on recreation.gov."
                if reservable
                else "First come, first served.",
                "fees": [
                    {
                        "title": "Standard site",
                        "cost": f"${r.choice([15, 20, 25, 30, 36])}.00",
                        "description": "Per night, up to six people.",
                    }
                ],
                "totalSites": str(total),
                "sitesReservable": str(reservable),
                "sitesFirstComeFirstServe": str(total - reservable),
                "amenities": sorted(
                    r.sample(
                        [
                            "Toilets (Flush Toilets)",
                            "Potable Water",
                            "Showers",
                            "Dump Station",
                            "Camp Store",
                            "Firewood For Sale",
                            "Food Storage Lockers",
                            "Cell Phone Reception",
                        ],
                        4,
                    )
                ),
                "accessibility": {
                    "rvAllowed": r.random() < 0.6,
                    "rvMaxLength": str(r.choice([25, 30, 35, 40])),
                    "wheelchairAccess": "Accessible sites available.",
                },
            }
        )
    for _ in range(r.randint(1, 3)):
        title, category = r.choice(_EVENT_KINDS)
        day = TODAY + timedelta(days=r.randint(-5, 60))
        events.append(
            {
                "title": title,
                "parkCode": code,
                "parkName": f"{base} {designation}",
                "description": f"Join a ranger to explore the {feature}.",
                "category": category,
                "tags": [category.lower(), "ranger program"],
                "location": f"{words[0]} Visitor Center",
                "dateTime": {
                    "dates": day.isoformat(),
                    "times": f"{r.choice([9, 10, 19, 20])}:00",
                    "dateStart": day.isoformat(),
                    "dateEnd": day.isoformat(),
                    "isAllDay": False,
                    "isRecurring": False,
                },
                "feeInfo": "Free" if r.random() < 0.8 else "$5 per person",
                "infoUrl": f"https://www.nps.gov/{code}/planyourvisit/calendar.htm",
            }
        )
    return parks[0], alerts, centers, camps, events


def build_world(seed: int, open_world: bool = False) -> dict[str, Any]:
    """``{"parks": [...], "alerts": [...], "visitorCenters": [...], "campgrounds": [...], "events": [...]}``
    in upstream's formatted shapes (park records carry ``code``; the others ``parkCode``).

    With ``open_world`` the dict also holds ``"open_world": True`` and ``"seed"``: a park
    search that finds nothing here, and a four-letter park code that is not here, are
    answered from parks generated from the query (module docstring); the parks here are the
    same either way."""
    if open_world:
        return {**build_world(seed), "open_world": True, "seed": seed}
    r = rng(seed, "national_parks")
    parks, alerts, centers, camps, events = [], [], [], [], []
    names = r.sample([f"{a} {b}" for a in _NAME_A for b in _NAME_B], len(_STATES))
    for state, base in zip(_STATES, names, strict=True):
        words = base.split()
        code = (words[0][:2] + words[1][:2]).lower()
        while any(p["code"] == code for p in parks):
            code = code[:3] + chr(ord("a") + r.randrange(26))
        park, more_alerts, more_centers, more_camps, more_events = _park_bundle(r, base, code, state)
        parks.append(park)
        alerts += more_alerts
        centers += more_centers
        camps += more_camps
        events += more_events
    return {
        "parks": parks,
        "alerts": alerts,
        "visitorCenters": centers,
        "campgrounds": camps,
        "events": events,
    }


# -- open world: parks generated from the query ----------------------------------------------------

_PARK_CODE = re.compile(r"^[a-z]{4}$")
"""A park code an open world answers for (NPS codes are four letters)."""
_OPEN_STATES = [c for c in STATE_CODES if c not in ("DC", "AS", "GU", "MP", "PR", "VI")]
_KINDS = {"alerts", "visitorCenters", "campgrounds", "events"}


def _open_park(world: dict[str, Any], code: str, base: str | None = None) -> dict[str, Any]:
    """The park with ``code`` in an open world and its alerts, visitor centers, campgrounds
    and events: a function of (seed, code) alone, except that a search by name passes the
    name it found the park under as ``base`` (the park's own name otherwise comes from the
    code). Its first state is the code's first two letters when they are a state code."""
    r = open_rng(world["seed"], "national_parks", "park", code)
    state = code[:2].upper() if code[:2].upper() in _OPEN_STATES else r.choice(_OPEN_STATES)
    own = f"{r.choice(_NAME_A)} {r.choice(_NAME_B)}"
    park, alerts, centers, camps, events = _park_bundle(r, base or own, code, state)
    if not alerts:
        alerts = [{"title": f"No closures at {base or own}", "parkCode": code, "type": "Information",
                   "description": "All roads and trails are open.", "lastUpdated": TODAY.isoformat(),
                   "url": f"https://www.nps.gov/{code}/planyourvisit/conditions.htm"}]  # fmt: skip
    first = TODAY - timedelta(days=TODAY.weekday() + 2)  # the Saturday before today
    for week in range(30):  # a weekly program, so any window of a week in the next months has one
        day = (first + timedelta(weeks=week)).isoformat()
        when = {**events[0]["dateTime"], "dates": day, "dateStart": day, "dateEnd": day}
        events.append({**events[0], "title": "Weekend Ranger Walk", "category": "Guided Tour",
                       "dateTime": when})  # fmt: skip
    return {"parks": [park], "alerts": alerts, "visitorCenters": centers, "campgrounds": camps,
            "events": events}  # fmt: skip


def _free_code(world: dict[str, Any], code: str) -> str:
    """``code``, or the next free one (last letter moved on) when a park here has it."""
    taken = {p["code"] for p in world["parks"]}
    while code in taken:
        code = code[:3] + chr((ord(code[3]) - ord("a") + 1) % 26 + ord("a"))
    return code


def _open_search(
    world: dict[str, Any], states: list[str] | None, q: str | None
) -> list[dict[str, Any]]:
    """The parks an open world finds for a search that finds none here: by name, one park
    named after ``q`` (code: the first two letters of its first two words, or of the state
    when a state is asked); by state only, two parks whose codes start with the state."""
    letters = [w for w in "".join(c if c.isalpha() else " " for c in (q or "").lower()).split()]
    if letters:
        tail = (letters[0][:2] + letters[1][:2]) if len(letters) > 1 else (letters[0] + "xxxx")[:4]
        codes = [(states[0].lower() + tail[:2]) if states else tail]
        base = " ".join(w.capitalize() for w in str(q).split())
        return [_open_park(world, _free_code(world, c), base)["parks"][0] for c in codes]
    out = []
    for state in states or []:
        r = open_rng(world["seed"], "national_parks", "state", state)
        for _ in range(2):
            tail = "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in "..")
            code = _free_code(world, state.lower() + tail)
            out.append(_open_park(world, code)["parks"][0])
    return out


def _limit(limit: float | None) -> int:
    if limit is None:
        return 10
    if limit < 1:
        raise BadRequest(f"limit must be at least 1, got {limit}")
    return int(min(limit, 50))


def _start(start: float | None) -> int:
    if start is not None and start < 0:
        raise BadRequest(f"start must not be negative, got {start}")
    return int(start or 0)


def _codes(value: str | None) -> set[str] | None:
    if not value:
        return None
    return {c.strip().lower() for c in value.split(",") if c.strip()}


def _q(record: dict[str, Any], q: str | None, *keys: str) -> bool:
    return not q or any(q.strip().lower() in str(record.get(k, "")).lower() for k in keys)


def _window(
    items: list[dict[str, Any]], key: str, limit: float | None, start: float | None
) -> dict[str, Any]:
    lim, off = _limit(limit), _start(start)
    return {"total": len(items), "limit": lim, "start": off, key: items[off : off + lim]}


def find_parks(
    world: dict[str, Any],
    stateCode: str | None = None,
    q: str | None = None,
    limit: float | None = None,
    start: float | None = None,
    activities: str | None = None,
) -> dict[str, Any]:
    """Parks filtered by state(s), search text and activities."""
    states = None
    if stateCode:
        states = [s.strip().upper() for s in stateCode.split(",") if s.strip()]
        bad = [s for s in states if s not in STATE_CODES]
        if bad:
            raise BadRequest(f"Invalid state code(s): {', '.join(bad)}")
    wanted = [a.strip().lower() for a in (activities or "").split(",") if a.strip()]

    def found(parks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [p for p in parks if (states is None or set(states) & set(p["states"]))
                and _q(p, q, "name", "description")
                and all(any(w in a.lower() for a in p["activities"]) for w in wanted)]  # fmt: skip

    hits = found(world["parks"])
    if not hits and world.get("open_world") and (states or (q and any(c.isalpha() for c in q))):
        hits = found(_open_search(world, states, q))
    keep = (
        "name",
        "code",
        "description",
        "states",
        "url",
        "designation",
        "activities",
        "weatherInfo",
        "entranceFees",
        "operatingHours",
        "contacts",
        "images",
    )
    parks = [
        {k: p[k] for k in keep}
        | {"location": {"latitude": p["location"]["latitude"], "longitude": p["location"]["longitude"]}}
        for p in hits
    ]
    return _window(parks, "parks", limit, start)


def park_details(world: dict[str, Any], parkCode: str) -> dict[str, Any]:
    """One park's details; :class:`BadRequest` for an unknown code."""
    code = str(parkCode).strip().lower()
    park = next((p for p in world["parks"] if p["code"] == code), None)
    if park is None and world.get("open_world") and _PARK_CODE.match(code):
        park = _open_park(world, code)["parks"][0]
    if park is None:
        raise BadRequest(f"No park found with park code: {parkCode!r} (codes come from findParks)")
    return park


def list_items(
    world: dict[str, Any],
    kind: str,
    parkCode: str | None = None,
    limit: float | None = None,
    start: float | None = None,
    q: str | None = None,
    dateStart: str | None = None,
    dateEnd: str | None = None,
) -> dict[str, Any]:
    """Alerts, visitor centers, campgrounds or events, filtered by park codes, text and dates."""
    codes = _codes(parkCode)
    lo = parse_date(dateStart, "dateStart").isoformat() if dateStart else None
    hi = parse_date(dateEnd, "dateEnd").isoformat() if dateEnd else None
    pool = world[kind]
    if codes and world.get("open_world") and kind in _KINDS:
        here = {p["code"] for p in world["parks"]}
        more = [c for c in sorted(codes - here) if _PARK_CODE.match(c)]
        pool = pool + [it for c in more for it in _open_park(world, c)[kind]]
    items = [
        it
        for it in pool
        if (codes is None or it["parkCode"] in codes)
        and _q(it, q, "title", "name", "description")
        and (lo is None or it["dateTime"]["dateStart"] >= lo)
        and (hi is None or it["dateTime"]["dateStart"] <= hi)
    ]
    return _window(items, kind, limit, start)


def build_server(seed: int, open_world: bool = False) -> Any:
    """National parks MCP server over a seeded synthetic world."""
    world = build_world(seed, open_world=open_world)

    def findParks(
        stateCode: str | None = None,
        q: str | None = None,
        limit: float | None = None,
        start: float | None = None,
        activities: str | None = None,
    ) -> str:
        """Search for national parks based on state, name, activities, or other criteria.

        Args:
            stateCode: Filter parks by state code (e.g., "CA" for California). Multiple states can be
                comma-separated (e.g., "CA,OR,WA")
            q: Search term to filter parks by name or description
            limit: Maximum number of parks to return (default: 10, max: 50)
            start: Start position for results (useful for pagination)
            activities: Filter by available activities (e.g., "hiking,camping")
        """
        return json.dumps(find_parks(world, stateCode, q, limit, start, activities), indent=2)

    def getParkDetails(parkCode: str) -> str:
        """Get detailed information about a specific national park.

        Args:
            parkCode: The park code of the national park (e.g., "ceca"), as returned by findParks
        """
        return json.dumps(park_details(world, parkCode), indent=2)

    def getAlerts(
        parkCode: str | None = None,
        limit: float | None = None,
        start: float | None = None,
        q: str | None = None,
    ) -> str:
        """Get current alerts for national parks including closures, hazards, and important information.

        Args:
            parkCode: Filter alerts by park code. Multiple parks can be comma-separated.
            limit: Maximum number of alerts to return (default: 10, max: 50)
            start: Start position for results (useful for pagination)
            q: Search term to filter alerts by title or description
        """
        return json.dumps(list_items(world, "alerts", parkCode, limit, start, q), indent=2)

    def getVisitorCenters(
        parkCode: str | None = None,
        limit: float | None = None,
        start: float | None = None,
        q: str | None = None,
    ) -> str:
        """Get information about visitor centers and their operating hours.

        Args:
            parkCode: Filter visitor centers by park code. Multiple parks can be comma-separated.
            limit: Maximum number of visitor centers to return (default: 10, max: 50)
            start: Start position for results (useful for pagination)
            q: Search term to filter visitor centers by name or description
        """
        return json.dumps(list_items(world, "visitorCenters", parkCode, limit, start, q), indent=2)

    def getCampgrounds(
        parkCode: str | None = None,
        limit: float | None = None,
        start: float | None = None,
        q: str | None = None,
    ) -> str:
        """Get information about available campgrounds and their amenities.

        Args:
            parkCode: Filter campgrounds by park code. Multiple parks can be comma-separated.
            limit: Maximum number of campgrounds to return (default: 10, max: 50)
            start: Start position for results (useful for pagination)
            q: Search term to filter campgrounds by name or description
        """
        return json.dumps(list_items(world, "campgrounds", parkCode, limit, start, q), indent=2)

    def getEvents(
        parkCode: str | None = None,
        limit: float | None = None,
        start: float | None = None,
        dateStart: str | None = None,
        dateEnd: str | None = None,
        q: str | None = None,
    ) -> str:
        """Find upcoming events at parks.

        Args:
            parkCode: Filter events by park code. Multiple parks can be comma-separated.
            limit: Maximum number of events to return (default: 10, max: 50)
            start: Start position for results (useful for pagination)
            dateStart: Start date for filtering events (format: YYYY-MM-DD)
            dateEnd: End date for filtering events (format: YYYY-MM-DD)
            q: Search term to filter events by title or description
        """
        return json.dumps(
            list_items(world, "events", parkCode, limit, start, q, dateStart, dateEnd), indent=2
        )

    tools = [findParks, getParkDetails, getAlerts, getVisitorCenters, getCampgrounds, getEvents]
    return make_server(
        "national_parks",
        "Information about parks, alerts, visitor centers, campgrounds and events.",
        [(fn, False) for fn in tools],
    )


if __name__ == "__main__":
    from suites._common.mcp_servers._base import OPEN_WORLD_FLAG, main

    main(build_server, flags=OPEN_WORLD_FLAG)
