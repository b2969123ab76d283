"""The store's tables as typed SQLAlchemy models; the Alembic migrations must match them exactly.

One session row is the lock every change to that session takes; ``loaded_tools`` is the loaded set
(``position`` fixes the ``tools=`` order); ``history`` is append-only; ``turns`` says what each
turn looked like; ``embeddings`` caches tool-doc vectors; ``results`` keeps full tool results.
``learn_pairs`` and ``learn_requests`` hold what past turns taught (``tooltray.memory.learning``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from tooltray.memory.store.probe import TABLES as TABLES  # re-exported: the models define them

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    """The current time, timezone-aware in UTC (what every timestamp column holds)."""
    return datetime.now(timezone.utc)


class UTCDateTime(TypeDecorator[datetime]):
    """A timestamp that always comes back timezone-aware UTC, even from SQLite (which drops it)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)  # type: ignore[no-any-return]
        return value.astimezone(timezone.utc)  # type: ignore[no-any-return]


# SQLite only aliases INTEGER PRIMARY KEY to the rowid, so BIGINT would not autoincrement there.
HistoryId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    """Declarative base holding the store's metadata (with stable constraint names)."""

    metadata = MetaData(naming_convention=NAMING)


class SessionRow(Base):
    """One conversation: its turn counter, status and free-form meta."""

    __tablename__ = "sessions"

    id: Mapped[str] = mapped_column(String, primary_key=True)
    turn: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String, default="active")
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LoadedToolRow(Base):
    """One tool in a session's loaded set; ``position`` is unique per session and never reused."""

    __tablename__ = "loaded_tools"
    __table_args__ = (UniqueConstraint("session_id", "position"),)

    session_id: Mapped[str] = mapped_column(
        String, ForeignKey("sessions.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String, primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    loaded_turn: Mapped[int] = mapped_column(Integer)
    last_used_turn: Mapped[int | None] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String)
    score: Mapped[float | None] = mapped_column(Float)
    fallback: Mapped[bool] = mapped_column(Boolean, default=False)


class HistoryRow(Base):
    """One append-only event of a session (loaded, used, unloaded, ...)."""

    __tablename__ = "history"
    __table_args__ = (
        Index("ix_history_session_id_turn", "session_id", "turn"),
        Index("ix_history_kind", "kind"),
    )

    id: Mapped[int] = mapped_column(HistoryId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String, ForeignKey("sessions.id"))
    turn: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String)
    tool: Mapped[str | None] = mapped_column(String)
    source: Mapped[str | None] = mapped_column(String)
    score: Mapped[float | None] = mapped_column(Float)
    detail: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TurnRow(Base):
    """What one turn looked like from the model's side (re-recording a turn overwrites it).

    The last five columns are written when the turn completes: ``prompt_reused`` and
    ``prompt_new`` are tooltray's estimate of the turn's prompt tokens (every model call's
    prompt as it rendered it, split at the first part that differs from the call before), the
    ``usage_*`` columns what the provider reported, when the agent passed it with
    ``turn-completed`` (cached and uncached input tokens, output tokens).
    """

    __tablename__ = "turns"

    session_id: Mapped[str] = mapped_column(String, ForeignKey("sessions.id"), primary_key=True)
    turn: Mapped[int] = mapped_column(Integer, primary_key=True)
    prefix_hash: Mapped[str] = mapped_column(String)
    tool_tokens: Mapped[int] = mapped_column(Integer)
    loaded_count: Mapped[int] = mapped_column(Integer)
    eager_tokens: Mapped[int | None] = mapped_column(Integer)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    prompt_reused: Mapped[int | None] = mapped_column(Integer)
    prompt_new: Mapped[int | None] = mapped_column(Integer)
    usage_cached: Mapped[int | None] = mapped_column(Integer)
    usage_uncached: Mapped[int | None] = mapped_column(Integer)
    usage_output: Mapped[int | None] = mapped_column(Integer)


class EmbeddingRow(Base):
    """A cached embedding: float32 bytes of one text (by content hash) under one embedder."""

    __tablename__ = "embeddings"

    embedder_id: Mapped[str] = mapped_column(String, primary_key=True)
    content_hash: Mapped[str] = mapped_column(String, primary_key=True)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class ResultRow(Base):
    """The full text of a long tool result; the model sees a compressed view and its handle."""

    __tablename__ = "results"
    __table_args__ = (Index("ix_results_session_id", "session_id"),)

    handle: Mapped[str] = mapped_column(String, primary_key=True)
    session_id: Mapped[str] = mapped_column(String)
    turn: Mapped[int] = mapped_column(Integer)
    tool: Mapped[str] = mapped_column(String)
    content: Mapped[str] = mapped_column(Text)
    chars: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class MetaRow(Base):
    """Facts about the database itself, e.g. which tooltray version last upgraded it."""

    __tablename__ = "tooltray_meta"

    key: Mapped[str] = mapped_column(String, primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class LearnPairRow(Base):
    """Co-use: how often ``mate`` was used in the same or an adjacent turn as ``tool``.

    ``weight`` is a decayed count kept in a growing scale (see ``tooltray.memory.store.learned``):
    only ratios of weights mean anything, and ``tool = mate`` holds the tool's own turn count.
    """

    __tablename__ = "learn_pairs"
    __table_args__ = {"sqlite_with_rowid": False}  # clustered by (tool, mate): reads stay fast

    tool: Mapped[str] = mapped_column(String, primary_key=True)
    mate: Mapped[str] = mapped_column(String, primary_key=True)
    weight: Mapped[float] = mapped_column(Float)


class LearnRequestRow(Base):
    """One past turn that used tools: its user message's vector and the tools it led to.

    The id orders learned turns and is the clock their decay counts in. ``text`` stays empty
    unless ``learn_keep_text`` is on.
    """

    __tablename__ = "learn_requests"
    __table_args__ = (UniqueConstraint("session_id", "turn"),)

    id: Mapped[int] = mapped_column(HistoryId, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(String)
    turn: Mapped[int] = mapped_column(Integer)
    tools: Mapped[list[str]] = mapped_column(JSON)
    embedder_id: Mapped[str | None] = mapped_column(String)
    dim: Mapped[int | None] = mapped_column(Integer)
    vector: Mapped[bytes | None] = mapped_column(LargeBinary)
    text: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
