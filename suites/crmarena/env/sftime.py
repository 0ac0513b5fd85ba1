"""Date and datetime helpers in Salesforce wire format, and CRMArena's period rules.

Wire format (reference §1.3): datetimes are ``YYYY-MM-DDTHH:MM:SS.000+0000`` (always UTC),
dates ``YYYY-MM-DD``. Period rules follow CRMArena `crm_sandbox/env/functions.py`
(`get_period`, `get_start_date`) as summarised in reference §1.1.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple

from .errors import SalesforceError

__all__ = [
    "MONTH_NAMES",
    "SEASON_START_MONTH",
    "Period",
    "format_datetime",
    "format_literal",
    "parse_datetime",
    "add_months",
    "named_period",
    "relative_period",
    "FIXED_DATE_LITERALS",
    "N_DATE_LITERALS",
    "date_literal_range",
    "VALID_DATE_RANGE",
]

MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)

SEASON_START_MONTH = {"Spring": 3, "Summer": 6, "Fall": 9, "Winter": 12}
"""First month of each 3-month season. Winter starts on Dec 1 of the named year."""

_DATETIME_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?"
    r"(Z|[+-]\d{2}:?\d{2})?$"
)


def format_datetime(moment: datetime) -> str:
    """Render a datetime in the API form ``YYYY-MM-DDTHH:MM:SS.000+0000`` (converted to UTC).

    Args:
        moment: Aware or naive datetime; naive values are taken as UTC.

    Returns:
        The 28-character API string (milliseconds kept, microseconds truncated).
    """
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    millis = moment.microsecond // 1000
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis:03d}+0000"


def format_literal(moment: datetime) -> str:
    """Render a datetime as the SOQL literal the original tools use: ``YYYY-MM-DDTHH:MM:SSZ``."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_datetime(text: str) -> datetime:
    """Parse any accepted datetime form into an aware UTC datetime.

    Accepted: ``…Z``, ``…+0000``, ``…+00:00``, with or without fractional seconds, ``T`` or a
    space as separator; no offset means UTC.

    Args:
        text: The datetime string.

    Returns:
        Aware datetime in UTC.

    Raises:
        ValueError: When the text is not a datetime in one of these forms.
    """
    match = _DATETIME_RE.match(text.strip())
    if not match:
        raise ValueError(f"not a datetime: {text!r}")
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    micros = int((fraction or "0").ljust(6, "0")[:6])
    moment = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), micros, UTC)
    if offset and offset != "Z":
        sign = 1 if offset[0] == "+" else -1
        digits = offset[1:].replace(":", "")
        delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        try:
            moment -= sign * delta
        except OverflowError:  # 9999-12-31T23:00:00-05:00 lies past year 9999
            raise ValueError(f"not a datetime in the supported range: {text!r}") from None
    return moment


def add_months(day: date, months: int) -> date:
    """Shift a date by whole calendar months, clamping the day (Jan 31 + 1 month = Feb 28/29).

    Same result as ``dateutil.relativedelta(months=n)``, which the original tools use.
    """
    index = day.year * 12 + (day.month - 1) + months
    year, month0 = divmod(index, 12)
    month = month0 + 1
    next_first = date(year + (month == 12), 1 if month == 12 else month + 1, 1)
    last_day = (next_first - timedelta(days=1)).day
    return date(year, month, min(day.day, last_day))


class Period(NamedTuple):
    """A half-open period [start, end) of UTC datetimes; `end` is also used with ``<=``."""

    start: datetime
    end: datetime


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def named_period(name: str, year: int) -> Period:
    """Start and end of a named month, quarter or season (CRMArena `get_period`).

    - ``Q1``..``Q4``: 3 months from Jan 1 / Apr 1 / Jul 1 / Oct 1.
    - ``Spring``/``Summer``/``Fall`` (or ``Autumn``)/``Winter``: 3 months from Mar 1 / Jun 1 /
      Sep 1 / **Dec 1 of the same year** (so Winter 2021 runs to Mar 1 2022).
    - A month name: that calendar month.

    Args:
        name: Period name (case-insensitive).
        year: Calendar year.

    Returns:
        The Period; `end` is the first instant after the period.

    Raises:
        ValueError: For an unknown period name.
    """
    key = name.strip().capitalize()
    if key == "Autumn":
        key = "Fall"
    if re.fullmatch(r"Q[1-4]", key.upper()):
        start = date(year, 3 * int(key[1]) - 2, 1)
        months = 3
    elif key in SEASON_START_MONTH:
        start = date(year, SEASON_START_MONTH[key], 1)
        months = 3
    elif key in MONTH_NAMES:
        start = date(year, MONTH_NAMES.index(key) + 1, 1)
        months = 1
    else:
        raise ValueError(f"unknown period name {name!r}")
    return Period(_midnight(start), _midnight(add_months(start, months)))


def relative_period(today: date, unit: str, count: int) -> Period:
    """The ``count`` days/weeks/months/quarters before ``today`` (CRMArena `get_start_date`).

    The end is ``today`` at 00:00:00 UTC; the start subtracts the interval from it (a quarter is
    3 calendar months).

    Args:
        today: The task's "today".
        unit: ``day``, ``week``, ``month`` or ``quarter`` (plural accepted).
        count: Number of units, >= 0.

    Returns:
        The Period.

    Raises:
        ValueError: For an unknown unit or a negative count.
    """
    unit = unit.lower().rstrip("s")
    if count < 0:
        raise ValueError("count must be >= 0")
    if unit == "day":
        start = today - timedelta(days=count)
    elif unit == "week":
        start = today - timedelta(weeks=count)
    elif unit == "month":
        start = add_months(today, -count)
    elif unit == "quarter":
        start = add_months(today, -3 * count)
    else:
        raise ValueError(f"unknown period unit {unit!r}")
    return Period(_midnight(start), _midnight(today))


# --------------------------------------------------------------------------------------------
# Date literals
# --------------------------------------------------------------------------------------------

FIXED_DATE_LITERALS = {
    "TODAY",
    "YESTERDAY",
    "TOMORROW",
    "THIS_WEEK",
    "LAST_WEEK",
    "NEXT_WEEK",
    "THIS_MONTH",
    "LAST_MONTH",
    "NEXT_MONTH",
    "THIS_QUARTER",
    "LAST_QUARTER",
    "NEXT_QUARTER",
    "THIS_YEAR",
    "LAST_YEAR",
    "NEXT_YEAR",
    "LAST_90_DAYS",
    "NEXT_90_DAYS",
}
N_DATE_LITERALS = {
    "LAST_N_DAYS",
    "NEXT_N_DAYS",
    "N_DAYS_AGO",
    "LAST_N_WEEKS",
    "NEXT_N_WEEKS",
    "LAST_N_MONTHS",
    "NEXT_N_MONTHS",
    "LAST_N_QUARTERS",
    "NEXT_N_QUARTERS",
    "LAST_N_YEARS",
    "NEXT_N_YEARS",
}


VALID_DATE_RANGE = (date(1700, 1, 1), date(4000, 12, 31))
"""Earliest and latest date Salesforce accepts (Salesforce Help article 000383587, "Salesforce
supports dates from 1700-01-01 to 4000-12-31"; Data Loader guide, "Data Import Dates")."""


def date_literal_range(name: str, count: int | None, today: date) -> tuple[date, date]:
    """Half-open date range [start, end) of a SOQL relative date literal.

    Follows Salesforce's definitions (weeks start on Sunday, as in the en_US locale):
    ``LAST_N_DAYS:n`` = [today − n, today + 1), ``NEXT_N_DAYS:n`` = [today + 1, today + n + 1),
    ``LAST_N_MONTHS:n`` = the n whole months before this month, ``THIS_MONTH``, ``LAST_MONTH``,
    ``THIS_YEAR`` … the calendar unit containing (or before/after) today.

    The range must lie within Salesforce's valid dates, `VALID_DATE_RANGE` (1700-01-01 to
    4000-12-31); that bounds n (``LAST_N_DAYS:99999999`` reaches back before year 1700).
    Salesforce documents the date range but not the error for a literal outside it; we answer
    with its code for a number outside a documented range, ``NUMBER_OUTSIDE_VALID_RANGE``
    (the code of the SOQL OFFSET limit).

    Raises:
        SalesforceError: MALFORMED_QUERY for an unknown literal or a missing/extra ``:n``;
            NUMBER_OUTSIDE_VALID_RANGE when n puts the range outside the valid dates, e.g.
            ``NUMBER_OUTSIDE_VALID_RANGE: LAST_N_DAYS:99999999 is outside the valid date range
            1700-01-01 to 4000-12-31``.
    """
    if name in N_DATE_LITERALS and count is None or name in FIXED_DATE_LITERALS and count is not None:
        raise SalesforceError("MALFORMED_QUERY", f"unexpected token: '{name}'")
    week_start = today - timedelta(days=(today.weekday() + 1) % 7)
    month_start = today.replace(day=1)
    quarter_start = date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
    year_start = date(today.year, 1, 1)
    day = timedelta(days=1)
    n = count or 0
    table = {
        "TODAY": lambda: (today, today + day),
        "YESTERDAY": lambda: (today - day, today),
        "TOMORROW": lambda: (today + day, today + 2 * day),
        "THIS_WEEK": lambda: (week_start, week_start + 7 * day),
        "LAST_WEEK": lambda: (week_start - 7 * day, week_start),
        "NEXT_WEEK": lambda: (week_start + 7 * day, week_start + 14 * day),
        "THIS_MONTH": lambda: (month_start, add_months(month_start, 1)),
        "LAST_MONTH": lambda: (add_months(month_start, -1), month_start),
        "NEXT_MONTH": lambda: (add_months(month_start, 1), add_months(month_start, 2)),
        "THIS_QUARTER": lambda: (quarter_start, add_months(quarter_start, 3)),
        "LAST_QUARTER": lambda: (add_months(quarter_start, -3), quarter_start),
        "NEXT_QUARTER": lambda: (add_months(quarter_start, 3), add_months(quarter_start, 6)),
        "THIS_YEAR": lambda: (year_start, date(today.year + 1, 1, 1)),
        "LAST_YEAR": lambda: (date(today.year - 1, 1, 1), year_start),
        "NEXT_YEAR": lambda: (date(today.year + 1, 1, 1), date(today.year + 2, 1, 1)),
        "LAST_90_DAYS": lambda: (today - 90 * day, today + day),
        "NEXT_90_DAYS": lambda: (today + day, today + 91 * day),
        "LAST_N_DAYS": lambda: (today - n * day, today + day),
        "NEXT_N_DAYS": lambda: (today + day, today + (n + 1) * day),
        "N_DAYS_AGO": lambda: (today - n * day, today - (n - 1) * day),
        "LAST_N_WEEKS": lambda: (week_start - 7 * n * day, week_start),
        "NEXT_N_WEEKS": lambda: (week_start + 7 * day, week_start + 7 * (n + 1) * day),
        "LAST_N_MONTHS": lambda: (add_months(month_start, -n), month_start),
        "NEXT_N_MONTHS": lambda: (add_months(month_start, 1), add_months(month_start, n + 1)),
        "LAST_N_QUARTERS": lambda: (add_months(quarter_start, -3 * n), quarter_start),
        "NEXT_N_QUARTERS": lambda: (add_months(quarter_start, 3), add_months(quarter_start, 3 * (n + 1))),
        "LAST_N_YEARS": lambda: (date(today.year - n, 1, 1), year_start),
        "NEXT_N_YEARS": lambda: (date(today.year + 1, 1, 1), date(today.year + n + 1, 1, 1)),
    }
    if name not in table:
        raise SalesforceError("MALFORMED_QUERY", f"unexpected token: '{name}'")
    low, high = VALID_DATE_RANGE
    try:
        start, end = table[name]()
    except (OverflowError, ValueError):  # past Python's years 1..9999: far outside the range
        start, end = date.min, date.max
    if start < low or end > high + day:
        literal = name if count is None else f"{name}:{count}"
        raise SalesforceError(
            "NUMBER_OUTSIDE_VALID_RANGE",
            f"{literal} is outside the valid date range {low.isoformat()} to {high.isoformat()}",
        )
    return start, end
