"""The PersonaBench world: generated communities, or the released layout read from a folder.

A world spec (JSON-safe, stored in every task) is either ``{"seed", "communities", "people"}``
(generated, :mod:`suites.personabench.data.generator`) or ``{"data_dir": PATH}`` (upstream's
``eval_data/eval_data_v1`` layout: ``synthetic_data/community_<i>/{eval_info, private_data,
graph_json}``). Both give the same objects: per community, ``eval_info_all`` and per noise
level the people's three document files and the gold map. Loaded communities are cached per
process.

A person's chunks follow upstream's ``create_vector_base``: conversation sessions (per contact,
in file order), then user–AI sessions, then purchase baskets; one chunk per session, the
session without its ``segment_id`` and ``session`` keys as compact JSON
(``json.dumps(..., separators=(",", ":"))``).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from suites.personabench.data.generator import NOISE_LEVELS, generate_community

__all__ = ["DOC_KINDS", "chunk_text", "community", "community_ids", "person_chunks", "world_spec"]

DOC_KINDS = ("conversation_data", "user_ai_interaction_data", "purchase_history_data")
"""Upstream's three document kinds, in ``create_vector_base`` order."""
_SESSION_KEY = {
    "user_ai_interaction_data": "user_ai_interaction",
    "purchase_history_data": "purchase_history",
}


def world_spec(seed: int, options: Any) -> dict[str, Any]:
    """The world spec for ``seed`` and the suite options (``data_dir``, ``communities``,
    ``people``)."""
    if getattr(options, "data_dir", None) is not None:
        return {"data_dir": str(Path(options.data_dir).expanduser().resolve())}
    return {"seed": seed, "communities": options.communities, "people": 10}


def _fail(path: Path | str, field: str, problem: str, fix: str) -> ValueError:
    return ValueError(f"PersonaBench data {path}: {field}: {problem}. Fix: {fix}")


def _synthetic_root(data_dir: Path) -> Path:
    """The folder holding ``community_<i>`` folders, from the release root, ``synthetic_data``
    or a folder of communities.

    Raises:
        ValueError: no ``community_<i>`` folder found (names the path and the fix).
    """
    for root in (
        data_dir / "synthetic_data",
        data_dir / "eval_data" / "eval_data_v1" / "synthetic_data",
        data_dir,
    ):
        if root.is_dir() and any(
            p.is_dir() and re.fullmatch(r"community_\d+", p.name) for p in root.iterdir()
        ):
            return root
    if re.fullmatch(r"community_\d+", data_dir.name) and data_dir.is_dir():
        return data_dir.parent
    raise _fail(
        data_dir,
        "synthetic_data/community_<i>",
        "no community folder found",
        "point personabench.data_dir at the release folder eval_data/eval_data_v1 (the one "
        "holding synthetic_data/community_0, ...)",
    )


def community_ids(spec: dict[str, Any]) -> list[int]:
    """The community indices the world holds."""
    if "data_dir" not in spec:
        return list(range(spec["communities"]))
    root = _synthetic_root(Path(spec["data_dir"]))
    ids = sorted(
        int(p.name.split("_")[1])
        for p in root.iterdir()
        if p.is_dir() and re.fullmatch(r"community_\d+", p.name)
    )
    if Path(spec["data_dir"]).name.startswith("community_"):
        ids = [int(Path(spec["data_dir"]).name.split("_")[1])]
    return ids


def _read(path: Path, kind: type) -> Any:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise _fail(path, "(file)", f"not valid JSON ({exc})", "restore the file from the release") from None
    if not isinstance(value, kind):
        raise _fail(
            path,
            "(top level)",
            f"expected a JSON {kind.__name__}, got {type(value).__name__}",
            "restore the file from the release",
        )
    return value


def _check_sessions(path: Path, where: str, sessions: Any, body: str) -> None:
    if not isinstance(sessions, list):
        raise _fail(
            path,
            where,
            f"expected a list of sessions, got {type(sessions).__name__}",
            "restore the file from the release",
        )
    for i, sess in enumerate(sessions):
        for key in ("segment_id", "time", body):
            if not isinstance(sess, dict) or key not in sess:
                raise _fail(
                    path,
                    f"{where}[{i}].{key}",
                    "missing",
                    f"every session needs segment_id, time and {body} (upstream's session format)",
                )


def _load_private(folder: Path) -> dict[str, dict[str, Any]]:
    """name -> {kind: file object}, from the ``*_all.json`` files or per-person folders."""
    people: dict[str, dict[str, Any]] = {}
    for kind in DOC_KINDS:
        path = folder / f"{kind}_all.json"
        entries: list[tuple[Path, Any]] = []
        if path.is_file():
            entries = [(path, e) for e in _read(path, list)]
        else:
            for person in sorted(p for p in folder.iterdir() if p.is_dir()):
                file = person / f"{kind}.json"
                if file.is_file():
                    entries.append((file, _read(file, dict)))
        for i, (file, entry) in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("Name"), str) or "Data" not in entry:
                raise _fail(file, f"[{i}]", "expected {Name, Data}", "restore the file from the release")
            if kind == "conversation_data":
                for j, target in enumerate(entry["Data"]):
                    if not isinstance(target, dict) or "Conversations" not in target:
                        raise _fail(
                            file,
                            f"[{i}].Data[{j}].Conversations",
                            "missing",
                            "each conversation entry is {Target_name, Conversations}",
                        )
                    _check_sessions(
                        file, f"[{i}].Data[{j}].Conversations", target["Conversations"], "conversation"
                    )
            else:
                _check_sessions(file, f"[{i}].Data", entry["Data"], _SESSION_KEY[kind])
            people.setdefault(entry["Name"], {})[kind] = {"Name": entry["Name"], "Data": entry["Data"]}
    return people


@lru_cache(maxsize=8)
def _community(spec_json: str, c: int) -> dict[str, Any]:
    spec = json.loads(spec_json)
    if "data_dir" not in spec:
        return generate_community(spec["seed"], c, spec["people"])
    folder = _synthetic_root(Path(spec["data_dir"])) / f"community_{c}"
    info_path = folder / "eval_info" / "eval_info_all.json"
    if not info_path.is_file():
        raise _fail(info_path, "(file)", "missing", "every community needs eval_info/eval_info_all.json")
    eval_info = _read(info_path, list)
    for i, person in enumerate(eval_info):
        qa = person.get("Eval_Info", {}).get("qa") if isinstance(person, dict) else None
        if (
            not isinstance(person, dict)
            or not isinstance(person.get("Name"), str)
            or not isinstance(qa, list)
        ):
            raise _fail(info_path, f"[{i}]", "expected {Name, Eval_Info: {qa: [...]}}", "restore the file")
        for j, q in enumerate(qa):
            for key in ("q_id", "question", "answer", "type", "difficulty"):
                if not isinstance(q, dict) or key not in q:
                    raise _fail(
                        info_path,
                        f"[{i}].Eval_Info.qa[{j}].{key}",
                        "missing",
                        "each QA is {q_id, question, answer, type, difficulty, outdated_value}",
                    )
    out: dict[str, Any] = {"eval_info_all": eval_info, "noise": {}, "probes": {}, "missing": {}}
    for level in NOISE_LEVELS:
        gt_path = folder / "eval_info" / f"qa_gt_context_all_noise_{level}.json"
        private = folder / "private_data" / f"noise_{level}"
        if not gt_path.is_file() or not private.is_dir():
            absent = [str(p) for p in (gt_path, private) if not p.exists()]
            out["missing"][level] = " and ".join(absent)
            continue
        gt = _read(gt_path, list)
        for i, entry in enumerate(gt):
            seg = entry.get("segment_id") if isinstance(entry, dict) else None
            if not isinstance(seg, dict) or not all(isinstance(v, list) and v for v in seg.values()):
                raise _fail(
                    gt_path,
                    f"[{i}].segment_id",
                    "expected {answer item: [segment ids]} with a non-empty list per item",
                    "restore the file from the release",
                )
        out["noise"][level] = {"private": _load_private(private), "qa_gt_context_all": gt}
    return out


def community(spec: dict[str, Any], c: int) -> dict[str, Any]:
    """Community ``c`` of the world (cached per process). For a loaded world, ``missing`` maps
    each noise level without files to what is absent.

    Raises:
        ValueError: a malformed or missing file (names the file, the field and the fix).
    """
    return _community(json.dumps(spec, sort_keys=True), c)


def chunk_text(session: dict[str, Any]) -> str:
    """Upstream's chunk: the session without ``segment_id`` and ``session`` (at any depth), as
    compact JSON."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("segment_id", "session")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(session), separators=(",", ":"))


@lru_cache(maxsize=64)
def _person_chunks(
    spec_json: str, c: int, name: str, level: float
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    docs = community(json.loads(spec_json), c)["noise"][level]["private"][name]
    chunks: list[str] = []
    ids: list[str] = []
    for kind in DOC_KINDS:
        data = docs.get(kind, {}).get("Data", [])
        sessions = [s for t in data for s in t["Conversations"]] if kind == "conversation_data" else data
        for sess in sessions:
            chunks.append(chunk_text(sess))
            ids.append(str(sess["segment_id"]))
    return tuple(chunks), tuple(ids)


def person_chunks(
    spec: dict[str, Any], c: int, name: str, level: float
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(chunk texts, their segment ids) of one person's index at one noise level."""
    return _person_chunks(json.dumps(spec, sort_keys=True), c, name, level)


def dump_world(spec: dict[str, Any], root: Path) -> Path:
    """Write a generated world in the release layout under ``root``
    (``synthetic_data/community_<i>/...``, as ``personabench.data_dir`` reads it).

    Returns:
        ``root`` (pass it as ``data_dir``).
    """
    for c in community_ids(spec):
        comm = community(spec, c)
        folder = root / "synthetic_data" / f"community_{c}"
        (folder / "eval_info").mkdir(parents=True, exist_ok=True)
        (folder / "graph_json").mkdir(parents=True, exist_ok=True)
        (folder / "graph_json" / "social_graph.json").write_text(json.dumps(comm["social_graph"], indent=4))
        (folder / "eval_info" / "eval_info_all.json").write_text(json.dumps(comm["eval_info_all"], indent=4))
        for level, lv in comm["noise"].items():
            gt = folder / "eval_info" / f"qa_gt_context_all_noise_{level}.json"
            gt.write_text(json.dumps(lv["qa_gt_context_all"], indent=4))
            private = folder / "private_data" / f"noise_{level}"
            private.mkdir(parents=True, exist_ok=True)
            for kind in DOC_KINDS:
                everyone = [docs[kind] for docs in lv["private"].values()]
                (private / f"{kind}_all.json").write_text(json.dumps(everyone, indent=4))
                for name, docs in lv["private"].items():
                    (private / name).mkdir(exist_ok=True)
                    (private / name / f"{kind}.json").write_text(json.dumps(docs[kind], indent=4))
    return root
