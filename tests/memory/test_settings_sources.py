"""Settings refuse what they cannot use, from every source, in one line naming the fix.

An unknown name (constructor, ``TOOLTRAY_*`` environment, TOML) names the closest real setting;
a bad value names the setting, where it came from and what it must be. Before, a typo silently
left the default in place and a bad value was pydantic's 30-line report.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tooltray.memory.config import Settings
from tooltray.memory.config_check import OTHER_ENV
from tooltray.tools.errors import ConfigError


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No TOOLTRAY_* variable or tooltray.toml of the machine's leaks into a case."""
    import os

    for var in list(os.environ):
        if var.upper().startswith("TOOLTRAY_"):
            monkeypatch.delenv(var)
    monkeypatch.chdir(tmp_path)


def refusal(**kwargs: object) -> str:
    with pytest.raises(ConfigError) as caught:
        Settings(**kwargs)  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_an_unknown_constructor_argument_names_the_closest_setting() -> None:
    message = refusal(activaton_share=0, max_tool=3)
    assert "'activaton_share'" in message and "did you mean 'activation_share'" in message


def test_an_unknown_environment_variable_names_the_closest_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLTRAY_MAX_TOOL", "3")
    message = refusal()
    assert "TOOLTRAY_MAX_TOOL" in message and "did you mean 'TOOLTRAY_MAX_TOOLS'" in message


def test_an_unknown_toml_key_names_the_file_and_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "tooltray.toml").write_text("[tooltray]\nactivaton_share = 0\n")
    message = refusal()
    assert "tooltray.toml" in message and "did you mean 'activation_share'" in message


def test_a_name_like_no_setting_lists_them_all(monkeypatch: pytest.MonkeyPatch) -> None:
    message = refusal(zzzz=1)
    assert "max_tools" in message and "activation_share" in message


@pytest.mark.parametrize("var", sorted(OTHER_ENV) + ["TOOLTRAY_REL_TURNS", "TOOLTRAY_DB"])
def test_tooltray_variables_that_are_not_settings_are_accepted(
    var: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    value = str(tmp_path / "x.toml") if var == "TOOLTRAY_CONFIG" else "1"
    if var == "TOOLTRAY_CONFIG":
        Path(value).write_text("[tooltray]\n")
    monkeypatch.setenv(var, value)
    assert Settings().max_tools == 24


def test_every_tooltray_variable_the_code_reads_is_known() -> None:
    """A grep of the sources: a variable read anywhere must be a setting or in OTHER_ENV."""
    import re

    root = Path(__file__).resolve().parents[2]
    found: set[str] = set()
    for path in root.rglob("*"):
        hidden = any(part.startswith(".venv") for part in path.parts)
        if hidden or path.suffix not in {".py", ".sh"} or path == Path(__file__).resolve():
            continue
        found |= set(re.findall(r"TOOLTRAY_[A-Z][A-Z0-9_]*[A-Z0-9]", path.read_text("utf-8")))
    fields = {f"TOOLTRAY_{name.upper()}" for name in Settings.model_fields}
    unknown = {v for v in found - fields - OTHER_ENV if not v.startswith("TOOLTRAY_REL")}
    assert not unknown


@pytest.mark.parametrize(
    ("source", "expect"),
    [
        ("env", "the environment (TOOLTRAY_MAX_TOOLS='abc')"),
        ("toml", "tooltray.toml"),
        ("argument", "the constructor argument"),
    ],
)
def test_a_bad_value_names_setting_source_and_type(
    source: str, expect: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if source == "env":
        monkeypatch.setenv("TOOLTRAY_MAX_TOOLS", "abc")
        message = refusal()
    elif source == "toml":
        (tmp_path / "tooltray.toml").write_text('[tooltray]\nmax_tools = "abc"\n')
        message = refusal()
    else:
        message = refusal(max_tools="abc")
    assert "'max_tools'" in message and expect in message and "an integer" in message


def test_a_choice_lists_the_values_it_takes() -> None:
    message = refusal(growth="sometimes")
    assert "one of 'never', 'on_strong_match', 'every_turn'" in message


def test_the_toml_db_is_the_default_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "tooltray.toml").write_text('[tooltray]\ndb = "sqlite:///from-toml.db"\n')
    assert Settings().db == "sqlite:///from-toml.db"
    monkeypatch.setenv("TOOLTRAY_DB", "sqlite:///from-env.db")
    assert Settings().db == "sqlite:///from-env.db"
    assert Settings(db="sqlite:///arg.db").db == "sqlite:///arg.db"
