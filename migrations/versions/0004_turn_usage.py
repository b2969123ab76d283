"""turns: each turn's prompt tokens re-used and new (tooltray's estimate) and the provider's usage

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("prompt_reused", "prompt_new", "usage_cached", "usage_uncached", "usage_output")


def upgrade() -> None:
    for name in COLUMNS:
        op.add_column("turns", sa.Column(name, sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("turns") as batch:
        for name in reversed(COLUMNS):
            batch.drop_column(name)
