"""The exported bot plays what its torch policy plays: agreement on real races in the reference
engine, a small stdlib-only file that passes the hosted-bot gate, and a CodinGame twin that plays
a whole race through the real text bridge with the same orders as the hosted file."""

from __future__ import annotations

import ast
import json
import runpy
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from services.trainer.export import MAX_CHARS, ExportError, export_agent, export_checkpoint
from services.trainer.export_check import agreement, perturbed_agent, record_races
from services.trainer.policy import Agent
from services.trainer.ppo import Args, Trainer
from shared.games.podracing.codingame import CodinGameProcess, init_lines, parse_output, turn_lines
from shared.games.podracing.game import PodracingGame
from shared.sandbox.gate import check_source
from shared.training.config import NetShapeConfig

Decide = Callable[[dict[str, Any]], Any]
STDLIB_IMPORTS = {"__future__", "math", "operator", "typing", "sys"}


@pytest.fixture(scope="module", autouse=True)
def _one_thread() -> Iterator[None]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trainer() -> Trainer:
    """A briefly trained policy (2 PPO iterations on the CPU)."""
    trainer = Trainer(Args(seed=5, num_envs=64, num_steps=32, total_steps=10**6, device="cpu"))
    for _ in range(2):
        trainer.iterate()
    return trainer


@pytest.fixture(scope="module")
def perturbed() -> Agent:
    """Outputs across the whole action range, SHIELD and BOOST logits often near 0 (see the helper)."""
    return perturbed_agent()


def load_bot(source: str, path: Path) -> dict[str, Any]:
    """Run an exported file as a module, as the sandbox loads it (not as __main__)."""
    path.write_text(source, encoding="utf-8")
    return runpy.run_path(str(path), run_name="exported_bot")


@pytest.mark.slow
@pytest.mark.parametrize(("which", "pods"), [("perturbed", 10_000), ("trained", 4_000)])
def test_the_hosted_export_agrees_with_the_torch_policy_on_real_races(
    which: str, pods: int, perturbed: Agent, trainer: Trainer, tmp_path: Path
) -> None:
    """Over 10,000 pod observations for the hard case, fewer for the barely trained policy (its
    outputs still vary little); the bench (scripts/bench_export.py) measures a longer-trained one."""
    agent = perturbed if which == "perturbed" else trainer.agent
    decide = load_bot(export_agent(agent, NetShapeConfig()), tmp_path / "bot.py")["decide"]
    races = record_races(decide, pods, seed=100)
    result = agreement(agent.actor, races)
    print(f"\n{which}: {result.agreeing}/{result.pods} pods agree ({result.rate:.2%}); {result}")
    assert result.pods == pods
    assert result.rate >= 0.99, result


def test_the_file_is_small_stdlib_only_and_passes_the_gate(perturbed: Agent) -> None:
    for contract, gate_contract in (("hosted", "decide"), ("codingame", "codingame")):
        source = export_agent(perturbed, NetShapeConfig(), contract)  # type: ignore[arg-type]
        assert len(source) < MAX_CHARS
        imported: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                assert node.module is not None
                assert node.level == 0
                imported.add(node.module.split(".")[0])
        assert imported <= STDLIB_IMPORTS
        assert imported <= set(sys.stdlib_module_names) | {"__future__"}
        assert check_source(source, contract=gate_contract) == [], contract
    hosted = export_agent(perturbed, NetShapeConfig(), "hosted")
    assert "input(" not in hosted
    assert "CodinGameTracker" not in hosted


@pytest.mark.slow
def test_export_from_a_checkpoint_file_and_clear_errors(trainer: Trainer, tmp_path: Path) -> None:
    path = tmp_path / "ckpt.pt"
    trainer.save(path)
    source = export_checkpoint(path)
    assert "ckpt.pt: iteration 2" in source
    same = export_agent(
        trainer.agent, trainer.args.shape, source=source.split("SOURCE = ")[1].split("\n")[0][1:-1]
    )
    assert source == same
    broken = tmp_path / "broken.pt"
    broken.write_text("not a checkpoint")
    with pytest.raises(ValueError, match="not a training checkpoint"):
        export_checkpoint(broken)
    with pytest.raises(ExportError, match="needs"):
        export_agent(trainer.agent, NetShapeConfig(hidden=32))
    with pytest.raises(ExportError, match="too large"):
        export_agent(Agent(NetShapeConfig(hidden=512)), NetShapeConfig(hidden=512))


def test_one_hosted_module_serves_both_seats(perturbed: Agent, tmp_path: Path) -> None:
    """Role hysteresis is kept per player id: one process answering both seats plays like two."""
    source = export_agent(perturbed, NetShapeConfig())
    shared = load_bot(source, tmp_path / "shared.py")["decide"]
    alone = [load_bot(source, tmp_path / f"seat{seat}.py")["decide"] for seat in (0, 1)]
    match = PodracingGame().create_match(21)
    while not match.finished:
        actions = []
        for seat in (0, 1):
            observation = json.loads(json.dumps(match.observation(seat)))
            actions.append(shared(observation))
            assert actions[-1] == alone[seat](observation), (match.turn, seat)
        match.step(actions)
    assert match.turn > 50


@pytest.mark.slow
def test_the_codingame_tracker_rebuilds_what_codingame_hides(perturbed: Agent, tmp_path: Path) -> None:
    """Passes of every pod, own boost and shield cooldown match the engine's, turn by turn, against
    the blocker (which shields); only the opponents' boost and cooldown are unknown on CodinGame."""
    bot = load_bot(export_agent(perturbed, NetShapeConfig(), "codingame"), tmp_path / "cg.py")
    orders: dict[str, int] = {"SHIELD": 0, "BOOST": 0}
    for seed in range(30, 40):
        _tracked_race(bot, seed, orders)
        if orders["SHIELD"] and orders["BOOST"]:
            break
    assert orders["SHIELD"] > 0, "the races should exercise the tracking"
    assert orders["BOOST"] > 0, "the races should exercise the tracking"


def _tracked_race(bot: dict[str, Any], seed: int, orders: dict[str, int]) -> None:
    match = PodracingGame().create_match(seed)
    lines = init_lines(match.observation(0))
    count = int(lines[1])
    checkpoints = [[int(v) for v in line.split()] for line in lines[2 : 2 + count]]
    tracker = bot["CodinGameTracker"](int(lines[0]), checkpoints)
    blocker = PodracingGame().builtin_bots()["blocker"]
    hidden = ("boost_available", "shield_cooldown")
    while not match.finished:
        real = json.loads(json.dumps(match.observation(0)))
        rebuilt = tracker.observe(turn_lines(real))
        assert rebuilt["pods"] == real["pods"], (seed, match.turn)
        for mine, theirs in zip(rebuilt["opponents"], real["opponents"], strict=True):
            assert {k: v for k, v in mine.items() if k not in hidden} == {
                k: v for k, v in theirs.items() if k not in hidden
            }, (seed, match.turn)
        action = bot["decide"](rebuilt)
        assert action == bot["decide"](real), (seed, match.turn)
        for pod in action["pods"]:
            if isinstance(pod["thrust"], str):
                orders[pod["thrust"]] += 1
        tracker.played(action)
        match.step([action, blocker(match.observation(1))])


def test_the_codingame_twin_plays_a_race_through_the_bridge_like_the_hosted_bot(
    perturbed: Agent, tmp_path: Path
) -> None:
    hosted = load_bot(export_agent(perturbed, NetShapeConfig()), tmp_path / "hosted.py")["decide"]
    script = tmp_path / "cg_bot.py"
    script.write_text(export_agent(perturbed, NetShapeConfig(), "codingame"), encoding="utf-8")
    runner = PodracingGame().builtin_bots()["runner"]
    match = PodracingGame().create_match(41)
    with CodinGameProcess(str(script), timeout=5.0, first_timeout=10.0) as process:
        while not match.finished:
            observation = json.loads(json.dumps(match.observation(0)))
            answer = process.decide(observation)
            assert answer is not None, process.stderr
            assert process.last_errors == []
            expected = hosted(observation)
            assert answer == parse_output([f"{p['x']} {p['y']} {p['thrust']}" for p in expected["pods"]])
            match.step([answer, runner(match.observation(1))])
        assert process.stderr == []
    assert match.turn > 50
