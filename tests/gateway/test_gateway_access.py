"""Who reaches the HTTP gateway: tokens, Host/Origin, sessions bound to their credential.

A real ``tooltray mcp serve --http`` on loopback, configured as if it were public
(``gateway_require_token``), in front of ``tests/agent/mcp_server.py``. No traffic ever goes
to an address off loopback: the off-loopback refusals happen before anything binds.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import httpx2
import pytest
from gateway_helpers import (
    gateway_env,
    http_gateway,
    serve_args,
    servers,
    text,
    token_client,
)

from tooltray.memory.config import Settings
from tooltray.memory.gateway.access import transport_security

ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdefgh"
PUBLIC = {
    "TOOLTRAY_GATEWAY_REQUIRE_TOKEN": "true",
    "TOOLTRAY_GATEWAY_TOKENS": f'["{ALICE}", "{BOB}"]',
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def refused(exc: BaseException) -> str:
    """The message of the innermost exception (task groups wrap the client's error)."""
    while getattr(exc, "exceptions", None):
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    return str(exc)


def status(url: str, headers: dict[str, str]) -> int:
    """The HTTP status of a raw ``initialize`` POST."""
    code: int = httpx2.post(url, json=INIT, headers={**ACCEPT, **headers}, timeout=30).status_code
    return code


def test_off_loopback_without_a_token_is_refused_before_binding(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("time"))
    for address in ("0.0.0.0:8765", "192.0.2.7:8765"):  # never contacted: refused at start-up
        args = serve_args(config, f"sqlite:///{tmp_path / 'gw.db'}", "--http", address)
        done = subprocess.run(
            [sys.executable, *args],
            env=gateway_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0, done.stderr
        assert "needs a bearer token" in done.stderr and "Traceback" not in done.stderr
        assert "serving streamable HTTP" not in done.stderr


def test_host_and_origin_are_those_of_the_configured_address() -> None:
    settings = Settings(gateway_tokens=[ALICE])
    public = transport_security(settings, "192.0.2.7", 8765)
    assert public.enable_dns_rebinding_protection
    assert public.allowed_hosts == ["192.0.2.7:8765"]
    assert set(public.allowed_origins) == {"http://192.0.2.7:8765", "https://192.0.2.7:8765"}
    with pytest.raises(Exception, match="gateway_hosts"):
        transport_security(settings, "0.0.0.0", 8765)
    named = transport_security(Settings(gateway_hosts=["gw.example:443"]), "0.0.0.0", 8765)
    assert named.allowed_hosts == ["gw.example:443"]


def test_tokens_hosts_and_sessions_bound_to_their_credential(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    config = write_config(servers("math"))
    db_file = tmp_path / "gw.db"
    env = {**PUBLIC, "TOOLTRAY_GATEWAY_HOSTS": '["gw.test:9"]'}

    def raw_checks(url: str) -> None:
        port = url.split(":")[2].split("/")[0]
        assert status(url, {}) == 401
        assert status(url, {"Authorization": "Bearer not-a-token-of-ours-at-all"}) == 401
        bearer = {"Authorization": f"Bearer {ALICE}"}
        assert status(url, {**bearer, "Host": f"evil.test:{port}"}) == 421
        assert status(url, {**bearer, "Origin": "http://evil.test"}) == 403
        assert status(url, {**bearer, "Host": "gw.test:9", "Origin": "https://gw.test:9"}) == 200

    async def sessions(url: str) -> list[str]:
        alice_ids: list[str] = []
        async with token_client(f"{url}?session=shared", ALICE, alice_ids) as alice:
            await alice.call("load_tools", tools=["add_numbers"])
            assert "add_numbers" in await alice.names()
            long = text(await alice.call("long_report", lines=300))
            handle = re.search(r"r-[0-9a-f]{32}", long)
            assert handle is not None
            with pytest.raises(BaseException) as other:
                async with token_client(f"{url}?session=shared", BOB) as bob:
                    await bob.names()
            assert "another client credential" in refused(other.value)
            with pytest.raises(BaseException) as spoof:
                async with token_client(f"{url}?session=mcp-{alice_ids[0]}", BOB) as bob:
                    await bob.names()
            assert "gateway's own" in refused(spoof.value)
            async with token_client(url, BOB) as bob:
                read = await bob.call("read_result", handle=handle.group(0), offset=100)
                assert "another session" in text(read)
                assert "report line" not in text(read)
            page = await alice.call("read_result", handle=handle.group(0), offset=100)
            assert not page.is_error and "report line" in text(page)
        headers = {**ACCEPT, "Authorization": f"Bearer {BOB}", "mcp-session-id": alice_ids[0]}
        body = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        assert httpx2.post(url, json=body, headers=headers, timeout=30).status_code == 404
        async with token_client(f"{url}?session=shared", ALICE) as again:  # still alice's
            assert "add_numbers" in await again.names()
        return alice_ids

    with http_gateway(config, f"sqlite:///{db_file}", tmp_path / "gw.log", **env) as url:
        raw_checks(url)
        raw_ids = anyio.run(sessions, url)
    with sqlite3.connect(db_file) as conn:
        stored = {row[0] for row in conn.execute("SELECT id FROM sessions")}
    assert "shared" in stored and len(stored) >= 2
    assert not {f"mcp-{raw}" for raw in raw_ids} & stored  # Mcp-Session-Ids never in clear
    assert all(re.fullmatch(r"mcp-[0-9a-f]{32}", s) for s in stored - {"shared"})
