"""``architectural_understanding``: an API module that breaks the layering rules.

Planted: ``api/<s>_api.py`` builds and stores secondary records itself (importing
``models``, reaching the repository through the service), so it skips the service's checks
and breaks the package's layering rules (stated in the package docstring). The service's
registering method has a name and parameter order stated only in ``services/<s>_service.py``
(the needle); ``legacy/<s>_service_v1.py`` (the decoy) has the first release's service,
with another method name and order. Hidden tests: the handlers keep their responses, refuse
what the service refuses (needle), and the API module imports only the layers it may.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Mapping

from suites.locobench.generator.project import ALLOWED_IMPORTS, Plan, service_secondary
from suites.locobench.tasks.common import Planted, dedent, hidden_header, replace_once

__all__ = ["plant", "reference"]

VERBS = ("enroll", "onboard", "admit", "enlist", "sign_up")


def _violating_api(plan: Plan) -> str:
    p, s, S = plan.pkg, plan.s, plan.S
    return dedent(f'''
        """Handlers for {s} requests: a payload dict in, a response dict out."""

        from {p}.models.{s} import {S}
        from {p}.services.{s}_service import {S}Service


        def handle_register(service: {S}Service, payload: dict) -> dict:
            """Register a {s} from ``id``, ``name`` and ``region``."""
            item = {S}(int(payload["id"]), str(payload["name"]).strip(), str(payload["region"]))
            service.repository.add(item)
            return {{"id": item.id, "region": item.region, "status": "registered"}}


        def handle_get(service: {S}Service, payload: dict) -> dict:
            """The {s} named by ``id``."""
            item = service.get(int(payload["id"]))
            return {{"id": item.id, "name": item.name, "region": item.region, "active": item.active}}
        ''')


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Plant the layering violation, the renamed service method (needle) and the decoy."""
    p, s, S = plan.pkg, plan.s, plan.S
    verb, decoy_verb = rng.sample(VERBS, 2)
    method = dedent(f'''
        def {verb}(self, item_id: int, name: str, region: str) -> {S}:
            """Validate and store a new {s}; its region must be an allowed one."""
            if region not in ALLOWED_REGIONS:
                raise ValidationError(f"region must be one of {{ALLOWED_REGIONS}}, got {{region!r}}")
            item = {S}(item_id, require_text("name", name), region)
            return self._repository.add(item)
        ''')
    decoy_method = dedent(f'''
        def {decoy_verb}(self, name: str, region: str, item_id: int) -> {S}:
            """Store a new {s} (first release: no checks)."""
            item = {S}(item_id, name, region)
            return self._repository.add(item)
        ''')
    needle, decoy = f"{p}/services/{s}_service.py", f"{p}/legacy/{s}_service_v1.py"
    files[needle] = service_secondary(plan, method)
    files[decoy] = service_secondary(plan, decoy_method).replace(
        f'"""Business rules for {s} records."""', f'"""The {s} service of the first release."""'
    )
    files[f"{p}/api/{s}_api.py"] = _violating_api(plan)
    allowed = sorted(f"{p}.{layer}" for layer in ALLOWED_IMPORTS["api"])
    good, bad = plan.regions[0], "nowhere"
    tests = hidden_header(f"""
        import ast
        import pathlib

        import {p}.api.{s}_api as api_module
        from {p}.api.{s}_api import handle_get, handle_register
        from {p}.errors import ValidationError
        from {p}.repositories.{s}_repository import {S}Repository
        from {p}.services.{s}_service import {S}Service
        """) + dedent(f'''
        ALLOWED = {allowed!r}


        def _service():
            return {S}Service({S}Repository())


        def _imports():
            tree = ast.parse(pathlib.Path(api_module.__file__).read_text())
            found = []
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    found.append(node.module)
                elif isinstance(node, ast.Import):
                    found.extend(alias.name for alias in node.names)
            return found


        def test_register_then_get():
            service = _service()
            reply = handle_register(service, {{"id": 1, "name": " Depot ", "region": "{good}"}})
            assert reply == {{"id": 1, "region": "{good}", "status": "registered"}}
            assert handle_get(service, {{"id": 1}}) == {{"id": 1, "name": "Depot", "region": "{good}", "active": True}}


        def test_api_imports_only_the_layers_it_may():
            own = [m for m in _imports() if m.split(".")[0] == "{p}"]
            assert own and all(any(m == a or m.startswith(a + ".") for a in ALLOWED) for m in own)


        def test_needle_unknown_region_is_refused():
            with pytest.raises(ValidationError):
                handle_register(_service(), {{"id": 2, "name": "Depot", "region": "{bad}"}})


        def test_needle_blank_name_is_refused():
            with pytest.raises(ValidationError):
                handle_register(_service(), {{"id": 3, "name": "   ", "region": "{good}"}})


        def test_decoy_legacy_method_is_called():
            source = pathlib.Path(api_module.__file__).read_text()
            assert ".{decoy_verb}(" in source
        ''')
    statement = dedent(f"""
        `{p}/api/{s}_api.py` breaks the package's layering rules: it builds and stores {s} records
        itself instead of going through the services layer, so it skips the service's checks. Make
        it follow the rules, using what the services layer already provides. The handlers keep their
        signatures and their responses; no other public signature changes.
        """)
    return Planted(
        title="Restore the layering of the API",
        description=f"The {s} API was written against the models directly, before the services layer existed.",
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[needle],
        decoy_files=[decoy],
        regression_quotes=True,
        info={"verb": verb, "decoy_verb": decoy_verb, "secondary_validation": False},
    )


def _registering_method(context: Mapping[str, str], cls: str) -> tuple[str, list[str]] | None:
    """The shown service's method taking a ``region`` (a live module before ``legacy/``):
    its name and parameter names."""
    for path in sorted((p for p in context if p.endswith(".py")), key=lambda p: ("/legacy/" in p, p)):
        try:
            tree = ast.parse(context[path])
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for fn in node.body:
                    names = [a.arg for a in fn.args.args] if isinstance(fn, ast.FunctionDef) else []
                    if "region" in names:
                        return fn.name, names[1:]  # type: ignore[union-attr]
    return None


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Call the service's registering method (its name and order read from the shown service;
    the decoy's when the service is not shown) and drop the model import."""
    p, s, S = plan.pkg, plan.s, plan.S
    path = f"{p}/api/{s}_api.py"
    found = _registering_method(context, f"{S}Service")
    if path not in context or found is None:
        return {}
    verb, params = found
    value = {
        "item_id": 'int(payload["id"])',
        "name": 'str(payload["name"])',
        "region": 'str(payload["region"])',
    }
    args = ", ".join(value.get(name, "None") for name in params)
    text = replace_once(context[path], f"from {p}.models.{s} import {S}\n", "")
    text = replace_once(
        text,
        f'    item = {S}(int(payload["id"]), str(payload["name"]).strip(), str(payload["region"]))\n'
        "    service.repository.add(item)\n",
        f"    item = service.{verb}({args})\n",
    )
    return {path: text}
