"""The risk lens (issue 36): reads an agent's action with real parsers (SQL with sqlglot,
shell with tree-sitter's bash grammar, HTTP requests, file paths, unified diffs) and returns
facts, each with the span of the action text it comes from, and the strongest safety class
they imply. The parsers are imported on the first read, never by ``import proctor.core``.
Importing it lets rule conditions read it (``risk.`` paths, ``conditions``)."""

from proctor.core.kernel import predicates
from proctor.core.lens.approval import Lens, lens_of, new_this_time
from proctor.core.lens.conditions import READER
from proctor.core.lens.facts import Fact, Reading, stronger_than_declared
from proctor.core.lens.read import read_action

__all__ = [
    "Fact",
    "Lens",
    "Reading",
    "lens_of",
    "new_this_time",
    "read_action",
    "stronger_than_declared",
]

predicates.use_risk_reader(READER)
