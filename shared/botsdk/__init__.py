"""Bot SDK: turn a `decide(observation) -> action` function into a protocol-v1 bot server.

Standard library only, so the same code serves uploaded bots inside the sandbox.
"""

from shared.botsdk.server import BotApp, make_server, serve

__all__ = ["BotApp", "make_server", "serve"]
