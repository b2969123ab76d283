"""A session's tools as a typed Python API, for a code tool (the ``python`` render path).

A code-mode harness describes its code tool with the functions the model may call. Here that
text is the view's prefix tools (the meta-tools stay native tools), rendered by
:func:`~tooltray.tools.pyapi.render_python`: the same bytes until the next boundary, so the
cached prefix holds. A tool loaded later is not added to it; :meth:`CodeMode.news` gives the
announcement to append to the conversation, once per tool.

Example:
    >>> code = CodeMode()                                                  # doctest: +SKIP
    >>> description = code.api(trinket.prepare("s1", messages))            # doctest: +SKIP
    >>> note = code.news(trinket.prepare("s1", messages))  # "" or an announcement  # doctest: +SKIP
"""

from __future__ import annotations

from tooltray.memory.core.prompt import DIRECT, PromptView
from tooltray.tools.pyapi import announce_python, render_python
from tooltray.tools.spec import ToolSpec


def callable_specs(view: PromptView) -> list[ToolSpec]:
    """The tools a program may call: the view's prefix (native or text), meta-tools left out."""
    return [s for s in (*view.specs, *view.text_specs) if s.name not in DIRECT]


class CodeMode:
    """What one session's code tool has shown: its API, then each later tool announced once."""

    def __init__(self) -> None:
        self.shown: set[str] = set()

    def api(self, view: PromptView) -> str:
        """The code tool's API at a boundary: typed stubs of the view's prefix tools."""
        specs = callable_specs(view)
        self.shown = {s.name for s in specs}
        return render_python(specs)

    def news(self, view: PromptView) -> str:
        """The announcement of tools loaded since (empty when none), to append to the
        conversation rather than rewrite the code tool."""
        later = [*callable_specs(view), *(s for s in view.revealed if s.name not in DIRECT)]
        fresh = [s for s in later if s.name not in self.shown]
        self.shown |= {s.name for s in fresh}
        return announce_python(fresh)
