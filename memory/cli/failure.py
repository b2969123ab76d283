"""The CLI's one error boundary: what a failed command prints (one line) and its exit code.

Every command runs inside :meth:`LazyGroup.main <tooltray.memory.cli.main.LazyGroup.main>`, so
no command needs its own ``try``: click's usage errors (whose own report takes three lines), any
:class:`~tooltray.tools.errors.TooltrayError`, an OS error (a file name too long, a folder that
cannot be read) and Ctrl-C each end as one line on stderr and a non-zero exit. Anything else is
a bug in tooltray and keeps its traceback.
"""

from __future__ import annotations

import sys

import click

USAGE_EXIT = 2
ERROR_EXIT = 2
INTERRUPT_EXIT = 130
NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2


def failure(exc: BaseException) -> tuple[str, int] | None:
    """``(line, exit code)`` for ``exc``; ``None`` when it is not an error a user can cause."""
    if isinstance(exc, click.exceptions.Exit):
        return "", exc.exit_code
    if isinstance(exc, SystemExit):
        return "", exc.code if isinstance(exc.code, int) else 1
    if isinstance(exc, NO_ARGS):
        return exc.format_message(), exc.exit_code  # the help a bare group prints, as it is
    if isinstance(exc, click.ClickException):
        return _click_line(exc), exc.exit_code
    if isinstance(exc, (KeyboardInterrupt, click.Abort)):
        return "error: interrupted (Ctrl-C)", INTERRUPT_EXIT
    if _is_tooltray(exc):
        return f"error: {_flat(str(exc))}", ERROR_EXIT
    if isinstance(exc, OSError):
        return f"error: {_os_line(exc)}", ERROR_EXIT
    return None


def _is_tooltray(exc: BaseException) -> bool:
    errors = sys.modules.get("tooltray.tools.errors")  # raising one has loaded its module
    return errors is not None and isinstance(exc, errors.TooltrayError)


def _click_line(exc: click.ClickException) -> str:
    message = _flat(exc.format_message())
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, click.UsageError) and ctx is not None:
        return f"error: {message} (see `{ctx.command_path} --help`)"
    return f"error: {message}"


def _os_line(exc: OSError) -> str:
    from tooltray.tools.errors import shown

    where = f" ({shown(str(exc.filename), 60)})" if exc.filename else ""
    reason = exc.strerror or type(exc).__name__
    return f"{reason}{where}: check the path, its folder and their permissions"


def _flat(text: str) -> str:
    """``text`` on one line (a message must never spill a second line onto stderr)."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())
