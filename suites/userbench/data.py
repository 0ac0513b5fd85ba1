"""Seeded generator of UserBench (TravelGym) tasks: scenario, hidden preferences, option database.

Environments are named as upstream (reference §2.2): ``travel`` + one digit per aspect, the
digit being that aspect's number of hidden preferences (``travel233`` = three aspects with 2, 3
and 3). A task (our record, upstream's scenario fields kept) holds:

- ``dimensions``: its aspects, in :data:`~suites.userbench.catalogue.ASPECTS` order (a hotel and
  an apartment are never booked in one trip);
- ``initial_description``: the user's first message (cities, dates, aspects, and the sentence
  asking for the cheapest option that meets the preferences);
- ``arguments``: per aspect, the search arguments a correct search request must contain;
- ``preferences``: the hidden preferences ``P1, P2, ...`` (upstream's ids, numbered across
  aspects in dimension order), each with its predicate and implicit statement;
- ``options``: per aspect, every option (as shown by a search, in id order ``F1, F2, ...``);
  ``best_id`` / ``correct_ids`` per aspect; ``option_kinds`` (hidden): each id's pool
  (``correct`` / ``wrong`` / ``noise``) and, for a wrong option, the preference it violates.

Pools (reference §3.3): a *correct* option is on target (the searched city / route / date) and
satisfies every preference; the *best* is the unique cheapest correct option; a *wrong* option is
on target and violates exactly one preference (for every preference at least one wrong option
violating it is cheaper than the best, so skipping a question leads to a wrong pick); a *noise*
option is off target (another city, destination or date). Upstream's defaults of 10 wrong and 5
noise options per aspect are kept.

Determinism: every task draws from its own ``random.Random`` seeded with the string
``"<seed>|<env>|<index>"`` (never module-level state), so one task's options and their order are
the same whatever other tasks were built before, in any process (upstream reshuffled with a
shared global seed, reference §2.9 item 6).
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from suites.userbench.catalogue import (
    AIRLINES,
    ASPECTS,
    CAR_COMPANIES,
    CITIES,
    ID_LETTER,
    KINDS,
    ROOM_CAPACITY,
    satisfies,
)

__all__ = [
    "ENVIRONMENTS",
    "NOISE_OPTIONS",
    "TEST_SIZES",
    "WRONG_OPTIONS",
    "BUDGET_SENTENCE",
    "env_digits",
    "generate_task",
    "generate_tasks",
    "generated_task_ids",
    "on_target",
    "task_id",
    "option_price",
]

ENVIRONMENTS: tuple[str, ...] = (
    "travel22",
    "travel33",
    "travel44",
    "travel233",
    "travel333",
    "travel334",
    "travel444",
    "travel2222",
)
"""Upstream's eight TravelGym environments."""
TEST_SIZES: dict[str, int] = {
    "travel22": 101,
    "travel33": 87,
    "travel44": 67,
    "travel233": 61,
    "travel333": 53,
    "travel334": 47,
    "travel444": 38,
    "travel2222": 17,
}
"""Upstream's test-split size per environment (471 in all; reference §2.2): the deep profile."""
WRONG_OPTIONS = 10
"""Wrong options per aspect (upstream ``wrong_choice_number``)."""
NOISE_OPTIONS = 5
"""Noise options per aspect (upstream ``noise_choice_number``)."""
BUDGET_SENTENCE = (
    "My budget is tight, so as long as my preferences are met, please pick the cheapest "
    "option for each part of the trip."
)
"""Our wording of upstream's closing sentence of every first user message."""

_YEAR = 2025
_NAMES = {
    "hotel": (
        "Harbor",
        "Grand",
        "Maple",
        "Summit",
        "Riverside",
        "Lantern",
        "Crown",
        "Parkview",
        "Cedar",
        "Beacon",
        "Atlas",
        "Meridian",
    ),
    "apartment": (
        "Sunny",
        "Quiet",
        "Central",
        "Garden",
        "Loft",
        "Old Town",
        "Bright",
        "Cozy",
        "Modern",
        "Canal",
        "Hillside",
        "Corner",
    ),
    "restaurant": (
        "Olive",
        "Copper",
        "Saffron",
        "Juniper",
        "Ember",
        "Marigold",
        "Basil",
        "Cinder",
        "Fig",
        "Harvest",
        "Pepper",
        "Thyme",
    ),
}
_RESTAURANT_SUFFIXES = ("Kitchen", "Table", "House", "Bistro")
_CAR_MODELS = (
    "Toyota Corolla",
    "Ford Explorer",
    "Kia Carnival",
    "Mazda MX-5",
    "Honda Civic",
    "Chevrolet Tahoe",
    "Volkswagen Golf",
    "Hyundai Tucson",
)
_PRICE_RANGE = {
    "flight": (180, 900),
    "hotel": (90, 420),
    "apartment": (80, 380),
    "restaurant": (25, 140),
    "rental_car": (35, 160),
}
"""Price range (USD) of each aspect's options."""


def env_digits(env: str) -> tuple[int, ...]:
    """Preference counts per aspect from the environment name (``travel233`` -> (2, 3, 3)).

    Raises:
        ValueError: not ``travel`` followed by digits 1-9.
    """
    digits = env.removeprefix("travel")
    if not env.startswith("travel") or not digits.isdigit() or "0" in digits:
        raise ValueError(f"not a TravelGym environment name: {env!r} (expected e.g. travel22, travel233)")
    return tuple(int(d) for d in digits)


def option_price(aspect: str, option: dict[str, Any]) -> int:
    """The price options of an aspect are compared by (USD): flight ``cost``, hotel cheapest room's
    ``cost_per_night``, apartment ``cost_per_night``, restaurant ``cost_per_person``, rental car
    ``cost_per_day``."""
    if aspect == "flight":
        return int(option["cost"])
    if aspect == "hotel":
        return min(int(r["cost_per_night"]) for r in option["room_types"])
    if aspect in ("apartment",):
        return int(option["cost_per_night"])
    if aspect == "restaurant":
        return int(option["cost_per_person"])
    return int(option["cost_per_day"])


def on_target(aspect: str, option: dict[str, Any], arguments: dict[str, str]) -> bool:
    """Whether ``option`` serves the searched request: the flight's route and date, or the city
    of a hotel, apartment, restaurant or rental car pickup."""
    if aspect == "flight":
        path = option["path"]
        return bool(
            path[0] == arguments["origin"]
            and path[-1] == arguments["destination"]
            and option["date"] == arguments["date"]
        )
    if aspect == "rental_car":
        return bool(option["pickup_city"] == arguments["city"])
    return bool(option["city"] == arguments["city"])


def _day(d: dt.date) -> str:
    return f"{d.strftime('%B')} {d.day}"


def _aspects(rng: random.Random, n: int) -> list[str]:
    """``n`` aspects in catalogue order, never hotel and apartment together."""
    while True:
        picked = rng.sample(ASPECTS, n)
        if not {"hotel", "apartment"} <= set(picked):
            return [a for a in ASPECTS if a in picked]


def _scenario(rng: random.Random, aspects: list[str]) -> tuple[dict[str, dict[str, str]], str, str]:
    """(search arguments per aspect, first user message, one-line scenario)."""
    origin, dest = rng.sample(CITIES, 2)
    start = dt.date(_YEAR, 1, 1) + dt.timedelta(days=rng.randrange(20, 330))
    nights = rng.randint(3, 8)
    end = start + dt.timedelta(days=nights)
    dinner = start + dt.timedelta(days=rng.randint(1, nights - 1))
    args: dict[str, dict[str, str]] = {}
    parts = [f"I'm planning a trip from {origin} to {dest}, {_day(start)} to {_day(end)}."]
    for a in aspects:
        if a == "flight":
            args[a] = {"origin": origin, "destination": dest, "date": _day(start)}
            parts.append(f"I need a one-way flight from {origin} to {dest} on {_day(start)}.")
        elif a == "hotel":
            args[a] = {"city": dest, "check_in": _day(start), "check_out": _day(end)}
            parts.append(f"I'll stay in a hotel in {dest} from {_day(start)} to {_day(end)}.")
        elif a == "apartment":
            args[a] = {"city": dest, "check_in": _day(start), "check_out": _day(end)}
            parts.append(f"I'd like to rent an apartment in {dest} from {_day(start)} to {_day(end)}.")
        elif a == "restaurant":
            args[a] = {"city": dest, "date": _day(dinner)}
            parts.append(f"I also want to book a restaurant in {dest} for dinner on {_day(dinner)}.")
        else:
            args[a] = {"city": dest, "pickup_date": _day(start), "return_date": _day(end)}
            parts.append(f"I'll need a rental car in {dest} from {_day(start)} to {_day(end)}.")
    text = " ".join(parts + [BUDGET_SENTENCE])
    scenario = (
        f"A trip from {origin} to {dest} ({_day(start)}-{_day(end)}) needing "
        + ", ".join(a.replace("_", " ") for a in aspects)
        + "."
    )
    return args, text, scenario


def _base(aspect: str, rng: random.Random, args: dict[str, str], noise: bool) -> dict[str, Any]:
    """A random option of ``aspect`` (fields of ``FIELDS[aspect]`` minus ``id``), on target unless
    ``noise`` (then another city, destination or date)."""
    other = rng.choice([c for c in CITIES if c not in args.values()])
    if aspect == "flight":
        dest, date = args["destination"], args["date"]
        if noise:
            if rng.random() < 0.5:
                dest = other
            else:
                d = dt.datetime.strptime(f"{args['date']} {_YEAR}", "%B %d %Y").date()
                date = _day(d + dt.timedelta(days=rng.choice([-2, -1, 1, 2])))
        return {
            "date": date,
            "path": [args["origin"], dest],
            "departure_time": _hhmm(rng),
            "arrival_time": "00:00",
            "airlines": [rng.choice(AIRLINES)],
            "flight_numbers": [],
            "layover_minutes": rng.choice([[], [], [70], [110, 65]]),
            "cost": 0,
            "free_amenities": sorted(rng.sample(["checked bag", "in-flight wifi", "meal", "snacks"], 2)),
            "paid_services": sorted(
                rng.sample(["extra legroom", "priority boarding", "lounge access", "seat selection"], 2)
            ),
        }
    city = other if noise else args["city"]
    if aspect == "hotel":
        rooms = ["standard double"] + rng.sample(["twin room", "king room", "suite", "family room"], 2)
        return {
            "name": f"{rng.choice(_NAMES['hotel'])} {rng.choice(['Hotel', 'Inn', 'Suites'])}",
            "city": city,
            "room_types": [
                {"type": t, "capacity": c, "cost_per_night": 0}
                for t, c in ROOM_CAPACITY.items()
                if t in rooms
            ],
            "rating": round(rng.uniform(6.5, 9.8), 1),
            "amenities": sorted(
                rng.sample(["swimming pool", "fitness center", "free breakfast", "spa", "rooftop bar"], 2)
            ),
            "services": sorted(
                rng.sample(["airport shuttle", "24-hour front desk", "laundry service", "concierge"], 2)
            ),
        }
    if aspect == "apartment":
        layout = rng.choice(["studio", "1B1B", "2B1B", "2B2B", "3B2B"])
        return {
            "name": f"{rng.choice(_NAMES['apartment'])} Apartment",
            "city": city,
            "layout": layout,
            "capacity": 0,
            "cost_per_night": 0,
            "rating": round(rng.uniform(6.5, 9.8), 1),
            "amenities": sorted(
                rng.sample(["full kitchen", "washer", "balcony", "air conditioning", "workspace"], 2)
            ),
            "services": sorted(
                rng.sample(["self check-in", "daily cleaning", "parking", "luggage storage"], 2)
            ),
        }
    if aspect == "restaurant":
        return {
            "name": f"{rng.choice(_NAMES['restaurant'])} {rng.choice(_RESTAURANT_SUFFIXES)}",
            "city": city,
            "cuisine": rng.choice(["Italian", "Japanese", "Mexican", "Indian", "French", "Thai"]),
            "price_level": "",
            "cost_per_person": 0,
            "rating": round(rng.uniform(3.4, 4.9), 1),
            "review_breakdown": {},
            "tags": sorted(
                rng.sample(
                    [
                        "vegetarian options",
                        "gluten-free options",
                        "outdoor seating",
                        "live music",
                        "kid-friendly",
                        "late night",
                    ],
                    2,
                )
            ),
        }
    return {
        "company": rng.choice(CAR_COMPANIES),
        "model": rng.choice(_CAR_MODELS),
        "category": rng.choice(["SUV", "compact", "convertible", "minivan", "sedan"]),
        "pickup_city": city,
        "seats": rng.choice([2, 4, 5, 7, 8]),
        "cost_per_day": 0,
        "insurance": sorted(rng.sample(["basic liability", "full coverage", "collision damage waiver"], 2)),
        "services": sorted(
            rng.sample(["GPS navigation", "child seat", "roadside assistance", "toll pass"], 2)
        ),
    }


def _hhmm(rng: random.Random) -> str:
    t = rng.randrange(5 * 60, 22 * 60, 5)
    return f"{t // 60:02d}:{t % 60:02d}"


def _set_price(aspect: str, option: dict[str, Any], price: int, rng: random.Random) -> None:
    """Give ``option`` the comparison price ``price`` (and the fields derived from it)."""
    if aspect == "flight":
        option["cost"] = price
    elif aspect == "hotel":
        for i, room in enumerate(option["room_types"]):
            room["cost_per_night"] = price + (0 if i == 0 else 25 * i + rng.randint(0, 20))
    elif aspect == "apartment":
        option["cost_per_night"] = price
    elif aspect == "restaurant":
        option["cost_per_person"] = price
        option["price_level"] = "$" * (1 + min(3, price // 35))
    else:
        option["cost_per_day"] = price


def _finalize(aspect: str, option: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Fill the fields derived from the others (flight legs, apartment capacity, restaurant
    reviews) and order the fields as ``FIELDS``."""
    if aspect == "flight":
        stops = len(option["layover_minutes"])
        hubs = rng.sample([c for c in CITIES if c not in option["path"]], stops)
        option["path"] = [option["path"][0], *hubs, option["path"][-1]]
        option["airlines"] = [option["airlines"][0]] * (stops + 1)
        code = "".join(w[0] for w in option["airlines"][0].split()).upper()[:2].ljust(2, "X")
        option["flight_numbers"] = [f"{code}{rng.randint(100, 9999)}" for _ in range(stops + 1)]
        h, m = (int(x) for x in option["departure_time"].split(":"))
        minutes = h * 60 + m + 95 * (stops + 1) + sum(option["layover_minutes"]) + rng.randrange(0, 240, 5)
        option["arrival_time"] = f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"
    elif aspect == "apartment":
        beds = {"studio": 1, "1B1B": 1, "2B1B": 2, "2B2B": 2, "3B2B": 3}[option["layout"]]
        option["capacity"] = 2 * beds
    elif aspect == "restaurant":
        total = rng.randint(40, 400)
        five = round(total * max(0.0, (option["rating"] - 3.0) / 2.0))
        rest = total - five
        option["review_breakdown"] = {
            "5": five,
            "4": rest // 2,
            "3": rest // 4,
            "2": rest // 8,
            "1": rest - rest // 2 - rest // 4 - rest // 8,
        }
    from suites.userbench.catalogue import FIELDS

    return {k: option[k] for k in FIELDS[aspect] if k != "id"}


def _pick_preferences(rng: random.Random, aspect: str, n: int) -> list[tuple[Any, Any]]:
    """``n`` (kind, variant) pairs of distinct kinds of ``aspect``, in catalogue order."""
    kinds = rng.sample(range(len(KINDS[aspect])), n)
    return [(KINDS[aspect][i], rng.choice(KINDS[aspect][i].variants)) for i in sorted(kinds)]


def _aspect_options(
    rng: random.Random, aspect: str, args: dict[str, str], prefs: list[dict[str, Any]], variants: list[Any]
) -> dict[str, Any]:
    """The option database of one aspect: options in id order, best id, correct ids, pools."""
    lo, hi = _PRICE_RANGE[aspect]
    n_correct = rng.randint(3, 6)

    def build(noise: bool, broken: int | None) -> dict[str, Any]:
        option = _base(aspect, rng, args, noise)
        for i, v in enumerate(variants):
            field = v.predicate["field"]
            bad = (i == broken) if not noise else rng.random() < 0.5
            option[field] = (v.violate if bad else v.satisfy)(rng, option[field])
        return option

    pool: list[tuple[str, str | None, dict[str, Any]]] = []
    best_price = rng.randint(lo + (hi - lo) // 4, lo + (hi - lo) // 2)
    for j in range(n_correct):
        option = build(False, None)
        price = best_price if j == 0 else best_price + rng.randint(1, (hi - lo) // 2)
        _set_price(aspect, option, price, rng)
        pool.append(("best" if j == 0 else "correct", None, option))
    for j in range(WRONG_OPTIONS):
        broken = j % len(variants)
        option = build(False, broken)
        cheaper = j < len(variants)  # the first wrong option of each preference undercuts the best
        price = best_price - rng.randint(1, (best_price - lo)) if cheaper else rng.randint(lo, hi)
        _set_price(aspect, option, price, rng)
        pool.append(("wrong", prefs[broken]["id"], option))
    for _ in range(NOISE_OPTIONS):
        option = build(True, None)
        _set_price(aspect, option, rng.randint(lo, hi), rng)
        pool.append(("noise", None, option))
    rng.shuffle(pool)
    letter = ID_LETTER[aspect]
    options, kinds = [], {}
    best_id, correct_ids = "", []
    for n, (kind, violated, option) in enumerate(pool, start=1):
        oid = f"{letter}{n}"
        options.append({"id": oid, **_finalize(aspect, option, rng)})
        kinds[oid] = {
            "pool": "correct" if kind == "best" else kind,
            **({"violates": violated} if violated else {}),
        }
        if kind in ("best", "correct"):
            correct_ids.append(oid)
        if kind == "best":
            best_id = oid
    return {"options": options, "best_id": best_id, "correct_ids": correct_ids, "option_kinds": kinds}


def generate_task(env: str, index: int, seed: int) -> dict[str, Any]:
    """Task ``index`` (0-based) of ``env`` for ``seed`` (the record described in the module
    docstring; id ``<env>-<index+1:03d>``).

    Raises:
        ValueError: unknown environment name; AssertionError: a generated database breaks a
            pool invariant (a bug here, never a model's fault).
    """
    digits = env_digits(env)
    rng = random.Random(f"{seed}|{env}|{index}")
    aspects = _aspects(rng, len(digits))
    arguments, text, scenario = _scenario(rng, aspects)
    preferences: list[dict[str, Any]] = []
    per_aspect: dict[str, Any] = {}
    for aspect, n in zip(aspects, digits, strict=True):
        chosen = _pick_preferences(rng, aspect, n)
        mine = []
        for kind, variant in chosen:
            mine.append(
                {
                    "id": f"P{len(preferences) + 1}",
                    "aspect": aspect,
                    "subcategory": kind.subcategory,
                    "variant": variant.key,
                    "preference": variant.preference,
                    "implicit_statement": variant.statement,
                    "predicate": variant.predicate,
                }
            )
            preferences.append(mine[-1])
        per_aspect[aspect] = _aspect_options(rng, aspect, arguments[aspect], mine, [v for _, v in chosen])
        _check(aspect, per_aspect[aspect], arguments[aspect], mine)
    upstream_id = "|".join(f"{a}:{d}-{index + 1}" for a, d in zip(aspects, digits, strict=True))
    return {
        "id": task_id(env, index),
        "env": env,
        "upstream_id": upstream_id,
        "dimensions": aspects,
        "scenario": scenario,
        "initial_description": text,
        "arguments": arguments,
        "preferences": preferences,
        "options": {a: per_aspect[a]["options"] for a in aspects},
        "best_id": {a: per_aspect[a]["best_id"] for a in aspects},
        "correct_ids": {a: per_aspect[a]["correct_ids"] for a in aspects},
        "option_kinds": {a: per_aspect[a]["option_kinds"] for a in aspects},
    }


def _check(aspect: str, db: dict[str, Any], args: dict[str, str], prefs: list[dict[str, Any]]) -> None:
    """The pool invariants of one aspect's database (module docstring)."""
    correct = [
        o
        for o in db["options"]
        if on_target(aspect, o, args) and all(satisfies(o, p["predicate"]) for p in prefs)
    ]
    assert [o["id"] for o in correct] == db["correct_ids"], (aspect, db["correct_ids"])
    cheapest = min(option_price(aspect, o) for o in correct)
    winners = [o["id"] for o in correct if option_price(aspect, o) == cheapest]
    assert winners == [db["best_id"]], (aspect, winners, db["best_id"])


def task_id(env: str, index: int) -> str:
    """The id of generated task ``index`` (0-based) of ``env``: ``<env>-<index+1:03d>``, for
    every seed."""
    return f"{env}-{index + 1:03d}"


def generate_tasks(env: str, seed: int, count: int | None = None) -> list[dict[str, Any]]:
    """The first ``count`` tasks of ``env`` (default: upstream's test-split size, ``TEST_SIZES``)."""
    n = TEST_SIZES[env] if count is None else count
    return [generate_task(env, i, seed) for i in range(n)]


def generated_task_ids(env: str, count: int | None = None) -> list[str]:
    """The ids of :func:`generate_tasks` ``(env, seed, count)``, in order, for every seed,
    without generating (:func:`task_id` of each index).

    Raises:
        KeyError: unknown environment (with ``count`` None).
    """
    n = TEST_SIZES[env] if count is None else count
    return [task_id(env, i) for i in range(n)]
