"""The optional ``tooltray.toml``, read with the stdlib so the fast CLI commands can use it.

:class:`~tooltray.memory.config.Settings` reads every key; the store's URL resolution reads only
``db`` (:func:`tooltray.memory.store.url.resolve_url`), so ``tooltray sql`` and the user's code
end up on the same store without loading pydantic.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tooltray.tools.errors import ConfigError, shown_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomllib is new in 3.11; tomli is the same parser, packaged for 3.10
    import tomli as tomllib

ENV_CONFIG = "TOOLTRAY_CONFIG"
DEFAULT_CONFIG = "tooltray.toml"


def config_path() -> str:
    """The TOML file's name: ``$TOOLTRAY_CONFIG``, else ``tooltray.toml`` here."""
    return os.environ.get(ENV_CONFIG) or DEFAULT_CONFIG


def read_config() -> dict[str, Any]:
    """The ``[tooltray]`` table (or top level) of the TOML file; ``{}`` when there is none.

    Raises:
        ConfigError: ``TOOLTRAY_CONFIG`` names no file, or the file is not valid TOML.
    """
    path = config_path()
    file = Path(path)
    try:
        if not file.is_file():
            if os.environ.get(ENV_CONFIG):
                raise ConfigError(
                    f"{ENV_CONFIG} names {shown_path(path)}, which is not a file: fix it."
                )
            return {}
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        raise ConfigError(
            f"config file {shown_path(path)} is not valid TOML ({exc}): fix it."
        ) from None
    table = data.get("tooltray", data)
    return dict(table) if isinstance(table, dict) else {}


def config_db() -> str | None:
    """The ``db`` of the TOML file, if it names one (a non-string is refused)."""
    value = read_config().get("db")
    if value is None or isinstance(value, str):
        return value
    raise ConfigError(f"'db' in {config_path()!r} must be a string (a URL or file path): fix it.")
