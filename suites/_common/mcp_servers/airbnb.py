"""Travel listings: MCPEval's airbnb domain (upstream: ``@openbnb/mcp-server-airbnb``).

Tools (upstream names and parameters): ``airbnb_search(location, checkin?, checkout?, adults?,
children?, infants?, pets?, minPrice?, maxPrice?, cursor?, ignoreRobotsText?)`` and
``airbnb_listing_details(id, checkin?, checkout?, adults?, children?, infants?, pets?,
ignoreRobotsText?)``. Results are JSON text shaped as upstream's: ``{searchUrl, searchResults
[{id, url, demandStayListing, badges, structuredContent, avgRatingA11yLabel,
structuredDisplayPrice}], paginationInfo}`` and ``{listingUrl, details [sections
LOCATION_DEFAULT, POLICIES_DEFAULT, HIGHLIGHTS_DEFAULT, DESCRIPTION_DEFAULT,
AMENITIES_DEFAULT]}``; with both dates given, details add a ``BOOK_IT_DEFAULT`` section with
availability and the price of the stay (offline stand-in for the live booking widget).

World: 12 synthetic listings in each of 10 cities; nightly prices, a cleaning fee, guest and
pet limits, and booked date ranges around today (2025-06-05). ``ignoreRobotsText`` is accepted
and has no effect (there is no website). A search returns 6 listings per page; ``cursor`` is the
``nextPageCursor`` of the previous page.

Open world (``--open-world``, ``build_world(seed, open_world=True)``; upstream task files name
real places and listing ids): a search whose location matches none of the ten cities (and has
a letter, at most 100 characters) is answered from 24 listings generated from (seed, the
location's key: lower-cased, punctuation dropped), with 18-digit ids; a details request for an
id of digits that is not in the world is answered from a listing generated from (seed, id)
alone, so a listing found by a search reads the same from its id (its city is not known from
the id: the details name only the neighbourhood). The same query gets the same answer in
every process, whatever was asked before; without the flag the world and every result are
exactly the closed world above.
"""

from __future__ import annotations

import base64
import json
from datetime import date, timedelta
from typing import Any
from urllib.parse import quote, urlencode

from suites._common.mcp_servers._base import (
    TODAY,
    BadRequest,
    make_server,
    open_key,
    open_rng,
    parse_date,
    rng,
)

__all__ = ["CITIES", "build_server", "build_world", "listing_details", "search"]

BASE_URL = "https://www.airbnb.com"
PAGE_SIZE = 6
PER_CITY = 12

CITIES: list[dict[str, Any]] = [
    {"city": "Lisbon", "country": "Portugal", "lat": 38.722, "lng": -9.139, "price": 95},
    {"city": "Kyoto", "country": "Japan", "lat": 35.012, "lng": 135.768, "price": 120},
    {"city": "Austin", "country": "United States", "lat": 30.267, "lng": -97.743, "price": 140},
    {"city": "Edinburgh", "country": "United Kingdom", "lat": 55.953, "lng": -3.188, "price": 130},
    {"city": "Cape Town", "country": "South Africa", "lat": -33.925, "lng": 18.424, "price": 85},
    {"city": "Barcelona", "country": "Spain", "lat": 41.387, "lng": 2.168, "price": 125},
    {"city": "Vancouver", "country": "Canada", "lat": 49.283, "lng": -123.121, "price": 160},
    {"city": "Mexico City", "country": "Mexico", "lat": 19.433, "lng": -99.133, "price": 70},
    {"city": "Melbourne", "country": "Australia", "lat": -37.814, "lng": 144.963, "price": 135},
    {"city": "Prague", "country": "Czech Republic", "lat": 50.075, "lng": 14.438, "price": 80},
]

_ADJ = [
    "Sunny",
    "Quiet",
    "Cozy",
    "Bright",
    "Charming",
    "Modern",
    "Spacious",
    "Airy",
    "Rustic",
    "Elegant",
    "Leafy",
    "Minimalist",
]
_NOUN = {
    "entire_home": ["loft", "apartment", "townhouse", "cottage", "studio", "flat"],
    "private_room": ["room", "guest room", "suite"],
    "hotel_room": ["boutique hotel room", "hotel suite"],
}
_NEAR = [
    "near the old town",
    "by the river",
    "close to the market",
    "with a city view",
    "next to the park",
    "in a historic building",
    "steps from the tram",
    "with a garden terrace",
]
_AMENITY_GROUPS = {
    "Bathroom": ["Hair dryer", "Shampoo", "Hot water", "Bathtub"],
    "Kitchen and dining": ["Kitchen", "Refrigerator", "Microwave", "Coffee maker", "Dishwasher", "Oven"],
    "Internet and office": ["Wifi", "Dedicated workspace"],
    "Heating and cooling": ["Air conditioning", "Heating", "Ceiling fan"],
    "Parking and facilities": ["Free parking on premises", "Elevator", "Pool", "Gym"],
    "Home safety": ["Smoke alarm", "Carbon monoxide alarm", "Fire extinguisher", "First aid kit"],
    "Outdoor": ["Patio or balcony", "Backyard", "BBQ grill"],
}
_HIGHLIGHTS = [
    "Self check-in",
    "Great location",
    "Great check-in experience",
    "Free cancellation for 48 hours",
    "Dive right in",
    "Fast wifi",
    "Walkable area",
    "Superhost",
]


def _listing(r: Any, lid: str, room_type: str, bedrooms: int, max_guests: int, base_price: float,
             where: dict[str, Any], k: int) -> dict[str, Any]:
    """One listing's attributes, drawn from ``r`` after its type, size and id (``where``:
    ``city``, ``country`` (None in an open world's listing found by id), ``lat``, ``lng``)."""
    nightly = round(base_price * (0.55 + bedrooms * 0.35) * r.uniform(0.7, 1.5))
    amenities = {g: sorted(r.sample(items, r.randint(1, len(items)))) for g, items in _AMENITY_GROUPS.items()}
    booked = []
    for _ in range(r.randint(1, 4)):
        start = TODAY + timedelta(days=r.randint(-10, 90))
        booked.append((start.isoformat(), (start + timedelta(days=r.randint(2, 9))).isoformat()))
    return {
        "id": lid,
        "name": f"{r.choice(_ADJ)} {r.choice(_NOUN[room_type])} {r.choice(_NEAR)}",
        "city": where["city"],
        "country": where["country"],
        "room_type": room_type,
        "bedrooms": bedrooms,
        "beds": bedrooms + r.choice([0, 0, 1]),
        "baths": max(1.0, bedrooms - r.choice([0, 1]) + r.choice([0.0, 0.5])),
        "max_guests": max_guests,
        "pets_allowed": r.random() < 0.35,
        "nightly": nightly,
        "cleaning_fee": round(nightly * r.uniform(0.15, 0.5)),
        "rating": round(r.uniform(4.1, 5.0), 2),
        "reviews": r.randint(3, 480),
        "superhost": r.random() < 0.4,
        "lat": round(where["lat"] + r.uniform(-0.04, 0.04), 5),
        "lng": round(where["lng"] + r.uniform(-0.05, 0.05), 5),
        "neighborhood": f"District {k % 5 + 1}",
        "amenities": amenities,
        "highlights": sorted(r.sample(_HIGHLIGHTS, 3)),
        "check_in": f"{r.choice([14, 15, 16])}:00",
        "check_out": f"{r.choice([10, 11, 12])}:00",
        "smoking": False,
        "parties": r.random() < 0.1,
        "booked": sorted(booked),
    }


def _shape(r: Any) -> tuple[str, int, int]:
    room_type = r.choices(list(_NOUN), weights=[6, 3, 1])[0]
    bedrooms = 1 if room_type != "entire_home" else r.choice([1, 1, 2, 2, 3, 4])
    return room_type, bedrooms, min(16, bedrooms * 2 + r.choice([0, 0, 1, 2]))


def build_world(seed: int, open_world: bool = False) -> dict[str, Any]:
    """The listings of one seed: ``{"listings": {id: listing}}`` (ids are 8-9 digit strings).

    With ``open_world`` the dict also holds ``"open_world": True`` and ``"seed"``: a search
    whose location matches no city here, and a details request for an id of digits that is
    not here, are answered from listings generated from the query (module docstring); the
    listings here are the same either way."""
    if open_world:
        return {**build_world(seed), "open_world": True, "seed": seed}
    r = rng(seed, "airbnb")
    listings: dict[str, dict[str, Any]] = {}
    for city in CITIES:
        for k in range(PER_CITY):
            room_type, bedrooms, max_guests = _shape(r)
            lid = str(r.randrange(10_000_000, 999_999_999))
            while lid in listings:
                lid = str(r.randrange(10_000_000, 999_999_999))
            listings[lid] = _listing(r, lid, room_type, bedrooms, max_guests, city["price"], city, k)
    return {"listings": listings}


# -- open world: listings generated from the query -----------------------------------------------

OPEN_PER_LOCATION = 24
"""Listings an open world generates for a location that matches no city of the world."""
_OPEN_ID_RANGE = (10**17, 10**18)
"""Ids of the listings an open world generates for a location (18 digits, as Airbnb's newer
ids: never one of the world's 8-9 digit ids)."""


def _open_listing(world: dict[str, Any], lid: str) -> dict[str, Any]:
    """The listing with id ``lid`` (digits) in an open world: a function of (seed, id)
    alone. Its city is not known from the id (None): a search shows the location it was
    found under."""
    cache = world.setdefault("open_listings", {})
    if lid not in cache:
        r = open_rng(world["seed"], "airbnb", "listing", lid)
        room_type, bedrooms, max_guests = _shape(r)
        where = {"city": None, "country": None, "lat": r.uniform(-40.0, 60.0), "lng": r.uniform(-120, 150)}
        base_price = r.uniform(60, 200)
        cache[lid] = _listing(r, lid, room_type, bedrooms, max_guests, base_price, where, int(lid) % 5)
    return cache[lid]


def _open_location(world: dict[str, Any], location: str) -> list[dict[str, Any]]:
    """The listings an open world holds at ``location`` (:data:`OPEN_PER_LOCATION`, ids drawn
    from (seed, location key)); each listing itself is :func:`_open_listing` of its id."""
    r = open_rng(world["seed"], "airbnb", "location", open_key(location))
    return [_open_listing(world, str(r.randrange(*_OPEN_ID_RANGE))) for _ in range(OPEN_PER_LOCATION)]


def _open_location_ok(location: str) -> bool:
    key = open_key(location)
    return any(c.isalpha() for c in key) and len(key) <= 100


def _matches(listing: dict[str, Any], location: str) -> bool:
    want = location.lower().replace(",", " ").split()
    have = f"{listing['city']} {listing['country']}".lower().split()
    return bool(want) and all(any(h.startswith(w) for h in have) for w in want)


def _stay(checkin: str | None, checkout: str | None) -> tuple[date, date] | None:
    if checkin is None and checkout is None:
        return None
    if checkin is None or checkout is None:
        raise BadRequest("give both checkin and checkout (YYYY-MM-DD), or neither")
    start, end = parse_date(checkin, "checkin"), parse_date(checkout, "checkout")
    if end <= start:
        raise BadRequest(f"checkout ({checkout}) must be after checkin ({checkin})")
    if start < TODAY:
        raise BadRequest(f"checkin ({checkin}) is in the past (today is {TODAY.isoformat()})")
    return start, end


def _available(listing: dict[str, Any], stay: tuple[date, date] | None) -> bool:
    if stay is None:
        return True
    start, end = stay
    return all(
        end <= date.fromisoformat(b0) or start >= date.fromisoformat(b1) for b0, b1 in listing["booked"]
    )


def _guests(
    adults: float | None, children: float | None, infants: float | None, pets: float | None
) -> tuple[int, ...]:
    values = tuple(int(v or 0) for v in (adults if adults is not None else 1, children, infants, pets))
    if any(v < 0 for v in values):
        raise BadRequest("guest counts cannot be negative")
    return values


def _cursor(offset: int) -> str:
    return base64.b64encode(f"offset:{offset}".encode()).decode()


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    try:
        kind, _, value = base64.b64decode(cursor, validate=True).decode().partition(":")
        if kind != "offset":
            raise ValueError
        return int(value)
    except ValueError:
        raise BadRequest(f"cursor {cursor!r} is not a pagination cursor from a previous search") from None


def _price(listing: dict[str, Any], stay: tuple[date, date] | None) -> dict[str, Any]:
    if stay is None:
        label = f"${listing['nightly']} per night"
        return {"primaryLine": {"accessibilityLabel": label}}
    nights = (stay[1] - stay[0]).days
    total = listing["nightly"] * nights + listing["cleaning_fee"]
    return {
        "primaryLine": {"accessibilityLabel": f"${total} total"},
        "secondaryLine": {"accessibilityLabel": f"${listing['nightly']} per night"},
        "explanationData": {
            "title": "Price details",
            "priceDetails": [
                {
                    "description": f"{nights} nights x ${listing['nightly']}",
                    "priceString": f"${listing['nightly'] * nights}",
                },
                {"description": "Cleaning fee", "priceString": f"${listing['cleaning_fee']}"},
            ],
        },
    }


def search(
    world: dict[str, Any],
    location: str,
    checkin: str | None = None,
    checkout: str | None = None,
    adults: float | None = None,
    children: float | None = None,
    infants: float | None = None,
    pets: float | None = None,
    minPrice: float | None = None,
    maxPrice: float | None = None,
    cursor: str | None = None,
) -> dict[str, Any]:
    """The search result (upstream shape); prices filter on the nightly price."""
    if not str(location).strip():
        raise BadRequest("location must not be empty")
    stay = _stay(checkin, checkout)
    n_adults, n_children, n_infants, n_pets = _guests(adults, children, infants, pets)
    offset = _offset(cursor)
    here = [lst for lst in world["listings"].values() if _matches(lst, location)]
    if not here and world.get("open_world") and _open_location_ok(location):
        here = _open_location(world, location)
    hits = [
        lst
        for lst in here
        if n_adults + n_children <= lst["max_guests"]
        and (n_pets == 0 or lst["pets_allowed"])
        and _available(lst, stay)
        and (minPrice is None or lst["nightly"] >= minPrice)
        and (maxPrice is None or lst["nightly"] <= maxPrice)
    ]
    hits.sort(key=lambda lst: (-lst["rating"], -lst["reviews"], lst["id"]))
    page = hits[offset : offset + PAGE_SIZE]
    query = {
        k: v
        for k, v in (
            ("checkin", checkin),
            ("checkout", checkout),
            ("adults", n_adults),
            ("children", n_children),
            ("infants", n_infants),
            ("pets", n_pets),
            ("price_min", minPrice),
            ("price_max", maxPrice),
        )
        if v is not None
    }
    results = []
    for lst in page:
        badges = [{"text": "Superhost"}] if lst["superhost"] else []
        results.append(
            {
                "id": lst["id"],
                "url": f"{BASE_URL}/rooms/{lst['id']}",
                "demandStayListing": {
                    "id": base64.b64encode(f"DemandStayListing:{lst['id']}".encode()).decode(),
                    "description": {"name": {"localizedStringWithTranslationPreference": lst["name"]}},
                    "location": {"coordinate": {"latitude": lst["lat"], "longitude": lst["lng"]}},
                },
                "badges": badges,
                "structuredContent": {
                    "mapCategoryInfo": [
                        {"body": f"{lst['neighborhood']}, {lst['city'] or location.strip()}"}
                    ],
                    "primaryLine": [
                        {"body": f"{lst['bedrooms']} bedroom{'s' if lst['bedrooms'] > 1 else ''}"},
                        {"body": f"{lst['beds']} bed{'s' if lst['beds'] > 1 else ''}"},
                    ],
                    "secondaryLine": [{"body": f"Up to {lst['max_guests']} guests"}],
                },
                "avgRatingA11yLabel": f"{lst['rating']:.2f} out of 5 average rating, "
                f"{lst['reviews']} reviews",
                "structuredDisplayPrice": _price(lst, stay),
            }
        )
    pages = [_cursor(o) for o in range(0, len(hits), PAGE_SIZE)]
    nxt = offset + PAGE_SIZE
    return {
        "searchUrl": f"{BASE_URL}/s/{quote(location)}/homes" + (f"?{urlencode(query)}" if query else ""),
        "searchResults": results,
        "paginationInfo": {"pageCursors": pages, "nextPageCursor": _cursor(nxt) if nxt < len(hits) else None},
    }


def listing_details(
    world: dict[str, Any],
    id: str,
    checkin: str | None = None,
    checkout: str | None = None,
    adults: float | None = None,
    children: float | None = None,
    infants: float | None = None,
    pets: float | None = None,
) -> dict[str, Any]:
    """The listing's detail sections (upstream shape); :class:`BadRequest` for an unknown id."""
    key = str(id).strip()
    lst = world["listings"].get(key)
    if lst is None and world.get("open_world") and key.isdigit() and len(key) <= 20:
        lst = _open_listing(world, key)
    if lst is None:
        raise BadRequest(f"no listing with id {id!r} (ids come from airbnb_search results)")
    stay = _stay(checkin, checkout)
    n_adults, n_children, n_infants, n_pets = _guests(adults, children, infants, pets)
    rules = [
        {"title": f"Check-in after {lst['check_in']}"},
        {"title": f"Checkout before {lst['check_out']}"},
        {"title": f"{lst['max_guests']} guests maximum"},
        {"title": "Pets allowed" if lst["pets_allowed"] else "No pets"},
        {"title": "No smoking"},
        {"title": "Parties allowed" if lst["parties"] else "No parties or events"},
    ]
    kind = {"entire_home": "Entire home", "private_room": "Private room", "hotel_room": "Hotel room"}[
        lst["room_type"]
    ]
    details: list[dict[str, Any]] = [
        {
            "id": "LOCATION_DEFAULT",
            "lat": lst["lat"],
            "lng": lst["lng"],
            "title": "Where you'll be",
            "subtitle": ", ".join(x for x in (lst["neighborhood"], lst["city"], lst["country"]) if x),
        },
        {
            "id": "POLICIES_DEFAULT",
            "title": "Things to know",
            "houseRulesSections": [{"title": "House rules", "items": rules}],
        },
        {"id": "HIGHLIGHTS_DEFAULT", "highlights": [{"title": h} for h in lst["highlights"]]},
        {
            "id": "DESCRIPTION_DEFAULT",
            "htmlDescription": {
                "htmlText": (
                    f"{lst['name']}. {kind} with {lst['bedrooms']} bedroom(s), {lst['beds']} bed(s) and "
                    f"{lst['baths']:g} bath(s), for up to {lst['max_guests']} guests. "
                    f"Rated {lst['rating']:.2f} "
                    f"from {lst['reviews']} reviews."
                )
            },
        },
        {
            "id": "AMENITIES_DEFAULT",
            "title": "What this place offers",
            "seeAllAmenitiesGroups": [
                {"title": g, "amenities": [{"title": a} for a in items]}
                for g, items in lst["amenities"].items()
            ],
        },
    ]
    if stay is not None:
        nights = (stay[1] - stay[0]).days
        fits = n_adults + n_children <= lst["max_guests"] and (n_pets == 0 or lst["pets_allowed"])
        details.append(
            {
                "id": "BOOK_IT_DEFAULT",
                "available": _available(lst, stay) and fits,
                "nights": nights,
                "pricePerNight": lst["nightly"],
                "cleaningFee": lst["cleaning_fee"],
                "total": lst["nightly"] * nights + lst["cleaning_fee"],
                "currency": "USD",
            }
        )
    query = {
        k: v
        for k, v in (
            ("check_in", checkin),
            ("check_out", checkout),
            ("adults", n_adults),
            ("children", n_children),
            ("infants", n_infants),
            ("pets", n_pets),
        )
        if v is not None
    }
    return {"listingUrl": f"{BASE_URL}/rooms/{lst['id']}?{urlencode(query)}", "details": details}


def build_server(seed: int, open_world: bool = False) -> Any:
    """Airbnb-style listings MCP server over a seeded synthetic world."""
    world = build_world(seed, open_world=open_world)

    def airbnb_search(
        location: str,
        checkin: str | None = None,
        checkout: str | None = None,
        adults: float | None = None,
        children: float | None = None,
        infants: float | None = None,
        pets: float | None = None,
        minPrice: float | None = None,
        maxPrice: float | None = None,
        cursor: str | None = None,
        ignoreRobotsText: bool | None = None,
    ) -> str:
        """Search for Airbnb listings with various filters and pagination. Provide direct links to the user.

        Args:
            location: Location to search for (city, state, etc.)
            checkin: Check-in date (YYYY-MM-DD)
            checkout: Check-out date (YYYY-MM-DD)
            adults: Number of adults
            children: Number of children
            infants: Number of infants
            pets: Number of pets
            minPrice: Minimum price per night
            maxPrice: Maximum price per night
            cursor: Base64-encoded string used for pagination
            ignoreRobotsText: Ignore robots.txt rules for this request
        """
        return json.dumps(
            search(
                world,
                location,
                checkin,
                checkout,
                adults,
                children,
                infants,
                pets,
                minPrice,
                maxPrice,
                cursor,
            ),
            indent=2,
        )

    def airbnb_listing_details(
        id: str,
        checkin: str | None = None,
        checkout: str | None = None,
        adults: float | None = None,
        children: float | None = None,
        infants: float | None = None,
        pets: float | None = None,
        ignoreRobotsText: bool | None = None,
    ) -> str:
        """Get detailed information about a specific Airbnb listing. Provide direct links to the user.

        Args:
            id: The Airbnb listing ID
            checkin: Check-in date (YYYY-MM-DD)
            checkout: Check-out date (YYYY-MM-DD)
            adults: Number of adults
            children: Number of children
            infants: Number of infants
            pets: Number of pets
            ignoreRobotsText: Ignore robots.txt rules for this request
        """
        return json.dumps(
            listing_details(world, id, checkin, checkout, adults, children, infants, pets), indent=2
        )

    return make_server(
        "airbnb",
        "Search stays and read listing details.",
        [(airbnb_search, False), (airbnb_listing_details, False)],
    )


if __name__ == "__main__":
    from suites._common.mcp_servers._base import OPEN_WORLD_FLAG, main

    main(build_server, flags=OPEN_WORLD_FLAG)
