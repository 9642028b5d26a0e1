"""training runs

Revision ID: 7c1e5a3d2b90
Revises: 9f6de0b9ffe9
Create Date: 2026-11-25 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision: str = "7c1e5a3d2b90"
down_revision: str | Sequence[str] | None = "9f6de0b9ffe9"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

JSONB = postgresql.JSONB(astext_type=sa.Text())
LATEST_CHECKPOINT_FK = "fk_training_runs_latest_checkpoint_id_training_checkpoints"


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "training_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("config", JSONB, nullable=False),
        sa.Column("pending_changes", JSONB, nullable=False),
        sa.Column("changes_version", sa.Integer(), server_default="0", nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("iteration", sa.Integer(), server_default="0", nullable=False),
        sa.Column("global_step", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("elapsed_s", sa.Float(), server_default="0", nullable=False),
        sa.Column("latest_checkpoint_id", sa.Uuid(), nullable=True),
        sa.Column("bot_id", sa.Uuid(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_training_runs_bot_id_bots"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_training_runs_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_training_runs_owner_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_runs")),
        sa.UniqueConstraint("job_id", name=op.f("uq_training_runs_job_id")),
    )
    op.create_index(op.f("ix_training_runs_owner_id"), "training_runs", ["owner_id"], unique=False)
    op.create_table(
        "training_checkpoints",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("global_step", sa.BigInteger(), nullable=False),
        sa.Column("stage", sa.String(length=16), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("bot_source", sa.Text(), nullable=True),
        sa.Column("bot_contract", sa.String(length=16), nullable=True),
        sa.Column("summary", JSONB, nullable=False),
        sa.Column("exported_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("pruned_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("race_replay", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["training_runs.id"],
            name=op.f("fk_training_checkpoints_run_id_training_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_training_checkpoints")),
        sa.UniqueConstraint("run_id", "iteration", name="uq_training_checkpoints_run_iteration"),
    )
    op.create_index(op.f("ix_training_checkpoints_run_id"), "training_checkpoints", ["run_id"], unique=False)
    op.create_foreign_key(
        op.f(LATEST_CHECKPOINT_FK),
        "training_runs",
        "training_checkpoints",
        ["latest_checkpoint_id"],
        ["id"],
        ondelete="SET NULL",
    )
    op.create_table(
        "training_metrics",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("iteration", sa.Integer(), nullable=False),
        sa.Column("global_step", sa.BigInteger(), nullable=False),
        sa.Column("metrics", JSONB, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["training_runs.id"],
            name=op.f("fk_training_metrics_run_id_training_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "iteration", name=op.f("pk_training_metrics")),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("training_metrics")
    op.drop_constraint(op.f(LATEST_CHECKPOINT_FK), "training_runs", type_="foreignkey")
    op.drop_index(op.f("ix_training_checkpoints_run_id"), table_name="training_checkpoints")
    op.drop_table("training_checkpoints")
    op.drop_index(op.f("ix_training_runs_owner_id"), table_name="training_runs")
    op.drop_table("training_runs")
