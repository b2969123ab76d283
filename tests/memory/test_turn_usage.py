"""Each turn's prompt tokens, re-used and new, and the provider's usage: from ``turn-completed``
into the store (SQLite, PostgreSQL) and out through ``tooltray history``."""

from __future__ import annotations

import json

from click.testing import CliRunner

from tooltray.events import TurnCompleted, Usage, emit, turn_completed
from tooltray.memory.cli.main import cli
from tooltray.memory.store import Store
from tooltray.memory.store.base import BaseStore
from tooltray.memory.store.records import Changes, TurnRecord, TurnUsage
from tooltray.tools.render import count_tokens

from .conftest import MakeTrinket, user

ASK = "What's the weather in Oslo tomorrow?"
ANSWER = {"role": "assistant", "content": "Tomorrow in Oslo: 4 C and rain."}


def _history(db_url: str, session: str) -> dict[int, dict[str, object]]:
    out = CliRunner().invoke(cli, ["history", session, "--db", db_url, "--format", "json"])
    assert out.exit_code == 0, out.output
    return {int(r["turn"]): r for r in json.loads(out.output)}


def test_usage_round_trips_through_turn_completed_into_history(
    make_trinket: MakeTrinket, db_url: str
) -> None:
    trinket = make_trinket()
    first = [user(ASK)]
    trinket.prepare("u1", first)  # call 1: nothing cached yet
    whole = trinket.meter("u1").new
    trinket.prepare("u1", [*first, ANSWER])  # call 2: call 1's prompt, then one message more
    reported = Usage(cached_input_tokens=1200, uncached_input_tokens=85, output_tokens=40)
    emit(turn_completed, "u1", TurnCompleted(turn=1, usage=reported))
    second = [*first, ANSWER, user("And in Bergen?")]
    trinket.prepare("u1", second)
    emit(turn_completed, "u1", TurnCompleted(turn=2))  # an agent that passes no usage
    trinket.close()

    rows = _history(db_url, "u1")
    one, two = rows[1], rows[2]
    assert one["prompt_reused"] == whole > 0  # all of call 1 was re-used by call 2
    added = count_tokens(f"assistant: {ANSWER['content']}").n
    assert one["prompt_new"] == whole + added
    usage = (one["usage_cached"], one["usage_uncached"], one["usage_output"])
    assert usage == (1200, 85, 40)
    assert two["prompt_reused"] == whole + added  # turn 2 appends a message only
    assert two["prompt_new"] == count_tokens("user: And in Bergen?").n
    assert (two["usage_cached"], two["usage_uncached"], two["usage_output"]) == (None,) * 3
    with Store(db_url) as store:  # the same numbers through the Store (PostgreSQL's route)
        stored = {t.turn: t for t in store.turns("u1")}
    assert (stored[1].prompt_reused, stored[1].usage_output) == (whole, 40)
    out = CliRunner().invoke(cli, ["history", "u1", "--db", db_url])
    assert out.exit_code == 0 and "reused" in out.output  # the table header of prompt_reused


def test_turn_usage_is_written_onto_the_turn_row_by_every_store(any_store: BaseStore) -> None:
    record = TurnRecord("s", 3, "ab" * 32, 100, 2, 900)
    any_store.apply("s", Changes(turn=3, turn_record=record))
    any_store.apply("s", Changes(usage=TurnUsage(3, 700, 150, 600, 250, 30)))
    any_store.apply("s", Changes(usage=TurnUsage(9, 1, 1)))  # no such turn row: nothing written
    (row,) = any_store.turns("s")
    assert (row.tool_tokens, row.eager_tokens) == (100, 900)
    got = (row.prompt_reused, row.prompt_new, row.usage_cached, row.usage_uncached)
    assert (*got, row.usage_output) == (700, 150, 600, 250, 30)
