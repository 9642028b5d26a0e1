"""A real worker and beat on a PostgreSQL and a Redis of this module's own; Redis is killed and
started again empty (no persistence), as after a crash without an append-only file.

- A queued match whose play message the broker lost (or never got) is played within seconds, by
  the beat's lost-message check, not after the reaper's `lost_match_after_s`; a match whose
  message a worker holds is not sent again.
- A worker outlives a Redis outage of any length: with the production setting it never stops
  reconnecting, where a finite budget (2 tries here; Celery's default is 100, about 46 minutes)
  ends the worker; it says so once a minute, not per try; the matches Redis lost with its restart
  are played once it is back.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Unpack

import pytest
from kombu.utils.functional import retry_over_time
from redis import Redis
from sqlalchemy import select, update

from services.match_runner.commands import beat_command
from shared.broker_contents import UNACKED_KEY
from shared.config import Settings, get_settings
from shared.db.models import Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.matches import TASK_PLAY_MATCH
from shared.queue import QUEUE_MATCHES, create_celery
from shared.states import MatchStatus
from tests.support.bot_processes import RunningBot, start_bot
from tests.support.broker import hash_items
from tests.support.match_runner import WORKER_ENV, SendOptions, match_between_new_bots, start_worker
from tests.support.owned_services import OwnedPostgres, OwnedRedis, owned_postgres, owned_redis
from tests.support.processes import PYTHON, ManagedProcess

TICK_ENV = {
    "ARENA_LADDER_INTERVAL_S": "1",
    "ARENA_REAPER_INTERVAL_S": "1",
    "ARENA_LADDER_MAX_PENDING": "0",
    "ARENA_LOST_MESSAGE_CHECK_S": "1",
    "ARENA_LOST_MESSAGE_GRACE_S": "2",
}
"""The check every second with a 2 s grace (the defaults: 3 s and 5 s); no ladder matches."""
LOST_LIMIT_S = 20.0
"""A lost match is played within this long (grace, a tick, the second look, the match itself)."""
BUDGET = 2
"""The reconnect budget of the worker that shows what a finite one does: it gives up after tries
1, 2 and 3 s apart."""
OUTAGE_S = 10.0
"""At least this long, and longer than the budgeted worker lasts: time for the steady worker's tries 0,
1, 3, 6 and 10 s into the outage, more lines than the check allows if each try were logged."""
BUDGETED_EXIT_LIMIT_S = 30.0
"""The budgeted worker has given up within this long; the outage lasts past that in any case."""
RECOVERY_LIMIT_S = 30.0
"""After Redis returns: the worker's next try (at most ARENA_BROKER_RECONNECT_MAX_S, 5 s, away), a
check, the matches: the issue's bound."""
RECONNECT_LINES = ("Cannot connect to", "Connection to broker lost")


@dataclass
class Platform:
    postgres: OwnedPostgres
    redis: OwnedRedis
    worker: ManagedProcess
    beat: ManagedProcess
    bots: list[RunningBot]

    @property
    def url(self) -> str:
        return self.postgres.url()

    @property
    def env(self) -> dict[str, str]:
        return _env(self.postgres, self.redis)

    def broker(self) -> Redis:
        return Redis.from_url(self.redis.url)


def _env(postgres: OwnedPostgres, redis_server: OwnedRedis) -> dict[str, str]:
    return {**TICK_ENV, "ARENA_DATABASE_URL": postgres.url(), "ARENA_REDIS_URL": redis_server.url}


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    with owned_postgres() as postgres, owned_redis() as redis_server:
        env = _env(postgres, redis_server)
        schedule = str(Path(tmp_path_factory.mktemp("beat")) / "schedule")
        bots = [start_bot("ok"), start_bot("ok")]
        worker = start_worker("steady-worker", env)
        beat = ManagedProcess(
            beat_command(python=PYTHON, schedule_file=schedule), "lost-beat", {**WORKER_ENV, **env}
        )
        try:
            beat.wait_log("Sending due task", timeout=60)
            yield Platform(postgres, redis_server, worker, beat, bots)
        finally:
            beat.stop()
            worker.stop()
            for bot in bots:
                bot.process.stop()


def _new_match(platform: Platform) -> uuid.UUID:
    """Two freshly registered bots in a queued match (their only one), its message not sent."""
    return match_between_new_bots(platform.url, platform.bots, "lost")


def _send(platform: Platform, match_id: uuid.UUID, **options: Unpack[SendOptions]) -> None:
    app = create_celery(get_settings().model_copy(update={"redis_url": platform.redis.url}))
    try:
        app.send_task(TASK_PLAY_MATCH, args=[str(match_id)], queue=QUEUE_MATCHES, **options)
    finally:
        app.close()


def _taken_by_a_worker(platform: Platform, match_id: uuid.UUID) -> str | None:
    """The delivery tag of the match's message in the hash of taken, unacknowledged messages."""
    for tag, raw in hash_items(platform.broker(), UNACKED_KEY).items():
        if str(match_id).encode() in raw:
            return str(tag.decode())
    return None


def _state(platform: Platform, match_id: uuid.UUID) -> tuple[MatchStatus, int]:
    with session_scope(platform.url) as session:
        match = session.get(Match, match_id)
        assert match is not None
        return match.status, match.attempts


def _wait_played(platform: Platform, match_ids: list[uuid.UUID], timeout: float) -> float:
    """Seconds until every match left queued and running; fails after `timeout`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            if all(_state(platform, m)[0] not in MatchStatus.pending() for m in match_ids):
                return time.monotonic() - started
        except Exception:  # the database or a connection is still coming back
            pass
        time.sleep(0.2)
    states = {m: _state(platform, m) for m in match_ids}
    raise AssertionError(f"not played within {timeout} s: {states}\n{platform.worker.log()[-3000:]}")


def _assert_played_once(platform: Platform, match_id: uuid.UUID) -> None:
    assert _state(platform, match_id) == (MatchStatus.FINISHED, 1)
    with session_scope(platform.url) as session:
        played = session.scalars(
            select(Rating.matches_played)
            .join(MatchParticipant, MatchParticipant.bot_id == Rating.bot_id)
            .where(MatchParticipant.match_id == match_id)
        ).all()
    assert played == [1, 1]  # rated once


@pytest.mark.slow
def test_a_match_whose_message_the_broker_lost_is_played_within_seconds(platform: Platform) -> None:
    lost, never_sent, held = _new_match(platform), _new_match(platform), _new_match(platform)
    for match_id in (lost, held):  # a worker takes each; a countdown keeps it there, unacknowledged
        _send(platform, match_id, countdown=3600)

        def taken(m: uuid.UUID = match_id) -> bool:
            return _taken_by_a_worker(platform, m) is not None

        platform.worker.wait_until(taken, 30, "taken")
    platform.broker().hdel(UNACKED_KEY, _taken_by_a_worker(platform, lost) or "")  # the broker lost it

    waited = _wait_played(platform, [lost, never_sent], LOST_LIMIT_S)
    print(f"\nlost and never sent messages: both matches played {waited:.1f} s after the loss")

    _assert_played_once(platform, lost)
    _assert_played_once(platform, never_sent)
    time.sleep(3)  # three more checks: the held message is still not taken for lost
    assert _state(platform, held) == (MatchStatus.QUEUED, 0)
    assert _taken_by_a_worker(platform, held) is not None
    resends = [line for line in platform.worker.log().splitlines() if "sent again the play message" in line]
    assert resends, "the lost ones were sent again by the check"
    assert not [line for line in resends if str(held) in line]
    with session_scope(platform.url) as session:  # it would be played in an hour: no longer
        session.execute(update(Match).where(Match.id == held).values(status=MatchStatus.CANCELLED))


@pytest.mark.slow
def test_workers_outlive_a_redis_outage_and_play_what_it_lost(platform: Platform) -> None:
    budgeted = start_worker(
        "budgeted-worker", {**platform.env, "ARENA_BROKER_CONNECTION_MAX_RETRIES": str(BUDGET)}
    )
    try:
        in_redis = _new_match(platform)
        _send(platform, in_redis, countdown=3600)  # held by a worker, in Redis only
        platform.worker.wait_until(lambda: _taken_by_a_worker(platform, in_redis) is not None, 30, "taken")
        lines_before = len(platform.worker.log().splitlines())

        platform.redis.kill()
        outage_started = time.monotonic()
        during = _new_match(platform)  # its send would have failed: the gateway's, the ladder's
        budgeted.proc.wait(timeout=BUDGETED_EXIT_LIMIT_S)
        outage_s = max(OUTAGE_S, time.monotonic() - outage_started + 2.0)  # outlived it, not just matched
        time.sleep(max(0.0, outage_s - (time.monotonic() - outage_started)))
        assert platform.worker.alive(), platform.worker.log()[-3000:]
        reconnect_lines = [
            line
            for line in platform.worker.log().splitlines()[lines_before:]
            if any(text in line for text in RECONNECT_LINES)
        ]
        platform.redis.start()  # empty: what Redis held is gone
        back = time.monotonic()

        waited = _wait_played(platform, [in_redis, during], RECOVERY_LIMIT_S)
        budgeted_log = budgeted.log()
    finally:
        budgeted.stop()
    print(
        f"\nRedis outage of {outage_s:.0f} s: the worker with a budget of {BUDGET} tries exited, the "
        f"production one logged {len(reconnect_lines)} reconnect lines and played both matches "
        f"{waited:.1f} s after Redis returned"
    )
    assert budgeted.proc.returncode != 0, "a finite budget ends the worker: what the default avoids"
    assert "Unrecoverable error" in budgeted_log
    assert len(reconnect_lines) <= 2, "\n".join(reconnect_lines)  # once a minute, not per try
    _assert_played_once(platform, in_redis)
    _assert_played_once(platform, during)
    assert time.monotonic() - back < RECOVERY_LIMIT_S


def test_the_production_setting_never_gives_up_reconnecting() -> None:
    """No last try in the settings, none in the app's configuration, and none in what kombu does with
    it: past Celery's default budget of 100 failed tries, the next one still comes."""
    assert Settings(dev_mode=True).broker_connection_max_retries is None
    conf = create_celery(Settings(dev_mode=True)).conf
    assert conf.broker_connection_max_retries is None
    assert conf.broker_connection_retry
    assert conf.broker_connection_retry_on_startup
    failures = 0

    def connect() -> str:
        nonlocal failures
        if failures < 250:
            failures += 1
            raise ConnectionRefusedError("Redis is down")
        return "connected"

    result = retry_over_time(
        connect,
        ConnectionRefusedError,
        max_retries=conf.broker_connection_max_retries,
        interval_start=0,
        interval_step=0,
        interval_max=0,
    )
    assert (result, failures) == ("connected", 250)


LONG_OUTAGE_S = 25.0
"""Long enough for kombu's own backoff (tries 2, 6, 12, 20, 30 s into the outage) to leave a worker
about 5 s short of its next try when Redis returns."""
RECONNECT_CAP_S = 1.0


@pytest.mark.slow
def test_after_a_long_outage_a_worker_is_back_within_its_reconnect_cap(platform: Platform) -> None:
    capped = start_worker(
        "capped-worker", {**platform.env, "ARENA_BROKER_RECONNECT_MAX_S": str(RECONNECT_CAP_S)}
    )
    try:
        connected = capped.log().count("Connected to redis")
        platform.redis.kill()
        time.sleep(LONG_OUTAGE_S)
        platform.redis.start()
        back = time.monotonic()
        capped.wait_until(lambda: capped.log().count("Connected to redis") > connected, 30, "reconnected")
        after_return = time.monotonic() - back
        assert capped.alive()
    finally:
        capped.stop()
    print(f"\nafter a {LONG_OUTAGE_S:.0f} s Redis outage the worker was back {after_return:.1f} s after it")
    assert after_return < RECONNECT_CAP_S + 2.0, f"back {after_return:.1f} s after Redis returned"
