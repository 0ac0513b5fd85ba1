"""``integration_testing``: the model writes the tests of an untested boundary.

The boundary: ``handle_quote`` (API) through the service and every pricing step. The model
writes ``tests/test_<e>_quote_integration.py``; the hidden tests run it (in a subprocess, in
the sandbox) on the project, where it must pass, and on seeded mutants of the pricing chain,
where it must fail (mutation kill rate, reference C2): the bulk threshold off by one and the
handling fee doubled. Exact totals need ``config.py``'s constants (the needle); tests written
with ``legacy/settings_v1.py``'s values (the decoy) fail on the project and pass on a variant
configured with the decoy's values (recorded as a confusion).
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from suites.locobench.generator.project import Plan, config_module, price, step_module
from suites.locobench.tasks.common import Planted, dedent, find_constant, hidden_header

__all__ = ["model_test_path", "plant", "reference"]

CONSTANTS = ("BULK_MIN_UNITS", "BULK_RATE_BP", "HANDLING_FEE_CENTS", "ROUND_TO_CENTS", "MIN_CHARGE_CENTS")


def model_test_path(plan: Plan) -> str:
    """Where the model writes its tests."""
    return f"tests/test_{plan.e}_quote_integration.py"


RUNNER = '''
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = Path(__file__).resolve().parent / "mutants"
MODEL_TESTS = "{model_tests}"
SKIP = {{"_egi_hidden", ".home", ".tmp"}}
_DONE = {{}}


def run_model_tests(mutant=None):
    """Exit status of pytest on the model's tests, on the project or on a copy with the
    mutant's files laid over it (each run once per session)."""
    if mutant not in _DONE:
        _DONE[mutant] = _run(mutant)
    return _DONE[mutant]


def _run(mutant):
    where = ROOT
    if mutant is not None:
        where = Path(tempfile.mkdtemp(prefix="mutant-"))
        for entry in ROOT.iterdir():
            if entry.name in SKIP:
                continue
            if entry.is_dir():
                shutil.copytree(entry, where / entry.name, symlinks=False)
            else:
                shutil.copyfile(entry, where / entry.name)
        for path in (MUTANTS / mutant).rglob("*"):
            if path.is_file():
                target = where / path.relative_to(MUTANTS / mutant)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
    if not (where / MODEL_TESTS).is_file():
        return "missing"
    argv = [sys.executable, "-S", "-m", "pytest", "-q", "-p", "no:cacheprovider", MODEL_TESTS]
    try:
        done = subprocess.run(argv, cwd=where, env=os.environ, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    except subprocess.TimeoutExpired:
        return "timeout"
    return done.returncode
'''


def plant(plan: Plan, rng: random.Random, files: dict[str, str]) -> Planted:
    """Choose the mutants (the needle is ``config.py``, the decoy its legacy copy)."""
    p = plan.pkg
    path = model_test_path(plan)
    mutants = [
        {
            "name": "threshold",
            "files": {f"{p}/services/discounts.py": step_module(plan, "discounts", bulk_op=">")},
            "decoy": False,
        },
        {
            "name": "fee",
            "files": {
                f"{p}/services/surcharges.py": step_module(plan, "surcharges", fee="2 * HANDLING_FEE_CENTS")
            },
            "decoy": False,
        },
        {
            "name": "legacy_settings",
            "files": {f"{p}/config.py": config_module(plan, decoy=True)},
            "decoy": True,
        },
    ]
    tests = (
        hidden_header("""
        import ast
        """)
        + dedent(RUNNER.format(model_tests=path))
        + dedent("""


        def test_model_tests_exist():
            source = (ROOT / MODEL_TESTS).read_text()
            names = [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
            assert sum(1 for n in names if n.startswith("test")) >= 2


        def test_model_tests_pass_on_the_project():
            assert run_model_tests() == 0


        def test_needle_model_tests_kill_the_threshold_mutant():
            assert run_model_tests() == 0 and run_model_tests("threshold") == 1


        def test_needle_model_tests_kill_the_fee_mutant():
            assert run_model_tests() == 0 and run_model_tests("fee") == 1


        def test_decoy_model_tests_pass_with_the_legacy_settings():
            assert run_model_tests("legacy_settings") == 0
        """)
    )
    statement = dedent(f"""
        Nothing tests quotes end to end, from `handle_quote` (`{p}/api/{plan.e}_api.py`) through the
        service and every pricing step. Write `{path}` with pytest tests that create {plan.e} records
        with `handle_create` and check the exact `total_cents` that `handle_quote` returns: below, at
        and above the bulk discount threshold, and including the handling fee, as the package is
        configured today. The tests must pass on the current code and fail if a pricing rule
        changes. Change no other file.
        """)
    return Planted(
        title="Integration tests for quotes",
        description=f"The quote pipeline of the {plan.domain} service has no test across its layers.",
        sessions=[statement],
        hidden_tests=tests,
        needle_files=[f"{p}/config.py"],
        decoy_files=[f"{p}/legacy/settings_v1.py"],
        mutants=mutants,
        model_tests=path,
        info={"unit": rng.randrange(1000, 2000)},
    )


def reference(plan: Plan, planted: Planted, context: Mapping[str, str], session: int) -> dict[str, str]:
    """Tests pinning totals computed with the constants read from the shown files (the
    decoy's when ``config.py`` is not shown), at, below and above the threshold."""
    p, e, E = plan.pkg, plan.e, plan.E
    const = dict(plan.const)
    for name in CONSTANTS:
        found = find_constant(context, name)
        if found is None:
            return {}
        const[name] = found[1]
    t, u = const["BULK_MIN_UNITS"], planted.info["unit"]
    cases = {"below_the_threshold": t - 1, "at_the_threshold": t, "above_the_threshold": t + 5}
    body = "".join(
        dedent(f"""


        def test_quote_{name}():
            assert _quote({q}, {u}) == {price(plan, q, u, const=const)}
        """)
        for name, q in cases.items()
    )
    text = (
        dedent(f'''
        """Quotes end to end: handle_create, then handle_quote through every pricing step."""

        from {p}.api.{e}_api import handle_create, handle_quote
        from {p}.repositories.{e}_repository import {E}Repository
        from {p}.services.{e}_service import {E}Service


        def _quote(quantity, unit_price_cents):
            service = {E}Service({E}Repository())
            handle_create(service, {{"id": 1, "name": "q", "quantity": quantity, "unit_price_cents": unit_price_cents}})
            return handle_quote(service, {{"id": 1}})["total_cents"]
        ''')
        + body
    )
    return {model_test_path(plan): text}
