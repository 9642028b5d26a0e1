"""evaluation matches name their evolution run

Revision ID: e5a0c7d3b941
Revises: d81c5a3e9b47
Create Date: 2026-12-02 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "e5a0c7d3b941"
down_revision: str | Sequence[str] | None = "d81c5a3e9b47"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FROM_TOURNAMENTS = """
UPDATE matches AS m SET evolution_run_id = p.run_id
FROM evolution_programs AS p, jsonb_each_text(p.tournament_matches) AS t(spec, match_id)
WHERE m.kind = 'evaluation' AND m.evolution_run_id IS NULL AND t.match_id = m.id::text
"""
"""A program's tournament matches (spec key -> match id), as the evolver recorded them."""
FROM_CANDIDATES = """
UPDATE matches AS m SET evolution_run_id = r.id
FROM match_participants AS mp JOIN evolution_runs AS r ON r.candidate_bot_id = mp.bot_id
WHERE m.kind = 'evaluation' AND m.evolution_run_id IS NULL AND mp.match_id = m.id
"""
"""What the tournaments lost track of: a seat taken by a run's candidate bot."""


def upgrade() -> None:
    """An evaluation match is as private as the evolution run it was played for; without a link
    every such match was public. Older evaluation matches get their run where it can be told (the
    run's programs recorded them, or the run's candidate bot sat in them); the rest stay unlinked,
    which the gateway shows to admins only."""
    op.add_column("matches", sa.Column("evolution_run_id", sa.Uuid(), nullable=True))
    op.create_index(op.f("ix_matches_evolution_run_id"), "matches", ["evolution_run_id"])
    op.create_foreign_key(
        op.f("fk_matches_evolution_run_id_evolution_runs"),
        "matches",
        "evolution_runs",
        ["evolution_run_id"],
        ["id"],
        ondelete="SET NULL",
    )
    op.execute(FROM_TOURNAMENTS)
    op.execute(FROM_CANDIDATES)


def downgrade() -> None:
    op.drop_constraint(op.f("fk_matches_evolution_run_id_evolution_runs"), "matches", type_="foreignkey")
    op.drop_index(op.f("ix_matches_evolution_run_id"), table_name="matches")
    op.drop_column("matches", "evolution_run_id")
