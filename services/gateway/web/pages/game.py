"""The game page's data: the rules, the JSON schemas a bot works with, the config fields, and an
example observation and action taken from a real match.

All of it comes from the game's code and its rules document (docs/games/<name>.md), neither of
which changes while the gateway runs, so it is built once per game and kept. Only the short
leaderboard and the list of built-in bots on the ladder are read per request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.leaderboard.service import leaderboard
from shared.db.models import Bot
from shared.games.registry import game_names, get_game
from shared.states import BotOrigin

DOCS_DIR = Path(__file__).resolve().parents[4] / "docs" / "games"
"""The rules documents, present in a checkout; an install without them shows a summary instead."""
EXAMPLE_SEED = 1
LEADERBOARD_ROWS = 10
MAX_LADDER_BUILTINS = 50


@dataclass(frozen=True, slots=True)
class ConfigField:
    name: str
    type: str
    default: str
    """As JSON."""
    limits: str
    description: str


@dataclass(frozen=True, slots=True)
class BuiltinBot:
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class GameInfo:
    """The part of the page that comes from code and documents."""

    name: str
    title: str
    min_players: int
    max_players: int
    ladder_players: int
    rules_html: Markup | None
    observation_schema: str
    action_schema: str
    config_fields: list[ConfigField]
    example_observation: str
    example_action: str
    example_bot: str
    builtin_bots: list[BuiltinBot]


@dataclass(frozen=True, slots=True)
class GamePage:
    info: GameInfo
    board: Leaderboard
    ladder_builtins: list[Bot]
    """Bots of origin "builtin" registered for this game (they play on the ladder)."""


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=False)


def _demoted(markdown: str) -> Markup:
    """The document as HTML (raw HTML in it is escaped, not passed through), its title dropped and
    its headings one level down so they sit under the page's own sections."""
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = parser.parse(markdown)
    if tokens and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
        tokens = tokens[3:]  # heading_open, inline, heading_close
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"
    return Markup(parser.renderer.render(tokens, parser.options, {}))  # escaped by the parser (html off)


def rules_html(name: str) -> Markup | None:
    path = DOCS_DIR / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    return _demoted(text)


def _limits(schema: dict[str, Any]) -> str:
    parts = []
    if "enum" in schema:
        parts.append("one of " + ", ".join(json.dumps(v) for v in schema["enum"]))
    for key, sign in (
        ("minimum", ">="),
        ("exclusiveMinimum", ">"),
        ("maximum", "<="),
        ("exclusiveMaximum", "<"),
    ):
        if key in schema:
            parts.append(f"{sign} {schema[key]}")
    return ", ".join(parts)


def _type(schema: dict[str, Any]) -> str:
    if "type" in schema:
        return str(schema["type"])
    if "enum" in schema:
        return "enum"
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return " or ".join(str(option.get("type", "?")) for option in options) or "any"


def config_fields(schema: dict[str, Any]) -> list[ConfigField]:
    """The config model's fields as its JSON schema states them (type, default, bounds)."""
    return [
        ConfigField(
            name=name,
            type=_type(field),
            default=json.dumps(field.get("default")),
            limits=_limits(field),
            description=str(field.get("description", "")),
        )
        for name, field in schema.get("properties", {}).items()
    ]


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def game_info(name: str) -> GameInfo | None:
    """Everything static about game `name`; None for a game that does not exist (checked before
    the cache, so names from URLs never fill it)."""
    return _game_info(name) if name in game_names() else None


@cache
def _game_info(name: str) -> GameInfo:
    game = get_game(name)
    bots = game.builtin_bots()
    example_bot = sorted(bots)[0]
    match = game.create_match(EXAMPLE_SEED, {}, game.min_players)
    observation = match.observation(0)
    return GameInfo(
        name=game.name,
        title=game.title,
        min_players=game.min_players,
        max_players=game.max_players,
        ladder_players=game.ladder_players,
        rules_html=rules_html(game.name),
        observation_schema=_pretty(game.observation_schema()),
        action_schema=_pretty(game.action_schema()),
        config_fields=config_fields(game.config_schema()),
        example_observation=_pretty(observation),
        example_action=_pretty(bots[example_bot](observation)),
        example_bot=example_bot,
        builtin_bots=[BuiltinBot(bot, _first_line(decide.__doc__)) for bot, decide in sorted(bots.items())],
    )


def game_page(session: Session, name: str) -> GamePage | None:
    info = game_info(name)
    if info is None:
        return None
    board = leaderboard(session, info.name, include_inactive=False, limit=LEADERBOARD_ROWS, offset=0)
    ladder_builtins = session.scalars(
        select(Bot)
        .where(Bot.game == info.name, Bot.origin == BotOrigin.BUILTIN)
        .order_by(Bot.name)
        .limit(MAX_LADDER_BUILTINS)
    ).all()
    return GamePage(info=info, board=board, ladder_builtins=list(ladder_builtins))
