"""The game interface: all the match runner, the evolver and the trainer know about any game.

A game is a factory (`Game`) of deterministic matches (`Match`). Same seed + same config + same
actions gives the same match, bit for bit, which is what makes replays re-simulatable and crashed
matches replayable from their seed.

Actions arrive exactly as a bot sent them (any JSON, possibly malformed) or as `None` when the bot
did not answer in time; the game sanitises them itself, counts what it had to fix, and never raises.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel

JSON = Any
"""A JSON-ready value: dict, list, str, int, float, bool or None."""

Decide = Callable[[JSON], JSON]
"""A bot as a function: observation in, action out (both JSON)."""


@dataclass(frozen=True, slots=True)
class GameEvent:
    """Something worth showing or counting: a checkpoint passed, a hit, a kill, a collision..."""

    turn: int
    kind: str
    player: int | None = None
    data: dict[str, JSON] = field(default_factory=dict)

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)


@dataclass(slots=True)
class StepResult:
    """What one turn produced: its events and the replay frames recorded during it."""

    events: list[GameEvent]
    frames: list[dict[str, JSON]]


@dataclass(slots=True)
class PlayerResult:
    player: int
    rank: int
    """0 is first; players with equal rank drew."""
    score: float
    metrics: dict[str, float]
    """Per-player figures the platform stores, e.g. kills, deaths, checkpoints, invalid_actions."""


@dataclass(slots=True)
class MatchResult:
    players: list[PlayerResult]
    turns: int
    reason: str
    """Why it ended: "won", "timeout", "turn_limit", "eliminated", "forfeit", "time_limit"..."""

    def to_json(self) -> dict[str, JSON]:
        return asdict(self)


class Match(ABC):
    """One match in progress. Subclasses keep their own state; the runner drives them turn by turn."""

    game_name: ClassVar[str]

    def __init__(self, seed: int, num_players: int) -> None:
        self.seed = seed
        self.num_players = num_players
        self.turn = 0

    @abstractmethod
    def observation(self, player: int) -> dict[str, JSON]:
        """The JSON observation a player's bot receives this turn, covering all of its units."""

    def check_action(self, player: int, action: JSON | None) -> Sequence[str]:  # noqa: ARG002 (default of a hook games override)
        """Read one player's action as step() will, without applying it; return what was wrong
        with it (each problem counts as one invalid action), empty when it reads as sent.

        Reading is meant never to raise; the runner still calls this for each bot on its own before
        step(), so that an answer that trips a bug in the reading counts against that bot alone
        instead of failing the whole match, and shows the bot's owner samples of the problems.
        Games override it with the reading their step() uses.
        """
        return ()  # a game without a separate reading: step() is the only check

    @abstractmethod
    def step(self, actions: Sequence[JSON | None]) -> StepResult:
        """Apply one action per player (raw bot output, or None for "no answer") and advance a turn."""

    @property
    @abstractmethod
    def finished(self) -> bool: ...

    @abstractmethod
    def result(self) -> MatchResult:
        """Ranks, scores and per-player metrics. Valid once finished (and meaningful before, for UIs)."""

    @abstractmethod
    def frame(self) -> dict[str, JSON]:
        """A replay frame of the current state (used for the initial frame of a replay)."""

    @abstractmethod
    def forfeit(self, player: int) -> None:
        """Take a player out (its bot failed too often); it ranks last and the match may end."""


class Game(ABC):
    """A game type: configuration, schemas, match factory and built-in bots."""

    name: ClassVar[str]
    title: ClassVar[str]
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    ladder_players: ClassVar[int] = 2
    """How many bots a ladder match seats; challenges may seat anything from min to max."""
    config_model: ClassVar[type[BaseModel]]
    action_example: ClassVar[str] = ""
    """A well-formed action on one line, shown next to a bot's invalid actions (empty: none)."""

    @abstractmethod
    def create_match(self, seed: int, config: dict[str, JSON] | None = None, num_players: int = 2) -> Match:
        """A new match; `config` is validated against `config_model` (unknown keys rejected)."""

    @abstractmethod
    def observation_schema(self) -> dict[str, JSON]:
        """JSON schema of what a bot receives in `observation`."""

    @abstractmethod
    def action_schema(self) -> dict[str, JSON]:
        """JSON schema of what a bot answers in `action`."""

    def config_schema(self) -> dict[str, JSON]:
        return self.config_model.model_json_schema()

    def parse_config(self, config: dict[str, JSON] | None) -> BaseModel:
        return self.config_model.model_validate(config or {})

    @abstractmethod
    def builtin_bots(self) -> dict[str, Decide]:
        """Bots shipped with the game, by name, as `decide(observation) -> action` functions."""
