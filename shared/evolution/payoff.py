"""The payoff table of an evolution run (programs x opponents win rates, from each evaluated
program's `metrics["per_opponent"]`) and its Nash-averaged fitness, for the API and the run pages.

Why Nash averaging: plain win rate over a fixed set of opponents rewards beating the easy ones.
Here the opponents play the mixture that holds the programs down most (the maximin strategy of
the zero-sum meta-game where a program scores win rate - 0.5), and a program's Nash fitness is its
expected win rate against that mixture: opponents everyone beats get no weight.

Each win rate is first shrunk toward the program's own overall win rate by PRIOR_GAMES games
worth (an empirical-Bayes estimate): against three opponents a young program has played each
only a few times, and the mixture rests on the hardest one or two, so the raw cells would rank
programs by two or three matches each.

The meta-game is solved by multiplicative weights on both sides for a fixed number of rounds from
uniform starts (the averaged strategies approach the equilibrium at about sqrt(log n / rounds)):
no LP solver, and the same table always gives the same answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

UNKNOWN_WIN_RATE = 0.5
"""A program that never met an opponent counts as even with it: no information either way."""
DEFAULT_ROUNDS = 4000
PRIOR_GAMES = 6.0
"""How many games' worth of weight a program's overall win rate has in each of its cells."""


@dataclass(frozen=True, slots=True)
class PayoffCell:
    wins: int
    draws: int
    losses: int
    games: int

    @property
    def win_rate(self) -> float | None:
        """Wins plus half the draws, per game played; None when none was."""
        return (self.wins + 0.5 * self.draws) / self.games if self.games > 0 else None


@dataclass(slots=True)
class PayoffTable:
    programs: list[str] = field(default_factory=list)
    opponents: list[str] = field(default_factory=list)
    cells: dict[tuple[str, str], PayoffCell] = field(default_factory=dict)

    def matrix(self, unknown: float = UNKNOWN_WIN_RATE) -> list[list[float]]:
        """Win rates with programs as rows and opponents as columns; `unknown` where they never met."""
        out: list[list[float]] = []
        for program in self.programs:
            row = []
            for opponent in self.opponents:
                cell = self.cells.get((program, opponent))
                rate = cell.win_rate if cell is not None else None
                row.append(unknown if rate is None else rate)
            out.append(row)
        return out

    def estimates(self, prior_games: float = PRIOR_GAMES) -> list[list[float]]:
        """Each program's win rate per opponent shrunk toward its overall win rate, with that rate
        weighing `prior_games` games; a cell it never played is its overall rate."""
        out: list[list[float]] = []
        for program in self.programs:
            cells = [self.cells.get((program, opponent)) for opponent in self.opponents]
            points = sum(c.wins + 0.5 * c.draws for c in cells if c is not None)
            games = sum(c.games for c in cells if c is not None)
            overall = points / games if games else UNKNOWN_WIN_RATE
            row = []
            for cell in cells:
                if cell is None or cell.games == 0:
                    row.append(overall)
                else:
                    own = cell.wins + 0.5 * cell.draws
                    row.append((own + prior_games * overall) / (cell.games + prior_games))
            out.append(row)
        return out


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and math.isfinite(value) and value > 0 else 0


def payoff_table(rows: Iterable[tuple[str, Mapping[str, Any] | None]]) -> PayoffTable:
    """A table from (program name, its metrics) pairs; programs without any played game against
    anyone are left out, opponents are sorted by name."""
    table = PayoffTable()
    opponents: set[str] = set()
    for name, metrics in rows:
        per_opponent = (metrics or {}).get("per_opponent")
        if not isinstance(per_opponent, Mapping):
            continue
        played = False
        for opponent, record in per_opponent.items():
            if not isinstance(record, Mapping):
                continue
            wins, draws, losses = (_count(record.get(k)) for k in ("wins", "draws", "losses"))
            games = _count(record.get("games")) or wins + draws + losses
            if games == 0:
                continue
            table.cells[(name, str(opponent))] = PayoffCell(wins, draws, losses, games)
            opponents.add(str(opponent))
            played = True
        if played:
            table.programs.append(name)
    table.opponents = sorted(opponents)
    return table


@dataclass(frozen=True, slots=True)
class MetaGameSolution:
    row_mixture: list[float]
    column_mixture: list[float]
    value: float
    """The row player's expected payoff under both averaged mixtures."""
    gap: float
    """What a best reply gains either side against the averaged mixtures, summed (0: exact)."""


def solve_meta_game(payoff: Sequence[Sequence[float]], rounds: int = DEFAULT_ROUNDS) -> MetaGameSolution:
    """An approximate equilibrium of the zero-sum game where the row player gets payoff[i][j]
    and the column player pays it: both sides run multiplicative weights from uniform, and the
    averages of their strategies are returned. Deterministic."""
    a = np.asarray(payoff, dtype=float)
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError("a payoff table needs at least one row and one column")
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    n_rows, n_cols = a.shape
    scale = float(a.max() - a.min()) or 1.0
    step_rows = math.sqrt(8.0 * math.log(max(n_rows, 2)) / rounds) / scale
    step_cols = math.sqrt(8.0 * math.log(max(n_cols, 2)) / rounds) / scale
    rows = np.full(n_rows, 1.0 / n_rows)
    cols = np.full(n_cols, 1.0 / n_cols)
    rows_total = np.zeros(n_rows)
    cols_total = np.zeros(n_cols)
    for _ in range(rounds):
        rows_total += rows
        cols_total += cols
        gains = a @ cols
        losses = rows @ a
        rows = rows * np.exp(step_rows * (gains - gains.max()))
        rows /= rows.sum()
        cols = cols * np.exp(-step_cols * (losses - losses.min()))
        cols /= cols.sum()
    row_avg = rows_total / rounds
    col_avg = cols_total / rounds
    value = float(row_avg @ a @ col_avg)
    gap = float((a @ col_avg).max() - (row_avg @ a).min())
    return MetaGameSolution([float(v) for v in row_avg], [float(v) for v in col_avg], value, gap)


@dataclass(frozen=True, slots=True)
class NashAveraging:
    mixture: dict[str, float]
    """Opponent -> its weight in the opponents' maximin mixture."""
    fitness: dict[str, float]
    """Program -> its expected win rate against that mixture."""
    value: float
    """The meta-game's value: the equilibrium's win rate - 0.5 for the programs."""


def nash_average(
    table: PayoffTable, rounds: int = DEFAULT_ROUNDS, prior_games: float = PRIOR_GAMES
) -> NashAveraging:
    """The opponents' maximin mixture over `table` (win rates shrunk by `prior_games`, see
    PayoffTable.estimates) and each program's Nash fitness."""
    if not table.programs or not table.opponents:
        return NashAveraging({}, {}, 0.0)
    rates = table.estimates(prior_games)
    solution = solve_meta_game([[rate - 0.5 for rate in row] for row in rates], rounds)
    weights = solution.column_mixture
    return NashAveraging(
        mixture=dict(zip(table.opponents, weights, strict=True)),
        fitness={
            program: float(sum(w * r for w, r in zip(weights, row, strict=True)))
            for program, row in zip(table.programs, rates, strict=True)
        },
        value=solution.value,
    )
