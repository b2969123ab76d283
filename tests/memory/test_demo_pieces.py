"""The demo played in pieces ends as it does played at once, on stores with the same history;
its output reads whole through a pipe; a pruned session does not claim perfect recall."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.tools.demo import demo_script


def _demo(url: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["demo", "--db", url, *args])
    assert result.exit_code == 0, result.output
    return result.output


def _summary(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("first-pass recall:"))
    return lines[start : start + 4]


def test_pieces_end_as_one_run_on_the_same_history(tmp_path: Path) -> None:
    """Resume at turn 4 selects what the same turn grows when played through (issue 28).

    The resume is a session boundary: the tools revealed by then fold into the prefix there
    (``reveal = "append"``), so the pieces' prefix changes once more, at turn 4, and holds more
    tool tokens afterwards; what the model could call, and so recall and escapes, is the same.
    """
    first = tmp_path / "a.db"
    _demo(f"sqlite:///{first}")  # demo-1: the history both stores share
    second = tmp_path / "b.db"
    shutil.copy(first, second)
    _demo(f"sqlite:///{first}", "--fresh", "--turns", "3")
    pieces = _summary(_demo(f"sqlite:///{first}"))
    whole = _summary(_demo(f"sqlite:///{second}", "--fresh"))
    assert pieces[:2] == whole[:2]
    assert "4" in pieces[3].split("turns:")[1] and "4" not in whole[3].split("turns:")[1]
    assert pieces[0].startswith("first-pass recall: ") and "of 10 turns" in pieces[0]


def test_piped_output_keeps_lines_and_messages_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLTRAY_HARD_MAX_TOOLS", "24")  # later loads meet the ceiling
    out = _demo(f"sqlite:///{tmp_path / 'p.db'}", "--turns", "8")
    longest = max(demo_script()[:8], key=lambda step: len(step["user"]))["user"]
    assert len(longest) > 80 and longest in out
    assert re.search(r"refused \d+ \(loaded set full or not allowed\)", out)


def test_a_pruned_session_has_no_recall_to_claim(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'q.db'}"
    _demo(url, "--turns", "2")
    pruned = CliRunner().invoke(cli, ["db", "prune", "--before", "2999-01-01", "--db", url])
    assert pruned.exit_code == 0, pruned.output
    out = _summary_of_finished(url)
    assert "(0 of 0 turns" not in out and "first-pass recall: n/a" in out
    assert "tool tokens: n/a" in out


def _summary_of_finished(url: str) -> str:
    """The demo's closing lines for the stored session, through the report module's reader."""
    from tooltray.memory.report import summarize, summary_lines
    from tooltray.memory.store import Store

    with Store(url) as store:
        return "\n".join(summary_lines(summarize(store, "demo-1")))
