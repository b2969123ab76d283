"""Suite ``gateway``: what a client sees through ``tooltray mcp serve``, and how fast it learns.

The gateway (stdio, SQLite file, MiniLM) fronts ``mcp-server-time`` and ``mcp-server-git`` from
PyPI plus the agent tests' ``mcp_server.py``; ``time`` is ``alwaysLoad``. Measured with the
official ``mcp`` client:

- ``tools/list`` before and after ``load_tools(query=...)``: tools, JSON bytes and o200k tokens
  of the listing (the tools as the client gets them), against listing every upstream tool
  (what the client would see without the gateway; ``fallback`` lists the same plus meta-tools).
- the time from sending ``load_tools`` to the ``notifications/tools/list_changed`` arriving at
  the client, median of N (by names: load, then unload between samples; and by query).
- one scripted session (:data:`SCRIPT`) under ``--reveal list`` and ``--reveal bridge`` side by
  side (issue 26), with a client that re-lists on each ``list_changed`` as MCP clients do and
  calls a tool outside its listing through ``call_tool``: the listing's tokens at the start and
  the end, the ``list_changed`` notifications and listing changes the session sees (each one a
  rewrite of the client's prompt prefix: the new listing's tokens are re-sent uncached, and the
  conversation after them, not counted here), and the tokens of the ``load_tools`` answers
  (where the bridge lists what loaded).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from rich.console import Console
from rich.table import Table

from tooltray.tools.render import count_tokens

ROOT = Path(__file__).resolve().parent.parent
QUERY = "show the git log and the status of the repository"
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("load_tools", {"query": QUERY}),
    ("git_status", {"repo_path": str(ROOT)}),
    ("git_log", {"repo_path": str(ROOT), "max_count": 2}),
    ("load_tools", {"tools": ["add_numbers"]}),
    ("add_numbers", {"a": 2, "b": 3}),
    ("convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "UTC"}),
    ("reverse_text", {"text": "abc"}),
]
RUN_CLI = "from tooltray.memory.cli import main; main()"


def _script(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def _config(folder: Path) -> Path:
    servers = {
        "time": {"command": _script("mcp-server-time"), "alwaysLoad": True},
        "git": {"command": _script("mcp-server-git"), "args": ["--repository", str(ROOT)]},
        "math": {"command": sys.executable, "args": [str(ROOT / "tests/agent/mcp_server.py")]},
    }
    path = folder / "servers.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def _size(tools: list[types.Tool]) -> dict[str, int]:
    dump = [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in tools]
    text = json.dumps(dump, separators=(",", ":"), sort_keys=True)
    return {"tools": len(tools), "bytes": len(text.encode()), "tokens": count_tokens(text).n}


class _Probe:
    """A client session that timestamps each list_changed notification."""

    def __init__(self) -> None:
        self.changed = anyio.Event()
        self.at = 0.0

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.at = time.perf_counter()
            self.changed.set()

    async def timed(self, session: ClientSession, name: str, arguments: dict[str, Any]) -> float:
        """Milliseconds from sending the call to the notification (the set must change)."""
        self.changed = anyio.Event()
        sent = time.perf_counter()
        await session.call_tool(name, arguments)
        with anyio.fail_after(10):
            await self.changed.wait()
        return (self.at - sent) * 1000


async def _measure(config: Path, db: str, samples: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    args = ["-c", RUN_CLI, "mcp", "serve", "--config", str(config), "--db", db]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    probe = _Probe()
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=probe.on_message) as session,
    ):
        await session.initialize()
        before = (await session.list_tools()).tools
        query_ms = [await probe.timed(session, "load_tools", {"query": QUERY})]
        after = (await session.list_tools()).tools
        names = [t.name for t in after if t.name not in {x.name for x in before}]
        await probe.timed(session, "unload_tools", {"tools": names})
        for _ in range(samples - 1):
            query_ms.append(await probe.timed(session, "load_tools", {"query": QUERY}))
            await probe.timed(session, "unload_tools", {"tools": names})
        by_name = []
        for _ in range(samples):
            by_name.append(await probe.timed(session, "load_tools", {"tools": ["add_numbers"]}))
            await probe.timed(session, "unload_tools", {"tools": ["add_numbers"]})
        await session.call_tool("fallback", {})
        everything = (await session.list_tools()).tools
    meta = {"load_tools", "unload_tools", "fallback", "read_result"}
    upstream = [t for t in everything if t.name not in meta]
    return {
        "before": _size(before),
        "after": {**_size(after), "loaded": names},
        "all_upstream_tools": _size(upstream),
        "fallback_listing": _size(everything),
        "load_to_list_changed_ms": {
            "by_query_median": round(statistics.median(query_ms), 1),
            "by_names_median": round(statistics.median(by_name), 1),
            "samples": samples,
        },
    }


class _Session:
    """A client that re-lists on ``list_changed`` and bridges calls outside its listing."""

    def __init__(self) -> None:
        self.changes = 0
        self.relists = 0
        self.rewritten = 0
        self.listing: list[types.Tool] = []

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.changes += 1

    async def call(self, session: ClientSession, name: str, args: dict[str, Any]) -> str:
        """Call ``name`` (through ``call_tool`` when unlisted); re-list if told to."""
        seen, listed = self.changes, {t.name for t in self.listing}
        if name in listed or "call_tool" not in listed:
            result = await session.call_tool(name, args)
        else:
            result = await session.call_tool("call_tool", {"name": name, "arguments": args})
        if result.is_error:
            raise RuntimeError(f"{name} failed: {result.content}")
        if self.changes > seen:
            before = _size(self.listing)
            self.listing = (await session.list_tools()).tools
            now = _size(self.listing)
            self.relists += now != before
            self.rewritten += now["tokens"] if now != before else 0
        return "\n".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _scripted(config: Path, db: str, reveal: str) -> dict[str, Any]:
    """One :data:`SCRIPT` session through ``tooltray mcp serve --reveal REVEAL``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    args = ["-c", RUN_CLI, "mcp", "serve", "--config", str(config), "--db", db]
    params = StdioServerParameters(
        command=sys.executable, args=[*args, "--reveal", reveal], env=env
    )
    client = _Session()
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=client.on_message) as session,
    ):
        await session.initialize()
        client.listing = (await session.list_tools()).tools
        start = _size(client.listing)
        answers = [await client.call(session, name, a) for name, a in SCRIPT]
    loads = [text for (name, _), text in zip(SCRIPT, answers, strict=True) if name == "load_tools"]
    return {
        "tools_list_start": start,
        "tools_list_end": _size(client.listing),
        "list_changed": client.changes,
        "listing_changes": client.relists,
        "rewritten_listing_tokens": client.rewritten,
        "load_answer_tokens": sum(count_tokens(t).n for t in loads),
    }


def _print_reveal(rows: dict[str, dict[str, Any]]) -> None:
    table = Table(title=f"one session of {len(SCRIPT)} calls: --reveal list vs bridge")
    columns = ("reveal", "tools/list tokens start -> end", "list_changed", "listing changes")
    for column in (*columns, "listing tokens re-sent", "load_tools answer tokens"):
        table.add_column(column)
    for reveal, row in rows.items():
        start, end = row["tools_list_start"], row["tools_list_end"]
        span = f"{start['tokens']} ({start['tools']}) -> {end['tokens']} ({end['tools']})"
        counts = (row["list_changed"], row["listing_changes"], row["rewritten_listing_tokens"])
        table.add_row(reveal, span, *map(str, counts), str(row["load_answer_tokens"]))
    Console().print(table)


def _print(result: dict[str, Any]) -> None:
    table = Table(title="tooltray mcp serve: tools/list through the gateway (time, git, math)")
    for column in ("listing", "tools", "bytes", "o200k tokens", "share of all"):
        table.add_column(column)
    everything = result["all_upstream_tools"]["tokens"]
    for key in ("before", "after", "all_upstream_tools", "fallback_listing"):
        row = result[key]
        share = f"{row['tokens'] / everything:.1%}"
        table.add_row(key, str(row["tools"]), str(row["bytes"]), str(row["tokens"]), share)
    Console().print(table)
    timing = result["load_to_list_changed_ms"]
    print(
        f"load_tools -> list_changed, median of {timing['samples']}: "
        f"{timing['by_names_median']} ms by names, {timing['by_query_median']} ms by query"
    )


def run(data_dir: Path, out_dir: Path, quick: bool = False) -> dict[str, Any]:
    """Start the gateway, measure, stop it."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = f"sqlite:///{folder / 'gateway.db'}"
        result = anyio.run(_measure, _config(folder), db, 5 if quick else 20)
        reveal = {
            mode: anyio.run(_scripted, _config(folder), f"sqlite:///{folder / mode}.db", mode)
            for mode in ("list", "bridge")
        }
    _print(result)
    _print_reveal(reveal)
    return {**result, "reveal": reveal}


# ----- memory: opened-and-closed sessions (issue 33) ----------------------------------------


def _rss_kb(pid: int) -> int:
    """Anonymous resident memory of process ``pid`` in KiB (Linux /proc ``RssAnon``): the heap
    that per-session state lives in. Total RSS also counts file-backed pages (the model file,
    shared libraries), which a busy machine's kernel drops and reloads at will."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
    raise RuntimeError("no RssAnon in /proc status")


async def _open_and_close(url: str, count: int, start: int, parallel: int = 2) -> None:
    """``count`` client sessions, ``parallel`` at a time: initialize, list, one call, close."""
    from mcp.client.streamable_http import streamable_http_client

    async def one(i: int) -> None:
        target = f"{url}?session=bench-{i}" if i % 2 else url
        async with (
            streamable_http_client(target) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()
            await session.call_tool("add_numbers", {"a": i, "b": 1})

    for first in range(start, start + count, parallel):
        async with anyio.create_task_group() as tg:
            for i in range(first, min(first + parallel, start + count)):
                tg.start_soon(one, i)


def _progress(pid: int, url: str, done: int, sessions: int, started: float) -> int:
    """Run the sessions after the baseline in steps of :data:`STEP`, printing the resident
    memory after each (a long run on a loaded machine still leaves its figures); the last."""
    rss = _rss_kb(pid)
    while done < sessions:
        step = min(STEP, sessions - done)
        anyio.run(_open_and_close, url, step, done)
        done, rss = done + step, _rss_kb(pid)
        took = time.perf_counter() - started
        print(json.dumps({"sessions": done, "rss_kb": rss, "seconds": round(took, 1)}), flush=True)
    return rss


STEP = 500


def memory(sessions: int = 5000, baseline: int = 50) -> dict[str, Any]:
    """The gateway's resident memory after ``baseline`` and after ``sessions`` sessions that
    were opened and closed (half named, half not), over streamable HTTP on loopback."""
    import socket
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        servers = {
            "math": {"command": sys.executable, "args": [str(ROOT / "tests/agent/mcp_server.py")]}
        }
        config = folder / "servers.json"
        config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        args = ["-c", RUN_CLI, "mcp", "serve", "--config", str(config)]
        args += ["--db", f"sqlite:///{folder / 'gw.db'}", "--http", f"127.0.0.1:{port}"]
        log = open(folder / "gateway.log", "w")  # noqa: SIM115
        proc = subprocess.Popen([sys.executable, *args], stderr=log)
        try:
            while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
                time.sleep(0.2)
            url = f"http://127.0.0.1:{port}/mcp"
            started = time.perf_counter()
            anyio.run(_open_and_close, url, baseline, 0)
            after_base = _rss_kb(proc.pid)
            after_all = _progress(proc.pid, url, baseline, sessions, started)
            took = time.perf_counter() - started
        finally:
            proc.terminate()
            proc.wait(timeout=30)
            log.close()
            print((folder / "gateway.log").read_text()[-3000:], file=sys.stderr)
    growth = (after_all - after_base) / after_base
    per_session = (after_all - after_base) / max(1, sessions - baseline)
    row = {
        "kb_per_closed_session": round(per_session, 2),
        "baseline": baseline,
        "sessions": sessions,
        "rss_kb_baseline": after_base,
        "rss_kb_all": after_all,
        "growth": round(growth, 4),
        "seconds": round(took, 1),
    }
    print(json.dumps(row))
    return row


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="bench/gateway.py memory: RSS after closed sessions"
    )
    parser.add_argument("mode", choices=["memory"])
    parser.add_argument("--sessions", type=int, default=5000)
    parser.add_argument("--baseline", type=int, default=50)
    options = parser.parse_args()
    memory(options.sessions, options.baseline)
