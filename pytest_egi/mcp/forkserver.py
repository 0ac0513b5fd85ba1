"""Start Python MCP servers as forks of one warm process (a fork server), so each server
does not pay for importing the ``mcp`` SDK again.

Importing the SDK's server side costs about 1.8 s of CPU and 55-65 MB in every fresh Python
(its protocol types are pydantic models of two protocol versions, built at import). A suite
that starts six servers per process paid that six times per xdist worker, and again after
every restart of a server. A spec that names modules to ``preload``
(:attr:`pytest_egi.mcp.client.ServerSpec.preload`) is started instead through this module:

- **The fork server** (``python forkserver.py serve SOCKET MODULE...``), one per process and
  environment, imports the ``preload`` modules once, freezes the garbage collector's view of
  them (so the forks keep sharing those pages), and listens on a Unix socket. It exits, killing
  its forks, when its parent closes its stdin (also when the parent dies).
- **The launcher** (``python -I -S forkserver.py launch SOCKET -m MODULE ARGS...``) is the
  process the SDK's ``stdio_client`` spawns in place of ``python -m MODULE ARGS...``. It sends
  two new pipes and its stderr, with its environment and working directory, to the fork
  server, which forks a child that takes them as its stdio and runs ``MODULE`` as ``__main__``
  with ``ARGS`` (as ``python -m`` would). The launcher relays its stdin to the child and the
  child's stdout back, forwards SIGTERM, SIGINT and SIGHUP to it, and exits with its exit
  status. When the launcher dies (SIGKILL included) its pipes close at once, as a dead
  server's would, and the fork server kills the child. So the SDK's shutdown sequence, a
  process-group kill of the launcher, and a test that kills the server's pid behave as they
  do on a spawned server.

The child's process title (``ps``, ``/proc/PID/cmdline``) is set to the command it stands for
(``python -m MODULE ARGS... (forked)``) when ``setproctitle`` is installed.

Linux only (``fork``, ``SCM_RIGHTS``); :func:`supported` says whether it can be used, and
``EGI_MCP_FORK=0`` turns it off (every server is then spawned).

This file runs as a script in both roles, and imports nothing outside the standard library
at its top, so the launcher starts in about 20 ms.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys

if (
    __name__ == "__main__"
    and sys.path
    and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__))
):
    del sys.path[0]  # run by path: this folder's modules must not shadow top-level ones

__all__ = ["ForkServer", "ForkServerError", "children_of", "shared", "stop_all", "supported"]

_HEADER = struct.Struct("!I")
"""The length prefix of a launcher's request (bytes of JSON that follow)."""

_MAX_REQUEST = 1 << 22
"""Largest request a fork server reads (4 MiB: an environment and a command line)."""

_READY_S = 60.0
"""Seconds a fork server may take to import its modules and listen."""

_STOP_S = 5.0
"""Seconds a fork server gets to exit after its stdin closes, before it is killed."""

_FOLDER_PREFIX = "egi-mcp-fork-"
"""The name prefix of the temporary folder holding a fork server's socket and stderr."""

EXIT_UNAVAILABLE = 70
"""The launcher's exit status when the fork server cannot be reached (``EX_SOFTWARE``)."""


class ForkServerError(OSError):
    """A fork server could not be started (the message says why, with its stderr)."""


# -- shared wire helpers -----------------------------------------------------------------


def _send_request(sock: socket.socket, request: dict, fds: list[int]) -> None:
    data = json.dumps(request).encode()
    payload = _HEADER.pack(len(data)) + data
    sent = socket.send_fds(sock, [payload], fds)
    sock.sendall(payload[sent:])


def _recv_request(sock: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(sock, 65536, 8)
    try:
        while len(data) < _HEADER.size:
            data += _recv_some(sock)
        (length,) = _HEADER.unpack_from(data)
        if length > _MAX_REQUEST:
            raise ValueError(f"request of {length} bytes")
        while len(data) < _HEADER.size + length:
            data += _recv_some(sock)
        return json.loads(data[_HEADER.size : _HEADER.size + length]), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _recv_some(sock: socket.socket) -> bytes:
    chunk = sock.recv(65536)
    if not chunk:
        raise EOFError("the launcher closed the connection mid-request")
    return chunk


def _send_line(sock: socket.socket, message: dict) -> None:
    sock.sendall(json.dumps(message).encode() + b"\n")


# -- the fork server (script role ``serve``) ---------------------------------------------


def _serve(socket_path: str, preload: list[str]) -> None:
    """Import ``preload``, listen on ``socket_path`` and fork a server per launcher until
    stdin closes (module docstring)."""
    import gc
    import importlib

    for name in preload:
        importlib.import_module(name)
    try:
        import setproctitle  # noqa: F401 - imported once here rather than in every fork
    except ImportError:
        pass
    gc.collect()
    gc.freeze()  # the forks' collections leave these objects (and their pages) alone
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops us by closing stdin
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "reap")
    selector.register(0, selectors.EVENT_READ, "parent")
    children: dict[int, socket.socket | None] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()

    def close_in_child() -> None:
        selector.close()
        for sock in (listener, *filter(None, children.values())):
            sock.close()
        os.close(wake_r)
        os.close(wake_w)

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = children.pop(pid, None)
            if conn is not None:
                try:
                    _send_line(conn, {"status": status})
                except OSError:
                    pass
                selector.unregister(conn)
                conn.close()

    while True:
        for key, _ in selector.select():
            if key.data == "accept":
                conn, _ = listener.accept()
                conn.settimeout(10.0)
                try:
                    request, fds = _recv_request(conn)
                except (OSError, ValueError, EOFError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    conn.close()
                    close_in_child()
                    _run_child(request, fds)  # never returns
                for fd in fds:
                    os.close(fd)
                conn.settimeout(None)
                children[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
                try:
                    _send_line(conn, {"pid": pid})
                except OSError:
                    os.kill(pid, signal.SIGKILL)  # the launcher is gone already
            elif key.data == "reap":
                while True:
                    try:
                        if not os.read(wake_r, 4096):
                            break
                    except BlockingIOError:
                        break
                reap()
            elif key.data == "parent":
                if os.read(0, 4096):
                    continue
                for pid in list(children):  # the parent is done (or dead): so are the forks
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                for pid in list(children):
                    try:
                        os.waitpid(pid, 0)
                    except ChildProcessError:
                        pass
                _remove_folder(socket_path)  # when the parent died, no one else will
                os._exit(0)
            else:  # a launcher's connection: it sends nothing, so this is its end
                pid, conn = key.data, key.fileobj
                selector.unregister(conn)
                conn.close()
                children[pid] = None  # reaped later, reported to no one
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        reap()


def _remove_folder(socket_path: str) -> None:
    """Remove the socket and, when it is one :class:`ForkServer` made (``egi-mcp-fork-*``),
    its folder."""
    import shutil

    folder = os.path.dirname(socket_path)
    if os.path.basename(folder).startswith(_FOLDER_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)
    else:
        try:
            os.unlink(socket_path)
        except OSError:
            pass


def _run_child(request: dict, fds: list[int]) -> None:
    """In a fresh fork: take the launcher's stdio, environment and working directory and run
    ``python -m MODULE ARGS`` in this process; exit with its status."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        for target, fd in zip((0, 1, 2), fds, strict=False):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False, buffering=1)  # noqa: SIM115
        argv = list(request["argv"])
        if len(argv) < 2 or argv[0] != "-m":
            raise ValueError(f"a forked server runs `-m MODULE ARGS...`, got {argv!r}")
        module, args = argv[1], argv[2:]
        # before the environment changes (setproctitle reads the original one)
        _set_title(" ".join([os.path.basename(sys.executable), "-m", module, *args, "(forked)"]))
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        import importlib.util
        import random
        import runpy

        if importlib.util.find_spec(module) is None:  # as `python -m` says it
            print(f"{sys.executable}: No module named {module}", file=sys.stderr)
            os._exit(1)
        random.seed()  # as a fresh interpreter would be
        sys.argv = [module, *args]
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed pipe: nothing more to say
                pass
        os._exit(code)


def _set_title(title: str) -> None:
    try:
        import setproctitle
    except ImportError:
        return
    setproctitle.setproctitle(title)


# -- the launcher (script role ``launch``) -----------------------------------------------


def _launch(socket_path: str, argv: list[str]) -> None:
    """Have the fork server run ``argv`` (``-m MODULE ARGS...``), relay this process's stdin
    and stdout to the fork and back, forward signals to it, and exit with its status (module
    docstring). The fork writes to this process's stderr directly."""
    import threading

    child: list[int] = []
    pending: list[int] = []

    def forward(signum: int, _frame: object) -> None:
        if not child:
            pending.append(signum)
            return
        try:
            os.kill(child[0], signum)
        except ProcessLookupError:
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(socket_path)
        _send_request(conn, {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}, [in_r, out_w, 2])
    except OSError as exc:
        print(f"egi: the MCP fork server at {socket_path} cannot be reached: {exc}", file=sys.stderr)
        os._exit(EXIT_UNAVAILABLE)
    os.close(in_r)
    os.close(out_w)  # the fork's stdout ends when the fork's copy closes
    threading.Thread(target=_relay, args=(0, in_w), daemon=True).start()
    to_client = threading.Thread(target=_relay, args=(out_r, 1), daemon=True)
    to_client.start()
    reader = conn.makefile("rb")
    first = reader.readline()
    if not first:
        print(f"egi: the MCP fork server at {socket_path} ended before starting {argv!r}", file=sys.stderr)
        os._exit(EXIT_UNAVAILABLE)
    child.append(int(json.loads(first)["pid"]))
    for signum in pending:
        forward(signum, None)
    last = reader.readline()
    if not last:  # the fork server died: its fork must not outlive us
        try:
            os.kill(child[0], signal.SIGKILL)
        except ProcessLookupError:
            pass
        print(f"egi: the MCP fork server at {socket_path} ended while serving {argv!r}", file=sys.stderr)
        os._exit(EXIT_UNAVAILABLE)
    to_client.join(5.0)  # what the fork wrote before it ended reaches the client
    code = os.waitstatus_to_exitcode(int(json.loads(last)["status"]))
    if code < 0:  # killed by a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code & 0xFF)


def _relay(source: int, target: int) -> None:
    """Copy bytes from ``source`` to ``target`` until ``source`` ends, then close ``target``
    (so the reader downstream sees the end too)."""
    try:
        while data := os.read(source, 65536):
            view = memoryview(data)
            while view:
                view = view[os.write(target, view) :]
    except OSError:
        pass
    finally:
        try:
            os.close(target)
        except OSError:
            pass


# -- the client side ---------------------------------------------------------------------


def children_of(parent: int) -> dict[int, str]:
    """The direct children of ``parent`` and their state letters (``S``, ``R``, ``Z`` for a
    zombie...), read from Linux ``/proc`` (empty elsewhere)."""
    found: dict[int, str] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        # the command name (field 2) may hold spaces and parentheses: split after the last ')'
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(parent):
            found[int(entry)] = fields[0]
    return found


def supported() -> bool:
    """Whether servers can be forked here: Linux (``fork`` and descriptor passing over Unix
    sockets) and ``EGI_MCP_FORK`` not set to ``0``."""
    return (
        sys.platform.startswith("linux")
        and hasattr(socket, "send_fds")
        and os.environ.get("EGI_MCP_FORK", "1") != "0"
    )


class ForkServer:
    """One fork server process (module docstring), owned by the process that started it.

    Args:
        env: its whole environment (the servers' ``PYTHONPATH`` decides what it can import).
        preload: modules it imports before forking (``("mcp.server.mcpserver",)``).

    Raises:
        ForkServerError: it exited or did not get ready within 60 s (its stderr is quoted).
    """

    def __init__(self, env: dict[str, str], preload: tuple[str, ...]) -> None:
        import subprocess
        import tempfile

        self.preload = preload
        self._dir = tempfile.mkdtemp(prefix=_FOLDER_PREFIX)
        self.socket_path = os.path.join(self._dir, "s")
        self._stderr = open(os.path.join(self._dir, "stderr"), "w+", encoding="utf-8")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "serve", self.socket_path, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
            cwd=self._dir,
            start_new_session=True,
        )
        if not self._wait_ready():
            self.stop()
            raise ForkServerError(
                f"the MCP fork server (preloading {', '.join(preload)}) did not start: {self._tail()}"
            )

    def _wait_ready(self) -> bool:
        assert self.proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            if not selector.select(_READY_S):
                return False
        finally:
            selector.close()
        return self.proc.stdout.readline() == b"ready\n"

    def _tail(self) -> str:
        try:
            self._stderr.seek(0)
            text = self._stderr.read()[-2000:].strip()
        except (OSError, ValueError):
            text = ""
        return text or f"exit status {self.proc.poll()}, nothing on stderr"

    @property
    def pid(self) -> int:
        """The fork server's process id."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the fork server is still running."""
        return self.proc.poll() is None

    def forks(self) -> list[int]:
        """Process ids of its live forks (Linux ``/proc``; the servers it runs now)."""
        return sorted(pid for pid, state in children_of(self.proc.pid).items() if state not in ("Z", "X"))

    def launcher(self, args: tuple[str, ...] | list[str]) -> list[str]:
        """The arguments (after ``sys.executable``) of a launcher that runs ``args``
        (``-m MODULE ARGS...``) as a fork of this server."""
        return ["-I", "-S", os.path.abspath(__file__), "launch", self.socket_path, *args]

    def stop(self) -> None:
        """Close its stdin (it kills its forks and exits), wait up to 5 s, then kill it.
        Idempotent."""
        import shutil

        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(_STOP_S)
            except Exception:  # noqa: BLE001 - a stuck one is killed below
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self._stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        shutil.rmtree(self._dir, ignore_errors=True)


_servers: dict[tuple, ForkServer] = {}


def shared(env: dict[str, str], preload: tuple[str, ...]) -> ForkServer:
    """This process's fork server for ``env`` and ``preload``: started on first use, and
    again when the last one died. Not thread-safe: call under the caller's lock.

    Raises:
        ForkServerError: it could not be started.
    """
    key = (tuple(sorted(env.items())), preload)
    server = _servers.get(key)
    if server is None or not server.alive():
        if server is not None:
            server.stop()
        server = _servers[key] = ForkServer(env, preload)
    return server


def stop_all() -> None:
    """Stop every fork server of this process (their forks die with them)."""
    while _servers:
        _servers.popitem()[1].stop()


if __name__ == "__main__":
    role, path, *rest = sys.argv[1:]
    if role == "serve":
        _serve(path, rest)
    elif role == "launch":
        _launch(path, rest)
    else:
        sys.exit(
            f"usage: forkserver.py serve SOCKET MODULE... | launch SOCKET -m MODULE ARGS...; got {role!r}"
        )
