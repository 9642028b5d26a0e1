"""The program database's logic: islands with migration, the MAP-Elites grid, parent and
inspiration sampling, generation statistics. Pure functions over `ProgramView`s (the rows live in
PostgreSQL, see services/evolver/store/), so every rule here is tested without a database.

Islands keep lineages apart so one early winner cannot take over the whole population; every
`migration_interval` generations each island's best program also joins the next island's pool.
The grid keeps the best program per cell of behaviour descriptors (MAP-Elites), so different
styles of play survive even when one of them scores higher for now. A parent is drawn by
exploitation (a tournament among the island's pool, favouring the root's selection and judged by
Nash-averaged fitness or plain fitness, as the run's `parent_selection` says) with probability
1 - exploration_ratio, else by exploration (a uniform draw over the grid's elites).
"""

from __future__ import annotations

import random
import statistics
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from shared.states import ParentSelection, ProgramStatus

TOURNAMENT_SIZE = 3


@dataclass(frozen=True, slots=True)
class ProgramView:
    id: uuid.UUID
    seq: int
    generation: int
    island: int
    status: ProgramStatus
    fitness: float | None
    cell: tuple[int, int] | None
    parent_id: uuid.UUID | None = None
    nash_fitness: float | None = None
    last_round: int | None = None
    """With rematches: the last generation whose matches this program played (see played_in)."""

    @property
    def name(self) -> str:
        return f"p{self.seq}"

    @property
    def evaluated(self) -> bool:
        return self.status == ProgramStatus.EVALUATED and self.fitness is not None

    @property
    def score(self) -> float:
        return self.fitness if self.fitness is not None else -1.0

    def played_in(self, generation: int) -> bool:
        """Whether the program's fitness counts that generation's matches: it was made in it, or
        (with rematches) kept as a parent and rematched in it."""
        return self.generation == generation or self.last_round == generation

    def selection_score(self, selection: ParentSelection = ParentSelection.NASH) -> float:
        if selection == ParentSelection.NASH and self.nash_fitness is not None:
            return self.nash_fitness
        return self.score


@dataclass
class Islands:
    """Which programs each island's pool holds beyond its own: migrants from other islands."""

    count: int
    migrants: dict[int, list[str]] = field(default_factory=dict)
    """island -> program ids (uuid strings) that migrated into it."""

    @classmethod
    def from_json(cls, count: int, data: dict[str, Any]) -> Islands:
        raw = data.get("migrants", {}) if isinstance(data, dict) else {}
        migrants = {int(k): [str(v) for v in vs] for k, vs in raw.items() if str(k).isdigit()}
        return cls(count, migrants)

    def to_json(self) -> dict[str, Any]:
        return {"migrants": {str(k): v for k, v in sorted(self.migrants.items())}}

    def pool(self, programs: Sequence[ProgramView], island: int) -> list[ProgramView]:
        guests = set(self.migrants.get(island, []))
        return [p for p in programs if p.evaluated and (p.island == island or str(p.id) in guests)]

    def migrate(self, programs: Sequence[ProgramView]) -> list[tuple[int, int, str]]:
        """Each island's best joins the next island's pool (a ring). Returns (from, to, program)."""
        moves: list[tuple[int, int, str]] = []
        if self.count < 2:
            return moves
        for island in range(self.count):
            own = [p for p in programs if p.evaluated and p.island == island]
            if not own:
                continue
            best = max(own, key=lambda p: (p.score, -p.seq))
            target = (island + 1) % self.count
            guests = self.migrants.setdefault(target, [])
            if str(best.id) not in guests:
                guests.append(str(best.id))
                moves.append((island, target, best.name))
        return moves


def elites(programs: Iterable[ProgramView]) -> dict[tuple[int, int], ProgramView]:
    """The MAP-Elites grid: the best evaluated program of each occupied cell."""
    grid: dict[tuple[int, int], ProgramView] = {}
    for p in programs:
        if not p.evaluated or p.cell is None:
            continue
        held = grid.get(p.cell)
        if held is None or (p.score, -p.seq) > (held.score, -held.seq):
            grid[p.cell] = p
    return grid


def occupancy(programs: Sequence[ProgramView], bins: int, islands: int) -> dict[str, Any]:
    grid = elites(programs)
    per_island = {
        str(i): len({p.cell for p in programs if p.evaluated and p.cell is not None and p.island == i})
        for i in range(islands)
    }
    return {
        "cells_filled": len(grid),
        "cells_total": bins * bins,
        "islands_filled": sum(1 for n in per_island.values() if n > 0),
        "cells_per_island": per_island,
    }


def _tournament(pool: Sequence[ProgramView], rng: random.Random, selection: ParentSelection) -> ProgramView:
    """Exploitation: the best of a few random entrants, judged by Nash-averaged fitness where the
    payoff table gives one and the run asks for it (beating strong opponents counts more than
    farming weak ones), else by fitness."""
    entrants = [pool[rng.randrange(len(pool))] for _ in range(min(TOURNAMENT_SIZE, len(pool)))]
    return max(entrants, key=lambda p: (p.selection_score(selection), p.score, -p.seq))


@dataclass(frozen=True, slots=True)
class Draw:
    parent: ProgramView
    inspirations: tuple[ProgramView, ...]
    how: str
    """"exploitation" or "exploration"."""


def sample(
    programs: Sequence[ProgramView],
    islands: Islands,
    island: int,
    selected: Sequence[str],
    rng: random.Random,
    *,
    exploration_ratio: float,
    inspirations: int,
    selection: ParentSelection = ParentSelection.NASH,
) -> Draw | None:
    """A parent for a child on `island`, and inspirations that differ from it (other cells, other
    islands). None when nothing has been evaluated successfully yet."""
    evaluated = [p for p in programs if p.evaluated]
    if not evaluated:
        return None
    grid = list(elites(evaluated).values())
    if grid and rng.random() < exploration_ratio:
        parent, how = grid[rng.randrange(len(grid))], "exploration"
    else:
        pool = islands.pool(evaluated, island) or evaluated
        chosen = [p for p in pool if str(p.id) in set(selected)]
        parent, how = _tournament(chosen or pool, rng, selection), "exploitation"
    others = [p for p in (grid or evaluated) if p.id != parent.id and p.cell != parent.cell]
    others += [p for p in evaluated if p.island != parent.island and p.id != parent.id and p not in others]
    others.sort(key=lambda p: (-p.score, p.seq))
    picks: list[ProgramView] = []
    for p in others[: max(4, inspirations * 2)]:
        if len(picks) >= inspirations:
            break
        if rng.random() < 0.75 or len(others) <= inspirations:
            picks.append(p)
    return Draw(parent, tuple(picks), how)


def _summary(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"best": None, "median": None, "mean": None}
    return {
        "best": round(max(values), 4),
        "median": round(statistics.median(values), 4),
        "mean": round(statistics.fmean(values), 4),
    }


def generation_stats(programs: Sequence[ProgramView], generation: int, islands: int) -> dict[str, Any]:
    """Fitness of one generation's evaluated programs, overall and per island, with counts."""
    mine = [p for p in programs if p.generation == generation]
    scored = [p for p in mine if p.evaluated]
    out: dict[str, Any] = {
        "generation": generation,
        "programs": len(mine),
        "evaluated": len(scored),
        "failed": sum(1 for p in mine if p.status == ProgramStatus.FAILED),
        "rejected": sum(1 for p in mine if p.status == ProgramStatus.REJECTED),
        "pending": sum(1 for p in mine if p.status == ProgramStatus.PENDING),
        **_summary([p.score for p in scored]),
        "islands": {str(i): _summary([p.score for p in scored if p.island == i]) for i in range(islands)},
    }
    leader = top(programs, 1, generation=generation)
    out["leader"] = (
        {"id": leader[0].name, "fitness": round(leader[0].score, 4), "generation": leader[0].generation}
        if leader
        else None
    )
    return out


def top(programs: Sequence[ProgramView], n: int, generation: int | None = None) -> list[ProgramView]:
    """The best `n` evaluated programs, of the run or of one generation's field (made or rematched
    in it)."""
    pool = [p for p in programs if p.evaluated and (generation is None or p.played_in(generation))]
    return sorted(pool, key=lambda p: (-p.score, p.seq))[:n]


def trends(
    programs: Sequence[ProgramView], current: int, *, field_leaders: Sequence[int] | None = None
) -> dict[str, Any]:
    """Best and median per generation, the running best, and how long since the run improved.

    Without racing, a program's fitness is fixed once evaluated, so the run improved when a
    generation's best beat every earlier one. With racing (kept parents replay each generation's
    matches) the earlier figures are not comparable: a child that drew lucky matches and was not
    kept keeps its lucky figure forever, and would mark as stagnant a run whose leaders are in fact
    getting better. There `field_leaders` gives the generation in which each closed generation's
    leader (the best of its field, on common matches) was made, and the run last improved when it
    made the newest program that has led a field, the current one included. Not the age of the
    current leader alone: an old program that takes the lead back when a newer one sinks would
    make that figure jump, and stop a run that was moving a generation earlier."""
    rows = []
    running: float | None = None
    last_gain = 0
    for g in range(current + 1):
        scores = [p.score for p in programs if p.generation == g and p.evaluated]
        best = max(scores) if scores else None
        if best is not None and (running is None or best > running + 1e-9):
            running, last_gain = best, g
        rows.append(
            {
                "generation": g,
                "best": None if best is None else round(best, 4),
                "median": round(statistics.median(scores), 4) if scores else None,
                "running_best": None if running is None else round(running, 4),
                "evaluated": len(scores),
            }
        )
    recent = [r["running_best"] for r in rows[-4:] if r["running_best"] is not None]
    rate = (recent[-1] - recent[0]) / max(1, len(recent) - 1) if len(recent) >= 2 else 0.0
    if field_leaders is None:
        stagnant = current - last_gain if running is not None else current
    else:
        made = [*field_leaders, *(p.generation for p in top(programs, 1, generation=current))]
        stagnant = current - max(made) if made else current
    return {
        "generations": rows,
        "improvement_per_generation": round(rate, 4),
        "generations_without_improvement": stagnant,
    }
