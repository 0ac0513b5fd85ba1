"""Helpers for the HERB suite tests: one reference-policy trial, and its record."""

from __future__ import annotations

from typing import Any

from pytest_egi.agents.loops import Trajectory
from pytest_egi.models import make_client
from pytest_egi.suite import Task, TaskScore
from suites.herb import SUITE, HerbOptions
from suites.herb.agent import run_trial

MODELS = ("egi/oracle", "egi/noisy-0.2", "egi/noisy-0.5", "egi/null")


def run(model: str, task: Task, options: HerbOptions) -> tuple[Trajectory, TaskScore]:
    """One trial of ``model`` on ``task`` (noise key as the core builds it), and its score."""
    client = make_client(model, suite=SUITE, task=task, options=options,
                         noise_key=f"42|herb|{task.id}|0")  # fmt: skip
    trajectory = run_trial(task, client, options)
    return trajectory, SUITE.score(task, trajectory.to_dict(), options)


def record(task: Task, score: TaskScore) -> dict[str, Any]:
    """The record shape ``summarize`` receives from the core."""
    return {"task_id": task.id, "category": task.category, "trial": 0,
            "status": "passed" if score.success else "failed", "values": score.values,
            "details": score.details}  # fmt: skip
