"""evolution runs store their fitness weights

Revision ID: b5d17e4c9a20
Revises: f72e3b015a12
Create Date: 2026-11-29 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

# revision identifiers, used by Alembic.
revision: str = "b5d17e4c9a20"
down_revision: str | Sequence[str] | None = "f72e3b015a12"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WEIGHTS_BEFORE = {
    "battle": {"win_rate": 0.7, "kill_rate": 0.3},
    "podracing": {"win_rate": 0.9, "progress": 0.1},
}
"""The defaults every run created before this revision was judged by (written here, not imported:
a migration must not change when the code's defaults do)."""


def upgrade() -> None:
    """Data only. A run now stores its fitness weights (config.evaluation.fitness_weights), and new
    runs get the game's current defaults; the runs already in the database were judged by the
    earlier defaults and keep them, so a run resumed after the upgrade stays on one scale."""
    bind = op.get_bind()
    runs = bind.execute(sa.text("SELECT id, game, config FROM evolution_runs")).all()
    update = sa.text("UPDATE evolution_runs SET config = :config WHERE id = :id").bindparams(
        sa.bindparam("config", type_=JSONB)
    )
    for run_id, game, config in runs:
        config = dict(config or {})
        evaluation = dict(config.get("evaluation") or {})
        if evaluation.get("fitness_weights") is not None:
            continue
        evaluation["fitness_weights"] = dict(WEIGHTS_BEFORE.get(game, {"win_rate": 1.0}))
        config["evaluation"] = evaluation
        bind.execute(update, {"config": config, "id": run_id})


def downgrade() -> None:
    """Drop the stored weights (the earlier code reads no such field and forbids unknown ones)."""
    bind = op.get_bind()
    runs = bind.execute(sa.text("SELECT id, config FROM evolution_runs")).all()
    update = sa.text("UPDATE evolution_runs SET config = :config WHERE id = :id").bindparams(
        sa.bindparam("config", type_=JSONB)
    )
    for run_id, config in runs:
        evaluation = dict((config or {}).get("evaluation") or {})
        if "fitness_weights" not in evaluation:
            continue
        del evaluation["fitness_weights"]
        bind.execute(update, {"config": {**config, "evaluation": evaluation}, "id": run_id})
