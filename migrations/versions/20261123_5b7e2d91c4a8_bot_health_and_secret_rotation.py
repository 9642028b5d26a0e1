"""bot health and secret rotation

Revision ID: 5b7e2d91c4a8
Revises: c3f49529d6e3
Create Date: 2026-11-23 16:20:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "5b7e2d91c4a8"
down_revision: str | Sequence[str] | None = "c3f49529d6e3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("bots", sa.Column("previous_secret_encrypted", sa.LargeBinary(), nullable=True))
    op.add_column("bots", sa.Column("secret_rotated_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("bots", sa.Column("status_reason", sa.Text(), nullable=True))
    op.add_column("bots", sa.Column("suspended_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("bots", sa.Column("health_failures", sa.Integer(), server_default="0", nullable=False))
    op.add_column("bots", sa.Column("last_health_check_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("bots", sa.Column("last_health_error", sa.Text(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("bots", "last_health_error")
    op.drop_column("bots", "last_health_check_at")
    op.drop_column("bots", "health_failures")
    op.drop_column("bots", "suspended_at")
    op.drop_column("bots", "status_reason")
    op.drop_column("bots", "secret_rotated_at")
    op.drop_column("bots", "previous_secret_encrypted")
