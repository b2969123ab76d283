"""Model-written ``load_tools`` searches for the real-MCP corpus: a model writes them, not a rule.

``bench/mcp_queries.py`` writes searches from the request's words by rule; a frontier model
writes what it needs in its own words (``run python code to read a docx``). This script lays a
writing task out for a model and joins what it wrote back to the needs:

- ``python bench/mcp_written.py needs --protocol menu|tool_assistant [--parts 3] --out DIR``:
  per need of mcp70's turns (mcp20's and mcp300's are the same tasks), one JSON line
  ``{"need", "earlier_user_messages", "user_message", "server"}`` in ``DIR/needs-K.jsonl`` and
  the prompt a writer reads in ``DIR/prompt-K.md``. The writer sees the user's messages and the
  step's server, never a tool's name or description; it writes ``DIR/written-K.jsonl``
  (``{"need", "query"}``, one line per need).
- ``python bench/mcp_written.py join --protocol P DIR/written-*.jsonl``: each corpus's
  ``searches.written.jsonl`` gets the protocol's rows ``{"id", "turn", "tool", "server",
  "protocol", "query"}`` for the turns it holds (others' rows are kept).

Protocols: ``menu``, the agent sees tooltray's bundle menu of mcp70 and the ``load_tools``
description, and writes any form it likes; ``tool_assistant``, the agent sees no menu and a
search tool asking for ``<tool_assistant>\\nserver: <kind>\\ntool: <job>\\n</tool_assistant>``
(the shape MCP-Zero's prompt asks for and the public LiveMCPBench trajectories of a frontier
model are written in). The prompts are ``data/mcp/written/prompt-<protocol>.md``; the committed
rows were written on 2026-11-27 by Claude helper agents, three parts a protocol, each reading
only its prompt and input (bench/README.md, stop 50).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpora import load_registry  # noqa: E402
from mcp_corpus import conversation, tool_name  # noqa: E402
from session import base_settings, open_trinket  # noqa: E402

MCP = Path(__file__).resolve().parent / "data" / "mcp"
CORPORA = ("mcp20", "mcp70", "mcp300")
#: the catalog whose menu the ``menu`` protocol's writer reads
MENU_CORPUS = "mcp70"
FILE = "searches.written.jsonl"

#: the prompts the committed rows' writers read, with ``MENU_HERE``, ``INPUT_HERE`` and
#: ``OUTPUT_HERE`` to fill
PROMPTS = MCP / "written"
PROTOCOLS = ("menu", "tool_assistant")


def needs(corpus: str) -> tuple[list[dict[str, Any]], dict[str, dict[str, str]]]:
    """The writer's lines of ``corpus``'s turns and, per need id, its turn and tool."""
    held = {
        json.loads(line)["id"] for line in _lines(MCP / "corpus" / corpus / "queries.dev.jsonl")
    }
    shown, gold = [], {}
    for task in map(json.loads, _lines(MCP / "tasks.jsonl")):
        earlier: list[str] = []
        for k, turn in enumerate(conversation(task)):
            turn_id = f"{task['id']}_t{k}"
            for j, (server, tool) in enumerate(turn["needs"] if turn_id in held else ()):
                need = f"{turn_id}#{j}"
                shown.append({"need": need, "earlier_user_messages": earlier[:],
                              "user_message": turn["query"], "server": server})  # fmt: skip
                gold[need] = {"turn": turn_id, "tool": tool_name(server, tool), "server": server}
            earlier.append(turn["query"])
    return shown, gold


def prompt(protocol: str, menu: str, input_file: Path, output_file: Path) -> str:
    """The writing task one writer reads."""
    text = (PROMPTS / f"prompt-{protocol}.md").read_text("utf-8")
    text = text.replace("MENU_HERE", menu).replace("INPUT_HERE", str(input_file))
    return text.replace("OUTPUT_HERE", str(output_file))


def menu_text() -> str:
    """The bundle menu of :data:`MENU_CORPUS` as a session's prompt shows it (vectors waited for:
    the menu a deployment settles on)."""
    registry, _ = load_registry(MCP / "corpus", MENU_CORPUS)
    with (
        tempfile.TemporaryDirectory(prefix="tooltray-written-") as tmp,
        open_trinket(registry, f"sqlite:///{tmp}/s.db", base_settings("openai")) as trinket,
    ):
        trinket.catalog.selector().index.wait_for_vectors(900.0)
        return str(trinket.catalog.menu()).strip()


def write_needs(protocol: str, parts: int, out: Path) -> None:
    """``DIR/needs-K.jsonl`` and ``DIR/prompt-K.md`` for ``parts`` writers."""
    shown, _ = needs(MENU_CORPUS)
    out.mkdir(parents=True, exist_ok=True)
    menu = menu_text() if protocol == "menu" else ""
    size = -(-len(shown) // parts)
    for k in range(parts):
        rows, given = shown[k * size : (k + 1) * size], out / f"needs-{k}.jsonl"
        given.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
        text = prompt(protocol, menu, given, out / f"written-{k}.jsonl")
        (out / f"prompt-{k}.md").write_text(text, "utf-8")


def join(protocol: str, written: list[Path]) -> dict[str, int]:
    """Each corpus's :data:`FILE` with ``protocol``'s rows from ``written``; rows per corpus."""
    queries = {r["need"]: r["query"] for p in written for r in map(json.loads, _lines(p))}
    counts = {}
    for corpus in CORPORA:
        _, gold = needs(corpus)
        missing = sorted(set(gold) - set(queries))
        if missing:
            raise SystemExit(f"{corpus}: no written query for {missing[:3]}...: write them first")
        path = MCP / "corpus" / corpus / FILE
        kept = [r for r in map(json.loads, _lines(path)) if r["protocol"] != protocol]
        rows = [{"id": f"{n}:{protocol}", **g, "protocol": protocol, "query": queries[n]}
                for n, g in gold.items()]  # fmt: skip
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept + rows)
        path.write_text(text, "utf-8")
        counts[corpus] = len(rows)
    return counts


def _lines(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [line for line in path.read_text("utf-8").splitlines() if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    lay = sub.add_parser("needs", help="lay the writing task out for writer models")
    lay.add_argument("--protocol", choices=PROTOCOLS, required=True)
    lay.add_argument("--parts", type=int, default=3)
    lay.add_argument("--out", type=Path, required=True)
    back = sub.add_parser("join", help="join written searches to the corpora")
    back.add_argument("--protocol", choices=PROTOCOLS, required=True)
    back.add_argument("written", type=Path, nargs="+")
    opts = parser.parse_args()
    if opts.command == "needs":
        write_needs(opts.protocol, opts.parts, opts.out)
    else:
        print(json.dumps(join(opts.protocol, opts.written)))


if __name__ == "__main__":
    main()
