"""Fault injection on the whole platform: a gateway, a match-runner worker and its beat (ladder,
lost-message check, reaper) on a PostgreSQL and a Redis of this test's own, a ladder of HTTP bots
on loopback, and a client creating rated challenges through the API the whole time. Redis is killed
mid-ladder and started again empty, then PostgreSQL is killed and started again, each time with
matches queued, running and being created.

Afterwards:
- every match the platform accepted finished exactly once and was rated exactly once: each bot's
  rating row counts its finished rated matches, and its participations chain from the default
  rating to the stored one, each match's update applied once on the last;
- no match waited more than RECOVERY_LIMIT_S past its dependency's return (the rows' timestamps);
- no API answer was a 500, and 503s came only while a dependency was down (or just back);
- the logs hold at most one line per failure kind per interval (shared.logging_throttle).

Run with `-s` for the figures docs/match-runner.md quotes (recovery times, log lines per second).
"""

from __future__ import annotations

import random
import re
import secrets
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select

from services.match_runner.commands import beat_command
from shared import ratings
from shared.config import get_settings
from shared.crypto import encrypt_secret
from shared.db.models import Bot, Match, MatchParticipant, Rating, User
from shared.db.session import get_engine, session_scope
from shared.logging_throttle import DEFAULT_INTERVAL_S
from shared.ports import free_port
from shared.states import MatchStatus
from tests.support.bot_processes import RunningBot, start_bot
from tests.support.match_runner import SMALL_RACE, WORKER_ENV, start_worker
from tests.support.owned_services import OwnedPostgres, OwnedRedis, owned_postgres, owned_redis
from tests.support.processes import PYTHON, ManagedProcess

pytestmark = pytest.mark.e2e

OUTAGE_S = 6.0
"""Each dependency stays down this long: past a few of each loop's tries (the workers' reconnects,
the play retries' backoff, the beat's ticks), short enough to keep the test brief."""
RECOVERY_LIMIT_S = 30.0
"""The issue's bound: no match waits more than this past its dependency's return."""
AFTER_RETURN_503_S = 3.0
"""A 503 this long after a dependency's return still counts as the outage's (pools reconnecting)."""
LADDER_BOTS = 4
WARM_MATCHES = 2
"""Matches finished before each outage (since the previous one): it strikes a ladder in play."""
CHALLENGE_EVERY_S = 1.5
"""The client's pace: below what one worker plays, so the queue stays short between outages."""
PLATFORM_ENV = {
    "ARENA_LADDER_INTERVAL_S": "1",
    "ARENA_LADDER_MAX_PENDING": "2",
    "ARENA_REAPER_INTERVAL_S": "1",
    "ARENA_LOST_MESSAGE_CHECK_S": "1",
    "ARENA_LOST_MESSAGE_GRACE_S": "2",
}
"""Every beat task each second; the lost-message check with a 2 s grace (defaults: 3 s and 5 s)."""
ADMIN_KEY = "arena_admin_" + secrets.token_urlsafe(24)
GATEWAY = [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--no-access-log"]
STAMP = re.compile(r"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})")
"""The time at the start of a Celery line (`[2025-01-02 03:04:05,678: WARNING/...]`) or of a
gateway line (`2025-01-02 03:04:05,678 WARNING name: ...`)."""
FAILURE = re.compile(r"(WARNING|ERROR|CRITICAL)")
UNCOUNTED = ("sent again the play message", "sent again the chunk message", "reaper: requeued")
"""Warnings that are the recovery itself, once per resend round, not a failure said again."""


@dataclass
class Platform:
    postgres: OwnedPostgres
    redis: OwnedRedis
    gateway: ManagedProcess
    worker: ManagedProcess
    beat: ManagedProcess
    bot_ids: list[uuid.UUID]
    base_url: str

    @property
    def url(self) -> str:
        return self.postgres.url()

    def processes(self) -> dict[str, ManagedProcess]:
        return {"gateway": self.gateway, "worker": self.worker, "beat": self.beat}


@dataclass
class Outage:
    dependency: str
    down_at: float
    restarted_at: float = 0.0
    """When the server was started again."""
    back_at: float = 0.0
    """When it answered again: the dependency's return."""


@dataclass
class Challenger:
    """Posts a rated challenge between two ladder bots every CHALLENGE_EVERY_S; records each answer."""

    base_url: str
    bot_ids: list[uuid.UUID]
    answers: list[tuple[float, int]] = field(default_factory=list)
    accepted: list[uuid.UUID] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        headers = {"X-API-Key": ADMIN_KEY}
        with httpx.Client(base_url=self.base_url, headers=headers, timeout=30) as client:
            while not self.stop.is_set():
                pair = [str(bot_id) for bot_id in random.sample(self.bot_ids, 2)]
                body = {"game": "podracing", "bot_ids": pair, "rated": True, "config": SMALL_RACE}
                try:
                    answer = client.post("/api/v1/matches", json=body)
                except httpx.HTTPError as exc:  # no answer at all: recorded as such, never a pass
                    self.answers.append((time.time(), 0))
                    print(f"challenge without an answer: {exc!r}")
                else:
                    self.answers.append((time.time(), answer.status_code))
                    if answer.status_code == 201:
                        self.accepted.append(uuid.UUID(answer.json()["id"]))
                self.stop.wait(CHALLENGE_EVERY_S)


def _register_bots(url: str, bots: list[RunningBot]) -> list[uuid.UUID]:
    """LADDER_BOTS HTTP bots of one user, served by `bots` in turn."""
    settings = get_settings()
    with session_scope(url) as session:
        user = User(name=f"ladder-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.flush()
        rows = [
            Bot(
                owner_id=user.id,
                name=f"ladder-{n}-{uuid.uuid4().hex[:6]}",
                game="podracing",
                kind="http",
                endpoint=bots[n % len(bots)].endpoint,
                secret_encrypted=encrypt_secret(settings, bots[n % len(bots)].secret),
            )
            for n in range(LADDER_BOTS)
        ]
        session.add_all(rows)
        session.flush()
        return [row.id for row in rows]


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[Platform]:
    with owned_postgres() as postgres, owned_redis() as redis_server:
        env = {
            **PLATFORM_ENV,
            "ARENA_DATABASE_URL": postgres.url(),
            "ARENA_REDIS_URL": redis_server.url,
            "ARENA_BOOTSTRAP_ADMIN_KEY": ADMIN_KEY,
            "ARENA_ACCESS_LOG": "0",
        }
        port = free_port()
        started: list[ManagedProcess] = []
        bots: list[RunningBot] = []
        try:
            gateway = ManagedProcess([*GATEWAY, "--port", str(port)], "ladder-gateway", env=env)
            started.append(gateway)
            beat = ManagedProcess(
                beat_command(python=PYTHON, schedule_file=str(tmp_path / "schedule")),
                "ladder-beat",
                {**WORKER_ENV, **env},
            )
            started.append(beat)
            bots = [start_bot("ok"), start_bot("ok")]
            bot_ids = _register_bots(postgres.url(), bots)
            worker = start_worker("ladder-worker", env)
            started.append(worker)
            gateway.wait_http(f"http://127.0.0.1:{port}/ready", timeout=60)
            beat.wait_log("Sending due task", timeout=60)
            yield Platform(postgres, redis_server, gateway, worker, beat, bot_ids, f"http://127.0.0.1:{port}")
        finally:
            for process in reversed(started):
                process.stop()
            for bot in bots:
                bot.process.stop()
            get_engine(postgres.url()).dispose()


def _matches(platform: Platform) -> list[Match]:
    with session_scope(platform.url) as session:
        return list(session.scalars(select(Match)))


def _counts(platform: Platform) -> dict[MatchStatus, int]:
    try:
        with session_scope(platform.url) as session:
            rows = session.execute(select(Match.status, func.count()).group_by(Match.status))
            return {MatchStatus(status): n for status, n in rows}
    except Exception:  # the database is down or coming back
        return {}


def _wait(what: str, check: Callable[[], object], timeout: float) -> float:
    """Seconds until `check()` holds; fails after `timeout`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


def _busy(platform: Platform) -> bool:
    """A match running and another queued: what the outage must find."""
    counts = _counts(platform)
    return counts.get(MatchStatus.RUNNING, 0) >= 1 and counts.get(MatchStatus.QUEUED, 0) >= 1


def _pending_at(platform: Platform, when: float) -> list[Match]:
    """The matches created before `when` that had not ended by then."""
    moment = datetime.fromtimestamp(when, UTC)
    return [
        m
        for m in _matches(platform)
        if m.created_at <= moment and (m.finished_at is None or m.finished_at > moment)
    ]


def _all_ended(platform: Platform, match_ids: set[uuid.UUID]) -> bool:
    try:
        ended = {m.id for m in _matches(platform) if m.status not in MatchStatus.pending()}
    except Exception:
        return False
    return match_ids <= ended


def _outage(platform: Platform, dependency: str, outages: list[Outage]) -> Outage:
    """Wait for a match running and one queued, take `dependency` away for OUTAGE_S, bring it back
    (Redis empty, as after a crash without persistence), and wait until every match pending at its
    return has ended."""
    server = platform.redis if dependency == "redis" else platform.postgres
    finished = _counts(platform).get(MatchStatus.FINISHED, 0)
    _wait(
        f"the ladder playing before the {dependency} outage",
        lambda: _counts(platform).get(MatchStatus.FINISHED, 0) >= finished + WARM_MATCHES,
        60,
    )
    _wait(f"a match running and one queued before the {dependency} outage", lambda: _busy(platform), 60)
    outage = Outage(dependency, time.time())
    server.kill()
    time.sleep(OUTAGE_S)
    outage.restarted_at = time.time()
    server.start()
    outage.back_at = time.time()
    outages.append(outage)
    _wait("the database answering the test", lambda: bool(_counts(platform)), 30)
    pending = {m.id for m in _pending_at(platform, outage.back_at)}
    _wait(
        f"the matches pending when {dependency} returned ended",
        lambda: _all_ended(platform, pending),
        RECOVERY_LIMIT_S + 15,
    )
    return outage


def _log_lines(process: ManagedProcess) -> list[tuple[float | None, str]]:
    """(time, line) of each line of the process's log; continuation lines carry their record's time."""
    lines: list[tuple[float | None, str]] = []
    stamp: float | None = None
    for line in process.log_path.read_text(errors="replace").splitlines():  # stopped ones too
        found = STAMP.match(line)
        if found:
            stamp = datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        lines.append((stamp, line))
    return lines


def _kind(line: str) -> str:
    """A failure line without what changes between two lines of one kind: time, process number,
    ids, numbers, the driver's wording after the error's type, the count of repeats."""
    text = STAMP.sub("", line)
    text = re.sub(r" \(and \d+ more like it in the last [\d.]+ s\)", "", text)
    text = re.sub(r"(unreachable: \w+)[^\]]*\]", r"\1]", text)
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<id>", text)
    return re.sub(r"\d+(\.\d+)?", "<n>", text)


def _failure_lines(process: ManagedProcess, start: float, end: float) -> list[tuple[float, str]]:
    """The process's WARNING-and-above lines and tracebacks between `start` and `end`."""
    return [
        (stamp, line)
        for stamp, line in _log_lines(process)
        if stamp is not None
        and start <= stamp <= end
        and (FAILURE.search(line[:60]) or line.startswith(("Traceback", "  File ")))
        and not any(text in line for text in UNCOUNTED)
    ]


def _repeated_within_interval(lines: list[tuple[float, str]]) -> list[str]:
    """Lines of a kind said again less than the throttle's interval after the last of that kind."""
    last: dict[str, float] = {}
    repeated = []
    for stamp, line in sorted(lines):
        kind = _kind(line)
        if kind in last and stamp - last[kind] < DEFAULT_INTERVAL_S:
            repeated.append(line)
        else:
            last[kind] = stamp
    return repeated


def _first_line_after(process: ManagedProcess, needle: str, after: float) -> float | None:
    for stamp, line in _log_lines(process):
        if stamp is not None and stamp >= after and needle in line:
            return stamp
    return None


def _assert_rated_once(platform: Platform) -> None:
    """Each bot's rating row counts its finished rated matches, and its participations, in the order
    they finished, chain from the default rating to the stored one: no update lost, none twice."""
    default = ratings.default_skill()
    with session_scope(platform.url) as session:
        rows = session.execute(
            select(MatchParticipant, Match.finished_at)
            .join(Match, Match.id == MatchParticipant.match_id)
            .where(Match.status == MatchStatus.FINISHED, Match.rated.is_(True))
            .order_by(Match.finished_at)
        ).all()
        by_bot: dict[uuid.UUID, list[MatchParticipant]] = defaultdict(list)
        for participant, _ in rows:
            by_bot[participant.bot_id].append(participant)
        stored = {r.bot_id: r for r in session.scalars(select(Rating))}
        for bot_id in platform.bot_ids:
            played = by_bot.get(bot_id, [])
            rating = stored.get(bot_id)
            assert rating is not None or not played, bot_id
            if rating is None:
                continue
            assert rating.matches_played == len(played), (bot_id, rating.matches_played, len(played))
            assert rating.wins + rating.draws + rating.losses == len(played)
            expected: tuple[float | None, float | None] = (default.mu, default.sigma)
            for participant in played:
                assert (participant.mu_before, participant.sigma_before) == pytest.approx(expected)
                expected = (participant.mu_after, participant.sigma_after)
            assert (rating.mu, rating.sigma) == pytest.approx(expected)


def test_a_ladder_outlives_redis_and_postgresql_outages(platform: Platform) -> None:
    started = time.time()
    challenger = Challenger(platform.base_url, platform.bot_ids)
    client = threading.Thread(target=challenger.run, name="challenger", daemon=True)
    client.start()
    outages: list[Outage] = []
    try:
        _outage(platform, "redis", outages)
        _outage(platform, "postgres", outages)
    finally:
        challenger.stop.set()
        client.join(timeout=60)
    platform.beat.stop()  # no more ladder matches: what is pending drains
    _wait(
        "every pending match ended",
        lambda: (c := _counts(platform)) and not any(c.get(s, 0) for s in MatchStatus.pending()),
        RECOVERY_LIMIT_S,
    )
    ended_at = time.time()
    matches = _matches(platform)
    _report(platform, outages, challenger, matches, started, ended_at)

    # Every answer was 201, or a 503 while a dependency was away; never a 500, never no answer.
    statuses: defaultdict[int, int] = defaultdict(int)
    for when, status in challenger.answers:
        statuses[status] += 1
        in_outage = any(o.down_at <= when <= o.back_at + AFTER_RETURN_503_S for o in outages)
        assert status == 201 or (status == 503 and in_outage), (status, when, outages)
    assert statuses[201] > 0, statuses
    for outage in outages:  # the client was creating matches while the dependency was away
        assert any(outage.down_at <= when <= outage.back_at for when, _ in challenger.answers), outage

    # Every match finished exactly once; none failed but the challenges Redis refused (those 503s).
    failed = [m for m in matches if m.status != MatchStatus.FINISHED]
    assert all(m.error == "the match queue was unreachable when the match was created" for m in failed), [
        (m.id, m.status, m.error) for m in failed
    ]
    assert len(failed) <= statuses[503]
    assert set(challenger.accepted) <= {m.id for m in matches if m.status == MatchStatus.FINISHED}
    _assert_rated_once(platform)

    # No match waited more than RECOVERY_LIMIT_S past its dependency's return.
    for outage in outages:
        back = datetime.fromtimestamp(outage.back_at, UTC)
        late = [
            (m.id, (m.finished_at - back).total_seconds())
            for m in matches
            if m.status == MatchStatus.FINISHED
            and m.created_at <= back
            and m.finished_at is not None
            and (m.finished_at - back).total_seconds() > RECOVERY_LIMIT_S
        ]
        assert not late, (outage.dependency, late)

    # At most one line per failure kind per interval, in every process.
    for name, process in platform.processes().items():
        lines = _failure_lines(process, started, ended_at)
        repeated = _repeated_within_interval(lines)
        assert not repeated, (name, repeated[:20])
        assert not [line for _, line in lines if line.startswith("Traceback")], (name, lines[:40])


def _report(
    platform: Platform,
    outages: list[Outage],
    challenger: Challenger,
    matches: list[Match],
    started: float,
    ended_at: float,
) -> None:
    """The figures docs/match-runner.md quotes, one line per outage."""
    answers: defaultdict[int, int] = defaultdict(int)
    for _, status in challenger.answers:
        answers[status] += 1
    print(
        f"\n{len(matches)} matches, challenges answered {dict(answers)}, "
        f"{ended_at - started:.0f} s from the first challenge to the last match"
    )
    for outage in outages:
        back = datetime.fromtimestamp(outage.back_at, UTC)
        waits = sorted(
            (m.finished_at - back).total_seconds()
            for m in matches
            if m.finished_at is not None and m.finished_at > back and m.created_at <= back
        )
        reconnected = _first_line_after(platform.worker, "Connected to redis", outage.restarted_at)
        resent = _first_line_after(platform.worker, "sent again the play message", outage.restarted_at)
        down = outage.back_at - outage.down_at
        lines = {
            name: len(_failure_lines(process, outage.down_at, outage.back_at))
            for name, process in platform.processes().items()
        }
        after = {
            "first match finished": waits[0] if waits else None,
            "last waiting match finished": waits[-1] if waits else None,
            "worker reconnected": max(0.0, reconnected - outage.back_at) if reconnected else None,
            "lost messages resent": max(0.0, resent - outage.back_at) if resent else None,
        }
        print(
            f"{outage.dependency} down {down:.1f} s; after its return: "
            + ", ".join(f"{what} {'-' if s is None else f'{s:.1f} s'}" for what, s in after.items())
            + "; failure lines while down: "
            + ", ".join(f"{name} {n} ({n / down:.2f}/s)" for name, n in lines.items())
        )
