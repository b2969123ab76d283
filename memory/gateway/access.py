"""Who may reach the HTTP gateway: bearer tokens, and the Host/Origin it answers to.

Off loopback a token is required (``gateway_tokens``; ``gateway_require_token`` asks for one on
loopback too). Tokens go through the MCP SDK's own bearer middleware, so a request without a
valid ``Authorization: Bearer`` gets 401 and the SDK binds each ``Mcp-Session-Id`` to the token
that opened it. ``Host`` and ``Origin`` are checked against the configured address by the SDK's
DNS-rebinding protection, for any address (the SDK turns it on by itself only for loopback).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl

from tooltray.memory.config import Settings
from tooltray.tools.errors import ConfigError

LOOPBACK_NAMES = frozenset({"localhost"})


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def credential_id(token: str) -> str:
    """A token's stable id: a hash (tokens themselves are never stored or logged)."""
    return "token-" + hashlib.sha256(token.encode()).hexdigest()[:24]


class StaticTokens:
    """The SDK's ``TokenVerifier`` over the configured tokens (compared in constant time)."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = [t.encode() for t in tokens]

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access info when it is one of ours, else ``None`` (the SDK answers 401)."""
        given = token.encode()
        if not any(hmac.compare_digest(given, t) for t in self.tokens):
            return None
        return AccessToken(token=token, client_id=credential_id(token), scopes=[])


def check_tokens(settings: Settings, host: str) -> list[str]:
    """The usable tokens; refuses an exposed address without one.

    Raises:
        ConfigError: off loopback (or with ``gateway_require_token``) and no token, or a token
            too short to resist guessing.
    """
    tokens = [t for t in settings.gateway_tokens if t.strip()]
    short = [t for t in tokens if len(t) < 16]
    if short:
        raise ConfigError(
            "a gateway token has fewer than 16 characters; use a long random one, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'."
        )
    needed = settings.gateway_require_token or not is_loopback(host)
    if needed and not tokens:
        raise ConfigError(
            f"--http {host}: a gateway reachable off loopback needs a bearer token; set "
            "TOOLTRAY_GATEWAY_TOKENS='[\"<long random token>\"]' (or gateway_tokens in "
            "tooltray.toml, or --token), or listen on 127.0.0.1."
        )
    return tokens


def auth_settings(host: str, port: int) -> AuthSettings:
    """The SDK's auth settings for a plain bearer-token resource (no OAuth server of ours)."""
    issuer = AnyHttpUrl(f"http://{_netloc(host, port)}")
    return AuthSettings(issuer_url=issuer, resource_server_url=None)


def transport_security(settings: Settings, host: str, port: int) -> TransportSecuritySettings:
    """Host/Origin checks for the address served (and ``gateway_hosts``).

    Raises:
        ConfigError: a wildcard address (``0.0.0.0``, ``::``) with no ``gateway_hosts``: the
            names clients use are then unknown, so no Host could be checked.
    """
    hosts = list(settings.gateway_hosts)
    if is_loopback(host):
        hosts += ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    elif host in ("0.0.0.0", "::", ""):
        if not hosts:
            raise ConfigError(
                f"--http {host or '*'}:{port} listens on every address: name the host:port "
                "clients use in gateway_hosts (TOOLTRAY_GATEWAY_HOSTS='[\"gw.example:8765\"]') "
                "so Host and Origin can be checked, or listen on one address."
            )
    else:
        hosts.append(_netloc(host, port))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
