"""match sent_at

Revision ID: a83d5f0c2e71
Revises: 4e8b2c6a1f37
Create Date: 2026-11-27 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "a83d5f0c2e71"
down_revision: str | Sequence[str] | None = "4e8b2c6a1f37"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema.

    Existing rows get the time of the migration (a constant default: no table rewrite), so a match
    that was queued before it and is still queued is resent one `lost_match_after_s` later."""
    op.add_column(
        "matches",
        sa.Column("sent_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("matches", "sent_at")
