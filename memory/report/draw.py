"""Draw a :class:`Timeline` as a PNG: turns across, tools down, and the prompt cost below.

The top panel has one row per tool: a bar for the turns it was loaded (coloured by why it was
loaded), a dot where the model used it, a triangle where an escape hatch loaded it, a cross where
it was evicted, and a shaded column for a turn the model fell back to every tool. The bottom panel
puts the tool tokens of each turn against eager (every tool exposed), and marks the turns whose
prompt prefix changed, each a KV-cache miss. When the store holds them, a third panel shows each
turn's prompt tokens re-used from the cached prefix and prefilled anew (tooltray's estimate), with
the provider's reported cached and uncached input beside them. matplotlib is imported here only,
and only by callers that draw, so the rest of tooltray does not need it.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from tooltray.memory.report.timeline import Timeline, ToolRow
from tooltray.tools.errors import ConfigError

INSTALL = "pip install 'tooltray[report]'"
COLOURS = {
    "core": "#9e9e9e",
    "pinned": "#9e9e9e",
    "skill": "#2e7d32",
    "escape": "#ef6c00",
    "fallback": "#7b1fa2",
    "manual": "#00838f",
}
SELECTED = "#1565c0"
CHANGE = "#c62828"


def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend, or one line saying how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError(f"drawing a session needs matplotlib: {INSTALL}") from None
    return plt


def check_format(out: Path) -> None:
    """Refuse a picture name whose suffix matplotlib cannot write, naming the ones it can.

    Checked before anything is read or drawn: matplotlib would only fail in ``savefig``.
    """
    _pyplot()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    suffix = out.suffix.lstrip(".").lower()
    if suffix not in formats:
        given = f"'.{suffix}'" if suffix else "no suffix"
        raise ConfigError(
            f"cannot draw a picture as {given} ({out.name}): name --out with one of "
            f"{', '.join('.' + f for f in formats)} (.png is the usual)"
        )


def draw_timeline(timeline: Timeline, out: Path) -> Path:
    """Write the picture of ``timeline`` to ``out`` (PNG) and return the path."""
    check_format(out)
    plt = _pyplot()
    n = max(len(timeline.rows), 1)
    prompts = any(r.prompt_new is not None for r in timeline.records)
    ratios = [0.2 * n + 0.4, 2.2] + [2.2] * prompts
    fig, axes = plt.subplots(
        len(ratios),
        1,
        figsize=(11, 2.6 + 0.2 * n + 2.2 * prompts),
        sharex=True,
        gridspec_kw={"height_ratios": ratios},
    )
    top, bottom = axes[0], axes[-1]
    _tools_panel(top, timeline)
    _tokens_panel(axes[1], timeline)
    if prompts:
        _prompt_panel(bottom, timeline)
    bottom.set_xticks(range(1, timeline.turns + 1))
    bottom.set_xlim(0.4, timeline.turns + 0.6)
    bottom.set_xlabel("turn")
    title, font = title_and_font(timeline.session_id)
    fig.suptitle(title, fontproperties=font)
    fig.tight_layout()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=110)
    except OSError as exc:
        why = exc.strerror or str(exc)
        message = f"cannot write the picture to {out} ({why}): pass a writable --out"
        raise ConfigError(message) from None
    finally:
        plt.close(fig)
    return out


def title_and_font(session_id: str) -> tuple[str, Any]:
    """The picture's title and a font with every glyph of it (``FontProperties``).

    A session id may be in any script; matplotlib's default font draws a missing glyph as a box
    and warns once per character. So: the default font if it has them all, else an installed
    font that does, else the id escaped to ASCII (``\\u30bb...``), which the default draws.
    """
    from matplotlib import font_manager

    title = f"session {session_id}: tools loaded and used, turn by turn"
    default = font_manager.FontProperties()
    if _covers(font_manager.findfont(default), title):
        return title, default
    for entry in font_manager.fontManager.ttflist:
        if "last resort" not in entry.name.lower() and _covers(entry.fname, title):
            return title, font_manager.FontProperties(fname=entry.fname)
    shown = session_id.encode("ascii", "backslashreplace").decode("ascii")
    return f"session {shown}: tools loaded and used, turn by turn", default


def _covers(path: str, text: str) -> bool:
    """Whether the font file at ``path`` maps every character of ``text`` to a glyph (the Last
    Resort font maps all of them to placeholder boxes, so callers skip it)."""
    return set(map(ord, text)) <= _charmap(path)


@functools.cache
def _charmap(path: str) -> frozenset[int]:
    from matplotlib.ft2font import FT2Font

    try:
        return frozenset(FT2Font(path).get_charmap())
    except (OSError, RuntimeError, ValueError):  # an unreadable font file covers nothing
        return frozenset()


def _tools_panel(ax: Any, timeline: Timeline) -> None:
    for y, row in enumerate(timeline.rows):
        _tool_row(ax, y, row, timeline.turns)
    for turn, count in timeline.fallback.items():
        ax.axvspan(turn - 0.5, turn + 0.5, color=COLOURS["fallback"], alpha=0.12, lw=0)
        ax.text(turn, -0.9, f"fallback\n+{count}", ha="center", va="bottom", fontsize=7)
    _mark_changes(ax, timeline.prefix_changes)
    ax.set_yticks(range(len(timeline.rows)))
    ax.set_yticklabels([r.name for r in timeline.rows], fontsize=7)
    ax.set_ylim(len(timeline.rows) - 0.4, -1.0)
    ax.grid(axis="x", color="#eeeeee")
    ax.legend(handles=_legend(ax), loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def _tool_row(ax: Any, y: int, row: ToolRow, turns: int) -> None:
    for start, end, source in row.spans:
        last = turns if end is None else end
        colour = COLOURS.get(source, SELECTED)
        ax.barh(y, last - start + 0.8, left=start - 0.4, height=0.55, color=colour, alpha=0.35)
    if row.used:
        ax.plot(sorted(row.used), [y] * len(row.used), "o", color="black", ms=4)
    if row.escapes:
        starts = [t - 0.3 for t in sorted(row.escapes)]  # left of the turn, clear of its "used" dot
        ax.plot(starts, [y] * len(starts), ">", color=COLOURS["escape"], ms=5)
    if row.evicted:
        ax.plot(sorted(row.evicted), [y] * len(row.evicted), "x", color=CHANGE, ms=6)


def _tokens_panel(ax: Any, timeline: Timeline) -> None:
    turns = [r.turn for r in timeline.records]
    ax.bar(turns, [r.tool_tokens for r in timeline.records], color=SELECTED, alpha=0.6)
    for r in timeline.records:
        share = 100 * r.tool_tokens / r.eager_tokens if r.eager_tokens else 100.0
        ax.text(r.turn, r.tool_tokens, f"{share:.0f}%", ha="center", va="bottom", fontsize=7)
    eager = [r.eager_tokens or 0 for r in timeline.records]
    ax.plot(turns, eager, "--", color="black", label="eager (every tool)")
    _mark_changes(ax, timeline.prefix_changes)
    ax.set_ylabel("tool tokens")
    ax.set_ylim(0, max([*eager, *(r.tool_tokens for r in timeline.records), 1]) * 1.15)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def _prompt_panel(ax: Any, timeline: Timeline) -> None:
    """Each turn's prompt tokens: re-used from the cache and new (estimate), reported beside."""
    records = [r for r in timeline.records if r.prompt_new is not None]
    turns = [r.turn - 0.17 for r in records]
    reused = [r.prompt_reused or 0 for r in records]
    ax.bar(turns, reused, width=0.34, color="#9e9e9e", label="re-used (estimate)")
    new = [r.prompt_new or 0 for r in records]
    ax.bar(turns, new, width=0.34, bottom=reused, color=CHANGE, alpha=0.7, label="new (estimate)")
    told = [r for r in timeline.records if r.usage_cached is not None]
    if told:
        at = [r.turn + 0.17 for r in told]
        cached = [r.usage_cached or 0 for r in told]
        ax.bar(at, cached, width=0.34, color="#616161", hatch="//", label="cached (reported)")
        uncached = [r.usage_uncached or 0 for r in told]
        ax.bar(at, uncached, width=0.34, bottom=cached, color=CHANGE, hatch="//", alpha=0.45)
    _mark_changes(ax, timeline.prefix_changes)
    ax.set_ylabel("prompt tokens")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)


def _mark_changes(ax: Any, turns: list[int]) -> None:
    for turn in turns:
        ax.axvline(turn - 0.5, color=CHANGE, lw=1, ls=":")


def _legend(ax: Any) -> list[Any]:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    return [
        Patch(color=COLOURS["core"], alpha=0.35, label="loaded: core"),
        Patch(color=COLOURS["skill"], alpha=0.35, label="loaded: skill"),
        Patch(color=SELECTED, alpha=0.35, label="loaded: retrieval"),
        Patch(color=COLOURS["escape"], alpha=0.35, label="loaded: escape"),
        Patch(color=COLOURS["fallback"], alpha=0.35, label="fallback"),
        Line2D([], [], marker="o", color="black", ls="", label="used"),
        Line2D([], [], marker=">", color=COLOURS["escape"], ls="", label="escape hatch"),
        Line2D([], [], marker="x", color=CHANGE, ls="", label="evicted"),
        Line2D([], [], color=CHANGE, ls=":", label="prefix changed"),
    ]
