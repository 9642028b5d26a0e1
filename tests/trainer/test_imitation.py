"""Imitation: the nearest action to a command, DAgger's labels are the teacher's actions on the
states the student visits, and a small imitation run clearly beats the untrained policy."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
import torch

from services.trainer.actions import ActionTable, Kind, nearest_actions
from services.trainer.curriculum import Stage
from services.trainer.env import TrainingEnv, command_rotation, policy_commands
from services.trainer.imitation import BATCHED_TEACHERS, BuiltinTeacher, Teacher
from services.trainer.measure import measure
from services.trainer.opponents import OpponentKind
from services.trainer.ppo import Args, Trainer


def test_the_nearest_action_by_hand() -> None:
    table = ActionTable.of("r5t3")  # rotations -18 -9 0 9 18 x thrusts 0 .5 1, then SHIELD, BOOST
    degrees = torch.tensor([10.0, 40.0, -3.0, 5.0, 0.0])
    rotation = degrees.deg2rad()
    thrust = torch.tensor([0.6, 1.0, 0.2, 1.0, 1.0])
    shield = torch.tensor([False, False, False, True, False])
    boost = torch.tensor([False, False, False, False, True])
    chosen = nearest_actions(table, rotation, thrust, shield, boost)
    # 10 deg, 60% -> (9, 0.5) = index 3 x 3 + 1; 40 deg is clamped to 18 -> (18, 1.0) = 14;
    # -3 deg, 20% -> (0, 0) = 6; SHIELD = 15; BOOST = 16.
    assert chosen.tolist() == [10, 14, 6, 15, 16]
    assert table.kind[15] == Kind.SHIELD
    assert table.kind[16] == Kind.BOOST


class RecordingTeacher(Teacher):
    """The blocker, recording what it labelled and what it would have ordered."""

    def __init__(self) -> None:
        self.inner = BuiltinTeacher("builtin:blocker")
        self.name = self.inner.name
        self.features: list[torch.Tensor] = []
        self.labels_given: list[torch.Tensor] = []
        self.commands: list[tuple[torch.Tensor, ...]] = []
        self.orders: list[tuple[torch.Tensor, ...]] = []

    def labels(self, env: TrainingEnv) -> torch.Tensor:
        labels = self.inner.labels(env)
        target, thrust, boost, shield = self.inner.commands(env.races)
        rotation = command_rotation(env.view, 0, target.float())
        self.commands.append((rotation, thrust.float(), boost, shield))
        played = policy_commands(env.view, 0, labels, float(env.config.max_thrust), env.table)
        self.orders.append((command_rotation(env.view, 0, played[0]), played[1], played[2], played[3]))
        self.features.append(env.features[:, :2].clone())
        self.labels_given.append(labels)
        return labels


@pytest.mark.slow
def test_dagger_labels_are_the_teachers_actions_on_the_students_states() -> None:
    teacher = RecordingTeacher()
    args = Args(
        seed=8, num_envs=32, num_steps=16, device="cpu", teacher="builtin:blocker", stage=Stage.IMITATE
    )
    trainer = Trainer(args, teacher)
    played: list[torch.Tensor] = []
    step = trainer.env.step

    def recording_step(actions: torch.Tensor, *rest: object) -> object:
        played.append(actions.clone())
        return step(actions, *rest)  # type: ignore[arg-type]

    trainer.env.step = recording_step  # type: ignore[method-assign, assignment]
    first = trainer.iterate()
    second = trainer.iterate()
    assert first["teacher_drove"] is True
    assert second["teacher_drove"] is False
    steps = args.num_steps
    # Round 1: the teacher drives; round 2: the student does (and plays otherwise than the teacher).
    for t in range(steps):
        assert torch.equal(played[t], teacher.labels_given[t])
    differ = sum(int((played[t] != teacher.labels_given[t]).sum()) for t in range(steps, 2 * steps))
    assert differ > 0, "the student should drive the second round"
    # Every state visited is in the aggregate with the teacher's label, in order.
    assert trainer.labelled is not None
    assert trainer.labelled.size == 2 * steps * args.num_envs * 2
    assert torch.equal(
        trainer.labelled.obs[: trainer.labelled.size], torch.cat(teacher.features).reshape(-1, 56)
    )
    assert torch.equal(
        trainer.labelled.targets[: trainer.labelled.size].argmax(-1),
        torch.cat(teacher.labels_given).flatten(),
    )
    # Each label is the teacher's order on that state, to the grid: same kind; for a thrust, the
    # rotation within half a grid step (9 degrees / 2) of the teacher's (clamped to 18) and the
    # thrust within 25 (SHIELD and BOOST are played straight ahead in this set).
    for (rotation, thrust, boost, shield), (o_rotation, o_thrust, o_boost, o_shield) in zip(
        teacher.commands, teacher.orders, strict=True
    ):
        assert torch.equal(shield, o_shield)
        assert torch.equal(boost & ~shield, o_boost)
        limit = math.radians(18.0)
        plain = (~shield & ~boost).float()
        turn_error = (rotation.clamp(-limit, limit) - o_rotation).abs() * plain
        assert float(turn_error.max()) <= math.radians(4.5) + 1e-4
        assert float(((thrust - o_thrust).abs() * plain).max()) <= 25.0 + 1e-4


@pytest.mark.slow
def test_a_small_imitation_run_clearly_beats_the_untrained_policy() -> None:
    """30 DAgger iterations on the blocker (about 250,000 steps, 20-40 s of one CPU thread): the
    student wins races against the built-in runner on the batched engine; the untrained policy
    never does."""
    args = Args(
        seed=3,
        num_envs=128,
        num_steps=32,
        imitation_updates=32,
        device="cpu",
        teacher="builtin:blocker",
        stage=Stage.IMITATE,
    )
    trainer = Trainer(args)
    before = measure(trainer.agent.actor, OpponentKind.RUNNER, num_races=64, turns=300)
    started = time.monotonic()
    history = trainer.run(max_iterations=30)
    after = measure(trainer.agent.actor, OpponentKind.RUNNER, num_races=64, turns=300)
    print(f"\n{len(history)} iterations in {time.monotonic() - started:.0f} s: {before} -> {after}")
    assert history[-1]["imitation_agreement"] > 0.5, history[-1]
    assert after.checkpoints_per_100_turns > 2.0 * max(1.0, before.checkpoints_per_100_turns), (before, after)
    assert after.win_rate is not None
    assert after.win_rate >= 0.2, (before, after)
    assert (before.win_rate or 0.0) < 0.05, before


@pytest.mark.slow
def test_a_resumed_run_goes_back_to_imitating_a_new_teacher(tmp_path: Path) -> None:
    trainer = Trainer(Args(num_envs=8, num_steps=4, stage=Stage.RUNNER))
    trainer.iterate()
    trainer.save(tmp_path / "run.pt")
    resumed = Trainer.load(tmp_path / "run.pt", changes={"imitation_updates": 2}, imitate="builtin:runner")
    assert resumed.stage == Stage.IMITATE
    assert resumed.teacher is not None
    assert resumed.teacher.name == "builtin:runner"
    assert resumed.args.imitation_updates == 2
    metrics = resumed.iterate()
    assert metrics["stage"] == "imitate"
    assert "imitation_agreement" in metrics
    assert resumed.iteration == trainer.iteration + 1


@pytest.mark.slow
def test_the_action_set_measurement_plays_every_batched_teacher(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """scripts.measure_action_sets labels with the built-ins that have a batched copy: the search
    teacher, a built-in teacher too, has none."""
    from scripts import measure_action_sets

    monkeypatch.setattr("sys.argv", ["measure_action_sets", "--races", "2", "--turns", "2", "--sets", "r3t2"])
    measure_action_sets.main()
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(")")[1].split()[0] for line in lines] == list(BATCHED_TEACHERS)
