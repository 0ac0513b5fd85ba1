"""Running one command on a workspace folder with limits, under the best isolation the machine allows.

Three isolation levels, chosen once per process (:func:`detect_isolation`), the best first:

``namespaces``
    As root, with util-linux's ``unshare`` and ``setpriv``: the command runs in new mount,
    network, PID, IPC and UTS namespaces. Inside, every mount but the workspace is remounted
    read-only, folders the interpreter needs but others may not traverse (``/root`` when
    Python lives under ``/root/.pyenv``) are replaced by an empty tmpfs holding only what is
    needed (so nothing else there can be read), and the command is started as a user id of its
    own (no capabilities, ``no_new_privs``), which is what makes ``RLIMIT_NPROC`` bite (the
    kernel never applies it to uid 0). No network (only a down loopback), no view of other
    processes, no writable path outside the workspace; a command that outlives the wall clock
    is killed with its whole PID namespace.
``netns+rlimits``
    Not root, but unprivileged user namespaces work: a network namespace (no network) and
    the limits below; files outside the workspace are protected only by the user's own
    permissions.
``rlimits``
    Nothing else available: the limits below and a process group killed on timeout.

Every level applies the same limits (:class:`Limits`: ``RLIMIT_CPU``, ``RLIMIT_AS``,
``RLIMIT_NPROC``, ``RLIMIT_FSIZE``, ``RLIMIT_NOFILE``, a wall clock) and the same scrubbed
environment (:func:`scrubbed_env`: no inherited variable, so no API key; ``HOME`` and
``TMPDIR`` inside the workspace). bubblewrap is not used: it is not installed on the
machines this project runs on, and started as root it keeps uid 0 outside, where
``RLIMIT_NPROC`` does not apply; ``unshare`` + ``setpriv`` give the same namespaces plus the
uid drop. :class:`RunResult` says which level ran and why a command was stopped.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pytest_egi.processes import stop_process
from pytest_egi.sandbox.junit import JUnitReport, parse_junit

__all__ = [
    "ISOLATION_LEVELS",
    "Isolation",
    "Limits",
    "RunResult",
    "detect_isolation",
    "SandboxError",
    "python_argv",
    "python_env",
    "run_command",
    "sandbox_base_dir",
    "scrubbed_env",
]

Isolation = Literal["namespaces", "netns+rlimits", "rlimits"]
ISOLATION_LEVELS: tuple[Isolation, ...] = ("namespaces", "netns+rlimits", "rlimits")
"""The isolation levels, strongest first."""

SANDBOX_UID_BASE = 1_700_000
"""First user id a ``namespaces`` run may take; each run takes one of its own above it (no
account needs to exist), so one run's processes never count against another's
``RLIMIT_NPROC``."""
SANDBOX_UID_SPAN = 200_000


@dataclass(frozen=True)
class Limits:
    """What one sandboxed command may use. Every process it starts inherits the rlimits.

    Attributes:
        wall_s: wall-clock seconds before the command (and all it started) is killed.
        cpu_s: CPU seconds per process (``RLIMIT_CPU``: SIGXCPU, then SIGKILL 2 s later).
        memory_mb: address space per process, MiB (``RLIMIT_AS``; Python raises MemoryError).
        processes: processes of the run's user at once (``RLIMIT_NPROC``; a fork beyond it
            fails with EAGAIN). Enforced under ``namespaces`` (a uid of its own) and for a
            non-root user; the kernel never applies it to uid 0.
        file_size_mb: largest file a process may write, MiB (``RLIMIT_FSIZE``; Python gets
            ``OSError: File too large``). Also caps the captured stdout and stderr.
        open_files: file descriptors per process (``RLIMIT_NOFILE``).
        tail_chars: characters of stdout and stderr kept in the result (the end of each).
    """

    wall_s: float = 60.0
    cpu_s: int = 60
    memory_mb: int = 1024
    processes: int = 64
    file_size_mb: int = 64
    open_files: int = 256
    tail_chars: int = 4000

    def rlimits(self) -> dict[str, tuple[int, int]]:
        """``resource`` limit name -> (soft, hard)."""
        mb = 1024 * 1024
        return {
            "RLIMIT_CPU": (int(self.cpu_s), int(self.cpu_s) + 2),
            "RLIMIT_AS": (self.memory_mb * mb, self.memory_mb * mb),
            "RLIMIT_NPROC": (self.processes, self.processes),
            "RLIMIT_FSIZE": (self.file_size_mb * mb, self.file_size_mb * mb),
            "RLIMIT_NOFILE": (self.open_files, self.open_files),
            "RLIMIT_CORE": (0, 0),
        }


StopReason = Literal["timeout", "cpu_limit", "file_size_limit", "killed", "signal"]


@dataclass(frozen=True)
class RunResult:
    """What one sandboxed command did.

    Attributes:
        exit_code: the command's exit status; None when it was killed (see ``stopped``).
        stopped: why it did not exit on its own: ``timeout`` (the wall clock ran out; it was
            killed), ``cpu_limit`` (SIGXCPU / SIGKILL from ``RLIMIT_CPU``), ``file_size_limit``
            (SIGXFSZ), ``killed`` (SIGKILL from elsewhere, e.g. the kernel out of memory),
            ``signal`` (any other signal); None when it exited.
        reason: one sentence for a failure message (``"stopped after the wall-clock limit of
            60 s"``, ``"exited with status 2"``), or None for status 0.
        signal: the signal's name when it was killed by one (``SIGKILL``), else None.
        stdout_tail: the end of its stdout (``Limits.tail_chars``), decoded as UTF-8.
        stderr_tail: the end of its stderr.
        junit: the JUnit XML report it wrote at the requested path, or None (no such file,
            or not JUnit XML).
        hints: limits the output suggests were hit, from the stdout/stderr tails (for the
            failure message only, never for scoring): ``memory`` (MemoryError, ENOMEM),
            ``processes`` (a fork refused with EAGAIN), ``network`` (network unreachable),
            ``file_size`` (EFBIG), ``read_only`` (EROFS: a write outside the workspace).
        isolation: the isolation level that ran (see the module docstring).
        elapsed_s: wall seconds (varies between runs: keep it out of scored records).
    """

    exit_code: int | None
    stopped: StopReason | None
    reason: str | None
    signal: str | None
    stdout_tail: str
    stderr_tail: str
    junit: JUnitReport | None
    hints: tuple[str, ...]
    isolation: Isolation
    elapsed_s: float = field(default=0.0, compare=False)

    @property
    def ok(self) -> bool:
        """Exited with status 0."""
        return self.exit_code == 0


# Started as ``python -S -c LAUNCHER SPEC``. Under ``namespaces`` it first binds the
# workspace, hides folders others may not traverse behind a tmpfs holding only what is needed,
# and remounts everything else read-only (mount(2) through ctypes: no process per mount).
# Then it writes "S" to the status pipe, forks the command (rlimits set, started through
# setpriv under a uid of its own when asked) and waits as its init: it reaps every process and
# reports the command's wait status on the pipe ({"exit": n} or {"signal": n}). As PID 1 of a
# namespace the command itself would ignore SIGXCPU and SIGTERM, hence the fork.
LAUNCHER = r"""
import ctypes, json, os, resource, sys
spec = json.loads(sys.argv[1])
status_fd = spec["status_fd"]
if spec["mounts"]:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]

    def mount(src, dst, fstype, flags, data=None):
        enc = lambda v: None if v is None else v.encode()
        if libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), dst)

    def unescape(text):
        out, i = [], 0
        while i < len(text):
            if text[i] == "\\" and text[i + 1:i + 4].isdigit():
                out.append(chr(int(text[i + 1:i + 4], 8)))
                i += 4
            else:
                out.append(text[i])
                i += 1
        return "".join(out)

    RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, MOVE, REC = 1, 2, 4, 8, 32, 4096, 8192, 16384
    KEEP = NOSUID | NODEV | NOEXEC | 1024 | 2048
    work = spec["workdir"]
    mount(work, work, None, BIND)
    for n, (parent, children) in enumerate(spec["overlays"]):
        held = []
        for k, child in enumerate(children):
            source = os.path.join(parent, child)
            hold = os.path.join(spec["hold"], str(n) + "-" + str(k))
            if os.path.isdir(source):
                os.mkdir(hold)
            else:
                open(hold, "w").close()
            mount(source, hold, None, BIND | REC)
            held.append((source, hold))
        mount("tmpfs", parent, "tmpfs", NOSUID | NODEV, "mode=0755,size=1m")
        for source, hold in held:
            if os.path.isdir(hold):
                os.mkdir(source)
            else:
                open(source, "w").close()
            mount(hold, source, None, MOVE)
    with open("/proc/self/mountinfo") as fh:
        points = sorted({unescape(line.split()[4]) for line in fh}, key=len, reverse=True)
    for point in points:
        if point in (work, "/dev", "/dev/pts") or point.split("/")[1:2] in (["proc"], ["sys"]):
            continue
        try:
            flags = os.statvfs(point).f_flag
            relatime = (1 << 21) if flags & 4096 else 0
            mount(None, point, None, REMOUNT | BIND | RDONLY | (flags & KEEP) | relatime)
        except OSError:
            pass
os.write(status_fd, b"S")
child = os.fork()
if child == 0:
    os.close(status_fd)
    for name, (soft, hard) in spec["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))
    os.chdir(spec["cwd"])
    argv = spec["argv"]
    if spec["uid"] is not None:
        uid = str(spec["uid"])
        argv = [spec["setpriv"], "--reuid=" + uid, "--regid=" + uid, "--clear-groups", "--no-new-privs",
                "--inh-caps=-all", "--bounding-set=-all", "--", *argv]
    try:
        os.execvpe(argv[0], argv, spec["env"])
    except OSError as exc:
        os.write(2, ("cannot start " + argv[0] + ": " + str(exc) + "\n").encode())
        os._exit(127)
while True:
    try:
        pid, status = os.wait()
    except ChildProcessError:
        break
    if pid == child:
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
        done = {"exit": code} if code is not None else {"signal": os.WTERMSIG(status)}
        os.write(status_fd, json.dumps(done).encode())
        break
os._exit(0)
"""


class SandboxError(OSError):
    """The sandbox itself could not start the command (an isolation tool failed): an
    infrastructure fault, never the command's doing."""


_uid_counter = itertools.count()


def _sandbox_uid() -> int:
    return SANDBOX_UID_BASE + (os.getpid() * 997 + next(_uid_counter)) % SANDBOX_UID_SPAN


def sandbox_base_dir() -> Path:
    """The folder workspaces are created in: ``<tmp>/egi-sandbox`` (mode 0711), where ``<tmp>``
    is the first of the system's temporary folder, ``/tmp`` and ``/var/tmp`` that every user
    can traverse (a workspace must be reachable by the run's own uid under ``namespaces``)."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        path = Path(candidate)
        if path.is_dir() and _traversable_by_others(path):
            base = path / "egi-sandbox"
            base.mkdir(mode=0o711, exist_ok=True)
            return base
    base = Path(tempfile.gettempdir()) / "egi-sandbox"
    base.mkdir(mode=0o711, exist_ok=True)
    return base


def _traversable_by_others(path: Path) -> bool:
    current = path.resolve()
    for ancestor in [current, *current.parents]:
        try:
            if not ancestor.stat().st_mode & 0o001:
                return False
        except OSError:
            return False
    return True


def _interpreter_paths() -> list[str]:
    """Paths the sandboxed Python must reach: its executable, prefixes and import path."""
    paths = {sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix, sys.exec_prefix}
    paths.update(p for p in sys.path if p and os.path.isdir(p))
    return sorted(paths)


def _overlays(paths: list[str]) -> list[tuple[str, list[str]]]:
    """Folders others may not traverse on the way to ``paths``, each with the children to
    keep reachable, deepest first (each becomes a tmpfs holding only those children)."""
    needed: dict[str, set[str]] = {}
    for raw in paths:
        for p in {raw, os.path.realpath(raw)}:
            parts = Path(p).parts
            for k in range(1, len(parts)):
                ancestor = str(Path(*parts[:k]))
                try:
                    mode = os.stat(ancestor).st_mode
                except OSError:
                    break
                if not mode & 0o001:
                    needed.setdefault(ancestor, set()).add(parts[k])
    return sorted(((a, sorted(c)) for a, c in needed.items()), key=lambda item: -len(Path(item[0]).parts))


def scrubbed_env(workdir: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed command: nothing inherited (no API key, no proxy,
    no ``PYTHONPATH``), ``HOME`` and ``TMPDIR`` inside the workspace (``.home``, ``.tmp``),
    a fixed hash seed, bytecode not written, pytest's plugin autoload off, plus ``extra``."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(workdir / ".home"),
        "TMPDIR": str(workdir / ".tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "NO_COLOR": "1",
    }
    env.update(extra or {})
    return env


def _probe(argv: list[str]) -> bool:
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


_NS_FLAGS = ["--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc",
             "--propagation", "private"]  # fmt: skip


@functools.lru_cache(maxsize=1)
def detect_isolation() -> Isolation:
    """The strongest isolation level this process can use (probed once per process):
    ``namespaces`` when running as root with ``unshare`` and ``setpriv`` that work,
    ``netns+rlimits`` when an unprivileged user namespace with its own network can be made,
    else ``rlimits``."""
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare and setpriv and os.geteuid() == 0 and shutil.which("mount"):
        if _probe([unshare, *_NS_FLAGS, setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "true"]):
            return "namespaces"
    if unshare and _probe([unshare, "--user", "--map-root-user", "--net", "true"]):
        return "netns+rlimits"
    return "rlimits"


def _tail(path: Path, chars: int) -> str:
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 4 * chars))
            data = fh.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")[-chars:]


_HINTS = (
    ("memory", ("MemoryError", "Cannot allocate memory", "[Errno 12]")),
    ("processes", ("Resource temporarily unavailable", "[Errno 11]", "BlockingIOError")),
    ("network", ("Network is unreachable", "[Errno 101]", "Temporary failure in name resolution",
                 "Name or service not known")),
    ("file_size", ("File too large", "[Errno 27]")),
    ("read_only", ("Read-only file system", "[Errno 30]")),
)  # fmt: skip


def _hints(*texts: str) -> tuple[str, ...]:
    joined = "\n".join(texts)
    return tuple(name for name, needles in _HINTS if any(n in joined for n in needles))


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def python_argv(*args: str) -> list[str]:
    """A command running this interpreter in the sandbox: ``python -S <args>`` (no ``site``:
    the ``.pth`` files of the harness's environment, such as editable installs, are not run;
    :func:`python_env` puts the installed packages on the import path)."""
    return [sys.executable, "-S", *args]


@functools.lru_cache(maxsize=1)
def _site_packages() -> str:
    import site
    import sysconfig

    paths = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    return os.pathsep.join(dict.fromkeys(p for p in paths if os.path.isdir(p)))


def python_env() -> dict[str, str]:
    """The extra environment :func:`python_argv` needs: ``PYTHONPATH`` = this interpreter's
    site-packages (so pytest imports in the sandbox; the current folder, the project, stays
    first on the path)."""
    return {"PYTHONPATH": _site_packages()}


def run_command(
    argv: list[str],
    workdir: str | os.PathLike[str],
    limits: Limits | None = None,
    *,
    env: dict[str, str] | None = None,
    junit_path: str | os.PathLike[str] | None = None,
    isolation: Isolation | None = None,
    owner_uid: int | None = None,
) -> RunResult:
    """Run ``argv`` in ``workdir`` (its current directory) under ``limits``.

    The workspace must already hold what the command needs (see
    :class:`~pytest_egi.sandbox.workspace.Sandbox`, which also hands it to the run's user).

    Args:
        argv: the command; ``argv[0]`` is looked up on the scrubbed ``PATH`` unless absolute.
        workdir: the workspace folder; the only writable place under ``namespaces``.
        limits: the limits (defaults: :class:`Limits`).
        env: extra environment variables over :func:`scrubbed_env` (never the caller's own).
        junit_path: where the command writes its JUnit XML report (read into
            ``RunResult.junit``; a stale file there is removed first).
        isolation: force a level (a weaker one than :func:`detect_isolation` allows is
            honoured; a stronger one raises).
        owner_uid: under ``namespaces``, the uid to run as (the workspace's owner); None picks
            a fresh one (then the workspace must be writable by it).

    Returns:
        The result; a command that hangs, eats memory, forks without end or writes too much
        is stopped by its limits and described, never raised.

    Raises:
        ValueError: ``isolation`` is stronger than the machine allows.
        SandboxError: the sandbox could not start the command (an isolation tool failed).
    """
    limits = limits or Limits()
    work = Path(workdir).resolve()
    available = detect_isolation()
    level: Isolation = isolation or available
    if ISOLATION_LEVELS.index(level) < ISOLATION_LEVELS.index(available):
        raise ValueError(f"isolation {level!r} is not available on this machine (best: {available!r})")
    junit = Path(junit_path) if junit_path is not None else None
    if junit is not None and (junit.exists() or junit.is_symlink()):
        junit.unlink()
    read_end, write_end = os.pipe()
    spec = {
        "mounts": level == "namespaces",
        "workdir": str(work),
        "hold": "",
        "overlays": [],
        "rlimits": limits.rlimits(),
        "cwd": str(work),
        "argv": list(argv),
        "env": scrubbed_env(work, env),
        "uid": None,
        "setpriv": shutil.which("setpriv") or "setpriv",
        "status_fd": write_end,
    }
    try:
        with tempfile.TemporaryDirectory(prefix="egi-sandbox-io-") as io_dir:
            io = Path(io_dir)
            if level == "namespaces":
                hold = io / "hold"
                hold.mkdir()
                spec.update(hold=str(hold), overlays=_overlays(_interpreter_paths()),
                            uid=owner_uid if owner_uid is not None else _sandbox_uid())  # fmt: skip
                prefix = [shutil.which("unshare") or "unshare", *_NS_FLAGS]
            elif level == "netns+rlimits":
                prefix = [shutil.which("unshare") or "unshare", "--user", "--map-root-user", "--net"]
            else:
                prefix = []
            cmd = [*prefix, sys.executable, "-S", "-c", LAUNCHER, json.dumps(spec)]
            out_path, err_path = io / "stdout", io / "stderr"
            begin = time.monotonic()
            with out_path.open("wb") as out, err_path.open("wb") as err:
                proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                        cwd=str(work), env=spec["env"], start_new_session=True,
                                        pass_fds=(write_end,))  # fmt: skip
                os.close(write_end)
                write_end = -1
                timed_out = False
                try:
                    proc.wait(timeout=limits.wall_s)
                except subprocess.TimeoutExpired:
                    timed_out = True
                _stop(proc)  # on timeout the whole run; else whatever it left in its group
            elapsed = time.monotonic() - begin
            status = _read_status(read_end)
            stdout, stderr = _tail(out_path, limits.tail_chars), _tail(err_path, limits.tail_chars)
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    if not timed_out and not status.startswith(b"S"):
        raise SandboxError(
            f"the sandbox ({level}) could not start {argv[0]!r}: {stderr.strip()[-500:] or 'no output'}"
        )
    report = parse_junit(junit) if junit is not None else None
    return _result(status[1:], timed_out, limits, stdout, stderr, report, level, elapsed)


def _read_status(fd: int) -> bytes:
    os.set_blocking(fd, False)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _stop(proc: subprocess.Popen) -> None:
    """Kill the run's whole process group (under ``namespaces`` its PID namespace goes with
    it), in bounded time; after a normal exit this only removes what it left behind."""
    stop_process(proc, group=True, graceful=False, term_s=0.1, kill_s=5.0)


def _result(status: bytes, timed_out: bool, limits: Limits, stdout: str, stderr: str,
            report: JUnitReport | None, level: Isolation, elapsed: float) -> RunResult:  # fmt: skip
    hints = _hints(stdout, stderr)
    if timed_out:
        why = f"stopped after the wall-clock limit of {limits.wall_s:g} s"
        return RunResult(None, "timeout", why, "SIGKILL", stdout, stderr, report, hints, level, elapsed)
    try:
        done = json.loads(status.decode()) if status else {}
    except ValueError:
        done = {}
    if "exit" in done:
        code = int(done["exit"])
        why = None if code == 0 else f"exited with status {code}"
        return RunResult(code, None, why, None, stdout, stderr, report, hints, level, elapsed)
    if "signal" not in done:
        return RunResult(None, "killed", "its launcher was killed before it reported (by the command itself)",
                         None, stdout, stderr, report, hints, level, elapsed)  # fmt: skip
    name = _signal_name(int(done["signal"]))
    stopped: StopReason
    if name == "SIGXCPU":
        stopped, why = "cpu_limit", f"stopped by the CPU limit of {limits.cpu_s} s (SIGXCPU)"
    elif name == "SIGXFSZ":
        stopped, why = "file_size_limit", f"stopped by the file-size limit of {limits.file_size_mb} MiB"
    elif name == "SIGKILL":
        stopped, why = "killed", "killed (SIGKILL: the CPU hard limit or the system's memory)"
    else:
        stopped, why = "signal", f"killed by {name}"
    return RunResult(None, stopped, why, name, stdout, stderr, report, hints, level, elapsed)
