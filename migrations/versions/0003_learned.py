"""learn_pairs and learn_requests: what past turns taught selection (co-use, past requests)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = sa.DateTime(timezone=True)
ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "learn_pairs",
        sa.Column("tool", sa.String(), nullable=False),
        sa.Column("mate", sa.String(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("tool", "mate", name=op.f("pk_learn_pairs")),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "learn_requests",
        sa.Column("id", ROW_ID, autoincrement=True, nullable=False),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("embedder_id", sa.String(), nullable=True),
        sa.Column("dim", sa.Integer(), nullable=True),
        sa.Column("vector", sa.LargeBinary(), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("at", UTC, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_learn_requests")),
        sa.UniqueConstraint("session_id", "turn", name=op.f("uq_learn_requests_session_id_turn")),
    )


def downgrade() -> None:
    op.drop_table("learn_requests")
    op.drop_table("learn_pairs")
