"""Prometheus metrics: request counts and latency per route template, plus platform gauges read
at scrape time, so they are never stale and do not depend on which worker processes run: matches by
status, active bots, long jobs by kind and status, the stalest heartbeat of running work, the LLM
spend every evolution run recorded (from the database), and each Celery queue's backlog (from
Redis). The process's own default-registry metrics (live-event counters, process and Python) are
served alongside. docs/deploy.md, "Metrics, dashboards and alerts", lists them all."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from datetime import datetime

import redis
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.gateway.access_log import log_request
from shared.config import get_settings
from shared.db.models import Bot, EvolutionRun, Job, Match
from shared.db.session import get_sessionmaker
from shared.evolution import EVOLUTION
from shared.logging_throttle import LogThrottle
from shared.outages import describe
from shared.queue import QUEUES
from shared.states import BotStatus, JobStatus, MatchStatus
from shared.training import TRAINING

log = logging.getLogger("services.gateway.metrics")
_scrape_failures = LogThrottle()
"""A scrape every few seconds during an outage: said once a minute, with the count."""


class GatewayMetrics:
    """One registry per app, so several apps in one process (tests) never collide."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "arena_http_requests",
            "HTTP requests by method, route template and status code",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "arena_http_request_duration_seconds",
            "HTTP request latency by method and route template",
            ["method", "route"],
            registry=self.registry,
        )
        self.registry.register(PlatformCollector())
        self.registry.register(QueueCollector())
        self.registry.register(DefaultRegistryCollector())

    def render(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


MATCH_WORK = "match"
"""The `kind` of running matches in `arena_work_heartbeat_age_seconds` (jobs use their job kind)."""
JOB_KINDS = (TRAINING.kind, EVOLUTION.kind)


class PlatformCollector(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        matches = GaugeMetricFamily("arena_matches", "Matches by status", labels=["status"])
        bots = GaugeMetricFamily("arena_active_bots", "Active bots by game", labels=["game"])
        jobs = GaugeMetricFamily(
            "arena_jobs",
            "Long jobs (training and evolution runs) by kind and status",
            labels=["kind", "status"],
        )
        heartbeat = GaugeMetricFamily(
            "arena_work_heartbeat_age_seconds",
            "Seconds since the stalest heartbeat among running work of a kind (match, training, "
            "evolution): how long a worker holding work has been silent; 0 when none runs",
            labels=["kind"],
        )
        spent = GaugeMetricFamily(
            "arena_evolution_spent_usd",
            "LLM spend recorded by every evolution run in the database, in US dollars (delta() over "
            "a day is the day's spend)",
        )
        try:
            with get_sessionmaker()() as session:
                now = session.scalar(select(func.now()))
                stalest: dict[str, datetime | None] = {
                    MATCH_WORK: session.scalar(
                        select(func.min(Match.heartbeat_at)).where(Match.status == MatchStatus.RUNNING)
                    )
                }
                stalest.update(
                    (kind, beat)
                    for kind, beat in session.execute(
                        select(Job.kind, func.min(Job.heartbeat_at))
                        .where(Job.status == JobStatus.RUNNING)
                        .group_by(Job.kind)
                    )
                )
                by_kind: dict[tuple[str, str], int] = {
                    (kind, status): count
                    for kind, status, count in session.execute(
                        select(Job.kind, Job.status, func.count()).group_by(Job.kind, Job.status)
                    )
                }
                spent_usd = session.scalar(select(func.coalesce(func.sum(EvolutionRun.spent_usd), 0.0)))
                by_status: dict[str, int] = {
                    status: count
                    for status, count in session.execute(
                        select(Match.status, func.count()).group_by(Match.status)
                    )
                }
                by_game: dict[str, int] = {
                    game: count
                    for game, count in session.execute(
                        select(Bot.game, func.count())
                        .where(Bot.status == BotStatus.ACTIVE)
                        .group_by(Bot.game)
                    )
                }
        except Exception as exc:  # metrics must answer even while the database is down
            _scrape_failures.log(
                log,
                logging.WARNING,
                ("platform", type(exc).__name__),
                "cannot read platform gauges: %s",
                describe(exc),
            )
            return
        for status in MatchStatus:
            matches.add_metric([status], float(by_status.get(status, 0)))
        for game, count in sorted(by_game.items()):
            bots.add_metric([game], float(count))
        kinds = sorted({*JOB_KINDS, *(kind for kind, _ in by_kind)})
        for kind in kinds:
            for job_status in JobStatus:
                jobs.add_metric([kind, job_status], float(by_kind.get((kind, job_status), 0)))
        for kind in (MATCH_WORK, *kinds):
            beat = stalest.get(kind)
            age = (now - beat).total_seconds() if now is not None and beat is not None else 0.0
            heartbeat.add_metric([kind], max(0.0, age))
        spent.add_metric([], float(spent_usd or 0.0))
        yield from (matches, bots, jobs, heartbeat, spent)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(())


class QueueCollector(Collector):
    """Messages waiting in each Celery queue, read from the broker at scrape time.

    With Celery's Redis transport (kombu) a queue is a Redis list whose key is the queue's name, so
    its backlog is LLEN of that key (shared/queue.py sends no priorities, which would add one list
    per priority). A message a worker has taken and not yet acknowledged is no longer in the list:
    this counts work nobody has started."""

    def __init__(self, redis_url: str | None = None, queues: tuple[str, ...] = QUEUES) -> None:
        self.redis_url = redis_url
        self.queues = queues
        self._client: redis.Redis | None = None

    def _redis(self) -> redis.Redis:
        if self._client is None:
            url = self.redis_url or get_settings().redis_url
            self._client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        return self._client

    def collect(self) -> Iterator[GaugeMetricFamily]:
        lengths = GaugeMetricFamily(
            "arena_queue_length",
            "Messages waiting in a Celery queue (LLEN of the queue's Redis list): queued work no "
            "worker has taken yet",
            labels=["queue"],
        )
        try:
            pipeline = self._redis().pipeline(transaction=False)
            for queue in self.queues:
                pipeline.llen(queue)
            counts = pipeline.execute()
        except redis.RedisError as exc:  # metrics must answer even while the broker is down
            _scrape_failures.log(
                log,
                logging.WARNING,
                ("queues", type(exc).__name__),
                "cannot read queue lengths: %s",
                describe(exc),
            )
            return
        for queue, count in zip(self.queues, counts, strict=True):
            lengths.add_metric([queue], float(count))
        yield lengths

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(())


class DefaultRegistryCollector(Collector):
    """What this process registered in prometheus_client's default registry (the live-event
    counters of shared/events, process and Python metrics), served with the app's own."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()

    def describe(self) -> Iterator[Metric]:
        return iter(())


class StatusRecorder:
    """A `send` that remembers the response's status on the way (500 until one is sent, which is
    what the client gets when the app fails before answering)."""

    __slots__ = ("send", "status")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.status = 500

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        await self.send(message)


class MetricsMiddleware:
    """Counts and times every HTTP request, labelled by route template (`/api/v1/bots/{bot_id}`),
    never the raw path, to bound cardinality; with `access_log`, also writes its access line
    (services/gateway/access_log.py), from the same end of the request."""

    def __init__(self, app: ASGIApp, metrics: GatewayMetrics, access_log: bool = False) -> None:
        self.app = app
        self.metrics = metrics
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        recorder = StatusRecorder(send)
        try:
            await self.app(scope, receive, recorder)
        finally:
            seconds = time.perf_counter() - started
            template = route_template(scope)
            method = scope.get("method", "GET")
            self.metrics.requests.labels(method, template, str(recorder.status)).inc()
            self.metrics.latency.labels(method, template).observe(seconds)
            if self.access_log:
                log_request(scope, recorder.status, seconds)


ROUTE_TEMPLATE = "arena.route_template"
"""The scope key by which a layer that answers before the router (the leaderboard's fast path)
names the route it answered for."""


def route_template(scope: Scope) -> str:
    """The full template of the matched route. A route inside included routers knows only its own
    tail (`/games/{name}`), so the prefix is taken from the same number of leading path segments.
    A mounted app (static files) has no route; its mount path is what the root path gained."""
    named = scope.get(ROUTE_TEMPLATE)
    if named is not None:
        return str(named)
    route_path = getattr(scope.get("route"), "path", None)
    if route_path is None:
        mount = str(scope.get("root_path", ""))[len(str(scope.get("app_root_path", ""))) :]
        return f"{mount}/{{path}}" if mount and "endpoint" in scope else "unmatched"
    segments = scope.get("path", "").split("/")
    tail = route_path.count("/")
    prefix = "/".join(segments[: len(segments) - tail]) if tail else scope.get("path", "")
    return prefix + str(route_path)


def metrics_endpoint(request: Request) -> Response:
    metrics: GatewayMetrics = request.app.state.metrics
    return metrics.render()
