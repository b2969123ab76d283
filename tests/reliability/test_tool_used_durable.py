"""A tool-used record is durable once the handler returns: SIGKILL right after it loses nothing.

It used to wait in memory for the session's next commit (turn end at the latest), so an agent
killed between a tool call and ``turn-completed`` lost the use, and with it an escape load.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from tooltray.memory.store import Store

AGENT = textwrap.dedent(
    """
    import sys, time
    from tooltray.events import ToolUsed, emit, tool_used
    from tooltray.memory.config import Settings
    from tooltray.memory.core.trinket import ToolLoaderTrinket
    from tooltray.memory.store import Store
    from tooltray.tools.demo import demo_registry

    url = sys.argv[1]
    trinket = ToolLoaderTrinket(
        demo_registry(), Store(url), settings=Settings(db=url, learn="off")
    )
    trinket.prepare("s", [{"role": "user", "content": "What is the weather in Oslo?"}])
    emit(tool_used, "s", ToolUsed(tool="weather_forecast", turn=1))
    emit(tool_used, "s", ToolUsed(tool="email_send", turn=1))  # not loaded: an escape
    print("used", flush=True)
    time.sleep(600)
    """
)


def test_a_kill_right_after_tool_used_keeps_the_use(db_url: str) -> None:
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, db_url],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert agent.stdout is not None
        line = agent.stdout.readline()
        assert line.strip() == "used", f"the agent did not get to its tool calls: {line!r}"
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
    with Store(db_url) as store:
        snapshot = store.snapshot("s")
        assert snapshot is not None
        used = {t.name: t.last_used_turn for t in snapshot.loaded}
        kinds = [(e.kind, e.tool) for e in store.history("s")]
    assert used.get("weather_forecast") == 1 and used.get("email_send") == 1
    assert ("used", "weather_forecast") in kinds and ("escape", "email_send") in kinds
