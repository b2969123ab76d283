"""initial schema: sessions, loaded_tools, history, turns, embeddings, results

Revision ID: 0001
Revises:
Create Date: 2025-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sessions",
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(), nullable=False),
        sa.Column("meta", sa.JSON(), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("updated_at", UTC, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
    )
    op.create_table(
        "loaded_tools",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("loaded_turn", sa.Integer(), nullable=False),
        sa.Column("last_used_turn", sa.Integer(), nullable=True),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("fallback", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"],
            ["sessions.id"],
            name=op.f("fk_loaded_tools_session_id_sessions"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("session_id", "name", name=op.f("pk_loaded_tools")),
        sa.UniqueConstraint(
            "session_id", "position", name=op.f("uq_loaded_tools_session_id_position")
        ),
    )
    op.create_table(
        "history",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(), nullable=False),
        sa.Column("tool", sa.String(), nullable=True),
        sa.Column("source", sa.String(), nullable=True),
        sa.Column("score", sa.Float(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("at", UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.id"], name=op.f("fk_history_session_id_sessions")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_history")),
    )
    op.create_index("ix_history_session_id_turn", "history", ["session_id", "turn"])
    op.create_index("ix_history_kind", "history", ["kind"])
    op.create_table(
        "turns",
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("prefix_hash", sa.String(), nullable=False),
        sa.Column("tool_tokens", sa.Integer(), nullable=False),
        sa.Column("loaded_count", sa.Integer(), nullable=False),
        sa.Column("eager_tokens", sa.Integer(), nullable=True),
        sa.Column("at", UTC, nullable=False),
        sa.ForeignKeyConstraint(
            ["session_id"], ["sessions.id"], name=op.f("fk_turns_session_id_sessions")
        ),
        sa.PrimaryKeyConstraint("session_id", "turn", name=op.f("pk_turns")),
    )
    op.create_table(
        "embeddings",
        sa.Column("embedder_id", sa.String(), nullable=False),
        sa.Column("content_hash", sa.String(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.PrimaryKeyConstraint("embedder_id", "content_hash", name=op.f("pk_embeddings")),
    )
    op.create_table(
        "results",
        sa.Column("handle", sa.String(), nullable=False),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("chars", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.PrimaryKeyConstraint("handle", name=op.f("pk_results")),
    )
    op.create_index("ix_results_session_id", "results", ["session_id"])


def downgrade() -> None:
    op.drop_index("ix_results_session_id", table_name="results")
    op.drop_table("results")
    op.drop_table("embeddings")
    op.drop_table("turns")
    op.drop_index("ix_history_kind", table_name="history")
    op.drop_index("ix_history_session_id_turn", table_name="history")
    op.drop_table("history")
    op.drop_table("loaded_tools")
    op.drop_table("sessions")
