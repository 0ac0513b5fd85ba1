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


def test_summary_columns_name_a_row_of_the_wrong_width():
    import pytest

    from pytest_egi.suite import SummaryColumns

    with pytest.raises(ValueError, match=r"^summary_columns: row 2 has 1 values for 2 column names$"):
        SummaryColumns.from_rows(("a", "n"), [[1.0, 1.0], [1.0]], lambda sums: {})
    records = [{"category": "x", "values": {"v": 1.0}}, {"category": "y", "values": {"v": 0.0}}]
    with pytest.raises(ValueError, match=r"^summary_columns: a row of y has 1 values for 2 columns$"):
        SummaryColumns.per_category(records, ("x", "y"), ("n", "v"),
                                    lambda c, rs: [[1.0, 1.0]] * len(rs) if c == "x" else [[1.0]],
                                    lambda c, sums: {})  # fmt: skip
    def finish(c, sums):
        return {f"v_{c}": sums[f"{c}.v"] / sums[f"{c}.n"]}

    cols = SummaryColumns.per_category(records, ("x", "y"), ("n", "v"),
                                       SummaryColumns.each_record(lambda v: [1.0, v["v"]]), finish)
    assert cols.values == [[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
    assert cols.finish({"x.n": 1.0, "x.v": 1.0, "y.n": 2.0, "y.v": 1.0}) == {"v_x": 1.0, "v_y": 0.5}
