"""The evolution pages' data. Evolution runs are their owner's (and admins') only, in the API as
here: the pages carry no run data. `/evolution` and `/evolution/{id}` are shells that
static/evolution_list.js and static/evolution.js fill in the browser from the evolution API, with
the API key the owner pastes (see docs/web.md, "Evolution pages").

The server knows only whether a run id exists (for a 404 page) and which games can be evolved.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlalchemy.orm import Session

from services.gateway.runs.pages import run_exists
from shared.db.models import EvolutionRun
from shared.evolution import EVOLVABLE_GAMES

POLL_MS = 2000
"""How often a run page asks for new events while the run is going."""


@dataclass(frozen=True, slots=True)
class EvolutionRunPage:
    run_id: uuid.UUID
    poll_ms: int


def run_page(session: Session, run_id: uuid.UUID) -> EvolutionRunPage | None:
    """The shell of run `run_id`'s page; None when no run has this id. One query."""
    if not run_exists(session, EvolutionRun.id, run_id):
        return None
    return EvolutionRunPage(run_id=run_id, poll_ms=POLL_MS)


def games() -> tuple[str, ...]:
    return EVOLVABLE_GAMES
