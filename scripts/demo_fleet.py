"""The bots the demo puts on the ladder: HTTP bots it starts itself (SDK examples, the Node.js
example when `node` exists, built-in bots served by the SDK) and hosted bots it uploads (built-in
bots' source under the decide contract, a CodinGame-style script, and the shipped trained bots)."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from shared.games.registry import get_game
from shared.sandbox.gate import check_source
from shared.states import HostedContract

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class HttpBot:
    name: str
    command: list[str] = field(default_factory=list)
    """Command line with `{port}` where the port goes; the secret comes in ARENA_BOT_SECRET."""


@dataclass
class HostedBot:
    name: str
    source: str
    contract: str


CODINGAME_SCRIPT = """import math
import sys

laps = int(input())
checkpoint_count = int(input())
checkpoints = [tuple(int(v) for v in input().split()) for _ in range(checkpoint_count)]

while True:
    pods = [[int(v) for v in input().split()] for _ in range(4)]
    for x, y, vx, vy, angle, next_id in pods[:2]:
        cx, cy = checkpoints[next_id]
        # Aim ahead of the checkpoint, compensating for the current drift.
        tx, ty = cx - 3 * vx, cy - 3 * vy
        heading = math.degrees(math.atan2(ty - y, tx - x)) % 360
        error = abs((heading - angle + 540) % 360 - 180) if angle >= 0 else 0
        distance = math.hypot(cx - x, cy - y)
        thrust = 0 if error > 90 else int(100 * min(1.0, (90 - error) / 45))
        if distance < 1500 and error < 30:
            thrust = min(thrust, 70)
        print(f"{int(tx)} {int(ty)} {thrust}")
    sys.stdout.flush()
"""


def http_bots(game: str) -> list[HttpBot]:
    python = sys.executable
    bots: list[HttpBot] = []
    if game == "podracing":
        for example in sorted((ROOT / "examples" / "bots").glob("podracing_*_bot.py")):
            short = example.stem.removeprefix("podracing_").removesuffix("_bot")
            bots.append(
                HttpBot(
                    f"sdk-{short}",
                    [python, "-m", "shared.botsdk.run", "--module", str(example), "--port", "{port}"],
                )
            )
        node_bot = ROOT / "examples" / "bots" / "js" / "podracing_bot.js"
        node = shutil.which("node")
        if node and node_bot.exists():
            bots.append(HttpBot("node-racer", [node, str(node_bot), "--port", "{port}"]))
    for name in sorted(get_game(game).builtin_bots()):
        bots.append(
            HttpBot(
                f"builtin-{name}",
                [python, "-m", "scripts.demo_builtin_bot", "--game", game, "--bot", name, "--port", "{port}"],
            )
        )
    return bots


def hosted_bots(game: str) -> tuple[list[HostedBot], list[str]]:
    """The hosted bots to upload, and notes about those that could not be prepared."""
    bots: list[HostedBot] = []
    notes: list[str] = []
    module_file = ROOT / "shared" / "games" / game / "bots.py"
    if module_file.exists():
        base = module_file.read_text()
        for name in sorted(get_game(game).builtin_bots()):
            own_module = module_file.with_name(f"{name}.py")
            if own_module.exists():  # a built-in with a module of its own (podracing's search bot)
                source = own_module.read_text()
            else:
                source = f"{base}\n\ndef decide(observation):\n    return {name}(observation)\n"
            problems = check_source(source, contract=HostedContract.DECIDE)
            if problems:
                notes.append(f"hosted-{name} skipped: {problems[0]}")
            else:
                bots.append(HostedBot(f"hosted-{name}", source, HostedContract.DECIDE))
    if game == "podracing":
        bots.append(HostedBot("hosted-codingame", CODINGAME_SCRIPT, HostedContract.CODINGAME))
        # The policy trained by Arena's trainer (docs/trainer.md), and the search bot with that policy
        # as its prior (docs/trainer-export.md).
        for name in ("ppo", "hybrid"):
            trained = ROOT / "examples" / "bots" / f"podracing_{name}.py"
            if trained.exists():
                bots.append(HostedBot(f"hosted-{name}", trained.read_text(), HostedContract.DECIDE))
    return bots, notes
