"""API keys: loading them from a ``.env`` file, naming the ones present, and redacting them.

Keys are read from the environment (or a ``.env`` file that never overrides it) and must never
appear in records, trajectories, reports or error messages. :func:`redact` replaces the value
of every environment variable whose *name* looks secret (``*_API_KEY``, ``*_TOKEN``,
``*_SECRET``, ...), every secret given as an option (:func:`register_secrets`: the value of a
secret-named generation parameter, ``--egi-model-params api_key=...``, see
:func:`secret_param_values`) and every string shaped like a well-known key format
(``sk-...``, ``Bearer ...``, ``AKIA...``, ``hf_...``) with ``***``.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "PROVIDER_KEY_NAMES",
    "REDACTED",
    "find_secret_leaks",
    "holds_secret_json",
    "is_secret_name",
    "is_secret_param",
    "load_env_file",
    "mask_secret_params",
    "parse_env_file",
    "present_provider_keys",
    "redact",
    "redact_obj",
    "register_secrets",
    "secret_param_values",
    "secret_values",
]

REDACTED = "***"

PROVIDER_KEY_NAMES = (
    "OPENAI_API_KEY", "AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY", "GOOGLE_API_KEY", "VERTEXAI_CREDENTIALS", "MISTRAL_API_KEY",
    "COHERE_API_KEY", "GROQ_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_API_KEY",
    "FIREWORKS_AI_API_KEY", "DEEPSEEK_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY",
    "PERPLEXITYAI_API_KEY", "HUGGINGFACE_API_KEY", "HF_TOKEN", "HOSTED_VLLM_API_KEY",
    "OLLAMA_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "CEREBRAS_API_KEY",
    "DATABRICKS_API_KEY", "NVIDIA_NIM_API_KEY", "WATSONX_API_KEY", "VOYAGE_API_KEY",
)
"""Well-known provider credential variables (LiteLLM's names); others ending in ``_API_KEY``
are listed too."""

_SECRET_NAME = re.compile(
    r"(?i)(^|_)(API_?KEY|KEY|KEY_ID|TOKEN|SECRET|SECRET_KEY|PASSWORD|PASSWD|PASS|CREDENTIALS?"
    r"|AUTH|PRIVATE_KEY|ACCESS_KEY)$"
)
_NOT_SECRET_NAME = re.compile(r"(?i)^(PYTHONHASHSEED|GPG_KEY|SSH_AUTH_SOCK)$")

_KEY_SHAPES = re.compile(
    r"(?:\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_\-]{16,}"  # OpenAI / Anthropic / OpenRouter
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key id
    r"|\bhf_[A-Za-z0-9]{20,}"  # Hugging Face
    r"|\bAIza[0-9A-Za-z_\-]{30,}"  # Google
    r"|\bgsk_[A-Za-z0-9]{20,}"  # Groq
    r"|\bxai-[A-Za-z0-9]{20,})"
)
_BEARER = re.compile(r"(?i)\b(bearer|api[-_ ]?key[\"']?\s*[:=]\s*[\"']?)\s*([A-Za-z0-9._\-~+/=]{8,})")
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/@\s:]+):([^/@\s]+)@")

_MIN_SECRET_LEN = 6
"""Shorter values (``1``, ``true``) are not redacted: they would mangle ordinary text."""


@functools.lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """True when an environment variable's name looks like it holds a credential.

    Matches ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``,
    ``*_CREDENTIALS`` and friends (case-insensitive), plus every name in
    :data:`PROVIDER_KEY_NAMES`.
    """
    if _NOT_SECRET_NAME.match(name):
        return False
    return name.upper() in PROVIDER_KEY_NAMES or bool(_SECRET_NAME.search(name))


_SECRET_PARAM = re.compile(
    r"(?i)(^|_)(api_?key|key|key_id|access_key|private_key|secret(_key)?|password|passwd|"
    r"credentials?|auth|authorization)$|token(?!s|iz)|secret|passw|authoriz|bearer")
"""Generation-parameter names whose value is a secret: ``api_key``, ``*_key``, ``*token*``
(not ``max_tokens`` and other ``*tokens`` counts), ``*secret*``, ``password``,
``authorization``, ``*credentials``."""


def is_secret_param(name: str) -> bool:
    """True when a generation parameter (or a header, or a key inside one) named ``name``
    holds a secret: ``api_key``, ``*_key``, ``*token*`` (``max_tokens`` is a count, not a
    secret), ``*secret*``, ``password``, ``authorization``, ``*credentials`` (case-insensitive),
    or any name :func:`is_secret_name` takes for an environment variable."""
    return bool(_SECRET_PARAM.search(name)) or is_secret_name(name)


def _json_object(value: Any) -> Any:
    """``value`` parsed when it is a string holding a JSON object (``extra_headers`` given on
    the command line stays a string), else ``value``."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        return parsed if isinstance(parsed, dict) else value
    return value


def secret_param_values(params: Mapping[str, Any] | None) -> list[str]:
    """The secrets among generation parameters: the value (as text) of every secret-named
    key (:func:`is_secret_param`), at any depth of a mapping value or of a string holding a
    JSON object (``extra_headers={"Authorization": "..."}``). Values shorter than 6
    characters are left out, as for environment variables.

    Args:
        params: ``{name: value}`` as parsed from ``--egi-model-params`` (or the kwargs of a
            call), or None.
    """
    found: list[str] = []

    def walk(mapping: Mapping[str, Any]) -> None:
        for key, value in mapping.items():
            value = _json_object(value)
            if isinstance(value, Mapping):
                walk(value)
            elif value is not None and not isinstance(value, bool) and is_secret_param(str(key)):
                text = str(value)
                if len(text) >= _MIN_SECRET_LEN:
                    found.append(text)

    walk(params or {})
    return found


def mask_secret_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``params`` fit to be stored (run.json, egi.json, records): the value of every
    secret-named key (:func:`is_secret_param`, at any depth, inside a JSON-object string too)
    replaced by ``***``. None values (``KEY=null``: "do not send") stay None."""

    def mask(mapping: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in mapping.items():
            parsed = _json_object(value)
            if isinstance(parsed, Mapping):
                inner = mask(parsed)
                out[key] = inner if isinstance(value, Mapping) else json.dumps(inner)
            elif value is not None and is_secret_param(str(key)):
                out[key] = REDACTED
            else:
                out[key] = value
        return out

    return mask(params)


_REGISTERED: set[str] = set()
"""Secrets given as options in this process (:func:`register_secrets`)."""


def register_secrets(values: Sequence[str]) -> None:
    """Add ``values`` (secrets given as options, e.g. :func:`secret_param_values` of
    ``--egi-model-params``) to this process's redaction set: from now on :func:`redact`,
    :func:`redact_obj`, :func:`holds_secret` and :func:`find_secret_leaks` treat them like
    the secret environment variables' values. Values shorter than 6 characters are ignored.
    Called by every :class:`~pytest_egi.models.settings.ProviderSettings` built (each
    process: the controller, every xdist worker) and by the gateway for the keys a call
    carries."""
    global _ENV_SNAPSHOT
    new = {v for v in values if isinstance(v, str) and len(v) >= _MIN_SECRET_LEN} - _REGISTERED
    if new:
        _REGISTERED.update(new)
        _ENV_SNAPSHOT = None  # recompute the merged list on the next call


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """The values of secret-named variables in ``environ`` (default ``os.environ``) and the
    secrets registered as options (:func:`register_secrets`), longest first, skipping values
    shorter than 6 characters.

    For ``os.environ`` the result is kept until the environment changes (compared with a
    copy of its raw contents, which is much cheaper than decoding and matching every name):
    records are redacted once or twice per item.
    """
    global _ENV_SNAPSHOT, _ENV_VALUES
    if environ is None:
        data = getattr(os.environ, "_data", None)
        if isinstance(data, dict):
            if data.get(_CURRENT_TEST) is not None:  # pytest rewrites it at every phase
                data = dict(data)
                del data[_CURRENT_TEST]
            if data != _ENV_SNAPSHOT:
                _ENV_VALUES = _secret_values(os.environ)
                _ENV_SNAPSHOT = dict(data)
            return list(_ENV_VALUES)
        environ = os.environ
    return _secret_values(environ)


_ENV_SNAPSHOT: dict[Any, Any] | None = None
_CURRENT_TEST = os.environ.encodekey("PYTEST_CURRENT_TEST") if hasattr(os.environ, "encodekey") else None
"""pytest sets ``PYTEST_CURRENT_TEST`` (never a secret) at each phase of each item: left out of
the comparison, or the environment would look changed at every call."""
_ENV_VALUES: list[str] = []


def _secret_values(env: Mapping[str, str]) -> list[str]:
    values = {v for k, v in env.items() if v and len(v) >= _MIN_SECRET_LEN and is_secret_name(k)}
    return sorted(values | _REGISTERED, key=len, reverse=True)


_SHORTEST_SHAPE = 8
"""No key shape, bearer token or URL password fits in fewer characters (``a://u:p@``)."""


def redact(text: str, environ: Mapping[str, str] | None = None, *,
           values: Sequence[str] | None = None) -> str:
    """Replace every secret in ``text`` with ``***``.

    Secrets are: the values of secret-named environment variables (see
    :func:`is_secret_name`), strings shaped like well-known API keys, the token after
    ``Bearer`` / ``api_key=``, and the password in ``scheme://user:password@host`` URLs.

    Args:
        text: any text (an error message, a serialized record, a report page).
        environ: the environment to take secret values from (default ``os.environ``).
        values: the secret values, already taken from the environment with
            :func:`secret_values` (skips that scan; for callers redacting many strings).

    Returns:
        ``text`` with secrets replaced; unchanged when it holds none.
    """
    if not text:
        return text
    for value in values if values is not None else secret_values(environ):
        if value in text:
            text = text.replace(value, REDACTED)
    if len(text) < _SHORTEST_SHAPE:
        return text
    text = _KEY_SHAPES.sub(REDACTED, text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}" if m.group(1).lower() == "bearer"
                       else f"{m.group(1)}{REDACTED}", text)
    return _URL_USERINFO.sub(lambda m: f"{m.group(1)}{m.group(2)}:{REDACTED}@", text)


def redact_obj(obj: Any, environ: Mapping[str, str] | None = None) -> Any:
    """:func:`redact` applied to every string (values and keys) in a JSON-like structure.

    Returns a new structure (dicts, lists and tuples are copied; other values kept as is).
    The environment is scanned once per call, not once per string.
    """
    values = secret_values(environ)

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            return redact(node, values=values)
        if isinstance(node, dict):
            return {walk(k): walk(v) for k, v in node.items()}
        if isinstance(node, tuple):
            return tuple(walk(v) for v in node)
        if isinstance(node, list):  # a list subclass may not take an iterable: rebuild a plain list
            return [walk(v) for v in node]
        return node

    return walk(obj)



def holds_secret(text: str, values: Sequence[str] | None = None) -> bool:
    """True when :func:`redact` would change ``text`` (a secret value of the environment, a
    key shape, a bearer token or a URL password in it). One search per pattern, no copy: the
    fast check before redacting a large serialized structure.

    Args:
        text: any text.
        values: secret values from :func:`secret_values` (default: the environment's).
    """
    if not text:
        return False
    if any(v in text for v in (values if values is not None else secret_values())):
        return True
    if len(text) < _SHORTEST_SHAPE:
        return False
    # substring tests first: each pattern needs one of these (a regular expression scan of
    # every position costs several times more, and records and trajectories rarely match)
    if any(marker in text for marker in _KEY_SHAPE_MARKERS) and _KEY_SHAPES.search(text):
        return True
    if "://" in text and "@" in text and _URL_USERINFO.search(text):
        return True
    lowered = text.lower()  # (?i) also matches "i" with a dotless "\u0131", which lower() keeps
    if "bearer" in lowered or "api" in lowered or "\u0131" in text:
        return _BEARER.search(text) is not None
    return False


_KEY_SHAPE_MARKERS = ("sk-", "AKIA", "hf_", "AIza", "gsk_", "xai-")
"""Every match of ``_KEY_SHAPES`` holds one of these."""


def redact_json_safe(obj: Any) -> Any:
    """``obj`` with every secret redacted (:func:`redact_obj`), or ``obj`` itself, uncopied,
    when none of its strings holds one (the usual case: one C-speed serialization and a few
    searches, instead of a Python walk over every string).

    The check runs on the JSON text with its escapes undone, so every string of ``obj``
    appears in it character for character, between quotes: whatever :func:`redact` would
    find in one string it finds there too (a match across two strings only costs the walk).

    Args:
        obj: a JSON-like structure (records, trajectories); other values serialize by ``str``.
    """
    text = json.dumps(obj, ensure_ascii=False, default=str)
    return redact_obj(obj) if holds_secret_json(text) else obj


def holds_secret_json(text: str) -> bool:
    """True when some string of the structure serialized as ``text`` (JSON made with
    ``ensure_ascii=False``, any key order or indent) holds a secret (:func:`holds_secret`),
    or a match spans two of its strings (then :func:`redact_obj` finds nothing to change).

    The check runs on the text with its JSON escapes undone, so every string appears in it
    character for character, between quotes.
    """
    probe = _JSON_ESCAPE.sub(_unescape_one, text) if "\\" in text else text
    return holds_secret(probe)


_JSON_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescape_one(match: re.Match[str]) -> str:
    code = match.group(1)
    return _SIMPLE_ESCAPES[code] if len(code) == 1 else chr(int(code[1:], 16))


_ENV_LINE = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def parse_env_file(path: Path) -> dict[str, str]:
    """Parse a ``.env`` file: ``KEY=VALUE`` lines.

    Blank lines and ``#`` comments are skipped; ``export KEY=VALUE`` is accepted; a value may
    be wrapped in single or double quotes (double-quoted values understand ``\\n``, ``\\"``);
    an unquoted value ends at `` #``.

    Raises:
        OSError: the file cannot be read.
        ValueError: a line is not ``KEY=VALUE`` (the message gives the line number, never
            the line's content, which may be a secret).
    """
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _ENV_LINE.match(line)
        if not m:
            raise ValueError(f"{path}:{n}: expected KEY=VALUE")
        key, value = m.group(1), m.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            quote, value = value[0], value[1:-1]
            if quote == '"':
                value = value.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
        else:
            value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
        out[key] = value
    return out


def load_env_file(path: Path, environ: dict[str, str] | None = None) -> list[str]:
    """Load ``path`` into the environment without overriding variables already set.

    Args:
        path: the ``.env`` file.
        environ: the mapping to update (default ``os.environ``).

    Returns:
        The names that were set (sorted); values are never returned or printed.

    Raises:
        OSError: the file cannot be read.
        ValueError: a malformed line (see :func:`parse_env_file`).
    """
    env = os.environ if environ is None else environ
    loaded = []
    for key, value in parse_env_file(path).items():
        if key not in env:
            env[key] = value
            loaded.append(key)
    return sorted(loaded)


def present_provider_keys(environ: Mapping[str, str] | None = None) -> list[str]:
    """Names (never values) of provider credentials set and non-empty in the environment.

    Returns:
        Sorted names: the :data:`PROVIDER_KEY_NAMES` present plus any other ``*_API_KEY``.
    """
    env = os.environ if environ is None else environ
    names = {k for k, v in env.items() if v and (k in PROVIDER_KEY_NAMES or k.endswith("_API_KEY"))}
    return sorted(names)


def find_secret_leaks(root: Path, values: list[str] | None = None) -> list[Path]:
    """Files under ``root`` whose bytes contain any secret value (a post-run leak check).

    Args:
        root: a directory (e.g. ``reports/<run_id>``) or a single file.
        values: the secrets to look for (default :func:`secret_values` of the environment).

    Returns:
        The offending files, sorted; empty when nothing leaked.
    """
    needles = [v.encode() for v in (values if values is not None else secret_values()) if v]
    if not needles:
        return []
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    leaks = []
    for p in files:
        try:
            data = p.read_bytes()
        except OSError:
            continue
        if any(n in data for n in needles):
            leaks.append(p)
    return leaks
