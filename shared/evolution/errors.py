"""What can go wrong when evolution runs are created, read or changed, without any transport: each
error carries a `message` for the person who asked; the gateway maps each class to an HTTP status
in services/gateway/errors.py."""

from __future__ import annotations

import uuid


class EvolutionError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EvolutionRunNotFound(EvolutionError):
    """No such run, or one the caller may not see (only its owner and admins may)."""

    def __init__(self, run_id: uuid.UUID) -> None:
        super().__init__(f"evolution run {run_id} not found")
        self.run_id = run_id


class ProgramNotFound(EvolutionError):
    def __init__(self, run_id: uuid.UUID, program: str) -> None:
        super().__init__(f"evolution run {run_id} has no program {program}")


class LlmCallNotFound(EvolutionError):
    def __init__(self, run_id: uuid.UUID, call_id: uuid.UUID) -> None:
        super().__init__(f"evolution run {run_id} has no LLM call {call_id}")


class EvolutionRunStateError(EvolutionError):
    """The run's status forbids what was asked (stop a finished run, resume a running one...)."""


class UnevolvableGame(EvolutionError):
    def __init__(self, game: str, games: tuple[str, ...]) -> None:
        super().__init__(f"the evolver cannot evolve {game!r} bots; it evolves: {', '.join(games)}")
        self.game = game


class InvalidSeed(EvolutionError):
    """A seed program the static gate refuses: evolution could not start from it."""


class InvalidFitnessWeights(EvolutionError):
    """Fitness weights naming a component the run's game does not measure."""


class LlmEndpointRefused(EvolutionError):
    """The run's LLM base URL is not one the platform may call (shared.evolution.endpoint)."""


class UnknownLlmEndpoint(EvolutionError):
    """The run names an operator endpoint that is not configured (`ARENA_LLM_ENDPOINTS`)."""

    def __init__(self, name: str, names: list[str]) -> None:
        offered = ", ".join(names) if names else "none are configured"
        super().__init__(f"llm.endpoint: no model endpoint {name!r} on this platform (endpoints: {offered})")
        self.name = name


class LlmKeyMisuse(EvolutionError):
    """A key where none may go (with an operator endpoint), or none where one must (a run's own URL)."""


class LlmModelNotOffered(EvolutionError):
    """The run asks an operator endpoint for a model it does not offer (or names none)."""


class LlmMoneyCapReached(EvolutionError):
    """The user's runs have spent their allowance on the operator's endpoints for now."""

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
