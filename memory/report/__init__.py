"""A session at a glance: its headline figures and a picture of its tools over its turns.

The figures need only the store; the picture needs matplotlib (``pip install 'tooltray[report]'``),
imported when a picture is drawn.
"""

from tooltray.memory.report.draw import INSTALL, draw_timeline
from tooltray.memory.report.summary import SessionSummary, summarize, summary_lines
from tooltray.memory.report.timeline import Timeline, ToolRow, build_timeline

__all__ = [
    "INSTALL",
    "SessionSummary",
    "Timeline",
    "ToolRow",
    "build_timeline",
    "draw_timeline",
    "summarize",
    "summary_lines",
]
