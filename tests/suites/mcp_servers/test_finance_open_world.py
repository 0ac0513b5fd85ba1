"""The finance server's open world (``--open-world``): a generated company for any real ticker,
and the closed world left exactly as it was.

The stdio test replays every tool call of the financial_analysis reference solver (upstream's
task files when present, and our generated tasks) on the real servers MCP-Universe starts:
``yfinance`` (``finance --open-world``) and ``calculator``.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import date
from typing import Any

import anyio
import pytest

from pytest_egi.mcp.client import McpServer
from suites._common.mcp_servers import finance, server_spec
from suites._common.mcp_servers._base import TODAY

SEED = 42

CLOSED_WORLD_SHA256 = {
    7: "626ee78b059c4089b1729e2499daf93a11c64e24d232d39f8f519026155b7a41",
    42: "05fced62563c0979c291221f619deadedaacea1ef2ee0260f197cfb9aaf8a0ed",
}
"""SHA-256 of ``json.dumps(build_world(seed), sort_keys=True)`` before the open world existed."""


def _call(server: Any, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    from mcp import Client

    async def run() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error), "\n".join(b.text for b in result.content)

    return anyio.run(run)


@pytest.mark.parametrize("seed", sorted(CLOSED_WORLD_SHA256))
def test_closed_world_is_byte_for_byte_unchanged(seed):
    world = finance.build_world(seed)
    assert set(world) == {"tickers"}
    # the price rows (kept as columns, finance.PriceRows) written as the list of rows they read as
    text = json.dumps(world, sort_keys=True, default=list)
    assert hashlib.sha256(text.encode()).hexdigest() == CLOSED_WORLD_SHA256[seed]


def test_real_tickers_are_errors_without_the_flag_and_companies_with_it():
    closed, opened = finance.build_server(SEED), finance.build_server(SEED, open_world=True)
    assert _call(closed, "get_stock_info", {"ticker": "MSFT"}) == (
        True,
        "Error executing tool get_stock_info: Company ticker MSFT not found.",
    )
    error, text = _call(opened, "get_stock_info", {"ticker": "msft"})
    assert not error and json.loads(text)["longName"] == "Microsoft Corporation"
    error, text = _call(opened, "get_stock_info", {"ticker": "NVLT"})  # the fixed companies stay
    assert not error and json.loads(text) == finance.build_world(SEED)["tickers"]["NVLT"]["info"]


@pytest.mark.parametrize("symbol", ["BRK-B", "bf.b", "^GSPC", "0700.HK", "X", "GOOGL"])
def test_symbols_of_the_pattern_are_generated(symbol):
    world = finance.build_world(SEED, open_world=True)
    assert finance.company(world, symbol)["info"]["symbol"] == symbol.upper()


@pytest.mark.parametrize("symbol", ["12345", "TOOLONGX", "MS FT", "", "A_B", "AAPL.LONGX"])
def test_symbols_outside_the_pattern_stay_errors(symbol):
    world = finance.build_world(SEED, open_world=True)
    with pytest.raises(finance.BadRequest, match="not found"):
        finance.company(world, symbol)


def test_generated_companies_depend_on_seed_and_symbol_only():
    a, b = finance.build_world(SEED, open_world=True), finance.build_world(SEED, open_world=True)
    first = finance.company(a, "AAPL")
    finance.company(b, "MSFT")  # another symbol first: no effect on AAPL
    assert finance.company(b, "AAPL") == first
    assert finance.company(finance.build_world(SEED + 1, open_world=True), "AAPL") != first
    assert finance.company(a, "aapl") is first  # kept after the first use


def test_nyse_calendar():
    closed = {d.isoformat() for y in (2023, 2024, 2025) for d in finance.nyse_holidays(y)}
    assert {d for d in closed if finance.START.isoformat() <= d < TODAY.isoformat()} == finance.HOLIDAYS
    cases = {
        date(2017, 1, 2): True,  # New Year's Day on a Sunday, observed Monday
        date(2021, 12, 31): False,  # New Year 2022 on a Saturday is not made up
        date(2021, 12, 24): True,  # Christmas on a Saturday, observed Friday
        date(2021, 6, 18): False,  # no Juneteenth before 2022
        date(2022, 6, 20): True,  # Juneteenth on a Sunday, observed Monday
        date(2024, 3, 29): True,  # Good Friday
        date(2018, 12, 5): True,  # day of mourning
    }
    for day, holiday in cases.items():
        assert (day in finance.nyse_holidays(day.year)) is holiday, day


ITEMS = (
    "Total Revenue",
    "Gross Profit",
    "Research And Development",
    "Operating Income",
    "Net Income",
    "Net Income Common Stockholders",
)


def test_open_company_has_every_kind_of_data_the_ops_read():
    world = finance.build_world(SEED, open_world=True)
    c = finance.company(world, "JNJ")
    days = [p["Date"][:10] for p in c["prices"]]
    assert days[0] == "2014-01-02" and days[-1] == "2025-06-04" and "2024-03-29" not in days
    for kind in ("income_stmt", "quarterly_income_stmt"):
        rows = c["statements"][kind]
        assert len(rows) == (4 if kind == "income_stmt" else 5)
        for item in ITEMS:
            assert all(isinstance(r[item], int) for r in rows), item
    assert [r["date"] for r in c["statements"]["quarterly_income_stmt"]][0] == "2025-03-31"
    holders = c["holders"]["institutional_holders"]
    assert len(holders) == 10 and {"Vanguard Group Inc", "Blackrock Inc.", "State Street Corporation"} <= {
        h["Holder"] for h in holders
    }
    for h in holders + c["holders"]["mutualfund_holders"]:
        assert set(h) == {"Date Reported", "Holder", "pctHeld", "Shares", "Value", "pctChange"}
    chain = c["options"][min(c["options"])]["calls"]
    assert len({o["impliedVolatility"] for o in chain}) > len(chain) // 2  # a smile with noise, not flat
    spot = c["prices"][-1]["Close"]
    assert all(o["inTheMoney"] == (o["strike"] < spot) for o in chain)


def test_splits_are_adjusted_and_dividends_vary():
    world = finance.build_world(SEED, open_world=True)
    split_seen = payers = 0
    for symbol in finance.KNOWN_COMPANIES:
        c = finance.company(world, symbol)
        payers += any(a["Dividends"] for a in c["actions"])
        for i, p in enumerate(c["prices"]):
            if p["Stock Splits"]:
                split_seen += 1
                assert abs(math.log(p["Close"] / c["prices"][i - 1]["Close"])) < 0.25  # no 1/ratio jump
    assert split_seen >= 3 and 10 < payers < len(finance.KNOWN_COMPANIES)


def _reference_calls() -> list[dict[str, Any]]:
    from suites.mcp_universe.data.domains import financial_analysis as fa
    from tests.suites.mcp_universe.test_financial_analysis import FILES

    tasks = [json.loads(f.read_text()) for f in FILES] + fa.generate_tasks(SEED, 40)
    calls: list[dict[str, Any]] = []
    for task in tasks:
        for call in fa.solve(task, SEED)["calls"]:
            if call not in calls:
                calls.append(call)
    return calls


def test_reference_calls_succeed_on_the_stdio_servers():
    calls = _reference_calls()
    specs = {
        "yfinance": server_spec("finance", SEED, name="yfinance", extra_args=("--open-world",)),
        "calculator": server_spec("calculator", SEED),
    }
    world = finance.build_world(SEED, open_world=True)
    servers = {name: McpServer(spec) for name, spec in specs.items()}
    try:
        for server in servers.values():
            server.start()
        tools = {t.name: t for t in servers["yfinance"].list_tools()}
        assert 'e.g. "AAPL"' in tools["get_stock_info"].input_schema["properties"]["ticker"]["description"]
        for call in calls:
            result = servers[call["server"]].call_tool(call["tool"], call["arguments"])
            assert not result.is_error, (call, result.text)
            if call["tool"] == "get_historical_stock_prices":
                assert result.json() == finance.history(world, **call["arguments"])
        assert {c["tool"] for c in calls} >= {
            "get_historical_stock_prices", "get_financial_statement", "get_holder_info", "get_stock_actions",
            "get_option_expiration_dates", "get_option_chain", "get_stock_info", "calculate",
        }  # fmt: skip
    finally:
        for server in servers.values():
            server.close()


def test_generated_companies_and_the_closed_world_are_the_same_data_as_before_the_speed_up():
    """The price walks write ``random.gauss`` / ``randint`` out for speed (finance.py): the data
    must stay exactly what the calls made (sha256 of the JSON, taken from the code before)."""

    def digest(value: Any) -> str:  # the price rows (finance.PriceRows) as the list they read as
        return hashlib.sha256(json.dumps(value, default=list).encode()).hexdigest()

    assert digest(finance._open_company(42, "MSFT")) == (
        "c7fd67482699992d1d1be89dcbb9df1880fddf1ecce8191a00dad5df3b5c736c")
    assert digest(finance._open_company(7, "BRK-B")) == (
        "47745babee0ce40a162c3f0073039cfda6427af0962e2e884ba3dde86deab29d")
    assert digest(finance.build_world(42)) == (
        "fed862f98b7cdb27ebcc57b78b0347cb2483c287d67b825c9afe48476c25f793")
    assert digest(finance.build_world(3)) == (
        "9f303ef83b0bd42b9b50019921380e9cec281399e74d285623207f1c280900b0")


def test_a_company_let_go_comes_back_unpacked_the_same_and_the_world_stays_bounded():
    """An open world (the finance server's, MCP-Universe's evaluator's) keeps the last
    OPEN_COMPANIES_KEPT generated companies; one let go is kept packed and comes back equal to
    a fresh generation without generating it again. Before, the server kept every company
    named (1.5 MB each)."""
    world = finance.build_world(42, open_world=True)
    symbols = [f"Q{i}" for i in range(finance.OPEN_COMPANIES_KEPT + 3)]
    first = finance.company(world, symbols[0])
    for symbol in symbols[1:]:
        finance.company(world, symbol)
    generated = [s for s in world["tickers"] if s not in {c[0] for c in finance.COMPANIES}]
    assert generated == symbols[3:]
    assert symbols[0] in world["packed"]
    calls = []
    real = finance._open_company
    try:
        finance._open_company = lambda seed, symbol: calls.append(symbol) or real(seed, symbol)
        again = finance.company(world, symbols[0])
    finally:
        finance._open_company = real
    assert calls == []  # unpacked, not generated
    assert again == first == real(42, symbols[0])
    assert len(world["tickers"]) == len(finance.COMPANIES) + finance.OPEN_COMPANIES_KEPT


def test_price_rows_are_columns_that_read_as_the_list_of_rows():
    """A company's rows are kept as columns (finance.PriceRows: about 0.16 MB for an open-world
    company instead of 1.8 MB of dicts), read as the same dicts: by index (negative too), by
    slice, by iteration, with bisect; a pickle (a packed company) names the open world's dates
    instead of copying them, and reads back equal."""
    import pickle
    from bisect import bisect_right

    rows = finance._open_company(42, "MSFT")["prices"]
    assert isinstance(rows, finance.PriceRows)
    listed = list(rows)
    assert len(rows) == len(listed) == len(finance._open_dates())
    assert rows[0] == listed[0] and rows[-1] == listed[-1] and rows[-60:] == listed[-60:]
    assert list(rows[0]) == ["Date", "Open", "High", "Low", "Close", "Volume", "Dividends", "Stock Splits"]
    assert type(rows[0]["Volume"]) is int and type(rows[0]["Close"]) is float
    assert rows == listed and rows[5] is not rows[5]  # a new dict on each read
    key = lambda p: p["Date"][:10]  # noqa: E731
    assert bisect_right(rows, "2020-06-30", key=key) == bisect_right(listed, "2020-06-30", key=key)
    blob = pickle.dumps(rows)
    assert len(blob) < 200_000 and b"2014-01-02T00:00:00.000" not in blob
    back = pickle.loads(blob)
    assert back == rows and back._dates is finance._open_dates()
