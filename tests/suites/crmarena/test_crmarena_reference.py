"""Gold rules: period parsing, tie handling, None gold, `<` vs `<=` boundaries, and the nine
reference solutions on the tiny hand-written org (expected answers computed by hand, see conftest)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from suites.crmarena.data.reference import (
    ReferenceSolutionError,
    arg_extreme,
    parse_extremum,
    parse_period,
    parse_purchase_offset,
    parse_threshold,
    reference_solution,
    solve_directly,
    wrong_answer,
)
from suites.crmarena.env.sftime import add_months, named_period, relative_period

from .conftest import C1, I1, I2, P1, P2, P3, R_ONLINE, U1, U2, K


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def task(kind: str, query: str, required: str) -> dict:
    return {
        "idx": 0,
        "task": kind,
        "query": query,
        "answer": [],
        "reward_metric": "exact_match",
        "metadata": {"required": required, "optional": ""},
    }


# -- periods ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("in Q1 2023", utc(2023, 1, 1), utc(2023, 4, 1)),
        ("in the fourth quarter of 2022", utc(2022, 10, 1), utc(2023, 1, 1)),
        ("in Spring 2023", utc(2023, 3, 1), utc(2023, 6, 1)),
        ("in the fall of 2021", utc(2021, 9, 1), utc(2021, 12, 1)),
        ("during Autumn 2021", utc(2021, 9, 1), utc(2021, 12, 1)),
        ("in Winter 2022", utc(2022, 12, 1), utc(2023, 3, 1)),  # crosses the year
        ("in February 2024", utc(2024, 2, 1), utc(2024, 3, 1)),
        ("over the past 2 quarters", utc(2023, 2, 28), utc(2023, 8, 31)),  # month-end clamping
        ("in the last three weeks", utc(2023, 8, 10), utc(2023, 8, 31)),
        ("in the past 45 days", utc(2023, 7, 17), utc(2023, 8, 31)),
        ("in the past month", utc(2023, 7, 31), utc(2023, 8, 31)),
    ],
)
def test_parse_period(text, start, end):
    assert parse_period(text, date(2023, 8, 31)) == (start, end)


def test_period_helpers():
    assert named_period("winter", 2023) == (utc(2023, 12, 1), utc(2024, 3, 1))
    assert relative_period(date(2024, 3, 31), "quarter", 1) == (utc(2023, 12, 31), utc(2024, 3, 31))
    assert add_months(date(2024, 1, 31), 1) == date(2024, 2, 29)
    with pytest.raises(ReferenceSolutionError):
        parse_period("at some point", date(2023, 1, 1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("among agents who handled more than two cases", 2),
        ("who handled over 3 cases", 3),
        ("more than one case", 1),
        ("agents who handled any cases", 0),
    ],
)
def test_parse_threshold(text, expected):
    assert parse_threshold(text) == expected


def test_parse_extremum_and_purchase_offset():
    assert parse_extremum("the shortest handle time") == "min"
    assert parse_extremum("transferred the most cases") == "max"
    today = date(2023, 3, 31)
    assert parse_purchase_offset("I bought three days ago", today) == date(2023, 3, 28)
    assert parse_purchase_offset("purchased a fortnight ago", today) == date(2023, 3, 17)
    assert parse_purchase_offset("ordered last month", today) == date(2023, 2, 28)
    assert parse_purchase_offset("bought last week", today) == date(2023, 3, 24)


def test_arg_extreme_returns_all_ties():
    assert arg_extreme({"a": 2, "b": 5, "c": 5}, "max") == ["b", "c"]
    assert arg_extreme({"a": 2.5, "b": 2.5}, "min") == ["a", "b"]
    assert arg_extreme({}, "min") == []


# -- HTU / TCU (boundaries, ties, None) ---------------------------------------------------------------

TODAY = "Today's date: 2023-04-15"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # any agent: U1 cases 120+240 -> 180, U2 case K3 180 -> tie. K4 (created exactly at the end,
        # 60 min) is excluded by Case `<` end; K6 was transferred.
        (
            "Which agent had the lowest average handle time in March 2023, among agents who handled "
            "any cases?",
            [U1, U2],
        ),
        (
            "Which agent had the highest average handle time in March 2023, among agents who handled "
            "any cases?",
            [U1, U2],
        ),
        # more than 2: only U2 has 3 assignments (K3, K6 initial, and K4's at exactly the end,
        # counted because CaseHistory uses `<=` end)
        (
            "In March 2023, identify the agent with the shortest handle time among agents who "
            "handled more than "
            "two cases.",
            [U2],
        ),
        (
            "In March 2023, identify the agent with the shortest handle time among agents who "
            "handled more than "
            "3 cases.",
            [None],
        ),
        # Winter 2022 = Dec 2022 .. Feb 2023: K7 (U1, 60) and K8 (U2, 60) -> tie
        (
            "Which agent had the quickest average handle time in Winter 2022, among agents who "
            "handled any cases?",
            [U1, U2],
        ),
    ],
)
def test_handle_time(tiny_org, query, expected):
    assert solve_directly(tiny_org, task("handle_time", query, TODAY)) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Which agent transferred the most cases in March 2023, among agents who handled more "
            "than one case?",
            [U2],
        ),
        ("Which agent transferred the most cases in Q2 2023, among agents who handled any cases?", [None]),
        (
            "Which agent transferred the most cases in March 2023, among agents who handled more "
            "than 5 cases?",
            [None],
        ),
    ],
)
def test_transfer_count(tiny_org, query, expected):
    assert solve_directly(tiny_org, task("transfer_count", query, TODAY)) == expected


# -- TII / MTA / BRI -------------------------------------------------------------------------------------


def test_top_issue_tie_depends_on_inclusive_end(tiny_org):
    # P1 cases in March 2023 with CreatedDate <= 2023-04-01T00:00:00Z: K1 I1, K3 I2, K4 I1 (on the end), K6 I2
    record = task(
        "top_issue_identification",
        "What was the most common issue with the Trail Running Shoes in March 2023?",
        f"{TODAY}\nProduct Id: {P1}",
    )
    assert solve_directly(tiny_org, record) == [I1, I2]


def test_top_issue_none_when_no_cases(tiny_org):
    record = task(
        "top_issue_identification",
        "Which issue was reported most often for the Road Running Shoes during Q1 2023?",
        f"{TODAY}\nProduct Id: {P2}",
    )
    assert solve_directly(tiny_org, record) == [None]


def test_monthly_trend(tiny_org):
    # P3 cases in [2023-01-15, 2023-04-15): K8 February, K2 and K5 March
    record = task(
        "monthly_trend_analysis",
        "Is there a month in the past three months where we received "
        "significantly more cases for the Yoga Mat than in other months?",
        f"{TODAY}\nProduct Id: {P3}",
    )
    assert solve_directly(tiny_org, record) == ["March"]


def test_best_region_unique_and_winter_tie(tiny_org):
    march = task(
        "best_region_identification",
        "Which state had the quickest average case closure time in March 2023?",
        TODAY,
    )
    assert solve_directly(tiny_org, march) == ["CA"]  # CA 120 min, NY 240, TX (180+360)/2
    winter = task(
        "best_region_identification",
        "In Winter 2022, which shipping state closed cases fastest on average?",
        TODAY,
    )
    assert solve_directly(tiny_org, winter) == ["CA", "NY"]  # K7 and K8, 60 minutes each


# -- NCR -------------------------------------------------------------------------------------------


def test_case_routing_tie_breaks(tiny_org):
    # Closed I1 cases: U1 K1, K2; U2 K4, K9 -> tie. Closed P1 cases: U1 K1, K7; U2 K3, K4 -> tie.
    # Open cases: U1 none, U2 K10 -> U1.
    required = (
        "Case subject: Zipper Malfunction on my Trail Running Shoes\n"
        "Case description: The zipper malfunction started after a week."
    )
    assert solve_directly(tiny_org, task("case_routing", "Who should get this case?", required)) == [U1]
    # Same issue, product Yoga Mat: closed P3 cases U1 K2; U2 K8, K9 -> U2 wins the second rule.
    required = "Case subject: Problem with my Yoga Mat\nCase description: It has a zipper malfunction issue."
    assert solve_directly(tiny_org, task("case_routing", "Who should get this case?", required)) == [U2]
    # Battery Drain: closed I2 cases U1 K7; U2 K3, K8; U3 K6 -> U2 outright.
    required = "Case subject: Battery Drain on my Road Running Shoes\nCase description: Battery drain."
    assert solve_directly(tiny_org, task("case_routing", "Who should get this case?", required)) == [U2]


# -- NED / PVI / KQA -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "today", "expected"),
    [
        ("Can you show me the running shoes I bought 3 days ago?", "2023-03-04", [P1, P2]),  # two on O1
        ("Display the trail running shoes that I purchased a week ago.", "2023-03-08", [P1]),
        ("Display the yoga mat that I purchased 2 days ago.", "2023-03-07", [None]),  # O2 is a Draft
        ("Can you show me the running shoes I bought 5 days ago?", "2023-03-04", [None]),  # nothing that day
    ],
)
def test_named_entity_disambiguation(tiny_org, query, today, expected):
    record = task("named_entity_disambiguation", query, f"Today's date: {today}\nCustomer contact Id: {C1}")
    assert solve_directly(tiny_org, record) == expected


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (K[1], [R_ONLINE]),  # chat: refund 45 days after purchase > 30 (Online article; archived says 60)
        (K[2], [None]),  # email: refund after 20 days is allowed
        (K[3], [None]),  # no transcript at all
    ],
)
def test_policy_violation(tiny_org, case, expected):
    record = task("policy_violation_identification", "Did the agent breach a policy?", f"Case Id: {case}")
    assert solve_directly(tiny_org, record) == expected


def test_knowledge_qa_answers_with_the_article_span(tiny_org):
    record = task(
        "knowledge_qa", "What warranty coverage comes with the Trail Running Shoes?", "- Be concise"
    )
    assert solve_directly(tiny_org, record) == ["18 months against manufacturing defects."]
    record = task("knowledge_qa", "Any cleaning tips for the Trail Running Shoes?", "- Be concise")
    assert solve_directly(tiny_org, record) == ["Wipe it with a damp cloth."]


# -- protocol, errors, wrong answers ---------------------------------------------------------------


def test_reference_solution_is_a_query_generator(tiny_org):
    program = reference_solution(task("best_region_identification", "Fastest state in Winter 2022?", TODAY))
    query = next(program)
    assert query.startswith("SELECT Account.ShippingState, CreatedDate, ClosedDate FROM Case")
    assert "CreatedDate >= 2022-12-01T00:00:00Z AND CreatedDate < 2023-03-01T00:00:00Z" in query
    with pytest.raises(StopIteration) as stop:
        program.send(tiny_org.run_query(query))
    assert stop.value.value == ["CA", "NY"]


def test_history_queries_use_inclusive_end():
    program = reference_solution(
        task("transfer_count", "Most transfers in Q1 2023 among agents who handled any cases?", TODAY)
    )
    assert "CreatedDate >= 2023-01-01T00:00:00Z AND CreatedDate <= 2023-04-01T00:00:00Z" in next(program)


def test_missing_metadata_line_and_unknown_type_raise():
    with pytest.raises(ReferenceSolutionError, match="Today's date"):
        next(reference_solution(task("handle_time", "lowest handle time in Q1 2023?", "")))
    with pytest.raises(ReferenceSolutionError, match="unknown task type"):
        reference_solution(task("lead_routing", "?", ""))


@pytest.mark.parametrize(
    ("kind", "correct", "observed", "expected"),
    [
        ("handle_time", [U1], [{"OwnerId": U1}, {"OwnerId": U2}], [U2]),  # runner-up from the observations
        ("handle_time", [U1], [], [None]),
        ("best_region_identification", ["CA", "AZ"], [], ["CO"]),
        ("monthly_trend_analysis", ["December"], [], ["January"]),
        ("knowledge_qa", ["18 months against manufacturing defects."], [], ["18 months"]),
    ],
)
def test_wrong_answer_has_the_right_shape(kind, correct, observed, expected):
    assert wrong_answer({"task": kind, "idx": 1}, correct, observed) == expected


def test_wrong_answer_for_none_gold_is_a_wellformed_id():
    answer = wrong_answer({"task": "transfer_count", "idx": 4}, [None])
    assert answer != [None] and answer[0].startswith("005") and len(answer[0]) == 18
    assert wrong_answer({"task": "transfer_count", "idx": 4}, [None]) == answer  # deterministic


def test_a_memo_shared_by_solves_runs_a_repeated_query_once_from_its_second_run(tiny_org):
    """generate_tasks shares one memo across a category's draw: the answers are those of
    solving without it, a query's result is kept from its second run on (a one-off query's
    records are not held), and a kept result is not run again."""
    query = ("Which agent had the quickest average handle time in Winter 2022, among agents "
             "who handled any cases?")  # fmt: skip
    record = task("handle_time", query, TODAY)
    calls: list[str] = []

    class Counting:
        def run_query(self, text):
            calls.append(text)
            return tiny_org.run_query(text)

    memo: dict = {}
    assert solve_directly(Counting(), record, memo) == [U1, U2] == solve_directly(tiny_org, record)
    first = len(calls)
    assert first > 0 and set(memo) == set(calls) and all(v is None for v in memo.values())
    assert solve_directly(Counting(), record, memo) == [U1, U2]
    assert len(calls) == 2 * first and all(v is not None for v in memo.values())
    assert solve_directly(Counting(), record, memo) == [U1, U2]
    assert len(calls) == 2 * first  # the third solve ran nothing
