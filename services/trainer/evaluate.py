"""How strong is a bot? N races against an opponent in the reference engine, with a confidence interval.

Bots are BOT specs as the command line takes them (builtin:NAME, a Python file with decide(),
codingame:FILE, an http(s):// bot server) and every race is a local match on the platform's own
code (`shared.play.local_play`: the match runner's turn loop, the hosted-bot sandbox, protocol
v1), so a win rate measured here is the one the bot would have on the platform.

Race i is played on the track of seed + i // 2 with the bot in seat i % 2: each track is raced
from both seats, which cancels the start-position advantage. Draws count as non-wins in the win
rate; the 95% interval is Wilson's score interval on wins out of races. Races can be spread over
`jobs` processes (each opens its own sandboxes); results do not depend on `jobs`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from enum import StrEnum
from multiprocessing import get_context
from typing import Any

from shared.play.errors import PlayError

Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


class Outcome(StrEnum):
    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"


@dataclass(frozen=True)
class RaceOutcome:
    index: int
    seed: int
    seat: int
    """The evaluated bot's seat; the opponent has the other."""
    outcome: Outcome
    turns: int
    end_reason: str
    bot_latencies_ms: list[float]
    bot_failed_turns: int
    """Turns the bot answered late, not at all, or with an action the game could not read."""


@dataclass
class Evaluation:
    bot: str
    opponent: str
    seed: int
    outcomes: list[RaceOutcome] = field(default_factory=list)

    def count(self, outcome: Outcome) -> int:
        return sum(1 for race in self.outcomes if race.outcome is outcome)

    @property
    def races(self) -> int:
        return len(self.outcomes)

    @property
    def wins(self) -> int:
        return self.count(Outcome.WIN)

    @property
    def losses(self) -> int:
        return self.count(Outcome.LOSS)

    @property
    def draws(self) -> int:
        return self.count(Outcome.DRAW)

    @property
    def win_rate(self) -> float:
        return self.wins / self.races if self.races else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.wins, self.races)

    @property
    def bot_ms_per_decide(self) -> float | None:
        """Mean answer time of the bot as the match runner measured it (protocol included for
        hosted and HTTP bots; the bare call for a built-in one)."""
        latencies = [ms for race in self.outcomes for ms in race.bot_latencies_ms]
        return sum(latencies) / len(latencies) if latencies else None

    @property
    def bot_failed_turns(self) -> int:
        return sum(race.bot_failed_turns for race in self.outcomes)


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson's score interval for a binomial proportion (sound at 0 and 1, unlike p +- z*se)."""
    if trials <= 0:
        return (0.0, 1.0)
    p = successes / trials
    z2 = z * z
    denominator = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denominator
    half = z * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class EvalPlan:
    """Everything a process needs to play some of the races (picklable, for `jobs` > 1)."""

    game: str
    bot: str
    opponent: str
    seed: int
    config: dict[str, Any]
    sandbox_backend: str
    secrets: tuple[str, ...] = ()
    turn_timeout_ms: int | None = None

    def seat_and_seed(self, index: int) -> tuple[int, int]:
        return index % 2, self.seed + index // 2


def play_races(plan: EvalPlan, indices: list[int]) -> list[RaceOutcome]:
    """Play the races `indices` of the plan, one after the other, in this process."""
    from shared.games.registry import get_game
    from shared.play import local_play, options
    from shared.play.bot_specs import parse_bots

    game = get_game(plan.game)
    settings = options.local_settings(turn_timeout_ms=plan.turn_timeout_ms)
    settings = settings.model_copy(update={"sandbox_backend": plan.sandbox_backend})
    bot, opponent = parse_bots(
        game, [plan.bot, plan.opponent], list(plan.secrets), max_chars=settings.hosted_code_max_chars
    )
    outcomes = []
    for index in indices:
        seat, seed = plan.seat_and_seed(index)
        specs = [bot, opponent] if seat == 0 else [opponent, bot]
        played = local_play.play(game, specs, seed, plan.config, settings).played
        ranks = {p.player: p.rank for p in played.result.players}
        mine, theirs = ranks[seat], ranks[1 - seat]
        outcome = Outcome.WIN if mine < theirs else Outcome.LOSS if mine > theirs else Outcome.DRAW
        stats = played.stats[seat]
        outcomes.append(
            RaceOutcome(
                index=index,
                seed=seed,
                seat=seat,
                outcome=outcome,
                turns=played.turns,
                end_reason=str(played.end_reason),
                bot_latencies_ms=list(stats.latencies_ms),
                bot_failed_turns=stats.errors + stats.timeouts,
            )
        )
    return outcomes


def _chunks(count: int, jobs: int) -> list[list[int]]:
    """Race indices in small chunks, so that progress comes often and the processes stay busy."""
    size = max(1, min(10, count // (4 * jobs)))
    return [list(range(start, min(count, start + size))) for start in range(0, count, size)]


def evaluate(
    bot: str,
    opponent: str,
    races: int,
    *,
    seed: int = 0,
    game: str = "podracing",
    config: dict[str, Any] | None = None,
    jobs: int = 1,
    sandbox: str = "auto",
    secrets: tuple[str, ...] = (),
    turn_timeout_ms: int | None = None,
    on_race: Callable[[RaceOutcome, Evaluation], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> Evaluation:
    """Play `races` races of `bot` against `opponent` (BOT specs) and count the outcomes.

    Raises PlayError for unusable specs, config or options, before any race starts."""
    from shared.games.registry import UnknownGameError, get_game
    from shared.play import options
    from shared.play.bot_specs import parse_bots

    if races < 1:
        raise PlayError("the number of races must be at least 1")
    if jobs < 1:
        raise PlayError("the number of jobs must be at least 1")
    try:
        game_obj = get_game(game)
    except UnknownGameError as exc:
        raise PlayError(str(exc.args[0])) from None
    if game_obj.min_players > 2 or game_obj.max_players < 2:
        raise PlayError(f"{game} is not a two-player game: evaluation plays one bot against one opponent")
    config_text = None if config is None else json.dumps(config)
    parsed_config = options.parse_config(game_obj, config_text)
    settings = options.local_settings(turn_timeout_ms=turn_timeout_ms)
    specs = parse_bots(game_obj, [bot, opponent], list(secrets), max_chars=settings.hosted_code_max_chars)
    backend, warning = options.choose_sandbox(sandbox, specs)
    if warning and on_warning is not None:
        on_warning(warning)
    plan = EvalPlan(game, bot, opponent, seed, parsed_config, backend, secrets, turn_timeout_ms)
    evaluation = Evaluation(specs[0].label, specs[1].label, seed)

    def record(outcomes: list[RaceOutcome]) -> None:
        for outcome in outcomes:
            evaluation.outcomes.append(outcome)
            if on_race is not None:
                on_race(outcome, evaluation)

    chunks = _chunks(races, jobs)
    if jobs == 1:
        for chunk in chunks:
            record(play_races(plan, chunk))
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(play_races, plan, chunk) for chunk in chunks]
            for future in as_completed(futures):
                record(future.result())
    evaluation.outcomes.sort(key=lambda race: race.index)
    return evaluation
