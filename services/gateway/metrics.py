"""Prometheus metrics: request counts and latency per route template, plus platform gauges
(matches by status, active bots) read from the database at scrape time so they are never stale."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shared.db.models import Bot, Match
from shared.db.session import get_sessionmaker
from shared.states import BotStatus, MatchStatus

log = logging.getLogger("services.gateway.metrics")


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

    def render(self) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)


class PlatformCollector(Collector):
    def collect(self) -> Iterator[GaugeMetricFamily]:
        matches = GaugeMetricFamily("arena_matches", "Matches by status", labels=["status"])
        bots = GaugeMetricFamily("arena_active_bots", "Active bots by game", labels=["game"])
        try:
            with get_sessionmaker()() as session:
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
            log.warning("cannot read platform gauges: %s", exc)
            return
        for status in MatchStatus:
            matches.add_metric([status], float(by_status.get(status, 0)))
        for game, count in sorted(by_game.items()):
            bots.add_metric([game], float(count))
        yield matches
        yield bots

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(())


class MetricsMiddleware:
    """Labels by route template (`/api/v1/bots/{bot_id}`), never the raw path, to bound cardinality."""

    def __init__(self, app: ASGIApp, metrics: GatewayMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def tracking_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        finally:
            template = route_template(scope)
            method = scope.get("method", "GET")
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - started)


def route_template(scope: Scope) -> str:
    """The full template of the matched route. A route inside included routers knows only its own
    tail (`/games/{name}`), so the prefix is taken from the same number of leading path segments.
    A mounted app (static files) has no route; its mount path is what the root path gained."""
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
