"""Catalog lint: what makes a catalog hard to select from, found before it costs recall.

One module per finding kind (names, descriptions, parameters, schema size, boilerplate, near
duplicates), a lenient loader and a runner. Pure functions over ToolSpecs; the embedder is
passed in.
"""

from tooltray.memory.lint.loader import Loaded, load_lenient
from tooltray.memory.lint.runner import KINDS, lint, ordered
from tooltray.memory.retrieval.twins import check_registered
from tooltray.tools.finding import SEVERITIES, Finding, Severity, reaches

__all__ = [
    "KINDS",
    "SEVERITIES",
    "Finding",
    "Loaded",
    "Severity",
    "check_registered",
    "lint",
    "load_lenient",
    "ordered",
    "reaches",
]
