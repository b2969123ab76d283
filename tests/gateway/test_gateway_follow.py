"""Selection over MCP from the tools a session calls: each forwarded call's learned companions
and its tool's own text feed the next selection, revealed before the client's next call, by
appending only; gateway sessions teach later ones (lessons), and the deny list holds."""

from __future__ import annotations

import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from click.testing import CliRunner, Result
from gateway_helpers import (
    Client,
    http_client,
    http_gateway,
    servers,
    stdio_gateway,
    text,
    token_client,
)

from tooltray.memory.cli.main import cli

META = ["load_tools", "unload_tools", "fallback", "read_result"]
REPO = "repo"  # under the test's tmp_path; the git server's only repository
GIT_ASK = "Commit my work on the gateway: look at what changed first."
#: what past sessions did: status, commit, status, diff, status (each call a gateway turn)
HABIT = ["git_status", "git_commit", "git_status", "git_diff_unstaged", "git_status"]


@pytest.fixture
def config(write_config: Callable[..., Path], tmp_path: Path) -> Path:
    """The time and git servers, git on a repository of the test's own (git_commit runs)."""
    repo = tmp_path / REPO
    repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "start"]):
        ident = ["-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run(["git", *ident, *args], cwd=repo, check=True, capture_output=True)
    block = servers("time", "git")
    block["mcpServers"]["git"]["args"] = ["--repository", str(repo)]
    return write_config(block)


async def called(gw: Client, name: str, root: Path, meta: Any = None) -> list[str]:
    """Call ``name`` (a git tool on the repository under ``root``); the listing after it."""
    args: dict[str, Any] = {"timezone": "UTC"}
    if name.startswith("git_"):
        args = {"repo_path": str(root / REPO)}
    if name == "git_commit":
        args["message"] = "a test commit"  # refused (nothing staged): still a use that teaches
    result = await gw.session.call_tool(name, args, meta=meta)
    assert name == "git_commit" or not result.is_error, result
    return await gw.names()


def learned(db: Path) -> tuple[dict[str, tuple[int, int]], set[tuple[str, str]]]:
    """Per session, (learned turns, of them with a request vector); and the learned pairs."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT session_id, count(*), count(vector) FROM learn_requests GROUP BY session_id"
        ).fetchall()
        pairs = conn.execute("SELECT tool, mate FROM learn_pairs WHERE tool != mate").fetchall()
    return {s: (int(n), int(v)) for s, n, v in rows}, {(t, m) for t, m in pairs}


def appended(before: list[str], after: list[str]) -> bool:
    """``after`` is ``before`` with tools added at its end (nothing removed or moved)."""
    return after[: len(before)] == before and len(after) > len(before)


def test_a_call_reveals_its_related_tools_before_the_next_call(
    config: Path, tmp_path: Path
) -> None:
    async def run() -> tuple[list[str], int, list[str], int]:
        db = f"sqlite:///{tmp_path / 'gw.db'}"
        async with stdio_gateway(config, db, "--session", "f1") as gw:
            bare, seen = await gw.names(), gw.list_changed()
            after = await called(gw, "get_current_time", tmp_path)
            return bare, seen, after, gw.list_changed()

    bare, seen, after, notified = anyio.run(run)
    assert bare == META
    assert notified == seen + 1  # with the call's answer, before the client's next request
    assert appended(bare, after) and "convert_time" in after  # the tool's text points to it
    assert not any(n.startswith("git_") for n in after)


def test_bridged_a_call_names_its_related_tools_in_its_answer(config: Path, tmp_path: Path) -> None:
    async def run() -> tuple[list[str], list[str], str, int]:
        db = f"sqlite:///{tmp_path / 'gw.db'}"
        async with stdio_gateway(config, db, "--session", "f2", "--reveal", "bridge") as gw:
            bare = await gw.names()
            result = await gw.call("get_current_time", timezone="UTC")
            return bare, await gw.names(), text(result), gw.list_changed()

    bare, after, answer, notified = anyio.run(run)
    assert after == bare and notified == 0  # the client's prompt prefix is kept
    assert "convert_time" in answer and "call_tool" in bare
    assert answer.index("convert_time") > answer.index("UTC")  # after the result itself


def test_gateway_sessions_teach_later_ones_and_the_deny_list_holds(
    config: Path, tmp_path: Path
) -> None:
    db = tmp_path / "gw.db"

    async def teach(url: str) -> None:
        for past in ("past-1", "past-2"):
            async with http_client(f"{url}?session={past}") as gw:
                await called(gw, HABIT[0], tmp_path, {"tooltray/hint": GIT_ASK})
                for name in HABIT[1:]:
                    await called(gw, name, tmp_path)

    async def later(url: str, session: str) -> tuple[list[str], list[str], int, int]:
        async with http_client(f"{url}?session={session}") as gw:
            bare, seen = await gw.names(), gw.list_changed()
            after = await called(gw, "git_status", tmp_path)
            return bare, after, seen, gw.list_changed()

    log = tmp_path / "gw.log"
    with http_gateway(config, f"sqlite:///{db}", log) as url:
        anyio.run(teach, url)
        bare, after, seen, notified = anyio.run(later, url, "now")
    lessons, pairs = learned(db)
    assert lessons["past-1"] == (5, 5)  # a turn per call, each with the hint's vector
    assert {("git_status", "git_commit"), ("git_status", "git_diff_unstaged")} <= pairs
    assert bare == META and notified == seen + 1
    assert appended(bare, after)
    assert {"git_commit", "git_diff_unstaged"} <= set(after)

    with http_gateway(config, f"sqlite:///{db}", log, TOOLTRAY_DENY='["git_commit"]') as url:
        _, denied, _, _ = anyio.run(later, url, "now-denied")
    assert "git_diff_unstaged" in denied and "git_commit" not in denied


ALICE, BOB = "alice-token-0123456789abcdef", "bob-token-0123456789abcdefgh"
PUBLIC = {  # loopback configured as if it were public: a token is required
    "TOOLTRAY_GATEWAY_REQUIRE_TOKEN": "true",
    "TOOLTRAY_GATEWAY_TOKENS": f'["{ALICE}", "{BOB}"]',
}
LOG_ASK = "Show me the git log of the repository and the contents of the last commit."


async def hint(url: str, session: str, token: str | None) -> Result:
    """``tooltray hint`` (the real command) for ``session``, sending ``token`` if any."""
    args = ["hint", "--session", session, "--url", url, LOG_ASK]
    args += ["--token", token] if token else []
    runner = CliRunner()
    env = {"TOOLTRAY_GATEWAY_TOKEN": None, "TOOLTRAY_GATEWAY_TOKENS": None}
    return await anyio.to_thread.run_sync(lambda: runner.invoke(cli, args, env=env))


async def notified(client: Client, seen: int) -> int:
    """Wait (bounded) until ``client`` heard a ``list_changed`` after the first ``seen``."""
    with anyio.fail_after(60):
        while client.list_changed() <= seen:
            await anyio.sleep(0.05)
    return client.list_changed()


def raw_posts(url: str) -> list[int]:
    """Status codes of hint posts the CLI never sends: not JSON, no text, too large."""
    route = url.replace("/mcp", "/tooltray/hint")
    bearer = {"Authorization": f"Bearer {ALICE}", "Content-Type": "application/json"}
    bodies = [
        b"not json",
        b'{"session": "work"}',
        b'{"session": "work", "text": "%s"}' % (b"x" * 70_000),
    ]
    return [httpx.post(route, content=b, headers=bearer, timeout=60).status_code for b in bodies]


def test_tooltray_hint_reveals_ahead_for_its_own_session_only(config: Path, tmp_path: Path) -> None:
    async def run(url: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with token_client(f"{url}?session=work", ALICE) as alice:
            out["bare"], seen = await alice.names(), alice.list_changed()
            out["own"] = await hint(url, "work", ALICE)
            out["seen"] = await notified(alice, seen) - seen
            out["listed"] = await alice.names()
            out["bob"] = await hint(url, "work", BOB)
            out["anonymous"] = await hint(url, "work", None)
            out["reserved"] = await hint(url, "mcp-work", ALICE)
            out["raw"] = await anyio.to_thread.run_sync(raw_posts, url)
            out["after"] = await alice.names()
        return out

    env = {**PUBLIC, "TOOLTRAY_DENY": '["git_show"]'}
    db = f"sqlite:///{tmp_path / 'gw.db'}"
    with http_gateway(config, db, tmp_path / "gw.log", **env) as url:
        out = anyio.run(run, url)
    own = out["own"]
    assert own.exit_code == 0, own.output
    assert out["seen"] >= 1 and appended(out["bare"], out["listed"])
    assert "git_log" in out["listed"] and "git_log" in own.output
    assert "git_show" not in out["listed"] and "git_show" not in own.output  # denied
    assert out["bob"].exit_code != 0 and "another client credential" in out["bob"].output
    assert out["anonymous"].exit_code != 0 and "bearer token" in out["anonymous"].output
    assert out["reserved"].exit_code != 0 and "gateway's own" in out["reserved"].output
    assert out["raw"] == [400, 400, 413]
    assert out["after"] == out["listed"]  # the refused hints changed nothing


def test_tooltray_hint_names_the_stdio_way_when_there_is_no_http_gateway() -> None:
    runner = CliRunner()
    no_url = {"TOOLTRAY_GATEWAY_URL": None}
    bare = runner.invoke(cli, ["hint", "--session", "work", LOG_ASK], env=no_url)
    url = "http://127.0.0.1:9/mcp"  # the discard port: nothing listens
    closed = runner.invoke(cli, ["hint", "--session", "work", "--url", url, LOG_ASK])
    for result in (bare, closed):
        assert result.exit_code != 0 and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1
        assert "stdio" in result.output and "_meta" in result.output
    assert "--url" in bare.output and "no gateway answers" in closed.output
