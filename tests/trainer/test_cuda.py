"""The trainer on a CUDA GPU (skipped on machines without one): a CPU checkpoint goes on there with
more races and a league, and a CUDA checkpoint comes back to the CPU. Every random draw of the
trainer uses the run's generator, which lives on the run's device."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from services.trainer.curriculum import Stage
from services.trainer.ppo import Args, Trainer

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

SMALL = {"num_envs": 64, "num_steps": 16, "num_minibatches": 4}


def test_a_cpu_checkpoint_trains_on_with_its_league_on_cuda_and_comes_back(tmp_path: Path) -> None:
    cpu = Trainer(Args(seed=5, total_steps=10**7, device="cpu", stage=Stage.LEAGUE, **SMALL))  # type: ignore[arg-type]
    cpu.league.add("it0", 0, cpu.agent.actor.state_dict())
    cpu.run(max_iterations=1)
    cpu.save(tmp_path / "cpu.pt")

    gpu = Trainer.load(tmp_path / "cpu.pt", device="cuda", changes={"num_envs": 4096})
    assert gpu.device.type == "cuda"
    assert gpu.args.num_envs == 4096
    metrics = gpu.run(max_iterations=2)
    assert [m["iteration"] for m in metrics] == [2, 3]
    assert metrics[-1]["league_size"] >= 1
    gpu.save(tmp_path / "gpu.pt")

    back = Trainer.load(tmp_path / "gpu.pt", device="cpu", changes={"num_envs": 64})
    assert back.run(max_iterations=1)[0]["iteration"] == 4
    loaded = Trainer.load(tmp_path / "gpu.pt", device="cpu").agent.state_dict()
    for key, value in gpu.agent.state_dict().items():
        assert torch.equal(value.cpu(), loaded[key]), key
