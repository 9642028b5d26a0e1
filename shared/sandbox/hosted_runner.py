"""Runs inside the sandbox: loads the author's code and serves protocol v1 on a Unix socket.

Standard library only. It reads its configuration as one JSON document on stdin (no environment,
no files the bot could find later), applies the resource limits to itself before any user code
runs, signals readiness on an inherited pipe and then serves, on the listening socket the host
passed in (an inherited descriptor), until it is killed.

Contracts:
  decide      the module defines decide(observation) and optionally init(config)
  codingame   the file is a script reading stdin and printing; it runs as a persistent child
              process fed through the game's text adapter (shared/games/<game>/codingame.py)
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import sys
import types
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
    """Run the bot's file as the module `bot`, compiled from exactly the text the gate checked.

    The file is decoded as strict UTF-8 and compiled as a str: compile() of a str ignores coding
    declarations, so a `# coding: utf-7` line cannot turn what the gate read as a comment or a
    string into code (importing the file would honour the declaration).
    """
    with open(path, "rb") as file:
        text = file.read().decode("utf-8")
    code = compile(text, path, "exec", dont_inherit=True)
    module = types.ModuleType("bot")
    module.__file__ = path
    sys.modules["bot"] = module
    exec(code, module.__dict__)  # the bot's own code, inside the sandbox
    decide = getattr(module, "decide", None)
    if not callable(decide):
        raise RuntimeError("the bot defines no decide(observation) function")
    init = getattr(module, "init", None)
    return decide, init if callable(init) else None


class CodinGameBot:
    """Adapts a stdin/stdout script to decide() through the game's text adapter, which keeps one
    persistent child process for the whole match and feeds it line by line."""

    def __init__(self, path: str, game: str, packages_path: str | None = None) -> None:
        adapter = importlib.import_module(f"shared.games.{game}.codingame")
        self._process = adapter.CodinGameProcess(
            path, python=sys.executable, cwd="/tmp", extra_path=[packages_path] if packages_path else []
        )

    def decide(self, observation: Any) -> Any:
        action = self._process.decide(observation)
        if action is None:
            detail = "; ".join(self._process.stderr[-3:])
            raise RuntimeError(
                "the script did not answer in time or exited" + (f": {detail}" if detail else "")
            )
        if self._process.last_errors:  # the lines it could not read, for its owner's samples
            action["errors"] = self._process.last_errors
        return action


def main() -> int:
    config = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    ready_fd = int(config["ready_fd"])
    apply_limits(config.get("limits", {}))
    sys.path.insert(0, ARENA_ROOT)
    packages_path = config.get("packages_path")
    if packages_path:  # the packages bots may import (numpy), bound read-only by the host
        sys.path.append(packages_path)
    from shared.botsdk.server import make_server
    from shared.states import HostedContract

    contract = config.get("contract", HostedContract.DECIDE)
    reload = None
    if contract == HostedContract.DECIDE:
        code_path = config["code_path"]
        decide, init = load_decide_module(code_path)

        def reload() -> tuple[Any, Any]:  # a later match (a worker reuses the sandbox): fresh module
            return load_decide_module(code_path)

    elif contract == HostedContract.CODINGAME:
        bot = CodinGameBot(config["code_path"], config["game"], packages_path)
        decide, init = bot.decide, None
    else:
        raise SystemExit(f"unknown contract {contract!r}")
    # The host bound the listening socket in a directory of its own and passed it in: the runner
    # serves on that descriptor and never names a path the host would have to resolve.
    server = make_server(
        decide, secret=config["secret"], listen_fd=int(config["listen_fd"]), init=init, reload=reload
    )

    def ready() -> None:  # serving, with every thread of the server started
        os.write(ready_fd, b"1")
        os.close(ready_fd)

    server.serve_forever(poll_interval=0.5, serving=ready)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
