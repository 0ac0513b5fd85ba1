"""Model mistakes versus environment faults in the local org, and Salesforce's query limits.

A query the model got wrong comes back as Salesforce's ``ERRORCODE: message`` text, never a
Python exception name; Salesforce's documented limits answer with its own codes; an
environment fault (an unreadable database, an engine bug) is an error for the item and never
reaches the model as an observation.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any

import pytest

from pytest_egi.agents.tools import ToolError
from pytest_egi.models.offline import Noise, PolicyClient
from pytest_egi.suite import Task
from suites.crmarena import CrmArenaOptions
from suites.crmarena.agent import CrmReferencePolicy, run_trial
from suites.crmarena.data.tasks import generate_tasks
from suites.crmarena.env.errors import SalesforceError
from suites.crmarena.env.org import Org
from tests.helpers.exception_names import PYTHON_EXCEPTION
from tests.suites.crmarena.conftest import P3


def _field(name: str, entity: str) -> str:
    return (
        f"INVALID_FIELD: No such column '{name}' on entity '{entity}'. If you are attempting to "
        "use a custom field, be sure to append the '__c' after the custom field name. Please "
        "reference your WSDL or the describe call for the appropriate names."
    )


def _type(name: str) -> str:
    return (
        f"INVALID_TYPE: sObject type '{name}' is not supported. If you are attempting to use a "
        "custom object, be sure to append the '__c' after the entity name. Please reference "
        "your WSDL or the describe call for the appropriate names."
    )


TOO_COMPLICATED = (
    "QUERY_TOO_COMPLICATED: Query is either selecting too many fields or the filter conditions "
    "are too complicated."
)
OFFSET = "NUMBER_OUTSIDE_VALID_RANGE: Maximum SOQL offset allowed is 2000"
SOSL_OFFSET = "MALFORMED_SEARCH: SOSL offset should be between 0 to 2000"
TOO_LONG = "MALFORMED_QUERY: SOQL statements can not be longer than 100000 characters."


def _dates(literal: str) -> str:
    return (
        f"NUMBER_OUTSIDE_VALID_RANGE: {literal} is outside the valid date range 1700-01-01 "
        "to 4000-12-31"
    )


MISTAKES: list[tuple[str, str]] = [
    # malformed SOQL, unknown names, wrong types
    ("", "MALFORMED_QUERY: unexpected token: '<EOF>'"),
    ("SELECT Id FORM Case", "MALFORMED_QUERY: unexpected token: 'FORM'"),
    ("SELECT Foo FROM Case", _field("Foo", "Case")),
    ("SELECT Id FROM Foo", _type("Foo")),
    ("SELECT Id FROM Case WHERE Subject = 5",
     "INVALID_FIELD: value of filter criterion for field 'Subject' must be of type string and "
     "should be enclosed in quotes"),
    ("SELECT Id FROM Case WHERE Id = 'x'", "INVALID_QUERY_FILTER_OPERATOR: invalid ID field: x"),
    ("SELECT Id FROM Case WHERE Subject = 'x", "MALFORMED_QUERY: unterminated string literal "
     "(missing closing quote)"),
    # used to crash the engine (OverflowError): a datetime past year 9999 once shifted to UTC
    ("SELECT Id FROM Case WHERE CreatedDate > 9999-12-31T23:59:59-05:00",
     "INVALID_FIELD: value of filter criterion for field 'CreatedDate' must be of type dateTime "
     "and should not be enclosed in quotes"),
    # LIMIT / OFFSET
    ("SELECT Id FROM Case LIMIT -1", "MALFORMED_QUERY: unexpected token: '-1'"),
    ("SELECT Id FROM Case LIMIT 1.5", "MALFORMED_QUERY: unexpected token: '1.5'"),
    ("SELECT Id FROM Case OFFSET 2001", OFFSET),
    ("SELECT Id FROM Case LIMIT 5 OFFSET 99999999999999999999", OFFSET),  # was IntegrityError
    ("SELECT Id FROM Case WHERE AccountId IN (SELECT Id FROM Account LIMIT 5 OFFSET 1)",
     "MALFORMED_QUERY: OFFSET is not allowed in a WHERE clause subquery"),
    # statement length and complexity (were RecursionError / sqlite3.OperationalError)
    ("SELECT Id FROM Case WHERE Subject = '" + "x" * 100_000 + "'", TOO_LONG),
    ("SELECT Id FROM Case WHERE " + "(" * 101 + "Id = null" + ")" * 101, TOO_COMPLICATED),
    ("SELECT Id FROM Case WHERE " + "NOT " * 5000 + "Id = null", TOO_COMPLICATED),
    ("SELECT Id FROM Case WHERE " + " AND ".join(["Id != null"] * 3000), TOO_COMPLICATED),
    # date literals outside Salesforce's dates (were OverflowError / ValueError)
    ("SELECT Id FROM Case WHERE CreatedDate = LAST_N_DAYS:99999999", _dates("LAST_N_DAYS:99999999")),
    ("SELECT Id FROM Case WHERE CreatedDate = N_DAYS_AGO:3000000", _dates("N_DAYS_AGO:3000000")),
    ("SELECT Id FROM Case WHERE CreatedDate = LAST_N_MONTHS:1200000", _dates("LAST_N_MONTHS:1200000")),
    ("SELECT Id FROM Case WHERE CreatedDate = NEXT_N_YEARS:99999", _dates("NEXT_N_YEARS:99999")),
    ("SELECT Id FROM Case WHERE CreatedDate = LAST_N_YEARS:324", _dates("LAST_N_YEARS:324")),
    ("SELECT Id FROM Case WHERE CreatedDate = NEXT_N_YEARS:1978", _dates("NEXT_N_YEARS:1978")),
    ("SELECT Id FROM Case WHERE CreatedDate = LAST_N_DAYS",
     "MALFORMED_QUERY: unexpected token: 'LAST_N_DAYS'"),
    # SOSL
    ("FIND yoga", "MALFORMED_SEARCH: search terms must be enclosed in braces: FIND {terms}"),
    ("FIND {a}", "MALFORMED_SEARCH: search term must be longer than one character: a"),
    ("FIND {(yoga}", "MALFORMED_SEARCH: invalid search terms: (yoga"),
    ("FIND {yoga} RETURNING Foo", _type("Foo")),
    ("FIND {yoga} RETURNING Product2(Foo)", _field("Foo", "Product2")),
    ("FIND {yoga} RETURNING Product2(Id LIMIT 5 OFFSET 2001)", SOSL_OFFSET),
    # a function in RETURNING used to raise AttributeError
    ("FIND {yoga} RETURNING Case(HOUR_IN_DAY(CreatedDate))",
     "MALFORMED_SEARCH: unexpected token: 'HOUR_IN_DAY('"),
    ("FIND {yoga} RETURNING Case(Id WHERE CreatedDate = LAST_N_DAYS:99999999)",
     _dates("LAST_N_DAYS:99999999")),
    ("FIND {" + "(" * 1000 + "yoga" + ")" * 1000 + "}", TOO_COMPLICATED),
]


@pytest.mark.parametrize(("query", "expected"), MISTAKES, ids=[f"q{i}" for i in range(len(MISTAKES))])
def test_a_model_mistake_reads_as_salesforce_error(tiny_org, query, expected):
    observation = tiny_org.execute(query)
    assert observation == expected
    assert not PYTHON_EXCEPTION.search(observation), observation
    code = expected.split(":")[0]
    assert re.fullmatch(r"[A-Z_]+", code) and observation.startswith(code + ": ")


def test_no_observation_names_a_python_exception(tiny_org):
    """The corpus plus mutations of it: every observation is rows or a Salesforce error."""
    queries = [q for q, _ in MISTAKES] + [
        "SELECT Id FROM Case WHERE Subject LIKE '\\'",
        "SELECT COUNT() FROM Case HAVING COUNT() > 1",
        "SELECT Id, Id FROM Case",
        "FIND {ab AND NOT}",
        "FIND {\"ab} RETURNING Case",
        "SELECT Id FROM Case WHERE CreatedDate > 0001-01-01T00:00:00+05:00",
    ]
    for query in queries:
        for variant in (query, query.lower(), f"```sql\n{query}\n```", query + " LIMIT 99999999999999999999"):
            observation = tiny_org.execute(variant)
            assert not PYTHON_EXCEPTION.search(observation), (variant[:80], observation[:200])
            assert observation.startswith("Salesforce instance output: ") or re.match(
                r"[A-Z_]+: ", observation
            ), observation[:200]


def test_limits_that_are_no_error(tiny_org):
    # LIMIT has no cap in the API; a huge one is no limit (it used to raise IntegrityError)
    assert tiny_org.run_query("SELECT COUNT() FROM Case LIMIT 99999999999999999999") == [{"totalSize": 10}]
    # COUNT() with LIMIT counts up to the limit (SOQL reference, "LIMIT")
    assert tiny_org.run_query("SELECT COUNT() FROM Case LIMIT 3") == [{"totalSize": 3}]
    assert tiny_org.run_query("SELECT COUNT() FROM Case LIMIT 4 OFFSET 8") == [{"totalSize": 2}]
    assert tiny_org.run_query("SELECT Id FROM Case OFFSET 2000") == []
    # the oldest and latest date literals Salesforce's dates allow (today is 2023-04-15):
    # LAST_N_YEARS:323 is [1700-01-01, 2023-01-01), which holds K7 (2022-12-15) alone
    assert tiny_org.run_query("SELECT COUNT() FROM Case WHERE CreatedDate = LAST_N_YEARS:323") == [
        {"totalSize": 1}
    ]
    assert tiny_org.run_query("SELECT COUNT() FROM Case WHERE CreatedDate = NEXT_N_YEARS:1977") == [
        {"totalSize": 0}
    ]
    # 100 nested levels are fine, and a statement of exactly 100,000 characters
    nested = "SELECT COUNT() FROM Case WHERE " + "(" * 100 + "Id != null" + ")" * 100
    assert tiny_org.run_query(nested) == [{"totalSize": 10}]
    head = "SELECT COUNT() FROM Case WHERE Subject != '"
    exact = head + "x" * (100_000 - len(head) - 1) + "'"
    assert len(exact) == 100_000 and tiny_org.run_query(exact) == [{"totalSize": 10}]
    # a number beyond SQLite's 64-bit integers compares as a double
    assert tiny_org.run_query(
        "SELECT COUNT() FROM OrderItem WHERE UnitPrice < 99999999999999999999999"
    ) == [{"totalSize": 5}]


def test_sosl_search_term_length_rules(tiny_org):
    """Over 4,000 characters logical operators are dropped (AND becomes OR); over 10,000 no
    rows come back (SOQL and SOSL Reference, "SOSL Syntax")."""
    assert tiny_org.run_query("FIND {zz AND yoga} RETURNING Product2(Id)") == []
    long_and = "FIND {" + "zz " * 1400 + "AND yoga} RETURNING Product2(Id)"
    assert tiny_org.run_query(long_and) == [{"type": "Product2", "Id": P3}]
    assert tiny_org.run_query("FIND {" + "yoga " * 2001 + "} RETURNING Product2(Id)") == []


def test_salesforce_error_is_the_toolkits_model_mistake():
    error = SalesforceError("INVALID_TYPE", "sObject type 'Foo' is not supported.")
    assert isinstance(error, ToolError)
    assert error.observation == "INVALID_TYPE: sObject type 'Foo' is not supported."


# -- environment faults ------------------------------------------------------------------------


class FaultAfter:
    """The reference policy (the oracle) as the model; before its ``n``-th call, ``fault()``
    breaks the environment."""

    def __init__(self, policy: Any, n: int, fault: Any) -> None:
        self.policy, self.n, self.fault, self.calls = policy, n, fault, 0

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> dict:
        self.calls += 1
        if self.calls == self.n:
            self.fault()
        return self.policy(messages, tools)


def _client(policy: Any, noise: Noise) -> PolicyClient:
    return PolicyClient("egi/oracle", policy, noise)


@pytest.fixture()
def file_org(tmp_path):
    org = Org.generate(seed=42, scale="quick", path=tmp_path / "org.sqlite")
    org.connection.commit()  # no open transaction: every query reads the file again
    yield org, tmp_path / "org.sqlite"
    org.close()


def _multi_query_task(org: Org) -> Task:
    record = next(r for r in generate_tasks(org, seed=42, per_category=2) if r["task"] == "handle_time")
    record = dict(record, _org={"seed": 42, "scale": "quick"})
    return Task(id="HTU-fault", category="HTU", data=record)


def _corrupt(path) -> None:
    with open(path, "r+b") as fh:  # the header no longer says "SQLite format 3"
        fh.write(b"this is not a database at all!!")


@pytest.mark.parametrize("strategy", ["react", "tool_call"])
def test_unreadable_database_is_an_error_with_partial_trajectory(file_org, strategy):
    org, path = file_org
    task = _multi_query_task(org)
    noise = Noise(0.0, "42|crmarena|HTU-fault|0")
    client = _client(FaultAfter(CrmReferencePolicy(task, noise), 2, lambda: _corrupt(path)), noise)
    with pytest.raises(sqlite3.DatabaseError, match="file is not a database") as info:
        run_trial(task, client, org, CrmArenaOptions(strategy=strategy))
    partial = info.value.partial_trajectory
    assert partial["turns"] == 2 and partial["final_answer"] is None
    observations = [m["content"] for m in partial["messages"] if m["role"] in ("user", "tool")][1:]
    # the first query's rows reached the model; the failed second query left no observation
    assert len(observations) == 1 and observations[0].startswith("Salesforce instance output: [")
    assert not any("not a database" in json.dumps(m) for m in partial["messages"])


def test_engine_bug_propagates_instead_of_becoming_an_observation(tiny_org, monkeypatch):
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("shape_rows lost its column")

    monkeypatch.setattr("suites.crmarena.env.soql.shape_rows", broken)
    with pytest.raises(KeyError, match="shape_rows lost its column"):
        tiny_org.execute("SELECT Id FROM Case")
    # a mistake is still the model's: the engine bug is not reached
    assert tiny_org.execute("SELECT Id FORM Case") == "MALFORMED_QUERY: unexpected token: 'FORM'"
