"""The match runner's finishing step with a replay store: the object is written before the result
is committed, under a key of the match and the attempt; a store that refuses the write leaves
nothing committed; an attempt that lost its match removes its own object and nobody else's; the
object of a commit that failed stays until the attempt that finishes the match removes it.

Matches are played in this process with local bots (the runner's own turn loop), so these tests
need neither a worker nor bot servers."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.exc import OperationalError

from services.match_runner import store as runner_store
from services.match_runner.store import claim_match, finish_match
from shared.botclient import TurnReply
from shared.config import get_settings
from shared.db.models import Match, Rating, Replay
from shared.db.session import session_scope
from shared.games.podracing.bots import runner
from shared.games.registry import get_game
from shared.games.replay import decompress
from shared.play.turns import PlayedMatch, play_match
from shared.replay_store import FilesystemReplayStore, ReplayStoreError, load_replay, replay_key
from shared.states import MatchStatus, ReplayStorage
from tests.support.match_runner import queue_match

RACE = {"laps": 1, "max_turns": 30}


class LocalBot:
    async def turn(self, *, turn: int, observation: Any, **_: Any) -> TurnReply:  # noqa: ARG002 (keyword-only turn signature)
        return TurnReply(runner(observation), 1.0)


def play(match_id: uuid.UUID, seed: int) -> PlayedMatch:
    return asyncio.run(
        play_match(
            get_game("podracing"),
            match_id=str(match_id),
            seed=seed,
            config=dict(RACE),
            clients=[LocalBot(), LocalBot()],
            settings=get_settings(),
        )
    )


def claimed_match(register_bot: Callable[..., uuid.UUID], seed: int) -> tuple[uuid.UUID, int]:
    match_id = queue_match([register_bot(), register_bot()], seed=seed, config=dict(RACE), send=False)
    attempt = claim_match(match_id, "replay-store-tests", stale_after_s=60)
    assert attempt is not None
    return match_id, attempt


class WatchedStore(FilesystemReplayStore):
    """Files, and what the database held for the match at the moment of each write."""

    def __init__(self, root: Path, match_id: uuid.UUID) -> None:
        super().__init__(root)
        self.match_id = match_id
        self.seen_at_put: list[tuple[MatchStatus, Replay | None]] = []

    def put(self, key: str, data: bytes) -> None:
        with session_scope() as session:
            match = session.get(Match, self.match_id)
            assert match is not None
            self.seen_at_put.append((match.status, session.get(Replay, self.match_id)))
        super().put(key, data)


class RefusingStore(FilesystemReplayStore):
    def put(self, key: str, _data: bytes) -> None:
        raise ReplayStoreError(f"cannot write replay {key} (test): disk full")


def test_the_object_is_written_before_the_result_is_committed(
    register_bot: Callable[..., uuid.UUID],
    tmp_path: Path,
) -> None:
    match_id, attempt = claimed_match(register_bot, seed=31)
    played = play(match_id, seed=31)
    store = WatchedStore(tmp_path, match_id)

    assert finish_match(match_id, attempt, played, replays=store) is not None

    assert store.seen_at_put == [(MatchStatus.RUNNING, None)], "written while nothing was committed"
    with session_scope() as session:
        row = session.get(Replay, match_id)
        assert row is not None
        assert (row.storage, row.key, row.data) == (
            ReplayStorage.FILESYSTEM,
            replay_key(match_id, attempt),
            None,
        )
        assert row.key is not None
        assert row.size_bytes == store.path(row.key).stat().st_size
        assert row.frames == len(played.replay["frames"])
        assert decompress(store.get(row.key) or b"") == played.replay


def test_a_refused_write_commits_nothing(
    register_bot: Callable[..., uuid.UUID],
    tmp_path: Path,
) -> None:
    match_id, attempt = claimed_match(register_bot, seed=32)
    played = play(match_id, seed=32)

    with pytest.raises(ReplayStoreError, match="disk full"):
        finish_match(match_id, attempt, played, replays=RefusingStore(tmp_path))

    with session_scope() as session:
        match = session.get(Match, match_id)
        assert match is not None
        assert (match.status, match.attempts, match.finished_at) == (MatchStatus.RUNNING, attempt, None)
        assert session.get(Replay, match_id) is None
        assert all(p.rank is None for p in match.participants)
        assert all(p.mu_after is None for p in match.participants)
        bot_ids = [p.bot_id for p in match.participants]
        assert all(session.get(Rating, bot_id) is None for bot_id in bot_ids), "no rating moved"


def test_a_lost_attempt_removes_its_object_and_leaves_the_winner_alone(
    register_bot: Callable[..., uuid.UUID],
    tmp_path: Path,
) -> None:
    match_id, first = claimed_match(register_bot, seed=33)
    played = play(match_id, seed=33)
    with session_scope() as session:  # the reaper gave the match away while `first` was finishing
        session.execute(update(Match).where(Match.id == match_id).values(heartbeat_at=None))
    second = claim_match(match_id, "replay-store-tests-2", stale_after_s=60)
    assert second == first + 1
    store = FilesystemReplayStore(tmp_path)
    assert finish_match(match_id, second, played, replays=store) is not None

    assert finish_match(match_id, first, played, replays=store) is None

    assert not store.exists(replay_key(match_id, first)), "the loser's object is gone"
    assert store.exists(replay_key(match_id, second)), "the winner's object is untouched"
    with session_scope() as session:
        row = session.get(Replay, match_id)
        assert row is not None
        assert row.key == replay_key(match_id, second)
        assert decompress(load_replay(row, get_settings().model_copy(update={"replay_dir": tmp_path})))


def test_the_object_of_a_failed_commit_is_removed_by_the_attempt_that_finishes_the_match(
    register_bot: Callable[..., uuid.UUID],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    match_id, first = claimed_match(register_bot, seed=34)
    played = play(match_id, seed=34)
    store = FilesystemReplayStore(tmp_path)

    def database_gone(*_: object) -> None:
        raise OperationalError("COMMIT", {}, ConnectionResetError("server closed the connection"))

    with monkeypatch.context() as patch:
        patch.setattr(runner_store, "_commit_result", database_gone)
        with pytest.raises(OperationalError):
            finish_match(match_id, first, played, replays=store)
    assert store.exists(replay_key(match_id, first)), "kept: the commit may have happened after all"

    with session_scope() as session:  # it had not: the reaper hands the match out again
        session.execute(update(Match).where(Match.id == match_id).values(heartbeat_at=None))
    second = claim_match(match_id, "replay-store-tests-2", stale_after_s=60)
    assert second == first + 1
    assert finish_match(match_id, second, played, replays=store) is not None

    assert not store.exists(replay_key(match_id, first)), "the failed attempt's orphan is gone"
    with session_scope() as session:
        row = session.get(Replay, match_id)
        assert row is not None
        assert row.key == replay_key(match_id, second)
    assert store.exists(row.key)
