"""The import picture of the core and of the suites is a stack: no module imports, directly or
through others, a module that imports it back (issue 27). Read from the source with ``ast``, so
a circle is found whether its imports run at module level or inside a function; imports under
``if TYPE_CHECKING:`` never run and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pytest_egi", "suites")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "__pycache__" not in path.parts and not path.name.startswith("test_"):
                found[_module_name(path)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()

    def resolve(dotted: str) -> None:
        while dotted and dotted not in known:  # `a.b.func` -> the module `a.b`
            dotted = dotted.rpartition(".")[0]
        if dotted and dotted != name:
            targets.add(dotted)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    resolve(alias.name)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    module = ".".join(base + ([child.module] if child.module else []))
                else:
                    module = child.module or ""
                for alias in child.names:  # `from pkg import sub` imports the module pkg.sub
                    resolve(f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return targets


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (``pytest_egi`` and ``suites``)."""
    known = _modules()
    return {name: _imported(name, path, known) for name, path in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def connect(start: str) -> None:
        nonlocal counter
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(graph[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return sorted(found)


def _one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest import path from the component's first module back to itself."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for succ in sorted(graph[node] & members):
                if succ == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if succ not in previous:
                    previous[succ] = node
                    nxt.append(succ)
        frontier = nxt
    return component


def test_the_circle_finder_names_a_circle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert _one_cycle(graph, ["a", "b", "c"]) == ["a", "b", "c", "a"]


def test_the_graph_sees_lazy_relative_and_from_imports_but_not_type_checking_ones(tmp_path, monkeypatch):
    pkg = tmp_path / "pytest_egi"
    (pkg / "sub").mkdir(parents=True)
    (tmp_path / "suites").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .leaf import x\n")
    (pkg / "sub" / "leaf.py").write_text("def f():\n    from pytest_egi import top\n")
    (pkg / "top.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pytest_egi.other import y\n"
        "from pytest_egi import sub\n"
    )
    (pkg / "other.py").write_text("from pytest_egi.top import z\n")
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    graph = import_graph()
    assert graph["pytest_egi.sub.leaf"] == {"pytest_egi.top"}
    assert graph["pytest_egi.sub"] == {"pytest_egi.sub.leaf"}
    assert graph["pytest_egi.top"] == {"pytest_egi.sub"}
    assert circles(graph) == [["pytest_egi.sub", "pytest_egi.sub.leaf", "pytest_egi.top"]]


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circle(package):
    graph = import_graph()
    found = [c for c in circles(graph) if c[0].split(".")[0] == package]
    named = [" -> ".join(_one_cycle(graph, c)) + f"  (the circle's modules: {', '.join(c)})" for c in found]
    assert not named, f"{len(named)} import circle(s) in {package}/:\n" + "\n".join(named)
