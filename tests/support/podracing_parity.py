"""The torch engine against the reference engine, driven by the same random commands
(tests/games/podracing/test_torch_parity.py on the CPU, test_cuda_engine.py on a GPU).

The commands are chosen to make things happen: pods aim at other pods (collisions, often several
per turn), shield and boost at random, and aim at their checkpoint often enough that races get
lapped and won. All races run in one `TorchRaces` batch.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

from shared.games.podracing.engine import PodCommand, Race, RaceConfig, generate_track
from shared.games.podracing.torch_engine import REASONS, TorchRaces

NUM_RACES = 128
MAX_STEPS = 150


@dataclass
class ParityStats:
    race_turns: int = 0
    pod_turns: int = 0
    pod_turns_equal: int = 0
    first_mismatch: str | None = None
    collisions: int = 0
    shields: int = 0
    boosts: int = 0
    finished_equal: int = 0
    winners: int = 0
    races_diverged: int = 0
    torch_capped: int = 0
    ref_capped: int = 0


def _commands(rng: random.Random, race: Race, melee: bool) -> list[PodCommand]:
    """Pods 0 and 2 mostly race, pods 1 and 3 mostly ram; in a melee race all pile up in the middle."""
    cmds = []
    for i, pod in enumerate(race.pods):
        roll = rng.random()
        runner = i % 2 == 0
        if melee and roll < 0.9:
            other = race.pods[i ^ (1 + race.turn // 15 % 3)]
            tx, ty = round(other.x), round(other.y)
        elif roll < (0.85 if runner else 0.2):
            cx, cy = race.checkpoints[pod.next_checkpoint]
            tx, ty = (
                cx - 2 * round(pod.vx) + rng.randint(-300, 300),
                cy - 2 * round(pod.vy) + rng.randint(-300, 300),
            )
        elif roll < 0.95:
            other = race.pods[
                rng.choice([j for j in range(4) if j != i]) if runner else rng.choice((2 - i, 3 - i))
            ]
            lead = rng.randint(0, 3)
            tx = round(other.x + other.vx * lead) + rng.randint(-200, 200)
            ty = round(other.y + other.vy * lead) + rng.randint(-200, 200)
        else:
            tx, ty = rng.randint(-2000, 18000), rng.randint(-2000, 11000)
        if rng.random() < 0.02:
            tx, ty = round(pod.x), round(pod.y)
        special = rng.random()
        cmds.append(
            PodCommand(
                target_x=tx,
                target_y=ty,
                thrust=100 if rng.random() < 0.7 else rng.randint(0, 100),
                boost=special < 0.04,
                shield=0.04 <= special < 0.10,
            )
        )
    return cmds


def play_parity(
    dtype: torch.dtype,
    config: RaceConfig,
    seed: int,
    *,
    resync: bool = False,
    races_count: int = NUM_RACES,
    collision_iters: int = 16,
    compact: bool = True,
    device: str = "cpu",
    compiled: bool = False,
) -> ParityStats:
    """Play every race to its end in both engines and compare after each turn.

    Without `resync` a race stops being compared at its first difference (float64 must have none).
    With it, a differing race gets the reference state copied back, so each turn is compared from
    identical states: the per-turn exact share reported for float32.

    The torch engine runs `collision_iters` collision iterations per turn, fewer than the reference
    cap of 64 to save time; `torch_capped` says whether any turn needed more (then the comparison
    still holds only if the reference also stopped there). `compact` picks the CPU step or the
    sync-free step that CUDA runs (both run here, on CPU). `device` and `compiled` run the engine
    elsewhere (`test_cuda_engine.py`) and through `torch.compile`.
    """
    rng = random.Random(seed)
    races = [Race(config, generate_track(seed * 1000 + n, config)) for n in range(races_count)]
    engine = TorchRaces(
        races_count, config, dtype=dtype, collision_iters=collision_iters, compact=compact, device=device
    )
    if compiled:
        engine.compile()
    engine.load_tracks([race.checkpoints for race in races])
    stats = ParityStats()
    diverged = [False] * races_count
    for _ in range(MAX_STEPS):
        if all(race.finished for race in races):
            break
        # Built as Python lists and converted once: per-element tensor writes would dominate.
        idle = [(0.0, 0.0, 0.0, False, False)] * 4
        rows = [idle] * races_count
        live = []
        for n, race in enumerate(races):
            if race.finished or diverged[n]:
                continue
            cmds = _commands(rng, race, melee=n % 2 == 0)
            rows[n] = [(c.target_x, c.target_y, c.thrust, c.boost, c.shield) for c in cmds]
            events = race.step(cmds)
            stats.collisions += sum(e.kind == "collision" for e in events)
            stats.shields += sum(e.kind == "shield" for e in events)
            stats.boosts += sum(e.kind == "boost" for e in events)
            live.append(n)
        columns = torch.tensor(rows, dtype=torch.float64)
        target = columns[..., 0:2].contiguous()
        thrust = columns[..., 2].float()
        boost, shield = columns[..., 3] > 0, columns[..., 4] > 0
        engine.step(target.to(device), thrust.to(device), boost.to(device), shield.to(device))
        state = torch.stack([engine.x, engine.y, engine.vx, engine.vy], -1).tolist()
        aux = torch.stack([engine.next_cp, engine.passed, engine.shield_cd], -1).tolist()
        boosts = engine.boost_available.tolist()
        finished, winner, reason = engine.finished.tolist(), engine.winner.tolist(), engine.reason.tolist()
        for n in live:
            race = races[n]
            stats.race_turns += 1
            all_equal = True
            for i, pod in enumerate(race.pods):
                stats.pod_turns += 1
                mine = (*state[n][i], *aux[n][i], boosts[n][i])
                ref = (
                    pod.x,
                    pod.y,
                    pod.vx,
                    pod.vy,
                    pod.next_checkpoint,
                    pod.checkpoints_passed,
                    pod.shield_cooldown,
                    pod.boost_available,
                )
                if mine == ref:
                    stats.pod_turns_equal += 1
                else:
                    all_equal = False
                    if stats.first_mismatch is None:
                        stats.first_mismatch = f"race {n} turn {race.turn} pod {i}: torch {mine} ref {ref}"
            ref_end = (race.finished, -1 if race.winner is None else race.winner, race.reason)
            mine_end = (finished[n], winner[n], REASONS[reason[n]])
            if ref_end != mine_end:
                all_equal = False
                if stats.first_mismatch is None:
                    stats.first_mismatch = f"race {n} turn {race.turn}: torch end {mine_end} ref {ref_end}"
            elif race.finished:
                stats.finished_equal += 1
                stats.winners += race.reason == "won"
            if not all_equal:
                stats.races_diverged += 1
                if resync:
                    engine.set_race(n, race)
                else:
                    # Later differences would only echo the first one.
                    diverged[n] = True
    stats.torch_capped = int(engine.collisions_capped.sum())
    stats.ref_capped = sum(race.collisions_capped for race in races)
    return stats
