"""Bots that misbehave in every way we know: the match still finishes, the offender plays default
actions and has its failures on its participant row, and the worker keeps playing."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import httpx
import pytest
from sqlalchemy import select

from shared import ratings
from shared.db.models import Rating
from shared.db.session import session_scope
from shared.games.replay import decompress
from shared.replay_store import load_replay
from tests.support.bot_processes import RunningBot
from tests.support.match_runner import WORKER_ENV, queue_match, wait_for_match
from tests.support.processes import ManagedProcess

pytestmark = pytest.mark.slow

MAX_FAILURES = int(WORKER_ENV["ARENA_MAX_CONSECUTIVE_FAILURES"])

FORFEITING = [
    ("slow", ("--delay", "1.0"), "no answer within"),
    ("error500", (), "HTTP 500: KeyError"),
    ("malformed", (), "not valid JSON"),
    ("huge", (), "larger than"),
    ("redirect", (), "redirect"),
    ("die", ("--die-after", "5"), "cannot connect"),
]


def _samples(participant) -> str:  # type: ignore[no-untyped-def]
    return " | ".join(str(sample["error"]) for sample in participant.error_samples)


@pytest.mark.parametrize(("mode", "extra", "expected_error"), FORFEITING, ids=[m for m, _, _ in FORFEITING])
def test_failing_bot_forfeits_and_the_match_finishes(
    mode: str,
    extra: tuple[str, ...],
    expected_error: str,
    worker: ManagedProcess,
    good_bot: RunningBot,
    bot_factory: Callable[..., RunningBot],
    register_bot: Callable[..., uuid.UUID],
) -> None:
    offender = bot_factory(mode, *extra)
    good_id, bad_id = register_bot(good_bot), register_bot(offender)
    match_id = queue_match([bad_id, good_id], seed=11)
    match = wait_for_match(match_id, worker)

    assert match.status == "finished", match.error
    assert match.end_reason == "forfeit"
    bad, good = match.participants
    assert bad.bot_id == bad_id
    assert bad.forfeited
    assert bad.rank == 1
    assert good.rank == 0
    assert not good.forfeited
    assert good.errors == 0
    assert good.timeouts == 0
    if mode == "slow":
        assert bad.timeouts >= MAX_FAILURES
        assert bad.errors == 0
    else:
        assert bad.errors >= MAX_FAILURES
    assert expected_error in _samples(bad), _samples(bad)
    assert any("forfeited after" in str(s["error"]) for s in bad.error_samples)
    # The offender played the default action (None) on the turns it failed.
    assert match.replay is not None
    replay = decompress(load_replay(match.replay))
    assert replay["turns"][-1]["actions"][0] is None
    assert all(turn["actions"][1] is not None for turn in replay["turns"])
    assert worker.alive()
    if mode == "redirect":
        assert offender.stats()["internal_hits"] == 0, "the runner followed a redirect"
    if mode == "die":
        assert not offender.process.alive()
        assert match.turns is not None
        assert match.turns > 5


def test_invalid_actions_are_sanitised_not_failures(
    worker: ManagedProcess,
    good_bot: RunningBot,
    bot_factory: Callable[..., RunningBot],
    register_bot: Callable[..., uuid.UUID],
) -> None:
    offender = bot_factory("invalid")
    bad_id, good_id = register_bot(offender), register_bot(good_bot)
    match = wait_for_match(queue_match([bad_id, good_id], seed=12), worker)
    assert match.status == "finished", match.error
    bad, good = match.participants
    assert not bad.forfeited
    assert bad.errors == 0
    assert bad.timeouts == 0
    assert bad.metrics["invalid_actions"] >= match.turns
    assert good.metrics["invalid_actions"] == 0
    assert good.rank == 0
    assert bad.rank == 1


def test_unreachable_bot_still_plays_and_forfeits(
    worker: ManagedProcess, good_bot: RunningBot, register_bot: Callable[..., uuid.UUID]
) -> None:
    from shared.ports import free_port

    dead_id = register_bot(endpoint=f"http://127.0.0.1:{free_port()}")
    good_id = register_bot(good_bot)
    match = wait_for_match(queue_match([good_id, dead_id], seed=13), worker)
    assert match.status == "finished", match.error
    good, dead = match.participants
    assert dead.forfeited
    assert dead.rank == 1
    assert good.rank == 0
    assert "before the match: health check" in _samples(dead)


def test_match_fails_when_no_bot_is_reachable(
    worker: ManagedProcess, register_bot: Callable[..., uuid.UUID]
) -> None:
    from shared.ports import free_port

    ids = [register_bot(endpoint=f"http://127.0.0.1:{free_port()}") for _ in range(2)]
    match = wait_for_match(queue_match(ids, seed=14), worker)
    assert match.status == "failed"
    assert match.error is not None
    assert "no bot could be reached" in match.error
    with session_scope() as session:
        assert session.scalars(select(Rating).where(Rating.bot_id.in_(ids))).all() == []


def test_worker_survives_and_plays_a_normal_rated_match(
    worker: ManagedProcess,
    good_bot: RunningBot,
    bot_factory: Callable[..., RunningBot],
    register_bot: Callable[..., uuid.UUID],
) -> None:
    other = bot_factory("ok")
    first, second = register_bot(good_bot), register_bot(other)
    match = wait_for_match(queue_match([first, second], seed=15), worker)
    assert match.status == "finished", match.error
    assert match.attempts == 1
    assert match.turns
    assert match.turns > 0
    for participant in match.participants:
        assert participant.errors == 0
        assert participant.timeouts == 0
        assert not participant.forfeited
        assert participant.latency_p50_ms is not None
        assert participant.latency_p99_ms is not None
        assert participant.latency_p99_ms >= participant.latency_p50_ms
        assert participant.mu_before == pytest.approx(ratings.default_mu())
        assert participant.mu_after is not None
        assert participant.sigma_before is not None
        assert participant.sigma_after is not None
        assert participant.sigma_after < participant.sigma_before
    assert match.replay is not None
    replay = decompress(load_replay(match.replay))
    assert len(replay["turns"]) == match.turns
    assert match.replay.frames == len(replay["frames"])
    assert good_bot.stats()["bad_signatures"] == 0
    assert good_bot.stats()["health"] >= 1

    metrics = httpx.get(worker.metrics_url, timeout=5).text  # type: ignore[attr-defined]
    finished = re.search(r'arena_runner_matches_total\{game="podracing",outcome="finished"\} (\S+)', metrics)
    assert finished is not None
    assert float(finished.group(1)) >= 1
    assert re.search(r'arena_runner_turn_latency_seconds_count\{game="podracing"\} [1-9]', metrics)
