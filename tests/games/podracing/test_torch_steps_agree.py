"""The CPU step and the sync-free step (what CUDA runs) against each other, state for state.

The parity test compares each with the reference engine on races played to the end; this one
drives one big auto-resetting batch with hostile commands (shields, boosts, pods ramming each
other, non-finite values) and a small collision cap, and compares every tensor after every turn,
so any difference in the CPU step's compaction, sparse booking or restarts shows at once.
"""

from __future__ import annotations

import math

import pytest
import torch

from shared.games.podracing.engine import RaceConfig
from shared.games.podracing.torch_engine import POD_FIELDS, TorchRaces

pytestmark = pytest.mark.usefixtures("one_torch_thread")

COMPARED = (
    *POD_FIELDS,
    "timeouts",
    "passes",
    "invalid_commands",
    "cp_x",
    "cp_y",
    "num_checkpoints",
    "total_passes",
    "turn",
    "finished",
    "winner",
    "winning_pod",
    "reason",
    "collisions",
    "collisions_capped",
    "just_finished",
    "episode_winner",
    "episode_reason",
    "episode_turns",
    "episode_passed",
)


def _hostile_commands(
    races: TorchRaces, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Half the pods chase their checkpoint, the others ram a random pod; random shields and
    boosts; a few non-finite or out-of-range values."""
    b = races.num_races
    victim = torch.randint(0, 4, (b, 4), generator=gen)
    ram = torch.stack((races.x.gather(1, victim), races.y.gather(1, victim)), -1)
    nxt = races.next_cp
    chase = torch.stack(
        (races.cp_x.gather(1, nxt) - 2 * races.vx, races.cp_y.gather(1, nxt) - 2 * races.vy), -1
    )
    target = torch.where(torch.rand(b, 4, 1, generator=gen) < 0.5, ram, chase).to(races.dtype)
    thrust = torch.randint(0, 101, (b, 4), generator=gen).to(races.dtype)
    roll = torch.rand(b, 4, generator=gen)
    shield, boost = roll < 0.05, (roll >= 0.05) & (roll < 0.08)
    noise = torch.rand(b, 4, generator=gen)
    target[..., 0] = torch.where(noise < 0.002, math.nan, target[..., 0])
    thrust = torch.where(noise > 0.998, math.inf, torch.where(noise > 0.996, -3.0, thrust))
    return target, thrust, boost, shield


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cpu_step_equals_sync_free_step(dtype: torch.dtype) -> None:
    config = RaceConfig(laps=1, max_collisions_per_turn=3, timeout_turns=40, max_turns=120)
    engines = [
        TorchRaces(256, config, dtype=dtype, auto_reset=True, seed=9, track_pool_size=512, compact=compact)
        for compact in (True, False)
    ]
    for races in engines:
        races.reset()
    gen = torch.Generator().manual_seed(4)
    ended = 0
    for turn in range(300):
        commands = _hostile_commands(engines[0], gen)
        for races in engines:
            races.step(*commands)
        for name in COMPARED:
            cpu, sync_free = getattr(engines[0], name), getattr(engines[1], name)
            assert torch.equal(cpu, sync_free), f"{name} differs after turn {turn}"
        ended += int(engines[0].just_finished.sum())
    cpu = engines[0]
    print(
        f"\n{dtype}: 300 turns x 256 races identical; {ended} races ended, "
        f"{int(cpu.collisions.sum())} collisions, {int(cpu.collisions_capped.sum())} capped turns, "
        f"{int(cpu.invalid_commands.sum())} sanitised commands"
    )
    # The run must have exercised what the CPU step does differently.
    assert ended >= 256
    assert int(cpu.collisions_capped.sum()) >= 20
    assert int(cpu.collisions.sum()) >= 5_000
    assert int(cpu.invalid_commands.sum()) >= 100
    assert set(cpu.episode_reason.tolist()) >= {1, 2}
