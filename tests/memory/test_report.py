"""``tooltray report``: the timeline replays the store, the PNG depends on the session, and the
summary gives recall, escapes, tokens and prefix changes; a missing matplotlib is one line."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from tooltray.memory.cli.main import cli
from tooltray.memory.report import build_timeline, draw_timeline, summarize, summary_lines
from tooltray.memory.store import Changes, HistoryEvent, Load, Store, TurnRecord, Unload, Use
from tooltray.memory.store.records import TurnUsage

EAGER = 1000


def _turn(store: Store, sid: str, turn: int, tokens: int, prefix: str, **changes: object) -> None:
    record = TurnRecord(sid, turn, prefix, tokens, 3, EAGER)
    store.apply(sid, Changes(turn=turn, turn_record=record, **changes))  # type: ignore[arg-type]


def _session(store: Store, sid: str, escape: bool) -> None:
    """Two tools selected at turn 1; turn 2 uses a third one, loaded by load_tools if ``escape``."""
    loads = [Load("a_tool", "core", 1), Load("b_tool", "semantic", 1, 0.7)]
    _turn(store, sid, 1, 100, "p1", loads=loads, uses=[Use("a_tool", 1)])
    if escape:
        event = HistoryEvent(sid, 2, "escape", detail="load_tools")
        more = {"loads": [Load("c_tool", "escape", 2)], "events": [event]}
        _turn(store, sid, 2, 150, "p2", uses=[Use("c_tool", 2)], **more)
    else:
        _turn(store, sid, 2, 100, "p1", uses=[Use("b_tool", 2)])
    _turn(store, sid, 3, 100, "p3" if escape else "p1", unloads=[Unload("b_tool", "evicted")])


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    with Store(db_url, auto_upgrade=True) as made:
        _session(made, "calm", escape=False)
        _session(made, "rescued", escape=True)
        yield made


def test_timeline_replays_loads_uses_escapes_and_evictions(store: Store) -> None:
    line = build_timeline(store, "rescued")
    rows = {r.name: r for r in line.rows}
    assert [r.name for r in line.rows] == ["a_tool", "b_tool", "c_tool"]
    assert rows["b_tool"].spans == [(1, 3, "semantic")] and rows["b_tool"].evicted == {3}
    assert rows["c_tool"].spans == [(2, None, "escape")] and rows["c_tool"].escapes == {2}
    assert rows["a_tool"].used == {1} and line.turns == 3
    assert line.prefix_changes == [2, 3]
    assert build_timeline(store, "calm").prefix_changes == []


def test_the_png_depends_on_the_session(store: Store, tmp_path: Path) -> None:
    image = pytest.importorskip("matplotlib.image")
    calm = draw_timeline(build_timeline(store, "calm"), tmp_path / "calm.png")
    rescued = draw_timeline(build_timeline(store, "rescued"), tmp_path / "rescued.png")
    a, b = image.imread(calm), image.imread(rescued)
    assert a.shape[1] == b.shape[1] >= 1000
    assert b.shape[0] > a.shape[0]  # one more tool row
    assert calm.read_bytes() != rescued.read_bytes()


def test_summary_lines_give_recall_escapes_tokens_and_prefix_changes(store: Store) -> None:
    calm = summary_lines(summarize(store, "calm"))
    rescued = summary_lines(summarize(store, "rescued"))
    assert calm[0].startswith("first-pass recall: 1.00 (2 of 2 turns")
    assert rescued[0].startswith("first-pass recall: 0.50 (1 of 2 turns")
    assert rescued[0].endswith("after recovery 1.00")
    assert calm[1] == "escapes: 0 (none)" and rescued[1] == "escapes: 1 (load_tools 1)"
    assert rescued[2] == "tool tokens: 350 over 3 turns, 12% of eager (3,000)"
    assert calm[3] == "prompt prefix changed at 0 of 2 turn boundaries (turns: none)"
    assert rescued[3] == "prompt prefix changed at 2 of 2 turn boundaries (turns: 2, 3)"


def test_report_command_writes_the_png_and_prints_the_summary(
    store: Store, db_url: str, tmp_path: Path
) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "pic" / "r.png"
    result = CliRunner().invoke(cli, ["report", "rescued", "--db", db_url, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "escapes: 1 (load_tools 1)" in result.output and str(out) in result.output
    missing = CliRunner().invoke(cli, ["report", "nobody", "--db", db_url])
    assert missing.exit_code != 0 and "no session 'nobody'" in missing.output
    assert "Traceback" not in missing.output
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    args = ["report", "rescued", "--db", db_url, "--out", str(blocked / "r.png")]
    unwritable = CliRunner().invoke(cli, args)
    assert unwritable.exit_code != 0 and "pass a writable --out" in unwritable.output
    assert "Traceback" not in unwritable.output


def test_missing_matplotlib_is_one_line_naming_the_extra(
    store: Store, db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    out = tmp_path / "r.png"
    result = CliRunner().invoke(cli, ["report", "calm", "--db", db_url, "--out", str(out)])
    assert result.exit_code != 0 and not out.exists()
    lines = [line for line in result.output.splitlines() if line.startswith("error")]
    assert lines == ["error: drawing a session needs matplotlib: pip install 'tooltray[report]'"]


def test_the_picture_and_summary_show_each_turns_prompt_re_used_and_new(
    store: Store, tmp_path: Path
) -> None:
    image = pytest.importorskip("matplotlib.image")
    plain = draw_timeline(build_timeline(store, "rescued"), tmp_path / "plain.png")
    store.apply("rescued", Changes(usage=TurnUsage(1, 0, 900)))
    store.apply("rescued", Changes(usage=TurnUsage(2, 850, 300, 800, 350, 60)))
    line = build_timeline(store, "rescued")
    assert [(r.prompt_reused, r.prompt_new) for r in line.records] == [
        (0, 900),
        (850, 300),
        (None, None),
    ]
    priced = draw_timeline(line, tmp_path / "priced.png")
    assert image.imread(priced).shape[0] > image.imread(plain).shape[0]  # the prompt panel
    lines = summary_lines(summarize(store, "rescued"))
    assert lines[4] == "prompt tokens (estimate): 850 re-used (41%), 1,200 new"
    assert lines[5] == "reported by the provider: 800 cached, 350 uncached input, 60 output"
    assert len(summary_lines(summarize(store, "calm"))) == 4  # nothing stored, nothing shown


def test_a_japanese_session_id_draws_without_missing_glyphs(db_url: str, tmp_path: Path) -> None:
    """The id is drawn in a font that has its glyphs if one is installed, else escaped to ASCII;
    either way no "Glyph missing" warning and no box."""
    import warnings

    pytest.importorskip("matplotlib")
    from matplotlib.font_manager import findfont
    from matplotlib.ft2font import FT2Font

    from tooltray.memory.report.draw import title_and_font

    sid = "セッション-1"
    with Store(db_url, auto_upgrade=True) as made:
        _session(made, sid, escape=False)
        line = build_timeline(made, sid)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = draw_timeline(line, tmp_path / "jp.png")
    assert out.stat().st_size > 0
    assert [str(w.message) for w in caught] == []
    title, font = title_and_font(sid)
    charmap = FT2Font(findfont(font)).get_charmap()
    assert all(ord(c) in charmap for c in title)
    assert sid in title or "\\u30bb\\u30c3" in title
