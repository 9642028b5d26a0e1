"""evolution programs' cells cut with their run's grid_bins

Revision ID: d81c5a3e9b47
Revises: c4a9e2f7d316
Create Date: 2026-12-01 10:00:00.000000

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "d81c5a3e9b47"
down_revision: str | Sequence[str] | None = "c4a9e2f7d316"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AXES = {"battle": ("aggression", "accuracy"), "podracing": ("collisions", "boost_timing")}
"""The descriptors on each game's x and y axes (written here, not imported: a migration must not
change when the code does)."""
EARLIER_BINS = "5"
"""What every cell was cut with before this revision, whatever the run asked for."""
RUN_BINS = "COALESCE((r.config -> 'search' ->> 'grid_bins')::int, 5)"
"""The run's grid_bins, in SQL over `evolution_runs AS r`."""


def _axis(name: str, bins: str) -> str:
    """The bin of descriptor `name`, as fitness.cell cuts it: clipped to [0, 1], `bins` a side."""
    value = f"LEAST(1.0, GREATEST(0.0, COALESCE((p.descriptors ->> '{name}')::float, 0.0)))"
    return f"LEAST({bins} - 1, GREATEST(0, FLOOR({value} * {bins})))::int"


def _recut(bins: str) -> None:
    """Each evaluated program of a run with grid_bins other than five gets the cell its stored
    descriptors fall in, cut into `bins` (an SQL expression) bins a side."""
    for game, (x_name, y_name) in AXES.items():
        op.get_bind().execute(
            sa.text(
                f"UPDATE evolution_programs AS p SET cell_x = {_axis(x_name, bins)}, "
                f"cell_y = {_axis(y_name, bins)} FROM evolution_runs AS r "
                f"WHERE p.run_id = r.id AND r.game = :game AND p.cell_x IS NOT NULL AND {RUN_BINS} <> 5"
            ),
            {"game": game},
        )


def upgrade() -> None:
    """Data only. The evaluation placed every program on a five-by-five grid whatever the run's
    search.grid_bins; the code now uses the run's, so a run with another size gets its stored
    cells recut from the stored descriptors (the heat map, the elites and sampling read them)."""
    _recut(RUN_BINS)


def downgrade() -> None:
    """Back to five bins a side, as the earlier code cuts them."""
    _recut(EARLIER_BINS)
