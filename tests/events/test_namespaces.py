"""Event namespaces: Redis pub/sub reaches every client of a server whatever database it selected,
so deployments that share a Redis server are kept apart by the namespace in every channel name,
derived by default from the deployment's PostgreSQL database and Redis database number."""

from __future__ import annotations

import asyncio
import uuid
from typing import TypedDict, Unpack

import pytest
from pydantic import ValidationError
from sqlalchemy.engine import make_url

from shared.config import Settings, get_settings
from shared.events import EventPublisher, EventStream, MatchStarted, channel, namespace_of
from shared.states import MatchKind

TOPIC = "matches"
QUIET_S = 0.5
"""How long a stream is read for events that must not come (they arrive in milliseconds)."""


def _other_database(redis_url: str) -> str:
    """Another database number on the same Redis server (the server has 16)."""
    base, _, db = redis_url.rpartition("/")
    return f"{base}/{(int(db) + 1) % 16}"


def _started() -> MatchStarted:
    return MatchStarted(
        match_id=uuid.uuid4(), game="podracing", kind=MatchKind.LADDER, rated=True, attempt=1, participants=[]
    )


def _publish(redis_url: str, namespace: str | None = None) -> uuid.UUID:
    """Publish one event through a publisher of its own (as a deployment's process does); its match id."""
    publisher = EventPublisher(redis_url, namespace=namespace) if namespace else EventPublisher(redis_url)
    event = _started()
    try:
        assert publisher.publish(event, TOPIC)
        assert publisher.flush(5)
    finally:
        publisher.close()
    return event.match_id


async def _heard(stream: EventStream) -> set[uuid.UUID]:
    """The match ids of every event the stream receives until it has been quiet for QUIET_S."""
    heard: set[uuid.UUID] = set()
    while True:
        try:
            event = await asyncio.wait_for(anext(stream), QUIET_S)
        except TimeoutError:
            return heard
        assert isinstance(event, MatchStarted)
        heard.add(event.match_id)


def test_deployments_on_other_redis_databases_of_one_server_do_not_hear_each_other(redis_url: str) -> None:
    """The bug: a stream on database 9 heard what a publisher on database 10 sent (same server)."""
    other = _other_database(redis_url)

    async def scenario() -> tuple[set[uuid.UUID], set[uuid.UUID], uuid.UUID, uuid.UUID]:
        async with (
            EventStream([TOPIC], redis_url=redis_url) as ours,
            EventStream([TOPIC], redis_url=other) as theirs,
        ):
            mine = await asyncio.to_thread(_publish, redis_url)
            their = await asyncio.to_thread(_publish, other)
            return await _heard(ours), await _heard(theirs), mine, their

    ours, theirs, mine, their = asyncio.run(scenario())
    assert ours == {mine}
    assert theirs == {their}


def test_deployments_on_other_postgres_databases_do_not_hear_each_other(redis_url: str) -> None:
    settings = get_settings()
    database = make_url(settings.database_url)
    elsewhere = settings.model_copy(
        update={"database_url": database.set(database=f"{database.database}_other").render_as_string()}
    )
    ours, theirs = namespace_of(settings), namespace_of(elsewhere)
    assert ours != theirs

    async def scenario() -> tuple[set[uuid.UUID], set[uuid.UUID], uuid.UUID]:
        async with (
            EventStream([TOPIC], redis_url=redis_url) as default,
            EventStream([TOPIC], redis_url=redis_url, namespace=theirs) as other,
        ):
            sent = await asyncio.to_thread(_publish, redis_url, theirs)
            return await _heard(default), await _heard(other), sent

    default, other, sent = asyncio.run(scenario())
    assert default == set()  # this process's own deployment (its namespace is `ours`)
    assert other == {sent}


@pytest.mark.slow
def test_one_namespace_is_shared_and_two_are_apart_whatever_the_database(redis_url: str) -> None:
    other = _other_database(redis_url)
    shared_name = f"shared-{uuid.uuid4().hex[:8]}"

    async def scenario() -> tuple[set[uuid.UUID], set[uuid.UUID], set[uuid.UUID], uuid.UUID, uuid.UUID]:
        async with (
            EventStream([TOPIC], redis_url=redis_url, namespace=shared_name) as here,
            EventStream([TOPIC], redis_url=other, namespace=shared_name) as there,
            EventStream([TOPIC], redis_url=redis_url, namespace=f"{shared_name}-not") as apart,
        ):
            first = await asyncio.to_thread(_publish, other, shared_name)
            second = await asyncio.to_thread(_publish, redis_url, f"{shared_name}-not")
            return await _heard(here), await _heard(there), await _heard(apart), first, second

    here, there, apart, first, second = asyncio.run(scenario())
    assert here == {first}
    assert there == {first}
    assert apart == {second}


class _SettingValues(TypedDict, total=False):
    database_url: str
    redis_url: str
    events_redis_url: str
    events_namespace: str


def _settings(**values: Unpack[_SettingValues]) -> Settings:
    return Settings(dev_mode=True, **values)


def test_the_default_namespace_names_both_databases_and_a_setting_replaces_it() -> None:
    pg = "postgresql+psycopg://postgres@db.example:5432/"
    assert namespace_of(_settings(database_url=pg + "arena", redis_url="redis://r:6379/3")) == "arena.3"
    assert namespace_of(_settings(database_url=pg + "arena", redis_url="redis://r:6379")) == "arena.0"
    events_elsewhere = _settings(
        database_url=pg + "arena", redis_url="redis://r/3", events_redis_url="redis://e/5"
    )
    assert namespace_of(events_elsewhere) == "arena.5"
    assert namespace_of(events_elsewhere, "unix:///run/redis.sock?db=7") == "arena.7"
    # Host names are not part of it: every process of a deployment agrees, however it reaches them.
    other_host = _settings(database_url="postgresql://postgres@127.0.0.1/arena", redis_url="redis://h/3")
    assert namespace_of(other_host) == "arena.3"
    # A database name with characters that mean something in a channel pattern is quoted.
    odd = namespace_of(_settings(database_url=pg + "a*b:c d", redis_url="redis://r/1"))
    assert odd == "a%2Ab%3Ac%20d.1"
    assert channel("training:*", odd) == "arena:events:a%2Ab%3Ac%20d.1:training:*"
    named = _settings(database_url=pg + "arena", redis_url="redis://r/3", events_namespace="prod-eu.1")
    assert namespace_of(named) == "prod-eu.1"
    assert channel("matches", namespace_of(named)) == "arena:events:prod-eu.1:matches"


@pytest.mark.parametrize("bad", ["has space", "a:b", "x*", "[ab]", "é"])
def test_a_namespace_that_would_not_name_channels_is_refused(bad: str) -> None:
    with pytest.raises(ValidationError, match="events_namespace"):
        _settings(events_namespace=bad)
    with pytest.raises(ValueError, match="invalid event namespace"):
        channel("matches", bad)
    with pytest.raises(ValueError, match="invalid event namespace"):
        EventStream([TOPIC], redis_url="redis://127.0.0.1:6379/0", namespace=bad)
