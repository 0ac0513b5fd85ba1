"""``yfinance.*`` ops of MCP-Universe's financial_analysis domain (all 25 upstream registers).

Each op reads the agent's answer (the ``json`` step's object) and recomputes the truth from the
open-world finance world rebuilt from ``ctx.seed``
(:func:`suites._common.mcp_servers.finance.build_world` with ``open_world=True``, the world the
``yfinance`` server serves), never from a literal in the task. Semantics, answer keys, op_args
and tolerances are upstream's (``mcpuniverse/evaluator/yfinance/functions.py``); the reasons
are ours and name the key, the expected and the given value.

Rules shared by every op (and by the reference solver in
:mod:`suites.mcp_universe.data.domains.financial_analysis`):

- **Non-trading days**: a price "on" a date is the close of the last trading day on or before
  it (:func:`~suites._common.mcp_servers.finance.close_on_or_before`; upstream's forward fill;
  its portfolio check instead crashed on a closed market day). A date before the history
  (2014-01-02) is a task the local data cannot check: :class:`EvaluatorSpecError`.
- **Statements**: the latest period is the first row of ``income_stmt`` /
  ``quarterly_income_stmt``; "net income" for margins and the net-income checks is ``Net Income
  Common Stockholders``, the growth screen reads ``Net Income`` (upstream's choice of rows).
- **Holders** are matched by :func:`find_holder`: exact name (case-insensitive), else the same
  name without punctuation, a leading "the" and a trailing corporate word (``inc``, ``corp``,
  ``corporation``, ``co``, ``llc``, ``ltd``), else the first holder whose name contains the
  query's first word (upstream's core-name fallback), in table order.
- **Numbers** in the answer may be JSON numbers or numeric strings (``float()``); anything else
  fails with the key named. A missing key fails with the key named.
- **Tolerances** (absolute unless said): portfolio value 0.5, portfolio return 0.05 percentage
  points, quant-trade earning 0.5; margins and R&D share 0.05 percentage points; revenue,
  operating income, R&D expense, net income and its difference 0.05 (currency units: the
  figure exactly); holder ``pctChange`` 0.00015; aggregate and per-holder market value
  max(0.1 % relative, 1000) (upstream's two nested thresholds reduce to this); 7- and 30-day
  changes 0.055 points (truth rounded to 2 decimals); holding values ``math.isclose`` with
  rel 0.0005 / abs 1.0 (reported value) and rel 0.001 / abs 0.015 (calculated value,
  difference); option strike, implied volatility, last price, bid and ask 0.001.

Deviations from upstream, each because upstream's check is defective: the signal check
passes only if the answer names exactly one of buy/sell/hold (upstream's substring test passed
"buy/sell/hold"); ticker-list screens require a JSON list of distinct tickers (upstream turned a
string into a list of letters and counted duplicates); holding values that are not numbers
fail (upstream skipped the comparison); a task the local data cannot check (unknown strategy,
split not summing to 1, holder absent) is a usage error, not a failed answer.
"""

from __future__ import annotations

import math
import re
import statistics
from bisect import bisect_left, bisect_right
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from suites._common.mcp_servers import finance
from suites._common.mcp_servers._base import TODAY, BadRequest
from suites.mcp_universe.scorer.evaluator import AnswerError, EvalContext, EvaluatorSpecError, domain_op

__all__ = [
    "PORTFOLIO_PCT_TOL",
    "PORTFOLIO_VALUE_TOL",
    "company",
    "dividend_consistency",
    "filtered_institutional_holders",
    "financial_data",
    "find_holder",
    "highest_iv_otm_call",
    "holder_pct_change",
    "holding_values",
    "latest_report_date",
    "nearest_expiry",
    "net_income_growth",
    "portfolio_return",
    "price_changes_after_report",
    "ratio",
    "significant_holders",
    "trading_signal",
    "world",
]

PORTFOLIO_VALUE_TOL = 0.5
PORTFOLIO_PCT_TOL = 0.05
EARN_TOL = 0.5
MARGIN_TOL = 0.05
FIGURE_TOL = 0.05
PCT_CHANGE_TOL = 0.00015
VALUE_REL_TOL, VALUE_ABS_FLOOR = 0.001, 1000.0
DURATION_TOL = 0.055
OPTION_TOL = 0.001
HOLDING_TOLS = {
    "originally reported value": (0.0005, 1.0),
    "calculated market value": (0.001, 0.015),
    "absolute difference": (0.001, 0.015),
}
"""Answer key → (relative, absolute) tolerance of ``math.isclose``."""

Result = tuple[bool, str]


# ---------------------------------------------------------------------------------------------
# The world
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=4)
def world(seed: int) -> dict[str, Any]:
    """The open-world finance world of ``seed`` (companies are added as they are first named;
    :func:`_kept` keeps only the last :data:`OPEN_COMPANIES_KEPT` of them)."""
    built = finance.build_world(seed, open_world=True)
    _fixed[seed] = frozenset(built["tickers"])
    return built


_fixed: dict[int, frozenset[str]] = {}


def forget_worlds() -> None:
    """Let go of every world :func:`world` built in this process (the suite's ``release``):
    the next use builds it again, the same."""
    world.cache_clear()
    _fixed.clear()
OPEN_COMPANIES_KEPT = finance.OPEN_COMPANIES_KEPT
"""Generated companies the evaluator's world keeps live (``finance.company`` bounds them and
keeps those let go packed, as the finance server does)."""


def _kept(seed: int, ticker: str) -> dict[str, Any]:
    """``finance.company`` of the evaluator's world (the generated companies bounded to the
    ``finance.OPEN_COMPANIES_KEPT`` most recently used; those let go are kept packed).

    Raises:
        BadRequest: as ``finance.company``.
    """
    return finance.company(world(seed), ticker)


def company(seed: int, ticker: str) -> dict[str, Any]:
    """A company named by the task.

    Raises:
        EvaluatorSpecError: the ticker is not a symbol the open world serves.
    """
    try:
        return _kept(seed, ticker)
    except BadRequest as exc:
        raise EvaluatorSpecError(f"ticker {ticker!r} of the task: {exc}") from None


def _answer_company(seed: int, ticker: Any) -> dict[str, Any] | None:
    if not isinstance(ticker, str):
        return None
    try:
        return _kept(seed, ticker)
    except BadRequest:
        return None


def _price(seed: int, ticker: str, day: date) -> float:
    found = finance.close_on_or_before(company(seed, ticker), day)
    if found is None:
        raise EvaluatorSpecError(
            f"no {ticker} price on or before {day} (the local history starts {finance.OPEN_START})"
        )
    return found[1]


def _date(value: Any, field: str) -> date:
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise EvaluatorSpecError(f"op_args {field} must be a YYYY-MM-DD date, got {value!r}") from None


# ---------------------------------------------------------------------------------------------
# Truth
# ---------------------------------------------------------------------------------------------

_ROWS = {
    "total revenue": ("Total Revenue",),
    "rd expense": ("Research And Development", "ResearchAndDevelopment", "Research Development Expense"),
    "operating income": ("Operating Income", "OperatingIncome", "EBIT"),
    "gross profit": ("Gross Profit", "GrossProfit"),
    "net income": ("Net Income Common Stockholders",),
}


def financial_data(seed: int, ticker: str, period: str = "annually") -> dict[str, float]:
    """The latest income statement's figures upstream reads: ``{"total revenue", "rd expense",
    "operating income", "gross profit", "net income"}`` (currency units; "net income" is Net
    Income Common Stockholders).

    Raises:
        EvaluatorSpecError: unknown period, or a line item missing for the ticker.
    """
    if period not in ("annually", "quarterly"):
        raise EvaluatorSpecError(f"op_args period must be 'annually' or 'quarterly', got {period!r}")
    kind = "income_stmt" if period == "annually" else "quarterly_income_stmt"
    latest = company(seed, ticker)["statements"][kind][0]
    out = {}
    for key, rows in _ROWS.items():
        value = next((latest[r] for r in rows if latest.get(r) is not None), None)
        if value is None:
            raise EvaluatorSpecError(f"{ticker}'s {kind} has no {' / '.join(rows)} row")
        out[key] = float(value)
    return out


def ratio(seed: int, ticker: str, top: str) -> float:
    """``financial_data[top] / total revenue`` of the latest annual statement (a fraction)."""
    data = financial_data(seed, ticker)
    return data[top] / data["total revenue"]


def portfolio_return(
    seed: int, tickers: list[str], start: str, end: str, investment: float, split: list[float]
) -> tuple[float, float]:
    """(final value, percentage return), both rounded to 2 decimals: ``investment × split[i]``
    buys ticker i at its close on ``start``, valued at its close on ``end`` (closes on or
    before each date).

    Raises:
        EvaluatorSpecError: split not summing to 1 (±0.001) or not one weight per ticker.
    """
    if len(tickers) != len(split):
        raise EvaluatorSpecError(f"op_args split has {len(split)} weights for {len(tickers)} tickers")
    if abs(sum(split) - 1.0) > 0.001:
        raise EvaluatorSpecError(f"op_args split must sum to 1.0, got {sum(split)}")
    d0, d1 = _date(start, "start_date"), _date(end, "end_date")
    final = 0.0
    for ticker, weight in zip(tickers, split, strict=True):
        final += investment * weight / _price(seed, ticker, d0) * _price(seed, ticker, d1)
    return round(final, 2), round((final - investment) / investment * 100, 2)


_SUFFIXES = {"inc", "corp", "corporation", "co", "llc", "ltd"}


def _norm(name: str) -> str:
    words = re.sub(r"[^a-z0-9 ]", " ", name.lower()).split()
    if words and words[0] == "the":
        words = words[1:]
    while words and words[-1] in _SUFFIXES:
        words = words[:-1]
    return " ".join(words)


def find_holder(rows: list[dict[str, Any]], query: str) -> dict[str, Any] | None:
    """The holder row ``query`` names (module docstring: exact, normalised, core word)."""
    q = query.strip().lower()
    for row in rows:
        if str(row["Holder"]).lower() == q:
            return row
    for row in rows:
        if _norm(str(row["Holder"])) == _norm(query):
            return row
    core = _norm(query).split(" ")[0] if _norm(query) else ""
    for row in rows:
        if core and core in str(row["Holder"]).lower():
            return row
    return None


def _holder(seed: int, ticker: str, holder: str) -> dict[str, Any]:
    row = find_holder(company(seed, ticker)["holders"]["institutional_holders"], holder)
    if row is None:
        raise EvaluatorSpecError(f"{holder!r} is not among {ticker}'s institutional holders")
    return row


def holder_pct_change(seed: int, ticker: str, holder: str) -> float:
    """The holder's ``pctChange`` (a fraction: 0.02 = 2 %) in the ticker's institutional holders."""
    return float(_holder(seed, ticker, holder)["pctChange"])


def filtered_institutional_holders(seed: int, ticker: str, min_pct_change: float) -> dict[str, Any]:
    """``{"institutional holders": [{"institution", "value", "pctChange"}], "aggregate market
    value"}`` of the institutions whose ``pctChange`` exceeds ``min_pct_change``."""
    rows = [
        h
        for h in company(seed, ticker)["holders"]["institutional_holders"]
        if h["pctChange"] > min_pct_change
    ]
    return {
        "institutional holders": [
            {"institution": h["Holder"], "value": float(h["Value"]), "pctChange": float(h["pctChange"])}
            for h in rows
        ],
        "aggregate market value": float(sum(h["Value"] for h in rows)),
    }


def significant_holders(seed: int, ticker: str, threshold: float) -> set[str]:
    """Lower-cased names of the institutions holding more than ``threshold`` (``pctHeld``)."""
    return {
        str(h["Holder"]).lower()
        for h in company(seed, ticker)["holders"]["institutional_holders"]
        if h["pctHeld"] > threshold
    }


def latest_report_date(seed: int, ticker: str, holder: str = "Vanguard Group Inc") -> date:
    """The holder's ``Date Reported`` in the ticker's institutional holders."""
    return date.fromisoformat(_holder(seed, ticker, holder)["Date Reported"][:10])


def price_changes_after_report(seed: int, ticker: str) -> dict[str, Any]:
    """``{"Date Reported": DDMMYYYY, "7-day percentage change", "30-day percentage change"}``:
    Vanguard's report date d and the close-to-close change in percent from d to d+7 and d+30
    calendar days (closes on or before each date), rounded to 2 decimals.

    Raises:
        EvaluatorSpecError: d+30 lies after the data's last day.
    """
    d0 = latest_report_date(seed, ticker)
    if d0 + timedelta(days=30) >= TODAY:
        raise EvaluatorSpecError(f"{ticker}: 30 days after {d0} lies beyond the price history")
    p0 = _price(seed, ticker, d0)
    out: dict[str, Any] = {"Date Reported": d0.strftime("%d%m%Y")}
    for days_, key in ((7, "7-day percentage change"), (30, "30-day percentage change")):
        out[key] = round((_price(seed, ticker, d0 + timedelta(days=days_)) - p0) / p0 * 100, 2)
    return out


def holding_values(seed: int, ticker: str, holder: str) -> dict[str, Any]:
    """``{"Date Reported": DDMMYYYY, "originally reported value", "calculated market value"
    (Shares × close on the report date, rounded to 2), "absolute difference"}``."""
    row = _holder(seed, ticker, holder)
    d0 = date.fromisoformat(row["Date Reported"][:10])
    calculated = float(row["Shares"]) * _price(seed, ticker, d0)
    return {
        "Date Reported": d0.strftime("%d%m%Y"),
        "originally reported value": float(row["Value"]),
        "calculated market value": round(calculated, 2),
        "absolute difference": round(abs(float(row["Value"]) - calculated), 2),
    }


def net_income_growth(seed: int, ticker: str, num_quarters: int) -> tuple[bool, str]:
    """Whether ``Net Income`` rose strictly over the latest ``num_quarters`` quarters."""
    found = _answer_company(seed, ticker)
    if found is None:
        return False, f"{ticker!r} is not a ticker the market data knows"
    series = [
        q["Net Income"]
        for q in found["statements"]["quarterly_income_stmt"]
        if q.get("Net Income") is not None
    ]
    if len(series) < num_quarters:
        return False, f"{ticker} reports only {len(series)} quarters"
    recent = series[:num_quarters]
    if all(recent[i] > recent[i + 1] for i in range(num_quarters - 1)):
        return True, ""
    return (
        False,
        f"{ticker}'s net income did not rise in each of its last {num_quarters} quarters ({recent[::-1]})",
    )


def dividend_consistency(seed: int, ticker: str, min_years: int) -> tuple[bool, str]:
    """Whether the ticker's most recent ``min_years`` calendar years with a dividend are
    consecutive (upstream's rule: the run need not reach the current year)."""
    found = _answer_company(seed, ticker)
    if found is None:
        return False, f"{ticker!r} is not a ticker the market data knows"
    years = sorted({int(a["Date"][:4]) for a in found["actions"] if a["Dividends"]}, reverse=True)
    if len(years) < min_years:
        return False, f"{ticker} paid dividends in only {len(years)} years"
    recent = years[:min_years]
    for a, b in zip(recent, recent[1:], strict=False):
        if a - b != 1:
            return False, f"{ticker} paid no dividend between {b} and {a}"
    return True, ""


def nearest_expiry(seed: int, ticker: str) -> str:
    """The soonest option expiration date of the ticker."""
    return min(company(seed, ticker)["options"])


def highest_iv_otm_call(seed: int, ticker: str, expiry: str) -> dict[str, Any]:
    """The out-of-the-money call (strike above the last close) with the highest implied
    volatility on ``expiry`` (the first such strike on a tie): ``{"strike",
    "implied_volatility", "last_price", "bid", "ask", "in_the_money"}``."""
    found = company(seed, ticker)
    spot = found["prices"][-1]["Close"]
    calls = [c for c in found["options"][expiry]["calls"] if c["strike"] > spot]
    if not calls:
        raise EvaluatorSpecError(f"{ticker} has no out-of-the-money call on {expiry}")
    best = max(calls, key=lambda c: c["impliedVolatility"])  # first maximum, as idxmax
    return {
        "strike": best["strike"],
        "implied_volatility": best["impliedVolatility"],
        "last_price": best["lastPrice"],
        "bid": best["bid"],
        "ask": best["ask"],
        "in_the_money": best["inTheMoney"],
    }


# -- trading signals (upstream's five strategies and three combinations) ---------------------


def _sma(xs: list[float], n: int, back: int = 0) -> float | None:
    end = len(xs) - back
    if n <= 0 or end < n:
        return None
    return sum(xs[end - n : end]) / n


def _crossover(xs: list[float], short_window: int = 10, long_window: int = 50) -> str:
    s, lg, s0, l0 = (
        _sma(xs, short_window),
        _sma(xs, long_window),
        _sma(xs, short_window, 1),
        _sma(xs, long_window, 1),
    )
    if None in (s, lg, s0, l0):
        return "hold"
    if s > lg and s0 <= l0:  # type: ignore[operator]
        return "buy"
    if s < lg and s0 >= l0:  # type: ignore[operator]
        return "sell"
    return "hold"


def _bollinger(xs: list[float], window: int = 20, std_dev: float = 2) -> str:
    if len(xs) < max(window, 2):
        return "hold"
    tail = xs[-window:]
    mid, sd = sum(tail) / window, statistics.stdev(tail)  # sample deviation, as pandas' rolling std
    if xs[-1] < mid - std_dev * sd:
        return "buy"
    if xs[-1] > mid + std_dev * sd:
        return "sell"
    return "hold"


def _roc(
    xs: list[float], roc_period: int = 12, overbought_threshold: float = 20, oversold_threshold: float = -20
) -> str:
    if len(xs) <= roc_period:
        return "hold"
    roc = (xs[-1] - xs[-1 - roc_period]) / xs[-1 - roc_period] * 100
    if roc < oversold_threshold:
        return "buy"
    if roc > overbought_threshold:
        return "sell"
    return "hold"


def _breakout(xs: list[float], breakout_period: int = 20, sell_threshold: float = 0.97) -> str:
    if len(xs) <= breakout_period:
        return "hold"
    high = max(xs[-1 - breakout_period : -1])
    if xs[-1] > high:
        return "buy"
    if xs[-1] < high * sell_threshold:
        return "sell"
    return "hold"


def _distance(xs: list[float], ma_period: int = 20, threshold: float = 0.05) -> str:
    sma = _sma(xs, ma_period)
    if sma is None:
        return "hold"
    gap = (xs[-1] - sma) / sma
    return "buy" if gap < -threshold else "sell" if gap > threshold else "hold"


_STRATEGIES = {
    "moving_average_crossover": _crossover,
    "mean_reversion_bollinger": _bollinger,
    "roc_reversal": _roc,
    "price_breakout": _breakout,
    "ma_distance_reversion": _distance,
}
_COMBINED = {
    "mean_reversion_bollinger_plus_moving_average_crossover": (
        "mean_reversion_bollinger",
        "moving_average_crossover",
    ),
    "mean_reversion_bollinger_plus_roc_reversal": ("mean_reversion_bollinger", "roc_reversal"),
    "mean_reversion_bollinger_plus_ma_distance_reversion": (
        "mean_reversion_bollinger",
        "ma_distance_reversion",
    ),
}
STRATEGY_NAMES = (*_STRATEGIES, *_COMBINED)


def signal_closes(seed: int, ticker: str, day: str) -> list[float]:
    """The closes the signal reads: trading days from ``day`` − 99 to ``day`` (calendar days,
    both included; upstream's 100-day download window), oldest first."""
    d = _date(day, "date")
    lo, hi = (d - timedelta(days=99)).isoformat(), d.isoformat()
    prices = company(seed, ticker)["prices"]  # oldest first: the window is a slice

    def day_of(p: dict[str, Any]) -> str:
        return p["Date"][:10]

    window = prices[bisect_left(prices, lo, key=day_of) : bisect_right(prices, hi, key=day_of)]
    closes = [p["Close"] for p in window]
    if not closes:
        raise EvaluatorSpecError(f"no {ticker} prices in the 100 days up to {day}")
    return closes


def trading_signal(seed: int, ticker: str, day: str, strategy: dict[str, Any]) -> str:
    """``buy`` / ``sell`` / ``hold`` of the strategy on ``day`` (upstream's rules; a combined
    strategy buys when one part buys and the other buys or holds, sells likewise, else holds).

    Raises:
        EvaluatorSpecError: unknown strategy or parameters.
    """
    name, params = strategy.get("name"), strategy.get("params") or {}
    closes = signal_closes(seed, ticker, day)
    try:
        if name in _STRATEGIES:
            return _STRATEGIES[name](closes, **params)
        if name in _COMBINED:
            first, second = _COMBINED[name]
            a = _STRATEGIES[first](closes, **params[f"{first}_params"])
            b = _STRATEGIES[second](closes, **params[f"{second}_params"])
            for s in ("buy", "sell"):
                if {a, b} <= {s, "hold"} and s in (a, b):
                    return s
            return "hold"
    except (TypeError, KeyError) as exc:
        raise EvaluatorSpecError(f"quant_strategy {name!r}: bad params {params!r} ({exc})") from None
    raise EvaluatorSpecError(f"unknown quant_strategy {name!r}; known: {', '.join(STRATEGY_NAMES)}")


# ---------------------------------------------------------------------------------------------
# Answer access
# ---------------------------------------------------------------------------------------------


def _arg(op_args: Any, name: str) -> Any:
    """An op argument of the task, or :class:`EvaluatorSpecError` naming it."""
    if not isinstance(op_args, dict) or name not in op_args:
        raise EvaluatorSpecError(f"op_args needs {name!r}, got {op_args!r}")
    return op_args[name]


def _obj(x: Any, where: str = "the answer") -> dict[str, Any]:
    if not isinstance(x, dict):
        raise AnswerError(f"{where} is not a JSON object")
    return x


def _key(x: Any, key: str, where: str = "the answer") -> Any:
    obj = _obj(x, where)
    if key not in obj:
        raise AnswerError(f"{where} has no key {key!r}")
    return obj[key]


def _num(value: Any, where: str) -> float:
    if isinstance(value, bool):
        raise AnswerError(f"{where} is not a number: {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise AnswerError(f"{where} is not a number: {value!r}") from None


def _ticker_num(x: Any, ticker: str, key: str) -> float:
    block = _key(x, ticker)
    return _num(_key(block, key, f"answer[{ticker!r}]"), f"answer[{ticker!r}][{key!r}]")


def _close(given: float, truth: float, tol: float, what: str, digits: int = 2) -> Result:
    if abs(given - truth) > tol:
        return False, f"{what}: expected {truth:.{digits}f} (±{tol}), got {given:.{digits}f}"
    return True, ""


def _tickers_list(x: Any, count: int) -> list[str]:
    tickers = _key(x, "tickers")
    if not isinstance(tickers, list):
        raise AnswerError(f"answer['tickers'] is not a list: {tickers!r}")
    if len(tickers) != count:
        raise AnswerError(f"answer['tickers'] names {len(tickers)} tickers, the task asks for {count}")
    if len({str(t).strip().upper() for t in tickers}) != len(tickers):
        raise AnswerError(f"answer['tickers'] repeats a ticker: {tickers!r}")
    return tickers


# ---------------------------------------------------------------------------------------------
# Ops: portfolio, trading
# ---------------------------------------------------------------------------------------------


@domain_op("yfinance.check_portfolio_task_output", kind="dynamic")
def check_portfolio_task_output(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"total value", "total percentage return"}`` against :func:`portfolio_return`
    (op_args ``tickers, start_date, end_date, initial_investment, split``); tolerances 0.5 and
    0.05 points."""
    given_value = _num(_key(x, "total value"), "answer['total value']")
    given_pct = _num(_key(x, "total percentage return"), "answer['total percentage return']")
    value_, pct = portfolio_return(
        ctx.seed,
        _arg(op_args, "tickers"),
        _arg(op_args, "start_date"),
        _arg(op_args, "end_date"),
        float(_arg(op_args, "initial_investment")),
        [float(s) for s in _arg(op_args, "split")],
    )
    ok, why = _close(given_value, value_, PORTFOLIO_VALUE_TOL, "total value")
    if not ok:
        return ok, why
    return _close(given_pct, pct, PORTFOLIO_PCT_TOL, "total percentage return")


@domain_op("yfinance.check_quant_investment_task_output", kind="dynamic")
def check_quant_investment_task_output(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"date", "earn"}``: the date must be op_args ``start_date`` (as written) and the
    earning of ``initial_investment`` bought at its close and sold at ``end_date``'s close within
    0.5."""
    given_date = str(_key(x, "date")).strip()
    earn = _num(_key(x, "earn"), "answer['earn']")
    if given_date != _arg(op_args, "start_date"):
        return False, f"date: expected {_arg(op_args, 'start_date')}, got {given_date}"
    investment = float(_arg(op_args, "initial_investment"))
    final, _ = portfolio_return(
        ctx.seed,
        [_arg(op_args, "ticker")],
        _arg(op_args, "start_date"),
        _arg(op_args, "end_date"),
        investment,
        [1.0],
    )
    return _close(earn, final - investment, EARN_TOL, "earn")


@domain_op("yfinance.check_buy_sell_hold_signal", kind="dynamic")
def check_buy_sell_hold_signal(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"check_buy_sell_hold_signal": "buy" | "sell" | "hold"}`` against
    :func:`trading_signal` (op_args ``ticker, date, quant_strategy{name, params}``). The answer
    must name exactly one of the three words (deviation: module docstring)."""
    given = str(_key(x, "check_buy_sell_hold_signal"))
    truth = trading_signal(
        ctx.seed, _arg(op_args, "ticker"), _arg(op_args, "date"), _arg(op_args, "quant_strategy")
    )
    named = set(re.findall(r"\b(buy|sell|hold)\b", given.lower()))
    if named == {truth}:
        return True, ""
    if len(named) > 1:
        return False, f"signal: the answer names several signals ({given!r}); expected {truth}"
    return False, f"signal: expected {truth}, got {given!r}"


# ---------------------------------------------------------------------------------------------
# Ops: income statement figures
# ---------------------------------------------------------------------------------------------


def _figure_op(name: str, answer_key: str, truth: Any, tol: float, what: str) -> None:
    @domain_op(f"yfinance.{name}", kind="dynamic")
    def op(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
        ticker = _arg(op_args, "ticker")
        expected = truth(ctx.seed, ticker)
        given = _ticker_num(x, ticker, answer_key)
        return _close(given, expected, tol, f"{ticker} {what}")

    op.__doc__ = (
        f"Answer ``{{TICKER: {{{answer_key!r}: number}}}}`` (op_args ``ticker``) against the latest "
        f"annual {what}, within {tol}."
    )


_figure_op(
    "check_gross_profit_margin",
    "gross profit margin",
    lambda s, t: ratio(s, t, "gross profit") * 100,
    MARGIN_TOL,
    "gross profit margin (%)",
)
_figure_op(
    "check_net_profit_margin",
    "net profit margin",
    lambda s, t: ratio(s, t, "net income") * 100,
    MARGIN_TOL,
    "net profit margin (%)",
)
_figure_op(
    "check_rd_expense_percentage",
    "R&D expense percentage",
    lambda s, t: ratio(s, t, "rd expense") * 100,
    MARGIN_TOL,
    "R&D expense share of revenue (%)",
)
_figure_op(
    "check_rd_expense",
    "R&D expense",
    lambda s, t: financial_data(s, t)["rd expense"],
    FIGURE_TOL,
    "R&D expense",
)
_figure_op(
    "check_total_revenue",
    "total revenue",
    lambda s, t: financial_data(s, t)["total revenue"],
    FIGURE_TOL,
    "total revenue",
)
_figure_op(
    "check_operating_income",
    "operating income",
    lambda s, t: financial_data(s, t)["operating income"],
    FIGURE_TOL,
    "operating income",
)


def _compare_op(name: str, per_ticker_key: str, answer_key: str, top: str) -> None:
    @domain_op(f"yfinance.{name}", kind="dynamic")
    def op(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
        tickers = _arg(op_args, "tickers")
        for t in tickers:
            _key(_key(x, t), per_ticker_key, f"answer[{t!r}]")
        given = _key(x, answer_key)
        ratios = {t: ratio(ctx.seed, t, top) for t in tickers}
        best = max(ratios, key=ratios.__getitem__)
        if given == best:
            return True, ""
        return False, f"{answer_key}: expected {best}, got {given!r}"

    op.__doc__ = (
        f"Answer ``{{TICKER: {{{per_ticker_key!r}}}, ..., {answer_key!r}: TICKER}}`` (op_args ``tickers``): "
        "the named ticker must have the largest ratio (the first on a tie)."
    )


_compare_op(
    "compare_companies_gross_profit_margin",
    "gross profit margin",
    "company with higher gross profit margin",
    "gross profit",
)
_compare_op(
    "compare_companies_net_profit_margin",
    "net profit margin",
    "company with highest net profit margin",
    "net income",
)
_compare_op(
    "compare_companies_rd_expense_percentage",
    "R&D expense percentage",
    "company with higher R&D expense percentage",
    "rd expense",
)


@domain_op("yfinance.check_net_income", kind="dynamic")
def check_net_income(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{TICKER: {"net income common stockholders <period>"}}`` (op_args ``ticker,
    period`` annually | quarterly) against the latest period's Net Income Common Stockholders,
    within 0.05."""
    ticker, period = _arg(op_args, "ticker"), _arg(op_args, "period")
    expected = financial_data(ctx.seed, ticker, period)["net income"]
    given = _ticker_num(x, ticker, f"net income common stockholders {period}")
    return _close(given, expected, FIGURE_TOL, f"{ticker} {period} net income common stockholders")


@domain_op("yfinance.check_net_income_difference", kind="dynamic")
def check_net_income_difference(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{TICKER: {"difference"}}`` (op_args ``ticker, periods`` two of annually |
    quarterly): |NICS(periods[0]) − NICS(periods[1])| within 0.05."""
    ticker, periods = _arg(op_args, "ticker"), _arg(op_args, "periods")
    if len(periods) != 2:
        raise EvaluatorSpecError(f"op_args periods must name two periods, got {periods!r}")
    a, b = (financial_data(ctx.seed, ticker, p)["net income"] for p in periods)
    given = _ticker_num(x, ticker, "difference")
    return _close(given, abs(a - b), FIGURE_TOL, f"{ticker} net income difference")


# ---------------------------------------------------------------------------------------------
# Ops: holders
# ---------------------------------------------------------------------------------------------


def _value_close(given: float, truth: float) -> bool:
    if truth == 0:
        return abs(given) <= 1
    return abs(given - truth) <= max(abs(truth) * VALUE_REL_TOL, VALUE_ABS_FLOOR)


@domain_op("yfinance.check_percentage_change", kind="dynamic")
def check_percentage_change(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"institutional holders": [{"institution", "value", "pctChange"}], "aggregate
    market value"}`` (op_args ``ticker, minPctChange``) against
    :func:`filtered_institutional_holders`: the aggregate and each value within max(0.1 %,
    1000), the same institutions (case-insensitive, any order), each pctChange within 0.00015."""
    holders = _key(x, "institutional holders")
    if not isinstance(holders, list):
        raise AnswerError(f"answer['institutional holders'] is not a list: {holders!r}")
    aggregate = _num(_key(x, "aggregate market value"), "answer['aggregate market value']")
    truth = filtered_institutional_holders(
        ctx.seed, _arg(op_args, "ticker"), float(_arg(op_args, "minPctChange"))
    )
    expected_aggregate = truth["aggregate market value"]
    if not _value_close(aggregate, expected_aggregate):
        return (
            False,
            f"aggregate market value: expected about {expected_aggregate:,.0f}, got {aggregate:,.0f}",
        )
    expected = sorted(truth["institutional holders"], key=lambda h: h["institution"].lower())
    if len(holders) != len(expected):
        return False, f"institutional holders: expected {len(expected)} institutions, got {len(holders)}"
    given = sorted(holders, key=lambda h: str(_obj(h, "a holder").get("institution", "")).lower())
    for exp, usr in zip(expected, given, strict=True):
        name = str(_key(usr, "institution", "a holder")).lower()
        if name != exp["institution"].lower():
            return (
                False,
                f"institutional holders: expected {exp['institution']!r} in the list, found {name!r} instead",
            )
        got_value = _num(_key(usr, "value", f"holder {name!r}"), f"holder {name!r} value")
        if not _value_close(got_value, exp["value"]):
            return (
                False,
                f"{exp['institution']} value: expected about {exp['value']:,.0f}, got {got_value:,.0f}",
            )
        got_pct = _num(_key(usr, "pctChange", f"holder {name!r}"), f"holder {name!r} pctChange")
        ok, why = _close(got_pct, exp["pctChange"], PCT_CHANGE_TOL, f"{exp['institution']} pctChange", 4)
        if not ok:
            return ok, why
    return True, ""


@domain_op("yfinance.check_largest_positive_increase", kind="dynamic")
def check_largest_positive_increase(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{TICKER: {"pctChange"}, ..., "company with largest positive increase"}`` (op_args
    ``tickers``; the holder is upstream's fixed "Blackrock Inc.", or op_args ``holder``): each
    pctChange within 0.00015, and the named company the one with the largest positive change
    (fails when none is positive or two tie)."""
    holder = op_args.get("holder", "Blackrock Inc.")
    changes = {}
    for t in _arg(op_args, "tickers"):
        truth = changes[t] = holder_pct_change(ctx.seed, t, holder)
        ok, why = _close(_ticker_num(x, t, "pctChange"), truth, PCT_CHANGE_TOL, f"{t} {holder} pctChange", 4)
        if not ok:
            return ok, why
    given = _key(x, "company with largest positive increase")
    positive = {t: c for t, c in changes.items() if c > 0}
    if not positive:
        return False, f"no company shows a positive change in {holder}'s stake; the answer names {given!r}"
    top = max(positive.values())
    best = [t for t, c in positive.items() if abs(c - top) < 1e-9]
    if len(best) > 1:
        return False, f"{', '.join(best)} tie for the largest increase of {holder}'s stake"
    if given != best[0]:
        return False, f"company with largest positive increase: expected {best[0]}, got {given!r}"
    return True, ""


@domain_op("yfinance.check_holders_with_min_pct_held", kind="dynamic")
def check_holders_with_min_pct_held(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"companies": [institution, ...]}`` (op_args ``tickers, min_pct_held``): the
    institutions holding more than ``min_pct_held`` of every ticker (case-insensitive set)."""
    names = _key(x, "companies")
    if not isinstance(names, list):
        raise AnswerError(f"answer['companies'] is not a list: {names!r}")
    threshold = float(_arg(op_args, "min_pct_held"))
    sets = [significant_holders(ctx.seed, t, threshold) for t in _arg(op_args, "tickers")]
    expected = set.intersection(*sets)
    given = {str(n).lower() for n in names}
    if expected - given:
        return False, f"institutions missing from the answer: {sorted(expected - given)}"
    if given - expected:
        return (
            False,
            f"institutions not holding more than {threshold} of every company: {sorted(given - expected)}",
        )
    return True, ""


@domain_op("yfinance.check_common_significant_holders", kind="dynamic")
def check_common_significant_holders(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"holders": [institution, ...]}`` (op_args ``tickers, threshold_pct_held``): the
    same list, case-insensitive and in any order, as the institutions holding more than the
    threshold of every ticker."""
    names = _key(x, "holders")
    if not isinstance(names, list):
        raise AnswerError(f"answer['holders'] is not a list: {names!r}")
    threshold = float(_arg(op_args, "threshold_pct_held"))
    expected = sorted(
        set.intersection(*(significant_holders(ctx.seed, t, threshold) for t in _arg(op_args, "tickers")))
    )
    given = sorted(str(n).lower() for n in names)
    if given != expected:
        return False, f"significant holders: expected {expected}, got {given}"
    return True, ""


@domain_op("yfinance.check_holders_pct_change", kind="dynamic")
def check_holders_pct_change(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{TICKER: {"<holder> pctChange"}}`` (op_args ``ticker, holder``) within 0.00015."""
    ticker, holder = _arg(op_args, "ticker"), _arg(op_args, "holder")
    truth = holder_pct_change(ctx.seed, ticker, holder)
    given = _ticker_num(x, ticker, f"{holder} pctChange")
    return _close(given, truth, PCT_CHANGE_TOL, f"{ticker} {holder} pctChange", 4)


@domain_op("yfinance.check_holders_largest_pct_change", kind="dynamic")
def check_holders_largest_pct_change(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"company with largest positive increase in <holder>'s reported stake": TICKER}``
    (op_args ``tickers, holder``): the ticker where the holder's pctChange is largest
    (case-insensitive; upstream's rule, even when no change is positive)."""
    holder = _arg(op_args, "holder")
    changes = [(t, holder_pct_change(ctx.seed, t, holder)) for t in _arg(op_args, "tickers")]
    best = sorted(changes, key=lambda item: item[1])[-1][0]
    key = f"company with largest positive increase in {holder}'s reported stake"
    given = _key(x, key)
    if str(given).lower() == best.lower():
        return True, ""
    return False, f"{key}: expected {best}, got {given!r}"


@domain_op("yfinance.check_pct_values_with_durations", kind="dynamic")
def check_pct_values_with_durations(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"Date Reported": DDMMYYYY, "7-day percentage change", "30-day percentage
    change"}`` (op_args ``ticker``) against :func:`price_changes_after_report`: the date exactly,
    the changes within 0.055 points."""
    truth = price_changes_after_report(ctx.seed, _arg(op_args, "ticker"))
    given_date = str(_key(x, "Date Reported")).strip()
    if given_date != truth["Date Reported"]:
        return False, f"Date Reported: expected {truth['Date Reported']}, got {given_date}"
    for key in ("7-day percentage change", "30-day percentage change"):
        ok, why = _close(_num(_key(x, key), f"answer[{key!r}]"), truth[key], DURATION_TOL, key)
        if not ok:
            return ok, why
    return True, ""


@domain_op("yfinance.check_institutional_holding_values", kind="dynamic")
def check_institutional_holding_values(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"Date Reported": DDMMYYYY, "originally reported value", "calculated market
    value", "absolute difference"}`` (op_args ``ticker, holder``) against :func:`holding_values`
    with :data:`HOLDING_TOLS`."""
    truth = holding_values(ctx.seed, _arg(op_args, "ticker"), _arg(op_args, "holder"))
    given_date = str(_key(x, "Date Reported")).strip()
    if given_date != truth["Date Reported"]:
        return False, f"Date Reported: expected {truth['Date Reported']}, got {given_date}"
    for key, (rel, abs_) in HOLDING_TOLS.items():
        given = _num(_key(x, key), f"answer[{key!r}]")
        if not math.isclose(given, truth[key], rel_tol=rel, abs_tol=abs_):
            return False, f"{key}: expected about {truth[key]:,.2f}, got {given:,.2f}"
    return True, ""


# ---------------------------------------------------------------------------------------------
# Ops: screens and options
# ---------------------------------------------------------------------------------------------


@domain_op("yfinance.check_net_income_growth_task_output", kind="dynamic")
def check_net_income_growth_task_output(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"tickers": [...]}`` (op_args ``num_quarters, num_tickers``): that many distinct
    tickers, each with net income rising over its last ``num_quarters`` quarters."""
    n = int(_arg(op_args, "num_quarters"))
    for ticker in _tickers_list(x, int(_arg(op_args, "num_tickers"))):
        ok, why = net_income_growth(ctx.seed, ticker, n)
        if not ok:
            return False, f"net income growth: {why}"
    return True, ""


@domain_op("yfinance.check_dividend_consistency_task_output", kind="dynamic")
def check_dividend_consistency_task_output(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"tickers": [...]}`` (op_args ``num_tickers, min_years``): that many distinct
    tickers, each passing :func:`dividend_consistency`."""
    years = int(_arg(op_args, "min_years"))
    for ticker in _tickers_list(x, int(_arg(op_args, "num_tickers"))):
        ok, why = dividend_consistency(ctx.seed, ticker, years)
        if not ok:
            return False, f"dividend consistency over {years} years: {why}"
    return True, ""


@domain_op("yfinance.check_highest_iv_otm_call_task_output", kind="dynamic")
def check_highest_iv_otm_call_task_output(x: Any, value: Any, op_args: Any, ctx: EvalContext) -> Result:
    """Answer ``{"ticker", "expiration", "strike", "implied_volatility", "last_price", "bid",
    "ask", "in_the_money"}`` (op_args ``ticker``): the nearest expiration's out-of-the-money call
    with the highest implied volatility; numbers within 0.001, ``in_the_money`` a boolean equal
    to the truth."""
    ticker = _arg(op_args, "ticker")
    fields = (
        "ticker",
        "expiration",
        "strike",
        "implied_volatility",
        "last_price",
        "bid",
        "ask",
        "in_the_money",
    )
    for key in fields:
        _key(x, key)
    if x["ticker"] != ticker:
        return False, f"ticker: expected {ticker}, got {x['ticker']!r}"
    expiry = nearest_expiry(ctx.seed, ticker)
    if x["expiration"] != expiry:
        return False, f"expiration: expected the nearest, {expiry}, got {x['expiration']!r}"
    truth = highest_iv_otm_call(ctx.seed, ticker, expiry)
    for key in ("strike", "implied_volatility", "last_price", "bid", "ask"):
        ok, why = _close(_num(x[key], f"answer[{key!r}]"), truth[key], OPTION_TOL, key, 4)
        if not ok:
            return ok, why
    if x["in_the_money"] != truth["in_the_money"]:
        return False, f"in_the_money: expected {truth['in_the_money']}, got {x['in_the_money']!r}"
    return True, ""
