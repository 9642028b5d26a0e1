"""`arena`: play matches locally, watch replays, train and evaluate bots, and manage bots on a server.

Every command reports a problem as one line on stderr (`arena: ...`) and exits non-zero; run with
--verbose to see the logs and a traceback of an unexpected failure.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import NoReturn

from services.cli import commands, evolve_commands, train_commands
from services.cli.api_client import DEFAULT_URL
from services.cli.errors import CliError
from shared.play.bot_specs import BOT_FORMS, SANDBOX_CHOICES
from shared.play.errors import PlayError

DEFAULT_VIEW_HOST = "127.0.0.1"
DEFAULT_VIEW_PORT = 8765

AddParser = Callable[..., "OneLineParser"]
"""A subcommand group's add_parser."""


def _para(text: str) -> str:
    """A description paragraph, wrapped here because the help keeps the examples' line breaks."""
    return textwrap.fill(text, width=90)


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line naming the command, with a pointer to its --help."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def _server_options() -> OneLineParser:
    parent = OneLineParser(add_help=False)
    group = parent.add_argument_group("server")
    group.add_argument("--url", help=f"the Arena server (default: $ARENA_URL or {DEFAULT_URL})")
    group.add_argument("--api-key", help="your API key (default: $ARENA_API_KEY)")
    group.add_argument("--json", action="store_true", help="print the server's JSON answer instead of text")
    return parent


def _view_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host", default=DEFAULT_VIEW_HOST, help="address to serve the viewer on (default: %(default)s)"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_VIEW_PORT, help="port (default: %(default)s; 0: any free port)"
    )
    parser.add_argument(
        "--open",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="open a browser on the viewer (default: when a graphical session is found)",
    )


def _add_play(add: AddParser) -> None:
    play = add(
        "play",
        help="play a match on this machine (no server needed)",
        description=_para(
            "Play one match locally, on the same turn loop, sandbox and bot protocol as the "
            "platform, then print the result and write the replay."
        ),
        epilog=f"BOT is {BOT_FORMS}.\n\n"
        "examples:\n"
        "  arena play podracing builtin:runner builtin:blocker --seed 7\n"
        "  arena play podracing my_bot.py codingame:cg_bot.py --config '{\"laps\": 1}'\n"
        "  ARENA_BOT_SECRET=whsec_... arena play battle http://127.0.0.1:8080 builtin:sniper --view",
        formatter_class=_formatter,
    )
    play.add_argument("game", metavar="GAME", help="podracing or battle")
    play.add_argument("bots", metavar="BOT", nargs="+", help="the players, in seat order (see below)")
    play.add_argument("--seed", type=int, help="the match seed (default: random; printed)")
    play.add_argument("--config", metavar="JSON", help="game config as a JSON object, e.g. '{\"laps\": 1}'")
    play.add_argument(
        "--replay",
        metavar="FILE",
        help="where to write the replay (default: replay-GAME-SEED.json; .gz: gzip)",
    )
    play.add_argument("--view", action="store_true", help="serve the replay in the viewer afterwards")
    play.add_argument(
        "--secret",
        action="append",
        default=[],
        help="HTTP bots' signing secret: once for all, or once per HTTP bot (default: $ARENA_BOT_SECRET)",
    )
    play.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        default="auto",
        help="how Python files and CodinGame scripts run: bubblewrap, or a plain subprocess without "
        "isolation (default: auto, bubblewrap when installed)",
    )
    play.add_argument("--turn-timeout-ms", type=int, help="time a bot has per turn (default: 1000)")
    play.add_argument("--first-turn-timeout-ms", type=int, help="time a bot has for turn 0 (default: 3000)")
    play.add_argument("--json", action="store_true", help="print the result as JSON")
    _view_options(play)
    play.set_defaults(handler=commands.play)


def _add_view(add: AddParser) -> None:
    view = add(
        "view",
        help="watch a replay file in the browser",
        description=_para(
            "Serve the replay viewer for one replay file (plain or gzip JSON) and print its URL."
        ),
        epilog="example:\n  arena view replay-podracing-7.json --port 0",
        formatter_class=_formatter,
    )
    view.add_argument(
        "file", metavar="FILE", help="a replay written by arena play or downloaded from a match"
    )
    _view_options(view)
    view.set_defaults(handler=commands.view)


def _add_train(add: AddParser) -> None:
    train = add(
        "train",
        help="train a podracing policy on this machine (needs PyTorch)",
        description=_para(
            "Train a podracing policy with PPO on this machine (no server), printing one line per "
            "iteration and saving checkpoints. Ctrl+C stops after the current iteration and saves; "
            "a second Ctrl+C stops at once (and saves too)."
        ),
        epilog="examples:\n"
        "  arena train podracing --seconds 600\n"
        "  arena train podracing --steps 2000000 --device cuda --out runs/first\n"
        "  arena train podracing --resume runs/first/latest.pt --seconds 600\n"
        "  arena train podracing --imitate builtin:blocker --seconds 1800\n"
        '  arena train podracing --config \'{"learning_rate": 0.001, "num_steps": 64}\'',
        formatter_class=_formatter,
    )
    train.add_argument("game", metavar="GAME", help="podracing (the only trainable game)")
    train.add_argument("--steps", type=int, help="budget in race turns of all races (default: 10,000,000)")
    train.add_argument("--seconds", type=float, help="stop after this many seconds of this run")
    train.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        help="where to train (default: auto, CUDA when available)",
    )
    train.add_argument(
        "--out",
        metavar="DIR",
        help="checkpoint folder (default: training/<timestamp>/, or the resumed one's)",
    )
    train.add_argument("--seed", type=int, help="seeds torch and the tracks (default: 1)")
    train.add_argument("--num-envs", type=int, help="races played at once (default: 256)")
    train.add_argument("--resume", metavar="CKPT", help="continue the run of this checkpoint")
    train.add_argument(
        "--imitate",
        metavar="TEACHER",
        help="start by imitating TEACHER (builtin:runner, builtin:blocker, a checkpoint file, or, for "
        "expert iteration, builtin:lookahead or builtin:search, which improve on the student's own "
        "policy) with DAgger, then "
        "fine-tune with PPO; with --resume, the trained run goes back to an imitate stage with this teacher",
    )
    train.add_argument(
        "--threads", type=int, help="CPU threads torch may use (default: torch's own choice, every core)"
    )
    train.add_argument(
        "--config",
        metavar="JSON",
        help="training settings (services/trainer/ppo.Args) as a JSON object; when resuming only "
        "what may change then (learning_rate, ent_coef, rewards, stage, num_envs, num_steps, "
        "search_opponent, ...: a wrong name lists them all)",
    )
    train.add_argument(
        "--save-every",
        type=int,
        default=10,
        metavar="K",
        help="save every K iterations (default: %(default)s)",
    )
    train.set_defaults(handler=train_commands.train)


def _add_export(add: AddParser) -> None:
    export = add(
        "export",
        help="turn a training checkpoint into a one-file bot (needs PyTorch)",
        description=_para(
            "Write the checkpoint's policy as one standard-library Python file: a hosted bot "
            "(decide(observation), for arena play, arena eval or upload) or, with --codingame, an "
            "unchanged CodinGame script. With --hybrid, the file is the search bot (builtin:search) "
            "with the policy as its prior: the policy's plan seeds every turn's search."
        ),
        epilog="examples:\n"
        "  arena export training/20260101-120000/latest.pt --out bot.py\n"
        "  arena export runs/first/ckpt-000200.pt --out cg_bot.py --codingame\n"
        "  arena export training/20260101-120000/latest.pt --out hybrid.py --hybrid --budget-ms 40",
        formatter_class=_formatter,
    )
    export.add_argument("checkpoint", metavar="CKPT", help="a checkpoint written by arena train")
    export.add_argument("--out", required=True, metavar="FILE", help="the bot file to write")
    export.add_argument("--codingame", action="store_true", help="a CodinGame script instead of a hosted bot")
    export.add_argument(
        "--hybrid",
        action="store_true",
        help="the search bot with the policy as its prior, not the policy alone",
    )
    export.add_argument(
        "--budget-ms",
        type=float,
        metavar="MS",
        help="with --hybrid: the search's time per turn in milliseconds (default 40)",
    )
    export.set_defaults(handler=train_commands.export)


def _add_eval(add: AddParser) -> None:
    evaluate = add(
        "eval",
        help="measure a podracing bot's win rate against another bot",
        description=_para(
            "Play many podracing races on this machine, the bot's seat swapped every other race "
            "(each track raced from both seats), and print its win rate with a 95% interval."
        ),
        epilog=f"BOT is {BOT_FORMS}.\n\n"
        "examples:\n"
        "  arena eval bot.py --against builtin:runner --races 200\n"
        "  arena eval codingame:cg_bot.py --against builtin:blocker --races 50 --jobs 2",
        formatter_class=_formatter,
    )
    evaluate.add_argument("bot", metavar="BOT", help="the bot to measure")
    evaluate.add_argument(
        "--against", default="builtin:runner", metavar="BOT", help="the opponent (default: %(default)s)"
    )
    evaluate.add_argument("--races", type=int, default=200, help="races to play (default: %(default)s)")
    evaluate.add_argument(
        "--seed", type=int, default=0, help="race i is on the track of seed + i // 2 (default: 0)"
    )
    evaluate.add_argument(
        "--config", metavar="JSON", help="game config as a JSON object, e.g. '{\"laps\": 1}'"
    )
    evaluate.add_argument(
        "--jobs", type=int, default=1, help="processes playing races (default: %(default)s)"
    )
    evaluate.add_argument(
        "--sandbox",
        choices=SANDBOX_CHOICES,
        default="auto",
        help="how Python files and CodinGame scripts run",
    )
    evaluate.add_argument("--secret", action="append", default=[], help="HTTP bots' signing secret")
    evaluate.add_argument("--turn-timeout-ms", type=int, help="time a bot has per turn (default: 1000)")
    evaluate.add_argument("--json", action="store_true", help="print the result as JSON")
    evaluate.set_defaults(handler=train_commands.evaluate)


def _add_bots(add: AddParser, server: OneLineParser) -> None:
    bots = add("bots", help="register, upload and list your bots on a server", formatter_class=_formatter)
    bots_sub = bots.add_subparsers(
        dest="bots_command", metavar="COMMAND", required=True, parser_class=OneLineParser
    )
    register = bots_sub.add_parser(
        "register",
        parents=[server],
        help="register a bot that runs behind an HTTP endpoint",
        description=_para(
            "Register an HTTP bot. With --secret (the one your bot already uses) the server "
            "health-checks it now; without, it answers a new secret, shown once."
        ),
        epilog="example:\n  arena bots register --game podracing --name my-racer --endpoint https://bot.example.com",
        formatter_class=_formatter,
    )
    register.add_argument("--game", required=True)
    register.add_argument("--name", required=True)
    register.add_argument("--endpoint", required=True, help="the bot's http(s) URL")
    register.add_argument("--secret", help="the signing secret the bot uses (whsec_...)")
    register.set_defaults(handler=commands.bots_register)

    upload = bots_sub.add_parser(
        "upload",
        parents=[server],
        help="upload a Python bot: a new hosted bot, or a new version of one",
        description=_para(
            "Upload a hosted bot's Python file. With --bot ID it becomes a new version of that "
            "bot; with --game and --name it registers a new hosted bot. The server runs the static gate "
            "and answers every problem with its line number."
        ),
        epilog="examples:\n"
        "  arena bots upload my_bot.py --game podracing --name my-hosted-racer\n"
        "  arena bots upload my_bot.py --bot 3f0c...",
        formatter_class=_formatter,
    )
    upload.add_argument("file", metavar="FILE")
    upload.add_argument("--bot", metavar="ID", help="upload a new version of this bot")
    upload.add_argument("--game", help="the game of a new bot")
    upload.add_argument("--name", help="the name of a new bot")
    upload.add_argument(
        "--contract",
        choices=("decide", "codingame"),
        help="decide: a module with decide(observation); codingame: a stdin/stdout script "
        "(default: decide for a new bot, the current version's for a new version)",
    )
    upload.add_argument("--notes", metavar="JSON", help="free-form notes stored with a new version")
    upload.set_defaults(handler=commands.bots_upload)

    listing = bots_sub.add_parser(
        "list", parents=[server], help="list your bots (every bot for an admin)", formatter_class=_formatter
    )
    listing.add_argument("--game")
    listing.add_argument("--limit", type=int, default=100)
    listing.set_defaults(handler=commands.bots_list)

    for action, handler, summary in (
        (
            "deactivate",
            commands.bots_deactivate,
            "take one of your bots off the ladder (it keeps its rating)",
        ),
        (
            "reactivate",
            commands.bots_reactivate,
            "put one of your bots back on the ladder, also after a suspension (HTTP bots are "
            "health-checked first)",
        ),
    ):
        command = bots_sub.add_parser(
            action,
            parents=[server],
            help=summary,
            description=_para(summary[0].upper() + summary[1:] + "."),
            epilog=f"examples:\n  arena bots {action} my-racer\n  arena bots {action} 3f0c...",
            formatter_class=_formatter,
        )
        command.add_argument("bot", metavar="BOT", help="the bot's id, or its name")
        command.add_argument("--game", help="the bot's game, when you have bots of that name in several")
        command.set_defaults(handler=handler)


def _add_accounts(add: AddParser, server: OneLineParser) -> None:
    users = add("users", help="create accounts on a server (admins)", formatter_class=_formatter)
    users_sub = users.add_subparsers(
        dest="users_command", metavar="COMMAND", required=True, parser_class=OneLineParser
    )
    create = users_sub.add_parser(
        "create",
        parents=[server],
        help="create a user and print the user's first API key (admin key needed)",
        description=_para(
            "Create an account; the answer carries its first API key, shown once. Only an admin "
            "may create users: on your own server that is the key in ARENA_BOOTSTRAP_ADMIN_KEY."
        ),
        epilog="example:\n  arena users create alice --api-key $ARENA_BOOTSTRAP_ADMIN_KEY",
        formatter_class=_formatter,
    )
    create.add_argument("name", metavar="NAME", help="letters, digits, '.', '_' and '-'")
    create.add_argument("--admin", action="store_true", help="an admin instead of an ordinary user")
    create.set_defaults(handler=commands.users_create)

    keys = add("keys", help="create more API keys for your own account", formatter_class=_formatter)
    keys_sub = keys.add_subparsers(
        dest="keys_command", metavar="COMMAND", required=True, parser_class=OneLineParser
    )
    key = keys_sub.add_parser(
        "create",
        parents=[server],
        help="create another API key for your account (shown once)",
        epilog="example:\n  arena keys create --name laptop",
        formatter_class=_formatter,
    )
    key.add_argument("--name", default="default", help="a label for the key (default: %(default)s)")
    key.set_defaults(handler=commands.keys_create)


def _add_challenge(add: AddParser, server: OneLineParser) -> None:
    challenge = add(
        "challenge",
        parents=[server],
        help="ask the server to play a match between bots now",
        description=_para(
            "Challenge: the server plays the given bots (you must own one) and stores the replay; "
            "with --wait, the result and each bot's rating before and after. Challenges are "
            "unrated unless an admin asks with --rated."
        ),
        epilog="examples:\n  arena challenge podracing my-racer other-racer --wait\n"
        "  arena challenge podracing BOT_ID OTHER_BOT_ID",
        formatter_class=_formatter,
    )
    challenge.add_argument("game", metavar="GAME")
    challenge.add_argument("bots", metavar="BOT", nargs="+", help="the players (ids or names), in seat order")
    challenge.add_argument("--seed", type=int)
    challenge.add_argument("--config", metavar="JSON", help="game config as a JSON object")
    challenge.add_argument("--rated", action="store_true", help="move ratings (admins only)")
    challenge.add_argument("--wait", action="store_true", help="wait for the result and print it")
    challenge.add_argument(
        "--timeout", type=float, default=600.0, help="seconds --wait waits (default: %(default)s)"
    )
    challenge.set_defaults(handler=commands.challenge)


def _add_leaderboard(add: AddParser, server: OneLineParser) -> None:
    board = add(
        "leaderboard",
        parents=[server],
        help="a game's leaderboard (no key needed)",
        epilog="example:\n  arena leaderboard podracing --limit 10",
        formatter_class=_formatter,
    )
    board.add_argument("game", metavar="GAME")
    board.add_argument("--limit", type=int, default=50)
    board.set_defaults(handler=commands.leaderboard)


def _add_evolve(add: AddParser) -> None:
    evolve = add(
        "evolve",
        help="evolve a bot's code with LLMs (or the built-in mutation operator) on this machine",
        description=_para(
            "Run an evolution: a root LLM directs child LLMs that rewrite a seed bot, every program "
            "is gated and evaluated in the sandbox against the built-in bots, and the best is kept. "
            "Without --llm-base-url the built-in mutation operator and rule-based root stand in, so "
            "no key is needed. Locally the run lives in a database (ARENA_DATABASE_URL, else an "
            "embedded PostgreSQL under --data-dir) and is written to --out as a run directory "
            "(config, logs, every generation's programs, best_bot.py). Ctrl+C stops after the "
            "current step; --resume RUN goes on. The LLM key comes from ARENA_LLM_API_KEY or "
            "OPENAI_API_KEY, never from the command line."
        ),
        epilog="examples:\n"
        "  arena evolve battle --generations 5 --children 3\n"
        "  arena evolve battle --seed my_bot.py --generations 20 --out runs/evo1\n"
        "  ARENA_LLM_API_KEY=... arena evolve podracing --llm-base-url https://api.openai.com/v1 \\\n"
        "      --llm-model gpt-4.1-mini --root-model gpt-4.1 --budget-usd 2\n"
        "  arena evolve battle --server https://arena.example.org --api-key KEY --generations 30",
        formatter_class=_formatter,
    )
    evolve.add_argument("game", metavar="GAME", help="battle or podracing")
    evolve.add_argument(
        "--generations", type=int, default=10, help="at most this many generations (default: %(default)s)"
    )
    evolve.add_argument(
        "--children", type=int, default=4, help="children per generation (default: %(default)s)"
    )
    evolve.add_argument(
        "--llm-base-url",
        metavar="URL",
        help="your own OpenAI-compatible endpoint (…/v1), called with the key in ARENA_LLM_API_KEY",
    )
    evolve.add_argument(
        "--llm-endpoint",
        metavar="NAME",
        help="with --server: one of the server's model endpoints, on its key within your allowance "
        "(GET /api/v1/evolution/endpoints lists them)",
    )
    evolve.add_argument(
        "--llm-model", metavar="NAME", help="the children's model (and the root's, unless --root-model)"
    )
    evolve.add_argument("--root-model", metavar="NAME", help="the root's model")
    evolve.add_argument(
        "--budget-usd", type=float, metavar="X", help="hard money cap for LLM calls (default: 5)"
    )
    evolve.add_argument("--max-minutes", type=float, help="hard wall-time cap (default: 60)")
    evolve.add_argument(
        "--seed",
        action="append",
        metavar="FILE",
        help="a seed program (repeatable; default: the game's weak seed)",
    )
    evolve.add_argument(
        "--quick", type=int, help="quick matches against the built-ins per program (default: 3)"
    )
    evolve.add_argument("--tournament", type=int, help="tournament matches per program (default: 10)")
    evolve.add_argument("--match-config", metavar="JSON", help="game config for every evaluation match")
    evolve.add_argument("--jobs", type=int, help="evaluation matches played at once (default: 1)")
    evolve.add_argument(
        "--match-seeds",
        choices=("run", "generation"),
        help="run: every program plays the same matches (default); generation: new ones each generation",
    )
    evolve.add_argument(
        "--rematch",
        action="store_true",
        help="racing: parents replay each generation's new matches and are judged on all of them "
        "(implies --match-seeds generation)",
    )
    evolve.add_argument("--islands", type=int, help="islands of the program database (default: 3)")
    evolve.add_argument(
        "--exploration",
        type=float,
        metavar="RATIO",
        help="share of parents drawn from the grid (default: 0.3)",
    )
    evolve.add_argument(
        "--selection",
        choices=("nash", "fitness"),
        help="what parents are ranked by: nash (default; a win counts by the opponent's strength) "
        "or fitness (every opponent the same, e.g. against the built-ins alone)",
    )
    evolve.add_argument(
        "--constants-table",
        type=int,
        metavar="N",
        help="recent evaluated programs whose fitness and named constants a child's prompt lists "
        "(default: 150; 0: none, shorter prompts, and the built-in child does not screen its steps)",
    )
    evolve.add_argument("--random-seed", type=int, help="seeds sampling and match seeds (default: 0)")
    evolve.add_argument("--chunk-seconds", type=float, help="work between commits (default: 120)")
    evolve.add_argument("--name", help="the run's name (default: GAME-<timestamp>)")
    evolve.add_argument("--out", metavar="DIR", help="run directory to write (default: evolution/<name>/)")
    evolve.add_argument(
        "--data-dir",
        default=evolve_commands.DEFAULT_DATA_DIR,
        help="embedded database folder (default: %(default)s)",
    )
    evolve.add_argument("--resume", metavar="RUN", help="go on with a stopped run of this database")
    evolve.add_argument(
        "--sandbox",
        choices=("bwrap", "process"),
        default="bwrap",
        help="bwrap (default; required unless you pass process on a throwaway machine)",
    )
    evolve.add_argument("--server", metavar="URL", help="submit the run to a running Arena instead")
    evolve.add_argument("--api-key", help="API key for --server (or ARENA_API_KEY)")
    evolve.set_defaults(handler=evolve_commands.evolve)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog="arena",
        description=_para(
            "Arena for bot authors: play matches on your machine, watch replays, train and "
            "measure podracing policies, and manage your bots on an Arena server."
        ),
        epilog="docs/cli.md has every command with an example.",
        formatter_class=_formatter,
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="show logs and tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=OneLineParser)
    server = _server_options()
    _add_play(sub.add_parser)
    _add_view(sub.add_parser)
    _add_train(sub.add_parser)
    _add_export(sub.add_parser)
    _add_eval(sub.add_parser)
    _add_evolve(sub.add_parser)
    _add_bots(sub.add_parser, server)
    _add_accounts(sub.add_parser, server)
    _add_challenge(sub.add_parser, server)
    _add_leaderboard(sub.add_parser, server)
    return parser


def _configure_logging(verbose: bool) -> None:
    """Quiet by default: the command prints what matters; --verbose shows every log line."""
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    else:
        logging.getLogger().addHandler(logging.NullHandler())


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    try:
        status: int = args.handler(args)
    except CliError as exc:
        print(f"arena: {exc.message}", file=sys.stderr)
        return exc.status
    except PlayError as exc:  # a local match that cannot be played as asked: the user's to fix too
        error = CliError(str(exc))
        print(f"arena: {error.message}", file=sys.stderr)
        return error.status
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `arena ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:
        if args.verbose:
            raise
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        print(f"arena: unexpected error: {detail} (run with --verbose for details)", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
