"""Reading BOT arguments (`arena play`, `arena eval`) into the players of a local match.

A BOT is one of:
  builtin:NAME     a bot shipped with the game (Game.builtin_bots()), run in this process
  FILE.py          a Python module with decide(observation), run in the hosted-bot sandbox
  codingame:FILE   a CodinGame script (stdin/stdout), run in the sandbox through the game's adapter
  http(s)://...    a bot server speaking protocol v1 (docs/protocol.md), signed with its secret

Hosted files pass the same static gate as an upload to the platform, before anything runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from shared.games.base import Decide, Game
from shared.play.errors import PlayError
from shared.protocol.signing import Signer
from shared.states import HostedContract

BOT_FORMS = "builtin:NAME, a Python file with decide(), codingame:FILE or an http(s):// URL"
SANDBOX_CHOICES = ("auto", "bwrap", "process")
"""How hosted bots run: auto (bubblewrap when installed), bubblewrap, or a plain subprocess."""


class BotKindArg(StrEnum):
    """How a BOT argument is run."""

    BUILTIN = "builtin"
    PYTHON = "python"
    CODINGAME = "codingame"
    HTTP = "http"

    @property
    def hosted(self) -> bool:
        return self in (BotKindArg.PYTHON, BotKindArg.CODINGAME)


@dataclass(frozen=True)
class BotSpec:
    """One player of a local match, as the user named it."""

    kind: BotKindArg
    label: str
    """How results name the bot: builtin:NAME, a file's name, or the URL."""
    decide: Decide | None = None
    source: str | None = None
    endpoint: str | None = None
    secret: str | None = None

    @property
    def contract(self) -> HostedContract:
        return HostedContract.CODINGAME if self.kind is BotKindArg.CODINGAME else HostedContract.DECIDE


def _builtin(game: Game, name: str, label: str) -> BotSpec:
    bots = game.builtin_bots()
    if name not in bots:
        raise PlayError(
            f"unknown built-in bot {name!r} for {game.name}; built-in bots: {', '.join(sorted(bots))}"
        )
    return BotSpec(BotKindArg.BUILTIN, label, decide=bots[name])


def _read_source(path_text: str, max_chars: int) -> str:
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise PlayError(f"bot {path_text!r}: no such file (a BOT is {BOT_FORMS})")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PlayError(f"bot {path_text!r}: cannot read the file: {exc.strerror or exc}") from None
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise PlayError(f"{path_text}: line {line}: the file is not UTF-8 text") from None
    if len(source) > max_chars:
        raise PlayError(f"{path_text}: the bot source has {len(source)} characters; the limit is {max_chars}")
    return source


def gate_problems(source: str, contract: HostedContract, max_chars: int) -> str | None:
    """The static gate's verdict as one line with line numbers (as the platform reports it), or None."""
    from shared.sandbox.gate import check_source

    problems = check_source(source, contract=contract, max_chars=max_chars)
    if not problems:
        return None
    shown = "; ".join(str(problem) for problem in problems[:5])
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    return f"fails the static gate with {len(problems)} problem(s): {shown}{more}"


def _hosted(game: Game, kind: BotKindArg, path_text: str, label: str, max_chars: int) -> BotSpec:
    if kind is BotKindArg.CODINGAME:
        from shared.sandbox.runtime import game_adapter_exists

        if not game_adapter_exists(game.name):
            raise PlayError(
                f"bot {label!r}: {game.name} has no CodinGame adapter (codingame: is for podracing only)"
            )
    source = _read_source(path_text, max_chars)
    spec = BotSpec(kind, label, source=source)
    verdict = gate_problems(source, spec.contract, max_chars)
    if verdict:
        hint = (
            " (a CodinGame script? name it codingame:FILE)" if "for the codingame contract" in verdict else ""
        )
        raise PlayError(f"{path_text} {verdict}{hint}")
    return spec


def _http(url: str, secret: str | None) -> BotSpec:
    if not secret:
        raise PlayError(f"bot {url!r} needs its signing secret: give --secret or set ARENA_BOT_SECRET")
    try:
        Signer(secret)
    except ValueError as exc:
        raise PlayError(f"the secret for {url!r} is unusable: {exc}") from None
    return BotSpec(BotKindArg.HTTP, url, endpoint=url, secret=secret)


def parse_bots(game: Game, texts: list[str], secrets: list[str], *, max_chars: int) -> list[BotSpec]:
    """Every BOT argument as a spec, in seat order. `secrets` go to the HTTP bots in order; a single
    secret serves them all."""
    http_count = sum(1 for text in texts if text.startswith(("http://", "https://")))
    if len(secrets) > 1 and len(secrets) != http_count:
        raise PlayError(f"{len(secrets)} secrets for {http_count} HTTP bot(s): give one, or one per HTTP bot")
    specs: list[BotSpec] = []
    http_seen = 0
    for text in texts:
        if text.startswith("builtin:"):
            specs.append(_builtin(game, text.removeprefix("builtin:"), text))
        elif text.startswith("codingame:"):
            path = text.removeprefix("codingame:")
            label = f"codingame:{Path(path).name}"
            specs.append(_hosted(game, BotKindArg.CODINGAME, path, label, max_chars))
        elif text.startswith(("http://", "https://")):
            secret = secrets[http_seen] if len(secrets) > 1 else (secrets[0] if secrets else None)
            http_seen += 1
            specs.append(_http(text, secret))
        elif not Path(text).expanduser().exists() and text in game.builtin_bots():
            raise PlayError(f"bot {text!r}: no such file; did you mean builtin:{text}?")
        else:
            specs.append(_hosted(game, BotKindArg.PYTHON, text, Path(text).name, max_chars))
    return specs
