"""Runs inside the sandbox: loads the author's code and serves protocol v1 on a Unix socket.

Standard library only. It reads its configuration as one JSON document on stdin (no environment,
no files the bot could find later), applies the resource limits to itself before any user code
runs, signals readiness on an inherited pipe and then serves until it is killed.

Contracts:
  decide      the module defines decide(observation) and optionally init(config)
  codingame   the file is a script reading stdin and printing; it runs as a persistent child
              process fed through the game's text adapter (shared/games/<game>/codingame.py)
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import resource
import sys
from typing import Any

ARENA_ROOT = os.path.dirname(os.path.abspath(__file__))


def apply_limits(limits: dict[str, int]) -> None:
    """Lower the rlimits for this process and everything it starts (lowering never needs privilege)."""
    table = {
        "as_bytes": resource.RLIMIT_AS,
        "cpu_seconds": resource.RLIMIT_CPU,
        "processes": resource.RLIMIT_NPROC,
        "open_files": resource.RLIMIT_NOFILE,
        "file_size_bytes": resource.RLIMIT_FSIZE,
    }
    for key, which in table.items():
        value = limits.get(key)
        if value is None:
            continue
        _soft, hard = resource.getrlimit(which)
        new = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (new, new))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def load_decide_module(path: str) -> tuple[Any, Any]:
    spec = importlib.util.spec_from_file_location("bot", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bot"] = module
    spec.loader.exec_module(module)
    decide = getattr(module, "decide", None)
    if not callable(decide):
        raise RuntimeError("the bot defines no decide(observation) function")
    init = getattr(module, "init", None)
    return decide, init if callable(init) else None


class CodinGameBot:
    """Adapts a stdin/stdout script to decide() through the game's text adapter, which keeps one
    persistent child process for the whole match and feeds it line by line."""

    def __init__(self, path: str, game: str) -> None:
        adapter = importlib.import_module(f"shared.games.{game}.codingame")
        self._process = adapter.CodinGameProcess(path, python=sys.executable, cwd="/tmp")

    def decide(self, observation: Any) -> Any:
        action = self._process.decide(observation)
        if action is None:
            detail = "; ".join(self._process.stderr[-3:])
            raise RuntimeError(
                "the script did not answer in time or exited" + (f": {detail}" if detail else "")
            )
        return action


def main() -> int:
    config = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    ready_fd = int(config["ready_fd"])
    apply_limits(config.get("limits", {}))
    sys.path.insert(0, ARENA_ROOT)
    from shared.botsdk.server import make_server

    contract = config.get("contract", "decide")
    if contract == "decide":
        decide, init = load_decide_module(config["code_path"])
    elif contract == "codingame":
        bot = CodinGameBot(config["code_path"], config["game"])
        decide, init = bot.decide, None
    else:
        raise SystemExit(f"unknown contract {contract!r}")
    server = make_server(decide, secret=config["secret"], unix_socket=config["socket"], init=init)
    os.write(ready_fd, b"1")
    os.close(ready_fd)
    server.serve_forever(poll_interval=0.5)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
