"""tooltray_meta: key/value facts about the database (which tooltray last upgraded it)

Revision ID: 0002
Revises: 0001
Create Date: 2025-01-02 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tooltray_meta",
        sa.Column("key", sa.String(), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_tooltray_meta")),
    )


def downgrade() -> None:
    op.drop_table("tooltray_meta")
