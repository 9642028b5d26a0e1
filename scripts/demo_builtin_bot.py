"""Serve one of a game's built-in bots over protocol v1 with the SDK, like any external HTTP bot.

ARENA_BOT_SECRET=whsec_... python -m scripts.demo_builtin_bot --game podracing --bot blocker --port 8090
"""

from __future__ import annotations

import argparse
import os

from shared.botsdk import serve
from shared.games.registry import get_game


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--game", required=True)
    parser.add_argument("--bot", required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    bots = get_game(args.game).builtin_bots()
    if args.bot not in bots:
        parser.error(f"{args.game} has no built-in bot {args.bot!r}; it has {', '.join(sorted(bots))}")
    serve(bots[args.bot], secret=os.environ["ARENA_BOT_SECRET"], port=args.port)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
