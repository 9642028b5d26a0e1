"""A single podracing race as a `gymnasium.Env`, on the reference engine.

For tools that expect the standard gymnasium API (checkers, baselines, notebooks). The race is a
real `PodracingMatch` (the same code that plays ladder matches), the opponent is a built-in bot
from `bots.py`, and actions go through the match's own JSON sanitiser, so anything learnt here
plays the same game as the ladder. Observations and actions have the same layout as
`BatchedPodracingEnv` (see batched_env.py), so a policy moves between the two unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import torch

from shared.games.podracing import bots
from shared.games.podracing.batched_env import ACTION_DIM, AIM_DISTANCE, OBS_DIM, observe
from shared.games.podracing.config import PodracingConfig
from shared.games.podracing.game import PodracingMatch
from shared.games.podracing.torch_engine import TorchRaces

OPPONENTS = {"runner": bots.runner, "blocker": bots.blocker}


class PodracingGymEnv(gym.Env[np.ndarray, np.ndarray]):
    """Player 0's two pods against a built-in bot; one episode is one race."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        opponent: str = "runner",
        config: dict[str, Any] | None = None,
        checkpoint_reward: float = 1.0,
        distance_reward: float = 1.0,
        win_reward: float = 10.0,
    ) -> None:
        if opponent not in OPPONENTS:
            raise ValueError(f"unknown opponent {opponent!r}; choose from {sorted(OPPONENTS)}")
        self.opponent = OPPONENTS[opponent]
        self.config = PodracingConfig.model_validate(config or {})
        self.observation_space = gym.spaces.Box(-10.0, 10.0, shape=(OBS_DIM,), dtype=np.float32)
        self.action_space = gym.spaces.Box(-1.0, 1.0, shape=(ACTION_DIM,), dtype=np.float32)
        self.checkpoint_reward = checkpoint_reward
        self.distance_reward = distance_reward
        self.win_reward = win_reward
        # A one-race torch mirror computes observations exactly as the batched env does.
        self._mirror = TorchRaces(1, self.config.to_race_config(), dtype=torch.float64)
        self.match: PodracingMatch | None = None
        self._dist = [0.0, 0.0]

    def reset(
        self,
        *,
        seed: int | None = None,
        options: dict[str, Any] | None = None,  # noqa: ARG002 (gymnasium's reset signature)
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        match_seed = int(self.np_random.integers(0, 2**31 - 1))
        self.match = PodracingMatch(match_seed, self.config)
        self._dist = self._distances()
        return self._observation(), {"seed": match_seed}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        match = self.match
        if match is None:
            raise RuntimeError("call reset() first")
        race = match.race
        passed_before = [race.pods[i].checkpoints_passed for i in range(2)]
        mine = self._json_action(np.asarray(action, dtype=np.float64))
        theirs = self.opponent(match.observation(1))
        match.step([mine, theirs])
        passes = [race.pods[i].checkpoints_passed - passed_before[i] for i in range(2)]
        dist = self._distances()
        terminated = match.finished
        closer = sum(self._dist[i] - dist[i] for i in range(2) if passes[i] == 0)
        reward = self.checkpoint_reward * sum(passes) + self.distance_reward * closer * 0.001
        if terminated and race.winner is not None:
            reward += self.win_reward if race.winner == 0 else -self.win_reward
        self._dist = dist
        info = {"winner": race.winner, "reason": race.reason, "turn": race.turn}
        return self._observation(), float(reward), terminated, False, info

    def _distances(self) -> list[float]:
        assert self.match is not None
        race = self.match.race
        out = []
        for pod in race.pods[:2]:
            cx, cy = race.checkpoints[pod.next_checkpoint]
            out.append(math.hypot(pod.x - cx, pod.y - cy))
        return out

    def _observation(self) -> np.ndarray:
        assert self.match is not None
        self._mirror.set_race(0, self.match.race)
        return observe(self._mirror, 0)[0].numpy().astype(np.float32)

    def _json_action(self, action: np.ndarray) -> dict[str, Any]:
        """Box action -> the JSON a bot would send; non-finite values are left to the sanitiser."""
        assert self.match is not None
        race = self.match.race
        pods = []
        for k in range(2):
            pod = race.pods[k]
            offset, thrust, shield, boost = (float(v) for v in action[4 * k : 4 * k + 4])
            cx, cy = race.checkpoints[pod.next_checkpoint]
            heading = math.atan2(cy - pod.y, cx - pod.x) + offset * math.pi
            x, y = pod.x + math.cos(heading) * AIM_DISTANCE, pod.y + math.sin(heading) * AIM_DISTANCE
            entry: dict[str, Any] = {
                "x": round(x) if math.isfinite(x) else None,
                "y": round(y) if math.isfinite(y) else None,
            }
            if shield > 0.0:
                entry["thrust"] = "SHIELD"
            elif boost > 0.0:
                entry["thrust"] = "BOOST"
            elif math.isfinite(thrust):
                entry["thrust"] = round((min(max(thrust, -1.0), 1.0) + 1.0) * 0.5 * race.config.max_thrust)
            else:
                entry["thrust"] = None
            pods.append(entry)
        return {"pods": pods}
