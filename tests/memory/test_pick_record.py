"""A deployment's record sets the opening's chances: of the tools past sessions' first requests
found at a dense z like a pick's, the share the session used (``Usage.by_z``), shrunk towards the
table's chance, plus its error. Only for found picks; a larger learned chance stays."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tooltray.memory.core.policy import PRICE, priced
from tooltray.memory.learning.usage import Z_FLOORS, Explained, Usage, band_of, capped
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.tuning import USAGE_MIN_SESSIONS, USAGE_PSEUDO, needed

pytestmark = pytest.mark.no_embedder

TOP_BAND = 0  # z >= Z_FLOORS[0]


def _sessions(n: int, found: int, used_in: int, band: int = TOP_BAND) -> Usage:
    """``n`` sessions, each finding ``found`` tools in ``band``; the first ``used_in`` used one."""
    rows = []
    for k in range(n):
        counts = [(0, 0)] * len(Z_FLOORS)
        counts[band] = (found, 1 if k < used_in else 0)
        rows.append(tuple(counts))
    return Usage((1.0,) * n, (frozenset(),) * n, placed=tuple(rows))


def test_a_bands_record_is_its_finds_share_used_shrunk_to_the_table_plus_its_error() -> None:
    usage = _sessions(10, found=2, used_in=1)
    seen = 20 + USAGE_PSEUDO
    share = (1 + USAGE_PSEUDO * 0.8) / seen
    assert usage.by_z(0.8, Z_FLOORS[0] + 0.5) == pytest.approx(
        share + math.sqrt(share * (1 - share) / seen)
    )
    assert usage.by_z(0.8, Z_FLOORS[1]) == pytest.approx(  # a band nobody found: the table
        0.8 + math.sqrt(0.8 * 0.2 / USAGE_PSEUDO)
    )
    assert usage.by_z(0.8, Z_FLOORS[-1] - 0.1) is None  # below every band
    few = _sessions(USAGE_MIN_SESSIONS - 1, found=2, used_in=0)
    assert few.by_z(0.8, Z_FLOORS[0]) is None


def test_banded_counts_the_found_tools_by_dense_z_and_the_used_among_them() -> None:
    docs = np.zeros((20, 2), np.float32)
    docs[0] = [1.0, 0.0]  # alone near the request: z = 0.95 / sqrt(0.05 * 0.95) = 4.36
    docs[1:, 1] = 1.0
    explained = Explained({f"t{i}": i for i in range(20)}, docs, top=2)
    request = np.asarray([1.0, 0.0], np.float32)
    z = explained.dense_z(request)
    assert z is not None and band_of(float(z[0])) == 2 and band_of(float(z[1])) is None
    banded = explained.banded(request, {"t0", "t7"})  # t7 is not found: it does not count
    assert banded[2] == (1, 1)
    assert sum(tools for tools, _ in banded) == 1  # the other found tool is below every band
    assert explained.banded(np.ones(3, np.float32), {"t0"}) == ()  # another embedder's vector


def test_a_record_sets_a_found_picks_chance_either_way() -> None:
    usage = _sessions(10, found=2, used_in=0)  # the top band's finds were never used
    picks = [
        Candidate("top", "retrieval", 6.5),
        Candidate("unfound", "retrieval", 6.4),
        Candidate("prior", "usage", None, 0.4),
    ]
    out = capped(picks, {"top": Z_FLOORS[0] + 1.0}, usage, size=50)
    table = needed(6.5, 6.5, 50)
    assert out[0].cap is not None and out[0].cap < table
    assert out[1] == picks[1] and out[2] == picks[2]  # not found / no score: untouched
    used = _sessions(10, found=1, used_in=10)  # always used: the record is above the table
    raised = capped(picks, {"top": Z_FLOORS[0] + 1.0}, used, size=50)[0].cap
    assert raised is not None and raised > table


def test_a_record_replaces_the_scores_chance_and_a_larger_learned_chance_stays() -> None:
    picks = [
        Candidate("a", "retrieval", 6.0, None, 0.1),
        Candidate("b", "retrieval", 6.0),
        Candidate("c", "usage", 6.0, 0.3, 0.1),
        Candidate("d", "retrieval", 1.0, None, 0.9),
    ]
    chances = {c.name: chance for c, _, chance, _ in priced(picks, {}, PRICE, 50)}
    assert chances["a"] == pytest.approx(0.1)
    assert chances["b"] == needed(6.0, 6.0, 50)
    assert chances["c"] == pytest.approx(0.3)
    assert chances["d"] == pytest.approx(0.9)  # a weak score the record says is used
