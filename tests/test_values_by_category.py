"""``values_by_category``: the grouping a suite's ``summarize`` starts from."""

from __future__ import annotations

from pytest_egi.suite import values_by_category


def test_groups_values_in_category_order_and_leaves_out_the_rest():
    records = [
        {"category": "b", "values": {"x": 1.0}},
        {"category": "a", "values": {"x": 2.0}},
        {"category": "other", "values": {"x": 9.0}},
        {"category": "b", "values": None},
        {"category": "b", "values": {"x": 3.0}},
        {"task_id": "no-category"},
    ]
    grouped = values_by_category(records, ("a", "b", "c"))
    assert list(grouped) == ["a", "b"]
    assert grouped == {"a": [{"x": 2.0}], "b": [{"x": 1.0}, {}, {"x": 3.0}]}


def test_no_record_of_any_category_is_empty():
    assert values_by_category([], ("a",)) == {}
    assert values_by_category([{"category": "z", "values": {}}], ("a",)) == {}
