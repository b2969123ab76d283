"""embeddings: when each cached vector was last looked up (retention keeps the vectors in use)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """A vector cached before this revision counts as used when it was made."""
    op.add_column("embeddings", sa.Column("used_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("UPDATE embeddings SET used_at = created_at")
    with op.batch_alter_table("embeddings") as batch:
        batch.alter_column("used_at", existing_type=sa.DateTime(timezone=True), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("embeddings") as batch:
        batch.drop_column("used_at")
