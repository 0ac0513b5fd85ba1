"""``egi-bench doctor``: is this machine ready to run pytest-egi?

Checks, in order: the Python version; the installed packages against the project's pins;
the LiteLLM version against the known-bad list; which provider keys are present (names
only); that an ``egi/`` ``--egi-model`` names an offline policy pytest accepts, or, for a
LiteLLM model, that the keys it needs are set (or that it needs none); that every suite
folder imports, exposes ``SUITE`` and builds its quick-profile tasks; that the cache
directory is writable; that ``--egi-api-base`` answers ``GET /models``; and,
for a LiteLLM ``--egi-model``, one tiny real call per suite with the generation parameters
that suite will send (its defaults under ``--egi-model-params``), so a provider that refuses
a parameter fails here rather than on every item.
Prints one line per check and, when something failed, a numbered list of the problems.
"""

from __future__ import annotations

import importlib
import importlib.metadata as md
import importlib.util
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from pytest_egi.models.secrets import load_env_file, present_provider_keys, redact

__all__ = ["KNOWN_BAD_LITELLM", "check_litellm_version", "check_python", "in_release_series", "run_doctor",
           "same_version"]

KNOWN_BAD_LITELLM = ("1.82.7", "1.82.8", "1.107.x")
"""LiteLLM releases known to break pytest-egi. Each entry is a release series, compared by
PEP 440 release segments (``packaging.version``), so ``1.82.7`` also matches its pre-, post-,
dev- and local builds (``1.82.7rc1``, ``1.82.7.post1``, ``1.82.7+cu1``, ``1.82.7.1``) and
``1.107.x`` matches every ``1.107`` release."""

MIN_PYTHON = (3, 11)
CORE_PACKAGES = ("pytest", "pytest-xdist", "pytest-timeout", "pyyaml", "pydantic", "rich",
                 "jinja2", "filelock", "litellm", "packaging")
"""Checked by name when pytest-egi's own metadata (with its pins) is not installed."""


def check_python(version: tuple[int, int, int] | None = None) -> str | None:
    """None when the interpreter is new enough, else the problem."""
    v = version or sys.version_info[:3]
    if tuple(v[:2]) < MIN_PYTHON:
        return (f"Python {'.'.join(map(str, v))} is too old; pytest-egi needs "
                f">= {'.'.join(map(str, MIN_PYTHON))}")
    return None


def in_release_series(version: str, series: str) -> bool:
    """Whether ``version`` belongs to the release ``series`` (``1.82.7`` or ``1.107.x``).

    PEP 440 (``packaging.version``): the epoch is 0 and the release segments start with the
    series' numbers; pre-, post-, dev- and local parts are ignored.

    Raises:
        packaging.version.InvalidVersion: ``version`` is not a PEP 440 version.
    """
    from packaging.version import Version  # not at module level: the report writer imports
    # this module at every configured run, and packaging costs ~40 ms to import

    v = Version(version)
    prefix = tuple(int(p) for p in series.removesuffix(".x").split("."))
    return v.epoch == 0 and v.release[: len(prefix)] == prefix


def same_version(installed: str, pin: str) -> bool:
    """Whether ``installed`` is the pinned version (PEP 440 equality: ``1.0`` == ``1.0.0``;
    ``1.0.post1`` and ``1.0+local`` are not ``1.0``); plain text comparison when either is
    not a PEP 440 version."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(installed) == Version(pin)
    except InvalidVersion:
        return installed == pin


def check_litellm_version(version: str) -> str | None:
    """None when ``version`` is in no series of :data:`KNOWN_BAD_LITELLM`, else the problem
    (also when ``version`` is not a PEP 440 version, which cannot be checked)."""
    from packaging.version import InvalidVersion

    fix = f"install the pinned release: pip install 'litellm=={_pin('litellm') or '1.110.2'}'"
    try:
        bad = [s for s in KNOWN_BAD_LITELLM if in_release_series(version, s)]
    except InvalidVersion:
        return f"litellm {version!r} is not a PEP 440 version and cannot be checked; {fix}"
    if bad:
        return f"litellm {version} is on the known-bad list ({', '.join(KNOWN_BAD_LITELLM)}); {fix}"
    return None


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None when it is not installed."""
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return None


def _pins() -> dict[str, str | None]:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        reqs = md.requires("pytest-egi") or []
    except md.PackageNotFoundError:
        return {name: None for name in CORE_PACKAGES}
    pins: dict[str, str | None] = {}
    for req in reqs:
        try:
            parsed = Requirement(req)
        except InvalidRequirement:
            continue
        if parsed.marker is not None and "extra" in str(parsed.marker):
            continue
        pins[parsed.name] = next((s.version for s in parsed.specifier if s.operator == "=="), None)
    return pins


def _pin(name: str) -> str | None:
    return _pins().get(name)


class _Report:
    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.problems: list[str] = []

    def line(self, status: str, text: str) -> None:
        self.out.write(f"  {status:<5} {redact(text)}\n")
        if status == "FAIL":
            self.problems.append(redact(text))


def suite_generation_params(package: str) -> Callable[[Any], dict[str, Any]] | None:
    """How a suite's scaffold picks its generation parameters: ``generation_params(client)``
    of its ``agent`` module (or a constant ``GENERATION_PARAMS`` there), or None."""
    try:
        agent = importlib.import_module(f"{package}.agent")
    except ImportError:
        return None
    fn = getattr(agent, "generation_params", None)
    if callable(fn):
        return fn
    const = getattr(agent, "GENERATION_PARAMS", None)
    return (lambda client: dict(const)) if isinstance(const, dict) else None


def _check_call(rep: _Report, model: str, api_base: str | None, suites: dict[str, Any],
                user_params: dict[str, Any], timeout_s: float) -> None:
    """One tiny real call per distinct parameter set the suites will send (or one with the
    user's parameters alone); a refused parameter or an unreachable provider is a FAIL."""
    from pytest_egi.models.base import ContextWindowExceeded, ProviderError
    from pytest_egi.models.litellm_client import LiteLLMClient
    from pytest_egi.models.settings import ProviderSettings

    settings = ProviderSettings(api_base=api_base, timeout_s=timeout_s, max_retries=0,
                                model_params=user_params)
    client = LiteLLMClient(model, settings=settings)
    trial = client.for_trial(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plans: dict[str, tuple[dict[str, Any], list[str]]] = {}
        for name, pick in (suites or {"(no suite defaults)": None}).items():
            defaults = pick(trial) if pick is not None else {}
            sent = client.check_params(defaults)["sent"]
            plans.setdefault(params_text(sent), (sent, []))[1].append(name)
        for reason_name, reason in client.dropped_params.items():
            rep.line("warn", f"model {model}: not sending {reason_name} ({reason})")
        messages = [{"role": "user", "content": "Reply with the single word OK."}]
        for sent_text, (params, names) in plans.items():
            try:
                response = trial.generate(messages, None, **params)
            except (ProviderError, ContextWindowExceeded) as exc:
                slow = (f" (the server took the request but gave no answer within "
                        f"{timeout_s:g} s: it is busy or slow, not unreachable)"
                        if getattr(exc, "kind", None) == "timeout" else "")
                rep.line("FAIL", f"model {model}: a call with {sent_text} for "
                                 f"{', '.join(names)} failed: {exc}{slow}")
                continue
            rep.line("ok", f"model {model}: a call with {sent_text} for {', '.join(names)} "
                           f"answered (finish_reason {response.finish_reason}, "
                           f"{response.usage.prompt_tokens}+{response.usage.completion_tokens} tokens)")


def params_text(params: dict[str, Any]) -> str:
    """``KEY=VALUE,...`` as the command line takes it (``no parameters`` when empty)."""
    import json

    return ",".join(f"{k}={json.dumps(v)}" for k, v in sorted(params.items())) or "no parameters"


def _check_suites(rep: _Report, suites_dir: Path, routing: Path,
                  found: dict[str, Any] | None = None) -> None:
    from pytest_egi.scoring.config import load_routing
    from pytest_egi.suite import load_suite

    try:
        config, _ = load_routing(routing)
    except Exception as exc:
        rep.line("FAIL", f"routing {routing}: {str(exc).splitlines()[0]}")
        return
    rep.line("ok", f"routing {routing}: {len(config.suites)} suites, {len(config.routes)} routes")
    if not suites_dir.is_dir():
        rep.line("FAIL", f"suites directory {suites_dir} not found")
        return
    folders = sorted(p for p in suites_dir.iterdir()
                     if p.is_dir() and not p.name.startswith(("_", ".")))
    parent = str(suites_dir.parent.resolve())
    added = parent not in sys.path
    if added:
        sys.path.insert(0, parent)
    try:
        for folder in folders:
            name = folder.name
            if not (folder / "__init__.py").is_file():
                rep.line("FAIL", f"suite {name}: {folder} has no __init__.py (not a suite package)")
                continue
            start = time.perf_counter()
            try:
                suite = load_suite(f"{suites_dir.name}.{name}")
                options = suite.options_model()
                tasks = suite.load_tasks(config.profile("quick", name), options)
            except Exception as exc:
                first = (str(exc).strip().splitlines() or [""])[0]
                rep.line("FAIL", f"suite {name}: {type(exc).__name__}: {first}")
                continue
            took = time.perf_counter() - start
            if not tasks and getattr(suite, "opt_in", None):
                rep.line("info", f"suite {name}: opt-in, no task unless asked for ({suite.opt_in})")
            elif not tasks:
                rep.line("FAIL", f"suite {name}: the quick profile built no tasks")
            elif name not in config.suites:
                rep.line("warn", f"suite {name}: {len(tasks)} quick tasks, but routing lists no "
                                 f"suite {name!r} (its sub-metrics will not be routed)")
            else:
                rep.line("ok", f"suite {name}: world built, {len(tasks)} quick tasks ({took:.2f}s)")
            checks = getattr(suite, "doctor_checks", None)
            for level, text in (checks() if callable(checks) else []):
                rep.line("warn" if level == "warn" else "info" if level != "ok" else "ok",
                         f"suite {name}: {text}")
            if found is not None:
                found[name] = suite_generation_params(f"{suites_dir.name}.{name}")
    finally:
        if added:
            sys.path.remove(parent)
    present = {f.name for f in folders}
    absent = [s for s in config.suites if s not in present]
    if absent:
        rep.line("info", f"suites in routing without a folder (not installed): {', '.join(absent)}")


def _check_api_base(rep: _Report, api_base: str, timeout_s: float) -> None:
    import urllib.error
    import urllib.request

    url = api_base.rstrip("/") + "/models"
    req = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            import json

            body = json.loads(resp.read() or b"{}")
            ids = [str(m.get("id")) for m in (body.get("data") or []) if isinstance(m, dict)]
            shown = f" (models: {', '.join(ids[:5])}{', ...' if len(ids) > 5 else ''})" if ids else ""
            rep.line("ok", f"api base {api_base}: reachable, GET /models -> {resp.status}{shown}")
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):
            rep.line("ok", f"api base {api_base}: reachable (GET /models -> {exc.code}: "
                           "the server wants a key)")
        else:
            rep.line("warn", f"api base {api_base}: reachable but GET /models -> {exc.code}")
    except TimeoutError:
        # the connection was made (a refused or unroutable one fails inside URLError): the
        # server is there, and busy
        rep.line("warn", f"api base {api_base}: reachable but slow: it accepted the connection "
                         f"and gave no answer to GET /models within {timeout_s:g} s (busy, or "
                         "still loading a model?); runs wait --egi-timeout per call (default 120 s)")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            rep.line("FAIL", f"api base {api_base}: unreachable: no connection within "
                             f"{timeout_s:g} s ({reason}); is the host up and the port open?")
        else:
            rep.line("FAIL", f"api base {api_base}: unreachable ({reason}); is the server running?")


def _missing_keys(model: str, api_base: str | None, without: tuple[str, ...] = ()) -> list[str]:
    """The keys LiteLLM's ``validate_environment`` says ``model`` lacks, as if the variables
    ``without`` were not set.

    Raises:
        Exception: whatever LiteLLM raises for a model it cannot check.
    """
    import litellm

    saved = {k: os.environ.pop(k) for k in without if k in os.environ}
    try:
        env = litellm.validate_environment(model=model, api_base=api_base)
    finally:
        os.environ.update(saved)
    return list(env.get("missing_keys") or [])


def _check_model_keys(rep: _Report, model: str, api_base: str | None) -> None:
    """Whether the keys LiteLLM needs for ``model`` are set (names only): present, not
    needed at all (a keyless local server), or missing (a FAIL saying how to proceed)."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    try:
        missing = _missing_keys(model, api_base)
        # with every provider key removed, does LiteLLM still ask for none?
        keyless = not missing and not _missing_keys(model, api_base, tuple(present_provider_keys()))
    except Exception as exc:
        rep.line("warn", f"model {model}: LiteLLM cannot check its keys ({type(exc).__name__})")
        return
    if missing:
        hint = "set it in the environment or a .env file"
        if model.startswith("openai/") and api_base and missing == ["OPENAI_API_KEY"]:
            hint += (f"; for a keyless OpenAI-compatible server at {api_base}, set "
                     f"OPENAI_API_KEY to any value (e.g. OPENAI_API_KEY=none), or name the model "
                     f"hosted_vllm/{model.removeprefix('openai/')} instead")
        rep.line("FAIL", f"model {model} needs {', '.join(missing)} ({hint})")
    elif keyless:
        rep.line("ok", f"model {model}: no key needed (LiteLLM asks for none"
                       f"{' with --egi-api-base ' + api_base if api_base else ''})")
    else:
        rep.line("ok", f"model {model}: the keys LiteLLM needs are present")


def _extras() -> dict[str, list[str]]:
    """The package's optional extras (``pyproject.toml`` ``optional-dependencies``) and the
    distributions each names, from the installed metadata."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        reqs = md.requires("pytest-egi") or []
    except md.PackageNotFoundError:
        return {}
    extras: dict[str, list[str]] = {}
    for req in reqs:
        try:
            parsed = Requirement(req)
        except InvalidRequirement:
            continue
        marker = str(parsed.marker or "")
        if "extra" in marker:
            name = marker.split("extra", 1)[1].strip(" =!\"'")
            extras.setdefault(name, []).append(parsed.name)
    return extras


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
"""Executables a headless browser test can drive through Playwright (Debian's ``chromium``)."""


def _check_installation(rep: _Report, suites_dir: Path, routing: Path,
                        package_version: Callable[[str], str | None]) -> None:
    """Where the suites and the routing come from, the optional extras, and what the browser
    tests need (Playwright's Python package and a Chromium): information, never a failure,
    except a suites package that cannot be imported (checked in :func:`_check_suites`)."""
    import shutil

    from pytest_egi.run.settings import SUITES_PACKAGE, packaged_routing

    spec = importlib.util.find_spec(SUITES_PACKAGE)
    where = list(spec.submodule_search_locations or []) if spec is not None else []
    if where:
        rep.line("ok", f"suites package {SUITES_PACKAGE!r} importable from {where[0]}")
    else:
        rep.line("warn", f"no {SUITES_PACKAGE!r} package is importable (pip install pytest-egi, "
                         "or run from a checkout); egi-bench run needs it")
    default = packaged_routing()
    if routing.is_file() and default is not None and routing.resolve() == default.resolve():
        rep.line("info", f"routing: the installed default {routing} (egi-bench init writes an "
                         "editable copy into this folder)")
    elif routing.is_file():
        rep.line("info", f"routing: {routing}")
    for extra, names in sorted(_extras().items()):
        missing = [n for n in names if package_version(n) is None]
        if missing:
            rep.line("info", f"extra [{extra}] not installed (missing {', '.join(missing)}): "
                             f"pip install 'pytest-egi[{extra}]'")
        else:
            rep.line("ok", f"extra [{extra}] installed")
    playwright = importlib.util.find_spec("playwright") is not None
    browser = next((b for b in BROWSERS if shutil.which(b)), None)
    if playwright and browser:
        rep.line("ok", f"browser tests: playwright and {shutil.which(browser)}")
    else:
        missing = [x for x, ok in (("the playwright package", playwright),
                                   (f"a Chromium ({' or '.join(BROWSERS[:2])} on PATH)", browser)) if not ok]
        rep.line("info", f"browser tests will skip: {' and '.join(missing)} not found "
                         "(apt-get install chromium; pip install playwright)")


def run_doctor(api_base: str | None, suites_dir: Path, *, model: str | None = None,
               routing: Path | None = None, cache_dir: Path | None = None,
               env_file: Path | None = None, out: IO[str] | None = None,
               timeout_s: float = 5.0,
               package_version: Callable[[str], str | None] = installed_version,
               model_params: dict[str, Any] | None = None, call_timeout_s: float = 60.0) -> int:
    """Print the readiness checklist; return the process exit status.

    Args:
        api_base: ``--egi-api-base`` to probe with ``GET <api_base>/models``, or None.
        suites_dir: the folder holding one package per suite (``<repo>/suites``).
        model: ``--egi-model``; when a LiteLLM model, LiteLLM says which keys it needs.
        routing: the routing file (default ``<suites_dir>/../routing.yaml``).
        cache_dir: the response cache directory to test for writing, or None to skip.
        env_file: a ``.env`` file to load first, as a run would (never overriding the
            environment); default ``<suites_dir>/../.env`` when it exists.
        out: where to print (default stdout).
        timeout_s: seconds allowed for the reachability probe.
        package_version: ``name -> installed version or None`` (tests replace it).
        model_params: ``--egi-model-params`` for the tiny real call (None: none).
        call_timeout_s: timeout of that call, seconds.

    Returns:
        0 when every check passed (warnings allowed), 1 otherwise.
    """
    stream = out or sys.stdout
    rep = _Report(stream)
    stream.write("egi-bench doctor\n")

    problem = check_python()
    rep.line("FAIL" if problem else "ok",
             problem or f"Python {'.'.join(map(str, sys.version_info[:3]))} (>= 3.11)")

    for name, pin in _pins().items():
        version = package_version(name)
        if version is None:
            rep.line("FAIL", f"package {name} is not installed: pip install '{name}"
                             f"{'==' + pin if pin else ''}'")
        elif pin and not same_version(version, pin):
            rep.line("warn", f"package {name} {version} (pinned {pin})")
        else:
            rep.line("ok", f"package {name} {version}")
    lite = package_version("litellm")
    if lite is not None:
        bad = check_litellm_version(lite)
        rep.line("FAIL" if bad else "ok", bad or f"litellm {lite} is not on the known-bad list")

    env_path = env_file or suites_dir.parent / ".env"
    if env_file is not None or env_path.is_file():
        try:
            names = load_env_file(env_path)
            rep.line("ok", f"env file {env_path}: {len(names)} new variable"
                           f"{'s' if len(names) != 1 else ''} ({', '.join(names) or 'none'})")
        except (OSError, ValueError) as exc:
            rep.line("FAIL", f"env file {env_path}: {exc}")
    keys = present_provider_keys()
    rep.line("info", f"provider keys present: {', '.join(keys)}" if keys else
             "provider keys present: none (offline egi/ policies and keyless local servers only)")
    offline = False
    if model:
        from pytest_egi.models import parse_offline_model

        try:
            offline = parse_offline_model(model) is not None
        except ValueError as exc:
            offline = True  # an egi/ name: never a LiteLLM model
            rep.line("FAIL", str(exc))
        else:
            if offline:
                rep.line("ok", f"model {model}: an offline reference policy (the suites' own "
                               "policies); it needs no provider or key")
    if model and not offline:
        _check_model_keys(rep, model, api_base)

    found: dict[str, Any] = {}
    routing = routing or suites_dir.parent / "routing.yaml"
    _check_installation(rep, suites_dir, routing, package_version)
    _check_suites(rep, suites_dir, routing, found)

    if cache_dir is not None:
        try:
            cache_dir.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=cache_dir, prefix=".doctor-"):
                pass
            rep.line("ok", f"cache directory {cache_dir} is writable")
        except OSError as exc:
            rep.line("FAIL", f"cache directory {cache_dir} is not writable ({exc.strerror}); "
                             "pass --egi-cache DIR or --egi-no-cache")

    if api_base:
        _check_api_base(rep, api_base, timeout_s)

    if model and not offline and not rep.problems:
        _check_call(rep, model, api_base, {k: v for k, v in found.items() if v is not None},
                    model_params or {}, call_timeout_s)
    elif model and not offline:
        rep.line("info", f"model {model}: no test call (fix the problems above first)")

    if rep.problems:
        stream.write(f"\n{len(rep.problems)} problem{'s' if len(rep.problems) != 1 else ''}:\n")
        for i, p in enumerate(rep.problems, start=1):
            stream.write(f"  {i}. {p}\n")
        return 1
    stream.write("\nall checks passed\n")
    return 0
