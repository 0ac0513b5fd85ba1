"""Generation parameters: what the user sets per role, and what a model will accept.

Three places decide the parameters of a call, later ones winning:

1. the suite's upstream defaults, passed by its scaffold with each call (CRMArena:
   ``temperature=0``, ``max_tokens=2000``);
2. the user's ``--egi-model-params`` / ``--egi-judge-params`` / ``--egi-simulator-params``
   (``KEY=VALUE,...``; ``KEY=null`` removes a default);
3. what the model accepts: a parameter LiteLLM knows the model refuses (a name it does not
   support, or a value it rejects, like ``temperature=0`` for OpenAI's reasoning models) is
   dropped with a note. A model LiteLLM does not know keeps everything.

:func:`parse_params` and :func:`merge_params` are pure; :func:`check_params` needs the
``litellm`` module and runs where LiteLLM lives (this process, or the model gateway).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

__all__ = ["CALL_SETTINGS", "check_params", "merge_params", "parse_params", "scaffold_params"]

_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def scaffold_params(defaults: dict[str, Any], client: Any, reasoning_max_tokens: int) -> dict[str, Any]:
    """A scaffold's parameters for every call to ``client``: a copy of its ``defaults`` (the
    suite's upstream ones), with ``max_tokens`` raised to ``reasoning_max_tokens`` when LiteLLM
    marks the model as a reasoning model (``client.reasoning``; hidden reasoning counts against
    ``max_tokens``). The user's ``--egi-model-params`` still override the result."""
    params = dict(defaults)
    if getattr(client, "reasoning", False):
        params["max_tokens"] = reasoning_max_tokens
    return params


def parse_params(flag: str, text: str) -> dict[str, Any]:
    """Parse ``KEY=VALUE,KEY=VALUE`` into a dict.

    A value that parses as a JSON scalar becomes that scalar (``0`` -> int, ``0.2`` -> float,
    ``true`` -> bool, ``null`` -> None, ``"a,b"`` -> str); anything else is kept as the string
    (``reasoning_effort=low``). None means "do not send this parameter" (it removes a suite
    default). An empty text gives ``{}``.

    Args:
        flag: the option name, for messages (``--egi-model-params``).
        text: the option value.

    Raises:
        ValueError: a part without ``=``, an empty or invalid key, or a key given twice; the
            message names ``flag`` and the part.
    """
    out: dict[str, Any] = {}
    for part in _split(text):
        if not part.strip():
            continue
        key, sep, raw = part.partition("=")
        key = key.strip()
        if not sep or not _KEY.match(key):
            raise ValueError(
                f"{flag}: expected KEY=VALUE[,KEY=VALUE...], got {part.strip()!r} "
                f"(e.g. {flag} temperature=0,max_tokens=1024)")
        if key in out:
            raise ValueError(f"{flag}: {key} is given twice")
        raw = raw.strip()
        try:
            value = json.loads(raw)
        except ValueError:
            value = raw
        if isinstance(value, (dict, list)):
            value = raw
        out[key] = value
    return out


def _split(text: str) -> list[str]:
    """Split on commas outside double quotes (``stop="a,b"`` stays one part)."""
    parts, current, quoted = [], [], False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def merge_params(defaults: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """``defaults`` updated with ``overrides``; keys whose value ends up None are removed."""
    merged = {**defaults, **overrides}
    return {k: v for k, v in merged.items() if v is not None}


CALL_SETTINGS = frozenset({"api_key", "api_base", "base_url", "api_version", "organization",
                           "deployment_id"})
"""LiteLLM call settings that are not generation parameters (where and how to connect):
sent as given, never checked against the model's parameter list (LiteLLM lists them among
its OpenAI parameters, but no model "supports" them). A secret among them (``api_key``) is
redacted wherever it would be written (:func:`pytest_egi.models.secrets.register_secrets`)."""


def _first_sentence(text: str) -> str:
    text = re.sub(r"^litellm\.\w+:\s*", "", str(text)).strip()
    cut = text.find(" To drop")
    return (text[:cut] if cut > 0 else text)[:200].strip()


@functools.lru_cache(maxsize=256)
def _value_refusal(litellm: Any, bare: str, provider: str, key: str, value_json: str) -> str | None:
    """LiteLLM's reason for refusing ``key=value`` for the model, or None when it accepts."""
    from litellm.utils import get_optional_params

    try:
        get_optional_params(model=bare, custom_llm_provider=provider, drop_params=False,
                            **{key: json.loads(value_json)})
    except litellm.UnsupportedParamsError as exc:
        return _first_sentence(str(exc))
    except Exception:  # noqa: BLE001 - no opinion from LiteLLM: keep the parameter
        return None
    return None


def check_params(litellm: Any, model: str, params: dict[str, Any]) -> dict[str, Any]:
    """Which of ``params`` to send to ``model``, by LiteLLM's own knowledge of the model.

    An OpenAI parameter name that ``litellm.get_supported_openai_params`` does not list for
    the model, or a value LiteLLM's parameter mapping refuses (``UnsupportedParamsError``,
    e.g. ``temperature=0`` for ``o3``), is dropped. Names that are not OpenAI parameters
    (``top_k``, provider extras) and the call settings of :data:`CALL_SETTINGS` (``api_key``,
    ``api_version``, ...) pass through, as LiteLLM passes them. When LiteLLM does not
    know the model (no parameter list), everything is kept.

    Args:
        litellm: the imported ``litellm`` module.
        model: the LiteLLM model string.
        params: the merged parameters (no None values).

    Returns:
        ``{"sent": {name: value}, "dropped": {name: reason}, "reasoning": bool}``;
        ``reasoning`` is LiteLLM's ``supports_reasoning(model)`` (False when unknown).
    """
    try:
        reasoning = bool(litellm.supports_reasoning(model=model))
    except Exception:  # noqa: BLE001 - unknown model
        reasoning = False
    try:
        bare, provider, _, _ = litellm.get_llm_provider(model)
        supported = litellm.get_supported_openai_params(model=bare, custom_llm_provider=provider)
    except Exception:  # noqa: BLE001 - LiteLLM does not know the model: keep everything
        supported = None
    if supported is None:
        return {"sent": dict(params), "dropped": {}, "reasoning": reasoning}
    openai_names = set(getattr(litellm, "OPENAI_CHAT_COMPLETION_PARAMS", ()) or ()) - CALL_SETTINGS
    sent: dict[str, Any] = {}
    dropped: dict[str, str] = {}
    for key, value in params.items():
        if key in CALL_SETTINGS:
            sent[key] = value
            continue
        if key not in supported:
            if key in openai_names:
                dropped[key] = f"{model} does not support {key} (LiteLLM)"
            else:
                sent[key] = value
            continue
        try:
            value_json = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError):
            sent[key] = value
            continue
        refusal = _value_refusal(litellm, bare, provider, key, value_json)
        if refusal:
            dropped[key] = refusal
        else:
            sent[key] = value
    return {"sent": sent, "dropped": dropped, "reasoning": reasoning}
