"""replay storage

Revision ID: f72e3b015a12
Revises: a83d5f0c2e71
Create Date: 2026-11-28 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "f72e3b015a12"
down_revision: str | Sequence[str] | None = "a83d5f0c2e71"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema.

    `replays` becomes the index of replays: where each one lives (`storage`, `key`) next to its
    figures. Existing rows keep their bytes in `data` and say so (`storage` = database, a constant
    default: no table rewrite); `python -m shared.replay_store.migrate` moves them out later."""
    op.add_column(
        "replays",
        sa.Column("storage", sa.String(length=16), server_default="database", nullable=False),
    )
    op.add_column("replays", sa.Column("key", sa.String(length=255), nullable=True))
    op.alter_column("replays", "data", existing_type=sa.LargeBinary(), nullable=True)
    op.create_check_constraint(
        op.f("ck_replays_data_or_key"), "replays", "data IS NOT NULL OR key IS NOT NULL"
    )


def downgrade() -> None:
    """Downgrade schema; only while every replay's bytes are still in the database."""
    outside = op.get_bind().scalar(sa.text("SELECT count(*) FROM replays WHERE data IS NULL"))
    if outside:
        raise RuntimeError(
            f"{outside} replays live in a replay store, not in the database; the previous schema "
            "cannot point at them. Keep this revision (or delete those replays) before downgrading."
        )
    op.drop_constraint(op.f("ck_replays_data_or_key"), "replays", type_="check")
    op.alter_column("replays", "data", existing_type=sa.LargeBinary(), nullable=False)
    op.drop_column("replays", "key")
    op.drop_column("replays", "storage")
