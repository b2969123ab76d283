"""One lint finding: what kind, how bad, which tools, the evidence, and what to do about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["warning", "error"]
SEVERITIES: tuple[Severity, ...] = ("warning", "error")


def reaches(severity: Severity, bar: Severity) -> bool:
    """True when ``severity`` is at least ``bar`` (``error`` reaches ``warning``)."""
    return SEVERITIES.index(severity) >= SEVERITIES.index(bar)


@dataclass(frozen=True)
class Finding:
    """One problem in a catalog that costs selection recall or tokens.

    Attributes:
        kind: the check that found it (``near-duplicate``, ``boilerplate``, ...).
        severity: ``error`` (refused by strict loading, or the retriever cannot tell tools
            apart) or ``warning``.
        tools: the tools involved, most affected first.
        evidence: the numbers or text behind the finding.
        fix: what the catalog's author should change.
    """

    kind: str
    severity: Severity
    tools: tuple[str, ...]
    evidence: str
    fix: str

    def row(self) -> dict[str, str]:
        """The finding as one flat row for a table, JSON or CSV."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "tools": ", ".join(self.tools),
            "evidence": self.evidence,
            "fix": self.fix,
        }
