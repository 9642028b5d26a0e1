"""Real protocol-v1 bots: the SDK server on a loopback port, in a thread of the test process."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from shared.protocol.signing import generate_secret


@dataclass
class BotServer:
    url: str
    secret: str


def runner_policy(observation: Any) -> Any:
    from shared.games.podracing.bots import runner

    return runner(observation)


def serve_policy(policy: Any) -> tuple[Any, BotServer]:
    """Serve `policy` with a fresh secret until the returned server is shut down."""
    from shared.botsdk import make_server

    secret = generate_secret()
    server = make_server(policy, secret=secret, port=0)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    return server, BotServer(f"http://{host}:{port}", secret)
