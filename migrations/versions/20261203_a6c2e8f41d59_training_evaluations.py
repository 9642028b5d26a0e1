"""training evaluations

Revision ID: a6c2e8f41d59
Revises: e5a0c7d3b941
Create Date: 2026-12-03 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision: str = "a6c2e8f41d59"
down_revision: str | Sequence[str] | None = "e5a0c7d3b941"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONB = postgresql.JSONB(astext_type=sa.Text())


def upgrade() -> None:
    """A training run's evaluation table: per evaluated checkpoint and opponent, the races its
    exported bot played against a built-in in the reference engine. A new table: no existing row
    changes."""
    op.create_table(
        "training_evaluations",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("opponent", sa.String(length=32), nullable=False),
        sa.Column("global_step", sa.BigInteger(), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("draws", sa.Integer(), nullable=False),
        sa.Column("losses", sa.Integer(), nullable=False),
        sa.Column("win_rate", sa.Float(), nullable=False),
        sa.Column("win_rate_low", sa.Float(), nullable=False),
        sa.Column("win_rate_high", sa.Float(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        sa.Column("opponent_config", JSONB, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["training_runs.id"],
            name=op.f("fk_training_evaluations_run_id_training_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "iteration", "opponent", name=op.f("pk_training_evaluations")),
    )


def downgrade() -> None:
    """Downgrade schema (the evaluations go with the table)."""
    op.drop_table("training_evaluations")
