"""Applying a unified diff (``diff -u`` / ``git diff`` text) to files held in memory.

A model may answer a code task with a unified diff instead of whole files. The diff is
parsed tolerantly (hunk line counts that do not add up, a missing ``a/`` / ``b/`` prefix, a
blank context line without its leading space, CRLF line ends), but applied strictly: every
hunk's context and removed lines must be found in the file (at the stated line, or the
nearest place they match, as ``patch`` does without fuzz); otherwise the whole diff is
refused with a :class:`PatchError` that names the file and the hunk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["FileDiff", "Hunk", "PatchError", "apply_unified_diff", "parse_unified_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
DEV_NULL = "/dev/null"


class PatchError(ValueError):
    """The diff cannot be parsed or does not apply; the message names the file and hunk."""


@dataclass
class Hunk:
    """One ``@@`` block: its old start line (1-based) and its lines, each ``(tag, text)``
    with tag ``" "`` (context), ``"-"`` (removed) or ``"+"`` (added)."""

    old_start: int
    lines: list[tuple[str, str]] = field(default_factory=list)

    @property
    def old(self) -> list[str]:
        """The lines the hunk expects in the file (context and removed)."""
        return [t for tag, t in self.lines if tag != "+"]

    @property
    def new(self) -> list[str]:
        """The lines the hunk leaves (context and added)."""
        return [t for tag, t in self.lines if tag != "-"]


@dataclass
class FileDiff:
    """The hunks for one file; ``old_path`` / ``new_path`` None stand for ``/dev/null``
    (a created or deleted file)."""

    old_path: str | None
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def path(self) -> str:
        """The file the diff writes (the new path, or the old one for a deletion)."""
        return self.new_path or self.old_path or ""


def _strip_path(raw: str) -> str | None:
    text = raw.split("\t", 1)[0].strip()
    if text == DEV_NULL:
        return None
    if text.startswith(("a/", "b/")):
        text = text[2:]
    return text


def parse_unified_diff(text: str) -> list[FileDiff]:
    """The files and hunks of a unified diff.

    Raises:
        PatchError: no ``---`` / ``+++`` file header, or a header without a hunk.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    files: list[FileDiff] = []
    i = 0
    current: FileDiff | None = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            current = FileDiff(_strip_path(line[4:]), _strip_path(lines[i + 1][4:]))
            files.append(current)
            i += 2
            continue
        m = _HUNK.match(line)
        if m:
            if current is None:
                raise PatchError(
                    f"hunk {line.strip()!r} comes before any '--- a/<path>' / '+++ b/<path>' header"
                )
            hunk = Hunk(int(m.group(1)))
            current.hunks.append(hunk)
            i += 1
            while i < len(lines):
                body = lines[i]
                if body.startswith("@@") or body.startswith("diff --git"):
                    break
                if body.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
                    break
                if body.startswith("\\"):  # "\ No newline at end of file"
                    i += 1
                    continue
                if body == "":
                    # a blank context line whose leading space was lost, unless it ends the diff
                    if all(rest == "" for rest in lines[i:]):
                        break
                    hunk.lines.append((" ", ""))
                elif body[0] in " -+":
                    hunk.lines.append((body[0], body[1:]))
                else:
                    break
                i += 1
            continue
        i += 1
    if not files:
        raise PatchError("no file header ('--- a/<path>' followed by '+++ b/<path>') in the diff")
    for f in files:
        if not f.hunks:
            raise PatchError(f"{f.path}: a file header with no '@@ -l,s +l,s @@' hunk")
    return files


def _find(lines: list[str], block: list[str], hint: int) -> int | None:
    """Where ``block`` occurs in ``lines``, nearest to ``hint`` (exact, then ignoring
    trailing whitespace); None when nowhere."""
    if not block:
        return min(max(hint, 0), len(lines))
    n = len(block)
    for compare in (lambda a, b: a == b, lambda a, b: a.rstrip() == b.rstrip()):
        best = None
        for start in range(0, len(lines) - n + 1):
            if all(compare(lines[start + k], block[k]) for k in range(n)) and (
                best is None or abs(start - hint) < abs(best - hint)
            ):
                best = start
        if best is not None:
            return best
    return None


def _apply_file(diff: FileDiff, original: str | None) -> str | None:
    if diff.new_path is None:  # deletion
        if original is None:
            raise PatchError(f"{diff.old_path}: the diff deletes a file that does not exist")
        return None
    if diff.old_path is None and original is not None and original != "":
        raise PatchError(f"{diff.new_path}: the diff creates a file that already exists")
    text = original or ""
    ends_with_newline = text.endswith("\n") or text == ""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    if text == "":
        lines = []
    offset = 0
    for k, hunk in enumerate(diff.hunks, 1):
        hint = max(hunk.old_start - 1, 0) + offset
        at = _find(lines, hunk.old, hint)
        if at is None:
            first = next((t for t in hunk.old if t.strip()), "")
            raise PatchError(f"{diff.path}: hunk {k} (@@ -{hunk.old_start}) does not apply: its context and "
                             f"removed lines are not in the file (first: {first[:80]!r})")  # fmt: skip
        lines[at : at + len(hunk.old)] = hunk.new
        offset += len(hunk.new) - len(hunk.old)
    out = "\n".join(lines)
    return out + "\n" if (ends_with_newline or diff.old_path is None) and lines else out


def apply_unified_diff(text: str, files: Mapping[str, str]) -> dict[str, str | None]:
    """Apply the unified diff ``text`` to ``files`` (path -> content).

    Args:
        text: the diff.
        files: the current contents, by path relative to the project root.

    Returns:
        path -> new content for every file the diff touches (None: deleted).

    Raises:
        PatchError: the diff does not parse or a hunk does not apply (names file and hunk).
    """
    out: dict[str, str | None] = {}
    for diff in parse_unified_diff(text):
        path = diff.path
        current = out[path] if path in out else files.get(diff.old_path or path)
        out[path] = _apply_file(diff, current)
        if diff.old_path and diff.new_path and diff.old_path != diff.new_path:
            out[diff.old_path] = None  # a rename
    return out
