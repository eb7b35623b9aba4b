"""The warm start: a short `proctor` command (a hook call, ``inbox``, ``approve`` …) runs in a
process forked from a warm server that has Proctor already imported, instead of importing
SQLAlchemy, pydantic and the core again for every call (issue 33: a hook call cost 13-16× a
bare Python process, on every tool call of a coding agent).

This module is the client, run by the entry point before anything else is imported: it
sends the command's argv, environment, working folder and umask with its stdin, stdout and
stderr themselves (``SCM_RIGHTS``) to the server's socket; the server forks a child that
takes them over and runs ``proctor.cli.main`` exactly as this process would have (a terminal
stays a terminal: prompts, colours, Ctrl-C). The client forwards signals to the child and
exits with its exit status. The server is ``warm_server.py``.

Where it does not apply the command runs in this process, as it always did: the server is
not up yet (the call starts one for the next calls), ``PROCTOR_WARM=0``, a command that is
not in ``ROUTED`` (the desk, ``mcp``, anything that asks for a password), a frozen bundle, a
runtime folder that is not this user's alone. A server whose code changed on disk answers
"stale", exits, and the call runs here.

Stdlib only, and little of it: this runs on every hook call.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import struct
import sys

# The short commands worth a warm start. Not: the desk and the demo (long-lived windows),
# ``mcp`` (a long-lived server), ``team`` (asks for passwords on /dev/tty, which a forked
# child has not got), ``simulate`` (long-lived agents).
ROUTED = frozenset(
    {
        "hook",
        "inbox",
        "show",
        "approve",
        "deny",
        "answer",
        "dismiss",
        "undo",
        "retry",
        "approve-edited",
        "resolve-effect",
        "resolve-conflict",
        "resolve-memory",
        "snooze",
        "cancel",
        "runs",
        "timeline",
        "rules",
        "add-rule",
        "revoke-rule",
        "verify",
    }
)
OFF = ("0", "off", "no", "false")
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
HEADER = struct.Struct("!I")  # the request's length; then the request, as JSON
# b"p" + the child's pid, then b"x" + its exit status; or b"s": the server's code changed on
# disk (it is going away): run the command here
STATUS = struct.Struct("!ci")
GO = b"g"  # the client's answer to the pid: run the command
HANDSHAKE_S = 10.0
MAX_REQUEST = 16 * 1024 * 1024


def routed(argv: list[str]) -> bool:
    """``argv`` (the process's, program first) is a command the warm server runs."""
    if os.environ.get("PROCTOR_WARM", "").strip().lower() in OFF:
        return False
    if getattr(sys, "frozen", False) or sys.flags.isolated:
        return False
    command = next((a for a in argv[1:] if not a.startswith("-")), None)
    return command in ROUTED and not {"-h", "--help"} & set(argv[1:])


SOCKET_PATH_MAX = 100  # a Unix socket's path is at most 107 bytes on Linux


def folder() -> str | None:
    """This user's runtime folder for the server's socket, made 0700; None when it is not
    this user's alone (then nothing is sent anywhere)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    path = os.path.join(base, "proctor")
    if not os.path.isdir(base) or len(path) > SOCKET_PATH_MAX - 20:
        path = f"/tmp/proctor-{os.getuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    private = st.st_uid == os.getuid() and not st.st_mode & 0o077
    return path if private and os.path.isdir(path) and not os.path.islink(path) else None


def key() -> str:
    """Which server serves this process: one per Python, Proctor install and import path
    (``sys.path[0]`` aside: it is the working folder under ``python -m``)."""
    import zlib

    here = os.path.dirname(os.path.abspath(__file__))
    text = "\0".join([sys.executable, here, *sys.path[1:], str(sys.flags.optimize)])
    return f"{zlib.crc32(text.encode('utf-8', 'surrogateescape')):08x}"


def paths() -> tuple[str, str] | None:
    """(socket, lock file) of this process's server, or None (no private folder)."""
    where = folder()
    if where is None:
        return None
    name = os.path.join(where, f"warm-{key()}")
    return f"{name}.sock", f"{name}.lock"


def run(argv: list[str]) -> int | None:
    """Run ``argv`` in a warm child and return its exit status; None: run it here (it was
    not sent; a server is started for the next call if none runs)."""
    if not routed(argv):
        return None
    where = paths()
    if where is None:
        return None
    sock_path, lock_path = where
    conn = connect(sock_path)
    if conn is None:
        start_server(sock_path, lock_path)
        return None
    with conn:
        return served(conn, argv)


def connect(sock_path: str) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(sock_path)
    except OSError:
        conn.close()
        return None
    return conn


def served(conn: socket.socket, argv: list[str]) -> int | None:
    """Send the request and run it; None if it did not run (the server was stale, went
    away, or did not answer in ``HANDSHAKE_S``). A child runs the command only once this
    process said "go", after it saw the child's pid and put its signal forwarding in place;
    signals that arrive before that wait (blocked), then go to the child, or, when the
    command did not run, to this process's own handlers (the codex hook's denial)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    try:
        child = handshake(conn, argv)
        if child is None:
            return None
        forward_signals_to(child)
        try:
            conn.sendall(GO)
        except OSError:
            return None  # the child saw no "go": it ran nothing
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, FORWARDED)
    return exit_status(conn)


def handshake(conn: socket.socket, argv: list[str]) -> int | None:
    """The child's pid, or None: nothing runs."""
    import json

    request = json.dumps(
        {
            "argv": argv,
            "env": dict(os.environ),
            "cwd": os.getcwd(),
            "umask": current_umask(),
            "pid": os.getpid(),
            "ppid": os.getppid(),
        },
        ensure_ascii=False,
    ).encode("utf-8", "surrogateescape")  # an argv or environment byte as it came
    try:
        conn.settimeout(HANDSHAKE_S)
        socket.send_fds(conn, [HEADER.pack(len(request)) + request], [0, 1, 2])
        first = receive(conn)
        conn.settimeout(None)
    except OSError:  # the timeout included
        return None
    if first is None or first[0] != b"p":
        return None  # stale, or no child started
    return first[1]


def exit_status(conn: socket.socket) -> int:
    while True:
        try:
            message = receive(conn)
        except InterruptedError:
            continue
        except OSError:
            message = None
        if message is None:
            # the server and the child went away without a status (killed with SIGKILL)
            os.write(2, b"proctor: the command's process ended without an exit status\n")
            return 1
        if message[0] == b"x":
            return message[1]


def receive(conn: socket.socket) -> tuple[bytes, int] | None:
    data = b""
    while len(data) < STATUS.size:
        chunk = conn.recv(STATUS.size - len(data))
        if not chunk:
            return None
        data += chunk
    kind, value = STATUS.unpack(data)
    return kind, value


def forward_signals_to(child: int) -> None:
    """A signal to this process (Ctrl-C on the terminal, the runtime's SIGTERM) goes to the
    child, which handles it as the command in this process would have."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    for signum in FORWARDED:
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, forward)


def current_umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def start_server(sock_path: str, lock_path: str) -> None:
    """Start a warm server in the background unless one holds the lock (it is starting)."""
    import fcntl

    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # a server holds it
    finally:
        os.close(fd)  # released: the server takes it for its lifetime
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "proctor.warm_server", sock_path, lock_path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            env=env,
            cwd="/",
        )
