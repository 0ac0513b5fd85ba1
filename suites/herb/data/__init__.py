"""HERB worlds: the original product-file shape, its loader, and the world cache.

A *world* is what one HERB run searches: the employee directory
(``data/metadata/employee.json``), the customer list (``customers_data.json``) and one JSON
file per product (``data/products/<Product>.json``) with the keys ``slack``, ``documents``,
``meeting_transcripts``, ``meeting_chats``, ``urls``, ``prs``, ``team``, ``customers``,
``answerable_questions`` and ``unanswerable_questions`` (reference §2.2). Worlds are either
generated from a seed (:mod:`suites.herb.data.generator`) or loaded from files in that shape with
:func:`load_corpus`; both give a :class:`World` whose product dicts keep the original shape.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from pytest_egi.cache.shared import build_once
from suites.herb.data.world import World

__all__ = [
    "ANSWER_TYPES",
    "ProductFile",
    "World",
    "dump_world",
    "company_names",
    "get_world",
    "release_worlds",
    "load_corpus",
    "SUITE_VERSION",
    "world_spec",
]

ANSWER_TYPES = ("content", "person", "company", "url", "pr")
"""The ``type`` values of answerable questions (reference §2.1)."""

SUITE_VERSION = "2"
"""The suite's version (``HerbSuite.version``): part of every shared-build key (see
:func:`get_world`); raise it when the generated world or the corpus reading changes."""

EMPLOYEE_FILE = "employee.json"
CUSTOMER_FILE = "customers_data.json"


def _to_str(value: Any) -> Any:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Id = Annotated[str, BeforeValidator(_to_str)]


class _Record(BaseModel):
    # schemas built on first validation (a corpus read), not at import: collecting the
    # suite's items needs none of them
    model_config = ConfigDict(extra="allow", defer_build=True)


class SlackUser(_Record):
    """``Message.User`` of one Slack message (the key ``utterranceID`` is spelled as upstream)."""

    userId: Id
    timestamp: str
    text: str
    utterranceID: Id


class SlackBody(_Record):
    User: SlackUser


class SlackChannel(_Record):
    name: str
    channelID: Id


class SlackItem(_Record):
    """One Slack message; each is its own retrieval artifact."""

    Channel: SlackChannel
    Message: SlackBody


class DocumentRecord(_Record):
    id: Id
    document_link: str
    date: str
    author: str
    type: str
    content: str


class TranscriptRecord(_Record):
    id: Id
    date: str
    participants: list[Id] | str
    transcript: str


class ChatRecord(_Record):
    id: Id
    text: str


class UrlRecord(_Record):
    id: Id
    link: str
    description: str


class GitUser(_Record):
    login: str


class ReviewRecord(_Record):
    state: str
    user: GitUser
    submitted_at: str
    comment: str = ""


class PullRequestRecord(_Record):
    id: Id
    title: str
    user: GitUser
    created_at: str
    state: str
    mergeable: bool | None = None
    merged: bool | None = None
    link: str
    summary: str
    reviews: list[ReviewRecord] = []


class AnswerableQuestion(_Record):
    """``{question, ground_truth, citations, type}``; extra keys (``facts``...) are kept.

    The shape alone lets a string through where a list of entities is expected; `load_corpus`
    then checks each gold against its type (``_check_gold``)."""

    question: str
    ground_truth: str | list[str]
    citations: list[Id] = []
    type: Literal["content", "person", "company", "url", "pr"]


class ProductFile(_Record):
    """One ``data/products/<Product>.json``; every key is optional, as upstream reads them."""

    slack: list[SlackItem] = []
    documents: list[DocumentRecord] = []
    meeting_transcripts: list[TranscriptRecord] = []
    meeting_chats: list[ChatRecord] = []
    urls: list[UrlRecord] = []
    prs: list[PullRequestRecord] = []
    team: list[Id] = []
    customers: list[Id] = []
    answerable_questions: list[Any] = []
    """Checked one by one (:class:`AnswerableQuestion`): one bad question errors alone."""
    unanswerable_questions: list[Any] = []
    """Plain strings, checked one by one: one bad entry errors alone."""


class EmployeeRecord(_Record):
    employee_id: Id
    name: str
    role: str
    location: str | None = None
    org: str | None = None


class CustomerRecord(_Record):
    id: Id
    name: str | None = None
    role: str | None = None
    company: str


_FIX_HINTS = {
    "slack": "each item needs Channel{name, channelID} and "
    "Message.User{userId, timestamp, text, utterranceID}",
    "documents": "each document needs id, document_link, date, author, type, content",
    "meeting_transcripts": "each transcript needs id, date, participants, transcript",
    "meeting_chats": "each chat needs id and text",
    "urls": "each URL needs id, link, description",
    "prs": "each PR needs id, title, user.login, created_at, state, link, summary, reviews[]",
    "answerable_questions": "each question needs question, ground_truth (str for content, "
    "list for the others), citations (list of artifact ids) and type "
    "(content|person|company|url|pr)",
    "unanswerable_questions": "unanswerable questions are plain strings",
    "employee": "employee.json maps an id to {employee_id, name, role, location, org}",
    "customers": "customers_data.json is a list of {id, name, role, company}",
}


def _loc(loc: tuple[Any, ...], out: str = "") -> str:
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _validate(model: type[BaseModel], raw: Any, file: Path | None, hint_key: str | None = None,
              at: str = "") -> Any:  # fmt: skip
    """``raw`` validated as ``model``; ``at`` prefixes the field path (``answerable_questions[2]``).

    Raises:
        ValueError: ``<file>: field <path>: <problem>. Fix: <hint> (HERB shape, reference §2.2).``
            (no ``<file>: `` when ``file`` is None).
    """
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _loc(err["loc"], at) or "(top level)"
        key = hint_key or (str(err["loc"][0]) if err["loc"] else "")
        hint = _FIX_HINTS.get(key, "see the HERB product-file shape in suites/herb/README.md")
        prefix = "" if file is None else f"{file}: "
        raise ValueError(
            f"{prefix}field {where}: {err['msg']}. Fix: {hint} (HERB shape, reference §2.2)."
        ) from None


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            "Fix: the file must be one JSON object in the HERB product-file shape."
        ) from None


def _find_metadata(candidates: list[Path], name: str, corpus: Path) -> Path:
    for directory in candidates:
        if (directory / name).is_file():
            return directory / name
    looked = ", ".join(str(d / name) for d in candidates)
    raise ValueError(
        f"HERB corpus {corpus}: metadata file {name} not found (looked in {looked}). "
        "Fix: lay the corpus out as upstream, <root>/products/<Product>.json with "
        f"<root>/metadata/{EMPLOYEE_FILE} and <root>/metadata/{CUSTOMER_FILE}, and pass "
        "corpus=<root> (or a products directory or one product file inside it)."
    )


def load_corpus(path: Path | str) -> World:
    """Load an original-format HERB corpus.

    Args:
        path: a data root holding ``products/`` and ``metadata/``, a directory of product
            JSON files, or one product JSON file. Metadata files (``employee.json``,
            ``customers_data.json``) are looked up in ``<root>/metadata``, beside the product
            files, or in their parent's ``metadata`` directory.

    Returns:
        The world; ``questions`` holds the files' answerable questions (with their type as
        category) and unanswerable questions (category ``unanswerable``), product by product
        in file-name order. A question that cannot run (a missing or mistyped field, an
        unknown ``type``, a gold the scorer cannot compare, an empty text) is kept in its
        place as ``{"load_error", "file", "type", "answerable", "product"}``: the suite makes
        it a task that errors alone (``type`` is None when unknown), and the others run.

    Raises:
        ValueError: a problem of the whole corpus, a usage error: a missing file, bad JSON, a
            product file or metadata record of the wrong shape (the message names the file,
            the field, e.g. ``slack[3].Message.User.utterranceID``, and the fix).
    """
    root = Path(path).expanduser()
    if root.is_file():
        files = [root]
        meta_dirs = [root.parent.parent / "metadata", root.parent / "metadata", root.parent]
    elif root.is_dir():
        products_dir = root / "products" if (root / "products").is_dir() else root
        files = sorted(p for p in products_dir.glob("*.json") if p.name not in (EMPLOYEE_FILE, CUSTOMER_FILE))
        meta_dirs = [root / "metadata", products_dir.parent / "metadata", products_dir]
        if not files:
            raise ValueError(
                f"HERB corpus {root}: no product files (*.json) found in {products_dir}. "
                "Fix: pass a directory holding data/products/<Product>.json files."
            )
    else:
        raise ValueError(f"HERB corpus {root}: no such file or directory")

    emp_path = _find_metadata(meta_dirs, EMPLOYEE_FILE, root)
    raw_emp = _read_json(emp_path)
    if not isinstance(raw_emp, dict):
        raise ValueError(f"{emp_path}: expected a JSON object. Fix: {_FIX_HINTS['employee']}.")
    employees = {}
    for value in raw_emp.values():
        rec = _validate(EmployeeRecord, value, emp_path, "employee")
        employees[rec.employee_id] = rec.model_dump(exclude_none=False)
    cust_path = _find_metadata(meta_dirs, CUSTOMER_FILE, root)
    raw_cust = _read_json(cust_path)
    if not isinstance(raw_cust, list):
        raise ValueError(f"{cust_path}: expected a JSON list. Fix: {_FIX_HINTS['customers']}.")
    customers = [_validate(CustomerRecord, c, cust_path, "customers").model_dump() for c in raw_cust]

    products: dict[str, dict[str, Any]] = {}
    questions: list[dict[str, Any]] = []
    numbers: dict[str, int] = {}  # per answer type, to name a question by its task id
    for file in files:
        raw = _read_json(file)
        if not isinstance(raw, dict):
            raise ValueError(f"{file}: expected a JSON object with the HERB product keys.")
        parsed = _validate(ProductFile, raw, file)
        product = file.stem
        products[product] = parsed.model_dump(mode="json")
        kept: list[Any] = []
        for index, q in enumerate(parsed.answerable_questions):
            kind = q.get("type") if isinstance(q, dict) else None
            kind = kind if isinstance(kind, str) and kind in ANSWER_TYPES else None
            if kind is not None:
                numbers[kind] = numbers.get(kind, 0) + 1
            try:
                rec = _validate(AnswerableQuestion, q, None, "answerable_questions",
                                f"answerable_questions[{index}]").model_dump(mode="json")  # fmt: skip
                _check_gold(index, rec)
            except ValueError as exc:
                kept.append(q)
                questions.append(_broken(file, product, kind, True, str(exc)))
                continue
            kept.append(rec)
            questions.append({**rec, "answerable": True, "product": product, "recipe": rec.get("recipe")})
        products[product]["answerable_questions"] = kept
        for index, text in enumerate(parsed.unanswerable_questions):
            numbers["unanswerable"] = numbers.get("unanswerable", 0) + 1
            try:
                if not isinstance(text, str):
                    raise ValueError(
                        f"field unanswerable_questions[{index}]: Input should be a valid string, got "
                        f"{_kind(text)}. Fix: {_FIX_HINTS['unanswerable_questions']} (HERB shape, "
                        "reference §2.2)."
                    )
                if not text.strip():
                    raise ValueError(
                        f"unanswerable_questions[{index}]: the question is empty ({text!r}). Fix: write "
                        "the question's text (or drop the entry), and pass the corrected corpus with "
                        "--egi-opt herb.corpus=PATH."
                    )
            except ValueError as exc:
                questions.append(_broken(file, product, None, False, str(exc)))
                continue
            questions.append(
                {
                    "question": text,
                    "type": None,
                    "answerable": False,
                    "product": product,
                    "ground_truth": None,
                    "citations": [],
                    "recipe": None,
                }
            )
    return World(employees, customers, products, questions, {"corpus": str(root.resolve())})


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f"a string {value[:40]!r}" + ("…" if len(value) > 40 else "")
    if isinstance(value, list):
        return "an empty list" if not value else f"a list holding {type(value[0]).__name__}"
    return {bool: "a boolean", type(None): "null"}.get(type(value), f"a {type(value).__name__}")


def _check_gold(index: int, rec: dict[str, Any]) -> None:
    """Refuse an answerable question whose gold the scorer cannot compare (after the shape check).

    ``question`` is not empty or whitespace; ``ground_truth`` is a non-empty string for
    ``content`` and a non-empty list of non-empty strings (the entities) for the other types;
    ``answerable``, when given, is ``true``; ``facts``, when given, is a list of strings.

    Raises:
        ValueError: naming the question (position and text), the field, the expected and the
            actual type, and the fix (the caller names the file and the task).
    """
    kind = rec["type"]
    gold = rec.get("ground_truth")
    where = f"answerable_questions[{index}] ({rec['question'][:50]!r})"
    fix_tail = "and pass the corrected corpus with --egi-opt herb.corpus=PATH"

    def fail(field: str, expected: str, got: Any, fix: str) -> ValueError:
        return ValueError(
            f"{where}: field '{field}' must be {expected}, got {_kind(got)}. Fix: {fix}, {fix_tail}."
        )

    if not rec["question"].strip():
        raise fail("question", "a non-empty string (the question's text)", rec["question"],
                   "write the question's text (or drop the question)")  # fmt: skip
    if kind == "content":
        if not isinstance(gold, str) or not gold.strip():
            raise fail("ground_truth", "a non-empty string (the reference answer) for a 'content' "
                       "question", gold, "write the reference answer as one JSON string")  # fmt: skip
    elif not (isinstance(gold, list) and gold and all(isinstance(x, str) and x.strip() for x in gold)):
        example = gold if isinstance(gold, str) else "…"
        raise fail(
            "ground_truth", f"a non-empty list of strings (the entities) for a '{kind}' question", gold,
            f"write the entities as a JSON list, e.g. [{json.dumps(example)}]",
        )  # fmt: skip
    if "answerable" in rec and rec["answerable"] is not True:
        raise fail(
            "answerable", "true (a boolean) in answerable_questions", rec["answerable"],
            "drop the key or set it to true; unanswerable questions go in unanswerable_questions "
            "as plain strings",
        )  # fmt: skip
    facts = rec.get("facts")
    if facts is not None and not (isinstance(facts, list) and all(isinstance(f, str) for f in facts)):
        raise fail("facts", "a list of strings (key facts of the answer)", facts,
                   "write the key facts as a JSON list of strings, or drop the key")  # fmt: skip


def _broken(file: Path, product: str, kind: str | None, answerable: bool, error: str) -> dict[str, Any]:
    """The place-holder of a question that cannot run (see :func:`load_corpus`)."""
    return {"load_error": error, "file": str(file), "type": kind, "answerable": answerable,
            "product": product}  # fmt: skip


def dump_world(world: World, root: Path | str) -> Path:
    """Write ``world`` in the original layout: ``root/products/*.json`` and ``root/metadata/``.

    Answerable questions keep their extra keys (``facts``, ``recipe``); unanswerable
    questions are written as plain strings, as upstream.

    Returns:
        ``root``.
    """
    root = Path(root)
    (root / "products").mkdir(parents=True, exist_ok=True)
    (root / "metadata").mkdir(parents=True, exist_ok=True)
    (root / "metadata" / EMPLOYEE_FILE).write_text(json.dumps(world.employees, indent=1))
    (root / "metadata" / CUSTOMER_FILE).write_text(json.dumps(world.customers, indent=1))
    for name, product in world.products.items():
        (root / "products" / f"{name}.json").write_text(json.dumps(product, indent=1))
    return root


def world_spec(seed: int, options: Any) -> dict[str, Any]:
    """The spec stored in each ``Task.data["world"]``: enough to rebuild the same world."""
    corpus = getattr(options, "corpus", None)
    if corpus is not None:
        return {"corpus": str(Path(corpus).expanduser().resolve())}
    return {"seed": int(seed), "products": int(getattr(options, "products", 30))}


def _build_world(spec: dict[str, Any]) -> World:
    if "corpus" in spec:
        return load_corpus(spec["corpus"])
    from suites.herb.data.generator import generate_world

    return generate_world(seed=spec["seed"], products=spec["products"])


_WORLD_NAMES: dict[str, tuple[str, ...]] = {}
"""The company names of each world this process has held (by spec key): :func:`company_names`
reads them there rather than drawing them again (a few hundred short strings a world)."""


@functools.lru_cache(maxsize=8)
def _cached_world(key: str) -> World:
    spec = json.loads(key)
    world = build_once("herb-world", {"spec": spec, "version": SUITE_VERSION}, lambda: _build_world(spec))
    _WORLD_NAMES[key] = tuple(world.company_names)
    return world


def release_worlds() -> None:
    """Let go of the worlds :func:`get_world` cached in this process (a later call builds
    again, or reads the session's shared build). ``HerbSuite.prepare`` calls it once the
    environments are built: a run needs only them (and the company names,
    :func:`company_names`), not the world's artifacts."""
    _cached_world.cache_clear()


def _names_of(spec: dict[str, Any]) -> tuple[str, ...]:
    if "corpus" in spec:
        return tuple(load_corpus(spec["corpus"]).company_names)
    from suites.herb.data.generator import generate_company_names

    return tuple(generate_company_names(seed=spec["seed"], products=spec["products"]))


@functools.lru_cache(maxsize=8)
def _company_names(key: str) -> tuple[str, ...]:
    # a generated world's names are drawn without building the world (a rescore scores
    # without it); under xdist in a child process (a corpus is loaded whole)
    if key in _WORLD_NAMES:  # the world was here (a run's collection or prepare)
        return _WORLD_NAMES[key]
    spec = json.loads(key)
    return build_once("herb-company-names", {"spec": spec, "version": SUITE_VERSION},
                      lambda: _names_of(spec), isolate=True)  # fmt: skip


def company_names(spec: dict[str, Any]) -> list[str]:
    """``World.company_names`` of the world for ``spec``, cached apart from the world; a
    generated world's without building it (:func:`~suites.herb.data.generator.generate_company_names`).

    Raises:
        ValueError: a bad corpus (see :func:`load_corpus`) or product count."""
    return list(_company_names(json.dumps(spec, sort_keys=True)))


def get_world(spec: dict[str, Any]) -> World:
    """The world for ``spec`` (see :func:`world_spec`), built once per process and cached.

    Under pytest-xdist one worker per session builds it and the others unpickle it
    (:func:`pytest_egi.cache.shared.build_once`, keyed by ``spec`` and the suite version).

    Raises:
        ValueError: a bad corpus (see :func:`load_corpus`).
    """
    return _cached_world(json.dumps(spec, sort_keys=True))
