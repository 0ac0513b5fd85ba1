"""A tiny suite and routing file for testing the plugin core with pytester.

The toy suite has tasks "what is the code of item k?"; the agent must call ``lookup`` and then
``submit`` the code. Categories ``alpha`` and ``beta``; sub-metrics ``acc`` (mean success,
0-1), ``acc_alpha``, ``acc_beta`` (declared in ``sub_metrics``). The package is
named ``toysuites`` so it never collides with the repository's own ``suites`` package. With
the environment variable ``TOY_LOAD_LOG`` set, ``load_tasks`` appends ``<pid> <shared dir>``
to that file on each call.
"""

ROUTING = """\
version: 1
buckets:
  M1: {name: Outcome, weight: 0.28}
  M2: {name: Tools, weight: 0.22, floor: 70}
  M3: {name: Planning, weight: 0.16}
  M4: {name: Grounding, weight: 0.14}
  M5: {name: Safety, weight: 0.14, floor: 70}
  M6: {name: Engineering, weight: 0.06}
suites: [toy, absent]
routes:
  - {suite: toy, sub_metric: acc_alpha, bucket: M1, transform: fraction}
  - {suite: toy, sub_metric: acc_beta, bucket: M1, transform: fraction}
  - {suite: toy, sub_metric: acc, bucket: M4, transform: fraction}
  - {suite: absent, sub_metric: whatever, bucket: M3, transform: fraction}
modes:
  quick:
    seed: 7
    suites:
      toy: {per_category: 3}
  deep:
    seed: 7
    suites:
      toy: {}
"""

SUITE_INIT = """
import json
import os
from pydantic import BaseModel
from pytest_egi.agents.tools import Tool, Toolkit
from pytest_egi.agents.loops import run_tool_loop
from pytest_egi.models.base import ProviderError, assistant_message, tool_call
from pytest_egi.suite import Task, TaskScore


class Options(BaseModel):
    max_turns: int = 5
    fail_env: bool = False
    fail_every: int = 0


def code_of(seed, k):
    return f"C{(seed * 31 + k * 17) % 1000:03d}"


class ToySuite:
    name = "toy"
    version = "1"
    categories = ("alpha", "beta")
    options_model = Options
    sub_metrics = frozenset({"acc", "acc_alpha", "acc_beta"})
    diagnostics = frozenset()

    def load_tasks(self, profile, options):
        if os.environ.get("TOY_LOAD_LOG"):  # one line per call: pid and shared build directory
            from pytest_egi.cache.shared import shared_dir
            with open(os.environ["TOY_LOAD_LOG"], "a") as fh:
                fh.write(f"{os.getpid()} {shared_dir()}\\n")
        tasks = []
        for cat in profile.categories or self.categories:
            n = profile.per_category or 5
            for k in range(n):
                idx = k if cat == "alpha" else 100 + k
                tasks.append(Task(id=f"{cat}-{k}", category=cat,
                                  data={"item": idx, "gold": code_of(profile.seed, idx),
                                        "seed": profile.seed}))
        return tasks

    def reference_policy(self, task, options, noise):
        def policy(messages, tools):
            last = messages[-1]
            if last["role"] != "tool":
                return assistant_message(None, [tool_call("c1", "lookup",
                                         json.dumps({"item": task.data["item"]}))])
            code = json.loads(last["content"])["code"]
            if noise.happens("wrong_answer"):
                code = "WRONG"
            return assistant_message(None, [tool_call("c2", "submit", json.dumps({"code": code}))])
        return policy

    def toolkit(self, task, options):
        def lookup(item: int):
            if options.fail_env or (options.fail_every and item % options.fail_every == 0):
                raise ProviderError("simulated provider outage")
            return {"code": code_of(task.data["seed"], item)}
        def submit(code: str):
            return code
        return Toolkit.of(
            Tool("lookup", "Look up an item",
                 {"type": "object", "properties": {"item": {"type": "integer"}}}, lookup),
            Tool("submit", "Submit the code",
                 {"type": "object", "properties": {"code": {"type": "string"}}}, submit,
                 kind="submit"),
        )

    def score(self, task, trajectory, options, judge=None):
        got = trajectory["final_answer"]
        ok = got == task.data["gold"]
        return TaskScore(success=ok, values={"correct": float(ok)}, expected=task.data["gold"], got=got)

    def summarize(self, records):
        out = {}
        def mean(rs):
            return sum(r["values"]["correct"] for r in rs) / len(rs) if rs else None
        out["acc"] = mean(records)
        for cat in self.categories:
            out[f"acc_{cat}"] = mean([r for r in records if r["category"] == cat])
        return out


SUITE = ToySuite()
"""

TEST_MODULE = """
from pytest_egi.agents.loops import run_tool_loop
from toysuites.toy import SUITE

def test_task(egi_task, egi_model, egi):
    messages = [{"role": "system", "content": "Find the code."},
                {"role": "user", "content": f"What is the code of item {egi_task.data['item']}?"}]
    trajectory = run_tool_loop(egi_model, messages, SUITE.toolkit(egi_task, egi.options),
                               max_turns=egi.options.max_turns)
    egi.record(SUITE.score(egi_task, trajectory.to_dict(), egi.options), trajectory)
"""


def make_toy_project(pytester, package: str = "toysuites", init: str = SUITE_INIT):
    """Write routing.yaml, the toy suite (``init``: its ``__init__.py``) and its test module
    into ``pytester.path``, under ``<package>/toy``; returns the package folder. Tests whose
    suite differs from the toy's give it a package name of its own, so the per-process suite
    cache never hands another test their variant."""
    pytester.makefile(".yaml", routing=ROUTING)
    pytester.makeconftest("")
    pkg = pytester.mkpydir(package)
    toy = pkg / "toy"
    toy.mkdir()
    (toy / "__init__.py").write_text(init)
    (toy / "test_toy.py").write_text(TEST_MODULE.replace("toysuites", package))
    return pkg


def toy_suite_package(root, package: str):
    """Write ``<root>/routing.yaml`` and ``<root>/<package>/toy`` (the toy suite, no test
    module), yield the package folder, then drop the package's modules from ``sys.modules``.
    For tests that import the suite directly (doctor); ``package`` must be unique per test
    module so their imports never clash."""
    import sys

    (root / "routing.yaml").write_text(ROUTING)
    suites = root / package
    (suites / "toy").mkdir(parents=True)
    (suites / "__init__.py").write_text("")
    (suites / "toy" / "__init__.py").write_text(SUITE_INIT)
    yield suites
    for name in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        del sys.modules[name]
