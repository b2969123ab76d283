"""Dump real MCP servers' ``tools/list`` with the MCP SDK client, one JSON file per server.

``python bench/mcp_servers.py [--only NAME ...] [--jobs N] [--timeout S] [--refresh]`` reads
``bench/data/mcp/registry.jsonl`` (one server a line: ``name``, ``command`` ``npx``/``uvx``,
``package``, ``args``, ``env`` names, ``source`` = the public config or list that names it; optional
``env_values``, ``run`` (a Python package's executable), ``with`` (its ``mcp`` pin), ``wave``) and
writes ``bench/data/mcp/servers/<name>.json``: the server's ``serverInfo``, its tools as listed
(``name``, ``description``, ``inputSchema``) and how it was obtained. A server already dumped is
kept unless ``--refresh``; a server that cannot start here (needs a live account at start-up, a
browser download, a hosted endpoint) is recorded in ``servers/_failed.json`` with its error, so a
rebuild says what is missing. Each server runs in a child process that stops it at the timeout.

Servers install from the npm registry (``npx -y``) and PyPI (``uvx``; ``pip install uv`` gives it).
Where a server insists on a key at start-up, the registry names the variable and a dummy value is
passed: listing tools calls no remote API.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "mcp"
REGISTRY = DATA / "registry.jsonl"
SERVERS = DATA / "servers"
FAILED = SERVERS / "_failed.json"
DUMMY = "dummy-key-for-tools-list"
WORKDIR = Path(tempfile.gettempdir()) / "tooltray-mcp-dump"
CHILD_TIMEOUT = "TOOLTRAY_DUMP_SECONDS"
"""The child's own deadline, a little under the parent's: the SDK starts the server in a session
of its own, so only the child's clean exit (not the parent's kill) ends the server's processes."""
NPM_QUIET = {"npm_config_audit": "false", "npm_config_fund": "false"}
"""An install's audit and funding requests cost time and tell the dump nothing."""
PY_MCP = "mcp<2"
"""Python servers written against the 1.x SDK's low-level ``Server`` fail to import under 2.x."""


def read_registry(path: Path = REGISTRY) -> list[dict[str, Any]]:
    """The registry's servers, in file order."""
    lines = path.read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _command(entry: dict[str, Any]) -> list[str]:
    """The argv that starts ``entry``: ``npx -y PKG ARGS`` or ``uvx [--from PKG] ARGS``."""
    args = [a.replace("{WORKDIR}", str(WORKDIR)) for a in entry.get("args", [])]
    if entry["command"] == "npx":
        return ["npx", "-y", entry["package"], *args]
    pin = entry.get("with", PY_MCP)  # "mcp>=2" for a server written against the 2.x SDK
    uvx = [shutil.which("uvx") or str(Path(sys.executable).parent / "uvx"), "--with", pin]
    if entry.get("run"):
        return [*uvx, "--from", entry["package"], entry["run"], *args]
    return [*uvx, entry["package"], *args]


def _env(entry: dict[str, Any]) -> dict[str, str]:
    """The process environment plus a dummy value for each variable the server insists on (and
    for ``<NAME>_API_KEY``/``_TOKEN``, the usual spelling of a key a server checks at start)."""
    env = {**os.environ, "npm_config_yes": "true", "NO_UPDATE_NOTIFIER": "1", **NPM_QUIET}
    stem = entry["name"].upper().replace("-", "_")
    env.update({f"{stem}_{suffix}": DUMMY for suffix in ("API_KEY", "TOKEN", "ACCESS_TOKEN")})
    env.update({name: DUMMY for name in entry.get("env", [])})
    values = entry.get("env_values", {}).items()
    env.update({k: v.replace("{WORKDIR}", str(WORKDIR)) for k, v in values})
    return env


async def _list_tools(argv: list[str], env: dict[str, str], errpath: Path) -> dict[str, Any]:
    """Initialize a stdio session and page through ``tools/list``."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.types import PaginatedRequestParams

    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env, cwd=str(WORKDIR))
    with errpath.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            init = await session.initialize()
            tools: list[dict[str, Any]] = []
            page_params = None
            while True:
                page = await session.list_tools(params=page_params)
                tools += [t.model_dump(exclude_none=True, by_alias=True) for t in page.tools]
                if not page.next_cursor:
                    break
                page_params = PaginatedRequestParams(cursor=page.next_cursor)
    info = init.server_info.model_dump(exclude_none=True, by_alias=True)
    return {"server_info": info, "instructions": init.instructions, "tools": tools}


def dump_one(name: str) -> int:
    """Child process: dump one server to stdout as JSON, within the deadline the parent set."""
    entry = next(e for e in read_registry() if e["name"] == name)
    WORKDIR.mkdir(parents=True, exist_ok=True)
    if not (WORKDIR / ".git").is_dir():  # mcp-server-git wants a repository to serve
        subprocess.run(["git", "init", "-q", str(WORKDIR)], check=False)
    errpath = WORKDIR / f"{name}.stderr"
    seconds = float(os.environ.get(CHILD_TIMEOUT, "170"))
    try:
        listing = _list_tools(_command(entry), _env(entry), errpath)
        result = asyncio.run(asyncio.wait_for(listing, seconds))
    except TimeoutError:
        print(f"timeout after {seconds:.0f} s (the server was stopped)", file=sys.stderr)
        return 1
    except BaseException:
        tail = errpath.read_text("utf-8", "replace").strip().splitlines()[-3:]
        print("server stderr: " + " / ".join(tail), file=sys.stderr)
        raise
    print(json.dumps(result))
    return 0


def _run_child(entry: dict[str, Any], timeout: float) -> tuple[dict[str, Any] | None, str]:
    """Run :func:`dump_one` in its own process group; kill the group if it overruns."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", entry["name"]]
    env = {**os.environ, CHILD_TIMEOUT: str(max(10.0, timeout - 15))}
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env=env,
    )  # fmt: skip
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None, f"timeout after {timeout:.0f} s"
    if proc.returncode != 0 or not out.strip():
        return None, _reason(err)
    return json.loads(out.strip().splitlines()[-1]), ""


def _reason(stderr: str) -> str:
    """The telling line of a failed child's stderr: the last that names an error."""
    lines = [ln.strip(" |+-") for ln in stderr.splitlines() if ln.strip(" |+-")]
    if any(ln.startswith("timeout after") for ln in lines):
        return next(ln for ln in lines if ln.startswith("timeout after"))
    server = [ln for ln in lines if ln.startswith("server stderr: ") and len(ln) > 16]
    errors = server or [ln for ln in lines if "rror" in ln or "Exception" in ln]
    errors = errors or lines or ["no output"]
    return errors[-1][:300]


def dump(entry: dict[str, Any], timeout: float) -> tuple[str, str]:
    """Dump ``entry`` to ``servers/<name>.json``; ``(name, error)`` ("" when it worked)."""
    start = time.perf_counter()
    result, error = _run_child(entry, timeout)
    if result is None:
        return entry["name"], error
    if not result["tools"]:
        return entry["name"], "lists no tools"
    record = {k: entry.get(k) for k in ("name", "command", "package", "args", "env", "source")}
    record.update(result, provenance="tools/list over stdio (MCP SDK client)")
    record["seconds"] = round(time.perf_counter() - start, 1)
    path = SERVERS / f"{entry['name']}.json"
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    path.write_text(text + "\n", encoding="utf-8")
    return entry["name"], ""


def _todo(opts: argparse.Namespace) -> list[dict[str, Any]]:
    entries = read_registry()
    if opts.only:
        entries = [e for e in entries if e["name"] in opts.only]
    if opts.refresh:
        return entries
    return [e for e in entries if not (SERVERS / f"{e['name']}.json").is_file()]


def main(argv: list[str] | None = None) -> int:
    """Dump every registry server not yet dumped (or all with ``--refresh``)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--only", action="append", help="a server name (repeatable)")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--refresh", action="store_true", help="dump again what is cached")
    opts = parser.parse_args(argv)
    if opts.child:
        return dump_one(opts.child)
    SERVERS.mkdir(parents=True, exist_ok=True)
    failed = json.loads(FAILED.read_text("utf-8")) if FAILED.is_file() else {}
    with ThreadPoolExecutor(opts.jobs) as pool:
        for name, error in pool.map(lambda e: dump(e, opts.timeout), _todo(opts)):
            print(f"{name}: {error or 'ok'}", flush=True)
            failed.pop(name, None) if not error else failed.__setitem__(name, error)
            FAILED.write_text(json.dumps(failed, indent=1, sort_keys=True) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
