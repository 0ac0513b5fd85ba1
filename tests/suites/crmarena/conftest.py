"""Fixtures for the CRMArena suite tests: a hand-written tiny org and a generated quick org.

The tiny org is small enough to compute every expected answer by hand (see the comments in
`build_tiny_org`); all datetimes are UTC.
"""

from __future__ import annotations

import sqlite3
from datetime import date

import pytest

from suites.crmarena.env.org import Org, create_tables


def uid(prefix: str, number: int) -> str:
    """Readable 18-character test id, e.g. uid('005', 1) == '005000000000001AAA'."""
    return f"{prefix}{number:012d}AAA"


U1, U2, U3 = uid("005", 1), uid("005", 2), uid("005", 3)
A1, A2, A3 = uid("001", 1), uid("001", 2), uid("001", 3)
C1, C2, C3 = uid("003", 1), uid("003", 2), uid("003", 3)
I1, I2 = uid("a1M", 1), uid("a1M", 2)
P1, P2, P3 = uid("01t", 1), uid("01t", 2), uid("01t", 3)
O1, O2, O3, O4 = (uid("801", n) for n in range(1, 5))
OI1, OI2, OI3, OI4, OI5 = (uid("802", n) for n in range(1, 6))
K = {n: uid("500", n) for n in range(1, 11)}
R_ONLINE, R_ARCHIVED, FAQ_P1 = uid("ka0", 1), uid("ka0", 2), uid("ka0", 3)


def _dt(text: str) -> str:
    return f"{text}:00.000+0000"


# Cases: (n, account, contact, owner, status, created, closed, issue, order item)
#   K1 CA U1 Closed 2023-03-10 10:00 -> 12:00 (120 min) I1 OI1(P1)
#   K2 NY U1 Closed 2023-03-15 09:00 -> 13:00 (240 min) I1 OI4(P3)
#   K3 TX U2 Closed 2023-03-20 08:00 -> 11:00 (180 min) I2 OI5(P1)
#   K4 CA U2 Closed 2023-04-01 00:00 -> 01:00 ( 60 min) I1 OI1(P1)  <- exactly on the March end
#   K5 NY U3 Working 2023-03-25 10:00                    I2 OI4(P3)
#   K6 TX U3 Closed 2023-03-05 10:00 -> 16:00 (360 min) I2 OI5(P1)  transferred U2 -> U3 at 12:00
#   K7 CA U1 Closed 2022-12-15 10:00 -> 11:00 ( 60 min) I2 OI1(P1)  Winter 2022
#   K8 NY U2 Closed 2023-02-10 10:00 -> 11:00 ( 60 min) I2 OI4(P3)  Winter 2022
#   K9 NY U2 Closed 2023-05-01 10:00 -> 11:00 ( 60 min) I1 OI4(P3)
#   K10 NY U2 Working 2023-05-02 10:00 (no contact)      I2 OI4(P3)
CASES = [
    (1, A1, C1, U1, "Closed", "2023-03-10T10:00", "2023-03-10T12:00", I1, OI1),
    (2, A2, C2, U1, "Closed", "2023-03-15T09:00", "2023-03-15T13:00", I1, OI4),
    (3, A3, C3, U2, "Closed", "2023-03-20T08:00", "2023-03-20T11:00", I2, OI5),
    (4, A1, C1, U2, "Closed", "2023-04-01T00:00", "2023-04-01T01:00", I1, OI1),
    (5, A2, C2, U3, "Working", "2023-03-25T10:00", None, I2, OI4),
    (6, A3, C3, U3, "Closed", "2023-03-05T10:00", "2023-03-05T16:00", I2, OI5),
    (7, A1, C1, U1, "Closed", "2022-12-15T10:00", "2022-12-15T11:00", I2, OI1),
    (8, A2, C2, U2, "Closed", "2023-02-10T10:00", "2023-02-10T11:00", I2, OI4),
    (9, A2, C2, U2, "Closed", "2023-05-01T10:00", "2023-05-01T11:00", I1, OI4),
    (10, A2, None, U2, "Working", "2023-05-02T10:00", None, I2, OI4),
]


def build_tiny_org(connection: sqlite3.Connection | None = None) -> sqlite3.Connection:
    """Create and fill the tiny org's tables on ``connection`` (a new in-memory one by default)."""
    connection = connection or sqlite3.connect(":memory:")
    create_tables(connection)
    insert = lambda table, rows: connection.executemany(  # noqa: E731
        f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(rows[0]))})', rows
    )
    insert(
        "User",
        [
            (
                U1,
                "Ann",
                "Lee",
                "Ann Lee",
                "alee",
                "ann@co.example",
                None,
                "ann@co",
                "UTC",
                "en_US",
                "UTF-8",
                "en_US",
            ),
            (
                U2,
                "Bob",
                "Kim",
                "Bob Kim",
                "bkim",
                "bob@co.example",
                None,
                "bob@co",
                "UTC",
                "en_US",
                "UTF-8",
                "en_US",
            ),
            (
                U3,
                "Cat",
                "Roy",
                "Cat Roy",
                "croy",
                "cat@co.example",
                None,
                "cat@co",
                "UTC",
                "en_US",
                "UTF-8",
                "en_US",
            ),
        ],
    )
    insert(
        "Account",
        [
            (A1, "Dan", "Park", "Dan Park", "dan@mail.example", None, None, "San Diego", "CA"),
            (A2, "Eve", "Hart", "Eve Hart", "eve@mail.example", None, None, "Buffalo", "NY"),
            (A3, "Fay", "Moss", "Fay Moss", "fay@mail.example", None, None, "Austin", "TX"),
        ],
    )
    insert(
        "Contact",
        [
            (C1, A1, "Dan", "Park", "Dan Park", "dan@mail.example", U1),
            (C2, A2, "Eve", "Hart", "Eve Hart", "eve@mail.example", U2),
            (C3, A3, "Fay", "Moss", "Fay Moss", "fay@mail.example", U3),
        ],
    )
    insert("Issue__c", [(I1, "Zipper Malfunction"), (I2, "Battery Drain")])
    insert(
        "Product2",
        [
            (P1, "Trail Running Shoes", "Trail running shoes with grippy soles.", 1, "SKU-1"),
            (P2, "Road Running Shoes", "Lightweight road running shoes.", 1, "SKU-2"),
            (P3, "Yoga Mat", "Non-slip yoga mat.", 0, "SKU-3"),
        ],
    )
    pricebook = uid("01s", 1)
    insert("Pricebook2", [(pricebook, "Standard Price Book", None, 1, None, None)])
    entries = {p: uid("01u", n) for n, p in enumerate((P1, P2, P3), start=1)}
    insert(
        "PricebookEntry",
        [
            (entries[P1], pricebook, P1, 120.0),
            (entries[P2], pricebook, P2, 100.0),
            (entries[P3], pricebook, P3, 40.0),
        ],
    )
    insert(
        "Order",
        [
            (O1, A1, "2023-03-01", pricebook, "Activated"),
            (O2, A1, "2023-03-05", pricebook, "Draft"),
            (O3, A2, "2023-01-10", pricebook, "Activated"),
            (O4, A3, "2022-11-20", pricebook, "Activated"),
        ],
    )
    insert(
        "OrderItem",
        [
            (OI1, O1, entries[P1], P1, 1.0, 120.0),
            (OI2, O1, entries[P2], P2, 2.0, 100.0),
            (OI3, O2, entries[P3], P3, 1.0, 40.0),
            (OI4, O3, entries[P3], P3, 3.0, 35.0),
            (OI5, O4, entries[P1], P1, 1.0, 110.0),
        ],
    )
    insert(
        "Case",
        [
            (
                K[n],
                acct,
                contact,
                owner,
                status,
                "Medium",
                f"Case {n}",
                f"Description {n}",
                _dt(created),
                _dt(closed) if closed else None,
                issue,
                item,
            )
            for n, acct, contact, owner, status, created, closed, issue, item in CASES
        ],
    )
    history, serial = [], 0
    for n, _, _, owner, _, created, closed, _, _ in CASES:
        first_owner = U2 if n == 6 else owner
        rows = [("Case Creation", None, None, created), ("Owner Assignment", None, first_owner, created)]
        if n == 6:
            rows.append(("Owner Assignment", U2, U3, "2023-03-05T12:00"))
        if closed:
            rows.append(("Case Closed", None, None, closed))
        for field, old, new, moment in rows:
            serial += 1
            history.append((uid("a1N", serial), K[n], field, old, new, _dt(moment)))
    insert("CaseHistory__c", history)
    insert(
        "Knowledge__kav",
        [
            (
                R_ONLINE,
                "Refund Eligibility Window",
                "Company policy.",
                "Q: How long after purchase can a customer receive a refund?\n"
                "A: Refunds can be issued only within 30 days of the purchase date.",
                "refund-eligibility-window",
                "Online",
                "en_US",
            ),
            (
                R_ARCHIVED,
                "Refund Eligibility Window",
                "Old version.",
                "Q: How long after purchase can a customer receive a refund?\n"
                "A: Refunds can be issued only within 60 days of the purchase date.",
                "refund-eligibility-window-2021",
                "Archived",
                "en_US",
            ),
            (
                FAQ_P1,
                "Trail Running Shoes FAQ",
                "Care and warranty answers.",
                "Q: How long is the warranty on the Trail Running Shoes?\nA: 18 months against "
                "manufacturing defects.\n\n"
                "Q: How should I clean the Trail Running Shoes?\nA: Wipe it with a damp cloth.",
                "trail-running-shoes-faq",
                "Online",
                "en_US",
            ),
        ],
    )
    insert(
        "LiveChatTranscript",
        [
            (
                uid("570", 1),
                K[1],
                A1,
                C1,
                U1,
                "Customer: My shoes broke.\nAgent: I have processed a full refund for the order you "
                "placed 45 days ago.",
                _dt("2023-03-10T10:30"),
                uid("571", 1),
            ),
        ],
    )
    insert(
        "EmailMessage",
        [
            (
                uid("02s", 1),
                K[2],
                "RE: Case 2",
                "Hi Eve,\n\nI have processed a full refund for the order you placed 20 days "
                "ago.\n\nBest regards",
                "ann@co.example",
                C2,
                _dt("2023-03-15T10:00"),
            ),
        ],
    )
    connection.commit()
    return connection


@pytest.fixture()
def tiny_org() -> Org:
    """The hand-written org, with "today" = 2023-04-15."""
    return Org(build_tiny_org(), source="tiny", today=date(2023, 4, 15))


@pytest.fixture(scope="session")
def quick_org() -> Org:
    """A generated quick org (seed 42), shared by read-only tests."""
    return Org.generate(42, "quick")
