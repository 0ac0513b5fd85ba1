"""HERB world generation, task selection, and the original-format corpus loader."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from pytest_egi.suite import SuiteProfile, Task
from suites.herb import SUITE, HerbOptions
from suites.herb.data import ProductFile, World, dump_world, load_corpus
from suites.herb.data.generator import generate_company_names, generate_world
from suites.herb.scorer import fact_recall
from tests.suites.herb.helpers import run

ARTIFACT_KEYS = ("slack", "documents", "meeting_transcripts", "meeting_chats", "urls", "prs")


def _artifact_ids(product: dict[str, Any]) -> set[str]:
    ids = {m["Message"]["User"]["utterranceID"] for m in product["slack"]}
    for key in ARTIFACT_KEYS[1:]:
        ids |= {str(a["id"]) for a in product[key]}
    return ids


def _text(product: dict[str, Any]) -> str:
    return json.dumps({k: product[k] for k in ARTIFACT_KEYS})


# -- generator -------------------------------------------------------------------------------
def test_same_seed_same_world_other_seed_other_world() -> None:
    a = generate_world(seed=7, products=3)
    b = generate_world(seed=7, products=3)
    c = generate_world(seed=8, products=3)
    dump = lambda w: json.dumps([w.employees, w.customers, w.products, w.questions], sort_keys=True)  # noqa: E731
    assert dump(a) == dump(b)
    assert dump(a) != dump(c)


@pytest.mark.parametrize(("seed", "products"), [(42, 30), (7, 3), (8, 12), (1234, 1)])
def test_company_names_drawn_alone_are_the_worlds(seed: int, products: int) -> None:
    # the names-only generation draws the background messages without writing them: every
    # later draw, so every customer of every product, must be the world's
    names = generate_company_names(seed=seed, products=products)
    assert names == generate_world(seed=seed, products=products).company_names
    assert len(names) == 5 * products  # five customers per product, none repeated


def test_default_world_is_upstream_sized(world: World) -> None:
    n_artifacts = sum(len(p[k]) for p in world.products.values() for k in ARTIFACT_KEYS)
    assert len(world.products) == 30
    assert 35_000 < n_artifacts < 43_000  # upstream: 39,190 artifacts
    roles = {e["role"] for e in world.employees.values()}
    assert len(roles) == 10 and "Chief Product Officer" in roles
    assert all(re.fullmatch(r"CUST-\d{7}", c["id"]) for c in world.customers)


def test_deep_profile_counts(opts: HerbOptions) -> None:
    tasks = SUITE.load_tasks(SuiteProfile(seed=42), opts)
    counts = Counter(t.category for t in tasks)
    assert counts == {"unanswerable": 699, "content": 330, "person": 180, "url": 125,
                      "company": 90, "pr": 90}  # fmt: skip
    assert sum(counts.values()) - counts["unanswerable"] == 815
    assert len({t.id for t in tasks}) == len(tasks)
    assert len({t.data["question"] for t in tasks}) == len(tasks)


def test_products_option_scales_totals() -> None:
    w = generate_world(seed=3, products=3)
    answerable = sum(q["answerable"] for q in w.questions)
    assert (answerable, len(w.questions) - answerable) == (82, 70)  # 815*3/30, 699*3/30
    with pytest.raises(ValueError, match="products must be between 1 and 40"):
        generate_world(seed=3, products=41)
    with pytest.raises(ValidationError):
        HerbOptions(products=0)


def test_generated_products_validate_as_original_shape(world: World) -> None:
    for product in world.products.values():
        parsed = ProductFile.model_validate(product)
        assert parsed.answerable_questions and parsed.unanswerable_questions
        assert all(isinstance(q, str) for q in product["unanswerable_questions"])


def test_citations_point_at_artifacts_of_the_product(world: World) -> None:
    ids = {name: _artifact_ids(p) for name, p in world.products.items()}
    for q in world.questions:
        assert q["citations"], q["question"]
        assert set(q["citations"]) <= ids[q["product"]], q["question"]
    multi = sum(len(q["citations"]) > 1 for q in world.questions if q["answerable"])
    assert multi / sum(q["answerable"] for q in world.questions) > 0.5


def test_prd_team_needs_the_document_and_the_meeting(world: World) -> None:
    checked = 0
    for q in world.questions:
        if not q["answerable"] or q["recipe"]["kind"] != "prd_team":
            continue
        product = world.products[q["product"]]
        doc = next(d for d in product["documents"] if d["id"] == q["citations"][0])
        meeting = next(m for m in product["meeting_transcripts"] if m["id"] == q["citations"][1])
        author, *reviewers = q["ground_truth"]
        assert doc["type"] == "PRD" and doc["author"] == author
        assert meeting["participants"] == reviewers
        assert author not in json.dumps(meeting)  # the author is only in the document...
        assert not any(r in json.dumps(doc) for r in reviewers)  # ...the reviewers only here
        checked += 1
    assert checked == 30


def test_content_gold_contains_its_key_facts(world: World) -> None:
    content = [q for q in world.questions if q["answerable"] and q["type"] == "content"]
    assert content and all(q["facts"] for q in content)
    assert all(fact_recall(q["ground_truth"], q["facts"]) == 1.0 for q in content)


def test_unanswerable_perturbations_have_no_support(world: World) -> None:
    everything = "".join(_text(p) for p in world.products.values())  # artifacts only
    kinds = Counter()
    for q in world.questions:
        if q["answerable"]:
            continue
        pert, product = q["perturbation"], world.products[q["product"]]
        kinds[pert["kind"]] += 1
        value = pert["replacement"]
        if pert["kind"] == "product":
            assert value not in everything and value not in world.products
        elif pert["kind"] == "person":
            assert value not in {e["name"] for e in world.employees.values()}
        elif pert["kind"] == "period":
            days = [
                m["date"]
                for m in product["meeting_transcripts"]
                if m["transcript"].startswith(f"Meeting: {q['product']} sprint planning")
            ]
            assert len(days) == 2 and value not in days
        elif pert["slot"] in ("bug", "segment", "component", "request"):
            assert value.lower() not in _text(product).lower(), q["question"]
        elif pert["slot"] == "company":  # a customer of the product who asked for nothing
            ids = [c["id"] for c in world.customers if c["company"] == value]
            feedback = next(
                m["transcript"]
                for m in product["meeting_transcripts"]
                if "customer feedback session" in m["transcript"].split("\n")[0]
            )
            assert ids and ids[0] in product["customers"] and ids[0] not in feedback
        assert q["question"] != pert["source_question"]
    assert set(kinds) == {"product", "person", "period", "fact"}


# -- task selection --------------------------------------------------------------------------
def test_quick_profile(quick_tasks: list[Task], quick_profile: SuiteProfile, opts: HerbOptions) -> None:
    """Before: quick was ``limit: 80``, dealt over six categories, so 13 unanswerable questions
    carried the M5 null rate; routing.yaml now asks for 40 answerable + 40 unanswerable."""
    assert quick_profile.model_extra == {"answerable": 40, "unanswerable": 40}
    assert len(quick_tasks) == 80
    assert Counter(t.category for t in quick_tasks) == {
        "content": 8,
        "person": 8,
        "company": 8,
        "url": 8,
        "pr": 8,
        "unanswerable": 40,
    }
    assert all(re.fullmatch(r"herb-(content|person|company|url|pr|unans)-\d{3}", t.id)
               for t in quick_tasks)  # fmt: skip
    assert [t.id for t in quick_tasks] == [
        t.id for t in SUITE.load_tasks(SuiteProfile(seed=42, answerable=40, unanswerable=40), opts)
    ]  # deterministic
    # each category's first picks are the same seeded order as before (a prefix of limit 80's)
    old = SUITE.load_tasks(SuiteProfile(seed=42, limit=80), opts)
    for cat in ("content", "unanswerable"):
        mine = [t.id for t in quick_tasks if t.category == cat]
        before = [t.id for t in old if t.category == cat]
        shorter, longer = sorted((mine, before), key=len)
        assert set(shorter) <= set(longer), cat
    other_seed = SUITE.load_tasks(SuiteProfile(seed=7, answerable=40, unanswerable=40), opts)
    assert Counter(t.category for t in other_seed)["unanswerable"] == 40
    assert {t.id for t in other_seed} != {t.id for t in quick_tasks}  # seeded: another seed, other picks
    deep = {t.id: t for t in SUITE.load_tasks(SuiteProfile(seed=42), opts)}
    assert all(deep[t.id] == t for t in quick_tasks)  # ids do not depend on the profile
    assert {t.data["world"]["seed"] for t in quick_tasks} == {42}


def test_profile_filters(opts: HerbOptions) -> None:
    per = SUITE.load_tasks(SuiteProfile(seed=42, per_category=2), opts)
    assert Counter(t.category for t in per) == dict.fromkeys(SUITE.categories, 2)
    some = SUITE.load_tasks(SuiteProfile(seed=42, categories=["pr", "unanswerable"],
                                         per_category=3, limit=5), opts)  # fmt: skip
    assert Counter(t.category for t in some) == {"pr": 3, "unanswerable": 2}
    other_seed = SUITE.load_tasks(SuiteProfile(seed=1, limit=10), HerbOptions(products=2))
    assert len(other_seed) == 10
    with pytest.raises(ValueError, match="unknown categories"):
        SUITE.load_tasks(SuiteProfile(seed=42, categories=["customer"]), opts)
    # the answerable / unanswerable counts, with the other cuts
    split = SUITE.load_tasks(SuiteProfile(seed=42, answerable=7, unanswerable=3), opts)
    assert Counter(t.category for t in split) == {"content": 2, "person": 2, "company": 1, "url": 1, "pr": 1,
                                                  "unanswerable": 3}  # fmt: skip
    capped = SUITE.load_tasks(SuiteProfile(seed=42, per_category=1, answerable=40, unanswerable=40), opts)
    assert Counter(t.category for t in capped) == dict.fromkeys(SUITE.categories, 1)
    only = SUITE.load_tasks(SuiteProfile(seed=42, categories=["pr"], answerable=2, unanswerable=5), opts)
    assert Counter(t.category for t in only) == {"pr": 2}
    limited = SUITE.load_tasks(SuiteProfile(seed=42, answerable=40, unanswerable=40, limit=12), opts)
    assert Counter(t.category for t in limited) == dict.fromkeys(SUITE.categories, 2)


@pytest.mark.parametrize("value", [-1, 2.5, "40", True])
def test_a_bad_profile_count_names_the_key_and_the_fix(opts: HerbOptions, value: Any) -> None:
    with pytest.raises(ValueError) as exc:
        SUITE.load_tasks(SuiteProfile(seed=42, unanswerable=value), opts)
    assert str(exc.value) == (
        f"profile key 'unanswerable' must be a whole number >= 0 (the unanswerable questions to run), got "
        f"{value!r}. Fix: set modes.<mode>.suites.herb.unanswerable in routing.yaml to a count, or drop the "
        "key to keep them all"
    )


# -- loader ----------------------------------------------------------------------------------
EMPLOYEES = {
    "eid_0000aaaa": {"employee_id": "eid_0000aaaa", "name": "Ana Lima", "role": "Product Manager",
                     "location": "Lisbon", "org": "product"},
    "eid_0000bbbb": {"employee_id": "eid_0000bbbb", "name": "Bo Chen", "role": "Software Engineer",
                     "location": "Austin", "org": "engineering"},
}  # fmt: skip
CUSTOMERS = [{"id": "CUST-0000001", "name": "Cy Dunn", "role": "CTO", "company": "Testco Labs"}]


def _product() -> dict[str, Any]:
    return {
        "slack": [{"Channel": {"name": "planning-TestForce", "channelID": "C01"},
                   "Message": {"User": {"userId": "eid_0000aaaa", "timestamp": "2025-02-01T10:00:00",
                                        "text": "CUST-0000001 reported slow exports",
                                        "utterranceID": "u-1"}}}],
        "documents": [{"id": "doc-1", "document_link": "https://docs.test/testforce/prd",
                       "date": "2025-02-01", "author": "eid_0000aaaa", "type": "PRD",
                       "content": "TestForce PRD\nTarget for exports: uptime of 99.9%."}],
        "meeting_transcripts": [{"id": "m-1", "date": "2025-02-03",
                                 "participants": ["eid_0000bbbb"],
                                 "transcript": "Bo Chen: the TestForce PRD looks good."}],
        "meeting_chats": [{"id": "m-1-chat", "text": "eid_0000bbbb: +1"}],
        "urls": [{"id": "url-1", "link": "https://example.test/page", "description": "A page."}],
        "prs": [{"id": 7, "title": "Add exports", "user": {"login": "eid_0000bbbb"},
                 "created_at": "2025-02-05T10:00:00Z", "state": "closed", "mergeable": True,
                 "merged": True, "link": "https://git.test/testforce/pull/7",
                 "summary": "Adds exports.", "reviews": [{"state": "APPROVED",
                 "user": {"login": "eid_0000aaaa"}, "submitted_at": "2025-02-06T10:00:00Z",
                 "comment": "ok"}]}],
        "team": ["eid_0000aaaa", "eid_0000bbbb"], "customers": ["CUST-0000001"],
        "answerable_questions": [
            {"question": "Who wrote the TestForce PRD?", "ground_truth": ["eid_0000aaaa"],
             "citations": ["doc-1"], "type": "person"},
            {"question": "What uptime target does the TestForce PRD set?",
             "ground_truth": "The TestForce PRD sets an uptime target of 99.9%.",
             "citations": ["doc-1"], "type": "content"}],
        "unanswerable_questions": ["Who wrote the TestForce security review?"],
    }  # fmt: skip


def _write(root: Path, product: dict[str, Any] | str, employees: Any = EMPLOYEES) -> Path:
    (root / "products").mkdir(parents=True)
    (root / "metadata").mkdir()
    text = product if isinstance(product, str) else json.dumps(product)
    (root / "products" / "TestForce.json").write_text(text)
    if employees is not None:
        (root / "metadata" / "employee.json").write_text(json.dumps(employees))
    (root / "metadata" / "customers_data.json").write_text(json.dumps(CUSTOMERS))
    return root


def test_loader_reads_the_original_shape(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", _product())
    for path in (root, root / "products", root / "products" / "TestForce.json"):
        w = load_corpus(path)
        assert list(w.products) == ["TestForce"] and set(w.employees) == set(EMPLOYEES)
        assert w.company_names == ["Testco Labs"]
        assert w.products["TestForce"]["prs"][0]["id"] == "7"  # int ids become strings
        assert [(q["type"], q["answerable"]) for q in w.questions] == [
            ("person", True),
            ("content", True),
            (None, False),
        ]
    tasks = SUITE.load_tasks(SuiteProfile(seed=1), HerbOptions(corpus=root))
    assert [(t.id, t.category) for t in tasks] == [
        ("herb-content-001", "content"),
        ("herb-person-001", "person"),
        ("herb-unans-001", "unanswerable"),
    ]
    assert tasks[0].data["world"] == {"corpus": str(root.resolve())}
    content = SUITE.score(tasks[0], {"final_answer": "The TestForce PRD sets an uptime target "
                                     "of 99.9%."}, None)  # fmt: skip
    assert content.values == {"content": 100.0}  # no key facts: 100 x token F1


def test_loaded_corpus_tools_and_generic_oracle(tmp_path: Path) -> None:
    root = _write(tmp_path / "data", _product())
    opts = HerbOptions(corpus=root)
    tasks = SUITE.load_tasks(SuiteProfile(seed=1), opts)
    from suites.herb.env import get_env

    env = get_env(tasks[0].data["world"], opts)
    assert env.retrieve("TestForce PRD uptime target", 20).startswith("Doc ID: doc-1\n")
    assert env.prs("see HTTPS://GIT.TEST/TESTFORCE/PULL/7.")[0]["title"] == "Add exports"
    assert env.name_to_id("ask Ana Lima") == {"ana lima": ["eid_0000aaaa"]}
    assert env.id_to_company("cust-0000001") == {"cust-0000001": "Testco Labs"}
    scores = {t.category: run("egi/oracle", t, opts)[1].values for t in tasks}
    # without recipes the reference policy searches and abstains: right only when unanswerable
    assert scores == {"content": {"content": 0.0}, "person": {"f1": 0.0}, "unanswerable": {"abstained": 1.0}}


def test_dumped_world_round_trips(tmp_path: Path, small_world: World) -> None:
    root = dump_world(small_world, tmp_path / "herb")
    loaded = load_corpus(root)
    assert loaded.employees == small_world.employees
    assert loaded.customers == small_world.customers
    assert json.loads(json.dumps(small_world.products)) == loaded.products
    opts = HerbOptions(corpus=root)
    tasks = SUITE.load_tasks(SuiteProfile(seed=5), opts)
    assert len(tasks) == len(small_world.questions)
    values = [run("egi/oracle", t, opts)[1] for t in tasks]
    assert all(s.success for s in values)  # recipes travel with answerable questions


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda p: p["slack"][0]["Message"]["User"].pop("utterranceID"),
            r"TestForce\.json: field slack\[0\]\.Message\.User\.utterranceID: Field required\. "
            r"Fix: each item needs Channel",
        ),
        (lambda p: p["prs"][0].pop("link"), r"field prs\[0\]\.link: Field required\. Fix: each PR"),
    ],
)
def test_loader_errors_name_file_field_and_fix(tmp_path: Path, mutate: Any, message: str) -> None:
    product = _product()
    mutate(product)
    root = _write(tmp_path / "data", product)
    with pytest.raises(ValueError, match=message):
        load_corpus(root)


ALONE = " (this task errors alone; fix the entry or leave it out)"


@pytest.mark.parametrize(
    ("mutate", "task_id", "message"),
    [
        (
            lambda p: p["answerable_questions"][0].update(type="customer"),
            "herb-invalid-001",
            "field answerable_questions[0].type: Input should be 'content', 'person', 'company', 'url' or "
            "'pr'. Fix: each question needs question, ground_truth (str for content, list for the others), "
            "citations (list of artifact ids) and type (content|person|company|url|pr) (HERB shape, "
            "reference §2.2).",
        ),
        (
            lambda p: p.update(unanswerable_questions=[{"question": "q"}]),
            "herb-unans-001",
            "field unanswerable_questions[0]: Input should be a valid string, got a dict. Fix: unanswerable "
            "questions are plain strings (HERB shape, reference §2.2).",
        ),
    ],
)
def test_a_bad_question_errors_alone_naming_file_task_field_and_fix(
    tmp_path: Path, mutate: Any, task_id: str, message: str
) -> None:
    """Behaviour changed on purpose (issue 22): these refused the whole corpus before; now the
    question's task errors alone and the others load."""
    product = _product()
    mutate(product)
    root = _write(tmp_path / "data", product)
    world = load_corpus(root)
    assert sum(1 for q in world.questions if q.get("load_error")) == 1
    tasks = SUITE.load_tasks(SuiteProfile(seed=1), HerbOptions(corpus=root))
    file = root / "products" / "TestForce.json"
    assert [(t.id, t.load_error) for t in tasks if not t.runnable] == [
        (task_id, f"{file}: task {task_id!r} could not be loaded: QuestionError: {message}{ALONE}")
    ]
    assert len(tasks) == 3


def test_loader_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file or directory"):
        load_corpus(tmp_path / "missing")
    root = _write(tmp_path / "a", "{not json")
    with pytest.raises(ValueError, match=r"TestForce\.json: not valid JSON \(line 1, column 2"):
        load_corpus(root)
    root = _write(tmp_path / "b", _product(), employees=None)
    with pytest.raises(ValueError, match=r"metadata file employee\.json not found .*Fix: lay"):
        load_corpus(root)
    root = _write(tmp_path / "c", _product(), employees={"x": {"name": "No Id"}})
    with pytest.raises(ValueError, match=r"employee\.json: field employee_id: Field required"):
        load_corpus(root)
    with pytest.raises(ValueError, match="no product files"):
        load_corpus(tmp_path / "c" / "metadata")
