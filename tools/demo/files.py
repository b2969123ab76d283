"""The demo's pretend workspace and its ``files_*`` tools.

A few small files of a Python project with one failing test (``parse_range`` drops the end
day), so the scripted demo can read, fix and commit it. The workspace is re-seeded on every
call: writes and edits report what they would do but do not persist.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

Args = dict[str, Any]

WORKSPACE: dict[str, str] = {
    "README.md": "# dateparse\n\nSmall helpers for parsing date ranges.\n\nRun `pytest` to test.\n",
    "src/dates.py": (
        '"""Date range helpers."""\n\nfrom datetime import date, timedelta\n\n\n'
        "def parse_range(text: str) -> list[date]:\n"
        '    """Every day from START to END in "YYYY-MM-DD..YYYY-MM-DD" (END included)."""\n'
        '    start_s, end_s = text.split("..")\n'
        "    start, end = date.fromisoformat(start_s), date.fromisoformat(end_s)\n"
        "    return [start + timedelta(days=i) for i in range((end - start).days)]\n"
    ),
    "tests/test_dates.py": (
        "from datetime import date\n\nfrom src.dates import parse_range\n\n\n"
        "def test_end_is_included():\n"
        '    days = parse_range("2026-11-10..2026-11-12")\n'
        "    assert days[-1] == date(2026, 11, 12)\n    assert len(days) == 3\n"
    ),
    "notes/todo.md": "- [ ] book Lisbon hotel\n- [ ] October expense report\n- [x] passport\n",
    "data/expenses.csv": (
        "date,category,amount,currency\n2026-10-02,taxi,23.40,EUR\n2026-10-02,hotel,412.00,EUR\n"
        "2026-10-03,meals,38.75,EUR\n2026-10-04,train,64.10,EUR\n"
    ),
}


def _missing(path: str) -> ValueError:
    return ValueError(
        f"no such file {path!r}; existing files: {sorted(WORKSPACE)}. Use files_list."
    )


def _read(path: str) -> str:
    key = path.strip().removeprefix("./")
    if key not in WORKSPACE:
        raise _missing(path)
    return WORKSPACE[key]


def files_read(a: Args) -> dict[str, Any]:
    lines = _read(a["path"]).splitlines()
    start, limit = a.get("offset", 0), a.get("limit", 2000)
    return {
        "path": a["path"],
        "total_lines": len(lines),
        "content": "\n".join(lines[start : start + limit]),
    }


def files_edit(a: Args) -> dict[str, Any]:
    text, old = _read(a["path"]), a["old_text"]
    count = text.count(old)
    if count == 0:
        raise ValueError(
            f"old_text not found in {a['path']!r}; read the file and copy the exact text."
        )
    if count > 1 and not a.get("replace_all", False):
        raise ValueError(f"old_text occurs {count} times; give more context or set replace_all.")
    new = text.replace(old, a["new_text"])
    return {"path": a["path"], "replacements": count, "content": new}


def files_write(a: Args) -> dict[str, Any]:
    exists = a["path"].removeprefix("./") in WORKSPACE
    if exists and not a.get("overwrite", False):
        raise ValueError(f"{a['path']!r} exists; pass overwrite=true to replace it.")
    return {
        "path": a["path"],
        "bytes_written": len(a["content"].encode("utf-8")),
        "created": not exists,
    }


def files_list(a: Args) -> dict[str, Any]:
    base = a.get("path", ".").strip().strip("/").removeprefix(".").strip("/")
    prefix = f"{base}/" if base else ""
    entries: set[str] = set()
    for path in WORKSPACE:
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix) :]
        entry = rest if a.get("recursive") or "/" not in rest else rest.split("/")[0] + "/"
        if fnmatch.fnmatch(entry.rstrip("/").rsplit("/", 1)[-1], a.get("pattern") or "*"):
            entries.add(prefix + entry)
    return {"path": a.get("path", "."), "entries": sorted(entries)}


def files_search(a: Args) -> dict[str, Any]:
    flags = 0 if a.get("case_sensitive") else re.IGNORECASE
    pattern = re.compile(a["query"] if a.get("regex") else re.escape(a["query"]), flags)
    hits = [
        {"path": path, "line": number, "text": line.strip()}
        for path, text in sorted(WORKSPACE.items())
        for number, line in enumerate(text.splitlines(), 1)
        if pattern.search(line)
    ]
    return {"query": a["query"], "matches": hits[: a.get("max_results", 50)]}


def files_stat(a: Args) -> dict[str, Any]:
    text = _read(a["path"])
    size, lines = len(text.encode()), text.count("\n")
    return {
        "path": a["path"],
        "type": "file",
        "size": size,
        "lines": lines,
        "modified": "2026-11-01",
    }


def files_existing(a: Args) -> dict[str, Any]:
    """Move, copy or delete: succeed when the source exists."""
    path = str(a.get("source") or a.get("path") or "")
    if not any(p == path or p.startswith(path.rstrip("/") + "/") for p in WORKSPACE):
        raise _missing(path)
    return {"ok": True, "path": path, "destination": a.get("destination")}


FILES = {
    "files_read": files_read,
    "files_edit": files_edit,
    "files_write": files_write,
    "files_append": lambda a: {"path": a["path"], "bytes_appended": len(a["content"].encode())},
    "files_list": files_list,
    "files_search": files_search,
    "files_stat": files_stat,
    "files_move": files_existing,
    "files_copy": files_existing,
    "files_delete": files_existing,
}
