"""The hybrid bot: the search bot with the trained policy as its prior.

The search never plays a plan it scores below the prior's own, and without a prior it plays as it
did before priors existed; the exported file is the repository's search with the policy's argmax
as the prior (the prior's first move is the torch policy's on at least 99% of pods); the shipped
files are what `arena export --hybrid` writes today, small, standard library only, past the gate;
the CodinGame twin tracks the timeouts the search needs and plays a race through the real bridge.
(Through a real worker and sandbox: tests/match_runner/test_hosted_bots.py.)
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from services.cli.main import main
from services.trainer.export import MAX_CHARS, ExportError, export_agent, export_checkpoint
from services.trainer.export_check import agreement, record_races
from services.trainer.policy import Agent
from services.trainer.ppo import args_from_dict, load_checkpoint
from shared.games.podracing import search
from shared.games.podracing.bots import blocker, runner
from shared.games.podracing.codingame import CodinGameProcess, init_lines, turn_lines
from shared.games.podracing.game import PodracingGame
from shared.sandbox.gate import check_source
from shared.training.config import NetShapeConfig

ROOT = Path(__file__).resolve().parents[2]
CHECKPOINT = ROOT / "examples" / "training" / "podracing" / "latest.pt"
SHIPPED = ROOT / "examples" / "bots" / "podracing_hybrid.py"
SHIPPED_TWIN = ROOT / "examples" / "bots" / "podracing_hybrid_codingame.py"
STDLIB_IMPORTS = {"__future__", "collections", "dataclasses", "math", "operator", "random", "time", "typing"}
GAME = PodracingGame()
Module = dict[str, Any]


@pytest.fixture(scope="module")
def hybrid() -> Module:
    """The shipped hybrid file, loaded as the sandbox loads it (as a module, not as __main__)."""
    return runpy.run_path(str(SHIPPED), run_name="hybrid_bot")


def observations(seeds: range, every: int) -> list[dict[str, Any]]:
    """Both seats' observations (JSON round-tripped) every `every` turns of runner-vs-blocker races."""
    seen = []
    for seed in seeds:
        match = GAME.create_match(seed)
        while not match.finished:
            both = [json.loads(json.dumps(match.observation(player))) for player in (0, 1)]
            if match.turn % every == 1:
                seen.extend(both)
            match.step([runner(both[0]), blocker(both[1])])
    return seen


@pytest.mark.slow
def test_the_played_plan_never_scores_below_the_priors_plan(hybrid: Module) -> None:
    """On states of real races, with a few iterations: the plan played scores at least as high as
    the prior's plan. The plain search with as many iterations often finds nothing that good, so a
    search that computed the prior's plan without seeding its pool with it would fail here."""
    states = observations(range(6), every=8)
    below_prior = 0
    for index, observation in enumerate(states):
        prior = hybrid["PolicyPrior"]()
        prior.observe(observation)
        bot = search.make_search_bot(seed=index, max_iterations=6, prior=prior)
        bot(observation)
        assert bot.plan is not None
        assert bot.prior_plan is not None
        assert bot.plan.score >= bot.prior_plan.score, index
        plain = search.make_search_bot(seed=index, max_iterations=6)
        plain(observation)
        assert plain.plan is not None
        assert plain.prior_plan is None
        below_prior += plain.plan.score < bot.prior_plan.score
    assert len(states) > 300
    assert below_prior > len(states) // 10, below_prior


PLAIN_SEARCH_DIGEST = "79402069ccdd00e1d1e4e124eaa3aee7c3e17d352cb4468a90406466107927f5"
"""SHA-256 of the actions below, recorded with the search as it was before it took a prior. A
deliberate change to the search's play changes it: record the new value then."""


def test_without_a_prior_the_search_plays_as_before() -> None:
    actions = []
    for seed in (3, 4):
        bot = search.make_search_bot(seed=seed, max_iterations=25, prior=None)
        match = GAME.create_match(seed)
        while not match.finished and match.turn < 60:
            both = [json.loads(json.dumps(match.observation(player))) for player in (0, 1)]
            actions += [bot(both[0]), bot(both[1])]
            match.step([runner(both[0]), blocker(both[1])])
    text = json.dumps(actions, sort_keys=True)
    assert len(actions) == 240
    assert hashlib.sha256(text.encode()).hexdigest() == PLAIN_SEARCH_DIGEST


@pytest.mark.slow
def test_the_file_plays_the_repositorys_search_with_its_policy_as_prior(hybrid: Module) -> None:
    """Seeded and capped, the file's bot and the repository's SearchBot given the file's prior
    answer the same, turn by turn, in both seats of one module."""
    mine = hybrid["HybridBot"](seed=4, max_iterations=12)
    prior = hybrid["PolicyPrior"]()
    theirs = search.make_search_bot(seed=4, max_iterations=12, prior=prior)
    match = GAME.create_match(12)
    while not match.finished:
        actions = []
        for player in (0, 1):
            observation = json.loads(json.dumps(match.observation(player)))
            prior.observe(observation)
            actions.append(mine(observation))
            assert actions[-1] == theirs(observation), (match.turn, player)
        match.step(actions)
    assert match.turn > 50


def _prior_first_move(bot: Any, module: Module) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A decide that plays the first move of the prior's plan, as orders the way the policy's own
    file writes them (aim 10,000 units away along the frame heading + the rotation)."""

    def decide(observation: dict[str, Any]) -> dict[str, Any]:
        bot(observation)
        plan = bot.search.prior_plan
        orders = []
        for k, pod in enumerate(observation["pods"]):
            x, y = float(pod["x"]), float(pod["y"])
            if observation["turn"] == 0:
                cx, cy = observation["checkpoints"][pod["next_checkpoint"]]
                heading = math.atan2(cy - y, cx - x)
            else:
                heading = math.radians(max(pod["angle"], 0))
            direction = heading + math.radians(plan.rotations[k])
            command = plan.commands[k]
            thrust = {module["SHIELD"]: "SHIELD", module["BOOST"]: "BOOST"}.get(command, command)
            orders.append(
                {
                    "x": math.floor(x + math.cos(direction) * 10000.0 + 0.5),
                    "y": math.floor(y + math.sin(direction) * 10000.0 + 0.5),
                    "thrust": thrust,
                }
            )
        return {"pods": orders}

    return decide


@pytest.mark.slow
def test_the_priors_first_move_is_the_torch_policys_move(hybrid: Module) -> None:
    """The prior's plan starts with the policy's argmax move: compared with the torch policy of the
    shipped checkpoint (features, role hysteresis, argmax) on the races it plays, at least 99% of
    pods agree, as the policy's own export must (tests/trainer/test_export.py)."""
    state = load_checkpoint(CHECKPOINT)
    args = args_from_dict(dict(state["args"]))
    agent = Agent(args.shape, args.action_set)
    agent.load_state_dict(state["agent"])
    bot = hybrid["HybridBot"](seed=1, max_iterations=0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        races = record_races(_prior_first_move(bot, hybrid), 2_000, seed=300)
        result = agreement(agent.actor, races, args.action_set)
    finally:
        torch.set_num_threads(threads)
    print(f"\n{result.agreeing}/{result.pods} pods agree ({result.rate:.2%}); {result}")
    assert result.pods == 2_000
    assert result.rate >= 0.99, result


def test_the_shipped_files_are_fresh_small_stdlib_only_and_pass_the_gate() -> None:
    for path, contract, gate_contract in (
        (SHIPPED, "hosted", "decide"),
        (SHIPPED_TWIN, "codingame", "codingame"),
    ):
        source = path.read_text(encoding="utf-8")
        fresh = export_checkpoint(CHECKPOINT, contract, hybrid=True)  # type: ignore[arg-type]
        assert source == fresh, (
            f"{path.name} is out of date: arena export {CHECKPOINT.relative_to(ROOT)} --out "
            f"{path.relative_to(ROOT)} --hybrid" + (" --codingame" if contract == "codingame" else "")
        )
        assert len(source) < MAX_CHARS
        assert "\nTIME_BUDGET_MS = 40.0\n" in source
        imported: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.module is not None
                assert node.level == 0
                imported.add(node.module.split(".")[0])
        assert imported <= STDLIB_IMPORTS, imported
        assert imported <= set(sys.stdlib_module_names) | {"__future__"}
        assert check_source(source, contract=gate_contract) == [], path.name
    assert "input(" not in SHIPPED.read_text(encoding="utf-8")


@pytest.mark.usefixtures("hybrid")
def test_arena_export_hybrid_writes_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "hybrid.py"
    assert main(["export", str(CHECKPOINT), "--out", str(out), "--hybrid", "--budget-ms", "7.5"]) == 0
    assert "the search with the policy as its prior, 7.5 ms a turn" in capsys.readouterr().out
    source = out.read_text(encoding="utf-8")
    assert source == SHIPPED.read_text(encoding="utf-8").replace(
        "\nTIME_BUDGET_MS = 40.0\n", "\nTIME_BUDGET_MS = 7.5\n"
    )
    assert runpy.run_path(str(out))["HybridBot"]().search.time_budget_ms == 7.5
    assert main(["export", str(CHECKPOINT), "--out", str(out), "--budget-ms", "7.5"]) == 1
    assert "give it with --hybrid" in capsys.readouterr().err
    assert main(["export", str(CHECKPOINT), "--out", str(out), "--hybrid", "--budget-ms", "0"]) != 0
    assert "must be a positive number" in capsys.readouterr().err
    # 68,312 characters alone (docs/trainer-export.md): too large with the search
    wide = NetShapeConfig(hidden=200)
    with pytest.raises(ExportError, match="too large to export with the search bot"):
        export_agent(Agent(wide), wide, hybrid=True)


def test_the_codingame_twin_tracks_the_timeouts_and_plays_through_the_bridge(tmp_path: Path) -> None:
    """CodinGame does not show the turns left before a timeout, which the search scores: the tracker
    counts them as the referee does. Then the twin plays a race as a subprocess (a short budget)."""
    twin = SHIPPED_TWIN.read_text(encoding="utf-8")
    tracker_class = runpy.run_path(str(SHIPPED_TWIN), run_name="twin")["CodinGameTracker"]
    match = GAME.create_match(8, {"laps": 2})
    lines = init_lines(match.observation(0))
    count = int(lines[1])
    tracker = tracker_class(int(lines[0]), [[int(v) for v in line.split()] for line in lines[2 : 2 + count]])
    while not match.finished:
        real = json.loads(json.dumps(match.observation(0)))
        rebuilt = tracker.observe(turn_lines(real))
        assert (rebuilt["timeout_left"], rebuilt["opponent_timeout_left"]) == (
            real["timeout_left"],
            real["opponent_timeout_left"],
        ), match.turn
        action = runner(real)
        tracker.played(action)
        match.step([action, blocker(match.observation(1))])
    assert match.turn > 50

    script = tmp_path / "cg_hybrid.py"
    script.write_text(twin.replace("\nTIME_BUDGET_MS = 40.0\n", "\nTIME_BUDGET_MS = 5.0\n"), encoding="utf-8")
    match = GAME.create_match(41, {"laps": 1})
    with CodinGameProcess(str(script), timeout=5.0, first_timeout=10.0) as process:
        while not match.finished:
            answer = process.decide(json.loads(json.dumps(match.observation(0))))
            assert answer is not None, process.stderr
            assert process.last_errors == []
            match.step([answer, runner(match.observation(1))])
        assert process.stderr == []
    assert match.result().players[0].rank == 0


@pytest.mark.slow
def test_the_evaluation_script_plays_it_with_another_budget() -> None:
    """scripts/eval_trained_bot.py loads the file in a fresh module per race (dataclasses and all)
    and sets its search time with --budget-ms; a file without one is refused."""
    from scripts.eval_trained_bot import play, with_budget

    source = with_budget(SHIPPED.read_text(encoding="utf-8"), 2.0)
    assert "\nTIME_BUDGET_MS = 2.0\n" in source
    assert "\nTIME_BUDGET_MS = 40.0\n" not in source
    result = play(source, "runner", [1], seed=5)
    assert (result.wins, result.draws, result.losses) == (1, 0, 0)
    with pytest.raises(ValueError, match="no TIME_BUDGET_MS"):
        with_budget((SHIPPED.parent / "podracing_ppo.py").read_text(encoding="utf-8"), 2.0)
