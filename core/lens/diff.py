"""Unified diffs and patches read with unidiff: the files and lines touched."""

from __future__ import annotations

from proctor.core.lens.facts import Fact, quoted
from proctor.core.lens.paths import path_facts


def read_diff(text: str, field: str, cwd: str | None) -> tuple[list[Fact], str]:
    from unidiff import PatchSet
    from unidiff.errors import UnidiffParseError

    try:
        patch = PatchSet(text)
    except UnidiffParseError:
        return [], f"could not read {field} as a diff"
    if not patch:
        return [], f"could not read {field} as a diff"
    added = sum(f.added for f in patch)
    removed = sum(f.removed for f in patch)
    paths = [strip(f.path) for f in patch]
    listed = ", ".join(quoted(p) for p in paths[:4]) + ("…" if len(paths) > 4 else "")
    count = f"{len(paths)} file" + ("s" if len(paths) != 1 else "")
    facts = [
        Fact(
            "diff.files",
            f"changes {count} (+{added} −{removed}): {listed}",
            field,
            0,
            len(text),
            "unsafe_write",
        )
    ]
    for f, path in zip(patch, paths, strict=True):
        at = text.find(path)
        offset = at if at >= 0 else 0
        if f.is_removed_file:
            facts.append(
                Fact(
                    "diff.deleted_file",
                    f"deletes the file {quoted(path)}",
                    field,
                    offset,
                    offset + len(path),
                    "destructive",
                )
            )
        facts += [
            Fact(x.code, x.text, x.field, x.start, x.end if at >= 0 else len(text), x.implies)
            for x in path_facts(path, field, cwd, True, offset)
        ]
    return facts, ""


def strip(path: str) -> str:
    return path[2:] if path[:2] in {"a/", "b/"} else path
