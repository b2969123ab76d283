"""The in-memory matrix of past requests: rows in id order, evicted from the front, and each
row's session kept as a code that stays bounded however many sessions a process sees."""

from __future__ import annotations

import numpy as np

from tooltray.memory.learning.lessons import RequestMatrix


def test_session_masks_follow_appends_and_evictions_and_codes_stay_bounded() -> None:
    rows = RequestMatrix()
    reference: list[tuple[int, str]] = []
    for n in range(1, 20001):
        session = f"s{n // 3}"
        rows.append([n], np.full((1, 4), n, np.float32), [[f"t{n}"]], [session])
        reference.append((n, session))
        if n % 500 == 0:
            rows.drop_below(n - 1000)
            reference = [(i, s) for i, s in reference if i >= n - 1000]
    matrix, ids, tools = rows.view()
    assert matrix is not None and ids.tolist() == [i for i, _ in reference]
    assert tools[-1] == ["t20000"] and float(matrix[-1][0]) == 20000.0
    for session in ("s6666", "s6400", "s5", "never"):
        expected = [s == session for _, s in reference]
        assert rows.of_session(session).tolist() == expected
    assert not rows.of_session(None).any()
    assert len(rows._codes) <= 4 * len(reference)  # evicted sessions are forgotten (6,667 seen)
