"""The evaluator language on hand-made answers (reference §1.5): every pipeline function, every
built-in op, the all-leaves rule, format checks, reasons, and what is not the answer's fault."""

from __future__ import annotations

import json

import pytest

from pytest_egi.judges import JudgeError
from suites.mcp_universe.scorer.evaluator import (
    OPS,
    EvalContext,
    EvaluatorSpecError,
    decode_json,
    domain_op,
    evaluate,
    evaluator_kind,
    parse_func,
    render,
    run_pipeline,
)

ROUTES = json.dumps({"routes": [{"stops": [1, 2], "name": "a"}, {"stops": [3], "name": "b"}], "n": 2})
CTX = EvalContext()


def ev(func, op="", value=None, op_args=None):
    return {"func": func, "op": op, "value": value, "op_args": op_args}


def test_parse_func_splits_names_and_arguments():
    assert parse_func("json -> get(routes) -> foreach -> get( stops ) -> len") == [
        ("json", []),
        ("get", ["routes"]),
        ("foreach", []),
        ("get", ["stops"]),
        ("len", []),
    ]


@pytest.mark.parametrize(
    "func, message",
    [
        ("json -> explode", "unknown pipeline function 'explode'"),
        ("get", "get takes 1 argument(s), got 0"),
        ("len(x)", "len takes 0 argument(s), got 1"),
        ("  ", "`func` must be a non-empty pipeline"),
        ("->", "names no pipeline function"),
    ],
)
def test_bad_pipelines_are_usage_errors(func, message):
    with pytest.raises(EvaluatorSpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_func(func)


def test_foreach_fans_out_one_leaf_per_element():
    assert run_pipeline("json -> get(routes) -> foreach -> get(stops) -> len", ROUTES) == [2, 1]
    assert run_pipeline("json -> get(routes) -> foreach -> get(name)", ROUTES) == ["a", "b"]
    # nested fan-out flattens in order
    nested = json.dumps({"a": [{"b": [1, 2]}, {"b": [3]}]})
    assert run_pipeline("json -> get(a) -> foreach -> get(b) -> foreach", nested) == [1, 2, 3]


def test_len_list_raw_and_missing_key():
    assert run_pipeline("json -> get(routes) -> len", ROUTES) == [2]
    assert run_pipeline("json -> get(missing)", ROUTES) == [None]
    assert run_pipeline("raw", "plain text") == ["plain text"]
    assert run_pipeline("json -> get(n) -> list", ROUTES) == [[2]]


def test_fenced_and_tagged_json_is_read_as_upstream_does():
    fenced = "```json\n" + ROUTES + "\n```"
    assert decode_json(fenced)["n"] == 2
    assert decode_json("  json " + ROUTES)["n"] == 2
    assert decode_json({"already": "parsed"}) == {"already": "parsed"}


def test_every_leaf_must_pass_and_the_first_failure_is_the_reason():
    r = evaluate(ev("json -> get(routes) -> foreach -> get(stops) -> len", "=", 2), ROUTES, CTX)
    assert not r.passed
    assert r.reason == "output is not equal to ground-truth (output 1, ground truth 2)"
    ok = evaluate(ev("json -> get(routes) -> foreach -> get(stops) -> len", ">=", 1), ROUTES, CTX)
    assert ok.passed and ok.reason == "" and ok.kind == "static"


@pytest.mark.parametrize(
    "op, value, leaf, passed",
    [
        ("=", 2, 2, True),
        ("=", 2, 3, False),
        ("<", 3, 2, True),
        ("<", 2, 2, False),
        ("<=", 2, 2, True),
        ("<=", 1, 2, False),
        (">", 1, 2, True),
        (">", 2, 2, False),
        (">=", 2, 2, True),
        (">=", 3, 2, False),
        ("in", ["x", "y"], "x", True),
        ("in", ["x", "y"], "z", False),
        ("in", "xyz", "y", True),
        ("contain", "b", ["a", "b"], True),
        ("contain", "q", "abc", False),
    ],
)
def test_builtin_ops(op, value, leaf, passed):
    r = evaluate(ev("json -> get(v)", op, value), json.dumps({"v": leaf}), CTX)
    assert r.passed is passed, r.reason


def test_empty_op_is_a_format_check():
    assert evaluate(ev("json"), ROUTES, CTX).passed
    bad = evaluate(ev("json"), "Here is the answer: {not json", CTX)
    assert not bad.passed and bad.kind == "format"
    assert bad.reason.startswith("JSON decoding error: Expecting value at line 1 column 1")


def test_malformed_answers_fail_with_their_reason():
    r = evaluate(ev("json -> get(routes) -> len", "=", 2), json.dumps({"routes": 3}), CTX)
    assert not r.passed
    assert r.reason == "Execution error: TypeError: len: the value is a number, not a list"
    r = evaluate(ev("json -> get(routes)", "=", 2), json.dumps([1, 2]), CTX)
    assert r.reason == "Execution error: TypeError: get(routes): the value is a list, not an object"
    r = evaluate(ev("json -> get(v)", "contain", "x"), json.dumps({"v": 5}), CTX)
    want = "Execution error: TypeError: op `contain`: the output is a number, not a list or a string"
    assert r.reason == want


def test_unknown_op_is_a_usage_error_not_a_failure():
    with pytest.raises(EvaluatorSpecError, match="unknown op 'google_maps.teleport'"):
        evaluate(ev("json", "google_maps.teleport"), ROUTES, CTX)
    with pytest.raises(EvaluatorSpecError, match="unknown pipeline function"):
        evaluate(ev("json -> nope"), ROUTES, CTX)


def test_a_judge_failure_propagates_it_is_never_a_failed_evaluator():
    name = "testonly.judge_fails"
    if name not in OPS:

        @domain_op(name)
        def _judge_fails(leaf, value, op_args, ctx):
            raise JudgeError("no verdict after 3 attempts")

    with pytest.raises(JudgeError):
        evaluate(ev("raw", name), "anything", CTX)


def test_domain_ops_register_once_with_a_kind():
    if "testonly.twice" not in OPS:
        domain_op("testonly.twice")(lambda *a: (True, ""))
    with pytest.raises(ValueError, match="registered twice"):
        domain_op("testonly.twice")(lambda *a: (True, ""))
    with pytest.raises(ValueError, match="must be dotted"):
        domain_op("undotted")
    with pytest.raises(ValueError, match="kind must be one of"):
        domain_op("testonly.kind", kind="vibes")


def test_an_op_module_imported_anew_registers_its_ops_again():
    """pytester's in-process runs drop the modules a run imported (the op modules) but not the
    registry: the next run's import re-registers the same functions (the old registry refused,
    and the second run of a session ended with a usage error)."""
    import importlib

    from suites.mcp_universe.scorer.ops import github

    before = OPS["github.check_repository"].fn
    importlib.reload(github)
    after = OPS["github.check_repository"].fn
    assert after is github.check_repository and after is not before
    assert OPS["github.check_repository"].kind == "dynamic"


def test_kinds():
    assert evaluator_kind({"func": "json"}) == "format"
    assert evaluator_kind({"func": "json", "op": "="}) == "static"
    assert evaluator_kind({"func": "json", "op": "=", "kind": "dynamic"}) == "dynamic"
    with pytest.raises(EvaluatorSpecError, match="`kind` must be one of"):
        evaluator_kind({"func": "json", "kind": "other"})


def test_render_fills_known_template_variables_and_keeps_unknown_ones():
    out = render(
        {"repo": "{{GITHUB_PERSONAL_ACCOUNT_NAME}}/app", "x": ["{{ OTHER }}", 3]},
        {"GITHUB_PERSONAL_ACCOUNT_NAME": "egi-agent"},
    )
    assert out == {"repo": "egi-agent/app", "x": ["{{ OTHER }}", 3]}
