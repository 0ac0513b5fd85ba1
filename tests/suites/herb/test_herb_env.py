"""HERB tools and retrieval (reference §2.3): look-ups, the two upstream bugs, BM25/hybrid."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import numpy as np
import pytest

from pytest_egi.suite import Task
from suites.herb import HerbOptions
from suites.herb.data import World, world_spec
from suites.herb.env import NO_RESULTS, HerbEnv, get_env, load_encoder, make_submission
from suites.herb.policy import parse_results


def _employee(world: World, role: str) -> dict[str, Any]:
    return next(e for e in world.employees.values() if e["role"] == role)


def test_name_lookups(env: HerbEnv, world: World) -> None:
    e = _employee(world, "UX Researcher")
    first, last = e["name"].split()
    kit = env.toolkit()
    out = json.loads(kit.call("name_to_id_search", {"content": f"Ask {e['name']} about it"}).content)
    assert out == {e["name"].lower(): [e["employee_id"]]}
    same_first = sorted(x["employee_id"] for x in world.employees.values()
                        if x["name"].split()[0] == first)  # fmt: skip
    assert sorted(env.name_to_id(first.upper())[first.lower()]) == same_first  # name parts
    assert env.name_to_id("Nobody Herethere") == {}
    assert env.id_to_name(f"who is {e['employee_id']}?") == {e["employee_id"]: e["name"]}
    assert last.lower() in env.name_to_id(f"{last} said so")


def test_role_lookups_fixed_and_faithful(env: HerbEnv, world: World) -> None:
    qa = sorted(e["employee_id"] for e in world.employees.values() if e["role"] == "QA Specialist")
    fixed = env.toolkit()
    out = json.loads(fixed.call("role_to_id_search", {"text": "Which QA Specialists..."}).content)
    assert list(out) == ["qa specialist"] and sorted(out["qa specialist"]) == qa
    e = _employee(world, "Technical Architect")
    out = json.loads(fixed.call("id_to_role_search", {"content": e["employee_id"]}).content)
    assert out == {e["employee_id"]: "Technical Architect"}
    faithful = env.toolkit(faithful_tool_bugs=True)
    broken = faithful.call("role_to_id_search", {"text": "QA Specialist"})
    assert broken.error and broken.content == (
        "Error: role_to_id_search failed: its prompt template expects a 'text' placeholder "
        "that the call does not fill (upstream defect, reference §3b)"
    )
    ids = json.loads(faithful.call("id_to_role_search", {"content": e["employee_id"]}).content)
    assert ids == [e["employee_id"]]  # upstream returns the ids, not the roles


def test_company_pr_and_url_lookups(env: HerbEnv, world: World) -> None:
    customer = world.customers[3]
    assert env.company_to_id(f"news from {customer['company'].upper()}") == {
        customer["company"].lower(): [customer["id"]]
    }
    assert env.id_to_company(customer["id"].lower()) == {customer["id"].lower(): customer["company"]}
    product = next(iter(world.products.values()))
    pr, doc, url = product["prs"][0], product["documents"][0], product["urls"][0]
    assert env.prs(f"see {pr['link'].upper()}.") == [pr]  # case-insensitive, punctuation cut
    assert env.urls(f"{doc['document_link']} and {url['link']}") == [doc, url]
    assert env.urls(pr["link"]) == [] and env.prs(url["link"]) == []
    kit = env.toolkit()
    assert json.loads(kit.call("pr_search", {"content": "no links here"}).content) == []
    bad = kit.call("pr_search", {"link": pr["link"]})  # upstream's argument is `content`
    assert bad.error and "bad arguments" in bad.content


def test_submit_normalises_its_arguments() -> None:
    assert make_submission("x", "eid_1", "false") == {
        "answer": "x",
        "entities": ["eid_1"],
        "answerable": False,
    }
    assert make_submission(None, None) == {"answer": "", "entities": [], "answerable": True}
    assert make_submission("y", ["a", " ", 3], 0)["entities"] == ["a", "3"]


def test_planted_fact_is_retrieved_in_top_k(env: HerbEnv, world: World) -> None:
    q = next(q for q in world.questions if q["answerable"] and q["recipe"]["kind"] == "target")
    p = q["recipe"]
    query = f"{p['product']} PRD {p['metric']} target for {p['feature']}"
    hits = [env.ids[i] for i in env.search(query, 20)]
    assert q["citations"][0] in hits  # the PRD that states the target
    block = next(b for b in parse_results(env.retrieve(query, 20)) if b.id == q["citations"][0])
    assert block.kind == "doc" and block.head["type"] == "PRD"
    assert q["facts"][0] in block.body


def test_question_text_retrieves_a_cited_artifact(env: HerbEnv, quick_tasks: list[Task]) -> None:
    indexed = set(env.ids)
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for t in quick_tasks:
        cited = [c for c in t.data["citations"] if c in indexed]
        if t.category in ("content", "person", "company") and cited:
            hits = {env.ids[i] for i in env.search(t.data["question"], 20)}
            total[t.category] += 1
            found[t.category] += any(c in hits for c in cited)
    assert found == total  # measured 100% for these types on the quick world


def test_links_are_indexed_only_on_request(world: World) -> None:
    product = next(iter(world.products.values()))
    pr = product["prs"][0]
    plain = get_env(world_spec(42, HerbOptions()), HerbOptions())
    assert pr["id"] not in plain.ids and product["urls"][0]["id"] not in plain.ids
    with_links = HerbEnv(World(world.employees, world.customers,
                               {"P": product}), index_links=True)  # fmt: skip
    assert pr["id"] in [with_links.ids[i] for i in with_links.search(pr["summary"], 5)]


def test_hybrid_is_bm25_first_then_dense(small_world: World) -> None:
    bm25 = HerbEnv(small_world)
    hybrid = HerbEnv(small_world, retriever="hybrid")
    query = next(iter(small_world.products)) + " PRD overview features risks"
    first = bm25.search(query, 5)
    union = hybrid.search(query, 5)
    assert union[: len(first)] == first and 5 < len(union) <= 10
    assert len(set(union)) == len(union)
    assert bm25.retrieve("zzqx", 5) == NO_RESULTS
    with pytest.raises(ValueError, match="must be 'bm25' or 'hybrid'"):
        HerbEnv(small_world, retriever="dense")


class _OneHot:
    """A toy dense encoder plug-in: 1 on the dimension of the text's length parity."""

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([[len(t) % 2, 1 - len(t) % 2] for t in texts], dtype=np.float32)


def make_one_hot() -> _OneHot:
    return _OneHot()


def test_dense_encoder_plugin() -> None:
    enc = load_encoder(f"{__name__}:make_one_hot")
    assert enc.encode(["ab", "abc"]).tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert load_encoder(None).encode(["x y z"]).shape == (1, 1024)
    with pytest.raises(ValueError, match="cannot be loaded.*Fix: give 'package.module:factory'"):
        load_encoder("no_such_module_xyz:factory")


def test_prepare_builds_the_environment_before_any_item(quick_tasks: list, opts: Any) -> None:
    """``SUITE.prepare`` (called before the first item) leaves the environment built: the
    first trial then finds it in the per-process cache instead of building it in its own
    time budget."""
    from pytest_egi.models import make_client
    from suites.herb import SUITE
    from suites.herb.agent import run_trial
    from suites.herb.env import _cached_env

    _cached_env.cache_clear()
    SUITE.prepare(quick_tasks[:3], opts)
    built = _cached_env.cache_info()
    assert (built.currsize, built.misses) == (1, 1)
    task = quick_tasks[0]
    run_trial(task, make_client("egi/oracle", suite=SUITE, task=task, options=opts, noise_key="k"), opts)
    after = _cached_env.cache_info()
    assert (after.misses, after.hits) == (1, built.hits + 1)
