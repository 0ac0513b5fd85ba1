"""A seeded web of invented pages, shared by the local ``search`` and ``fetch`` servers.

Every organisation, person, city, event and work here is invented (names are built from
syllables; countries, rivers and prizes do not exist), so a question about them cannot be
answered from a model's memory: the answer is on a page, found by searching and read by
fetching. All sites use the reserved ``.example`` top-level domain.

World (built from the seed, :func:`build_corpus`): 4 countries, 16 cities, 48 organisations
(companies, research institutes, football clubs, orchestras), about 120 people (founders,
heads, employees, prize winners), 36 events (prizes, festivals, expeditions, summits) and 32
works (bridges, ships, towers, books). Facts are consistent across pages: a founder is born
at least 20 years before the founding, a prize winner works for the organisation their page
names, and so on.

Pages (about 300):

- ``https://corpedia.example/wiki/<Title>``: one encyclopedia article per entity, with a fact
  list and prose linking to the related entities (the hops of a multi-hop question). City
  articles carry a long timeline before their "Geography" section, so that section lies
  past the fetch server's default 5,000 characters and needs ``start_index`` paging.
- ``https://www.<org>.example/about``: the official "About" page of each company.
- ``https://dailyledger.example/<year>/<slug>``: news reports about appointments, prizes and
  festivals (they repeat entity names, so they compete in the search ranking).

Each page has a title, a one-sentence ``description`` (the search snippet: it never states
the facts the questions ask for, so the page must be fetched), a markdown body (what
``fetch`` returns) and an HTML body (what ``fetch(raw=True)`` returns).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from suites._common.mcp_servers._base import rng

__all__ = ["Corpus", "Page", "build_corpus", "canonical_url", "markdown_to_html", "wiki_url"]

WIKI = "https://corpedia.example/wiki/"
NEWS = "https://dailyledger.example/"

_GIVEN_A = [
    "Al",
    "Bre",
    "Cor",
    "Da",
    "El",
    "Fen",
    "Gar",
    "Hal",
    "Is",
    "Jor",
    "Ka",
    "Lio",
    "Mar",
    "Ne",
    "Or",
    "Pel",
    "Quin",
    "Ros",
    "Sel",
    "Tam",
    "Ul",
    "Vey",
    "Wen",
    "Yor",
    "Zan",
]
_GIVEN_B = ["a", "en", "ia", "o", "is", "an", "el", "ric", "ette", "wyn", "mar", "ys"]
_SUR_A = [
    "Ash",
    "Brann",
    "Cald",
    "Dorr",
    "Elm",
    "Fross",
    "Grell",
    "Hask",
    "Ivar",
    "Jessel",
    "Kest",
    "Lorr",
    "Mav",
    "Norr",
    "Ost",
    "Pell",
    "Quar",
    "Rend",
    "Strom",
    "Tarr",
    "Ulm",
    "Vant",
    "Wex",
    "Yarr",
    "Zell",
]
_SUR_B = ["by", "ick", "ow", "ered", "ing", "mont", "ard", "ley", "wick", "ane"]
_CITY_A = [
    "Ald",
    "Brae",
    "Cas",
    "Dun",
    "Ember",
    "Fal",
    "Glen",
    "Harrow",
    "Ist",
    "Kel",
    "Lun",
    "Mor",
    "Nesh",
    "Orv",
    "Pry",
    "Quel",
    "Ravel",
    "Sar",
    "Thal",
    "Vor",
]
_CITY_B = ["mere", "haven", "ford", "gate", "holm", "wick", "stead", "moor", "crest", "port"]
COUNTRIES = [
    ("Corvelia", "Corvelian"),
    ("Ostravan", "Ostravani"),
    ("Kalmaria", "Kalmarian"),
    ("Vessland", "Vesslandic"),
]
RIVERS = [
    "Ambry",
    "Tesselle",
    "Orrow",
    "Vayne",
    "Lisk",
    "Merrow",
    "Sulla",
    "Dravo",
    "Quenne",
    "Harl",
    "Ostel",
    "Pryce",
    "Yssa",
    "Tamber",
    "Culve",
    "Norrin",
]
FIELDS = ["Chemistry", "Geology", "Botany", "Cartography", "Physics", "Economics"]
_COMPANY_SUFFIX = [
    "Industries",
    "Works",
    "Systems",
    "Holdings",
    "Dynamics",
    "Shipyards",
    "Foundry",
    "Engineering",
]
_CLUB_SUFFIX = ["Rovers", "Athletic", "Wanderers", "United", "Albion", "Rangers"]
_FESTIVALS = ["Lantern", "Harvest", "Kite", "Salt", "Ember", "Tide"]
_BOOK_ADJ = ["Quiet", "Broken", "Northern", "Glass", "Silver", "Hollow", "Last", "Drowned"]
_BOOK_NOUN = ["Cartographer", "Harbour", "Orchard", "Lighthouse", "Ledger", "Archive", "Meridian", "Foundry"]
_FILLER = [
    "the first tramway line opens",
    "a great flood damages the lower town",
    "the covered market is rebuilt in stone",
    "the city library moves to the old customs house",
    "a cholera outbreak closes the port for a season",
    "the botanical garden is laid out",
    "the railway station is electrified",
    "the old town walls are pulled down",
    "a fire destroys the cathedral roof",
    "the municipal observatory opens",
    "the first public telephone exchange opens",
    "the harbour is dredged and extended",
    "the university admits its first students",
    "the opera house reopens after restoration",
    "a new ring road is completed",
    "the last horse tram is retired",
]

OCCUPATIONS = {  # occupation -> employer kind
    "chemist": "institute",
    "geologist": "institute",
    "botanist": "institute",
    "physicist": "institute",
    "engineer": "company",
    "architect": "company",
    "economist": "company",
    "naval architect": "company",
    "violinist": "orchestra",
    "cellist": "orchestra",
    "footballer": "club",
}
HEAD_TITLES = {
    "company": "chief executive",
    "institute": "director",
    "club": "head coach",
    "orchestra": "principal conductor",
}


@dataclass(frozen=True)
class Page:
    """One page of the corpus.

    Attributes:
        url: canonical address (``https://...``, no trailing slash).
        title: the page title (the search result's title).
        description: one sentence (the search result's snippet).
        markdown: the readable text ``fetch`` returns (markdown, links as ``[text](url)``).
        site: the site's display name (``Corpedia``, ``Daily Ledger``, the company).
    """

    url: str
    title: str
    description: str
    markdown: str
    site: str

    @property
    def html(self) -> str:
        """The page as HTML (``fetch(raw=True)``)."""
        return markdown_to_html(self.title, self.description, self.markdown)


@dataclass
class Corpus:
    """The seeded world and its pages.

    Attributes:
        seed: the seed it was built from.
        cities, people, orgs, events, works: entity records by id (plain dicts; ids are
            ``city-3``, ``person-12`` ...); every record has ``name`` and ``url``.
        pages: every page by canonical URL, in a fixed order.
    """

    seed: int
    countries: list[tuple[str, str]]
    cities: dict[str, dict[str, Any]] = field(default_factory=dict)
    people: dict[str, dict[str, Any]] = field(default_factory=dict)
    orgs: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    works: dict[str, dict[str, Any]] = field(default_factory=dict)
    pages: dict[str, Page] = field(default_factory=dict)

    def entity(self, eid: str) -> dict[str, Any]:
        """The record of any entity id.

        Raises:
            KeyError: unknown id.
        """
        for table in (self.cities, self.people, self.orgs, self.events, self.works):
            if eid in table:
                return table[eid]
        raise KeyError(f"no entity {eid!r} in the web corpus")

    def page(self, url: str) -> Page | None:
        """The page at ``url`` (any spelling :func:`canonical_url` accepts), or None."""
        return self.pages.get(canonical_url(url))


def canonical_url(url: str) -> str:
    """``url`` without surrounding space, fragment or trailing slash, scheme and host lowercased.

    ``canonical_url("HTTPS://Corpedia.example/wiki/Aldmere/#History")`` is
    ``"https://corpedia.example/wiki/Aldmere"``.
    """
    text = str(url).strip().split("#", 1)[0]
    m = re.match(r"^([A-Za-z][A-Za-z0-9+.-]*)://([^/?]*)(.*)$", text)
    if not m:
        return text
    scheme, host, rest = m.group(1).lower(), m.group(2).lower(), m.group(3)
    if rest.endswith("/"):
        rest = rest.rstrip("/")
    return f"{scheme}://{host}{rest}"


def wiki_url(title: str) -> str:
    """The encyclopedia address of an article title (spaces become underscores)."""
    return WIKI + title.replace(" ", "_")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _link(record: dict[str, Any]) -> str:
    return f"[{record['name']}]({record['url']})"


def _num(n: int) -> str:
    return f"{n:,}"


_INLINE_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def markdown_to_html(title: str, description: str, markdown: str) -> str:
    """A small HTML document for the page's markdown (headings, bullet lists, paragraphs,
    ``[text](url)`` links), as a web server would serve it."""

    def inline(text: str) -> str:
        out, pos = [], 0
        for m in _INLINE_LINK.finditer(text):
            out.append(html.escape(text[pos : m.start()]))
            out.append(f'<a href="{html.escape(m.group(2))}">{html.escape(m.group(1))}</a>')
            pos = m.end()
        out.append(html.escape(text[pos:]))
        return "".join(out)

    body: list[str] = []
    in_list = False
    for line in markdown.splitlines():
        if line.startswith("- "):
            if not in_list:
                body.append("<ul>")
                in_list = True
            body.append(f"<li>{inline(line[2:])}</li>")
            continue
        if in_list:
            body.append("</ul>")
            in_list = False
        if not line.strip():
            continue
        level = len(line) - len(line.lstrip("#"))
        if level and line[level : level + 1] == " ":
            body.append(f"<h{level}>{inline(line[level + 1 :])}</h{level}>")
        else:
            body.append(f"<p>{inline(line)}</p>")
    if in_list:
        body.append("</ul>")
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        f'<meta name="description" content="{html.escape(description)}">\n</head>\n<body>\n'
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------------------------
# World
# ---------------------------------------------------------------------------------------------


def _names(r: Any, a: list[str], b: list[str], n: int, taken: set[str]) -> list[str]:
    pool = [x + y for x in a for y in b]
    r.shuffle(pool)
    out = [p for p in pool if p not in taken][:n]
    taken.update(out)
    return out


def _world(seed: int) -> Corpus:
    r = rng(seed, "web")
    c = Corpus(seed=seed, countries=list(COUNTRIES))
    taken: set[str] = set()
    city_names = _names(r, _CITY_A, _CITY_B, 16, taken)
    rivers = list(RIVERS)
    r.shuffle(rivers)
    for i, name in enumerate(city_names):
        country = COUNTRIES[i % len(COUNTRIES)]
        c.cities[f"city-{i}"] = {
            "id": f"city-{i}",
            "name": name,
            "url": wiki_url(name),
            "country": country[0],
            "demonym": country[1],
            "population": r.randrange(40, 2400) * 500 + r.randrange(0, 500),
            "founded": r.randrange(880, 1650),
            "river": rivers[i],
            "elevation_m": r.randrange(3, 900),
            "mayor": None,
        }
    cities = list(c.cities)

    given = _names(r, _GIVEN_A, _GIVEN_B, 200, taken)
    surnames = _names(r, _SUR_A, _SUR_B, 200, taken)
    people_names: list[str] = []
    used: set[str] = set()
    while len(people_names) < 140:
        name = f"{r.choice(given)} {r.choice(surnames)}"
        if name not in used:
            used.add(name)
            people_names.append(name)
    pid = iter(range(len(people_names)))

    def new_person(born: int, occupation: str, employer: str | None) -> str:
        i = next(pid)
        key = f"person-{i}"
        name = people_names[i]
        c.people[key] = {
            "id": key,
            "name": name,
            "url": wiki_url(name),
            "birth_year": born,
            "birth_city": r.choice(cities),
            "occupation": occupation,
            "employer": employer,
            "roles": [],
            "awards": [],
            "books": [],
        }
        return key

    kinds = ["company"] * 20 + ["institute"] * 12 + ["club"] * 10 + ["orchestra"] * 6
    used_org: set[str] = set()
    for i, kind in enumerate(kinds):
        key = f"org-{i}"
        hq = cities[i % len(cities)] if i < len(cities) else r.choice(cities)
        hq_name = c.cities[hq]["name"]
        while True:
            if kind == "company":
                name = f"{r.choice(surnames)} {r.choice(_COMPANY_SUFFIX)}"
            elif kind == "institute":
                name = f"{hq_name} Institute of {r.choice(FIELDS)}"
            elif kind == "club":
                name = f"{hq_name} {r.choice(_CLUB_SUFFIX)}"
            else:
                name = f"{hq_name} {r.choice(['Philharmonic', 'Symphony Orchestra', 'Chamber Orchestra'])}"
            if name not in used_org:
                used_org.add(name)
                break
        founded = r.randrange(1860, 2006)
        org: dict[str, Any] = {
            "id": key,
            "name": name,
            "kind": kind,
            "url": wiki_url(name),
            "founded": founded,
            "hq": hq,
            "founder": None,
            "head": None,
            "head_title": HEAD_TITLES[kind],
            "employees": r.randrange(40, 9000) if kind in ("company", "institute") else r.randrange(30, 400),
        }
        if kind == "club":
            org["stadium"] = f"{r.choice(surnames)} Park"
            org["capacity"] = r.randrange(40, 600) * 100 + r.randrange(1, 100)
        c.orgs[key] = org
    org_ids = list(c.orgs)
    by_kind = {k: [o for o in org_ids if c.orgs[o]["kind"] == k] for k in HEAD_TITLES}
    employees = {o: set() for o in org_ids}

    for o in org_ids:
        org = c.orgs[o]
        if org["kind"] in ("company", "institute"):
            occupation = (
                "engineer"
                if org["kind"] == "company"
                else r.choice(["chemist", "geologist", "botanist", "physicist"])
            )
            f = new_person(org["founded"] - r.randrange(24, 46), occupation, None)
            org["founder"] = f
            c.people[f]["roles"].append(("founder", o))
        head_occ = {
            "company": "economist",
            "institute": "physicist",
            "club": "footballer",
            "orchestra": "violinist",
        }[org["kind"]]
        h = new_person(r.randrange(1952, 1986), "coach" if org["kind"] == "club" else head_occ, o)
        org["head"] = h
        c.people[h]["roles"].append(("head", o))
        employees[o].add(h)
    for ci in cities:
        mayor = new_person(r.randrange(1948, 1984), "politician", None)
        c.cities[ci]["mayor"] = mayor
        c.people[mayor]["roles"].append(("mayor", ci))
    while len(c.people) < len(people_names):
        occupation = r.choice(sorted(OCCUPATIONS))
        employer = r.choice(by_kind[OCCUPATIONS[occupation]])
        p = new_person(r.randrange(1950, 1998), occupation, employer)
        employees[employer].add(p)

    staff = [p for p in c.people if c.people[p]["employer"] and not c.people[p]["roles"]]
    years = list(range(1968, 2025))
    for i in range(36):
        key = f"event-{i}"
        kind = ["prize", "festival", "expedition", "summit"][i % 4]
        year = r.choice(years)
        city = r.choice(cities)
        organiser = r.choice(org_ids)
        ev: dict[str, Any] = {
            "id": key,
            "kind": kind,
            "year": year,
            "city": city,
            "organiser": organiser,
            "attendance": r.randrange(8, 900) * 100 + r.randrange(1, 100),
            "person": None,
        }
        if kind == "prize":
            person = r.choice(staff)
            staff.remove(person)
            occ_field = {
                "chemist": "Chemistry",
                "geologist": "Geology",
                "botanist": "Botany",
                "physicist": "Physics",
                "economist": "Economics",
                "architect": "Architecture",
                "violinist": "Music",
                "cellist": "Music",
                "footballer": "Sport",
            }
            fld = occ_field.get(c.people[person]["occupation"], "Engineering")
            ev["name"] = f"{year} {r.choice(surnames)} Prize for {fld}"
            ev["person"] = person
            c.people[person]["awards"].append(key)
        elif kind == "festival":
            ev["name"] = f"{year} {c.cities[city]['name']} {r.choice(_FESTIVALS)} Festival"
        elif kind == "expedition":
            person = r.choice(staff)
            ev["name"] = f"{year} {r.choice(RIVERS)} Source Expedition"
            ev["person"] = person
            c.people[person]["roles"].append(("expedition", key))
        else:
            ev["name"] = f"{year} {c.cities[city]['name']} Trade Summit"
        if any(e["name"] == ev["name"] for e in c.events.values()):
            ev["name"] += f" ({c.cities[city]['name']})"
        ev["url"] = wiki_url(ev["name"])
        c.events[key] = ev

    companies = by_kind["company"]
    authors = [p for p in c.people if c.people[p]["employer"]]
    used_work: set[str] = set()
    for i in range(32):
        key = f"work-{i}"
        kind = ["bridge", "ship", "tower", "book"][i % 4]
        year = r.randrange(1890, 2024)
        w: dict[str, Any] = {"id": key, "kind": kind, "year": year, "city": r.choice(cities)}
        while True:
            if kind == "bridge":
                name = f"{r.choice(surnames)} Bridge"
            elif kind == "ship":
                name = f"SS {r.choice(given)} {r.choice(surnames)}"
            elif kind == "tower":
                name = f"{r.choice(surnames)} Tower"
            else:
                name = f"The {r.choice(_BOOK_ADJ)} {r.choice(_BOOK_NOUN)}"
            if name not in used_work:
                used_work.add(name)
                break
        w["name"] = name
        w["url"] = wiki_url(name)
        if kind == "book":
            author = r.choice(authors)
            w["author"] = author
            w["pages"] = r.randrange(120, 720)
            c.people[author]["books"].append(key)
        else:
            builder = r.choice(companies)
            w["builder"] = builder
            if year < c.orgs[builder]["founded"]:
                w["year"] = year = r.randrange(c.orgs[builder]["founded"], 2025)
            w["size"] = {
                "bridge": r.randrange(80, 2400),
                "ship": r.randrange(900, 60000),
                "tower": r.randrange(60, 420),
            }[kind]
        c.works[key] = w
    return c


# ---------------------------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------------------------


def _article(title: str, description: str, facts: list[str], sections: list[tuple[str, list[str]]]) -> str:
    lines = [f"# {title}", "", description, ""]
    lines += [f"- {f}" for f in facts]
    for head, paras in sections:
        if lines[-1]:
            lines.append("")
        lines += [f"## {head}", ""]
        for p in paras:
            lines.append(p)
            if not p.startswith("- "):
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


_DISTRICT_A = [
    "Old",
    "North",
    "South",
    "East",
    "West",
    "Upper",
    "Lower",
    "New",
    "Market",
    "Harbour",
    "Mill",
    "Canal",
    "Castle",
    "Bridge",
    "Chapel",
    "Orchard",
    "Quarry",
    "Station",
]
_DISTRICT_B = ["Quarter", "Hill", "Side", "Green", "Fields", "Wharf", "Row", "Heights", "End", "Gardens"]
_DISTRICT_TEXT = [
    "a residential district around the old market square",
    "a former industrial area now home to workshops and studios",
    "a quiet district of terraced houses and small parks",
    "the commercial centre, with the main shopping streets",
    "a hillside district known for its steep stairways",
    "a district of warehouses converted into flats",
    "a suburb that grew up around the railway depot",
    "a district of gardens, allotments and a large public park",
]
_GEOGRAPHY_AT = 5200
"""Every city article's "Geography" section starts past this character (districts are added
until it does), so reading it needs ``fetch`` paging at the default ``max_length=5000``."""


def _districts(r: Any, city: dict[str, Any]) -> list[str]:
    names = r.sample([f"{a} {b}" for a in _DISTRICT_A for b in _DISTRICT_B], 40)
    return [
        f"- {n}: {r.choice(_DISTRICT_TEXT)}; about {_num(r.randrange(8, 90) * 100)} residents." for n in names
    ]


def _pages(c: Corpus) -> None:
    r = rng(c.seed, "web-pages")
    P, O, C, E, W = c.people, c.orgs, c.cities, c.events, c.works  # noqa: N806, E741

    def add(url: str, title: str, description: str, markdown: str, site: str) -> None:
        if url in c.pages:
            raise ValueError(f"two pages at {url}")
        c.pages[url] = Page(url, title, description, markdown, site)

    for ci, city in C.items():
        mayor = P[city["mayor"]] if city["mayor"] else None
        natives = [p for p in P.values() if p["birth_city"] == ci]
        based = [o for o in O.values() if o["hq"] == ci]
        timeline: list[tuple[int, str]] = [(city["founded"], "the settlement receives its charter")]
        filler = r.sample(_FILLER, len(_FILLER))
        for y, text in zip(
            sorted(r.sample(range(max(city["founded"] + 40, 1790), 1965), len(filler))), filler, strict=True
        ):
            timeline.append((y, text))
        timeline += [(o["founded"], f"{_link(o)} is founded") for o in based]
        timeline += [(e["year"], f"the city hosts the {_link(e)}") for e in E.values() if e["city"] == ci]
        timeline += [
            (w["year"], f"the {_link(w)} is completed")
            for w in W.values()
            if w["city"] == ci and w["kind"] != "book"
        ]
        timeline.sort(key=lambda t: t[0])
        desc = f"{city['name']} is a city in {city['country']}."
        facts = [
            f"Country: {city['country']}",
            f"Population: {_num(city['population'])}",
            f"Founded: {city['founded']}",
        ]
        if mayor:
            facts.append(f"Mayor: {_link(mayor)}")
        sections = [
            (
                "Overview",
                [
                    f"{city['name']} received its charter in {city['founded']}. Its current mayor is "
                    + (_link(mayor) if mayor else "vacant")
                    + "."
                ],
            ),
            ("Timeline", [f"- {y}: {text}" for y, text in timeline]),
            (
                "Notable people",
                [f"- {_link(p)} ({p['occupation']}, born {p['birth_year']})" for p in natives]
                or ["No notable people are listed."],
            ),
            ("Organisations", [f"- {_link(o)}" for o in based] or ["No organisations are listed."]),
            ("Districts", _districts(r, city)),
            (
                "Geography",
                [
                    f"{city['name']} lies on the River {city['river']} at an elevation of "
                    f"{city['elevation_m']} metres above sea level."
                ],
            ),
        ]
        districts = sections[-2][1]
        keep = 1
        while keep < len(districts):
            text = _article(
                city["name"], desc, facts, [*sections[:-2], ("Districts", districts[:keep]), sections[-1]]
            )
            if text.index("## Geography") > _GEOGRAPHY_AT:
                break
            keep += 1
        else:
            raise AssertionError(f"{city['name']}: too few districts to push Geography past {_GEOGRAPHY_AT}")
        add(city["url"], city["name"], desc, text, "Corpedia")

    for person in P.values():
        city = C[person["birth_city"]]
        desc = f"{person['name']} is a {city['demonym']} {person['occupation']}."
        facts = [f"Born: {person['birth_year']}, {_link(city)}", f"Occupation: {person['occupation']}"]
        life = [f"{person['name']} was born in {person['birth_year']} in {_link(city)}, {city['country']}."]
        if person["employer"]:
            org = O[person["employer"]]
            facts.append(f"Employer: {_link(org)}")
            life.append(f"{person['name']} works for {_link(org)}.")
        for role, ref in person["roles"]:
            if role == "founder":
                life.append(f"In {O[ref]['founded']}, {person['name']} founded {_link(O[ref])}.")
            elif role == "head":
                facts.append(f"Position: {O[ref]['head_title']} of {_link(O[ref])}")
                life.append(f"{person['name']} is the current {O[ref]['head_title']} of {_link(O[ref])}.")
            elif role == "mayor":
                facts.append(f"Office: Mayor of {_link(C[ref])}")
                life.append(f"{person['name']} is the mayor of {_link(C[ref])}.")
            elif role == "expedition":
                life.append(f"{person['name']} led the {_link(E[ref])}.")
        sections = [("Life", life)]
        if person["awards"]:
            sections.append(
                ("Recognition", [f"{person['name']} received the {_link(E[e])}." for e in person["awards"]])
            )
        if person["books"]:
            sections.append(("Works", [f"- {_link(W[w])} ({W[w]['year']})" for w in person["books"]]))
        add(person["url"], person["name"], desc, _article(person["name"], desc, facts, sections), "Corpedia")

    for org in O.values():
        city = C[org["hq"]]
        label = {
            "company": "company",
            "institute": "research institute",
            "club": "football club",
            "orchestra": "orchestra",
        }[org["kind"]]
        desc = f"{org['name']} is a {city['demonym']} {label}."
        facts = [f"Founded: {org['founded']}", f"Headquarters: {_link(city)}"]
        history = [f"{org['name']} was established in {org['founded']} in {_link(city)}."]
        if org["founder"]:
            facts.append(f"Founder: {_link(P[org['founder']])}")
            history.append(f"It was founded by {_link(P[org['founder']])}.")
        facts.append(f"{org['head_title'].capitalize()}: {_link(P[org['head']])}")
        facts.append(f"Employees: {_num(org['employees'])}")
        people = [f"The current {org['head_title']} is {_link(P[org['head']])}."]
        staff = [p for p in P.values() if p["employer"] == org["id"] and p["id"] != org["head"]]
        people += [f"- {_link(p)} ({p['occupation']})" for p in staff]
        sections = [("History", history), ("People", people)]
        if org["kind"] == "club":
            facts.append(f"Stadium: {org['stadium']}")
            sections.append(
                (
                    "Stadium",
                    [
                        f"The club plays its home games at {org['stadium']}, which seats "
                        f"{_num(org['capacity'])} spectators."
                    ],
                )
            )
        built = [w for w in W.values() if w.get("builder") == org["id"]]
        if built:
            sections.append(("Projects", [f"- {_link(w)} ({w['year']})" for w in built]))
        events = [e for e in E.values() if e["organiser"] == org["id"]]
        if events:
            sections.append(("Events organised", [f"- {_link(e)}" for e in events]))
        add(org["url"], org["name"], desc, _article(org["name"], desc, facts, sections), "Corpedia")
        if org["kind"] == "company":
            host = _slug(org["name"]).replace("-", "")
            url = f"https://www.{host}.example/about"
            d = f"Learn about {org['name']}, our history and our people."
            text = (
                f"# About {org['name']}\n\n{d}\n\nSince {org['founded']}, {org['name']} has grown from a "
                f"workshop in {city['name']} into a company of {_num(org['employees'])} people. "
                f"Our {org['head_title']}, {P[org['head']]['name']}, leads the company today.\n\n"
                f"Read more about us on [Corpedia]({org['url']}).\n"
            )
            add(url, f"About {org['name']}", d, text, org["name"])

    for ev in E.values():
        city = C[ev["city"]]
        org = O[ev["organiser"]]
        label = {"prize": "award", "festival": "festival", "expedition": "expedition", "summit": "summit"}[
            ev["kind"]
        ]
        desc = f"The {ev['name']} was a {city['demonym']} {label}."
        facts = [f"Year: {ev['year']}", f"Location: {_link(city)}", f"Organiser: {_link(org)}"]
        body = [
            f"The {ev['name']} took place in {_link(city)} in {ev['year']} and was organised by {_link(org)}."
        ]
        if ev["kind"] == "prize":
            facts.append(f"Laureate: {_link(P[ev['person']])}")
            body.append(f"The prize was awarded to {_link(P[ev['person']])}.")
        elif ev["kind"] == "expedition":
            facts.append(f"Leader: {_link(P[ev['person']])}")
            body.append(f"The expedition was led by {_link(P[ev['person']])}.")
        facts.append(f"Attendance: {_num(ev['attendance'])}")
        body.append(f"About {_num(ev['attendance'])} people attended.")
        add(ev["url"], ev["name"], desc, _article(ev["name"], desc, facts, [("Summary", body)]), "Corpedia")

    for w in W.values():
        city = C[w["city"]]
        if w["kind"] == "book":
            author = P[w["author"]]
            desc = f"{w['name']} is a book by a {C[author['birth_city']]['demonym']} writer."
            facts = [f"Author: {_link(author)}", f"Published: {w['year']}", f"Pages: {w['pages']}"]
            body = [f"{w['name']} was written by {_link(author)} and published in {w['year']}."]
        else:
            builder = O[w["builder"]]
            unit = {
                "bridge": ("Length", "metres"),
                "ship": ("Tonnage", "gross tons"),
                "tower": ("Height", "metres"),
            }[w["kind"]]
            desc = f"The {w['name']} is a {w['kind']} in {city['name']}."
            facts = [
                f"Location: {_link(city)}",
                f"Built by: {_link(builder)}",
                f"Completed: {w['year']}",
                f"{unit[0]}: {_num(w['size'])} {unit[1]}",
            ]
            body = [f"The {w['name']} was built by {_link(builder)} and completed in {w['year']}."]
        add(w["url"], w["name"], desc, _article(w["name"], desc, facts, [("Description", body)]), "Corpedia")

    news: list[tuple[int, str, str, str]] = []
    for org in O.values():
        head = P[org["head"]]
        year = r.randrange(max(org["founded"], 2008), 2025)
        news.append(
            (
                year,
                f"{org['name']} names {head['name']} as {org['head_title']}",
                f"{org['name']} announced a new {org['head_title']}.",
                f"{org['name']}, based in {_link(C[org['hq']])}, has appointed {_link(head)} as its "
                f"{org['head_title']}. The appointment was confirmed by the board in {year}.",
            )
        )
    for ev in E.values():
        if ev["kind"] == "prize":
            p = P[ev["person"]]
            news.append(
                (
                    ev["year"],
                    f"{p['name']} wins the {ev['name']}",
                    "A prize ceremony report.",
                    f"{_link(p)} received the {_link(ev)} at a ceremony in {_link(C[ev['city']])}.",
                )
            )
        elif ev["kind"] == "festival":
            news.append(
                (
                    ev["year"],
                    f"Crowds gather for the {ev['name']}",
                    "A festival report.",
                    f"The {_link(ev)} filled the streets of {_link(C[ev['city']])}. "
                    f"Organisers from {_link(O[ev['organiser']])} were pleased.",
                )
            )
    for year, title, desc, text in news:
        url = f"{NEWS}{year}/{_slug(title)}"
        add(url, title, desc, f"# {title}\n\n{desc}\n\n{text}\n\n*Daily Ledger, {year}*\n", "Daily Ledger")


@lru_cache(maxsize=8)
def build_corpus(seed: int) -> Corpus:
    """The world and its pages for ``seed`` (deterministic; cached per process).

    Returns:
        A :class:`Corpus`; the same seed gives the same pages, byte for byte.
    """
    c = _world(seed)
    _pages(c)
    return c
