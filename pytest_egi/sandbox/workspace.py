"""A temporary copy of a project where untrusted code is written and run.

:class:`Sandbox` owns one folder under :func:`~pytest_egi.sandbox.runner.sandbox_base_dir`.
The harness writes the project and its own files there (:meth:`Sandbox.write`), applies an
untrusted answer with every path checked and every size capped (:meth:`Sandbox.apply_files`,
:meth:`Sandbox.apply_diff`: all or nothing, refused with :class:`AnswerRefused`), and runs
commands in it (:meth:`Sandbox.run`, see :func:`~pytest_egi.sandbox.runner.run_command`).
The folder is removed on :meth:`Sandbox.close` (or leaving the ``with`` block).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_egi.sandbox.patch import apply_unified_diff
from pytest_egi.sandbox.runner import (
    Isolation,
    Limits,
    RunResult,
    _sandbox_uid,
    detect_isolation,
    run_command,
    sandbox_base_dir,
)

__all__ = ["AnswerCaps", "AnswerRefused", "Sandbox", "check_answer_path"]


class AnswerRefused(ValueError):
    """An answer that cannot be applied: a path outside the project, a protected path, a file
    or an answer too large, too many files. The message names the path and the rule; nothing
    of the answer was written."""


@dataclass(frozen=True)
class AnswerCaps:
    """Size caps on one untrusted answer.

    Attributes:
        max_files: files it may create, change or delete.
        max_file_bytes: UTF-8 bytes of one file's new content.
        max_total_bytes: UTF-8 bytes of all its files together.
    """

    max_files: int = 200
    max_file_bytes: int = 512_000
    max_total_bytes: int = 4_000_000


def check_answer_path(path: Any, protected: tuple[str, ...] = ()) -> str:
    """``path`` as a normalized relative POSIX path inside the project.

    Args:
        path: a path from an answer.
        protected: top-level names (files or folders) an answer may not write (the harness's
            own, such as its hidden tests).

    Returns:
        The path without ``./`` parts (``pkg/a.py``).

    Raises:
        AnswerRefused: not a string, empty, absolute, with a backslash, a NUL, a ``..`` part,
            a part longer than 255 bytes, or under a protected name.
    """
    if not isinstance(path, str) or not path.strip():
        raise AnswerRefused(f"file path {path!r}: must be a non-empty string relative to the project root")
    if "\0" in path or "\\" in path:
        raise AnswerRefused(f"file path {path!r}: must use '/' separators and no NUL character")
    posix = PurePosixPath(path)
    if posix.is_absolute() or path.startswith("~"):
        raise AnswerRefused(
            f"file path {path!r} is outside the project: give it relative to the project root"
        )
    parts = [p for p in posix.parts if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise AnswerRefused(f"file path {path!r} is outside the project: '..' is not allowed")
    if any(len(p.encode()) > 255 for p in parts):
        raise AnswerRefused(f"file path {path!r}: a part is longer than 255 bytes")
    if parts[0] in protected:
        raise AnswerRefused(f"file path {path!r}: {parts[0]!r} belongs to the harness and cannot be written")
    return "/".join(parts)


class Sandbox:
    """One workspace folder for untrusted code.

    Args:
        files: files to write first (path relative to the project root -> text), trusted.
        limits: the default limits of :meth:`run`.
        isolation: force an isolation level (None: the best available).
        protected: top-level names an answer may not write (see :func:`check_answer_path`).

    Attributes:
        root: the project folder (``HOME`` and ``TMPDIR`` of its commands are its ``.home``
            and ``.tmp``).
        isolation: the level its commands run under.
    """

    def __init__(
        self,
        files: Mapping[str, str] | None = None,
        *,
        limits: Limits | None = None,
        isolation: Isolation | None = None,
        protected: tuple[str, ...] = (),
    ) -> None:
        self.limits = limits or Limits()
        self.isolation: Isolation = isolation or detect_isolation()
        self.protected = (".home", ".tmp", *protected)
        self.root = Path(tempfile.mkdtemp(prefix="ws-", dir=sandbox_base_dir())).resolve()
        self._uid = _sandbox_uid() if self.isolation == "namespaces" else None
        for name in (".home", ".tmp"):
            (self.root / name).mkdir()
        for rel, text in (files or {}).items():
            self.write(rel, text)

    @classmethod
    def from_directory(
        cls,
        source: str | os.PathLike[str],
        *,
        limits: Limits | None = None,
        isolation: Isolation | None = None,
        protected: tuple[str, ...] = (),
        max_total_bytes: int = 200_000_000,
    ) -> Sandbox:
        """A sandbox holding a copy of the folder ``source`` (trusted: the harness's own
        project or checker), its regular files only: symbolic links, sockets and devices are
        left out, so nothing in the copy points outside it.

        Raises:
            NotADirectoryError: ``source`` is not a folder.
            AnswerRefused: the folder holds more than ``max_total_bytes`` bytes (nothing is
                kept: the workspace is removed).
        """
        src = Path(source)
        if not src.is_dir():
            raise NotADirectoryError(f"sandbox source {str(src)!r} is not a folder")
        box = cls(limits=limits, isolation=isolation, protected=protected)
        total = 0
        try:
            for dirpath, dirnames, filenames in os.walk(src):
                dirnames[:] = sorted(d for d in dirnames if not (Path(dirpath) / d).is_symlink())
                rel_dir = Path(dirpath).relative_to(src)
                (box.root / rel_dir).mkdir(parents=True, exist_ok=True)
                for name in sorted(filenames):
                    path = Path(dirpath) / name
                    if path.is_symlink() or not path.is_file():
                        continue
                    total += path.stat().st_size
                    if total > max_total_bytes:
                        raise AnswerRefused(
                            f"sandbox source {str(src)!r} holds more than {max_total_bytes} bytes"
                        )
                    shutil.copyfile(path, box.root / rel_dir / name, follow_symlinks=False)
        except BaseException:
            box.close()
            raise
        return box

    # -- files -----------------------------------------------------------------------------

    def _target(self, rel: str) -> Path:
        target = self.root.joinpath(*PurePosixPath(rel).parts)
        current = self.root
        for part in PurePosixPath(rel).parts[:-1]:
            current = current / part
            if current.is_symlink() or (current.exists() and not current.is_dir()):
                raise AnswerRefused(f"file path {rel!r}: {current.relative_to(self.root)} is not a folder")
        if target.is_symlink():
            raise AnswerRefused(f"file path {rel!r} is a symbolic link in the workspace")
        return target

    def write(self, rel: str, text: str) -> None:
        """Write a trusted file (the harness's own: the project, hidden tests); its path must
        still stay inside the project.

        Raises:
            AnswerRefused: the path leaves the project.
        """
        rel = check_answer_path(rel)
        target = self._target(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(target, flags, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)

    def read(self, rel: str) -> str | None:
        """The text of a project file, or None when it does not exist, is not UTF-8, or is
        reached through a symbolic link (the file or any folder on its path: the command run
        in the workspace may have made one pointing outside it)."""
        try:
            target = self._target(check_answer_path(rel))
        except AnswerRefused:
            return None
        try:
            if not target.is_file():
                return None
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def paths(self) -> Iterator[str]:
        """Relative paths of the project's regular files (not ``.home``/``.tmp``), sorted."""
        found = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            rel_dir = Path(dirpath).relative_to(self.root)
            if rel_dir.parts[:1] and rel_dir.parts[0] in (".home", ".tmp"):
                dirnames[:] = []
                continue
            for name in filenames:
                path = Path(dirpath) / name
                if path.is_file() and not path.is_symlink():
                    found.append(str((rel_dir / name).as_posix()))
        return iter(sorted(found))

    def check_answer(self, files: Mapping[Any, Any], caps: AnswerCaps | None = None) -> dict[str, str | None]:
        """Check an untrusted answer without writing it.

        Args:
            files: path -> new text (None deletes the file).
            caps: the size caps (defaults: :class:`AnswerCaps`).

        Returns:
            The answer with normalized paths.

        Raises:
            AnswerRefused: see :func:`check_answer_path`, too many files, a file or the whole
                answer too large, or content that is not text (the message names the path).
        """
        caps = caps or AnswerCaps()
        if len(files) > caps.max_files:
            raise AnswerRefused(
                f"the answer changes {len(files)} files; at most {caps.max_files} are allowed"
            )
        out: dict[str, str | None] = {}
        total = 0
        for raw, text in files.items():
            rel = check_answer_path(raw, self.protected)
            if text is not None and not isinstance(text, str):
                raise AnswerRefused(f"file {rel!r}: its content must be text, got {type(text).__name__}")
            size = len(text.encode("utf-8", errors="surrogatepass")) if text is not None else 0
            if size > caps.max_file_bytes:
                raise AnswerRefused(
                    f"file {rel!r} has {size} bytes; at most {caps.max_file_bytes} are allowed per file"
                )
            total += size
            if "\0" in (text or ""):
                raise AnswerRefused(f"file {rel!r}: its content holds a NUL character (not a text file)")
            out[rel] = text
        if total > caps.max_total_bytes:
            raise AnswerRefused(
                f"the answer has {total} bytes; at most {caps.max_total_bytes} are allowed in all"
            )
        return out

    def apply_files(self, files: Mapping[Any, Any], caps: AnswerCaps | None = None) -> list[str]:
        """Apply an untrusted answer given as whole files, all or nothing.

        Returns:
            The paths written or deleted, sorted.

        Raises:
            AnswerRefused: see :meth:`check_answer` (nothing is written), or a path that runs
                through a file or a symbolic link of the workspace.
        """
        checked = self.check_answer(files, caps)
        for rel in checked:
            self._target(rel)
        for rel, text in sorted(checked.items()):
            if text is None:
                target = self._target(rel)
                if target.exists():
                    target.unlink()
            else:
                self.write(rel, text)
        return sorted(checked)

    def apply_diff(self, diff: str, caps: AnswerCaps | None = None) -> list[str]:
        """Apply an untrusted unified diff to the workspace's files, all or nothing.

        Returns:
            The paths written or deleted, sorted.

        Raises:
            PatchError: the diff does not parse or apply (names file and hunk).
            AnswerRefused: a path or size rule (see :meth:`apply_files`).
        """
        touched = {}
        from pytest_egi.sandbox.patch import parse_unified_diff

        for fd in parse_unified_diff(diff):
            for p in (fd.old_path, fd.new_path):
                if p is not None:
                    rel = check_answer_path(p, self.protected)
                    touched[rel] = self.read(rel)
        current = {k: v for k, v in touched.items() if v is not None}
        return self.apply_files(apply_unified_diff(diff, current), caps)

    # -- running ---------------------------------------------------------------------------

    def _hand_over(self) -> None:
        """Give the workspace to the run's own uid (``namespaces``), so its commands can write
        there and nowhere else."""
        if self._uid is None:
            return
        uid = self._uid
        os.lchown(self.root, uid, uid)
        for dirpath, dirnames, filenames in os.walk(self.root):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                if stat.S_ISLNK(os.lstat(path).st_mode):
                    continue
                os.lchown(path, uid, uid)

    def run(
        self,
        argv: list[str],
        *,
        limits: Limits | None = None,
        env: dict[str, str] | None = None,
        junit: str | None = None,
    ) -> RunResult:
        """Run ``argv`` in the workspace (see :func:`~pytest_egi.sandbox.runner.run_command`).

        Args:
            argv: the command.
            limits: this run's limits (default: the sandbox's).
            env: extra environment variables (the rest is scrubbed).
            junit: a path relative to the project where the command writes a JUnit XML
                report, read back into ``RunResult.junit``.
        """
        self._hand_over()
        junit_path = self.root / check_answer_path(junit) if junit else None
        return run_command(argv, self.root, limits or self.limits, env=env, junit_path=junit_path,
                           isolation=self.isolation, owner_uid=self._uid)  # fmt: skip

    def close(self) -> None:
        """Remove the workspace (whatever its commands left there)."""
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
