"""Skills: parsing, recall by embedding with a catalog-calibrated bar, and byte-for-byte absence."""

from __future__ import annotations

from pathlib import Path

import pytest

from tooltray.memory.retrieval.skills import load_skills, parse_skill
from tooltray.tools.demo import demo_skills_dir
from tooltray.tools.errors import ConfigError

from .conftest import MakeTrinket, user

TRIP = "I'm flying to Lisbon for a conference next month, can you plan the trip for me?"
UNRELATED = "What is 17 times 23?"


def test_demo_skills_parse_with_their_tools() -> None:
    skills = load_skills(demo_skills_dir())
    assert [s.name for s in skills] == sorted(s.name for s in skills) and len(skills) == 4
    trip = next(s for s in skills if s.name == "plan-a-trip")
    assert "travel_search_flights" in trip.tools_required


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("no frontmatter here", "must start with YAML frontmatter"),
        ("---\nname: [unclosed\n---\nbody", "unreadable frontmatter"),
        ("---\ndescription: x\n---\nbody", "needs `name`"),
        ("---\nname: x\ntools_required: just-one\n---\n", "needs `name`"),
    ],
)
def test_malformed_skill_names_the_file_and_the_fix(
    tmp_path: Path, text: str, fragment: str
) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=fragment) as info:
        parse_skill(path)
    assert str(path) in str(info.value)


def test_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not a folder"):
        load_skills(tmp_path / "nope")


def test_matching_skill_loads_its_tools_ahead_of_picks(make_trinket: MakeTrinket) -> None:
    trinket = make_trinket(skills_dir=demo_skills_dir())
    trinket.prepare("s", [user(TRIP)])
    loaded = trinket.state("s").snapshot.loaded
    sources = [t.source for t in loaded if t.source != "core"]
    skill_tools = [t.name for t in loaded if t.source == "skill"]
    assert {"travel_search_flights", "travel_search_hotels", "weather_forecast"} <= set(skill_tools)
    assert sources[: len(skill_tools)] == ["skill"] * len(skill_tools)


def test_no_folder_and_no_match_are_byte_identical_to_no_skills(make_trinket: MakeTrinket) -> None:
    plain = make_trinket().prepare("a", [user(UNRELATED)])
    with_skills = make_trinket(skills_dir=demo_skills_dir()).prepare("b", [user(UNRELATED)])
    assert with_skills.system_prefix == plain.system_prefix
    assert with_skills.tools() == plain.tools()
    trip_plain = make_trinket().prepare("c", [user(TRIP)])
    assert "skill" not in {t.source for t in make_trinket().state("c").snapshot.loaded}
    assert trip_plain.prefix_hash != with_skills.prefix_hash
