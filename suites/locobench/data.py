"""Scenarios: seeded generated projects with a planted task, or scenario files in upstream's format.

A generated scenario is a pure function of its spec ``{seed, category, difficulty, index}``:
the base project (``generator/project.py``), the category's planted task
(``tasks/<category>.py``), filler modules up to the difficulty's context size, the visible
regression tests and the hidden tests. Task data holds only the spec and upstream's scenario
fields (reference B3); the files are rebuilt (and cached per process) where they are needed.

Sizes are counted in characters and in proxy tokens, ``ceil(chars / 4)`` (no tokenizer is
downloaded; reference C "Dependencies").
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suites.locobench.generator.filler import filler_files, filler_text
from suites.locobench.generator.project import (
    ALLOWED_IMPORTS,
    Plan,
    base_files,
    draw_domain,
    make_plan,
    regression_tests,
)
from suites.locobench.tasks import (
    architecture,
    bug,
    comprehension,
    feature,
    integration,
    multi_session,
    refactor,
    security,
)
from suites.locobench.tasks.common import HIDDEN_DIR, Planted

__all__ = [
    "CATEGORIES",
    "SCENARIOS_KEPT",
    "DIFFICULTIES",
    "TARGET_TOKENS",
    "Scenario",
    "build_scenario",
    "context_view",
    "read_upstream",
    "scenario_files",
    "scenario_id",
    "upstream_fields",
    "proxy_tokens",
    "tree_hash",
]

CATEGORIES = (
    "architectural_understanding",
    "cross_file_refactoring",
    "feature_implementation",
    "bug_investigation",
    "multi_session_development",
    "code_comprehension",
    "integration_testing",
    "security_analysis",
)
"""LoCoBench's eight task categories (reference B1), in upstream's order."""

MODULES = {
    "architectural_understanding": architecture,
    "cross_file_refactoring": refactor,
    "feature_implementation": feature,
    "bug_investigation": bug,
    "multi_session_development": multi_session,
    "code_comprehension": comprehension,
    "integration_testing": integration,
    "security_analysis": security,
}

DIFFICULTIES = ("easy", "medium", "hard", "expert")
"""Upstream's four difficulty levels (reference B1)."""

TARGET_TOKENS = {"easy": 10_000, "medium": 50_000, "hard": 100_000, "expert": 200_000}
"""Context size of a generated project per difficulty, in proxy tokens (the whole project
is shown). Upstream's documented bands are 10K-100K / 100K-200K / 200K-500K / 500K-1M tokens;
ours are smaller so a run stays cheap (README, differences from upstream)."""

DEPTH = {"easy": 2, "medium": 3, "hard": 4, "expert": 4}
"""Pricing steps in the quote chain (the call-chain hops behind ``handle_quote``)."""

CALLERS = {"easy": 2, "medium": 3, "hard": 4, "expert": 5}
"""Helper modules calling the renamed method (``cross_file_refactoring``)."""

NEEDLE_DEPTHS = (0.1, 0.3, 0.5, 0.7, 0.9)
"""Where the needle files sit in the prompt's file order (share of the files before them)."""


def proxy_tokens(chars: int) -> int:
    """The proxy token count of ``chars`` characters: ``ceil(chars / 4)``."""
    return math.ceil(chars / 4)


@dataclass
class Scenario:
    """One scenario, ready to prompt and to check.

    Attributes:
        id: ``python_<domain>_<category>_<difficulty>_<NN>`` (upstream's id shape, B3).
        category, difficulty, language: as upstream (language ``python``).
        title, description: upstream's fields.
        sessions: the requirement of each session (upstream ``task_prompt``).
        files: the project as the model first sees it (path -> text), regression tests included.
        order: the files in prompt order.
        hidden_tests: the hidden test module (never shown).
        regression: the visible regression tests, run from the harness's own copy.
        package: the project's package ("" for an upstream project: no generated layering).
        planted: the planted task (None for an upstream scenario).
        plan: the project's plan (None for an upstream scenario).
        needle_depth: share of the prompt's files before the needle (None when there is none).
    """

    id: str
    category: str
    difficulty: str
    language: str
    title: str
    description: str
    sessions: list[str]
    files: dict[str, str]
    order: list[str]
    hidden_tests: str
    regression: dict[str, str]
    package: str = ""
    planted: Planted | None = None
    plan: Plan | None = None
    needle_depth: float | None = None
    layering: dict[str, frozenset[str]] | None = None
    mutant_files: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def context_chars(self) -> int:
        """Characters of every shown file."""
        return sum(len(self.files[p]) for p in self.order)

    def hidden_files(self) -> dict[str, str]:
        """The harness's own files, under :data:`HIDDEN_DIR`: the hidden tests, a copy of the
        regression tests and the mutants (``integration_testing``)."""
        out = {f"{HIDDEN_DIR}/test_hidden.py": self.hidden_tests} if self.hidden_tests else {}
        for path, text in sorted(self.regression.items()):
            out[f"{HIDDEN_DIR}/test_regression_{Path(path).stem.removeprefix('test_')}.py"] = text
        for name, files in sorted(self.mutant_files.items()):
            for path, text in files.items():
                out[f"{HIDDEN_DIR}/mutants/{name}/{path}"] = text
        return out


def _scenario_id(plan: Plan, category: str, difficulty: str, index: int) -> str:
    return f"python_{plan.domain}_{category}_{difficulty}_{index:02d}"


def _spec_rng(spec: dict[str, Any]) -> random.Random:
    """The generator of a spec's scenario (seeded by seed, category, difficulty, index)."""
    seed, category, difficulty, index = spec["seed"], spec["category"], spec["difficulty"], int(spec["index"])
    return random.Random(f"locobench|{seed}|{category}|{difficulty}|{index}")


def scenario_id(spec: dict[str, Any]) -> str:
    """The id of the generated scenario of ``spec`` (``python_<domain>_<category>_<difficulty>_<NN>``),
    told from the plan's first draw (:func:`~suites.locobench.generator.project.draw_domain`)
    without building it (microseconds); the build checks it gives this id.

    Raises:
        KeyError: a spec without seed, category, difficulty or index.
    """
    domain = draw_domain(_spec_rng(spec))[0]
    return f"python_{domain}_{spec['category']}_{spec['difficulty']}_{int(spec['index']):02d}"


def spec_key(spec: dict[str, Any]) -> str:
    """The canonical text of a generated scenario's spec (its cache key)."""
    return json.dumps({k: spec[k] for k in ("seed", "category", "difficulty", "index")}, sort_keys=True)


SCENARIOS_KEPT = 4
"""Scenarios a process keeps built (generated or read), the most recently used: an item
builds its scenario three times (policy, agent, scorer) and a task's trials run one after
the other. Generating one takes 3-26 ms (easy to expert); each holds its project's text
(0.1-1 MB), so the 64 kept before held about 30 MB in a worker running the deep profile."""


@functools.lru_cache(maxsize=SCENARIOS_KEPT)
def _build(key: str) -> Scenario:
    spec = json.loads(key)
    category, difficulty, index = spec["category"], spec["difficulty"], int(spec["index"])
    rng = _spec_rng(spec)
    plan = make_plan(rng, DEPTH[difficulty])
    if _scenario_id(plan, category, difficulty, index) != scenario_id(spec):
        raise RuntimeError(f"locobench: scenario {spec} is not the id scenario_id tells (make_plan no "
                           "longer draws the domain first: a bug here)")  # fmt: skip
    files = base_files(plan)
    module = MODULES[category]
    if module is refactor:
        planted = refactor.plant(plan, rng, files, callers=CALLERS[difficulty])
    else:
        planted = module.plant(plan, rng, files)
    regression = regression_tests(
        plan, quotes=planted.regression_quotes, region_check=planted.info.get("secondary_validation", True)
    )
    files.update(regression)
    target = TARGET_TOKENS[difficulty] * 4 - sum(len(t) for t in files.values())
    files.update(filler_files(plan.pkg, target, rng))
    order = sorted(files)
    needles = [p for p in planted.needle_files if p in files]
    rest = [p for p in order if p not in needles]
    depth = rng.choice(NEEDLE_DEPTHS)
    at = round(depth * len(rest))
    order = rest[:at] + needles + rest[at:]
    mutants = {m["name"]: m["files"] for m in planted.mutants}
    return Scenario(
        id=_scenario_id(plan, category, difficulty, index),
        category=category,
        difficulty=difficulty,
        language="python",
        title=planted.title,
        description=planted.description,
        sessions=planted.sessions,
        files=files,
        order=order,
        hidden_tests=planted.hidden_tests,
        regression=regression,
        package=plan.pkg,
        planted=planted,
        plan=plan,
        needle_depth=depth,
        layering=dict(ALLOWED_IMPORTS),
        mutant_files=mutants,
    )


def build_scenario(data: dict[str, Any]) -> Scenario:
    """The scenario of a task's ``data`` (generated from ``data["spec"]``, cached per
    process, or loaded from ``data["upstream"]``).

    Raises:
        ValueError: an upstream scenario whose files cannot be read (names file and fix).
    """
    if "upstream" in data:
        return _load_upstream(json.dumps(data["upstream"], sort_keys=True))
    return _build(spec_key(data["spec"]))


def tree_hash(files: dict[str, str]) -> str:
    """SHA-256 of a file tree (sorted paths and contents)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return digest.hexdigest()


def context_view(scenario: Scenario, ablate: bool = False) -> list[tuple[str, str]]:
    """The files the prompt shows, in order: ``(path, text)``. With ``ablate`` (the context
    ablation control, reference C2), each needle file's text is replaced by filler code of the
    same size (no fact of the needle left), at the same place; the project itself is unchanged."""
    needles = set(scenario.planted.needle_files) if (ablate and scenario.planted) else set()
    out = []
    for path in scenario.order:
        text = scenario.files[path]
        if path in needles:
            rng = random.Random(f"ablation|{scenario.id}|{path}")
            text = filler_text(scenario.package, len(text), rng)
        out.append((path, text))
    return out


def upstream_fields(scenario: Scenario) -> dict[str, Any]:
    """Upstream's scenario record for a generated scenario (reference B3)."""
    chars = scenario.context_chars
    total = sum(len(t) for t in scenario.files.values()) + len(scenario.hidden_tests)
    prompt: Any = (
        scenario.sessions[0]
        if len(scenario.sessions) == 1
        else {f"session_{k}": text for k, text in enumerate(scenario.sessions, 1)}
    )
    return {
        "id": scenario.id,
        "task_category": scenario.category,
        "difficulty": scenario.difficulty,
        "title": scenario.title,
        "description": scenario.description,
        "context_files": list(scenario.order),
        "context_length": chars,
        "task_prompt": prompt,
        "metadata": {
            "context_length": chars,
            "context_tokens": proxy_tokens(chars),
            "files_count": len(scenario.order),
            "information_coverage": round(chars / total, 4),
            "needle_files": list(scenario.planted.needle_files) if scenario.planted else [],
            "decoy_files": list(scenario.planted.decoy_files) if scenario.planted else [],
            "needle_depth": scenario.needle_depth,
            "language": scenario.language,
        },
    }


# -- upstream scenario files ----------------------------------------------------------------

_ID = re.compile(
    r"^(?P<project>(?P<lang>[a-z]+)_.+?)_(?P<category>"
    + "|".join(CATEGORIES)
    + r")_(?P<difficulty>"
    + "|".join(DIFFICULTIES)
    + r")_(?P<n>\d+)$"
)
LANGUAGES = ("python", "cpp", "java", "c", "csharp", "javascript", "typescript", "go", "rust", "php")
"""Upstream's languages (reference B1); only ``python`` has a toolchain here."""


def scenario_files(root: Path) -> list[Path]:
    """The scenario JSON files under ``root`` (``root/scenarios/*.json``, else ``root/*.json``),
    sorted.

    Raises:
        ValueError: ``root`` is not a folder or holds no scenario file.
    """
    if not root.is_dir():
        raise ValueError(
            f"locobench.scenarios={root}: not a folder. Fix: give the folder holding upstream "
            "scenario files (data/output/scenarios) and the generated projects"
        )
    found = sorted((root / "scenarios").glob("*.json")) if (root / "scenarios").is_dir() else []
    found = found or sorted(root.glob("*.json"))
    if not found:
        raise ValueError(
            f"locobench.scenarios={root}: no scenario file (*.json) in it or in its scenarios/ "
            "folder. Fix: point it at upstream's data/output folder"
        )
    return found


def project_dir(root: Path, project: str) -> Path | None:
    """The project folder of a scenario: the first of ``root/<project>``,
    ``root/generated/<project>``, ``root/../generated/<project>`` that exists."""
    for candidate in (root / project, root / "generated" / project, root.parent / "generated" / project):
        if candidate.is_dir():
            return candidate
    return None


def read_upstream(path: Path, root: Path) -> dict[str, Any]:
    """Check one upstream scenario file and return what the task keeps (the file, the project
    folder and the record's fields).

    Raises:
        ValueError: a field missing or of the wrong type (names the file, the field and the fix).
        CannotRun: a language without a toolchain here (the task is skipped with the reason).
    """
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(
            f"{path}: not a JSON scenario file ({exc}). Fix: give upstream's scenario JSON"
        ) from None
    if not isinstance(record, dict):
        raise ValueError(f"{path}: a scenario file holds one JSON object, got {type(record).__name__}")
    for key, kind in (
        ("id", str),
        ("task_category", str),
        ("difficulty", str),
        ("title", str),
        ("description", str),
        ("context_files", list),
    ):
        if not isinstance(record.get(key), kind):
            raise ValueError(
                f"{path}: field {key!r} must be a {kind.__name__}, got {record.get(key)!r}. Fix: "
                "write it as upstream's scenario format has it (reference B3)"
            )
    prompt = record.get("task_prompt")
    if not (
        isinstance(prompt, str)
        or (isinstance(prompt, dict) and prompt and all(isinstance(v, str) for v in prompt.values()))
    ):
        raise ValueError(
            f"{path}: field 'task_prompt' must be a string or a dict of session strings, got "
            f"{type(prompt).__name__}. Fix: write the task's requirements there"
        )
    if record["task_category"] not in CATEGORIES:
        raise ValueError(
            f"{path}: field 'task_category' is {record['task_category']!r}; known: {list(CATEGORIES)}"
        )
    m = _ID.match(record["id"])
    if not m:
        raise ValueError(
            f"{path}: field 'id' {record['id']!r} is not upstream's "
            "'{lang}_{domain}_{complexity}_{NNN}_{category}_{difficulty}_{NN}'. Fix: keep the "
            "scenario's original id (the language and project are read from it)"
        )
    if m.group("lang") != "python":
        from pytest_egi.suite import CannotRun

        known = "one of upstream's" if m.group("lang") in LANGUAGES else "not one of upstream's"
        raise CannotRun(
            f"language {m.group('lang')!r} ({known} languages): only python has a toolchain in the "
            "sandbox here; the scenario records its language so others can be added"
        )
    project = project_dir(root, m.group("project"))
    if project is None:
        raise ValueError(
            f"{path}: the project folder {m.group('project')!r} was not found under {root} "
            "(tried <dir>/<project>, <dir>/generated/<project>, <dir>/../generated/<project>). "
            "Fix: put the generated project beside the scenario files"
        )
    return {"file": str(path), "project": str(project), "language": m.group("lang"), "record": record}


@functools.lru_cache(maxsize=SCENARIOS_KEPT)
def _load_upstream(key: str) -> Scenario:
    info = json.loads(key)
    record, project = info["record"], Path(info["project"])
    files: dict[str, str] = {}
    for rel in record["context_files"]:
        if not isinstance(rel, str):
            raise ValueError(f"{info['file']}: field 'context_files' holds {rel!r}, not a path")
        path = (project / rel).resolve()
        if project.resolve() not in path.parents:
            raise ValueError(f"{info['file']}: context file {rel!r} is outside its project folder {project}")
        try:
            files[rel] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(
                f"{info['file']}: context file {rel!r} cannot be read from {project} ({exc}). "
                "Fix: keep the generated project beside its scenario files"
            ) from None
    for path in sorted(project.rglob("*")):  # the rest of the project runs, unshown
        rel = path.relative_to(project).as_posix()
        if rel not in files and path.is_file() and not path.is_symlink() and path.suffix == ".py":
            files[rel] = path.read_text(encoding="utf-8", errors="replace")
    hidden = ""
    hidden_dir = Path(info["file"]).with_suffix("")
    if (hidden_dir / "test_hidden.py").is_file():
        hidden = (hidden_dir / "test_hidden.py").read_text(encoding="utf-8")
    prompt = record["task_prompt"]
    sessions = [prompt] if isinstance(prompt, str) else [prompt[k] for k in sorted(prompt)]
    regression = {p: t for p, t in files.items() if Path(p).name.startswith("test_") and p.endswith(".py")}
    return Scenario(
        id=record["id"],
        category=record["task_category"],
        difficulty=record["difficulty"],
        language=info["language"],
        title=record["title"],
        description=record["description"],
        sessions=sessions,
        files=files,
        order=list(record["context_files"]),
        hidden_tests=hidden,
        regression=regression,
    )
