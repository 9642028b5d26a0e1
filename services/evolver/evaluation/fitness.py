"""Fitness and behaviour descriptors from match records, per game.

Fitness is a weighted sum of components in [0, 1] (weights: EvaluationSettings.fitness_weights):

  win_rate   every game: wins + draws / 2 over played matches
  kill_rate  battle: per match, enemy units the candidate killed / enemy units, averaged
  damage_share  battle: per match, damage the candidate dealt / (dealt + taken, friendly fire
             included), 0.5 when no shot hit anyone, averaged. How a fight went rather than only
             who was left standing: over nine matches it ranks programs of similar strength
             better than the win rate does (see docs/evolver.md, "Fitness")
  progress   podracing: per match, the candidate's share of all checkpoints passed
             (own / (own + opponent's); 0.5 when nobody passed one), averaged

Descriptors place a program in the MAP-Elites grid by how it plays, not how well; each is in [0, 1]:

  battle     aggression  shots per unit per minute of game time / AGGRESSION_CAP (100: the gun's
                         top rate at the default 0.6 s cooldown), so 1 = firing whenever able
             accuracy    hits on enemies / shots, over all matches (0 without shots)
  podracing  collisions  collisions involving the candidate's pods per 100 turns / COLLISION_CAP
                         (30: the contact-heavy built-in bots reach 15 to 25)
             boost_timing  how the candidate spends its special moves: boosts / (boosts + shields)
                         over all matches; 1 = only boosts (all-out racing), 0 = only shields
                         (contact play), 0.5 when it used neither. The match metrics count moves,
                         not the turns they were made on, so this is the measurable proxy.

Records of matches that could not be played (record.failure) are left out of everything here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from services.evolver.evaluation.records import MatchRecord

AGGRESSION_CAP = 100.0
"""Shots per unit per minute of game time that count as full aggression (60 s / 0.6 s cooldown)."""
COLLISION_CAP = 30.0
"""Collisions per 100 turns that count as full contact."""

DESCRIPTORS: dict[str, tuple[str, str]] = {
    "battle": ("aggression", "accuracy"),
    "podracing": ("collisions", "boost_timing"),
}


def _clip(value: float) -> float:
    return min(1.0, max(0.0, value))


def _played(records: Sequence[MatchRecord]) -> list[MatchRecord]:
    return [r for r in records if r.played]


def _metric(metrics: Mapping[str, float], name: str) -> float:
    value = metrics.get(name, 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def win_rate(records: Sequence[MatchRecord]) -> float:
    """Wins plus half the draws, over played matches; 0 when none was played."""
    played = _played(records)
    return sum(r.outcome.points for r in played) / len(played) if played else 0.0


def kill_rate(records: Sequence[MatchRecord]) -> float:
    """Battle: enemy units killed / enemy units, averaged over played matches.

    The enemy's unit count is read from its own metrics (units alive + deaths), so no config is
    needed; a match whose opponent metrics are missing counts 0."""
    rates = []
    for record in _played(records):
        enemies = _metric(record.opponent_metrics, "units_alive") + _metric(record.opponent_metrics, "deaths")
        kills = _metric(record.candidate_metrics, "kills")
        rates.append(_clip(kills / enemies) if enemies > 0 else 0.0)
    return sum(rates) / len(rates) if rates else 0.0


def damage_share(records: Sequence[MatchRecord]) -> float:
    """Battle: damage dealt / (dealt + taken) per match, averaged over played matches; a match
    where nobody was hurt counts 0.5 (an even fight)."""
    shares = []
    for record in _played(records):
        dealt = _metric(record.candidate_metrics, "damage_dealt")
        taken = _metric(record.candidate_metrics, "damage_taken")
        shares.append(_clip(dealt / (dealt + taken)) if dealt + taken > 0 else 0.5)
    return sum(shares) / len(shares) if shares else 0.0


def progress(records: Sequence[MatchRecord]) -> float:
    """Podracing: the candidate's share of all checkpoints passed in a match, averaged."""
    shares = []
    for record in _played(records):
        own = _metric(record.candidate_metrics, "checkpoints")
        theirs = _metric(record.opponent_metrics, "checkpoints")
        shares.append(own / (own + theirs) if own + theirs > 0 else 0.5)
    return sum(shares) / len(shares) if shares else 0.0


def components(game: str, records: Sequence[MatchRecord]) -> dict[str, float]:
    """Every fitness component that applies to `game`, each in [0, 1]."""
    parts = {"win_rate": win_rate(records)}
    if game == "battle":
        parts["kill_rate"] = kill_rate(records)
        parts["damage_share"] = damage_share(records)
    elif game == "podracing":
        parts["progress"] = progress(records)
    return parts


def fitness(game: str, records: Sequence[MatchRecord], weights: Mapping[str, float]) -> float:
    """The weighted sum of the game's components (a weight for an unknown component counts 0);
    0.0 when no match was played."""
    if not _played(records):
        return 0.0
    parts = components(game, records)
    return sum(weight * parts.get(name, 0.0) for name, weight in weights.items())


def descriptor_names(game: str) -> tuple[str, str]:
    """The two behaviour descriptors of `game`, in grid order (x, y)."""
    return DESCRIPTORS.get(game, ("win_rate", "draw_rate"))


def descriptors(game: str, matches: Sequence[MatchRecord]) -> dict[str, float]:
    """The game's descriptors from the played matches, each in [0, 1] (all 0 when none played)."""
    played = _played(matches)
    first, second = descriptor_names(game)
    if not played:
        return {first: 0.0, second: 0.0}
    if game == "battle":
        shots = sum(_metric(r.candidate_metrics, "shots") for r in played)
        hits = sum(_metric(r.candidate_metrics, "hits") for r in played)
        unit_minutes = 0.0
        for record in played:
            mine = record.candidate_metrics
            units = _metric(mine, "units_alive") + _metric(mine, "deaths")
            unit_minutes += units * (record.game_seconds or 0.0) / 60.0
        rate = shots / unit_minutes if unit_minutes > 0 else 0.0
        return {first: _clip(rate / AGGRESSION_CAP), second: _clip(hits / shots) if shots else 0.0}
    if game == "podracing":
        collisions = sum(_metric(r.candidate_metrics, "collisions") for r in played)
        turns = sum(r.turns for r in played)
        boosts = sum(_metric(r.candidate_metrics, "boosts_used") for r in played)
        shields = sum(_metric(r.candidate_metrics, "shields_used") for r in played)
        per_100 = 100.0 * collisions / turns if turns else 0.0
        timing = boosts / (boosts + shields) if boosts + shields else 0.5
        return {first: _clip(per_100 / COLLISION_CAP), second: _clip(timing)}
    wins = win_rate(played)
    draws = sum(1 for r in played if r.outcome.points == 0.5) / len(played)
    return {first: wins, second: draws}


def cell(values: Mapping[str, float], bins: int = 5) -> tuple[int, int]:
    """The grid cell of two descriptors (in their order): each [0, 1] value cut into `bins` equal
    bins, 1.0 falling into the last."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    items = list(values.values())
    if len(items) != 2:
        raise ValueError(f"a cell needs exactly two descriptors, got {len(items)}")
    x, y = (min(bins - 1, max(0, int(_clip(v) * bins))) for v in items)
    return x, y
