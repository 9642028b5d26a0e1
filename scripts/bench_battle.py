"""Battle engine speed: simulated seconds per second with the built-in bots, and where the time goes
(physics, perception, observation building, bot code) against bare pymunk stepping.

Run: `.venv/bin/python -m scripts.bench_battle [--quick]`. The process is pinned to one core. Bots are
called in process on the observation objects (no JSON); the JSON round trip an HTTP or sandboxed bot
would add is timed separately. The default run takes about 30 s; --quick a few seconds. Speed is shown
against wall clock and against process CPU time; the parts and the baseline are timed in CPU time,
which other jobs on a shared machine disturb much less.

"Physics" is Match.step: sanitising actions plus the 24 pymunk ticks of a turn with the Python work
around them (turning, firing, hits, projectile expiry, replay frames). The baseline steps a space
holding the same walls, bodies and steering joints for as many ticks, with nothing else going on.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass, field
from typing import Any

from shared.games.battle.bots import BOTS
from shared.games.battle.game import BattleGame
from shared.games.battle.world import World

SCENARIOS: dict[str, dict[str, Any]] = {
    "3v3": {"units_per_player": 3},
    "10v10": {"units_per_player": 10, "map_width": 60.0, "map_height": 36.0},
}
PAIRS = [("aggressive", "defensive"), ("sniper", "aggressive"), ("defensive", "sniper")]


@dataclass
class Split:
    physics: float = 0.0
    perception: float = 0.0
    observation: float = 0.0
    bots: float = 0.0
    json: float = 0.0
    baseline: float = 0.0
    sim_s: float = 0.0
    ticks: int = 0
    matches: int = 0
    cpu: float = 0.0
    wall: float = 0.0
    outcomes: dict[str, int] = field(default_factory=dict)


def play(game: BattleGame, seed: int, config: dict[str, Any], pair: tuple[str, str], split: Split) -> None:
    clock = time.process_time  # parts in CPU time: other jobs on the machine inflate wall-clock figures
    match = game.create_match(seed, config)
    bots = [BOTS[pair[0]], BOTS[pair[1]]]
    cpu0, wall0 = clock(), time.perf_counter()
    while not match.finished:
        t0 = clock()
        match.perception.views()
        t1 = clock()
        obs = [match.observation(p) for p in range(2)]
        t2 = clock()
        actions = [bot(o) for bot, o in zip(bots, obs, strict=True)]
        t3 = clock()
        match.step(actions)
        t4 = clock()
        split.perception += t1 - t0
        split.observation += t2 - t1
        split.bots += t3 - t2
        split.physics += t4 - t3
    split.cpu += clock() - cpu0
    split.wall += time.perf_counter() - wall0
    split.ticks += match.world.tick
    split.sim_s += match.world.tick * match.cfg.dt
    split.matches += 1
    ranks = [p.rank for p in match.result().players]
    key = "draw" if ranks[0] == ranks[1] else (pair[0] if ranks[0] < ranks[1] else pair[1])
    split.outcomes[key] = split.outcomes.get(key, 0) + 1
    # What serialising the last observations and actions costs a bot behind HTTP or a sandbox.
    t0 = clock()
    for o, a in zip(obs, actions, strict=True):
        json.loads(json.dumps(o))
        json.loads(json.dumps(a))
    split.json += (clock() - t0) * match.turn


def baseline(game: BattleGame, seed: int, config: dict[str, Any], ticks: int) -> float:
    """CPU seconds to step the same bodies in bare pymunk (Space.step), units steering toward the far
    side."""
    match = game.create_match(seed, config)
    world = World(match.cfg, match.map, 2)
    for u in world.units:
        world.order_move(u, world.map.width - u.body.position.x, world.map.height - u.body.position.y)
    step, dt = world.space.step, match.cfg.dt
    t0 = time.process_time()
    for _ in range(ticks):
        step(dt)
    return time.process_time() - t0


def run(config: dict[str, Any], matches: int) -> Split:
    game = BattleGame()
    split = Split()
    for i in range(matches):
        play(game, 1000 + i, config, PAIRS[i % len(PAIRS)], split)
    split.baseline = baseline(game, 1000, config, split.ticks)
    return split


def report(name: str, s: Split) -> None:
    total = s.physics + s.perception + s.observation + s.bots
    print(f"\n{name}: {s.matches} matches, {s.sim_s:.0f} s simulated, outcomes {s.outcomes}")
    wall, cpu = s.sim_s / s.wall, s.sim_s / s.cpu
    print(f"  speed: {wall:7.1f}x real time (wall clock), {cpu:7.1f}x (process CPU time)")
    print(f"  {'part':<28}{'ms per sim s':>13}{'share':>8}{'x bare pymunk':>15}")
    rows = [
        ("bare pymunk (baseline)", s.baseline),
        ("physics (Match.step)", s.physics),
        ("perception", s.perception),
        ("observation building", s.observation),
        ("bot code", s.bots),
        ("total in process", total),
        ("json round trip (extra)", s.json),
    ]
    for label, secs in rows:
        share = (
            f"{100 * secs / total:6.1f}%"
            if label not in ("bare pymunk (baseline)", "json round trip (extra)")
            else ""
        )
        print(f"  {label:<28}{1000 * secs / s.sim_s:13.3f}{share:>8}{secs / s.baseline:15.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer matches (a few seconds)")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    counts = {"3v3": 3, "10v10": 1} if args.quick else {"3v3": 48, "10v10": 12}
    print("battle benchmark: built-in bots in process, one core, 120 Hz physics, 5 Hz decisions")
    for name, config in SCENARIOS.items():
        report(name, run(config, counts[name]))


if __name__ == "__main__":
    main()
