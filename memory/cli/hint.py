"""``tooltray hint --session NAME "text"``: the user's words, for a running HTTP gateway's session.

For clients that cannot pass the user's text in their own MCP requests but can run a command on
each message (a hook): the gateway selects on the text and lists the picks before the client's
next call (``tooltray.memory.gateway.hint_route``). The session must be the caller's own: with
tokens on, send the token the client opened it with. A stdio gateway has no route to reach: its
client passes the text in a request's ``_meta`` (``"tooltray/hint"``) instead.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import click
import httpx

from tooltray.memory.config import Settings
from tooltray.tools.errors import ConfigError, SessionAccessError

URL_ENV = "TOOLTRAY_GATEWAY_URL"
TOKEN_ENV = "TOOLTRAY_GATEWAY_TOKEN"
HINT_PATH = "/tooltray/hint"  # the gateway's hint_route.HINT_PATH (not imported: no MCP SDK here)
STDIO = (
    "a gateway served over stdio has no route for it: there the client passes the user's text "
    'in a request\'s _meta ("tooltray/hint": TEXT), or the first load_tools query counts'
)


@click.command("hint")
@click.argument("text")
@click.option("--session", required=True, help="The named session (?session=NAME) to hint.")
@click.option(
    "--url",
    envvar=URL_ENV,
    default=None,
    help=f"The gateway's MCP URL, e.g. http://127.0.0.1:8765/mcp (else {URL_ENV}).",
)
@click.option(
    "--token",
    envvar=TOKEN_ENV,
    default=None,
    help=f"The bearer token the session was opened with (else {TOKEN_ENV}, else the one "
    "gateway_tokens entry).",
)
@click.option("--timeout", type=click.FloatRange(0.1), default=60.0, show_default=True)
def hint_command(
    text: str, session: str, url: str | None, token: str | None, timeout: float
) -> None:
    """Send TEXT (the user's message) to a running HTTP gateway's session: it reveals ahead."""
    target = hint_url(url)
    token = token or default_token()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        answer = httpx.post(
            target, json={"session": session, "text": text}, headers=headers, timeout=timeout
        )
    except httpx.HTTPError as exc:
        raise ConfigError(
            f"no gateway answers at {target} ({exc}): tooltray hint reaches one started with "
            f"tooltray mcp serve --http HOST:PORT; {STDIO}."
        ) from exc
    revealed = checked(answer, target)
    shown = ", ".join(revealed) if revealed else "nothing new (the text matched what is loaded)"
    click.echo(f"{session}: {shown}")


def hint_url(url: str | None) -> str:
    """The hint route of the gateway whose MCP URL is ``url``.

    Raises:
        ConfigError: no URL given (a stdio gateway has none), or not an http(s) URL.
    """
    if not url:
        raise ConfigError(
            f"give the HTTP gateway's URL (--url http://127.0.0.1:8765/mcp, or {URL_ENV}); {STDIO}."
        )
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"--url {url!r}: give the gateway's http(s) URL, e.g. http://127.0.0.1:8765/mcp."
        )
    return urlunsplit((parts.scheme, parts.netloc, HINT_PATH, "", ""))


def default_token() -> str | None:
    """The one configured gateway token (a single-client deployment), else ``None``."""
    tokens = [t for t in Settings().gateway_tokens if t.strip()]
    return tokens[0] if len(tokens) == 1 else None


def checked(answer: httpx.Response, target: str) -> list[str]:
    """The tools the gateway revealed, or the refusal as a clear error.

    Raises:
        SessionAccessError: no token, a wrong one, or another client's session.
        ConfigError: the URL is not a tooltray gateway's.
    """
    code = answer.status_code
    if code == 401:
        raise SessionAccessError(
            f"{target}: the gateway needs the bearer token the session was opened with "
            f"(--token, or {TOKEN_ENV})."
        )
    body = _json(answer)
    if code == 403 or code == 421:
        raise SessionAccessError(f"{target}: refused: {body.get('error') or answer.text[:200]}")
    if code == 404 or code == 405:
        raise ConfigError(
            f"{target} has no hint route: is --url a tooltray gateway's (mcp serve --http)?"
        )
    if code != 200:
        raise ConfigError(f"{target}: HTTP {code}: {body.get('error') or answer.text[:200]}")
    revealed = body.get("revealed")
    return [str(n) for n in revealed] if isinstance(revealed, list) else []


def _json(answer: httpx.Response) -> dict[str, object]:
    try:
        data = answer.json()
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


COMMANDS: list[click.Command] = [hint_command]
