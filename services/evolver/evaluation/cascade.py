"""The evaluation cascade: cheap checks first, so a broken program costs milliseconds and only a
working one costs a tournament.

  GATE        the static gate (shared.sandbox.gate, `decide` contract): nothing runs
  SMOKE       `smoke_turns` turns against the first built-in bot, the program in the sandbox: it
              must start, not forfeit, and answer at least one turn with an action the game reads
              cleanly
  QUICK       `quick_matches` whole matches against the built-in bots, round-robin, seats alternating
  TOURNAMENT  `tournament_matches` against the plan's opponents (the fleet on the queue, or local
              bots), seats drawn from the seed
  DONE        every stage passed

Fitness and descriptors come from the quick and tournament matches together (the smoke run is
cut short, so it only screens). A program stopped by the gate or the smoke run has fitness 0.
A program whose quick win rate is under `min_quick_win_rate` stops at QUICK (passed False) and
keeps the fitness of its quick matches. Match seeds and seats derive from `seed`, so the same
program, settings and seed play the same matches.
"""

from __future__ import annotations

import random
import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from services.evolver.evaluation import fitness as fit
from services.evolver.evaluation.matches import LocalExecutor, QueueExecutor
from services.evolver.evaluation.records import (
    BUILTIN_PREFIX,
    MatchRecord,
    MatchSpec,
    Outcome,
    derive_seed,
)
from services.evolver.evaluation.settings import EvaluationSettings
from shared.games.registry import get_game
from shared.sandbox.gate import check_source
from shared.states import HostedContract

MAX_FEEDBACK_ERRORS = 8
"""Distinct error messages kept in the feedback."""
MAX_ERROR_CHARS = 300
GATE_PROBLEMS_SHOWN = 20


class EvalStage(StrEnum):
    """How far a program got; with `passed` False, the stage it failed (or was stopped) at."""

    GATE = "gate"
    SMOKE = "smoke"
    QUICK = "quick"
    TOURNAMENT = "tournament"
    DONE = "done"


@dataclass
class TournamentPlan:
    """Who the tournament plays and where.

    `opponents` are opponent keys ("bot:<uuid>" for the queue; "builtin:<name>" or "file:<path>"
    locally). With `queue` set the matches go to the `matches` queue (see QueueExecutor for
    `existing` and `on_created`); without, they are played by the cascade's LocalExecutor.
    """

    opponents: list[str]
    queue: QueueExecutor | None = None
    existing: dict[str, uuid.UUID] = field(default_factory=dict)
    on_created: Callable[[dict[str, uuid.UUID]], None] | None = None


@dataclass
class Evaluation:
    stage: EvalStage
    passed: bool
    fitness: float = 0.0
    metrics: dict[str, Any] = field(default_factory=dict)
    descriptors: dict[str, float] = field(default_factory=dict)
    cell: tuple[int, int] | None = None
    feedback: dict[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    """Every match's MatchRecord.to_json(), with "stage" added (smoke, quick, tournament)."""
    message: str = ""
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "stage": str(self.stage),
            "passed": self.passed,
            "fitness": self.fitness,
            "metrics": self.metrics,
            "descriptors": self.descriptors,
            "cell": list(self.cell) if self.cell is not None else None,
            "feedback": self.feedback,
            "records": self.records,
            "message": self.message,
            "seconds": self.seconds,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evaluation:
        cell = data.get("cell")
        return cls(
            stage=EvalStage(data["stage"]),
            passed=bool(data["passed"]),
            fitness=float(data.get("fitness", 0.0)),
            metrics=dict(data.get("metrics") or {}),
            descriptors={k: float(v) for k, v in (data.get("descriptors") or {}).items()},
            cell=(int(cell[0]), int(cell[1])) if cell else None,
            feedback=dict(data.get("feedback") or {}),
            records=list(data.get("records") or []),
            message=str(data.get("message", "")),
            seconds=float(data.get("seconds", 0.0)),
        )

    def match_records(self) -> list[MatchRecord]:
        """The records back as MatchRecords (without their stage)."""
        return [MatchRecord.from_json({k: v for k, v in r.items() if k != "stage"}) for r in self.records]


# ----------------------------------------------------------------------------- specs


def builtin_names(game: str) -> list[str]:
    return sorted(get_game(game).builtin_bots())


def smoke_spec(game: str, settings: EvaluationSettings, seed: int) -> MatchSpec:
    first = builtin_names(game)[0]
    return MatchSpec(BUILTIN_PREFIX + first, derive_seed(seed, "smoke"), 0, dict(settings.match_config))


def quick_specs(game: str, settings: EvaluationSettings, seed: int) -> list[MatchSpec]:
    """Round-robin over the built-in bots (sorted by name), seats alternating."""
    names = builtin_names(game)
    return [
        MatchSpec(
            BUILTIN_PREFIX + names[i % len(names)],
            derive_seed(seed, "quick", i),
            i % 2,
            dict(settings.match_config),
        )
        for i in range(settings.quick_matches)
    ]


def tournament_specs(opponents: Sequence[str], settings: EvaluationSettings, seed: int) -> list[MatchSpec]:
    """`tournament_matches` spread round-robin over the opponents, seats drawn from the seed."""
    if not opponents:
        return []
    seats = random.Random(derive_seed(seed, "tournament-seats"))
    return [
        MatchSpec(
            opponents[i % len(opponents)],
            derive_seed(seed, "tournament", i),
            seats.randrange(2),
            dict(settings.match_config),
        )
        for i in range(settings.tournament_matches)
    ]


# ----------------------------------------------------------------------------- summaries


def _per_opponent(records: Sequence[MatchRecord]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for record in records:
        row = table.setdefault(record.opponent, {"wins": 0, "draws": 0, "losses": 0, "games": 0, "failed": 0})
        if not record.played:
            row["failed"] += 1
            continue
        row["games"] += 1
        row[{Outcome.WIN: "wins", Outcome.DRAW: "draws", Outcome.LOSS: "losses"}[record.outcome]] += 1
    return table


def _rate(records: Sequence[MatchRecord], outcome: Outcome) -> float:
    played = [r for r in records if r.played]
    return sum(1 for r in played if r.outcome is outcome) / len(played) if played else 0.0


def _metrics(game: str, scored: Sequence[MatchRecord], quick: Sequence[MatchRecord]) -> dict[str, Any]:
    played = [r for r in scored if r.played]
    metrics: dict[str, Any] = dict(fit.components(game, scored))
    metrics.update(
        draw_rate=_rate(scored, Outcome.DRAW),
        loss_rate=_rate(scored, Outcome.LOSS),
        matches=len(played),
        failed_matches=len(scored) - len(played),
        errors=sum(r.errors for r in scored),
        timeouts=sum(r.timeouts for r in scored),
        forfeits=sum(1 for r in scored if r.forfeited),
        quick_win_rate=fit.win_rate(quick),
        per_opponent=_per_opponent(scored),
    )
    return metrics


def _dedup_errors(records: Sequence[MatchRecord]) -> list[dict[str, Any]]:
    """Distinct error messages (turn numbers stripped), most frequent first, capped."""
    counts: Counter[str] = Counter()
    for record in records:
        for sample in record.error_samples:
            text = sample.split(": ", 1)[1] if sample.startswith("turn ") and ": " in sample else sample
            counts[text[:MAX_ERROR_CHARS]] += 1
        if record.failure:
            counts[f"match not played: {record.failure}"[:MAX_ERROR_CHARS]] += 1
    return [{"message": text, "count": n} for text, n in counts.most_common(MAX_FEEDBACK_ERRORS)]


def _worst(records: Sequence[MatchRecord]) -> MatchRecord | None:
    """The match that says most about what to fix: lowest outcome, then most failures."""
    if not records:
        return None

    def badness(record: MatchRecord) -> tuple[float, float, float]:
        failures = record.errors + record.timeouts + (100 if record.forfeited else 0)
        score = record.candidate_metrics.get("kills", record.candidate_metrics.get("checkpoints", 0.0))
        return (record.outcome.points if record.played else -1.0, -failures, score)

    return min(records, key=badness)


def _per_opponent_feedback(records: Sequence[MatchRecord]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    table = _per_opponent(records)
    for opponent, row in table.items():
        mine = [r for r in records if r.opponent == opponent and r.played]
        means: dict[str, float] = {}
        for record in mine:
            for name, value in record.candidate_metrics.items():
                means[name] = means.get(name, 0.0) + value / len(mine)
        out[opponent] = {
            **row,
            "win_rate": round(fit.win_rate(mine), 3),
            "mean_metrics": {k: round(v, 3) for k, v in sorted(means.items())},
        }
    return out


def _feedback(
    stage: EvalStage, message: str, records: Sequence[MatchRecord], scored: Sequence[MatchRecord]
) -> dict[str, Any]:
    worst = _worst(scored or records)
    p50s = [r.latency_p50_ms for r in records if r.latency_p50_ms is not None]
    p99s = [r.latency_p99_ms for r in records if r.latency_p99_ms is not None]
    return {
        "stage": str(stage),
        "message": message,
        "per_opponent": _per_opponent_feedback(scored),
        "errors": _dedup_errors(records),
        "error_count": sum(r.errors for r in records),
        "timeout_count": sum(r.timeouts for r in records),
        "forfeits": sum(1 for r in records if r.forfeited),
        "worst_match": worst.summary_lines() if worst else [],
        "latency_ms": {
            "p50": round(statistics.median(p50s), 2) if p50s else None,
            "p99": round(max(p99s), 2) if p99s else None,
        },
    }


# ----------------------------------------------------------------------------- the cascade


def _smoke_problem(record: MatchRecord) -> str | None:
    """Why the smoke run failed, or None if the program plays."""
    samples = "; ".join(record.error_samples[:3])
    if record.failure:
        return f"the smoke match could not be played: {record.failure}"
    if record.forfeited:
        return f"the program forfeited the smoke run after {record.turns} turns: {samples or 'no answer'}"
    if not record.valid_turns:
        reason = samples or "every answer had invalid parts (see invalid_actions)"
        return f"no valid action in {record.turns} turns of the smoke run: {reason}"
    return None


def _judge(
    game: str,
    settings: EvaluationSettings,
    stage: EvalStage,
    passed: bool,
    message: str,
    records: Sequence[dict[str, Any]],
    seconds: float,
) -> Evaluation:
    """The Evaluation of a program that played `records` (MatchRecord JSON with their "stage"):
    fitness and descriptors over the quick and tournament matches."""
    collected = [MatchRecord.from_json({k: v for k, v in r.items() if k != "stage"}) for r in records]
    scored = [m for m, r in zip(collected, records, strict=True) if r["stage"] in ("quick", "tournament")]
    quick = [m for m, r in zip(collected, records, strict=True) if r["stage"] == "quick"]
    value = fit.fitness(game, scored, settings.weights(game)) if scored else 0.0
    descriptors = fit.descriptors(game, scored)
    cell: tuple[int, int] | None = fit.cell(descriptors, settings.grid_bins)
    if stage in (EvalStage.GATE, EvalStage.SMOKE):  # no play to judge: no fitness, no niche
        value, descriptors, cell, scored = 0.0, {}, None, []
    return Evaluation(
        stage=stage,
        passed=passed,
        fitness=round(value, 6),
        metrics=_metrics(game, scored, quick),
        descriptors=descriptors,
        cell=cell,
        feedback=_feedback(stage, message, collected, scored),
        records=list(records),
        message=message,
        seconds=round(seconds, 3),
    )


def rematch(
    game: str,
    source: str,
    settings: EvaluationSettings,
    previous: Sequence[dict[str, Any]],
    *,
    local: LocalExecutor,
    tournament: TournamentPlan | None,
    seed: int,
) -> Evaluation:
    """Play a program that passed the cascade before on new matches (quick and tournament, from
    `seed`) and judge it on all its matches: `previous` (its stored records) and these. Selection
    on one evaluation favours the programs that drew lucky matches; a program kept as a parent
    replays each generation, so its fitness converges to how good it is (racing)."""
    started = time.monotonic()
    runner = settings.runner_settings(local.settings)
    deadline = settings.match_deadline_s
    new: list[dict[str, Any]] = []
    quick = local.play(
        source, quick_specs(game, settings, seed), settings=runner, deadline_s=deadline, jobs=settings.jobs
    )
    new += [{**record.to_json(), "stage": "quick"} for record in quick]
    if tournament is not None and settings.tournament_matches > 0 and tournament.opponents:
        specs = tournament_specs(tournament.opponents, settings, seed)
        if tournament.queue is not None:
            played = tournament.queue.play(
                specs, existing=tournament.existing, on_created=tournament.on_created
            )
        else:
            played = local.play(source, specs, settings=runner, deadline_s=deadline, jobs=settings.jobs)
        new += [{**record.to_json(), "stage": "tournament"} for record in played]
    records = [*previous, *new]
    matches = sum(1 for r in records if r["stage"] in ("quick", "tournament"))
    message = f"evaluated over {matches} matches (rematched)"
    return _judge(game, settings, EvalStage.DONE, True, message, records, time.monotonic() - started)


def evaluate(
    game: str,
    source: str,
    settings: EvaluationSettings,
    *,
    local: LocalExecutor,
    tournament: TournamentPlan | None,
    seed: int,
) -> Evaluation:
    """Run the cascade on `source` (a `decide` module) and say how far it got and how well it did.

    `tournament` None skips the tournament stage (fitness from the quick matches)."""
    started = time.monotonic()
    all_records: list[dict[str, Any]] = []

    def finish(stage: EvalStage, passed: bool, message: str) -> Evaluation:
        return _judge(game, settings, stage, passed, message, all_records, time.monotonic() - started)

    def keep(stage: str, records: Sequence[MatchRecord]) -> None:
        for record in records:
            all_records.append({**record.to_json(), "stage": stage})

    problems = check_source(source, contract=HostedContract.DECIDE)
    if problems:
        shown = [str(p) for p in problems[:GATE_PROBLEMS_SHOWN]]
        more = len(problems) - len(shown)
        message = "the static gate refused the program:\n" + "\n".join(shown)
        if more > 0:
            message += f"\n... and {more} more"
        evaluation = finish(EvalStage.GATE, False, message)
        evaluation.feedback["gate_problems"] = shown
        return evaluation

    runner = settings.runner_settings(local.settings)  # this evaluation's turn limits
    deadline = settings.match_deadline_s
    smoke = local.smoke(
        source, smoke_spec(game, settings, seed), settings.smoke_turns, settings=runner, deadline_s=deadline
    )
    keep("smoke", [smoke])
    problem = _smoke_problem(smoke)
    if problem:
        return finish(EvalStage.SMOKE, False, problem)

    specs = quick_specs(game, settings, seed)
    quick = local.play(source, specs, settings=runner, deadline_s=deadline, jobs=settings.jobs)
    keep("quick", quick)
    quick_rate = fit.win_rate(quick)
    if quick and quick_rate < settings.min_quick_win_rate:
        message = f"quick win rate {quick_rate:.2f} is under {settings.min_quick_win_rate:.2f}"
        return finish(EvalStage.QUICK, False, message)

    scored = list(quick)
    if tournament is not None and settings.tournament_matches > 0 and tournament.opponents:
        specs = tournament_specs(tournament.opponents, settings, seed)
        if tournament.queue is not None:
            queue = tournament.queue
            played = queue.play(specs, existing=tournament.existing, on_created=tournament.on_created)
        else:
            played = local.play(source, specs, settings=runner, deadline_s=deadline, jobs=settings.jobs)
        keep("tournament", played)
        scored.extend(played)
        if not any(r.played for r in played):
            return finish(EvalStage.TOURNAMENT, False, "no tournament match could be played")
    if not any(r.played for r in scored) and scored:
        return finish(EvalStage.QUICK, False, "no quick match could be played")
    return finish(EvalStage.DONE, True, f"evaluated over {sum(r.played for r in scored)} matches")
