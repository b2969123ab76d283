"""A ``load_tools`` answer with the deployment's learned votes (:func:`selector.with_votes`),
on hand-made values: which votes join, whose places they take, and a server line's scope."""

from __future__ import annotations

from tooltray.memory.config import Settings
from tooltray.memory.retrieval import selector
from tooltray.memory.retrieval.scoring import Candidate
from tooltray.memory.tuning import VOTE_MIN
from tooltray.tools.demo import demo_registry


def found(*scores: float) -> list[Candidate]:
    return [Candidate(f"m{i}", "semantic", s) for i, s in enumerate(scores)]


def names(answer: list[Candidate]) -> list[str]:
    return [c.name for c in answer]


def test_strong_votes_join_beside_the_matches_strongest_first() -> None:
    matches = found(5.0, 2.0, 4.0, 1.0, 3.0)
    answer = selector.with_votes(matches, {"v2": 0.6, "v1": 0.9})
    assert answer[:5] == matches and names(answer)[5:] == ["v1", "v2"]  # no match gives way
    assert answer[5].score is not None and answer[6].score is not None
    assert answer[5].score > answer[6].score


def test_votes_add_at_most_half_as_many_tools_as_the_answer_has() -> None:
    votes = {f"v{i}": 0.9 - 0.1 * i for i in range(5)}
    answer = selector.with_votes(found(5.0, 4.0, 3.0, 2.0, 1.0), votes)
    assert names(answer) == ["m0", "m1", "m2", "m3", "m4", "v0", "v1"]
    assert names(selector.with_votes(found(5.0), votes)) == ["m0"]  # a lone match stays alone


def test_weak_known_or_loaded_votes_leave_the_answer_as_it_was() -> None:
    matches = found(5.0, 4.0, 3.0, 2.0)
    votes = {"weak": VOTE_MIN - 0.01, "m1": 1.0, "loaded": 1.0}
    assert selector.with_votes(matches, votes, exclude={"loaded"}) == matches
    assert selector.with_votes(matches, {}) == matches


def test_a_server_line_takes_votes_for_its_servers_tools_only() -> None:
    specs = demo_registry().allowed()
    index = selector.lexical_selector(specs, Settings(db="sqlite://"))
    query = "server: travel\ntool: book a flight to Lisbon"
    own = [c for c in index.search(query) if not c.mention]  # less the travel bundle's mention
    assert own and all(c.name.startswith("travel_") for c in own)
    left = [s.name for s in specs if s.name.startswith("travel_") and s.name not in names(own)]
    votes = {"email_send": 1.0, **dict.fromkeys(left, 0.8)}
    answer = index.voted_search(query, own, votes)
    assert "email_send" not in names(answer) and answer[: len(own)] == own
    assert set(names(answer)) - set(names(own)) == set(left)
    assert "email_send" in names(index.voted_search("book a flight to Lisbon", own, votes))
