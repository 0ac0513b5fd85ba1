"""MCP-Universe's repository_management domain on the local repository server.

Tasks (upstream's ``github_task_*.json`` and our generated ones) ask the agent to change the
account's repositories; every evaluator is a ``github.*`` op reading the server's state after
the trial (:mod:`suites.mcp_universe.scorer.ops.github`), and ``cleanups`` delete what the agent
created (:mod:`suites.mcp_universe.env.cleanups`).

:func:`generate_tasks` writes our own tasks in upstream's seven shapes (project set-up with
branches, copied files and a pull request; an issue-count report as CSV or JSON; a fork chosen
by a file it holds; a fork chosen by a property, with reference links; the fork of the
repository with the fewest issues; an issue-automation test; a project skeleton with a
development branch). :func:`solve` derives, for any task of the domain, the write calls a
correct agent makes from the task's evaluators, planning them on an in-process copy of the
seeded world (so issue numbers and file ``sha`` values are right), and a one-argument
``mistake`` with the evaluators it fails.

Task templates (``{{GITHUB_PERSONAL_ACCOUNT_NAME}}``) must be rendered
(:func:`suites.mcp_universe.scorer.evaluator.render` with :data:`ENV`) before :func:`solve`.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import random
import re
from typing import Any

from suites._common.mcp_servers._base import BadRequest
from suites._common.mcp_servers.repository import (
    ACCOUNT,
    RepositoryWorld,
    blob_sha,
    build_world,
    file_at,
    find_repo,
)
from suites.mcp_universe.data.domains import NotSolvable

__all__ = ["DOMAIN", "ENV", "SERVERS", "SOLVED_OPS", "generate_tasks", "solve"]

DOMAIN = "repository_management"
SERVERS = ("github",)
ENV = {"GITHUB_PERSONAL_ACCOUNT_NAME": ACCOUNT}
"""The template variables of this domain's tasks."""

_ACCT = "{{GITHUB_PERSONAL_ACCOUNT_NAME}}"
_CREATE_CLEANUP = {
    "server": "github",
    "tool": "create_repository",
    "cleanup_func": "delete_repository",
    "cleanup_args": {"repo": "$name"},
}
_FORK_CLEANUP = {
    "server": "github",
    "tool": "fork_repository",
    "cleanup_func": "delete_repository",
    "cleanup_args": {"repo": "$repo"},
}
_WEB = "https://github.com"


# ---------------------------------------------------------------------------------------------
# Task generation
# ---------------------------------------------------------------------------------------------


def _ev(op: str, op_args: Any, value: Any = None, desc: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"func": "raw", "op": op, "op_args": op_args}
    if value is not None:
        out["value"] = value
    if desc:
        out["desc"] = desc
    return out


def _loc(repo: str, path: str, branch: str = "main") -> dict[str, Any]:
    return {"owner": _ACCT, "repo": repo, "path": path, "branch": branch}


def _task(question: str, evaluators: list[dict[str, Any]], cleanups: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "category": "general",
        "question": question,
        "output_format": {},
        "mcp_servers": [{"name": "github"}],
        "use_specified_server": True,
        "evaluators": evaluators,
        "cleanups": cleanups,
    }


_PROJECTS = [
    ("trail-mapper", "Trail Mapper", "Plans hiking routes from elevation and weather data."),
    ("ledger-lite", "Ledger Lite", "A small double-entry bookkeeping tool for freelancers."),
    ("docs-forge", "Docs Forge", "Builds searchable documentation sites from Markdown folders."),
    ("vision-bench", "Vision Bench", "Benchmarks image models on a fixed set of classification suites."),
    ("code-scout", "Code Scout", "Finds risky patterns in pull requests before review."),
    ("recipe-box", "Recipe Box", "Stores recipes and scales ingredient lists for any serving size."),
    ("sensor-hub", "Sensor Hub", "Collects readings from home sensors and charts them."),
    ("quiz-engine", "Quiz Engine", "Generates practice quizzes from lecture notes."),
    ("fleet-watch", "Fleet Watch", "Tracks delivery vans and predicts arrival times."),
    ("paper-digest", "Paper Digest", "Summarises new research papers into a weekly digest."),
]
_BRANCHES = ["dev", "feature-api", "feature-ui", "experiments", "docs", "dev-alex", "dev-sam", "feature-data"]
_COPY_SOURCES = [
    ("OSU-NLP-Group", "TravelPlanner", "utils/budget_estimation.py"),
    ("QwenLM", "Qwen", "recipes/quickstart/qwen.ipynb"),
    ("QwenLM", "Qwen", "finetune.py"),
    ("bigcode-project", "starcoder", "finetune/finetune.py"),
    ("bigcode-project", "starcoder", "chat/train.py"),
    ("meta-llama", "codellama", "example_instructions.py"),
    ("meta-llama", "codellama", "llama/generation.py"),
    ("huggingface", "accelerate", "setup.py"),
    ("meta-llama", "llama", "setup.py"),
    ("AriaUI", "Aria-UI", "examples/aria_ui_hf.py"),
    ("xlang-ai", "OSWorld", "run.py"),
]
_GITIGNORES = [
    "# Python caches\n__pycache__/\n*.pyc\n\n# Environments\n.venv/\n.env",
    "# Node\nnode_modules/\ndist/\n\n# Logs\n*.log",
    "# Build output\nbuild/\n*.egg-info/\n\n# Notebooks\n.ipynb_checkpoints/",
]


def _gen_setup(r: random.Random, k: int) -> dict[str, Any]:
    name, title, blurb = _PROJECTS[k % len(_PROJECTS)]
    name = f"{name}-{k + 1:02d}"
    branches = ["main", *r.sample(_BRANCHES, r.randint(2, 3))]
    readme = f"# {title}\n\n{blurb}"
    gitignore = r.choice(_GITIGNORES)
    copies = r.sample(_COPY_SOURCES, len(branches) - 1)
    placed = []
    for branch, (owner, repo, path) in zip(branches[1:], copies, strict=True):
        dest = path.rsplit("/", 1)[-1] if r.random() < 0.5 else path
        placed.append((branch, owner, repo, path, dest))
    pr_branch, _, pr_repo, _, pr_dest = placed[0]
    pr_title = f"Bring in {pr_dest.rsplit('/', 1)[-1]} from {pr_repo}"
    pr_body = f"Adds a copy of {pr_repo}'s {pr_dest.rsplit('/', 1)[-1]} as a starting point for {title}."
    steps = "; ".join(
        f"put a copy of {repo}'s `{path}` (owner {owner}) on `{branch}` at `{dest}`"
        for branch, owner, repo, path, dest in placed
    )
    question = (
        f"Please set up a new repository `{name}` under my account with the branches "
        f"{', '.join(f'`{b}`' for b in branches)}. On `main`, add a README.md whose content is exactly "
        f'"{readme}" and a .gitignore whose content is exactly "{gitignore}". Then {steps}, keeping '
        f"each file's content unchanged. Finally open a pull request from `{pr_branch}` into `main` titled "
        f'"{pr_title}" with the description "{pr_body}".'
    )
    evs = [
        _ev("github.check_repository", f"{_ACCT}/{name}", desc="the repository exists"),
        _ev(
            "github.check_branches_exist",
            {"owner": _ACCT, "repo": name, "path": "README.md", "branches": branches},
            desc="every branch exists",
        ),
        _ev("github.check_file_content", _loc(name, "README.md"), readme, "README.md on main"),
        _ev("github.check_file_content", _loc(name, ".gitignore"), gitignore, ".gitignore on main"),
        *[
            _ev(
                "github.check_file_content",
                _loc(name, dest, branch),
                {"owner": owner, "repo": repo, "path": path, "branch": "main"},
                f"copy of {owner}/{repo}/{path}",
            )
            for branch, owner, repo, path, dest in placed
        ],
        _ev(
            "github.check_pull_request",
            {"owner": _ACCT, "repo": name, "base": "main", "head": pr_branch},
            {"title": pr_title, "body": pr_body},
            "the pull request",
        ),
    ]
    return _task(question, evs, [_CREATE_CLEANUP])


_REPORTS = [
    ("google", "generative-ai", ["type:bug"], "open"),
    ("google", "generative-ai", ["type:feature request"], "closed"),
    ("microsoft", "Air", [], "open"),
    ("microsoft", "Air", ["bug"], "closed"),
    ("QwenLM", "Qwen", ["bug"], "open"),
    ("QwenLM", "Qwen-Agent", ["Work in Progress"], "open"),
    ("meta-llama", "llama", ["question"], "open"),
    ("salesforce", "BLIP", ["New Features"], "closed"),
    ("orbit-labs", "orbit", ["needs-triage"], "open"),
    ("lumen-ai", "lumen", [], "closed"),
]


def _gen_report(r: random.Random, k: int) -> dict[str, Any]:
    owner, fragment, labels, state = _REPORTS[k % len(_REPORTS)]
    kind = "csv" if k % 2 == 0 else "json"
    label_text = f"labeled `{labels[0]}`" if labels else "without any label"
    tag = labels[0].lower().replace(" ", "-").replace(":", "-") if labels else "unlabeled"
    slug = f"{owner.lower()}-{fragment.lower()}-{tag}"
    repo = f"{slug}-report-{k + 1:02d}"
    path = f"{slug.replace('-', '_')}_{state}.{kind}"
    count_col = f"{state}_issue_count"
    shape = (
        f"a CSV file `{path}` with exactly the two columns `repository_name` and `{count_col}` (one row per "
        "repository, using the full owner/name)"
        if kind == "csv"
        else f"a JSON file `{path}` holding one object that maps each repository's full owner/name to "
        "its count"
    )
    question = (
        f"Find every repository owned by `{owner}` whose name contains `{fragment}`, and count, for each, "
        f"the {state} issues {label_text} (pull requests do not count). Create a repository `{repo}` in my "
        f"account and store the counts on its `main` branch as {shape}. Include repositories whose count "
        "is zero."
    )
    op_args = {
        "owner": _ACCT,
        "repo": repo,
        "path": path,
        "branch": "main",
        "search_repo_owner": owner,
        "search_repo_name": fragment,
        "issue_labels": labels,
        "issue_state": state,
        "file_type": kind,
    }
    if kind == "csv":
        op_args["csv_columns"] = ["repository_name", count_col]
    evs = [
        _ev("github.check_repository", f"{_ACCT}/{repo}", desc="the report repository exists"),
        _ev("github.check_file_content_and_issue_count", op_args, desc="the report matches the issue counts"),
    ]
    return _task(question, evs, [_CREATE_CLEANUP])


_FILE_FORKS = [
    # (candidates, file to find, library, uses it?, file to copy when not, first line when copied)
    (
        [("QwenLM", "Qwen2.5-VL"), ("xlang-ai", "OSWorld"), ("likaixin2000", "ScreenSpot-Pro-GUI-Grounding")],
        "models/ariaui.py",
        "vllm",
        ("AriaUI", "Aria-UI", "examples/aria_ui_vllm.py"),
    ),
    (
        [("xlang-ai", "OSWorld"), ("likaixin2000", "ScreenSpot-Pro-GUI-Grounding"), ("AriaUI", "Aria-UI")],
        "models/qwen2_5_vl.py",
        "vllm",
        ("AriaUI", "Aria-UI", "examples/aria_ui_vllm.py"),
    ),
    (
        [("meta-llama", "llama"), ("meta-llama", "codellama"), ("bigcode-project", "starcoder")],
        "example_instructions.py",
        "fire",
        ("OSU-NLP-Group", "TravelPlanner", "utils/func.py"),
    ),
    (
        [("QwenLM", "Qwen"), ("bigcode-project", "starcoder"), ("huggingface", "peft")],
        "chat/train.py",
        "torch",
        ("meta-llama", "codellama", "llama/generation.py"),
    ),
]


def _gen_file_fork(r: random.Random, k: int, seed: int) -> dict[str, Any]:
    candidates, path, lib, (c_owner, c_repo, c_path) = _FILE_FORKS[k % len(_FILE_FORKS)]
    turn = k // len(_FILE_FORKS) % len(candidates)
    candidates = candidates[turn:] + candidates[:turn]  # a repeated scenario lists them in another order
    world = build_world(seed)
    holder = next((o, n) for o, n in candidates if file_at(world, o, n, path) is not None)
    text = file_at(world, holder[0], holder[1], path) or ""
    uses = f"import {lib}" in text or f"from {lib} " in text
    fname = path.rsplit("/", 1)[-1]
    cname = c_path.rsplit("/", 1)[-1]
    dest = f"{path.rsplit('/', 1)[0]}/{cname}" if "/" in path else cname
    first = f"# copied from {c_owner}/{c_repo}"
    listing = ", ".join(f"{o}'s {n}" for o, n in candidates)
    question = (
        f"I am comparing three repositories: {listing}. Fork the one that contains `{fname}` into my "
        f"account, keeping its name. Then check whether that `{fname}` uses the `{lib}` library. If it "
        f"does not, copy `{cname}` from {c_owner}'s {c_repo} repository into my fork, next to `{fname}`, "
        f'and make "{first}" the first line of the copy. If it does, leave the fork as it is.'
    )
    evs = [
        _ev(
            "github.check_repository",
            f"repo:{_ACCT}/{holder[1]} fork:true",
            desc="the right repository is forked",
        ),
        _ev(
            "github.check_file_content",
            _loc(holder[1], path),
            {"owner": holder[0], "repo": holder[1], "path": path, "branch": "main"},
            f"{fname} is unchanged",
        ),
    ]
    if uses:
        evs.append(_ev("github.check_file_not_exist", _loc(holder[1], dest), "", "nothing was copied"))
    else:
        source = file_at(world, c_owner, c_repo, c_path) or ""
        marker = next(
            line for line in source.splitlines() if line.startswith(("from ", "import ", "def ", "class "))
        )
        evs.append(
            _ev("github.file_content_include", _loc(holder[1], dest), [first, marker], "the copy is there")
        )
    return _task(question, evs, [_FORK_CLEANUP])


_VL = [
    ("QwenLM", "Qwen2.5-VL"),
    ("deepseek-ai", "DeepSeek-VL2"),
    ("rhymes-ai", "Aria"),
    ("MoonshotAI", "Kimi-VL"),
]


def _gen_property_fork(r: random.Random, k: int, seed: int) -> dict[str, Any]:
    world = build_world(seed)
    repos = [find_repo(world, o, n) for o, n in _VL]
    rule, pick = [
        ("does not use a mixture-of-experts (MoE) architecture", lambda: repos[0]),
        ("was created most recently", lambda: max(repos, key=lambda d: d["created_at"])),
        ("was created first", lambda: min(repos, key=lambda d: d["created_at"])),
        ("has the most stars", lambda: max(repos, key=lambda d: d["stargazers_count"])),
        ("has the fewest stars", lambda: min(repos, key=lambda d: d["stargazers_count"])),
    ][k % 5]
    chosen = pick()
    others = [d for d in repos if d is not chosen]
    links = [f"{_WEB}/{d['full_name']}" for d in others]
    question = (
        "Four vision-language repositories interest me: " + ", ".join(f"{o}'s {n}" for o, n in _VL) + ". "
        f"Fork the one that {rule}, keeping its name, and append to the end of its README.md one line per "
        "other repository, numbered, of the form 'N. related project [name](link to the repository)'."
    )
    evs = [
        _ev("github.check_repository", f"repo:{_ACCT}/{chosen['name']} fork:true", desc="the right fork"),
        _ev("github.file_content_include", _loc(chosen["name"], "README.md"), links, "the three links"),
    ]
    return _task(question, evs, [_FORK_CLEANUP])


_PAIRS = [
    ("salesforce/LAVIS", "salesforce/BLIP"),
    ("google/generative-ai-python", "google/generative-ai-js"),
    ("microsoft/AirSim", "microsoft/Air"),
    ("huggingface/accelerate", "huggingface/peft"),
    ("orbit-labs/orbit-core", "orbit-labs/orbit-cli"),
    ("meta-llama/llama", "meta-llama/codellama"),
    ("lumen-ai/lumen-vision", "lumen-ai/lumen-speech"),
]


def _gen_fewest(r: random.Random, k: int, seed: int) -> dict[str, Any]:

    world = build_world(seed)
    for j in range(len(_PAIRS) * 2):  # a pair (and issue state) whose counts differ
        pair = list(_PAIRS[(k + j) % len(_PAIRS)])
        state = "open" if (k + j) % 2 == 0 else "closed"
        counts = [
            len([i for i in find_repo(world, *p.split("/"))["issues"] if i["state"] == state]) for p in pair
        ]
        if counts[0] != counts[1]:
            break
    names = [p.split("/")[1] for p in pair]
    lines = [
        f"Related project: [{names[1]}]({_WEB}/{pair[1]})",
        f"Related project: [{names[0]}]({_WEB}/{pair[0]})",
    ]
    question = (
        f"Between {pair[0]} and {pair[1]}, fork the repository with fewer {state} issues into my account "
        f"(same name). If you forked {names[0]}, add the line '{lines[0]}' at the end of its README.md; "
        f"if you forked {names[1]}, add '{lines[1]}' instead."
    )
    common = {"owner": _ACCT, "repos": pair, "issue_state": state}
    evs = [
        _ev(
            "github.check_repository_with_fewest_issues", dict(common), desc="the right repository is forked"
        ),
        _ev(
            "github.check_file_content_with_fewest_issues",
            {**common, "path": "README.md", "branch": "main", "file_content": lines},
            desc="the README link",
        ),
    ]
    return _task(question, evs, [_FORK_CLEANUP])


def _gen_automation(r: random.Random, k: int) -> dict[str, Any]:
    name = f"issue-bot-{k + 1:02d}"
    readme = f"# Issue Bot {k + 1}\n\nA sandbox for testing issue automation."
    variant = k % 3
    evs = [
        _ev("github.check_repository", f"{_ACCT}/{name}", desc="the repository exists"),
        _ev("github.check_file_content", _loc(name, "README.md"), readme, "README.md"),
    ]
    sample = [
        ("Crash on start", "bug"),
        ("Dark mode", "feature"),
        ("Typo in guide", None),
        ("Roadmap ideas", "discussion"),
    ]
    sample = sample[: 3 + (k % 2)]
    if variant == 0:
        replies = {
            "bug": "Thanks, we will look into this bug.",
            "feature": "Thanks, we will consider this feature.",
            "discussion": "Happy to discuss this with you, [repo owner name].",
            None: "Thank you for reporting!",
        }
        rule = "; ".join(
            f'for an issue labeled `{lb}` it replies "{replies[lb]}"'
            for lb in ("bug", "feature", "discussion")
        )
        rule += f'; for an issue with no label it replies "{replies[None]}"'
        rule += " ([repo owner name] is the owner's login)"
        for title, lb in sample:
            args = {"owner": _ACCT, "repo": name, "title": title, "comment": replies[lb]}
            if lb:
                args["labels"] = [lb]
            evs.append(_ev("github.check_number_of_issues", args, 1, f"issue {title!r} with its reply"))
        job = f"a bot that comments on every new issue: {rule}"
    elif variant == 1:
        closing = ("done", "invalid")
        sample = [("Ship the installer", "done"), ("Random noise", "invalid"), ("Login loop", "bug")][:3]
        for title, lb in sample:
            evs.append(
                _ev(
                    "github.check_number_of_issues",
                    {
                        "owner": _ACCT,
                        "repo": name,
                        "title": title,
                        "labels": [lb],
                        "state": "closed" if lb in closing else "open",
                    },
                    1,
                    f"issue {title!r} {lb}",
                )
            )
        job = "a bot that closes every issue labeled `done` or `invalid` and leaves the others open"
    else:
        reply = "Thanks for opening this issue!"
        for title, _ in sample:
            evs.append(
                _ev(
                    "github.check_number_of_issues",
                    {"owner": _ACCT, "repo": name, "title": title, "comments": reply},
                    1,
                    f"issue {title!r}",
                )
            )
        job = f'a bot that comments "{reply}" on every new issue'
    tests = ", ".join(f'"{t}"' + (f" labeled `{lb}`" if lb else " with no label") for t, lb in sample)
    question = (
        f"Create a repository `{name}` with only a `main` branch and a README.md that reads exactly "
        f'"{readme}". '
        f"I want {job}. Since there is no automation runner, act as the bot yourself: open the test issues "
        f"{tests}, then do what the bot would do for each."
    )
    return _task(question, evs, [_CREATE_CLEANUP])


_DIRS = ["core", "api", "cli", "plugins", "eval", "data", "models", "utils"]
_LINK_SETS = [
    (
        "the official Model Context Protocol specification repository",
        "modelcontextprotocol/modelcontextprotocol",
    ),
    ("GitHub's official MCP server repository", "github/github-mcp-server"),
    ("the TravelPlanner benchmark repository", "OSU-NLP-Group/TravelPlanner"),
    ("the OSWorld benchmark repository", "xlang-ai/OSWorld"),
]


def _gen_skeleton(r: random.Random, k: int) -> dict[str, Any]:
    name = f"agent-lab-{k + 1:02d}"
    readme = f"# Agent Lab {k + 1}\nExperiments with tool-using agents."
    dirs = r.sample(_DIRS, 3)
    comment = "# package marker"
    links = r.sample(_LINK_SETS, 2)
    question = (
        f"Create a repository `{name}` with two branches, `main` and `dev`. On `main`, README.md must read "
        f'exactly "{readme}". On `dev`, README.md starts with the same text and also links to '
        f"{links[0][0]} and to {links[1][0]} (full GitHub URLs). Also on `dev`, create the folders "
        f'{", ".join(f"`{d}`" for d in dirs)}, each with an `__init__.py` containing the comment "{comment}".'
    )
    evs = [
        _ev("github.check_repository", f"{_ACCT}/{name}", desc="the repository exists"),
        _ev(
            "github.check_branches_exist",
            {"owner": _ACCT, "repo": name, "path": "README.md", "branches": ["main", "dev"]},
            desc="main and dev",
        ),
        _ev("github.check_file_content", _loc(name, "README.md"), readme, "README.md on main"),
        _ev(
            "github.file_content_include", _loc(name, "README.md", "dev"), readme, "dev README keeps the text"
        ),
        *[
            _ev(
                "github.file_content_include",
                _loc(name, f"{d}/__init__.py", "dev"),
                comment,
                f"{d}/__init__.py",
            )
            for d in dirs
        ],
        *[
            _ev(
                "github.file_content_include",
                _loc(name, "README.md", "dev"),
                [f"{_WEB}/{full}"],
                f"link to {full}",
            )
            for _, full in links
        ],
    ]
    return _task(question, evs, [_CREATE_CLEANUP])


_SHAPES = ("setup", "report", "file_fork", "automation", "property_fork", "skeleton", "fewest")


def generate_tasks(seed: int, count: int) -> list[dict[str, Any]]:
    """``count`` tasks of our own (upstream's task-file format plus ``id`` and ``reference``),
    cycling through the seven shapes; a prefix of a longer list for the same seed.

    Every ``reference`` is :func:`solve` of the task rendered with :data:`ENV`.
    """
    from suites.mcp_universe.scorer.evaluator import render

    tasks = []
    for i in range(count):
        r = random.Random(f"egi-mcp-universe:{DOMAIN}:{seed}:{i}")
        shape = _SHAPES[i % len(_SHAPES)]
        v = i // len(_SHAPES)  # the variant within the shape
        if shape == "setup":
            task = _gen_setup(r, i)
        elif shape == "report":
            task = _gen_report(r, v)
        elif shape == "file_fork":
            task = _gen_file_fork(r, v, seed)
        elif shape == "automation":
            task = _gen_automation(r, v)
        elif shape == "property_fork":
            task = _gen_property_fork(r, v, seed)
        elif shape == "skeleton":
            task = _gen_skeleton(r, i)
        else:
            task = _gen_fewest(r, v, seed)
        task = {"id": f"{DOMAIN}-{i + 1:03d}", **task}
        task["reference"] = solve(render(task, ENV), seed)  # before "reference" exists: it is not a template
        tasks.append(task)
    return tasks


# ---------------------------------------------------------------------------------------------
# Reference solver
# ---------------------------------------------------------------------------------------------


class _Plan:
    """Write calls planned on an in-process world (each call is checked as it is planned)."""

    def __init__(self, seed: int) -> None:
        self.world = RepositoryWorld(seed)
        self.calls: list[dict[str, Any]] = []
        self.tags: list[Any] = []

    def call(self, tool: str, tag: Any = None, **arguments: Any) -> Any:
        args = {k: v for k, v in arguments.items() if v is not None}
        try:
            result = self.world.call(tool, copy.deepcopy(args))
        except BadRequest as exc:
            raise NotSolvable(f"the planned call {tool}({args}) is refused: {exc}") from None
        self.calls.append({"server": "github", "tool": tool, "arguments": args})
        self.tags.append(tag)
        return result


def _targets(task: dict[str, Any], seed: int) -> dict[str, Any]:
    """The account's repositories the task's evaluators name: name → ("create", None) or
    ("fork", "owner/name" of the source)."""
    from suites.mcp_universe.scorer.ops.github import fewest_issues_repo, repository_named

    world = build_world(seed)
    forks = any(c.get("tool") == "fork_repository" for c in task.get("cleanups") or [])
    refs = {
        f"{v['owner']}/{v['repo']}".lower(): f"{v['owner']}/{v['repo']}"
        for e in task["evaluators"]
        for v in [e.get("value")]
        if isinstance(v, dict) and "owner" in v and "repo" in v
    }
    out: dict[str, Any] = {}

    def add(name: str) -> None:
        if name in out:
            return
        if not forks:
            out[name] = ("create", None)
            return
        sources = [
            d["full_name"]
            for d in world["repos"].values()
            if d["name"].lower() == name.lower() and d["owner"] != ACCOUNT
        ]
        preferred = [s for s in sources if s.lower() in refs] or sources
        if not preferred:
            raise NotSolvable(f"no public repository named {name!r} to fork")
        out[name] = ("fork", preferred[0])

    for e in task["evaluators"]:
        op, a = e.get("op") or "", e.get("op_args")
        if op == "github.check_repository":
            owner, _, name = repository_named(a).partition("/")
            if owner.lower() == ACCOUNT.lower():
                add(name)
        elif op in (
            "github.check_repository_with_fewest_issues",
            "github.check_file_content_with_fewest_issues",
        ):
            best = fewest_issues_repo(world, a["repos"], a["issue_state"])
            if isinstance(best, str):
                raise NotSolvable(best)
            out.setdefault(best[1], ("fork", a["repos"][best[0]]))
        elif isinstance(a, dict) and str(a.get("owner", "")).lower() == ACCOUNT.lower() and "repo" in a:
            add(a["repo"])
    return out


def _report_text(seed: int, a: dict[str, Any]) -> str:
    from suites.mcp_universe.scorer.ops.github import ground_truth_issue_counts

    truth = ground_truth_issue_counts(
        build_world(seed), a["search_repo_owner"], a["search_repo_name"], a["issue_state"], a["issue_labels"]
    )
    if a["file_type"] == "json":
        return json.dumps(truth, indent=2) + "\n"
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(a["csv_columns"])
    writer.writerows(truth.items())
    return buf.getvalue()


def _link_line(i: int, s: str) -> str:
    if s.startswith(_WEB + "/"):
        return f"{i}. related project [{s.rstrip('/').rsplit('/', 1)[-1]}]({s})"
    return s


def _files(task: dict[str, Any], seed: int, plan: _Plan) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(repo, branch, path) → {"text", "exact": evaluator indices fixing it, "include": {index:
    [substrings]}} for every file an evaluator wants written."""
    from suites.mcp_universe.scorer.ops.github import fewest_issues_repo

    world = build_world(seed)
    want: dict[tuple[str, str, str], dict[str, Any]] = {}

    def slot(repo: str, branch: str | None, path: str) -> dict[str, Any]:
        return want.setdefault(
            (repo, branch or "main", path.strip("/")), {"text": None, "exact": [], "include": {}}
        )

    for idx, e in enumerate(task["evaluators"]):
        op, a, value = e.get("op") or "", e.get("op_args"), e.get("value")
        if op == "github.check_file_content":
            s = slot(a["repo"], a.get("branch"), a["path"])
            if isinstance(value, dict):
                text = file_at(world, value["owner"], value["repo"], value["path"], value.get("branch"))
                if text is None:
                    raise NotSolvable(f"evaluator {idx}: the reference file {value} does not exist")
            else:
                text = value
            s["text"] = text
            s["exact"].append(idx)
        elif op == "github.file_content_include":
            parts = [value] if isinstance(value, str) else list(value or [])
            slot(a["repo"], a.get("branch"), a["path"])["include"][idx] = parts
        elif op == "github.check_file_content_and_issue_count":
            s = slot(a["repo"], a.get("branch"), a["path"])
            s["text"] = _report_text(seed, a)
            s["exact"].append(idx)
        elif op == "github.check_file_content_with_fewest_issues":
            best = fewest_issues_repo(world, a["repos"], a["issue_state"])
            slot(best[1], a.get("branch"), a["path"])["include"][idx] = [a["file_content"][best[0]]]
    for (repo, branch, path), s in want.items():
        if s["text"] is None:  # only substrings required: keep what is there (a fork's README), add them
            current = file_at(plan.world.state, ACCOUNT, repo, path, branch)
            data = find_repo(plan.world.state, ACCOUNT, repo)
            base = current if current is not None and data is not None and data["fork"] else ""
            parts = [p for ps in s["include"].values() for p in ps]
            copied = _COPIED.match(parts[0]) if parts and not base else None
            if copied:  # "# copied from owner/repo" heading a copy of that repository's file of this name
                source = _find_file(world, copied["owner"], copied["repo"], path.rsplit("/", 1)[-1])
                base = parts[0] + "\n" + source if source is not None else ""
            lines = [base.rstrip("\n")] if base else []
            n = 0
            for parts in s["include"].values():
                for part in parts:
                    if part not in "\n".join(lines):
                        n += part.startswith(_WEB + "/")
                        lines.append(_link_line(n, part))
            s["text"] = "\n\n".join(lines) + "\n"
        else:
            for idx, parts in s["include"].items():
                for part in parts:
                    if part not in s["text"]:
                        raise NotSolvable(
                            f"evaluator {idx} wants {part!r} in {repo}/{branch}/{path}, which another "
                            "evaluator fixes to a text without it"
                        )
    return want


_COPIED = re.compile(r"^# copied from (?P<owner>[\w.-]+)/(?P<repo>[\w.-]+)$")


def _find_file(world: dict[str, Any], owner: str, repo: str, name: str) -> str | None:
    data = find_repo(world, owner, repo)
    files = data["branches"][data["default_branch"]]["files"] if data else {}
    return next((t for p, t in files.items() if p.rsplit("/", 1)[-1] == name), None)


SOLVED_OPS = frozenset(
    {
        "github.check_repository",
        "github.check_branches_exist",
        "github.check_file_content",
        "github.check_file_not_exist",
        "github.check_pull_request",
        "github.check_file_content_and_issue_count",
        "github.file_content_include",
        "github.check_repository_with_fewest_issues",
        "github.check_file_content_with_fewest_issues",
        "github.check_number_of_issues",
    }
)
"""The evaluator ops :func:`solve` can satisfy: upstream's ten ``github.*`` ops."""


def _issue_plan(task: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [
        (i, e) for i, e in enumerate(task["evaluators"]) if e.get("op") == "github.check_number_of_issues"
    ]


def solve(task: dict[str, Any], seed: int) -> dict[str, Any]:
    """The reference of a rendered task of this domain (contract in
    :mod:`suites.mcp_universe.data.domains`): write calls on server ``github``, a short answer, and a
    one-argument mistake with the evaluator indices it fails.

    Raises:
        NotSolvable: an evaluator op this solver cannot satisfy, or a planned call the world
            refuses (the message names it).
    """
    for i, e in enumerate(task.get("evaluators") or []):
        if e.get("op") not in SOLVED_OPS:
            raise NotSolvable(f"evaluator {i}: op {e.get('op')!r} is not a repository_management op")
        if "{{" in json.dumps(e.get("op_args")):
            raise NotSolvable("the task is not rendered: render it with ENV first")
    plan = _Plan(seed)
    targets = _targets(task, seed)
    branches: dict[str, list[str]] = {name: [] for name in targets}
    for e in task["evaluators"]:
        a = e.get("op_args")
        if not isinstance(a, dict) or a.get("repo") not in branches:
            continue
        for b in [*(a.get("branches") or []), a.get("branch"), a.get("base"), a.get("head")]:
            if b and b not in branches[a["repo"]]:
                branches[a["repo"]].append(b)
    # 1. repositories and branches
    for name, (how, source) in targets.items():
        if how == "fork":
            owner, repo = source.split("/", 1)
            plan.call("fork_repository", ("repo", name), owner=owner, repo=repo)
        else:
            plan.call("create_repository", ("repo", name), name=name, autoInit=True, description=None)
            for b in branches[name]:
                if b != "main":
                    plan.call(
                        "create_branch",
                        ("branch", name, b),
                        owner=ACCOUNT,
                        repo=name,
                        branch=b,
                        from_branch="main",
                    )
    # 2. files, one commit per branch
    want = _files(task, seed, plan)
    by_branch: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
    for (repo, branch, path), s in want.items():
        if file_at(plan.world.state, ACCOUNT, repo, path, branch) != s["text"]:
            by_branch.setdefault((repo, branch), []).append((path, s))
    for (repo, branch), items in sorted(
        by_branch.items(), key=lambda kv: (kv[0][0], kv[0][1] != "main", kv[0][1])
    ):
        if len(items) == 1:
            path, s = items[0]
            old = file_at(plan.world.state, ACCOUNT, repo, path, branch)
            plan.call(
                "create_or_update_file",
                ("file", repo, branch, path),
                owner=ACCOUNT,
                repo=repo,
                path=path,
                content=s["text"],
                message=f"Add {path}",
                branch=branch,
                sha=blob_sha(old) if old is not None else None,
            )
        else:
            plan.call(
                "push_files",
                ("files", repo, branch),
                owner=ACCOUNT,
                repo=repo,
                branch=branch,
                files=[{"path": p, "content": s["text"]} for p, s in items],
                message=f"Add {len(items)} files",
            )
    # 3. pull requests
    for idx, e in enumerate(task["evaluators"]):
        if e.get("op") == "github.check_pull_request":
            a, v = (
                e["op_args"],
                {
                    **(e.get("value") or {}),
                    **{k: e["op_args"][k] for k in ("title", "body") if k in e["op_args"]},
                },
            )
            plan.call(
                "create_pull_request",
                ("pr", idx),
                owner=a["owner"],
                repo=a["repo"],
                title=v.get("title") or "Update",
                head=a["head"],
                base=a["base"],
                body=v.get("body"),
            )
    # 4. issues, each followed by what the "bot" does
    for idx, e in _issue_plan(task):
        a = e["op_args"]
        comment = a.get("comments", a.get("comment"))
        for _ in range(int(e.get("value") or 0)):
            issue = plan.call(
                "create_issue",
                ("issue", idx),
                owner=a["owner"],
                repo=a["repo"],
                title=a.get("title") or "Sample issue",
                labels=a.get("labels"),
                body="Test issue for the automation.",
            )
            if comment:
                plan.call(
                    "add_issue_comment",
                    ("comment", idx),
                    owner=a["owner"],
                    repo=a["repo"],
                    issue_number=issue["number"],
                    body=comment.replace("[repo owner name]", a["owner"]),
                )
            if a.get("state") == "closed":
                plan.call(
                    "update_issue",
                    ("close", idx),
                    owner=a["owner"],
                    repo=a["repo"],
                    issue_number=issue["number"],
                    state="closed",
                )
    made = ", ".join(f"{ACCOUNT}/{n}" for n in targets)
    answer = f"Done: {made} set up as asked ({len(plan.calls)} changes)."
    return {"calls": plan.calls, "answer": answer, "mistake": _mistake(task, plan, seed, answer)}


def _mistake(task: dict[str, Any], plan: _Plan, seed: int, answer: str) -> dict[str, Any]:
    """One call dropped or one argument changed, and the evaluators that then fail (chosen by
    construction; the tests replay it)."""
    evs = task["evaluators"]
    calls = plan.calls
    options: list[tuple[list[dict[str, Any]], list[int]]] = []

    def changed(i: int, **args: Any) -> list[dict[str, Any]]:
        out = copy.deepcopy(calls)
        out[i]["arguments"].update(args)
        return out

    for i, tag in enumerate(plan.tags):
        if tag and tag[0] == "pr":
            options.append((changed(i, title=calls[i]["arguments"]["title"] + " (draft)"), [tag[1]]))
            break
    for i, tag in enumerate(plan.tags):
        if tag and tag[0] == "issue":
            options.append((changed(i, title=calls[i]["arguments"]["title"] + " (copy)"), [tag[1]]))
            break
    for i, tag in enumerate(plan.tags):
        if not tag or tag[0] not in ("file", "files"):
            continue
        repo, branch = tag[1], tag[2]
        entries = [calls[i]["arguments"]] if tag[0] == "file" else calls[i]["arguments"]["files"]
        for j, f in enumerate(entries):
            path = f["path"]
            fails_exact = [
                k
                for k, e in enumerate(evs)
                if _names(e, repo, branch, path)
                and e["op"] in ("github.check_file_content", "github.check_file_content_and_issue_count")
            ]
            includes = [
                k
                for k, e in enumerate(evs)
                if _names(e, repo, branch, path)
                and e["op"] in ("github.file_content_include", "github.check_file_content_with_fewest_issues")
            ]
            if fails_exact and evs[fails_exact[0]]["op"] == "github.check_file_content_and_issue_count":
                text = _bump_count(f["content"], evs[fails_exact[0]]["op_args"])
            elif fails_exact:
                text = f["content"].rstrip("\n") + "\n# edited\n"
            elif includes:
                k = includes[-1]
                parts = _include_parts(evs[k], task, seed)
                text = f["content"]
                for part in parts:
                    text = text.replace(part, "")
                fails = [
                    m for m in includes if any(p not in text for p in _include_parts(evs[m], task, seed))
                ]
                options.append((_set_content(calls, i, j, tag[0], text), fails))
                continue
            else:
                continue
            options.append((_set_content(calls, i, j, tag[0], text), fails_exact))
    for i, tag in enumerate(plan.tags):
        if tag and tag[0] == "repo" and calls[i]["tool"] == "fork_repository" and len(calls) == 1:
            fails = [k for k, e in enumerate(evs) if e["op"] != "github.check_file_not_exist"]
            options.append(([c for n, c in enumerate(calls) if n != i], fails))
    if not options:
        raise NotSolvable("no single-call mistake is defined for this task's evaluators")
    digest = hashlib.sha256(
        json.dumps([seed, task.get("question", ""), evs], sort_keys=True).encode()
    ).digest()
    m_calls, fails = options[digest[0] % len(options)]
    return {"calls": m_calls, "answer": answer, "fails": sorted(set(fails))}


def _names(e: dict[str, Any], repo: str, branch: str, path: str) -> bool:
    a = e.get("op_args")
    if not isinstance(a, dict) or a.get("path") != path or (a.get("branch") or "main") != branch:
        return False
    if e["op"] == "github.check_file_content_with_fewest_issues":
        return True
    return a.get("repo") == repo


def _include_parts(e: dict[str, Any], task: dict[str, Any], seed: int) -> list[str]:
    if e["op"] == "github.check_file_content_with_fewest_issues":
        from suites.mcp_universe.scorer.ops.github import fewest_issues_repo

        a = e["op_args"]
        best = fewest_issues_repo(build_world(seed), a["repos"], a["issue_state"])
        return [a["file_content"][best[0]]]
    v = e.get("value")
    return [v] if isinstance(v, str) else list(v or [])


def _set_content(calls: list[dict[str, Any]], i: int, j: int, kind: str, text: str) -> list[dict[str, Any]]:
    out = copy.deepcopy(calls)
    if kind == "file":
        out[i]["arguments"]["content"] = text
    else:
        out[i]["arguments"]["files"][j]["content"] = text
    return out


def _bump_count(text: str, op_args: dict[str, Any]) -> str:
    """The report with its first count one higher (CSV or JSON); a report with no repository
    (the search finds none) gets one, ``<search_repo_owner>/<search_repo_name>`` with count 1.
    Either way the report no longer matches the issue counts."""
    stripped = text.strip()
    extra = f"{op_args['search_repo_owner']}/{op_args['search_repo_name']}"
    if stripped.startswith("{"):
        data = json.loads(stripped)
        if data:
            first = next(iter(data))
            data[first] += 1
        else:
            data[extra] = 1
        return json.dumps(data, indent=2) + "\n"
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) > 1:
        rows[1][1] = str(int(rows[1][1]) + 1)
    else:
        rows.append([extra, "1"])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()
