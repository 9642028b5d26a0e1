"""The batched torch engine and env beyond parity: shapes, dtypes, sanitising, resets, no host sync."""

from __future__ import annotations

import math

import pytest
import torch

from shared.games.podracing.batched_env import OBS_DIM, BatchedPodracingEnv
from shared.games.podracing.engine import (
    HEIGHT,
    MARGIN,
    MIN_CHECKPOINT_DISTANCE,
    WIDTH,
    PodCommand,
    Race,
    RaceConfig,
)
from shared.games.podracing.torch_engine import REASON_TIMEOUT, TorchRaces
from shared.games.podracing.torch_tracks import MAX_CHECKPOINTS, Tracks, generate_tracks

pytestmark = pytest.mark.usefixtures("one_torch_thread")


STATE = {
    "x": torch.float,
    "y": torch.float,
    "vx": torch.float,
    "vy": torch.float,
    "angle": torch.float,
    "next_cp": torch.long,
    "passed": torch.long,
    "shield_cd": torch.long,
    "boost_available": torch.bool,
    "shield_active": torch.bool,
}


def _commands(b: int, dtype: torch.dtype = torch.float64) -> tuple[torch.Tensor, torch.Tensor]:
    target = torch.full((b, 4, 2), 8000.0, dtype=dtype)
    thrust = torch.full((b, 4), 100.0, dtype=dtype)
    return target, thrust


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_state_keeps_dtype_and_shape(dtype: torch.dtype) -> None:
    races = TorchRaces(16, dtype=dtype, collision_iters=4, auto_reset=True, seed=3, track_pool_size=64)
    races.reset()
    gen = torch.Generator().manual_seed(0)
    for _ in range(30):
        target = torch.rand(16, 4, 2, generator=gen, dtype=torch.float64) * 16000
        thrust = torch.randint(0, 101, (16, 4), generator=gen)  # integer thrust is accepted too
        shield = torch.rand(16, 4, generator=gen) < 0.1
        races.step(target, thrust, shield=shield)
    for name, kind in STATE.items():
        tensor = getattr(races, name)
        assert tensor.shape == (16, 4), name
        assert tensor.dtype == (dtype if kind is torch.float else kind), name
    for name in ("x", "y", "vx", "vy"):
        values = getattr(races, name)
        assert torch.equal(values, torch.round(values)), f"{name} must be whole after a turn"
    assert ((races.angle >= 0) & (races.angle < 360)).all()
    assert races.timeouts.shape == (16, 2)
    assert races.turn.shape == (16,)
    assert races.cp_x.shape == (16, MAX_CHECKPOINTS)
    assert races.cp_x.dtype == dtype


def test_non_finite_and_out_of_range_commands_are_fixed_and_counted() -> None:
    races = TorchRaces(2, RaceConfig(), collision_iters=2)
    races.load_tracks([[(3000, 3000), (12000, 6000), (8000, 2500)]] * 2)
    target, thrust = _commands(2)
    races.step(target, thrust)  # turn 0: every pod faces (8000, 8000)
    angle_before = races.angle.clone()
    target[0, 0] = torch.tensor([math.nan, 1.0])
    target[0, 1, 1] = math.inf
    thrust[0, 2] = math.nan
    thrust[1, 0] = -5.0
    thrust[1, 3] = 1e9
    races.step(target, thrust)
    assert races.invalid_commands.tolist() == [[2, 1], [1, 1]]
    assert races.angle[0, 0] == angle_before[0, 0]
    assert races.angle[0, 1] == angle_before[0, 1]
    for name in ("x", "y", "vx", "vy", "angle"):
        assert torch.isfinite(getattr(races, name)).all(), name
    # The clamped thrust of 1e9 moved pod 3 of race 1 like a thrust of 100 does pod 2.
    speed = torch.hypot(races.vx, races.vy)
    assert speed[1, 3] < 200


def test_finished_races_freeze_without_auto_reset() -> None:
    config = RaceConfig(timeout_turns=3)
    refs = [Race.from_seed(seed, config) for seed in range(3)]
    races = TorchRaces(3, config, collision_iters=2)
    races.load_tracks([ref.checkpoints for ref in refs])
    target = torch.zeros(3, 4, 2, dtype=torch.float64)
    target[..., 0] = races.x
    target[..., 1] = races.y
    thrust = torch.zeros(3, 4)
    for _ in range(3):
        races.step(target, thrust)
    assert races.finished.all()
    assert (races.reason == REASON_TIMEOUT).all()
    for ref in refs:
        for _ in range(3):
            ref.step([PodCommand(pod.x, pod.y, 0) for pod in ref.pods])
    # Both players timed out: the leader on progress wins, as in the reference.
    assert races.winner.tolist() == [-1 if ref.winner is None else ref.winner for ref in refs]
    frozen = (races.turn.clone(), races.timeouts.clone())
    races.step(target, thrust)
    assert torch.equal(races.turn, frozen[0])
    assert torch.equal(races.timeouts, frozen[1])


def test_auto_reset_restarts_finished_races_on_new_tracks() -> None:
    config = RaceConfig(timeout_turns=2)
    races = TorchRaces(32, config, collision_iters=2, auto_reset=True, seed=5, track_pool_size=256)
    races.reset()
    cps_before = races.cp_x.clone()
    target = torch.stack((races.x, races.y), -1)
    thrust = torch.zeros(32, 4)
    races.step(target, thrust)
    assert not races.just_finished.any()
    races.step(target, thrust)
    assert races.just_finished.all()
    assert (races.episode_reason == REASON_TIMEOUT).all()
    assert (races.episode_turns == 2).all()
    assert (races.turn == 0).all()
    assert not races.finished.any()
    assert (races.timeouts == 2).all()
    assert (races.passed == 1).all()
    assert (races.next_cp == 1).all()
    assert not torch.equal(races.cp_x, cps_before)


@pytest.mark.slow
def test_step_never_reads_tensor_data() -> None:
    """On the meta device tensors have no data: any .item(), bool(tensor), .tolist() or
    data-dependent shape would raise, so a full step there proves the step is sync-free."""
    races = TorchRaces(8, device="meta", dtype=torch.float32, collision_iters=3, auto_reset=True)
    races.reset()
    target = torch.zeros(8, 4, 2, device="meta")
    thrust = torch.zeros(8, 4, device="meta")
    flags = torch.zeros(8, 4, dtype=torch.bool, device="meta")
    races.step(target, thrust, flags, flags)
    env = BatchedPodracingEnv(8, device="meta")
    env.reset()
    obs, reward, terminated, _, _ = env.step(torch.zeros(8, 8, device="meta"))
    assert obs.shape == (8, OBS_DIM)
    assert reward.shape == (8,)
    assert terminated.shape == (8,)
    with pytest.raises(NotImplementedError):
        races.x.tolist()


def _assert_valid(tracks: Tracks, lo: int, hi: int) -> None:
    counts = tracks.count
    assert counts.min() >= lo
    assert counts.max() <= hi
    x, y = tracks.x, tracks.y
    assert torch.equal(x, torch.round(x))
    assert torch.equal(y, torch.round(y))
    assert x.min() >= MARGIN
    assert x.max() <= WIDTH - MARGIN
    assert y.min() >= MARGIN
    assert y.max() <= HEIGHT - MARGIN
    slots = torch.arange(MAX_CHECKPOINTS)
    real = slots[None, :] < counts[:, None]
    d2 = (x[:, :, None] - x[:, None, :]) ** 2 + (y[:, :, None] - y[:, None, :]) ** 2
    pair = real[:, :, None] & real[:, None, :] & ~torch.eye(MAX_CHECKPOINTS, dtype=torch.bool)
    assert (d2[pair] > MIN_CHECKPOINT_DISTANCE**2).all()
    assert torch.equal(x[~real], x[:, :1].expand_as(x)[~real])


def test_track_generator_obeys_the_reference_constraints() -> None:
    gen = torch.Generator().manual_seed(11)
    tracks = generate_tracks(3000, RaceConfig(checkpoints_min=3, checkpoints_max=8), generator=gen)
    _assert_valid(tracks, 3, 8)
    assert set(tracks.count.tolist()) == set(range(3, 9))


def test_track_generator_stays_valid_when_sampling_fails() -> None:
    """Starved of candidates, dense tracks fall back (shorter if allowed, else a fixed layout)."""
    tracks = generate_tracks(500, RaceConfig(checkpoints_min=8, checkpoints_max=8), candidates=2, rounds=1)
    _assert_valid(tracks, 8, 8)
    tracks = generate_tracks(500, RaceConfig(checkpoints_min=4, checkpoints_max=8), candidates=2, rounds=1)
    _assert_valid(tracks, 4, 8)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batched_env_contract(dtype: torch.dtype) -> None:
    env = BatchedPodracingEnv(64, dtype=dtype, config=RaceConfig(laps=1, max_turns=40), seed=2)
    obs = env.reset()
    assert obs.shape == (64, OBS_DIM)
    assert obs.dtype == dtype
    gen = torch.Generator().manual_seed(1)
    finished = 0
    for turn in range(45):
        actions = torch.rand(64, 8, generator=gen) * 2 - 1
        actions[:, 1] = 1.0
        if turn == 5:
            actions[0, 0] = math.nan
            actions[1, 1] = math.inf
        obs, reward, terminated, truncated, info = env.step(actions)
        assert obs.shape == (64, OBS_DIM)
        assert obs.dtype == dtype
        assert torch.isfinite(obs).all()
        assert torch.isfinite(reward).all()
        assert reward.shape == (64,)
        assert terminated.dtype == torch.bool
        assert not truncated.any()
        finished += int(terminated.sum())
    assert finished >= 64  # every race ended at least once (turn limit 40) and restarted
    assert info["invalid_commands"][:2, 0].sum() == 2
