"""The search bot: its physics is the reference engine's to the bit, it keeps to its time budget,
answers valid actions, is reproducible with a seed and an iteration cap, and beats the runner."""

from __future__ import annotations

import itertools
import json
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shared.games.podracing import search
from shared.games.podracing.actions import sanitize_action
from shared.games.podracing.bots import runner
from shared.games.podracing.engine import PodCommand, Race, RaceConfig
from shared.games.podracing.game import PodracingGame
from shared.games.replay import play_local
from shared.sandbox.gate import check_source
from tests.support import podracing_races

GAME = PodracingGame()


def sim_from(race: Race) -> tuple[search.Pods, search.Track]:
    """The simulator's copy of a race's exact (float) state."""
    pods = race.pods
    state = search.Pods(
        x=[p.x for p in pods],
        y=[p.y for p in pods],
        vx=[p.vx for p in pods],
        vy=[p.vy for p in pods],
        angle=[p.angle for p in pods],
        next_checkpoint=[p.next_checkpoint for p in pods],
        passed=[p.checkpoints_passed for p in pods],
        cooldown=[p.shield_cooldown for p in pods],
        boost=[p.boost_available for p in pods],
        shield=[p.shield_active for p in pods],
        timeouts=list(race.timeouts),
    )
    config = race.config
    track = search.Track(
        checkpoints=tuple((float(x), float(y)) for x, y in race.checkpoints),
        total_passes=race.total_passes,
        max_thrust=config.max_thrust,
        boost_per_team=config.boost_per_team,
        timeout_turns=config.timeout_turns,
        collision_cap=config.max_collisions_per_turn,
    )
    return state, track


def assert_same(race: Race, state: search.Pods, context: object) -> None:
    """Every field of every pod identical, floats included (not merely the rounded integers)."""
    for index, pod in enumerate(race.pods):
        engine_view = (
            pod.x,
            pod.y,
            pod.vx,
            pod.vy,
            pod.angle,
            pod.next_checkpoint,
            pod.checkpoints_passed,
            pod.shield_cooldown,
            pod.boost_available,
            pod.shield_active,
        )
        sim_view = (
            state.x[index],
            state.y[index],
            state.vx[index],
            state.vy[index],
            state.angle[index],
            state.next_checkpoint[index],
            state.passed[index],
            state.cooldown[index],
            state.boost[index],
            state.shield[index],
        )
        assert sim_view == engine_view, (context, index)
    assert state.timeouts == race.timeouts, context


def random_command(rng: random.Random, race: Race, index: int) -> PodCommand:
    pod = race.pods[index]
    roll = rng.random()
    if roll < 0.35:  # towards the next checkpoint, the way races go
        x, y = race.checkpoints[pod.next_checkpoint]
        target = (x - 3 * pod.vx, y - 3 * pod.vy)
    elif roll < 0.4:
        target = (pod.x, pod.y)  # on the pod itself: no rotation
    else:
        target = (rng.uniform(-2000, 18000), rng.uniform(-2000, 11000))
    kind = rng.random()
    if kind < 0.04:
        return PodCommand(*target, thrust=race.config.max_thrust, boost=True)
    if kind < 0.08:
        return PodCommand(*target, shield=True)
    return PodCommand(*target, thrust=rng.randint(0, race.config.max_thrust))


def play_both(
    race: Race,
    rng: random.Random,
    turns: int,
    commands_for: Callable[[random.Random, Race, int], PodCommand] = random_command,
) -> int:
    """Step the engine and the simulator side by side; returns the collisions seen."""
    state, track = sim_from(race)
    collisions = 0
    for _ in range(turns):
        if race.finished:
            break
        commands = [commands_for(rng, race, i) for i in range(4)]
        headings = [
            search.heading_towards(state, i, c.target_x, c.target_y, race.turn == 0)
            for i, c in enumerate(commands)
        ]
        codes = [search.SHIELD if c.shield else search.BOOST if c.boost else c.thrust for c in commands]
        winner = search.step(state, track, headings, codes)
        events = race.step(commands)
        collisions += sum(event.kind == "collision" for event in events)
        assert_same(race, state, (race.turn, commands))
        expected = race.winning_pod if race.winning_pod is not None else search.NO_WINNER
        assert winner == expected, race.turn
    return collisions


def test_physics_matches_the_engine_in_races_with_random_orders() -> None:
    rng = random.Random(7)
    finished = 0
    for seed in range(20):
        config = RaceConfig(laps=2, checkpoints_min=2, checkpoints_max=4, boost_per_team=seed % 3 == 0)
        race = Race.from_seed(seed, config)
        play_both(race, rng, 300)
        finished += race.winning_pod is not None
    assert finished > 0, "some races should end with a win, to compare the finish too"


def idle(_rng: random.Random, race: Race, index: int) -> PodCommand:
    """No rotation, no thrust: the pods keep the velocities a test gave them."""
    pod = race.pods[index]
    return PodCommand(pod.x, pod.y, thrust=0)


def one_racer(active: int) -> Callable[[random.Random, Race, int], PodCommand]:
    """Orders under which only pod `active` moves, mostly racing so that it passes checkpoints."""

    def orders(rng: random.Random, race: Race, index: int) -> PodCommand:
        if index != active:
            return idle(rng, race, index)
        command = random_command(rng, race, index)
        if rng.random() < 0.7:
            pod = race.pods[index]
            x, y = race.checkpoints[pod.next_checkpoint]
            command.target_x, command.target_y = x - 3 * pod.vx, y - 3 * pod.vy
        return command

    return orders


def test_physics_matches_the_engine_without_collisions() -> None:
    """One pod racing alone (the others parked far away): rotation, thrust, boost, shield cooldown,
    checkpoint sweeps, friction and rounding."""
    rng = random.Random(11)
    passes = 0
    for seed in range(8):
        race = Race.from_seed(seed, RaceConfig(laps=2))
        active = seed % 4
        for index, (x, y) in enumerate(podracing_races.FAR):
            if index != active:
                podracing_races.place(race, index, x, y)
        assert play_both(race, rng, 150, one_racer(active)) == 0
        passes += race.pods[active].checkpoints_passed - 1
    assert passes > 10, passes


def test_checkpoints_are_passed_within_599_exactly_like_the_engine() -> None:
    """Pods grazing checkpoints at 597 to 602 from their centres: only the engine's 599 circle counts."""
    rng = random.Random(1)
    passes = []
    for offset in (597.0, 598.0, 599.0, 599.5, 600.0, 601.0, 602.0):
        race = podracing_races.race([(8000, 4500), (2000, 2000)], laps=1)
        for index in range(4):  # side by side, 10000 apart, moving together: no collisions
            podracing_races.place(
                race, index, 6000.0 + 10000.0 * index, 4500.0 + offset, vx=3000.0, next_checkpoint=0
            )
        play_both(race, rng, 1, idle)
        passes.append(race.pods[0].checkpoints_passed - 1)
    assert passes == [1, 1, 1, 0, 0, 0, 0]


def test_exact_ties_between_impacts_follow_the_engine_pair_order() -> None:
    """One pod hit from both sides at the same instant: the first pair in engine order bounces first."""
    rng = random.Random(2)
    for middle, left, right in itertools.permutations(range(4), 3):
        race = podracing_races.race()
        podracing_races.place(race, middle, 8000.0, 4500.0)
        podracing_races.place(race, left, 6000.0, 4500.0, vx=1500.0)
        podracing_races.place(race, right, 10000.0, 4500.0, vx=-1500.0)
        assert play_both(race, rng, 1, idle) >= 1


def collision_course(rng: random.Random, seed: int) -> Race:
    """Four pods in a small area, all heading for its middle at speed (the random orders shield some)."""
    race = Race.from_seed(seed, RaceConfig(laps=1))
    race.turn = 1
    cx, cy = 8000.0, 4500.0
    for pod in race.pods:
        angle = rng.uniform(0, 2 * math.pi)
        distance = rng.uniform(500, 2500)
        pod.x = float(round(cx + math.cos(angle) * distance))
        pod.y = float(round(cy + math.sin(angle) * distance))
        speed = rng.uniform(200, 900)
        pod.vx = float(math.trunc(-math.cos(angle) * speed))
        pod.vy = float(math.trunc(-math.sin(angle) * speed))
        pod.angle = math.degrees(angle + math.pi) % 360.0
    return race


def test_physics_matches_the_engine_through_collisions() -> None:
    rng = random.Random(3)
    collisions = 0
    for seed in range(150):
        race = collision_course(rng, seed)
        collisions += play_both(race, rng, 6)
    assert collisions > 150, collisions


def test_physics_matches_the_engine_in_pile_ups_past_the_collision_cap() -> None:
    rng = random.Random(5)
    capped = 0
    for seed in range(40):
        race = Race.from_seed(seed, RaceConfig(laps=1, max_collisions_per_turn=2))
        race.turn = 1
        for index, pod in enumerate(race.pods):  # in a line, touching-close, rushing together
            pod.x, pod.y = 8000.0 + 810.0 * index, 4500.0
            pod.vx, pod.vy = (1500.0 if index < 2 else -1500.0), float(rng.randint(-50, 50))
        play_both(race, rng, 3)
        capped += race.collisions_capped
    assert capped > 0, "the pile-ups should reach the cap"


def observations(seed: int, turns: int, config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Player 0's observations of a race between two runners (JSON round-tripped)."""
    match = GAME.create_match(seed, config or {})
    seen = []
    for _ in range(turns):
        if match.finished:
            break
        first, second = (json.loads(json.dumps(match.observation(p))) for p in (0, 1))
        seen.append(first)
        match.step([runner(first), runner(second)])
    return seen


def test_a_decision_keeps_to_its_budget() -> None:
    """Measured in this thread's CPU time: the search stops itself by its wall-clock deadline, and a
    decision spends no more than that, but on a busy machine (other tests run beside this one) the
    thread may also wait for a core for longer than any budget, which is no search's doing."""
    bot = search.make_search_bot(time_budget_ms=10.0, seed=1)
    durations = []
    for observation in observations(4, 40):
        start = time.thread_time()
        bot(observation)
        durations.append((time.thread_time() - start) * 1000.0)
    assert max(durations) < 10.0 + 25.0, durations
    assert sorted(durations)[len(durations) // 2] < 10.0 + 5.0, durations
    assert bot.iterations > 0, "a 10 ms budget leaves room for some search"


def test_actions_are_valid_on_every_turn_and_config() -> None:
    configs: list[dict[str, Any]] = [
        {},
        {"max_thrust": 200, "laps": 1, "checkpoints_min": 2, "checkpoints_max": 2},
    ]
    for config in configs:
        bot = search.make_search_bot(seed=2, max_iterations=20)
        for observation in observations(2, 60, config):
            action = bot(observation)
            targets = [observation["checkpoints"][pod["next_checkpoint"]] for pod in observation["pods"]]
            checked = sanitize_action(action, targets, observation["max_thrust"])
            assert checked.invalid == 0, checked.problems
            assert set(action) == {"pods"}
            assert len(action["pods"]) == 2
            for pod in action["pods"]:
                assert set(pod) == {"x", "y", "thrust"}
                assert all(isinstance(pod[k], int) for k in "xy")
                thrust = pod["thrust"]
                assert thrust in ("BOOST", "SHIELD") or (
                    isinstance(thrust, int) and 0 <= thrust <= config.get("max_thrust", 100)
                ), pod


def test_a_seed_and_an_iteration_cap_make_it_reproducible() -> None:
    seen = observations(6, 30)
    runs = []
    for _ in range(2):
        bot = search.make_search_bot(time_budget_ms=0.001, seed=9, max_iterations=40)
        runs.append([bot(observation) for observation in seen])
    assert runs[0] == runs[1]
    other = search.make_search_bot(seed=10, max_iterations=40)
    assert [other(observation) for observation in seen] != runs[0], "the seed should matter"


@pytest.mark.slow
def test_it_beats_the_runner() -> None:
    """Seeded and capped by iterations, so the races are the same on every run (and it can lose)."""
    outcomes = []
    for seed in (1, 2, 3):
        for side in (0, 1):
            bots: list[Any] = [runner, runner]
            bots[side] = search.make_search_bot(seed=seed, max_iterations=30)
            result = play_local(GAME, seed, bots)["result"]
            ranks = [player["rank"] for player in result["players"]]
            outcomes.append((seed, side, result["reason"], ranks[side] == 0 and ranks[1 - side] == 1))
    assert all(won for *_, won in outcomes), outcomes


def test_it_is_a_registered_builtin_and_a_valid_hosted_bot() -> None:
    assert GAME.builtin_bots()["search"] is search.decide
    source = Path(search.__file__).read_text(encoding="utf-8")
    assert "from shared" not in source
    assert "import shared" not in source
    assert check_source(source) == []


@pytest.mark.parametrize("bad", [0.0, -5.0])
def test_a_budget_must_be_positive(bad: float) -> None:
    with pytest.raises(ValueError, match="time_budget_ms"):
        search.make_search_bot(time_budget_ms=bad)
