"""Expert iteration: builtin:search as a teacher, seeded with the student's own policy. Its worker
answers what the hybrid bot answers in-process, its labels are those moves on the student's states,
and a trainer imitating it hands it the student and stops its workers."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
import torch

from services.trainer.actions import ActionTable, Kind
from services.trainer.bot_module import load_bot_module
from services.trainer.curriculum import Stage
from services.trainer.env import TrainingEnv
from services.trainer.export import export_agent
from services.trainer.imitation import SearchTeacher, nearest_labels
from services.trainer.opponents import Commands, OpponentKind
from services.trainer.policy import Agent
from services.trainer.ppo import Args, Trainer
from services.trainer.search_opponents import observations
from services.trainer.search_worker import ROW_SEED_STRIDE, RaceSearchers, serve
from shared.training.config import NetShapeConfig, RewardWeightsConfig

SHAPE = NetShapeConfig()


def _student(seed: int) -> Agent:
    torch.manual_seed(seed)
    return Agent(SHAPE, "r5t3")


def _hybrid_source(agent: Agent) -> str:
    return export_agent(agent.actor, SHAPE, action_set="r5t3", hybrid=True)


def _env_after(turns: int) -> TrainingEnv:
    """Three races against the runner, player 0 thrusting straight ahead for `turns` turns."""
    env = TrainingEnv(3, seed=4)

    def draw(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.full((count,), int(OpponentKind.RUNNER)), torch.zeros(count, dtype=torch.long)

    env.reset(draw)
    table = ActionTable.of("r5t3", torch.device("cpu"))
    ahead = int(((table.kind == Kind.THRUST) & (table.thrust == 1.0) & (table.rotation == 0)).nonzero()[0])
    for _ in range(turns):
        env.step(torch.full((3, 2), ahead), RewardWeightsConfig(), lambda f: f[..., 0].long(), [], draw)
    return env


def _commands(actions: list[dict[str, Any]]) -> Commands:
    b = len(actions)
    target = torch.zeros(b, 2, 2, dtype=torch.float64)
    thrust = torch.zeros(b, 2, dtype=torch.float64)
    boost = torch.zeros(b, 2, dtype=torch.bool)
    shield = torch.zeros(b, 2, dtype=torch.bool)
    for row, action in enumerate(actions):
        for k, pod in enumerate(action["pods"]):
            target[row, k] = torch.tensor([float(pod["x"]), float(pod["y"])])
            shield[row, k] = pod["thrust"] == "SHIELD"
            boost[row, k] = pod["thrust"] == "BOOST"
            thrust[row, k] = pod["thrust"] if isinstance(pod["thrust"], int) else 0.0
    return target.float(), thrust.float(), boost, shield


@pytest.mark.slow
def test_a_worker_given_a_prior_answers_what_the_hybrid_bot_answers_in_process() -> None:
    source = _hybrid_source(_student(1))
    env = _env_after(5)
    seen = observations(env.races, [0, 1, 2], 0)
    lines = [json.dumps({"prior": source}), json.dumps([[row, seen[row]] for row in (0, 2)])]
    answers = io.StringIO()
    serve(RaceSearchers(seed=7, iterations=5), io.StringIO("\n".join(lines) + "\n"), answers)
    first, second = (json.loads(line) for line in answers.getvalue().splitlines())
    assert first == {"ok": True}
    hybrid = load_bot_module(source, "expected_hybrid").HybridBot
    expected = [hybrid(seed=7 * ROW_SEED_STRIDE + row, max_iterations=5)(seen[row]) for row in (0, 2)]
    assert second == expected


@pytest.mark.slow
def test_the_search_teachers_labels_are_the_hybrids_moves_on_the_students_states() -> None:
    student = _student(2)
    env = _env_after(9)
    teacher = SearchTeacher(workers=2, iterations=6, seed=5, shape=SHAPE, action_set="r5t3")
    try:
        teacher.follow(student)
        labels = teacher.labels(env)
    finally:
        teacher.close()
    hybrid = load_bot_module(_hybrid_source(student), "expected_hybrid").HybridBot
    seen = observations(env.races, [0, 1, 2], 0)
    played = [hybrid(seed=5 * ROW_SEED_STRIDE + row, max_iterations=6)(seen[row]) for row in range(3)]
    assert labels.shape == (3, 2)
    assert torch.equal(labels, nearest_labels(env, _commands(played)))


@pytest.mark.slow
def test_a_trainer_imitating_the_search_labels_by_it_and_stops_its_workers() -> None:
    args = Args(
        num_envs=2,
        num_steps=4,
        total_steps=10_000,
        device="cpu",
        stage=Stage.IMITATE,
        teacher="builtin:search",
        imitation_updates=2,
        imitation_minibatch=8,
        search_opponent={"races": 1, "iterations": 2},  # type: ignore[arg-type]
    )
    trainer = Trainer(args)
    teacher = trainer.teacher
    assert isinstance(teacher, SearchTeacher)
    try:
        first = trainer.iterate()
        second = trainer.iterate()
        assert trainer.env.opponent[0] == OpponentKind.SEARCH
        assert first["teacher_drove"] is True
        assert second["teacher_drove"] is False
        assert 0.0 <= second["imitation_agreement"] <= 1.0
        assert trainer.labelled is not None
        assert trainer.labelled.size == 2 * 4 * 2 * 2
        trainer.imitation_end_step = trainer.global_step
        trainer.stage = Stage.RUNNER
        assert trainer.teacher_weight() == 0.0, "no search labels in PPO"
    finally:
        trainer.close()
    assert not teacher.searchers.running()
