"""Filler modules: plausible code no task needs, added until a project reaches its size.

Each filler module belongs to one of the areas in :data:`~.vocab.FILLER_AREAS` (a
sub-package the layering rules allow to use ``utils`` and ``config`` only), has docstrings,
type hints and small functions, imports cleanly and is ruff-clean. :func:`filler_module` is
also what replaces a needle file in the context-ablation control (same size, no fact).
"""

from __future__ import annotations

import random
import textwrap

from suites.locobench.generator.vocab import FILLER_AREAS, FILLER_TOPICS, LABELS

__all__ = ["filler_files", "filler_module", "filler_text"]


def _title(word: str) -> str:
    return "".join(p.capitalize() for p in word.split("_"))


# The four templates are dedented once, here, and filled with ``str.format`` (``{{``/``}}``
# are literal braces): the same text as dedenting each filled module, since no value put in
# starts a line with white space or holds a newline (names, labels and numbers), at a small
# part of the cost (a deep profile makes tens of thousands of filler modules).
_SUMMARY = textwrap.dedent('''\
        """Summaries of {topic} figures for the periodic report."""

        from dataclasses import dataclass

        from {pkg}.utils.text import slugify


        @dataclass
        class {title}Line:
            """One line of the {topic} summary."""

            label: str
            count: int
            total_cents: int


        def summarize_{topic}(lines: list[{title}Line]) -> dict[str, int]:
            """Total cents per label slug, over ``lines``."""
            out: dict[str, int] = {{}}
            for line in lines:
                key = slugify(line.label)
                out[key] = out.get(key, 0) + line.total_cents
            return out


        def busiest_{topic}(lines: list[{title}Line]) -> str | None:
            """The label with the highest count (the first on a tie), or None."""
            best = None
            for line in lines:
                if best is None or line.count > best.count:
                    best = line
            return None if best is None else best.label


        def top_{topic}_labels(lines: list[{title}Line], limit: int = {limit}) -> list[str]:
            """At most ``limit`` labels, highest total first."""
            ranked = sorted(lines, key=lambda line: (-line.total_cents, line.label))
            return [line.label for line in ranked[:limit]]


        DEFAULT_{upper}_LABEL = "{label}"
        ''')


def _summary(pkg: str, topic: str, rng: random.Random) -> str:
    limit = rng.randrange(3, 12)
    label = rng.choice(LABELS)
    return _SUMMARY.format(
        pkg=pkg, topic=topic, title=_title(topic), upper=topic.upper(), limit=limit, label=label
    )


_SCHEDULE = textwrap.dedent('''\
        """Scheduling of {topic} runs."""

        from {pkg}.utils.text import shorten

        {upper}_INTERVAL_DAYS = {step}


        def next_{topic}_days(start_day: int, count: int) -> list[int]:
            """The next ``count`` run days after ``start_day``, every interval."""
            return [start_day + {upper}_INTERVAL_DAYS * (k + 1) for k in range(count)]


        def {topic}_label(name: str, day: int) -> str:
            """A short label for a run of ``name`` on ``day``."""
            return shorten(f"{{name}} on day {{day}}", 32)


        def overlapping_{topic}_days(first: list[int], second: list[int]) -> list[int]:
            """Days present in both schedules, in order."""
            seen = set(second)
            return [day for day in first if day in seen]
        ''')


def _schedule(pkg: str, topic: str, rng: random.Random) -> str:
    step = rng.randrange(2, 9)
    return _SCHEDULE.format(pkg=pkg, topic=topic, title=_title(topic), upper=topic.upper(), step=step)


_TABLE = textwrap.dedent('''\
        """Plain-text tables of {topic} rows."""

        from {pkg}.config import CURRENCY

        COLUMN_WIDTH = {width}


        def {topic}_row(cells: list[str]) -> str:
            """One row: each cell padded to the column width."""
            return " | ".join(cell.ljust(COLUMN_WIDTH) for cell in cells)


        def {topic}_table(header: list[str], rows: list[list[str]]) -> str:
            """Header, a rule and the rows, one per line."""
            lines = [{topic}_row(header), "-" * (COLUMN_WIDTH + 3) * len(header)]
            lines.extend({topic}_row(row) for row in rows)
            return "\\n".join(lines)


        def {topic}_money_cell(amount_cents: int) -> str:
            """A money cell in the service's currency."""
            return f"{{amount_cents / 100:.2f}} {{CURRENCY}}"
        ''')


def _table(pkg: str, topic: str, rng: random.Random) -> str:
    width = rng.randrange(8, 20)
    return _TABLE.format(pkg=pkg, topic=topic, title=_title(topic), upper=topic.upper(), width=width)


_COUNTER = textwrap.dedent('''\
        """Counting {topic} events."""

        from collections import Counter

        {upper}_CAP = {cap}


        class {title}Counter:
            """Counts events per kind, up to a cap per kind."""

            def __init__(self) -> None:
                self._counts: Counter[str] = Counter()

            def add(self, kind: str) -> int:
                """Count one event of ``kind``; the new count (never above the cap)."""
                if self._counts[kind] < {upper}_CAP:
                    self._counts[kind] += 1
                return self._counts[kind]

            def most_common(self, n: int = 3) -> list[tuple[str, int]]:
                """The ``n`` most frequent kinds with their counts."""
                return self._counts.most_common(n)

            def total(self) -> int:
                """Events counted, all kinds together."""
                return sum(self._counts.values())
        ''')


def _counter(pkg: str, topic: str, rng: random.Random) -> str:
    cap = rng.randrange(50, 500)
    return _COUNTER.format(pkg=pkg, topic=topic, title=_title(topic), upper=topic.upper(), cap=cap)


_TEMPLATES = (_summary, _schedule, _table, _counter)


def filler_module(pkg: str, topic: str, rng: random.Random) -> str:
    """One filler module about ``topic`` (its template chosen by ``rng``)."""
    return rng.choice(_TEMPLATES)(pkg, topic, rng)


def filler_text(pkg: str, size: int, rng: random.Random) -> str:
    """Filler code of about ``size`` characters (at least one module's worth), for the
    context ablation: the needle file's place in the prompt, without its facts."""
    parts: list[str] = []
    n = 0
    while n < size:
        topic = f"{rng.choice(FILLER_TOPICS)}_{rng.choice(LABELS)}"
        parts.append(filler_module(pkg, topic, rng))
        n += len(parts[-1])
    text = "\n\n".join(parts)
    return text[: max(size, 1)].rsplit("\n", 1)[0] + "\n" if len(text) > size else text


def filler_files(pkg: str, target_chars: int, rng: random.Random) -> dict[str, str]:
    """Filler modules (with their areas' ``__init__.py``) of ``target_chars`` characters in
    all, at least (none when ``target_chars`` <= 0)."""
    files: dict[str, str] = {}
    total = 0
    used: set[str] = set()
    k = 0
    while total < target_chars:
        area = FILLER_AREAS[k % len(FILLER_AREAS)]
        topic = FILLER_TOPICS[(k // len(FILLER_AREAS)) % len(FILLER_TOPICS)]
        round_ = k // (len(FILLER_AREAS) * len(FILLER_TOPICS))
        name = topic if round_ == 0 else f"{topic}_{round_}"
        path = f"{pkg}/{area}/{name}.py"
        k += 1
        if path in used:
            continue
        used.add(path)
        init = f"{pkg}/{area}/__init__.py"
        if init not in files:
            files[init] = f'"""{area.capitalize()} helpers (not used by the request handlers)."""\n'
        files[path] = filler_module(pkg, name, rng)
        total += len(files[path])
    return files
