"""Example HTTP bot: the platform's built-in podracing `runner` policy, served with the SDK.

Run it:  ARENA_BOT_SECRET=whsec_... python -m shared.botsdk.run \
             --module examples/bots/podracing_runner_bot.py --port 8081
or simply `python examples/bots/podracing_runner_bot.py --port 8081`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from shared.games.podracing.bots import runner

_config: dict[str, Any] = {}


def init(config: dict[str, Any]) -> None:
    """Called once, on the first turn of a match: remember which match and seat this is."""
    _config.clear()
    _config.update(config)


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    return runner(observation)


if __name__ == "__main__":
    from shared.botsdk import serve

    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8081)
    args = parser.parse_args()
    serve(decide, secret=os.environ["ARENA_BOT_SECRET"], port=args.port, init=init)
