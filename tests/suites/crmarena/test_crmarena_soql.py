"""SOQL subset on the tiny hand-written org (expected values computed by hand from conftest)."""

from __future__ import annotations

from datetime import date

import pytest

from suites.crmarena.env.errors import SalesforceError
from suites.crmarena.env.org import Org
from suites.crmarena.env.sftime import date_literal_range

from .conftest import A1, A2, A3, O1, P3, U1, U2, U3, K, build_tiny_org, uid


def ids(rows: list[dict]) -> set[str]:
    return {row["Id"] for row in rows}


# -- SELECT, relationship paths, result shape ------------------------------------------------


def test_fields_and_relationship_paths_are_nested_dicts(tiny_org):
    rows = tiny_org.run_query(
        f"SELECT Subject, Account.ShippingState, Owner.FirstName FROM Case WHERE Id = '{K[1]}'"
    )
    assert rows == [{"Subject": "Case 1", "Account": {"ShippingState": "CA"}, "Owner": {"FirstName": "Ann"}}]


def test_object_name_prefix_and_two_level_path(tiny_org):
    rows = tiny_org.run_query(
        f"SELECT OrderItem.Order.AccountId, Order.Account.ShippingState, Product2.Name FROM OrderItem "
        f"WHERE OrderItem.Order.Status = 'Activated' AND Product2Id = '{P3}'"
    )
    assert rows == [
        {"Order": {"AccountId": A2, "Account": {"ShippingState": "NY"}}, "Product2": {"Name": "Yoga Mat"}}
    ]


def test_null_lookup_gives_none_and_keys_are_canonical(tiny_org):
    rows = tiny_org.run_query("select contact.lastname from CASE where status = 'working'")
    assert rows == [{"Contact": {"LastName": "Hart"}}, {"Contact": None}]


def test_columns_null_in_every_row_are_dropped(tiny_org):
    rows = tiny_org.run_query("SELECT Id, ClosedDate FROM Case WHERE Status = 'Working'")
    assert rows == [{"Id": K[5]}, {"Id": K[10]}]


def test_empty_result_is_empty_list(tiny_org):
    assert tiny_org.run_query("SELECT Id FROM Case WHERE Subject = 'nothing'") == []


def test_booleans_numbers_and_datetimes_come_back_typed(tiny_org):
    rows = tiny_org.run_query(f"SELECT IsActive, Name FROM Product2 WHERE Id = '{P3}'")
    assert rows == [{"IsActive": False, "Name": "Yoga Mat"}]
    rows = tiny_org.run_query(
        f"SELECT Quantity, UnitPrice FROM OrderItem WHERE Product2Id = '{P3}' AND Quantity > 2"
    )
    assert rows == [{"Quantity": 3.0, "UnitPrice": 35.0}]


def test_select_created_date_in_api_format(tiny_org):
    rows = tiny_org.run_query(f"SELECT CreatedDate FROM Case WHERE Id = '{K[1]}'")
    assert rows == [{"CreatedDate": "2023-03-10T10:00:00.000+0000"}]


def test_fields_all_expands_every_field(tiny_org):
    rows = tiny_org.run_query("SELECT FIELDS(ALL) FROM Issue__c ORDER BY Name")
    assert rows == [
        {"Id": uid("a1M", 2), "Name": "Battery Drain"},
        {"Id": uid("a1M", 1), "Name": "Zipper Malfunction"},
    ]


# -- COUNT() and aggregates ----------------------------------------------------------------------


def test_count_returns_total_size(tiny_org):
    assert tiny_org.run_query("SELECT COUNT() FROM Case") == [{"totalSize": 10}]
    assert tiny_org.run_query("SELECT COUNT() FROM Case WHERE Status = 'Closed'") == [{"totalSize": 8}]


def test_count_quirk_reproduces_original_empty_list():
    org = Org(build_tiny_org(), count_quirk=True)
    assert org.run_query("SELECT COUNT() FROM Case") == []


def test_group_by_counts_keyed_expr0(tiny_org):
    rows = tiny_org.run_query("SELECT OwnerId, COUNT(Id) FROM Case WHERE Status = 'Closed' GROUP BY OwnerId")
    assert {r["OwnerId"]: r["expr0"] for r in rows} == {U1: 3, U2: 4, U3: 1}


def test_having_order_by_aggregate_and_limit(tiny_org):
    rows = tiny_org.run_query(
        "SELECT OwnerId, COUNT(Id) FROM Case WHERE Status = 'Closed' GROUP BY OwnerId "
        "HAVING COUNT(Id) > 2 ORDER BY COUNT(Id) DESC"
    )
    assert rows == [{"OwnerId": U2, "expr0": 4}, {"OwnerId": U1, "expr0": 3}]
    rows = tiny_org.run_query(
        "SELECT OwnerId, COUNT(Id) n FROM Case GROUP BY OwnerId ORDER BY COUNT(Id) ASC LIMIT 1"
    )
    assert rows == [{"OwnerId": U3, "n": 2}]


def test_aggregate_aliases_and_expr_numbering(tiny_org):
    rows = tiny_org.run_query(
        "SELECT MAX(Quantity) maxq, MIN(UnitPrice), SUM(Quantity), AVG(UnitPrice) FROM OrderItem"
    )
    # quantities 1,2,1,3,1 ; prices 120,100,40,35,110
    assert rows == [{"maxq": 3.0, "expr0": 35.0, "expr1": 8.0, "expr2": 81.0}]


def test_count_distinct(tiny_org):
    assert tiny_org.run_query("SELECT COUNT_DISTINCT(Product2Id) FROM OrderItem") == [{"expr0": 3}]


def test_group_by_relationship_field_is_flat(tiny_org):
    rows = tiny_org.run_query(
        "SELECT Account.ShippingState, COUNT(Id) FROM Case GROUP BY Account.ShippingState ORDER BY "
        "Account.ShippingState"
    )
    assert rows == [
        {"ShippingState": "CA", "expr0": 3},
        {"ShippingState": "NY", "expr0": 5},
        {"ShippingState": "TX", "expr0": 2},
    ]


# -- date functions and literals ---------------------------------------------------------------------


def test_calendar_month_group_by(tiny_org):
    rows = tiny_org.run_query(
        "SELECT CALENDAR_MONTH(CreatedDate), COUNT(Id) FROM Case GROUP BY CALENDAR_MONTH(CreatedDate)"
    )
    assert {r["expr0"]: r["expr1"] for r in rows} == {2: 1, 3: 5, 4: 1, 5: 2, 12: 1}


def test_calendar_year_and_day_only_in_where(tiny_org):
    assert ids(tiny_org.run_query("SELECT Id FROM Case WHERE CALENDAR_YEAR(CreatedDate) = 2022")) == {K[7]}
    assert ids(tiny_org.run_query("SELECT Id FROM Case WHERE DAY_ONLY(CreatedDate) = 2023-03-10")) == {K[1]}
    rows = tiny_org.run_query(
        "SELECT CALENDAR_YEAR(CreatedDate) y, COUNT(Id) c FROM Case "
        "GROUP BY CALENDAR_YEAR(CreatedDate) ORDER BY CALENDAR_YEAR(CreatedDate) DESC"
    )
    assert rows == [{"y": 2023, "c": 9}, {"y": 2022, "c": 1}]


@pytest.mark.parametrize(
    "literal",
    [
        "2023-04-01T00:00:00Z",
        "2023-04-01T00:00:00+0000",
        "2023-04-01T00:00:00.000+0000",
        "2023-03-31T20:00:00-04:00",
        "2023-03-31T20:00:00.000-0400",
    ],
)
def test_datetime_literal_forms_are_normalised(tiny_org, literal):
    rows = tiny_org.run_query(f"SELECT Id FROM Case WHERE CreatedDate >= {literal}")
    assert ids(rows) == {K[4], K[9], K[10]}


def test_date_field_uses_date_literals(tiny_org):
    assert ids(tiny_org.run_query("SELECT Id FROM Order WHERE EffectiveDate = 2023-03-01")) == {O1}
    with pytest.raises(SalesforceError) as info:
        tiny_org.run_query("SELECT Id FROM Order WHERE EffectiveDate = 2023-03-01T00:00:00Z")
    assert str(info.value) == (
        "INVALID_FIELD: value of filter criterion for field 'EffectiveDate' must be of "
        "type date and should not be enclosed in quotes"
    )


@pytest.mark.parametrize(
    ("literal", "expected"),
    [
        ("LAST_N_DAYS:20", {4}),  # [2023-03-26, 2023-04-16)
        ("THIS_MONTH", {4}),
        ("LAST_MONTH", {1, 2, 3, 5, 6}),
        ("THIS_YEAR", {1, 2, 3, 4, 5, 6, 8, 9, 10}),
        ("LAST_YEAR", {7}),
        ("NEXT_N_DAYS:20", {9, 10}),  # [2023-04-16, 2023-05-06)
        ("TODAY", set()),
    ],
)
def test_relative_date_literals_use_configured_today(tiny_org, literal, expected):
    rows = tiny_org.run_query(f"SELECT Id FROM Case WHERE CreatedDate = {literal}")
    assert ids(rows) == {K[n] for n in expected}


def test_today_can_be_overridden_per_query(tiny_org):
    rows = tiny_org.run_query("SELECT Id FROM Case WHERE CreatedDate = TODAY", today=date(2023, 4, 1))
    assert ids(rows) == {K[4]}
    rows = tiny_org.run_query("SELECT Id FROM Case WHERE CreatedDate < LAST_N_DAYS:20")
    assert ids(rows) == {K[n] for n in (1, 2, 3, 5, 6, 7, 8)}


def test_date_literal_range_edges():
    today = date(2024, 3, 13)  # a Wednesday
    assert date_literal_range("THIS_WEEK", None, today) == (date(2024, 3, 10), date(2024, 3, 17))
    assert date_literal_range("LAST_N_MONTHS", 2, today) == (date(2024, 1, 1), date(2024, 3, 1))
    assert date_literal_range("LAST_QUARTER", None, today) == (date(2023, 10, 1), date(2024, 1, 1))


# -- WHERE operators ---------------------------------------------------------------------------------


def test_in_not_in_like_and_not(tiny_org):
    assert ids(tiny_org.run_query(f"SELECT Id FROM Account WHERE Id IN ('{A1}', '{A3}')")) == {A1, A3}
    assert ids(tiny_org.run_query("SELECT Id FROM Account WHERE ShippingState NOT IN ('CA', 'TX')")) == {A2}
    names = [
        r["Name"]
        for r in tiny_org.run_query("SELECT Name FROM Product2 WHERE Name LIKE '%RUNNING%' ORDER BY Name")
    ]
    assert names == ["Road Running Shoes", "Trail Running Shoes"]
    assert ids(tiny_org.run_query("SELECT Id FROM Account WHERE NOT ShippingState = 'CA'")) == {A2, A3}


def test_and_or_need_parentheses_when_mixed(tiny_org):
    rows = tiny_org.run_query(
        f"SELECT Id FROM Case WHERE Status = 'Working' AND (OwnerId = '{U3}' OR OwnerId = '{U1}')"
    )
    assert ids(rows) == {K[5]}
    with pytest.raises(SalesforceError) as info:
        tiny_org.run_query(
            f"SELECT Id FROM Case WHERE Status = 'Working' AND OwnerId = '{U3}' OR Priority = 'Low'"
        )
    assert str(info.value) == "MALFORMED_QUERY: unexpected token: 'OR'"


def test_null_comparisons_and_not_equal_keeps_nulls(tiny_org):
    assert ids(tiny_org.run_query("SELECT Id FROM Case WHERE ClosedDate = NULL")) == {K[5], K[10]}
    assert len(tiny_org.run_query("SELECT Id FROM Case WHERE ClosedDate != NULL")) == 8
    # Salesforce's != also matches null values
    assert len(tiny_org.run_query("SELECT Id FROM Case WHERE ClosedDate != 2023-03-10T12:00:00Z")) == 9


def test_text_comparison_is_case_insensitive_and_escapes_work(tiny_org):
    assert len(tiny_org.run_query("SELECT Id FROM Case WHERE Status = 'closed'")) == 8
    assert tiny_org.run_query("SELECT Id FROM Account WHERE LastName = 'O\\'Hara'") == []


def test_semi_join_and_anti_join(tiny_org):
    rows = tiny_org.run_query(
        "SELECT Name FROM Product2 WHERE Id IN (SELECT Product2Id FROM OrderItem WHERE "
        f"Order.AccountId = '{A2}')"
    )
    assert rows == [{"Name": "Yoga Mat"}]
    rows = tiny_org.run_query(
        "SELECT Id FROM Account WHERE Id NOT IN (SELECT AccountId FROM Order WHERE Status = 'Draft')"
    )
    assert ids(rows) == {A2, A3}


def test_fifteen_character_ids_are_accepted(tiny_org):
    assert ids(tiny_org.run_query(f"SELECT Id FROM Case WHERE Id = '{K[1][:15]}'")) == {K[1]}


def test_order_by_nulls_first_last_offset(tiny_org):
    rows = tiny_org.run_query("SELECT Id FROM Case ORDER BY ClosedDate ASC NULLS LAST")
    assert [r["Id"] for r in rows][-2:] == [K[5], K[10]]
    rows = tiny_org.run_query("SELECT Id FROM Case ORDER BY ClosedDate DESC NULLS FIRST LIMIT 3")
    assert [r["Id"] for r in rows] == [K[5], K[10], K[9]]
    rows = tiny_org.run_query("SELECT Name FROM Product2 ORDER BY Name LIMIT 1 OFFSET 1")
    assert rows == [{"Name": "Trail Running Shoes"}]


def test_boolean_filter(tiny_org):
    assert [r["Name"] for r in tiny_org.run_query("SELECT Name FROM Product2 WHERE IsActive = FALSE")] == [
        "Yoga Mat"
    ]


# -- errors ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT Id FORM Case", "MALFORMED_QUERY: unexpected token: 'FORM'"),
        ("SELECT Id FROM Case WHERE", "MALFORMED_QUERY: unexpected token: '<EOF>'"),
        ("SELECT Name n FROM Product2", "MALFORMED_QUERY: only aggregate expressions use field aliasing"),
        (
            "SELECT Subject, COUNT(Id) FROM Case GROUP BY Status",
            "MALFORMED_QUERY: Field must be grouped or aggregated: Subject",
        ),
        (
            "SELECT Id FROM Cases",
            "INVALID_TYPE: sObject type 'Cases' is not supported. If you are attempting to use a "
            "custom object, be "
            "sure to append the '__c' after the entity name. Please reference your WSDL or the "
            "describe call for the "
            "appropriate names.",
        ),
        (
            "SELECT Foo FROM Case",
            "INVALID_FIELD: No such column 'Foo' on entity 'Case'. If you are attempting to use a "
            "custom field, be "
            "sure to append the '__c' after the custom field name. Please reference your WSDL or the "
            "describe call "
            "for the appropriate names.",
        ),
        (
            "SELECT Id FROM Case WHERE OwnerId = 'John'",
            "INVALID_QUERY_FILTER_OPERATOR: invalid ID field: John",
        ),
        (
            "SELECT Id FROM Case WHERE CreatedDate > '2023-01-01T00:00:00Z'",
            "INVALID_FIELD: value of filter criterion for field 'CreatedDate' must be of type "
            "dateTime and should not "
            "be enclosed in quotes",
        ),
        (
            "SELECT Id FROM Case WHERE CreatedDate > 2023-01-01",
            "INVALID_FIELD: value of filter criterion for field 'CreatedDate' must be of type "
            "dateTime and should not "
            "be enclosed in quotes",
        ),
        ("SELECT Id FROM Case WHERE Status = Closed", "MALFORMED_QUERY: unexpected token: 'Closed'"),
        (
            "SELECT SUM(Subject) FROM Case",
            "INVALID_FIELD: field Subject does not support aggregate operator SUM",
        ),
    ],
)
def test_salesforce_style_errors(tiny_org, query, expected):
    with pytest.raises(SalesforceError) as info:
        tiny_org.run_query(query)
    assert str(info.value) == expected


def test_unknown_relationship_error(tiny_org):
    with pytest.raises(SalesforceError) as info:
        tiny_org.run_query("SELECT Acount.Name FROM Case")
    assert info.value.code == "INVALID_FIELD"
    assert info.value.message.startswith("Didn't understand relationship 'Acount' in field path.")
