"""MCP-Universe's financial_analysis domain: generated tasks and the reference solver.

Tasks are in upstream's task-file format and use upstream's ``yfinance.*`` ops (all 25 across
the generated list); the wording is ours. Tickers are real symbols served by the open-world
finance server (``yfinance`` = :mod:`suites._common.mcp_servers.finance` with
``--open-world``), whose every figure is generated from the seed: an agent must read the tools,
never its memory.

:func:`solve` answers generated tasks and upstream's task files alike, from the same world the
ops read (:mod:`suites.mcp_universe.scorer.ops.yfinance`): the tool calls a correct agent makes, the
answer in the task's ``output_format`` and a one-field mistake. Non-trading-day rule (as the
ops): a price on a date is the last close on or before it. One limitation of running upstream's
files on local data: the quant-trade check (``check_quant_investment_task_output``) takes the
buy date from its op_args as written, so the solver answers that date even when another of
the offered days gains more in the local world; generated tasks pick the date that gains most.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from suites._common.mcp_servers import finance
from suites._common.mcp_servers._base import TODAY
from suites.mcp_universe.data.domains import NotSolvable
from suites.mcp_universe.scorer.evaluator import EvaluatorSpecError
from suites.mcp_universe.scorer.ops import yfinance as yf

__all__ = ["DOMAIN", "SERVERS", "SCREEN_POOL", "generate_tasks", "solve"]

DOMAIN = "financial_analysis"
SERVERS = ("yfinance", "calculator")

SCREEN_POOL = tuple(finance.KNOWN_COMPANIES)
"""Well-known symbols, in order: the generated tasks' tickers and the candidates the solver
checks for screens (dividend payers, rising net income)."""

TASK_COUNT = 40
_DATE_RULE = "If the market was closed on a date, use the last closing price before it."

Perturb = tuple[Callable[[dict[str, Any]], None], str]
"""(change the answer in place, a phrase the failing evaluator's reason contains)."""


# ---------------------------------------------------------------------------------------------
# Solver
# ---------------------------------------------------------------------------------------------


class _Work:
    """The answer and the tool calls being built for one task."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.answer: dict[str, Any] = {}
        self.calls: list[dict[str, Any]] = []

    def call(self, tool: str, server: str = "yfinance", **arguments: Any) -> None:
        step = {"server": server, "tool": tool, "arguments": arguments}
        if step not in self.calls:
            self.calls.append(step)

    def history(self, ticker: str, start: date, end: date) -> None:
        end = min(end, TODAY + timedelta(days=1))
        self.call(
            "get_historical_stock_prices",
            ticker=ticker,
            start_date=start.isoformat(),
            end_date=end.isoformat(),
        )

    def block(self, ticker: str) -> dict[str, Any]:
        return self.answer.setdefault(ticker, {})


def _d(text: str) -> date:
    return date.fromisoformat(text)


def _bump(path: tuple[str, ...], delta: float) -> Callable[[dict[str, Any]], None]:
    def change(answer: dict[str, Any]) -> None:
        node = answer
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = round(float(node[path[-1]]) + delta, 6)

    return change


def _set(path: tuple[str, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(answer: dict[str, Any]) -> None:
        node = answer
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _other(options: list[str], not_this: str) -> str:
    return next(o for o in options if o != not_this)


def _portfolio(w: _Work, a: dict[str, Any]) -> Perturb:
    tickers, split = a["tickers"], [float(s) for s in a["split"]]
    investment = float(a["initial_investment"])
    start, end = _d(a["start_date"]), _d(a["end_date"])
    terms = []
    for t, weight in zip(tickers, split, strict=True):
        w.history(t, start - timedelta(days=7), end + timedelta(days=1))
        p0 = finance.close_on_or_before(yf.company(w.seed, t), start)
        p1 = finance.close_on_or_before(yf.company(w.seed, t), end)
        if p0 is None or p1 is None:  # before the local history: the evaluator cannot run either
            raise EvaluatorSpecError(
                f"no {t} price on or before {start} / {end} (the local history starts {finance.OPEN_START})"
            )
        terms.append(f"{investment * weight!r} / {p0[1]} * {p1[1]}")
    w.call("calculate", server="calculator", expression=" + ".join(terms))
    value, pct = yf.portfolio_return(w.seed, tickers, a["start_date"], a["end_date"], investment, split)
    w.answer["total value"], w.answer["total percentage return"] = value, pct
    return _bump(("total value",), 1.0), "total value: expected"


def _quant(w: _Work, a: dict[str, Any]) -> Perturb:
    start, end = _d(a["start_date"]), _d(a["end_date"])
    w.history(a["ticker"], start - timedelta(days=7), end + timedelta(days=1))
    investment = float(a["initial_investment"])
    final, _ = yf.portfolio_return(w.seed, [a["ticker"]], a["start_date"], a["end_date"], investment, [1.0])
    w.answer["date"], w.answer["earn"] = a["start_date"], round(final - investment, 2)
    return _bump(("earn",), 1.0), "earn: expected"


def _signal(w: _Work, a: dict[str, Any]) -> Perturb:
    day = _d(a["date"])
    w.history(a["ticker"], day - timedelta(days=99), day + timedelta(days=1))
    truth = yf.trading_signal(w.seed, a["ticker"], a["date"], a["quant_strategy"])
    w.answer["check_buy_sell_hold_signal"] = truth
    return _set(("check_buy_sell_hold_signal",), _other(["buy", "sell", "hold"], truth)), "signal: expected"


def _income(w: _Work, ticker: str, period: str = "annually") -> None:
    kind = "income_stmt" if period == "annually" else "quarterly_income_stmt"
    w.call("get_financial_statement", ticker=ticker, financial_type=kind)


def _figure(key: str, truth: Callable[[int, str], float]) -> Callable[[_Work, dict[str, Any]], Perturb]:
    def handler(w: _Work, a: dict[str, Any]) -> Perturb:
        t = a["ticker"]
        _income(w, t)
        w.block(t)[key] = round(truth(w.seed, t), 6)
        return _bump((t, key), 1.0), f"{t} "

    return handler


def _compare(key: str, per_key: str, top: str) -> Callable[[_Work, dict[str, Any]], Perturb]:
    def handler(w: _Work, a: dict[str, Any]) -> Perturb:
        ratios = {}
        for t in a["tickers"]:
            _income(w, t)
            ratios[t] = yf.ratio(w.seed, t, top)
            w.block(t).setdefault(per_key, round(ratios[t] * 100, 6))
        best = max(ratios, key=ratios.__getitem__)
        w.answer[key] = best
        return _set((key,), _other(list(a["tickers"]), best)), f"{key}: expected"

    return handler


def _net_income(w: _Work, a: dict[str, Any]) -> Perturb:
    t, period = a["ticker"], a["period"]
    _income(w, t, period)
    key = f"net income common stockholders {period}"
    w.block(t)[key] = yf.financial_data(w.seed, t, period)["net income"]
    return _bump((t, key), 1.0), f"{t} {period} net income"


def _net_income_difference(w: _Work, a: dict[str, Any]) -> Perturb:
    t = a["ticker"]
    values = []
    for period in a["periods"]:
        _income(w, t, period)
        values.append(yf.financial_data(w.seed, t, period)["net income"])
    w.block(t)["difference"] = abs(values[0] - values[1])
    return _bump((t, "difference"), 1.0), f"{t} net income difference"


def _holders_call(w: _Work, ticker: str) -> None:
    w.call("get_holder_info", ticker=ticker, holder_type="institutional_holders")


def _percentage_change(w: _Work, a: dict[str, Any]) -> Perturb:
    _holders_call(w, a["ticker"])
    truth = yf.filtered_institutional_holders(w.seed, a["ticker"], float(a["minPctChange"]))
    w.answer.update(truth)
    return _bump(
        ("aggregate market value",), 2000.0 + truth["aggregate market value"] * 0.01
    ), "aggregate market value"


def _largest_positive(w: _Work, a: dict[str, Any]) -> Perturb:
    holder = a.get("holder", "Blackrock Inc.")
    changes = {}
    for t in a["tickers"]:
        _holders_call(w, t)
        changes[t] = yf.holder_pct_change(w.seed, t, holder)
        w.block(t)["pctChange"] = changes[t]
    positive = {t: c for t, c in changes.items() if c > 0}
    if not positive:
        raise NotSolvable(f"no positive change of {holder}'s stake in {a['tickers']}")
    w.answer["company with largest positive increase"] = max(positive, key=positive.__getitem__)
    first = a["tickers"][0]
    return _bump((first, "pctChange"), 0.001), f"{first} {holder} pctChange"


def _significant(key: str, threshold_arg: str) -> Callable[[_Work, dict[str, Any]], Perturb]:
    def handler(w: _Work, a: dict[str, Any]) -> Perturb:
        threshold = float(a[threshold_arg])
        sets = []
        for t in a["tickers"]:
            _holders_call(w, t)
            rows = yf.company(w.seed, t)["holders"]["institutional_holders"]
            sets.append({h["Holder"] for h in rows if h["pctHeld"] > threshold})
        common = sorted(set.intersection(*sets))
        w.answer[key] = common
        if common:
            return _set((key,), common[1:]), "missing" if key == "companies" else "expected"
        extra = sorted(set.union(*sets) or {"Morgan Stanley"})[0]
        return _set((key,), [extra]), "not holding" if key == "companies" else "expected"

    return handler


def _holder_pct(w: _Work, a: dict[str, Any]) -> Perturb:
    t, holder = a["ticker"], a["holder"]
    _holders_call(w, t)
    key = f"{holder} pctChange"
    w.block(t)[key] = yf.holder_pct_change(w.seed, t, holder)
    return _bump((t, key), 0.001), f"{t} {holder} pctChange"


def _holder_largest(w: _Work, a: dict[str, Any]) -> Perturb:
    holder = a["holder"]
    changes = []
    for t in a["tickers"]:
        _holders_call(w, t)
        changes.append((t, yf.holder_pct_change(w.seed, t, holder)))
    best = sorted(changes, key=lambda item: item[1])[-1][0]
    key = f"company with largest positive increase in {holder}'s reported stake"
    w.answer[key] = best
    return _set((key,), _other(list(a["tickers"]), best)), f"{key}: expected"


def _durations(w: _Work, a: dict[str, Any]) -> Perturb:
    t = a["ticker"]
    _holders_call(w, t)
    d0 = yf.latest_report_date(w.seed, t)
    w.history(t, d0 - timedelta(days=10), d0 + timedelta(days=40))
    w.answer.update(yf.price_changes_after_report(w.seed, t))
    return _bump(("7-day percentage change",), 0.5), "7-day percentage change: expected"


def _holding_values(w: _Work, a: dict[str, Any]) -> Perturb:
    t = a["ticker"]
    _holders_call(w, t)
    truth = yf.holding_values(w.seed, t, a["holder"])
    d0 = yf.latest_report_date(w.seed, t, a["holder"])
    w.history(t, d0 - timedelta(days=10), d0 + timedelta(days=1))
    w.answer.update(truth)
    return _bump(
        ("calculated market value",), truth["calculated market value"] * 0.01 + 1
    ), "calculated market value"


def _screen(
    check: Callable[[int, str, int], tuple[bool, str]], tool: Callable[[_Work, str], None], arg: str
) -> Callable[[_Work, dict[str, Any]], Perturb]:
    def handler(w: _Work, a: dict[str, Any]) -> Perturb:
        need, n = int(a["num_tickers"]), int(a[arg])
        found, failing = [], None
        for t in SCREEN_POOL:
            tool(w, t)
            if check(w.seed, t, n)[0]:
                found.append(t)
            elif failing is None:
                failing = t
            if len(found) == need and failing is not None:
                break
        if len(found) < need or failing is None:
            raise NotSolvable(f"fewer than {need} of the screened tickers pass ({found})")
        w.answer["tickers"] = found
        wrong = [failing, *found[1:]]
        return _set(("tickers",), wrong), f"{failing}"

    return handler


def _options(w: _Work, a: dict[str, Any]) -> Perturb:
    t = a["ticker"]
    w.call("get_option_expiration_dates", ticker=t)
    w.call("get_stock_info", ticker=t)
    expiry = yf.nearest_expiry(w.seed, t)
    w.call("get_option_chain", ticker=t, expiration_date=expiry, option_type="calls")
    w.answer.update({"ticker": t, "expiration": expiry, **yf.highest_iv_otm_call(w.seed, t, expiry)})
    return _bump(("bid",), 0.01), "bid: expected"


HANDLERS: dict[str, Callable[[_Work, dict[str, Any]], Perturb]] = {
    "yfinance.check_portfolio_task_output": _portfolio,
    "yfinance.check_quant_investment_task_output": _quant,
    "yfinance.check_buy_sell_hold_signal": _signal,
    "yfinance.check_gross_profit_margin": _figure(
        "gross profit margin", lambda s, t: yf.ratio(s, t, "gross profit") * 100
    ),
    "yfinance.check_net_profit_margin": _figure(
        "net profit margin", lambda s, t: yf.ratio(s, t, "net income") * 100
    ),
    "yfinance.check_rd_expense_percentage": _figure(
        "R&D expense percentage", lambda s, t: yf.ratio(s, t, "rd expense") * 100
    ),
    "yfinance.check_rd_expense": _figure("R&D expense", lambda s, t: yf.financial_data(s, t)["rd expense"]),
    "yfinance.check_total_revenue": _figure(
        "total revenue", lambda s, t: yf.financial_data(s, t)["total revenue"]
    ),
    "yfinance.check_operating_income": _figure(
        "operating income", lambda s, t: yf.financial_data(s, t)["operating income"]
    ),
    "yfinance.compare_companies_gross_profit_margin": _compare(
        "company with higher gross profit margin", "gross profit margin", "gross profit"
    ),
    "yfinance.compare_companies_net_profit_margin": _compare(
        "company with highest net profit margin", "net profit margin", "net income"
    ),
    "yfinance.compare_companies_rd_expense_percentage": _compare(
        "company with higher R&D expense percentage", "R&D expense percentage", "rd expense"
    ),
    "yfinance.check_net_income": _net_income,
    "yfinance.check_net_income_difference": _net_income_difference,
    "yfinance.check_percentage_change": _percentage_change,
    "yfinance.check_largest_positive_increase": _largest_positive,
    "yfinance.check_holders_with_min_pct_held": _significant("companies", "min_pct_held"),
    "yfinance.check_common_significant_holders": _significant("holders", "threshold_pct_held"),
    "yfinance.check_holders_pct_change": _holder_pct,
    "yfinance.check_holders_largest_pct_change": _holder_largest,
    "yfinance.check_pct_values_with_durations": _durations,
    "yfinance.check_institutional_holding_values": _holding_values,
    "yfinance.check_net_income_growth_task_output": _screen(
        yf.net_income_growth,
        lambda w, t: w.call("get_financial_statement", ticker=t, financial_type="quarterly_income_stmt"),
        "num_quarters",
    ),
    "yfinance.check_dividend_consistency_task_output": _screen(
        yf.dividend_consistency, lambda w, t: w.call("get_stock_actions", ticker=t), "min_years"
    ),
    "yfinance.check_highest_iv_otm_call_task_output": _options,
}
"""Op → the solver's step for one evaluator (fills the answer, adds the calls, returns the
mistake that makes that evaluator fail)."""


def solve(task: dict[str, Any], seed: int) -> dict[str, Any]:
    """The reference of a financial_analysis task (generated or an upstream file).

    Returns:
        ``{"calls", "answer", "mistake": {"calls", "answer", "fails", "reason"}}`` (contract of
        :mod:`suites.mcp_universe.data.domains`); ``mistake`` changes one field read by the first
        evaluator, which alone fails (index 0), its reason containing ``reason``.

    Raises:
        NotSolvable: an op without a solver step, or data that cannot answer the task.
    """
    from suites.mcp_universe.scorer.evaluator import render

    w = _Work(seed)
    perturbs: list[Perturb] = []
    for evaluator in task["evaluators"]:
        op = evaluator.get("op") or ""
        if op not in HANDLERS:
            raise NotSolvable(f"no solver step for op {op!r}")
        perturbs.append(HANDLERS[op](w, render(evaluator.get("op_args") or {}, {})))
    wrong = copy.deepcopy(w.answer)
    change, reason = perturbs[0]
    change(wrong)
    return {
        "calls": w.calls,
        "answer": json.dumps(w.answer),
        "mistake": {"calls": list(w.calls), "answer": json.dumps(wrong), "fails": [0], "reason": reason},
    }


# ---------------------------------------------------------------------------------------------
# Generated tasks
# ---------------------------------------------------------------------------------------------


def _ev(op: str, desc: str, **op_args: Any) -> dict[str, Any]:
    return {"func": "json", "op": f"yfinance.{op}", "op_args": op_args, "desc": desc}


def _trading(seed: int, ticker: str) -> list[date]:
    return [date.fromisoformat(p["Date"][:10]) for p in yf.company(seed, ticker)["prices"]]


def _t_portfolio(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    n = r.choice([1, 2, 3])
    tickers = r.sample(SCREEN_POOL, n)
    start = date(r.randint(2016, 2023), r.randint(1, 12), r.randint(1, 28))
    end = start + timedelta(days=r.randint(60, 700))
    amount = float(r.choice([5000, 10000, 20000, 30000, 50000]))
    split = [1 / n] * n
    names = ", ".join(tickers)
    q = (
        f"Suppose ${amount:,.0f} was put into {names} on {start}, split equally between them, and held until "
        f"the close on {end}. What would the holding be worth then, and what is the total return in "
        f"percent? Buy and value at daily closing prices. {_DATE_RULE}"
    )
    fmt = {"total value": "[NUMBER]", "total percentage return": "[NUMBER]"}
    ev = _ev(
        "check_portfolio_task_output",
        "final value and total percentage return",
        tickers=tickers,
        start_date=start.isoformat(),
        end_date=end.isoformat(),
        initial_investment=amount,
        split=split,
    )
    return q, fmt, [ev]


def _t_compare(op: str, compare_op: str, key: str, company_key: str, label: str) -> Callable[..., Any]:
    def make(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
        tickers = r.sample(SCREEN_POOL, r.choice([2, 3]))
        names = " and ".join(tickers)
        q = (
            f"From the latest annual income statements of {names}, compute each company's {label} "
            f"in percent and say which company's is the highest."
        )
        fmt: dict[str, Any] = {t: {key: "[NUMBER]"} for t in tickers}
        fmt[company_key] = " or ".join(tickers)
        evs = [_ev(op, f"{label} of {t}", ticker=t) for t in tickers]
        evs.append(_ev(compare_op, f"which company has the highest {label}", tickers=tickers))
        return q, fmt, evs

    return make


def _t_figures(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    q = (
        f"Report {t}'s total revenue, operating income and research and development expense from "
        "its most recent annual income statement, as exact figures."
    )
    fmt = {t: {"total revenue": "[NUMBER]", "operating income": "[NUMBER]", "R&D expense": "[NUMBER]"}}
    evs = [
        _ev("check_total_revenue", "total revenue", ticker=t),
        _ev("check_operating_income", "operating income", ticker=t),
        _ev("check_rd_expense", "R&D expense", ticker=t),
    ]
    return q, fmt, evs


def _t_net_income(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    q = (
        f"What is {t}'s Net Income Common Stockholders in its latest annual income statement and in its "
        "latest quarterly one, and how far apart are the two figures?"
    )
    fmt = {
        t: {
            "net income common stockholders annually": "[NUMBER]",
            "net income common stockholders quarterly": "[NUMBER]",
            "difference": "[NUMBER]",
        }
    }
    evs = [
        _ev("check_net_income", "annual figure", ticker=t, period="annually"),
        _ev("check_net_income", "quarterly figure", ticker=t, period="quarterly"),
        _ev("check_net_income_difference", "difference", ticker=t, periods=["annually", "quarterly"]),
    ]
    return q, fmt, evs


def _t_pct_change(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    threshold = r.choice([0.0, 0.02, 0.04])
    q = (
        f"Among {t}'s institutional holders, list those whose pctChange is greater than {threshold} "
        "with their reported value and pctChange, and add up the values of the listed holders."
    )
    fmt = {
        "institutional holders": [{"institution": "[STRING]", "value": "[NUMBER]", "pctChange": "[NUMBER]"}],
        "aggregate market value": "[NUMBER]",
    }
    return (
        q,
        fmt,
        [_ev("check_percentage_change", "holders and aggregate value", ticker=t, minPctChange=threshold)],
    )


def _t_min_held(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    tickers = r.sample(SCREEN_POOL, r.choice([2, 3]))
    threshold = r.choice([0.04, 0.05, 0.06])
    q = (
        f"Which institutions appear among the institutional holders of every one of {', '.join(tickers)} "
        f"with a pctHeld above {threshold} in each? Give their Holder names."
    )
    fmt = {"companies": ["institution 1", "..."]}
    ev = _ev(
        "check_holders_with_min_pct_held", "common large holders", tickers=tickers, min_pct_held=threshold
    )
    return q, fmt, [ev]


def _t_common(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    tickers = r.sample(SCREEN_POOL, r.choice([2, 3]))
    threshold = r.choice([0.03, 0.045, 0.07])
    q = (
        f"List the institutional holders that own more than {threshold * 100:g}% (pctHeld > {threshold}) of "
        f"each of {', '.join(tickers)}, by their Holder names."
    )
    fmt = {"holders": ["holder 1", "..."]}
    ev = _ev(
        "check_common_significant_holders",
        "significant holders",
        tickers=tickers,
        threshold_pct_held=threshold,
    )
    return q, fmt, [ev]


def _t_holder_pct(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    tickers = r.sample(SCREEN_POOL, r.choice([2, 3]))
    holder = r.choice(["Blackrock Inc.", "Vanguard Group Inc", "State Street Corporation"])
    key = f"company with largest positive increase in {holder}'s reported stake"
    q = (
        f"Look up the pctChange of {holder} in the institutional holders of {', '.join(tickers)}, "
        f"and name the company where that stake grew the most."
    )
    fmt: dict[str, Any] = {t: {f"{holder} pctChange": "[NUMBER]"} for t in tickers}
    fmt[key] = " or ".join(tickers)
    evs = [_ev("check_holders_pct_change", f"{holder} in {t}", holder=holder, ticker=t) for t in tickers]
    evs.append(_ev("check_holders_largest_pct_change", "largest change", holder=holder, tickers=tickers))
    return q, fmt, evs


def _t_blackrock(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    for _ in range(50):
        tickers = r.sample(SCREEN_POOL, r.choice([2, 3]))
        changes = [yf.holder_pct_change(seed, t, "Blackrock Inc.") for t in tickers]
        if max(changes) > 0 and changes.count(max(changes)) == 1:
            break
    q = (
        f"For {', '.join(tickers)}, give Blackrock Inc.'s pctChange among the institutional holders and name "
        "the company where Blackrock's stake rose the most."
    )
    fmt: dict[str, Any] = {t: {"pctChange": "[NUMBER]"} for t in tickers}
    fmt["company with largest positive increase"] = " or ".join(tickers)
    return q, fmt, [_ev("check_largest_positive_increase", "Blackrock changes", tickers=tickers)]


def _t_durations(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    q = (
        f"Find the Date Reported of Vanguard Group Inc in {t}'s institutional holders, then the percentage "
        f"change of {t}'s close from that date to 7 and to 30 calendar days later. {_DATE_RULE}"
    )
    fmt = {
        "Date Reported": "[DDMMYYYY]",
        "7-day percentage change": "[NUMBER]",
        "30-day percentage change": "[NUMBER]",
    }
    return q, fmt, [_ev("check_pct_values_with_durations", "report date and changes", ticker=t)]


def _t_holding_values(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    holder = r.choice(["Blackrock Inc.", "State Street Corporation", "Vanguard Group Inc"])
    q = (
        f"Take {holder}'s row in {t}'s institutional holders: value its Shares at {t}'s close on the Date "
        f"Reported and compare with the reported Value. {_DATE_RULE}"
    )
    fmt = {
        "Date Reported": "[DDMMYYYY]",
        "originally reported value": "[NUMBER]",
        "calculated market value": "[NUMBER]",
        "absolute difference": "[NUMBER]",
    }
    return q, fmt, [_ev("check_institutional_holding_values", "holding values", ticker=t, holder=holder)]


_STRATEGY_TEXT = {
    "moving_average_crossover": (
        "a 10/50-day simple moving average crossover",
        {"short_window": 10, "long_window": 50},
    ),
    "mean_reversion_bollinger": (
        "Bollinger Bands mean reversion (20 days, 2 standard deviations)",
        {"window": 20, "std_dev": 2},
    ),
    "roc_reversal": (
        "a 12-day rate-of-change reversal (sell above +20%, buy below -20%)",
        {"roc_period": 12, "overbought_threshold": 20, "oversold_threshold": -20},
    ),
    "price_breakout": (
        "a 20-day price breakout (buy above the prior 20-day closing high, sell below 97% of it)",
        {"breakout_period": 20, "sell_threshold": 0.97},
    ),
    "ma_distance_reversion": (
        "a 20-day moving-average distance reversion with a 5% band",
        {"ma_period": 20, "threshold": 0.05},
    ),
}


def _t_signal(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    candidates = r.sample([d for d in _trading(seed, t) if d.year >= 2016], 60)
    want_action = r.random() < 0.7  # most signal tasks have a buy or sell answer
    if r.random() < 0.5:
        name = r.choice(list(_STRATEGY_TEXT))
        text, params = _STRATEGY_TEXT[name]
    else:
        other = r.choice(["moving_average_crossover", "roc_reversal", "ma_distance_reversion"])
        name = f"mean_reversion_bollinger_plus_{other}"
        text = f"{_STRATEGY_TEXT['mean_reversion_bollinger'][0]} combined with {_STRATEGY_TEXT[other][0]}"
        params = {
            f"{other}_params": _STRATEGY_TEXT[other][1],
            "mean_reversion_bollinger_params": _STRATEGY_TEXT["mean_reversion_bollinger"][1],
        }
        text += " (buy if one says buy and the other buy or hold, sell likewise, otherwise hold)"
    strategy = {"name": name, "params": params}
    day = candidates[0]
    if want_action:
        acting = [d for d in candidates if yf.trading_signal(seed, t, d.isoformat(), strategy) != "hold"]
        day = acting[0] if acting else day
    q = (
        f"Using {t}'s daily closes from the 100 calendar days up to {day}, what signal does {text} give "
        f"on {day}: buy, sell or hold?"
    )
    fmt = {"check_buy_sell_hold_signal": "buy/sell/hold"}
    ev = _ev(
        "check_buy_sell_hold_signal", "trading signal", ticker=t, date=day.isoformat(),
        quant_strategy=strategy,
    )  # fmt: skip
    return q, fmt, [ev]


def _t_quant(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    days = _trading(seed, t)
    while True:
        i = r.randrange(200, len(days) - 6)
        run = days[i : i + 5]
        if all((b - a).days == 1 for a, b in zip(run, run[1:], strict=False)):
            break
    amount = float(r.choice([2000, 5000, 8000, 12000]))
    closes = {d: finance.close_on_or_before(yf.company(seed, t), d)[1] for d in run}  # type: ignore[index]
    best = max(run[:4], key=lambda d: closes[d + timedelta(days=1)] / closes[d])
    options = "/".join(d.isoformat() for d in run[:4])
    q = (
        f"With ${amount:,.0f}, which of {', '.join(d.isoformat() for d in run[:4])} is the best day to "
        f"buy {t} at the close and sell at the next day's close, and how much would that earn?"
    )
    fmt = {"date": options, "earn": "[NUMBER] (no currency sign)"}
    ev = _ev(
        "check_quant_investment_task_output", "best day and earning", ticker=t, start_date=best.isoformat(),
        end_date=(best + timedelta(days=1)).isoformat(), initial_investment=amount,
    )  # fmt: skip
    return q, fmt, [ev]


def _t_growth(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    quarters, count = r.choice([(3, 2), (4, 1), (3, 1), (2, 3)])
    q = (
        f"Name {count} stock ticker(s) whose net income rose in each of the last {quarters} reported "
        "quarters (each quarter higher than the one before)."
    )
    fmt = {"tickers": [f"ticker{i + 1}" for i in range(count)]}
    ev = _ev(
        "check_net_income_growth_task_output", "net income growth", num_quarters=quarters, num_tickers=count
    )
    return q, fmt, [ev]


def _t_dividends(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    years, count = r.choice([(5, 3), (10, 2), (7, 3), (10, 3)])
    q = f"Name {count} companies, by ticker, paying a dividend in each of {years} or more consecutive years."
    fmt = {"tickers": [f"ticker{i + 1}" for i in range(count)]}
    return (
        q,
        fmt,
        [
            _ev(
                "check_dividend_consistency_task_output",
                "dividend record",
                num_tickers=count,
                min_years=years,
            )
        ],
    )


def _t_options(r: random.Random, seed: int) -> tuple[str, Any, list[Any]]:
    t = r.choice(SCREEN_POOL)
    q = (
        f"For {t}'s nearest option expiration, find the out-of-the-money call (strike above the current "
        "price) with the highest implied volatility and give its details."
    )
    fmt = {
        "ticker": "[String]",
        "expiration": "YYYY-MM-DD",
        "strike": "[Number]",
        "implied_volatility": "[Number]",
        "last_price": "[Number]",
        "bid": "[Number]",
        "ask": "[Number]",
        "in_the_money": "[Boolean]",
    }
    return q, fmt, [_ev("check_highest_iv_otm_call_task_output", "highest-IV OTM call", ticker=t)]


TEMPLATES: tuple[Callable[[random.Random, int], tuple[str, Any, list[Any]]], ...] = (
    _t_portfolio,
    _t_compare(
        "check_net_profit_margin",
        "compare_companies_net_profit_margin",
        "net profit margin",
        "company with highest net profit margin",
        "net profit margin (Net Income Common Stockholders / Total Revenue)",
    ),  # fmt: skip
    _t_signal,
    _t_holder_pct,
    _t_compare(
        "check_rd_expense_percentage",
        "compare_companies_rd_expense_percentage",
        "R&D expense percentage",
        "company with higher R&D expense percentage",
        "R&D expense as a share of total revenue",
    ),  # fmt: skip
    _t_quant,
    _t_net_income,
    _t_pct_change,
    _t_dividends,
    _t_options,
    _t_compare(
        "check_gross_profit_margin",
        "compare_companies_gross_profit_margin",
        "gross profit margin",
        "company with higher gross profit margin",
        "gross profit margin (Gross Profit / Total Revenue)",
    ),  # fmt: skip
    _t_durations,
    _t_growth,
    _t_holding_values,
    _t_min_held,
    _t_figures,
    _t_common,
    _t_blackrock,
)
"""Task makers; together they use all 25 ``yfinance.*`` ops. Task i uses ``TEMPLATES[i % 18]``."""


def generate_tasks(seed: int, count: int = TASK_COUNT) -> list[dict[str, Any]]:
    """Our own financial_analysis tasks (upstream's format plus ``id`` and ``reference``).

    Task i is made from its own generator ``Random("egi-mcpu-fin:<seed>:<i>")`` with template
    ``i % 18``, so any count is a prefix of the same list and the first 18 cover every template.

    Raises:
        ValueError: count outside 0..40.
    """
    if not 0 <= count <= TASK_COUNT:
        raise ValueError(
            f"financial_analysis has {TASK_COUNT} generated tasks; count must be 0..{TASK_COUNT}, got {count}"
        )
    tasks = []
    for i in range(count):
        r = random.Random(f"egi-mcpu-fin:{seed}:{i}")
        question, fmt, evaluators = TEMPLATES[i % len(TEMPLATES)](r, seed)
        task = {
            "id": f"{DOMAIN}-{i + 1:03d}",
            "category": "general",
            "question": question,
            "output_format": fmt,
            "mcp_servers": [{"name": s} for s in SERVERS],
            "use_specified_server": True,
            "evaluators": evaluators,
            "cleanups": [],
        }
        task["reference"] = solve(task, seed)
        tasks.append(task)
    return tasks
