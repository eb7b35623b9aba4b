"""Where a team journal is: a PostgreSQL server, named without its password.

``ServerTarget`` makes the URL ``Journal.open`` takes (with the password only on the worker
thread that opens it) and the label the desk shows and remembers (never a password).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

from .i18n import tr

DRIVER = "postgresql+psycopg"
DEFAULT_PORT = 5432
TLS_MODES = ("disable", "prefer", "require", "verify-full")
DEFAULT_TLS = "prefer"
SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
NAME = re.compile(r"[^\s/@:?#]{1,200}")  # user and database names as the URL carries them
HOST = re.compile(r"[A-Za-z0-9._\-\[\]:]{1,255}")


@dataclass(frozen=True)
class ServerTarget:
    """Where a server journal is, without its password."""

    host: str
    port: int
    database: str
    user: str
    tls: str = DEFAULT_TLS
    ca_file: str = ""  # sslrootcert: the CA that signed the server's certificate (verify-full)

    def problem(self) -> str | None:
        """What is wrong with it, as a sentence (None: nothing)."""
        if not self.host or not HOST.fullmatch(self.host):
            return tr("Give the server's host name or address.")
        if not 0 < self.port < 65536:
            return tr("The port must be between 1 and 65535.")
        if not self.database or not NAME.fullmatch(self.database):
            return tr("Give the database name (no spaces, '/', '@', ':', '?' or '#').")
        if not self.user or not NAME.fullmatch(self.user):
            return tr("Give the database user (no spaces, '/', '@', ':', '?' or '#').")
        if self.tls not in TLS_MODES:
            return tr("The TLS mode must be one of: {modes}.").format(modes=", ".join(TLS_MODES))
        return None

    def url(self, password: str | None = None) -> str:
        """The journal URL Journal.open takes (with the password only when given)."""
        secret = f":{quote(password, safe='')}" if password else ""
        return (
            f"{DRIVER}://{quote(self.user, safe='')}{secret}@{self._hostport()}/"
            f"{quote(self.database, safe='')}?{self._query()}"
        )

    def label(self) -> str:
        """What the desk shows and remembers (never a password)."""
        return f"postgresql://{self.user}@{self._hostport()}/{self.database}?{self._query()}"

    def _query(self) -> str:
        ca = f"&sslrootcert={quote(self.ca_file, safe='/')}" if self.ca_file else ""
        return f"sslmode={self.tls}{ca}"

    def name(self) -> str:
        """The short name a title bar shows."""
        return f"{self.database} on {self.host}"

    @property
    def key(self) -> str:
        """The password's entry name in the OS keyring."""
        return f"{self.user}@{self._hostport()}/{self.database}"

    def _hostport(self) -> str:
        host = f"[{self.host}]" if ":" in self.host and not self.host.startswith("[") else self.host
        return f"{host}:{self.port}"

    @classmethod
    def parse(cls, text: str) -> tuple[ServerTarget, str | None]:
        """(target, password typed in the URL or None) from a URL; ValueError with a
        sentence when it is not a server URL."""
        text = text.strip()
        try:
            parts = urlsplit(text)
            port = parts.port or DEFAULT_PORT
        except ValueError:
            raise ValueError(
                tr("{url} is not a valid server URL.").format(url=visible_url(text))
            ) from None
        if parts.scheme not in SCHEMES or not parts.hostname:
            raise ValueError(
                tr(
                    "A server URL looks like postgresql://user@host:5432/database (got {url})."
                ).format(url=visible_url(text))
            )
        query = parse_qs(parts.query)
        tls = (query.get("sslmode") or [DEFAULT_TLS])[0]
        target = cls(
            parts.hostname,
            port,
            unquote(parts.path.lstrip("/")),
            unquote(parts.username or ""),
            tls,
            (query.get("sslrootcert") or [""])[0],
        )
        why = target.problem()
        if why:
            raise ValueError(why)
        return target, unquote(parts.password) if parts.password else None


def is_server(target: object) -> bool:
    """A server target, or the text of a server URL (not a file path)."""
    if isinstance(target, ServerTarget):
        return True
    return isinstance(target, str) and target.split("://", 1)[0] in SCHEMES and "://" in target


def visible_url(text: str) -> str:
    """``text`` with any password in it replaced by *** (up to the last "@": a password may
    hold "@", "/", "?" or "#" its writer did not encode)."""
    return re.sub(r"(://[^:/@\s]*:)\S*@", r"\1***@", text)


def connect_problem(exc: BaseException, target: ServerTarget) -> str | None:
    """A sentence for a connection that failed for a reason the operator can fix (wrong
    password, refused connection, missing database, unknown host); None for others."""
    text = f"{exc} {getattr(exc, '__cause__', '') or ''}".lower()
    where = f"{target.host}:{target.port}"
    if (
        "password authentication failed" in text
        or "no password supplied" in text
        or "password is required" in text
    ):
        return tr(
            "The server refused the password for user {user} (wrong or missing "
            "password). Connect again with the right password."
        ).format(user=target.user)
    if "the database is empty" in text:
        return tr(
            "The database {database} on {where} holds no journal yet. Prepare it with "
            "`proctor team init`, or move a journal file there with `proctor "
            "migrate-to`."
        ).format(database=target.database, where=where)
    if "does not exist" in text and "database" in text:
        return tr(
            "There is no database {database} on {where}. Check the name, or have it "
            "created (createdb) and prepared with `proctor team init`."
        ).format(database=target.database, where=where)
    if (
        "connection refused" in text
        or "could not connect" in text
        or "timeout expired" in text
        or "timed out" in text
    ):
        return tr(
            "Could not reach a PostgreSQL server at {where} (connection refused or timed "
            "out). Check the host and port, and that the server is running."
        ).format(where=where)
    if (
        "could not translate host name" in text
        or "name or service not known" in text
        or "nodename nor servname" in text
    ):
        return tr("The host name {host} is not known. Check it.").format(host=target.host)
    if "ssl" in text and (
        "not support" in text or "required" in text or "certificate" in text or "verify" in text
    ):
        return tr("TLS ({tls}) could not be set up with {where}: {why}").format(
            tls=target.tls, where=where, why=str(exc).splitlines()[0] if str(exc) else ""
        )
    if "no pg_hba.conf entry" in text or "permission denied" in text:
        return tr("The server at {where} does not let {user} in: {why}").format(
            where=where, user=target.user, why=str(exc).splitlines()[0]
        )
    return None


def server_of(journal: object) -> ServerTarget | None:
    """The server a journal the desk opened lives on (None: a file)."""
    target = getattr(journal, "server_target", None)
    return target if isinstance(target, ServerTarget) else None


def place_of(journal: object) -> str:
    """Where a journal is, as the desk shows it: its file's path, or its server's label."""
    target = server_of(journal)
    return target.label() if target is not None else str(getattr(journal, "path", ""))


def short_name(journal: object) -> str:
    """The title bar's name: the file's name, or "database on host"."""
    target = server_of(journal)
    return target.name() if target is not None else Path(str(getattr(journal, "path", ""))).name
