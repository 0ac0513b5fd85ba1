"""``cross_file_refactoring``: rename a repository method to the interface's name, everywhere.

Planted: the primary repository's look-up method is ``fetch``; ``repositories/base.py`` (the
needle) declares the interface every repository follows, whose look-up is ``get_by_id``;
``legacy/repository_api.py`` (the decoy) declares the first release's interface, whose
look-up is ``find_by_id``. ``fetch`` is called from the service and from helper modules spread
over the package (more of them at higher difficulty). Hidden tests: the new name works
(needle), the old one is gone from the class and from every module's source, and every caller
still works.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, repositories_base
from suites.locobench.tasks.common import Planted, dedent, hidden_header

__all__ = ["plant", "reference"]

OLD, NEW, DECOY = "fetch", "get_by_id", "find_by_id"
CALLERS = ("audit", "bulk", "labels", "archive", "digest")


def _caller(plan: Plan, name: str) -> str:
    p, e, E = plan.pkg, plan.e, plan.E
    bodies = {
        "audit": ("describe", "item_id: int", "str", "One line describing the record with ``item_id``.",
                  f"item = repository.{OLD}(item_id)\n    return f\"{{item.name}}: {{item.quantity}} x {{item.unit_price_cents}}\""),
        "bulk": ("total_quantity", "item_ids: list[int]", "int", "Units over the records of ``item_ids``.",
                 f"return sum(repository.{OLD}(item_id).quantity for item_id in item_ids)"),
        "labels": ("label", "item_id: int", "str", "The record's name in capitals.",
                   f"return repository.{OLD}(item_id).name.upper()"),
        "archive": ("is_closed", "item_id: int", "bool", "Whether the record's status is closed.",
                    f"return repository.{OLD}(item_id).status == \"closed\""),
        "digest": ("subtotal", "item_id: int", "int", "The record's subtotal in cents.",
                   f"return repository.{OLD}(item_id).subtotal_cents()"),
    }  # fmt: skip
    fn, arg, ret, doc, body = bodies[name]
    return (
        dedent(f'''
        """{name.capitalize()} helpers for {e} records."""

        from {p}.repositories.{e}_repository import {E}Repository


        def {fn}(repository: {E}Repository, {arg}) -> {ret}:
            """{doc}"""
        ''')
        + f"    {body}\n"
    )


def plant(plan: Plan, rng: random.Random, files: dict[str, str], callers: int = 2) -> Planted:
    """Add the interface (needle), its legacy copy (decoy) and ``callers`` helper modules
    calling ``fetch``."""
    p, e, E = plan.pkg, plan.e, plan.E
    needle, decoy = f"{p}/repositories/base.py", f"{p}/legacy/repository_api.py"
    files[needle] = repositories_base(plan, NEW)
    files[decoy] = repositories_base(plan, DECOY).replace(
        '"""The interface every repository of the package follows."""',
        '"""The repository interface of the first release."""',
    )
    chosen = list(CALLERS[: max(2, min(callers, len(CALLERS)))])
    for name in chosen:
        files[f"{p}/services/{e}_{name}.py"] = _caller(plan, name)
    q, u = 3, rng.randrange(200, 900)
    from suites.locobench.generator.project import price

    checks = {
        "audit": ("describe", "1", f'"q: {q} x {u}"'),
        "bulk": ("total_quantity", "[1, 1]", str(2 * q)),
        "labels": ("label", "1", '"Q"'),
        "archive": ("is_closed", "1", "False"),
        "digest": ("subtotal", "1", str(q * u)),
    }
    caller_tests = "".join(
        dedent(f"""


            def test_{name}_helper_still_works():
                from {p}.services.{e}_{name} import {checks[name][0]}

                assert {checks[name][0]}(_filled(), {checks[name][1]}) == {checks[name][2]}
            """)
        for name in chosen
    )
    tests = (
        hidden_header(f"""
        import pathlib

        import {p}
        from {p}.api.{e}_api import handle_create, handle_get, handle_quote
        from {p}.errors import NotFoundError
        from {p}.repositories.{e}_repository import {E}Repository
        from {p}.services.{e}_service import {E}Service
        """)
        + dedent(f'''
        def _filled():
            repository = {E}Repository()
            handle_create({E}Service(repository), {{"id": 1, "name": "q", "quantity": {q}, "unit_price_cents": {u}}})
            return repository


        def test_needle_lookup_has_the_interface_name():
            assert _filled().{NEW}(1).quantity == {q}


        def test_needle_lookup_of_a_missing_record_raises():
            with pytest.raises(NotFoundError):
                _filled().{NEW}(2)


        def test_old_name_is_gone_from_the_class():
            assert not hasattr({E}Repository, "{OLD}")


        def test_old_name_is_gone_from_every_module():
            root = pathlib.Path({p}.__file__).parent
            left = [str(path) for path in root.rglob("*.py") if "legacy" not in path.parts
                    and (".{OLD}(" in path.read_text() or "def {OLD}(" in path.read_text())]
            assert left == []


        def test_handlers_still_work():
            service = {E}Service({E}Repository())
            handle_create(service, {{"id": 4, "name": "w", "quantity": {q}, "unit_price_cents": {u}}})
            assert handle_get(service, {{"id": 4}})["quantity"] == {q}
            assert handle_quote(service, {{"id": 4}})["total_cents"] == {price(plan, q, u)}


        def test_decoy_lookup_has_the_legacy_name():
            assert hasattr({E}Repository, "{DECOY}")
        ''')
        + caller_tests
    )
    statement = dedent(f"""
        The look-up method of `{E}Repository` (`{p}/repositories/{e}_repository.py`) is not named as
        the package's repository interface declares. Rename it to the interface's name and update
        every caller in the package; the old name must not remain in any module. Keep every other
        public signature and all behaviour.
        """)
    return Planted(
        title="Align the repository with its interface",
        description=f"`{E}Repository` predates the repository interface and names its look-up differently.",
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[needle],
        decoy_files=[decoy],
        renamed={f"{p}.repositories.{e}_repository:{E}Repository.{OLD}": NEW},
        info={"callers": chosen},
    )


def _interface_lookup(context: Mapping[str, str], own: set[str]) -> str | None:
    """The look-up name the shown ``Repository`` interface declares (a live module before
    ``legacy/``): its method that the repository does not define yet."""
    import ast

    for path in sorted((p for p in context if p.endswith(".py")), key=lambda p: ("/legacy/" in p, p)):
        try:
            tree = ast.parse(context[path])
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "Repository":
                names = [n.name for n in node.body if isinstance(n, ast.FunctionDef)]
                new = [n for n in names if n not in own]
                if new:
                    return new[0]
    return None


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Rename ``fetch`` to the interface's look-up name in every shown module that defines or
    calls it (a caller the prompt did not show stays as it was)."""
    new = _interface_lookup(context, {"add", "list_all", "remove", OLD})
    if new is None:
        return {}
    out = {}
    for path, text in context.items():
        if path.endswith(".py") and "/legacy/" not in path and (f".{OLD}(" in text or f"def {OLD}(" in text):
            out[path] = text.replace(f".{OLD}(", f".{new}(").replace(f"def {OLD}(", f"def {new}(")
    return out
