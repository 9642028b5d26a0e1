"""The bot domain without HTTP: each shared.bots function raises its domain error where it should,
changes nothing when it does, and stores what the API would store (origin and provenance included)."""

from __future__ import annotations

import hashlib
import subprocess
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from shared import bots, ratings
from shared.bots import service
from shared.config import get_settings
from shared.crypto import decrypt_secret
from shared.db.models import Bot, BotVersion, Rating, User
from shared.ports import free_port
from shared.protocol.signing import generate_secret
from shared.states import BotKind, BotOrigin, BotStatus, HostedContract, UserRole
from tests.support.bot_servers import BotServer
from tests.support.environment import ROOT
from tests.support.gateway import DECIDE_SOURCE
from tests.support.processes import PYTHON

NewUser = Callable[..., User]
BAD_SOURCE = "import os\n\n\ndef decide(observation):\n    return os.listdir('/')\n"


def _name(prefix: str = "d") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _hosted(session: Session, owner: User, **kwargs: Any) -> Bot:
    return bots.register_hosted_bot(
        session, get_settings(), owner, name=_name("h"), game="podracing", source=DECIDE_SOURCE, **kwargs
    )


def _bot_named(session: Session, name: str) -> Bot | None:
    return session.scalar(select(Bot).where(Bot.name == name))


@pytest.mark.slow
def test_the_package_imports_without_a_web_framework() -> None:
    code = (
        "import sys, shared.bots\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('fastapi', 'starlette'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([PYTHON, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_domain_error_has_an_http_status() -> None:
    from services.gateway.errors import BOT_ERROR_STATUS, bot_error_status

    expected = {
        bots.BotNotFound(uuid.uuid4()): 404,
        bots.NotBotOwner(uuid.uuid4()): 403,
        bots.BotNameTaken("podracing", "x"): 409,
        bots.WrongBotKind("x"): 409,
        bots.SourceTooLarge(10, 5): 413,
        bots.InvalidBotSource("x", []): 422,
        bots.EndpointCheckFailed("x", "http://127.0.0.1:1"): 422,
        bots.EndpointNotAllowed("x", "http://10.0.0.1"): 422,
        bots.UnknownGame("x", "chess"): 422,
    }
    for error, status in expected.items():
        assert bot_error_status(error) == status, type(error).__name__
    every = set(bots.errors.__all__) - {"BotError"}
    assert {type(e).__name__ for e in expected} == every
    assert set(BOT_ERROR_STATUS) <= {type(e) for e in expected}


def test_hosted_registration_errors(db_session: Session, new_user: NewUser) -> None:
    settings, owner = get_settings(), new_user()
    name = _name("bad")

    with pytest.raises(bots.UnknownGame) as unknown:
        bots.register_hosted_bot(db_session, settings, owner, name=name, game="chess", source=DECIDE_SOURCE)
    assert "unknown game 'chess'" in unknown.value.message
    assert unknown.value.game == "chess"

    with pytest.raises(bots.InvalidBotSource) as refused:
        bots.register_hosted_bot(db_session, settings, owner, name=name, game="podracing", source=BAD_SOURCE)
    assert not isinstance(refused.value, bots.SourceTooLarge)
    assert "line 1" in refused.value.message
    assert "'os'" in refused.value.message
    assert refused.value.details
    assert refused.value.details[0]["line"] == 1
    assert set(refused.value.details[0]) == {"line", "col", "message"}

    huge = DECIDE_SOURCE + "#" * settings.hosted_code_max_chars
    with pytest.raises(bots.SourceTooLarge) as too_large:
        bots.register_hosted_bot(db_session, settings, owner, name=name, game="podracing", source=huge)
    assert isinstance(too_large.value, bots.InvalidBotSource)
    assert (too_large.value.chars, too_large.value.limit) == (len(huge), settings.hosted_code_max_chars)
    assert str(settings.hosted_code_max_chars) in too_large.value.message

    taken = _hosted(db_session, owner)
    with pytest.raises(bots.BotNameTaken) as conflict:
        bots.register_hosted_bot(
            db_session, settings, owner, name=taken.name, game="podracing", source=DECIDE_SOURCE
        )
    assert "already taken" in conflict.value.message
    assert conflict.value.name == taken.name
    assert _bot_named(db_session, name) is None


def test_a_name_taken_between_check_and_commit_is_still_a_name_conflict(
    db_session: Session, new_user: NewUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two registrations racing for one name: the loser gets BotNameTaken from the unique index."""
    owner = new_user()
    first = _hosted(db_session, owner)
    monkeypatch.setattr(service, "_ensure_name_free", lambda *_args, **_kwargs: None)
    with pytest.raises(bots.BotNameTaken):
        bots.register_hosted_bot(
            db_session, get_settings(), owner, name=first.name, game="podracing", source=DECIDE_SOURCE
        )
    assert db_session.scalars(select(Bot).where(Bot.name == first.name)).all() == [first]

    second = _hosted(db_session, owner)
    with pytest.raises(bots.BotNameTaken):
        bots.update_bot(db_session, get_settings(), second, name=first.name)
    db_session.expire_all()
    assert second.name != first.name


def test_hosted_registration_stores_origin_notes_version_and_rating(
    db_session: Session, new_user: NewUser
) -> None:
    owner = new_user()
    bot = _hosted(db_session, owner, origin=BotOrigin.EVOLVER, notes={"run": "r1", "parent": None})
    db_session.expire_all()
    stored = db_session.get(Bot, bot.id)
    assert stored is not None
    assert (stored.kind, stored.origin, stored.status) == (
        BotKind.HOSTED,
        BotOrigin.EVOLVER,
        BotStatus.ACTIVE,
    )
    version = db_session.get(BotVersion, stored.current_version_id)
    assert version is not None
    assert version.number == 1
    assert version.contract == HostedContract.DECIDE
    assert version.source_sha256 == hashlib.sha256(DECIDE_SOURCE.encode()).hexdigest()
    assert version.notes == {"run": "r1", "parent": None}
    rating = db_session.get(Rating, bot.id)
    assert rating is not None
    assert rating.matches_played == 0
    assert rating.ordinal == 0.0


def test_versions(db_session: Session, new_user: NewUser, bot_server: BotServer) -> None:
    settings, owner = get_settings(), new_user()
    bot = _hosted(db_session, owner)
    rating = db_session.get(Rating, bot.id)
    assert rating is not None
    rating.sigma = 1.0
    db_session.commit()

    with pytest.raises(bots.InvalidBotSource):
        bots.add_version(db_session, settings, bot, source=BAD_SOURCE)
    db_session.expire_all()
    assert db_session.get(Bot, bot.id).current_version_id == bot.current_version_id  # type: ignore[union-attr]

    source = DECIDE_SOURCE + "\n# v2\n"
    version = bots.add_version(db_session, settings, bot, source=source, notes={"checkpoint": "c7"})
    db_session.expire_all()
    assert version.number == 2
    assert version.notes == {"checkpoint": "c7"}
    assert version.contract == HostedContract.DECIDE  # the current version's contract by default
    assert db_session.get(Bot, bot.id).current_version_id == version.id  # type: ignore[union-attr]
    assert db_session.get(Rating, bot.id).sigma == ratings.default_sigma() / 2  # type: ignore[union-attr]

    http = bots.register_http_bot(
        db_session, settings, owner, name=_name("web"), game="podracing", endpoint=bot_server.url
    )
    with pytest.raises(bots.WrongBotKind) as wrong:
        bots.add_version(db_session, settings, http.bot, source=source)
    assert "only hosted bots" in wrong.value.message


def test_http_registration(db_session: Session, new_user: NewUser, bot_server: BotServer) -> None:
    settings, owner = get_settings(), new_user()

    unverified = bots.register_http_bot(
        db_session, settings, owner, name=_name("later"), game="podracing", endpoint=bot_server.url
    )
    assert not unverified.verified
    assert unverified.bot.status == BotStatus.INACTIVE
    assert decrypt_secret(settings, unverified.bot.secret_encrypted) == unverified.secret

    checked = bots.register_http_bot(
        db_session,
        settings,
        owner,
        name=_name("now"),
        game="podracing",
        endpoint=bot_server.url,
        secret=bot_server.secret,
        origin=BotOrigin.TRAINER,
    )
    assert checked.verified
    assert checked.bot.status == BotStatus.ACTIVE
    assert checked.bot.origin == BotOrigin.TRAINER
    version = db_session.get(BotVersion, checked.bot.current_version_id)
    assert version is not None
    assert version.notes == {"endpoint": bot_server.url}

    dead = f"http://127.0.0.1:{free_port()}"
    name = _name("dead")
    with pytest.raises(bots.EndpointCheckFailed) as failed:
        bots.register_http_bot(
            db_session, settings, owner, name=name, game="podracing", endpoint=dead, secret=generate_secret()
        )
    assert not isinstance(failed.value, bots.EndpointNotAllowed)
    assert "failed its signed health check" in failed.value.message
    assert failed.value.endpoint == dead

    strict = settings.model_copy(update={"dev_mode": False})
    with pytest.raises(bots.EndpointNotAllowed) as refused:
        bots.register_http_bot(
            db_session,
            strict,
            owner,
            name=name,
            game="podracing",
            endpoint=bot_server.url,
            secret=bot_server.secret,
        )
    assert refused.value.message.startswith("endpoint refused:")

    with pytest.raises(bots.BotNameTaken):
        bots.register_http_bot(
            db_session, settings, owner, name=checked.bot.name, game="podracing", endpoint=bot_server.url
        )
    with pytest.raises(bots.UnknownGame):
        bots.register_http_bot(db_session, settings, owner, name=name, game="chess", endpoint=bot_server.url)
    assert _bot_named(db_session, name) is None


def test_ownership(db_session: Session, new_user: NewUser) -> None:
    owner, other, admin = new_user(), new_user("other"), new_user("admin", UserRole.ADMIN)
    bot = _hosted(db_session, owner)

    assert bots.get_owned_bot(db_session, owner, bot.id) is bot
    assert bots.get_owned_bot(db_session, admin, bot.id) is bot
    assert bots.may_manage(admin, bot)
    assert not bots.may_manage(other, bot)
    with pytest.raises(bots.NotBotOwner) as forbidden:
        bots.get_owned_bot(db_session, other, bot.id)
    assert forbidden.value.message == f"bot {bot.id} belongs to another user"
    with pytest.raises(bots.NotBotOwner):
        bots.ensure_may_manage(other, bot)

    missing = uuid.uuid4()
    with pytest.raises(bots.BotNotFound) as not_found:
        bots.get_owned_bot(db_session, owner, missing)
    assert not_found.value.message == f"bot {missing} not found"
    with pytest.raises(bots.BotNotFound):
        bots.get_bot(db_session, missing)


def test_updates_and_activation(db_session: Session, new_user: NewUser, bot_server: BotServer) -> None:
    settings, owner = get_settings(), new_user()
    hosted = _hosted(db_session, owner)
    http = bots.register_http_bot(
        db_session,
        settings,
        owner,
        name=_name("web"),
        game="podracing",
        endpoint=bot_server.url,
        secret=bot_server.secret,
    ).bot

    with pytest.raises(bots.WrongBotKind) as wrong:
        bots.update_bot(db_session, settings, hosted, endpoint=bot_server.url)
    assert "hosted bots have no endpoint" in wrong.value.message
    with pytest.raises(bots.BotNameTaken):
        bots.update_bot(db_session, settings, http, name=hosted.name)

    dead = f"http://127.0.0.1:{free_port()}"
    old_name = http.name
    with pytest.raises(bots.EndpointCheckFailed):
        bots.update_bot(db_session, settings, http, name=_name("renamed"), endpoint=dead)
    db_session.expire_all()
    assert (http.name, http.endpoint) == (old_name, bot_server.url)  # nothing changed

    renamed = _name("renamed")
    bots.update_bot(db_session, settings, http, name=renamed)
    assert http.name == renamed

    bots.deactivate(db_session, http)
    moved = bots.update_bot(db_session, settings, http, endpoint=dead)  # inactive: no check yet
    assert moved.endpoint == dead
    assert db_session.get(BotVersion, moved.current_version_id).notes == {"endpoint": dead}  # type: ignore[union-attr]
    with pytest.raises(bots.EndpointCheckFailed):
        bots.reactivate(db_session, settings, http)
    db_session.expire_all()
    assert http.status == BotStatus.INACTIVE

    bots.update_bot(db_session, settings, http, endpoint=bot_server.url)
    http.health_failures = 3
    http.status = BotStatus.SUSPENDED
    db_session.commit()
    bots.reactivate(db_session, settings, http)
    assert (http.status, http.health_failures, http.suspended_at) == (BotStatus.ACTIVE, 0, None)

    bots.deactivate(db_session, hosted)
    assert bots.reactivate(db_session, settings, hosted).status == BotStatus.ACTIVE


def test_secret_rotation(db_session: Session, new_user: NewUser) -> None:
    settings, owner = get_settings(), new_user()
    bot = bots.register_http_bot(
        db_session, settings, owner, name=_name("rot"), game="podracing", endpoint="http://127.0.0.1:9"
    )
    assert bots.grace_ends_at(settings, bot.bot) is None
    secret = bots.rotate_secret(db_session, settings, bot.bot)
    db_session.expire_all()
    stored = db_session.get(Bot, bot.bot.id)
    assert stored is not None
    assert secret != bot.secret
    assert decrypt_secret(settings, stored.secret_encrypted) == secret
    assert decrypt_secret(settings, stored.previous_secret_encrypted or b"") == bot.secret
    ends = bots.grace_ends_at(settings, stored)
    assert ends is not None
    assert stored.secret_rotated_at is not None
    assert (ends - stored.secret_rotated_at).total_seconds() == settings.secret_grace_s
    # One rule for the registration's checks and the runner: signed with until the window ends.
    previous, rotated = stored.previous_secret_encrypted, stored.secret_rotated_at
    assert bots.grace_secrets(settings, previous, rotated, now=ends - timedelta(seconds=1)) == (bot.secret,)
    assert bots.grace_secrets(settings, previous, rotated, now=ends) == ()
    assert bots.grace_secrets(settings, None, None) == ()
    assert bots.grace_secrets(settings, b"not a fernet token", rotated, now=rotated) == ()
