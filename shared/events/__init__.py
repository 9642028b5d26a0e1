"""Live events on Redis pub/sub: typed, published without ever blocking the publisher, and read
by the gateway (and anyone else) as an async stream. See docs/events.md.

    from shared.events import MatchStarted, publish
    publish(MatchStarted(...))                      # queued; sent by a background thread

    async with EventStream([TOPIC_MATCHES]) as stream:
        async for event in stream: ...
"""

from shared.events.models import (
    CHANNEL_PREFIX,
    TOPIC_MATCHES,
    Event,
    EventType,
    MalformedEvent,
    MatchEvent,
    MatchFinished,
    MatchFrames,
    MatchSeat,
    MatchStarted,
    RatingSnapshot,
    SeatResult,
    TrainingEvent,
    TrainingProgress,
    TrainingStatus,
    channel,
    channel_prefix,
    event_classes,
    evolution_topic,
    match_topic,
    namespace_of,
    parse_event,
    topic_family,
    training_topic,
)
from shared.events.publish import PUBLISHED, EventPublisher, PublishOutcome, get_publisher, publish
from shared.events.subscribe import RECEIVED, EventStream, subscribe

__all__ = [
    "CHANNEL_PREFIX",
    "PUBLISHED",
    "RECEIVED",
    "TOPIC_MATCHES",
    "Event",
    "EventPublisher",
    "EventStream",
    "EventType",
    "MalformedEvent",
    "MatchEvent",
    "MatchFinished",
    "MatchFrames",
    "MatchSeat",
    "MatchStarted",
    "PublishOutcome",
    "RatingSnapshot",
    "SeatResult",
    "TrainingEvent",
    "TrainingProgress",
    "TrainingStatus",
    "channel",
    "channel_prefix",
    "event_classes",
    "evolution_topic",
    "get_publisher",
    "match_topic",
    "namespace_of",
    "parse_event",
    "publish",
    "subscribe",
    "topic_family",
    "training_topic",
]
