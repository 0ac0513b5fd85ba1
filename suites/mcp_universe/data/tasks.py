"""MCP-Universe task files (reference §1.3): loading, validation, and our generated tasks.

One JSON file per task, as upstream writes them: ``category``, ``question``, ``output_format``
(optional: a JSON skeleton the answer must follow), ``mcp_servers`` (``[{"name": ...}]``),
``use_specified_server`` (the task's servers replace the domain's), ``evaluators``
(``[{func, op, value, op_args, desc}]``), ``cleanups`` (``[{server, tool, cleanup_func,
cleanup_args}]``). Our generated tasks add ``id`` and ``reference`` (the domain solver's
calls and answer, see :mod:`suites.mcp_universe.data.domains`). ``question``, ``value`` and
``op_args`` are templates rendered with :data:`TEMPLATE_ENV`.

Everything a task file can get wrong is found when it is loaded (collection), with the file,
the field and the fix: a missing or mistyped field, a task with no evaluator, a pipeline
function or op we do not know, a server no local server plays. A well-formed file that needs a
server the suite does not offer (upstream's notion, playwright, weather, date, blender) raises
:class:`NotOffered`. :func:`load_task_dir` with ``keep_errors`` turns each such file into a task
that is skipped (not offered) or errors (a bad file) alone, with its reason.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import suites.mcp_universe.scorer.ops  # noqa: F401  (importing it registers the domain ops in OPS)
from suites.mcp_universe.env.servers import SERVER_MODULES
from suites.mcp_universe.scorer.evaluator import OPS, EvaluatorSpecError, parse_func, render

__all__ = [
    "AGENT_OF",
    "DOMAINS",
    "NOT_OFFERED_SERVERS",
    "OP_DOMAIN",
    "UNKNOWN_DOMAIN",
    "NotOffered",
    "ROUTED_DOMAINS",
    "TEMPLATE_ENV",
    "UPSTREAM_COUNTS",
    "domain_module",
    "generated_task_ids",
    "generated_tasks",
    "load_task_dir",
    "load_task_file",
    "seeded_sample",
    "task_servers",
]

DOMAINS: tuple[str, ...] = (
    "financial_analysis",
    "location_navigation",
    "web_search",
    "repository_management",
)
"""The domains we run, in report order (upstream's 3d_design and browser_automation need
Blender and live browsers and are not offered)."""
ROUTED_DOMAINS: tuple[str, ...] = ("financial_analysis", "location_navigation", "web_search")
"""Domains whose ``pass_rate`` feeds M2 (routing.yaml); repository_management is reported only."""
AGENT_OF: dict[str, str] = {
    "financial_analysis": "function_call",
    "location_navigation": "react",
    "repository_management": "react",
    "web_search": "react",
}
"""Each domain's agent in upstream's benchmark configs (reference §1.1)."""
OP_DOMAIN: dict[str, str] = {
    "yfinance": "financial_analysis",
    "google_maps": "location_navigation",
    "github": "repository_management",
    "google_search": "web_search",
}
"""Op prefix → the domain whose tasks use it (how a task file outside a domain folder is placed)."""
UPSTREAM_COUNTS: dict[str, int] = {
    "financial_analysis": 40,
    "location_navigation": 45,
    "web_search": 55,
    "repository_management": 33,
}
"""Tasks per domain in upstream's benchmark (reference §1.1): the deep profile's sizes."""
NOT_OFFERED_SERVERS: dict[str, str] = {
    "playwright": "a live browser",
    "notion": "a Notion workspace",
    "weather": "the live weather.gov service",
    "date": "the real clock",
    "blender": "a Blender install",
}
"""Upstream's servers the suite does not offer (a task file naming one, or using its ``<name>.*``
ops, is skipped with this reason), and what each would need."""
UNKNOWN_DOMAIN = "unknown"
"""The category of a task file that cannot be loaded and whose domain cannot be told (it errors)."""
TEMPLATE_ENV: dict[str, str] = {"GITHUB_PERSONAL_ACCOUNT_NAME": "egi-agent"}
"""Template variables of upstream task files → our values (the local repository server's
authenticated account)."""

_KEYS = {"category", "question", "output_format", "mcp_servers", "use_specified_server", "evaluators",
         "cleanups", "id", "domain", "reference"}  # fmt: skip
_EVAL_KEYS = {"func", "op", "value", "op_args", "desc", "kind"}
_CLEANUP_KEYS = {"server", "tool", "cleanup_func", "cleanup_args"}
_ID_BAD = re.compile(r"[^A-Za-z0-9_.:-]+")


class NotOffered(ValueError):
    """A well-formed task file needs a server (or that server's ops) the suite does not offer
    (:data:`NOT_OFFERED_SERVERS`): it cannot run here. The message names the file, the field
    and the server."""


T = TypeVar("T")


def seeded_sample(items: Sequence[T], n: int | None, seed: int, salt: str) -> list[T]:
    """``n`` of ``items`` drawn without replacement by ``random.Random(f"mcp_universe|{salt}|{seed}")``
    (``Random.sample`` over the positions), kept in their original order; all of them when
    ``n`` is None or at least ``len(items)``. Deterministic for (items, n, seed, salt), across
    runs and processes.
    """
    if n is None or n >= len(items):
        return list(items)
    chosen = set(random.Random(f"mcp_universe|{salt}|{seed}").sample(range(len(items)), n))
    return [x for i, x in enumerate(items) if i in chosen]


def domain_module(domain: str) -> Any:
    """The module of ``domain`` (``suites.mcp_universe.data.domains.<domain>``).

    Raises:
        KeyError: unknown domain.
    """
    import importlib

    if domain not in DOMAINS:
        raise KeyError(f"unknown MCP-Universe domain {domain!r}; known: {', '.join(DOMAINS)}")
    return importlib.import_module(f"suites.mcp_universe.data.domains.{domain}")


def task_servers(task: dict[str, Any], domain: str) -> tuple[str, ...]:
    """The upstream server names the agent gets for ``task``: the task's own
    ``mcp_servers`` when ``use_specified_server`` is true (or the domain names none),
    else the domain's (upstream's agent-level servers)."""
    own = tuple(s["name"] for s in task.get("mcp_servers") or [])
    default = tuple(domain_module(domain).SERVERS)
    if own and (task.get("use_specified_server") or not default):
        return own
    return default


def _fail(path: Path | str, where: str, problem: str, fix: str) -> ValueError:
    return ValueError(f"{path}: {where}: {problem}; fix: {fix}")


def _check_evaluator(path: Path | str, i: int, ev: Any) -> None:
    where = f"evaluators[{i}]"
    if not isinstance(ev, dict):
        raise _fail(path, where, f"is {type(ev).__name__}, not an object", 'write {"func": ..., "op": ...}')
    unknown = set(ev) - _EVAL_KEYS
    if unknown:
        raise _fail(path, where, f"unknown field(s) {sorted(unknown)}", f"use only {sorted(_EVAL_KEYS)}")
    if not isinstance(ev.get("func"), str):
        raise _fail(
            path, f"{where}.func", "missing or not a string", 'give a pipeline such as "json -> get(key)"'
        )
    try:
        parse_func(ev["func"])
    except EvaluatorSpecError as exc:
        raise _fail(path, f"{where}.func", str(exc), "use json, get(key), len, foreach, raw, list") from None
    op = ev.get("op") or ""
    if not isinstance(op, str):
        raise _fail(
            path, f"{where}.op", f"is {type(op).__name__}, not a string", "give an op name or leave it out"
        )
    if op and op not in OPS and op.split(".")[0] in NOT_OFFERED_SERVERS:
        server = op.split(".")[0]
        raise NotOffered(f"{path}: {where}.op: {op!r} is an op of upstream's {server} server, which the "
                         f"suite does not offer (it needs {NOT_OFFERED_SERVERS[server]}); fix: leave this "
                         "task file out")  # fmt: skip
    if op and op not in OPS:
        near = sorted(k for k in OPS if k.split(".")[0] == op.split(".")[0])
        hint = f"known {op.split('.')[0]} ops: {', '.join(near)}" if near else \
            f"known prefixes: {', '.join(sorted({k.split('.')[0] for k in OPS if '.' in k}))}"  # fmt: skip
        raise _fail(path, f"{where}.op", f"unknown op {op!r}",
                    f"use an op the suite implements ({hint}), or leave this task file out (the suite "
                    "offers no notion, playwright, weather or blender server)")  # fmt: skip
    kind = ev.get("kind")
    if kind is not None and kind not in ("format", "static", "dynamic"):
        raise _fail(path, f"{where}.kind", f"unknown kind {kind!r}", "use format, static or dynamic")


def load_task_file(
    path: Path | str, data: Any = None, domain: str | None = None
) -> tuple[str, dict[str, Any]]:
    """Load and validate one task file.

    Args:
        path: the file (named in every error).
        data: its parsed content when already read (generated tasks); None reads the file.
        domain: the domain when the caller knows it (the file's folder); None infers it
            from the ops' prefixes, then the servers.

    Returns:
        ``(domain, task)`` where task is the file's object with ``id`` (the file's stem,
        made node-id safe, unless it has one) and templates rendered with :data:`TEMPLATE_ENV`.

    Raises:
        ValueError: a bad file; the message names the file, the field and the fix.
    """
    if data is None:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the task file: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise _fail(path, f"line {exc.lineno} column {exc.colno}", f"not JSON ({exc.msg})",
                        "write one JSON object per task file") from None  # fmt: skip
    if not isinstance(data, dict):
        raise _fail(path, "top level", f"is {type(data).__name__}, not an object", "write one JSON object")
    unknown = set(data) - _KEYS
    if unknown:
        raise _fail(path, "top level", f"unknown field(s) {sorted(unknown)}", f"use only {sorted(_KEYS)}")
    q = data.get("question")
    if not isinstance(q, str) or not q.strip():
        raise _fail(path, "question", "missing or empty", "give the user's request as text")
    fmt = data.get("output_format")
    if fmt is not None and not isinstance(fmt, (dict, list, str)):
        raise _fail(
            path, "output_format", f"is {type(fmt).__name__}", "give a JSON skeleton (object) or text"
        )
    evs = data.get("evaluators")
    if not isinstance(evs, list) or not evs:
        raise _fail(path, "evaluators", "missing or empty (a task with no evaluator always passes)",
                    "give at least one {\"func\", \"op\"} evaluator")  # fmt: skip
    for i, ev in enumerate(evs):
        _check_evaluator(path, i, ev)
    servers = data.get("mcp_servers") or []
    if not isinstance(servers, list) or not all(isinstance(s, dict) and isinstance(s.get("name"), str)
                                                for s in servers):  # fmt: skip
        raise _fail(path, "mcp_servers", 'must be a list of {"name": ...}', 'write [{"name": "github"}]')
    for s in servers:
        if s["name"] in NOT_OFFERED_SERVERS:
            raise NotOffered(f"{path}: mcp_servers: no local server plays {s['name']!r} (upstream's "
                             f"{s['name']} server needs {NOT_OFFERED_SERVERS[s['name']]}); fix: use "
                             f"servers the suite provides: {', '.join(SERVER_MODULES)}")  # fmt: skip
        if s["name"] not in SERVER_MODULES:
            raise _fail(path, "mcp_servers", f"no local server plays {s['name']!r}",
                        f"use servers the suite provides: {', '.join(SERVER_MODULES)}")  # fmt: skip
    cleanups = data.get("cleanups") or []
    if not isinstance(cleanups, list):
        raise _fail(path, "cleanups", "must be a list", 'write [{"server", "tool", "cleanup_func", ...}]')
    for i, c in enumerate(cleanups):
        if (
            not isinstance(c, dict)
            or not {"server", "tool", "cleanup_func"} <= set(c)
            or set(c) - _CLEANUP_KEYS
        ):
            raise _fail(path, f"cleanups[{i}]", "needs exactly server, tool, cleanup_func (and cleanup_args)",
                        "follow upstream's cleanup shape")  # fmt: skip
    inferred = _op_domain(path, data)
    named = data.get("domain")
    if domain and named and named != domain:
        raise _fail(path, "domain", f"says {named!r} but the file is under a {domain!r} folder",
                    "remove the field or move the file")  # fmt: skip
    if (domain or named) and inferred and inferred != (domain or named):
        raise _fail(path, "evaluators", f"use {inferred} ops but the task is filed as {domain or named!r}",
                    f"move the file under a {inferred!r} folder")  # fmt: skip
    domain = domain or named or inferred or _folder_domain(path)
    if domain not in DOMAINS:
        raise _fail(path, "domain", f"unknown domain {domain!r}", f"use one of {', '.join(DOMAINS)}")
    task = {k: v for k, v in data.items() if k not in ("question", "evaluators")}
    task["question"] = render(q, TEMPLATE_ENV)
    task["evaluators"] = [{**ev, "value": render(ev.get("value"), TEMPLATE_ENV),
                           "op_args": render(ev.get("op_args"), TEMPLATE_ENV)} for ev in evs]  # fmt: skip
    task["id"] = str(data.get("id") or _ID_BAD.sub("_", Path(path).stem))
    if "reference" not in data:
        task["source"] = str(path)
    return domain, task


def _op_domain(path: Path | str, data: dict[str, Any]) -> str | None:
    """The one domain the file's domain ops belong to, None when it uses none.

    Raises:
        ValueError: ops of several domains.
    """
    prefixes = {(ev.get("op") or "").split(".")[0] for ev in data["evaluators"]} & set(OP_DOMAIN)
    domains = {OP_DOMAIN[p] for p in prefixes}
    if len(domains) > 1:
        raise _fail(path, "evaluators", f"ops of several domains ({', '.join(sorted(domains))})",
                    "give each task the ops of one domain")  # fmt: skip
    return domains.pop() if domains else None


def _folder_domain(path: Path | str) -> str:
    """The domain a folder of the file's path is named after.

    Raises:
        ValueError: none is.
    """
    for folder in Path(path).parts[::-1]:
        if folder in DOMAINS:
            return folder
    raise _fail(
        path,
        "domain",
        "cannot tell the domain (no domain op and no domain folder)",
        f"put the file under a folder named after its domain ({', '.join(DOMAINS)})",
    )


def load_task_dir(root: Path | str, keep_errors: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """Every ``*.json`` task file under ``root`` (recursively, sorted by path), as
    :func:`load_task_file` loads them; a file in a folder named after a domain is of that
    domain. Ids are made unique by prefixing the domain when two files share a stem.

    Args:
        keep_errors: False: a bad file raises. True: a file that fails to load becomes a task
            of its own (``{"id", "source"}`` and ``not_runnable``: the reason, when it is
            :class:`NotOffered`, else ``load_error``: the message naming file, field and fix),
            of its folder's domain, else of its ops' domain, else :data:`UNKNOWN_DOMAIN`; the
            other files load as usual.

    Raises:
        ValueError: ``root`` is not a folder or holds no task file, or (without
            ``keep_errors``) a bad file.
    """
    root = Path(root)
    if not root.is_dir():
        raise ValueError(
            f"{root}: mcp_universe.task_dir is not a folder; fix: give the folder holding "
            "the task files (e.g. upstream's mcpuniverse/benchmark/configs/test/financial_analysis)"
        )
    files = sorted(root.rglob("*.json"))
    if not files:
        raise ValueError(
            f"{root}: no *.json task file in this folder or below; fix: point "
            "mcp_universe.task_dir at a folder of MCP-Universe task files"
        )
    out = []
    for f in files:
        folder = next((p for p in f.relative_to(root).parts[:-1][::-1] if p in DOMAINS), None)
        if folder is None and root.name in DOMAINS:
            folder = root.name
        try:
            out.append(load_task_file(f, domain=folder))
        except ValueError as exc:
            if not keep_errors:
                raise
            key = "not_runnable" if isinstance(exc, NotOffered) else "load_error"
            task = {"id": _ID_BAD.sub("_", f.stem), "source": str(f), key: str(exc)}
            out.append((folder or _guess_domain(f), task))
    seen: dict[str, int] = {}
    for _, t in out:
        seen[t["id"]] = seen.get(t["id"], 0) + 1
    return [(d, {**t, "id": f"{d}.{t['id']}"} if seen[t["id"]] > 1 else t) for d, t in out]


def _guess_domain(path: Path) -> str:
    """The domain of a file that did not load: its ops' domain when it is a JSON object whose
    evaluators name domain ops of one domain, else :data:`UNKNOWN_DOMAIN`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        evs = data.get("evaluators") if isinstance(data, dict) else None
        ops = {str(e.get("op") or "").split(".")[0] for e in evs or [] if isinstance(e, dict)}
    except (OSError, ValueError, TypeError, AttributeError):
        return UNKNOWN_DOMAIN
    domains = {OP_DOMAIN[p] for p in ops if p in OP_DOMAIN}
    return domains.pop() if len(domains) == 1 else UNKNOWN_DOMAIN


def generated_tasks(domain: str, seed: int, count: int | None = None) -> list[dict[str, Any]]:
    """Our own tasks of ``domain`` for ``seed`` (validated like a task file).

    Args:
        count: how many; None is the domain's upstream-sized default.

    Raises:
        ValueError: a generated task fails validation (a bug in the generator).
    """
    module = domain_module(domain)
    n = count if count is not None else UPSTREAM_COUNTS[domain]
    out = []
    for t in module.generate_tasks(seed, n):
        _, task = load_task_file(f"<generated {domain} task {t.get('id')}>", data=t, domain=domain)
        out.append(task)
    ids = [t["id"] for t in out]
    if ids != generated_task_ids(domain, n):  # the suite's task_index tells these without generating
        raise ValueError(f"{domain}: generated ids {ids[:3]}... are not generated_task_ids' "
                         f"{generated_task_ids(domain, n)[:3]}... (a bug in the generator)")  # fmt: skip
    return out


_FIRST_ID_NUMBER: dict[str, int] = {"location_navigation": 0}
"""The number of a domain's first generated task where it is not 1 (location_navigation
counts from 0)."""


def generated_task_ids(domain: str, count: int | None = None) -> list[str]:
    """The ids :func:`generated_tasks` returns for ``domain`` and ``count``, in order, for every
    seed, told without generating (``<domain>-NNN``; a generator gives exactly ``count`` tasks
    or raises). :func:`generated_tasks` checks its tasks against this list.

    Raises:
        KeyError: unknown domain.
    """
    n = count if count is not None else UPSTREAM_COUNTS[domain]
    first = _FIRST_ID_NUMBER.get(domain, 1)
    return [f"{domain}-{i + first:03d}" for i in range(n)]
