"""builtin:search as a training opponent: the observations it is given are the game's, its worker
processes answer what the search bot answers in-process, and in the imitate, self_play and league
stages it really drives its races to the end."""

from __future__ import annotations

import copy
import io
import json

import pydantic
import pytest
import torch

from services.trainer.actions import ActionTable, Kind
from services.trainer.curriculum import Stage, draw_opponents
from services.trainer.env import TrainingEnv
from services.trainer.opponents import OpponentKind
from services.trainer.ppo import Args, Trainer
from services.trainer.search_opponents import SearchOpponents, observations
from services.trainer.search_worker import RaceSearchers, row_iterations, serve
from shared.games.podracing import bots
from shared.games.podracing.engine import Race
from shared.games.podracing.game import PodracingGame
from shared.games.podracing.search import make_search_bot
from shared.games.podracing.torch_engine import TorchRaces
from shared.training.config import RewardWeightsConfig, TrainingConfig


def _real_race_states(seed: int, every: int) -> tuple[list[Race], list[list[dict[str, object]]]]:
    """States of a real race (runner against search) and both players' observations of each."""
    match = PodracingGame().create_match(seed)
    search = make_search_bot(seed=seed, max_iterations=4)
    races: list[Race] = []
    seen: list[list[dict[str, object]]] = []
    while not match.finished:
        if match.race.turn % every == 0:
            races.append(copy.deepcopy(match.race))
            seen.append([match.observation(0), match.observation(1)])
        match.step([bots.runner(match.observation(0)), search(match.observation(1))])
    return races, seen


def test_observations_read_off_the_torch_engine_are_the_games() -> None:
    races, seen = _real_race_states(seed=5, every=7)
    batch = TorchRaces(len(races), dtype=torch.float32)
    batch.load_races(races)
    rows = list(range(len(races)))
    assert len(rows) > 20
    for player in (0, 1):
        got = observations(batch, rows, player)
        for n in rows:
            expected = json.loads(json.dumps(seen[n][player]))
            assert got[n] == expected, f"turn {races[n].turn}, player {player}"


@pytest.mark.parametrize(("low", "high"), [(0, 6), (2, 12)])
def test_the_worker_answers_what_each_rows_search_bot_answers_in_process(low: int, high: int) -> None:
    """Without a spread every row scores `high` plans; with one, its own count (`row_iterations`)."""
    _, seen = _real_race_states(seed=2, every=3)
    requests = [json.dumps([[row, seen[turn][1]] for row in (4, 9)]) for turn in range(12)]
    answers = io.StringIO()
    searchers = RaceSearchers(seed=3, iterations=high, min_iterations=low)
    serve(searchers, io.StringIO("\n".join(requests) + "\n"), answers)
    replies = [json.loads(line) for line in answers.getvalue().splitlines()]
    assert len(replies) == len(requests)
    plans = {row: row_iterations(3, row, low, high) for row in (4, 9)}
    assert (len(set(plans.values())) > 1) == bool(low), plans
    by_row = {row: make_search_bot(seed=3 * 1_000_003 + row, max_iterations=plans[row]) for row in (4, 9)}
    for turn, reply in enumerate(replies):
        assert reply == [by_row[4](seen[turn][1]), by_row[9](seen[turn][1])]


def test_worker_processes_play_the_requested_races_commands() -> None:
    races, seen = _real_race_states(seed=4, every=5)
    batch = TorchRaces(6, dtype=torch.float32)
    batch.load_races(races[:6])
    search = SearchOpponents(workers=2, iterations=5, seed=8)
    try:
        search.request(batch, torch.tensor([1, 4, 5]))
        target, thrust, boost, shield = search.commands(batch)
    finally:
        search.close()
    for row in range(6):
        if row not in (1, 4, 5):
            assert float(target[row].abs().sum()) == 0.0
            continue
        expected = make_search_bot(seed=8 * 1_000_003 + row, max_iterations=5)(seen[row][1])["pods"]
        for k, pod in enumerate(expected):
            assert (float(target[row, k, 0]), float(target[row, k, 1])) == (pod["x"], pod["y"])
            assert bool(shield[row, k]) == (pod["thrust"] == "SHIELD")
            assert bool(boost[row, k]) == (pod["thrust"] == "BOOST")
            if isinstance(pod["thrust"], int):
                assert float(thrust[row, k]) == pod["thrust"]


def test_a_plan_spread_gives_each_race_row_its_own_search_strength() -> None:
    counts = [row_iterations(seed=3, row=row, low=20, high=240) for row in range(400)]
    assert min(counts) >= 20
    assert max(counts) <= 240
    below_the_geometric_mean = sum(count < 69 for count in counts)  # sqrt(20 * 240) ~ 69
    assert 150 < below_the_geometric_mean < 250
    assert counts == [row_iterations(seed=3, row=row, low=20, high=240) for row in range(400)]
    assert counts != [row_iterations(seed=4, row=row, low=20, high=240) for row in range(400)]
    assert {row_iterations(seed=3, row=row, low=0, high=60) for row in range(50)} == {60}


def test_worker_processes_given_a_spread_play_each_rows_own_search() -> None:
    races, seen = _real_race_states(seed=4, every=5)
    batch = TorchRaces(6, dtype=torch.float32)
    batch.load_races(races[:6])
    search = SearchOpponents(workers=1, iterations=12, min_iterations=2, seed=8)
    try:
        search.request(batch, torch.tensor([0, 3, 5]))
        target, _, _, _ = search.commands(batch)
    finally:
        search.close()
    plans = {row: row_iterations(8, row, 2, 12) for row in (0, 3, 5)}
    assert len(set(plans.values())) > 1, plans
    for row, count in plans.items():
        expected = make_search_bot(seed=8 * 1_000_003 + row, max_iterations=count)(seen[row][1])["pods"]
        got = [(float(target[row, k, 0]), float(target[row, k, 1])) for k in range(2)]
        assert got == [(pod["x"], pod["y"]) for pod in expected], (row, count)


def test_a_reversed_plan_spread_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match="min_iterations"):
        TrainingConfig.model_validate({"search_opponent": {"iterations": 60, "min_iterations": 120}})


def test_search_takes_the_first_races_in_the_imitate_self_play_and_league_stages_only() -> None:
    generator = torch.Generator().manual_seed(1)
    for stage in Stage:
        kinds, _ = draw_opponents(stage, 64, 2, generator, torch.device("cpu"), search_races=5)
        searched = (kinds == OpponentKind.SEARCH).nonzero().squeeze(1).tolist()
        wanted = stage in (Stage.IMITATE, Stage.SELF_PLAY, Stage.LEAGUE)
        assert searched == (list(range(5)) if wanted else [])


def _drawn_by(kinds: list[OpponentKind]) -> object:
    def draw(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        assert count == len(kinds)
        return torch.tensor([int(k) for k in kinds]), torch.zeros(count, dtype=torch.long)

    return draw


@pytest.mark.slow
def test_search_drives_its_races_and_wins_them_against_idle_pods() -> None:
    """Player 0 stands still in both races: player 1's pods race where the search drives them and
    stand where they idle, and the searched race ends as a loss against the search."""
    search = SearchOpponents(workers=1, iterations=4, seed=1)
    env = TrainingEnv(2, seed=3, search=search)
    table = ActionTable.of("r5t3", torch.device("cpu"))
    still = int(((table.kind == Kind.THRUST) & (table.thrust == 0)).nonzero()[0])
    draw = _drawn_by([OpponentKind.SEARCH, OpponentKind.IDLE])
    env.reset(draw)  # type: ignore[arg-type]
    searched_end: tuple[int, int] | None = None
    try:
        for turn in range(400):
            _, result = env.step(
                torch.full((2, 2), still),
                RewardWeightsConfig(),
                lambda f: f[..., 0].long(),
                [],
                draw,  # type: ignore[arg-type]
            )
            if turn == 60:
                passed = env.races.passed
                assert int(passed[0, 2:].max()) > 1, "the search's pods passed checkpoints"
                assert int(passed[1, 2:].max()) == 1, "idle pods did not move"
            if bool(result.done[0]):
                searched_end = (int(result.outcome[0]), int(result.opponent[0]))
                break
    finally:
        search.close()
    assert searched_end == (-1, int(OpponentKind.SEARCH))


@pytest.mark.slow
def test_a_trainer_with_search_races_counts_them_and_stops_its_workers() -> None:
    args = Args(
        num_envs=4,
        num_steps=8,
        total_steps=64,
        device="cpu",
        stage=Stage.LEAGUE,
        search_opponent={"races": 2, "iterations": 2},  # type: ignore[arg-type]
    )
    trainer = Trainer(args)
    search = trainer.search
    assert search is not None
    try:
        trainer.iterate()
        assert (trainer.env.opponent[:2] == OpponentKind.SEARCH).all()
        assert not (trainer.env.opponent[2:] == OpponentKind.SEARCH).any()
    finally:
        trainer.close()
    assert not search.running()


def test_more_search_races_than_races_is_refused() -> None:
    with pytest.raises(pydantic.ValidationError, match=r"search_opponent\.races"):
        TrainingConfig(num_envs=4, search_opponent={"races": 5})  # type: ignore[arg-type]
