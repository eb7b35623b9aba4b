"""JSON Schema -> a plan of form fields (pure Python, no Qt).

``plan(schema)`` walks a response schema once and says, for every place in the answer,
which editor fits: a line or a text box, a combo or radio buttons for an enum, a date or
date-time picker, a number, a check box, a list with add/remove/reorder, a checklist for
an array of enum values, a group for a nested object, a key/value list for a map.

What the form cannot express (``oneOf``/``anyOf``/``allOf``/``not``/``if``, ``prefixItems``,
a recursive or remote ``$ref``, a type union) becomes a "json" node: that part is typed
as raw JSON and validated the same way. The walk is bounded (MAX_NODES fields, MAX_DEPTH
levels), so a hostile schema gives a bounded form or, at worst, the raw JSON editor.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_NODES = 400  # editors in one form; beyond this the whole answer is typed as raw JSON
MAX_DEPTH = 12
MAX_OPTIONS = 10_000  # enum values offered; more are cut (the validator still knows them)
RADIO_MAX = 4  # an enum with at most this many values shows radio buttons
TEXT_MIN = 200  # a string whose maxLength exceeds this gets a multi-line box
LONG_NAMES = frozenset(
    {
        "note",
        "notes",
        "comment",
        "comments",
        "description",
        "body",
        "content",
        "text",
        "message",
        "reason",
        "details",
        "merged",
        "summary",
        "answer",
    }
)
UNSUPPORTED = (
    "oneOf",
    "anyOf",
    "allOf",
    "not",
    "if",
    "prefixItems",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "contains",
)


class Missing:
    """No value (an empty optional field is left out of the answer)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = Missing()


class TooBig(Exception):
    pass


@dataclass
class Node:
    """One editor in the plan.

    kind: object, map, array, checklist, string, text, enum, date, datetime, email, uri,
    number, integer, boolean, const, json.
    """

    kind: str
    schema: dict
    name: str = ""
    title: str = ""
    description: str = ""
    required: bool = False
    default: Any = MISSING
    nullable: bool = False
    children: list[Node] = field(default_factory=list)  # object properties, in order
    item: Node | None = None  # array item / map value
    options: list[Any] = field(default_factory=list)  # enum values (bounded)
    cut_options: int = 0  # how many enum values were not offered
    reason: str = ""  # why a part is typed as raw JSON

    @property
    def label(self) -> str:
        return self.title or pretty_name(self.name) or "Answer"


def pretty_name(name: str) -> str:
    """release_date -> Release date; maxItems -> Max items."""
    if not name:
        return ""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
    spaced = " ".join(spaced.split())
    return spaced[:1].upper() + spaced[1:].lower() if spaced else name


def describe(value: Any) -> str:
    """An enum value as option text."""
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


class Planner:
    def __init__(self, root: Any, *, max_nodes: int = MAX_NODES) -> None:
        self.root = root
        self.max_nodes = max_nodes
        self.count = 0

    def plan(
        self,
        schema: Any,
        name: str = "",
        *,
        required: bool = True,
        depth: int = 0,
        refs: tuple[str, ...] = (),
    ) -> Node:
        self.count += 1
        if self.count > self.max_nodes:
            raise TooBig(f"the schema needs more than {self.max_nodes} fields")
        if depth > MAX_DEPTH:
            return self._json(schema, name, required, f"nested deeper than {MAX_DEPTH} levels")
        if schema is True or schema == {}:
            return self._json({}, name, required, "any JSON value is allowed here")
        if not isinstance(schema, dict):
            return self._json({}, name, required, "no value is allowed here")
        if "$ref" in schema:
            resolved, problem = self._resolve(schema, refs)
            if problem:
                return self._json(schema, name, required, problem)
            return self.plan(
                resolved, name, required=required, depth=depth, refs=(*refs, str(schema["$ref"]))
            )
        node = self._classify(schema, name, required)
        if node.kind == "object":
            self._object(node, depth, refs)
        elif node.kind in ("array", "map"):
            item_schema = (
                schema.get("items") if node.kind == "array" else schema.get("additionalProperties")
            )
            node.item = self.plan(item_schema, "", required=True, depth=depth + 1, refs=refs)
        return node

    # ------------------------------------------------------------ pieces
    def _resolve(self, schema: dict, refs: tuple[str, ...]) -> tuple[dict, str]:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            return {}, f"the reference {str(ref)[:80]!r} is not inside this schema"
        if ref in refs:
            return {}, f"the schema refers to itself ({ref[:80]})"
        target: Any = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and part in target:
                target = target[part]
            elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
                target = target[int(part)]
            else:
                return {}, f"the reference {ref[:80]!r} points nowhere"
        if not isinstance(target, dict):
            return {}, f"the reference {ref[:80]!r} is not a schema"
        siblings = {k: v for k, v in schema.items() if k != "$ref"}
        return {**target, **siblings}, ""

    def _json(self, schema: Any, name: str, required: bool, reason: str) -> Node:
        node = Node(
            "json",
            schema if isinstance(schema, dict) else {},
            name,
            required=required,
            reason=reason,
        )
        self._texts(node)
        return node

    @staticmethod
    def _texts(node: Node) -> None:
        s = node.schema
        node.title = str(s.get("title") or "")[:120]
        node.description = str(s.get("description") or "")[:2000]
        if "default" in s:
            node.default = s["default"]

    def _classify(self, schema: dict, name: str, required: bool) -> Node:
        used = [k for k in UNSUPPORTED if k in schema]
        if used:
            return self._json(schema, name, required, f"the schema uses {used[0]} here")
        node = Node("string", schema, name, required=required)
        self._texts(node)
        if "const" in schema:
            node.kind = "const"
            return node
        if "enum" in schema:
            values = schema["enum"] if isinstance(schema["enum"], list) else []
            node.kind = "enum"
            node.options = values[:MAX_OPTIONS]
            node.cut_options = max(0, len(values) - MAX_OPTIONS)
            return node
        kind = schema.get("type")
        if isinstance(kind, list):
            real = [k for k in kind if k != "null"]
            if len(real) != 1:
                return self._json(schema, name, required, "several types are allowed here")
            kind, node.nullable = real[0], "null" in kind
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else None
        if kind == "object":
            return self._object_kind(node)
        if kind == "array":
            return self._array_kind(node)
        if kind in ("number", "integer", "boolean"):
            node.kind = kind
            return node
        if kind == "null":
            node.kind, node.schema = "const", {**schema, "const": None}
            return node
        if kind == "string":
            node.kind = string_kind(schema, name)
            return node
        return self._json(schema, name, required, "the schema does not say what type fits")

    def _object_kind(self, node: Node) -> Node:
        s = node.schema
        props = s.get("properties")
        extra = s.get("additionalProperties")
        if isinstance(props, dict) and props:
            node.kind = "object"
        elif isinstance(extra, dict) and extra:
            node.kind = "map"
        else:
            node.kind, node.reason = "json", "the object's fields are not named"
        return node

    def _array_kind(self, node: Node) -> Node:
        items = node.schema.get("items")
        if not isinstance(items, dict) or not items:
            node.kind, node.reason = "json", "the list's items are not described"
        elif "enum" in items and isinstance(items["enum"], list):
            node.kind = "checklist"
            node.options = items["enum"][:MAX_OPTIONS]
            node.cut_options = max(0, len(items["enum"]) - MAX_OPTIONS)
        else:
            node.kind = "array"
        return node

    def _object(self, node: Node, depth: int, refs: tuple[str, ...]) -> None:
        props = node.schema.get("properties", {})
        required = node.schema.get("required", [])
        required = [str(r) for r in required] if isinstance(required, list) else []
        for key in field_order(props, required):
            sub = props[key]
            child = self.plan(sub, str(key), required=key in required, depth=depth + 1, refs=refs)
            node.children.append(child)


def field_order(props: dict, required: list[str]) -> list[str]:
    """Required fields first, in the order the schema lists them as required (the journal
    stores schemas with sorted keys, so property order is lost); then any explicit
    ``x-order``/``propertyOrder``; then the rest as stored."""

    def rank(item: tuple[int, str]) -> tuple[int, float, int]:
        n, key = item
        sub = props[key] if isinstance(props[key], dict) else {}
        explicit = sub.get("x-order", sub.get("propertyOrder"))
        explicit = float(explicit) if isinstance(explicit, int | float) else float("inf")
        first = required.index(key) if key in required else len(required)
        return (first, explicit, n)

    return [key for _n, key in sorted(enumerate(props), key=rank)]


def string_kind(schema: dict, name: str) -> str:
    fmt = schema.get("format")
    if fmt == "date":
        return "date"
    if fmt == "date-time":
        return "datetime"
    if fmt in ("email", "idn-email"):
        return "email"
    if fmt in ("uri", "url", "iri", "uri-reference"):
        return "uri"
    longest = schema.get("maxLength")
    if isinstance(longest, int) and longest <= TEXT_MIN:
        return "string"
    if (
        schema.get("x-multiline")
        or fmt == "textarea"
        or str(schema.get("contentMediaType", "")).startswith("text/")
    ):
        return "text"
    if (isinstance(longest, int) and longest > TEXT_MIN) or name.lower() in LONG_NAMES:
        return "text"
    return "string"


def plan(schema: Any, *, max_nodes: int = MAX_NODES) -> Node:
    """The editor plan for ``schema``; a single "json" node when it is too big to show."""
    planner = Planner(schema, max_nodes=max_nodes)
    try:
        return planner.plan(schema)
    except TooBig as exc:
        return Node(
            "json",
            schema if isinstance(schema, dict) else {},
            required=True,
            reason=f"{exc}; answer in raw JSON",
        )
    except RecursionError:
        return Node("json", {}, required=True, reason="the schema is nested too deeply")
