"""``github.*`` ops of MCP-Universe's repository_management domain.

Every op reads the repository server's state snapshot taken when the agent finished,
``ctx.state["github"]``, never a live server, so scoring is pure and a rescore reproduces it.
The snapshot is a delta against the seeded base; every op reads the whole state it describes,
:func:`~suites._common.mcp_servers.repository.state_view` ``(ctx.seed, snapshot)`` (shapes:
:mod:`suites._common.mcp_servers.repository`). The answer text is not read (upstream's
tasks use ``func: raw`` and judge the repositories the agent left behind). A missing snapshot is
a harness fault (``RuntimeError``: the item errors, never a failed evaluator).

Upstream semantics are kept (upstream ``mcpuniverse/evaluator/github/functions.py``), with
the lookups its helpers make through the GitHub server done on the snapshot with the same
rules (:func:`~suites._common.mcp_servers.repository.search_repos` for
``search_repositories``; ``list_issues`` defaults to open issues; ``list_pull_requests`` to
open pull requests). Names are compared case-insensitively, as GitHub does. Upstream defects
fixed here are listed in each op's docstring under "Deviation".
"""

from __future__ import annotations

import csv
import io
import json
import shlex
from typing import Any

from suites._common.mcp_servers.repository import (
    file_at,
    find_repo,
    list_repo_issues,
    search_repos,
    state_view,
)
from suites.mcp_universe.scorer.evaluator import EvalContext, EvaluatorSpecError, domain_op

__all__ = ["fewest_issues_repo", "ground_truth_issue_counts", "repository_named"]


def _state(ctx: EvalContext) -> dict[str, Any]:
    """The whole repository state the trial left (:func:`state_view` of the snapshot).

    Raises:
        RuntimeError: no snapshot, or one that does not fit the task's seed (a harness fault:
            the item errors, never a failed evaluator).
    """
    snapshot = ctx.state.get("github") if ctx.state else None
    if not isinstance(snapshot, dict) or not ({"repos", "format"} & set(snapshot)):
        raise RuntimeError(
            "github.* ops need the repository server's state snapshot in ctx.state['github'] "
            "(take it with egi_snapshot_state after the trial, before cleanups)"
        )
    try:
        return state_view(ctx.seed, snapshot)
    except ValueError as exc:
        raise RuntimeError(f"github.* ops cannot read the repository state snapshot: {exc}") from None


def _args(op_args: Any, *keys: str) -> dict[str, Any]:
    if not isinstance(op_args, dict):
        raise EvaluatorSpecError(f"op_args must be an object with {', '.join(keys)}, got {op_args!r}")
    missing = [k for k in keys if k not in op_args]
    if missing:
        raise EvaluatorSpecError(f"op_args lacks {', '.join(missing)} (has {', '.join(op_args)})")
    return op_args


def _where(owner: str, repo: str, branch: Any, path: str) -> str:
    return f"{owner}/{repo}/{branch or '<default branch>'}/{path}"


def repository_named(query: str) -> str:
    """The ``owner/name`` a ``check_repository`` query designates: its ``repo:`` qualifier
    (``"repo:egi-agent/Kimi-VL fork:true"``), else the query itself (``"egi-agent/x"``)."""
    try:
        terms = shlex.split(query)
    except ValueError:
        terms = query.split()
    for term in terms:
        if term.lower().startswith("repo:"):
            return term[5:]
    return query.strip()


@domain_op("github.check_repository", kind="dynamic")
def check_repository(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """The repository named by the query ``op_args`` exists: a repository search for the
    query (``search_repositories``) lists it.

    Deviation: upstream compares the whole query string with the results' full names, so a
    query with qualifiers (``"repo:egi-agent/Kimi-VL fork:true"``, the fork tasks) can never
    pass; we compare the repository the query names (:func:`repository_named`), and compare
    names case-insensitively (GitHub's rule).
    """
    if not isinstance(op_args, str) or not op_args.strip():
        raise EvaluatorSpecError(f"github.check_repository needs a search query as op_args, got {op_args!r}")
    target = repository_named(op_args)
    found = {d["full_name"].lower() for d in search_repos(_state(ctx), op_args)}
    if target.lower() in found:
        return True, ""
    return False, f"the repository doesn't exist: {target} (search {op_args!r} does not list it)"


@domain_op("github.check_branches_exist", kind="dynamic")
def check_branches_exist(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """Every branch in ``op_args.branches`` exists in ``owner/repo`` (``path`` is unused, as
    upstream)."""
    a = _args(op_args, "owner", "repo", "branches")
    data = find_repo(_state(ctx), a["owner"], a["repo"])
    if data is None:
        return False, f"the branches don't exist: repository {a['owner']}/{a['repo']} not found"
    for branch in a["branches"]:
        if branch not in data["branches"]:
            return False, f"the branch {branch} doesn't exist in {a['owner']}/{a['repo']}"
    return True, ""


def _expected_text(state: dict[str, Any], value: Any) -> tuple[str | None, str]:
    """The expected file text of a ``value`` (literal text, or a reference
    ``{owner, repo, path, branch?}`` to another repository's file) and a description of it."""
    if isinstance(value, str):
        return value, "the given text"
    if isinstance(value, dict):
        ref = _args(value, "owner", "repo", "path")
        where = _where(ref["owner"], ref["repo"], ref.get("branch"), ref["path"])
        return file_at(state, ref["owner"], ref["repo"], ref["path"], ref.get("branch")), where
    raise EvaluatorSpecError(f"value must be file text or {{owner, repo, path, branch}}, got {value!r}")


@domain_op("github.check_file_content", kind="dynamic")
def check_file_content(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """The file ``op_args`` names (``owner, repo, path, branch``) has the expected text, both
    stripped of surrounding whitespace: ``value`` itself, or the text of the file ``value``
    refers to (``{owner, repo, path, branch}``: a copy of another repository's file).

    As upstream, an expected text that is empty or cannot be read fails ("the expected file
    content is not found"). Deviation: upstream crashes on a reference to a missing file
    (``None.strip()``); we fail with that reason.
    """
    a = _args(op_args, "owner", "repo", "path")
    state = _state(ctx)
    where = _where(a["owner"], a["repo"], a.get("branch"), a["path"])
    actual = file_at(state, a["owner"], a["repo"], a["path"], a.get("branch"))
    expected, source = _expected_text(state, value)
    if actual is None:
        return False, f"the file content is not found: {where} does not exist"
    if not expected:
        return False, f"the expected file content is not found ({source})"
    if expected.strip() != actual.strip():
        return False, f"the file content is incorrect! {where} differs from {source}"
    return True, ""


@domain_op("github.check_file_not_exist", kind="dynamic")
def check_file_not_exist(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """The file ``op_args`` names does not exist (a missing repository or branch counts as
    missing, as upstream).

    Deviation: upstream treats an empty file as missing (``if resp``); an empty file exists.
    """
    a = _args(op_args, "owner", "repo", "path")
    text = file_at(_state(ctx), a["owner"], a["repo"], a["path"], a.get("branch"))
    if text is not None:
        return False, f"the file exists! {_where(a['owner'], a['repo'], a.get('branch'), a['path'])}"
    return True, ""


def _head_matches(pr: dict[str, Any], head: str) -> bool:
    user, _, ref = str(head).rpartition(":")
    if pr["head"]["ref"] != ref:
        return False
    return not user or pr["head"]["repo"].split("/", 1)[0].lower() == user.lower()


@domain_op("github.check_pull_request", kind="dynamic")
def check_pull_request(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """An open pull request from ``head`` into ``base`` of ``owner/repo`` exists and one of them
    has the expected ``title`` and ``body`` (each compared stripped of surrounding whitespace).

    Deviation: upstream reads ``title``/``body`` from ``op_args`` while every task puts them in
    ``value``, so it never checks them (any pull request passes); we read them from ``value``
    (and from ``op_args`` when a task puts them there).
    """
    a = _args(op_args, "owner", "repo", "base", "head")
    data = find_repo(_state(ctx), a["owner"], a["repo"])
    expect = {
        k: v
        for src in (value if isinstance(value, dict) else {}, a)
        for k, v in src.items()
        if k in ("title", "body")
    }
    prs = (
        []
        if data is None
        else [
            p
            for p in data["pulls"]
            if p["state"] == "open" and p["base"]["ref"] == a["base"] and _head_matches(p, a["head"])
        ]
    )
    if not prs:
        return (
            False,
            f"the PR doesn't exist: no open pull request from {a['head']} into {a['base']} "
            f"of {a['owner']}/{a['repo']}",
        )
    for pr in prs:
        if all(str(pr.get(k) or "").strip() == str(v or "").strip() for k, v in expect.items()):
            return True, ""
    got = [{"title": p["title"], "body": p["body"]} for p in prs]
    return False, f"the PR content is incorrect! expected {expect!r}, found {got!r}"


def ground_truth_issue_counts(
    state: dict[str, Any], owner: str, name: str, issue_state: str | None, labels: list[str] | None
) -> dict[str, int]:
    """``{full_name: issue count}`` for every repository a search ``user:<owner> <name>
    in:name`` finds, counting issues in ``issue_state`` that carry every label in ``labels``;
    an empty ``labels`` list counts the issues with no label at all (see
    :func:`check_file_content_and_issue_count`)."""
    out = {}
    for data in search_repos(state, f"user:{owner} {name} in:name"):
        issues = list_repo_issues(state, data["owner"], data["name"], issue_state, labels or None) or []
        if labels is not None and len(labels) == 0:
            issues = [i for i in issues if not i["labels"]]
        out[data["full_name"]] = len(issues)
    return out


def _report_counts(text: str, a: dict[str, Any]) -> dict[str, Any]:
    kind = a.get("file_type")
    if kind == "csv":
        columns = a.get("csv_columns") or []
        if len(columns) != 2:
            raise EvaluatorSpecError(f"csv_columns must name 2 columns, got {columns!r}")
        out = {}
        for row in csv.DictReader(io.StringIO(text)):
            if columns[0] not in row or columns[1] not in row:
                raise ValueError(
                    f"the CSV lacks the column {columns[0]!r} or {columns[1]!r} (has {list(row)})"
                )
            out[row[columns[0]]] = int(row[columns[1]])
        return out
    if kind == "json":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"the JSON report is {type(data).__name__}, not an object of repository: count")
        return data
    raise EvaluatorSpecError(f"file_type must be 'csv' or 'json', got {kind!r}")


@domain_op("github.check_file_content_and_issue_count", kind="dynamic")
def check_file_content_and_issue_count(
    leaf: Any, value: Any, op_args: Any, ctx: EvalContext
) -> tuple[bool, str]:
    """A report file (CSV with ``csv_columns`` [name, count], or a JSON object name → count) in
    ``owner/repo`` equals the issue counts of the repositories a search ``user:<search_repo_owner>
    <search_repo_name> in:name`` finds (issues in ``issue_state`` carrying every label of
    ``issue_labels``): the same repositories, the same counts.

    Deviations: (1) upstream passes an empty ``issue_labels`` to ``list_issues`` as "no
    filter", so the task asking for "open issues that have no labels" is scored against all
    open issues; an empty list counts unlabeled issues. (2) Upstream keys the truth by full
    name (``owner/name``) while the questions ask for a "repository_name"; a report key may be
    the full name or the bare name (case-insensitive). (3) A report that cannot be parsed fails
    with its reason instead of an exception.
    """
    a = _args(
        op_args,
        "owner",
        "repo",
        "path",
        "search_repo_owner",
        "search_repo_name",
        "issue_state",
        "issue_labels",
        "file_type",
    )
    state = _state(ctx)
    truth = ground_truth_issue_counts(
        state, a["search_repo_owner"], a["search_repo_name"], a["issue_state"], a["issue_labels"]
    )
    where = _where(a["owner"], a["repo"], a.get("branch"), a["path"])
    text = file_at(state, a["owner"], a["repo"], a["path"], a.get("branch"))
    if text is None:
        return False, f"the file content is not found: {where} does not exist"
    try:
        report = _report_counts(text, a)
    except (ValueError, KeyError, TypeError) as exc:
        return False, f"the report {where} cannot be read as {a['file_type']}: {exc}"
    aliases = {}
    for full in truth:
        aliases[full.lower()] = full
        aliases.setdefault(full.split("/", 1)[1].lower(), full)
    normalized = {aliases.get(str(k).lower(), k): v for k, v in report.items()}
    if normalized != truth:
        return False, (
            f"the return_repo_list is not the same as the gt_repo_list! response: {report} expected: {truth}"
        )
    return True, ""


@domain_op("github.file_content_include", kind="dynamic")
def file_content_include(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """The file ``op_args`` names exists and contains every string of ``value`` (a list of
    strings, or one string); a null ``value`` checks existence only.

    Deviation: upstream iterates over ``value``, so a plain string value is checked character
    by character (any file holding those characters passes); a string is one substring here.
    """
    a = _args(op_args, "owner", "repo", "path")
    where = _where(a["owner"], a["repo"], a.get("branch"), a["path"])
    text = file_at(_state(ctx), a["owner"], a["repo"], a["path"], a.get("branch"))
    if not text:
        return False, f"the file {where} doesn't exist"
    for part in [value] if isinstance(value, str) else (value or []):
        if str(part) not in text:
            return False, f"{where} doesn't include {part!r}"
    return True, ""


def fewest_issues_repo(
    state: dict[str, Any], repos: list[str], issue_state: str | None
) -> tuple[int, str] | str:
    """``(index, name)`` of the repository among ``repos`` (``owner/name``) with the fewest
    issues in ``issue_state`` (the first one on a tie, as upstream), or the reason it cannot
    be told (a repository that does not exist)."""
    best: tuple[int, str] | None = None
    fewest = float("inf")
    for i, full in enumerate(repos):
        owner, name = full.split("/", 1)
        issues = list_repo_issues(state, owner, name, issue_state)
        if issues is None:
            return f"the issues are not found: repository {full} does not exist"
        if len(issues) < fewest:
            fewest, best = len(issues), (i, name)
    return best if best is not None else "no repositories to compare"


def _fork_exists(state: dict[str, Any], owner: str, name: str) -> bool:
    query = f"repo:{owner}/{name} fork:true"
    return f"{owner}/{name}".lower() in {d["full_name"].lower() for d in search_repos(state, query)}


@domain_op("github.check_repository_with_fewest_issues", kind="dynamic")
def check_repository_with_fewest_issues(
    leaf: Any, value: Any, op_args: Any, ctx: EvalContext
) -> tuple[bool, str]:
    """``owner`` has a repository (fork or not, as upstream's ``fork:true`` search) named like
    the repository of ``repos`` with the fewest issues in ``issue_state``."""
    a = _args(op_args, "owner", "repos", "issue_state")
    state = _state(ctx)
    best = fewest_issues_repo(state, a["repos"], a["issue_state"])
    if isinstance(best, str):
        return False, best
    if not _fork_exists(state, a["owner"], best[1]):
        return (
            False,
            f"the repository doesn't exist: {a['owner']}/{best[1]} (the repository with the fewest issues)",
        )
    return True, ""


@domain_op("github.check_file_content_with_fewest_issues", kind="dynamic")
def check_file_content_with_fewest_issues(
    leaf: Any, value: Any, op_args: Any, ctx: EvalContext
) -> tuple[bool, str]:
    """As :func:`check_repository_with_fewest_issues`, and the file ``path`` on ``branch`` of
    ``owner``'s copy contains ``file_content[i]``, ``i`` the fewest repository's position in
    ``repos``."""
    a = _args(op_args, "owner", "repos", "issue_state", "path", "file_content")
    state = _state(ctx)
    best = fewest_issues_repo(state, a["repos"], a["issue_state"])
    if isinstance(best, str):
        return False, best
    index, name = best
    if not _fork_exists(state, a["owner"], name):
        return (
            False,
            f"the repository doesn't exist: {a['owner']}/{name} (the repository with the fewest issues)",
        )
    want = a["file_content"][index]
    text = file_at(state, a["owner"], name, a["path"], a.get("branch"))
    if text and want in text:
        return True, ""
    return (
        False,
        f"Content {want!r} is not found in the file {_where(a['owner'], name, a.get('branch'), a['path'])}",
    )


@domain_op("github.check_number_of_issues", kind="dynamic")
def check_number_of_issues(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
    """The number of issues of ``owner/repo`` in ``state`` (default open, GitHub's default)
    carrying every label of ``labels``, titled exactly ``title`` and with a comment whose body is
    ``comments`` (each filter only when given) equals ``value``. ``[repo owner name]`` in the
    comment stands for ``owner``. Comment bodies are compared stripped of surrounding whitespace.

    Deviation: upstream reads only ``comments`` while three tasks write ``comment``, so their
    comment is never checked; ``comment`` is read as ``comments``.
    """
    a = _args(op_args, "owner", "repo")
    state = _state(ctx)
    comment = a.get("comments", a.get("comment"))
    if comment is not None:
        comment = str(comment).replace("[repo owner name]", a["owner"]).strip()
    issues = list_repo_issues(state, a["owner"], a["repo"], a.get("state"), a.get("labels"))
    if issues is None:
        return False, f"the issues are not found: repository {a['owner']}/{a['repo']} does not exist"
    title = a.get("title")
    chosen = [
        i
        for i in issues
        if (title is None or i["title"] == title)
        and (comment is None or any(c["body"].strip() == comment for c in i["comments"]))
    ]
    if len(chosen) == value:
        return True, ""
    return False, (
        f"the number of filtered issues [title:{title!r}, labels:{a.get('labels')}, "
        f"state:{a.get('state') or 'open'}, comment:{comment!r}] is wrong: response {len(chosen)}, "
        f"expected {value}"
    )
