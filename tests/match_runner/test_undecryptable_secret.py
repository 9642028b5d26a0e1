"""A bot whose stored secret the configured key cannot decrypt (the operator changed
ARENA_SECRET_KEY) is the operator's error, named as such in the log and the match's error, never a
forfeit of the bot: the match is not played."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

import pytest
from pydantic import SecretStr

from services.match_runner import play
from services.match_runner.play import OperatorError
from services.match_runner.seats import SeatProblem, open_seat
from services.match_runner.store import MatchPlan, Seat
from shared.config import Settings
from shared.crypto import encrypt_secret
from shared.games.registry import get_game
from shared.states import BotKind, MatchKind

STORED_WITH = Settings(
    _env_file=None, dev_mode=True, secret_key=SecretStr("the-key-the-secrets-were-stored-with")
)
NOW = Settings(_env_file=None, dev_mode=True, secret_key=SecretStr("a-new-key-from-some-env-file"))


def _seat(slot: int, name: str, kind: BotKind, settings: Settings) -> Seat:
    return Seat(
        slot=slot,
        bot_id=uuid.uuid4(),
        bot_name=name,
        kind=kind,
        endpoint=None,
        secret_encrypted=encrypt_secret(settings, "the bot's secret"),
        source="print('never started')",
    )


def test_the_seat_names_the_changed_secret_key_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    seat = _seat(0, "hosted-runner", BotKind.HOSTED, STORED_WITH)
    with caplog.at_level(logging.ERROR, logger="services.match_runner.seats"):
        opened = asyncio.run(open_seat(seat, "podracing", NOW))
    assert opened.category is SeatProblem.SECRET_KEY
    assert not opened.category.bot_fault, "the bot's health must not suffer for the operator's key"
    assert "cannot decrypt bot 'hosted-runner''s secret" in (opened.problem or "")
    assert "the secret key changed (ARENA_SECRET_KEY)" in caplog.text


def test_the_match_fails_as_an_operator_error_instead_of_being_played(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(play, "record_checks", lambda _checks, _settings: None)
    plan = MatchPlan(
        id=uuid.uuid4(),
        game="podracing",
        seed=1,
        config={},
        rated=True,
        kind=MatchKind.LADDER,
        seats=[
            _seat(0, "hosted-runner", BotKind.HOSTED, STORED_WITH),
            _seat(1, "no-endpoint", BotKind.HTTP, NOW),
        ],
    )
    game = get_game("podracing")
    with pytest.raises(OperatorError) as raised:
        asyncio.run(play._play(plan, game, 1, NOW, time.monotonic() + 60))
    message = str(raised.value)
    assert message.startswith("operator error: cannot decrypt bot 'hosted-runner''s secret"), message
