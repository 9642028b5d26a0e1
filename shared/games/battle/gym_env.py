"""A gymnasium environment: one team of a battle match against a built-in bot.

The observation is a fixed-size float32 vector (per own unit: its state, the nearest visible enemies
and the nearest visible hostile projectiles, all scaled to [-1, 1]); the action is MultiDiscrete per
unit (move direction, turn direction, fire at the nearest visible enemy with lead, dodge).
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from shared.games.battle.bots import BOTS, lead_point
from shared.games.battle.game import BattleEnd, BattleGame, BattleMatch

SELF_FEATURES = 10
ENEMY_FEATURES = 6
PROJ_FEATURES = 5
DIRECTIONS = [(math.cos(k * math.pi / 4), math.sin(k * math.pi / 4)) for k in range(8)]


class BattleEnv(gym.Env[np.ndarray, np.ndarray]):
    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        opponent: str = "aggressive",
        config: dict[str, Any] | None = None,
        max_enemies: int = 3,
        max_projectiles: int = 3,
    ) -> None:
        self.game = BattleGame()
        self.config = dict(config or {})
        self.cfg = self.game.config_model.model_validate(self.config)
        self.opponent = BOTS[opponent]
        self.k = self.cfg.units_per_player
        self.max_enemies, self.max_projectiles = max_enemies, max_projectiles
        self.per_unit = SELF_FEATURES + max_enemies * ENEMY_FEATURES + max_projectiles * PROJ_FEATURES
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(self.k * self.per_unit,), dtype=np.float32)
        self.action_space = spaces.MultiDiscrete(np.array([9, 9, 2, 3] * self.k, dtype=np.int64))
        self._buf = np.zeros(self.k * self.per_unit, dtype=np.float32)
        self.match: BattleMatch | None = None
        self._last_obs: dict[str, Any] | None = None

    # ----------------------------------------------------------------- gym API
    def reset(
        self,
        *,
        seed: int | None = None,
        options: dict[str, Any] | None = None,  # noqa: ARG002 (gymnasium's reset signature)
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = int(self.np_random.integers(0, 2**31 - 1))
        self.match = self.game.create_match(match_seed, self.config, 2)
        self._last_obs = self.match.observation(0)
        return self._encode(self._last_obs), {"seed": match_seed}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        assert self.match is not None, "call reset() first"
        assert self._last_obs is not None, "call reset() first"
        m = self.match
        before = dict(m.world.metrics[0])
        act = self._decode(np.asarray(action), self._last_obs)
        m.step([act, self.opponent(m.observation(1))])
        after = m.world.metrics[0]
        hp = self.cfg.unit_hp
        reward = (after["damage_dealt"] - before["damage_dealt"]) / hp
        reward -= (after["damage_taken"] - before["damage_taken"]) / hp
        reward -= 0.5 * (after["friendly_hits"] - before["friendly_hits"]) * self.cfg.projectile_damage / hp
        terminated = truncated = False
        info: dict[str, Any] = {}
        if m.finished:
            res = m.result()
            rank = res.players[0].rank
            reward += 1.0 if rank == 0 and res.players[1].rank == 1 else (-1.0 if rank == 1 else 0.0)
            terminated = res.reason != BattleEnd.TIME_LIMIT
            truncated = not terminated
            info["result"] = res.to_json()
        self._last_obs = m.observation(0)
        return self._encode(self._last_obs), float(reward), terminated, truncated, info

    # ----------------------------------------------------------------- encoding
    def _encode(self, obs: dict[str, Any]) -> np.ndarray:
        buf = self._buf
        buf.fill(0.0)
        c = obs["constants"]
        w, h, rng = c["width"], c["height"], c["sensor_range"]
        vmax = c["max_speed"] + c["dodge_speed"]
        pspeed = c["projectile_speed"]
        for i, unit in enumerate(obs["units"][: self.k]):
            me = unit["self"]
            o = i * self.per_unit
            if not me["alive"]:
                continue
            x, y = me["position"]
            buf[o : o + SELF_FEATURES] = (
                2 * x / w - 1,
                2 * y / h - 1,
                math.cos(me["heading"]),
                math.sin(me["heading"]),
                me["velocity"][0] / vmax,
                me["velocity"][1] / vmax,
                me["hp"] / c["unit_hp"],
                me["cooldown"] / c["fire_cooldown_s"],
                1.0 if me["dodge_ready"] else 0.0,
                1.0,
            )
            o += SELF_FEATURES
            enemies = sorted((v for v in unit["visible_units"] if v["team"] != obs["team"]), key=_distance)
            for j, e in enumerate(enemies[: self.max_enemies]):
                b = o + j * ENEMY_FEATURES
                buf[b : b + ENEMY_FEATURES] = (
                    (e["position"][0] - x) / rng,
                    (e["position"][1] - y) / rng,
                    e["velocity"][0] / vmax,
                    e["velocity"][1] / vmax,
                    e["hp"] / c["unit_hp"],
                    1.0,
                )
            o += self.max_enemies * ENEMY_FEATURES
            shots = sorted(
                (p for p in unit["visible_projectiles"] if p["team"] != obs["team"]), key=_distance
            )
            for j, p in enumerate(shots[: self.max_projectiles]):
                b = o + j * PROJ_FEATURES
                buf[b : b + PROJ_FEATURES] = (
                    (p["position"][0] - x) / rng,
                    (p["position"][1] - y) / rng,
                    p["velocity"][0] / pspeed,
                    p["velocity"][1] / pspeed,
                    1.0,
                )
        np.clip(buf, -1.0, 1.0, out=buf)
        return buf.copy()

    def _decode(self, action: np.ndarray, obs: dict[str, Any]) -> dict[str, Any]:
        orders: dict[str, Any] = {}
        speed = obs["constants"]["projectile_speed"]
        for i, unit in enumerate(obs["units"][: self.k]):
            me = unit["self"]
            if not me["alive"]:
                continue
            move, turn, fire, dodge = (int(v) for v in action[4 * i : 4 * i + 4])
            x, y = me["position"]
            cmd: dict[str, Any] = {}
            if move == 0:
                cmd["move"] = "stop"
            else:
                dx, dy = DIRECTIONS[move - 1]
                cmd["move"] = [x + 3.0 * dx, y + 3.0 * dy]
            if turn > 0:
                cmd["turn"] = (turn - 1) * math.pi / 4
            if fire:
                enemies = [v for v in unit["visible_units"] if v["team"] != obs["team"]]
                if enemies:
                    e = min(enemies, key=_distance)
                    cmd["fire"] = list(lead_point((x, y), e["position"], e["velocity"], speed))
            if dodge:
                cmd["dodge"] = "left" if dodge == 1 else "right"
            orders[me["id"]] = cmd
        return {"units": orders}


def _distance(item: dict[str, Any]) -> float:
    return float(item["distance"])
