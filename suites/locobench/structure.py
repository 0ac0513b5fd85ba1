"""Software-engineering checks on the final tree against the project before the answer.

Reference C2 (SE, "measurable proxies only"); upstream's SE (B5) is eight keyword and
AST-shape heuristics on the solution text alone, replaced by five checks on the whole
project, each 0 or 1 (``software_engineering`` = their mean over the checks that apply):

- ``imports_resolve``: every import of a project module in a changed file names a module of
  the final tree, and every name it imports from one is defined there;
- ``no_new_cycle``: no import edge lies on a cycle of the final import graph that was not on
  one before;
- ``layering``: no changed file imports a layer its layer may not (the generated project's
  rules, stated in its package docstring); not applicable to an upstream project;
- ``call_sites``: no module still calls a function or method the answer removed or renamed
  (a name no module defines any more), and every call of a function whose signature the
  answer changed still binds to it, as does every call a changed file makes to a function
  or method the project defines once;
- ``signatures_kept``: every public function and method of the project keeps its parameters
  (new ones need defaults), unless the task renames it (then the new name exists).

Modules under ``legacy/`` (the decoys) and tests are left out of the call and signature
checks. An answer with a changed file that does not parse, or with no change, scores 0.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Structure", "module_of", "software_engineering"]


def module_of(path: str) -> str | None:
    """``pkg/a/b.py`` -> ``pkg.a.b`` (``__init__.py`` -> the package); None for a non-Python file."""
    if not path.endswith(".py"):
        return None
    parts = path[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or None


@dataclass(frozen=True, slots=True)
class _Call:
    """One call of a named function or method (``f(...)``, ``obj.f(...)``) in a module."""

    name: str
    lineno: int
    positional: int  # positional arguments given
    starred: bool  # a ``*args`` among them
    keywords: tuple[str | None, ...]  # keyword names, None for a ``**kwargs``


@dataclass(frozen=True, slots=True)
class _Module:
    """What the checks read of one module's tree, in the tree's walk order (``ast.walk``); the
    tree itself is not kept (it takes about 25 times the source text).

    Attributes:
        imports: ``(None, name, ())`` per alias of an ``import``, ``(level, module, names)``
            per ``from ... import`` (resolved against the module's path by :func:`_imports`).
        top_names: the names its top level defines (:func:`_top_level_names`).
        defs: ``(qualified name, signature)`` of its public functions and methods
            (``func``, ``Class.method``), in body order.
        functions: the name of every function or method defined anywhere in it.
        calls: every call of a named callable.
    """

    imports: tuple[tuple[int | None, str | None, tuple[str, ...]], ...]
    top_names: frozenset[str]
    defs: tuple[tuple[str, _Sig], ...]
    functions: frozenset[str]
    calls: tuple[_Call, ...]


def _summarize(tree: ast.Module) -> _Module:
    imports: list[tuple[int | None, str | None, tuple[str, ...]]] = []
    functions: set[str] = set()
    calls: list[_Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imports.extend((None, alias.name, ()) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imports.append((node.level, node.module, tuple(a.name for a in node.names)))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.add(node.name)
        elif isinstance(node, ast.Call):
            name = _called_name(node)
            if name is not None:
                calls.append(_Call(name, node.lineno, len(node.args),
                                   any(isinstance(a, ast.Starred) for a in node.args),
                                   tuple(k.arg for k in node.keywords)))  # fmt: skip
    return _Module(tuple(imports), frozenset(_top_level_names(tree)), _tree_defs(tree), frozenset(functions),
                   tuple(calls))  # fmt: skip


def _parse(text: str, memo: dict[str, _Module | None]) -> _Module | None:
    """What the checks read of the module (:class:`_Module`), or None when it does not parse;
    each text is parsed once per :func:`software_engineering` call (``memo``: most files are
    the same before and after). Neither the trees nor the summaries are kept across calls:
    the trees of a scenario take about 25 times its source text (1.5 MB for an easy
    scenario's 62 files, about 40 MB for an expert one's 983), and a cache over a run's
    scenarios held thousands of them."""
    if text in memo:
        return memo[text]
    try:
        found: _Module | None = _summarize(ast.parse(text))
    except (SyntaxError, ValueError):
        found = None
    memo[text] = found
    return found


def _resolve_from(module: str, level: int, name: str | None, is_package: bool) -> str | None:
    if not level:
        return name
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([name] if name else [])])


def _imports(path: str, found: _Module) -> list[tuple[str, list[str]]]:
    """``(imported module, names)`` of every import of the module at ``path`` (module level
    or not)."""
    module = module_of(path) or ""
    out = []
    for level, name, names in found.imports:
        if level is None:
            out.append((name or "", []))
            continue
        target = _resolve_from(module, level, name, path.endswith("__init__.py"))
        if target:
            out.append((target, list(names)))
    return out


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _graph(trees: Mapping[str, _Module], modules: set[str]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path, tree in trees.items():
        src = module_of(path)
        if src is None:
            continue
        for target, names in _imports(path, tree):
            for cand in [f"{target}.{n}" for n in names] + [target]:
                if cand in modules and cand != src:
                    edges.setdefault(src, set()).add(cand)
                    break
    return edges


def _cyclic_edges(edges: Mapping[str, set[str]]) -> set[tuple[str, str]]:
    """Edges that lie on a cycle (both ends in one strongly connected component)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comp: dict[str, int] = {}
    counter = [0]

    def visit(v: str) -> None:  # Tarjan, iterative enough for our graph sizes
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp[w] = index[node]
                    if w == node:
                        break

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return {
        (a, b)
        for a, bs in edges.items()
        for b in bs
        if comp.get(a) is not None and comp.get(a) == comp.get(b)
    }


@dataclass(frozen=True)
class _Sig:
    params: tuple[tuple[str, bool], ...]  # (name, has default), after self/cls
    kwonly: tuple[tuple[str, bool], ...]
    varargs: bool
    varkw: bool


def _sig(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> _Sig:
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [False] * (len(positional) - len(args.defaults)) + [True] * len(args.defaults)
    pairs = [(a.arg, d) for a, d in zip(positional, defaults, strict=True)]
    if (
        method
        and pairs
        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    ):
        pairs = pairs[1:]
    kw = tuple((a.arg, d is not None) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True))
    return _Sig(tuple(pairs), kw, args.vararg is not None, args.kwarg is not None)


def _tree_defs(tree: ast.Module) -> tuple[tuple[str, _Sig], ...]:
    """``(func, signature)`` and ``(Class.method, signature)``, public names only, in body order."""
    out = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            out.append((node.name, _sig(node, method=False)))
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith(
                    "_"
                ):
                    out.append((f"{node.name}.{item.name}", _sig(item, method=True)))
    return tuple(out)


def _defs(path: str, found: _Module) -> dict[str, _Sig]:
    """``module:func`` and ``module:Class.method`` -> signature, public names only."""
    module = module_of(path) or path
    return {f"{module}:{name}": sig for name, sig in found.defs}


def _compatible(old: _Sig, new: _Sig) -> bool:
    """Every call that bound to ``old`` binds to ``new``: the old positional parameters kept
    in order under their names, the old keyword-only ones kept, anything added has a default."""
    n = len(old.params)
    if [p for p, _ in new.params[:n]] != [p for p, _ in old.params] and not new.varargs:
        return False
    if any(not d for _, d in new.params[n:]):
        return False
    old_kw = {k for k, _ in old.kwonly}
    new_kw = dict(new.kwonly)
    if not old_kw <= set(new_kw) and not new.varkw:
        return False
    if any(not d for k, d in new_kw.items() if k not in old_kw):
        return False
    return not (old.varargs and not new.varargs) and not (old.varkw and not new.varkw)


def _binds(call: _Call, sig: _Sig) -> bool:
    if call.starred or None in call.keywords:
        return True  # *args / **kwargs at the call site: cannot tell statically
    names = [p for p, _ in sig.params]
    if call.positional > len(names) and not sig.varargs:
        return False
    given = set(names[: call.positional])
    allowed = set(names) | {k for k, _ in sig.kwonly}
    for kw in call.keywords:
        if kw not in allowed and not sig.varkw:
            return False
        given.add(kw)
    required = {p for p, d in sig.params if not d} | {k for k, d in sig.kwonly if not d}
    return required <= given


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def _live(path: str) -> bool:
    parts = path.split("/")
    return (
        path.endswith(".py")
        and "legacy" not in parts
        and "tests" not in parts
        and not parts[-1].startswith("test_")
        and not parts[0].startswith("_egi")
    )


@dataclass
class Structure:
    """The software-engineering verdict.

    Attributes:
        score: ``software_engineering``, 0-1 (mean of the checks that apply).
        checks: check name -> 0/1 (None: not applicable).
        problems: one line per fault found.
    """

    score: float
    checks: dict[str, float | None] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-safe form (the trial's ``details``)."""
        return {"score": round(self.score, 6), "checks": self.checks, "problems": self.problems[:20]}


def software_engineering(
    before: Mapping[str, str],
    after: Mapping[str, str],
    changed: Iterable[str],
    *,
    layering: Mapping[str, frozenset[str]] | None = None,
    package: str = "",
    renamed: Mapping[str, str] | None = None,
) -> Structure:
    """The five checks (module docstring) on ``after`` (the final tree) against ``before``.

    Args:
        changed: the paths the answer wrote or deleted.
        layering: layer -> the layers it may import (None: no layering check).
        package: the package the layers belong to.
        renamed: ``"module:Qual.name" -> new name`` the task asks for.
    """
    changed = sorted(changed)
    if not changed:
        return Structure(0.0, problems=["the answer changed nothing"])
    trees_after: dict[str, _Module] = {}
    bad = []
    memo: dict[str, _Module | None] = {}
    for path, text in after.items():
        if not path.endswith(".py"):
            continue
        tree = _parse(text, memo)
        if tree is None:
            if path in changed:
                bad.append(path)
            continue
        trees_after[path] = tree
    if bad:
        return Structure(0.0, problems=[f"{p}: does not parse" for p in bad])
    parsed_before = ((p, _parse(x, memo)) for p, x in before.items() if p.endswith(".py"))
    trees_before = {p: t for p, t in parsed_before if t}
    del memo
    problems: list[str] = []
    modules_after = {m: p for p in trees_after if (m := module_of(p))}
    own_roots = {m.split(".")[0] for m in modules_after}

    # imports_resolve
    resolve_ok = True
    for path in changed:
        tree = trees_after.get(path)
        if tree is None:
            continue
        for target, names in _imports(path, tree):
            if target.split(".")[0] not in own_roots:
                continue
            if target not in modules_after:
                resolve_ok = False
                problems.append(f"{path}: imports {target}, which is not a module of the project")
                continue
            defined = trees_after[modules_after[target]].top_names
            for name in names:
                if name != "*" and name not in defined and f"{target}.{name}" not in modules_after:
                    resolve_ok = False
                    problems.append(f"{path}: imports {name} from {target}, which does not define it")

    # no_new_cycle
    modules_before = {m for p in trees_before if (m := module_of(p))}
    new_cycles = _cyclic_edges(_graph(trees_after, set(modules_after))) - _cyclic_edges(
        _graph(trees_before, modules_before)
    )
    for a, b in sorted(new_cycles)[:5]:
        problems.append(f"new import cycle through {a} -> {b}")

    # layering
    layer_ok: bool | None = None
    if layering is not None and package:
        layer_ok = True
        for path in changed:
            tree, src = trees_after.get(path), module_of(path)
            if tree is None or src is None or not src.startswith(package + ".") or not _live(path):
                continue
            layer = src.split(".")[1]
            allowed = layering.get(layer, frozenset())
            for target, _names in _imports(path, tree):
                parts = target.split(".")
                if parts[0] != package or len(parts) < 2:
                    continue
                if parts[1] not in allowed or parts[1] == "legacy":
                    layer_ok = False
                    problems.append(f"{path}: the {layer or 'package'} layer may not import {target}")

    # signatures_kept and call_sites
    defs_before = {k: v for p, t in trees_before.items() if _live(p) for k, v in _defs(p, t).items()}
    defs_after = {k: v for p, t in trees_after.items() if _live(p) for k, v in _defs(p, t).items()}
    renamed = dict(renamed or {})
    sig_ok = True
    changed_sigs: dict[str, _Sig] = {}
    gone: set[str] = set()
    for key, old in sorted(defs_before.items()):
        new = defs_after.get(key)
        if new is None:
            target = renamed.get(key)
            moved = f"{key.rsplit('.', 1)[0] if '.' in key.split(':')[1] else key.split(':')[0]}"
            replacement = None
            if target:
                replacement = defs_after.get(
                    f"{moved}.{target}" if "." in key.split(":")[1] else f"{moved}:{target}"
                )
            if replacement is None or not _compatible(old, replacement):
                sig_ok = False
                problems.append(f"public {key} was removed or renamed")
            gone.add(key.split(":")[1].rsplit(".", 1)[-1])
        elif not _compatible(old, new):
            sig_ok = False
            problems.append(f"public {key} changed its signature")
        if new is not None and new != old:
            changed_sigs[key.split(":")[1].rsplit(".", 1)[-1]] = new
    defined_names = {k.split(":")[1].rsplit(".", 1)[-1] for k in defs_after}
    defined_names |= {name for t in trees_after.values() for name in t.functions}
    stale = gone - defined_names
    name_count: dict[str, int] = {}
    for key in defs_after:
        short = key.split(":")[1].rsplit(".", 1)[-1]
        name_count[short] = name_count.get(short, 0) + 1
    unique = {k.split(":")[1].rsplit(".", 1)[-1]: v for k, v in defs_after.items()}
    calls_ok = True
    for path, found in sorted(trees_after.items()):
        if not _live(path):
            continue
        for node in found.calls:
            name = node.name
            if name in stale:
                calls_ok = False
                problems.append(f"{path}:{node.lineno}: still calls {name}, which no module defines any more")
            elif name in changed_sigs and name_count.get(name) == 1 and not _binds(node, changed_sigs[name]):
                calls_ok = False
                problems.append(f"{path}:{node.lineno}: the call of {name} does not match its new signature")
            elif path in changed and name_count.get(name) == 1 and not _binds(node, unique[name]):
                calls_ok = False
                problems.append(f"{path}:{node.lineno}: the call of {name} does not match its signature")

    checks: dict[str, float | None] = {
        "imports_resolve": float(resolve_ok),
        "no_new_cycle": float(not new_cycles),
        "layering": None if layer_ok is None else float(layer_ok),
        "call_sites": float(calls_ok),
        "signatures_kept": float(sig_ok),
    }
    applied = [v for v in checks.values() if v is not None]
    return Structure(sum(applied) / len(applied), checks, problems)
