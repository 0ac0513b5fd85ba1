"""Every conformance check can fail: a deliberately broken toy suite, run the same way as the
real suites, fed to the same checker functions, with the exact messages expected.

The toy (package ``brokensuites``, so it never meets the repository's ``suites`` or the
plugin tests' ``toysuites``) has tasks "what is the code of item k?" in categories ``alpha``
and ``beta``; its faults, one per check:

- declarations: ``count`` is declared but neither routed nor a diagnostic; the diagnostic
  ``n_tasks`` is not declared in ``sub_metrics``; ``null_floor`` names an unrouted key;
- summarize: returns the undeclared ``n_tasks`` and the unrouted ``count``; ``acc_beta``
  is computed from a misspelt category and is always None;
- oracle: the gold of ``alpha-0`` is the code of the wrong item (oracle ``acc_alpha`` 2/3);
- null: a reply that is not a code earns half credit (null ``acc`` 0.5);
- noisy: the policy errs on every task at rates below 0.3 and never above (noisy-0.2 under
  null, noisy-0.5 over noisy-0.2);
- complete: the scorer raises on task ``beta-1`` under ``egi/null`` (an error record);
- serial = -n 2: ``details.worker`` holds the xdist worker id;
- JSON: ``values.spread`` is NaN;
- rescore: the test module, not the scorer, halves the credit of beta tasks.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from pytest_egi.records import load_records
from pytest_egi.scoring.config import RoutingConfig, load_routing
from tests.conformance.capture import Unpicklable
from tests.conformance.checks import (
    DIST_POLICY,
    POLICIES,
    check_ceiling,
    check_complete,
    check_declarations,
    check_floor,
    check_identical,
    check_json_safe,
    check_malformed_scored,
    check_noisy,
    check_rescore,
    check_summarize_keys,
    check_summary_columns,
    conformance_routing,
    rescore,
    routes_of,
    run_suite,
)

ROUTING = """\
version: 1
buckets:
  M1: {name: Outcome, weight: 0.28}
  M2: {name: Tools, weight: 0.22, floor: 70}
  M3: {name: Planning, weight: 0.16}
  M4: {name: Grounding, weight: 0.14}
  M5: {name: Safety, weight: 0.14, floor: 70}
  M6: {name: Engineering, weight: 0.06}
suites: [broken]
routes:
  - {suite: broken, sub_metric: acc_alpha, bucket: M1, transform: fraction}
  - {suite: broken, sub_metric: acc_beta, bucket: M1, transform: fraction}
  - {suite: broken, sub_metric: acc, bucket: M4, transform: fraction}
modes:
  quick:
    seed: 7
    suites:
      broken: {per_category: 2}
  deep:
    seed: 7
    suites:
      broken: {}
"""

SUITE_INIT = '''
import json
import os
from pydantic import BaseModel
from pytest_egi.agents.tools import Tool, Toolkit
from pytest_egi.models.base import assistant_message, tool_call
from pytest_egi.suite import Task, TaskScore


class Options(BaseModel):
    max_turns: int = 5


def code_of(seed, k):
    return f"C{(seed * 31 + k * 17) % 1000:03d}"


class BrokenSuite:
    name = "broken"
    version = "1"
    categories = ("alpha", "beta")
    options_model = Options
    sub_metrics = frozenset({"acc", "acc_alpha", "acc_beta", "count"})
    diagnostics = frozenset({"n_tasks"})
    null_floor = {"count": 0.0}

    def load_tasks(self, profile, options):
        tasks = []
        for cat in profile.categories or self.categories:
            for k in range(profile.per_category or 5):
                idx = k if cat == "alpha" else 100 + k
                gold = code_of(profile.seed, idx + 1 if (cat, k) == ("alpha", 0) else idx)
                tasks.append(Task(id=f"{cat}-{k}", category=cat,
                                  data={"item": idx, "gold": gold, "seed": profile.seed}))
        return tasks

    def reference_policy(self, task, options, noise):
        def policy(messages, tools):
            last = messages[-1]
            if last["role"] != "tool":
                return assistant_message(None, [tool_call("c1", "lookup",
                                         json.dumps({"item": task.data["item"]}))])
            code = json.loads(last["content"])["code"]
            if 0 < noise.p < 0.3:
                code = "C???"
            return assistant_message(None, [tool_call("c2", "submit", json.dumps({"code": code}))])
        return policy

    def toolkit(self, task, options):
        def lookup(item: int):
            return {"code": code_of(task.data["seed"], item)}
        def submit(code: str):
            return code
        return Toolkit.of(
            Tool("lookup", "Look up an item",
                 {"type": "object", "properties": {"item": {"type": "integer"}}}, lookup),
            Tool("submit", "Submit the code",
                 {"type": "object", "properties": {"code": {"type": "string"}}}, submit,
                 kind="submit"),
        )

    def score(self, task, trajectory, options, judge=None):
        got = trajectory["final_answer"]
        if task.id == "beta-1" and not str(got).startswith("C"):
            raise RuntimeError("scorer cannot read the answer")
        correct = 1.0 if got == task.data["gold"] else 0.0 if str(got).startswith("C") else 0.5
        return TaskScore(success=correct == 1.0,
                         values={"correct": correct, "spread": float("nan")},
                         expected=task.data["gold"], got=got,
                         details={"worker": os.environ.get("PYTEST_XDIST_WORKER", "main")})

    def summarize(self, records):
        def mean(rs):
            return sum(r["values"]["correct"] for r in rs) / len(rs) if rs else None
        return {
            "acc": mean(records),
            "acc_alpha": mean([r for r in records if r["category"] == "alpha"]),
            "acc_beta": mean([r for r in records if r["category"] == "Beta"]),
            "count": float(len(records)),
            "n_tasks": len(records),
        }


SUITE = BrokenSuite()
'''

TEST_MODULE = """
from pytest_egi.agents.loops import run_tool_loop
from brokensuites.broken import SUITE

def test_task(egi_task, egi_model, egi):
    messages = [{"role": "system", "content": "Find the code."},
                {"role": "user", "content": f"What is the code of item {egi_task.data['item']}?"}]
    trajectory = run_tool_loop(egi_model, messages, SUITE.toolkit(egi_task, egi.options),
                               max_turns=egi.options.max_turns)
    score = SUITE.score(egi_task, trajectory.to_dict(), egi.options)
    if egi_task.category == "beta":
        score.values["correct"] /= 2
    egi.record(score, trajectory)
"""


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The broken toy project, run under every policy (and ``-n 2``), and rescored."""
    root = tmp_path_factory.mktemp("broken-project")
    (root / "conftest.py").write_text("")
    (root / "routing.yaml").write_text(ROUTING)
    pkg = root / "brokensuites" / "broken"
    pkg.mkdir(parents=True)
    (root / "brokensuites" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text(SUITE_INIT)
    (pkg / "test_broken.py").write_text(TEST_MODULE)
    routing = root / "conformance-routing.yaml"
    routing.write_text(conformance_routing(ROUTING, "broken"))
    runs = {p: run_suite(pkg, root, routing, p, root / p.replace("/", "_")) for p in POLICIES}
    runs["-n 2"] = run_suite(pkg, root, routing, DIST_POLICY, root / "dist", "-n", "2")
    spec = importlib.util.spec_from_file_location("broken_suite_under_test", pkg / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rescored = rescore([runs["egi/oracle"].run_dir], root)
    return {"runs": runs, "suite": module.SUITE, "routes": routes_of(load_routing(routing)[0], "broken"),
            "rescored": rescored[0]}


def test_conformance_routing_keeps_deep_keys_and_takes_every_category():
    text = ROUTING.replace("broken: {}", "broken: {categories: [alpha], limit: 1, max_turns: 9}")
    data = __import__("yaml").safe_load(conformance_routing(text, "broken", per_category=4))
    assert data["modes"]["quick"]["suites"]["broken"] == {"max_turns": 9, "per_category": 4}
    assert data["modes"]["quick"]["seed"] == 7 and data["routes"][0]["sub_metric"] == "acc_alpha"


def test_declarations_fail(broken):
    assert check_declarations(broken["suite"], broken["routes"]) == [
        "broken: diagnostic 'n_tasks' is not in Suite.sub_metrics",
        "broken: sub-metric 'count' is neither routed nor in Suite.diagnostics",
        "broken: Suite.null_floor names 'count', which is not a routed sub-metric",
    ]
    capped = type(
        "S",
        (),
        {
            "name": "broken",
            "sub_metrics": frozenset({"acc_alpha", "acc_beta", "acc", "acc_max"}),
            "diagnostics": frozenset({"acc_max"}),
            "oracle_ceiling": {"acc": "acc_max", "count": "acc_alpha"},
        },
    )()
    assert check_declarations(capped, broken["routes"]) == [
        "broken: Suite.oracle_ceiling names 'count', which is not a routed sub-metric",
        "broken: Suite.oracle_ceiling gives 'acc_alpha' as the ceiling of 'count', which is not a "
        "declared diagnostic",
    ]


def test_summarize_keys_fail(broken):
    oracle = broken["runs"]["egi/oracle"]
    summary = broken["suite"].summarize(load_records(oracle.run_dir))
    assert check_summarize_keys(broken["suite"], broken["routes"], summary) == [
        "broken: summarize returned 'n_tasks', which is not in Suite.sub_metrics",
        "broken: routed sub-metric 'acc_beta' was not produced by summarize (got None) on a run "
        "over every category",
        "broken: summarize returned 'count', which is neither routed nor in Suite.diagnostics",
    ]


def test_complete_fails(broken):
    records = load_records(broken["runs"]["egi/null"].run_dir)
    assert check_complete("broken", "egi/null", records) == [
        "broken: egi/null: 1 of 6 items ended error (first: brokensuites/broken/test_broken.py::"
        "test_task[beta-1]: RuntimeError: scorer cannot read the answer); an offline policy is "
        "always scored"
    ]
    assert check_complete("broken", "egi/oracle", load_records(broken["runs"]["egi/oracle"].run_dir)) == []
    assert check_complete("broken", "egi/oracle", []) == ["broken: egi/oracle recorded no item"]


def test_ceiling_fails(broken):
    values = broken["runs"]["egi/oracle"].sub_metrics("broken")
    assert check_ceiling(broken["suite"], broken["routes"], values) == [
        "broken: egi/oracle scores acc_alpha = 0.666667 (66.667 after fraction); the ceiling is 1.0",
        "broken: egi/oracle produced no value for acc_beta (got None)",
        "broken: egi/oracle scores acc = 0.583333 (58.333 after fraction); the ceiling is 1.0",
    ]
    # a documented ceiling: the oracle must reach the diagnostic named there, not 1.0
    capped = type("S", (), {"name": "broken", "oracle_ceiling": {"acc_alpha": "acc_alpha_max"}})()
    route = broken["routes"][:1]
    assert check_ceiling(capped, route, {"acc_alpha": 0.4, "acc_alpha_max": 0.4}) == []
    assert check_ceiling(capped, route, {"acc_alpha": 0.38, "acc_alpha_max": 0.4}) == [
        "broken: egi/oracle scores acc_alpha = 0.38; the most this run's tasks allow (acc_alpha_max, "
        "Suite.oracle_ceiling) is 0.4"
    ]
    assert check_ceiling(capped, route, {"acc_alpha": 0.4}) == [
        "broken: egi/oracle reported no value for acc_alpha_max, the ceiling of acc_alpha "
        "(Suite.oracle_ceiling)"
    ]


def test_floor_fails(broken):
    values = broken["runs"]["egi/null"].sub_metrics("broken")
    assert check_floor(broken["suite"], broken["routes"], values) == [
        "broken: egi/null scores acc_alpha = 0.5 (50.000 after fraction); the floor is 0.0, or a "
        "value documented in Suite.null_floor",
        "broken: egi/null produced no value for acc_beta (got None)",
        "broken: egi/null scores acc = 0.4 (40.000 after fraction); the floor is 0.0, or a value "
        "documented in Suite.null_floor",
    ]
    documented = type("S", (), {"name": "broken", "null_floor": {"acc_alpha": 1.0}})()
    assert check_floor(documented, broken["routes"][:1], values) == [
        "broken: egi/null scores acc_alpha = 0.5; its documented floor (Suite.null_floor) is 1.0"
    ]
    assert check_floor(documented, broken["routes"][:1], {"acc_alpha": 1.0}) == []
    undefined = type("S", (), {"name": "broken", "null_floor": {"acc_alpha": None}})()
    assert check_floor(undefined, broken["routes"][:1], values) == [
        "broken: egi/null scores acc_alpha = 0.5; Suite.null_floor documents it as undefined (None) "
        "under egi/null"
    ]
    assert check_floor(undefined, broken["routes"][:1], {"acc_alpha": None}) == []


def test_noisy_fails(broken):
    by_policy = {p: broken["runs"][p].sub_metrics("broken") for p in POLICIES}
    assert check_noisy("broken", broken["routes"], by_policy) == [
        "broken: acc_beta has no value under egi/oracle, egi/null, egi/noisy-0.2, egi/noisy-0.5",
        "broken: egi/noisy-0.2 is not above egi/null: mean routed score 0.000 vs 45.000 (0-100 "
        "after each route's transform)",
        "broken: egi/noisy-0.5 scores acc_alpha above egi/noisy-0.2 (66.667 > 0.000); scores must "
        "not rise with the mistake rate",
        "broken: egi/noisy-0.5 scores acc above egi/noisy-0.2 (58.333 > 0.000); scores must not "
        "rise with the mistake rate",
    ]
    # a route documented as undefined under egi/null: out of the means, still monotone
    graded = {"egi/oracle": 1.0, "egi/null": None, "egi/noisy-0.2": 0.3, "egi/noisy-0.5": 0.6}
    by_policy = {p: {"acc_alpha": graded[p], "acc": {"egi/null": 0.0}.get(p, 0.5)} for p in POLICIES}
    by_policy["egi/oracle"]["acc"] = 1.0
    routes = [broken["routes"][0], broken["routes"][2]]
    assert check_noisy("broken", routes, by_policy) == ["broken: acc_alpha has no value under egi/null"]
    assert check_noisy("broken", routes, by_policy, frozenset({"acc_alpha"})) == [
        "broken: egi/noisy-0.5 scores acc_alpha above egi/noisy-0.2 (60.000 > 30.000); scores must "
        "not rise with the mistake rate",
    ]
    by_policy["egi/noisy-0.5"]["acc_alpha"] = 0.2
    assert check_noisy("broken", routes, by_policy, frozenset({"acc_alpha"})) == []
    flat = {p: {"acc_alpha": 0.5} for p in POLICIES}
    assert check_noisy("broken", broken["routes"][:1], flat) == [
        "broken: egi/noisy-0.2 is not above egi/null: mean routed score 50.000 vs 50.000 (0-100 "
        "after each route's transform)",
        "broken: egi/noisy-0.2 is not below egi/oracle: mean routed score 50.000 vs 50.000 (0-100 "
        "after each route's transform)",
    ]


def test_serial_vs_n2_fails(broken):
    serial, dist = broken["runs"][DIST_POLICY], broken["runs"]["-n 2"]
    problems = check_identical("broken", serial.run_dir, dist.run_dir)
    assert len(problems) == 2
    assert problems[0].startswith("broken: records.jsonl differs at line 1 (serial vs -n 2), "
                                  "details.worker: 'main' vs 'gw")
    assert problems[1] == ("broken: 6 stored trajectories differ (serial vs -n 2), "
                           "first raw/broken/alpha-0.json")
    assert check_identical("broken", serial.run_dir, serial.run_dir) == []


def test_json_safety_fails(broken):
    run = broken["runs"]["egi/oracle"]
    assert math.isnan(run.captured[0]["values"]["spread"])
    problems = check_json_safe("broken", run.captured, run.records_text)
    assert problems[0] == (
        "broken: record brokensuites/broken/test_broken.py::test_task[alpha-0]: values.spread is nan "
        "(JSON has no NaN or infinity; use None for a missing value)"
    )
    assert problems[6] == "broken: records.jsonl line 1: NaN is not JSON"
    assert len(problems) == 12
    assert check_json_safe("broken", [Unpicklable("TypeError: cannot pickle 'function'")], "") == [
        "broken: record unpicklable record: TypeError: cannot pickle 'function': <record> is a "
        "Unpicklable (unpicklable record: TypeError: cannot pickle 'function'), not a JSON type"
    ]
    odd = [{"nodeid": "x", "values": (1, 2), 3: "three", "path": Path("/tmp")}]
    assert check_json_safe("broken", odd, json.dumps({"a": 1})) == [
        "broken: record x: values is a tuple ((1, 2)), not a JSON type",
        "broken: record x: <record> has the non-string key 3",
        "broken: record x: path is a PosixPath (PosixPath('/tmp')), not a JSON type",
    ]


def test_rescore_fails(broken):
    run = broken["runs"]["egi/oracle"]
    assert check_rescore("broken", run.egi, broken["rescored"]) == [
        # live: beta credit halved by the test module; rescored: the scorer's full credit
        "broken: rescoring egi/oracle changes acc: 0.583333 -> 0.833333",
        "broken: rescoring egi/oracle changes M4: 58.333333 -> 83.333333",
        # the partial EGI over M1 and M4 (weight 0.42): (0.28 * 66.667 + 0.14 * 58.333) / 0.42
        # -> 83.333 in M4 (no full EGI: the other buckets are empty)
        "broken: rescoring egi/oracle changes EGI (partial): 63.888889 -> 72.222222",
    ]
    assert check_rescore("broken", run.egi, run.egi) == []


def test_summary_columns_fails():
    """A toy whose columns are wrong three ways: ``beta``'s sum leaves out task ``beta-1``,
    ``finish`` gives 0.0 instead of None for ``alpha`` when a resample has no alpha task, and
    it leaves out the routed ``acc``."""
    from pytest_egi.suite import SummaryColumns

    class Toy:
        name = "broken"

        def summarize(self, records):
            def mean(rs):
                return sum(r["values"]["correct"] for r in rs) / len(rs) if rs else None

            alpha = [r for r in records if r["category"] == "alpha"]
            beta = [r for r in records if r["category"] == "beta"]
            return {"acc_alpha": mean(alpha), "acc_beta": mean(beta), "acc": mean(records)}

        def summary_columns(self, records):
            rows = []
            for r in records:
                x, beta = r["values"]["correct"], r["category"] == "beta"
                rows.append([0.0, 0.0, x * (r["task_id"] != "beta-1"), 1.0] if beta else [x, 1.0, 0.0, 0.0])

            def finish(s):
                return {"acc_alpha": s["a"] / s["na"] if s["na"] else 0.0,
                        "acc_beta": s["b"] / s["nb"] if s["nb"] else None}  # fmt: skip

            return SummaryColumns.from_rows(("a", "na", "b", "nb"), rows, finish)

    records = [{"task_id": f"{c}-{i}", "category": c, "values": {"correct": float(i % 2)}}
               for c, n in (("alpha", 1), ("beta", 5)) for i in range(n)]  # fmt: skip
    routes = routes_of(RoutingConfig.model_validate(__import__("yaml").safe_load(ROUTING)), "broken")
    assert check_summary_columns(Toy(), routes, records, "egi/oracle") == [
        "broken: egi/oracle: summary_columns' finish leaves out routed sub-metric 'acc'",
        "broken: egi/oracle: resample 1: finish gives acc_alpha = 0.0; summarize gives None",
        "broken: egi/oracle: resample 1: finish gives acc_beta = 0.16666666666666666; summarize gives 0.5",
    ]


def test_check_malformed_scored_flags_errors_passes_reasonless_failures_and_unsent_shapes():
    records = [
        {"task_id": "a-0", "status": "failed", "got": "lookup({})", "error": None},
        {"task_id": "a-1", "status": "error", "got": None, "error": "ValueError: dictionary update sequence"},
        {"task_id": "a-2", "status": "passed", "got": "C2", "error": None},
        {"task_id": "a-3", "status": "failed", "got": None, "error": None},
    ]
    assert check_malformed_scored("toy", records, {"not_json": 2, "no_name": 0}, ["not_json", "no_name"]) == [
        "toy a-1: a model sending malformed tool calls made the item error, not a scored failure "
        "(ValueError: dictionary update sequence)",
        "toy a-2: a model sending malformed tool calls made the item passed, not a scored failure (C2)",
        "toy a-3: failed with no reason (got None, error None)",
        "toy: the shapes no_name never reached its agent (too few conversations offered tools)",
    ]
    assert check_malformed_scored("toy", [], {}, []) == ["toy: the run wrote no record"]
    assert check_malformed_scored("toy", records[:1], {"not_json": 1}, ["not_json"]) == []


def test_summarize_keys_matching_a_diagnostic_pattern_are_declared_diagnostics():
    from pytest_egi.scoring.config import Route

    routes = [Route(suite="opt", sub_metric="rate", bucket="M1", transform="fraction")]
    patterned = type("S", (), {"name": "opt", "sub_metrics": frozenset({"rate"}), "diagnostics": frozenset(),
                               "diagnostic_patterns": ("tag.*.rate",)})()  # fmt: skip
    summary = {"rate": 0.5, "tag.csv.rate": 1.0, "tag.web.rate": None, "tagcsv": 0.2}
    assert check_summarize_keys(patterned, routes, summary) == [
        "opt: summarize returned 'tagcsv', which is not in Suite.sub_metrics",
        "opt: summarize returned 'tagcsv', which is neither routed nor in Suite.diagnostics",
    ]
