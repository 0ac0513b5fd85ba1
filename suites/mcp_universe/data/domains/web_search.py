"""MCP-Universe's web_search domain over the local ``google-search`` and ``fetch`` servers.

Upstream's web_search tasks (``configs/test/web_search/info_search_task_*.json``) are
multi-hop questions about the real world ("who is the player with these season statistics"),
answered with Google search and page fetching and graded by ``google_search.llm_as_a_judge``
against a reference answer. Our tasks keep that shape (``func: raw``, ``op:
google_search.llm_as_a_judge``, ``op_args: {question, correct_answer}``, output format
``{"answer": "[Your answer]"}``, servers ``google-search`` + ``fetch``) and ask, in our own
words, about the invented world of :mod:`suites._common.mcp_servers.web_corpus`: a model
cannot answer from memory, only by searching for the named entity, fetching its page,
following a link to the next page (sometimes two), and reading the fact there (paging with
``start_index`` when it lies past the first 5,000 characters).

Eleven question templates (:data:`TEMPLATES`), cycled in order so any prefix of the task list
covers them evenly: a founder's birth year, the population of an organisation's home city, a
laureate's employer, the founding year of a work's builder, the mayor of an event's host city,
a head's birthplace, the home city of a book author's employer (three hops), a club's stadium
capacity from its coach, the river of a person's birthplace (paging), a person identified from
clues (the organisation's staff list names one person of that occupation; the birth year and
city are checked on their page), and the larger of two organisations by staff (two searches).

The rule judge compares the final answer exactly (see :mod:`suites.mcp_universe.scorer.ops.google_search`),
so every answer is a name, a year or a count as the page writes it; questions that need a
particular form say so (the river's name without the word "River", the person's full name).

Upstream's own task files load (the same format), but they ask about the real world, which the
local corpus does not hold: :func:`solve` raises :class:`NotSolvable` for them, saying so.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from suites._common.mcp_servers.fetch import fetch
from suites._common.mcp_servers.search import search
from suites._common.mcp_servers.web_corpus import Corpus, build_corpus
from suites.mcp_universe.data.domains import NotSolvable, Unanswerable

__all__ = ["DOMAIN", "OUTPUT_FORMAT", "SERVERS", "TEMPLATES", "Template", "generate_tasks", "solve"]

DOMAIN = "web_search"
SERVERS = ("google-search", "fetch")
OUTPUT_FORMAT = {"answer": "[Your answer]"}
"""Upstream's output format for every web_search task."""

_DEFAULT_LENGTH = 5000
"""The fetch server's default ``max_length`` (the solver reads pages in chunks of it)."""


@dataclass(frozen=True)
class Hop:
    """One page a correct agent reads: how it finds the page and what it reads there.

    Attributes:
        url: the page's address.
        query: the search query that finds it (None: the address is a link on the previous page).
        read: a regex over the page's text whose group 1 is what the agent takes from it (the
            next page's address, or the answer value).
    """

    url: str
    query: str | None
    read: str


@dataclass(frozen=True)
class Template:
    """One kind of question.

    Attributes:
        key: short name (``founder_birth_year``).
        question: the wording, with ``{name}`` fields filled from :attr:`candidates`.
        candidates: corpus -> every parameter set the template can ask about, in a fixed order.
        plan: (corpus, parameters) -> the hops a correct agent makes and a function of the
            values read on them (in order) giving the final answer.
        wrong: (corpus, parameters, answer) -> a plausible wrong final value (the mistake).
    """

    key: str
    question: str
    candidates: Callable[[Corpus], list[dict[str, str]]]
    plan: Callable[[Corpus, dict[str, str]], tuple[list[Hop], Callable[[list[str]], str]]]
    wrong: Callable[[Corpus, dict[str, str], str], str]

    def pattern(self) -> re.Pattern[str]:
        """A regex matching this template's questions, one named group per field."""
        parts = re.split(r"\{(\w+)\}", self.question)
        regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
        return re.compile(f"^{regex}$", re.DOTALL)


# ---------------------------------------------------------------------------------------------
# Reading helpers (what an agent reads on a page)
# ---------------------------------------------------------------------------------------------


def _link_to(url: str) -> str:
    return r"\]\((" + re.escape(url) + r")\)"


def _by_name(table: dict[str, dict[str, Any]], name: str, what: str) -> dict[str, Any]:
    for record in table.values():
        if record["name"] == name:
            return record
    raise NotSolvable(f"the local web corpus has no {what} named {name!r}")


def _last(values: list[str]) -> str:
    return values[-1]


def _other(values: list[str], answer: str) -> str:
    """The first value that differs from ``answer`` (case-insensitively)."""
    for v in values:
        if v.casefold() != answer.casefold():
            return v
    raise AssertionError(f"no wrong value different from {answer!r}")


def _plus_one(answer: str) -> str:
    n = int(answer.replace(",", "")) + 1
    return f"{n:,}" if "," in answer else str(n)


# ---------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------


def _founder_birth_year() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"org": o["name"]} for o in c.orgs.values() if o["founder"]]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        org = _by_name(c.orgs, p["org"], "organisation")
        if not org["founder"]:
            raise NotSolvable(f"{org['name']} has no founder in the local corpus")
        founder = c.people[org["founder"]]
        return [
            Hop(org["url"], org["name"], r"^- Founder: \[[^\]]+" + _link_to(founder["url"])),
            Hop(founder["url"], None, r"^- Born: (\d{4}),"),
        ], _last

    return Template(
        "founder_birth_year",
        "In what year was the person who founded {org} born?",
        candidates,
        plan,
        lambda c, p, a: _plus_one(a),
    )


def _hq_population() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"org": o["name"]} for o in c.orgs.values()]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        org = _by_name(c.orgs, p["org"], "organisation")
        city = c.cities[org["hq"]]
        return [
            Hop(org["url"], org["name"], r"^- Headquarters: \[[^\]]+" + _link_to(city["url"])),
            Hop(city["url"], None, r"^- Population: ([\d,]+)$"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        return _other([f"{x['population']:,}" for x in c.cities.values()], answer)

    return Template(
        "hq_population",
        "How many inhabitants does the city where {org} is headquartered have?",
        candidates,
        plan,
        wrong,
    )


def _laureate_employer() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"event": e["name"]} for e in c.events.values() if e["kind"] == "prize"]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        ev = _by_name(c.events, p["event"], "event")
        if ev["kind"] != "prize":
            raise NotSolvable(f"{ev['name']} is not a prize")
        person = c.people[ev["person"]]
        return [
            Hop(ev["url"], ev["name"], r"^- Laureate: \[[^\]]+" + _link_to(person["url"])),
            Hop(person["url"], None, r"^- Employer: \[([^\]]+)\]"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        ev = _by_name(c.events, p["event"], "event")
        return _other([c.orgs[ev["organiser"]]["name"], *(o["name"] for o in c.orgs.values())], answer)

    return Template(
        "laureate_employer",
        "Which organisation does the winner of the {event} work for?",
        candidates,
        plan,
        wrong,
    )


def _builder_founded() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"work": w["name"]} for w in c.works.values() if w["kind"] != "book"]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        work = _by_name(c.works, p["work"], "work")
        if work["kind"] == "book":
            raise NotSolvable(f"{work['name']} is a book, not a construction")
        org = c.orgs[work["builder"]]
        return [
            Hop(work["url"], work["name"], r"^- Built by: \[[^\]]+" + _link_to(org["url"])),
            Hop(org["url"], None, r"^- Founded: (\d{4})$"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        completed = str(_by_name(c.works, p["work"], "work")["year"])  # the year read on the first page
        return completed if completed != answer else _plus_one(answer)

    return Template(
        "builder_founded",
        "The {work} was built by a company. In which year was that company founded?",
        candidates,
        plan,
        wrong,
    )


def _host_city_mayor() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"event": e["name"]} for e in c.events.values()]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        ev = _by_name(c.events, p["event"], "event")
        city = c.cities[ev["city"]]
        return [
            Hop(ev["url"], ev["name"], r"^- Location: \[[^\]]+" + _link_to(city["url"])),
            Hop(city["url"], None, r"^- Mayor: \[([^\]]+)\]"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        return _other([c.people[x["mayor"]]["name"] for x in c.cities.values()], answer)

    return Template(
        "host_city_mayor",
        "Who is the current mayor of the city that hosted the {event}?",
        candidates,
        plan,
        wrong,
    )


def _head_birthplace() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"title": o["head_title"], "org": o["name"]} for o in c.orgs.values()]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        org = _by_name(c.orgs, p["org"], "organisation")
        head = c.people[org["head"]]
        return [
            Hop(
                org["url"],
                org["name"],
                r"^- " + re.escape(org["head_title"].capitalize()) + r": \[[^\]]+" + _link_to(head["url"]),
            ),
            Hop(head["url"], None, r"^- Born: \d{4}, \[([^\]]+)\]"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        org = _by_name(c.orgs, p["org"], "organisation")
        return _other([c.cities[org["hq"]]["name"], *(x["name"] for x in c.cities.values())], answer)

    return Template(
        "head_birthplace", "In which city was the current {title} of {org} born?", candidates, plan, wrong
    )


def _author_employer_city() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"book": w["name"]} for w in c.works.values() if w["kind"] == "book"]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        book = _by_name(c.works, p["book"], "book")
        if book["kind"] != "book":
            raise NotSolvable(f"{book['name']} is not a book")
        author = c.people[book["author"]]
        org = c.orgs[author["employer"]]
        return [
            Hop(book["url"], book["name"], r"^- Author: \[[^\]]+" + _link_to(author["url"])),
            Hop(author["url"], None, r"^- Employer: \[[^\]]+" + _link_to(org["url"])),
            Hop(org["url"], None, r"^- Headquarters: \[([^\]]+)\]"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        author = c.people[_by_name(c.works, p["book"], "book")["author"]]
        return _other(
            [c.cities[author["birth_city"]]["name"], *(x["name"] for x in c.cities.values())], answer
        )

    return Template(
        "author_employer_city",
        "The author of the book \u201c{book}\u201d works for an "
        "organisation. In which city is that organisation headquartered?",
        candidates,
        plan,
        wrong,
    )


def _coach_stadium_capacity() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"coach": c.people[o["head"]]["name"]} for o in c.orgs.values() if o["kind"] == "club"]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        coach = _by_name(c.people, p["coach"], "person")
        clubs = [
            c.orgs[ref] for role, ref in coach["roles"] if role == "head" and c.orgs[ref]["kind"] == "club"
        ]
        if not clubs:
            raise NotSolvable(f"{coach['name']} coaches no club in the local corpus")
        club = clubs[0]
        return [
            Hop(coach["url"], coach["name"], r"^- Position: head coach of \[[^\]]+" + _link_to(club["url"])),
            Hop(club["url"], None, r"which seats ([\d,]+) spectators"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        return _other([f"{o['capacity']:,}" for o in c.orgs.values() if o["kind"] == "club"], answer)

    return Template(
        "coach_stadium_capacity",
        "How many spectators does the home stadium of the football club coached by {coach} seat?",
        candidates,
        plan,
        wrong,
    )


def _birthplace_river() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        return [{"person": x["name"]} for x in c.people.values()]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        person = _by_name(c.people, p["person"], "person")
        city = c.cities[person["birth_city"]]
        return [
            Hop(person["url"], person["name"], r"^- Born: \d{4}, \[[^\]]+" + _link_to(city["url"])),
            Hop(city["url"], None, r"lies on the River (\w+)"),
        ], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        return _other([x["river"] for x in c.cities.values()], answer)

    return Template(
        "birthplace_river",
        "{person}'s birthplace lies on a river. What is that river called "
        "(its name alone, without the word \u201cRiver\u201d)?",
        candidates,
        plan,
        wrong,
    )


def _person_from_clues() -> Template:
    def colleagues(c: Corpus, x: dict[str, Any]) -> list[dict[str, Any]]:
        """Everyone at ``x``'s employer with ``x``'s occupation (``x`` included)."""
        return [
            y
            for y in c.people.values()
            if y["employer"] == x["employer"] and y["occupation"] == x["occupation"]
        ]

    def candidates(c: Corpus) -> list[dict[str, str]]:
        # the organisation's staff list names one person of that occupation, who is not its head
        return [
            {"occupation": x["occupation"], "year": str(x["birth_year"]),
             "city": c.cities[x["birth_city"]]["name"], "org": c.orgs[x["employer"]]["name"]}
            for x in c.people.values()
            if x["employer"] and c.orgs[x["employer"]]["head"] != x["id"] and len(colleagues(c, x)) == 1
        ]  # fmt: skip

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        org = _by_name(c.orgs, p["org"], "organisation")
        found = [
            x for x in c.people.values()
            if x["employer"] == org["id"] and x["occupation"] == p["occupation"]
            and str(x["birth_year"]) == p["year"] and c.cities[x["birth_city"]]["name"] == p["city"]
        ]  # fmt: skip
        if len(found) != 1 or len(colleagues(c, found[0])) != 1 or org["head"] == found[0]["id"]:
            raise NotSolvable(
                f"the clues {p} do not single out one person on the staff list of {org['name']}"
            )
        person = found[0]
        staff_entry = r"^- \[[^\]]+" + _link_to(person["url"]) + r" \(" + re.escape(p["occupation"]) + r"\)$"
        clues = (
            r"^# ([^\n]+)$(?=(?s:.*)^- Born: "
            + re.escape(p["year"])
            + r", \["
            + re.escape(p["city"])
            + r"\])"
        )
        return [Hop(org["url"], org["name"], staff_entry), Hop(person["url"], None, clues)], _last

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        org = _by_name(c.orgs, p["org"], "organisation")
        return _other([c.people[org["head"]]["name"], *(x["name"] for x in c.people.values())], answer)

    return Template(
        "person_from_clues",
        "Which {occupation}, born in {year} in {city}, works for {org}? Give the person's full name.",
        candidates,
        plan,
        wrong,
    )


def _larger_staff() -> Template:
    def candidates(c: Corpus) -> list[dict[str, str]]:
        orgs = [o for o in c.orgs.values() if o["kind"] in ("company", "institute")]
        return [
            {"a": a["name"], "b": b["name"]}
            for a, b in zip(orgs, orgs[1:] + orgs[:1], strict=True)
            if a["employees"] != b["employees"]
        ]

    def plan(c: Corpus, p: dict[str, str]) -> tuple[list[Hop], Callable[[list[str]], str]]:
        a = _by_name(c.orgs, p["a"], "organisation")
        b = _by_name(c.orgs, p["b"], "organisation")
        if a["employees"] == b["employees"]:
            raise NotSolvable(f"{a['name']} and {b['name']} have the same number of employees")

        def answer(values: list[str]) -> str:
            na, nb = (int(v.replace(",", "")) for v in values)
            return a["name"] if na > nb else b["name"]

        read = r"^- Employees: ([\d,]+)$"
        return [Hop(a["url"], a["name"], read), Hop(b["url"], b["name"], read)], answer

    def wrong(c: Corpus, p: dict[str, str], answer: str) -> str:
        return p["b"] if answer == p["a"] else p["a"]

    return Template(
        "larger_staff", "Which organisation has more employees, {a} or {b}?", candidates, plan, wrong
    )


TEMPLATES: tuple[Template, ...] = (
    _founder_birth_year(),
    _hq_population(),
    _laureate_employer(),
    _builder_founded(),
    _host_city_mayor(),
    _head_birthplace(),
    _author_employer_city(),
    _coach_stadium_capacity(),
    _birthplace_river(),
    _person_from_clues(),
    _larger_staff(),
)
"""Every question template, in the order tasks cycle through them."""


# ---------------------------------------------------------------------------------------------
# Tasks and the reference solver
# ---------------------------------------------------------------------------------------------


def _task(question: str, answer: str, desc: str) -> dict[str, Any]:
    return {
        "category": "general",
        "question": question,
        "output_format": dict(OUTPUT_FORMAT),
        "use_specified_server": True,
        "mcp_servers": [{"name": name} for name in SERVERS],
        "evaluators": [
            {
                "func": "raw",
                "op": "google_search.llm_as_a_judge",
                "op_args": {"question": question, "correct_answer": answer},
                "desc": desc,
            }
        ],
        "cleanups": [],
    }


def generate_tasks(seed: int, count: int) -> list[dict[str, Any]]:
    """Our web_search tasks for ``seed`` (module docstring), in upstream's task-file format plus
    ``id`` (``web_search-NNN``) and ``reference`` (:func:`solve`).

    Task ``i`` uses template ``i mod 11`` and that template's ``i div 11``-th parameter set
    in a seeded order, so the list for a larger count extends the list for a smaller one.

    Raises:
        ValueError: ``count`` is negative or above what the corpus can ask distinctly.
    """
    if count < 0:
        raise ValueError(f"count must be at least 0, got {count}")
    corpus = build_corpus(seed)
    orders = []
    for t in TEMPLATES:
        params = t.candidates(corpus)
        random.Random(f"egi-web-tasks:{seed}:{t.key}").shuffle(params)
        orders.append(params)
    tasks = []
    for i in range(count):
        template, k = TEMPLATES[i % len(TEMPLATES)], i // len(TEMPLATES)
        if k >= len(orders[i % len(TEMPLATES)]):
            raise ValueError(
                f"web_search: at most {len(TEMPLATES) * min(map(len, orders))} distinct tasks "
                f"for seed {seed}; asked for {count}"
            )
        question = template.question.format(**orders[i % len(TEMPLATES)][k])
        task = {
            "id": f"{DOMAIN}-{i + 1:03d}",
            **_task(question, "", f"{template.key}: the final answer is the fact read on the corpus page"),
        }
        reference = solve(task, seed)
        task["evaluators"][0]["op_args"]["correct_answer"] = json.loads(reference["answer"])["answer"]
        task["reference"] = reference
        tasks.append(task)
    return tasks


def _read_page(seed: int, hop: Hop) -> tuple[list[dict[str, Any]], str]:
    """The fetch calls that read ``hop`` (paging on until its pattern matches) and the value read.

    Raises:
        AssertionError: the page never shows what the hop reads (a corpus bug).
    """
    calls: list[dict[str, Any]] = []
    start = 0
    seen = ""
    while True:
        args: dict[str, Any] = {"url": hop.url} if start == 0 else {"url": hop.url, "start_index": start}
        calls.append({"server": "fetch", "tool": "fetch", "arguments": args})
        text = fetch(seed, **args)
        body = text.split(":\n", 1)[1]
        note = re.search(r"<error>Content truncated\. Call the fetch tool with a start_index of (\d+)", body)
        seen += body[: note.start()] if note else body
        m = re.search(hop.read, seen, re.MULTILINE)
        if m:
            return calls, m.group(1)
        if not note:
            raise AssertionError(f"{hop.url}: nothing matches {hop.read!r}")
        start = int(note.group(1))


def _match(question: str) -> tuple[Template, dict[str, str]] | None:
    for t in TEMPLATES:
        m = t.pattern().match(question.strip())
        if m:
            return t, m.groupdict()
    return None


def solve(task: dict[str, Any], seed: int) -> dict[str, Any]:
    """The reference of a web_search task: the search and fetch calls a correct agent makes,
    its final answer, and a mistake (a wrong final value failing evaluator 0).

    For each page of the question's chain the agent either searches for the entity the
    question names and opens the result whose link is that entity's page, or follows the link
    read on the previous page; it fetches the page (again with ``start_index`` while what it
    needs lies further on) and reads the next link or the answer value from the text the
    server returned. The answer is ``{"answer": <value>}`` (upstream's output format).

    Raises:
        NotSolvable: the question is not one the local corpus can answer: every upstream
            web_search task (they ask about the real world), or a question naming an entity
            the corpus lacks.
        AssertionError: a search does not list the page the chain needs (a ranking bug).
    """
    question = str(task.get("question") or "")
    found = _match(question)
    if found is None:
        correct = ""
        for ev in task.get("evaluators") or []:
            correct = str((ev.get("op_args") or {}).get("correct_answer") or "") or correct
        raise Unanswerable(
            "this web_search question asks about the real world"
            + (f" (reference answer {correct!r})" if correct else "")
            + "; the local search and fetch servers serve only an invented corpus, which holds no "
            "real-world facts, so no local search can support the answer"
        )
    template, params = found
    corpus = build_corpus(seed)
    hops, combine = template.plan(corpus, params)
    calls: list[dict[str, Any]] = []
    values: list[str] = []
    for i, hop in enumerate(hops):
        if hop.query is not None:  # search, then open the result that is the entity's page
            calls.append({"server": "google-search", "tool": "search", "arguments": {"query": hop.query}})
            links = [r["link"] for r in search(seed, hop.query)["organic_results"]]
            if hop.url not in links:
                raise AssertionError(f"search {hop.query!r} does not list {hop.url}")
        elif values[-1] != hop.url:  # follow the link read on the previous page
            raise AssertionError(f"hop {i}: the previous page links to {values[-1]}, not {hop.url}")
        page_calls, value = _read_page(seed, hop)
        calls += page_calls
        values.append(value)
    answer = combine(values)
    wrong = template.wrong(corpus, params, answer)
    return {
        "calls": calls,
        "answer": json.dumps({"answer": answer}, ensure_ascii=False),
        "mistake": {
            "calls": calls,
            "answer": json.dumps({"answer": wrong}, ensure_ascii=False),
            "fails": [0],
        },
    }
