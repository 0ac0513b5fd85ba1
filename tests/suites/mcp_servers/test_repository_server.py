"""The repository server (an in-memory GitHub): tools through the SDK's in-memory transport,
error results, the harness tools, and the reference solver's calls over stdio."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import anyio
import pytest

from suites._common.mcp_servers import TOOLS, build_server, repository, server_spec
from suites._common.mcp_servers.repository import ACCOUNT, blob_sha, build_world, state_view
from suites.mcp_universe.env.servers import HIDDEN_TOOLS

SEED = 11


class Session:
    """One in-process server; ``call`` returns (is_error, text)."""

    def __init__(self) -> None:
        self.server = build_server("repository", SEED)

    def call(self, tool: str, args: dict[str, Any] | None = None) -> tuple[bool, str]:
        from mcp import Client

        async def run() -> tuple[bool, str]:
            async with Client(self.server) as client:
                result = await client.call_tool(tool, args or {})
                return bool(result.is_error), "\n".join(b.text for b in result.content)

        return anyio.run(run)

    def ok(self, tool: str, args: dict[str, Any] | None = None) -> Any:
        error, text = self.call(tool, args)
        assert not error, text
        return json.loads(text)

    def err(self, tool: str, args: dict[str, Any] | None = None) -> str:
        error, text = self.call(tool, args)
        assert error, text
        return text.removeprefix(f"Error executing tool {tool}: ")

    def list_tools(self) -> list[Any]:
        from mcp import Client

        async def run() -> list[Any]:
            async with Client(self.server) as client:
                return (await client.list_tools()).tools

        return anyio.run(run)


@pytest.fixture
def gh() -> Session:
    return Session()


def test_tools_listed_and_hidden_harness_tools(gh):
    names = [t.name for t in gh.list_tools()]
    assert tuple(n for n in names if n not in HIDDEN_TOOLS) == TOOLS["repository"] == repository.TOOLS
    assert (
        set(names) - set(TOOLS["repository"])
        == set(HIDDEN_TOOLS)
        == {"egi_snapshot_state", "egi_reset_state", "delete_repository"}
    )
    schema = {t.name: t.input_schema for t in gh.list_tools()}
    assert sorted(schema["create_or_update_file"]["required"]) == [
        "branch",
        "content",
        "message",
        "owner",
        "path",
        "repo",
    ]
    assert sorted(schema["get_pull_request"]["required"]) == ["owner", "pullNumber", "repo"]
    assert set(schema["list_issues"]["properties"]) == {
        "owner",
        "repo",
        "state",
        "labels",
        "sort",
        "direction",
        "since",
        "page",
        "perPage",
    }


def test_snapshot_reset_snapshot_is_the_seeded_base(gh):
    base = gh.ok("egi_snapshot_state")
    assert state_view(SEED, base) == build_world(SEED) and state_view(SEED, base)["account"] == ACCOUNT
    gh.ok("create_repository", {"name": "tmp", "autoInit": True})
    gh.ok("fork_repository", {"owner": "salesforce", "repo": "BLIP"})
    changed = state_view(SEED, gh.ok("egi_snapshot_state"))
    assert {"egi-agent/tmp", "egi-agent/BLIP"} <= set(changed["repos"]) and changed["clock"] == 3
    assert gh.ok("egi_reset_state") == {"reset": True, "repositories": len(build_world(SEED)["repos"])}
    assert gh.ok("egi_snapshot_state") == base


def test_file_shas_are_git_blob_ids_and_updates_need_the_current_one(gh):
    assert blob_sha("hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object` of "hello\n"
    gh.ok("create_repository", {"name": "notes", "autoInit": True, "description": "Mine"})
    readme = gh.ok("get_file_contents", {"owner": ACCOUNT, "repo": "notes", "path": "README.md"})
    assert readme["content"] == "# notes\n\nMine\n" and readme["sha"] == blob_sha(readme["content"])
    write = {
        "owner": ACCOUNT,
        "repo": "notes",
        "path": "README.md",
        "content": "# Notes\n",
        "message": "m",
        "branch": "main",
    }
    assert gh.err("create_or_update_file", write).startswith(
        'Invalid request: "sha" wasn\'t supplied: README.md exists'
    )
    assert gh.err("create_or_update_file", {**write, "sha": "abc"}) == (
        f"README.md does not match abc: the file's current sha on 'main' is {readme['sha']}"
    )
    done = gh.ok("create_or_update_file", {**write, "sha": readme["sha"]})
    assert done["content"]["sha"] == blob_sha("# Notes\n") and done["commit"]["commit"]["message"] == "m"
    listing = gh.ok("get_file_contents", {"owner": ACCOUNT, "repo": "notes", "path": "/"})
    assert [(e["type"], e["path"]) for e in listing] == [("file", "README.md")]
    assert [c["commit"]["message"] for c in gh.ok("list_commits", {"owner": ACCOUNT, "repo": "notes"})] == [
        "m",
        "Initial commit",
    ]


def test_model_mistakes_are_error_results(gh):
    assert gh.err("list_branches", {"owner": "nobody", "repo": "x"}) == (
        "Not Found: repository nobody/x does not exist (check the owner and name)"
    )
    gh.ok("create_repository", {"name": "empty"})
    files = [{"path": "a.txt", "content": "a"}]
    assert gh.err(
        "push_files", {"owner": ACCOUNT, "repo": "empty", "branch": "main", "files": files, "message": "m"}
    ).startswith("Git Repository is empty: create a first file")
    assert gh.err("create_branch", {"owner": ACCOUNT, "repo": "empty", "branch": "dev"}) == (
        "Git Repository is empty: egi-agent/empty has no branch yet"
    )
    # the first file of an empty repository creates its branch, which becomes the default
    gh.ok(
        "create_or_update_file",
        {
            "owner": ACCOUNT,
            "repo": "empty",
            "path": "a.txt",
            "content": "a",
            "message": "m",
            "branch": "trunk",
        },
    )
    assert (
        gh.ok("search_repositories", {"query": "repo:egi-agent/empty"})["items"][0]["default_branch"]
        == "trunk"
    )
    assert gh.err("create_branch", {"owner": ACCOUNT, "repo": "empty", "branch": "trunk"}) == (
        "Reference already exists: branch 'trunk' exists in egi-agent/empty"
    )
    assert gh.err(
        "create_branch", {"owner": ACCOUNT, "repo": "empty", "branch": "x", "from_branch": "dev"}
    ) == ("Branch not found: 'dev' in egi-agent/empty (branches: trunk)")
    assert gh.err("create_repository", {"name": "empty"}) == (
        "Repository creation failed: name already exists on this account (egi-agent/empty)"
    )
    assert gh.err("create_repository", {"name": "bad name"}) == (
        "name 'bad name' is not a valid repository name (letters, digits, '.', '-', '_')"
    )
    assert gh.err(
        "push_files",
        {"owner": "salesforce", "repo": "BLIP", "branch": "main", "files": files, "message": "m"},
    ) == ("Permission denied: egi-agent has no push access to salesforce/BLIP (fork it to change it)")
    assert (
        gh.err(
            "create_pull_request",
            {"owner": ACCOUNT, "repo": "empty", "title": "t", "head": "trunk", "base": "trunk"},
        )
        == "head and base are the same branch ('trunk')"
    )
    gh.ok("create_branch", {"owner": ACCOUNT, "repo": "empty", "branch": "dev"})
    assert gh.err(
        "create_pull_request",
        {"owner": ACCOUNT, "repo": "empty", "title": "t", "head": "dev", "base": "trunk"},
    ) == ("No commits between trunk and dev: push a change to 'dev' first")
    assert gh.err("get_issue", {"owner": ACCOUNT, "repo": "empty", "issue_number": 9}) == (
        "Not Found: issue #9 does not exist in egi-agent/empty"
    )
    assert gh.err("delete_repository", {"owner": "salesforce", "repo": "BLIP"}) == (
        "Must have admin rights to Repository: salesforce/BLIP belongs to salesforce"
    )
    assert gh.err("list_issues", {"owner": "salesforce", "repo": "BLIP", "perPage": 500}) == (
        "perPage must be between 1 and 100, got 500"
    )


def test_search_and_issue_listing_follow_githubs_rules(gh):
    world = build_world(SEED)
    found = gh.ok("search_repositories", {"query": "user:Google generative-ai in:name", "perPage": 2})
    assert found["total_count"] == 5 and len(found["items"]) == 2
    assert all(i["full_name"].startswith("google/generative-ai-") for i in found["items"])
    gh.ok("fork_repository", {"owner": "google", "repo": "generative-ai-go"})
    assert (
        gh.ok("search_repositories", {"query": "generative-ai-go in:name"})["total_count"] == 1
    )  # forks left out
    with_forks = gh.ok("search_repositories", {"query": "generative-ai-go in:name fork:true"})
    assert sorted(i["full_name"] for i in with_forks["items"]) == [
        "egi-agent/generative-ai-go",
        "google/generative-ai-go",
    ]
    issues = world["repos"]["salesforce/BLIP"]["issues"]
    open_new = sorted(
        (i["number"] for i in issues if i["state"] == "open" and "New Features" in i["labels"]), reverse=True
    )
    listed = gh.ok(
        "list_issues", {"owner": "salesforce", "repo": "BLIP", "labels": ["New Features"], "perPage": 100}
    )
    assert [i["number"] for i in listed] == open_new
    closed = gh.ok("list_issues", {"owner": "salesforce", "repo": "blip", "state": "closed", "perPage": 100})
    assert len(closed) == sum(i["state"] == "closed" for i in issues)
    code = gh.ok("search_code", {"query": "vllm filename:ariaui.py"})
    assert [(i["repository"]["full_name"], i["path"]) for i in code["items"]] == [
        ("likaixin2000/ScreenSpot-Pro-GUI-Grounding", "models/ariaui.py")
    ]
    hits = gh.ok("search_issues", {"query": 'repo:salesforce/BLIP is:issue is:open label:"New Features"'})
    assert hits["total_count"] == len(open_new)


def test_issue_pull_request_and_fork_lifecycle(gh):
    gh.ok("fork_repository", {"owner": "meta-llama", "repo": "llama"})
    fork = gh.ok(
        "fork_repository", {"owner": "meta-llama", "repo": "llama"}
    )  # forking again returns the fork
    assert (
        fork["full_name"] == "egi-agent/llama"
        and fork["fork"]
        and fork["parent"]["full_name"] == "meta-llama/llama"
    )
    assert fork["open_issues_count"] == 0  # issues are not copied
    gh.ok("create_branch", {"owner": ACCOUNT, "repo": "llama", "branch": "fix"})
    gh.ok(
        "push_files",
        {
            "owner": ACCOUNT,
            "repo": "llama",
            "branch": "fix",
            "message": "Fix",
            "files": [{"path": "NOTES.md", "content": "n\n"}, {"path": "setup.py", "content": "s\n"}],
        },
    )
    pr = gh.ok(
        "create_pull_request",
        {"owner": ACCOUNT, "repo": "llama", "title": "Fix", "head": "fix", "base": "main", "body": "Body"},
    )
    assert (pr["number"], pr["state"], pr["head"]["label"]) == (1, "open", "egi-agent:fix")
    upstream_pr = gh.ok(
        "create_pull_request",
        {"owner": "meta-llama", "repo": "llama", "title": "Fix", "head": "egi-agent:fix", "base": "main"},
    )
    assert upstream_pr["head"]["repo"]["full_name"] == "egi-agent/llama"
    assert [
        p["number"]
        for p in gh.ok("list_pull_requests", {"owner": ACCOUNT, "repo": "llama", "head": "egi-agent:fix"})
    ] == [1]
    issue = gh.ok(
        "create_issue", {"owner": ACCOUNT, "repo": "llama", "title": "Bug", "labels": ["bug", "new-label"]}
    )
    assert issue["number"] == 2 and [lb["name"] for lb in issue["labels"]] == ["bug", "new-label"]
    comment = gh.ok(
        "add_issue_comment", {"owner": ACCOUNT, "repo": "llama", "issue_number": 2, "body": "On it"}
    )
    assert gh.ok("get_issue_comments", {"owner": ACCOUNT, "repo": "llama", "issue_number": 2}) == [comment]
    closed = gh.ok("update_issue", {"owner": ACCOUNT, "repo": "llama", "issue_number": 2, "state": "closed"})
    assert closed["state"] == "closed" and closed["state_reason"] == "completed" and closed["comments"] == 1
    assert gh.ok("list_issues", {"owner": ACCOUNT, "repo": "llama"}) == []
    merged = gh.ok("merge_pull_request", {"owner": ACCOUNT, "repo": "llama", "pullNumber": 1})
    assert merged["merged"] is True
    assert (
        gh.ok("get_file_contents", {"owner": ACCOUNT, "repo": "llama", "path": "NOTES.md"})["content"]
        == "n\n"
    )
    assert gh.ok("get_pull_request", {"owner": ACCOUNT, "repo": "llama", "pullNumber": 1})["merged"] is True
    assert gh.err("merge_pull_request", {"owner": ACCOUNT, "repo": "llama", "pullNumber": 1}) == (
        "Pull Request is not mergeable: #1 is merged"
    )
    gh.ok(
        "delete_file",
        {"owner": ACCOUNT, "repo": "llama", "path": "NOTES.md", "message": "rm", "branch": "main"},
    )
    assert gh.err("get_file_contents", {"owner": ACCOUNT, "repo": "llama", "path": "NOTES.md"}) == (
        "Not Found: 'NOTES.md' does not exist on 'main' of egi-agent/llama"
    )
    assert gh.ok("delete_repository", {"repo": "llama"}) == {"deleted": "egi-agent/llama"}


def test_worlds_are_deterministic_and_seeded():
    assert build_world(SEED) == build_world(SEED)
    a, b = build_world(SEED), build_world(SEED + 1)
    assert set(a["repos"]) == set(b["repos"])  # the same real names...
    assert a != b  # ...with seeded content
    digest = hashlib.sha256(json.dumps(a, sort_keys=True).encode()).hexdigest()
    assert digest == hashlib.sha256(json.dumps(build_world(SEED), sort_keys=True).encode()).hexdigest()


def test_reference_calls_succeed_over_stdio_then_cleanups_and_reset():
    """The solver's calls for two generated tasks, sent to the server as a subprocess; the
    snapshot passes every evaluator; the task's cleanups and a reset restore the base."""
    from pytest_egi.mcp.client import McpServer
    from suites.mcp_universe.data.domains import repository_management as rm
    from suites.mcp_universe.env.cleanups import run_cleanups
    from suites.mcp_universe.scorer.evaluator import EvalContext, evaluate, render

    tasks = rm.generate_tasks(SEED, 7)
    server = McpServer(server_spec("repository", SEED, timeout_s=30, name="github"))
    try:
        base = json.loads(server.call_tool("egi_snapshot_state").text)
        assert state_view(SEED, base) == build_world(SEED)
        for task in (tasks[0], tasks[3], tasks[6]):  # set-up with a PR, issue automation, fewest-issues fork
            traced = []
            for call in task["reference"]["calls"]:
                result = server.call_tool(call["tool"], call["arguments"])
                assert not result.is_error, (call, result.text)
                traced.append(
                    {
                        "server": "github",
                        "name": call["tool"],
                        "arguments": call["arguments"],
                        "result": result,
                    }
                )
            state = json.loads(server.call_tool("egi_snapshot_state").text)
            ctx = EvalContext(seed=SEED, state={"github": state}, env=rm.ENV)
            evaluators = render(task["evaluators"], rm.ENV)
            assert all(
                evaluate(e, task["reference"]["answer"], ctx, i).passed for i, e in enumerate(evaluators)
            )
            outcomes = run_cleanups(task["cleanups"], traced, lambda s, t, a: server.call_tool(t, a))
            assert outcomes and all(o.ok for o in outcomes)
            after = json.loads(server.call_tool("egi_snapshot_state").text)
            assert set(state_view(SEED, after)["repos"]) == set(build_world(SEED)["repos"])
            assert not server.call_tool("egi_reset_state").is_error
            assert json.loads(server.call_tool("egi_snapshot_state").text) == base
    finally:
        server.close()
