"""Vocabulary of the synthetic org: catalog, issues, regions, people, policies and FAQ templates.

All text is our own. Structure that the tasks rely on:

- Every product's Name or Description contains its category phrase, so a vague category search
  (``FIND {running shoes}``) matches all products of the category (NED ambiguity and ties).
- Each product has a ``vague`` phrase made of words from its own Name/Description, so an SOSL
  search on it always finds the product (NED).
- Policy articles state one numeric limit in a fixed sentence (`Policy.rule_pattern`), and agents
  in chats/emails state one numeric action (`Policy.action_pattern`); comparing the two decides
  a violation (PVI). The reference solver reads both numbers from query results.
- Product FAQ articles hold ``Q: … A: …`` pairs; KQA questions paraphrase one ``Q`` and the gold
  answer is its ``A`` text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Product",
    "CATALOG",
    "ISSUES",
    "STATES",
    "FIRST_NAMES",
    "LAST_NAMES",
    "Policy",
    "POLICIES",
    "FaqFact",
    "FAQ_FACTS",
    "GENERAL_ARTICLES",
]


@dataclass(frozen=True)
class Product:
    """One catalog product."""

    name: str
    vague: str
    description: str
    price: float


_CATALOG_TABLE = """\
Running Shoes | running shoes
    Velocity Road Running Shoes | road running shoes | 129.99
        Lightweight road running shoes with a responsive foam midsole and a breathable mesh upper.
    Trailblazer Trail Running Shoes | trail running shoes | 139.99
        Trail running shoes with a grippy lugged outsole and a rock plate for rugged terrain.
    Marathon Elite Running Shoes | carbon plate running shoes | 219.99
        Long-distance racing running shoes with a carbon plate and a cushioned heel.
    Cloudstep Cushioned Running Shoes | cushioned running shoes | 119.99
        Max-cushion everyday running shoes with a soft heel for recovery runs.
Hiking Boots | hiking boots
    Summit Waterproof Hiking Boots | waterproof hiking boots | 179.99
        Waterproof leather hiking boots with ankle support and a rubber lug outsole.
    Ridge Lightweight Hiking Boots | lightweight hiking boots | 139.99
        Lightweight synthetic hiking boots for fast day hikes.
    Glacier Insulated Hiking Boots | insulated hiking boots | 199.99
        Insulated winter hiking boots rated for snow and ice.
    Canyon Mid Hiking Boots | mid cut hiking boots | 129.99
        Mid cut hiking boots with a breathable lining for warm trails.
Outdoor Jackets | outdoor jacket
    Alpine Trek Jacket | hardshell trek jacket | 249.99
        Waterproof hardshell outdoor jacket for alpine treks with a storm hood.
    Cascade Insulated Jacket | insulated winter jacket | 189.99
        Warm insulated outdoor jacket with synthetic fill for winter days.
    Storm Shield Rain Jacket | packable rain jacket | 99.99
        Packable rain outdoor jacket with taped seams.
    Breeze Windproof Jacket | windproof jacket | 89.99
        Windproof outdoor jacket for running and cycling in cold wind.
Yoga | yoga
    Balance Yoga Mat | non slip yoga mat | 69.99
        Non-slip yoga mat with extra cushioning for joints.
    Grip Pro Yoga Mat | travel yoga mat | 49.99
        Thin travel yoga mat that folds into a carry bag.
    Flex Yoga Leggings | high waist yoga leggings | 79.99
        High waist yoga leggings in a four-way stretch fabric.
    Seamless Yoga Bra | seamless yoga bra | 54.99
        Seamless yoga bra with medium support and removable pads.
Fitness Trackers | fitness tracker
    Pulse Fitness Tracker | heart rate fitness tracker | 99.99
        Slim fitness tracker band with heart rate monitoring and sleep tracking.
    Apex GPS Smartwatch | gps smartwatch | 349.99
        GPS smartwatch and fitness tracker with maps and music storage.
    Stride Running Watch | running watch | 199.99
        Running watch and fitness tracker with pace alerts and interval training.
    Aqua Swim Tracker | swim fitness tracker | 149.99
        Waterproof fitness tracker that counts laps and strokes in the pool.
Cycling | cycling
    Aero Road Cycling Helmet | road cycling helmet | 159.99
        Aerodynamic road cycling helmet with adjustable ventilation.
    Thermal Cycling Jacket | thermal cycling jacket | 129.99
        Thermal cycling jacket with a fleece lining for cold rides.
    Pro Grip Cycling Gloves | padded cycling gloves | 39.99
        Padded cycling gloves with gel palms.
    Sprint Cycling Shorts | padded cycling shorts | 69.99
        Padded cycling shorts with a chamois for long rides.
Swimming | swim
    Hydro Racer Swim Goggles | anti fog swim goggles | 34.99
        Anti-fog racing swim goggles with a wide view.
    Ultra Light Swim Cap | silicone swim cap | 14.99
        Silicone swim cap that reduces drag.
    Power Swim Fins | training swim fins | 44.99
        Short-blade training swim fins for kick sets.
    Ripple Swim Paddles | hand swim paddles | 24.99
        Hand swim paddles that build pulling strength.
Golf | golf
    Precision Golf Driver | titanium golf driver | 399.99
        Titanium golf driver with an adjustable loft.
    All-Weather Golf Gloves | all weather golf gloves | 29.99
        All-weather golf gloves that grip in rain.
    Tour Golf Cart Bag | golf cart bag | 249.99
        Golf cart bag with fourteen dividers and a rain hood.
    Fairway Golf Shoes | spikeless golf shoes | 149.99
        Spikeless golf shoes with waterproof leather.
Basketball | basketball
    Velocity Basketball Shoes | high top basketball shoes | 159.99
        High-top basketball shoes with ankle lockdown.
    Pro Slam Basketball | indoor basketball | 59.99
        Composite leather indoor basketball in the official size.
    Courtside Basketball Shorts | mesh basketball shorts | 34.99
        Breathable mesh basketball shorts with pockets.
    Driveway Basketball Hoop | portable basketball hoop | 299.99
        Portable basketball hoop with an adjustable height.
Soccer | soccer
    Superfly Soccer Cleats | firm ground soccer cleats | 189.99
        Firm ground soccer cleats with a speed soleplate.
    Precision Kick Soccer Ball | match soccer ball | 49.99
        Thermally bonded match soccer ball.
    Guardian Soccer Shin Guards | soccer shin guards | 24.99
        Lightweight soccer shin guards with ankle sleeves.
    Keeper Pro Soccer Gloves | goalkeeper soccer gloves | 59.99
        Goalkeeper soccer gloves with latex palms.
Strength Training | training
    Adjustable Dumbbell Set | adjustable dumbbell set | 299.99
        Adjustable dumbbell training set from 5 to 50 pounds.
    Speed Jump Rope | speed jump rope | 19.99
        Speed jump rope with ball bearings for conditioning training.
    Resistance Band Kit | resistance band kit | 29.99
        Resistance band training kit with five tension levels.
    Foam Recovery Roller | foam roller | 34.99
        High-density foam roller for training recovery.
Tennis | tennis
    Ace Tennis Racket | graphite tennis racket | 189.99
        Graphite tennis racket with a midplus head.
    Baseline Tennis Shoes | all court tennis shoes | 119.99
        All-court tennis shoes with a durable toe cap.
    Match Point Tennis Balls | pressurized tennis balls | 5.99
        Can of three pressurized tennis balls.
    Topspin Tennis Bag | tennis racket bag | 79.99
        Tennis racket bag that holds six rackets.
"""
"""Category line: ``name | category phrase``; product lines (indented): ``name | vague phrase |
price`` followed by the description on the next, deeper-indented line."""


def _parse_catalog(table: str) -> dict[str, tuple[str, tuple[Product, ...]]]:
    catalog: dict[str, tuple[str, list[Product]]] = {}
    lines = table.splitlines()
    category = ""
    for index, line in enumerate(lines):
        if not line.strip() or line.startswith("        "):
            continue
        parts = [part.strip() for part in line.split("|")]
        if not line.startswith(" "):
            category = parts[0]
            catalog[category] = (parts[1], [])
        else:
            name, vague, price = parts
            catalog[category][1].append(Product(name, vague, lines[index + 1].strip(), float(price)))
    return {name: (phrase, tuple(items)) for name, (phrase, items) in catalog.items()}


CATALOG: dict[str, tuple[str, tuple[Product, ...]]] = _parse_catalog(_CATALOG_TABLE)
"""Category name -> (category phrase, products). Quick orgs use 6 categories, deep orgs all 12."""


ISSUES: tuple[tuple[str, str], ...] = (
    ("Sizing Mismatch", "the size runs much smaller than the size chart says"),
    ("Zipper Malfunction", "the zipper keeps splitting open"),
    ("Sole Separation", "the sole is peeling away from the upper"),
    ("Fabric Tear", "the fabric tore along the side after light use"),
    ("Battery Drain", "the battery drains within a few hours"),
    ("Strap Breakage", "the strap snapped during a workout"),
    ("Late Delivery", "the package arrived two weeks after the promised date"),
    ("Wrong Item Shipped", "the box contained a different item than the one I ordered"),
    ("Color Fading", "the color faded badly after the first wash"),
    ("Seam Splitting", "a seam split open along the side"),
    ("Water Leakage", "water gets inside during use"),
    ("Sync Failure", "it will not sync with my phone app"),
    ("Missing Parts", "some parts were missing from the box"),
    ("Stitching Defect", "the stitching is coming loose"),
    ("Grip Wear", "the grip wore smooth after a few sessions"),
    ("Buckle Failure", "the buckle does not stay closed"),
    ("Screen Malfunction", "the screen flickers and then goes blank"),
    ("Padding Compression", "the padding flattened out within weeks"),
    ("Damaged Packaging", "the package arrived crushed and the item is scratched"),
    ("Inflation Loss", "it loses air overnight"),
)
"""Issue name and a symptom sentence used in case descriptions."""

STATES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("CA", ("Los Angeles", "San Diego", "San Jose")),
    ("NY", ("New York", "Buffalo", "Albany")),
    ("TX", ("Austin", "Houston", "Dallas")),
    ("FL", ("Miami", "Orlando", "Tampa")),
    ("WA", ("Seattle", "Spokane", "Tacoma")),
    ("IL", ("Chicago", "Springfield", "Peoria")),
    ("CO", ("Denver", "Boulder", "Aurora")),
    ("MA", ("Boston", "Worcester", "Cambridge")),
    ("GA", ("Atlanta", "Savannah", "Augusta")),
    ("AZ", ("Phoenix", "Tucson", "Mesa")),
    ("OR", ("Portland", "Eugene", "Salem")),
    ("NC", ("Charlotte", "Raleigh", "Durham")),
    ("PA", ("Philadelphia", "Pittsburgh", "Erie")),
    ("MN", ("Minneapolis", "Duluth", "Rochester")),
)

FIRST_NAMES = tuple(
    """
    Olivia Liam Emma Noah Ava Elijah Sophia James Isabella Lucas Mia Mason Amelia Ethan Harper Logan
    Evelyn Jacob Abigail Aiden Emily Daniel Ella Henry Scarlett Jackson Grace Sebastian Chloe Mateo
    Victoria Owen Riley Samuel Aria Wyatt Lily Jack Aurora Julian Zoey Levi Nora Isaac Hannah
    Gabriel Layla Anthony Priya Ravi Mei Kenji Fatima Omar Sofia Diego Ingrid Tomas Aisha Yusuf
    """.split()
)
LAST_NAMES = tuple(
    """
    Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez
    Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris
    Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill
    Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Patel Kim Chen
    Okafor Novak Silva Haddad Larsen Tanaka Kowalski
    """.split()
)


# ---------------------------------------------------------------------------------------------
# Policies (PVI)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """A company policy with one numeric limit, and how agents state the matching action.

    Attributes:
        key: Stable identifier.
        title: Knowledge article title.
        search_terms: SOSL terms that find the article.
        question / rule: The FAQ pair; ``rule`` contains ``{limit}``.
        rule_pattern: Regex that reads the limit back from the article text.
        action: Agent sentence with ``{value}``; action_pattern reads the value back.
        violation_when: ``above`` (value > limit violates) or ``below`` (value < limit).
        limit: The limit in the published article.
        compliant_values / violating_values: Values the generator draws from.
    """

    key: str
    title: str
    search_terms: str
    question: str
    rule: str
    rule_pattern: str
    action: str
    action_pattern: str
    violation_when: str
    limit: int
    compliant_values: tuple[int, ...]
    violating_values: tuple[int, ...]

    def violates(self, value: int, limit: int) -> bool:
        """True when ``value`` breaks a rule with ``limit``."""
        return value > limit if self.violation_when == "above" else value < limit


POLICIES: tuple[Policy, ...] = (
    Policy(
        "refund_window",
        "Refund Eligibility Window",
        "refund eligibility window",
        "How long after purchase can a customer receive a refund?",
        "Refunds can be issued only within {limit} days of the purchase date.",
        r"Refunds can be issued only within (\d+) days of the purchase date",
        "I have processed a full refund for the order you placed {value} days ago.",
        r"processed a full refund for the order you placed (\d+) days ago",
        "above",
        30,
        (5, 12, 21, 28),
        (36, 45, 60, 75),
    ),
    Policy(
        "goodwill_discount",
        "Goodwill Discount Limits",
        "goodwill discount",
        "What is the largest goodwill discount an agent may offer?",
        "Agents may offer a goodwill discount of at most {limit} percent.",
        r"goodwill discount of at most (\d+) percent",
        "As an apology I have applied a {value} percent goodwill discount to your next order.",
        r"applied a (\d+) percent goodwill discount",
        "above",
        15,
        (5, 10, 15),
        (20, 25, 30, 40),
    ),
    Policy(
        "free_replacement",
        "Free Replacement Policy",
        "free replacement",
        "How many free replacements can one order item receive?",
        "Each order item is eligible for at most {limit} free replacement.",
        r"eligible for at most (\d+) free replacement",
        "I have arranged {value} free replacement shipments for this item.",
        r"arranged (\d+) free replacement shipments",
        "above",
        1,
        (1,),
        (2, 3),
    ),
    Policy(
        "store_credit",
        "Store Credit Requests",
        "store credit",
        "Until when can a customer ask for store credit?",
        "Store credit must be requested within {limit} days of the purchase date.",
        r"Store credit must be requested within (\d+) days",
        "I have added store credit to your account for the purchase you made {value} days ago.",
        r"store credit to your account for the purchase you made (\d+) days ago",
        "above",
        90,
        (20, 45, 70, 85),
        (100, 120, 150),
    ),
    Policy(
        "expedited_shipping",
        "Complimentary Expedited Shipping",
        "expedited shipping",
        "When can an agent grant free expedited shipping?",
        "Free expedited shipping may be granted only on orders of at least {limit} dollars.",
        r"orders of at least (\d+) dollars",
        "I have upgraded your {value} dollar order to free expedited shipping.",
        r"upgraded your (\d+) dollar order to free expedited shipping",
        "below",
        100,
        (120, 150, 250),
        (40, 60, 85),
    ),
    Policy(
        "warranty_repair",
        "Warranty Repair Coverage",
        "warranty repair coverage",
        "How long are warranty repairs covered?",
        "Warranty repairs are covered for {limit} months from the date of purchase.",
        r"Warranty repairs are covered for (\d+) months",
        "I have approved a free warranty repair for the item you bought {value} months ago.",
        r"free warranty repair for the item you bought (\d+) months ago",
        "above",
        12,
        (3, 6, 9, 11),
        (14, 18, 24),
    ),
)


# ---------------------------------------------------------------------------------------------
# FAQ facts (KQA)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FaqFact:
    """One FAQ pair template for product articles, plus paraphrased customer questions.

    ``question`` / ``answers`` / ``paraphrases`` may use ``{product}``; ``answers`` are the
    possible answer texts (one is drawn per product). ``categories`` limits the fact to some
    categories (empty = all).
    """

    key: str
    question: str
    answers: tuple[str, ...]
    paraphrases: tuple[str, ...]
    categories: frozenset[str] = frozenset()


FAQ_FACTS: tuple[FaqFact, ...] = (
    FaqFact(
        "warranty",
        "How long is the warranty on the {product}?",
        (
            "6 months against manufacturing defects.",
            "12 months against manufacturing defects.",
            "18 months against manufacturing defects.",
            "24 months against manufacturing defects.",
            "36 months against manufacturing defects.",
        ),
        (
            "What warranty coverage comes with the {product}?",
            "How many months of warranty does the {product} have?",
        ),
    ),
    FaqFact(
        "cleaning",
        "How should I clean the {product}?",
        (
            "Wipe it with a damp cloth and let it air dry away from direct heat.",
            "Hand wash it in cold water with mild soap and lay it flat to dry.",
            "Machine wash it cold on a gentle cycle and skip the dryer.",
            "Rinse it with fresh water after each use and dry it in the shade.",
        ),
        ("What is the recommended way to clean my {product}?", "Any cleaning tips for the {product}?"),
    ),
    FaqFact(
        "storage",
        "How should I store the {product}?",
        (
            "Keep it in a cool, dry place out of direct sunlight.",
            "Store it loosely in the included bag so it keeps its shape.",
            "Hang it up or lay it flat; never store it wet.",
            "Keep it indoors at room temperature between uses.",
        ),
        (
            "What's the best way to store the {product} between uses?",
            "Where should I keep my {product} when I am not using it?",
        ),
    ),
    FaqFact(
        "returns",
        "Can I return the {product} after using it?",
        (
            "Yes, lightly used items can be returned within 30 days with the receipt.",
            "Only unused items in the original packaging can be returned.",
            "Yes, within 14 days if the item shows no signs of wear.",
        ),
        (
            "Is it possible to return the {product} once I have used it?",
            "If I already used the {product}, can I still send it back?",
        ),
    ),
    FaqFact(
        "replace",
        "How often should the {product} be replaced?",
        (
            "Every 300 to 500 miles or when the cushioning feels flat.",
            "Every 400 to 600 miles depending on the terrain.",
            "Once the tread depth drops below 2 millimeters.",
        ),
        ("When should I replace my {product}?", "After how many miles do the {product} need replacing?"),
        frozenset({"Running Shoes", "Hiking Boots"}),
    ),
    FaqFact(
        "battery",
        "How long does the battery of the {product} last?",
        (
            "Up to 7 days on a full charge.",
            "Up to 14 hours with GPS turned on.",
            "Up to 5 days with continuous heart rate tracking.",
        ),
        (
            "How many hours or days does the {product} battery last on one charge?",
            "What battery life can I expect from the {product}?",
        ),
        frozenset({"Fitness Trackers"}),
    ),
    FaqFact(
        "waterproof",
        "How waterproof is the {product}?",
        (
            "It has a 20,000 mm waterproof rating.",
            "It has a 10,000 mm waterproof rating.",
            "It is water resistant but not fully waterproof.",
        ),
        ("What waterproof rating does the {product} have?", "Will the {product} keep me dry in heavy rain?"),
        frozenset({"Outdoor Jackets"}),
    ),
)

GENERAL_ARTICLES: tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "Shipping Times and Carriers",
        "Delivery times for standard and express shipping.",
        (
            (
                "How long does standard shipping take?",
                "Standard shipping takes 5 to 7 business days.",
                "How many business days does standard delivery usually take?",
            ),
            (
                "Which carrier handles express orders?",
                "Express orders ship with our priority courier partner.",
                "Who delivers express shipments?",
            ),
        ),
    ),
    (
        "Loyalty Rewards Program",
        "How members earn and redeem reward points.",
        (
            (
                "Do loyalty points expire?",
                "No, loyalty points never expire while the account is active.",
                "Will my reward points ever run out or expire?",
            ),
            (
                "How many points do I earn per dollar?",
                "Members earn 2 points for every dollar spent.",
                "What is the points earning rate per dollar for loyalty members?",
            ),
        ),
    ),
    (
        "Order Cancellation",
        "When and how an order can be cancelled.",
        (
            (
                "When can I cancel an order?",
                "Orders can be cancelled within 24 hours of checkout.",
                "What is the time window to cancel my order after checkout?",
            ),
        ),
    ),
)
"""General FAQ articles: (title, summary, ((question, answer, customer paraphrase), ...))."""


def slug(text: str) -> str:
    """URL name for an article title (lower-case words joined by dashes)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
