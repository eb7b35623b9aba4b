"""The warm server: ``python -m proctor.warm_server SOCKET LOCK``, started in the background
by the first short command that found none (``warm.py`` is the client and says why).

It imports Proctor once (the core, every command module, the SQLite dialect), then listens on
a Unix socket in this user's private runtime folder. For each request (from this user only:
``SO_PEERCRED``) it forks a child that takes over the client's stdin, stdout and stderr, its
argv, environment, working folder and umask, writes its pid, runs ``proctor.cli.main`` and
writes its exit status; a child killed by a signal gets its status written by the server. A
client that goes away (killed) gets its child a SIGTERM. The server opens no journal: each
child opens its own, after the fork.

It goes away after ``PROCTOR_WARM_IDLE`` seconds (600) with no request and no child, on
SIGTERM, and as soon as any of its code changed on disk (a Proctor or dependency upgrade, an
edit in a checkout): it answers that request "stale" (the client runs the command itself),
removes its socket and lets its lock go, so that the next call starts a current one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import selectors
import signal
import socket
import struct
import sys
import threading
import time
from typing import Any

from proctor.warm import GO, HEADER, MAX_REQUEST, STATUS

IDLE_S = 600.0
RECEIVE_S = 5.0  # a client sends its whole request at once; one that stalls is dropped
PEER = struct.Struct("3i")  # SO_PEERCRED: pid, uid, gid


def main(argv: list[str]) -> int:
    sock_path, lock_path = argv[1], argv[2]
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0  # another server is starting or running
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())  # who serves: `proctor warm` reads it
    preload()
    server = Server(sock_path, lock, idle_s())
    server.serve()
    return 0


def idle_s() -> float:
    try:
        return max(1.0, float(os.environ.get("PROCTOR_WARM_IDLE", IDLE_S)))
    except ValueError:
        return IDLE_S


def preload() -> None:
    """Import what the short commands import: the CLI with every command module, the whole
    core (not its migrations, which run on import), the SQLite dialect. An optional module
    whose dependency is not installed is skipped."""
    import importlib
    import pkgutil

    import proctor.core
    from proctor.cli import build_parser

    build_parser()
    for info in pkgutil.walk_packages(proctor.core.__path__, "proctor.core."):
        if ".migrations" in info.name or info.name.endswith("__main__"):
            continue
        with contextlib.suppress(Exception):
            importlib.import_module(info.name)
    with contextlib.suppress(Exception):
        importlib.import_module("sqlalchemy.dialects.sqlite.pysqlite")
    with contextlib.suppress(Exception):  # the risk lens's parsers and grammars
        from proctor.core.lens import read_action

        read_action({"tool": "Bash", "args": {"command": "psql -c 'DELETE FROM t WHERE a=1'"}})


def code_marks() -> tuple[tuple[str, int], ...]:
    """What the server's code is on disk: every loaded module file's mtime, and every import
    folder's (installing or removing a package changes it)."""
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            files.add(path)
    files.update(p for p in sys.path[1:] if p)
    marks = []
    for path in sorted(files):
        try:
            marks.append((path, os.stat(path).st_mtime_ns))
        except OSError:
            marks.append((path, -1))
    return tuple(marks)


class Server:
    def __init__(self, sock_path: str, lock: int, idle: float) -> None:
        self.sock_path = sock_path
        self.lock: int | None = lock
        self.idle = idle
        self.marks = code_marks()
        self.children: dict[int, socket.socket] = {}
        self.last = time.monotonic()
        self.stopping = False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock_path)
        self.listener: socket.socket | None = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            self.listener.bind(sock_path)
        finally:
            os.umask(old)
        self.inode = os.stat(sock_path).st_ino
        self.listener.listen(64)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self.on_term)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_r, selectors.EVENT_READ)

    def on_term(self, *_: Any) -> None:
        self.stopping = True

    def serve(self) -> None:
        while True:
            self.reap()
            if self.listener is not None and (self.stopping or self.idle_over()):
                self.close()
            if self.listener is None and not self.children:
                return
            for key, _ in self.selector.select(timeout=1.0):
                if key.fileobj is self.listener and self.listener is not None:
                    self.accept()
                elif key.fileobj == self.wake_r:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 512)

    def idle_over(self) -> bool:
        return not self.children and time.monotonic() - self.last > self.idle

    def close(self) -> None:
        """Take no more requests: the socket goes (if it is still this server's), then the
        lock, so that a new server can start while the last children finish."""
        if self.listener is None:
            return
        self.selector.unregister(self.listener)
        with contextlib.suppress(OSError):
            if os.stat(self.sock_path).st_ino == self.inode:
                os.unlink(self.sock_path)
        self.listener.close()
        self.listener = None
        if self.lock is not None:
            os.close(self.lock)
            self.lock = None

    def accept(self) -> None:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last = time.monotonic()
        fds: list[int] = []
        try:
            _, uid, _ = PEER.unpack(
                conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEER.size)
            )
            if uid != os.getuid():
                conn.close()
                return
            conn.settimeout(RECEIVE_S)
            request, fds = receive_request(conn)
            if code_marks() != self.marks:
                conn.sendall(STATUS.pack(b"s", 0))
                self.close()
                raise ConnectionError("stale")
            conn.settimeout(None)
            pid = os.fork()
        except (OSError, ValueError, ConnectionError):
            for fd in fds:
                os.close(fd)
            conn.close()
            return
        if pid == 0:
            child(conn, fds, request, self)  # never returns
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):  # the child wrote it already unless killed
                conn.sendall(STATUS.pack(b"x", 128 - code if code < 0 else code))
            conn.close()
            self.last = time.monotonic()

    def forget_in_child(self) -> None:
        signal.set_wakeup_fd(-1)
        self.selector.close()
        if self.listener is not None:
            self.listener.close()
        for fd in (self.wake_r, self.wake_w, self.lock):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        for other in self.children.values():
            other.close()


def receive_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """The client's request and its three descriptors (stdin, stdout, stderr)."""
    data, fds, _, _ = socket.recv_fds(conn, 65536, 3)
    if len(fds) != 3 or len(data) < HEADER.size:
        for fd in fds:
            os.close(fd)
        raise ValueError("a request carries its length and three descriptors")
    (size,) = HEADER.unpack(data[: HEADER.size])
    if size > MAX_REQUEST:
        raise ValueError("request too large")
    body = data[HEADER.size :]
    while len(body) < size:
        chunk = conn.recv(min(65536, size - len(body)))
        if not chunk:
            raise ValueError("the request was cut short")
        body += chunk
    request = json.loads(body.decode("utf-8", "surrogateescape"))
    return request, list(fds)


# ------------------------------------------------------------------ the child


def child(conn: socket.socket, fds: list[int], request: dict, server: Server) -> None:
    """Become the client's command, run it, write its exit status, exit."""
    code = 1
    try:
        server.forget_in_child()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        conn.sendall(STATUS.pack(b"p", os.getpid()))
        if conn.recv(1) != GO:
            return  # the client gave up (or went away): nothing runs
        take_over(fds, request)
        watch(conn)
        code = run_command(request["argv"])
        finish()
        with contextlib.suppress(OSError):
            conn.sendall(STATUS.pack(b"x", code))
    finally:
        os._exit(code)


def take_over(fds: list[int], request: dict) -> None:
    import locale

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.umask(int(request["umask"]))
    os.environ.clear()
    os.environ.update(request["env"])
    # the child stands in for the client, whose parent is the agent that ran the command (a
    # hook names it as its request's origin): that is this child's parent too
    caller_parent = int(request["ppid"])
    os.getppid = lambda: caller_parent
    time.tzset()
    with contextlib.suppress(locale.Error):
        locale.setlocale(locale.LC_CTYPE, "")
    sys.argv = list(request["argv"])
    reopen_stdio()


def reopen_stdio() -> None:
    """sys.stdin/stdout/stderr anew over fds 0-2 (the client's), buffered as Python would
    buffer them at start (a terminal is line-buffered)."""
    import io

    given = os.environ.get("PYTHONIOENCODING", "")
    name, _, errors = given.partition(":")
    encoding = name or ("utf-8" if sys.flags.utf8_mode else locale_encoding())
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
    streams = []
    for fd, mode, default_errors in (
        (0, "rb", sys.stdin.errors),
        (1, "wb", sys.stdout.errors),
        (2, "wb", "backslashreplace"),
    ):
        raw = open(fd, mode, buffering=-1, closefd=False)  # noqa: SIM115 (kept open)
        tty = os.isatty(fd)
        streams.append(
            io.TextIOWrapper(
                raw,
                encoding=encoding,
                errors=errors or default_errors or "strict",
                line_buffering=tty or fd == 2,
                write_through=unbuffered or fd == 2,
            )
        )
    for name, stream in zip(("stdin", "stdout", "stderr"), streams, strict=True):
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def locale_encoding() -> str:
    import locale

    return locale.getencoding()


def watch(conn: socket.socket) -> None:
    """The client went away (killed): this child gets a SIGTERM, as the command in the
    client's own process would have ended; its cleanup (a hook withdraws its request) runs."""

    def wait() -> None:
        with contextlib.suppress(OSError):
            while conn.recv(64):
                pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=wait, name="proctor-warm-client", daemon=True).start()


def run_command(argv: list[str]) -> int:
    import traceback

    from proctor import hook_guard
    from proctor.cli import main

    hook_guard.phase = "off"
    hook_guard.install_if_codex_hook()
    try:
        return int(main(argv[1:]) or 0)
    except SystemExit as done:
        return exit_code(done.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return 130
    except BaseException:  # noqa: BLE001 (what the interpreter would print and exit 1 on)
        traceback.print_exc()
        return 1


def exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def finish() -> None:
    """What the interpreter does on exit: wait for the threads, run the exit handlers, flush."""
    import atexit

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
