"""The podracing game behind the platform's Game/Match interface, wrapping the reference engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from shared.games.base import JSON, Decide, Game, GameEvent, Match, MatchResult, PlayerResult, StepResult
from shared.games.podracing.actions import SanitizedAction, sanitize_action
from shared.games.podracing.config import PodracingConfig
from shared.games.podracing.engine import (
    HEIGHT,
    PODS_PER_PLAYER,
    WIDTH,
    Pod,
    Race,
    RaceEnd,
    RaceEvent,
    player_of,
    round_half_away,
)
from shared.games.podracing.schemas import ACTION_SCHEMA, OBSERVATION_SCHEMA

NUM_PLAYERS = 2
METRIC_NAMES = (
    "checkpoints",
    "boosts_used",
    "shields_used",
    "collisions",
    "invalid_actions",
    "timed_out_turns",
    "finished_turn",
)


def pod_observation(pod: Pod, first_turn: bool) -> dict[str, JSON]:
    """A pod in whole numbers, as CodinGame shows it (angle -1 before the first turn)."""
    angle = -1 if first_turn else int(round_half_away(pod.angle)) % 360
    return {
        "x": int(pod.x),
        "y": int(pod.y),
        "vx": int(pod.vx),
        "vy": int(pod.vy),
        "angle": angle,
        "next_checkpoint": pod.next_checkpoint,
        "checkpoints_passed": pod.checkpoints_passed,
        "boost_available": pod.boost_available,
        "shield_cooldown": pod.shield_cooldown,
    }


def event_json(event: RaceEvent) -> dict[str, JSON]:
    data: dict[str, JSON] = {"kind": event.kind, "time": event.time}
    for key in ("pod", "other", "player", "checkpoint"):
        value = getattr(event, key)
        if value is not None:
            data[key] = value
    return data


class PodracingMatch(Match):
    game_name: ClassVar[str] = "podracing"

    def __init__(self, seed: int, config: PodracingConfig) -> None:
        super().__init__(seed, NUM_PLAYERS)
        self.config = config
        self.race = Race.from_seed(seed, config.to_race_config())
        self._metrics: list[dict[str, float]] = [dict.fromkeys(METRIC_NAMES, 0.0) for _ in range(2)]
        for metrics in self._metrics:
            metrics["finished_turn"] = -1.0
        self._messages: list[str | None] = [None] * (NUM_PLAYERS * PODS_PER_PLAYER)
        self._checked: list[tuple[JSON | None, SanitizedAction] | None] = [None] * NUM_PLAYERS
        """Per player, the action `check_action` read this turn and its reading, for step() to reuse."""

    # ------------------------------------------------------------ for bots

    def observation(self, player: int) -> dict[str, JSON]:
        race = self.race
        first = race.turn == 0
        own = [pod_observation(race.pods[player * PODS_PER_PLAYER + k], first) for k in range(2)]
        other = 1 - player
        theirs = [pod_observation(race.pods[other * PODS_PER_PLAYER + k], first) for k in range(2)]
        return {
            "turn": race.turn,
            "player": player,
            "laps": race.config.laps,
            "checkpoint_count": len(race.checkpoints),
            "checkpoints": [[x, y] for x, y in race.checkpoints],
            "max_thrust": race.config.max_thrust,
            "max_turns": race.config.max_turns,
            "timeout_left": race.timeouts[player],
            "opponent_timeout_left": race.timeouts[other],
            "pods": own,
            "opponents": theirs,
        }

    def _targets(self, player: int) -> list[tuple[int, int]]:
        """The next checkpoints of a player's pods: where a pod without a usable command aims."""
        race = self.race
        pods = race.pods[player * PODS_PER_PLAYER : (player + 1) * PODS_PER_PLAYER]
        return [race.checkpoints[pod.next_checkpoint] for pod in pods]

    def check_action(self, player: int, action: JSON | None) -> Sequence[str]:
        reading = sanitize_action(action, self._targets(player), self.race.config.max_thrust)
        self._checked[player] = (action, reading)
        return reading.problems

    def step(self, actions: Sequence[JSON | None]) -> StepResult:
        checked, self._checked = self._checked, [None] * NUM_PLAYERS  # readings of this turn only
        # An action check_action read this turn is not read again: the same object, the same state.
        if self.finished:
            return StepResult(events=[], frames=[])
        race = self.race
        commands = []
        messages: list[str | None] = []
        for player in range(NUM_PLAYERS):
            raw = actions[player] if player < len(actions) else None
            reading = checked[player]
            sanitized = (
                reading[1]
                if reading is not None and reading[0] is raw
                else sanitize_action(raw, self._targets(player), race.config.max_thrust)
            )
            commands.extend(sanitized.commands)
            messages.extend(sanitized.messages)
            self._metrics[player]["invalid_actions"] += sanitized.invalid
            if raw is None:
                self._metrics[player]["timed_out_turns"] += 1
        self._messages = messages
        turn = race.turn
        race_events = race.step(commands)
        self.turn = race.turn
        events = [self._count(turn, event) for event in race_events]
        frame = self.frame()
        frame["events"] = [event_json(event) for event in race_events]
        return StepResult(events=events, frames=[frame])

    def _count(self, turn: int, event: RaceEvent) -> GameEvent:
        """Update the per-player metrics from one engine event and convert it."""
        kind = event.kind
        if kind == "checkpoint" and event.player is not None:
            self._metrics[event.player]["checkpoints"] += 1
        elif kind == "boost" and event.player is not None:
            self._metrics[event.player]["boosts_used"] += 1
        elif kind == "shield" and event.player is not None:
            self._metrics[event.player]["shields_used"] += 1
        elif kind == "collision" and event.pod is not None and event.other is not None:
            for player in {player_of(event.pod), player_of(event.other)}:
                self._metrics[player]["collisions"] += 1
        elif kind == "win" and event.player is not None:
            self._metrics[event.player]["finished_turn"] = float(turn + 1)
        data = event_json(event)
        data.pop("kind")
        data.pop("player", None)
        return GameEvent(turn=turn, kind=kind, player=event.player, data=data)

    @property
    def finished(self) -> bool:
        return self.race.finished

    def result(self) -> MatchResult:
        race = self.race
        ranks = race.ranks()
        players = []
        for player in range(NUM_PLAYERS):
            best = race.pods[race.best_pod(player)]
            players.append(
                PlayerResult(
                    player=player,
                    rank=ranks[player],
                    score=float(best.checkpoints_passed),
                    metrics=dict(self._metrics[player]),
                )
            )
        return MatchResult(players=players, turns=race.turn, reason=race.reason or RaceEnd.RUNNING)

    def frame(self) -> dict[str, JSON]:
        race = self.race
        pods = []
        for index, pod in enumerate(race.pods):
            pods.append(
                {
                    "x": pod.x,
                    "y": pod.y,
                    "vx": pod.vx,
                    "vy": pod.vy,
                    "angle": pod.angle,
                    "next_checkpoint": pod.next_checkpoint,
                    "checkpoints_passed": pod.checkpoints_passed,
                    "shield_cooldown": pod.shield_cooldown,
                    "shield": pod.shield_active,
                    "boost_available": pod.boost_available,
                    "message": self._messages[index],
                }
            )
        frame: dict[str, Any] = {"turn": race.turn, "pods": pods, "timeouts": list(race.timeouts)}
        if race.turn == 0:
            frame["checkpoints"] = [[x, y] for x, y in race.checkpoints]
            frame["laps"] = race.config.laps
            frame["width"], frame["height"] = WIDTH, HEIGHT
        if race.finished:
            frame["finished"] = {"reason": race.reason, "winner": race.winner}
        return frame

    def forfeit(self, player: int) -> None:
        self._checked = [None] * NUM_PLAYERS
        self.race.forfeit(player)


class PodracingGame(Game):
    name: ClassVar[str] = "podracing"
    title: ClassVar[str] = "Pod racing"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    config_model = PodracingConfig
    action_example: ClassVar[str] = (
        '{"pods": [{"x": 8000, "y": 4500, "thrust": 100}, {"x": 5000, "y": 2000, "thrust": "BOOST", '
        '"message": "hi"}]}: one entry per pod, thrust 0-100, "BOOST" or "SHIELD"'
    )

    def create_match(
        self, seed: int, config: dict[str, JSON] | None = None, num_players: int = 2
    ) -> PodracingMatch:
        if num_players != NUM_PLAYERS:
            raise ValueError(f"podracing is played by exactly {NUM_PLAYERS} players, not {num_players}")
        return PodracingMatch(seed, PodracingConfig.model_validate(config or {}))

    def observation_schema(self) -> dict[str, JSON]:
        return OBSERVATION_SCHEMA

    def action_schema(self) -> dict[str, JSON]:
        return ACTION_SCHEMA

    def builtin_bots(self) -> dict[str, Decide]:
        # The search bot lives in a module of its own: bots.py stays one file that passes the
        # hosted-bot gate, which refuses imports from the platform.
        from shared.games.podracing.bots import BUILTIN_BOTS
        from shared.games.podracing.search import decide as search

        return {**BUILTIN_BOTS, "search": search}
