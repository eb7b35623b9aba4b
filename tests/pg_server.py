"""A real PostgreSQL server for the test session: ``initdb`` in a temporary folder, listening
on 127.0.0.1 on a free port (agents "on other hosts" connect over TCP), stopped at the end.
Under pytest-xdist each worker process that needs one starts its own (its own folder, port
and template) and stops it at the end of its session.

As root the server runs as the ``postgres`` user (initdb refuses root). Each test gets a fresh
database cheaply: the schema is migrated once into a template database and each test's
database is ``CREATE DATABASE tN TEMPLATE tmpl``. Without PostgreSQL binaries the tests that
need the server are skipped, except under CI (env CI set), where they fail: CI must run them.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import itertools
import os
import queue
import shutil
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

USER = "proctor"
PASSWORD = "proctor-test"
TEMPLATE = "proctor_tmpl"
PREFETCH = 2  # databases made ahead of the tests that will take them
PORT_TRIES = 5  # a free port taken by someone else before the server bound it: try another


def find_bin() -> Path | None:
    """The folder holding initdb/pg_ctl (the newest /usr/lib/postgresql/N/bin, or PATH)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).resolve().parent if on_path else None


def make_certs(
    folder: Path, host: str = "127.0.0.1", ca_name: str = "proctor test CA"
) -> tuple[Path, Path, Path]:
    """A CA of the tests' own and a server certificate it signed for ``host`` (an IP SAN):
    (CA certificate, server certificate, server key), the key 0600."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    def build(subject: str, public, issuer: str, *, ca: bool):
        b = (
            x509.CertificateBuilder()
            .subject_name(name(subject))
            .issuer_name(name(issuer))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            b = b.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host))]),
                critical=False,
            )
        return b.sign(ca_key, hashes.SHA256())

    pem = serialization.Encoding.PEM
    paths = folder / "test-ca.crt", folder / "server.crt", folder / "server.key"
    paths[0].write_bytes(build(ca_name, ca_key.public_key(), ca_name, ca=True).public_bytes(pem))
    paths[1].write_bytes(build(host, key.public_key(), ca_name, ca=False).public_bytes(pem))
    paths[2].write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    os.chmod(paths[2], 0o600)
    return paths


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PgServer:
    """One initdb'd cluster, started; ``url(db)`` names a database on it."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        # durable: every commit reaches the disk (a benchmark); else fsync off (tests)
        self.durable = durable
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        # as root the server runs as postgres, which must reach the folder: not under a
        # private TMPDIR (/root/...), but /tmp
        where = "/tmp" if self.as_root and os.path.isdir("/tmp") else None
        # one server per pytest-xdist worker: each its own folder (named for the worker) and
        # port
        worker = os.environ.get("PYTEST_XDIST_WORKER", "")
        prefix = f"proctor-pg-{worker}-" if worker else "proctor-pg-"
        self.root = Path(tempfile.mkdtemp(prefix=prefix, dir=where))
        self.data = self.root / "data"
        self._names = itertools.count(1)
        self._lock = threading.Lock()
        self._admin = None
        self._ready: queue.Queue[str] = queue.Queue()  # made ahead, by the prefetch thread
        self._wanted = threading.Semaphore(0)
        self._stopping = False
        self._dropped: list[str] = []

    # -- lifecycle
    def _run(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=True, capture_output=True, text=True, **kwargs)

    def start(self) -> PgServer:
        if self.as_root:
            shutil.chown(self.root, "postgres", "postgres")
        os.chmod(self.root, 0o700)
        pwfile = self.root / "pw"
        pwfile.write_text(PASSWORD)
        if self.as_root:
            shutil.chown(pwfile, "postgres", "postgres")
        # C collation: text sorts by code point, as SQLite's BINARY collation does
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            USER,
            "--pwfile",
            str(pwfile),
            "-A",
            "scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        pwfile.unlink()
        self.ca_file, cert, key = make_certs(self.data)
        if self.as_root:
            for owned in (cert, key):
                shutil.chown(owned, "postgres", "postgres")
        # TLS on, as docs/team.md asks of a team server: clients choose with sslmode (libpq's
        # default, prefer, takes it); the tests' own CA signs a certificate for 127.0.0.1
        conf = (
            "listen_addresses = '127.0.0.1'\n"
            f"port = {self.port}\n"
            f"unix_socket_directories = '{self.root}'\n"
            "max_connections = 200\nshared_buffers = 32MB\n"
            f"ssl = on\nssl_cert_file = '{cert}'\nssl_key_file = '{key}'\n"
        )
        if not self.durable:
            conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
        with open(self.data / "postgresql.conf", "a") as fh:
            fh.write(conf)
        for attempt in range(PORT_TRIES):
            try:
                self._run(
                    "pg_ctl",
                    "-D",
                    str(self.data),
                    "-l",
                    str(self.root / "log"),
                    "-w",
                    "-t",
                    "60",
                    "start",
                )
                break
            except subprocess.CalledProcessError:
                # another process (another worker's server) took the free port between
                # free_port() and the bind: the same cluster on another port (the last
                # "port =" line of postgresql.conf wins)
                log = self.root / "log"
                taken = log.exists() and "could not bind" in log.read_text()
                if not taken or attempt == PORT_TRIES - 1:
                    raise
                self.port = free_port()
                with open(self.data / "postgresql.conf", "a") as fh:
                    fh.write(f"port = {self.port}\n")
        self._make_template()
        return self

    def stop(self) -> None:
        self._stopping = True
        self._wanted.release()
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        with contextlib.suppress(subprocess.CalledProcessError):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)

    # -- databases
    def url(self, database: str, *, user: str = USER, password: str = PASSWORD) -> str:
        return f"postgresql+psycopg://{user}:{password}@127.0.0.1:{self.port}/{database}"

    def dsn(self, database: str) -> str:
        """A libpq connection string for raw psycopg connections."""
        return f"host=127.0.0.1 port={self.port} dbname={database} user={USER} password={PASSWORD}"

    def admin(self):  # psycopg.Connection
        import psycopg

        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(self.dsn("postgres"), autocommit=True)
        return self._admin

    def _make_template(self) -> None:
        from proctor.core import Actor, Journal

        self.admin().execute(f"CREATE DATABASE {TEMPLATE}")
        Journal.open(self.url(TEMPLATE), actor=Actor.operator("setup")).close()

    def fresh_database(self) -> str:
        """A new database holding a freshly migrated journal: its name. The next ones are
        made ahead on a thread of their own while the test runs (a copy takes ~0.1 s)."""
        if not hasattr(self, "_prefetch"):
            self._prefetch = threading.Thread(target=self._make_ahead, daemon=True)
            self._prefetch.start()
            for _ in range(PREFETCH):
                self._wanted.release()
        name = self._ready.get(timeout=120)
        self._wanted.release()
        return name

    def _make_ahead(self) -> None:
        import psycopg

        conn = psycopg.connect(self.dsn("postgres"), autocommit=True)
        # FILE_COPY: a small template is copied ~3x faster than WAL-logged block by block
        strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
        try:
            while True:
                self._wanted.acquire()
                if self._stopping:
                    return
                while self._dropped:  # a finished test's database, dropped off its path
                    conn.execute(f"DROP DATABASE IF EXISTS {self._dropped.pop()} WITH (FORCE)")
                if self._ready.qsize() >= PREFETCH:
                    continue
                with self._lock:
                    name = f"t{next(self._names)}"
                conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}{strategy}")
                self._ready.put(name)
        except Exception:  # noqa: BLE001 - the server stopped: nothing more to make
            return
        finally:
            conn.close()

    def empty_database(self) -> str:
        """A new database with nothing in it (Journal.open migrates it)."""
        with self._lock:
            name = f"e{next(self._names)}"
            self.admin().execute(f"CREATE DATABASE {name}")
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name`` (later, on the prefetch thread, once it runs)."""
        if getattr(self, "_prefetch", None) is not None and self._prefetch.is_alive():
            self._dropped.append(name)
            self._wanted.release()
            return
        with self._lock:
            self.admin().execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


_SERVER: PgServer | None = None
_FAILED: str | None = None


def server() -> PgServer | None:
    """The session's server (started on first use), or None when there are no binaries.
    A server that failed to start raises each time."""
    global _SERVER, _FAILED
    if _SERVER is not None:
        return _SERVER
    if _FAILED is not None:
        raise RuntimeError(_FAILED)
    bindir = find_bin()
    if bindir is None:
        return None
    candidate = PgServer(bindir)
    try:
        _SERVER = candidate.start()
        atexit.register(stop)  # pytest_sessionfinish stops it; this, if the session did not end
    except subprocess.CalledProcessError as err:
        log = candidate.root / "log"
        tail = log.read_text()[-2000:] if log.exists() else ""
        candidate.stop()
        _FAILED = f"PostgreSQL did not start: {err} {err.stderr} {tail}"
        raise RuntimeError(_FAILED) from err
    return _SERVER


def stop() -> None:
    global _SERVER
    if _SERVER is not None:
        _SERVER.stop()
        _SERVER = None
