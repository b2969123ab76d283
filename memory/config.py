"""One settings model for tooltray: constructor arguments, ``TOOLTRAY_*`` variables, a TOML file.

Precedence, highest first: arguments, environment (``TOOLTRAY_MAX_TOOLS=20``), the TOML file
named by ``TOOLTRAY_CONFIG`` (else ``./tooltray.toml`` when present, table ``[tooltray]`` or top
level), then the defaults below. A name that is not a setting, from any of them, is refused with
the closest real one, and a bad value with its setting, source and type
(:mod:`tooltray.memory.config_check`): a typo must not leave a default silently in place.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from tooltray.memory.config_check import (
    check_environment,
    check_keys,
    expected,
    source_of,
    unparsable,
)
from tooltray.memory.config_file import config_path, read_config
from tooltray.tools.errors import ConfigError

Growth = Literal["never", "on_strong_match", "every_turn"]
RenderPath = Literal["text", "openai", "responses", "anthropic"]
Reveal = Literal["append", "prefix"]


class _TomlSource(PydanticBaseSettingsSource):
    """Reads the optional TOML file; a broken file or an unknown key is an error that names it."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        table = read_config()
        check_keys(table, self.settings_cls.model_fields, f"the config file {config_path()!r}")
        return table


class Settings(BaseSettings):
    """Everything a user can tune; every field has a working default.

    Attributes:
        db: SQLAlchemy URL of the store (``None``: ``TOOLTRAY_DB``, else ``./tooltray.db``).
        enabled: the loader's switch; off exposes every allowed tool, as without tooltray
            (``memory_enabled``, its former second name, is refused with this name).
        path: how tools reach the model: ``text`` block, or a native ``tools=`` format.
        max_tools: cap on the tools a session boundary selects (CORE, pinned and meta-tools
            not counted).
        token_budget: cap on tokens of those tools' native schemas (o200k).
        hard_max_tools: most tools ``load_tools`` calls and later turns' growth may grow the
            loaded set to by bundles, query matches and growth (a tool named alone loads past
            it, as does a bundle named from the turn's fallback directory).
        idle_turns: tools unused for this many turns are evicted at session boundaries.
        growth: what later turns may add: nothing, strong matches, or every pick.
        context_window: the model's context size in tokens.
        activation_share: with ``opening = "share"``, while every allowed tool fits in this
            share of the window, load all.
        opening: how a session boundary chooses between every tool, an opening set and CORE
            alone. ``priced`` (default): by the session's expected cost under ``cost_profile``
            (each ranked pick is held in the prefix while the escape it is expected to save
            costs more than holding it; every tool when that is no dearer than the selection
            with its expected escapes). ``share``: the activation-share rule, capped by
            ``max_tools`` and ``token_budget``.
        cost_profile: what ``opening = "priced"`` minimises: ``latency`` (a local server:
            cached prefix free, prefill ~1,000 tokens/s, a round trip ~1.7 s) or ``price``
            (cached input 0.1x, cache writes 1.25x, output 5x input); see
            :class:`tooltray.memory.core.catalog.Profile`.
        menu: the bundle menu in the prefix. ``priced`` (default): shown unless its tokens on
            every call cost more, under ``cost_profile``, than the chance a session needs to
            list the bundles (one round trip, ``load_tools(["*"])`` answering with the bundles'
            names); a menu cut to its budget names the servers the deployment's sessions
            used first, or (priced so) those alone; ``always``; ``never`` (a one-line hint
            says how to list them).
        core: extra tool names that are always loaded (besides pinned specs).
        implicit: tools any session may need without naming them (a filesystem, fetch, a
            shell): tool names, ``bundle:NAME`` or a bundle's name, ``server/tool`` or
            patterns. Unlike ``core`` and pins (always loaded), each is a boundary candidate
            with a chance of 0.5 (shared among a bundle's tools), held when the pricing says
            it pays; learned usage priors do the same from history without this setting.
        generic: ``detect``: until the deployment's record has 5 sessions, the tools nearest
            a few generic capabilities (run code, a shell command, read or write a file, fetch
            a URL) are boundary candidates at a chance of 0.15, priced like any pick, as if
            declared ``implicit``; ``off`` (default; the MCP gateway's is ``detect``, where
            many servers' tasks need the generic ones unnamed): declared and learned ones only.
        allow: allow-list of tool names (``None``: all registered tools).
        deny: names never exposed or run.
        embedder: ``minilm`` (offline default) or ``openai`` (an OpenAI-compatible server).
        embed_base_url: base URL of the embeddings server for ``embedder = "openai"``.
        embed_model: model name for the embeddings server.
        embed_timeout: seconds one embeddings request may take before it counts as a failure.
            A CPU server embedding a catalog batch on a busy machine can need more than the
            default; too short, and every retry queues behind the abandoned request.
        embed_catalog: ``background`` (default): a catalog whose tool vectors are not cached
            yet is selected lexically while a background thread embeds it; dense scores join
            once it is done. ``wait``: the first selection embeds the catalog first (batch
            jobs and benches that must not depend on timing).
        skills_dir: folder of ``SKILL.md`` files; ``None`` disables the skill signal.
        result_max_chars: tool results longer than this are shortened with a handle.
        instructions: the caller's system instructions, first in the stable prefix.
        boilerplate_once: state a bundle's shared boilerplate (a span most of its descriptions
            repeat) only on its first shown tool; retrieval still matches whole descriptions
            (matching without the span cost 1.8 points of C@10 on bfcl_multiturn). On by default:
            recall is unchanged and bfcl_multiturn's picks cost 25% fewer tokens (bench/README.md).
            A disabled loader shows every tool unchanged.
        learn: ``on`` learns from every finished turn (which tools were used together, and the
            user message's vector with the tools it led to, each ``load_tools`` query's vector
            with the tools used after it) in the store, shared by every process on it; ``off``
            stores and reads nothing learned (exactly the behaviour without it).
        learn_keep_text: also store each learned turn's user message text and its searches'
            query texts (off: vectors and counts only, no raw text).
        learn_half_life: learned turns (turns that used tools, all sessions) after which what a
            turn taught counts half, so habits can change.
        learn_max_requests: most past turns kept as vectors, and as many past searches (the
            oldest go first).
        learn_max_pairs: most co-use pairs kept (the weakest go first).
        reveal: where tools loaded after a session boundary go. ``append`` (default): the
            prefix (``tools=`` and the system text) holds only what the boundary chose and never
            changes until the next boundary; later tools are revealed at the end of the context
            (a note before the user message that led to them, or the ``load_tools`` answer),
            and called natively through the byte-stable ``call_tool`` bridge, so a prompt cache
            keeps the whole conversation. ``prefix``: later tools join ``tools=`` (every load
            re-prefills the conversation after it; the behaviour before reveals).
        tool_addition: Anthropic only, with ``reveal = "append"``: tooltray's own reveals are a
            mid-conversation system message of ``tool_addition`` blocks (the request then
            carries ``betas`` for ``client.beta.messages.create``) instead of a synthetic
            ``load_tools`` exchange. Off by default: a beta on newer models; a model that
            refuses it degrades the session to the exchange (one log line, a ``degraded`` event).
        code_callers: Anthropic and OpenAI Responses: mark the session's tools callable from
            code the model writes (``allowed_callers``; the provider's code tool is added to
            ``tools=``): ``both`` directly and from code, ``code`` from code only. The
            meta-tools stay direct.
        store_wait: seconds a store call may wait for a database another process holds locked;
            past it the turn goes on with what is known and the changes are queued, to be
            written once the database is free (a turn waits out at most one such budget).
        retain_days: what ``tooltray db prune`` keeps by age: sessions idle longer (with their
            loaded sets, history, turns and stored results), older rows of any session and
            older cached vectors are dropped (``None``: no age limit).
        retain_mb: what ``tooltray db prune`` keeps by size (SQLite): the least recently
            written sessions go until the store fits, then the space is given back.
        gateway_tokens: bearer tokens ``tooltray mcp serve --http`` accepts (``Authorization:
            Bearer <token>``); each is one client credential, and sessions are bound to the
            credential that opened them. Required for an address off loopback.
        gateway_require_token: ask for a token on loopback too (as if the address were public).
        gateway_hosts: ``host:port`` values clients reach an off-loopback gateway by, besides
            the ``--http`` address itself; ``Host`` and ``Origin`` are checked against them.
        gateway_session_idle: seconds an HTTP client's MCP session may have no request in
            flight before the SDK ends it and the gateway releases its state (SDK default).
        gateway_state: the gateway's own state file (first-seen tool fingerprints, session
            owners); ``None``: next to a SQLite store, else ``./tooltray-gateway.json``.
        accept_changed_tools: serve an upstream tool whose description or schema changed since
            it was first seen (off: held back until ``tooltray mcp accept``).
    """

    model_config = SettingsConfigDict(env_prefix="TOOLTRAY_", extra="ignore")

    def __init__(self, **values: Any) -> None:
        """Validate every source; an unknown name or a bad value is one :class:`ConfigError`.

        Unknown names are refused here (not by ``extra="forbid"``) because pydantic-settings
        only reads the environment variables that are fields: a misspelt one would be ignored.
        """
        check_keys(
            [k for k in values if not k.startswith("_")], type(self).model_fields, "Settings(...)"
        )
        check_environment(type(self).model_fields)
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise invalid(exc, values) from None
        except SettingsError as exc:  # a list setting's JSON in the environment is broken
            raise unparsable(exc, type(self).model_fields, values) from None

    db: str | None = None
    enabled: bool = True
    path: RenderPath = "openai"
    max_tools: int = Field(default=24, ge=0, le=1000)
    token_budget: int = Field(default=6000, ge=0)
    hard_max_tools: int = Field(default=64, ge=1)
    idle_turns: int = Field(default=5, ge=1)
    growth: Growth = "on_strong_match"
    context_window: int = Field(default=32768, ge=256)
    activation_share: float = Field(default=0.10, ge=0.0, le=1.0)
    core: list[str] = Field(default_factory=list)
    implicit: list[str] = Field(default_factory=list)
    generic: Literal["detect", "off"] = "off"
    allow: list[str] | None = None
    deny: list[str] = Field(default_factory=list)
    embedder: Literal["minilm", "openai"] = "minilm"
    embed_base_url: str | None = None
    embed_model: str = "text-embedding-3-small"
    embed_timeout: float = Field(default=10.0, gt=0, le=3600.0)
    embed_catalog: Literal["background", "wait"] = "background"
    skills_dir: Path | None = None
    result_max_chars: int = Field(default=1500, ge=100)
    instructions: str = "You are a helpful assistant. Use the tools when they help."
    boilerplate_once: bool = True
    learn: Literal["on", "off"] = "on"
    learn_keep_text: bool = False
    learn_half_life: float = Field(default=2000.0, gt=0)
    learn_max_requests: int = Field(default=10_000, ge=1)
    learn_max_pairs: int = Field(default=50_000, ge=1)
    store_wait: float = Field(default=1.0, ge=0.0, le=3600.0)
    retain_days: float | None = Field(default=None, gt=0)
    retain_mb: float | None = Field(default=None, gt=0)
    reveal: Reveal = "append"
    tool_addition: bool = False
    code_callers: Literal["off", "both", "code"] = "off"
    opening: Literal["priced", "share"] = "priced"
    cost_profile: Literal["latency", "price"] = "latency"
    menu: Literal["priced", "always", "never"] = "priced"
    gateway_tokens: list[str] = Field(default_factory=list)
    gateway_require_token: bool = False
    gateway_hosts: list[str] = Field(default_factory=list)
    gateway_state: Path | None = None
    gateway_session_idle: float = Field(default=1800.0, gt=0, le=86_400.0)
    accept_changed_tools: bool = False

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.embedder == "openai" and not self.embed_base_url:
            raise ConfigError(
                "embedder = 'openai' needs embed_base_url (TOOLTRAY_EMBED_BASE_URL): "
                "set it to the server's /v1 URL, or use embedder = 'minilm'."
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _TomlSource(settings_cls))


def invalid(exc: ValidationError, arguments: dict[str, Any]) -> ConfigError:
    """One line for pydantic's report: the setting, where its value came from, what it must be."""
    error = exc.errors()[0]
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, ConfigError):
        return cause
    field = str(error["loc"][0]) if error["loc"] else ""
    info = Settings.model_fields.get(field)
    if info is None:
        return ConfigError(f"invalid settings: {error['msg']}")
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    default = info.get_default(call_default_factory=True)
    return ConfigError(
        f"setting {field!r} from {source_of(field, arguments)} is invalid: {error['msg']}; "
        f"it must be {expected(info.annotation)} (default {default!r}){more}"
    )
