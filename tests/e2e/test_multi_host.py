"""Several hosts: match-runner workers on two hosts against one PostgreSQL and one Redis on a third.

The hosts are network namespaces on this machine (tests/support/netns.py), each with its own address
and host name: `db` runs PostgreSQL, Redis and the beat (the ladder and the reaper), `w1` and `w2`
run one match-runner worker each, and the test process is the control host that registers the bots
(hosted ones, and one HTTP bot that it serves itself, so bot traffic crosses the network too) and
watches the database. The ladder plays; `w1` is cut off from the network in the middle of a match;
the reaper hands that match to `w2`; `w1` comes back while it still holds its copy of the match,
tries to finish it, and records nothing. In the end every match finished exactly once, with one
result, one replay object and one rating update per bot, and no match was lost.
"""

from __future__ import annotations

import glob
import json
import math
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest
import redis
from sqlalchemy import func, select

from services.match_runner.commands import beat_command, worker_command
from shared import ratings
from shared.bots.service import register_hosted_bot, register_http_bot
from shared.config import Settings, get_settings
from shared.db.migrations import migrate
from shared.db.models import Match, MatchParticipant, Rating, Replay, User
from shared.db.session import get_engine, session_scope
from shared.ports import free_port
from shared.protocol.signing import generate_secret
from shared.replay_store import replay_key
from shared.states import MatchKind, MatchStatus
from tests.support import netns
from tests.support.environment import ROOT
from tests.support.owned_services import redis_server_command
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.system_deps import require

# One worker runs them all: each test looks at the machine's list of network namespaces, and making
# a network (netns.network) removes the leftovers of runs that are gone, a test's made-up ones too.
pytestmark = pytest.mark.xdist_group("network-namespaces")

GAME = "podracing"
LADDER_MATCHES = 8
"""At least this many ladder matches are played (with the cut-off one among them)."""
STALE_AFTER_S = 3.0
"""The workers' ARENA_STALE_MATCH_AFTER_S: how long a silent match waits for the reaper."""

HOSTED_SOURCE = """
import time

THRUST = {thrust}
TURN_S = {turn_s}


def decide(observation):
    time.sleep(TURN_S)
    pods = []
    for pod in observation["pods"]:
        x, y = observation["checkpoints"][pod["next_checkpoint"]]
        pods.append({{"x": x, "y": y, "thrust": THRUST}})
    return {{"pods": pods}}
"""
INITDB_OPTIONS = ("--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
HTTP_BOT = str(ROOT / "examples" / "bots" / "podracing_runner_bot.py")
"""Served by the control host on its address: the workers reach it across the network."""
HOSTED_THRUSTS = {"full-throttle": 100, "cruiser": 80, "steady": 65, "dawdler": 50}
HOSTED_TURN_S = 0.004
"""Each hosted turn takes at least this long, so a match lasts over a second whatever the platform's
speed (a worker that keeps its sandboxes plays a whole race in about 0.1 s): long enough for a
heartbeat (ARENA_HEARTBEAT_INTERVAL_S) to show it running, and for w1 to be cut off during one."""


def _postgres_bin_dir() -> Path:
    """The folder of `postgres` and `initdb`: on PATH, or Debian's versioned folder."""
    found = shutil.which("postgres")
    if found and shutil.which("initdb"):
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    binary = versions[-1] if versions else None
    return Path(require(binary, package="postgresql", what="PostgreSQL's server (postgres, initdb)")).parent


def _unprivileged_user() -> tuple[int, int]:
    """PostgreSQL refuses to run as root: it runs as `nobody`."""
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        pytest.fail("no user `nobody` to run PostgreSQL as", pytrace=False)
    return entry.pw_uid, entry.pw_gid


@dataclass
class Cluster:
    net: netns.Network
    database_url: str
    redis_url: str
    replay_dir: Path
    work: Path
    worker_env: dict[str, str]
    processes: list[ManagedProcess] = field(default_factory=list)

    def start(
        self, role: str, args: list[str], name: str, env: dict[str, str] | None = None, **user: int
    ) -> ManagedProcess:
        """A process on host `role` with the platform's settings for this cluster, stopped when the
        test ends."""
        command = self.net.hosts[role].command(args, **user)
        process = ManagedProcess(command, name, env={**self.worker_env, **(env or {})})
        self.processes.append(process)
        return process

    def hostname(self, role: str) -> str:
        return self.net.hosts[role].hostname

    def control_settings(self) -> Settings:
        """The platform's settings as the control host uses them: this cluster's database and broker,
        and bots allowed on the test network."""
        return get_settings().model_copy(
            update={
                "database_url": self.database_url,
                "redis_url": self.redis_url,
                "bot_networks": [str(self.net.subnet)],
            }
        )


def _start_database(cluster: Cluster) -> None:
    """PostgreSQL and Redis on the db host, listening on its address only; the schema by Alembic."""
    bin_dir = _postgres_bin_dir()
    uid, gid = _unprivileged_user()
    data = cluster.work / "pgdata"
    os.chown(cluster.work, uid, gid)
    # Each sandbox runs as a uid of its own (shared/sandbox/uids.py) and reads its staged code under
    # the hosts' TMPDIR below this folder: others may pass through it, not list it.
    os.chmod(cluster.work, 0o711)
    db = cluster.net.hosts["db"]
    initdb = ManagedProcess(
        db.command(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust", *INITDB_OPTIONS],
            uid=uid,
            gid=gid,
        ),
        "initdb",
    )
    if initdb.proc.wait(timeout=60) != 0:
        raise RuntimeError(f"initdb failed:\n{initdb.log()}")
    initdb.stop()
    with (data / "pg_hba.conf").open("a") as hba:
        hba.write(f"host all all {cluster.net.subnet} trust\n")
    settings = {
        "listen_addresses": db.address,
        "port": "5432",
        "unix_socket_directories": "",
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        # A host that vanished keeps its sessions, and the row locks of any transaction it had
        # open, until PostgreSQL notices: here within seconds (docs/deploy.md, "Workers on more
        # machines", has the values for production).
        "tcp_keepalives_idle": "1",
        "tcp_keepalives_interval": "1",
        "tcp_keepalives_count": "2",
        "tcp_user_timeout": "3000",
    }
    options = [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
    postgres = cluster.start(
        "db", [str(bin_dir / "postgres"), "-D", str(data), *options], "postgres", uid=uid, gid=gid
    )
    server = cluster.start(
        "db",
        # Reached from the other hosts' addresses, without a password: protected mode off.
        [*redis_server_command(6379, bind=db.address), "--protected-mode", "no"],
        "redis",
    )
    admin = f"postgresql://postgres@{db.address}:5432/postgres"

    def pg_ready() -> bool:
        with psycopg.connect(admin, connect_timeout=2):
            return True

    postgres.wait_until(pg_ready, 30, "PostgreSQL answering on the db host's address")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("CREATE DATABASE arena")
    server.wait_until(lambda: bool(redis.Redis.from_url(cluster.redis_url).ping()), 20, "Redis answering")
    migrate(cluster.database_url)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    _require_namespaces()
    try:
        with netns.network(["db", "w1", "w2"], hub="db") as net:
            work = Path(tempfile.mkdtemp(prefix="arena-multi-host-"))
            db = net.hosts["db"].address
            database_url = f"postgresql+psycopg://postgres@{db}:5432/arena"
            replay_dir = work / "replays"
            replay_dir.mkdir()
            env = {
                "ARENA_DATABASE_URL": database_url,
                "ARENA_REDIS_URL": f"redis://{db}:6379/0",
                "ARENA_BOT_NETWORKS": json.dumps([str(net.subnet)]),
                "ARENA_REPLAY_STORE": "filesystem",
                "ARENA_REPLAY_DIR": str(replay_dir),
                "ARENA_SANDBOX_BACKEND": "bwrap",
                "ARENA_HEARTBEAT_INTERVAL_S": "0.3",
                "ARENA_STALE_MATCH_AFTER_S": str(STALE_AFTER_S),
                "ARENA_REAPER_INTERVAL_S": "1",
                "ARENA_LADDER_INTERVAL_S": "1",
                "ARENA_LADDER_MAX_PENDING": "2",
            }
            made = Cluster(net, database_url, env["ARENA_REDIS_URL"], replay_dir, work, env)
            try:
                yield made
            finally:
                for process in reversed(made.processes):
                    if process.name != "postgres":
                        process.stop()
                get_engine(database_url).dispose()
                for process in made.processes:
                    if process.name == "postgres":
                        process.kill(signal.SIGINT)  # fast shutdown
                        process.stop()
                shutil.rmtree(work, ignore_errors=True)
    except netns.NetworkUnavailable as exc:
        if os.environ.get("CI"):
            pytest.fail(f"network namespaces should work here but do not: {exc}", pytrace=False)
        pytest.skip(f"cannot make network namespaces here: {exc}")


def _require_namespaces() -> None:
    reason = netns.unavailable_reason()
    if reason is not None:
        pytest.skip(f"several-host test skipped: {reason}")
    require(shutil.which("bwrap"), package="bubblewrap", what="bubblewrap (hosted-bot sandbox)")


def _register_bots(cluster: Cluster, http_endpoint: str, http_secret: str) -> list[uuid.UUID]:
    settings = cluster.control_settings()
    with session_scope(cluster.database_url) as session:
        owner = User(name="ladder-owner")
        session.add(owner)
        session.flush()
        bots = [
            register_hosted_bot(
                session,
                settings,
                owner,
                name=name,
                game=GAME,
                source=HOSTED_SOURCE.format(thrust=thrust, turn_s=HOSTED_TURN_S),
            ).id
            for name, thrust in HOSTED_THRUSTS.items()
        ]
        registration = register_http_bot(
            session,
            settings,
            owner,
            name="http-runner",
            game=GAME,
            endpoint=http_endpoint,
            secret=http_secret,
        )
        bots.append(registration.bot.id)
    return bots


def _wait(check: Callable[[], object], timeout: float, what: str, watch: list[ManagedProcess]) -> object:
    """Poll `check` until it returns something truthy; fail early when a watched process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in watch:
            if not process.alive():
                pytest.fail(f"{process.name} exited while waiting for {what}:\n{process.log()[-3000:]}")
        found = check()
        if found:
            return found
        time.sleep(0.1)
    logs = "\n".join(f"--- {p.name}\n{p.log()[-2500:]}" for p in watch)
    pytest.fail(f"{what}: not reached in {timeout}s\n{logs}")


def _running_on(cluster: Cluster, role: str) -> Match | None:
    """A match that `role`'s worker is playing (heartbeating since it started), if any."""
    with session_scope(cluster.database_url) as session:
        return session.scalars(
            select(Match)
            .where(
                Match.status == MatchStatus.RUNNING,
                Match.worker.startswith(cluster.hostname(role) + "/"),
                Match.heartbeat_at > Match.started_at,
            )
            .limit(1)
        ).one_or_none()


def _match(cluster: Cluster, match_id: uuid.UUID) -> Match:
    with session_scope(cluster.database_url) as session:
        match = session.get(Match, match_id)
        assert match is not None
        return match


def _count(cluster: Cluster, *conditions: object) -> int:
    with session_scope(cluster.database_url) as session:
        return int(session.scalar(select(func.count()).select_from(Match).where(*conditions)) or 0)  # type: ignore[arg-type]


def _cut_mid_match(cluster: Cluster, watch: list[ManagedProcess]) -> tuple[uuid.UUID, int]:
    """Cut w1 off while it plays a match; the match's id and w1's attempt. A match that ended in the instant
    between seeing it and cutting does not count: w1 is restored and the next one is taken."""
    for _ in range(5):
        playing = _wait(lambda: _running_on(cluster, "w1"), 60, "w1 playing a match", watch)
        assert isinstance(playing, Match)
        cluster.net.cut("w1")
        after = _match(cluster, playing.id)
        if after.status == MatchStatus.RUNNING and after.attempts == playing.attempts:
            return playing.id, playing.attempts
        cluster.net.restore("w1")
    pytest.fail("w1 never held a match long enough to be cut off during it")


def _assert_rated_once(cluster: Cluster, bot_ids: list[uuid.UUID]) -> None:
    """Each bot's rating is its default moved once by each of its finished matches, in some order:
    the participants' before/after figures chain from the default to the stored rating, using every
    match exactly once. A match rated twice breaks the chain (a step no row records) and the count."""
    default = ratings.default_skill()
    with session_scope(cluster.database_url) as session:
        for bot_id in bot_ids:
            steps = list(
                session.execute(
                    select(
                        MatchParticipant.mu_before,
                        MatchParticipant.sigma_before,
                        MatchParticipant.mu_after,
                        MatchParticipant.sigma_after,
                    )
                    .join(Match, Match.id == MatchParticipant.match_id)
                    .where(MatchParticipant.bot_id == bot_id, Match.status == MatchStatus.FINISHED)
                )
            )
            rating = session.get(Rating, bot_id)
            assert rating is not None
            assert rating.matches_played == len(steps) >= 1, f"bot {bot_id} played {len(steps)} matches"
            assert rating.wins + rating.draws + rating.losses == len(steps)
            mu, sigma = default.mu, default.sigma
            remaining = [tuple(step) for step in steps]
            while remaining:
                following = [
                    s
                    for s in remaining
                    if math.isclose(s[0], mu, rel_tol=1e-12) and math.isclose(s[1], sigma, rel_tol=1e-12)
                ]
                assert len(following) == 1, f"bot {bot_id}: the rating chain breaks at mu={mu}, sigma={sigma}"
                remaining.remove(following[0])
                mu, sigma = following[0][2], following[0][3]
            assert math.isclose(rating.mu, mu, rel_tol=1e-12)
            assert math.isclose(rating.sigma, sigma, rel_tol=1e-12)


@pytest.mark.e2e
def test_two_worker_hosts_one_cut_off_mid_match_every_match_finished_and_rated_once(
    cluster: Cluster,
) -> None:
    started = time.monotonic()
    _start_database(cluster)

    # Workers on their hosts, the beat on the db host; they start while the bots are registered.
    workers = {}
    for role in ("w1", "w2"):
        sandbox_tmp = cluster.work / role  # where the host's sandboxes keep their sockets
        sandbox_tmp.mkdir(mode=0o755)
        command = worker_command(name=f"matches@{cluster.hostname(role)}", python=PYTHON)
        workers[role] = cluster.start(role, command, role, env={"TMPDIR": str(sandbox_tmp)})
    control = cluster.net.control
    http_port, http_secret = free_port(), generate_secret()
    http_bot = ManagedProcess(
        [
            PYTHON,
            "-m",
            "shared.botsdk.run",
            "--module",
            HTTP_BOT,
            "--host",
            control.address,
            "--port",
            str(http_port),
        ],
        "http-bot",
        env={"ARENA_BOT_SECRET": http_secret},
    )
    cluster.processes.append(http_bot)
    http_endpoint = f"http://{control.address}:{http_port}"
    http_bot.wait_http(http_endpoint + "/health", timeout=30)
    bot_ids = _register_bots(cluster, http_endpoint, http_secret)
    for worker in workers.values():
        worker.wait_log("ready.", timeout=60)
    beat = cluster.start(
        "db", beat_command(python=PYTHON, schedule_file=str(cluster.work / "beat-schedule")), "beat"
    )
    watch = [*workers.values(), beat, http_bot]
    setup_s = time.monotonic() - started

    # w1 is cut off in the middle of a match; the reaper gives the match to w2.
    cut_id, w1_attempt = _cut_mid_match(cluster, watch)
    cut_at = time.monotonic()

    def taken_over() -> bool:
        match = _match(cluster, cut_id)
        return match.attempts > w1_attempt and (match.worker or "").startswith(cluster.hostname("w2") + "/")

    _wait(taken_over, 60, f"w2 taking over match {cut_id} from the cut-off w1", watch)
    assert re.search(r"reaper: requeued [1-9]\d* stale matches", workers["w2"].log())
    # w1 comes back while it still holds its copy: whatever it then writes about the match is refused.
    cluster.net.restore("w1")
    restored_at = datetime.now(UTC)
    _wait(
        lambda: f"match {cut_id} was taken away" in workers["w1"].log(),
        60,
        "w1 dropping its copy of the match",
        watch,
    )

    # The ladder plays on, on both hosts, until it has played enough.
    def ladder_done() -> bool:
        ladder = Match.kind == MatchKind.LADDER
        played = _count(cluster, ladder, Match.status != MatchStatus.QUEUED)
        w1_after = _count(
            cluster,
            ladder,
            Match.status == MatchStatus.FINISHED,
            Match.worker.startswith(cluster.hostname("w1") + "/"),
            Match.finished_at > restored_at,
        )
        return (
            played >= LADDER_MATCHES
            and w1_after >= 1
            and _match(cluster, cut_id).status == MatchStatus.FINISHED
        )

    _wait(
        ladder_done,
        90,
        f"{LADDER_MATCHES} ladder matches, one of them played by w1 after it came back",
        watch,
    )
    beat.stop()
    time.sleep(1.5)  # ladder ticks already sent expire after ARENA_LADDER_INTERVAL_S
    watch.remove(beat)
    _wait(
        lambda: _count(cluster, Match.status.in_(MatchStatus.pending())) == 0, 60, "the queue to drain", watch
    )
    for worker in workers.values():
        worker.stop()
    played_s = time.monotonic() - cut_at

    with session_scope(cluster.database_url) as session:
        matches = list(session.scalars(select(Match).order_by(Match.created_at)))
        participants = {
            m.id: list(
                session.scalars(
                    select(MatchParticipant)
                    .where(MatchParticipant.match_id == m.id)
                    .order_by(MatchParticipant.slot)
                )
            )
            for m in matches
        }
        replays = {r.match_id: r for r in session.scalars(select(Replay))}

    # Every match finished exactly once: none lost, failed or left pending; one result, one replay.
    assert len(matches) >= LADDER_MATCHES
    problems = [(m.id, m.status, m.error) for m in matches if m.status != MatchStatus.FINISHED or m.error]
    assert not problems, problems
    assert all(m.rated for m in matches)
    assert all(m.kind == MatchKind.LADDER for m in matches)
    for m in matches:
        seats = participants[m.id]
        assert len(seats) == 2, m.id
        assert all(p.rank is not None for p in seats), m.id
        assert all(p.mu_after is not None for p in seats), m.id
        replay = replays[m.id]
        assert replay.key == replay_key(m.id, m.attempts), (m.id, replay.key, m.attempts)
    stored = {str(p.relative_to(cluster.replay_dir)) for p in cluster.replay_dir.rglob("*.json.gz")}
    assert stored == {r.key for r in replays.values()}, "a replay object without a result, or missing"

    # The cut-off match: w1's attempt was dropped (its replay object too); a later one on w2 finished it.
    cut = next(m for m in matches if m.id == cut_id)
    assert cut.attempts > w1_attempt
    assert f"playing match {cut_id}" in workers["w2"].log_path.read_text(errors="replace")
    w1_log = workers["w1"].log_path.read_text(errors="replace")
    assert not (cluster.replay_dir / replay_key(cut_id, w1_attempt)).exists(), "w1's replay object stayed"

    # Both hosts played; every bot was rated exactly once per match it finished.
    hosts = {(m.worker or "").split("/")[0] for m in matches}
    assert {cluster.hostname("w1"), cluster.hostname("w2")} <= hosts, hosts
    _assert_rated_once(cluster, bot_ids)
    dropped = "after playing it out" if "taken away before it finished" in w1_log else "during play"
    print(
        f"\nsetup {setup_s:.1f}s; {len(matches)} matches on hosts {sorted(hosts)}; w1 dropped its copy "
        f"{dropped}; cut to drained {played_s:.1f}s; total {time.monotonic() - started:.1f}s"
    )


def _listed_namespaces() -> set[str]:
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return {line.split()[0] for line in listed.splitlines() if line.strip()}


def _link_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True).returncode == 0


def test_leftovers_of_a_killed_run_are_removed_before_a_new_network() -> None:
    _require_namespaces()
    gone = subprocess.Popen(["true"])
    gone.wait()
    namespace, link = f"{netns.PREFIX}{gone.pid}-db", f"arena{gone.pid}c"
    subprocess.run(["ip", "netns", "add", namespace], check=True)
    try:
        subprocess.run(
            ["ip", "link", "add", link, "type", "veth", "peer", "name", "p-control", "netns", namespace],
            check=True,
        )
        removed = netns.clean_stale()
        assert {namespace, link} <= set(removed)
        assert namespace not in _listed_namespaces()
        assert not _link_exists(link)
    finally:
        subprocess.run(["ip", "link", "delete", link], capture_output=True)
        subprocess.run(["ip", "netns", "delete", namespace], capture_output=True)


def test_a_network_that_fails_half_way_leaves_nothing_behind() -> None:
    _require_namespaces()
    ours = f"{netns.PREFIX}{os.getpid()}-"
    with pytest.raises(RuntimeError, match="netns add"), netns.network(["db", "w1", "bad/name"], hub="db"):
        pass
    assert not [name for name in _listed_namespaces() if name.startswith(ours)]
    assert not _link_exists(f"arena{os.getpid()}c")
