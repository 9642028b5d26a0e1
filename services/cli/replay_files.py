"""Replay files on disk: strict JSON, gzip-compressed when the name ends with .gz."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from services.cli.errors import CliError
from shared.games.replay import compress, encode


def default_replay_path(game: str, seed: int) -> Path:
    return Path(f"replay-{game}-{seed}.json")


def replay_bytes(replay: dict[str, Any], path: Path) -> bytes:
    """The file's content: gzip of strict JSON for *.gz, the strict JSON text otherwise."""
    return compress(replay) if path.name.endswith(".gz") else encode(replay)


def write_replay(replay: dict[str, Any], path: Path) -> int:
    """Write the replay; the number of bytes written."""
    data = replay_bytes(replay, path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    except OSError as exc:
        raise CliError(f"cannot write the replay to {path}: {exc.strerror or exc}") from None
    return len(data)


def read_replay(path: Path) -> dict[str, Any]:
    """A replay file (plain or gzip JSON), checked to be a replay at all."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        replay = json.loads(data)
    except (OSError, EOFError, ValueError) as exc:
        raise CliError(f"{path} is not a replay (plain or gzip JSON): {exc}") from None
    if not isinstance(replay, dict) or not isinstance(replay.get("frames"), list) or "game" not in replay:
        raise CliError(f"{path} is not a replay: expected a JSON object with 'game' and 'frames'")
    return replay
