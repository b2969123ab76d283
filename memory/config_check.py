"""What is wrong with a setting, in one line: an unknown name (and the closest one), a bad value.

Every source is checked: constructor arguments, ``TOOLTRAY_*`` environment variables and the TOML
file. A typo must not silently fall back to the default (``activaton_share`` would leave
``activation_share`` at 0.10 and nothing would say so), and a bad value must name the setting,
where it came from and what it should be, instead of pydantic's multi-line report.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from tooltray.memory.config_file import config_path, read_config
from tooltray.tools.errors import ConfigError, shown

ENV_PREFIX = "TOOLTRAY_"
# TOOLTRAY_* variables that are not settings but are read elsewhere (the store, `tooltray sql`,
# the test suite and the benchmarks); a new one must be added here or Settings() refuses it.
OTHER_ENV = frozenset(
    {
        "TOOLTRAY_CONFIG",
        "TOOLTRAY_CACHE",
        "TOOLTRAY_SQL_URL",
        "TOOLTRAY_TEST_PG_URL",
        "TOOLTRAY_PG_DIR",
        "TOOLTRAY_PG_PORT",
        "TOOLTRAY_FULL",
        "TOOLTRAY_FIGURES",
        "TOOLTRAY_STARTUP_BASELINE",
        "TOOLTRAY_UPDATE_GOLDEN",
        "TOOLTRAY_BENCH_MATCH_STRIPPED",
        "TOOLTRAY_GATEWAY_URL",  # `tooltray hint`: the gateway to send to, and its bearer token
        "TOOLTRAY_GATEWAY_TOKEN",
        "TOOLTRAY_DUMP_SECONDS",  # bench/mcp_servers.py's deadline for one server's dump
    }
)
OTHER_ENV_PREFIXES = ("TOOLTRAY_REL_",)  # the reliability suite's size overrides


def unknown(name: str, fields: Iterable[str], source: str, env: bool = False) -> ConfigError:
    """The refusal of ``name`` from ``source``, naming the closest real setting if any."""
    names = sorted(fields)
    bare = name[len(ENV_PREFIX) :] if env else name
    close = difflib.get_close_matches(bare.lower(), names, n=1, cutoff=0.6)
    spelled = [f"{ENV_PREFIX}{n.upper()}" if env else n for n in (close or names)]
    hint = f"did you mean {spelled[0]!r}?" if close else f"the settings are: {', '.join(spelled)}"
    return ConfigError(f"unknown setting {shown(name, 40)} in {source}: {hint}")


def check_keys(keys: Iterable[str], fields: Iterable[str], source: str) -> None:
    """Refuse the first key of ``keys`` that is not one of ``fields``."""
    known = set(fields)
    for key in keys:
        if key not in known:
            raise unknown(key, known, source)


def check_environment(fields: Iterable[str], env: Mapping[str, str] | None = None) -> None:
    """Refuse a ``TOOLTRAY_*`` variable that is neither a setting nor one tooltray reads."""
    known = set(fields)
    for var in sorted(os.environ if env is None else env):
        upper = var.upper()
        if not upper.startswith(ENV_PREFIX) or upper in OTHER_ENV:
            continue
        if upper.startswith(OTHER_ENV_PREFIXES) or upper[len(ENV_PREFIX) :].lower() in known:
            continue
        raise unknown(var, known, "the environment", env=True)


def source_of(field: str, arguments: Mapping[str, Any]) -> str:
    """Where the value of ``field`` came from, for the message (the highest source first)."""
    if field in arguments:
        return "the constructor argument"
    for var, value in os.environ.items():
        if var.upper() == f"{ENV_PREFIX}{field.upper()}":
            return f"the environment ({var}={shown(value, 40)})"
    if field in read_config():
        return f"the config file {shown(config_path(), 200)}"
    return "the settings"


def expected(annotation: Any) -> str:
    """The type a setting wants, in words: ``an integer``, ``one of 'a', 'b'``."""
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in get_args(annotation))
    if origin is list:
        return 'a list of strings (in the environment as JSON: \'["a", "b"]\')'
    args = [a for a in get_args(annotation) if a is not type(None)]
    if origin in (Union, UnionType) and args:
        return " or ".join(expected(a) for a in args)
    words = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}
    return words.get(annotation, getattr(annotation, "__name__", str(annotation)))


def unparsable(
    exc: Exception, fields: Mapping[str, Any], arguments: Mapping[str, Any]
) -> ConfigError:
    """The line for pydantic-settings' SettingsError (a list setting whose JSON is broken)."""
    found = re.search(r'field "([^"]+)"', str(exc))
    field = found.group(1) if found else ""
    info = fields.get(field)
    if info is None:
        return ConfigError(f"invalid settings: {str(exc).splitlines()[0]}")
    return ConfigError(
        f"setting {field!r} from {source_of(field, arguments)} could not be read: it must be "
        f"{expected(info.annotation)}"
    )
