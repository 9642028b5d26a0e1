"""What the server side of a kind's run pages needs: the pages carry no run data (runs are their
owner's, and the browser asks the API with the owner's key), so only whether a run id exists."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute, Session


def run_exists(session: Session, id_column: InstrumentedAttribute[uuid.UUID], run_id: uuid.UUID) -> bool:
    """Whether the kind whose runs' id column is `id_column` has a run `run_id` (else a 404 page)."""
    return session.scalar(select(id_column).where(id_column == run_id)) is not None
