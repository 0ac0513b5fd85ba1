"""The fixtures a suite's test function asks for: ``egi_case`` (parametrized by
:mod:`pytest_egi.collect.parametrize`), ``egi_task``, ``egi_model`` and ``egi`` (the
recorder); and the warning that closes a run without a model, whose items ``egi_model``
skipped.
:mod:`pytest_egi.plugin` imports them, so pytest finds them on the plugin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from pytest_egi.run.items import client_for, item_problem
from pytest_egi.run.state import SETTINGS_KEY, Case, case_of, item_state

if TYPE_CHECKING:
    from pytest_egi.run.recorder import EgiRecorder

__all__ = ["NO_MODEL_REASON", "NoModelCheck", "egi", "egi_case", "egi_model", "egi_task", "no_model_refusal",
           "no_model_warning"]

NO_MODEL_REASON = "no model under test: pass --egi-model (e.g. --egi-model egi/oracle)"


def no_model_refusal(count: int) -> str:
    """The usage error (exit status 4) of a session that selected ``count`` benchmark items
    and names no model under test (outside ``--collect-only``): a CI job that forgot
    ``--egi-model`` must not be green."""
    items = "benchmark item" if count == 1 else "benchmark items"
    return (f"{count} {items} selected but no model under test: pass --egi-model egi/oracle (the "
            "offline reference policy) or a real model (e.g. --egi-model openai/gpt-4o-mini); "
            "--collect-only lists the items without one")


class NoModelCheck:
    """Registered on the controller of a session without a model (``pytest_egi.plugin``):
    under xdist the workers collect, and skip, the benchmark items (``egi_model``); this
    counts those skips and ends the session with exit status 4 (a serial session is refused
    when collection finishes, :func:`pytest_egi.collect.parametrize.finish_collection`)."""

    def __init__(self) -> None:
        self.skipped = 0

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count a benchmark item skipped for want of a model."""
        longrepr = report.longrepr
        if report.skipped and isinstance(longrepr, tuple) and NO_MODEL_REASON in str(longrepr[2]):
            self.skipped += 1

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Exit status 4 when benchmark items were skipped for want of a model, unless the
        session already ends interrupted or in an internal error."""
        kept = (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.INTERNAL_ERROR)
        if self.skipped and int(exitstatus) not in kept:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR



_ITEM: list[pytest.Item | None] = [None]
"""The item whose ``egi_case`` was set up last in this process. The fixtures that depend on
``egi_case`` read their item here instead of asking for ``request``: pytest makes a new
fixture definition object for ``request`` each time a fixture that asks for it is set up or
looked up (about 30 us each; five per item before)."""


def _item_of(case: Case) -> pytest.Item:
    """The item ``case`` belongs to (set up by :func:`egi_case` just before).

    Raises:
        RuntimeError: ``egi_case`` was not set up for ``case`` in this process (a bug).
    """
    item = _ITEM[0]
    if item is None or case_of(item) is not case:
        raise RuntimeError("egi fixtures: egi_case was not set up for this item")
    return item


@pytest.fixture
def egi_case(request: pytest.FixtureRequest) -> Case:
    """The item's case (task, trial, suite); parametrized by ``pytest_generate_tests``.

    Errors or skips the item, with the reason, when its task could not be loaded or the
    suite cannot run it (:func:`~pytest_egi.run.items.item_problem`)."""
    case: Case = request.param
    item = _ITEM[0] = request.node
    if item.config.stash[SETTINGS_KEY].model:
        item_problem(item, case)
    return case


@pytest.fixture
def egi_task(egi_case: Case) -> Any:
    """The :class:`~pytest_egi.suite.Task` of this item."""
    return egi_case.task


@pytest.fixture
def egi_model(egi_case: Case) -> Any:
    """The model client for this trial (an offline policy or the shared LiteLLM client).

    Skips the item when no model is configured.
    """
    item = _item_of(egi_case)
    settings = item.config.stash[SETTINGS_KEY]
    if not settings.model:
        pytest.skip(NO_MODEL_REASON)
    client = client_for(item.config, settings, settings.model, egi_case)
    item_state(item).client = client
    return client


@pytest.fixture
def egi(egi_case: Case) -> EgiRecorder:
    """The recorder: ``egi.record(score, trajectory)``; also ``egi.options``, ``egi.judge``."""
    from pytest_egi.run.recorder import EgiRecorder

    item = _item_of(egi_case)
    config = item.config
    settings = config.stash[SETTINGS_KEY]
    judge = simulator = None
    if settings.judge_model:
        from pytest_egi.judges import LLMJudge

        judge = LLMJudge(client_for(config, settings, settings.judge_model, egi_case, "judge"))
    if settings.simulator_model:
        simulator = client_for(config, settings, settings.simulator_model, egi_case, "simulator")
    recorder = EgiRecorder(item, settings, judge, simulator)
    item_state(item).recorder = recorder  # an errored item's judge/simulator usage
    return recorder


def no_model_warning(terminalreporter: Any) -> None:
    """Without a model, say loudly that the benchmark items were skipped (not a green run)."""
    skipped = [
        r for r in terminalreporter.stats.get("skipped", [])
        if isinstance(r.longrepr, tuple) and NO_MODEL_REASON in str(r.longrepr[2])
    ]
    if skipped:
        terminalreporter.write_line(
            f"ERROR (usage, exit status 4): {no_model_refusal(len(skipped))}; no EGI was computed",
            red=True,
            bold=True,
        )
