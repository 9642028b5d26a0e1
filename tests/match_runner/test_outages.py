"""A real worker and beat on a PostgreSQL and a Redis of this test's own, which it kills and starts
again.

- A play message that arrives while the database is down is not acknowledged away: the task is
  retried with a capped backoff, and the match is played within 30 s of the database's return,
  claimed and rated exactly once.
- While the database (worker: ladder tick and reaper every second) or Redis (beat: a send every
  second) is down, the logs hold a line per failure kind per interval, not a traceback per tick.

Log lines counted here are the lines of records at WARNING or above and their continuation lines
(tracebacks): the INFO lines of every task received and done are there with or without an outage.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from services.match_runner.commands import beat_command
from shared.config import get_settings
from shared.db.models import Match, MatchParticipant, Rating
from shared.db.session import session_scope
from shared.matches import TASK_PLAY_MATCH
from shared.queue import QUEUE_MATCHES, create_celery
from shared.states import MatchStatus
from tests.support.bot_processes import RunningBot, start_bot
from tests.support.match_runner import WORKER_ENV, match_between_new_bots, start_worker
from tests.support.owned_services import OwnedPostgres, OwnedRedis, owned_postgres, owned_redis
from tests.support.processes import PYTHON, ManagedProcess

pytestmark = pytest.mark.slow

OUTAGE_S = 12.0
"""Longer than the capped retry delay (shared.queue.OUTAGE_RETRY_MAX_S): the backoff reaches its cap."""
RECOVERY_LIMIT_S = 30.0
"""The issue's bound: no match waits more than this past its dependency's return."""
TICK_ENV = {"ARENA_LADDER_INTERVAL_S": "1", "ARENA_REAPER_INTERVAL_S": "1", "ARENA_LADDER_MAX_PENDING": "0"}
"""The ladder and the reaper every second, as in the issue; no ladder matches (they would be rated
too), but each tick still reads the database."""
MAX_LINES_PER_OUTAGE = 10
"""One line per failure kind per minute: a handful of kinds (ladder, reaper, play retries, the
broker's reconnects), with room to spare; before, hundreds of lines a second."""
QUIET = re.compile(r"^\[[^\]]*: (INFO|DEBUG)/")
"""A Celery log line of an INFO or DEBUG record."""


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


@pytest.fixture(scope="module")
def platform(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Platform]:
    with owned_postgres() as postgres, owned_redis() as redis_server:
        env = {**TICK_ENV, "ARENA_DATABASE_URL": postgres.url(), "ARENA_REDIS_URL": redis_server.url}
        schedule = str(Path(tmp_path_factory.mktemp("beat")) / "schedule")
        bots = [start_bot("ok"), start_bot("ok")]
        worker = start_worker("outage-worker", env)
        beat = ManagedProcess(
            beat_command(python=PYTHON, schedule_file=schedule), "outage-beat", {**WORKER_ENV, **env}
        )
        try:
            beat.wait_log("Sending due task", timeout=60)
            yield Platform(postgres, redis_server, worker, beat, bots)
        finally:
            beat.stop()
            worker.stop()
            for bot in bots:
                bot.process.stop()


def _noisy_lines(process: ManagedProcess, since: int) -> list[str]:
    return [line for line in process.log().splitlines()[since:] if line.strip() and not QUIET.match(line)]


def _new_match(platform: Platform) -> uuid.UUID:
    """Two freshly registered bots in a queued match (their only one), in the test's database."""
    return match_between_new_bots(platform.url, platform.bots, "outage", seed=11)


def _send_play(platform: Platform, match_id: uuid.UUID) -> str:
    """The play message, sent to the test's Redis; its task id."""
    app = create_celery(get_settings().model_copy(update={"redis_url": platform.redis.url}))
    try:
        return str(app.send_task(TASK_PLAY_MATCH, args=[str(match_id)], queue=QUEUE_MATCHES).id)
    finally:
        app.close()


def _wait_finished(platform: Platform, match_id: uuid.UUID, timeout: float) -> Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with session_scope(platform.url) as session:
                match = session.scalars(select(Match).where(Match.id == match_id)).one()
                if match.status not in (MatchStatus.QUEUED, MatchStatus.RUNNING):
                    return match
        except Exception:  # the database is still starting
            pass
        time.sleep(0.2)
    raise AssertionError(
        f"match {match_id} not played {timeout} s after the database returned:\n"
        f"{platform.worker.log()[-3000:]}"
    )


def test_a_match_sent_during_a_database_outage_is_played_once_soon_after(platform: Platform) -> None:
    match_id = _new_match(platform)
    platform.postgres.kill()
    worker_lines, beat_lines = len(platform.worker.log().splitlines()), len(platform.beat.log().splitlines())
    task_id = _send_play(platform, match_id)
    platform.worker.wait_log(f"Task {TASK_PLAY_MATCH}[{task_id}] received", timeout=20)
    time.sleep(OUTAGE_S)
    worker_noise = _noisy_lines(platform.worker, worker_lines)
    beat_noise = _noisy_lines(platform.beat, beat_lines)
    print(
        f"\ndatabase outage of {OUTAGE_S:.0f} s: worker {len(worker_noise)} warning/error/traceback lines "
        f"({len(worker_noise) / OUTAGE_S:.1f}/s), beat {len(beat_noise)}"
    )

    platform.postgres.start()
    back = time.monotonic()
    match = _wait_finished(platform, match_id, RECOVERY_LIMIT_S)
    waited = time.monotonic() - back
    print(f"the match finished {waited:.1f} s after the database returned")
    assert match.status == MatchStatus.FINISHED, match.error
    assert match.attempts == 1  # claimed once: the tries during the outage never got the row
    with session_scope(platform.url) as session:
        played = session.scalars(
            select(Rating.matches_played)
            .join(MatchParticipant, MatchParticipant.bot_id == Rating.bot_id)
            .where(MatchParticipant.match_id == match_id)
        ).all()
    assert played == [1, 1]  # rated once
    assert len(worker_noise) <= MAX_LINES_PER_OUTAGE, "\n".join(worker_noise[:100])
    assert not any("Traceback" in line for line in worker_noise), "\n".join(worker_noise[:100])


def test_beat_says_a_redis_outage_once_not_per_tick(platform: Platform) -> None:
    platform.redis.kill()
    beat_lines = len(platform.beat.log().splitlines())
    time.sleep(OUTAGE_S / 2)
    beat_noise = _noisy_lines(platform.beat, beat_lines)
    platform.redis.start()
    print(f"\nRedis outage of {OUTAGE_S / 2:.0f} s: beat {len(beat_noise)} warning/error/traceback lines")
    assert len(beat_noise) <= MAX_LINES_PER_OUTAGE, "\n".join(beat_noise[:100])
    assert not any("Traceback" in line for line in beat_noise), "\n".join(beat_noise[:100])
    beat_lines = len(platform.beat.log().splitlines())
    platform.beat.wait_until(
        lambda: "Sending due task" in "\n".join(platform.beat.log().splitlines()[beat_lines:]),
        30,
        "beat sending again",
    )
