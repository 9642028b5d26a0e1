"""Does an exported bot play what its torch policy plays? Both sides on the same real races.

`record_races` plays the exported bot's `decide` in the reference engine against the built-in
bots (seats alternating) and records every observation it was given with its answer, in order.
`torch_commands` replays those observations through the torch side (`RaceView.from_observations`,
`update_runners` turn by turn, `features`, `deterministic_action`, `env.policy_commands`), and
`compare` counts the pods whose orders agree: aim within 1 degree, thrust within 1, the same
SHIELD / BOOST choice. Used by tests/trainer/test_export.py and scripts/bench_export.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from services.trainer.actions import DEFAULT_ACTION_SET, ActionTable
from services.trainer.env import policy_commands
from services.trainer.features import RaceView, features, update_runners
from services.trainer.policy import Agent, deterministic_action
from shared.games.podracing.game import PodracingGame

Decide = Callable[[dict[str, Any]], Any]
BOOST_LIFT = 1.0
"""Added to the perturbed policy's BOOST logit: without it BOOST is never its most likely action in
the export tests' races, and the CodinGame tracking of boost would go untested."""
ANGLE_TOLERANCE_DEG = 1.0
THRUST_TOLERANCE = 1.0


@dataclass
class RecordedRace:
    """One race as the exported bot saw it: its observations and answers, turn by turn."""

    seed: int
    seat: int
    opponent: str
    observations: list[dict[str, Any]] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    decide_ms: list[float] = field(default_factory=list)


def record_races(
    decide: Decide,
    pod_observations: int,
    *,
    seed: int = 0,
    opponents: tuple[str, ...] = ("runner", "blocker"),
    config: dict[str, Any] | None = None,
) -> list[RecordedRace]:
    """Races until `pod_observations` pod observations (2 per turn) are recorded; race i is on the
    track of seed + i, the bot in seat i % 2, against opponents[(i // 2) % len(opponents)]."""
    game = PodracingGame()
    bots = game.builtin_bots()
    races: list[RecordedRace] = []
    total = 0
    while total < pod_observations:
        index = len(races)
        race = RecordedRace(seed + index, index % 2, opponents[(index // 2) % len(opponents)])
        races.append(race)
        opponent = bots[race.opponent]
        match = game.create_match(race.seed, config or {})
        while not match.finished and total < pod_observations:
            observation = json.loads(json.dumps(match.observation(race.seat)))
            started = time.perf_counter()
            action = decide(observation)
            race.decide_ms.append((time.perf_counter() - started) * 1000.0)
            race.observations.append(observation)
            race.actions.append(action)
            other = opponent(json.loads(json.dumps(match.observation(1 - race.seat))))
            match.step([action, other] if race.seat == 0 else [other, action])
            total += 2
    return races


def perturbed_agent(seed: int = 11) -> Agent:
    """A policy whose most likely action changes often, over every action (SHIELD and BOOST
    included), with logits of similar size: the hard case for quantised weights (a fresh policy's
    logits barely move: its last layer starts with a tiny gain, and briefly trained ones are still
    close to that)."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        agent = Agent()
        with torch.no_grad():
            last = agent.actor.head[-1]
            assert isinstance(last, nn.Linear)
            nn.init.orthogonal_(last.weight, 1.0)
            last.bias.zero_()
            last.bias[-1] = BOOST_LIFT  # the default set's last action is BOOST
    return agent


def _row(view: RaceView, index: int) -> RaceView:
    return RaceView(**{f.name: getattr(view, f.name)[index : index + 1] for f in dataclasses.fields(view)})


@dataclass(frozen=True)
class TorchCommands:
    """The torch policy's orders for the bot's two pods, per observation: [T, 2] (target [T, 2, 2])."""

    target: torch.Tensor
    thrust: torch.Tensor
    boost: torch.Tensor
    shield: torch.Tensor


@torch.no_grad()
def torch_commands(
    actor: nn.Module, observations: list[dict[str, Any]], action_set: str = DEFAULT_ACTION_SET
) -> TorchCommands:
    """What the torch policy orders on one race's observations, taken in order (role hysteresis)."""
    view = RaceView.from_observations(observations)
    runners = torch.zeros(1, 2, dtype=torch.long)
    rows = []
    for index in range(len(observations)):
        runners = update_runners(_row(view, index), runners)
        rows.append(runners)
    obs = features(view, torch.cat(rows))[:, :2]
    action = deterministic_action(actor, obs)
    max_thrust = float(observations[0]["max_thrust"])
    table = ActionTable.of(action_set)
    target, thrust, boost, shield = policy_commands(view, 0, action, max_thrust, table)
    return TorchCommands(target, thrust, boost, shield)


@dataclass
class Agreement:
    pods: int = 0
    agreeing: int = 0
    kind_mismatches: int = 0
    """Pods where one side plays SHIELD or BOOST and the other does not (or the other one)."""
    max_angle_error_deg: float = 0.0
    max_thrust_error: float = 0.0
    """Over pods where both play a number."""

    @property
    def rate(self) -> float:
        return self.agreeing / self.pods if self.pods else 0.0

    def add(self, other: Agreement) -> None:
        self.pods += other.pods
        self.agreeing += other.agreeing
        self.kind_mismatches += other.kind_mismatches
        self.max_angle_error_deg = max(self.max_angle_error_deg, other.max_angle_error_deg)
        self.max_thrust_error = max(self.max_thrust_error, other.max_thrust_error)


def _angle_error(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def compare(race: RecordedRace, commands: TorchCommands) -> Agreement:
    """Pod by pod agreement of the bot's answers with the torch policy's orders."""
    result = Agreement()
    for t, (observation, action) in enumerate(zip(race.observations, race.actions, strict=True)):
        for k, pod in enumerate(observation["pods"]):
            answer = action["pods"][k]
            x, y = float(pod["x"]), float(pod["y"])
            mine = math.degrees(math.atan2(answer["y"] - y, answer["x"] - x))
            target = commands.target[t, k].tolist()
            theirs = math.degrees(math.atan2(target[1] - y, target[0] - x))
            angle_error = _angle_error(mine, theirs)
            kind = "SHIELD" if commands.shield[t, k] else "BOOST" if commands.boost[t, k] else "number"
            answered = answer["thrust"] if isinstance(answer["thrust"], str) else "number"
            thrust_error = 0.0
            if kind == answered == "number":
                thrust_error = abs(float(answer["thrust"]) - float(commands.thrust[t, k]))
                result.max_thrust_error = max(result.max_thrust_error, thrust_error)
            result.max_angle_error_deg = max(result.max_angle_error_deg, angle_error)
            same_kind = kind == answered
            result.kind_mismatches += 0 if same_kind else 1
            result.pods += 1
            if same_kind and angle_error <= ANGLE_TOLERANCE_DEG and thrust_error <= THRUST_TOLERANCE:
                result.agreeing += 1
    return result


def agreement(actor: nn.Module, races: list[RecordedRace], action_set: str = DEFAULT_ACTION_SET) -> Agreement:
    """Agreement over every recorded race."""
    total = Agreement()
    for race in races:
        if race.observations:
            total.add(compare(race, torch_commands(actor, race.observations, action_set)))
    return total
