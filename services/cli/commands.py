"""What each `arena` command does with its parsed arguments; each returns the exit status."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from services.cli import output
from services.cli.api_client import ApiClient
from services.cli.errors import CliError
from shared.games.podracing.codingame import OUTPUT_FORM as CODINGAME_OUTPUT_FORM
from shared.states import HostedContract, MatchStatus

if TYPE_CHECKING:
    from shared.games.base import Game
    from shared.play.bot_specs import BotSpec

FINAL_STATUSES = (MatchStatus.FINISHED, MatchStatus.FAILED, MatchStatus.CANCELLED)
POLL_INTERVAL_S = 1.0


def _json_object(text: str | None, option: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{option} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CliError(f"{option} must be a JSON object")
    return value


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2))


def _open_browser(choice: bool | None) -> bool:
    from services.cli.viewer import graphical_session

    return graphical_session() if choice is None else choice


# -- local -------------------------------------------------------------------------------------


def play(args: argparse.Namespace) -> int:
    from services.cli.replay_files import default_replay_path, write_replay
    from shared.games.registry import UnknownGameError, get_game
    from shared.play import options
    from shared.play.bot_specs import parse_bots

    try:
        game = get_game(args.game)
    except UnknownGameError as exc:
        raise CliError(str(exc.args[0])) from None
    options.check_player_count(game, len(args.bots))
    config = options.parse_config(game, args.config)
    seed = args.seed if args.seed is not None else secrets.randbelow(2**31)
    if not 0 <= seed < 2**63:
        raise CliError("--seed must be between 0 and 2**63 - 1")
    env_secret = os.environ.get("ARENA_BOT_SECRET")
    secret_list = args.secret or ([env_secret] if env_secret else [])
    settings = options.local_settings(
        turn_timeout_ms=args.turn_timeout_ms, first_turn_timeout_ms=args.first_turn_timeout_ms
    )
    specs = parse_bots(game, args.bots, secret_list, max_chars=settings.hosted_code_max_chars)
    backend, warning = options.choose_sandbox(args.sandbox, specs)
    settings = settings.model_copy(update={"sandbox_backend": backend})
    if warning:
        print(warning, file=sys.stderr, flush=True)
    from shared.play import local_play  # the turn loop's imports: only once the arguments are good

    match = local_play.play(game, specs, seed, config, settings)
    path = Path(args.replay) if args.replay else default_replay_path(game.name, seed)
    size = write_replay(match.played.replay, path)
    if args.json:
        _print_json(_play_json(match, path))
    else:
        print(output.local_result(match, [_expected_action(game, spec) for spec in specs]))
        print(f"\nreplay: {path} ({size / 1024:.0f} KiB)")
    sys.stdout.flush()
    if args.view:
        from services.cli.viewer import serve_replay

        serve_replay(path, host=args.host, port=args.port, open_browser=_open_browser(args.open))
    return 0


def _expected_action(game: Game, spec: BotSpec) -> str:
    """What a player's answers should look like, in the form that bot writes them."""
    if spec.contract == HostedContract.CODINGAME:
        return CODINGAME_OUTPUT_FORM  # podracing's: the one game with a text adapter
    return f"an action like {game.action_example}" if game.action_example else ""


def _play_json(match: Any, path: Path) -> dict[str, Any]:
    played = match.played
    return {
        "game": played.replay["game"],
        "seed": match.seed,
        "config": match.config,
        "turns": played.turns,
        "end_reason": str(played.end_reason),
        "replay": str(path),
        "players": [
            {
                "player": p.player,
                "bot": match.specs[p.player].label,
                "rank": p.rank,
                "score": p.score,
                "metrics": p.metrics,
                "errors": played.stats[p.player].errors,
                "timeouts": played.stats[p.player].timeouts,
                "forfeited": played.stats[p.player].forfeited,
                "error_samples": played.stats[p.player].error_samples,
                "invalid_samples": played.stats[p.player].invalid_samples,
            }
            for p in sorted(played.result.players, key=lambda p: p.player)
        ],
    }


def view(args: argparse.Namespace) -> int:
    from services.cli.viewer import serve_replay

    path = Path(args.file)
    if not path.is_file():
        raise CliError(f"no such replay file: {path}")
    serve_replay(path, host=args.host, port=args.port, open_browser=_open_browser(args.open))
    return 0


# -- server ------------------------------------------------------------------------------------


def bots_register(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        bot = api.register_http_bot(args.name, args.game, args.endpoint, args.secret)
    if args.json:
        _print_json(bot)
        return 0
    print(f"registered {bot['game']} bot {bot['name']!r}: id {bot['id']}, status {bot['status']}")
    if not args.secret:
        print(f"secret (shown once, store it now): {bot['secret']}")
    if bot.get("next_step"):
        print(f"next: {bot['next_step']} (arena bots reactivate {bot['name']} --game {bot['game']})")
    return 0


def _read_source(path_text: str) -> str:
    path = Path(path_text)
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CliError(f"{path} is not UTF-8 text") from None


def bots_upload(args: argparse.Namespace) -> int:
    source = _read_source(args.file)
    with ApiClient(args.url, args.api_key) as api:
        if args.bot:
            if args.game or args.name:
                raise CliError("--bot uploads a new version; --game and --name are for a new bot")
            notes = _json_object(args.notes, "--notes") or {}
            version = api.upload_version(args.bot, source, args.contract, notes)
            if args.json:
                _print_json(version)
            else:
                print(f"uploaded version {version['number']} of bot {args.bot} ({version['contract']})")
            return 0
        if not (args.game and args.name):
            raise CliError("give --bot ID for a new version, or --game and --name for a new bot")
        if args.notes:
            raise CliError("--notes goes with a new version (--bot ID)")
        bot = api.create_hosted_bot(args.name, args.game, source, args.contract or "decide")
    if args.json:
        _print_json(bot)
    else:
        print(
            f"uploaded hosted {bot['game']} bot {bot['name']!r}: id {bot['id']}, "
            f"version {bot['current_version']}, status {bot['status']}"
        )
    return 0


def bots_list(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        page = api.list_bots(args.game, args.limit)
    if args.json:
        _print_json(page)
    else:
        print(output.bot_list(page))
    return 0


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def _bot_id(api: ApiClient, game: str, text: str) -> str:
    """A bot id as given, or the id of the game's bot of that name (anyone's, or one of yours that
    is not listed publicly)."""
    if _is_uuid(text):
        return text
    found = api.public_bots(game, text)["items"]
    if not found and api.api_key:
        found = api.list_bots(game, 1, text)["items"]
    if not found:
        raise CliError(
            f"no {game} bot is named {text!r}; give a bot id or name (arena bots list shows yours, "
            f"arena leaderboard {game} the rated ones)"
        )
    return str(found[0]["id"])


def _own_bot_id(api: ApiClient, text: str, game: str | None) -> str:
    """A bot id as given, or the id of your bot of that name (in `game` when names repeat)."""
    if _is_uuid(text):
        return text
    found = api.list_bots(game, 100, text)["items"]
    where = f" in {game}" if game else ""
    if not found:
        raise CliError(f"you have no bot named {text!r}{where} (arena bots list shows yours)")
    if len(found) > 1:
        games = ", ".join(sorted(bot["game"] for bot in found))
        raise CliError(f"several bots are named {text!r} ({games}); say which with --game")
    return str(found[0]["id"])


def _bot_status_line(bot: dict[str, Any]) -> str:
    line = f"{bot['game']} bot {bot['name']!r} ({bot['id']}): {bot['status']}"
    return line + (f" ({bot['status_reason']})" if bot.get("status_reason") else "")


def bots_deactivate(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        bot = api.deactivate(_own_bot_id(api, args.bot, args.game))
    if args.json:
        _print_json(bot)
    else:
        print(_bot_status_line(bot) + "; off the ladder, rating and history kept")
    return 0


def bots_reactivate(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        bot = api.reactivate(_own_bot_id(api, args.bot, args.game))
    if args.json:
        _print_json(bot)
    else:
        print(_bot_status_line(bot) + ("; back on the ladder" if bot["status"] == "active" else ""))
    return 0


def users_create(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        created = api.create_user(args.name, "admin" if args.admin else "user")
    if args.json:
        _print_json(created)
        return 0
    user, key = created["user"], created["api_key"]
    print(f"created {user['role']} {user['name']!r} (id {user['id']})")
    print(f"API key (shown once, hand it over now): {key['api_key']}")
    print(f"next, as {user['name']}: export ARENA_API_KEY=<that key>; arena bots list")
    return 0


def keys_create(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        key = api.create_api_key(args.name)
    if args.json:
        _print_json(key)
    else:
        print(f"new API key {key['name']!r} ({key['prefix']}...), shown once: {key['api_key']}")
    return 0


def challenge(args: argparse.Namespace) -> int:
    config = _json_object(args.config, "--config")
    with ApiClient(args.url, args.api_key) as api:
        bot_ids = [_bot_id(api, args.game, text) for text in args.bots]
        match = api.challenge(args.game, bot_ids, args.seed, config, args.rated)
        if args.wait:
            match = _wait(api, match, args.timeout)
    if args.json:
        _print_json(match)
    else:
        print(output.match_summary(match, api.base_url))
    return 1 if match["status"] in (MatchStatus.FAILED, MatchStatus.CANCELLED) else 0


def _wait(api: ApiClient, match: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while match["status"] not in FINAL_STATUSES:
        if time.monotonic() >= deadline:
            raise CliError(
                f"match {match['id']} is still {match['status']} after {timeout_s:g} s; "
                f"see {api.base_url}/matches/{match['id']}"
            )
        time.sleep(POLL_INTERVAL_S)
        match = api.get_match(match["id"])
    return match


def leaderboard(args: argparse.Namespace) -> int:
    with ApiClient(args.url, args.api_key) as api:
        board = api.leaderboard(args.game, args.limit)
    if args.json:
        _print_json(board)
    else:
        print(output.leaderboard(board))
    return 0
