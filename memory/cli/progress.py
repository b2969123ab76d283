"""A progress bar on stderr while a command embeds a catalog in the foreground (a terminal only).

Embedding a never-seen catalog takes seconds to minutes; a bar says the command is working and
how far it is. Outside a terminal (pipes, CI) nothing is drawn.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tooltray.memory.embedders import Progress


@contextmanager
def embedding_bar(label: str) -> Iterator[Progress | None]:
    """A ``progress(done, total)`` callback drawing a bar on stderr, or ``None`` off a TTY."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        yield None
        return
    from rich.progress import Progress as Bar

    with Bar(console=console, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
