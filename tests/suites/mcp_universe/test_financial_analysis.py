"""MCP-Universe financial_analysis: the ``yfinance.*`` ops, the task generator and the reference
solver, on upstream's task files and on our own.

Upstream's task files are found as :mod:`tests.suites.mcp_universe.upstream` says; without
them those tests are skipped.
"""

from __future__ import annotations

import copy
import json
from datetime import date, timedelta
from typing import Any

import pytest

import suites.mcp_universe.scorer.ops  # noqa: F401  (registers the domain ops)
from suites._common.mcp_servers import finance
from suites.mcp_universe.data.domains import NotSolvable
from suites.mcp_universe.data.domains import financial_analysis as fa
from suites.mcp_universe.scorer.evaluator import OPS, EvalContext, EvaluatorSpecError, evaluate
from suites.mcp_universe.scorer.ops import yfinance as yf
from tests.suites.mcp_universe import upstream

FILES = upstream.task_files("financial_analysis")
needs_upstream = upstream.needs_upstream("financial_analysis")
SEED = 42
CTX = EvalContext(seed=SEED)

UPSTREAM_OPS = {
    "check_buy_sell_hold_signal",
    "check_dividend_consistency_task_output",
    "check_highest_iv_otm_call_task_output",
    "check_holders_largest_pct_change",
    "check_holders_pct_change",
    "check_holders_with_min_pct_held",
    "check_institutional_holding_values",
    "check_net_income",
    "check_net_income_difference",
    "check_net_income_growth_task_output",
    "check_net_profit_margin",
    "check_pct_values_with_durations",
    "check_percentage_change",
    "check_portfolio_task_output",
    "check_quant_investment_task_output",
    "check_rd_expense_percentage",
    "compare_companies_net_profit_margin",
    "compare_companies_rd_expense_percentage",
}
"""The 18 ops upstream's financial_analysis task files use."""
EXTRA_OPS = {
    "check_gross_profit_margin",
    "compare_companies_gross_profit_margin",
    "check_rd_expense",
    "check_total_revenue",
    "check_operating_income",
    "check_largest_positive_increase",
    "check_common_significant_holders",
}
"""The other 7 upstream registers (25 in all)."""


def _run(task: dict[str, Any], answer: str) -> list[Any]:
    return [evaluate(e, answer, CTX, i) for i, e in enumerate(task["evaluators"])]


def _check_reference(task: dict[str, Any], ref: dict[str, Any]) -> None:
    results = _run(task, ref["answer"])
    assert [(r.index, r.reason) for r in results if not r.passed] == []
    mistake = ref["mistake"]
    wrong = _run(task, mistake["answer"])
    assert [r.index for r in wrong if not r.passed] == mistake["fails"] == [0]
    assert mistake["reason"] in wrong[0].reason
    assert json.loads(mistake["answer"]) != json.loads(ref["answer"])


# -- the op registry ---------------------------------------------------------------------------


def test_all_25_upstream_ops_are_registered_as_dynamic():
    names = {n.removeprefix("yfinance.") for n in OPS if n.startswith("yfinance.")}
    assert names == UPSTREAM_OPS | EXTRA_OPS and len(names) == 25
    assert {OPS[f"yfinance.{n}"].kind for n in names} == {"dynamic"}
    assert set(fa.HANDLERS) == {f"yfinance.{n}" for n in names}


@needs_upstream
def test_upstream_files_use_exactly_the_18_ops():
    used = {e["op"].removeprefix("yfinance.") for f in FILES for e in json.loads(f.read_text())["evaluators"]}
    assert used == UPSTREAM_OPS


# -- upstream task files ------------------------------------------------------------------------


@needs_upstream
@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_upstream_task_file_is_solved_and_its_mistake_fails_evaluator_0(path):
    task = json.loads(path.read_text())
    ref = fa.solve(task, SEED)
    _check_reference(task, ref)
    assert set(json.loads(ref["answer"])) == set(task["output_format"])  # the task's own keys
    assert {c["server"] for c in ref["calls"]} <= set(fa.SERVERS)


@needs_upstream
def test_every_date_of_the_upstream_files_has_prices():
    """Every date an upstream op reads has a close on or before it, and the signal window of
    100 calendar days holds enough trading days for the 50-day average."""
    for path in FILES:
        for ev in json.loads(path.read_text())["evaluators"]:
            a = ev["op_args"]
            for key in ("start_date", "end_date", "date"):
                if key in a:
                    for t in a.get("tickers") or [a["ticker"]]:
                        found = finance.close_on_or_before(yf.company(SEED, t), date.fromisoformat(a[key]))
                        assert found is not None and (date.fromisoformat(a[key]) - found[0]).days <= 4, (
                            path,
                            t,
                        )
            if "quant_strategy" in a:
                assert len(yf.signal_closes(SEED, a["ticker"], a["date"])) >= 60


# -- generated tasks ------------------------------------------------------------------------------


def test_generated_tasks_are_solved_and_cover_every_op():
    tasks = fa.generate_tasks(SEED, 40)
    assert [t["id"] for t in tasks[:2]] == ["financial_analysis-001", "financial_analysis-002"]
    for task in tasks:
        assert (
            task["mcp_servers"] == [{"name": "yfinance"}, {"name": "calculator"}] and task["cleanups"] == []
        )
        _check_reference(task, task["reference"])
        assert task["reference"] == fa.solve(task, SEED)
    ops = {e["op"] for t in tasks[:20] for e in t["evaluators"]}
    assert ops == set(fa.HANDLERS)  # the quick profile's 20 use all 25 ops
    signals = [json.loads(t["reference"]["answer"]) for t in tasks if "signal" in t["evaluators"][0]["op"]]
    assert {s["check_buy_sell_hold_signal"] for s in signals} - {"hold"}  # not all "hold"


def test_generated_tasks_are_deterministic_and_count_is_a_prefix():
    a, b = fa.generate_tasks(SEED, 40), fa.generate_tasks(SEED, 20)
    assert a[:20] == b and a == fa.generate_tasks(SEED, 40)
    assert [t["question"] for t in fa.generate_tasks(SEED + 1, 20)] != [t["question"] for t in b]
    with pytest.raises(ValueError, match="count must be 0..40, got 41"):
        fa.generate_tasks(SEED, 41)


def test_solver_refuses_an_op_it_has_no_step_for():
    task = {"evaluators": [{"func": "json", "op": "google_maps.check_route", "op_args": {}}]}
    with pytest.raises(NotSolvable, match="no solver step for op 'google_maps.check_route'"):
        fa.solve(task, SEED)


# -- ops on hand-made answers: just inside passes, just outside fails, a missing key fails ---------


def _reference(op: str, **op_args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    ev = {"func": "json", "op": f"yfinance.{op}", "op_args": op_args}
    task = {"evaluators": [ev]}
    return ev, json.loads(fa.solve(task, SEED)["answer"])


def _outcome(ev: dict[str, Any], answer: dict[str, Any]) -> tuple[bool, str]:
    r = evaluate(ev, json.dumps(answer), CTX)
    return r.passed, r.reason


def _at(answer: dict[str, Any], path: tuple[Any, ...]) -> tuple[dict[str, Any], Any]:
    node = answer
    for key in path[:-1]:
        node = node[key]
    return node, path[-1]


NUMERIC = [
    (
        "check_portfolio_task_output",
        {
            "tickers": ["MSFT", "AAPL"],
            "start_date": "2023-01-09",
            "end_date": "2025-01-08",
            "initial_investment": 25000.0,
            "split": [0.5, 0.5],
        },
        ("total value",),
        0.5,
        "total value: expected",
    ),
    (
        "check_portfolio_task_output",
        {
            "tickers": ["MSFT"],
            "start_date": "2023-01-09",
            "end_date": "2025-01-08",
            "initial_investment": 25000.0,
            "split": [1.0],
        },
        ("total percentage return",),
        0.05,
        "total percentage return",
    ),
    (
        "check_quant_investment_task_output",
        {"ticker": "CRM", "start_date": "2024-05-30", "end_date": "2024-05-31", "initial_investment": 6000.0},
        ("earn",),
        0.5,
        "earn: expected",
    ),
    (
        "check_gross_profit_margin",
        {"ticker": "NVDA"},
        ("NVDA", "gross profit margin"),
        0.05,
        "NVDA gross profit margin (%)",
    ),
    (
        "check_net_profit_margin",
        {"ticker": "AAPL"},
        ("AAPL", "net profit margin"),
        0.05,
        "AAPL net profit margin",
    ),
    (
        "check_rd_expense_percentage",
        {"ticker": "AMD"},
        ("AMD", "R&D expense percentage"),
        0.05,
        "AMD R&D expense share",
    ),
    ("check_rd_expense", {"ticker": "AMD"}, ("AMD", "R&D expense"), 0.05, "AMD R&D expense: expected"),
    ("check_total_revenue", {"ticker": "KO"}, ("KO", "total revenue"), 0.05, "KO total revenue"),
    ("check_operating_income", {"ticker": "KO"}, ("KO", "operating income"), 0.05, "KO operating income"),
    (
        "check_net_income",
        {"ticker": "MSFT", "period": "quarterly"},
        ("MSFT", "net income common stockholders quarterly"),
        0.05,
        "MSFT quarterly net income",
    ),
    (
        "check_net_income_difference",
        {"ticker": "MSFT", "periods": ["annually", "quarterly"]},
        ("MSFT", "difference"),
        0.05,
        "MSFT net income difference",
    ),
    (
        "check_holders_pct_change",
        {"ticker": "GOOGL", "holder": "Vanguard Group"},
        ("GOOGL", "Vanguard Group pctChange"),
        0.00015,
        "GOOGL Vanguard Group pctChange",
    ),
    (
        "check_largest_positive_increase",
        {"tickers": ["MSFT", "AAPL", "GOOGL"]},
        ("AAPL", "pctChange"),
        0.00015,
        "AAPL Blackrock Inc. pctChange",
    ),
    (
        "check_pct_values_with_durations",
        {"ticker": "META"},
        ("30-day percentage change",),
        0.055,
        "30-day percentage change: expected",
    ),
    (
        "check_highest_iv_otm_call_task_output",
        {"ticker": "CRM"},
        ("implied_volatility",),
        0.001,
        "implied_volatility: expected",
    ),
    ("check_highest_iv_otm_call_task_output", {"ticker": "CRM"}, ("ask",), 0.001, "ask: expected"),
]


@pytest.mark.parametrize(
    ("op", "op_args", "path", "tol", "reason"), NUMERIC, ids=[f"{n[0]}-{n[2][-1]}" for n in NUMERIC]
)
def test_numeric_op_tolerance_edges_and_missing_key(op, op_args, path, tol, reason):
    ev, answer = _reference(op, **op_args)
    assert _outcome(ev, answer) == (True, "")
    node, key = _at(answer, path)
    truth = float(node[key])
    for sign in (1, -1):
        node[key] = truth + sign * tol * 0.9
        assert _outcome(ev, answer) == (True, ""), sign
        node[key] = truth + sign * tol * 1.1
        passed, why = _outcome(ev, answer)
        assert not passed and reason in why, why
    node[key] = str(truth)  # a numeric string is a number, as upstream's float()
    assert _outcome(ev, answer) == (True, "")
    del node[key]
    passed, why = _outcome(ev, answer)
    assert (
        not passed
        and why
        == f"Execution error: {'the answer' if len(path) == 1 else f'answer[{path[0]!r}]'} has no key {key!r}"
    )


RELATIVE = [
    (
        "check_percentage_change",
        {"ticker": "AAPL", "minPctChange": 0.02},
        ("aggregate market value",),
        0.001,
        1000,
    ),
    (
        "check_percentage_change",
        {"ticker": "AAPL", "minPctChange": 0.02},
        ("institutional holders", 0, "value"),
        0.001,
        1000,
    ),
    (
        "check_institutional_holding_values",
        {"ticker": "CAT", "holder": "State Street Corporation"},
        ("originally reported value",),
        0.0005,
        1.0,
    ),
    (
        "check_institutional_holding_values",
        {"ticker": "JNJ", "holder": "Blackrock Inc."},
        ("calculated market value",),
        0.001,
        0.015,
    ),
    (
        "check_institutional_holding_values",
        {"ticker": "JNJ", "holder": "Blackrock Inc."},
        ("absolute difference",),
        0.001,
        0.015,
    ),
]


@pytest.mark.parametrize(
    ("op", "op_args", "path", "rel", "floor"), RELATIVE, ids=[f"{r[0]}-{r[2][-1]}" for r in RELATIVE]
)
def test_relative_tolerance_edges(op, op_args, path, rel, floor):
    ev, answer = _reference(op, **op_args)
    node, key = _at(answer, path)
    truth = float(node[key])
    tol = max(abs(truth) * rel, floor)
    node[key] = truth + tol * 0.9
    assert _outcome(ev, answer) == (True, "")
    node[key] = truth + tol * 1.1
    passed, why = _outcome(ev, answer)
    assert not passed and ("expected about" in why), why


def test_categorical_ops_fail_on_a_wrong_choice_with_their_reason():
    cases = [
        (
            "compare_companies_net_profit_margin",
            {"tickers": ["GOOGL", "MSFT", "AAPL"]},
            "company with highest net profit margin",
        ),
        (
            "compare_companies_rd_expense_percentage",
            {"tickers": ["INTC", "AMD"]},
            "company with higher R&D expense percentage",
        ),
        (
            "compare_companies_gross_profit_margin",
            {"tickers": ["INTC", "AMD"]},
            "company with higher gross profit margin",
        ),
        (
            "check_holders_largest_pct_change",
            {"tickers": ["MSFT", "AAPL", "GOOGL"], "holder": "Blackrock Inc."},
            "company with largest positive increase in Blackrock Inc.'s reported stake",
        ),
    ]
    for op, op_args, key in cases:
        ev, answer = _reference(op, **op_args)
        truth = answer[key]
        answer[key] = next(t for t in op_args["tickers"] if t != truth)
        assert _outcome(ev, answer) == (False, f"{key}: expected {truth}, got {answer[key]!r}")
        del answer[key]
        assert _outcome(ev, answer) == (False, f"Execution error: the answer has no key {key!r}")


def test_signal_needs_exactly_one_word_and_unknown_strategy_is_a_task_error():
    strategy = {"name": "price_breakout", "params": {"breakout_period": 20, "sell_threshold": 0.97}}
    ev, answer = _reference(
        "check_buy_sell_hold_signal", ticker="XOM", date="2023-12-01", quant_strategy=strategy
    )
    truth = answer["check_buy_sell_hold_signal"]
    assert _outcome(ev, {"check_buy_sell_hold_signal": f"The signal is {truth.upper()}."}) == (True, "")
    passed, why = _outcome(ev, {"check_buy_sell_hold_signal": "buy/sell/hold"})
    assert (
        not passed and why == f"signal: the answer names several signals ('buy/sell/hold'); expected {truth}"
    )
    bad = copy.deepcopy(ev)
    bad["op_args"]["quant_strategy"] = {"name": "astrology", "params": {}}
    with pytest.raises(EvaluatorSpecError, match="unknown quant_strategy 'astrology'"):
        evaluate(bad, json.dumps(answer), CTX)


def test_signal_rules_on_hand_made_closes():
    """Each strategy on a hand-made series (values worked out by hand)."""
    flat = [100.0] * 60
    assert yf._bollinger([*flat[:-1], 90.0]) == "buy"  # far below a band of width ~2×2×2.2
    assert yf._bollinger([*flat[:-1], 100.0]) == "hold"  # zero deviation: neither strictly outside
    assert yf._roc([100.0] * 12 + [79.0]) == "buy"  # -21 % over 12 days
    assert yf._roc([100.0] * 12 + [121.0]) == "sell"
    assert yf._breakout([*flat[:25], 101.0]) == "buy" and yf._breakout([*flat[:25], 96.9]) == "sell"
    assert yf._distance([*flat[:19], 80.0]) == "buy"  # 80 vs mean 99: -19 %
    rising = [100.0] * 50 + [90.0] * 9 + [200.0]  # short average jumps over the long one on the last day
    assert yf._crossover(rising) == "buy" and yf._crossover(rising[:-1]) == "hold"


def test_screens_require_distinct_known_tickers():
    ev, answer = _reference("check_dividend_consistency_task_output", num_tickers=2, min_years=5)
    first = answer["tickers"][0]
    assert _outcome(ev, {"tickers": [first, first.lower()]}) == (
        False,
        f"Execution error: answer['tickers'] repeats a ticker: {[first, first.lower()]!r}",
    )
    assert _outcome(ev, {"tickers": "KO"}) == (
        False,
        "Execution error: answer['tickers'] is not a list: 'KO'",
    )
    assert _outcome(ev, {"tickers": [first]}) == (
        False,
        "Execution error: answer['tickers'] names 1 tickers, the task asks for 2",
    )
    assert _outcome(ev, {"tickers": [first, "$$$"]}) == (
        False,
        "dividend consistency over 5 years: '$$$' is not a ticker the market data knows",
    )


def test_holder_lists_missing_and_extra_names():
    ev, answer = _reference(
        "check_holders_with_min_pct_held", tickers=["MSFT", "AAPL", "AMZN"], min_pct_held=0.05
    )
    common = answer["companies"]
    assert common and _outcome(ev, {"companies": [n.upper() for n in common]}) == (True, "")
    assert _outcome(ev, {"companies": common + ["Morgan Stanley"]}) == (
        False,
        "institutions not holding more than 0.05 of every company: ['morgan stanley']",
    )
    assert (
        _outcome(ev, {"companies": common[1:]})[1]
        == f"institutions missing from the answer: {[common[0].lower()]}"
    )


def test_non_trading_day_takes_the_last_close_before():
    msft = yf.company(SEED, "MSFT")
    friday = finance.close_on_or_before(msft, date(2024, 3, 15))
    assert friday is not None and friday[0] == date(2024, 3, 15)
    assert finance.close_on_or_before(msft, date(2024, 3, 17)) == friday  # Sunday
    good_friday = finance.close_on_or_before(msft, date(2024, 3, 29))  # NYSE closed
    assert good_friday is not None and good_friday[0] == date(2024, 3, 28)
    assert finance.close_on_or_before(msft, date(2013, 12, 31)) is None
    value, pct = yf.portfolio_return(SEED, ["MSFT"], "2024-03-16", "2024-03-29", 1000.0, [1.0])
    assert value == round(1000.0 / friday[1] * good_friday[1], 2)
    assert pct == round((1000.0 / friday[1] * good_friday[1] - 1000.0) / 10, 2)
    with pytest.raises(EvaluatorSpecError, match="no MSFT price on or before 2013-12-31"):
        yf.portfolio_return(SEED, ["MSFT"], "2013-12-31", "2024-03-29", 1000.0, [1.0])
    with pytest.raises(EvaluatorSpecError, match="split must sum to 1.0"):
        yf.portfolio_return(SEED, ["MSFT", "AAPL"], "2024-03-15", "2024-03-29", 1000.0, [0.5, 0.6])


def test_holder_matching_rule():
    rows = [
        {"Holder": "Vanguard Group Inc"},
        {"Holder": "Blackrock Inc."},
        {"Holder": "State Street Corporation"},
    ]
    assert yf.find_holder(rows, "BLACKROCK INC.") is rows[1]  # exact, any case
    assert yf.find_holder(rows, "The Vanguard Group, Inc.") is rows[0]  # without "the", punctuation, "inc"
    assert yf.find_holder(rows, "State Street Corp") is rows[2]
    assert yf.find_holder(rows, "Vanguard Fiduciary Trust") is rows[0]  # core word
    assert yf.find_holder(rows, "Morgan Stanley") is None


def test_truth_follows_the_seed():
    a = yf.financial_data(SEED, "AAPL")
    assert a == yf.financial_data(SEED, "AAPL") and a != yf.financial_data(SEED + 1, "AAPL")
    assert yf.trading_signal(SEED, "XOM", "2023-12-01", {"name": "roc_reversal", "params": {}}) in {
        "buy",
        "sell",
        "hold",
    }
    start = date(2024, 1, 2)
    assert yf.portfolio_return(SEED, ["NVDA"], str(start), str(start + timedelta(days=30)), 1.0, [1.0]) != (
        yf.portfolio_return(SEED + 1, ["NVDA"], str(start), str(start + timedelta(days=30)), 1.0, [1.0])
    )


def test_the_evaluator_keeps_only_the_most_recently_used_generated_companies():
    """Each generated company is a row per trading day since 2014; the evaluator's world keeps
    the last OPEN_COMPANIES_KEPT of them, and one named again after it was let go is generated
    the same."""
    seed = 424242
    fixed = set(yf.world(seed)["tickers"])
    first = yf.company(seed, "zqa")
    first_rows = [dict(row) for row in first["prices"]]
    symbols = [f"ZQ{c}" for c in "BCDEFGHIJK"]  # ten more generated companies
    for symbol in symbols:
        yf.company(seed, symbol)
    yf.company(seed, symbols[0])  # used again: now the most recent
    generated = [s for s in yf.world(seed)["tickers"] if s not in fixed]
    assert generated == [*symbols[3:], symbols[0]]
    assert len(generated) == yf.OPEN_COMPANIES_KEPT == 8
    again = yf.company(seed, "ZQA")
    assert again is not first and again["prices"] == first_rows
    assert again == finance._open_company(seed, "ZQA")
    assert set(yf.world(seed)["tickers"]) >= fixed  # the fixed companies always stay
