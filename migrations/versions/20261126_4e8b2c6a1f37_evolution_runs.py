"""evolution runs

Revision ID: 4e8b2c6a1f37
Revises: 7c1e5a3d2b90
Create Date: 2026-11-26 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

# revision identifiers, used by Alembic.
revision: str = "4e8b2c6a1f37"
down_revision: str | Sequence[str] | None = "7c1e5a3d2b90"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BEST_PROGRAM_FK = "fk_evolution_runs_best_program_id_evolution_programs"


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "evolution_runs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("job_id", sa.Uuid(), nullable=False),
        sa.Column("owner_id", sa.Uuid(), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("config", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("parameters", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("generation", sa.Integer(), server_default="0", nullable=False),
        sa.Column("best_program_id", sa.Uuid(), nullable=True),
        sa.Column("best_fitness", sa.Float(), nullable=True),
        sa.Column("spent_usd", sa.Float(), server_default="0", nullable=False),
        sa.Column("tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("llm_calls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("elapsed_s", sa.Float(), server_default="0", nullable=False),
        sa.Column("termination_reason", sa.Text(), nullable=True),
        sa.Column("islands", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("api_key_encrypted", sa.LargeBinary(), nullable=True),
        sa.Column("candidate_bot_id", sa.Uuid(), nullable=True),
        sa.Column("bot_id", sa.Uuid(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["bot_id"], ["bots.id"], name=op.f("fk_evolution_runs_bot_id_bots"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["candidate_bot_id"],
            ["bots.id"],
            name=op.f("fk_evolution_runs_candidate_bot_id_bots"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["job_id"], ["jobs.id"], name=op.f("fk_evolution_runs_job_id_jobs"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["users.id"], name=op.f("fk_evolution_runs_owner_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evolution_runs")),
        sa.UniqueConstraint("job_id", name=op.f("uq_evolution_runs_job_id")),
    )
    op.create_index(op.f("ix_evolution_runs_owner_id"), "evolution_runs", ["owner_id"], unique=False)
    op.create_table(
        "evolution_events",
        sa.Column("id", sa.BigInteger(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("data", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["evolution_runs.id"],
            name=op.f("fk_evolution_events_run_id_evolution_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evolution_events")),
        sa.UniqueConstraint("run_id", "key", name="uq_evolution_events_run_key"),
    )
    op.create_index(op.f("ix_evolution_events_run_id"), "evolution_events", ["run_id"], unique=False)
    op.create_table(
        "evolution_generations",
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("selected_ids", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("reasoning", sa.Text(), nullable=True),
        sa.Column("stats", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["evolution_runs.id"],
            name=op.f("fk_evolution_generations_run_id_evolution_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("run_id", "number", name=op.f("pk_evolution_generations")),
    )
    op.create_table(
        "evolution_llm_calls",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("key", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("failure", sa.String(length=32), nullable=True),
        sa.Column("messages", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("tool_calls", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("rejected_tool_calls", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("usage_estimated", sa.Boolean(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("latency_ms", sa.Float(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["evolution_runs.id"],
            name=op.f("fk_evolution_llm_calls_run_id_evolution_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evolution_llm_calls")),
        sa.UniqueConstraint("run_id", "key", name="uq_evolution_llm_calls_run_key"),
    )
    op.create_index(op.f("ix_evolution_llm_calls_run_id"), "evolution_llm_calls", ["run_id"], unique=False)
    op.create_table(
        "evolution_programs",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("run_id", sa.Uuid(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("generation", sa.Integer(), nullable=False),
        sa.Column("island", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.Uuid(), nullable=True),
        sa.Column("inspiration_ids", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("origin", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("diff", sa.Text(), nullable=True),
        sa.Column("focus", sa.Text(), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=True),
        sa.Column("stage", sa.String(length=16), nullable=True),
        sa.Column("fitness", sa.Float(), nullable=True),
        sa.Column("nash_fitness", sa.Float(), nullable=True),
        sa.Column("metrics", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("descriptors", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("cell_x", sa.Integer(), nullable=True),
        sa.Column("cell_y", sa.Integer(), nullable=True),
        sa.Column("feedback", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("tournament_matches", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("version_id", sa.Uuid(), nullable=True),
        sa.Column("promoted_version_id", sa.Uuid(), nullable=True),
        sa.Column("created_key", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("evaluated_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["parent_id"],
            ["evolution_programs.id"],
            name=op.f("fk_evolution_programs_parent_id_evolution_programs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["promoted_version_id"],
            ["bot_versions.id"],
            name=op.f("fk_evolution_programs_promoted_version_id_bot_versions"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["run_id"],
            ["evolution_runs.id"],
            name=op.f("fk_evolution_programs_run_id_evolution_runs"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["version_id"],
            ["bot_versions.id"],
            name=op.f("fk_evolution_programs_version_id_bot_versions"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evolution_programs")),
        sa.UniqueConstraint("run_id", "code_hash", name="uq_evolution_programs_run_code_hash"),
        sa.UniqueConstraint("run_id", "seq", name="uq_evolution_programs_run_seq"),
    )
    op.create_index(op.f("ix_evolution_programs_run_id"), "evolution_programs", ["run_id"], unique=False)
    op.create_index(op.f("ix_evolution_programs_status"), "evolution_programs", ["status"], unique=False)
    op.create_foreign_key(
        BEST_PROGRAM_FK,
        "evolution_runs",
        "evolution_programs",
        ["best_program_id"],
        ["id"],
        ondelete="SET NULL",
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_constraint(BEST_PROGRAM_FK, "evolution_runs", type_="foreignkey")
    op.drop_index(op.f("ix_evolution_programs_status"), table_name="evolution_programs")
    op.drop_index(op.f("ix_evolution_programs_run_id"), table_name="evolution_programs")
    op.drop_table("evolution_programs")
    op.drop_index(op.f("ix_evolution_llm_calls_run_id"), table_name="evolution_llm_calls")
    op.drop_table("evolution_llm_calls")
    op.drop_table("evolution_generations")
    op.drop_index(op.f("ix_evolution_events_run_id"), table_name="evolution_events")
    op.drop_table("evolution_events")
    op.drop_index(op.f("ix_evolution_runs_owner_id"), table_name="evolution_runs")
    op.drop_table("evolution_runs")
