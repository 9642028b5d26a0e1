"""match list indexes

Revision ID: c4a9e2f7d316
Revises: b5d17e4c9a20
Create Date: 2026-11-30 10:00:00.000000

"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "c4a9e2f7d316"
down_revision: str | Sequence[str] | None = "b5d17e4c9a20"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Match lists read newest first; without these every page sorted all matches of its game."""
    op.create_index("ix_matches_created", "matches", ["created_at", "id"])
    op.create_index("ix_matches_game_created", "matches", ["game", "created_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_matches_game_created", table_name="matches")
    op.drop_index("ix_matches_created", table_name="matches")
