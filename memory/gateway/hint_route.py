"""``POST /tooltray/hint``: the user's text for a named session, from outside its MCP connection.

A client that cannot put the text in its own requests (``hints.py``) may have a hook run
``tooltray hint --session NAME "text"``, which posts ``{"session": NAME, "text": ...}`` here. The
route answers to the same rules as ``/mcp``: the bearer token when tokens are on (401 without
one), Host and Origin of the served address, and the session binding of ``?session=`` (a named
session belongs to the token that opened it; an unnamed ``mcp-`` one is never reachable). The
gateway selects on the text as on a hint and tells the session's client (``list_changed``).
Over stdio there is no such route: there the client passes the text in ``_meta`` itself.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tooltray.memory.gateway.gateway import Gateway
from tooltray.memory.gateway.hints import MAX_HINT_CHARS
from tooltray.memory.gateway.server import SessionKeys, check_session_name, scope_credential
from tooltray.tools.errors import SessionAccessError

log = logging.getLogger("tooltray.gateway")
HINT_PATH = "/tooltray/hint"
MAX_HINT_BYTES = 64_000  # a user message's worth of JSON (its text is cut at MAX_HINT_CHARS)


def hint_route(
    gateway: Gateway, keys: SessionKeys, security: TransportSecuritySettings, tokens: bool
) -> Route:
    """The route, behind the SDK's bearer check when ``tokens`` are configured."""
    endpoint: Any = HintEndpoint(gateway, keys, security)
    if tokens:
        endpoint = RequireAuthMiddleware(endpoint, [], None)
    return Route(HINT_PATH, endpoint=endpoint, methods=["POST"])


class HintEndpoint:
    """The ASGI app behind the route (see the module text)."""

    def __init__(
        self, gateway: Gateway, keys: SessionKeys, security: TransportSecuritySettings
    ) -> None:
        self.gateway, self.keys = gateway, keys
        self.security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        response = await self.security.validate_request(request, is_post=True)
        if response is None:
            response = await self._answer(request)
        await response(scope, receive, send)

    async def _answer(self, request: Request) -> Response:
        if request.method != "POST":
            return _error(405, 'POST a JSON object {"session": NAME, "text": TEXT}.')
        body = await _read(request)
        if body is None:
            return _error(413, f"a hint has at most {MAX_HINT_BYTES} bytes of JSON.")
        session, text = _fields(body)
        if session is None or text is None:
            return _error(400, 'send a JSON object {"session": NAME, "text": "the user\'s words"}.')
        try:
            name = self._bound(session, scope_credential(request.scope))
        except SessionAccessError as exc:
            log.warning("tooltray gateway: refused a hint: %s", exc)
            return _error(403, str(exc))
        revealed = await self.gateway.hint_from_outside(name, text[:MAX_HINT_CHARS])
        return JSONResponse({"session": name, "revealed": revealed})

    def _bound(self, session: str, who: str | None) -> str:
        """The session, once the caller may reach it (the ``?session=`` rules, which bind an
        unowned name to the caller's token as opening it would)."""
        name = check_session_name(session)
        self.keys.bind(name, who)
        return name


async def _read(request: Request) -> dict[str, Any] | None:
    """The body as a JSON object (``{}`` when it is not one), ``None`` when too large."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_HINT_BYTES:
            return None
        chunks.append(chunk)
    try:
        data = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _fields(body: dict[str, Any]) -> tuple[str | None, str | None]:
    session, text = body.get("session"), body.get("text")
    said = text.strip() if isinstance(text, str) else ""
    return (session if isinstance(session, str) else None), (said or None)


def _error(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)
