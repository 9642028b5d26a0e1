"""The game page's data: a sample match between two built-in bots to watch, the rules, the JSON
schemas a bot works with, the config fields, and an example observation and action taken from a
real match.

The rules document (docs/games/<name>.md) is cut at its `##` headings and each part goes where the
page shows that subject (rules first; observation and action beside their schemas; built-in bots
beside their table; the rest at the end), so no subject appears twice: the document's own
configuration table is left out for the page's, which is read from the config model.

All of it comes from the game's code and its document, neither of which changes while the gateway
runs, so it is built once per game and kept. Only the short leaderboard and the list of built-in
bots on the ladder are read per request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from services.gateway.leaderboard.schemas import Leaderboard
from services.gateway.leaderboard.service import leaderboard
from shared.db.models import Bot
from shared.games.registry import game_names, get_game
from shared.games.replay import compress, play_local
from shared.states import BotOrigin

DOCS_DIR = Path(__file__).resolve().parents[4] / "docs" / "games"
"""The rules documents, present in a checkout; an install without them shows a summary instead."""
EXAMPLE_SEED = 1
LEADERBOARD_ROWS = 10
MAX_LADDER_BUILTINS = 50
SAMPLE_SEED = 1
SAMPLE_BOTS: dict[str, tuple[str, str]] = {
    "podracing": ("runner", "blocker"),
    "battle": ("aggressive", "defensive"),
}
"""The built-in bots of each game's sample match: two that make a lively one. A game not listed
plays its first two built-in bots (alphabetically)."""


@dataclass(frozen=True, slots=True)
class DocSection:
    """One `##` part of a rules document, rendered."""

    title: str
    html: Markup


@dataclass(frozen=True, slots=True)
class RulesDoc:
    """A game's rules document, by subject (see the module's docstring)."""

    intro: Markup | None
    rules: list[DocSection] = field(default_factory=list)
    observation: list[DocSection] = field(default_factory=list)
    builtin_bots: list[DocSection] = field(default_factory=list)
    more: list[DocSection] = field(default_factory=list)
    """Everything else, in the document's order."""


SUBJECTS: tuple[tuple[str, str], ...] = (
    ("rules", "rules"),
    ("observation", "observation"),
    ("action", "observation"),
    ("built-in bots", "builtin_bots"),
    ("configuration", ""),
)
"""A section whose title starts with the first word goes to the second (`""`: left out)."""


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
    doc: RulesDoc | None
    """The rules document by subject; None where the install has no docs/ folder."""
    sample_bots: tuple[str, str]
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


def _read_doc(name: str) -> str | None:
    try:
        return (DOCS_DIR / f"{name}.md").read_text(encoding="utf-8")
    except OSError:
        return None


CODE_BREAK = re.compile(r"([_./,])(?=\w)")
"""Where a line may break inside inline code: after `_ . / ,` followed by more of the word."""


def _code_inline(
    renderer: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    """Inline code with a break opportunity (`<wbr>`) after each CODE_BREAK: `units_per_player` in a
    narrow table column breaks as `units_per_` / `player`, never inside a word."""
    text = CODE_BREAK.sub(r"\1<wbr>", escapeHtml(tokens[idx].content))
    return f"<code{renderer.renderAttrs(tokens[idx])}>{text}</code>"


def split_doc(markdown: str) -> RulesDoc:
    """The document cut at its `##` headings, each part rendered and filed by subject (SUBJECTS).
    A part's own heading is dropped where the page gives the subject its heading, and kept one
    level down (`<h3>`) under "more"; `###` inside a part becomes `<h3>` (`<h4>` under "more")."""
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    parser.add_render_rule("code_inline", _code_inline)
    tokens = parser.parse(markdown)
    if tokens and tokens[0].type == "heading_open" and tokens[0].tag == "h1":
        tokens = tokens[3:]
    parts: list[tuple[str, list[Token]]] = [("", [])]
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            parts.append((tokens[index + 1].content.strip(), []))
        parts[-1][1].append(token)

    def render(part: list[Token], shift: int) -> Markup:
        for token in part:
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(int(token.tag[1]) + shift, 6)}"
        return Markup(parser.renderer.render(part, parser.options, {}))  # escaped (html off)

    intro_tokens = parts[0][1]
    doc = RulesDoc(intro=render(intro_tokens, 1) if intro_tokens else None)
    for title, part in parts[1:]:
        subject = next((where for word, where in SUBJECTS if title.lower().startswith(word)), "more")
        if subject == "":
            continue
        if subject == "more":
            doc.more.append(DocSection(title, render(part, 1)))
        else:
            getattr(doc, subject).append(DocSection(title, render(part[3:], 0)))
    return doc


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


def _sample_bots(name: str, bots: list[str]) -> tuple[str, str]:
    wanted = SAMPLE_BOTS.get(name)
    if wanted and all(bot in bots for bot in wanted):
        return wanted
    first, second = (sorted(bots) * 2)[:2]
    return first, second


@cache
def _game_info(name: str) -> GameInfo:
    game = get_game(name)
    bots = game.builtin_bots()
    example_bot = sorted(bots)[0]
    match = game.create_match(EXAMPLE_SEED, {}, game.min_players)
    observation = match.observation(0)
    text = _read_doc(game.name)
    return GameInfo(
        name=game.name,
        title=game.title,
        min_players=game.min_players,
        max_players=game.max_players,
        ladder_players=game.ladder_players,
        doc=None if text is None else split_doc(text),
        sample_bots=_sample_bots(game.name, list(bots)),
        observation_schema=_pretty(game.observation_schema()),
        action_schema=_pretty(game.action_schema()),
        config_fields=config_fields(game.config_schema()),
        example_observation=_pretty(observation),
        example_action=_pretty(bots[example_bot](observation)),
        example_bot=example_bot,
        builtin_bots=[BuiltinBot(bot, _first_line(decide.__doc__)) for bot, decide in sorted(bots.items())],
    )


def sample_replay(name: str) -> bytes | None:
    """The gzipped replay of game `name`'s sample match (its two sample bots, seed SAMPLE_SEED,
    the default config), with the bots' names in `players`; None for a game that does not exist.
    Played once per process, in a fraction of a second, on the first request."""
    info = game_info(name)
    return None if info is None else _sample_replay(info.name, info.sample_bots)


@cache
def _sample_replay(name: str, bots: tuple[str, str]) -> bytes:
    game = get_game(name)
    decide = game.builtin_bots()
    replay = play_local(game, SAMPLE_SEED, [decide[bot] for bot in bots])
    replay["players"] = [{"name": f"builtin:{bot}", "bot": f"builtin:{bot}"} for bot in bots]
    return compress(replay)


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
