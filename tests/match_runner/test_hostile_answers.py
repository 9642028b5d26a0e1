"""Hostile answers (issue 10, findings 5-7): whatever one bot sends, the match finishes and is rated,
the failure counts against that bot alone, everything stored is accepted by PostgreSQL, and the
replay the gateway serves is strict JSON of bounded size. Real worker process, real HTTP bots."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from fastapi.testclient import TestClient

from shared.botclient import HttpBotConnection
from shared.config import get_settings
from shared.games.base import JSON, StepResult
from shared.games.podracing.config import PodracingConfig
from shared.games.podracing.game import PodracingGame, PodracingMatch
from shared.games.replay import MAX_REPLAY_ACTION_BYTES
from shared.play.turns import play_match
from tests.support.bot_processes import RunningBot
from tests.support.match_runner import WORKER_ENV, queue_match, wait_for_match
from tests.support.processes import ManagedProcess

pytestmark = pytest.mark.slow

MAX_FAILURES = int(WORKER_ENV["ARENA_MAX_CONSECUTIVE_FAILURES"])

FAILING = [
    ("deep", "nested deeper than"),
    ("bigint", "too many digits"),
    ("overflow", "too many digits"),
    ("hugefloat", "not a finite number"),
    ("nan", "NaN"),
    ("badutf8", "not UTF-8"),
    ("nulerror", "HTTP 500: crash"),
    ("surrogate", "HTTP 500: lone"),
]
"""Answers that count as that bot's failed turns (it forfeits), with the error each one records."""


@pytest.fixture(scope="module")
def gateway(database_url: str, redis_url: str) -> Iterator[TestClient]:  # noqa: ARG001 (requested for its side effect)
    from services.gateway.app import create_app

    with TestClient(create_app(get_settings()), raise_server_exceptions=False) as client:
        yield client


def _refuse(token: str) -> None:
    raise ValueError(f"{token} is not JSON")


def strict_json(text: str) -> Any:
    """Parse as a strict parser would: no NaN/Infinity, no lone surrogates."""
    value = json.loads(text, parse_constant=_refuse)
    json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    return value


def served_replay(gateway: TestClient, match_id: uuid.UUID) -> tuple[dict[str, Any], int]:
    answer = gateway.get(f"/api/v1/matches/{match_id}/replay")
    assert answer.status_code == 200, answer.text[:500]
    return strict_json(answer.content.decode("utf-8")), len(answer.content)


def _samples(participant: Any) -> str:
    return " | ".join(str(sample["error"]) for sample in participant.error_samples)


def _no_unstorable_text(value: Any) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert "\\u0000" not in text
    assert "\x00" not in text
    text.encode("utf-8")  # no lone surrogates


@pytest.fixture
def play_hostile(
    worker: ManagedProcess,
    good_bot: RunningBot,
    bot_factory: Callable[..., RunningBot],
    register_bot: Callable[..., uuid.UUID],
) -> Callable[..., Any]:
    """Play one match of a misbehaving bot (slot 0, in the given mode) against a good one; the
    finished match and the misbehaving bot's id."""

    def play(mode: str, seed: int, timeout: float = 60) -> tuple[Any, uuid.UUID]:
        bad_id, good_id = register_bot(bot_factory(mode)), register_bot(good_bot)
        return wait_for_match(queue_match([bad_id, good_id], seed=seed), worker, timeout=timeout), bad_id

    return play


def _assert_rated_and_finished(match: Any) -> None:
    assert match.status == "finished", match.error
    assert match.rated
    for participant in match.participants:
        assert participant.mu_after is not None, "the match was not rated"


@pytest.mark.parametrize(("mode", "expected_error"), FAILING, ids=[m for m, _ in FAILING])
def test_hostile_answer_counts_against_its_bot_alone(
    mode: str,
    expected_error: str,
    play_hostile: Callable[..., Any],
    worker: ManagedProcess,
    gateway: TestClient,
) -> None:
    match, bad_id = play_hostile(mode, seed=21)

    _assert_rated_and_finished(match)
    bad, good = match.participants
    assert bad.bot_id == bad_id
    assert bad.forfeited
    assert bad.rank == 1
    assert bad.errors >= MAX_FAILURES, _samples(bad)
    assert expected_error in _samples(bad), _samples(bad)
    assert good.errors == 0
    assert good.timeouts == 0
    assert not good.forfeited
    assert good.rank == 0
    _no_unstorable_text(bad.error_samples)
    replay, _ = served_replay(gateway, match.id)
    assert all(turn["actions"][0] is None for turn in replay["turns"])
    assert worker.alive()


@pytest.mark.parametrize("mode", ["nulaction", "wrongtypes"])
def test_odd_but_readable_actions_are_sanitised_and_stored_safely(
    mode: str,
    play_hostile: Callable[..., Any],
    gateway: TestClient,
) -> None:
    """NUL in keys and values, lone surrogates, wrong types deep inside: the game reads what it can."""
    match, _ = play_hostile(mode, seed=22)

    _assert_rated_and_finished(match)
    bad, _ = match.participants
    assert not bad.forfeited
    assert bad.errors == 0
    replay, _ = served_replay(gateway, match.id)
    assert len(replay["turns"]) == match.turns
    if mode == "wrongtypes":
        assert bad.metrics["invalid_actions"] >= match.turns


def test_nul_in_a_health_check_error_is_stored_safely(
    play_hostile: Callable[..., Any],
) -> None:
    match, _ = play_hostile("nulhealth", seed=23)

    # Finished, not wedged; whether a match with a bot that failed its health check is rated is
    # the health-check policy's business (issue 10, finding 14), not this test's.
    assert match.status == "finished", match.error
    bad, _ = match.participants
    assert "before the match: health check: HTTP 500: not ready" in _samples(bad)
    _no_unstorable_text(bad.error_samples)


def test_junk_answers_do_not_bloat_the_replay(
    play_hostile: Callable[..., Any],
    gateway: TestClient,
) -> None:
    """60 KB of junk per turn: the turns are played, the junk is not stored."""
    match, _ = play_hostile("junk", seed=24, timeout=120)

    _assert_rated_and_finished(match)
    bad, _ = match.participants
    assert bad.errors == 0
    assert not bad.forfeited
    replay, size = served_replay(gateway, match.id)
    assert match.turns
    assert match.turns > 10
    stored_actions = len(json.dumps([turn["actions"] for turn in replay["turns"]]))
    assert stored_actions <= 2 * MAX_REPLAY_ACTION_BYTES * match.turns
    assert size < 200_000, f"replay of {match.turns} turns is {size} bytes"
    assert match.replay.size_bytes < 50_000
    assert replay["truncated"]["actions"] == match.turns


class FragileMatch(PodracingMatch):
    """A podracing match whose action reading has a bug: a pod entry that is a string crashes it."""

    @staticmethod
    def _read(action: JSON | None) -> None:
        if isinstance(action, dict) and any(isinstance(pod, str) for pod in action.get("pods", [])):
            raise KeyError("a bug in the game's action reading")

    def check_action(self, _player: int, action: JSON | None) -> Sequence[str]:
        self._read(action)
        return ()

    def step(self, actions: Sequence[JSON | None]) -> StepResult:
        for action in actions:
            self._read(action)
        return super().step(actions)


class FragileGame(PodracingGame):
    def create_match(
        self, seed: int, config: dict[str, JSON] | None = None, _num_players: int = 2
    ) -> FragileMatch:
        return FragileMatch(seed, PodracingConfig.model_validate(config or {}))


def test_a_crash_in_the_games_action_reading_counts_against_that_bot(
    good_bot: RunningBot, bot_factory: Callable[..., RunningBot]
) -> None:
    """The runner reads each bot's action on its own before the turn, so a game bug that one bot's
    answer triggers is that bot's failed turn, not a crashed match."""
    offender = bot_factory("wrongtypes")  # its second pod entry is the string "pod"
    settings = get_settings().model_copy(update={"dev_mode": True, "max_consecutive_failures": 3})

    async def play() -> Any:
        clients = [
            await HttpBotConnection.open(bot.endpoint, bot.secret, settings) for bot in (offender, good_bot)
        ]
        try:
            return await play_match(
                FragileGame(),
                match_id=str(uuid.uuid4()),
                seed=5,
                config={"laps": 1, "max_turns": 30},
                clients=clients,
                settings=settings,
            )
        finally:
            for client in clients:
                await client.aclose()

    played = asyncio.run(play())
    bad, good = played.stats
    assert bad.forfeited
    assert bad.errors >= 3
    assert "KeyError" in str(bad.error_samples[0]["error"])
    assert good.errors == 0
    assert not good.forfeited
    assert played.result.players[1].rank == 0
