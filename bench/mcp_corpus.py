"""Build the real-MCP dev corpus (issue 35) from dumped tool lists and public task sets.

``python bench/mcp_corpus.py [--out DIR] [--sources DIR] [--refresh]``:

1. ``--refresh`` re-dumps every server of ``bench/data/mcp/registry.jsonl``
   (``bench/mcp_servers.py``); otherwise the cached ``bench/data/mcp/servers/*.json`` are read.
2. ``--sources DIR`` re-extracts the tasks from copies of the public task files in DIR, named
   ``mcpverse_tasks.csv`` (MCPVerse ``mcpverse/data/mcpverse_time_invariant_v1.1.csv``),
   ``atlas_sample_tasks.csv`` and ``atlas_servers.json`` (MCP-Atlas
   ``services/mcp_eval/sample_tasks.csv`` at c64799a's parent and
   ``services/agent-environment/src/agent_environment/mcp_server_template.json``) and
   ``mcpbench_mcpbench_tasks_*.json`` (MCP-Bench ``tasks/*_runner_format.json``); otherwise
   ``bench/data/mcp/tasks.jsonl`` is read. A task is kept only when every tool it needs maps to a
   dumped tool.
3. Writes ``OUT/mcp20``, ``OUT/mcp70``, ``OUT/mcp300`` (default ``bench/data/mcp/corpus``) in the
   shared format: ``tools.jsonl`` (``name`` = ``<server>_<tool>``, ``group`` = server),
   ``queries.dev.jsonl`` (one conversation per task, gold = the tools it needs), ``searches.jsonl``
   (model-written ``load_tools`` queries, see :mod:`mcp_queries`) and ``meta.json``.

Tasks that need a generic server without naming it: a task's id picks (by hash, so the corpus is
stable) a follow-up turn that saves the answer to a file (filesystem), a page to read first
(fetch) or a command to run in the project (shell); the text asks for the thing, never the server.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import hashlib
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mcp_queries import searches_for  # noqa: E402
from mcp_servers import read_registry  # noqa: E402

from tooltray.tools.names import match_key, sanitize_name  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "mcp"
TASKS = DATA / "tasks.jsonl"
SIZES = {"mcp20": 20, "mcp70": 70, "mcp300": 300}
GENERIC = ("filesystem", "fetch", "cli-mcp-server", "desktop-commander", "git", "memory", "time")
IMPLICIT: dict[str, dict[str, Any]] = {
    "save": {
        "need": ["filesystem", "write_file"],
        "turn": "Save that answer in {file} so I can share it.",
        "intent": "write text to a file",
    },
    "fetch": {
        "need": ["fetch", "fetch"],
        "text": "First read https://{site}/notes/{slug}.html, the notes my team left. {task}",
        "intent": "fetch a web page and read its content",
    },
    "shell": {
        "need": ["cli-mcp-server", "run_command"],
        "text": "{task} Then run `{cmd}` in my project folder and tell me whether it passes.",
        "intent": "run a shell command",
    },
}
SITES = ("intranet.example.org", "wiki.example.com", "docs.example.net")
COMMANDS = ("make check", "pytest -q", "npm test", "ls -la reports")
VERSE_SERVERS = {"wikipedia": "wikipedia-mcp-server", "code": "mcp-server-code-runner"}
VERSE_CODE_TOOL = "run-code"
BENCH_SERVERS = {
    "Wikipedia": "wikipedia",
    "BioMCP": "biomcp",
    "Paper Search": "paper_search_server",
    "Context7": "context7",
    "Metropolitan Museum": "metmuseum-mcp",
    "National Parks": "national-parks",
    "Time MCP": "time",
    "DEX Paprika": "dexpaprika",
    "NixOS": "nixos",
    "Google Maps": "google-map",
    "Huge Icons": "hugeicons",
    "OpenAPI Explorer": "openapi2",
    "Reddit": "mcp-reddit",
    "Unit Converter": "unit-converter",
    "Medical Calculator": "medcalc",
}
SOURCES = {
    "mcpverse": "SenseTime-FVG/mcpverse@66d20f125bc732091c6e212b5eb729a54925e20a "
    "mcpverse/data/mcpverse_time_invariant_v1.1.csv, Apache-2.0",
    "mcp-atlas": "scaleapi/mcp-atlas services/mcp_eval/sample_tasks.csv (at c64799a's parent), MIT",
    "mcp-bench": "Accenture/mcp-bench@09e52332b22428bf891be59047e01cb9adc063b4 tasks/*.json "
    "(fuzzy_description as the user's text; gold = the Server:tool steps of task_description)",
}


# ----- servers ---------------------------------------------------------------------------------


def load_servers(folder: Path = DATA / "servers") -> dict[str, dict[str, Any]]:
    """Every dumped server by name (``_failed.json`` is not a server)."""
    out = {}
    for path in sorted(folder.glob("*.json")):
        if not path.name.startswith("_"):
            record = json.loads(path.read_text("utf-8"))
            out[record["name"]] = record
    return out


def tool_name(server: str, tool: str) -> str:
    """The catalog name of ``tool`` of ``server``: ``<server>_<tool>``, provider-safe."""
    return sanitize_name(f"{server}_{tool}")


def resolve(servers: dict[str, dict[str, Any]], server: str, wanted: str) -> str | None:
    """The dumped tool of ``server`` a task's tool name means (exact, case, close), or None."""
    names = [t["name"] for t in servers.get(server, {}).get("tools", [])]
    wanted = wanted.strip().split("/")[-1]
    for name in names:
        if name == wanted or name.lower() == wanted.lower():
            return name
    close = difflib.get_close_matches(wanted, names, n=1, cutoff=0.8)
    return close[0] if close else None


# ----- tasks from the public sets --------------------------------------------------------------


def _verse_needs(row: dict[str, str]) -> list[list[str]]:
    """MCPVerse's ``MCP`` / ``tool`` cells as (server, tool) pairs (unmapped tools kept raw)."""
    servers = [VERSE_SERVERS.get(s.strip(), s.strip()) for s in row["MCP"].split("+")]
    if servers == ["mcp-server-code-runner"]:
        return [["mcp-server-code-runner", VERSE_CODE_TOOL]]
    needs = []
    for part in row["tool"].split("+"):
        tool = re.sub(r"\s*\*\s*\w+$", "", part.strip()).split("/")[-1]
        server = next((s for s in servers if tool.startswith(s.split("-")[0])), servers[-1])
        needs.append([server if len(servers) > 1 else servers[0], tool])
    return needs


def verse_tasks(path: Path) -> list[dict[str, Any]]:
    """MCPVerse questions: one task each, the server and tool(s) its row names."""
    rows = csv.DictReader(path.open(encoding="utf-8"))
    return [
        {"id": f"verse_{r['question_id']}", "source": "mcpverse", "query": r["question"],
         "needs": _verse_needs(r)}
        for r in rows
    ]  # fmt: skip


def atlas_tasks(path: Path, prefixes: list[str]) -> list[dict[str, Any]]:
    """MCP-Atlas sample tasks: the gold trajectory's calls, ``<server>_<tool>`` split back."""
    out = []
    for row in csv.DictReader(path.open(encoding="utf-8")):
        calls = [c["function"]["name"] for m in json.loads(row["TRAJECTORY"])
                 for c in m.get("tool_calls") or []]  # fmt: skip
        needs = []
        for call in dict.fromkeys(calls):
            server = max((p for p in prefixes if call.startswith(p + "_")), key=len, default="")
            needs.append([server, call[len(server) + 1 :]])
        out.append({"id": f"atlas_{row['TASK']}", "source": "mcp-atlas", "query": row["PROMPT"],
                    "needs": needs})  # fmt: skip
    return out


def bench_tasks(paths: list[Path], servers: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP-Bench tasks: the fuzzy text a user writes; gold = the tools of the task's servers
    that its step-by-step ``task_description`` calls by name (tasks of unmapped servers skipped)."""
    out = []
    for path in paths:
        for group in json.loads(path.read_text("utf-8"))["server_tasks"]:
            names = [BENCH_SERVERS.get(s) for s in group.get("servers") or [group["server_name"]]]
            if not all(n in servers for n in names):
                continue
            for task in group["tasks"]:
                needs = _named_tools(task["task_description"], names, servers)  # type: ignore[arg-type]
                if needs:
                    out.append({"id": f"bench_{task['task_id']}", "source": "mcp-bench",
                                "query": task["fuzzy_description"], "needs": needs})  # fmt: skip
    return out


def _named_tools(
    text: str, names: list[str], servers: dict[str, dict[str, Any]]
) -> list[list[str]]:
    """(server, tool) for each tool of ``names`` the text calls by name, in order of mention."""
    found = []
    for server in names:
        for tool in servers[server]["tools"]:
            hit = re.search(rf"(?<![\w-]){re.escape(tool['name'])}(?![\w-])", text)
            if hit:
                found.append((hit.start(), server, tool["name"]))
    return [[s, t] for _, s, t in sorted(found)]


def extract(sources: Path, servers: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every public task whose needs all map to dumped tools, with the tools resolved."""
    atlas_prefixes = sorted(
        s for s in json.loads((sources / "atlas_servers.json").read_text("utf-8"))["mcpServers"]
    )
    raw = verse_tasks(sources / "mcpverse_tasks.csv")
    raw += atlas_tasks(sources / "atlas_sample_tasks.csv", atlas_prefixes)
    raw += bench_tasks(sorted(sources.glob("mcpbench_mcpbench_tasks_*.json")), servers)
    kept = []
    for task in raw:
        resolved = [[s, resolve(servers, s, t)] for s, t in task["needs"]]
        if resolved and all(t for _, t in resolved):
            kept.append({**task, "needs": [list(p) for p in dict.fromkeys(map(tuple, resolved))]})
    print(f"tasks: {len(kept)} of {len(raw)} map to dumped tools "
          f"({Counter(t['source'] for t in kept)})")  # fmt: skip
    return kept


# ----- implicit generic needs ------------------------------------------------------------------


def _pick(task_id: str, options: tuple[str, ...]) -> str:
    digest = int(hashlib.sha256(task_id.encode()).hexdigest(), 16)
    return options[digest % len(options)]


def conversation(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task as turns ``{"query", "needs", "intents"}``, with its implicit generic need."""
    kind = _pick(task["id"], ("none", "none", "save", "save", "fetch", "shell"))
    needs, query = [list(n) for n in task["needs"]], task["query"]
    intents = [None] * len(needs)
    if kind in ("fetch", "shell"):
        spec = IMPLICIT[kind]
        slug = task["id"].split("_")[-1].lower()
        query = spec["text"].format(task=query, site=_pick(task["id"], SITES), slug=slug,
                                    cmd=_pick(task["id"] + "cmd", COMMANDS))  # fmt: skip
        needs, intents = [spec["need"], *needs], [spec["intent"], *intents]
    turns = [{"query": query, "task": task["query"], "needs": needs, "intents": intents}]
    if kind == "save":
        text = IMPLICIT["save"]["turn"].format(file=f"answers/{task['id'].lower()}.md")
        turns.append({"query": text, "needs": [IMPLICIT["save"]["need"]],
                      "intents": [IMPLICIT["save"]["intent"]]})  # fmt: skip
    return turns


# ----- catalogs --------------------------------------------------------------------------------


def choose_servers(
    tasks: list[dict[str, Any]], servers: dict[str, dict[str, Any]], size: int
) -> list[str]:
    """The generic servers, the servers tasks use most, the first build's servers by file name
    (``"wave": 1`` in the registry), then the registry's order: a server dumped later joins the
    large catalog only, so mcp20 and mcp70 stay as they were measured."""
    used = Counter(s for t in tasks for turn in conversation(t) for s, _ in turn["needs"])
    order = [s for s in GENERIC if s in servers]
    order += [s for s, _ in used.most_common() if s in servers]
    registry = read_registry()
    first = {e["name"] for e in registry if e.get("wave") == 1}
    order += [s for s in servers if s in first]  # by file name, as load_servers reads them
    order += [e["name"] for e in registry if e["name"] in servers]
    return list(dict.fromkeys(order))[:size]


def catalog_rows(
    names: list[str], servers: dict[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[str]]:
    """tools.jsonl rows of ``names`` and the tools dropped for a clashing name key."""
    rows, keys, dropped = [], set[str](), []
    for server in names:
        for tool in servers[server]["tools"]:
            name = tool_name(server, tool["name"])
            if match_key(name) in keys:
                dropped.append(name)
                continue
            keys.add(match_key(name))
            rows.append({"name": name, "description": tool.get("description") or "",
                         "parameters": tool.get("inputSchema") or {}, "group": server})  # fmt: skip
    return rows, dropped


def query_rows(
    tasks: list[dict[str, Any]], tools: set[str], servers: dict[str, dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """queries.dev.jsonl rows (tasks whose every tool is in the catalog) and their searches."""
    rows, searches = [], []
    for task in tasks:
        turns = conversation(task)
        gold = [[tool_name(s, t) for s, t in turn["needs"]] for turn in turns]
        if not all(g in tools for turn in gold for g in turn):
            continue
        earlier: list[str] = []
        for k, (turn, names) in enumerate(zip(turns, gold, strict=True)):
            row = {"id": f"{task['id']}_t{k}", "query": turn["query"]}
            rows.append({**row, "gold": list(dict.fromkeys(names)), "turns": earlier[:] or None})
            searches += searches_for(f"{task['id']}_t{k}", turn, names, servers)
            earlier.append(turn["query"])
    return rows, searches


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")


def build(out: Path, tasks: list[dict[str, Any]], servers: dict[str, dict[str, Any]]) -> None:
    """Write every catalog size to ``out``."""
    for corpus, size in SIZES.items():
        names = choose_servers(tasks, servers, size)
        tools, dropped = catalog_rows(names, servers)
        queries, searches = query_rows(tasks, {t["name"] for t in tools}, servers)
        folder = out / corpus
        folder.mkdir(parents=True, exist_ok=True)
        write_jsonl(folder / "tools.jsonl", tools)
        write_jsonl(folder / "queries.dev.jsonl", queries)
        write_jsonl(folder / "searches.jsonl", searches)
        meta = _meta(names, servers, tools, queries, searches, dropped)
        (folder / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
        print(f"{corpus}: {len(names)} servers, {len(tools)} tools, {len(queries)} turns "
              f"of {len({q['id'].rsplit('_t', 1)[0] for q in queries})} sessions, "
              f"{len(searches)} searches")  # fmt: skip


def _meta(
    names: list[str],
    servers: dict[str, dict[str, Any]],
    tools: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    searches: list[dict[str, Any]],
    dropped: list[str],
) -> dict[str, Any]:
    return {
        "built_by": "python bench/mcp_corpus.py (issue 35)",
        "servers": {
            n: {
                "package": servers[n].get("package"),
                "source": servers[n].get("source"),
                "provenance": servers[n].get("provenance"),
                "version": servers[n].get("server_info", {}).get("version"),
            }
            for n in names
        },  # fmt: skip
        "tools": len(tools),
        "dropped_name_clashes": dropped,
        "turns": len(queries),
        **_session_stats(queries, {t["name"]: t["group"] for t in tools}),
        "searches": len(searches),
        "task_sources": SOURCES,
        "split": "development (all tasks; no held-out split is kept here)",
    }


def _session_stats(queries: list[dict[str, Any]], group: dict[str, str]) -> dict[str, Any]:
    """Sessions, and the mean tools and servers a session uses."""
    used: dict[str, set[str]] = {}
    for q in queries:
        used.setdefault(q["id"].rsplit("_t", 1)[0], set()).update(q["gold"])
    tools = [len(u) for u in used.values()]
    servers = [len({group[g] for g in u}) for u in used.values()]
    return {
        "sessions": len(used),
        "tools_per_session": round(sum(tools) / max(1, len(tools)), 2),
        "servers_per_session": round(sum(servers) / max(1, len(servers)), 2),
        "multi_server_sessions": sum(n >= 2 for n in servers),
    }


def main(argv: list[str] | None = None) -> int:
    """Re-dump (``--refresh``), re-extract (``--sources``), then build every catalog size."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DATA / "corpus")
    parser.add_argument("--sources", type=Path, help="folder of the public task files")
    parser.add_argument("--refresh", action="store_true", help="dump every server again")
    opts = parser.parse_args(argv)
    if opts.refresh:
        subprocess.run([sys.executable, str(HERE / "mcp_servers.py"), "--refresh"], check=True)
    servers = load_servers()
    if opts.sources:
        write_jsonl(TASKS, extract(opts.sources, servers))
    tasks = [json.loads(line) for line in TASKS.read_text("utf-8").splitlines() if line.strip()]
    tasks = [t for t in tasks if all(s in servers for s, _ in t["needs"])]
    build(opts.out, tasks, servers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
