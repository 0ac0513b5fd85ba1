"""Repository: an in-memory GitHub playing upstream MCP-Universe's ``github`` server
(``ghcr.io/github/github-mcp-server``), with its tool names, parameters and (trimmed) REST
result shapes.

Tools (upstream names and parameters):

- account and search: ``get_me()``, ``search_repositories(query, page?, perPage?)``,
  ``search_code(query, ...)``, ``search_issues(query, ...)``;
- repositories: ``create_repository(name, description?, private?, autoInit?)``,
  ``fork_repository(owner, repo, organization?)``, ``create_branch(owner, repo, branch,
  from_branch?)``, ``list_branches``, ``list_commits``;
- files: ``get_file_contents(owner, repo, path?, ref?, sha?)``,
  ``create_or_update_file(owner, repo, path, content, message, branch, sha?)``,
  ``push_files(owner, repo, branch, files[{path, content}], message)``,
  ``delete_file(owner, repo, path, message, branch)``;
- issues: ``create_issue``, ``get_issue``, ``list_issues``, ``update_issue``,
  ``add_issue_comment``, ``get_issue_comments``;
- pull requests: ``create_pull_request``, ``get_pull_request(owner, repo, pullNumber)``,
  ``list_pull_requests``, ``merge_pull_request``.

The harness's own tools (never listed to the model, see
:data:`suites.mcp_universe.env.servers.HIDDEN_TOOLS`): ``egi_snapshot_state()`` returns what the
trial changed, a delta against the seeded base (shape below; :func:`state_view` rebuilds the
whole state from it), ``egi_reset_state()`` restores the seeded base, and
``delete_repository(repo, owner?)`` is upstream's cleanup function (owner defaults to the
account).

World. The authenticated account is :data:`ACCOUNT` (``egi-agent``, what the task template
variable ``GITHUB_PERSONAL_ACCOUNT_NAME`` is rendered with). Public repositories are keyed by
the real ``owner/name`` an upstream repository_management task names (``OSU-NLP-Group/
TravelPlanner``, ``google/generative-ai-*``, ``salesforce/BLIP`` ...) plus a few of our own; their
files, issues and dates are our own content, generated from the seed. Names are looked up
case-insensitively, as on GitHub. Time is a logical clock: seeded data predates "today"
(2025-06-05); every write the agent makes is one second later than the previous one.

State shape (:func:`build_world` returns the seeded base; :func:`state_view` the state a
snapshot describes)::

    {"account": "egi-agent", "clock": int, "next_id": int,
     "repos": {"<owner>/<name>": {
        "id", "owner", "name", "full_name", "description", "private", "fork",
        "parent": "<owner>/<name>" | null, "default_branch", "created_at", "updated_at",
        "language", "topics": [str], "stargazers_count", "forks_count", "labels": [str], "next_number": int,
        "branches": {"<branch>": {"files": {"<path>": "<text>"},
                                  "commits": [{"sha", "message", "author", "date"}]}},  # oldest first
        "issues": [{"number", "title", "body", "state", "state_reason", "labels": [str],
                    "user", "created_at", "updated_at", "closed_at",
                    "comments": [{"id", "body", "user", "created_at"}]}],
        "pulls": [{"number", "title", "body", "state", "draft", "merged", "merged_at",
                   "head": {"ref", "repo"}, "base": {"ref"}, "user", "created_at",
                   "updated_at", "closed_at", "comments": [...]}]}}}

Issue and pull-request numbers share one sequence per repository (``next_number``), as on
GitHub; ``list_issues`` returns issues only. File ``sha`` values are git blob ids of the text.

Snapshot shape (``egi_snapshot_state``, :func:`snapshot_delta`): only what differs from the
seeded base ``build_world(seed)``, so a trajectory stores a few kilobytes, not the world::

    {"format": "repository-delta/1", "seed": int,            # the base it is relative to
     "clock": int, "next_id": int,                            # the top-level fields that changed
     "created": {"<owner>/<name>": {<whole repository record>}},   # new repositories (and any
                                                                   # record stored whole)
     "forked": {"<owner>/<name>": {"from": "<base owner>/<name>",   # a fork of a base repository:
                                   "changes": {<repository changes>}}},  # changes vs that record
     "modified": {"<owner>/<name>": {<repository changes>}},  # a base repository changed in place
     "deleted": ["<owner>/<name>"],                           # base repositories gone
     "order": ["<owner>/<name>", ...]}                        # only when the repositories' order
                                                              # is not base order + new ones

Repository changes hold only the fields that differ from the reference record: a plain field
(``description``, ``updated_at``, ``labels``, ``next_number`` ...) its new value;
``"branches": {"<branch>": null (deleted) | {"files": {"<path>": "<text>" | null (deleted)},
"commits_added": [commit, ...]}}`` (a new branch is diffed against the reference's default
branch and says so with ``"copy_of": "<branch>"``; ``"commits"`` replaces the list when the
old commits are not a prefix of the new ones; files stay sorted by path, as the server keeps
them); ``"issues"`` / ``"pulls"``: ``{"<number>": <whole item> | null (removed)}`` for the
items that changed or are new, or the whole list when that is shorter or the order changed.
:func:`snapshot_delta` checks that :func:`apply_delta` rebuilds the state exactly (every
field, in order) and stores a repository whole when its changes would not.

Errors the model causes (an unknown repository, branch or issue, a branch that exists, a file
``sha`` missing or stale, an empty repository, a pull request without commits ...) are
:class:`~suites._common.mcp_servers._base.BadRequest` (an MCP error result).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import re
import shlex
import threading
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from typing_extensions import TypedDict

from suites._common.mcp_servers import TOOLS as ALL_TOOLS
from suites._common.mcp_servers._base import BadRequest, make_server, rng

__all__ = [
    "ACCOUNT",
    "TOOLS",
    "HIDDEN",
    "DELTA_FORMAT",
    "RepositoryWorld",
    "apply_delta",
    "autoinit_readme",
    "blob_sha",
    "build_server",
    "build_world",
    "file_at",
    "find_repo",
    "list_repo_issues",
    "search_repos",
    "snapshot_delta",
    "state_view",
]

ACCOUNT = "egi-agent"
"""The authenticated account (the value of ``GITHUB_PERSONAL_ACCOUNT_NAME``)."""

TOOLS: tuple[str, ...] = ALL_TOOLS["repository"]
"""The model-visible tools, in listing order (listed once, in the package's :data:`TOOLS`)."""

HIDDEN: tuple[str, ...] = ("egi_snapshot_state", "egi_reset_state", "delete_repository")
"""The harness's own tools (state snapshot, reset, upstream's cleanup)."""

_EPOCH = datetime(2025, 6, 5, 12, 0, 0, tzinfo=UTC)
_WEB = "https://github.com"
_API = "https://api.github.com"
_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")

State = dict[str, Any]


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------


def blob_sha(text: str) -> str:
    """The git blob id of a file's text (what GitHub reports as the file's ``sha``)."""
    data = text.encode("utf-8")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def autoinit_readme(name: str, description: str | None = None) -> str:
    """The README.md ``create_repository(autoInit=true)`` writes (GitHub's: the name as a
    heading, then the description)."""
    return f"# {name}\n" + (f"\n{description}\n" if description else "")


def _iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def _now(state: State) -> str:
    state["clock"] += 1
    return _iso(_EPOCH + timedelta(seconds=state["clock"]))


def _new_id(state: State) -> int:
    state["next_id"] += 1
    return state["next_id"]


def _commit_sha(
    full_name: str, branch: str, parent: str | None, message: str, files: dict[str, str], tick: Any
) -> str:
    digest = json.dumps(
        [full_name, branch, parent, message, tick, sorted((p, blob_sha(t)) for p, t in files.items())]
    )
    return hashlib.sha1(digest.encode("utf-8")).hexdigest()


def _page(items: list[Any], page: int | None, per_page: int | None) -> list[Any]:
    page = 1 if page is None else page
    per_page = 30 if per_page is None else per_page
    if page < 1:
        raise BadRequest(f"page must be at least 1, got {page}")
    if not 1 <= per_page <= 100:
        raise BadRequest(f"perPage must be between 1 and 100, got {per_page}")
    return items[(page - 1) * per_page : page * per_page]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Lookups shared by the tools and the evaluator ops (pure functions of a state dict)
# ---------------------------------------------------------------------------------------------


def find_repo(state: State, owner: str, repo: str) -> dict[str, Any] | None:
    """The repository ``owner/repo`` (case-insensitive, as on GitHub), or None."""
    key = f"{owner}/{repo}".lower()
    for full_name, data in state["repos"].items():
        if full_name.lower() == key:
            return data
    return None


def _repo(state: State, owner: str, repo: str) -> dict[str, Any]:
    data = find_repo(state, str(owner), str(repo))
    if data is None:
        raise BadRequest(f"Not Found: repository {owner}/{repo} does not exist (check the owner and name)")
    return data


def _writable(state: State, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` when the account may push to it (it owns it), else :class:`BadRequest`."""
    if data["owner"].lower() != state["account"].lower():
        raise BadRequest(
            f"Permission denied: {state['account']} has no push access to {data['full_name']} "
            "(fork it to change it)"
        )
    return data


def _resolve_ref(data: dict[str, Any], ref: str | None) -> str | None:
    """The branch name ``ref`` designates (a branch, ``refs/heads/<b>`` or a head commit sha)."""
    if not data["branches"]:
        return None
    if not ref:
        return data["default_branch"]
    ref = ref.removeprefix("refs/heads/")
    for name in data["branches"]:
        if name == ref:
            return name
    for name, branch in data["branches"].items():
        if branch["commits"] and branch["commits"][-1]["sha"] == ref:
            return name
    return None


def file_at(state: State, owner: str, repo: str, path: str, branch: str | None = None) -> str | None:
    """The text of ``path`` on ``branch`` (default branch when None) of ``owner/repo``, or None
    when the repository, branch or file does not exist."""
    data = find_repo(state, owner, repo)
    if data is None:
        return None
    name = _resolve_ref(data, branch)
    if name is None:
        return None
    return data["branches"][name]["files"].get(str(path).strip("/"))


def _branch(data: dict[str, Any], branch: str) -> dict[str, Any]:
    name = _resolve_ref(data, branch)
    if name is None:
        if not data["branches"]:
            raise BadRequest(f"Git Repository is empty: {data['full_name']} has no branch yet")
        raise BadRequest(
            f"Branch not found: {branch!r} in {data['full_name']} "
            f"(branches: {', '.join(sorted(data['branches']))})"
        )
    return data["branches"][name]


def list_repo_issues(
    state: State,
    owner: str,
    repo: str,
    issue_state: str | None = "open",
    labels: list[str] | None = None,
) -> list[dict[str, Any]] | None:
    """The issues (never pull requests) of ``owner/repo`` in ``issue_state`` (``open``,
    ``closed``, ``all``; None = ``open``, GitHub's default) carrying every label in ``labels``,
    newest first; None when the repository does not exist."""
    data = find_repo(state, owner, repo)
    if data is None:
        return None
    want = issue_state or "open"
    out = [i for i in data["issues"] if want == "all" or i["state"] == want]
    if labels:
        out = [i for i in out if all(lb in i["labels"] for lb in labels)]
    return sorted(out, key=lambda i: -i["number"])


_QUALIFIER = re.compile(r"^([a-z]+):(.+)$", re.IGNORECASE)


def _terms(query: str) -> list[str]:
    try:
        return shlex.split(query)
    except ValueError:
        return query.split()


def search_repos(state: State, query: str) -> list[dict[str, Any]]:
    """Repositories matching a GitHub repository-search query, most stars first.

    Qualifiers: ``user:``/``org:`` (owner), ``repo:owner/name``, ``in:name|description|topics|
    readme``, ``fork:true`` (include forks) / ``fork:only``, ``language:``, ``is:public|private``.
    Other words must each occur (case-insensitive substring) in the fields ``in:`` names
    (default: name, full name, description and topics). Forks are left out unless
    ``fork:true`` or ``fork:only``.
    """
    owners: list[str] = []
    repos: list[str] = []
    fields: list[str] = []
    words: list[str] = []
    fork = "false"
    language = None
    visibility = None
    for term in _terms(query):
        m = _QUALIFIER.match(term)
        key, val = (m.group(1).lower(), m.group(2)) if m else ("", term)
        if key in ("user", "org", "owner"):
            owners.append(val.lower())
        elif key == "repo":
            repos.append(val.lower())
        elif key == "in":
            fields.extend(f.strip().lower() for f in val.split(","))
        elif key == "fork":
            fork = val.lower()
        elif key == "language":
            language = val.lower()
        elif key == "is":
            visibility = val.lower()
        else:
            words.append(term.lower())
    out = []
    for data in state["repos"].values():
        if owners and data["owner"].lower() not in owners:
            continue
        if repos and data["full_name"].lower() not in repos:
            continue
        if data["fork"] and fork not in ("true", "only"):
            continue
        if fork == "only" and not data["fork"]:
            continue
        if language and (data.get("language") or "").lower() != language:
            continue
        if visibility in ("public", "private") and data["private"] != (visibility == "private"):
            continue
        haystack = []
        for f in fields or ["name", "description", "topics"]:
            if f == "name":
                haystack += [data["name"], data["full_name"]]
            elif f == "description":
                haystack.append(data.get("description") or "")
            elif f == "topics":
                haystack += data.get("topics") or []
            elif f == "readme":
                main = data["branches"].get(data["default_branch"])
                haystack.append((main or {"files": {}})["files"].get("README.md", ""))
        text = "\n".join(haystack).lower()
        if all(w in text for w in words):
            out.append(data)
    return sorted(out, key=lambda d: (-d["stargazers_count"], d["full_name"].lower()))


# ---------------------------------------------------------------------------------------------
# Result shapes (trimmed GitHub REST objects)
# ---------------------------------------------------------------------------------------------


def _user(login: str) -> dict[str, Any]:
    return {"login": login, "type": "User", "html_url": f"{_WEB}/{login}"}


def _repo_json(data: dict[str, Any]) -> dict[str, Any]:
    open_items = sum(i["state"] == "open" for i in data["issues"]) + sum(
        p["state"] == "open" for p in data["pulls"]
    )
    head = data["branches"].get(data["default_branch"])
    out = {
        "id": data["id"],
        "name": data["name"],
        "full_name": data["full_name"],
        "owner": _user(data["owner"]),
        "private": data["private"],
        "html_url": f"{_WEB}/{data['full_name']}",
        "description": data["description"],
        "fork": data["fork"],
        "url": f"{_API}/repos/{data['full_name']}",
        "created_at": data["created_at"],
        "updated_at": data["updated_at"],
        "pushed_at": head["commits"][-1]["date"] if head and head["commits"] else data["created_at"],
        "stargazers_count": data["stargazers_count"],
        "watchers_count": data["stargazers_count"],
        "forks_count": data["forks_count"],
        "open_issues_count": open_items,
        "language": data["language"],
        "topics": list(data["topics"]),
        "default_branch": data["default_branch"],
        "visibility": "private" if data["private"] else "public",
    }
    if data["fork"]:
        out["parent"] = {"full_name": data["parent"], "html_url": f"{_WEB}/{data['parent']}"}
    return out


def _issue_json(data: dict[str, Any], issue: dict[str, Any], pull: bool = False) -> dict[str, Any]:
    full = data["full_name"]
    out = {
        "id": issue.get("id", issue["number"]),
        "number": issue["number"],
        "title": issue["title"],
        "body": issue["body"],
        "state": issue["state"],
        "state_reason": issue.get("state_reason"),
        "labels": [{"name": lb} for lb in issue["labels"]] if not pull else [],
        "user": _user(issue["user"]),
        "comments": len(issue.get("comments", [])),
        "created_at": issue["created_at"],
        "updated_at": issue["updated_at"],
        "closed_at": issue["closed_at"],
        "html_url": f"{_WEB}/{full}/{'pull' if pull else 'issues'}/{issue['number']}",
        "repository_url": f"{_API}/repos/{full}",
    }
    if pull:
        out["pull_request"] = {
            "html_url": f"{_WEB}/{full}/pull/{issue['number']}",
            "merged_at": issue.get("merged_at"),
        }
    return out


def _comment_json(data: dict[str, Any], number: int, comment: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": comment["id"],
        "body": comment["body"],
        "user": _user(comment["user"]),
        "created_at": comment["created_at"],
        "updated_at": comment["created_at"],
        "html_url": f"{_WEB}/{data['full_name']}/issues/{number}#issuecomment-{comment['id']}",
    }


def _head_sha(data: dict[str, Any], branch: str) -> str | None:
    b = data["branches"].get(branch)
    return b["commits"][-1]["sha"] if b and b["commits"] else None


def _pull_json(state: State, data: dict[str, Any], pr: dict[str, Any]) -> dict[str, Any]:
    head_repo = find_repo(state, *pr["head"]["repo"].split("/", 1)) or {"branches": {}}
    head_owner = pr["head"]["repo"].split("/", 1)[0]
    return {
        "id": pr["id"],
        "number": pr["number"],
        "title": pr["title"],
        "body": pr["body"],
        "state": pr["state"],
        "draft": pr["draft"],
        "merged": pr["merged"],
        "merged_at": pr["merged_at"],
        "user": _user(pr["user"]),
        "head": {
            "ref": pr["head"]["ref"],
            "label": f"{head_owner}:{pr['head']['ref']}",
            "sha": _head_sha(head_repo, pr["head"]["ref"]),
            "repo": {"full_name": pr["head"]["repo"]},
        },
        "base": {
            "ref": pr["base"]["ref"],
            "label": f"{data['owner']}:{pr['base']['ref']}",
            "sha": _head_sha(data, pr["base"]["ref"]),
            "repo": {"full_name": data["full_name"]},
        },
        "comments": len(pr.get("comments", [])),
        "created_at": pr["created_at"],
        "updated_at": pr["updated_at"],
        "closed_at": pr["closed_at"],
        "html_url": f"{_WEB}/{data['full_name']}/pull/{pr['number']}",
    }


def _commit_json(data: dict[str, Any], commit: dict[str, Any]) -> dict[str, Any]:
    return {
        "sha": commit["sha"],
        "commit": {
            "message": commit["message"],
            "author": {"name": commit["author"], "date": commit["date"]},
        },
        "author": _user(commit["author"]),
        "html_url": f"{_WEB}/{data['full_name']}/commit/{commit['sha']}",
    }


def _content_json(data: dict[str, Any], branch: str, path: str, text: str) -> dict[str, Any]:
    return {
        "type": "file",
        "name": path.rsplit("/", 1)[-1],
        "path": path,
        "sha": blob_sha(text),
        "size": len(text.encode("utf-8")),
        "html_url": f"{_WEB}/{data['full_name']}/blob/{branch}/{path}",
    }


# ---------------------------------------------------------------------------------------------
# Writes
# ---------------------------------------------------------------------------------------------


def _commit(
    state: State, data: dict[str, Any], branch: str, message: str, changes: dict[str, str | None]
) -> dict[str, Any]:
    """Apply ``changes`` (path → text, None deletes) to ``branch`` as one commit (creating the
    branch when the repository is empty)."""
    if not str(message or "").strip():
        raise BadRequest("message must be a non-empty commit message")
    b = data["branches"].get(branch)
    if b is None:
        b = data["branches"][branch] = {"files": {}, "commits": []}
        if len(data["branches"]) == 1:
            data["default_branch"] = branch
    for path, text in changes.items():
        if text is None:
            b["files"].pop(path, None)
        else:
            b["files"][path] = text
    b["files"] = dict(sorted(b["files"].items()))
    date = _now(state)
    parent = b["commits"][-1]["sha"] if b["commits"] else None
    commit = {
        "sha": _commit_sha(data["full_name"], branch, parent, message, b["files"], state["clock"]),
        "message": message,
        "author": state["account"],
        "date": date,
    }
    b["commits"].append(commit)
    data["updated_at"] = date
    return commit


def _clean_path(path: str) -> str:
    p = str(path or "").strip().strip("/")
    if not p or any(part in ("", ".", "..") for part in p.split("/")):
        raise BadRequest(f"path must be a file path such as 'docs/README.md', got {path!r}")
    return p


class FileEntry(TypedDict):
    """One file of ``push_files``."""

    path: str
    content: str


class RepositoryWorld:
    """The server's mutable state and its tools, without the MCP SDK (tests and the task
    solver run the same logic in-process).

    Every tool method takes the tool's arguments and returns its result as data (what the MCP
    tool serializes to JSON text); the model's mistakes raise :class:`BadRequest`.
    """

    def __init__(self, seed: int, account: str = ACCOUNT) -> None:
        self.seed = seed
        self.account = account
        self.state: State = build_world(seed)

    # -- harness -------------------------------------------------------------------------------

    def egi_snapshot_state(self) -> dict[str, Any]:
        """What the trial changed: the delta of the state against the seeded base (snapshot
        shape in the module docstring; :func:`state_view` rebuilds the whole state)."""
        return snapshot_delta(self.seed, self.state)

    def egi_reset_state(self) -> dict[str, Any]:
        """Restore the seeded base state."""
        self.state = build_world(self.seed)
        return {"reset": True, "repositories": len(self.state["repos"])}

    def delete_repository(self, repo: str, owner: str | None = None) -> dict[str, Any]:
        """Delete one of the account's repositories (upstream's cleanup)."""
        owner = owner or self.account
        data = _repo(self.state, owner, repo)
        if data["owner"].lower() != self.account.lower():
            raise BadRequest(
                f"Must have admin rights to Repository: {data['full_name']} belongs to {data['owner']}"
            )
        del self.state["repos"][data["full_name"]]
        return {"deleted": data["full_name"]}

    def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        """Run one tool by name (the in-process twin of an MCP ``tools/call``).

        Raises:
            BadRequest: an unknown tool, unknown arguments, or the tool's own refusal.
        """
        if tool not in TOOLS and tool not in HIDDEN:
            raise BadRequest(f"Unknown tool: {tool}")
        fn = getattr(self, tool)
        try:
            inspect.signature(fn).bind(**(arguments or {}))
        except TypeError as exc:
            raise BadRequest(f"bad arguments for {tool}: {exc}") from None
        return fn(**(arguments or {}))

    # -- account and search --------------------------------------------------------------------

    def get_me(self) -> dict[str, Any]:
        mine = [r for r in self.state["repos"].values() if r["owner"] == self.account]
        return {
            **_user(self.account),
            "id": 1000001,
            "name": "EGI Agent",
            "public_repos": sum(not r["private"] for r in mine),
            "total_private_repos": sum(r["private"] for r in mine),
            "created_at": "2024-01-15T09:00:00Z",
        }

    def search_repositories(
        self, query: str, page: int | None = None, perPage: int | None = None
    ) -> dict[str, Any]:  # noqa: N803
        if not str(query or "").strip():
            raise BadRequest("query must not be empty")
        found = search_repos(self.state, query)
        return {
            "total_count": len(found),
            "incomplete_results": False,
            "items": [_repo_json(d) for d in _page(found, page, perPage)],
        }

    def search_code(
        self,
        query: str,
        sort: str | None = None,
        order: str | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        owners, repos, paths, names, exts, words = [], [], [], [], [], []
        in_path = False
        for term in _terms(query):
            m = _QUALIFIER.match(term)
            key, val = (m.group(1).lower(), m.group(2)) if m else ("", term)
            if key in ("user", "org", "owner"):
                owners.append(val.lower())
            elif key == "repo":
                repos.append(val.lower())
            elif key == "path":
                paths.append(val.lower().strip("/"))
            elif key == "filename":
                names.append(val.lower())
            elif key == "extension":
                exts.append(val.lower().lstrip("."))
            elif key == "in":
                in_path = "path" in val.lower()
            elif key == "language":
                continue
            else:
                words.append(term.lower())
        if not (words or names or paths or exts):
            raise BadRequest("query must contain a search term (qualifiers alone do not search code)")
        items = []
        for data in sorted(self.state["repos"].values(), key=lambda d: d["full_name"].lower()):
            if data["fork"] or (owners and data["owner"].lower() not in owners):
                continue
            if repos and data["full_name"].lower() not in repos:
                continue
            b = data["branches"].get(data["default_branch"])
            for path, text in (b["files"] if b else {}).items():
                lp = path.lower()
                if paths and not any(lp.startswith(p) for p in paths):
                    continue
                if names and lp.rsplit("/", 1)[-1] not in names:
                    continue
                if exts and lp.rsplit(".", 1)[-1] not in exts:
                    continue
                hay = lp if in_path else text.lower() + "\n" + lp
                if all(w in hay for w in words):
                    items.append(
                        {
                            "name": path.rsplit("/", 1)[-1],
                            "path": path,
                            "sha": blob_sha(text),
                            "html_url": f"{_WEB}/{data['full_name']}/blob/{data['default_branch']}/{path}",
                            "repository": {
                                "full_name": data["full_name"],
                                "html_url": f"{_WEB}/{data['full_name']}",
                                "owner": _user(data["owner"]),
                                "name": data["name"],
                            },
                        }
                    )
        return {"total_count": len(items), "incomplete_results": False, "items": _page(items, page, perPage)}

    def search_issues(
        self,
        query: str,
        sort: str | None = None,
        order: str | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        owners, repos, labels, words = [], [], [], []
        kind = state = author = None
        no_label = False
        fields = ["title", "body"]
        for term in _terms(query):
            m = _QUALIFIER.match(term)
            key, val = (m.group(1).lower(), m.group(2)) if m else ("", term)
            if key in ("user", "org", "owner"):
                owners.append(val.lower())
            elif key == "repo":
                repos.append(val.lower())
            elif key == "label":
                labels.append(val)
            elif key == "no" and val.lower() == "label":
                no_label = True
            elif key in ("is", "type", "state"):
                v = val.lower()
                if v in ("issue", "pr"):
                    kind = v
                elif v in ("open", "closed"):
                    state = v
            elif key == "author":
                author = val.lower()
            elif key == "in":
                fields = [f.strip().lower() for f in val.split(",")]
            else:
                words.append(term.lower())
        found = []
        for data in self.state["repos"].values():
            if owners and data["owner"].lower() not in owners:
                continue
            if repos and data["full_name"].lower() not in repos:
                continue
            pool = ([] if kind == "pr" else [(i, False) for i in data["issues"]]) + (
                [] if kind == "issue" else [(p, True) for p in data["pulls"]]
            )
            for item, pull in pool:
                labs = [] if pull else item["labels"]
                if state and item["state"] != state or author and item["user"].lower() != author:
                    continue
                if no_label and labs or any(lb not in labs for lb in labels):
                    continue
                hay = "\n".join(
                    [
                        item["title"] if "title" in fields else "",
                        (item["body"] or "") if "body" in fields else "",
                        *([c["body"] for c in item.get("comments", [])] if "comments" in fields else []),
                    ]
                ).lower()
                if all(w in hay for w in words):
                    found.append(_issue_json(data, item, pull))
        key = {"comments": lambda x: x["comments"], "updated": lambda x: x["updated_at"]}.get(
            sort or "", lambda x: x["created_at"]
        )
        found.sort(key=key, reverse=(order or "desc") == "desc")
        return {"total_count": len(found), "incomplete_results": False, "items": _page(found, page, perPage)}

    # -- repositories --------------------------------------------------------------------------

    def create_repository(
        self,
        name: str,
        description: str | None = None,
        private: bool | None = None,
        autoInit: bool | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        name = str(name or "").strip()
        if not _NAME.match(name) or name in (".", ".."):
            raise BadRequest(f"name {name!r} is not a valid repository name (letters, digits, '.', '-', '_')")
        if find_repo(self.state, self.account, name) is not None:
            raise BadRequest(
                f"Repository creation failed: name already exists on this account ({self.account}/{name})"
            )
        now = _now(self.state)
        full = f"{self.account}/{name}"
        data = {
            "id": _new_id(self.state),
            "owner": self.account,
            "name": name,
            "full_name": full,
            "description": description or None,
            "private": bool(private),
            "fork": False,
            "parent": None,
            "default_branch": "main",
            "created_at": now,
            "updated_at": now,
            "language": None,
            "topics": [],
            "stargazers_count": 0,
            "forks_count": 0,
            "labels": list(_DEFAULT_LABELS),
            "next_number": 1,
            "branches": {},
            "issues": [],
            "pulls": [],
        }
        self.state["repos"][full] = data
        if autoInit:
            _commit(
                self.state, data, "main", "Initial commit", {"README.md": autoinit_readme(name, description)}
            )
        return _repo_json(data)

    def fork_repository(self, owner: str, repo: str, organization: str | None = None) -> dict[str, Any]:
        source = _repo(self.state, owner, repo)
        target = organization or self.account
        if target.lower() != self.account.lower():
            raise BadRequest(f"organization {target!r} not found, or {self.account} is not a member of it")
        if source["owner"].lower() == self.account.lower():
            raise BadRequest(
                f"{source['full_name']} belongs to {self.account}: it cannot be forked into its owner"
            )
        name = source["name"]
        existing = find_repo(self.state, self.account, name)
        if existing is not None and existing.get("parent") == source["full_name"]:
            return _repo_json(existing)
        k = 1
        while find_repo(self.state, self.account, name) is not None:
            name = f"{source['name']}-{k}"
            k += 1
        now = _now(self.state)
        full = f"{self.account}/{name}"
        source["forks_count"] += 1
        self.state["repos"][full] = {
            "id": _new_id(self.state),
            "owner": self.account,
            "name": name,
            "full_name": full,
            "description": source["description"],
            "private": False,
            "fork": True,
            "parent": source["full_name"],
            "default_branch": source["default_branch"],
            "created_at": now,
            "updated_at": now,
            "language": source["language"],
            "topics": list(source["topics"]),
            "stargazers_count": 0,
            "forks_count": 0,
            "labels": list(source["labels"]),
            "next_number": 1,
            "branches": copy.deepcopy(source["branches"]),
            "issues": [],
            "pulls": [],
        }
        return _repo_json(self.state["repos"][full])

    def create_branch(
        self, owner: str, repo: str, branch: str, from_branch: str | None = None
    ) -> dict[str, Any]:
        data = _writable(self.state, _repo(self.state, owner, repo))
        branch = str(branch or "").strip().removeprefix("refs/heads/")
        if not branch or not re.match(r"^[A-Za-z0-9._/-]+$", branch) or branch.endswith("/"):
            raise BadRequest(f"branch {branch!r} is not a valid branch name")
        source = _branch(data, from_branch or data["default_branch"])
        if branch in data["branches"]:
            raise BadRequest(f"Reference already exists: branch {branch!r} exists in {data['full_name']}")
        data["branches"][branch] = copy.deepcopy(source)
        return {
            "ref": f"refs/heads/{branch}",
            "object": {"sha": source["commits"][-1]["sha"], "type": "commit"},
            "url": f"{_API}/repos/{data['full_name']}/git/refs/heads/{branch}",
        }

    def list_branches(
        self, owner: str, repo: str, page: int | None = None, perPage: int | None = None
    ) -> list[dict[str, Any]]:  # noqa: N803
        data = _repo(self.state, owner, repo)
        out = [
            {
                "name": n,
                "commit": {
                    "sha": b["commits"][-1]["sha"],
                    "url": f"{_API}/repos/{data['full_name']}/commits/{b['commits'][-1]['sha']}",
                },
                "protected": False,
            }
            for n, b in sorted(data["branches"].items())
        ]
        return _page(out, page, perPage)

    def list_commits(
        self,
        owner: str,
        repo: str,
        sha: str | None = None,
        author: str | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> list[dict[str, Any]]:  # noqa: N803
        data = _repo(self.state, owner, repo)
        commits = list(_branch(data, sha or data["default_branch"])["commits"])
        if author:
            commits = [c for c in commits if c["author"].lower() == author.lower()]
        return _page([_commit_json(data, c) for c in reversed(commits)], page, perPage)

    # -- files ---------------------------------------------------------------------------------

    def get_file_contents(
        self, owner: str, repo: str, path: str = "/", ref: str | None = None, sha: str | None = None
    ) -> Any:
        data = _repo(self.state, owner, repo)
        name = _resolve_ref(data, sha or ref)
        if name is None:
            if not data["branches"]:
                raise BadRequest(f"Git Repository is empty: {data['full_name']} has no files yet")
            raise BadRequest(f"No commit found for the ref {sha or ref!r} in {data['full_name']}")
        files = data["branches"][name]["files"]
        p = str(path or "").strip().strip("/")
        if p in files:
            text = files[p]
            return {**_content_json(data, name, p, text), "encoding": "utf-8", "content": text}
        prefix = p + "/" if p else ""
        entries: dict[str, dict[str, Any]] = {}
        for fp, text in files.items():
            if not fp.startswith(prefix):
                continue
            rest = fp[len(prefix) :]
            head = rest.split("/", 1)[0]
            if "/" in rest:
                entries.setdefault(head, {"type": "dir", "name": head, "path": prefix + head})
            else:
                entries[head] = _content_json(data, name, fp, text)
        if not entries:
            raise BadRequest(f"Not Found: {p!r} does not exist on {name!r} of {data['full_name']}")
        return [entries[k] for k in sorted(entries)]

    def create_or_update_file(
        self,
        owner: str,
        repo: str,
        path: str,
        content: str,
        message: str,
        branch: str,
        sha: str | None = None,
    ) -> dict[str, Any]:
        data = _writable(self.state, _repo(self.state, owner, repo))
        p = _clean_path(path)
        if data["branches"]:
            b = _branch(data, branch)
            branch = _resolve_ref(data, branch) or branch
            old = b["files"].get(p)
            if old is not None:
                if not sha:
                    raise BadRequest(
                        f'Invalid request: "sha" wasn\'t supplied: {p} exists on {branch!r}; pass its '
                        "current sha (from get_file_contents) to update it"
                    )
                if sha != blob_sha(old):
                    raise BadRequest(
                        f"{p} does not match {sha}: the file's current sha on {branch!r} is {blob_sha(old)}"
                    )
        commit = _commit(self.state, data, branch, message, {p: str(content)})
        return {"content": _content_json(data, branch, p, str(content)), "commit": _commit_json(data, commit)}

    def push_files(
        self, owner: str, repo: str, branch: str, files: list[FileEntry], message: str
    ) -> dict[str, Any]:
        data = _writable(self.state, _repo(self.state, owner, repo))
        if not data["branches"]:
            raise BadRequest(
                f"Git Repository is empty: create a first file in {data['full_name']} with "
                "create_or_update_file (or create it with autoInit) before push_files"
            )
        _branch(data, branch)
        branch = _resolve_ref(data, branch) or branch
        if not files:
            raise BadRequest("files must list at least one {path, content}")
        changes = {}
        for f in files:
            if (
                not isinstance(f, dict)
                or not isinstance(f.get("path"), str)
                or not isinstance(f.get("content"), str)
            ):
                raise BadRequest(f"each file must be {{path, content}} strings, got {f!r}")
            changes[_clean_path(f["path"])] = f["content"]
        commit = _commit(self.state, data, branch, message, changes)
        return {
            "ref": f"refs/heads/{branch}",
            "object": {"sha": commit["sha"], "type": "commit"},
            "url": f"{_API}/repos/{data['full_name']}/git/refs/heads/{branch}",
        }

    def delete_file(self, owner: str, repo: str, path: str, message: str, branch: str) -> dict[str, Any]:
        data = _writable(self.state, _repo(self.state, owner, repo))
        b = _branch(data, branch)
        branch = _resolve_ref(data, branch) or branch
        p = _clean_path(path)
        if p not in b["files"]:
            raise BadRequest(f"Not Found: {p} does not exist on {branch!r} of {data['full_name']}")
        commit = _commit(self.state, data, branch, message, {p: None})
        return {"content": None, "commit": _commit_json(data, commit)}

    # -- issues --------------------------------------------------------------------------------

    def _item(self, data: dict[str, Any], number: int) -> tuple[dict[str, Any], bool]:
        for i in data["issues"]:
            if i["number"] == number:
                return i, False
        for p in data["pulls"]:
            if p["number"] == number:
                return p, True
        raise BadRequest(f"Not Found: issue #{number} does not exist in {data['full_name']}")

    def create_issue(
        self,
        owner: str,
        repo: str,
        title: str,
        body: str | None = None,
        assignees: list[str] | None = None,
        labels: list[str] | None = None,
        milestone: int | None = None,
    ) -> dict[str, Any]:
        data = _repo(self.state, owner, repo)
        if not str(title or "").strip():
            raise BadRequest("title must not be empty")
        labels = _labels(data, labels)
        now = _now(self.state)
        issue = {
            "id": _new_id(self.state),
            "number": data["next_number"],
            "title": title,
            "body": body,
            "state": "open",
            "state_reason": None,
            "labels": labels,
            "user": self.account,
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
            "comments": [],
        }
        data["next_number"] += 1
        data["issues"].append(issue)
        return _issue_json(data, issue)

    def get_issue(self, owner: str, repo: str, issue_number: int) -> dict[str, Any]:
        data = _repo(self.state, owner, repo)
        item, pull = self._item(data, issue_number)
        return _issue_json(data, item, pull)

    def list_issues(
        self,
        owner: str,
        repo: str,
        state: Literal["open", "closed", "all"] | None = None,
        labels: list[str] | None = None,
        sort: Literal["created", "updated", "comments"] | None = None,
        direction: Literal["asc", "desc"] | None = None,
        since: str | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> list[dict[str, Any]]:  # noqa: N803
        data = _repo(self.state, owner, repo)
        issues = list_repo_issues(self.state, owner, repo, state or "open", labels) or []
        if since:
            issues = [i for i in issues if i["updated_at"] >= since]
        key = {"comments": lambda i: len(i["comments"]), "updated": lambda i: i["updated_at"]}.get(
            sort or "", lambda i: (i["created_at"], i["number"])
        )
        issues = sorted(issues, key=key, reverse=(direction or "desc") == "desc")
        return [_issue_json(data, i) for i in _page(issues, page, perPage)]

    def update_issue(
        self,
        owner: str,
        repo: str,
        issue_number: int,
        title: str | None = None,
        body: str | None = None,
        state: Literal["open", "closed"] | None = None,
        labels: list[str] | None = None,
        assignees: list[str] | None = None,
        milestone: int | None = None,
    ) -> dict[str, Any]:
        data = _repo(self.state, owner, repo)
        item, pull = self._item(data, issue_number)
        if data["owner"].lower() != self.account.lower() and item["user"] != self.account:
            raise BadRequest(
                f"Permission denied: only the author or a maintainer of {data['full_name']} may edit "
                f"#{issue_number}"
            )
        now = _now(self.state)
        if title is not None:
            if not title.strip():
                raise BadRequest("title must not be empty")
            item["title"] = title
        if body is not None:
            item["body"] = body
        if labels is not None and not pull:
            item["labels"] = _labels(data, labels)
        if state is not None and state != item["state"]:
            if pull and item.get("merged"):
                raise BadRequest(f"pull request #{issue_number} is merged and cannot be reopened")
            item["state"] = state
            item["closed_at"] = now if state == "closed" else None
            if not pull:
                item["state_reason"] = "completed" if state == "closed" else "reopened"
        item["updated_at"] = now
        return _issue_json(data, item, pull)

    def add_issue_comment(self, owner: str, repo: str, issue_number: int, body: str) -> dict[str, Any]:
        data = _repo(self.state, owner, repo)
        item, _ = self._item(data, issue_number)
        if not str(body or "").strip():
            raise BadRequest("body must not be empty")
        now = _now(self.state)
        comment = {"id": _new_id(self.state), "body": body, "user": self.account, "created_at": now}
        item.setdefault("comments", []).append(comment)
        item["updated_at"] = now
        return _comment_json(data, issue_number, comment)

    def get_issue_comments(
        self, owner: str, repo: str, issue_number: int, page: int | None = None, perPage: int | None = None
    ) -> list[dict[str, Any]]:  # noqa: N803
        data = _repo(self.state, owner, repo)
        item, _ = self._item(data, issue_number)
        return [_comment_json(data, issue_number, c) for c in _page(item.get("comments", []), page, perPage)]

    # -- pull requests -------------------------------------------------------------------------

    def create_pull_request(
        self,
        owner: str,
        repo: str,
        title: str,
        head: str,
        base: str,
        body: str | None = None,
        draft: bool | None = None,
        maintainer_can_modify: bool | None = None,
    ) -> dict[str, Any]:
        data = _repo(self.state, owner, repo)
        if not str(title or "").strip():
            raise BadRequest("title must not be empty")
        base_b = _branch(data, base)
        base = _resolve_ref(data, base) or base
        head_repo = data
        head_ref = str(head or "")
        if ":" in head_ref:
            user, head_ref = head_ref.split(":", 1)
            if user.lower() != data["owner"].lower():
                forks = [
                    r
                    for r in self.state["repos"].values()
                    if r["owner"].lower() == user.lower() and r.get("parent") == data["full_name"]
                ]
                if not forks:
                    raise BadRequest(f"head {head!r}: {user} has no fork of {data['full_name']}")
                head_repo = forks[0]
        if head_ref not in head_repo["branches"]:
            raise BadRequest(f"head branch {head_ref!r} does not exist in {head_repo['full_name']}")
        if head_repo is data and head_ref == base:
            raise BadRequest(f"head and base are the same branch ({base!r})")
        for p in data["pulls"]:
            if (
                p["state"] == "open"
                and p["head"]["ref"] == head_ref
                and p["head"]["repo"] == head_repo["full_name"]
                and p["base"]["ref"] == base
            ):
                raise BadRequest(
                    f"A pull request already exists for {head_repo['owner']}:{head_ref} (#{p['number']})"
                )
        base_shas = {c["sha"] for c in base_b["commits"]}
        if all(c["sha"] in base_shas for c in head_repo["branches"][head_ref]["commits"]):
            raise BadRequest(f"No commits between {base} and {head}: push a change to {head_ref!r} first")
        now = _now(self.state)
        pr = {
            "id": _new_id(self.state),
            "number": data["next_number"],
            "title": title,
            "body": body,
            "state": "open",
            "draft": bool(draft),
            "merged": False,
            "merged_at": None,
            "head": {"ref": head_ref, "repo": head_repo["full_name"]},
            "base": {"ref": base},
            "user": self.account,
            "created_at": now,
            "updated_at": now,
            "closed_at": None,
            "comments": [],
        }
        data["next_number"] += 1
        data["pulls"].append(pr)
        return _pull_json(self.state, data, pr)

    def _pull(self, data: dict[str, Any], number: int) -> dict[str, Any]:
        for p in data["pulls"]:
            if p["number"] == number:
                return p
        raise BadRequest(f"Not Found: pull request #{number} does not exist in {data['full_name']}")

    def get_pull_request(self, owner: str, repo: str, pullNumber: int) -> dict[str, Any]:  # noqa: N803
        data = _repo(self.state, owner, repo)
        return _pull_json(self.state, data, self._pull(data, pullNumber))

    def list_pull_requests(
        self,
        owner: str,
        repo: str,
        state: Literal["open", "closed", "all"] | None = None,
        head: str | None = None,
        base: str | None = None,
        sort: Literal["created", "updated", "popularity", "long-running"] | None = None,
        direction: Literal["asc", "desc"] | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> list[dict[str, Any]]:  # noqa: N803
        data = _repo(self.state, owner, repo)
        want = state or "open"
        out = []
        for p in data["pulls"]:
            if want != "all" and p["state"] != want:
                continue
            if base and p["base"]["ref"] != base:
                continue
            if head:
                user, _, ref = head.rpartition(":")
                if (
                    p["head"]["ref"] != ref
                    or user
                    and p["head"]["repo"].split("/")[0].lower() != user.lower()
                ):
                    continue
            out.append(p)
        out.sort(key=lambda p: p["number"], reverse=(direction or "desc") == "desc")
        return [_pull_json(self.state, data, p) for p in _page(out, page, perPage)]

    def merge_pull_request(
        self,
        owner: str,
        repo: str,
        pullNumber: int,
        commit_title: str | None = None,
        commit_message: str | None = None,
        merge_method: Literal["merge", "squash", "rebase"] | None = None,
    ) -> dict[str, Any]:  # noqa: N803
        data = _writable(self.state, _repo(self.state, owner, repo))
        pr = self._pull(data, pullNumber)
        if pr["state"] != "open":
            raise BadRequest(
                f"Pull Request is not mergeable: #{pullNumber} is {'merged' if pr['merged'] else 'closed'}"
            )
        head_repo = find_repo(self.state, *pr["head"]["repo"].split("/", 1))
        if head_repo is None or pr["head"]["ref"] not in head_repo["branches"]:
            raise BadRequest(
                f"Pull Request is not mergeable: its head branch {pr['head']['ref']!r} no longer exists"
            )
        head_files = head_repo["branches"][pr["head"]["ref"]]["files"]
        base_files = data["branches"][pr["base"]["ref"]]["files"]
        changes = {p: t for p, t in head_files.items() if base_files.get(p) != t}
        title = (
            commit_title
            or f"Merge pull request #{pullNumber} from {pr['head']['repo'].split('/')[0]}/{pr['head']['ref']}"
        )
        commit = _commit(
            self.state,
            data,
            pr["base"]["ref"],
            title + (f"\n\n{commit_message}" if commit_message else ""),
            changes,
        )
        pr.update(
            state="closed",
            merged=True,
            merged_at=commit["date"],
            closed_at=commit["date"],
            updated_at=commit["date"],
        )
        return {"sha": commit["sha"], "merged": True, "message": "Pull Request successfully merged"}


_DEFAULT_LABELS = (
    "bug",
    "documentation",
    "duplicate",
    "enhancement",
    "good first issue",
    "help wanted",
    "invalid",
    "question",
    "wontfix",
)
"""The labels GitHub gives a new repository."""


def _labels(data: dict[str, Any], labels: list[str] | None) -> list[str]:
    out: list[str] = []
    for lb in labels or []:
        if not isinstance(lb, str) or not lb.strip():
            raise BadRequest(f"labels must be non-empty names, got {lb!r}")
        if lb not in out:
            out.append(lb)
        if lb not in data["labels"]:
            data["labels"].append(lb)  # GitHub creates a missing label on first use
    return out


# ---------------------------------------------------------------------------------------------
# The seeded world
# ---------------------------------------------------------------------------------------------

from suites._common.mcp_servers._repository_data import CATALOGUE, seeded_files, seeded_issues  # noqa: E402


@functools.lru_cache(maxsize=8)
def _world_json(seed: int) -> str:
    r = rng(seed, "repository")
    state: State = {"account": ACCOUNT, "clock": 0, "next_id": 5000, "repos": {}}
    for k, spec in enumerate(CATALOGUE):
        full = f"{spec['owner']}/{spec['name']}"
        files = seeded_files(spec, r)
        created = spec["created_at"]
        commits = []
        parent = None
        date = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        for j, msg in enumerate(("Initial commit", "Add project files", "Update README")):
            date = date + timedelta(days=r.randint(3, 40), hours=r.randint(0, 23))
            sha = _commit_sha(full, "main", parent, msg, files, j)
            commits.append(
                {
                    "sha": sha,
                    "message": msg,
                    "author": spec["owner"],
                    "date": _iso(min(date, _EPOCH - timedelta(days=1))),
                }
            )
            parent = sha
        issues = seeded_issues(spec, r)
        for i, issue in enumerate(issues):
            issue["id"] = 100000 + k * 1000 + i
            for j, comment in enumerate(issue["comments"]):
                comment["id"] = 3000000 + k * 10000 + i * 10 + j
        state["repos"][full] = {
            "id": 700000 + k,
            "owner": spec["owner"],
            "name": spec["name"],
            "full_name": full,
            "description": spec["description"],
            "private": False,
            "fork": False,
            "parent": None,
            "default_branch": "main",
            "created_at": created,
            "updated_at": commits[-1]["date"],
            "language": spec.get("language"),
            "topics": list(spec.get("topics", [])),
            "stargazers_count": spec.get("stars", 100) + r.randint(0, 99),
            "forks_count": spec.get("stars", 100) // 8 + r.randint(0, 20),
            "labels": sorted(set(_DEFAULT_LABELS) | set(spec.get("labels", {}))),
            "next_number": len(issues) + 1,
            "branches": {"main": {"files": dict(sorted(files.items())), "commits": commits}},
            "issues": issues,
            "pulls": [],
        }
    return json.dumps(state, sort_keys=False)


def build_world(seed: int) -> State:
    """The seeded base state (a fresh copy on every call; shape in the module docstring)."""
    return json.loads(_world_json(seed))


# ---------------------------------------------------------------------------------------------
# Snapshots: a delta against the seeded base
# ---------------------------------------------------------------------------------------------

DELTA_FORMAT = "repository-delta/1"
"""The ``format`` of a snapshot delta (shape in the module docstring)."""

_ITEM_LISTS = ("issues", "pulls")


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _diff_items(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> Any:
    """Issues or pull requests: ``{"<number>": item | None}`` or the whole list."""
    old_by = {str(i["number"]): i for i in old}
    new_by = {str(i["number"]): i for i in new}
    changes: dict[str, Any] = {n: None for n in old_by if n not in new_by}
    changes.update({n: i for n, i in new_by.items() if old_by.get(n) != i})
    if len(new_by) != len(new) or _text(_apply_items(old, changes)) != _text(new):
        return new
    return changes if len(_text(changes)) <= len(_text(new)) else new


def _apply_items(old: list[dict[str, Any]], changes: Any) -> list[dict[str, Any]]:
    if isinstance(changes, list):
        return copy.deepcopy(changes)
    out = [copy.deepcopy(changes.get(str(i["number"]), i)) for i in old]
    out = [i for i in out if i is not None]
    seen = {str(i["number"]) for i in old}
    return out + [copy.deepcopy(i) for n, i in changes.items() if n not in seen and i is not None]


def _diff_branch(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    files = {p: None for p in old["files"] if p not in new["files"]}
    files.update({p: t for p, t in new["files"].items() if old["files"].get(p) != t})
    if files:
        out["files"] = files
    n = len(old["commits"])
    if new["commits"][:n] == old["commits"]:
        if new["commits"][n:]:
            out["commits_added"] = new["commits"][n:]
    else:
        out["commits"] = new["commits"]
    return out


def _apply_branch(old: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    files = dict(old["files"])
    for path, text in changes.get("files", {}).items():
        if text is None:
            files.pop(path, None)
        else:
            files[path] = text
    commits = (
        changes["commits"] if "commits" in changes else old["commits"] + changes.get("commits_added", [])
    )
    return copy.deepcopy({"files": dict(sorted(files.items())), "commits": commits})


_EMPTY_BRANCH: dict[str, Any] = {"files": {}, "commits": []}


def _diff_repo(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The changes that turn the repository record ``old`` into ``new`` (shape in the module
    docstring); :func:`_apply_repo` is its inverse."""
    out: dict[str, Any] = {}
    for key, value in new.items():
        if key in old and old[key] == value:
            continue
        if key == "branches" and key in old:
            branches: dict[str, Any] = {b: None for b in old[key] if b not in value}
            for b, branch in value.items():
                if b in old[key]:
                    if old[key][b] != branch:
                        branches[b] = _diff_branch(old[key][b], branch)
                    continue
                like = old.get("default_branch")
                ref = old[key].get(like) if like else None
                branches[b] = ({"copy_of": like} if ref else {}) | _diff_branch(ref or _EMPTY_BRANCH, branch)
            out[key] = branches
        elif key in _ITEM_LISTS and key in old:
            out[key] = _diff_items(old[key], value)
        else:
            out[key] = value
    return out


def _apply_repo(old: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(old)
    for key, value in changes.items():
        if key == "branches" and key in old:
            branches = out[key]
            for b, diff in value.items():
                if diff is None:
                    branches.pop(b, None)
                    continue
                ref = old[key].get(b) or old[key].get(diff.get("copy_of") or "") or _EMPTY_BRANCH
                branches[b] = _apply_branch(ref, diff)
        elif key in _ITEM_LISTS and key in old:
            out[key] = _apply_items(old[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def snapshot_delta(seed: int, state: State) -> dict[str, Any]:
    """What ``state`` changed from the seeded base ``build_world(seed)`` (snapshot shape in the
    module docstring). ``apply_delta(build_world(seed), delta)`` equals ``state`` exactly (the
    same fields, in the same order).

    Raises:
        RuntimeError: the delta would not rebuild ``state`` (a top-level field the base lacks
            was removed): a defect of this module, never the model's doing.
    """
    base = build_world(seed)
    delta: dict[str, Any] = {"format": DELTA_FORMAT, "seed": seed}
    delta.update({k: v for k, v in state.items() if k != "repos" and (k not in base or base[k] != v)})
    created: dict[str, Any] = {}
    forked: dict[str, Any] = {}
    modified: dict[str, Any] = {}
    for full, data in state["repos"].items():
        old = base["repos"].get(full)
        parent = data.get("parent")
        if old is not None:
            if old == data:
                continue
            changes = _diff_repo(old, data)
            if _text(_apply_repo(old, changes)) == _text(data):
                modified[full] = changes
                continue
        elif data.get("fork") and parent in base["repos"]:
            changes = _diff_repo(base["repos"][parent], data)
            if _text(_apply_repo(base["repos"][parent], changes)) == _text(data):
                forked[full] = {"from": parent, "changes": changes}
                continue
        created[full] = data
    delta["created"] = copy.deepcopy(created)
    delta["forked"] = copy.deepcopy(forked)
    delta["modified"] = copy.deepcopy(modified)
    delta["deleted"] = [full for full in base["repos"] if full not in state["repos"]]
    rebuilt = apply_delta(base, delta)
    if list(rebuilt["repos"]) != list(state["repos"]):
        delta["order"] = list(state["repos"])
        rebuilt = apply_delta(base, delta)
    if _text(rebuilt) != _text(state):
        raise RuntimeError(
            "repository snapshot: the delta does not rebuild the state (a defect of snapshot_delta)"
        )
    return delta


def _delta_text(base: State, delta: dict[str, Any]) -> str:
    """:func:`apply_delta`'s state as its JSON text (``base`` is only read).

    Raises:
        ValueError: as :func:`apply_delta`.
    """
    if not isinstance(delta, dict) or delta.get("format") != DELTA_FORMAT:
        got = delta.get("format") if isinstance(delta, dict) else type(delta).__name__
        raise ValueError(f"not a repository snapshot delta: format is {got!r}, expected {DELTA_FORMAT!r}")
    repos = dict(base["repos"])
    try:
        for full in delta.get("deleted", []):
            del repos[full]
        for full, changes in delta.get("modified", {}).items():
            repos[full] = _apply_repo(base["repos"][full], changes)
        for full, fork in delta.get("forked", {}).items():
            repos[full] = _apply_repo(base["repos"][fork["from"]], fork["changes"])
    except KeyError as exc:
        raise ValueError(f"the snapshot delta names repository {exc.args[0]}, which the base lacks") from None
    for full, data in delta.get("created", {}).items():
        repos[full] = copy.deepcopy(data)
    if "order" in delta:
        repos = {full: repos[full] for full in delta["order"]}
    fields = {k: v for k, v in base.items() if k != "repos"}
    fields.update((k, v) for k, v in delta.items() if k not in _DELTA_KEYS)
    return _text({**fields, "repos": repos})


def apply_delta(base: State, delta: dict[str, Any]) -> State:
    """The state a snapshot ``delta`` describes, rebuilt on ``base`` (a fresh copy; ``base``
    is not changed). Shape of ``delta`` in the module docstring.

    Raises:
        ValueError: ``delta`` is not a snapshot delta (``format`` is not :data:`DELTA_FORMAT`)
            or names a base repository that ``base`` lacks.
    """
    return json.loads(_delta_text(base, delta))  # a copy sharing nothing with base


_DELTA_KEYS = frozenset({"format", "seed", "created", "forked", "modified", "deleted", "order"})


def state_view(seed: int, snapshot: dict[str, Any]) -> State:
    """The whole state a snapshot describes: the seeded base ``build_world(seed)`` (rebuilt from
    the seed, its JSON cached) with the delta applied; what every ``github.*`` op reads. A whole
    state (``{"repos": ...}`` without ``format``: a hand-made state, or a trajectory recorded
    before snapshots became deltas) is returned as is. The result is a fresh copy: the base
    is parsed once per process (:func:`_read_only_base`) and the whole state's JSON text is
    kept for the :data:`VIEWS_KEPT` most recently viewed snapshots, so viewing a snapshot
    again parses that text only.

    Raises:
        ValueError: the snapshot is neither a delta nor a whole state, or it was taken on
            another seed's world.
    """
    if isinstance(snapshot, dict) and "format" not in snapshot and "repos" in snapshot:
        return snapshot
    if isinstance(snapshot, dict) and snapshot.get("format") == DELTA_FORMAT and snapshot.get("seed") != seed:
        raise ValueError(
            f"the repository snapshot was taken on the world of seed {snapshot.get('seed')}, "
            f"not on the task's seed {seed}"
        )
    if not isinstance(snapshot, dict) or snapshot.get("format") != DELTA_FORMAT:
        return apply_delta(build_world(seed), snapshot)  # raises, naming the format
    key = (seed, _text(snapshot))
    with _VIEWS_LOCK:
        text = _VIEWS.pop(key, None)  # (put back below: the most recently viewed last)
    if text is None:
        text = _delta_text(_read_only_base(seed), snapshot)
    with _VIEWS_LOCK:
        _VIEWS[key] = text
        while len(_VIEWS) > VIEWS_KEPT:
            del _VIEWS[next(iter(_VIEWS))]
    return json.loads(text)


VIEWS_KEPT = 8
"""Whole states :func:`state_view` keeps as JSON text (about 0.25 MB each for the seeded
world), the most recently viewed: a trial's ``github.*`` evaluators each view the same
snapshot, and a rescore views each trial's in turn; one kept is parsed again instead of
rebuilt (the base parsed, the delta applied, the result written and parsed)."""

_VIEWS: dict[tuple[int, str], str] = {}
"""(seed, the snapshot's JSON text) -> the state's JSON text, least recently viewed first."""
_VIEWS_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4)
def _read_only_base(seed: int) -> State:
    """``build_world(seed)`` parsed once per process and never handed out: only
    :func:`_delta_text` reads it (it copies what it keeps)."""
    return build_world(seed)


# ---------------------------------------------------------------------------------------------
# The MCP server
# ---------------------------------------------------------------------------------------------


def build_server(seed: int) -> Any:
    """GitHub-like repository MCP server over an in-memory, seeded state."""
    world = RepositoryWorld(seed)

    def run(tool: str, **kwargs: Any) -> str:
        return _dumps(world.call(tool, kwargs))

    def get_me() -> str:
        """Get details of the authenticated GitHub user (login, name, repository counts)."""
        return run("get_me")

    def search_repositories(query: str, page: int | None = None, perPage: int | None = None) -> str:  # noqa: N803
        """Search for GitHub repositories.

        Args:
            query: Search query, with GitHub qualifiers such as user:, org:, repo:, in:name, fork:true
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run("search_repositories", query=query, page=page, perPage=perPage)

    def create_repository(
        name: str, description: str | None = None, private: bool | None = None, autoInit: bool | None = None
    ) -> str:  # noqa: N803
        """Create a new GitHub repository in your account.

        Args:
            name: Repository name
            description: Repository description
            private: Whether repo should be private
            autoInit: Initialize with README
        """
        return run(
            "create_repository", name=name, description=description, private=private, autoInit=autoInit
        )

    def fork_repository(owner: str, repo: str, organization: str | None = None) -> str:
        """Fork a GitHub repository to your account or specified organization.

        Args:
            owner: Repository owner
            repo: Repository name
            organization: Organization to fork to
        """
        return run("fork_repository", owner=owner, repo=repo, organization=organization)

    def create_branch(owner: str, repo: str, branch: str, from_branch: str | None = None) -> str:
        """Create a new branch in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            branch: Name for new branch
            from_branch: Source branch (defaults to repo default)
        """
        return run("create_branch", owner=owner, repo=repo, branch=branch, from_branch=from_branch)

    def list_branches(owner: str, repo: str, page: int | None = None, perPage: int | None = None) -> str:  # noqa: N803
        """List branches in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run("list_branches", owner=owner, repo=repo, page=page, perPage=perPage)

    def list_commits(
        owner: str,
        repo: str,
        sha: str | None = None,
        author: str | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> str:  # noqa: N803
        """Get list of commits of a branch in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            sha: Branch name or commit SHA (defaults to the default branch)
            author: Author username to filter commits by
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run("list_commits", owner=owner, repo=repo, sha=sha, author=author, page=page, perPage=perPage)

    def get_file_contents(
        owner: str, repo: str, path: str = "/", ref: str | None = None, sha: str | None = None
    ) -> str:
        """Get the contents of a file or directory from a GitHub repository (a file's text is returned).

        Args:
            owner: Repository owner (username or organization)
            repo: Repository name
            path: Path to file/directory (directories must end with a slash '/')
            ref: Accepts optional git refs such as `refs/heads/{branch}` or a branch name
            sha: Accepts optional commit SHA. If specified, it will be used instead of ref
        """
        return run("get_file_contents", owner=owner, repo=repo, path=path, ref=ref, sha=sha)

    def create_or_update_file(
        owner: str, repo: str, path: str, content: str, message: str, branch: str, sha: str | None = None
    ) -> str:
        """Create or update a single file in a GitHub repository. If updating, you must provide the SHA of
        the file you want to update.

        Args:
            owner: Repository owner (username or organization)
            repo: Repository name
            path: Path where to create/update the file
            content: Content of the file
            message: Commit message
            branch: Branch to create/update the file in
            sha: Required if updating an existing file. The blob SHA of the file being replaced.
        """
        return run(
            "create_or_update_file",
            owner=owner,
            repo=repo,
            path=path,
            content=content,
            message=message,
            branch=branch,
            sha=sha,
        )

    def push_files(owner: str, repo: str, branch: str, files: list[FileEntry], message: str) -> str:
        """Push multiple files to a GitHub repository in a single commit.

        Args:
            owner: Repository owner
            repo: Repository name
            branch: Branch to push to
            files: Array of file objects to push, each object with path (string) and content (string)
            message: Commit message
        """
        return run(
            "push_files",
            owner=owner,
            repo=repo,
            branch=branch,
            files=[dict(f) for f in files],
            message=message,
        )

    def delete_file(owner: str, repo: str, path: str, message: str, branch: str) -> str:
        """Delete a file from a GitHub repository.

        Args:
            owner: Repository owner (username or organization)
            repo: Repository name
            path: Path to the file to delete
            message: Commit message
            branch: Branch to delete the file from
        """
        return run("delete_file", owner=owner, repo=repo, path=path, message=message, branch=branch)

    def create_issue(
        owner: str,
        repo: str,
        title: str,
        body: str | None = None,
        assignees: list[str] | None = None,
        labels: list[str] | None = None,
        milestone: int | None = None,
    ) -> str:
        """Create a new issue in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            title: Issue title
            body: Issue body content
            assignees: Usernames to assign to this issue
            labels: Labels to apply to this issue
            milestone: Milestone number
        """
        return run(
            "create_issue",
            owner=owner,
            repo=repo,
            title=title,
            body=body,
            assignees=assignees,
            labels=labels,
            milestone=milestone,
        )

    def get_issue(owner: str, repo: str, issue_number: int) -> str:
        """Get details of a specific issue in a GitHub repository.

        Args:
            owner: The owner of the repository
            repo: The name of the repository
            issue_number: The number of the issue
        """
        return run("get_issue", owner=owner, repo=repo, issue_number=issue_number)

    def list_issues(
        owner: str,
        repo: str,
        state: Literal["open", "closed", "all"] | None = None,
        labels: list[str] | None = None,
        sort: Literal["created", "updated", "comments"] | None = None,
        direction: Literal["asc", "desc"] | None = None,
        since: str | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> str:  # noqa: N803
        """List issues in a GitHub repository (pull requests are not included).

        Args:
            owner: Repository owner
            repo: Repository name
            state: Filter by state (open, closed, all); default open
            labels: Filter by labels (issues carrying every label listed)
            sort: Sort order
            direction: Sort direction
            since: Filter by date (ISO 8601 timestamp)
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run(
            "list_issues",
            owner=owner,
            repo=repo,
            state=state,
            labels=labels,
            sort=sort,
            direction=direction,
            since=since,
            page=page,
            perPage=perPage,
        )

    def update_issue(
        owner: str,
        repo: str,
        issue_number: int,
        title: str | None = None,
        body: str | None = None,
        state: Literal["open", "closed"] | None = None,
        labels: list[str] | None = None,
        assignees: list[str] | None = None,
        milestone: int | None = None,
    ) -> str:
        """Update an existing issue in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            issue_number: Issue number to update
            title: New title
            body: New description
            state: New state
            labels: New labels (replace the current ones)
            assignees: New assignees
            milestone: New milestone number
        """
        return run(
            "update_issue",
            owner=owner,
            repo=repo,
            issue_number=issue_number,
            title=title,
            body=body,
            state=state,
            labels=labels,
            assignees=assignees,
            milestone=milestone,
        )

    def add_issue_comment(owner: str, repo: str, issue_number: int, body: str) -> str:
        """Add a comment to a specific issue in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            issue_number: Issue number to comment on
            body: Comment content
        """
        return run("add_issue_comment", owner=owner, repo=repo, issue_number=issue_number, body=body)

    def get_issue_comments(
        owner: str, repo: str, issue_number: int, page: int | None = None, perPage: int | None = None
    ) -> str:  # noqa: N803
        """Get comments for a specific issue in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            issue_number: Issue number
            page: Page number
            perPage: Number of records per page
        """
        return run(
            "get_issue_comments",
            owner=owner,
            repo=repo,
            issue_number=issue_number,
            page=page,
            perPage=perPage,
        )

    def search_issues(
        query: str,
        sort: str | None = None,
        order: Literal["asc", "desc"] | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> str:  # noqa: N803
        """Search for issues and pull requests across GitHub repositories.

        Args:
            query: Search query in GitHub issues search syntax (repo:, is:issue, is:open, label:, in:title)
            sort: Sort field (comments, created, updated)
            order: Sort order
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run("search_issues", query=query, sort=sort, order=order, page=page, perPage=perPage)

    def create_pull_request(
        owner: str,
        repo: str,
        title: str,
        head: str,
        base: str,
        body: str | None = None,
        draft: bool | None = None,
        maintainer_can_modify: bool | None = None,
    ) -> str:
        """Create a new pull request in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            title: PR title
            head: Branch containing changes (owner:branch for a fork)
            base: Branch to merge into
            body: PR description
            draft: Create as draft PR
            maintainer_can_modify: Allow maintainer edits
        """
        return run(
            "create_pull_request",
            owner=owner,
            repo=repo,
            title=title,
            head=head,
            base=base,
            body=body,
            draft=draft,
            maintainer_can_modify=maintainer_can_modify,
        )

    def get_pull_request(owner: str, repo: str, pullNumber: int) -> str:  # noqa: N803
        """Get details of a specific pull request in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            pullNumber: Pull request number
        """
        return run("get_pull_request", owner=owner, repo=repo, pullNumber=pullNumber)

    def list_pull_requests(
        owner: str,
        repo: str,
        state: Literal["open", "closed", "all"] | None = None,
        head: str | None = None,
        base: str | None = None,
        sort: Literal["created", "updated", "popularity", "long-running"] | None = None,
        direction: Literal["asc", "desc"] | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> str:  # noqa: N803
        """List pull requests in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            state: Filter by state; default open
            head: Filter by head user/org and branch (user:branch, or a branch)
            base: Filter by base branch
            sort: Sort by
            direction: Sort direction
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run(
            "list_pull_requests",
            owner=owner,
            repo=repo,
            state=state,
            head=head,
            base=base,
            sort=sort,
            direction=direction,
            page=page,
            perPage=perPage,
        )

    def merge_pull_request(
        owner: str,
        repo: str,
        pullNumber: int,
        commit_title: str | None = None,
        commit_message: str | None = None,
        merge_method: Literal["merge", "squash", "rebase"] | None = None,
    ) -> str:  # noqa: N803
        """Merge a pull request in a GitHub repository.

        Args:
            owner: Repository owner
            repo: Repository name
            pullNumber: Pull request number
            commit_title: Title for merge commit
            commit_message: Extra detail for merge commit
            merge_method: Merge method
        """
        return run(
            "merge_pull_request",
            owner=owner,
            repo=repo,
            pullNumber=pullNumber,
            commit_title=commit_title,
            commit_message=commit_message,
            merge_method=merge_method,
        )

    def search_code(
        query: str,
        sort: str | None = None,
        order: Literal["asc", "desc"] | None = None,
        page: int | None = None,
        perPage: int | None = None,
    ) -> str:  # noqa: N803
        """Search for code across GitHub repositories (default branches; forks are not indexed).

        Args:
            query: Search query in GitHub code search syntax (words, repo:, user:, path:, filename:)
            sort: Sort field ('indexed' only)
            order: Sort order
            page: Page number for pagination (min 1)
            perPage: Results per page for pagination (min 1, max 100)
        """
        return run("search_code", query=query, sort=sort, order=order, page=page, perPage=perPage)

    def egi_snapshot_state() -> str:
        """Harness only: what the trial changed (a delta against the seeded base) as JSON."""
        return _dumps(world.egi_snapshot_state())

    def egi_reset_state() -> str:
        """Harness only: restore the seeded base state."""
        return run("egi_reset_state")

    def delete_repository(repo: str, owner: str | None = None) -> str:
        """Harness only (upstream's cleanup): delete one of the account's repositories.

        Args:
            repo: Repository name
            owner: Repository owner (defaults to the authenticated account)
        """
        return run("delete_repository", repo=repo, owner=owner)

    fns = {
        f.__name__: f
        for f in (
            get_me,
            search_repositories,
            create_repository,
            fork_repository,
            create_branch,
            list_branches,
            list_commits,
            get_file_contents,
            create_or_update_file,
            push_files,
            delete_file,
            create_issue,
            get_issue,
            list_issues,
            update_issue,
            add_issue_comment,
            get_issue_comments,
            search_issues,
            create_pull_request,
            get_pull_request,
            list_pull_requests,
            merge_pull_request,
            search_code,
            egi_snapshot_state,
            egi_reset_state,
            delete_repository,
        )
    }
    return make_server(
        "github",
        f"An in-memory GitHub. You are authenticated as {ACCOUNT}; repositories are named owner/name.",
        [(fns[name], False) for name in (*TOOLS, *HIDDEN)],
    )


if __name__ == "__main__":
    from suites._common.mcp_servers._base import main

    main(build_server)
