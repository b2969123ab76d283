"""``tooltray eval recall``: the recall gate, computed from the stored history.

Exits 0 when recall (turns whose every called tool was callable) reaches ``--min-recall``, 1 when
it falls below, and 2 on errors (no database, unknown session).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from tooltray.memory.cli.db import emit
from tooltray.memory.cli.options import DB_OPTION, format_option

if TYPE_CHECKING:  # the store loads when the command runs, not on --help
    from tooltray.memory.eval.recall import RecallReport

TURN_COLUMNS = ["session", "turn", "ok", "hit", "recovered", "missed", "escapes"]


def _rows(report: RecallReport) -> list[list[Any]]:
    rows: list[list[Any]] = []
    for t in report.called_turns():
        rows.append(
            [
                t.session_id,
                t.turn,
                "yes" if t.ok else "NO",
                ", ".join(t.named("hit")),
                ", ".join(t.named("recovered")),
                ", ".join(t.named("miss")),
                t.escapes,
            ]
        )
    return rows


def _verdict(summary: dict[str, Any], min_recall: float, passed: bool) -> str:
    recall = summary["recall"]
    shown = "n/a (no tool calls recorded)" if recall is None else f"{recall:.4f}"
    rate = summary["escape_rate"]
    return (
        f"recall {shown} (bar {min_recall}): {'PASS' if passed else 'FAIL'}; first-pass "
        f"{summary['first_pass_recall']}; {summary['misses']} missed and "
        f"{summary['recovered']} recovered of {summary['calls']} calls in "
        f"{summary['turns_with_calls']} turns; escape rate {rate} per turn "
        f"({summary['escapes']} over {summary['turns']} turns)"
    )


@click.group("eval")
def eval_group() -> None:
    """Measure tooltray from what it stored."""


@eval_group.command("recall")
@DB_OPTION
@click.option(
    "--min-recall",
    type=click.FloatRange(0.0, 1.0),
    default=1.0,
    show_default=True,
    help="Exit 1 when recall falls below this share of turns.",
)
@click.option(
    "--session", "sessions", multiple=True, metavar="ID", help="Only this session (repeatable)."
)
@format_option("Output format (csv: one row per turn).")
def recall_command(db: str | None, min_recall: float, sessions: tuple[str, ...], fmt: str) -> None:
    """Was every tool the model called loaded (or recovered) when it called it? Per turn."""
    from tooltray.memory.eval.recall import evaluate_store
    from tooltray.memory.store import Store, resolve_url
    from tooltray.memory.store.access import require_openable
    from tooltray.memory.store.probe import display_url, no_database, probe

    url = resolve_url(db)
    if probe(url).kind == "empty":
        raise no_database(url)
    require_openable(url)
    with Store(url) as store:
        report = evaluate_store(store, sessions)
    summary = report.summary()
    passed = report.passed(min_recall)
    if fmt == "json":
        doc: dict[str, Any] = {"summary": {**summary, "min_recall": min_recall, "passed": passed}}
        doc["turns"] = [dict(zip(TURN_COLUMNS, row, strict=True)) for row in _rows(report)]
        click.echo(json.dumps(doc, indent=2))
    elif fmt == "csv":
        emit(TURN_COLUMNS, _rows(report), "csv")
    else:
        emit(TURN_COLUMNS, _rows(report), "table", title=f"tool recall: {display_url(url)}")
        click.echo(_verdict(summary, min_recall, passed))
    if not passed:
        if fmt != "table":
            click.echo(_verdict(summary, min_recall, passed), err=True)
        sys.exit(1)


COMMANDS: list[click.Command] = [eval_group]
