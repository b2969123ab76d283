"""``tooltray fork PARENT CHILD``: start a session from another's loaded and revealed tools.

For a subagent or a forked conversation run by a process that has no trinket at hand (a shell
script launching the subagent, say). The tools are copied as stored; the agent's allow-list
still holds when the child is used, since a view shows only allowed tools.
"""

from __future__ import annotations

import click

from tooltray.memory.cli.db import emit, store_url
from tooltray.memory.cli.options import DB_OPTION, format_option


@click.command("fork")
@click.argument("parent")
@click.argument("child")
@DB_OPTION
@format_option()
def fork_command(parent: str, child: str, db: str | None, fmt: str) -> None:
    """Start the new session CHILD with PARENT's loaded tools; the two never share changes."""
    from tooltray.memory.core.fork import fork_session
    from tooltray.memory.store import Store
    from tooltray.memory.store.access import require_writable
    from tooltray.memory.store.probe import display_url, probe
    from tooltray.tools.errors import StoreError

    url = store_url(db)
    if probe(url).kind == "empty":
        raise StoreError(f"no tooltray database at {display_url(url)}: check --db / TOOLTRAY_DB")
    require_writable(url)
    with Store(url) as store:
        names = fork_session(store, parent, child, lambda name: True)
    rows = [[i, name] for i, name in enumerate(names)]
    emit(["position", "tool"], rows, fmt, title=f"{child}: forked from {parent}")


COMMANDS: list[click.Command] = [fork_command]
