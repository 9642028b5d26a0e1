"""The lookahead teacher: copies of races play on exactly as the races do, an action's value is the
reward of playing it and then the policy (by hand, race by race), the soft labels keep the
policy's choice where values tie, and DAgger learns the teacher's distributions on the student's
states from a teacher that does not move with the student."""

from __future__ import annotations

import pytest
import torch

from services.trainer.actions import ActionTable
from services.trainer.curriculum import Stage
from services.trainer.env import TrainingEnv, policy_commands
from services.trainer.features import RaceView, features, update_runners
from services.trainer.imitation import LOOKAHEAD_TEACHER, LookaheadTeacher
from services.trainer.lookahead import Lookahead, soft_targets
from services.trainer.opponents import OpponentKind, blocker_commands, runner
from services.trainer.policy import Agent
from services.trainer.ppo import Args, Trainer
from services.trainer.rewards import lead, winning_rewards
from shared.games.podracing.torch_engine import TorchRaces
from shared.training.config import LookaheadConfig, NetShapeConfig, RewardWeightsConfig

SHAPE = NetShapeConfig()
WEIGHTS = RewardWeightsConfig()


def _student(seed: int) -> Agent:
    torch.manual_seed(seed)
    return Agent(SHAPE, "r5t3")


def _commands(races: TorchRaces, own: tuple[torch.Tensor, ...], theirs: tuple[torch.Tensor, ...]) -> None:
    races.step(*(torch.cat((mine, other), 1) for mine, other in zip(own, theirs, strict=True)))


def _races_after(turns: int, count: int = 3) -> tuple[TorchRaces, torch.Tensor]:
    """`count` races after `turns` turns of the runner against the blocker, and their runner pods."""
    races = TorchRaces(count, dtype=torch.float32, seed=4)
    races.reset()
    roles = torch.zeros(count, 2, dtype=torch.long)
    for _ in range(turns):
        roles = update_runners(RaceView.from_races(races), roles)
        _commands(races, runner(races, 0), blocker_commands(races, 1))
    return races, update_runners(RaceView.from_races(races), roles)


def test_copies_of_races_play_on_exactly_as_the_races() -> None:
    races, _ = _races_after(40)
    copies = races.repeated(3)
    for _ in range(60):
        _commands(races, runner(races, 0), blocker_commands(races, 1))
        _commands(copies, runner(copies, 0), blocker_commands(copies, 1))
    for name in ("x", "y", "vx", "vy", "angle", "next_cp", "passed", "shield_cd", "timeouts", "turn"):
        assert torch.equal(getattr(copies, name), getattr(races, name).repeat_interleave(3, 0)), name
    for name in ("finished", "winner", "cp_x", "num_checkpoints"):
        assert torch.equal(getattr(copies, name), getattr(races, name).repeat_interleave(3, 0)), name


def _hand_value(
    races: TorchRaces, roles: torch.Tensor, agent: Agent, race: int, pod: int, action: int, horizon: int
) -> float:
    """Race `race` alone: `pod` plays `action`, then the policy's most likely actions, against the
    blocker, for `horizon` turns; the discounted winning reward."""
    table = ActionTable.of("r5t3")
    copy = races.repeated(1)
    keep = torch.zeros(races.num_races, dtype=torch.bool)
    keep[race] = True
    roles = roles.clone()
    value, discount = 0.0, 1.0
    for turn in range(horizon):
        view = RaceView.from_races(copy)
        roles = update_runners(view, roles) if turn else roles
        with torch.no_grad():
            actions = agent.actor(features(view, roles)[:, :2]).argmax(-1)
        if turn == 0:
            actions[:, pod] = action
        racing = not bool(copy.finished[race])
        before = lead(view)
        own = policy_commands(view, 0, actions, float(copy.config.max_thrust), table)
        _commands(copy, own, blocker_commands(copy, 1))
        after = lead(RaceView.from_races(copy))
        won = torch.where(copy.winner == 0, 1, torch.where(copy.winner == 1, -1, 0))
        reward = winning_rewards(WEIGHTS, before, after, won, copy.just_finished)
        value += discount * float(reward[race]) * racing
        discount *= 0.99
    return value


def test_an_actions_value_is_the_reward_of_playing_it_then_the_policy() -> None:
    races, roles = _races_after(30)
    agent = _student(5)
    lookahead = Lookahead(
        agent, ActionTable.of("r5t3"), horizon=4, gamma=0.99, weights=WEIGHTS, bootstrap=False
    )
    opponent = torch.full((3,), int(OpponentKind.BLOCKER))
    values = lookahead.action_values(races, roles, opponent)
    assert values.shape == (3, 2, 17)
    for race, pod, action in ((0, 0, 0), (1, 1, 14), (2, 0, 16), (2, 1, 7)):
        expected = _hand_value(races, roles, agent, race, pod, action, 4)
        assert values[race, pod, action].item() == pytest.approx(expected, abs=1e-6)
    # The policy's own action has one value whichever pod the copy changed.
    with torch.no_grad():
        own = agent.actor(features(RaceView.from_races(races), roles)[:, :2]).argmax(-1)
    for race in range(3):
        assert values[race, 0, own[race, 0]] == values[race, 1, own[race, 1]]
    # The races themselves did not move.
    assert torch.equal(races.turn, torch.full((3,), 30))


def test_the_critic_values_the_copies_still_racing() -> None:
    races, roles = _races_after(30)
    agent = _student(6)
    table = ActionTable.of("r5t3")
    opponent = torch.full((3,), int(OpponentKind.BLOCKER))
    plain = Lookahead(agent, table, horizon=2, gamma=0.9, weights=WEIGHTS, bootstrap=False)
    critic = Lookahead(agent, table, horizon=2, gamma=0.9, weights=WEIGHTS, bootstrap=True)
    difference = critic.action_values(races, roles, opponent) - plain.action_values(races, roles, opponent)
    # Race 0, pod 0 playing action 3, then the policy: the critic's value two turns on, discounted.
    copy = races.repeated(1)
    view = RaceView.from_races(copy)
    for turn in range(2):
        with torch.no_grad():
            actions = agent.actor(features(view, roles)[:, :2]).argmax(-1)
        if turn == 0:
            actions[0, 0] = 3
        own = policy_commands(view, 0, actions, float(copy.config.max_thrust), table)
        _commands(copy, own, blocker_commands(copy, 1))
        view = RaceView.from_races(copy)
        roles = update_runners(view, roles)
    with torch.no_grad():
        expected = 0.81 * agent.value(features(view, roles)[:, :2]).mean(-1)[0].item()
    assert difference[0, 0, 3].item() == pytest.approx(expected, abs=1e-5)


def test_soft_labels_keep_the_policys_choice_where_values_tie() -> None:
    values = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.01, 0.0]])
    prior = torch.log(torch.tensor([[0.2, 0.3, 0.5], [0.2, 0.3, 0.5]]))
    targets = soft_targets(values, 0.002, prior)
    assert torch.allclose(targets[0], prior[0].exp())
    assert int(targets[1].argmax()) == 1  # a gap of 5 temperatures outweighs the prior's odds
    assert torch.allclose(targets.sum(-1), torch.ones(2))
    assert torch.equal(soft_targets(values, 0.0, prior)[1], torch.tensor([0.0, 1.0, 0.0]))


def test_the_teachers_label_is_the_best_of_the_reweighted_policy_unless_soft() -> None:
    env = TrainingEnv(3, seed=4)

    def draw(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.full((count,), int(OpponentKind.BLOCKER)), torch.zeros(count, dtype=torch.long)

    env.reset(draw)
    student = _student(3)
    for _ in range(20):
        with torch.no_grad():
            actions = student.actor(env.features[:, :2]).argmax(-1)
        env.step(actions, WEIGHTS, lambda f: f[..., 0].long(), [], draw)
    config = LookaheadConfig(horizon=3, temperature=0.001)
    hard = LookaheadTeacher(config, gamma=0.99, weights=WEIGHTS)
    soft = LookaheadTeacher(config.model_copy(update={"soft_labels": True}), gamma=0.99, weights=WEIGHTS)
    hard.follow(student)
    soft.follow(student)
    distribution = soft.targets(env)
    with torch.no_grad():
        prior = student.log_probs(env.features[:, :2])
    assert torch.allclose(distribution, soft_targets(hard.values(env), 0.001, prior))
    labels = hard.targets(env)
    assert torch.equal(labels.argmax(-1), distribution.argmax(-1))
    assert torch.equal(labels.sum(-1), torch.ones(3, 2))
    assert torch.equal(labels.max(-1).values, torch.ones(3, 2))
    assert torch.equal(hard.labels(env), distribution.argmax(-1))


@pytest.mark.slow
def test_dagger_learns_the_lookaheads_distributions_from_a_teacher_that_stays_put() -> None:
    args = Args(
        seed=2,
        num_envs=4,
        num_steps=3,
        device="cpu",
        shape=SHAPE,
        teacher=LOOKAHEAD_TEACHER,
        stage=Stage.IMITATE,
        imitation_updates=4,
        imitation_minibatch=16,
        lookahead=LookaheadConfig(horizon=3),
    )
    trainer = Trainer(args)
    teacher = trainer.teacher
    assert isinstance(teacher, LookaheadTeacher)
    given: list[torch.Tensor] = []
    targets = teacher.targets

    def recording(env: object) -> torch.Tensor:
        made = targets(env)  # type: ignore[arg-type]
        given.append(made.clone())
        return made

    teacher.targets = recording  # type: ignore[method-assign]
    first = trainer.iterate()
    reference = teacher.reference
    assert reference is not None
    frozen = {name: value.clone() for name, value in reference.state_dict().items()}
    second = trainer.iterate()
    assert first["teacher_drove"] is True
    assert second["teacher_drove"] is False
    # The aggregate holds every visited state's distribution, in order; no PPO teacher term after.
    assert trainer.labelled is not None
    assert trainer.labelled.size == 2 * 3 * 4 * 2
    stored = trainer.labelled.targets[: trainer.labelled.size].float()
    assert torch.allclose(stored, torch.cat(given).reshape(-1, 17), atol=1e-3)
    assert teacher.labels_during_ppo is False
    # The student learned, the policy the teacher improves upon did not move.
    assert teacher.reference is reference
    for name, value in reference.state_dict().items():
        assert torch.equal(value, frozen[name]), name
    student = trainer.agent.state_dict()
    assert any(not torch.equal(student[name], frozen[name]) for name in frozen)
