"""What a tool is: :class:`ToolSpec`, a :class:`Bundle` of siblings, and a call's arguments.

A spec is provider-neutral: renderers turn it into a text line or a provider's ``tools=`` entry,
importers build it from callables, OpenAI dicts, MCP tools or catalog files. Arguments arrive as a
JSON object, a JSON string holding one, or nothing; three readers need them decoded (the agent, the
text-call parser, the meta-tools), so decoding and diagnosis live here once and each reader only
chooses its reply from :attr:`Decoded.fault`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tooltray.tools.errors import ToolSpecError, shown

NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
MAX_SCHEMA_DEPTH = 64
MAX_SCHEMA_VALUES = 100_000
_SURROGATE = re.compile(r"[\ud800-\udfff]")
JSON_TYPES = {"object", "array", "string", "number", "integer", "boolean", "null"}
EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def check_name(name: str, what: str = "tool") -> str:
    """Return ``name`` if providers accept it (1-64 of ``[a-zA-Z0-9_.-]``), else raise."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ToolSpecError(
            f"Invalid {what} name {shown(name)}: use 1-64 characters from [a-zA-Z0-9_.-] "
            "(the rule OpenAI and Anthropic enforce); rename the tool."
        )
    return name


MAX_BUNDLE = 128
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def check_bundle(name: str, what: str = "bundle") -> str:
    """Return a bundle (server) name as its authors write it (``Ant Design Components``).

    A bundle name is shown in the menu and matched in ``load_tools`` arguments, never sent as a
    provider's tool name, so any one-line text goes; where a provider needs the name pattern
    (a Responses ``namespace``, an ``mcp__server__`` prefix) it is sanitised there.
    """
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_BUNDLE:
        raise ToolSpecError(
            f"Invalid {what} name {shown(name)}: give 1-{MAX_BUNDLE} characters of one line."
        )
    if _CONTROL.search(name) or name != name.strip():
        raise ToolSpecError(
            f"Invalid {what} name {shown(name)}: it has line breaks, control characters or "
            "spaces at its ends; write it on one line without them."
        )
    return check_text(name, f"{what} name")


def check_text(text: str, what: str) -> str:
    """Return ``text`` if it can be sent as UTF-8; a lone surrogate (bad decoding) raises.

    Python strings may hold UTF-16 surrogates (``"\\ud800"`` from JSON escapes or
    ``surrogateescape`` decoding); hashing, token counting and every provider's HTTP body need
    UTF-8, so such text is refused where it enters, with its position, not deep inside a turn.
    """
    bad = _SURROGATE.search(text)
    if bad is not None:
        raise ToolSpecError(
            f"{what} contains the lone surrogate U+{ord(bad.group()):04X} at character "
            f"{bad.start()}, which cannot be encoded as UTF-8: fix the text's encoding "
            "(decode the source as UTF-8, or replace the character)."
        )
    return text


Trail = tuple[str, ...]


def _key(key: str) -> str:
    return repr(key[:40])[1:-1] + ("…" if len(key) > 40 else "")


def _where(path: Trail) -> str:
    """A schema location for messages, shortened in the middle when a path is very long."""
    text = "".join(path)
    return text if len(text) <= 160 else f"{text[:70]}…{text[-80:]}"


def _children(node: Any, path: Trail) -> list[tuple[Any, Trail]]:
    if isinstance(node, dict):
        for key in node:
            if not isinstance(key, str):
                raise ToolSpecError(
                    f"Schema at {_where(path)} has the non-string key {shown(key)}."
                )
            check_text(key, f"Schema key at {_where(path)}")
        return [(sub, (*path, f".{_key(key)}")) for key, sub in node.items()]
    return [(sub, (*path, f"[{i}]")) for i, sub in enumerate(node)]


def _check_leaf(node: Any, path: Trail) -> None:
    if isinstance(node, str):
        check_text(node, f"Schema value at {_where(path)}")
    elif isinstance(node, float) and not math.isfinite(node):
        raise ToolSpecError(
            f"Schema at {_where(path)} holds {node}, which JSON cannot express: use a finite "
            "number or drop the keyword."
        )
    elif node is not None and not isinstance(node, (bool, int, float)):
        raise ToolSpecError(
            f"Schema at {_where(path)} holds a {type(node).__name__}, which is not JSON: use "
            "objects, arrays, strings, numbers, booleans and null only."
        )


def check_json(value: Any, root: str = "parameters") -> None:
    """Refuse values that are not plain JSON or nest deeper than :data:`MAX_SCHEMA_DEPTH`.

    The walk is iterative and runs before anything recursive (copying, hashing, rendering,
    argument checking), so a hostile schema gets a :class:`ToolSpecError` naming the depth limit
    and the path instead of a ``RecursionError`` somewhere later. Every keyword is followed
    (``items``, ``anyOf``, ``$defs``, unknown ones), not only ``properties``; the value count is
    bounded too (:data:`MAX_SCHEMA_VALUES`), so shared sub-objects cannot multiply the work.
    """
    stack: list[tuple[Any, Trail, int]] = [(value, (root,), 0)]
    seen = 0
    while stack:
        node, path, depth = stack.pop()
        seen += 1
        if seen > MAX_SCHEMA_VALUES:
            raise ToolSpecError(
                f"Schema holds more than {MAX_SCHEMA_VALUES:,} values: split the tool or move "
                "large enums into the description."
            )
        if not isinstance(node, (dict, list, tuple)):
            _check_leaf(node, path)
            continue
        if depth >= MAX_SCHEMA_DEPTH:
            raise ToolSpecError(
                f"Schema nested deeper than {MAX_SCHEMA_DEPTH} levels (objects and arrays) at "
                f"{_where(path)}: flatten it, e.g. move repeated parts into $defs."
            )
        stack.extend((sub, where, depth + 1) for sub, where in _children(node, path))


def _check_schema_node(node: Any, path: str) -> None:
    if not isinstance(node, dict):
        if isinstance(node, bool):
            return
        raise ToolSpecError(f"Schema at {path} must be an object, got {type(node).__name__}.")
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    for k in kinds:
        if not isinstance(k, str) or k not in JSON_TYPES:
            raise ToolSpecError(
                f"Schema at {path} has unknown type {shown(k)}: use one of {sorted(JSON_TYPES)}."
            )
    props = node.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            raise ToolSpecError(f"Schema at {path}.properties must be an object of schemas.")
        for key, sub in props.items():
            _check_schema_node(sub, _where((path, ".properties.", _key(key))))
    if "items" in node and not isinstance(node["items"], (dict, bool, list)):
        raise ToolSpecError(f"Schema at {path}.items must be a schema.")
    extra = node.get("additionalProperties", True)
    if not isinstance(extra, dict | bool):
        raise ToolSpecError(
            f"Schema at {path}.additionalProperties must be true, false or a schema, got "
            f"{shown(extra)}: use false to refuse unknown arguments."
        )
    if isinstance(extra, dict):
        _check_schema_node(extra, f"{path}.additionalProperties")
    required = node.get("required")
    if required is not None and not (
        isinstance(required, list) and all(isinstance(r, str) for r in required)
    ):
        raise ToolSpecError(f"Schema at {path}.required must be a list of property names.")


def check_parameters(schema: Any, tool: str = "?") -> dict[str, Any]:
    """Validate a tool's parameters as a JSON Schema object and return a normalised copy.

    An empty dict means "no arguments" and becomes ``{"type": "object", "properties": {}}``.
    """
    if schema is None or schema == {}:
        return dict(EMPTY_SCHEMA, properties={})
    if not isinstance(schema, dict):
        raise ToolSpecError(
            f"Tool {shown(tool)}: parameters must be a JSON Schema object (a dict), "
            f"got {type(schema).__name__}; pass {{'type': 'object', 'properties': {{...}}}}."
        )
    try:
        check_json(schema)
        if schema.get("type", "object") != "object":
            raise ToolSpecError(
                f"parameters must have type 'object', got {shown(schema.get('type'))}; "
                "wrap the arguments in an object schema."
            )
        _check_schema_node(schema, "parameters")
    except ToolSpecError as exc:
        raise ToolSpecError(f"Tool {shown(tool)}: {exc}") from None
    out = json.loads(json.dumps(schema))
    out.setdefault("type", "object")
    out.setdefault("properties", {})
    return dict(out)


class ToolSpec(BaseModel):
    """One tool as tooltray sees it: provider-neutral, validated, hashable by content.

    Attributes:
        name: provider-safe name, 1-64 of ``[a-zA-Z0-9_.-]``.
        description: what the tool does; its first sentence is the text-path line.
        parameters: a JSON Schema object for the arguments.
        bundle: the cohesion group the tool belongs to (siblings load together).
        tags: free labels that break ties between equally good matches.
        priority: higher wins ties; 0 by default.
        pinned: always loaded (CORE) and never unloaded.
        source: where the spec came from (``catalog``, ``callable``, ``openai``, ``mcp:server``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: dict(EMPTY_SCHEMA, properties={}))
    bundle: str | None = None
    tags: tuple[str, ...] = ()
    priority: int = 0
    pinned: bool = False
    source: str = "manual"

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_name(v)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return check_text(v, "The description")

    @field_validator("bundle")
    @classmethod
    def _bundle(cls, v: str | None) -> str | None:
        return None if v is None else check_bundle(v)

    @model_validator(mode="after")
    def _schema(self) -> ToolSpec:
        object.__setattr__(self, "parameters", check_parameters(self.parameters, self.name))
        if not self.description.strip():
            warnings.warn(
                f"Tool {self.name!r} has an empty description: retrieval and the model both "
                "rely on it; write one sentence saying what it does.",
                stacklevel=2,
            )
        return self

    def __hash__(self) -> int:
        return hash(self.content_hash)

    @property
    def content_hash(self) -> str:
        """sha256 of the canonical JSON of name, description and parameters (the embedded doc)."""
        doc = json.dumps(
            {"n": self.name, "d": self.description, "p": self.parameters},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return hashlib.sha256(doc.encode("utf-8")).hexdigest()

    def first_sentence(self, limit: int = 160) -> str:
        """The description's first sentence, one line, at most ``limit`` characters."""
        text = " ".join(self.description.split())
        match = re.search(r"(?<=[.!?])\s", text)
        first = text[: match.start()] if match else text
        return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


class Bundle(BaseModel):
    """A cohesion group: tools that belong together and load together. Not a trigger.

    Attributes:
        name: bundle name, as written (one line; :func:`check_bundle`).
        description: one line shown in the bundle menu.
        members: member tool names, in catalog order.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    members: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_bundle(v)


NOT_JSON: Literal["not-json"] = "not-json"
TOO_DEEP: Literal["too-deep"] = "too-deep"
NOT_OBJECT: Literal["not-object"] = "not-object"
Fault = Literal["not-json", "too-deep", "not-object"]


@dataclass(frozen=True)
class Decoded:
    """Decoded arguments, or what is wrong with them.

    Attributes:
        value: a dict when the arguments are usable; else the string that did not decode
            (``not-json``, ``too-deep``) or the decoded value that is not an object
            (``not-object``).
        fault: ``None`` when usable, else which of the three problems it is.
        problem: the problem in words for the model (``None`` when usable).
    """

    value: Any = field(default_factory=dict)
    fault: Fault | None = None
    problem: str | None = None


def decode_arguments(raw: Any) -> Decoded:
    """Arguments as a dict: ``None`` and ``""`` are no arguments, a string is read as JSON."""
    if raw is None or raw == "":
        return Decoded()
    value = raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            why = f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})"
            return Decoded(raw, NOT_JSON, why)
        except RecursionError:
            why = "the arguments are nested too deeply to read; send a flatter object"
            return Decoded(raw, TOO_DEEP, why)
    if not isinstance(value, Mapping):
        why = f"the arguments must be a JSON object, got {type(value).__name__}"
        return Decoded(value, NOT_OBJECT, why)
    return Decoded(dict(value))
