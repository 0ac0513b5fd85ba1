"""The travel aspects, their option fields, and the hidden-preference catalogue (our own wording).

Every aspect has upstream's id letter and field set (reference §2.3): flight ``F``, hotel ``H``,
apartment ``A``, restaurant ``R``, rental car ``C``. A preference *kind* is one subcategory of an
aspect (flight stops, hotel rating, ...); each kind has a few *variants*, and a variant is what a
task's user holds: a machine-checkable predicate over one option field, the plain preference
text, and the implicit statement the user says when it is elicited. ``satisfy`` / ``violate``
give a field value that meets / breaks the predicate, so the generator can build options that
satisfy every preference (correct) or all but one (wrong). Kinds of one aspect never make the
same field value meet one predicate and break another (list fields are shared only by kinds
that test different members), so every preference can be met or broken independently.

Predicates are JSON-safe dicts ``{"field", "op", "value"}`` evaluated by :func:`satisfies`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ASPECTS",
    "ASPECT_OF_LETTER",
    "ASPECT_WORDS",
    "AIRLINES",
    "CAR_COMPANIES",
    "CITIES",
    "FIELDS",
    "ID_LETTER",
    "KINDS",
    "OPTION_SCHEMAS",
    "PrefKind",
    "ROOM_CAPACITY",
    "Variant",
    "kind_of",
    "satisfies",
    "statement_index",
]

ASPECTS: tuple[str, ...] = ("flight", "hotel", "apartment", "restaurant", "rental_car")
"""Upstream's five travel aspects, in the order task dimensions are listed."""
ID_LETTER: dict[str, str] = {
    "flight": "F",
    "hotel": "H",
    "apartment": "A",
    "restaurant": "R",
    "rental_car": "C",
}
"""Option-id letter per aspect; ids match ``^[ACFHR]\\d+$`` (reference §2.5)."""
ASPECT_OF_LETTER: dict[str, str] = {v: k for k, v in ID_LETTER.items()}

FIELDS: dict[str, tuple[str, ...]] = {
    "flight": (
        "id",
        "date",
        "path",
        "departure_time",
        "arrival_time",
        "airlines",
        "flight_numbers",
        "layover_minutes",
        "cost",
        "free_amenities",
        "paid_services",
    ),
    "hotel": ("id", "name", "city", "room_types", "rating", "amenities", "services"),
    "apartment": (
        "id",
        "name",
        "city",
        "layout",
        "capacity",
        "cost_per_night",
        "rating",
        "amenities",
        "services",
    ),
    "restaurant": (
        "id",
        "name",
        "city",
        "cuisine",
        "price_level",
        "cost_per_person",
        "rating",
        "review_breakdown",
        "tags",
    ),
    "rental_car": (
        "id",
        "company",
        "model",
        "category",
        "pickup_city",
        "seats",
        "cost_per_day",
        "insurance",
        "services",
    ),
}
"""The fields every option of an aspect shows, in display order."""

OPTION_SCHEMAS: dict[str, str] = {
    "flight": "Each flight option: id; date (departure day); path (airports in order, origin first); "
    "departure_time / arrival_time (local, HH:MM); airlines and flight_numbers (one per leg); "
    "layover_minutes (one per connection, empty for a direct flight); cost (USD, one way); "
    "free_amenities (included at no charge); paid_services (available for a fee).",
    "hotel": "Each hotel option: id; name; city; room_types (type, capacity in guests, cost_per_night in "
    "USD); rating (0-10 from guest reviews); amenities; services. A hotel's price is its cheapest "
    "room's cost_per_night.",
    "apartment": "Each apartment option: id; name; city; layout (bedrooms and bathrooms, e.g. 2B1B); "
    "capacity (guests); cost_per_night (USD); rating (0-10); amenities; services.",
    "restaurant": "Each restaurant option: id; name; city; cuisine; price_level ($ to $$$$); "
    "cost_per_person (USD, typical dinner); rating (0-5); review_breakdown (count of reviews per star); "
    "tags (dietary options, atmosphere, ...).",
    "rental_car": "Each rental car option: id; company; model; category; pickup_city; seats; "
    "cost_per_day (USD); insurance (options offered); services (extras available).",
}
"""Our wording of the field description shown above search results (upstream ``OPTION_SCHEMAS``)."""

ASPECT_WORDS: dict[str, tuple[str, ...]] = {
    "flight": ("flight", "flights", "fly", "flying", "plane"),
    "hotel": ("hotel", "hotels"),
    "apartment": ("apartment", "apartments", "flat"),
    "restaurant": ("restaurant", "restaurants", "dinner", "dining"),
    "rental_car": ("rental car", "car rental", "car", "cars", "vehicle"),
}
"""Words that name an aspect in an utterance or a search request (lower case, whole words)."""

CITIES: tuple[str, ...] = (
    "Denver",
    "Lisbon",
    "Chicago",
    "Vienna",
    "Seattle",
    "Kyoto",
    "Boston",
    "Marseille",
    "Austin",
    "Edinburgh",
    "Portland",
    "Seville",
    "Atlanta",
    "Prague",
    "Phoenix",
    "Copenhagen",
    "Nashville",
    "Valencia",
    "Minneapolis",
    "Dublin",
)
AIRLINES: tuple[str, ...] = (
    "Skyline Air",
    "BlueJet",
    "Northwind Airways",
    "Coastal Wings",
    "Polar Air",
    "Meridian Airlines",
)
CAR_COMPANIES: tuple[str, ...] = (
    "Roadway Rentals",
    "ZipDrive",
    "Summit Cars",
    "Harbor Auto",
    "Keystone Rent",
)


def _hhmm(rng: random.Random, lo: str, hi: str) -> str:
    """A random HH:MM (5-minute steps) between ``lo`` and ``hi`` inclusive."""
    a = int(lo[:2]) * 60 + int(lo[3:])
    b = int(hi[:2]) * 60 + int(hi[3:])
    t = rng.randrange(a, b + 1, 5)
    return f"{t // 60:02d}:{t % 60:02d}"


def _with(value: str) -> Callable[[random.Random, Any], Any]:
    """satisfy for ``contains value``: add it to the list (kept sorted)."""
    return lambda rng, cur: sorted(set(cur) | {value})


def _without(value: str) -> Callable[[random.Random, Any], Any]:
    """violate for ``contains value``: remove it from the list."""
    return lambda rng, cur: sorted(set(cur) - {value})


ROOM_CAPACITY: dict[str, int] = {
    "standard double": 2,
    "twin room": 2,
    "king room": 2,
    "suite": 3,
    "family room": 4,
}
"""Hotel room types and how many guests each sleeps; ``standard double`` is in every hotel."""


def _add_room(room: str) -> Callable[[random.Random, Any], Any]:
    """satisfy for ``has_room_type``: the hotel offers that room (its cost is set with the price)."""
    return lambda rng, cur: _rooms([r["type"] for r in cur] + [room])


def _drop_room(room: str) -> Callable[[random.Random, Any], Any]:
    """violate for ``has_room_type``: the hotel does not offer that room."""
    return lambda rng, cur: _rooms([r["type"] for r in cur if r["type"] != room])


def _rooms(types: list[str]) -> list[dict[str, Any]]:
    """Room entries in catalogue order (costs 0 until the generator prices the hotel)."""
    return [{"type": t, "capacity": c, "cost_per_night": 0} for t, c in ROOM_CAPACITY.items() if t in types]


@dataclass(frozen=True)
class Variant:
    """One concrete hidden preference.

    Attributes:
        key: unique within its kind (e.g. ``"after_0900"``).
        predicate: ``{"field", "op", "value"}`` (see :func:`satisfies`).
        preference: the preference in plain words (what the simulator knows).
        statement: the implicit statement the user says when it is elicited (unique in the
            catalogue).
        satisfy / violate: ``(rng, current field value) -> new field value`` meeting / breaking
            the predicate.
    """

    key: str
    predicate: dict[str, Any]
    preference: str
    statement: str
    satisfy: Callable[[random.Random, Any], Any]
    violate: Callable[[random.Random, Any], Any]


@dataclass(frozen=True)
class PrefKind:
    """One preference subcategory of an aspect.

    Attributes:
        aspect: the travel aspect.
        subcategory: upstream's subcategory name (``"stops"``, ``"rating"``, ...).
        keywords: lower-case words/phrases that make an utterance concretely about this
            subcategory (whole-word match; the longest match decides, see ``simulator.py``).
        question: a concrete question about it, naming the aspect (what the reference agent asks).
        variants: the preferences a user may hold.
    """

    aspect: str
    subcategory: str
    keywords: tuple[str, ...]
    question: str
    variants: tuple[Variant, ...]


def _contains_kind(
    aspect: str,
    sub: str,
    field: str,
    keywords: tuple[str, ...],
    question: str,
    items: list[tuple[str, str, str]],
) -> PrefKind:
    """A kind whose variants each require one member of a list field."""
    return PrefKind(
        aspect,
        sub,
        keywords,
        question,
        tuple(
            Variant(
                key,
                {"field": field, "op": "contains", "value": value},
                pref,
                stmt,
                _with(value),
                _without(value),
            )
            for key, value, pref, stmt in [(v.replace(" ", "_"), v, p, s) for v, p, s in items]
        ),
    )


def _rating(aspect: str, top: float, floors: list[tuple[float, str]]) -> PrefKind:
    def variant(lo: float, stmt: str) -> Variant:
        return Variant(
            f"at_least_{lo}",
            {"field": "rating", "op": ">=", "value": lo},
            f"The {aspect.replace('_', ' ')} should be rated at least {lo}.",
            stmt,
            lambda rng, cur: round(rng.uniform(lo, top), 1),
            lambda rng, cur: round(rng.uniform(lo - 2.5, lo - 0.1), 1),
        )

    return PrefKind(
        aspect,
        "rating",
        ("rating", "rated", "review", "reviews", "reviewed", "score", "stars"),
        f"What minimum guest rating should the {aspect.replace('_', ' ')} have?",
        tuple(variant(lo, stmt) for lo, stmt in floors),
    )


_FLIGHT = (
    PrefKind(
        "flight",
        "stops",
        (
            "stop",
            "stops",
            "layover",
            "layovers",
            "direct",
            "nonstop",
            "non-stop",
            "connection",
            "connections",
            "connecting",
        ),
        "For the flight, would a layover be fine or do you need a direct flight?",
        (
            Variant(
                "direct",
                {"field": "layover_minutes", "op": "len<=", "value": 0},
                "Only a direct flight, with no layover.",
                "I'm heading straight into a packed first day, so I can't lose hours waiting in some "
                "connecting airport.",
                lambda rng, cur: [],
                lambda rng, cur: [rng.choice([55, 80, 125, 190])],
            ),
        ),
    ),
    PrefKind(
        "flight",
        "departure_time",
        (
            "depart",
            "departure",
            "departs",
            "departing",
            "leave",
            "leaving",
            "take off",
            "takeoff",
            "time of day",
            "morning",
            "evening",
        ),
        "What time of day would you like the flight to depart?",
        (
            Variant(
                "after_0900",
                {"field": "departure_time", "op": ">=", "value": "09:00"},
                "The flight should depart at 09:00 or later.",
                "I'm useless before my first coffee; being at the gate at dawn would ruin the trip for me.",
                lambda rng, cur: _hhmm(rng, "09:00", "21:00"),
                lambda rng, cur: _hhmm(rng, "05:00", "08:55"),
            ),
            Variant(
                "before_1200",
                {"field": "departure_time", "op": "<=", "value": "12:00"},
                "The flight should depart by 12:00.",
                "I'd like to land with most of the day still ahead of me to settle in.",
                lambda rng, cur: _hhmm(rng, "06:00", "12:00"),
                lambda rng, cur: _hhmm(rng, "12:05", "22:00"),
            ),
        ),
    ),
    PrefKind(
        "flight",
        "airline",
        ("airline", "airlines", "carrier", "carriers"),
        "For the flight, is there any airline you would rather avoid?",
        tuple(
            Variant(
                f"avoid_{a.replace(' ', '_')}",
                {"field": "airlines", "op": "not_contains", "value": a},
                f"Avoid flights operated by {a}.",
                f"The last time I flew with {a} they lost my suitcase for three days, so I'm wary of them.",
                lambda rng, cur, a=a: [rng.choice([x for x in AIRLINES if x != a])],
                lambda rng, cur, a=a: [a],
            )
            for a in AIRLINES[:4]
        ),
    ),
    _contains_kind(
        "flight",
        "free_amenities",
        "free_amenities",
        (
            "complimentary",
            "included",
            "amenity",
            "amenities",
            "baggage",
            "luggage",
            "checked bag",
            "wifi",
            "wi-fi",
            "in-flight",
            "meal",
            "meals",
        ),
        "For the flight, which complimentary amenities, such as baggage, wifi or meals, matter to you?",
        [
            (
                "checked bag",
                "A checked bag must be included for free.",
                "I'm bringing hiking gear for the whole week and would hate paying extra just to bring "
                "my big suitcase.",
            ),
            (
                "in-flight wifi",
                "Free in-flight wifi is required.",
                "I have to keep answering work emails while I'm in the air.",
            ),
            (
                "meal",
                "A free meal on board is required.",
                "Airline snacks never fill me up; I want a proper bite on board without paying for it.",
            ),
        ],
    ),
    _contains_kind(
        "flight",
        "paid_services",
        "paid_services",
        ("legroom", "priority", "boarding", "lounge", "paid", "add-on", "add-ons", "upgrade"),
        "For the flight, are there paid add-ons, like extra legroom, priority boarding or lounge "
        "access, that you would want available?",
        [
            (
                "extra legroom",
                "Extra legroom must be available to buy.",
                "I'm well over six feet tall and my knees suffer in a standard row, even if fixing it "
                "costs a little.",
            ),
            (
                "priority boarding",
                "Priority boarding must be available to buy.",
                "I travel with a fragile camera bag and need to be sure there's still overhead space for it.",
            ),
            (
                "lounge access",
                "Lounge access must be available to buy.",
                "I like having a quiet corner to work in before a flight rather than the noisy gate.",
            ),
        ],
    ),
)

_HOTEL = (
    _rating(
        "hotel",
        9.9,
        [
            (8.5, "I've had one too many grim stays lately; I only book places other guests rave about."),
            (9.0, "This trip is a special occasion, so I want a place guests call truly outstanding."),
        ],
    ),
    _contains_kind(
        "hotel",
        "amenities",
        "amenities",
        ("amenity", "amenities", "facility", "facilities", "pool", "swimming", "gym", "fitness", "breakfast"),
        "Which hotel facilities, such as a pool, a gym or breakfast, are important to you?",
        [
            (
                "swimming pool",
                "The hotel must have a swimming pool.",
                "My kids have been talking about nothing but splashing around every evening.",
            ),
            (
                "fitness center",
                "The hotel must have a fitness center.",
                "I'm training for a half marathon and can't skip my workouts while I'm away.",
            ),
            (
                "free breakfast",
                "Breakfast must be included.",
                "I'd rather not hunt for a café every morning before my meetings.",
            ),
        ],
    ),
    _contains_kind(
        "hotel",
        "services",
        "services",
        ("service", "services", "shuttle", "front desk", "reception", "laundry", "concierge"),
        "Which hotel services, like an airport shuttle, a 24-hour front desk or laundry, do you need?",
        [
            (
                "airport shuttle",
                "The hotel must offer an airport shuttle.",
                "I won't have a car and I don't want to haggle with taxis after a long flight.",
            ),
            (
                "24-hour front desk",
                "The hotel must have a 24-hour front desk.",
                "I'll probably arrive well after midnight, so someone needs to be there to let me in.",
            ),
            (
                "laundry service",
                "The hotel must offer laundry service.",
                "I'm packing light and will need clean clothes halfway through the stay.",
            ),
        ],
    ),
    PrefKind(
        "hotel",
        "room_type",
        ("room type", "type of room", "kind of room", "suite", "family room", "bed", "beds"),
        "What type of hotel room do you need, for example a suite or a family room?",
        tuple(
            Variant(
                t.replace(" ", "_"),
                {"field": "room_types", "op": "has_room_type", "value": t},
                f"The hotel must offer a {t}.",
                stmt,
                _add_room(t),
                _drop_room(t),
            )
            for t, stmt in [
                ("suite", "I want a separate sitting area so I can take calls without waking my partner."),
                (
                    "family room",
                    "All four of us want to sleep in the same room; the little one gets scared otherwise.",
                ),
            ]
        ),
    ),
)

_APARTMENT = (
    PrefKind(
        "apartment",
        "layout",
        ("layout", "bedroom", "bedrooms", "bathroom", "bathrooms"),
        "How many bedrooms and bathrooms should the apartment have?",
        (
            Variant(
                "two_bedrooms",
                {"field": "layout", "op": "in", "value": ["2B1B", "2B2B", "3B2B"]},
                "The apartment needs at least two bedrooms.",
                "My teenagers refuse to share a room these days, so a single bedroom won't work.",
                lambda rng, cur: rng.choice(["2B1B", "2B2B", "3B2B"]),
                lambda rng, cur: rng.choice(["1B1B", "studio"]),
            ),
            Variant(
                "two_bathrooms",
                {"field": "layout", "op": "in", "value": ["2B2B", "3B2B"]},
                "The apartment needs two bathrooms.",
                "We all have early starts and the morning queue for one shower would be chaos.",
                lambda rng, cur: rng.choice(["2B2B", "3B2B"]),
                lambda rng, cur: rng.choice(["1B1B", "2B1B", "studio"]),
            ),
        ),
    ),
    _rating(
        "apartment",
        9.9,
        [
            (8.0, "I've been misled by rosy listing photos before, so I trust what previous guests say."),
            (9.0, "We're splurging on this stay and I want a place guests can't stop praising."),
        ],
    ),
    _contains_kind(
        "apartment",
        "amenities",
        "amenities",
        ("amenity", "amenities", "kitchen", "cook", "cooking", "washer", "washing machine", "balcony"),
        "Which apartment amenities, like a full kitchen, a washer or a balcony, matter to you?",
        [
            (
                "full kitchen",
                "The apartment must have a full kitchen.",
                "Eating out every night adds up fast; I'd love to cook our own dinners.",
            ),
            (
                "washer",
                "The apartment must have a washer.",
                "With two toddlers, we go through clothes at an alarming rate.",
            ),
            (
                "balcony",
                "The apartment must have a balcony.",
                "My morning ritual is coffee in the fresh air, whatever city I'm in.",
            ),
        ],
    ),
    _contains_kind(
        "apartment",
        "services",
        "services",
        ("service", "services", "check-in", "check in", "cleaning", "housekeeping", "parking"),
        "Which apartment services, such as self check-in, cleaning or parking, do you need?",
        [
            (
                "self check-in",
                "The apartment must offer self check-in.",
                "Our arrival time is unpredictable, so I can't promise to meet a host at the door.",
            ),
            (
                "daily cleaning",
                "The apartment must include daily cleaning.",
                "This is a holiday; I don't want to spend it tidying up.",
            ),
            (
                "parking",
                "The apartment must have parking.",
                "We're driving our own car down and street spots there are a nightmare.",
            ),
        ],
    ),
)

_CUISINES = [
    ("Italian", "I've been dreaming about fresh pasta and a wood-fired pizza for weeks."),
    ("Japanese", "Ever since my last trip, I've been craving sushi and a proper bowl of ramen."),
    ("Mexican", "Nothing beats tacos and a good mole when we celebrate."),
    ("Indian", "I can't stop thinking about a rich curry with warm naan."),
]
_RESTAURANT = (
    PrefKind(
        "restaurant",
        "cuisine",
        ("cuisine", "cuisines", "kind of food", "type of food", "dishes", "food style"),
        "What kind of cuisine would you like the restaurant to serve?",
        tuple(
            Variant(
                c.lower(),
                {"field": "cuisine", "op": "==", "value": c},
                f"The restaurant should serve {c} food.",
                stmt,
                lambda rng, cur, c=c: c,
                lambda rng, cur, c=c: rng.choice([x for x, _ in _CUISINES if x != c] + ["French"]),
            )
            for c, stmt in _CUISINES
        ),
    ),
    PrefKind(
        "restaurant",
        "rating",
        ("rating", "rated", "review", "reviews", "reviewed", "score", "stars"),
        "What minimum rating should the restaurant have?",
        (
            Variant(
                "at_least_4.5",
                {"field": "rating", "op": ">=", "value": 4.5},
                "The restaurant should be rated at least 4.5.",
                "It's our anniversary dinner, so it has to be somewhere people genuinely love.",
                lambda rng, cur: round(rng.uniform(4.5, 4.9), 1),
                lambda rng, cur: round(rng.uniform(3.2, 4.4), 1),
            ),
        ),
    ),
    _contains_kind(
        "restaurant",
        "dietary",
        "tags",
        ("vegetarian", "vegan", "gluten", "gluten-free", "dietary", "diet", "allergy", "allergies"),
        "Does the restaurant need to cater to any dietary needs, such as vegetarian or gluten-free?",
        [
            (
                "vegetarian options",
                "The restaurant must have vegetarian options.",
                "My sister hasn't eaten meat in ten years and she's joining us.",
            ),
            (
                "gluten-free options",
                "The restaurant must have gluten-free options.",
                "My partner has coeliac disease, so bread-heavy menus are a real problem.",
            ),
        ],
    ),
    _contains_kind(
        "restaurant",
        "atmosphere",
        "tags",
        ("atmosphere", "ambience", "ambiance", "outdoor", "outside", "live music", "music", "vibe"),
        "What atmosphere would you like at the restaurant, for example outdoor tables or live music?",
        [
            (
                "outdoor seating",
                "The restaurant must have outdoor seating.",
                "After a day in museums I'd love to eat under the open sky.",
            ),
            (
                "live music",
                "The restaurant must have live music.",
                "A night out isn't complete for me without a band playing in the background.",
            ),
        ],
    ),
)

_RENTAL_CAR = (
    PrefKind(
        "rental_car",
        "category",
        ("category", "type of car", "kind of car", "car type", "suv", "compact", "convertible", "minivan"),
        "What category of rental car would you like, for example an SUV or a compact?",
        tuple(
            Variant(
                c.lower(),
                {"field": "category", "op": "==", "value": c},
                f"The rental car should be a {c}.",
                stmt,
                lambda rng, cur, c=c: c,
                lambda rng, cur, c=c: rng.choice(
                    [x for x in ("SUV", "compact", "convertible", "minivan", "sedan") if x != c]
                ),
            )
            for c, stmt in [
                ("SUV", "Some of the mountain roads we plan to take are gravel and rather steep."),
                ("convertible", "Driving the coast with the roof down has been on my list forever."),
            ]
        ),
    ),
    PrefKind(
        "rental_car",
        "seats",
        ("seat", "seats", "passenger", "passengers", "capacity"),
        "How many seats does the rental car need?",
        (
            Variant(
                "seven_seats",
                {"field": "seats", "op": ">=", "value": 7},
                "The rental car needs at least 7 seats.",
                "My parents and in-laws are coming along, so there will be seven of us.",
                lambda rng, cur: rng.choice([7, 8]),
                lambda rng, cur: rng.choice([2, 4, 5]),
            ),
            Variant(
                "five_seats",
                {"field": "seats", "op": ">=", "value": 5},
                "The rental car needs at least 5 seats.",
                "I'm picking up three friends at the station on the first day.",
                lambda rng, cur: rng.choice([5, 7]),
                lambda rng, cur: rng.choice([2, 4]),
            ),
        ),
    ),
    PrefKind(
        "rental_car",
        "company",
        ("company", "companies", "agency", "agencies", "brand", "provider", "rental firm"),
        "Is there any car rental company you would rather avoid?",
        tuple(
            Variant(
                f"avoid_{c.replace(' ', '_')}",
                {"field": "company", "op": "!=", "value": c},
                f"Avoid {c}.",
                f"{c} once charged me for a scratch I never made; never again.",
                lambda rng, cur, c=c: rng.choice([x for x in CAR_COMPANIES if x != c]),
                lambda rng, cur, c=c: c,
            )
            for c in CAR_COMPANIES[:3]
        ),
    ),
    _contains_kind(
        "rental_car",
        "insurance",
        "insurance",
        ("insurance", "coverage", "insured", "waiver"),
        "What insurance coverage do you want with the rental car?",
        [
            (
                "full coverage",
                "Full-coverage insurance must be offered.",
                "I've never driven on the other side of the road before and I'm a bit nervous about it.",
            ),
            (
                "collision damage waiver",
                "A collision damage waiver must be offered.",
                "A friend got a huge bill after a fender bender abroad; I don't want that risk.",
            ),
        ],
    ),
    _contains_kind(
        "rental_car",
        "services",
        "services",
        ("gps", "navigation", "child seat", "roadside", "extra service", "extras"),
        "Which rental car extras, like GPS navigation, a child seat or roadside assistance, do you need?",
        [
            (
                "GPS navigation",
                "GPS navigation must be available.",
                "My phone's data plan won't work over there, so I can't count on map apps.",
            ),
            (
                "child seat",
                "A child seat must be available.",
                "Our youngest is only two, so we need proper gear for her in the car.",
            ),
            (
                "roadside assistance",
                "Roadside assistance must be available.",
                "We'll be driving through remote areas with hardly any towns.",
            ),
        ],
    ),
)

KINDS: dict[str, tuple[PrefKind, ...]] = {
    "flight": _FLIGHT,
    "hotel": _HOTEL,
    "apartment": _APARTMENT,
    "restaurant": _RESTAURANT,
    "rental_car": _RENTAL_CAR,
}
"""Preference kinds per aspect; every aspect has at least 4 (travel44 needs 4 per aspect)."""


def kind_of(aspect: str, subcategory: str) -> PrefKind:
    """The catalogue kind ``(aspect, subcategory)``.

    Raises:
        KeyError: no such kind.
    """
    for kind in KINDS[aspect]:
        if kind.subcategory == subcategory:
            return kind
    raise KeyError(f"no preference kind {subcategory!r} for aspect {aspect!r}")


def statement_index() -> dict[str, tuple[str, str, Variant]]:
    """Implicit statement -> (aspect, subcategory, variant), over the whole catalogue (statements
    are unique; checked by the tests)."""
    return {
        v.statement: (k.aspect, k.subcategory, v) for ks in KINDS.values() for k in ks for v in k.variants
    }


def satisfies(option: dict[str, Any], predicate: dict[str, Any]) -> bool:
    """Whether ``option`` meets ``predicate``.

    Ops: ``==`` / ``!=`` (field equals value), ``>=`` / ``<=`` (numbers, or zero-padded ``HH:MM``
    strings, compared as strings), ``contains`` / ``not_contains`` (list field has the member),
    ``len<=`` (list length at most value), ``in`` (field is one of the listed values),
    ``has_room_type`` (some entry of ``room_types`` has that ``type``).

    Raises:
        KeyError: the option lacks the field; ValueError: unknown op.
    """
    field, op, value = predicate["field"], predicate["op"], predicate["value"]
    got = option[field]
    if op == "==":
        return bool(got == value)
    if op == "!=":
        return bool(got != value)
    if op == ">=":
        return bool(got >= value)
    if op == "<=":
        return bool(got <= value)
    if op == "contains":
        return value in got
    if op == "not_contains":
        return value not in got
    if op == "len<=":
        return len(got) <= value
    if op == "in":
        return got in value
    if op == "has_room_type":
        return any(r["type"] == value for r in got)
    raise ValueError(f"unknown predicate op {op!r} (field {field!r})")
