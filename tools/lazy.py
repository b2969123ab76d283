"""Package exports that load on first use: the one ``__getattr__`` every lazy ``__init__`` shares.

A package that re-exports names from heavy modules (pydantic models, the store's Alembic, the
embedders' onnxruntime) would make every import of any of its submodules pay for all of them;
``tooltray --help`` and the store's read-only commands must start in a fraction of a second. The
package lists where each export lives and this module imports that home on first access
(PEP 562), so ``from tooltray.memory.store import Store`` keeps working unchanged.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Getattr = Callable[[str], Any]
Dir = Callable[[], list[str]]


def lazy_exports(
    namespace: dict[str, Any], homes: Mapping[str, Sequence[str]]
) -> tuple[Getattr, Dir]:
    """``(__getattr__, __dir__)`` for a package whose exports live in other modules.

    Args:
        namespace: the package's ``globals()``; an export, once loaded, is cached there.
        homes: module (absolute, or relative to the package such as ``".catalog"``) -> the
            names the package exports from it.
    """
    where = {name: module for module, names in homes.items() for name in names}
    package = str(namespace["__name__"])

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
