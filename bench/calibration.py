"""How well the opening's chances match what sessions used (issue 35, stop 43).

``python bench/calibration.py LOG -- <session bench arguments>`` replays the session bench
(``bench/session.py``, same arguments) and writes one JSON line per measured session boundary
to ``LOG``: every priced pick (:func:`tooltray.memory.core.policy.priced`) with its tokens, its
chance, whether it was held, its source and score. ``python bench/calibration.py LOG --table
SESSION_JSON [--deciding latency|price]`` then prints, per kind of pick (a message pick, one
with a learned chance, one a prior alone proposed) and chance band, the chance given against
the share of sessions that used the tool (any turn), and what holding by the measured share
instead (an in-sample bound on a per-deployment calibration) would change, priced as the
boundary prices it (``EXPECTED``). Only a session's first boundary counts.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

BANDS = (0.6, 0.4, 0.25, 0.15, 0.08, 0.0)


def record(log: Path, argv: Sequence[str]) -> None:
    """Run the session bench with ``argv``, logging each measured boundary's priced picks."""
    import session

    import tooltray.memory.core.catalog as catalog
    from tooltray.memory.core.policy import priced

    out, state = log.open("w"), {"measuring": False, "sid": None}
    measure, choose, opening = (
        session.Stores.measure_each,
        catalog.AllowedCatalog.choose,
        catalog.open_picks,
    )

    def measure_each(self: Any, convs: Any, base: Any) -> Any:
        state["measuring"] = True
        try:
            return measure(self, convs, base)
        finally:
            state["measuring"] = False

    def choosing(self: Any, snapshot: Any, due: Any, scores: Any) -> Any:
        state["sid"] = snapshot.session_id if due.first else None
        return choose(self, snapshot, due, scores)

    def logged(picks: Any, tokens: Any, profile: Any, *, share: bool, size: int = 0) -> Any:
        if state["measuring"] and state["sid"] and not share:
            rows = [
                [c.name, t, n, k, c.source, c.score, c.chance, getattr(c, "cap", None)]
                for c, t, n, k in priced(picks, tokens, profile, size)
            ]
            out.write(json.dumps({"sid": state["sid"], "rows": rows}) + "\n")
        return opening(picks, tokens, profile, share=share, size=size)

    session.Stores.measure_each = measure_each  # type: ignore[method-assign]
    catalog.AllowedCatalog.choose = choosing  # type: ignore[method-assign]
    catalog.open_picks = logged
    try:
        session.main(list(argv))
    finally:
        out.close()


def kind_of(score: float | None, chance: float | None) -> str:
    """``message`` (a score alone), ``learned`` (a score and a learned chance), ``prior``."""
    if score is None:
        return "prior"
    return "learned" if (chance or 0.0) > 0 else "message"


def rows_of(log: Path, session_json: Path) -> list[tuple[str, int, float, bool, str, bool]]:
    """Per first-boundary pick: name, tokens, chance, held, band key, used in its session."""
    data = json.loads(session_json.read_text())
    run = next(r for k, r in data["runs"].items() if k.endswith("past-split"))
    used: dict[str, set[str]] = defaultdict(set)
    for turn in run["per_turn"]:
        used[turn["conv"]] |= set(turn["gold"])
    out, seen = [], set()
    for line in log.read_text().splitlines():
        entry = json.loads(line)
        if entry["sid"] in seen:
            continue
        seen.add(entry["sid"])
        conv = entry["sid"].rsplit("@", 1)[0]
        for name, tokens, chance, held, _, score, learned, *_ in entry["rows"]:
            band = next(b for b in BANDS if chance >= b)
            key = f"{kind_of(score, learned)} >= {band}"
            out.append((name, tokens, chance, held, key, name in used[conv]))
    return out


def table(rows: list[tuple[str, int, float, bool, str, bool]], deciding: str) -> None:
    """Chance given against use per kind and band (held picks), then the calibration bound."""
    from tooltray.memory.core.policy import EXPECTED, PROFILES, profile_named

    cells: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0])
    for _, _, chance, held, key, used in rows:
        for k in (key, "all"):
            cell = cells[f"{'held' if held else 'left'} {k}"]
            cell[0], cell[1], cell[2] = cell[0] + 1, cell[1] + chance, cell[2] + used
    print("| picks | n | chance given | used |\n|---|---|---|---|")
    for k in sorted(cells):
        n, given, hit = cells[k]
        print(f"| {k} | {n:.0f} | {given / n:.3f} | {hit / n:.3f} |")
    share = {k.split(" ", 1)[1]: v[2] / v[0] for k, v in cells.items()}
    both = {k: sum(1 for r in rows if r[4] == k) for k in share}
    rate = {
        k: sum(r[5] for r in rows if r[4] == k) / n for k, n in both.items() if n and k != "all"
    }
    decide = profile_named(deciding)
    for p in PROFILES:
        miss, change, flips = p.escape(EXPECTED.context, EXPECTED.answer), 0.0, [0, 0]
        for _, tokens, _, held, key, used in rows:
            keep = rate[key] * decide.escape(EXPECTED.context, EXPECTED.answer) >= decide.held(
                tokens, EXPECTED.calls
            )
            if keep != held:
                sign = 1 if keep else -1
                flips[keep] += 1
                change += sign * (p.held(tokens, EXPECTED.calls) - (miss if used else 0.0))
        print(f"{p.name}: held by the measured share: {flips[0]} dropped, {flips[1]} added, "
              f"{change:+.0f} ({p.unit})")  # fmt: skip


def main(argv: Sequence[str]) -> int:
    """``LOG -- session args`` records; ``LOG --table SESSION_JSON [--deciding P]`` reads."""
    log = Path(argv[0])
    if "--table" in argv:
        session_json = Path(argv[argv.index("--table") + 1])
        deciding = argv[argv.index("--deciding") + 1] if "--deciding" in argv else "latency"
        table(rows_of(log, session_json), deciding)
        return 0
    record(log, argv[argv.index("--") + 1 :] if "--" in argv else argv[1:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
