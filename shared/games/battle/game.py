"""The battle Game and Match: turns, orders, observations, end conditions, ranking and replay frames."""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, ClassVar

from shared.games.base import JSON, Decide, Game, GameEvent, Match, MatchResult, PlayerResult, StepResult
from shared.games.battle.actions import ActionSanitiser, SanitisedAction
from shared.games.battle.config import SIGNAL_WORDS, BattleConfig
from shared.games.battle.maps import BattleMap, build_map
from shared.games.battle.perception import EMPTY_VIEW, Perception, signal_json
from shared.games.battle.world import World


class BattleEnd(StrEnum):
    """Why a battle ended (the match's `end_reason`)."""

    TIME_LIMIT = "time_limit"
    FORFEIT = "forfeit"
    ELIMINATED = "eliminated"
    """At most one team has units left."""


class BattleMatch(Match):
    game_name: ClassVar[str] = "battle"

    def __init__(
        self, seed: int, num_players: int, config: BattleConfig, battle_map: BattleMap | None = None
    ) -> None:
        """`battle_map` replaces the generated map (hand-placed scenarios: its spawns place the units)."""
        super().__init__(seed, num_players)
        self.cfg = config
        self.map = battle_map or build_map(
            config.map,
            config.map_width,
            config.map_height,
            seed,
            num_players,
            config.units_per_player,
            config.obstacle_density,
        )
        self.world = World(config, self.map, num_players)
        self.perception = Perception(self.world)
        self.sanitiser = ActionSanitiser(config, self.map.width, self.map.height)
        self.memory: list[dict[str, Any]] = [{} for _ in range(num_players)]
        self.forfeited = [False] * num_players
        self.end_tick = config.time_limit_ticks
        self.constants = self._constants()
        self._dt = config.dt
        self._map_json = self.map.to_json()
        self._checked: dict[int, tuple[JSON | None, SanitisedAction]] = {}
        """Per player, the action `check_action` read this turn and its reading, for step() to reuse."""

    # ----------------------------------------------------------------- turn
    def check_action(self, player: int, action: JSON | None) -> Sequence[str]:
        own = {u.uid: u.alive for u in self.world.team_units[player]}
        reading = self.sanitiser.sanitise(action, own)
        self._checked[player] = (action, reading)
        return reading.problems

    def step(self, actions: Sequence[JSON | None]) -> StepResult:
        checked, self._checked = self._checked, {}  # readings of this turn only
        if self.finished:
            return StepResult([], [])
        w = self.world
        w.turn = self.turn
        for player in range(self.num_players):
            if self.forfeited[player]:
                continue
            raw = actions[player] if player < len(actions) else None
            reading = checked.get(player)
            if reading is not None and reading[0] is raw:  # read this turn already: same object, same state
                self._apply(player, reading[1])
                continue
            own = {u.uid: u.alive for u in w.team_units[player]}
            self._apply(player, self.sanitiser.sanitise(raw, own))
        w.advance(self.cfg.ticks_per_turn, self.end_tick)
        self.turn += 1
        if self.finished and (not w.frames or w.frames[-1]["tick"] != w.tick):
            w.frames.append(w.compact_frame())  # the final state, even between two 10 Hz frames
        # Events since the last turn (a forfeit between turns included) and this turn's frames.
        result = StepResult(w.events, w.frames)
        w.events, w.frames = [], []
        return result

    def _apply(self, player: int, act: SanitisedAction) -> None:
        w = self.world
        m = w.metrics[player]
        m["invalid_actions"] += act.invalid
        if act.memory_dropped:
            m["memory_dropped"] += 1
        if act.memory is not None:
            self.memory[player] = act.memory
        for u in w.team_units[player]:
            u.fire_target = None  # fire orders last one turn; move and turn orders persist
        if act.hold:
            for u in w.team_units[player]:
                if u.alive:
                    w.order_stop(u)
                    u.turn_target = None
            return
        for uid, order in act.orders:
            u = w.unit_by_id[uid]
            if order.stop:
                w.order_stop(u)
            elif order.move is not None:
                w.order_move(u, *order.move)
            if order.turn is not None:
                u.turn_target = order.turn
            u.fire_target = order.fire
            if order.dodge is not None:
                w.order_dodge(u, order.dodge)
            if order.signal is not None:
                u.signal_word, u.signal_values = order.signal
                u.signal_tick = w.tick
            entry = order.to_json()
            entry["tick"] = w.tick
            u.history.append(entry)

    # ----------------------------------------------------------------- observation
    def observation(self, player: int) -> dict[str, JSON]:
        """Fresh dicts and lists per call, except per-tick sighting data shared between viewers: callers
        in process should treat it as read-only (bots behind HTTP or a sandbox get a serialised copy)."""
        w = self.world
        dt = self._dt
        views = self.perception.views()
        unit_xy = w.positions()[0]
        tick = w.tick
        time = tick * dt
        units = []
        channel = []
        for u in w.team_units[player]:
            view = views[u.index] if u.alive else EMPTY_VIEW
            x, y = unit_xy[u.index]
            if u.alive:
                vx, vy = u.body.velocity
                tx, ty = u.control.position
            else:
                vx = vy = 0.0
                tx, ty = x, y
            cooldown = max(0, u.next_fire_tick - tick)
            dodge_cd = max(0, u.next_dodge_tick - tick)
            units.append(
                {
                    "self": {
                        "id": u.uid,
                        "team": u.player,
                        "alive": u.alive,
                        "position": [x, y],
                        "heading": u.heading,
                        "velocity": [vx, vy],
                        "hp": u.hp,
                        "cooldown": cooldown * dt,
                        "can_fire": u.alive and cooldown == 0,
                        "dodge_ready": u.alive and dodge_cd == 0,
                        "dodge_cooldown": dodge_cd * dt,
                        "move_target": [tx, ty],
                        "tick": tick,
                        "time": time,
                    },
                    "visible_units": view.units,
                    "visible_projectiles": view.projectiles,
                    "visible_walls": view.walls,
                    "history": list(u.history),
                }
            )
            sig = signal_json(w, u.signal_word, u.signal_values, u.signal_tick)
            sig["unit"] = u.uid
            sig["alive"] = u.alive
            channel.append(sig)
        return {
            "game": "battle",
            "player": player,
            "team": player,
            "turn": self.turn,
            "tick": tick,
            "time": time,
            "units": units,
            "team_channel": channel,
            "constants": dict(self.constants),
            "memory": self.memory[player],
        }

    def _constants(self) -> dict[str, JSON]:
        """Built once per match. Nested values are tuples (JSON arrays once serialised) and the dict is
        copied per observation, so a bot called in process cannot change the match by editing them."""
        cfg = self.cfg
        return {
            "map": self.map.name,
            "width": self.map.width,
            "height": self.map.height,
            "walls": self.map.walls,
            "num_players": self.num_players,
            "units_per_player": cfg.units_per_player,
            "physics_hz": cfg.physics_hz,
            "ticks_per_turn": cfg.ticks_per_turn,
            "dt": cfg.dt,
            "time_limit_s": cfg.time_limit_s,
            "unit_radius": cfg.unit_radius,
            "unit_hp": cfg.unit_hp,
            "max_speed": cfg.max_speed,
            "acceleration": cfg.acceleration,
            "turn_rate": cfg.turn_rate,
            "fire_cooldown_s": cfg.fire_cooldown_s,
            "aim_tolerance": cfg.aim_tolerance,
            "projectile_speed": cfg.projectile_speed,
            "projectile_damage": cfg.projectile_damage,
            "projectile_ttl_s": cfg.projectile_ttl_s,
            "projectile_radius": cfg.projectile_radius,
            "dodge_speed": cfg.dodge_speed,
            "dodge_cooldown_s": cfg.dodge_cooldown_s,
            "fov_deg": cfg.fov_deg,
            "sensor_range": cfg.sensor_range,
            "friendly_fire": cfg.friendly_fire,
            "memory_limit_bytes": cfg.memory_limit_bytes,
            "signal_words": SIGNAL_WORDS,
            "spawns": self.map.spawns,
        }

    # ----------------------------------------------------------------- end and result
    @property
    def finished(self) -> bool:
        w = self.world
        return w.tick >= self.end_tick or w.decided

    def forfeit(self, player: int) -> None:
        if self.forfeited[player]:
            return
        self._checked = {}
        self.forfeited[player] = True
        w = self.world
        for u in w.team_units[player]:
            w.remove_unit(u)
        self.perception.invalidate()
        w.events.append(GameEvent(self.turn, "forfeit", player, {"tick": w.tick}))

    def _rank_key(self, player: int) -> tuple[float, ...]:
        w = self.world
        elim = w.eliminated_tick[player]
        return (
            0.0 if self.forfeited[player] else 1.0,
            float(w.alive_count[player]),
            sum(u.hp for u in w.team_units[player]),
            math.inf if elim is None else float(elim),
            w.metrics[player]["damage_dealt"],
        )

    def result(self) -> MatchResult:
        w = self.world
        keys = [self._rank_key(p) for p in range(self.num_players)]
        players = []
        for p in range(self.num_players):
            m = dict(w.metrics[p])
            m["accuracy"] = m["hits"] / m["shots"] if m["shots"] else 0.0
            m["units_alive"] = float(w.alive_count[p])
            m["total_hp"] = keys[p][2]
            rank = sum(1 for other in keys if other > keys[p])
            players.append(PlayerResult(p, rank, m["kills"] * 100.0 + m["damage_dealt"], m))
        if w.tick >= self.end_tick:
            reason = BattleEnd.TIME_LIMIT
        elif any(self.forfeited):
            reason = BattleEnd.FORFEIT
        else:
            reason = BattleEnd.ELIMINATED
        return MatchResult(players, self.turn, reason)

    def frame(self) -> dict[str, JSON]:
        w = self.world
        out = w.compact_frame()
        out["map"] = self._map_json
        out["unit_ids"] = [u.uid for u in w.units]
        out["teams"] = [u.player for u in w.units]
        return out


class BattleGame(Game):
    name: ClassVar[str] = "battle"
    title: ClassVar[str] = "Battle"
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 4
    config_model = BattleConfig
    action_example: ClassVar[str] = (
        '{"units": {"<unit id>": {"move": [x, y] or "stop", "turn": radians, "fire": [x, y], '
        '"dodge": "left" or "right", "signal": {"word": ..., "values": [a, b]}}}, "memory": {...}}: '
        "every key optional, only your own units"
    )

    def create_match(
        self, seed: int, config: dict[str, JSON] | None = None, num_players: int = 2
    ) -> BattleMatch:
        if not self.min_players <= num_players <= self.max_players:
            raise ValueError(f"battle needs {self.min_players}-{self.max_players} players, got {num_players}")
        cfg = BattleConfig.model_validate(config or {})
        return BattleMatch(seed, num_players, cfg)

    def observation_schema(self) -> dict[str, JSON]:
        from shared.games.battle.schemas import observation_schema

        return observation_schema()

    def action_schema(self) -> dict[str, JSON]:
        from shared.games.battle.schemas import action_schema

        return action_schema()

    def builtin_bots(self) -> dict[str, Decide]:
        from shared.games.battle.bots import BOTS

        return dict(BOTS)
