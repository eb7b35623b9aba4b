"""File paths: outside the run's working folder, system folders, wildcards."""

from __future__ import annotations

import posixpath

from proctor.core.lens.facts import Fact, quoted

SYSTEM = (
    "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/sys", "/proc", "/dev",
    "/var/lib", "/root", "~/.ssh", "~/.aws", "~/.gnupg", "~/.kube", "~/.config/gcloud",
)  # fmt: skip
HOME_FORMS = ("$HOME", "${HOME}")
# a path a recursive or forced delete must not reach: the root, a home, the working folder,
# everything in it, a system folder
BROAD = {"/", "/*", "~", "~/", "~/*", ".", "./", "./*", "*", "..", "../", "/home", "/home/*"}


def normal(path: str) -> str:
    """``path`` with $HOME written as ~ and the dots and double slashes resolved."""
    for form in HOME_FORMS:
        if path == form or path.startswith(form + "/"):
            path = "~" + path[len(form) :]
    path = path.strip()
    if not path:
        return path
    tail = "/" if path.endswith("/") and len(path) > 1 else ""
    return posixpath.normpath(path) + tail if path not in {"~", "~/"} else path


def system_folder(path: str) -> str | None:
    """The system folder ``path`` is in (or is), else None."""
    p = normal(path).rstrip("/") or "/"
    return next((s for s in SYSTEM if p == s or p.startswith(s + "/")), None)


def is_broad(path: str) -> bool:
    p = normal(path)
    return (
        p in BROAD
        or p.rstrip("/") in BROAD
        or p.startswith("$")
        or system_folder(p) is not None
        or (p.startswith("/") and has_wildcard(p) and p.count("/") <= 3)
    )


def has_wildcard(path: str) -> bool:
    return any(c in path for c in "*?[")


def outside(path: str, cwd: str) -> bool:
    p = normal(path)
    if p.startswith(("~", "$")):
        return True
    full = posixpath.normpath(posixpath.join(cwd, p))
    root = posixpath.normpath(cwd)
    return not (full == root or full.startswith(root.rstrip("/") + "/"))


def path_facts(path: str, field: str, cwd: str | None, writes: bool, offset: int = 0) -> list[Fact]:
    """The facts of one path; ``writes``: the tool writes or deletes there (the facts then
    imply unsafe_write; a read elsewhere implies nothing)."""
    implies = "unsafe_write" if writes else None
    span = (offset, offset + len(path))
    facts = []
    resolved = path
    if cwd and not path.startswith(("/", "~", "$")):
        resolved = posixpath.normpath(posixpath.join(cwd, path))
    folder = system_folder(resolved)
    if folder:
        facts.append(
            Fact(
                "path.system",
                f"{quoted(path)} is in the system folder {folder}",
                field,
                *span,
                implies,
            )
        )
    if cwd and outside(path, cwd):
        facts.append(
            Fact(
                "path.outside_cwd",
                f"{quoted(path)} is outside the working folder",
                field,
                *span,
                implies,
            )
        )
    if has_wildcard(path):
        facts.append(
            Fact(
                "path.wildcard",
                f"{quoted(path)} has a wildcard: it may match many files",
                field,
                *span,
                implies,
            )
        )
    return facts
