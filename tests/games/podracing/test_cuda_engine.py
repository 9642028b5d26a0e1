"""The torch engine on a CUDA GPU (skipped on machines without one): the reference parity of
`test_torch_parity`, eager and through `torch.compile` (the step `scripts.bench_podracing
--compile` times)."""

from __future__ import annotations

import pytest
import torch

from shared.games.podracing.engine import RaceConfig
from tests.support.podracing_parity import play_parity

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_float64_on_cuda_matches_reference_exactly(compiled: bool) -> None:
    stats = play_parity(
        torch.float64, RaceConfig(laps=1), seed=1, compact=False, device="cuda", compiled=compiled
    )
    print(f"\nfloat64 on cuda ({compiled=}): {stats.pod_turns_equal}/{stats.pod_turns} pod-turns equal")
    assert stats.first_mismatch is None, stats.first_mismatch
    assert stats.race_turns >= 10_000
    assert stats.collisions >= 2_000


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_float32_on_cuda_share_of_exact_pod_turns(compiled: bool) -> None:
    stats = play_parity(
        torch.float32,
        RaceConfig(laps=1),
        seed=3,
        resync=True,
        races_count=64,
        compact=False,
        device="cuda",
        compiled=compiled,
    )
    share = stats.pod_turns_equal / stats.pod_turns
    print(f"\nfloat32 on cuda ({compiled=}): {share:.4%} of pod-turns exact")
    assert share >= 0.999
