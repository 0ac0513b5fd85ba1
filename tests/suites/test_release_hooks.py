"""Each suite's ``release`` (``pytest_egi.suite.Suite.release``): once a process has run its
last item of the suite, what it built or cached for the items is let go of, and made again,
the same, on the next use (the core calls ``prepare`` again if an item comes back)."""

from __future__ import annotations

import ast
import gc

from pytest_egi.scoring.config import load_routing
from tests.suites.herb.conftest import ROUTING


def test_herb_lets_go_of_its_retrieval_environment(tmp_path):
    from suites.herb import SUITE, HerbOptions
    from suites.herb.env import _cached_env, get_env

    opts = HerbOptions()
    tasks = SUITE.load_tasks(load_routing(ROUTING)[0].profile("quick", "herb"), opts)[:3]
    SUITE.prepare(tasks, opts)
    env = get_env(tasks[0].data["world"], opts)
    assert _cached_env.cache_info().currsize >= 1
    SUITE.release(opts)
    assert _cached_env.cache_info().currsize == 0
    again = get_env(tasks[0].data["world"], opts)  # built again, the same
    assert again is not env and again.retrieve("launch plan", 5) == env.retrieve("launch plan", 5)


def test_mcp_universe_lets_go_of_its_evaluators_finance_world():
    from suites.mcp_universe import SUITE
    from suites.mcp_universe.scorer.ops import yfinance

    before = yfinance.company(42, "MSFT")
    assert yfinance.world.cache_info().currsize >= 1
    SUITE.release(None)
    assert yfinance.world.cache_info().currsize == 0
    assert yfinance.company(42, "MSFT") == before


def test_locobench_keeps_no_module_tree_after_scoring():
    """The software-engineering checks parse each file once per call and keep no tree after
    it (before: up to 4,096 trees for the rest of the process, about 1.5 MB per easy
    scenario)."""
    from suites.locobench import data
    from suites.locobench.structure import software_engineering

    scenario = data._build(data.spec_key({"seed": 42, "category": "architectural_understanding",
                                          "difficulty": "easy", "index": 0}))  # fmt: skip
    path = next(p for p in sorted(scenario.files) if p.endswith(".py") and not p.endswith("__init__.py"))
    after = dict(scenario.files, **{path: scenario.files[path] + "\n\ndef added_helper():\n    return 1\n"})

    def trees() -> int:
        gc.collect()
        return sum(isinstance(o, ast.Module) for o in gc.get_objects())

    held = trees()
    first = software_engineering(scenario.files, after, [path])
    assert trees() == held
    assert software_engineering(scenario.files, after, [path]) == first


def test_locobench_holds_one_module_tree_at_a_time(monkeypatch):
    """Each file's tree is summarized (imports, names, signatures, calls) and dropped before the
    next file is parsed (before: every tree of the project was held through the call, about
    40 MB for an expert scenario's 983 files)."""
    import weakref

    from suites.locobench import data, structure

    scenario = data._build(data.spec_key({"seed": 42, "category": "cross_file_refactoring",
                                          "difficulty": "easy", "index": 0}))  # fmt: skip
    path = next(p for p in sorted(scenario.files) if p.endswith(".py") and not p.endswith("__init__.py"))
    after = dict(scenario.files, **{path: scenario.files[path] + "\n\ndef added_helper():\n    return 1\n"})
    parsed: list[weakref.ref] = []
    most_alive = [0]
    real_parse = ast.parse

    def parse(*args: object, **kwargs: object) -> ast.AST:  # (the ast module's own, patched)
        gc.collect()
        most_alive[0] = max(most_alive[0], sum(r() is not None for r in parsed))
        tree = real_parse(*args, **kwargs)
        parsed.append(weakref.ref(tree))
        return tree

    monkeypatch.setattr(structure.ast, "parse", parse)
    result = structure.software_engineering(scenario.files, after, [path])
    assert len(parsed) > 50 and most_alive[0] == 0
    assert result.score == 1.0


def test_locobench_keeps_a_few_scenarios_built():
    """A worker keeps the last SCENARIOS_KEPT scenarios it built (an item builds its own three
    times), not 64 (about 30 MB of project text at the deep profile)."""
    import weakref

    from suites.locobench import data

    data._build.cache_clear()
    built = [weakref.ref(data._build(data.spec_key({"seed": 42, "category": "feature_implementation",
                                                    "difficulty": "easy", "index": i})))
             for i in range(8)]  # fmt: skip
    gc.collect()
    assert sum(r() is not None for r in built) == data.SCENARIOS_KEPT <= 4


def test_crmarena_lets_go_of_its_orgs():
    from suites.crmarena import SUITE, CrmArenaOptions, _generated_org

    opts = CrmArenaOptions()
    SUITE.org(opts, 42, "quick")
    assert _generated_org.cache_info().currsize >= 1
    SUITE.release(opts)
    assert _generated_org.cache_info().currsize == 0


def test_benchforce_stops_its_environment_server():
    from suites.benchforce import SUITE
    from suites.benchforce.env.client import shared_server

    server = shared_server()
    server.start()
    assert server.alive()
    SUITE.release(None)
    assert not server.alive()
    server.start()  # starts again on the next use
    assert server.alive()
    SUITE.release(None)


def test_the_other_suites_let_go_of_what_they_generated():
    from suites.mcpeval import SUITE as MCPEVAL
    from suites.mcpeval import _generated as mcpeval_generated
    from suites.personabench import SUITE as PERSONABENCH
    from suites.personabench.data import _community, community
    from suites.userbench import SUITE as USERBENCH
    from suites.userbench import _generated as userbench_generated

    caches = (mcpeval_generated, userbench_generated, _community)
    mcpeval_generated("airbnb", 42)
    userbench_generated("travel22", 42, 3)
    community({"seed": 42, "people": 3}, 0)
    assert all(c.cache_info().currsize >= 1 for c in caches)
    MCPEVAL.release(None)
    USERBENCH.release(None)
    PERSONABENCH.release(None)
    assert [c.cache_info().currsize for c in caches] == [0, 0, 0]
