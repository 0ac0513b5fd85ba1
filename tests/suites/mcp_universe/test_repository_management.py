"""repository_management: upstream task files and our generated tasks solved on the in-memory
repository server, the ``github.*`` ops on hand-made states, and task cleanups.

Each task is solved by :func:`solve`, its calls replayed on a fresh server state, the state
snapshotted and every evaluator run on it; the reference's one-argument mistake must fail
exactly the evaluators it lists, each with the op's reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import suites.mcp_universe.scorer.ops  # noqa: F401  (registers the domain ops)
from suites._common.mcp_servers._base import BadRequest
from suites._common.mcp_servers.repository import (
    ACCOUNT,
    DELTA_FORMAT,
    RepositoryWorld,
    build_world,
    find_repo,
    state_view,
)
from suites.mcp_universe.data.domains import NotSolvable
from suites.mcp_universe.data.domains import repository_management as rm
from suites.mcp_universe.env.cleanups import fill_cleanup_args, run_cleanups
from suites.mcp_universe.scorer.evaluator import OPS, EvalContext, evaluate, render
from tests.suites.mcp_universe import upstream

SEED = 42
UPSTREAM_FILES = upstream.task_files("repository_management")
needs_upstream = upstream.needs_upstream("repository_management")

REASONS = {
    "github.check_repository": "the repository doesn't exist",
    "github.check_pull_request": "the PR content is incorrect!",
    "github.check_number_of_issues": "the number of filtered issues",
    "github.check_file_content_and_issue_count": "the return_repo_list is not the same as the gt_repo_list!",
    "github.check_file_content_with_fewest_issues": "Content ",
}
"""Op → how its failure reason starts (the ops whose failures the mistakes provoke)."""


def replay(calls: list[dict[str, Any]], seed: int = SEED) -> RepositoryWorld:
    """A fresh server state with ``calls`` applied (each must be accepted)."""
    world = RepositoryWorld(seed)
    for call in calls:
        assert call["server"] == "github"
        world.call(call["tool"], call["arguments"])
    return world


def judge(task: dict[str, Any], world: RepositoryWorld, seed: int = SEED) -> list[Any]:
    ctx = EvalContext(seed=seed, state={"github": world.egi_snapshot_state()}, env=rm.ENV)
    return [evaluate(e, "done", ctx, i) for i, e in enumerate(task["evaluators"])]


def check_reference(task: dict[str, Any], reference: dict[str, Any]) -> None:
    results = judge(task, replay(reference["calls"]))
    assert [(r.index, r.reason) for r in results if not r.passed] == []
    mistake = reference["mistake"]
    assert mistake["fails"], "a mistake must fail at least one evaluator"
    dropped = len(mistake["calls"]) < len(reference["calls"])
    assert dropped or len(mistake["calls"]) == len(reference["calls"])
    failed = {r.index: r for r in judge(task, replay(mistake["calls"])) if not r.passed}
    assert sorted(failed) == mistake["fails"]
    for index, result in failed.items():
        op = task["evaluators"][index]["op"]
        if op == "github.check_file_content":
            expect = "the file content is not found" if dropped else "the file content is incorrect!"
        elif op == "github.file_content_include":
            expect = f"{ACCOUNT}/"
            assert "doesn't include" in result.reason, result.reason
        else:
            expect = REASONS[op]
        assert result.reason.startswith(expect), (op, result.reason)


# -- upstream task files ------------------------------------------------------------------------


@needs_upstream
def test_upstream_files_use_the_ten_github_ops_all_registered():
    ops = {e["op"] for f in UPSTREAM_FILES for e in json.loads(Path(f).read_text())["evaluators"]}
    assert ops == rm.SOLVED_OPS and len(ops) == 10
    assert all(OPS[op].kind == "dynamic" for op in ops)
    assert len(UPSTREAM_FILES) == 19


@needs_upstream
@pytest.mark.parametrize("path", UPSTREAM_FILES, ids=lambda p: Path(p).stem)
def test_upstream_task_solved_and_its_mistake_caught(path):
    raw = json.loads(Path(path).read_text())
    task = render(raw, rm.ENV)
    assert "{{" not in json.dumps(task["evaluators"])
    check_reference(task, rm.solve(task, SEED))


@needs_upstream
def test_upstream_fork_and_report_truths_come_from_the_seeded_world():
    load = {Path(p).stem: render(json.loads(Path(p).read_text()), rm.ENV) for p in UPSTREAM_FILES}
    calls = rm.solve(load["github_task_0011"], SEED)["calls"]
    # ariaui.py already uses vLLM: fork only, copy nothing
    assert calls == [
        {
            "server": "github",
            "tool": "fork_repository",
            "arguments": {"owner": "likaixin2000", "repo": "ScreenSpot-Pro-GUI-Grounding"},
        }
    ]
    assert (
        rm.solve(load["github_task_0014"], SEED)["calls"][0]["arguments"]["repo"] == "Qwen2.5-VL"
    )  # the dense one
    assert (
        rm.solve(load["github_task_0015"], SEED)["calls"][0]["arguments"]["repo"] == "Kimi-VL"
    )  # the newest
    world = build_world(SEED)
    unlabeled = {
        f: sum(i["state"] == "open" and not i["labels"] for i in r["issues"])
        for f, r in world["repos"].items()
        if f.startswith("microsoft/Air")
    }
    report = rm.solve(load["github_task_0010"], SEED)["calls"][1]["arguments"]["content"]
    assert json.loads(report) == unlabeled


@pytest.mark.parametrize("file_type", ["csv", "json"])
def test_a_report_of_a_search_that_finds_no_repository_has_a_mistake_too(file_type):
    """The search finds no repository (upstream's file 0006 asks about facebook's react
    repositories, which the local world lacks): the correct report is empty, and its mistake
    adds a repository instead of raising (the old generator's IndexError / StopIteration
    crashed collection)."""
    args = {"owner": "{{GITHUB_PERSONAL_ACCOUNT_NAME}}", "repo": "nobody-reports", "path": f"r.{file_type}",
            "branch": "main", "search_repo_owner": "nobody-at-all", "search_repo_name": "nothing",
            "issue_labels": ["bug"], "issue_state": "open", "file_type": file_type}  # fmt: skip
    if file_type == "csv":
        args["csv_columns"] = ["repository_name", "open_bug_count"]
    task = render({
        "question": "Count the open bugs of nobody-at-all's nothing repositories into a report.",
        "evaluators": [
            {"func": "raw", "op": "github.check_repository",
             "op_args": "{{GITHUB_PERSONAL_ACCOUNT_NAME}}/nobody-reports"},
            {"func": "raw", "op": "github.check_file_content_and_issue_count", "op_args": args},
        ],
    }, rm.ENV)  # fmt: skip
    reference = rm.solve(task, SEED)
    report = reference["calls"][-1]["arguments"]["content"]
    assert report == ("repository_name,open_bug_count\n" if file_type == "csv" else "{}\n")
    wrong = reference["mistake"]["calls"][-1]["arguments"]["content"]
    if file_type == "csv":
        assert wrong == "repository_name,open_bug_count\nnobody-at-all/nothing,1\n"
    else:
        assert json.loads(wrong) == {"nobody-at-all/nothing": 1}
    assert reference["mistake"]["fails"] == [1]
    check_reference(task, reference)


# -- generated tasks ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated():
    return rm.generate_tasks(SEED, 33)


def test_generated_tasks_pass_and_their_mistakes_fail_exactly(generated):
    assert [t["id"] for t in generated] == [f"repository_management-{i:03d}" for i in range(1, 34)]
    for task in generated:
        assert task["mcp_servers"] == [{"name": "github"}] and task["use_specified_server"] is True
        assert task["cleanups"] and all(c["cleanup_func"] == "delete_repository" for c in task["cleanups"])
        rendered = render({k: v for k, v in task.items() if k != "reference"}, rm.ENV)
        assert task["reference"] == rm.solve(rendered, SEED)
        check_reference(rendered, task["reference"])


def test_generated_tasks_cover_upstreams_ops_and_shapes(generated):
    ops = {e["op"] for t in generated for e in t["evaluators"]}
    assert len(ops) == 10
    tools = {c["tool"] for t in generated for c in t["reference"]["calls"]}
    assert tools == {
        "create_repository",
        "fork_repository",
        "create_branch",
        "create_or_update_file",
        "push_files",
        "create_pull_request",
        "create_issue",
        "add_issue_comment",
        "update_issue",
    }
    assert len({t["question"] for t in generated}) == 33


def test_generation_is_deterministic_and_a_prefix(generated):
    assert rm.generate_tasks(SEED, 5) == generated[:5]
    assert rm.generate_tasks(SEED, 33) == generated
    other = rm.generate_tasks(SEED + 1, 33)
    assert [t["reference"]["calls"] for t in other] != [t["reference"]["calls"] for t in generated]


def test_solve_refuses_an_unrendered_task_and_an_unknown_op(generated):
    with pytest.raises(NotSolvable, match="not rendered"):
        rm.solve(generated[0], SEED)
    task = render({k: v for k, v in generated[0].items() if k != "reference"}, rm.ENV)
    task["evaluators"].append({"func": "raw", "op": "yfinance.check_net_income", "op_args": {}})
    with pytest.raises(NotSolvable, match=r"evaluator 7: op 'yfinance.check_net_income'"):
        rm.solve(task, SEED)


# -- ops on hand-made states ------------------------------------------------------------------


def _repo(owner, name, branches=None, issues=(), pulls=(), fork=False, parent=None, stars=0):
    return {
        "owner": owner,
        "name": name,
        "full_name": f"{owner}/{name}",
        "fork": fork,
        "parent": parent,
        "private": False,
        "description": None,
        "topics": [],
        "stargazers_count": stars,
        "default_branch": "main",
        "branches": {b: {"files": f, "commits": []} for b, f in (branches or {}).items()},
        "issues": list(issues),
        "pulls": list(pulls),
    }


def _issue(n, title, state="open", labels=(), comments=()):
    return {
        "number": n,
        "title": title,
        "state": state,
        "labels": list(labels),
        "comments": [{"body": c} for c in comments],
    }


def _pr(n, title, body, head, base="main", state="open", repo="egi-agent/app"):
    return {
        "number": n,
        "title": title,
        "body": body,
        "state": state,
        "head": {"ref": head, "repo": repo},
        "base": {"ref": base},
    }


STATE = {
    "account": ACCOUNT,
    "repos": {
        r["full_name"]: r
        for r in [
            _repo(
                "egi-agent",
                "app",
                {
                    "main": {
                        "README.md": "# App\n",
                        "empty.txt": "",
                        "report.csv": "repository_name,n\nacme/widget-a,2\nwidget-b,0\n",
                        "bad.csv": "x,y\n1,2\n",
                        "r.json": '{"acme/widget-a": 1, "acme/widget-b": 0}',
                    },
                    "dev": {"README.md": "  # App\n\n"},
                },
                issues=[
                    _issue(1, "Bug", labels=["bug"], comments=["Thanks egi-agent"]),
                    _issue(2, "Bug", state="closed"),
                    _issue(3, "Idea", labels=["feature", "bug"]),
                ],
                pulls=[_pr(4, "Add dev", "Body.", "dev"), _pr(5, "Old", "x", "old", state="closed")],
            ),
            _repo(
                "egi-agent",
                "widget-a",
                {"main": {"README.md": "# A\nRelated: [B](https://x/b)"}},
                fork=True,
                parent="acme/widget-a",
            ),
            _repo(
                "acme",
                "widget-a",
                {"main": {"README.md": "# A\n", "lib.py": "x = 1\n"}},
                issues=[_issue(1, "a", labels=["bug"]), _issue(2, "b"), _issue(3, "c", state="closed")],
            ),
            _repo(
                "acme", "widget-b", {"main": {"README.md": "# B\n"}}, issues=[_issue(1, "x", labels=["docs"])]
            ),
            _repo("acme", "gadget", {"main": {}}, issues=[_issue(1, "y")]),
            _repo("egi-agent", "gadget", {"main": {}}, fork=True, parent="acme/gadget"),
        ]
    },
}


def op(name: str, op_args: Any, value: Any = None, state: dict[str, Any] | None = None):
    ctx = EvalContext(seed=SEED, state={"github": STATE if state is None else state})
    result = evaluate({"func": "raw", "op": name, "op_args": op_args, "value": value}, "", ctx)
    return result.passed, result.reason


def test_check_repository_reads_the_repo_qualifier_and_ignores_case():
    assert op("github.check_repository", "egi-agent/APP") == (True, "")
    assert op("github.check_repository", "egi-agent/nope") == (
        False,
        "the repository doesn't exist: egi-agent/nope (search 'egi-agent/nope' does not list it)",
    )
    # upstream compares the whole query with the full names, so this could never pass there
    assert op("github.check_repository", "repo:egi-agent/widget-a fork:true") == (True, "")
    # without fork:true a fork is not listed by the search, as on GitHub
    assert op("github.check_repository", "repo:egi-agent/widget-a")[0] is False


def test_check_branches_exist():
    args = {"owner": "egi-agent", "repo": "app", "path": "README.md", "branches": ["main", "dev"]}
    assert op("github.check_branches_exist", args) == (True, "")
    assert op("github.check_branches_exist", {**args, "branches": ["main", "qa"]}) == (
        False,
        "the branch qa doesn't exist in egi-agent/app",
    )
    assert op("github.check_branches_exist", {**args, "repo": "zzz"}) == (
        False,
        "the branches don't exist: repository egi-agent/zzz not found",
    )


def test_check_file_content_literal_reference_and_missing():
    loc = {"owner": "egi-agent", "repo": "app", "path": "README.md", "branch": "dev"}
    assert op("github.check_file_content", loc, "# App") == (True, "")  # both sides stripped
    assert op("github.check_file_content", loc, "# Ap") == (
        False,
        "the file content is incorrect! egi-agent/app/dev/README.md differs from the given text",
    )
    ref = {"owner": "acme", "repo": "widget-a", "path": "README.md", "branch": "main"}
    assert op("github.check_file_content", loc, ref)[1] == (
        "the file content is incorrect! egi-agent/app/dev/README.md differs from acme/widget-a/main/README.md"
    )
    assert op("github.check_file_content", {**loc, "path": "nope.md"}, "x") == (
        False,
        "the file content is not found: egi-agent/app/dev/nope.md does not exist",
    )
    assert op("github.check_file_content", loc, {**ref, "path": "gone.md"}) == (
        False,
        "the expected file content is not found (acme/widget-a/main/gone.md)",
    )
    assert op("github.check_file_content", loc, "") == (
        False,
        "the expected file content is not found (the given text)",
    )


def test_check_file_not_exist_counts_an_empty_file_as_existing():
    loc = {"owner": "egi-agent", "repo": "app", "path": "empty.txt", "branch": "main"}
    assert op("github.check_file_not_exist", loc, "") == (
        False,
        "the file exists! egi-agent/app/main/empty.txt",
    )
    assert op("github.check_file_not_exist", {**loc, "path": "x.py"}, "") == (True, "")
    assert op("github.check_file_not_exist", {**loc, "repo": "ghost"}, "") == (True, "")


def test_check_pull_request_reads_title_and_body_from_value():
    args = {"owner": "egi-agent", "repo": "app", "base": "main", "head": "dev"}
    assert op("github.check_pull_request", args, {"title": "Add dev", "body": "Body."}) == (True, "")
    assert op("github.check_pull_request", {**args, "head": "egi-agent:dev"}, {"title": "Add dev"}) == (
        True,
        "",
    )
    passed, reason = op("github.check_pull_request", args, {"title": "Add qa", "body": "Body."})
    assert not passed and reason.startswith("the PR content is incorrect! expected {'title': 'Add qa'")
    assert op("github.check_pull_request", {**args, "head": "old"}, {"title": "Old"}) == (
        False,
        "the PR doesn't exist: no open pull request from old into main of egi-agent/app",
    )


def test_check_file_content_and_issue_count_csv_json_and_unlabeled():
    base = {
        "owner": "egi-agent",
        "repo": "app",
        "branch": "main",
        "search_repo_owner": "ACME",
        "search_repo_name": "widget",
        "issue_state": "open",
    }
    csv_args = {**base, "path": "report.csv", "file_type": "csv", "csv_columns": ["repository_name", "n"]}
    # acme/widget-a has 2 open issues, acme/widget-b 1; unlabeled: 1 and 0; labeled bug: 1 and 0
    passed, reason = op("github.check_file_content_and_issue_count", {**csv_args, "issue_labels": ["bug"]})
    assert reason == (
        "the return_repo_list is not the same as the gt_repo_list! response: {'acme/widget-a': 2, "
        "'widget-b': 0} expected: {'acme/widget-a': 1, 'acme/widget-b': 0}"
    )
    json_args = {**base, "path": "r.json", "file_type": "json"}
    assert op("github.check_file_content_and_issue_count", {**json_args, "issue_labels": []}) == (True, "")
    assert op("github.check_file_content_and_issue_count", {**json_args, "issue_labels": ["bug"]}) == (
        True,
        "",
    )
    # no label filter: 2 and 1 open issues, the report says 2 and 0
    assert op("github.check_file_content_and_issue_count", {**csv_args, "issue_labels": None})[0] is False
    bad = {**csv_args, "path": "bad.csv", "issue_labels": ["bug"]}
    assert op("github.check_file_content_and_issue_count", bad) == (
        False,
        "the report egi-agent/app/main/bad.csv cannot be read as csv: the CSV lacks the column "
        "'repository_name' or 'n' (has ['x', 'y'])",
    )
    assert op(
        "github.check_file_content_and_issue_count", {**json_args, "path": "no.json", "issue_labels": []}
    ) == (False, "the file content is not found: egi-agent/app/main/no.json does not exist")


def test_report_with_bare_names_passes():
    state = json.loads(json.dumps(STATE))
    state["repos"]["egi-agent/app"]["branches"]["main"]["files"]["report.csv"] = (
        "repository_name,n\nwidget-a,2\nWIDGET-B,1\n"
    )
    args = {
        "owner": "egi-agent",
        "repo": "app",
        "branch": "main",
        "path": "report.csv",
        "search_repo_owner": "acme",
        "search_repo_name": "widget",
        "issue_state": "open",
        "issue_labels": [],
        "file_type": "csv",
        "csv_columns": ["repository_name", "n"],
    }
    assert (
        op("github.check_file_content_and_issue_count", args, state=state)[0] is False
    )  # unlabeled: 1 and 0
    state["repos"]["egi-agent/app"]["branches"]["main"]["files"]["report.csv"] = (
        "repository_name,n\nwidget-a,1\nWIDGET-B,0\n"
    )
    assert op("github.check_file_content_and_issue_count", args, state=state) == (True, "")


def test_file_content_include_treats_a_string_as_one_substring():
    loc = {"owner": "egi-agent", "repo": "app", "path": "README.md", "branch": "main"}
    # upstream iterated the characters: "pA" would pass on "# App\n" since 'p' and 'A' occur
    assert op("github.file_content_include", loc, "pA") == (
        False,
        "egi-agent/app/main/README.md doesn't include 'pA'",
    )
    assert op("github.file_content_include", loc, ["# A", "pp"]) == (True, "")
    assert op("github.file_content_include", loc, None) == (True, "")
    assert op("github.file_content_include", {**loc, "path": "x"}, ["a"]) == (
        False,
        "the file egi-agent/app/main/x doesn't exist",
    )


def test_fewest_issue_ops_pick_the_first_minimum_and_check_the_copy():
    args = {"owner": "egi-agent", "repos": ["acme/widget-a", "acme/widget-b"], "issue_state": "open"}
    # widget-a: 2 open, widget-b: 1 open -> widget-b, which egi-agent has not forked
    assert op("github.check_repository_with_fewest_issues", args) == (
        False,
        "the repository doesn't exist: egi-agent/widget-b (the repository with the fewest issues)",
    )
    closed = {**args, "issue_state": "closed"}  # widget-a: 1 closed, widget-b: 0 -> widget-b again
    assert op("github.check_repository_with_fewest_issues", closed)[0] is False
    tie = {**args, "repos": ["acme/gadget", "acme/widget-b"]}  # 1 open issue each: the first one wins
    assert op("github.check_repository_with_fewest_issues", tie) == (True, "")
    assert op("github.check_repository_with_fewest_issues", {**tie, "repos": tie["repos"][::-1]})[0] is False
    everything = {**args, "repos": ["acme/widget-a"], "issue_state": "all"}
    assert op("github.check_repository_with_fewest_issues", everything) == (True, "")
    content = {
        **everything,
        "path": "README.md",
        "branch": "main",
        "file_content": ["Related: [B](https://x/b)"],
    }
    assert op("github.check_file_content_with_fewest_issues", content) == (True, "")
    assert op("github.check_file_content_with_fewest_issues", {**content, "file_content": ["[C]"]}) == (
        False,
        "Content '[C]' is not found in the file egi-agent/widget-a/main/README.md",
    )
    assert op("github.check_repository_with_fewest_issues", {**args, "repos": ["acme/ghost"]}) == (
        False,
        "the issues are not found: repository acme/ghost does not exist",
    )


def test_check_number_of_issues_filters_and_reads_comment_as_comments():
    args = {"owner": "egi-agent", "repo": "app", "title": "Bug"}
    assert op("github.check_number_of_issues", args, 1) == (
        True,
        "",
    )  # the closed one is not listed by default
    assert op("github.check_number_of_issues", {**args, "state": "all"}, 2) == (True, "")
    assert op(
        "github.check_number_of_issues", {**args, "labels": ["bug"], "comment": "Thanks [repo owner name]"}, 1
    ) == (True, "")
    passed, reason = op("github.check_number_of_issues", {**args, "comment": "Thanks"}, 1)
    assert (passed, reason) == (
        False,
        "the number of filtered issues [title:'Bug', labels:None, state:open, "
        "comment:'Thanks'] is wrong: response 0, expected 1",
    )
    assert op(
        "github.check_number_of_issues", {"owner": "egi-agent", "repo": "app", "labels": ["bug"]}, 2
    ) == (True, "")
    assert op("github.check_number_of_issues", {**args, "repo": "ghost"}, 1) == (
        False,
        "the issues are not found: repository egi-agent/ghost does not exist",
    )


def test_a_missing_snapshot_is_an_error_not_a_failed_evaluator():
    ev = {"func": "raw", "op": "github.check_repository", "op_args": "egi-agent/app"}
    with pytest.raises(RuntimeError, match="state snapshot"):
        evaluate(ev, "", EvalContext(seed=SEED, state={}))


# -- snapshots: a delta against the seeded base ----------------------------------------------

EMPTY_DELTA = {
    "format": DELTA_FORMAT,
    "seed": SEED,
    "created": {},
    "forked": {},
    "modified": {},
    "deleted": [],
}


def _stored(world: RepositoryWorld) -> dict[str, Any]:
    """The snapshot as a trajectory stores it (through JSON)."""
    return json.loads(json.dumps(world.egi_snapshot_state()))


def _rebuilds_exactly(world: RepositoryWorld, label: str) -> int:
    """Assert that base + delta is the whole state, every field in order; return the delta's
    size in bytes."""
    delta = _stored(world)
    assert json.dumps(state_view(SEED, delta)) == json.dumps(world.state), label
    return len(json.dumps(delta))


def test_generated_deltas_rebuild_the_whole_state_and_are_small(generated):
    sizes = {}
    for task in generated:
        for kind in ("calls", "mistake"):
            calls = task["reference"][kind] if kind == "calls" else task["reference"]["mistake"]["calls"]
            sizes[f"{task['id']} {kind}"] = _rebuilds_exactly(replay(calls), f"{task['id']} {kind}")
    largest = max(sizes, key=sizes.get)
    whole = len(json.dumps(build_world(SEED)))
    assert sizes[largest] < 20_000, f"largest delta: {largest}, {sizes[largest]} bytes (whole state {whole})"
    oracle = [size for label, size in sizes.items() if label.endswith(" calls")]
    assert min(oracle) > len(json.dumps(EMPTY_DELTA))  # every oracle changes something


@needs_upstream
def test_upstream_deltas_rebuild_the_whole_state():
    for path in UPSTREAM_FILES:
        task = render(json.loads(Path(path).read_text()), rm.ENV)
        reference = rm.solve(task, SEED)
        _rebuilds_exactly(replay(reference["calls"]), Path(path).stem)
        _rebuilds_exactly(replay(reference["mistake"]["calls"]), Path(path).stem + " mistake")


def test_a_trial_that_changes_nothing_has_an_empty_delta():
    world = replay(
        [
            {"server": "github", "tool": "search_repositories", "arguments": {"query": "user:salesforce"}},
            {"server": "github", "tool": "list_issues", "arguments": {"owner": "salesforce", "repo": "BLIP"}},
            {
                "server": "github",
                "tool": "get_file_contents",
                "arguments": {"owner": "salesforce", "repo": "BLIP"},
            },
        ]
    )
    assert _stored(world) == EMPTY_DELTA
    assert state_view(SEED, EMPTY_DELTA) == build_world(SEED)


def test_a_deleted_base_repository_is_listed_and_the_view_lacks_it():
    world = RepositoryWorld(SEED)
    world.delete_repository("scratchpad")
    delta = _stored(world)
    assert delta == {**EMPTY_DELTA, "deleted": [f"{ACCOUNT}/scratchpad"]}
    view = state_view(SEED, delta)
    assert find_repo(view, ACCOUNT, "scratchpad") is None
    assert set(view["repos"]) == set(build_world(SEED)["repos"]) - {f"{ACCOUNT}/scratchpad"}
    ctx = EvalContext(seed=SEED, state={"github": delta})
    ev = {"func": "raw", "op": "github.check_repository", "op_args": f"{ACCOUNT}/scratchpad"}
    result = evaluate(ev, "", ctx)
    gone = f"{ACCOUNT}/scratchpad"
    assert (result.passed, result.reason) == (
        False,
        f"the repository doesn't exist: {gone} (search '{gone}' does not list it)",
    )


def test_a_delta_names_what_changed_and_nothing_else():
    base = build_world(SEED)
    blip = base["repos"]["salesforce/BLIP"]
    world = RepositoryWorld(SEED)
    world.call("fork_repository", {"owner": "salesforce", "repo": "BLIP"})
    world.call("create_repository", {"name": "notes", "autoInit": True})
    world.call(
        "add_issue_comment", {"owner": "salesforce", "repo": "BLIP", "issue_number": 1, "body": "Same here."}
    )
    world.call("create_branch", {"owner": ACCOUNT, "repo": "BLIP", "branch": "dev"})
    world.call(
        "create_or_update_file",
        {
            "owner": ACCOUNT,
            "repo": "BLIP",
            "path": "NOTES.md",
            "content": "hi\n",
            "message": "m",
            "branch": "dev",
        },
    )
    delta = _stored(world)
    assert set(delta) == set(EMPTY_DELTA) | {"clock", "next_id"}
    # ticks: fork, create, its README commit, comment, file commit; ids: fork, repository, comment
    assert (delta["clock"], delta["next_id"]) == (5, base["next_id"] + 3)
    assert list(delta["created"]) == [f"{ACCOUNT}/notes"] and delta["deleted"] == []
    # the parent: one more fork, and the issue with its new comment (the other issues are not stored)
    assert list(delta["modified"]) == ["salesforce/BLIP"]
    parent = delta["modified"]["salesforce/BLIP"]
    assert parent["forks_count"] == blip["forks_count"] + 1 and list(parent["issues"]) == ["1"]
    assert parent["issues"]["1"]["comments"][-1]["body"] == "Same here."
    # the fork: its own fields, and the new branch as a copy of main plus one file and one commit
    fork = delta["forked"][f"{ACCOUNT}/BLIP"]
    assert fork["from"] == "salesforce/BLIP"
    assert fork["changes"]["branches"]["dev"]["copy_of"] == "main"
    assert fork["changes"]["branches"]["dev"]["files"] == {"NOTES.md": "hi\n"}
    assert [c["message"] for c in fork["changes"]["branches"]["dev"]["commits_added"]] == ["m"]
    assert fork["changes"]["issues"] == [] and "main" not in fork["changes"]["branches"]
    assert json.dumps(state_view(SEED, delta)) == json.dumps(world.state)
    assert "order" not in delta  # the fork, then the new repository: base order + new ones


def test_a_snapshot_from_another_seed_is_a_harness_error():
    ev = {"func": "raw", "op": "github.check_repository", "op_args": f"{ACCOUNT}/scratchpad"}
    with pytest.raises(RuntimeError, match="taken on the world of seed 43, not on the task's seed 42"):
        evaluate(ev, "", EvalContext(seed=SEED, state={"github": {**EMPTY_DELTA, "seed": SEED + 1}}))


def test_a_snapshot_viewed_again_is_rebuilt_once_and_each_view_is_a_fresh_copy(monkeypatch):
    from suites._common.mcp_servers import repository

    world = RepositoryWorld(SEED)
    world.call("create_repository", {"name": "notes", "autoInit": True})
    delta = _stored(world)  # (taking it applies the delta once, to check it)
    monkeypatch.setattr(repository, "_VIEWS", {})
    builds = []
    delta_text = repository._delta_text

    def counted(base, delta):
        builds.append(1)
        return delta_text(base, delta)

    monkeypatch.setattr(repository, "_delta_text", counted)
    first = state_view(SEED, delta)
    first["repos"].clear()  # an op changing its view changes no later view
    again = [state_view(SEED, json.loads(json.dumps(delta))) for _ in range(5)]
    assert len(builds) == 1
    assert all(json.dumps(view) == json.dumps(world.state) for view in again)
    assert again[0] is not again[1] and again[0]["repos"] is not again[1]["repos"]
    # bounded: the most recently viewed are kept; one let go is rebuilt, the same
    kept = repository.VIEWS_KEPT
    for k in range(kept):
        state_view(SEED, {**EMPTY_DELTA, "clock": k + 1})
    assert len(repository._VIEWS) == kept and len(builds) == 1 + kept
    assert json.dumps(state_view(SEED, delta)) == json.dumps(world.state) and len(builds) == 2 + kept
    state_view(SEED, {**EMPTY_DELTA, "clock": kept})  # kept: viewed last but one
    assert len(builds) == 2 + kept


# -- cleanups -----------------------------------------------------------------------------------


def _traced(calls: list[dict[str, Any]], world: RepositoryWorld) -> list[dict[str, Any]]:
    out = []
    for c in calls:
        result = json.dumps(world.call(c["tool"], c["arguments"]))
        out.append({"server": "github", "name": c["tool"], "arguments": c["arguments"], "result": result})
    return out


def _call_tool(world: RepositoryWorld):
    def call(server: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        assert server == "github"
        try:
            return {
                "isError": False,
                "content": [{"type": "text", "text": json.dumps(world.call(tool, args))}],
            }
        except BadRequest as exc:
            return {"isError": True, "content": [{"type": "text", "text": str(exc)}]}

    return call


def test_cleanups_undo_created_and_forked_repositories(generated):
    base = build_world(SEED)
    for task in (generated[0], generated[2], generated[6]):  # created, forked, fewest-issues fork
        world = RepositoryWorld(SEED)
        traced = _traced(task["reference"]["calls"], world)
        assert set(world.state["repos"]) != set(base["repos"])
        outcomes = run_cleanups(task["cleanups"], traced, _call_tool(world))
        assert outcomes and all(o.ok for o in outcomes), [o.to_dict() for o in outcomes]
        assert set(world.state["repos"]) == set(base["repos"])
        world.egi_reset_state()
        assert state_view(SEED, world.egi_snapshot_state()) == base


def test_cleanups_fill_return_paths_skip_bad_entries_and_run_toolless_entries():
    world = RepositoryWorld(SEED)
    traced = _traced(
        [
            {"tool": "create_repository", "arguments": {"name": "one"}},
            {"tool": "create_repository", "arguments": {"name": "two"}},
            {"tool": "create_issue", "arguments": {"owner": ACCOUNT, "repo": "two", "title": "t"}},
        ],
        world,
    )
    cleanups = [
        {
            "server": "github",
            "tool": "create_repository",
            "cleanup_func": "delete_repository",
            "cleanup_args": {"repo": "$return -> get(content) -> array(0) -> get(text) -> json -> get(name)"},
        },
        {
            "server": "github",
            "tool": "create_repository",
            "cleanup_func": "delete_repository",
            "cleanup_args": {"repo": "$nonexistent"},
        },
        {
            "server": "github",
            "tool": "",
            "cleanup_func": "delete_repository",
            "cleanup_args": {"repo": "scratchpad"},
        },
    ]
    outcomes = run_cleanups(cleanups, traced, _call_tool(world))
    assert [(o.arguments, o.ok) for o in outcomes] == [
        ({"repo": "two"}, True),
        (None, False),
        ({"repo": "one"}, True),
        (None, False),
        ({"repo": "scratchpad"}, True),
    ]
    assert (
        outcomes[1].detail
        == "cleanup_args refers to $nonexistent, which the call 'create_repository' did not pass"
    )
    assert outcomes[0].undoes == {"name": "create_repository", "arguments": {"name": "two"}}
    assert set(world.state["repos"]) == set(build_world(SEED)["repos"]) - {"egi-agent/scratchpad"}
    # a refused cleanup (the repository is already gone) is recorded, not raised
    again = run_cleanups(cleanups[:1], traced[:1], _call_tool(world))
    assert [(o.ok, o.detail) for o in again] == [
        (False, "Not Found: repository egi-agent/one does not exist (check the owner and name)")
    ]
    assert run_cleanups(None, traced, _call_tool(world)) == []
    assert fill_cleanup_args({"a": ["$name", 3]}, {"arguments": {"name": "x"}}) == {"a": ["x", 3]}


def test_cleanup_server_faults_propagate():
    def boom(server, tool, args):
        raise ConnectionError("server died")

    traced = [{"server": "github", "name": "create_repository", "arguments": {"name": "x"}, "result": "{}"}]
    with pytest.raises(ConnectionError):
        run_cleanups(
            [
                {
                    "server": "github",
                    "tool": "create_repository",
                    "cleanup_func": "delete_repository",
                    "cleanup_args": {"repo": "$name"},
                }
            ],
            traced,
            boom,
        )
