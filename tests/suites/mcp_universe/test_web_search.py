"""MCP-Universe's web_search domain: upstream task files, our generated tasks and their reference
solutions over the real search and fetch servers, and ``google_search.llm_as_a_judge`` with the
deterministic rule judge and with an LLM judge (a scripted client, no network)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from pytest_egi.judges import RULES_JUDGE, JudgeError, LLMJudge
from pytest_egi.mcp.client import McpServer
from pytest_egi.models.base import ModelResponse, assistant_message
from suites._common.mcp_servers import server_spec
from suites._common.mcp_servers.search import search
from suites._common.mcp_servers.web_corpus import build_corpus
from suites.mcp_universe.data.domains import NotSolvable
from suites.mcp_universe.data.domains import web_search as ws
from suites.mcp_universe.env.servers import SERVER_MODULES
from suites.mcp_universe.scorer.evaluator import (
    OPS,
    EvalContext,
    EvaluatorSpecError,
    evaluate,
    evaluator_kind,
    parse_func,
)
from suites.mcp_universe.scorer.ops.google_search import (
    exact_answer_verdict,
    extract_final_answer,
    parse_verdict,
)
from tests.suites.mcp_universe import upstream

SEED = 42
UPSTREAM = upstream.TASK_ROOT / "web_search"
UPSTREAM_KEYS = {"category", "question", "output_format", "use_specified_server", "mcp_servers", "evaluators"}


@pytest.fixture(scope="module")
def tasks() -> list[dict[str, Any]]:
    return ws.generate_tasks(SEED, 55)


def _template(task: dict[str, Any]) -> tuple[ws.Template, dict[str, str]]:
    found = ws._match(task["question"])
    assert found is not None, task["question"]
    return found


def _correct(task: dict[str, Any]) -> str:
    return task["evaluators"][0]["op_args"]["correct_answer"]


def _judge(answer: Any, correct: str, ctx: EvalContext | None = None, question: str = "Q?") -> Any:
    ev = {"func": "raw", "op": "google_search.llm_as_a_judge",
          "op_args": {"question": question, "correct_answer": correct}}  # fmt: skip
    return evaluate(ev, answer, ctx or EvalContext(seed=SEED))


# -- upstream task files ----------------------------------------------------------------------


@upstream.needs_upstream("web_search")
def test_every_upstream_file_loads_and_is_not_solvable_locally():
    files = sorted(UPSTREAM.glob("*.json"))
    assert len(files) == 34
    for path in files:
        task = json.loads(path.read_text(encoding="utf-8"))
        assert set(task) == UPSTREAM_KEYS, path.name
        assert task["output_format"] == ws.OUTPUT_FORMAT
        assert tuple(s["name"] for s in task["mcp_servers"]) == ws.SERVERS
        assert all(name in SERVER_MODULES for name in ws.SERVERS)
        for ev in task["evaluators"]:
            parse_func(ev["func"])
            assert ev["op"] in OPS and evaluator_kind(ev) == "dynamic"
            assert ev["op_args"]["question"].strip() and ev["op_args"]["correct_answer"].strip()
        correct = task["evaluators"][0]["op_args"]["correct_answer"]
        with pytest.raises(NotSolvable) as info:
            ws.solve(task, SEED)
        assert str(info.value) == (
            f"this web_search question asks about the real world (reference answer {correct!r}); "
            "the local search and fetch servers serve only an invented corpus, which holds no "
            "real-world facts, so no local search can support the answer"
        ), path.name


# -- generated tasks --------------------------------------------------------------------------


def test_generated_tasks_have_upstreams_shape(tasks):
    assert len(tasks) == 55
    assert [t["id"] for t in tasks] == [f"web_search-{i:03d}" for i in range(1, 56)]
    assert len({t["question"] for t in tasks}) == 55
    for i, task in enumerate(tasks):
        assert set(task) == UPSTREAM_KEYS | {"id", "reference", "cleanups"}
        assert task["output_format"] == {"answer": "[Your answer]"} and task["cleanups"] == []
        assert task["mcp_servers"] == [{"name": "google-search"}, {"name": "fetch"}]
        assert task["use_specified_server"] is True and task["category"] == "general"
        (ev,) = task["evaluators"]
        assert (ev["func"], ev["op"]) == ("raw", "google_search.llm_as_a_judge")
        assert ev["op_args"] == {
            "question": task["question"],
            "correct_answer": ev["op_args"]["correct_answer"],
        }
        assert _template(task)[0] is ws.TEMPLATES[i % len(ws.TEMPLATES)]  # templates cycle evenly


def _fact(template: str, p: dict[str, str]) -> str:
    """The answer read straight from the world records (independently of the solver)."""
    c = build_corpus(SEED)

    def named(table: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
        (record,) = [r for r in table.values() if r["name"] == name]
        return record

    if template == "founder_birth_year":
        return str(c.people[named(c.orgs, p["org"])["founder"]]["birth_year"])
    if template == "hq_population":
        return f"{c.cities[named(c.orgs, p['org'])['hq']]['population']:,}"
    if template == "laureate_employer":
        return c.orgs[c.people[named(c.events, p["event"])["person"]]["employer"]]["name"]
    if template == "builder_founded":
        return str(c.orgs[named(c.works, p["work"])["builder"]]["founded"])
    if template == "host_city_mayor":
        return c.people[c.cities[named(c.events, p["event"])["city"]]["mayor"]]["name"]
    if template == "head_birthplace":
        return c.cities[c.people[named(c.orgs, p["org"])["head"]]["birth_city"]]["name"]
    if template == "author_employer_city":
        author = c.people[named(c.works, p["book"])["author"]]
        return c.cities[c.orgs[author["employer"]]["hq"]]["name"]
    if template == "coach_stadium_capacity":
        (club,) = [o for o in c.orgs.values() if c.people[o["head"]]["name"] == p["coach"]]
        return f"{club['capacity']:,}"
    if template == "birthplace_river":
        return c.cities[named(c.people, p["person"])["birth_city"]]["river"]
    if template == "person_from_clues":
        (person,) = [x for x in c.people.values()
                     if x["occupation"] == p["occupation"] and str(x["birth_year"]) == p["year"]
                     and c.cities[x["birth_city"]]["name"] == p["city"] and x["employer"]
                     and c.orgs[x["employer"]]["name"] == p["org"]]  # fmt: skip
        return person["name"]
    assert template == "larger_staff"
    a, b = named(c.orgs, p["a"]), named(c.orgs, p["b"])
    return a["name"] if a["employees"] > b["employees"] else b["name"]


def test_correct_answers_are_the_facts_of_the_world(tasks):
    for task in tasks:
        template, params = _template(task)
        assert _correct(task) == _fact(template.key, params), task["id"]
        assert json.loads(task["reference"]["answer"]) == {"answer": _correct(task)}


@pytest.fixture(scope="module")
def servers():
    started = {}
    for name in ws.SERVERS:
        domain, extra = SERVER_MODULES[name]
        started[name] = McpServer(server_spec(domain, SEED, timeout_s=30, name=name, extra_args=extra))
    with ThreadPoolExecutor(len(started)) as pool:
        list(pool.map(McpServer.start, started.values()))
    yield started
    for server in started.values():
        server.close()


def test_solve_calls_succeed_over_stdio_and_read_the_answer_page(tasks, servers):
    for task in tasks:
        calls = task["reference"]["calls"]
        answer = _correct(task)
        texts = []
        for i, call in enumerate(calls):
            result = servers[call["server"]].call_tool(call["tool"], call["arguments"])
            assert not result.is_error, (task["id"], call, result.text)
            if call["tool"] == "search":  # the next page opened is a listed result
                links = [r["link"] for r in result.json()["organic_results"]]
                assert calls[i + 1]["tool"] == "fetch" and calls[i + 1]["arguments"]["url"] in links
            else:
                texts.append(result.text)
        assert calls[0]["tool"] == "search" and len(texts) >= 2  # every question takes two hops or more
        if _template(task)[0].key == "larger_staff":
            assert any(f"\n# {answer}\n" in t for t in texts), task["id"]
        else:  # the last page read holds the answer
            assert answer in texts[-1].split(":\n", 1)[1], task["id"]


def test_the_answer_passes_and_the_mistake_fails_with_its_reason(tasks):
    for task in tasks:
        ref = task["reference"]
        ctx = EvalContext(seed=SEED)
        result = evaluate(task["evaluators"][0], ref["answer"], ctx)
        assert result.passed and result.kind == "dynamic", (task["id"], result)
        assert ctx.notes["judge"] == RULES_JUDGE
        mistake = ref["mistake"]
        assert mistake["fails"] == [0] and mistake["calls"] == ref["calls"]
        wrong = json.loads(mistake["answer"])["answer"]
        assert wrong != _correct(task)
        result = evaluate(task["evaluators"][0], mistake["answer"], EvalContext(seed=SEED))
        correct = _correct(task)
        numeric = correct.replace(",", "").isdigit()
        expected = (f"answer {wrong!r} is not the number {correct!r}" if numeric
                    else f"answer {wrong!r} does not match the correct answer {correct!r}")  # fmt: skip
        assert (result.passed, result.reason) == (False, expected), task["id"]


def test_every_solver_search_lists_its_page_first(tasks):
    for task in tasks:
        calls = task["reference"]["calls"]
        for i, call in enumerate(calls):
            if call["tool"] == "search":
                top = search(SEED, call["arguments"]["query"])["organic_results"][0]
                assert top["link"] == calls[i + 1]["arguments"]["url"], (task["id"], call)


def test_city_facts_need_paging(tasks):
    river = [t for t in tasks if _template(t)[0].key == "birthplace_river"]
    assert len(river) == 5
    for task in river:
        last = task["reference"]["calls"][-1]
        assert last["tool"] == "fetch" and last["arguments"]["start_index"] == 5000


def test_tasks_are_deterministic_and_a_count_is_a_prefix(tasks):
    again = ws.generate_tasks(SEED, 55)
    assert json.dumps(again, sort_keys=True) == json.dumps(tasks, sort_keys=True)
    assert ws.generate_tasks(SEED, 20) == tasks[:20]
    assert ws.generate_tasks(SEED, 0) == []
    other = ws.generate_tasks(SEED + 1, 11)
    assert [t["question"] for t in other] != [t["question"] for t in tasks[:11]]
    with pytest.raises(ValueError, match="count must be at least 0, got -1"):
        ws.generate_tasks(SEED, -1)
    with pytest.raises(
        ValueError, match=r"web_search: at most \d+ distinct tasks for seed 42; asked for 1000"
    ):
        ws.generate_tasks(SEED, 1000)


def test_a_question_naming_an_unknown_entity_is_not_solvable():
    task = {"question": "In what year was the person who founded Nowhere Works born?", "evaluators": []}
    with pytest.raises(NotSolvable, match="^the local web corpus has no organisation named 'Nowhere Works'$"):
        ws.solve(task, SEED)


# -- the rule judge ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "correct", "passed"),
    [
        ('{"answer": "Ilsa Varn"}', "Ilsa Varn", True),
        ('```json\n{"answer": "ilsa varn."}\n```', "Ilsa Varn", True),  # fenced, case, punctuation
        ('{"answer": "\uff29\uff4c\uff53\uff41  Varn"}', "Ilsa Varn", True),  # full-width letters, spaces
        ('{"answer": "Ilsa\u00a0Varn"}', "Ilsa Varn", True),  # non-breaking space
        ('{"answer": "Anne\u2013Marie Lorr"}', "Anne-Marie Lorr", True),  # en dash
        ('{"answer": "Anne Marie Lorr"}', "Anne-Marie Lorr", True),
        ('{"answer": "The Ambry"}', "Ambry", True),  # article
        ('{"answer": "1200"}', "1,200", True),
        ('{"answer": 1200}', "1,200", True),  # a JSON number
        ('{"answer": "1,200.0"}', "1200", True),
        ("1932", "1932", True),  # a bare JSON value
        ("Final answer: 1,932", "1932", True),  # the last answer line of free text
        ("Kelholm", "Kelholm", True),  # plain text
        ('{"answer": "1,201"}', "1,200", False),
        ('{"answer": "3.5"}', "35", False),  # numbers compare as numbers, not as digit strings
        ('{"answer": "Orel Tarr"}', "Ilsa Varn", False),
        ('{"answer": "Ilsa Varn or Orel Tarr"}', "Ilsa Varn", False),  # buried among wrong ones
        ("It was founded in 1932.", "1932", False),  # a sentence (limit: the LLM judge extracts)
        ('{"answer": ""}', "1932", False),
        ("", "1932", False),
        ("   ", "1932", False),
        ('{"answer": null}', "1932", False),
        ('{"answer": true}', "True", False),
        ('{"answer": ["1932"]}', "1932", False),
        ('{"result": "1932"}', "1932", False),
    ],
)
def test_rule_judge(response, correct, passed):
    assert exact_answer_verdict(response, correct)[0] is passed
    assert _judge(response, correct).passed is passed


def test_rule_judge_reasons_and_notes():
    ctx = EvalContext(seed=SEED)
    result = _judge('{"answer": "1,201"}', "1,200", ctx)
    assert result.reason == "answer '1,201' is not the number '1,200'"
    assert ctx.notes == {
        "judge": "egi/rules",
        "judge_verdicts": [{"judge": "egi/rules", "extracted_answer": "1,201", "verdict": "no"}],
    }
    assert _judge("", "1932").reason == "no final answer to compare (empty answer)"
    assert (
        _judge('{"answer": "Orel"}', "Ilsa").reason
        == "answer 'Orel' does not match the correct answer 'Ilsa'"
    )
    assert extract_final_answer("Thinking...\nanswer: one\nAnswer: two  ") == "two"


def test_missing_op_args_are_a_usage_error():
    ev = {"func": "raw", "op": "google_search.llm_as_a_judge", "op_args": {"question": "Q?"}}
    with pytest.raises(EvaluatorSpecError, match=r"op_args\.correct_answer is missing or empty"):
        evaluate(ev, '{"answer": "x"}', EvalContext())
    with pytest.raises(EvaluatorSpecError, match="needs op_args"):
        evaluate({**ev, "op_args": None}, '{"answer": "x"}', EvalContext())


# -- the LLM judge ----------------------------------------------------------------------------


class _JudgeClient:
    """A judge model that replies with fixed texts and keeps the messages it was sent."""

    name = "judge/scripted"

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict[str, Any]]] = []

    def generate(self, messages: list[dict[str, Any]], tools: Any = None, **params: Any) -> ModelResponse:
        self.sent.append(messages)
        return ModelResponse(message=assistant_message(self.replies.pop(0)))


def _llm(
    reply_texts: tuple[str, ...], response: str = '{"answer": "1932"}'
) -> tuple[Any, EvalContext, _JudgeClient]:
    client = _JudgeClient(*reply_texts)
    ctx = EvalContext(seed=SEED, judge=LLMJudge(client))
    return _judge(response, "1932", ctx, question="When was Varn Industries founded?"), ctx, client


def test_llm_judge_yes():
    reply = "extracted_final_answer: 1932\nreasoning: the same year\ncorrect: yes"
    result, ctx, client = _llm((reply,))
    assert result.passed
    assert ctx.notes == {
        "judge": "judge/scripted",
        "judge_verdicts": [{"judge": "judge/scripted", "extracted_answer": None, "verdict": reply}],
    }
    (messages,) = client.sent
    prompt = messages[1]["content"]
    assert "Question: When was Varn Industries founded?" in prompt
    assert 'Response: {"answer": "1932"}' in prompt and "Reference answer: 1932" in prompt
    assert prompt.rstrip().splitlines()[-1].startswith("correct: yes if they match")


def test_llm_judge_no():
    result, ctx, _ = _llm(("extracted_final_answer: 1933\nreasoning: off by one\ncorrect: no",))
    assert (result.passed, result.reason) == (
        False,
        "judge judge/scripted: the answer does not match the correct answer '1932'",
    )
    assert ctx.notes["judge"] == "judge/scripted"


@pytest.mark.parametrize(
    ("reply", "passed"),
    [
        ("**correct:** Yes", True),
        ("correct: no\nreasoning: on reflection they match\ncorrect: yes", True),  # the last label
        ("correct: no, the eyes differ", False),  # upstream's substring test would pass this
        ("reasoning: the response is incorrect: it says 1933\ncorrect: no", False),
    ],
)
def test_llm_judge_verdict_parsing(reply, passed):
    assert parse_verdict(reply) is passed
    assert _llm((reply,))[0].passed is passed


def test_llm_judge_without_a_verdict_is_a_judge_error():
    replies = ("It looks right to me.", "correct: maybe", "extracted_final_answer: 1932")
    with pytest.raises(
        JudgeError, match=r"^judge judge/scripted gave no 'correct: yes/no' verdict in 3 attempt"
    ):
        _llm(replies)
    assert parse_verdict("It looks right to me.") is None and parse_verdict("correct: maybe") is None
