"""The trainer learns: a tiny CPU budget clearly beats the untrained policy; config changes and
checkpoints behave as the service relies on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from services.trainer.curriculum import Stage
from services.trainer.measure import measure
from services.trainer.ppo import Args, Trainer

TINY = {"num_envs": 64, "num_steps": 32, "num_minibatches": 4, "device": "cpu"}


@pytest.mark.slow
def test_a_tiny_budget_clearly_beats_the_untrained_policy() -> None:
    args = Args(seed=3, total_steps=10**7, num_envs=256, num_steps=16, learning_rate=1e-3, device="cpu")
    trainer = Trainer(args)
    before = measure(trainer.agent.actor, num_races=32, turns=200)
    trainer.run(max_iterations=30)
    after = measure(trainer.agent.actor, num_races=32, turns=200)
    # An untrained policy barely reaches a checkpoint; a trained one races.
    assert after.checkpoints_per_100_turns > max(2.0, 2.0 * before.checkpoints_per_100_turns), (before, after)


@pytest.mark.slow
def test_config_changes_apply_at_the_next_iteration_boundary() -> None:
    trainer = Trainer(Args(seed=1, total_steps=10**7, anneal_lr=False, **TINY))  # type: ignore[arg-type]
    seen: list[dict[str, Any]] = []
    asked = {"learning_rate": 1e-4, "ent_coef": 0.02, "rewards": {"checkpoint": 2.0}}

    def before_iteration() -> dict[str, Any] | None:
        return asked if len(seen) == 2 else None

    trainer.run(max_iterations=4, on_iteration=seen.append, before_iteration=before_iteration)
    assert [m["learning_rate"] for m in seen] == [pytest.approx(3e-4)] * 2 + [pytest.approx(1e-4)] * 2
    assert [m["ent_coef"] for m in seen] == [0.003, 0.003, 0.02, 0.02]
    assert trainer.args.rewards.checkpoint == 2.0
    assert trainer.args.rewards.win == Args().rewards.win, "a partial reward change keeps the other weights"
    with pytest.raises(ValueError, match="num_envs"):
        trainer.apply_changes({"num_envs": 8})


@pytest.mark.slow
def test_a_stage_change_by_hand_and_a_checkpoint_round_trip(tmp_path: Path) -> None:
    trainer = Trainer(Args(seed=2, total_steps=10**7, **TINY))  # type: ignore[arg-type]
    trainer.run(max_iterations=1)
    trainer.apply_changes({"stage": "self_play"})
    metrics = trainer.run(max_iterations=1)[0]
    assert metrics["stage"] == Stage.SELF_PLAY
    assert (
        metrics["episodes_self"] + metrics["episodes_runner"] + metrics["episodes_blocker"]
        == metrics["episodes"]
    )
    trainer.league.add("it2", 2, trainer.agent.actor.state_dict())
    path = tmp_path / "ckpt.pt"
    trainer.save(path)
    loaded = Trainer.load(path)
    assert (loaded.iteration, loaded.global_step, loaded.stage) == (2, trainer.global_step, Stage.SELF_PLAY)
    assert len(loaded.league) == 1
    for key, value in trainer.agent.state_dict().items():
        assert torch.equal(loaded.agent.state_dict()[key], value), key
    assert loaded.run(max_iterations=1)[0]["iteration"] == 3


def test_a_missing_device_is_refused_with_a_clear_error() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    from services.trainer.ppo import DeviceUnavailable

    with pytest.raises(DeviceUnavailable, match="no CUDA"):
        Trainer(Args(device="cuda", **{k: v for k, v in TINY.items() if k != "device"}))  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_resumed_run_may_play_more_races_and_comes_from_another_device(tmp_path: Path) -> None:
    """A run trained on a CPU goes on on a GPU with more races: races restart on resume anyway, and a
    generator state saved on another kind of device (a CUDA state is 16 bytes, a CPU one 5,056) is
    replaced by a fresh stream rather than refused."""
    trainer = Trainer(Args(seed=4, total_steps=10**7, **TINY))  # type: ignore[arg-type]
    trainer.run(max_iterations=1)
    trainer.league.add("it1", 1, trainer.agent.actor.state_dict())
    path = tmp_path / "ckpt.pt"
    trainer.save(path)
    state = torch.load(path, weights_only=True)
    state["generator"] = torch.zeros(16, dtype=torch.uint8)  # the size of a CUDA generator's state
    torch.save(state, path)
    loaded = Trainer.load(path, changes={"num_envs": 32, "num_steps": 8, "stage": "league"})
    assert (loaded.args.num_envs, loaded.args.num_steps, loaded.stage) == (32, 8, Stage.LEAGUE)
    metrics = loaded.run(max_iterations=1)[0]
    assert metrics["global_step"] == trainer.global_step + 32 * 8
    assert metrics["league_size"] >= 1


@pytest.mark.slow
def test_no_stage_exit_before_the_races_have_settled_after_a_restart(tmp_path: Path) -> None:
    """Right after the races restart, the races that finish are the short ones: an exit condition
    waits `settle_turns` turns. With an exit that always holds, the run leaves its stage only then,
    and a stage switch or a resume restarts the wait."""
    from shared.training.config import CurriculumConfig

    always = CurriculumConfig(solo_exit_rate=0.0, min_episodes=0, settle_turns=64)
    trainer = Trainer(Args(seed=6, total_steps=10**7, **TINY).model_copy(update={"curriculum": always}))  # type: ignore[arg-type]
    stages = [m["next_stage"] for m in trainer.run(max_iterations=2)]
    assert stages == [Stage.SOLO, Stage.RUNNER], "32 + 32 turns: the exit is checked after the second"
    trainer.apply_changes({"stage": "solo"})
    assert [m["next_stage"] for m in trainer.run(max_iterations=2)] == [Stage.SOLO, Stage.RUNNER]
    trainer.save(tmp_path / "ckpt.pt")
    resumed = Trainer.load(tmp_path / "ckpt.pt", changes={"stage": "solo"})
    assert [m["next_stage"] for m in resumed.run(max_iterations=2)] == [Stage.SOLO, Stage.RUNNER]
