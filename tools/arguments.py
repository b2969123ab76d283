"""Tool-call arguments as models send them: a JSON object, a JSON string holding one, or nothing.

Three readers need them decoded (the agent running a call, the text-call parser, the meta-tools)
and each answers a bad value in its own way, so the decoding and the diagnosis live here once and
the readers only choose their reply from :attr:`Decoded.fault`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

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
