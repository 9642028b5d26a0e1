"""The gymnasium wrapper: passes gymnasium's checker and plays a full race against a built-in bot."""

from __future__ import annotations

import math

import numpy as np
from gymnasium.utils.env_checker import check_env

from shared.games.podracing.batched_env import OBS_DIM
from shared.games.podracing.gym_env import PodracingGymEnv


def test_passes_gymnasium_check_env() -> None:
    check_env(PodracingGymEnv(), skip_render_check=True)


def test_full_episode_against_the_runner() -> None:
    env = PodracingGymEnv(opponent="runner", config={"laps": 1})
    obs, info = env.reset(seed=7)
    assert obs.shape == (OBS_DIM,)
    assert obs.dtype == np.float32
    action = np.zeros(8, dtype=np.float32)
    action[[1, 5]] = 1.0  # full thrust straight at the next checkpoint
    total = 0.0
    for _ in range(600):
        obs, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(obs)
        total += reward
        if terminated or truncated:
            break
    assert terminated
    assert info["reason"] in ("won", "timeout", "turn_limit")
    assert info["winner"] in (0, 1, None)
    assert total > 0  # checkpoints were passed


def test_same_seed_same_episode_and_bad_actions_survive() -> None:
    def play(seed: int) -> list[float]:
        env = PodracingGymEnv(opponent="blocker")
        env.reset(seed=seed)
        rewards = []
        for turn in range(40):
            action = np.full(8, 0.5, dtype=np.float32)
            if turn % 7 == 0:
                action[0] = math.nan
                action[5] = math.inf
            rewards.append(env.step(action)[1])
        return rewards

    first = play(3)
    assert first == play(3)
    assert all(math.isfinite(r) for r in first)
