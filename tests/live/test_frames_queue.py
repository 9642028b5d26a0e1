"""Live frames never crowd out the news: with the publisher's queue full (its Redis refused the
first attempt, so the sender waits before the next), frames are dropped first and a match's start
and end survive."""

from __future__ import annotations

import uuid

from prometheus_client import REGISTRY

from shared.events import EventPublisher
from shared.ports import free_port
from tests.support.live_events import finished_event, frames, started_event


def dropped(family: str) -> float:
    value = REGISTRY.get_sample_value("arena_events_published_total", {"topic": family, "outcome": "dropped"})
    return value or 0.0


def test_frames_are_dropped_first_when_the_queue_is_full() -> None:
    match_id = uuid.uuid4()
    started, finished = started_event(match_id), finished_event(match_id)
    publisher = EventPublisher(
        f"redis://127.0.0.1:{free_port()}/0", max_pending=5, retry_delay_s=60, max_retry_delay_s=60
    )
    try:
        assert publisher.publish(started)  # refused by the closed port: the sender now waits 60 s
        assert publisher.flush(5)
        assert publisher.pending == 0
        news_before, frames_before = dropped("matches"), dropped("match")

        assert publisher.publish(started)
        queued = [publisher.publish(frames(match_id, turn)) for turn in range(10)]
        assert publisher.publish(finished)
        assert queued == [True] * 10
        assert publisher.pending == 5
        assert dropped("matches") == news_before, "no news was dropped"
        assert dropped("match") == frames_before + 7  # 12 events into 5 places, the news kept

        for _ in range(3):  # a queue of news only: a new frame gives way, a new news event does not
            assert publisher.publish(started)
        assert publisher.pending == 5
        assert dropped("match") == frames_before + 10
        assert not publisher.publish(frames(match_id, 10))
        assert dropped("match") == frames_before + 11
        assert dropped("matches") == news_before
        assert publisher.publish(finished)
        assert dropped("matches") == news_before + 1
    finally:
        publisher.close(2)
