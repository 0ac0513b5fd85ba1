"""A dataset's ``model_kwargs`` against the model under test.

Upstream's runner takes the model from each dataset file (``model_kwargs.model_platform`` /
``model_type``, default ``openai`` / ``gpt-4o``). Here the model under test is ``--egi-model``;
a dataset's ``model_kwargs`` is **honoured** when its ``model_platform`` names the model under
test's provider (the part before the first ``/`` of the LiteLLM model string): the trial runs
``<model_platform>/<model_type>`` through the same provider settings (retries, cache, rate
limits; ``api_url``, when given, as its API base), and its usage is the trial's. Otherwise it
is **ignored** (the model under test runs), and the record says so with the reason. Its
``api_key`` is never read.
"""

from __future__ import annotations

from typing import Any

__all__ = ["choose_client", "model_kwargs_decision"]

_CORES: dict[tuple[str, str], Any] = {}


def model_kwargs_decision(model_kwargs: dict[str, Any] | None, model: str) -> dict[str, Any] | None:
    """What to do with a dataset's ``model_kwargs`` for the model under test ``model``.

    Returns:
        None when the dataset gives none; else ``{"asked": "<platform>/<type>", "status":
        "honoured" | "ignored", "reason": str, "run": model string to run}``.
    """
    if not model_kwargs:
        return None
    platform = str(model_kwargs.get("model_platform") or "openai")
    asked = f"{platform}/{model_kwargs.get('model_type') or 'gpt-4o'}"
    provider = model.split("/", 1)[0] if "/" in model else None
    if provider == platform and not model.startswith("egi/"):
        return {"asked": asked, "status": "honoured", "run": asked,
                "reason": f"it names the model under test's provider {platform!r}"}  # fmt: skip
    why = ("the model under test is an offline reference policy" if model.startswith("egi/") else
           f"the model under test {model!r} is not from provider {platform!r}" if provider else
           f"the model under test {model!r} names no provider (write it as <provider>/<model>)")  # fmt: skip
    return {"asked": asked, "status": "ignored", "run": model, "reason": why}


def choose_client(task: Any, client: Any, item: Any = None) -> tuple[Any, dict[str, Any] | None]:
    """The client a trial runs with, and the ``model_kwargs`` decision to record.

    Args:
        task: the task (its ``data["config"]["model_kwargs"]``).
        client: the model under test's client for this trial.
        item: the pytest item; when the client is switched, the item's usage is the new one's.

    Returns:
        ``(client, decision)``; ``decision`` is :func:`model_kwargs_decision`'s result (None
        without ``model_kwargs``). A client that cannot be rebuilt for another model (not a
        LiteLLM trial client) keeps the model under test and the decision reads ``ignored``.
    """
    kwargs = (task.data.get("config") or {}).get("model_kwargs")
    decision = model_kwargs_decision(kwargs, str(getattr(client, "name", "")))
    if decision is None or decision["status"] != "honoured" or decision["run"] == client.name:
        return client, decision
    core = getattr(client, "core", None)
    if core is None:
        return client, {**decision, "status": "ignored", "run": client.name,
                        "reason": "the model under test's client cannot be rebuilt "
                                  "for another model"}  # fmt: skip
    from pytest_egi.models.litellm_client import LiteLLMClient

    api_base = (kwargs or {}).get("api_url") or core.api_base
    key = (decision["run"], api_base or "")
    if key not in _CORES:
        _CORES[key] = LiteLLMClient(
            decision["run"], api_base=api_base, settings=core.settings, role=core.role
        )
    switched = _CORES[key].for_trial(client.trial, client.namespace)
    if item is not None:
        from pytest_egi.run.state import item_state

        item_state(item).client = switched
    return switched, decision
