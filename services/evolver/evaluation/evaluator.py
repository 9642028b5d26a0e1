"""The engine's evaluator: a stored program through the evaluation cascade (evaluation/cascade.py),
with the run's settings and the root's current parameters.

The tournament plays the live fleet on the `matches` queue (the program pinned as a version of
the run's inactive candidate bot, opponents spread across the ladder's ratings, match ids saved on
the program before they are queued so a resumed evaluation waits for the same matches), or, with
`tournament: builtins` or when the fleet has no bot of the game, the built-in bots in process.
"""

from __future__ import annotations

import logging
import random
import uuid
from typing import Any

from services.evolver.evaluation.cascade import (
    EvalStage,
    Evaluation,
    TournamentPlan,
    builtin_names,
    evaluate,
    rematch,
)
from services.evolver.evaluation.matches import LocalExecutor, QueueExecutor, fleet_opponents
from services.evolver.evaluation.records import BUILTIN_PREFIX
from services.evolver.evaluation.settings import EvaluationSettings
from services.evolver.store import bots as bot_store
from services.evolver.store import evaluations as evaluation_store
from services.evolver.store import programs as program_store
from services.evolver.store import runs as run_store
from shared.config import Settings
from shared.db.models import EvolutionProgram
from shared.db.session import get_sessionmaker, session_scope
from shared.evolution.config import DEFAULT_FITNESS_WEIGHTS
from shared.states import ProgramStatus

log = logging.getLogger("services.evolver")

MAX_FLEET_OPPONENTS = 5
"""The tournament's matches are spread over at most this many fleet bots (two matches each by
default), from the weakest to the strongest of the ladder."""


class CascadeEvaluator:
    def __init__(self, ctx: run_store.RunContext, settings: Settings) -> None:
        self.ctx = ctx
        self.settings = settings
        config = ctx.config.evaluation
        self.local = LocalExecutor(ctx.game, settings, jobs=config.jobs)

    def close(self) -> None:
        self.local.close()

    def evaluation_settings(self, parameters: dict[str, Any]) -> EvaluationSettings:
        config = self.ctx.config.evaluation
        weights = {game: dict(w) for game, w in DEFAULT_FITNESS_WEIGHTS.items()}
        if config.fitness_weights is not None:  # every run created since the weights were stored
            weights[self.ctx.game] = dict(config.fitness_weights)
        return EvaluationSettings(
            smoke_turns=config.smoke_turns,
            quick_matches=int(parameters.get("quick_matches", config.quick_matches)),
            tournament_matches=int(parameters.get("tournament_matches", config.tournament_matches)),
            match_config=dict(config.match_config),
            jobs=config.jobs,
            tournament_deadline_s=config.tournament_timeout_s,
            fitness_weights=weights,
            grid_bins=self.ctx.config.search.grid_bins,
        )

    def builtin_plan(self) -> TournamentPlan:
        return TournamentPlan(opponents=[BUILTIN_PREFIX + name for name in builtin_names(self.ctx.game)])

    def fleet_plan(
        self, program: EvolutionProgram, settings: EvaluationSettings, seed: int
    ) -> TournamentPlan:
        with session_scope() as session:
            from shared.db.models import EvolutionRun

            run = session.get(EvolutionRun, self.ctx.id)
            assert run is not None
            exclude = [bot for bot in (run.candidate_bot_id, run.bot_id) if bot is not None]
            opponents = fleet_opponents(
                session,
                self.ctx.game,
                min(MAX_FLEET_OPPONENTS, max(1, settings.tournament_matches)),
                exclude,
                random.Random(seed),
            )
        if not opponents:
            log.info(
                "run %s: no fleet bot plays %s; the tournament plays the built-ins",
                self.ctx.id,
                self.ctx.game,
            )
            return self.builtin_plan()
        bot_id, version_id = bot_store.candidate_version(self.ctx.id, program.id)
        queue = QueueExecutor(
            get_sessionmaker(),
            game=self.ctx.game,
            candidate_bot_id=bot_id,
            candidate_version_id=version_id,
            run_id=self.ctx.id,
            deadline_s=settings.tournament_deadline_s,
        )
        program_id = program.id

        def remember(mapping: dict[str, uuid.UUID]) -> None:
            program_store.save_tournament_matches(program_id, {k: str(v) for k, v in mapping.items()})

        return TournamentPlan(
            opponents=[f"bot:{bot}" for bot in opponents],
            queue=queue,
            existing={k: uuid.UUID(str(v)) for k, v in (program.tournament_matches or {}).items()},
            on_created=remember,
        )

    def plan(
        self, program: EvolutionProgram, settings: EvaluationSettings, seed: int
    ) -> TournamentPlan | None:
        if settings.tournament_matches <= 0:
            return None
        if self.ctx.config.evaluation.tournament == "fleet":
            return self.fleet_plan(program, settings, seed)
        return self.builtin_plan()

    def evaluate(
        self, program: EvolutionProgram, parameters: dict[str, Any], seed: int
    ) -> evaluation_store.EvaluationRow:
        settings = self.evaluation_settings(parameters)
        plan = self.plan(program, settings, seed)
        result = evaluate(self.ctx.game, program.code, settings, local=self.local, tournament=plan, seed=seed)
        return _row(result)

    def rematch(
        self, program: EvolutionProgram, parameters: dict[str, Any], seed: int
    ) -> evaluation_store.EvaluationRow:
        """`program` (evaluated before) on new matches from `seed`, judged on all its matches."""
        settings = self.evaluation_settings(parameters)
        plan = self.plan(program, settings, seed)
        previous = list((program.feedback or {}).get("records") or [])
        result = rematch(
            self.ctx.game, program.code, settings, previous, local=self.local, tournament=plan, seed=seed
        )
        return _row(result)


def _row(result: Evaluation) -> evaluation_store.EvaluationRow:
    failed = not result.passed and result.stage in (EvalStage.GATE, EvalStage.SMOKE)
    feedback = dict(result.feedback)
    feedback["records"] = result.records
    if result.message:
        feedback["message"] = result.message
    return evaluation_store.EvaluationRow(
        status=ProgramStatus.FAILED if failed else ProgramStatus.EVALUATED,
        stage=str(result.stage),
        fitness=0.0 if failed else float(result.fitness),
        metrics={**result.metrics, "seconds": round(result.seconds, 2)},
        descriptors=dict(result.descriptors),
        cell=result.cell,
        feedback=feedback,
        error=result.message if failed else None,
    )
