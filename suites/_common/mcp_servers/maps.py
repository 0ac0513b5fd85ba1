"""Maps: MCP-Universe's google-maps server (upstream: npm ``@modelcontextprotocol/server-google-maps``)
over a seeded world of real towns and seeded places.

Tools (upstream names, parameters and result shapes; results are JSON text):

- ``maps_geocode(address)`` → ``{location: {lat, lng}, formatted_address, place_id}``
- ``maps_reverse_geocode(latitude, longitude)`` → ``{formatted_address, place_id, address_components}``
- ``maps_search_places(query, location?: {latitude, longitude}, radius?)`` → ``{places: [{name,
  formatted_address, location: {lat, lng}, place_id, rating, types}]}`` (at most 20)
- ``maps_place_details(place_id)`` → ``{name, formatted_address, location, formatted_phone_number,
  website, rating, reviews, opening_hours}``
- ``maps_distance_matrix(origins[], destinations[], mode?)`` → ``{origin_addresses,
  destination_addresses, results: [{elements: [{status, duration: {text, value}, distance:
  {text, value}}]}]}``; an origin or destination may be ``place_id:<id>``, ``"<lat>,<lng>"``,
  a landmark, a town or a street address; element status ``OK``, ``NOT_FOUND`` (cannot be
  located) or ``ZERO_RESULTS`` (no route: different landmasses)
- ``maps_elevation(locations[{latitude, longitude}])`` → ``{results: [{elevation, location, resolution}]}``
- ``maps_directions(origin, destination, mode?)`` → ``{routes: [{summary, distance, duration,
  steps: [{instructions, distance, duration, travel_mode}]}]}``

World (:class:`MapsWorld`, ``build_world(seed)``): the towns and landmarks of
:mod:`.maps_gazetteer` (real names and coordinates); around each town a seeded set of places
(restaurants, cafes, hotels, gas stations, rest stops, scenic viewpoints, parks, museums,
libraries, hospitals, swimming pools, ...) uniformly spread over the town's disc, each with
types, a rating, an address naming its town and country, and a place id that encodes its
town and index with a seeded check code (an invented or edited id is unknown). Places are
generated per town when first asked for. A street address that is neither a landmark nor a
seeded place is located in the town it names, at an offset hashed from the text (the same for
every seed). Distances are great-circle (haversine) distance × a road factor per mode
(:data:`ROAD_FACTOR`); durations use fixed speeds (:data:`SPEED_KMH`). Elevation is a smooth
seeded field over latitude and longitude (15 to ~1400 m).

Errors follow upstream's texts (``Geocoding failed: ZERO_RESULTS``, ``Place details request
failed: NOT_FOUND`` ...) as MCP error results.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import itertools
import json
import math
import random
import re
import struct
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel

from suites._common.mcp_servers._base import BadRequest, make_server
from suites._common.mcp_servers.maps_gazetteer import LANDMARKS, LANDMASS, SIZES, TOWNS

__all__ = [
    "KINDS",
    "MODES",
    "PLACES_KEPT",
    "ROAD_FACTOR",
    "SPEED_KMH",
    "Landmark",
    "Location",
    "MapsWorld",
    "Town",
    "build_server",
    "build_world",
    "haversine_km",
    "norm",
]

MODES = ("driving", "walking", "bicycling", "transit")
ROAD_FACTOR: dict[str, float] = {"driving": 1.25, "walking": 1.2, "bicycling": 1.22, "transit": 1.3}
"""Road distance = haversine distance × this factor."""
SPEED_KMH: dict[str, float] = {"driving": 45.0, "walking": 5.0, "bicycling": 15.0, "transit": 30.0}
"""Fixed travel speed per mode (duration = road distance / speed)."""
MAX_RESULTS = 20
DEFAULT_RADIUS_M = 10_000.0
MAX_RADIUS_M = 50_000.0
_LANDMARK_TOWN = 0xFFFF

# kind → (weight, types, name nouns, search words)
KINDS: dict[str, tuple[int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "restaurant": (
        18,
        ("restaurant", "food"),
        (
            "Kitchen",
            "Bistro",
            "Grill",
            "Eatery",
            "Diner",
            "Noodle House",
            "Brasserie",
            "Trattoria",
            "Restaurant",
            "Tavern",
        ),
        ("restaurant", "restaurants", "food", "eat", "eatery", "dining", "diner", "lunch", "dinner", "meal"),
    ),
    "cafe": (
        14,
        ("cafe", "food"),
        ("Cafe", "Coffee House", "Espresso Bar", "Tea Room", "Coffee Roasters"),
        ("cafe", "cafes", "coffee", "coffeeshop", "espresso", "tea"),
    ),
    "hotel": (
        9,
        ("lodging", "hotel"),
        ("Hotel", "Inn", "Suites", "Lodge", "Motel", "Guesthouse"),
        ("hotel", "hotels", "lodging", "motel", "motels", "inn", "accommodation", "lodge"),
    ),
    "gas_station": (
        7,
        ("gas_station",),
        ("Fuel Stop", "Petrol Station", "Gas & Go", "Service Station"),
        ("gas", "petrol", "fuel", "gas_station", "gasoline"),
    ),
    "rest_stop": (
        5,
        ("rest_stop",),
        ("Rest Area", "Rest Stop", "Travel Plaza", "Wayside Rest Area"),
        ("rest", "rest_stop", "layby"),
    ),
    "viewpoint": (
        5,
        ("tourist_attraction", "scenic_viewpoint"),
        ("Viewpoint", "Lookout", "Scenic Overlook", "Vista Point"),
        (
            "viewpoint",
            "viewpoints",
            "lookout",
            "lookouts",
            "overlook",
            "overlooks",
            "scenic",
            "vista",
            "view",
            "views",
        ),
    ),
    "park": (
        7,
        ("park", "tourist_attraction"),
        ("Park", "Gardens", "Nature Reserve", "Green"),
        ("park", "parks", "garden", "gardens", "reserve"),
    ),
    "museum": (
        4,
        ("museum", "tourist_attraction"),
        ("Museum", "Heritage Museum", "Art Museum", "History Museum"),
        ("museum", "museums", "museo", "gallery"),
    ),
    "library": (
        3,
        ("library",),
        ("Public Library", "Library", "Community Library"),
        ("library", "libraries"),
    ),
    "hospital": (
        3,
        ("hospital", "health"),
        ("Hospital", "General Hospital", "Community Hospital"),
        ("hospital", "hospitals", "medical", "clinic"),
    ),
    "swimming_pool": (
        3,
        ("swimming_pool", "gym"),
        ("Swimming Complex", "Swimming Pool", "Aquatic Centre Swimming Pool"),
        ("swimming", "swim", "pool", "pools", "aquatic"),
    ),
    "supermarket": (
        6,
        ("supermarket", "grocery_or_supermarket", "food", "store"),
        ("Supermarket", "Fresh Market", "Grocers"),
        ("supermarket", "supermarkets", "grocery", "groceries"),
    ),
    "bakery": (
        4,
        ("bakery", "food", "store"),
        ("Bakery", "Bakehouse", "Patisserie"),
        ("bakery", "bakeries", "patisserie"),
    ),
    "pharmacy": (
        4,
        ("pharmacy", "health", "store"),
        ("Pharmacy", "Chemist"),
        ("pharmacy", "chemist", "drugstore"),
    ),
    "shopping_mall": (
        3,
        ("shopping_mall",),
        ("Mall", "Shopping Centre", "Plaza"),
        ("mall", "malls", "shopping"),
    ),
    "bar": (5, ("bar",), ("Bar", "Pub", "Taproom"), ("bar", "bars", "pub", "pubs")),
}
"""Place kind → (share weight, Google types, name nouns, query words that ask for it)."""

_PREFIX = (
    "Golden",
    "Riverside",
    "Old Town",
    "Harbour",
    "Sunrise",
    "Maple",
    "Lotus",
    "Hilltop",
    "Lakeside",
    "Cedar",
    "Silver",
    "Blue Door",
    "Garden Gate",
    "Corner",
    "Stonebridge",
    "Willow",
    "Summit",
    "Bayview",
    "Meadow",
    "Orchid",
    "Jade",
    "Copper",
    "Lantern",
    "Heritage",
    "Crescent",
    "Northgate",
    "Southbank",
    "Pine",
    "Coral",
    "Amber",
    "Ivy",
    "Morning Star",
    "Highland",
    "Valley",
    "Red Rock",
    "Olive",
    "Saffron",
    "Cinnamon",
    "Juniper",
    "Birch",
    "Oakwood",
    "Falcon",
    "Kestrel",
    "Pelican",
    "Heron",
    "Evergreen",
    "Moonlight",
    "Granite",
    "Fern",
    "Wildflower",
    "Starlight",
    "Driftwood",
)
_STREET = (
    "Station",
    "Market",
    "Hill",
    "River",
    "Lake",
    "Church",
    "Mill",
    "Park",
    "Bridge",
    "Forest",
    "Harbour",
    "Orchard",
    "Spring",
    "Valley",
    "Cedar",
    "Maple",
    "King",
    "Queen",
    "Victoria",
    "Garden",
    "Beach",
    "Canal",
    "Temple",
    "Palm",
    "Sunset",
    "Ridge",
    "Meadow",
    "Elm",
    "Olive",
)
_SUFFIX = ("Road", "Street", "Avenue", "Lane", "Drive", "Boulevard", "Way", "Highway")
_STOP = frozenset(
    "a an the in at near of on around within for and or to from by with best top good nice find me "
    "some any show list city town area station stop stops place places located location service "
    "centre center".split()
)


def norm(text: str) -> str:
    """Lower-case, accents stripped, every run of non-alphanumerics one space (for matching)."""
    s = str(text)
    if not s.isascii():
        s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return " ".join(_NON_ALNUM.sub(" ", s.lower()).split())


_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _has(text: str, key: str) -> bool:
    return bool(key) and f" {key} " in f" {text} "


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance in km (mean Earth radius 6371.0088 km)."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(a)))


_KM_PER_DEGREE_LAT = 6371.0088 * math.pi / 180


def _beyond_by_latitude(lat1: float, lat2: float, km: float) -> bool:
    """True when the two latitudes alone put the points more than ``km`` apart: the
    great-circle distance is at least the arc between the parallels (the margin, a billionth,
    is far above the floats' rounding, so a point :func:`haversine_km` puts within ``km`` is
    never ruled out). A cheap test before :func:`haversine_km`, which then decides."""
    return abs(lat1 - lat2) * _KM_PER_DEGREE_LAT > km * (1 + 1e-9) + 1e-9


@dataclass(frozen=True)
class Town:
    """One gazetteer town (plain facts): ``index`` is its row, ``radius_km`` and ``n_places``
    size its seeded place disc."""

    index: int
    name: str
    country: str
    admin: str
    lat: float
    lng: float
    size: str
    aliases: tuple[str, ...]

    @property
    def radius_km(self) -> float:
        return SIZES[self.size][0]

    @property
    def n_places(self) -> int:
        return SIZES[self.size][1]

    @property
    def landmass(self) -> str:
        return LANDMASS[self.country]

    def tail(self) -> str:
        """The town part of an address: ``Kluang, Johor, Malaysia``; ``Singapore``."""
        if self.country == self.name:
            return self.name
        parts = [self.name]
        if self.admin and norm(self.admin) != norm(self.name):
            parts.append(self.admin)
        parts.append(self.country)
        return ", ".join(parts)


@dataclass(frozen=True)
class Landmark:
    """A real landmark: name, aliases, street line, town, coordinates, Google types."""

    index: int
    name: str
    aliases: tuple[str, ...]
    street: str
    town: Town
    lat: float
    lng: float
    types: tuple[str, ...]

    @property
    def address(self) -> str:
        if norm(self.town.name) in norm(self.street):
            return f"{self.street}, {self.town.country}"
        return f"{self.street}, {self.town.tail()}"


@dataclass(frozen=True)
class Location:
    """Where a text (address, landmark, ``place_id:``, coordinates) points: coordinates, the
    formatted address, a place id, the place record when it is a place, and its landmass."""

    lat: float
    lng: float
    address: str
    place_id: str
    landmass: str
    place: dict[str, Any] | None = None


def _parse_towns() -> tuple[Town, ...]:
    out = []
    for i, row in enumerate(r for r in TOWNS.strip().splitlines() if r.strip()):
        name, country, admin, lat, lng, size, aliases = row.split("|")
        out.append(
            Town(
                i,
                name,
                country,
                admin,
                float(lat),
                float(lng),
                size,
                tuple(a for a in aliases.split(";") if a),
            )
        )
    return tuple(out)


TOWN_LIST: tuple[Town, ...] = _parse_towns()
_BY_NAME: dict[str, Town] = {norm(t.name): t for t in TOWN_LIST}


def _parse_landmarks() -> tuple[Landmark, ...]:
    out = []
    for i, row in enumerate(r for r in LANDMARKS.strip().splitlines() if r.strip()):
        name, aliases, street, town, lat, lng, types = row.split("|")
        out.append(
            Landmark(
                i,
                name,
                tuple(a for a in aliases.split(";") if a),
                street,
                _BY_NAME[norm(town)],
                float(lat),
                float(lng),
                tuple(types.split(";")),
            )
        )
    return tuple(out)


LANDMARK_LIST: tuple[Landmark, ...] = _parse_landmarks()

_TOWN_KEYS: list[tuple[str, Town]] = sorted(
    ((norm(k), t) for t in TOWN_LIST for k in (t.name, *t.aliases)), key=lambda kv: -len(kv[0])
)
_LANDMARK_KEYS: list[tuple[str, Landmark]] = sorted(
    ((norm(k), lm) for lm in LANDMARK_LIST for k in (lm.name, *lm.aliases, lm.street)),
    key=lambda kv: -len(kv[0]),
)
_PLACE_WORDS = frozenset(
    w
    for t in TOWN_LIST
    for k in (t.country, t.admin, "United States", "USA", "US", "UAE", "Italia", "France", "Japan")
    for w in norm(k).split()
)


def find_town(name: str) -> Town | None:
    """The town called ``name`` (or one of its aliases), else None."""
    n = norm(name)
    for key, town in _TOWN_KEYS:
        if key == n:
            return town
    return None


def towns_in(text: str) -> list[Town]:
    """Towns a text names (whole words, longer names first; an alias covered by a longer
    match is not counted twice)."""
    n = f" {norm(text)} "
    found: list[Town] = []
    for key, town in _TOWN_KEYS:
        if f" {key} " in n:
            n = n.replace(f" {key} ", " | ")
            if town not in found:
                found.append(town)
    return found


def _landmark_in(text: str) -> Landmark | None:
    n = norm(text)
    for key, lm in _LANDMARK_KEYS:
        if _has(n, key):
            return lm
    return None


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _hash(*parts: Any) -> bytes:
    return hashlib.sha256(":".join(map(str, parts)).encode()).digest()


def _coord_id(lat: float, lng: float) -> str:
    return "Eh" + _b64(f"{lat:.6f},{lng:.6f}".encode())


def _fmt_distance(m: int) -> str:
    if m < 1000:
        return f"{m} m"
    km = m / 1000
    return f"{km:.1f} km" if km < 100 else f"{round(km):,} km"


def _fmt_duration(s: int) -> str:
    mins = max(1, round(s / 60)) if s else 0
    days, rem = divmod(mins, 1440)
    hours, mins = divmod(rem, 60)

    def unit(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    if days:
        return " ".join([unit(days, "day")] + ([unit(hours, "hour")] if hours else []))
    if hours:
        return " ".join([unit(hours, "hour")] + ([unit(mins, "min")] if mins else []))
    return unit(mins, "min")


def _bearing_word(lat1: float, lng1: float, lat2: float, lng2: float) -> str:
    dy = lat2 - lat1
    dx = (lng2 - lng1) * math.cos(math.radians((lat1 + lat2) / 2))
    ang = (math.degrees(math.atan2(dx, dy)) + 360) % 360
    return ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")[
        int((ang + 22.5) // 45) % 8
    ]


PLACES_KEPT = 10_000
"""Seeded places a maps world keeps generated (with their look-up tables), the towns used
most recently (the town asked for last is always kept, Singapore's 20,000 places too); a town
let go of is generated again, the same, when next asked for (about 60 ms per 1,000 places).
Each place takes about 0.9 KB: the deep MCP-Universe run touches towns with 38,000 places
(about 36 MB), which the maps server and the worker's evaluators each kept to the end; kept to
10,000 places, the worker's evaluators generate 17 towns again (0.7 s more) and hold about
12 MB less."""


_PLACE_TYPES: dict[str, list[str]] = {}


def _place_types() -> dict[str, list[str]]:
    """Each kind's place ``types``, one list per kind for every place of it (read only: a
    result copies it, :func:`_public`)."""
    if not _PLACE_TYPES:
        _PLACE_TYPES.update({kind: [*KINDS[kind][1], "point_of_interest", "establishment"] for kind in KINDS})
    return _PLACE_TYPES


class MapsWorld:
    """The maps world of one seed (towns and landmarks are facts; places, ratings and the
    elevation field are seeded). Places of a town are generated on first use and kept, the
    most recently used towns' up to :data:`PLACES_KEPT` places."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._places: dict[int, tuple[dict[str, Any], ...]] = {}  # the most recently used last
        self._kept = 0
        self._index: dict[int, tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]] = {}
        r = random.Random(f"egi-mcp:maps:{seed}:elevation")
        self._waves = [
            (
                r.uniform(0.4, 1.0),
                r.uniform(0.3, 2.2),
                r.uniform(0, 6.3),
                r.uniform(0.3, 2.2),
                r.uniform(0, 6.3),
            )
            for _ in range(4)
        ] + [
            (r.uniform(0.1, 0.2), r.uniform(15, 40), r.uniform(0, 6.3), r.uniform(15, 40), r.uniform(0, 6.3))
            for _ in range(2)
        ]

    # ---- places ---------------------------------------------------------------------------

    def place_id(self, town_index: int, k: int) -> str:
        """The place id of place ``k`` of town ``town_index`` (``0xFFFF``: landmark ``k``)."""
        return "ChIJ" + _b64(
            struct.pack(">HH", town_index, k) + _hash("egi-maps", self.seed, town_index, k)[:14]
        )

    def places(self, town: Town) -> tuple[dict[str, Any], ...]:
        """Every seeded place of a town (dicts: place_id, name, kind, types, rating,
        user_ratings_total, lat, lng, address, town, country)."""
        got = self._places.pop(town.index, None)
        if got is None:
            got = self._generate(town)
            self._kept += len(got)
        self._places[town.index] = got  # the most recently used last
        while self._kept > PLACES_KEPT and len(self._places) > 1:
            oldest = next(iter(self._places))
            self._kept -= len(self._places.pop(oldest))
            self._index.pop(oldest, None)
        return got

    def _generate(self, town: Town) -> tuple[dict[str, Any], ...]:
        r = random.Random(f"egi-mcp:maps:{self.seed}:{town.name}")
        types = _place_types()
        kinds = list(KINDS)
        cum = list(itertools.accumulate(KINDS[k][0] for k in kinds))
        cos = max(0.2, math.cos(math.radians(town.lat)))
        out = []
        for k in range(town.n_places):
            kind = kinds[bisect.bisect_right(cum, r.random() * cum[-1])]
            d = town.radius_km * math.sqrt(r.random())
            a = r.uniform(0, 2 * math.pi)
            lat = town.lat + d * math.cos(a) / 111.32
            lng = town.lng + d * math.sin(a) / (111.32 * cos)
            noun = r.choice(KINDS[kind][2])
            style = r.random()
            if kind == "rest_stop":
                name = f"{town.name} {r.choice(_PREFIX)} {noun}"
            elif style < 0.3:
                name = f"{town.name} {r.choice(_PREFIX)} {noun}"
            else:
                name = f"{r.choice(_PREFIX)} {noun}"
            street = f"{k + 1} {r.choice(_STREET)} {r.choice(_SUFFIX)}"
            if town.country == "Singapore":
                address = f"{street}, Singapore {r.randrange(10, 83):02d}{r.randrange(0, 10_000):04d}"
            elif town.country == "United States":
                address = f"{street}, {town.name}, {town.admin} {r.randrange(10_000, 99_999)}, United States"
            else:
                address = f"{street}, {town.tail()}"
            rating = round(min(5.0, max(2.5, r.triangular(2.8, 5.0, 4.45))), 1)
            out.append(
                {
                    "place_id": self.place_id(town.index, k),
                    "name": name,
                    "kind": kind,
                    "types": types[kind],
                    "rating": rating,
                    "user_ratings_total": r.randrange(5, 4000),
                    "lat": round(lat, 7),
                    "lng": round(lng, 7),
                    "address": address,
                    "town": town.name,
                    "country": town.country,
                    "landmass": town.landmass,
                }
            )
        return tuple(out)

    def named(self, town: Town, text: str) -> dict[str, Any] | None:
        """The place of ``town`` whose address is ``text``, or whose name is ``text`` (possibly
        followed by its town, region, country or a postal code), else None."""
        places = self.places(town)  # (kept: the look-up tables go with them)
        idx = self._index.get(town.index)
        if idx is None:
            by_addr = {norm(p["address"]): p for p in places}
            by_name: dict[str, dict[str, Any]] = {}
            for p in places:
                by_name.setdefault(norm(p["name"]), p)
            idx = self._index[town.index] = (by_addr, by_name)
        n = norm(text)
        hit = idx[0].get(n) or idx[1].get(n)
        if hit is not None:
            return hit
        words = n.split()
        town_words = set(norm(" ".join((town.name, *town.aliases))).split())
        for i in range(len(words) - 1, 0, -1):
            hit = idx[1].get(" ".join(words[:i]))
            if hit is not None and all(
                w in _PLACE_WORDS or w in town_words or w.isdigit() for w in words[i:]
            ):
                return hit
        return None

    def landmark_place(self, lm: Landmark) -> dict[str, Any]:
        """A landmark as a place record (seeded rating)."""
        r = random.Random(f"egi-mcp:maps:{self.seed}:landmark:{lm.name}")
        return {
            "place_id": self.place_id(_LANDMARK_TOWN, lm.index),
            "name": lm.name,
            "kind": lm.types[0],
            "types": [*lm.types, "point_of_interest", "establishment"],
            "rating": round(r.uniform(4.1, 4.8), 1),
            "user_ratings_total": r.randrange(2000, 90_000),
            "lat": lm.lat,
            "lng": lm.lng,
            "address": lm.address,
            "town": lm.town.name,
            "country": lm.town.country,
            "landmass": lm.town.landmass,
        }

    def place(self, place_id: str) -> dict[str, Any] | None:
        """The place (seeded or landmark) with this id, else None (unknown or edited id)."""
        pid = str(place_id).strip()
        if pid.startswith("place_id:"):
            pid = pid[len("place_id:") :].strip()
        if not pid.startswith("ChIJ"):
            return None
        try:
            raw = _unb64(pid[4:])
        except (ValueError, TypeError):
            return None
        if len(raw) != 18:
            return None
        ti, k = struct.unpack(">HH", raw[:4])
        if raw[4:] != _hash("egi-maps", self.seed, ti, k)[:14]:
            return None
        if ti == _LANDMARK_TOWN:
            return self.landmark_place(LANDMARK_LIST[k]) if k < len(LANDMARK_LIST) else None
        if ti >= len(TOWN_LIST):
            return None
        places = self.places(TOWN_LIST[ti])
        return places[k] if k < len(places) else None

    def places_near(self, lat: float, lng: float, radius_km: float) -> list[dict[str, Any]]:
        """Seeded places within ``radius_km`` of a point (every town whose disc reaches it)."""
        out = []
        for town in TOWN_LIST:
            reach = radius_km + town.radius_km
            if _beyond_by_latitude(lat, town.lat, reach):
                continue
            if not haversine_km(lat, lng, town.lat, town.lng) <= reach:
                continue
            out.extend(
                p for p in self.places(town)
                if not _beyond_by_latitude(lat, p["lat"], radius_km)
                and haversine_km(lat, lng, p["lat"], p["lng"]) <= radius_km
            )  # fmt: skip
        return out

    # ---- locating -------------------------------------------------------------------------

    def locate(self, text: str) -> Location | None:
        """Where ``text`` points: ``place_id:<id>``, ``"<lat>,<lng>"``, a landmark (name, alias
        or street line), a seeded place (its address or name with its town), a town, or a
        street address in a named town (hashed offset). None when it cannot be located."""
        s = str(text).strip()
        if not s:
            return None
        if s.startswith("place_id:") or s.startswith("ChIJ") or s.startswith("Eh"):
            pid = s[len("place_id:") :].strip() if s.startswith("place_id:") else s
            if pid.startswith("Eh"):
                try:
                    lat_s, lng_s = _unb64(pid[2:]).decode().split(",")
                    return self._at(float(lat_s), float(lng_s))
                except (ValueError, UnicodeDecodeError):
                    return None
            p = self.place(pid)
            return self._of_place(p) if p else None
        m = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*", s)
        if m:
            lat, lng = float(m.group(1)), float(m.group(2))
            return self._at(lat, lng) if -90 <= lat <= 90 and -180 <= lng <= 180 else None
        lm = _landmark_in(s)
        if lm is not None:
            return self._of_place(self.landmark_place(lm))
        towns = towns_in(s)
        if not towns:
            return None
        n = norm(s)
        for town in towns:
            p = self.named(town, s)
            if p is not None:
                return self._of_place(p)
        town = towns[0]
        rest = [
            w
            for w in n.split()
            if w not in _PLACE_WORDS and not any(_has(norm(k), w) for k in (town.name, *town.aliases))
        ]
        if not rest:
            return Location(town.lat, town.lng, town.tail(), _coord_id(town.lat, town.lng), town.landmass)
        h = _hash("egi-maps-address", n)
        d = town.radius_km * 0.35 * math.sqrt(int.from_bytes(h[:4], "big") / 2**32)
        a = 2 * math.pi * int.from_bytes(h[4:8], "big") / 2**32
        lat = round(town.lat + d * math.cos(a) / 111.32, 7)
        lng = round(town.lng + d * math.sin(a) / (111.32 * max(0.2, math.cos(math.radians(town.lat)))), 7)
        address = s if norm(town.country) in n else f"{s}, {town.country}"
        return Location(lat, lng, address, _coord_id(lat, lng), town.landmass)

    def _of_place(self, p: dict[str, Any]) -> Location:
        return Location(p["lat"], p["lng"], p["address"], p["place_id"], p["landmass"], p)

    def nearest_town(self, lat: float, lng: float) -> tuple[Town, float]:
        """The nearest gazetteer town and its distance in km."""
        return min(((t, haversine_km(lat, lng, t.lat, t.lng)) for t in TOWN_LIST), key=lambda x: x[1])

    def _at(self, lat: float, lng: float) -> Location | None:
        town, d = self.nearest_town(lat, lng)
        if d > town.radius_km * 1.6:
            return Location(lat, lng, f"{lat:.6f},{lng:.6f}", _coord_id(lat, lng), f"sea:{lat:.3f},{lng:.3f}")
        return Location(lat, lng, self._street_at(lat, lng, town), _coord_id(lat, lng), town.landmass)

    def _street_at(self, lat: float, lng: float, town: Town) -> str:
        h = _hash("egi-maps-street", round(lat, 4), round(lng, 4))
        street = f"{_STREET[h[0] % len(_STREET)]} {_SUFFIX[h[1] % len(_SUFFIX)]}"
        return f"{1 + int.from_bytes(h[2:4], 'big') % 400} {street}, {town.tail()}"

    # ---- measures -------------------------------------------------------------------------

    def elevation(self, lat: float, lng: float) -> float:
        """Elevation in metres at a point (smooth seeded field, 15 to ~1400 m)."""
        total = sum(a for a, *_ in self._waves)
        n = sum(a * math.sin(f * lat + p) * math.cos(g * lng + q) for a, f, p, g, q in self._waves) / total
        return round(15.0 + 1400.0 * ((1.0 + n) / 2.0) ** 2, 2)

    def element(self, a: Location | None, b: Location | None, mode: str) -> dict[str, Any]:
        """One distance-matrix element between two located points."""
        if a is None or b is None:
            return {"status": "NOT_FOUND"}
        if a.landmass != b.landmass:
            return {"status": "ZERO_RESULTS"}
        meters = round(haversine_km(a.lat, a.lng, b.lat, b.lng) * 1000 * ROAD_FACTOR[mode])
        seconds = round(meters / (SPEED_KMH[mode] / 3.6))
        return {
            "status": "OK",
            "duration": {"text": _fmt_duration(seconds), "value": seconds},
            "distance": {"text": _fmt_distance(meters), "value": meters},
        }

    def corridor(self, a: Location, b: Location) -> list[Town]:
        """Towns along the straight line from ``a`` to ``b`` (within 20 km or 15% of its length
        of the line, strictly between the ends), in travel order."""
        lat0 = math.radians((a.lat + b.lat) / 2)

        def xy(lat: float, lng: float) -> tuple[float, float]:
            return (lng - a.lng) * 111.32 * math.cos(lat0), (lat - a.lat) * 111.32

        bx, by = xy(b.lat, b.lng)
        length2 = bx * bx + by * by
        if length2 == 0:
            return []
        length = math.sqrt(length2)
        out = []
        for t in TOWN_LIST:
            x, y = xy(t.lat, t.lng)
            frac = (x * bx + y * by) / length2
            cross = abs(x * by - y * bx) / length
            if 0.02 < frac < 0.98 and cross <= max(20.0, 0.15 * length):
                if (
                    haversine_km(t.lat, t.lng, a.lat, a.lng) > 8
                    and haversine_km(t.lat, t.lng, b.lat, b.lng) > 8
                ):
                    out.append((frac, t))
        return [t for _, t in sorted(out, key=lambda x: x[0])]


@lru_cache(maxsize=8)
def build_world(seed: int) -> MapsWorld:
    """The maps world of a seed (cached: places are generated once per town)."""
    return MapsWorld(seed)


# ---------------------------------------------------------------------------------------------
# Tool logic (plain functions over a world)
# ---------------------------------------------------------------------------------------------


def geocode(world: MapsWorld, address: str) -> dict[str, Any]:
    """``maps_geocode``: the located point, or ``Geocoding failed: ZERO_RESULTS``."""
    loc = world.locate(address)
    if loc is None:
        raise BadRequest("Geocoding failed: ZERO_RESULTS")
    return {
        "location": {"lat": loc.lat, "lng": loc.lng},
        "formatted_address": loc.address,
        "place_id": loc.place_id,
    }


def reverse_geocode(world: MapsWorld, latitude: float, longitude: float) -> dict[str, Any]:
    """``maps_reverse_geocode``: a street address in the nearest town (within 1.6 × its radius)."""
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180):
        raise BadRequest("Reverse geocoding failed: INVALID_REQUEST")
    town, d = world.nearest_town(latitude, longitude)
    if d > town.radius_km * 1.6:
        raise BadRequest("Reverse geocoding failed: ZERO_RESULTS")
    address = world._street_at(latitude, longitude, town)
    number, _, street = address.split(",")[0].partition(" ")
    components = [
        {"long_name": number, "short_name": number, "types": ["street_number"]},
        {"long_name": street, "short_name": street, "types": ["route"]},
        {"long_name": town.name, "short_name": town.name, "types": ["locality", "political"]},
    ]
    if town.admin:
        components.append(
            {
                "long_name": town.admin,
                "short_name": town.admin,
                "types": ["administrative_area_level_1", "political"],
            }
        )
    components.append(
        {"long_name": town.country, "short_name": town.country, "types": ["country", "political"]}
    )
    return {
        "formatted_address": address,
        "place_id": _coord_id(latitude, longitude),
        "address_components": components,
    }


def _kinds_asked(words: list[str]) -> set[str]:
    return {kind for kind, (_, _, _, asks) in KINDS.items() if any(w in asks for w in words)}


def search_places(
    world: MapsWorld, query: str, location: dict[str, float] | None = None, radius: float | None = None
) -> dict[str, Any]:
    """``maps_search_places``: text search.

    A landmark named in the query is the only result; a seeded place whose address (or name
    with its town) is the query is the only result. Otherwise the pool is the places of the
    towns the query names (or, without a town, those within ``radius`` metres, default
    10 km, of ``location``); query words asking for a kind (``cafe``, ``rest stop``,
    ``scenic viewpoint`` ...) keep that kind; other words rank by name overlap. With a
    location the results are nearest first, else most reviewed first; at most 20.

    Raises:
        BadRequest: ``Place search failed: ZERO_RESULTS`` / ``INVALID_REQUEST``.
    """
    n = norm(query)
    if not n:
        raise BadRequest("Place search failed: INVALID_REQUEST")
    center = None
    if location is not None:
        try:
            center = (float(location["latitude"]), float(location["longitude"]))
        except (KeyError, TypeError, ValueError):
            raise BadRequest(
                "Place search failed: INVALID_REQUEST (location needs latitude and longitude)"
            ) from None
    r_km = min(float(radius), MAX_RADIUS_M) / 1000 if radius else None
    lm = _landmark_in(query)
    if lm is not None:
        keys = [norm(k) for k in (lm.name, *lm.aliases, lm.street)]
        left = [w for w in n.split() if not any(_has(k, w) for k in keys) and w not in _STOP]
        if not _kinds_asked(left):
            return {"places": [_public(world.landmark_place(lm))]}
        n = " ".join(left)  # "cafe near Merlion Park": cafes around the landmark
        center = center or (lm.lat, lm.lng)
        r_km = r_km or DEFAULT_RADIUS_M / 2000
    towns = [] if lm is not None else towns_in(query)
    pool: list[dict[str, Any]] = []
    for town in towns:
        hit = world.named(town, query)
        if hit is not None:
            return {"places": [_public(hit)]}
        pool.extend(world.places(town))
    if center is not None:
        if not towns:
            pool = world.places_near(*center, r_km or DEFAULT_RADIUS_M / 1000)
        elif r_km is not None:
            pool = [p for p in pool if haversine_km(*center, p["lat"], p["lng"]) <= r_km]
    town_words = {w for t in towns for k in (t.name, *t.aliases) for w in norm(k).split()}
    words = [w for w in n.split() if w not in _STOP and w not in _PLACE_WORDS and w not in town_words]
    kinds = _kinds_asked(words)
    if kinds:
        pool = [p for p in pool if p["kind"] in kinds]
    rest = [w for w in words if not _kinds_asked([w])]

    def overlap(p: dict[str, Any]) -> int:
        name = set(norm(p["name"]).split())
        return sum(w in name for w in rest)

    if rest and not kinds:
        pool = [p for p in pool if overlap(p) > 0]
    if center is not None:
        pool.sort(key=lambda p: (-overlap(p), haversine_km(*center, p["lat"], p["lng"])))
    else:
        pool.sort(key=lambda p: (-overlap(p), -p["user_ratings_total"]))
    if not pool:
        raise BadRequest("Place search failed: ZERO_RESULTS")
    return {"places": [_public(p) for p in pool[:MAX_RESULTS]]}


def _public(p: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": p["name"],
        "formatted_address": p["address"],
        "location": {"lat": p["lat"], "lng": p["lng"]},
        "place_id": p["place_id"],
        "rating": p["rating"],
        "types": list(p["types"]),
    }


_REVIEW = (
    "Lovely spot, friendly staff.",
    "Clean and easy to reach from the highway.",
    "A bit crowded at lunch.",
    "Great value, would come back.",
    "The view alone is worth the stop.",
    "Service was slow but food was good.",
    "Convenient and well kept.",
    "Nothing special, but fine for a quick break.",
)


def place_details(world: MapsWorld, place_id: str) -> dict[str, Any]:
    """``maps_place_details``: the place's details (upstream shape: no types, no place id).

    Raises:
        BadRequest: ``Place details request failed: INVALID_REQUEST`` (not a place id) or
            ``NOT_FOUND`` (an unknown id).
    """
    pid = str(place_id).strip()
    if pid.startswith("Eh"):
        loc = world.locate(pid)
        if loc is None:
            raise BadRequest("Place details request failed: INVALID_REQUEST")
        return {
            "name": loc.address,
            "formatted_address": loc.address,
            "location": {"lat": loc.lat, "lng": loc.lng},
        }
    if not pid.startswith("ChIJ") or len(pid) < 10:
        raise BadRequest("Place details request failed: INVALID_REQUEST")
    p = world.place(pid)
    if p is None:
        raise BadRequest("Place details request failed: NOT_FOUND")
    r = random.Random(f"egi-mcp:maps:{world.seed}:details:{pid}")
    opens, closes = r.choice([(6, 22), (7, 21), (8, 18), (9, 17), (0, 24)])
    hours = "Open 24 hours" if (opens, closes) == (0, 24) else f"{opens}:00 AM – {closes - 12}:00 PM"
    days = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
    slug = re.sub(r"[^a-z0-9]+", "", p["name"].lower())[:24]
    return {
        "name": p["name"],
        "formatted_address": p["address"],
        "location": {"lat": p["lat"], "lng": p["lng"]},
        "formatted_phone_number": f"+{r.randrange(1, 99)} {r.randrange(100, 999)} {r.randrange(1000, 9999)}",
        "website": f"https://www.{slug}.example.com/",
        "rating": p["rating"],
        "reviews": [
            {
                "author_name": f"Visitor {r.randrange(100, 999)}",
                "rating": max(1, min(5, round(p["rating"] + r.uniform(-1, 1)))),
                "text": r.choice(_REVIEW),
                "time": 1_700_000_000 + r.randrange(0, 40_000_000),
            }
            for _ in range(3)
        ],
        "opening_hours": {"weekday_text": [f"{d}: {hours}" for d in days], "open_now": True},
    }


def _mode(mode: str | None) -> str:
    m = (mode or "driving").strip().lower()
    if m not in MODES:
        raise BadRequest(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return m


def distance_matrix(
    world: MapsWorld, origins: list[str], destinations: list[str], mode: str | None = None
) -> dict[str, Any]:
    """``maps_distance_matrix``: one element per (origin, destination).

    Raises:
        BadRequest: empty lists (``INVALID_REQUEST``), more than 25 of either
            (``MAX_DIMENSIONS_EXCEEDED``), an unknown mode.
    """
    m = _mode(mode)
    if not origins or not destinations:
        raise BadRequest("Distance matrix request failed: INVALID_REQUEST")
    if len(origins) > 25 or len(destinations) > 25:
        raise BadRequest("Distance matrix request failed: MAX_DIMENSIONS_EXCEEDED")
    locs_o = [world.locate(o) for o in origins]
    locs_d = [world.locate(d) for d in destinations]
    return {
        "origin_addresses": [lo.address if lo else "" for lo in locs_o],
        "destination_addresses": [ld.address if ld else "" for ld in locs_d],
        "results": [{"elements": [world.element(lo, ld, m) for ld in locs_d]} for lo in locs_o],
    }


def elevation(world: MapsWorld, locations: list[dict[str, float]]) -> dict[str, Any]:
    """``maps_elevation``: the elevation at each location (metres)."""
    if not locations:
        raise BadRequest("Elevation request failed: INVALID_REQUEST")
    out = []
    for loc in locations:
        lat, lng = float(loc["latitude"]), float(loc["longitude"])
        if not (-90 <= lat <= 90 and -180 <= lng <= 180):
            raise BadRequest("Elevation request failed: INVALID_REQUEST")
        out.append(
            {
                "elevation": world.elevation(lat, lng),
                "location": {"lat": lat, "lng": lng},
                "resolution": 9.543951,
            }
        )
    return {"results": out}


def directions(world: MapsWorld, origin: str, destination: str, mode: str | None = None) -> dict[str, Any]:
    """``maps_directions``: one route, its steps passing the towns along the way.

    The route's distance and duration equal the distance matrix's for the same ends; each step
    covers the stretch to the next town (``Continue <b>south</b> through <b>Seremban</b>``).

    Raises:
        BadRequest: ``Directions request failed: NOT_FOUND`` (an end cannot be located) or
            ``ZERO_RESULTS`` (no route between landmasses).
    """
    m = _mode(mode)
    a, b = world.locate(origin), world.locate(destination)
    element = world.element(a, b, m)
    if element["status"] != "OK":
        raise BadRequest(f"Directions request failed: {element['status']}")
    assert a is not None and b is not None
    total_m, total_s = element["distance"]["value"], element["duration"]["value"]
    towns = world.corridor(a, b)
    if len(towns) > 8:
        towns = [towns[round(i * (len(towns) - 1) / 7)] for i in range(8)]
    points = [(a.lat, a.lng, None)] + [(t.lat, t.lng, t) for t in towns] + [(b.lat, b.lng, None)]
    legs = [haversine_km(p[0], p[1], q[0], q[1]) for p, q in zip(points, points[1:], strict=False)]
    span = sum(legs) or 1.0
    travel = m.upper()
    steps = []
    for i, (p, q) in enumerate(zip(points, points[1:], strict=False)):
        share = legs[i] / span
        meters, seconds = round(total_m * share), round(total_s * share)
        way = _bearing_word(p[0], p[1], q[0], q[1])
        if i == 0 and q[2] is not None:
            text = f"Head <b>{way}</b> toward <b>{q[2].name}</b>"
        elif q[2] is not None:
            text = f"Continue <b>{way}</b> through <b>{q[2].name}</b>"
        else:
            text = (
                f"Head <b>{way}</b> to <b>{b.address}</b>"
                if i == 0
                else f"Continue <b>{way}</b> to <b>{b.address}</b>"
            )
        steps.append(
            {
                "instructions": text,
                "distance": {"text": _fmt_distance(meters), "value": meters},
                "duration": {"text": _fmt_duration(seconds), "value": seconds},
                "travel_mode": travel,
            }
        )
    summary = f"via {towns[len(towns) // 2].name}" if towns else "direct"
    return {
        "routes": [
            {
                "summary": summary,
                "distance": element["distance"],
                "duration": element["duration"],
                "steps": steps,
            }
        ]
    }


# ---------------------------------------------------------------------------------------------
# The MCP server
# ---------------------------------------------------------------------------------------------


class LatLng(BaseModel):
    """A point: ``{latitude, longitude}`` in degrees."""

    latitude: float
    longitude: float


Mode = Literal["driving", "walking", "bicycling", "transit"]


def build_server(seed: int) -> Any:
    """Google-Maps-style MCP server over a seeded world of real towns and seeded places."""
    world = build_world(seed)

    def dump(obj: Any) -> str:
        return json.dumps(obj, indent=2, ensure_ascii=False)

    def maps_geocode(address: str) -> str:
        """Convert an address into geographic coordinates

        Args:
            address: The address to geocode
        """
        return dump(geocode(world, address))

    def maps_reverse_geocode(latitude: float, longitude: float) -> str:
        """Convert coordinates into an address

        Args:
            latitude: Latitude coordinate
            longitude: Longitude coordinate
        """
        return dump(reverse_geocode(world, latitude, longitude))

    def maps_search_places(query: str, location: LatLng | None = None, radius: float | None = None) -> str:
        """Search for places using Google Places API

        Args:
            query: Search query
            location: Optional center point for the search
            radius: Search radius in meters (max 50000)
        """
        loc = None if location is None else {"latitude": location.latitude, "longitude": location.longitude}
        return dump(search_places(world, query, loc, radius))

    def maps_place_details(place_id: str) -> str:
        """Get detailed information about a specific place

        Args:
            place_id: The place ID to get details for
        """
        return dump(place_details(world, place_id))

    def maps_distance_matrix(origins: list[str], destinations: list[str], mode: Mode | None = None) -> str:
        """Calculate travel distance and time for multiple origins and destinations

        Args:
            origins: Array of origin addresses or coordinates
            destinations: Array of destination addresses or coordinates
            mode: Travel mode (driving, walking, bicycling, transit)
        """
        return dump(distance_matrix(world, origins, destinations, mode))

    def maps_elevation(locations: list[LatLng]) -> str:
        """Get elevation data for locations on the earth

        Args:
            locations: Array of locations to get elevation for
        """
        return dump(elevation(world, [{"latitude": p.latitude, "longitude": p.longitude} for p in locations]))

    def maps_directions(origin: str, destination: str, mode: Mode | None = None) -> str:
        """Get directions between two points

        Args:
            origin: Starting point address or coordinates
            destination: Ending point address or coordinates
            mode: Travel mode (driving, walking, bicycling, transit)
        """
        return dump(directions(world, origin, destination, mode))

    return make_server(
        "google-maps",
        "Geocode addresses, search places, read place details, and measure distances, elevations and routes.",
        [
            (maps_geocode, False),
            (maps_reverse_geocode, False),
            (maps_search_places, False),
            (maps_place_details, False),
            (maps_distance_matrix, False),
            (maps_elevation, False),
            (maps_directions, False),
        ],
    )


if __name__ == "__main__":
    from suites._common.mcp_servers._base import main

    main(build_server)
