"""learn_searches: what past load_tools searches led to (the tools their turn then used)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = sa.DateTime(timezone=True)
ROW_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """A new table: a store learned before this revision has no past searches yet."""
    op.create_table(
        "learn_searches",
        sa.Column("id", ROW_ID, autoincrement=True, nullable=False),
        sa.Column("session_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("tools", sa.JSON(), nullable=False),
        sa.Column("embedder_id", sa.String(), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("vector", sa.LargeBinary(), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("at", UTC, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_learn_searches")),
    )


def downgrade() -> None:
    op.drop_table("learn_searches")
