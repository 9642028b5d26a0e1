"""The torch engine against the reference engine, driven by the same random commands.

The commands are chosen to make things happen: pods aim at other pods (collisions, often several
per turn), shield and boost at random, and aim at their checkpoint often enough that races get
lapped and won. All races run in one `TorchRaces` batch.
"""

from __future__ import annotations

import pytest
import torch

from shared.games.podracing.engine import RaceConfig
from tests.support.podracing_parity import play_parity

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.slow
@pytest.mark.parametrize("compact", [True, False], ids=["cpu-step", "sync-free-step"])
def test_float64_matches_reference_exactly(compact: bool) -> None:
    stats = play_parity(torch.float64, RaceConfig(laps=1), seed=1, compact=compact)
    print(
        f"\nfloat64 parity ({'cpu' if compact else 'sync-free'} step): {stats.race_turns} race-turns, "
        f"{stats.pod_turns_equal}/{stats.pod_turns} pod-turns equal, "
        f"{stats.collisions} collisions, {stats.shields} shields, {stats.boosts} boosts, "
        f"{stats.finished_equal} races finished identically ({stats.winners} won)"
    )
    assert stats.first_mismatch is None, stats.first_mismatch
    assert stats.torch_capped == 0
    assert stats.ref_capped == 0
    assert stats.race_turns >= 10_000
    assert stats.collisions >= 2_000
    assert stats.shields >= 1_000
    assert stats.boosts >= 100
    assert stats.finished_equal >= 100
    assert stats.winners >= 30


@pytest.mark.slow
@pytest.mark.parametrize("compact", [True, False], ids=["cpu-step", "sync-free-step"])
def test_float64_parity_with_team_boost_and_collision_cap(compact: bool) -> None:
    """A cap of 2 collisions per turn, hit often, and one boost per player."""
    config = RaceConfig(boost_per_team=True, max_collisions_per_turn=2, laps=1, timeout_turns=30)
    stats = play_parity(torch.float64, config, seed=2, races_count=64, collision_iters=2, compact=compact)
    assert stats.first_mismatch is None, stats.first_mismatch
    assert stats.race_turns >= 2_000
    assert stats.ref_capped >= 10
    assert stats.torch_capped == stats.ref_capped


@pytest.mark.slow
@pytest.mark.parametrize("compact", [True, False], ids=["cpu-step", "sync-free-step"])
def test_float32_share_of_exact_pod_turns(compact: bool) -> None:
    stats = play_parity(
        torch.float32, RaceConfig(laps=1), seed=3, resync=True, races_count=64, compact=compact
    )
    share = stats.pod_turns_equal / stats.pod_turns
    print(
        f"\nfloat32: {stats.pod_turns_equal}/{stats.pod_turns} pod-turns equal ({share:.4%}), "
        f"{stats.races_diverged} turns needed a resync"
    )
    assert share >= 0.999
