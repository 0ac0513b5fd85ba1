"""Finance: the nine yfinance tools of MCPEval's and MCP-Universe's finance domains (upstream: a
FastMCP server wrapping the ``yfinance`` library).

Tools (upstream names and parameters): ``get_historical_stock_prices(ticker, start_date,
end_date, interval="1d")``, ``get_stock_info(ticker)``, ``get_yahoo_finance_news(ticker)``,
``get_stock_actions(ticker)``, ``get_financial_statement(ticker, financial_type)``,
``get_holder_info(ticker, holder_type)``, ``get_option_expiration_dates(ticker)``,
``get_option_chain(ticker, expiration_date, option_type)``, ``get_recommendations(ticker,
recommendation_type, months_back=12)``. Results are JSON text in yfinance's ``to_json(orient=
"records")`` shapes (``[{"Date": "2025-06-02T00:00:00.000", "Open": ..., "Close": ...}]``), the
info dict, or news as ``Title/Summary/Description/URL`` text blocks, as upstream returns them.

Semantics: ``end_date`` is exclusive (yfinance's); intervals ``1d``, ``5d``, ``1wk``, ``1mo``
(intraday intervals are an error result: there is no intraday data offline); months-back for
upgrades/downgrades counts back from today (2025-06-05). Differences, deliberate: an unknown
ticker, an invalid statement/holder/recommendation type, an expiration date without options
and an option type other than calls/puts are error results (upstream returned the message as
ordinary text).

World: 10 fictional companies with business-day prices from 2023-01-03 to 2025-06-04 (seeded
random walks; weekends and a fixed holiday list missing), dividends and splits, 4 annual and
5 quarterly statements, holders, insider trades, analyst ratings, news and option chains.

Open world (``--open-world``, ``build_world(seed, open_world=True)``; MCP-Universe's tasks name
real tickers): besides the ten companies, any symbol matching :data:`TICKER_PATTERN` (1-6
letters or digits with at least one letter, upper-cased first, optionally a leading ``^`` and
a ``.``/``-`` class or exchange suffix of 1-3 letters or digits: ``MSFT``, ``BRK-B``,
``BF.B``, ``^GSPC``, ``0700.HK``) is a company generated on first use from (seed, symbol)
alone, so the same symbol has the same data whatever was asked before. Each has prices for
every NYSE trading day from 2014-01-02 to 2025-06-04 (:func:`nyse_holidays`), split-adjusted as
yfinance serves them (a split appears in ``Stock Splits`` and the actions, not as a jump),
quarterly dividends for most companies (some start late, skip a year or stop), annual and
quarterly statements with every line item MCP-Universe's evaluators read (``Total Revenue``,
``Gross Profit``, ``Research And Development``, ``Operating Income``, ``Net Income``, ``Net
Income Common Stockholders`` ...), ten institutional and ten mutual-fund holders (always
including ``Vanguard Group Inc``, ``Blackrock Inc.`` and ``State Street Corporation``, with
``Date Reported``, ``pctHeld``, ``Shares``, ``Value``, ``pctChange``) and option chains whose
implied volatility differs per strike. A symbol outside the pattern stays an error result;
without the flag the world and every result are exactly the closed world above.
"""

from __future__ import annotations

import json
import math
import random
import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from datetime import date, timedelta
from typing import Any, overload

from suites._common.mcp_servers._base import TODAY, BadRequest, days, make_server, parse_date, rng

__all__ = [
    "COMPANIES",
    "KNOWN_COMPANIES",
    "OPEN_START",
    "PriceRows",
    "TICKER_PATTERN",
    "build_server",
    "build_world",
    "close_on_or_before",
    "company",
    "history",
    "nyse_holidays",
]

COMPANIES = [
    ("NVLT", "Novalith Systems", "Technology", "Semiconductors", 182.0),
    ("BRKW", "Brookwater Utilities", "Utilities", "Utilities - Regulated Electric", 64.0),
    ("HLXA", "Helixa Therapeutics", "Healthcare", "Biotechnology", 48.0),
    ("CRSN", "Corsano Motors", "Consumer Cyclical", "Auto Manufacturers", 121.0),
    ("MDVL", "Meadowvale Foods", "Consumer Defensive", "Packaged Foods", 57.0),
    ("QNTM", "Quantum Ledger Bank", "Financial Services", "Banks - Regional", 39.0),
    ("SKYR", "Skyreach Airlines", "Industrials", "Airlines", 26.0),
    ("ORBT", "Orbital Cloud", "Technology", "Software - Infrastructure", 310.0),
    ("PTRA", "Petra Energy", "Energy", "Oil & Gas Integrated", 88.0),
    ("LUMN", "Lumen Retail Group", "Consumer Cyclical", "Specialty Retail", 73.0),
]
START = date(2023, 1, 3)
HOLIDAYS = {
    "2023-01-16",
    "2023-02-20",
    "2023-04-07",
    "2023-05-29",
    "2023-06-19",
    "2023-07-04",
    "2023-09-04",
    "2023-11-23",
    "2023-12-25",
    "2024-01-01",
    "2024-01-15",
    "2024-02-19",
    "2024-03-29",
    "2024-05-27",
    "2024-06-19",
    "2024-07-04",
    "2024-09-02",
    "2024-11-28",
    "2024-12-25",
    "2025-01-01",
    "2025-01-09",
    "2025-01-20",
    "2025-02-17",
    "2025-04-18",
    "2025-05-26",
}
FINANCIAL_TYPES = (
    "income_stmt",
    "quarterly_income_stmt",
    "balance_sheet",
    "quarterly_balance_sheet",
    "cashflow",
    "quarterly_cashflow",
)
HOLDER_TYPES = (
    "major_holders",
    "institutional_holders",
    "mutualfund_holders",
    "insider_transactions",
    "insider_purchases",
    "insider_roster_holders",
)
_FIRMS = [
    "Halvorsen Securities",
    "Pinecrest Capital",
    "Arbor & Lyle",
    "Northgate Research",
    "Summit Ridge Partners",
    "Keystone Equity",
    "Marlow Brothers",
    "Bayline Advisors",
]
_GRADES = [
    "Strong Buy",
    "Buy",
    "Outperform",
    "Overweight",
    "Neutral",
    "Hold",
    "Equal-Weight",
    "Underperform",
    "Sell",
]
_INSTITUTIONS = [
    "Granite Peak Advisors",
    "Tidewater Asset Management",
    "Blue Heron Investors",
    "Crestline Funds",
    "Evergreen Pension Trust",
    "Harborview Capital",
    "Ironbridge Partners",
    "Lakemont Holdings",
]
_FUNDS = [
    "Total Market Index Fund",
    "Growth Opportunities Fund",
    "Dividend Income Fund",
    "Mid Cap Value Fund",
    "Global Equity Fund",
    "Sector Select Fund",
]
_PEOPLE = ["Dana Whitlock", "Rafael Ostrow", "Mei Lindgren", "Tomasz Kale", "Priya Anand", "Gregory Thane"]
_ROLES = [
    "Chief Executive Officer",
    "Chief Financial Officer",
    "Director",
    "General Counsel",
    "Chief Operating Officer",
    "Director",
]
_NEWS = [
    "{name} beats quarterly revenue estimates",
    "{name} announces new share buyback program",
    "Analysts weigh {name}'s outlook after guidance update",
    "{name} names new chief operating officer",
    "{name} expands into new markets",
    "{name} shares move after sector rotation",
]

_TWO_PI = 2.0 * math.pi


def _day_bar(
    rand: Any, close: float, drift: float, vol: float, s_open: float, s_range: float
) -> tuple[float, float, float, float]:
    """One trading day's (open, close, high, low) from the previous close: four
    ``random.gauss`` draws written out (CPython's formula: two Box-Muller pairs, cos part
    first), so the draws and floats are those of ``r.gauss(0, s)`` called four times, at a
    fraction of the cost (a task's reference answer generates the companies it names)."""
    log, sqrt, cos, sin = math.log, math.sqrt, math.cos, math.sin
    x2pi = rand() * _TWO_PI
    g2rad = sqrt(-2.0 * log(1.0 - rand()))
    z_open, z_close = cos(x2pi) * g2rad, sin(x2pi) * g2rad
    x2pi = rand() * _TWO_PI
    g2rad = sqrt(-2.0 * log(1.0 - rand()))
    z_high, z_low = cos(x2pi) * g2rad, sin(x2pi) * g2rad
    open_ = close * (1 + (0 + z_open * s_open))
    close = max(1.0, close * math.exp(drift + z_close * vol))
    high = max(open_, close) * (1 + abs(0 + z_high * s_range))
    low = min(open_, close) * (1 - abs(0 + z_low * s_range))
    return open_, close, high, low


class PriceRows(Sequence[dict[str, Any]]):
    """A company's daily price rows, oldest first, kept as columns: each row is read as the
    dict yfinance's records have, made anew on each read, ``{"Date": "2025-06-02T00:00:00.000",
    "Open", "High", "Low", "Close"`` (floats), ``"Volume"`` (an int), ``"Dividends", "Stock
    Splits"`` (floats) ``}``, equal to the dict a list of rows held (the same floats, the same
    keys in the same order). About 56 bytes a row instead of about 600 as dicts: an open-world
    company's 2,870 rows take 0.16 MB, not 1.8 MB. Read-only once built (:meth:`add`).

    Args:
        dates: each row's ``"Date"`` text, in order (shared by the companies of a world; the
            open world's is :func:`_open_dates`, which a pickle names instead of copying).
    """

    __slots__ = ("_close", "_dates", "_dividends", "_high", "_low", "_open", "_splits", "_volume")

    def __init__(self, dates: list[str]) -> None:
        self._dates = dates
        self._open, self._high, self._low, self._close = array("d"), array("d"), array("d"), array("d")
        self._volume, self._dividends, self._splits = array("q"), array("d"), array("d")

    def add(self, open_: float, high: float, low: float, close: float, volume: int, dividends: float,
            splits: float) -> None:  # fmt: skip
        """Append the next day's row (its date is the next of ``dates``)."""
        self._open.append(open_)
        self._high.append(high)
        self._low.append(low)
        self._close.append(close)
        self._volume.append(volume)
        self._dividends.append(dividends)
        self._splits.append(splits)

    def __len__(self) -> int:
        return len(self._close)

    def _row(self, i: int) -> dict[str, Any]:
        return {"Date": self._dates[i], "Open": self._open[i], "High": self._high[i], "Low": self._low[i],
                "Close": self._close[i], "Volume": self._volume[i], "Dividends": self._dividends[i],
                "Stock Splits": self._splits[i]}  # fmt: skip

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("price row index out of range")
        return self._row(index)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        columns = (self._dates, self._open, self._high, self._low, self._close, self._volume,
                   self._dividends, self._splits)  # fmt: skip
        for d, o, h, lo, c, v, dv, s in zip(*columns, strict=False):
            yield {"Date": d, "Open": o, "High": h, "Low": lo, "Close": c, "Volume": v, "Dividends": dv,
                   "Stock Splits": s}  # fmt: skip

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PriceRows):
            return list(self) == list(other)
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # (equal to a list, which has none)

    def __repr__(self) -> str:
        return f"<PriceRows: {len(self)} rows>"

    def __reduce__(self) -> tuple[Any, ...]:
        dates: list[str] | None = None if self._dates is _OPEN_TS else self._dates
        return (_price_rows, (dates, (self._open, self._high, self._low, self._close, self._volume,
                                      self._dividends, self._splits)))


def _price_rows(dates: list[str] | None, columns: tuple[array, ...]) -> PriceRows:
    """Unpickle :class:`PriceRows` (``dates`` None: the open world's, :func:`_open_dates`)."""
    rows = PriceRows(_open_dates() if dates is None else dates)
    (rows._open, rows._high, rows._low, rows._close, rows._volume, rows._dividends, rows._splits) = columns
    return rows


def _trading_days() -> list[date]:
    return [d for d in days(START, TODAY) if d.weekday() < 5 and d.isoformat() not in HOLIDAYS]


def _ts(d: date) -> str:
    return f"{d.isoformat()}T00:00:00.000"


def build_world(seed: int, open_world: bool = False) -> dict[str, Any]:
    """``{"tickers": {symbol: company}}``; each company has ``prices`` (one OHLCV row per trading
    day, oldest first), ``actions``, ``statements``, ``holders``, ``recommendations``,
    ``upgrades_downgrades``, ``news``, ``options`` and ``info``.

    With ``open_world`` the dict also holds ``"open_world": True`` and ``"seed"``, and
    :func:`company` adds a generated company for any symbol of :data:`TICKER_PATTERN` on first
    use (module docstring); the ten fixed companies are the same either way."""
    if open_world:
        return {**build_world(seed), "open_world": True, "seed": seed}
    r = rng(seed, "finance")
    trading = _trading_days()
    trading_ts = [(d, _ts(d)) for d in trading]
    dates = [ts for _d, ts in trading_ts]  # the rows' "Date" texts, shared by the companies
    tickers: dict[str, Any] = {}
    for symbol, name, sector, industry, price0 in COMPANIES:
        drift, vol = r.uniform(-0.0002, 0.0009), r.uniform(0.012, 0.028)
        split_day = trading[r.randrange(150, len(trading) - 100)] if r.random() < 0.3 else None
        div = round(price0 * r.uniform(0.003, 0.008), 2) if r.random() < 0.7 else 0.0
        ex_days = (
            {d for d in trading if d.day <= 7 and d.month % 3 == 2 and d.weekday() == 3} if div else set()
        )
        close, prices, actions = price0, PriceRows(dates), []
        # r.gauss and r.randint written out, as in _open_company (same draws, same floats)
        if r.gauss_next is not None:  # never here (each company draws an even number of gauss)
            raise AssertionError("a pending gauss value would shift the draws")
        rand, below = r.random, r._randbelow
        s_open, s_range = vol / 3, vol / 2
        for d, ts in trading_ts:
            split = 0.0
            if d == split_day:
                close /= 2
                split = 2.0
            open_, close, high, low = _day_bar(rand, close, drift, vol, s_open, s_range)
            dividend = div if d in ex_days else 0.0
            prices.add(round(open_, 2), round(high, 2), round(low, 2), round(close, 2),
                       800_000 + below(39_200_001),  # r.randint(800_000, 40_000_000)
                       dividend, split)  # fmt: skip
            if dividend or split:
                actions.append({"Date": ts, "Dividends": dividend, "Stock Splits": split})
        shares = r.randint(200, 4000) * 1_000_000
        revenue = shares * prices[-1]["Close"] / r.uniform(2.0, 12.0)  # price-to-sales 2-12
        statements = _statements(r, revenue, shares)
        last = prices[-1]
        year_ago = _ts(TODAY - timedelta(days=365))
        year = [p for p in prices if p["Date"] >= year_ago]
        net_income = statements["income_stmt"][0]["Net Income"]
        eps = net_income / shares
        info = {
            "symbol": symbol,
            "shortName": name,
            "longName": f"{name} Inc.",
            "sector": sector,
            "industry": industry,
            "country": "United States",
            "currency": "USD",
            "exchange": r.choice(["NMS", "NYQ"]),
            "website": f"https://www.{name.split()[0].lower()}.example.com",
            "fullTimeEmployees": r.randint(800, 180_000),
            "longBusinessSummary": f"{name} operates in the {industry.lower()} industry, serving customers "
            "across North America, Europe and Asia.",
            "currentPrice": last["Close"],
            "previousClose": prices[-2]["Close"],
            "open": last["Open"],
            "dayHigh": last["High"],
            "dayLow": last["Low"],
            "volume": last["Volume"],
            "averageVolume": round(sum(p["Volume"] for p in prices[-60:]) / 60),
            "fiftyTwoWeekHigh": max(p["High"] for p in year),
            "fiftyTwoWeekLow": min(p["Low"] for p in year),
            "marketCap": round(shares * last["Close"]),
            "sharesOutstanding": shares,
            "trailingEps": round(eps, 2),
            "trailingPE": round(last["Close"] / eps, 2) if eps > 0 else None,
            "forwardPE": round(last["Close"] / (eps * r.uniform(1.0, 1.3)), 2) if eps > 0 else None,
            "dividendRate": round(div * 4, 2),
            "dividendYield": round(div * 4 / last["Close"] * 100, 2),
            "beta": round(r.uniform(0.4, 1.8), 2),
            "totalRevenue": statements["income_stmt"][0]["Total Revenue"],
            "grossMargins": round(
                statements["income_stmt"][0]["Gross Profit"] / statements["income_stmt"][0]["Total Revenue"],
                4,
            ),
            "operatingMargins": round(
                statements["income_stmt"][0]["Operating Income"]
                / statements["income_stmt"][0]["Total Revenue"],
                4,
            ),
            "profitMargins": round(net_income / statements["income_stmt"][0]["Total Revenue"], 4),
            "returnOnEquity": round(net_income / statements["balance_sheet"][0]["Stockholders Equity"], 4),
            "totalCash": statements["balance_sheet"][0]["Cash And Cash Equivalents"],
            "totalDebt": statements["balance_sheet"][0]["Total Debt"],
            "recommendationKey": r.choice(["buy", "hold", "strong_buy", "underperform"]),
            "numberOfAnalystOpinions": r.randint(6, 40),
            "targetMeanPrice": round(last["Close"] * r.uniform(0.85, 1.3), 2),
        }
        tickers[symbol] = {
            "name": name,
            "info": info,
            "prices": prices,
            "actions": actions,
            "statements": statements,
            "holders": _holders(r, shares, last["Close"]),
            "recommendations": _recommendations(r),
            "upgrades_downgrades": _upgrades(r, last["Close"]),
            "news": [
                {
                    "title": t.format(name=name),
                    "summary": f"{name} ({symbol}) "
                    + r.choice(
                        [
                            "reported results ahead of expectations.",
                            "updated investors on its strategy.",
                            "drew attention from analysts this week.",
                            "announced a leadership change.",
                        ]
                    ),
                    "description": "",
                    "url": f"https://finance.yahoo.com/news/{symbol.lower()}-{i}.html",
                }
                for i, t in enumerate(r.sample(_NEWS, 4))
            ],
            "options": _options(r, symbol, last["Close"], vol),
        }
    return {"tickers": tickers}


def _statements(r: Any, revenue: float, shares: int) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in FINANCIAL_TYPES}
    annual = [date(y, 12, 31) for y in (2024, 2023, 2022, 2021)]
    quarters = [
        date(2025, 3, 31),
        date(2024, 12, 31),
        date(2024, 9, 30),
        date(2024, 6, 30),
        date(2024, 3, 31),
    ]
    for prefix, periods, scale in (("", annual, 1.0), ("quarterly_", quarters, 0.25)):
        rev = revenue * scale
        for end in periods:
            gross = rev * r.uniform(0.3, 0.7)
            rnd = rev * r.uniform(0.02, 0.2)
            op = gross - rnd - rev * r.uniform(0.05, 0.15)
            net = op * r.uniform(0.6, 0.85)
            out[f"{prefix}income_stmt"].append(
                {
                    "date": end.isoformat(),
                    "Total Revenue": round(rev),
                    "Cost Of Revenue": round(rev - gross),
                    "Gross Profit": round(gross),
                    "Research And Development": round(rnd),
                    "Operating Income": round(op),
                    "EBITDA": round(op * r.uniform(1.1, 1.3)),
                    "Net Income": round(net),
                    "Basic EPS": round(net / shares, 2),
                    "Diluted EPS": round(net / shares * 0.98, 2),
                }
            )
            _balance_and_cashflow(r, out, prefix, end, rev, scale, net, shares, payout_base=net)
            rev *= r.uniform(0.85, 1.05)
    return out


def _balance_and_cashflow(
    r: Any,
    out: dict[str, list[dict[str, Any]]],
    prefix: str,
    end: date,
    rev: float,
    scale: float,
    net: float,
    shares: int,
    payout_base: float,
) -> None:
    """Append one period's row to ``out[prefix + "balance_sheet"]`` and to
    ``out[prefix + "cashflow"]`` (the part of the statements the closed and the open world
    build alike; ``prefix`` is ``""`` or ``"quarterly_"``).

    ``rev`` and ``net`` are the period's revenue and net income (dollars), ``scale`` the
    period's share of a year (1.0 annual, 0.25 quarterly: assets are annual-sized),
    ``payout_base`` what dividends and buybacks are a share of (the closed world passes
    ``net``, the open world ``abs(net)``). Six draws from ``r`` in a fixed order, with the
    arithmetic kept as it was: the closed world's data must not move by a byte.
    """
    assets = rev * r.uniform(1.2, 3.0) / scale
    liabilities = assets * r.uniform(0.3, 0.7)
    out[f"{prefix}balance_sheet"].append(
        {
            "date": end.isoformat(),
            "Total Assets": round(assets),
            "Total Liabilities Net Minority Interest": round(liabilities),
            "Stockholders Equity": round(assets - liabilities),
            "Current Assets": round(assets * 0.35),
            "Current Liabilities": round(liabilities * 0.4),
            "Cash And Cash Equivalents": round(assets * 0.1),
            "Total Debt": round(liabilities * 0.5),
            "Ordinary Shares Number": shares,
        }
    )
    ocf = net * r.uniform(1.0, 1.5)
    capex = -rev * r.uniform(0.03, 0.12)
    out[f"{prefix}cashflow"].append(
        {
            "date": end.isoformat(),
            "Operating Cash Flow": round(ocf),
            "Capital Expenditure": round(capex),
            "Free Cash Flow": round(ocf + capex),
            "Cash Dividends Paid": -round(payout_base * r.uniform(0, 0.4)),
            "Repurchase Of Capital Stock": -round(payout_base * r.uniform(0, 0.3)),
        }
    )


def _holders(r: Any, shares: int, price: float) -> dict[str, list[dict[str, Any]]]:
    inst = []
    for holder in r.sample(_INSTITUTIONS, 6):
        pct = round(r.uniform(0.01, 0.09), 4)
        inst.append(
            {
                "Date Reported": _ts(date(2025, 3, 31)),
                "Holder": holder,
                "pctHeld": pct,
                "Shares": round(shares * pct),
                "Value": round(shares * pct * price),
                "pctChange": round(r.uniform(-0.1, 0.1), 4),
            }
        )
    inst.sort(key=lambda h: -h["Shares"])
    funds = []
    for fund in r.sample(_FUNDS, 5):
        pct = round(r.uniform(0.003, 0.03), 4)
        funds.append(
            {
                "Date Reported": _ts(date(2025, 3, 31)),
                "Holder": fund,
                "pctHeld": pct,
                "Shares": round(shares * pct),
                "Value": round(shares * pct * price),
                "pctChange": round(r.uniform(-0.05, 0.08), 4),
            }
        )
    funds.sort(key=lambda h: -h["Shares"])
    trades, roster = [], []
    for person, role in zip(_PEOPLE, _ROLES, strict=True):
        n = r.randint(2_000, 90_000)
        when = TODAY - timedelta(days=r.randint(5, 170))
        sale = r.random() < 0.65
        trades.append(
            {
                "Shares": n,
                "Value": round(n * price * r.uniform(0.9, 1.1)),
                "URL": "",
                "Text": f"{'Sale' if sale else 'Purchase'} at price "
                f"{price * r.uniform(0.9, 1.1):.2f} per share.",
                "Insider": person.upper(),
                "Position": role,
                "Transaction": "Sale" if sale else "Purchase",
                "Start Date": _ts(when),
                "Ownership": r.choice(["D", "I"]),
            }
        )
        roster.append(
            {
                "Name": person.upper(),
                "Position": role,
                "URL": "",
                "Most Recent Transaction": "Sale" if sale else "Purchase",
                "Latest Transaction Date": _ts(when),
                "Shares Owned Directly": r.randint(10_000, 2_000_000),
                "Position Direct Date": _ts(when),
            }
        )
    trades.sort(key=lambda t: t["Start Date"], reverse=True)
    bought = sum(t["Shares"] for t in trades if t["Transaction"] == "Purchase")
    sold = sum(t["Shares"] for t in trades if t["Transaction"] == "Sale")
    purchases = [
        {
            "Insider Purchases Last 6m": "Purchases",
            "Shares": bought,
            "Trans": sum(t["Transaction"] == "Purchase" for t in trades),
        },
        {
            "Insider Purchases Last 6m": "Sales",
            "Shares": sold,
            "Trans": sum(t["Transaction"] == "Sale" for t in trades),
        },
        {
            "Insider Purchases Last 6m": "Net Shares Purchased (Sold)",
            "Shares": bought - sold,
            "Trans": len(trades),
        },
    ]
    insiders = round(r.uniform(0.001, 0.08), 5)
    institutions = round(r.uniform(0.45, 0.85), 5)
    major = [
        {"metric": "insidersPercentHeld", "Value": insiders},
        {"metric": "institutionsPercentHeld", "Value": institutions},
        {"metric": "institutionsFloatPercentHeld", "Value": round(institutions / (1 - insiders), 5)},
        {"metric": "institutionsCount", "Value": r.randint(300, 4000)},
    ]
    return {
        "major_holders": major,
        "institutional_holders": inst,
        "mutualfund_holders": funds,
        "insider_transactions": trades,
        "insider_purchases": purchases,
        "insider_roster_holders": roster,
    }


def _recommendations(r: Any) -> list[dict[str, Any]]:
    return [
        {
            "period": p,
            "strongBuy": r.randint(0, 10),
            "buy": r.randint(2, 18),
            "hold": r.randint(2, 15),
            "sell": r.randint(0, 4),
            "strongSell": r.randint(0, 2),
        }
        for p in ("0m", "-1m", "-2m", "-3m")
    ]


def _upgrades(r: Any, price: float) -> list[dict[str, Any]]:
    rows = []
    for firm in _FIRMS:
        for _ in range(r.randint(1, 3)):
            when = TODAY - timedelta(days=r.randint(3, 700))
            old, new = r.sample(_GRADES, 2)
            action = "up" if _GRADES.index(new) < _GRADES.index(old) else "down"
            prior = round(price * r.uniform(0.7, 1.2), 0)
            rows.append(
                {
                    "GradeDate": f"{when.isoformat()}T00:00:00.000",
                    "Firm": firm,
                    "ToGrade": new,
                    "FromGrade": old,
                    "Action": action,
                    "priceTargetAction": "Raises" if action == "up" else "Lowers",
                    "currentPriceTarget": round(prior * (1.1 if action == "up" else 0.9), 0),
                    "priorPriceTarget": prior,
                }
            )
    rows.sort(key=lambda x: x["GradeDate"], reverse=True)
    return rows


def _norm_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _options(r: Any, symbol: str, spot: float, vol: float) -> dict[str, dict[str, list[dict[str, Any]]]]:
    fridays = [TODAY + timedelta(days=(4 - TODAY.weekday()) % 7 + 7 * k) for k in range(6)]
    fridays += [date(2025, 9, 19), date(2025, 12, 19)]
    step = 1.0 if spot < 50 else 5.0 if spot < 200 else 10.0
    center = round(spot / step) * step
    sigma_base = vol * math.sqrt(252)
    chains = {}
    for exp in fridays:
        t = max((exp - TODAY).days, 1) / 365
        calls, puts = [], []
        for k in range(-6, 7):
            strike = center + k * step
            if strike <= 0:
                continue
            sigma = sigma_base * (1 + 0.1 * abs(k) / 6)
            d1 = (math.log(spot / strike) + 0.5 * sigma**2 * t) / (sigma * math.sqrt(t))
            d2 = d1 - sigma * math.sqrt(t)
            call = spot * _norm_cdf(d1) - strike * _norm_cdf(d2)
            put = call - spot + strike
            for kind, value, rows in (("C", call, calls), ("P", put, puts)):
                value = max(0.01, value)
                code = f"{symbol}{exp.strftime('%y%m%d')}{kind}{int(strike * 1000):08d}"
                rows.append(
                    {
                        "contractSymbol": code,
                        "lastTradeDate": f"{(TODAY - timedelta(days=1)).isoformat()}T19:59:00.000",
                        "strike": strike,
                        "lastPrice": round(value, 2),
                        "bid": round(value * 0.97, 2),
                        "ask": round(value * 1.03, 2),
                        "change": round(r.uniform(-0.5, 0.5), 2),
                        "percentChange": round(r.uniform(-8, 8), 2),
                        "volume": r.randint(0, 5000),
                        "openInterest": r.randint(0, 20000),
                        "impliedVolatility": round(sigma, 4),
                        "inTheMoney": strike < spot if kind == "C" else strike > spot,
                        "contractSize": "REGULAR",
                        "currency": "USD",
                    }
                )
        chains[exp.isoformat()] = {"calls": calls, "puts": puts}
    return chains


# ---------------------------------------------------------------------------------------------
# Open world: a company for any real-looking ticker, generated from (seed, symbol)
# ---------------------------------------------------------------------------------------------

TICKER_PATTERN = re.compile(r"^\^?[A-Z0-9]{1,6}(?:[.-][A-Z0-9]{1,3})?$")
"""Symbols an open world generates (after upper-casing; at least one letter besides)."""

OPEN_START = date(2014, 1, 2)
"""First trading day of an open-world company's price history."""

OPEN_QUARTERS = [
    date(2025, 3, 31),
    date(2024, 12, 31),
    date(2024, 9, 30),
    date(2024, 6, 30),
    date(2024, 3, 31),
]
"""Quarter ends of an open-world company's quarterly statements, newest first."""

KNOWN_COMPANIES = {
    "AAPL": ("Apple Inc.", "Technology", "Consumer Electronics"),
    "MSFT": ("Microsoft Corporation", "Technology", "Software - Infrastructure"),
    "GOOGL": ("Alphabet Inc.", "Communication Services", "Internet Content & Information"),
    "GOOG": ("Alphabet Inc.", "Communication Services", "Internet Content & Information"),
    "AMZN": ("Amazon.com, Inc.", "Consumer Cyclical", "Internet Retail"),
    "META": ("Meta Platforms, Inc.", "Communication Services", "Internet Content & Information"),
    "NVDA": ("NVIDIA Corporation", "Technology", "Semiconductors"),
    "AMD": ("Advanced Micro Devices, Inc.", "Technology", "Semiconductors"),
    "INTC": ("Intel Corporation", "Technology", "Semiconductors"),
    "TSLA": ("Tesla, Inc.", "Consumer Cyclical", "Auto Manufacturers"),
    "CRM": ("Salesforce, Inc.", "Technology", "Software - Application"),
    "ORCL": ("Oracle Corporation", "Technology", "Software - Infrastructure"),
    "IBM": ("International Business Machines Corporation", "Technology", "Information Technology Services"),
    "CSCO": ("Cisco Systems, Inc.", "Technology", "Communication Equipment"),
    "ADBE": ("Adobe Inc.", "Technology", "Software - Application"),
    "NFLX": ("Netflix, Inc.", "Communication Services", "Entertainment"),
    "JPM": ("JPMorgan Chase & Co.", "Financial Services", "Banks - Diversified"),
    "BAC": ("Bank of America Corporation", "Financial Services", "Banks - Diversified"),
    "GS": ("The Goldman Sachs Group, Inc.", "Financial Services", "Capital Markets"),
    "V": ("Visa Inc.", "Financial Services", "Credit Services"),
    "MA": ("Mastercard Incorporated", "Financial Services", "Credit Services"),
    "BRK-B": ("Berkshire Hathaway Inc.", "Financial Services", "Insurance - Diversified"),
    "JNJ": ("Johnson & Johnson", "Healthcare", "Drug Manufacturers - General"),
    "PFE": ("Pfizer Inc.", "Healthcare", "Drug Manufacturers - General"),
    "MRK": ("Merck & Co., Inc.", "Healthcare", "Drug Manufacturers - General"),
    "UNH": ("UnitedHealth Group Incorporated", "Healthcare", "Healthcare Plans"),
    "KO": ("The Coca-Cola Company", "Consumer Defensive", "Beverages - Non-Alcoholic"),
    "PEP": ("PepsiCo, Inc.", "Consumer Defensive", "Beverages - Non-Alcoholic"),
    "PG": ("The Procter & Gamble Company", "Consumer Defensive", "Household & Personal Products"),
    "WMT": ("Walmart Inc.", "Consumer Defensive", "Discount Stores"),
    "COST": ("Costco Wholesale Corporation", "Consumer Defensive", "Discount Stores"),
    "MCD": ("McDonald's Corporation", "Consumer Cyclical", "Restaurants"),
    "HD": ("The Home Depot, Inc.", "Consumer Cyclical", "Home Improvement Retail"),
    "NKE": ("NIKE, Inc.", "Consumer Cyclical", "Footwear & Accessories"),
    "DIS": ("The Walt Disney Company", "Communication Services", "Entertainment"),
    "T": ("AT&T Inc.", "Communication Services", "Telecom Services"),
    "VZ": ("Verizon Communications Inc.", "Communication Services", "Telecom Services"),
    "XOM": ("Exxon Mobil Corporation", "Energy", "Oil & Gas Integrated"),
    "CVX": ("Chevron Corporation", "Energy", "Oil & Gas Integrated"),
    "CAT": ("Caterpillar Inc.", "Industrials", "Farm & Heavy Construction Machinery"),
    "BA": ("The Boeing Company", "Industrials", "Aerospace & Defense"),
    "MMM": ("3M Company", "Industrials", "Conglomerates"),
}
"""Names, sectors and industries of well-known symbols (public facts; every figure is generated)."""

_BIG_HOLDERS = [
    ("Vanguard Group Inc", 0.075, 0.10),
    ("Blackrock Inc.", 0.045, 0.08),
    ("State Street Corporation", 0.03, 0.055),
]
_OTHER_HOLDERS = [
    "FMR, LLC",
    "Geode Capital Management, LLC",
    "Morgan Stanley",
    "JPMORGAN CHASE & CO",
    "Price (T.Rowe) Associates Inc",
    "Northern Trust Corporation",
    "Bank of America Corporation",
    "Capital World Investors",
    "Capital Research Global Investors",
    "Norges Bank Investment Management",
    "Wellington Management Group, LLP",
    "Invesco Ltd.",
    "Charles Schwab Investment Management, Inc.",
    "UBS Group AG",
    "Goldman Sachs Group Inc",
    "Berkshire Hathaway, Inc",
]
_OPEN_FUNDS = [
    "Vanguard Total Stock Market Index Fund",
    "Vanguard 500 Index Fund",
    "Fidelity 500 Index Fund",
    "SPDR S&P 500 ETF Trust",
    "iShares Core S&P 500 ETF",
    "Invesco QQQ Trust, Series 1",
    "Vanguard Growth Index Fund",
    "Vanguard Institutional Index Fund",
    "Select Sector SPDR Fund",
    "American Funds Growth Fund of America",
    "Vanguard Value Index Fund",
    "iShares Russell 1000 Growth ETF",
]


def _easter(year: int) -> date:
    """Gregorian Easter Sunday (the anonymous algorithm, Meeus, *Astronomical Algorithms*)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 19 * l_) // 433
    month = (h + l_ - 7 * m + 90) // 25
    return date(year, month, (h + l_ - 7 * m + 33 * month + 19) % 32)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The n-th (1-based; -1 = last) given weekday of a month."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (date(year + month // 12, month % 12 + 1, 1)) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def nyse_holidays(year: int) -> set[date]:
    """The NYSE's full-day closures of a year, by its rules: New Year's Day (a Sunday moves to
    Monday; a Saturday is not made up), Martin Luther King Jr. Day, Washington's Birthday, Good
    Friday, Memorial Day, Juneteenth (from 2022), Independence Day, Labor Day, Thanksgiving and
    Christmas (a Saturday moves to Friday, a Sunday to Monday), and the days of mourning
    2018-12-05 and 2025-01-09. Agrees with :data:`HOLIDAYS` from 2023-01-03 on."""

    def observed(d: date) -> date:
        return d - timedelta(days=1) if d.weekday() == 5 else d + timedelta(days=1) if d.weekday() == 6 else d

    out = {
        _nth_weekday(year, 1, 0, 3),
        _nth_weekday(year, 2, 0, 3),
        _easter(year) - timedelta(days=2),
        _nth_weekday(year, 5, 0, -1),
        observed(date(year, 7, 4)),
        _nth_weekday(year, 9, 0, 1),
        _nth_weekday(year, 11, 3, 4),
        observed(date(year, 12, 25)),
    }
    new_year = date(year, 1, 1)
    if new_year.weekday() != 5:
        out.add(observed(new_year))
    if year >= 2022:
        out.add(observed(date(year, 6, 19)))
    out |= {d for d in (date(2018, 12, 5), date(2025, 1, 9)) if d.year == year}
    return out


def _open_trading_days() -> list[date]:
    closed = set().union(*(nyse_holidays(y) for y in range(OPEN_START.year, TODAY.year + 1)))
    return [d for d in days(OPEN_START, TODAY) if d.weekday() < 5 and d not in closed]


_OPEN_DAYS: list[date] = []
_OPEN_DAY_ROWS: list[tuple[date, str, int, int, int]] = []
_OPEN_TS: list[str] = []


def _open_days() -> list[date]:
    if not _OPEN_DAYS:
        _OPEN_DAYS.extend(_open_trading_days())
    return _OPEN_DAYS


def _open_day_rows() -> list[tuple[date, str, int, int, int]]:
    """``(day, its "Date" text, year, month, day of month)`` per open-world trading day, made
    once per process: every generated company's rows share the same date strings."""
    if not _OPEN_DAY_ROWS:
        _OPEN_DAY_ROWS.extend((d, _ts(d), d.year, d.month, d.day) for d in _open_days())
    return _OPEN_DAY_ROWS


def _open_dates() -> list[str]:
    """The ``"Date"`` text of every open-world trading day, made once per process: the rows
    of every generated company (:class:`PriceRows`) share it."""
    if not _OPEN_TS:
        _OPEN_TS.extend(row[1] for row in _open_day_rows())
    return _OPEN_TS


def close_on_or_before(company: dict[str, Any], day: date) -> tuple[date, float] | None:
    """The last trading day on or before ``day`` and its close, or None before the history.

    This is the non-trading-day rule of MCP-Universe's finance checks (a weekend or holiday
    takes the previous trading day's close), as yfinance's forward fill gives it."""
    i = bisect_right(company["prices"], day.isoformat(), key=lambda p: p["Date"][:10])
    if i == 0:
        return None
    row = company["prices"][i - 1]
    return date.fromisoformat(row["Date"][:10]), row["Close"]


def _open_company(seed: int, symbol: str) -> dict[str, Any]:
    """One open-world company, from (seed, symbol) alone (module docstring)."""
    r = random.Random(f"egi-mcp:finance-open:{seed}:{symbol}")
    name, sector, industry = KNOWN_COMPANIES.get(symbol) or (
        f"{symbol.lstrip('^')} Holdings",
        r.choice(["Technology", "Industrials", "Healthcare", "Financial Services", "Consumer Cyclical"]),
        "Diversified",
    )
    trading = _open_days()
    drift, vol = r.uniform(-0.0001, 0.0008), r.uniform(0.011, 0.026)
    price = r.uniform(15.0, 250.0)
    # Dividends: quarterly in months offset+0/3/6/9, from first_year; a skipped year or a stop.
    pays = r.random() < 0.7
    first_year = 2014 if r.random() < 0.55 else r.randint(2015, 2023)
    skipped = r.randint(first_year + 1, 2024) if pays and r.random() < 0.15 and first_year < 2024 else None
    stop_year = (
        r.randint(first_year + 3, 2024) if pays and r.random() < 0.1 and first_year + 3 <= 2024 else None
    )
    months = {m for m in range(1 + r.randint(0, 2), 13, 3)}
    pay_day = r.randint(3, 20)
    quarter_yield = r.uniform(0.0015, 0.009)
    base_dividend = max(0.01, round(price * quarter_yield, 2))
    split_day = trading[r.randrange(500, len(trading) - 60)] if r.random() < 0.25 else None
    split_ratio = float(r.choice([2, 2, 3, 4])) if split_day else 0.0
    close, prices, actions = price, PriceRows(_open_dates()), []
    paid: set[tuple[int, int]] = set()
    # The loop below is ``r.gauss`` and ``r.randint`` written out (CPython's own formulas, the
    # same draws in the same order, so the same floats): per day four gauss values, made as
    # two Box-Muller pairs (cos part first), then one volume. About 3x faster than the calls,
    # which matters because a task's reference answer generates the companies it names.
    if r.gauss_next is not None:  # never here (no gauss drawn before); keep r.gauss exact
        raise AssertionError("a pending gauss value would shift the draws")
    rand, below = r.random, r._randbelow
    s_open, s_range = vol / 3, vol / 2
    add = prices.add
    for d, ts, year, month, mday in _open_day_rows():
        open_, close, high, low = _day_bar(rand, close, drift, vol, s_open, s_range)
        dividend = 0.0
        if (
            pays
            and month in months
            and mday >= pay_day
            and (year, month) not in paid
            and first_year <= year != skipped
            and (stop_year is None or year <= stop_year)
        ):
            paid.add((year, month))
            dividend = round(base_dividend * 1.05 ** (year - first_year), 2)
        split = split_ratio if d == split_day else 0.0
        add(round(open_, 2), round(high, 2), round(low, 2), round(close, 2),
            1_000_000 + below(89_000_001),  # r.randint(1_000_000, 90_000_000)
            dividend, split)  # fmt: skip
        if dividend or split:
            actions.append({"Date": ts, "Dividends": dividend, "Stock Splits": split})
    last = prices[-1]
    shares = r.randint(150, 6_000) * 1_000_000
    revenue = shares * last["Close"] / r.uniform(2.0, 12.0)
    statements = _open_statements(r, revenue, shares)
    found: dict[str, Any] = {"name": name, "prices": prices, "actions": actions, "statements": statements}
    found["holders"] = _open_holders(r, found, shares)
    year_ago = _ts(TODAY - timedelta(days=365))
    year = [p for p in prices if p["Date"] >= year_ago]
    income = statements["income_stmt"][0]
    eps = income["Net Income"] / shares
    dividend_rate = round(
        sum(a["Dividends"] for a in actions if a["Date"] >= year_ago), 2
    )
    found["info"] = {
        "symbol": symbol,
        "shortName": name,
        "longName": name,
        "sector": sector,
        "industry": industry,
        "country": "United States",
        "currency": "USD",
        "exchange": r.choice(["NMS", "NYQ"]),
        "fullTimeEmployees": r.randint(2_000, 400_000),
        "currentPrice": last["Close"],
        "previousClose": prices[-2]["Close"],
        "open": last["Open"],
        "dayHigh": last["High"],
        "dayLow": last["Low"],
        "volume": last["Volume"],
        "averageVolume": round(sum(p["Volume"] for p in prices[-60:]) / 60),
        "fiftyTwoWeekHigh": max(p["High"] for p in year),
        "fiftyTwoWeekLow": min(p["Low"] for p in year),
        "marketCap": round(shares * last["Close"]),
        "sharesOutstanding": shares,
        "trailingEps": round(eps, 2),
        "trailingPE": round(last["Close"] / eps, 2) if eps > 0 else None,
        "dividendRate": dividend_rate,
        "dividendYield": round(dividend_rate / last["Close"] * 100, 2),
        "beta": round(r.uniform(0.4, 1.8), 2),
        "totalRevenue": income["Total Revenue"],
        "grossMargins": round(income["Gross Profit"] / income["Total Revenue"], 4),
        "operatingMargins": round(income["Operating Income"] / income["Total Revenue"], 4),
        "profitMargins": round(income["Net Income"] / income["Total Revenue"], 4),
        "recommendationKey": r.choice(["buy", "hold", "strong_buy", "underperform"]),
        "numberOfAnalystOpinions": r.randint(6, 50),
        "targetMeanPrice": round(last["Close"] * r.uniform(0.85, 1.3), 2),
    }
    found["recommendations"] = _recommendations(r)
    found["upgrades_downgrades"] = _upgrades(r, last["Close"])
    found["news"] = [
        {
            "title": t.format(name=name),
            "summary": f"{name} ({symbol}) drew attention from analysts this week.",
            "description": "",
            "url": f"https://finance.yahoo.com/news/{symbol.lower()}-{i}.html",
        }
        for i, t in enumerate(r.sample(_NEWS, 4))
    ]
    found["options"] = _open_options(r, symbol, last["Close"], vol)
    return found


def _open_statements(r: random.Random, revenue: float, shares: int) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in FINANCIAL_TYPES}
    fy_month = r.choice([12, 12, 12, 12, 9, 6, 3])
    fy_last = date(2025 if fy_month <= 3 else 2024, fy_month, 1)
    fy_ends = [_month_end(fy_last.replace(year=fy_last.year - k)) for k in range(4)]
    rd_ratio, sga_ratio = r.uniform(0.01, 0.18), r.uniform(0.04, 0.15)
    gross_margin = max(r.uniform(0.3, 0.75), rd_ratio + sga_ratio + r.uniform(-0.02, 0.2))
    preferred = r.uniform(0.005, 0.03) if r.random() < 0.25 else 0.0
    growth = r.uniform(-0.06, 0.1)
    for prefix, periods, scale, step in (
        ("", fy_ends, 1.0, growth * 4),
        ("quarterly_", OPEN_QUARTERS, 0.25, growth),
    ):
        rev = revenue * scale
        for end in periods:
            gross = rev * max(0.05, gross_margin + r.uniform(-0.03, 0.03))
            rnd = rev * max(0.003, rd_ratio + r.uniform(-0.01, 0.01))
            sga = rev * sga_ratio
            op = gross - rnd - sga
            pretax = op * r.uniform(0.92, 1.05)
            tax = max(0.0, pretax * 0.18)
            net = pretax - tax
            out[f"{prefix}income_stmt"].append(
                {
                    "date": end.isoformat(),
                    "Total Revenue": round(rev),
                    "Cost Of Revenue": round(rev - gross),
                    "Gross Profit": round(gross),
                    "Research And Development": round(rnd),
                    "Selling General And Administration": round(sga),
                    "Operating Expense": round(rnd + sga),
                    "Operating Income": round(op),
                    "EBIT": round(pretax),
                    "EBITDA": round(pretax * r.uniform(1.1, 1.3)),
                    "Pretax Income": round(pretax),
                    "Tax Provision": round(tax),
                    "Net Income": round(net),
                    "Net Income Common Stockholders": round(net - abs(net) * preferred),
                    "Basic EPS": round(net / shares, 2),
                    "Diluted EPS": round(net / shares * 0.99, 2),
                }
            )
            _balance_and_cashflow(r, out, prefix, end, rev, scale, net, shares, payout_base=abs(net))
            rev /= (1 + step) * r.uniform(0.97, 1.03)  # going back in time
    return out


def _month_end(first: date) -> date:
    return date(first.year + first.month // 12, first.month % 12 + 1, 1) - timedelta(days=1)


def _open_holders(r: random.Random, found: dict[str, Any], shares: int) -> dict[str, list[dict[str, Any]]]:
    price = found["prices"][-1]["Close"]
    holders = _holders(r, shares, price)  # insiders, major holders (institutional rows replaced)
    reported = date(2025, 3, 31) if r.random() < 0.7 else date(2024, 12, 31)
    earlier = _month_end(date(reported.year, reported.month, 1) - timedelta(days=80))

    def rows(names: list[tuple[str, float, float]], dated: bool) -> list[dict[str, Any]]:
        out = []
        for holder, lo, hi in names:
            when = earlier if dated and r.random() < 0.2 else reported
            pct = round(r.uniform(lo, hi), 4)
            held = round(shares * pct)
            close = close_on_or_before(found, when)
            assert close is not None
            out.append(
                {
                    "Date Reported": _ts(when),
                    "Holder": holder,
                    "pctHeld": pct,
                    "Shares": held,
                    "Value": round(held * close[1] * r.uniform(0.97, 1.03)),
                    "pctChange": round(r.uniform(-0.08, 0.12), 4),
                }
            )
        out.sort(key=lambda h: -h["Shares"])
        return out

    big = [(h, lo, hi) for h, lo, hi in _BIG_HOLDERS]
    others = [(h, 0.004, 0.03) for h in r.sample(_OTHER_HOLDERS, 7)]
    if r.random() < 0.2:
        others[0] = (others[0][0], 0.05, 0.07)
    holders["institutional_holders"] = rows(big[:1], False) + rows(big[1:] + others, True)
    holders["institutional_holders"].sort(key=lambda h: -h["Shares"])
    holders["mutualfund_holders"] = rows([(f, 0.004, 0.035) for f in r.sample(_OPEN_FUNDS, 10)], True)
    return holders


def _open_options(
    r: random.Random, symbol: str, spot: float, vol: float
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    fridays = [TODAY + timedelta(days=(4 - TODAY.weekday()) % 7 + 7 * k) for k in range(4)]
    fridays += [
        date(2025, 7, 18),
        date(2025, 8, 15),
        date(2025, 9, 19),
        date(2025, 12, 19),
        date(2026, 1, 16),
    ]
    step = 1.0 if spot < 50 else 2.5 if spot < 100 else 5.0 if spot < 300 else 10.0
    center = round(spot / step) * step
    sigma_base = vol * math.sqrt(252)
    chains = {}
    for exp in fridays:
        t = max((exp - TODAY).days, 1) / 365
        calls, puts = [], []
        for k in range(-8, 9):
            strike = round(center + k * step, 2)
            if strike <= 0:
                continue
            sigma = sigma_base * (1 + 0.08 * abs(k) / 8 + (0.05 if k < 0 else 0)) + r.uniform(-0.04, 0.04)
            sigma = max(0.05, sigma)
            d1 = (math.log(spot / strike) + 0.5 * sigma**2 * t) / (sigma * math.sqrt(t))
            d2 = d1 - sigma * math.sqrt(t)
            call = spot * _norm_cdf(d1) - strike * _norm_cdf(d2)
            put = call - spot + strike
            for kind, value, rows in (("C", call, calls), ("P", put, puts)):
                value = max(0.01, value)
                code = f"{symbol.lstrip('^')}{exp.strftime('%y%m%d')}{kind}{int(strike * 1000):08d}"
                rows.append(
                    {
                        "contractSymbol": code,
                        "lastTradeDate": f"{(TODAY - timedelta(days=1)).isoformat()}T19:59:00.000",
                        "strike": strike,
                        "lastPrice": round(value, 2),
                        "bid": round(value * 0.97, 2),
                        "ask": round(value * 1.03, 2),
                        "change": round(r.uniform(-0.5, 0.5), 2),
                        "percentChange": round(r.uniform(-8, 8), 2),
                        "volume": r.randint(0, 5000),
                        "openInterest": r.randint(0, 20000),
                        "impliedVolatility": round(sigma + r.uniform(-0.01, 0.01) * (kind == "P"), 4),
                        "inTheMoney": strike < spot if kind == "C" else strike > spot,
                        "contractSize": "REGULAR",
                        "currency": "USD",
                    }
                )
        chains[exp.isoformat()] = {"calls": calls, "puts": puts}
    return chains


OPEN_COMPANIES_KEPT = 8
"""Generated companies an open world keeps, the most recently used (:func:`company`). Each is
about 0.5 MB (a row per trading day since 2014, kept as columns: :class:`PriceRows`; 1.5 MB
when the rows were dicts): without a bound, the finance server of an MCP-Universe run, and a
worker running its financial tasks, grew by one company per ticker named."""

PACKED_COMPANIES_KEPT = 256
"""Generated companies let go by :func:`company` that an open world keeps packed (pickled,
then zlib level 1: about 75 KB each instead of 0.5 MB), so naming one again unpacks it
(about 3 ms) instead of generating it again (about 20 ms; the quick profile's financial
tasks name 42 tickers 145 times). Beyond this many, the least recently packed are dropped and
generated again, the same, from (seed, symbol) alone."""

_FIXED = frozenset(c[0] for c in COMPANIES)


def company(world: dict[str, Any], ticker: str) -> dict[str, Any]:
    """The company of ``ticker`` (case-insensitive); in an open world a symbol matching
    :data:`TICKER_PATTERN` is generated on first use and kept in ``world["tickers"]``, the
    generated ones bounded to the :data:`OPEN_COMPANIES_KEPT` most recently used (last in
    the dict); one let go is kept packed (``world["packed"]``, :data:`PACKED_COMPANIES_KEPT`)
    and unpacked, equal to a new generation, when named again. The data is read-only.

    Raises:
        BadRequest: an unknown ticker (closed world) or a symbol outside the pattern.
    """
    symbol = str(ticker).strip().upper()
    tickers = world["tickers"]
    found = tickers.get(symbol)
    open_world = bool(world.get("open_world"))
    if found is None and open_world and TICKER_PATTERN.match(symbol) and re.search("[A-Z]", symbol):
        import pickle
        import zlib

        blob = world.get("packed", {}).get(symbol)  # kept: letting it go again needs no packing
        if blob is not None:
            found = pickle.loads(zlib.decompress(blob))
        else:
            found = _open_company(world["seed"], symbol)
        tickers[symbol] = found
    if found is None:
        raise BadRequest(f"Company ticker {ticker} not found.")
    if open_world and symbol not in _FIXED:
        tickers[symbol] = tickers.pop(symbol)  # the most recently used last
        generated = [s for s in tickers if s not in _FIXED]
        for old in generated[: max(0, len(generated) - OPEN_COMPANIES_KEPT)]:
            _let_go(world, old, tickers.pop(old))
    return found


def _let_go(world: dict[str, Any], symbol: str, found: dict[str, Any]) -> None:
    """Keep a generated company let go by :func:`company` packed in ``world["packed"]``."""
    import pickle
    import zlib

    packed: dict[str, bytes] = world.setdefault("packed", {})
    if symbol in packed:  # packed when let go before
        packed[symbol] = packed.pop(symbol)  # the most recently used last
        return
    try:
        packed[symbol] = zlib.compress(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL), 1)
    except (pickle.PicklingError, TypeError):  # plain data: not expected
        return
    while len(packed) > PACKED_COMPANIES_KEPT:
        del packed[next(iter(packed))]


_company = company


def history(
    world: dict[str, Any], ticker: str, start_date: str, end_date: str, interval: str = "1d"
) -> list[dict[str, Any]]:
    """Price rows from ``start_date`` (inclusive) to ``end_date`` (exclusive), aggregated to the interval."""
    company = _company(world, ticker)
    lo, hi = parse_date(start_date, "start_date"), parse_date(end_date, "end_date")
    if hi <= lo:
        raise BadRequest(f"end_date ({end_date}) must be after start_date ({start_date})")
    rows = [p for p in company["prices"] if _ts(lo) <= p["Date"] < _ts(hi)]
    if interval == "1d":
        return rows
    if interval not in ("5d", "1wk", "1mo"):
        raise BadRequest(
            f"interval {interval!r} is not available; use one of 1d, 5d, 1wk, 1mo "
            "(no intraday data in this dataset)"
        )

    def bucket(i: int, row: dict[str, Any]) -> str:
        d = date.fromisoformat(row["Date"][:10])
        if interval == "1mo":
            return d.replace(day=1).isoformat()
        if interval == "1wk":
            return (d - timedelta(days=d.weekday())).isoformat()
        return rows[i - i % 5]["Date"][:10]  # 5d: runs of five trading days

    groups: dict[str, list[dict[str, Any]]] = {}
    for i, row in enumerate(rows):
        groups.setdefault(bucket(i, row), []).append(row)
    return [
        {
            "Date": f"{key}T00:00:00.000",
            "Open": g[0]["Open"],
            "High": max(x["High"] for x in g),
            "Low": min(x["Low"] for x in g),
            "Close": g[-1]["Close"],
            "Volume": sum(x["Volume"] for x in g),
            "Dividends": round(sum(x["Dividends"] for x in g), 2),
            "Stock Splits": max(x["Stock Splits"] for x in g),
        }
        for key, g in groups.items()
    ]


def build_server(seed: int, open_world: bool = False) -> Any:
    """Finance (yfinance-style) MCP server over a seeded synthetic market."""
    world = build_world(seed, open_world=open_world)

    def get_historical_stock_prices(ticker: str, start_date: str, end_date: str, interval: str = "1d") -> str:
        """Get historical stock prices for a given ticker symbol from yahoo finance. Include the
        following information: Date, Open, High, Low, Close, Volume, Dividends, Stock Splits.

        Args:
            ticker: The ticker symbol of the stock to get historical prices for, e.g. "NVLT"
            start_date: Start date, format: yyyy-mm-dd (inclusive)
            end_date: End date, format: yyyy-mm-dd (exclusive)
            interval: Valid intervals: 1d, 5d, 1wk, 1mo. Default is "1d"
        """
        return json.dumps(history(world, ticker, start_date, end_date, interval))

    def get_stock_info(ticker: str) -> str:
        """Get stock information for a given ticker symbol from yahoo finance. Include the following
        information: Stock Price & Trading Info, Company Information, Financial Metrics, Earnings &
        Revenue, Margins & Returns, Dividends, Balance Sheet, Analyst Coverage, Risk Metrics.

        Args:
            ticker: The ticker symbol of the stock to get information for, e.g. "NVLT"
        """
        return json.dumps(_company(world, ticker)["info"])

    def get_yahoo_finance_news(ticker: str) -> str:
        """Get news for a given ticker symbol from yahoo finance.

        Args:
            ticker: The ticker symbol of the stock to get news for, e.g. "NVLT"
        """
        news = _company(world, ticker)["news"]
        return "\n\n".join(
            f"Title: {n['title']}\nSummary: {n['summary']}\nDescription: {n['description']}\nURL: {n['url']}"
            for n in news
        )

    def get_stock_actions(ticker: str) -> str:
        """Get stock dividends and stock splits for a given ticker symbol from yahoo finance.

        Args:
            ticker: The ticker symbol of the stock to get stock actions for, e.g. "NVLT"
        """
        return json.dumps(_company(world, ticker)["actions"])

    def get_financial_statement(ticker: str, financial_type: str) -> str:
        """Get financial statement for a given ticker symbol from yahoo finance. You can choose from
        the following financial statement types: income_stmt, quarterly_income_stmt, balance_sheet,
        quarterly_balance_sheet, cashflow, quarterly_cashflow.

        Args:
            ticker: The ticker symbol of the stock to get financial statement for, e.g. "NVLT"
            financial_type: The type of financial statement to get. Choose from: income_stmt,
                quarterly_income_stmt, balance_sheet, quarterly_balance_sheet, cashflow, quarterly_cashflow
        """
        company = _company(world, ticker)
        if financial_type not in FINANCIAL_TYPES:
            raise BadRequest(
                f"invalid financial type {financial_type}. Please use one of the following: "
                f"{', '.join(FINANCIAL_TYPES)}."
            )
        return json.dumps(company["statements"][financial_type])

    def get_holder_info(ticker: str, holder_type: str) -> str:
        """Get holder information for a given ticker symbol from yahoo finance. You can choose from
        the following holder types: major_holders, institutional_holders, mutualfund_holders,
        insider_transactions, insider_purchases, insider_roster_holders.

        Args:
            ticker: The ticker symbol of the stock to get holder information for, e.g. "NVLT"
            holder_type: The type of holder information to get. Choose from: major_holders,
                institutional_holders, mutualfund_holders, insider_transactions, insider_purchases,
                insider_roster_holders
        """
        company = _company(world, ticker)
        if holder_type not in HOLDER_TYPES:
            raise BadRequest(
                f"invalid holder type {holder_type}. Please use one of the following: "
                f"{', '.join(HOLDER_TYPES)}."
            )
        return json.dumps(company["holders"][holder_type])

    def get_option_expiration_dates(ticker: str) -> str:
        """Fetch the available options expiration dates for a given ticker symbol.

        Args:
            ticker: The ticker symbol of the stock to get option expiration dates for, e.g. "NVLT"
        """
        return json.dumps(list(_company(world, ticker)["options"]))

    def get_option_chain(ticker: str, expiration_date: str, option_type: str) -> str:
        """Fetch the option chain for a given ticker symbol, expiration date, and option type.

        Args:
            ticker: The ticker symbol of the stock to get option chain for, e.g. "NVLT"
            expiration_date: The expiration date for the options chain (format: 'YYYY-MM-DD')
            option_type: The type of option to fetch ('calls' or 'puts')
        """
        company = _company(world, ticker)
        if expiration_date not in company["options"]:
            raise BadRequest(
                f"No options available for the date {expiration_date}. You can use "
                "`get_option_expiration_dates` to get the available expiration dates."
            )
        if option_type not in ("calls", "puts"):
            raise BadRequest("Invalid option type. Please use 'calls' or 'puts'.")
        return json.dumps(company["options"][expiration_date][option_type])

    def get_recommendations(ticker: str, recommendation_type: str, months_back: int = 12) -> str:
        """Get recommendations or upgrades/downgrades for a given ticker symbol from yahoo finance.
        You can also specify the number of months back to get upgrades/downgrades for, default is
        12.

        Args:
            ticker: The ticker symbol of the stock to get recommendations for, e.g. "NVLT"
            recommendation_type: The type of recommendation to get. Choose from: recommendations,
                upgrades_downgrades
            months_back: The number of months back to get upgrades/downgrades for, default is 12
        """
        company = _company(world, ticker)
        if recommendation_type == "recommendations":
            return json.dumps(company["recommendations"])
        if recommendation_type != "upgrades_downgrades":
            raise BadRequest(
                f"invalid recommendation type {recommendation_type}. Please use one of the "
                "following: recommendations, upgrades_downgrades."
            )
        if months_back < 0:
            raise BadRequest(f"months_back must not be negative, got {months_back}")
        month = TODAY.month - months_back
        year = TODAY.year + (month - 1) // 12
        cutoff = date(year, (month - 1) % 12 + 1, min(TODAY.day, 28)).isoformat()
        seen: set[str] = set()
        latest = []
        for row in company["upgrades_downgrades"]:  # newest first
            if row["GradeDate"][:10] >= cutoff and row["Firm"] not in seen:
                seen.add(row["Firm"])
                latest.append(row)
        return json.dumps(latest)

    tools = [
        get_historical_stock_prices,
        get_stock_info,
        get_yahoo_finance_news,
        get_stock_actions,
        get_financial_statement,
        get_holder_info,
        get_option_expiration_dates,
        get_option_chain,
        get_recommendations,
    ]
    instructions = "Yahoo Finance style market data (today is 2025-06-05)."
    if open_world:
        for fn in tools:
            fn.__doc__ = (fn.__doc__ or "").replace('e.g. "NVLT"', 'e.g. "AAPL"')
        instructions = (
            "Yahoo Finance style market data for any ticker symbol (today is 2025-06-05; "
            "daily prices from 2014-01-02)."
        )
    return make_server("finance", instructions, [(fn, False) for fn in tools])


if __name__ == "__main__":
    from suites._common.mcp_servers._base import main

    main(
        build_server,
        flags={"--open-world": "serve a generated company for any real-looking ticker symbol"},
    )
