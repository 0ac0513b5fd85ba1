"""The web corpus and its two servers (``search`` = MCP-Universe's google-search, ``fetch`` =
mcp-server-fetch), through the SDK's in-memory transport; expected values are read from the
same seeded corpus."""

from __future__ import annotations

import json
import re

import anyio
import pytest

from suites._common.mcp_servers import build_server
from suites._common.mcp_servers.fetch import RAW_PREFIX, fetch
from suites._common.mcp_servers.search import RESULTS_PER_PAGE, search, search_index
from suites._common.mcp_servers.web_corpus import build_corpus, canonical_url, markdown_to_html

SEED = 42
_SERVERS: dict[str, object] = {}


def call(domain: str, tool: str, args: dict) -> tuple[bool, str]:
    """(is_error, text) of one call on the in-process server."""
    from mcp import Client

    server = _SERVERS.setdefault(domain, build_server(domain, SEED))

    async def run() -> tuple[bool, str]:
        async with Client(server) as client:
            result = await client.call_tool(tool, args)
            return bool(result.is_error), "\n".join(b.text for b in result.content)

    return anyio.run(run)


@pytest.fixture(scope="module")
def corpus():
    return build_corpus(SEED)


# -- corpus -----------------------------------------------------------------------------------


def test_corpus_is_deterministic_per_seed_and_sized(corpus):
    again = build_corpus.__wrapped__(SEED)  # rebuilt, not the cached object
    assert again is not corpus and again.pages == corpus.pages
    assert build_corpus.__wrapped__(SEED + 1).pages != corpus.pages
    assert 300 <= len(corpus.pages) <= 400
    counts = (len(corpus.cities), len(corpus.orgs), len(corpus.events), len(corpus.works), len(corpus.people))
    assert counts == (16, 48, 36, 32, 140)


def test_every_link_resolves_and_every_site_is_reserved(corpus):
    for url, page in corpus.pages.items():
        assert re.match(r"^https://[a-z0-9.]+\.example/", url), url
        assert canonical_url(url) == url
        for target in re.findall(r"\]\((https?://[^)\s]+)\)", page.markdown):
            assert target in corpus.pages, f"{url} links to missing {target}"


def test_facts_are_consistent_across_pages(corpus):
    for org in corpus.orgs.values():
        if org["founder"]:
            assert corpus.people[org["founder"]]["birth_year"] <= org["founded"] - 20
        assert corpus.people[org["head"]]["employer"] == org["id"]
    for ev in corpus.events.values():
        if ev["kind"] == "prize":
            assert corpus.people[ev["person"]]["employer"]
    for work in corpus.works.values():
        if work["kind"] != "book":
            assert work["year"] >= corpus.orgs[work["builder"]]["founded"]


def test_city_geography_lies_past_the_default_fetch_length(corpus):
    for city in corpus.cities.values():
        text = corpus.pages[city["url"]].markdown
        assert text.index("## Geography") > 5000
        assert f"lies on the River {city['river']} at an elevation of {city['elevation_m']} metres" in text
        assert f"- Population: {city['population']:,}\n" in text


def test_snippets_never_state_the_asked_facts(corpus):
    for person in corpus.people.values():
        assert str(person["birth_year"]) not in corpus.pages[person["url"]].description
    for org in corpus.orgs.values():
        description = corpus.pages[org["url"]].description
        assert str(org["founded"]) not in description and f"{org['employees']:,}" not in description


def test_markdown_to_html():
    text = "# T\n\nSee [A & B](https://x.example/a).\n\n- one\n- two\n\n## Part\n\nEnd."
    assert markdown_to_html("T", "d", text).split("<body>\n")[1] == (
        '<h1>T</h1>\n<p>See <a href="https://x.example/a">A &amp; B</a>.</p>\n<ul>\n<li>one</li>\n'
        "<li>two</li>\n</ul>\n<h2>Part</h2>\n<p>End.</p>\n</body>\n</html>\n"
    )


def test_canonical_url():
    assert (
        canonical_url(" HTTPS://Corpedia.EXAMPLE/wiki/Aldmere/#History ")
        == "https://corpedia.example/wiki/Aldmere"
    )
    assert canonical_url("https://corpedia.example/") == "https://corpedia.example"


# -- search -----------------------------------------------------------------------------------


def test_search_result_shape(corpus):
    city = corpus.cities["city-0"]
    data = json.loads(call("search", "search", {"query": f"  {city['name']}  "})[1])
    assert data["search_parameters"] == {"engine": "google", "q": city["name"]}
    results = data["organic_results"]
    assert len(results) == RESULTS_PER_PAGE
    assert data["search_information"]["total_results"] >= len(results)
    assert [r["position"] for r in results] == list(range(1, 11))
    top = results[0]
    assert top == {
        "position": 1,
        "title": city["name"],
        "link": city["url"],
        "displayed_link": "https://corpedia.example › wiki › " + city["url"].rsplit("/", 1)[1],
        "snippet": f"{city['name']} is a city in {city['country']}.",
        "source": "Corpedia",
    }


def test_every_entity_page_ranks_first_for_its_name(corpus):
    index = search_index(SEED)
    for table in (corpus.cities, corpus.people, corpus.orgs, corpus.events, corpus.works):
        for record in table.values():
            assert index.rank(record["name"])[0][0] == record["url"], record["name"]


def test_search_is_deterministic_and_breaks_ties_by_corpus_order():
    index = search_index(SEED)
    ranked = index.rank("festival")
    assert ranked == index.rank("festival") and len(ranked) > RESULTS_PER_PAGE
    order = {url: i for i, url in enumerate(index.urls)}
    for (u1, s1), (u2, s2) in zip(ranked, ranked[1:], strict=False):
        assert s1 > s2 or (s1 == s2 and order[u1] < order[u2])


def test_search_no_match_and_empty_query():
    data = search(SEED, "zzzqx")
    assert data["organic_results"] == [] and data["search_information"] == {"total_results": 0}
    assert call("search", "search", {"query": "  "}) == (
        True,
        "Error executing tool search: query must not be empty",
    )


# -- fetch ------------------------------------------------------------------------------------


def test_fetch_truncates_with_upstreams_note_and_pages_on(corpus):
    city = corpus.cities["city-0"]
    full = corpus.pages[city["url"]].markdown
    error, first = call("fetch", "fetch", {"url": city["url"]})
    assert not error
    assert first == (
        f"Contents of {city['url']}:\n{full[:5000]}\n\n<error>Content truncated. Call the fetch tool "
        "with a start_index of 5000 to get more content.</error>"
    )
    rest = call("fetch", "fetch", {"url": city["url"], "start_index": 5000})[1]
    assert rest == f"Contents of {city['url']}:\n{full[5000:]}"  # the end: no note
    chunks, start = [], 0
    while True:
        text = fetch(SEED, city["url"], max_length=1000, start_index=start)
        body = text.split(":\n", 1)[1]
        note = re.search(
            r"\n\n<error>Content truncated\. Call the fetch tool with a start_index of (\d+)", body
        )
        chunks.append(body[: note.start()] if note else body)
        if not note:
            break
        start = int(note.group(1))
    assert "".join(chunks) == full
    assert fetch(SEED, city["url"], start_index=len(full)).endswith(
        ":\n<error>No more content available.</error>"
    )


def test_fetch_exact_length_page_has_no_note(corpus):
    url = next(iter(corpus.pages))
    n = len(corpus.pages[url].markdown)
    assert fetch(SEED, url, max_length=n) == f"Contents of {url}:\n{corpus.pages[url].markdown}"


def test_fetch_raw_returns_the_html_with_upstreams_prefix(corpus):
    person = corpus.people["person-0"]
    text = call("fetch", "fetch", {"url": person["url"], "raw": True, "max_length": 999999})[1]
    assert text == f"{RAW_PREFIX}Contents of {person['url']}:\n{corpus.pages[person['url']].html}"
    assert f"<title>{person['name']}</title>" in text


def test_fetch_accepts_url_spellings_and_refuses_unknown_pages(corpus):
    url = corpus.orgs["org-0"]["url"]
    spelled = url.replace("https://corpedia.example", "HTTPS://Corpedia.Example") + "/#People"
    assert call("fetch", "fetch", {"url": spelled})[1].startswith(f"Contents of {url}:\n# ")
    missing = "https://corpedia.example/wiki/Atlantis"
    assert call("fetch", "fetch", {"url": missing}) == (
        True,
        f"Error executing tool fetch: Failed to fetch {missing} - status code 404",
    )
    assert call("fetch", "fetch", {"url": "corpedia.example/wiki/X"}) == (
        True,
        "Error executing tool fetch: url must be an absolute http(s) URL, got 'corpedia.example/wiki/X'",
    )
    error, text = call("fetch", "fetch", {"url": url, "max_length": 0})
    assert error and "Input should be greater than 0" in text
    error, text = call("fetch", "fetch", {"url": url, "start_index": -1})
    assert error and "Input should be greater than or equal to 0" in text
