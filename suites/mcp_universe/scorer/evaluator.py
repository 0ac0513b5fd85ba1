"""MCP-Universe's evaluator language (reference §1.5): a ``->`` pipeline applied to the agent's
final answer, then an op applied to every leaf.

An evaluator is ``{"func", "op", "value", "op_args", "desc"}``:

- ``func`` is a chain of pipeline functions separated by ``->``: ``json`` (strip surrounding
  whitespace and backticks and a leading ``json`` tag, then parse), ``get(key)`` (dict lookup,
  a missing key gives null; a non-dict is an error), ``len`` (length of a list), ``foreach``
  (fan a list out into one branch per element), ``raw`` (the answer text as it is), ``list``
  (wrap in a one-element list). Every function maps over the branches made by ``foreach``,
  so ``json -> get(routes) -> foreach -> get(stops) -> len`` gives one number per route.
- ``op(leaf, value, op_args)`` is applied to **every leaf**; the evaluator passes only if all
  leaves pass, and a failure carries the first failing leaf's reason. An empty ``op`` passes
  iff the pipeline ran (a format check). A JSON decoding error or an error raised by the
  answer's shape (a missing key, a wrong type) fails the evaluator with its reason.
- Built-in ops: ``=``, ``<``, ``<=``, ``>``, ``>=``, ``in`` (leaf ∈ value), ``contain``
  (value ∈ leaf). Domain ops (``yfinance.*``, ``google_maps.*``, ``github.*``,
  ``google_search.*``) live in :mod:`suites.mcp_universe.scorer.ops` and register themselves with
  :func:`domain_op`.

Each op has a *kind* (paper §4: format / static / dynamic; upstream's task files leave it
implicit): an empty op is ``format``; the built-in comparisons are ``static``; a domain op
declares its own (most are ``dynamic``: their truth is recomputed from the local data at
evaluation time).

What is not the answer's fault is never a failed evaluator: an LLM judge that gives no verdict
(:class:`~pytest_egi.judges.JudgeError`), a provider error, or any exception other than the
answer-shape errors listed in :data:`ANSWER_ERRORS` propagates, and the item errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "ANSWER_ERRORS",
    "OPS",
    "PIPELINE_FUNCTIONS",
    "AnswerError",
    "EvalContext",
    "EvaluatorResult",
    "EvaluatorSpecError",
    "Kind",
    "Op",
    "decode_json",
    "domain_op",
    "evaluate",
    "evaluator_kind",
    "parse_func",
    "render",
    "run_pipeline",
]

Kind = Literal["format", "static", "dynamic"]
KINDS: tuple[Kind, ...] = ("format", "static", "dynamic")


class EvaluatorSpecError(ValueError):
    """An evaluator the language cannot run (unknown function or op, bad arguments): a usage
    error found when the task is loaded, never a failed evaluator."""


class AnswerError(Exception):
    """Raised by an op when the answer is malformed in a way it names (the evaluator fails with
    this message as its reason)."""


ANSWER_ERRORS: tuple[type[BaseException], ...] = (
    AnswerError,
    json.JSONDecodeError,
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    AssertionError,
    ZeroDivisionError,
)
"""Exceptions that mean "the answer does not have the shape the evaluator reads" (upstream
fails the evaluator on any exception; we keep that for these and let every other exception,
an infrastructure fault, make the item an error)."""


@dataclass
class EvalContext:
    """What a domain op may read besides the answer.

    Attributes:
        seed: the seed of the local worlds (deterministic servers rebuild their data from it).
        state: post-trial snapshots of stateful servers, by upstream server name (``"github"``:
            what the agent changed in the repository server's state, a delta against the seeded
            base that :func:`~suites._common.mcp_servers.repository.state_view` turns back into
            the whole state). Ops read state from here,
            never from a live server, so scoring is pure and ``--rescore`` reproduces it.
        env: the template variables the task was rendered with
            (``GITHUB_PERSONAL_ACCOUNT_NAME`` ...).
        judge: an :class:`~pytest_egi.judges.LLMJudge` when ``--egi-judge-model`` is given,
            else None (ops that need one use their deterministic rule).
        notes: ops may record extra facts here (the judge's verdict text ...); kept in the
            task's details.
    """

    seed: int = 42
    state: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)
    judge: Any = None
    notes: dict[str, Any] = field(default_factory=dict)


OpFn = Callable[[Any, Any, Any, EvalContext], "tuple[bool, str]"]


@dataclass(frozen=True)
class Op:
    """One registered op: ``fn(leaf, value, op_args, ctx) -> (passed, reason)``."""

    name: str
    fn: OpFn
    kind: Kind


OPS: dict[str, Op] = {}
"""Every op by name (built-ins here; domain ops once :mod:`suites.mcp_universe.scorer.ops` is
imported, which the task loader :mod:`suites.mcp_universe.data.tasks`, and so the suite, does).
This module never imports the op modules (they import it to register): it looks ops up here
by name."""


def _origin(fn: Any) -> tuple[Any, ...]:
    """Where a function is defined (module, qualified name, file, first line)."""
    code = getattr(fn, "__code__", None)
    where = (getattr(code, "co_filename", None), getattr(code, "co_firstlineno", None))
    return (fn.__module__, fn.__qualname__, *where)


def _register(name: str, kind: Kind) -> Callable[[OpFn], OpFn]:
    if kind not in KINDS:
        raise ValueError(f"op {name!r}: kind must be one of {KINDS}, not {kind!r}")

    def deco(fn: OpFn) -> OpFn:
        old = OPS.get(name)
        # the same function again is its module imported anew (pytester's in-process runs drop
        # the modules a run imported, not this registry): it replaces itself
        if old is not None and _origin(old.fn) != _origin(fn):
            raise ValueError(f"op {name!r} is registered twice")
        OPS[name] = Op(name, fn, kind)
        return fn

    return deco


def domain_op(name: str, kind: Kind = "dynamic") -> Callable[[OpFn], OpFn]:
    """Register a domain op under its upstream dotted name (``yfinance.check_net_income``).

    The function gets ``(leaf, value, op_args, ctx)`` (the pipeline's leaf, the evaluator's
    ``value`` and ``op_args`` after template rendering, an :class:`EvalContext`) and returns
    ``(passed, reason)``, reason "" when passed. It may raise one of :data:`ANSWER_ERRORS`
    for a malformed answer.

    Raises:
        ValueError: the name is already registered or the kind is unknown.
    """
    if "." not in name:
        raise ValueError(f"domain op {name!r} must be dotted (<server>.<check>)")
    return _register(name, kind)


# ---------------------------------------------------------------------------------------------
# Pipeline functions
# ---------------------------------------------------------------------------------------------


class _Value:
    """One branch's value (upstream's ``FunctionResult``); plain lists of these are fan-outs."""

    __slots__ = ("v",)

    def __init__(self, v: Any) -> None:
        self.v = v


def decode_json(text: Any) -> Any:
    """Upstream's ``json`` step: strip whitespace and backticks, drop a leading ``json`` tag,
    parse. A dict or list passes through.

    Raises:
        json.JSONDecodeError: not JSON.
        TypeError: neither text nor a JSON value.
    """
    if isinstance(text, (dict, list)):
        return text
    if not isinstance(text, str):
        raise TypeError(f"`json` needs the answer text, got {type(text).__name__}")
    s = text.strip().strip("`").strip()
    if s.startswith("json"):
        s = s[4:].strip()
    return json.loads(s)


def _map(x: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(x, list):
        return [_map(y, fn) for y in x]
    return fn(x.v)


def _f_json(x: Any, args: list[str]) -> Any:
    return _map(x, lambda v: _Value(decode_json(v)))


def _f_get(x: Any, args: list[str]) -> Any:
    key = args[0]

    def get(v: Any) -> _Value:
        if not isinstance(v, dict):
            raise TypeError(f"get({key}): the value is {_type(v)}, not an object")
        return _Value(v.get(key))

    return _map(x, get)


def _f_len(x: Any, args: list[str]) -> Any:
    def length(v: Any) -> _Value:
        if not isinstance(v, list):
            raise TypeError(f"len: the value is {_type(v)}, not a list")
        return _Value(len(v))

    return _map(x, length)


def _f_foreach(x: Any, args: list[str]) -> Any:
    def fan(v: Any) -> list[_Value]:
        if not isinstance(v, list):
            raise TypeError(f"foreach: the value is {_type(v)}, not a list")
        return [_Value(y) for y in v]

    return _map(x, fan)


def _f_raw(x: Any, args: list[str]) -> Any:
    return _map(x, _Value)


def _f_list(x: Any, args: list[str]) -> Any:
    return _map(x, lambda v: _Value([v]))


PIPELINE_FUNCTIONS: dict[str, tuple[Callable[[Any, list[str]], Any], int]] = {
    "json": (_f_json, 0),
    "get": (_f_get, 1),
    "len": (_f_len, 0),
    "foreach": (_f_foreach, 0),
    "raw": (_f_raw, 0),
    "list": (_f_list, 0),
}
"""Pipeline function name → (function, number of arguments)."""

_CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?$", re.DOTALL)


def _type(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null",
            bool: "a boolean", int: "a number", float: "a number"}.get(type(v), type(v).__name__)  # fmt: skip


def parse_func(func: str) -> list[tuple[str, list[str]]]:
    """Parse ``"json -> get(routes) -> foreach -> len"`` into ``[(name, args), ...]``.

    Arguments are split on commas and stripped (upstream's rule), so keys are bare words.

    Raises:
        EvaluatorSpecError: empty pipeline, unknown function, or wrong number of arguments.
    """
    if not isinstance(func, str) or not func.strip():
        raise EvaluatorSpecError("`func` must be a non-empty pipeline such as 'json -> get(key)'")
    out: list[tuple[str, list[str]]] = []
    for item in (p.strip() for p in func.split("->")):
        if not item:
            continue
        m = _CALL.match(item)
        name = m.group(1) if m else item
        if m is None or name not in PIPELINE_FUNCTIONS:
            raise EvaluatorSpecError(
                f"unknown pipeline function {item!r} in {func!r}; known: {', '.join(PIPELINE_FUNCTIONS)}"
            )
        args = [a.strip() for a in m.group(2).split(",")] if m.group(2) is not None else []
        want = PIPELINE_FUNCTIONS[name][1]
        if len(args) != want:
            raise EvaluatorSpecError(f"{name} takes {want} argument(s), got {len(args)} in {func!r}")
        out.append((name, args))
    if not out:
        raise EvaluatorSpecError(f"`func` {func!r} names no pipeline function")
    return out


def run_pipeline(func: str | list[tuple[str, list[str]]], answer: Any) -> list[Any]:
    """Run ``func`` (the pipeline text, or its :func:`parse_func` steps) on the answer and
    return the leaves (one per branch, in order).

    Raises:
        EvaluatorSpecError: a bad pipeline.
        json.JSONDecodeError, TypeError: the answer does not fit the pipeline.
    """
    x: Any = _Value(answer)
    for name, args in parse_func(func) if isinstance(func, str) else func:
        x = PIPELINE_FUNCTIONS[name][0](x, args)
    leaves: list[Any] = []

    def flatten(y: Any) -> None:
        if isinstance(y, list):
            for z in y:
                flatten(z)
        else:
            leaves.append(y.v)

    flatten(x)
    return leaves


# ---------------------------------------------------------------------------------------------
# Built-in ops
# ---------------------------------------------------------------------------------------------


def _builtin(name: str, test: Callable[[Any, Any], bool], reason: str) -> None:
    def op(leaf: Any, value: Any, op_args: Any, ctx: EvalContext) -> tuple[bool, str]:
        if test(leaf, value):
            return True, ""
        return False, f"{reason} (output {leaf!r}, ground truth {value!r})"

    _register(name, "static")(op)


def _in(a: Any, b: Any) -> bool:
    if not isinstance(b, (str, list, tuple)):
        raise EvaluatorSpecError("op `in` needs a list or a string as `value`")
    return a in b


def _contain(a: Any, b: Any) -> bool:
    if not isinstance(a, (str, list, tuple)):
        raise TypeError(f"op `contain`: the output is {_type(a)}, not a list or a string")
    return b in a


_builtin("=", lambda a, b: a == b, "output is not equal to ground-truth")
_builtin("<", lambda a, b: a < b, "output is not less than ground-truth")
_builtin("<=", lambda a, b: a <= b, "output is not less than or equal to ground-truth")
_builtin(">", lambda a, b: a > b, "output is not greater than ground-truth")
_builtin(">=", lambda a, b: a >= b, "output is not greater than or equal to ground-truth")
_builtin("in", _in, "ground-truth doesn't contain output")
_builtin("contain", _contain, "output doesn't contain ground-truth")


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------


def render(value: Any, env: Mapping[str, str]) -> Any:
    """Fill ``{{ VAR }}`` templates in every string of ``value`` (recursively through lists and
    dicts) from ``env``, as upstream renders ``question``, ``value`` and ``op_args`` (Jinja2);
    a variable ``env`` does not define is left as ``{{ VAR }}``.

    Raises:
        EvaluatorSpecError: a string that is not a valid template.
    """
    if isinstance(value, list):
        return [render(v, env) for v in value]
    if isinstance(value, dict):
        return {k: render(v, env) for k, v in value.items()}
    if not isinstance(value, str) or "{" not in value:
        return value
    import jinja2
    from jinja2 import meta

    jenv = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, autoescape=False)
    try:
        names = meta.find_undeclared_variables(jenv.parse(value))
        fill = {n: env.get(n, "{{ " + n + " }}") for n in names}
        return jenv.from_string(value).render(**fill)
    except jinja2.TemplateError as exc:
        raise EvaluatorSpecError(f"bad template {value[:80]!r}: {exc}") from exc


@dataclass(frozen=True)
class EvaluatorResult:
    """The outcome of one evaluator on one answer.

    Attributes:
        index: position in the task's ``evaluators`` list (0-based).
        func, op: as written in the task.
        kind: ``format`` / ``static`` / ``dynamic`` (:func:`evaluator_kind`).
        passed: every leaf passed.
        reason: why it failed ("" when passed): the op's reason, "JSON decoding error: ..." or
            "Execution error: <exception>".
        desc: the evaluator's description.
    """

    index: int
    func: str
    op: str
    kind: Kind
    passed: bool
    reason: str = ""
    desc: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (the task's details)."""
        return {"index": self.index, "func": self.func, "op": self.op, "kind": self.kind,
                "passed": self.passed, "reason": self.reason, "desc": self.desc}  # fmt: skip


def evaluator_kind(evaluator: Mapping[str, Any]) -> Kind:
    """The evaluator's kind: its explicit ``kind`` field when given (our own task files), else
    ``format`` for an empty op, else the op's registered kind.

    Raises:
        EvaluatorSpecError: unknown op or kind.
    """
    explicit = evaluator.get("kind")
    if explicit is not None:
        if explicit not in KINDS:
            raise EvaluatorSpecError(f"`kind` must be one of {KINDS}, not {explicit!r}")
        return explicit
    op = evaluator.get("op") or ""
    if not op:
        return "format"
    if op not in OPS:
        raise EvaluatorSpecError(f"unknown op {op!r}; known: {', '.join(sorted(OPS))}")
    return OPS[op].kind


def evaluate(evaluator: Mapping[str, Any], answer: Any, ctx: EvalContext, index: int = 0) -> EvaluatorResult:
    """Run one evaluator on the final answer (upstream ``Evaluator.evaluate``).

    Args:
        evaluator: ``{func, op, value, op_args, desc}`` with templates already rendered.
        answer: the agent's final answer text.
        ctx: what domain ops may read.
        index: the evaluator's position in its task (recorded).

    Returns:
        The result; a malformed answer is a failure with its reason, never an exception.

    Raises:
        EvaluatorSpecError: the evaluator itself is bad (unknown function or op).
        Exception: anything outside :data:`ANSWER_ERRORS` (judge, provider or bug): not the
            answer's fault, so not a failure.
    """
    func = evaluator.get("func") or ""
    op = evaluator.get("op") or ""
    kind = evaluator_kind(evaluator)
    desc = evaluator.get("desc") or ""

    def result(passed: bool, reason: str = "") -> EvaluatorResult:
        return EvaluatorResult(index, func, op, kind, passed, reason, desc)

    steps = parse_func(func)  # a bad pipeline is a usage error, not the answer's fault
    try:
        leaves = run_pipeline(steps, answer)
        if not op:
            return result(True)
        spec = OPS[op]
        for leaf in leaves:
            passed, reason = spec.fn(leaf, evaluator.get("value"), evaluator.get("op_args"), ctx)
            if not passed:
                return result(False, reason or "the check failed")
        return result(True)
    except EvaluatorSpecError:
        raise
    except json.JSONDecodeError as exc:
        head = answer[:100] if isinstance(answer, str) else answer
        return result(False, f"JSON decoding error: {exc.msg} at line {exc.lineno} column {exc.colno} "
                             f"(answer starts {head!r})")  # fmt: skip
    except ANSWER_ERRORS as exc:
        text = str(exc) if isinstance(exc, AnswerError) else f"{type(exc).__name__}: {exc}"
        return result(False, f"Execution error: {text}")
