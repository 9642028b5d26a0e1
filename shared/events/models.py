"""Typed events and the topics they travel on.

Every event is a frozen pydantic model with a `type` (an `EventType`), a schema `version` and a
`timestamp`. Each concrete event class registers itself under its `type` when it is defined, so
adding an event is one `EventType` member plus one class: publishing and parsing need nothing else.

An event names its own topic (`Event.topic`); a topic is carried on the Redis channel
`arena:events:<namespace>:<topic>`, where the namespace keeps deployments that share a Redis server
apart (`namespace_of`: pub/sub ignores Redis database numbers). Topics: `matches` (every match
start and end), `match:<match id>` (a live match's frames, turn by turn), `training:<run id>` (a
training run's iterations and status changes), and, reserved for events yet to come,
`evolution:<run id>`.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, ClassVar, Literal
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer
from redis.connection import parse_url
from sqlalchemy.engine import make_url

from shared.config import Settings, get_settings
from shared.jsonsafe import storable
from shared.states import JobStatus, MatchKind, MatchStatus, TrainingStage

CHANNEL_PREFIX = "arena:events:"
TOPIC_MATCHES = "matches"
_NAMESPACE = re.compile(r"[A-Za-z0-9_.~%-]+")
"""A namespace: the settings' (letters, digits, `_.-`) or a derived one (a database name quoted for
a URL): no `:` (it ends the namespace), no whitespace, nothing a Redis pattern reads (`*?[]\\`)."""


def match_topic(match_id: uuid.UUID | str) -> str:
    """The topic of one match's own stream: its frames, in `match.frames` batches of played turns."""
    return f"match:{match_id}"


def training_topic(run_id: uuid.UUID | str) -> str:
    """The topic of one training run: `training.progress` per iteration, `training.status` per change."""
    return f"training:{run_id}"


def evolution_topic(run_id: uuid.UUID | str) -> str:
    return f"evolution:{run_id}"


def namespace_of(settings: Settings, redis_url: str | None = None) -> str:
    """The namespace of a deployment's event channels: `events_namespace`, or when that is empty
    `<PostgreSQL database name>.<Redis database number>` of `database_url` and of `redis_url`
    (default: the events Redis). Pub/sub reaches every client of a Redis server whatever database
    it selected, so without this two deployments on one server (different Redis databases, as
    their Celery queues need anyway, or different PostgreSQL databases) would hear each other. Host
    names are left out: the processes of one deployment may reach the same servers by other names."""
    if settings.events_namespace:
        return settings.events_namespace
    url = redis_url or settings.events_redis_url or settings.redis_url
    redis_db = parse_url(url).get("db", 0)  # type: ignore[no-untyped-call]  # redis-py's own parser
    database = make_url(settings.database_url).database or ""
    return f"{quote(database, safe='')}.{redis_db}"


def channel_prefix(namespace: str | None = None) -> str:
    """What every channel of a namespace starts with (default: this process's, from Settings)."""
    namespace = namespace_of(get_settings()) if namespace is None else namespace
    if not _NAMESPACE.fullmatch(namespace):
        raise ValueError(f"invalid event namespace {namespace!r}")
    return f"{CHANNEL_PREFIX}{namespace}:"


def channel(topic: str, namespace: str | None = None) -> str:
    """The Redis channel (or, with `*`, channel pattern) that carries a topic in a namespace
    (default: this process's, from Settings)."""
    if not topic or any(ch.isspace() for ch in topic):
        raise ValueError(f"invalid event topic {topic!r}")
    return channel_prefix(namespace) + topic


def topic_family(topic: str) -> str:
    """`training:<id>` -> `training`: a metrics label with a bounded number of values."""
    return topic.split(":", 1)[0]


class EventType(StrEnum):
    MATCH_STARTED = "match.started"
    MATCH_FINISHED = "match.finished"
    MATCH_FRAMES = "match.frames"
    TRAINING_PROGRESS = "training.progress"
    TRAINING_STATUS = "training.status"


class MalformedEvent(ValueError):
    """A message that is not an event this process knows (bad JSON, unknown type, invalid fields)."""


_CLASSES: dict[EventType, type[Event]] = {}
"""Every concrete event class by its type; filled as the classes are defined."""


def _now() -> datetime:
    return datetime.now(UTC)


class Event(BaseModel):
    """The base of every event. Subclasses set `type` to their own Literal member and `topic`."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    type: EventType
    version: int = 1
    """Bumped by the publisher when an event's fields change incompatibly; added fields keep it."""
    timestamp: datetime = Field(default_factory=_now)
    """When the publisher created the event (UTC)."""

    droppable: ClassVar[bool] = False
    """True for a stream whose next event supersedes the last (live frames): when the publisher's
    queue is full it drops these first, so they never crowd out the events that are news."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        event_type = cls.model_fields["type"].default
        if not isinstance(event_type, EventType):
            return  # an abstract intermediate class
        known = _CLASSES.get(event_type)
        if known is not None and known.__qualname__ != cls.__qualname__:
            raise TypeError(f"event type {event_type} is taken by {known.__qualname__}")
        _CLASSES[event_type] = cls

    @property
    def topic(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} names no topic")

    def to_json(self) -> bytes:
        return self.model_dump_json().encode()


def event_classes() -> dict[EventType, type[Event]]:
    """Every registered event class by its type (for schemas and documentation)."""
    return dict(_CLASSES)


def parse_event(data: bytes | str) -> Event:
    """The typed event in a message; MalformedEvent for anything else."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedEvent(f"not JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise MalformedEvent("not a JSON object")
    try:
        event_class = _CLASSES[EventType(str(raw.get("type")))]
    except (ValueError, KeyError):
        raise MalformedEvent(f"unknown event type {raw.get('type')!r}") from None
    try:
        return event_class.model_validate(raw)
    except ValidationError as exc:
        raise MalformedEvent(f"invalid {event_class.__name__}: {exc.error_count()} errors") from None


class RatingSnapshot(BaseModel):
    model_config = ConfigDict(frozen=True)

    mu: float
    sigma: float
    ordinal: float
    """mu - 3 sigma: what the leaderboard sorts by."""


class MatchSeat(BaseModel):
    model_config = ConfigDict(frozen=True)

    slot: int
    bot_id: uuid.UUID
    name: str


class SeatResult(MatchSeat):
    rank: int | None = None
    """0 is first; equal ranks are a draw. None when the match failed."""
    score: float | None = None
    rating_before: RatingSnapshot | None = None
    """Set only when the match was rated."""
    rating_after: RatingSnapshot | None = None


class MatchEvent(Event):
    """Events of one match, published on the `matches` topic."""

    match_id: uuid.UUID
    game: str
    kind: MatchKind

    @property
    def topic(self) -> str:
        return TOPIC_MATCHES


class MatchStarted(MatchEvent):
    """A worker claimed the match and starts playing it. A match that is handed to another worker
    (its first one died) starts again with a higher `attempt`."""

    type: Literal[EventType.MATCH_STARTED] = EventType.MATCH_STARTED
    rated: bool
    """Whether the match is meant to be rated; MatchFinished says whether it was."""
    attempt: int
    participants: list[MatchSeat]


class MatchFinished(MatchEvent):
    """A match ended: finished (ranked, maybe rated) or failed (`error` says why)."""

    type: Literal[EventType.MATCH_FINISHED] = EventType.MATCH_FINISHED
    status: Literal[MatchStatus.FINISHED, MatchStatus.FAILED]
    rated: bool
    """Whether ratings changed: a rated match with a bot that failed its pre-match check is not."""
    turns: int | None = None
    end_reason: str | None = None
    error: str | None = None
    """Why it failed, or why a finished match was not rated; public text, like the match's error."""
    participants: list[SeatResult]


class TrainingEvent(Event):
    """Events of one training run, on the run's own topic (`training:<run id>`)."""

    run_id: uuid.UUID
    status: JobStatus
    """The run's status (its job's) when the event was published."""
    iteration: int
    global_step: int
    stage: TrainingStage

    @property
    def topic(self) -> str:
        return training_topic(self.run_id)


class TrainingProgress(TrainingEvent):
    """One training iteration done, published by the trainer worker right after it (the row in
    `training_metrics` is written first). `metrics` is the iteration's metrics dict, as the API's
    metrics series stores it: losses, entropy, win rates per opponent kind, SPS, learning rate...
    (NaN and infinities are null)."""

    type: Literal[EventType.TRAINING_PROGRESS] = EventType.TRAINING_PROGRESS
    metrics: dict[str, Any]


class TrainingStatus(TrainingEvent):
    """A run's status changed: created (queued), a chunk started (running), a chunk ended (queued
    for the next, stopped, finished, failed), a stop asked (stopping), resumed (queued)."""

    type: Literal[EventType.TRAINING_STATUS] = EventType.TRAINING_STATUS
    error: str | None = None
    """Why the run failed (the job's error), when it did."""


MAX_LIVE_ACTION_BYTES = 16 * 1024
"""An action larger than this (as JSON) travels as null, as the stored replay keeps it
(shared.games.replay.MAX_REPLAY_ACTION_BYTES): a bot must not flood every viewer."""
ACTION_MAX_DEPTH = 32
"""The deepest action a bot may send (shared.games.replay); deeper parts travel as null."""


class MatchFrames(Event):
    """Played turns of a running match, on the match's own topic (`match:<id>`): the frames they
    produced, their game events and the raw actions each player sent (null: none, or too large).

    Published by the match runner for viewers of a live match, a batch of consecutive turns at a
    time (every turn while turns are slow, about ten batches a second while they are fast): `turn`
    is the index of the first turn (the replay's `turns[turn]`) and `actions` has one entry per
    turn of the batch, so a viewer that joins late knows where it is.
    """

    type: Literal[EventType.MATCH_FRAMES] = EventType.MATCH_FRAMES
    droppable: ClassVar[bool] = True
    match_id: uuid.UUID
    game: str
    turn: int
    """The first turn of this batch."""
    frames: list[Any]
    """Every frame the batch's turns produced, in order."""
    events: list[Any]
    actions: list[list[Any]]
    """Per turn of the batch, per player: the raw action (the replay's `turns[i].actions`)."""

    @property
    def topic(self) -> str:
        return match_topic(self.match_id)

    @field_serializer("actions")
    def _readable_actions(self, actions: list[list[Any]]) -> list[list[Any]]:
        """Serialised by the publisher's thread, never the match's: what a bot sent is made strict
        JSON (no NaN, no lone surrogates), and an oversized action becomes null."""
        return [[_readable_action(action) for action in turn] for turn in actions]


def _readable_action(action: Any) -> Any:
    if action is None or isinstance(action, bool | int):
        return action
    try:  # the common case, in C: already strict JSON (no NaN, no lone surrogate), small enough
        size = len(_STRICT.encode(action).encode())
    except (ValueError, TypeError, RecursionError):  # UnicodeEncodeError is a ValueError
        action = storable(action, max_depth=ACTION_MAX_DEPTH)
        size = len(json.dumps(action, separators=(",", ":"), ensure_ascii=False).encode())
    return None if size > MAX_LIVE_ACTION_BYTES else action


_STRICT = json.JSONEncoder(separators=(",", ":"), allow_nan=False, ensure_ascii=False)
