"""One scripted demo turn through the real trinket, played by a model that sees only its prompt.

Before every model step the trinket renders the prompt (``prepare``), the scripted model
(:class:`~tooltray.tools.demo.model.ScriptedTurn`) picks its next call from that view alone, and
the call runs: a meta-tool through the trinket, a tool through its simulated executor, reported
with the ``tool-used`` signal as an agent loop would. The table row says what changed and why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from tooltray.events import ToolUsed, TurnCompleted, emit, tool_used, turn_completed
from tooltray.tools.demo.model import CALL_TOOL, ModelCall, ScriptedTurn

if TYPE_CHECKING:
    from tooltray.memory.core.prompt import PromptView
    from tooltray.memory.core.trinket import ToolLoaderTrinket

COMPACT_AFTER = 8
COLUMNS = ("turn", "user", "loaded (source score)", "model's calls", "tools", "tokens vs eager")


def shown_call(call: ModelCall) -> str:
    """A meta-tool call as the table shows it: the bundle names or the query the model wrote."""
    if call.name != "load_tools":
        return f"{call.name}()"
    names = call.arguments.get("tools")
    return f"load_tools({names})" if names else f'load_tools("{call.arguments.get("query", "")}")'


def refused_note(text: str) -> str:
    """How many tools a load refused, read from the meta-tool's answer (the loaded set's
    ceiling, the allow-list), so a refusal shows in the demo's table and not only in SQL."""
    if "Refused: " not in text:
        return ""
    names = text.split("Refused: ", 1)[1].split(" (", 1)[0].split(", ")
    return f", refused {len(names)} (loaded set full or not allowed)"


class DemoRun:
    """One invocation of the demo: a trinket, a session, and a table of turns."""

    def __init__(self, trinket: ToolLoaderTrinket, session_id: str, last_hash: str = "") -> None:
        self.trinket = trinket
        self.sid = session_id
        self.last_hash = last_hash
        self.table = Table(title=f"session {session_id}", show_lines=True)
        for col in (*COLUMNS, "prefix"):
            self.table.add_column(col, overflow="fold")

    def turn(self, number: int, step: dict[str, Any], messages: list[dict[str, Any]]) -> None:
        """Play one scripted turn: the model acts on each fresh view until it is done."""
        before = self.trinket.loaded(self.sid)
        view = self.trinket.prepare(self.sid, messages)
        first_hash, calls = view.prefix_hash, []
        model = ScriptedTurn([dict(c) for c in step.get("calls", [])])
        while (call := model.act(view)) is not None:
            calls.append(self._call(call, model))
            view = self.trinket.prepare(self.sid, messages)
        emit(turn_completed, self.sid, TurnCompleted(turn=number))
        if number == COMPACT_AFTER:
            evicted = self.trinket.compact(self.sid)
            calls.append(f"(agent compacted its context: {len(evicted)} idle tools evicted)")
        self._row(number, step, before, view, first_hash, calls)

    def _call(self, call: ModelCall, model: ScriptedTurn) -> str:
        """Run one call; a meta-tool's line says how many tools it added."""
        if call.name == CALL_TOOL:  # the bridge to a revealed tool
            inner = ModelCall(str(call.arguments["name"]), dict(call.arguments["arguments"]))
            self._run(inner)
            return f"{CALL_TOOL} → {inner.name}"
        if not self.trinket.is_meta(call.name):
            self._run(call)
            return call.name
        before = set(self.trinket.loaded(self.sid))
        text = self.trinket.handle_meta(self.sid, call.name, call.arguments)
        model.hear(text)
        added = len(set(self.trinket.loaded(self.sid)) - before)
        return f"{shown_call(call)} → +{added} tools{refused_note(text)}"

    def _run(self, call: ModelCall) -> None:
        spec = self.trinket.registry.resolve(call.name)
        fn = self.trinket.registry.executor(spec.name)
        result = str(fn(**call.arguments)) if fn else ""
        self.trinket.shorten(self.sid, spec.name, result)
        emit(tool_used, self.sid, ToolUsed(tool=spec.name))

    def _row(
        self,
        number: int,
        step: dict[str, Any],
        before: list[str],
        view: PromptView,
        first: str,
        calls: list[str],
    ) -> None:
        pct = 100 * view.tool_tokens / max(view.eager_tokens, 1)
        changed = "changed" if view.prefix_hash != self.last_hash else "stable"
        self.last_hash = view.prefix_hash
        self.table.add_row(
            str(number),
            step["user"],
            self._added(before),
            "\n".join(calls) or "—",
            str(len(view.specs)),
            f"{view.tool_tokens} / {view.eager_tokens} ({pct:.0f}%)",
            f"{changed} {view.prefix_hash[:8]}"
            + ("" if first == view.prefix_hash else " (mid-turn)"),
        )

    def _added(self, before: list[str]) -> str:
        """The tools this turn added, with why, six at most."""
        state = self.trinket.state(self.sid).snapshot
        added = [t for t in state.loaded if t.name not in before]
        lines = [
            f"{t.name} ({t.source}{'' if t.score is None else f' {t.score:.1f}'})"
            for t in added[:6]
        ]
        if len(added) > 6:
            lines.append(f"+{len(added) - 6} more")
        return "\n".join(lines) or "—"
