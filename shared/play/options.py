"""Checking a local match's options before anything starts: the config, the sandbox, the settings."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from shared.games.base import JSON, Game
from shared.play.bot_specs import BotKindArg, BotSpec
from shared.play.errors import PlayError

if TYPE_CHECKING:
    from shared.config import Settings

NO_ISOLATION = "hosted bots run as plain subprocesses without isolation; run only code you trust"


def parse_config(game: Game, text: str | None) -> dict[str, JSON]:
    """--config as a JSON object, checked against the game's config model."""
    if text is None:
        return {}
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlayError(f"--config is not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise PlayError("--config must be a JSON object, e.g. '{\"laps\": 1}'")
    try:
        game.parse_config(config)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise PlayError(f"invalid --config for {game.name}: {problems}") from None
    return config


def check_player_count(game: Game, count: int) -> None:
    if not game.min_players <= count <= game.max_players:
        players = (
            str(game.min_players)
            if game.min_players == game.max_players
            else f"{game.min_players} to {game.max_players}"
        )
        raise PlayError(f"{game.name} is played by {players} bots; got {count}")


def choose_sandbox(requested: str, specs: Sequence[BotSpec]) -> tuple[str, str | None]:
    """The sandbox backend for hosted bots and a warning to show, if any.

    "auto" is bubblewrap when it is installed (and, for CodinGame scripts, the host has the cgroups
    they need in it); otherwise a plain subprocess, with a warning."""
    hosted = [spec for spec in specs if spec.kind.hosted]
    if requested == "process":
        return "process", (f"warning: {NO_ISOLATION}" if hosted else None)
    if requested == "bwrap" or not hosted:
        return "bwrap", None
    if shutil.which("bwrap") is None:
        return "process", f"warning: bubblewrap (bwrap) is not installed: {NO_ISOLATION}"
    if any(spec.kind is BotKindArg.CODINGAME for spec in hosted):
        from shared.sandbox.cgroups import detect

        if detect() is None:
            return (
                "process",
                f"warning: no usable cgroups for CodinGame scripts in the sandbox: {NO_ISOLATION}",
            )
    return "bwrap", None


def local_settings(
    *, turn_timeout_ms: int | None = None, first_turn_timeout_ms: int | None = None
) -> Settings:
    """Settings for a local match: development mode (loopback bots, the process backend), no .env
    file read, and the timeouts asked for; everything else is the platform's default or an ARENA_
    variable the user set. The sandbox backend is set once the bots are known (choose_sandbox)."""
    from shared.config import Settings

    overrides: dict[str, Any] = {"dev_mode": True, "sandbox_backend": "bwrap"}
    if turn_timeout_ms is not None:
        overrides["turn_timeout_ms"] = turn_timeout_ms
    if first_turn_timeout_ms is not None:
        overrides["first_turn_timeout_ms"] = first_turn_timeout_ms
    try:
        return Settings(_env_file=None, **overrides)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "settings"
        raise PlayError(f"invalid setting {where}: {problem['msg']}") from None
