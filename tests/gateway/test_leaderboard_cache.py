"""The leaderboard's page cache: one build per page and period however many ask at once, and
dropped at once by a rated match's end or by a write through the same process."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.orm import Session

from services.gateway.leaderboard.cache import MAX_PAGES, LeaderboardCache, PageKey
from services.gateway.leaderboard.fast_path import page_key
from shared.db.models import Rating
from shared.events import EventPublisher, MatchFinished
from shared.states import MatchKind, MatchStatus
from tests.support.accounts import Account, unique
from tests.support.gateway import ADMIN_KEY, DECIDE_SOURCE

BATTLE = PageKey("battle", False, 50, 0)
RACE = PageKey("podracing", False, 50, 0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def counting_build(body: bytes, delay: float = 0.0) -> tuple[Callable[[], asyncio.Future[bytes]], list[int]]:
    """A build that takes `delay` seconds and counts its calls."""
    calls: list[int] = []

    def build() -> asyncio.Future[bytes]:
        calls.append(1)
        made = body + str(len(calls)).encode()

        async def slow() -> bytes:
            await asyncio.sleep(delay)
            return made

        return asyncio.ensure_future(slow())

    return build, calls


def test_concurrent_requests_share_one_build_until_the_page_expires() -> None:
    clock = Clock()
    cache = LeaderboardCache(2.0, clock=clock)
    build, calls = counting_build(b"board", delay=0.05)

    async def scenario() -> None:
        bodies = await asyncio.gather(*(cache.page(BATTLE, build) for _ in range(50)))
        assert set(bodies) == {b"board1"}
        assert len(calls) == 1
        clock.now += 1.9
        assert await cache.page(BATTLE, build) == b"board1"
        assert len(calls) == 1
        assert await cache.page(RACE, build) == b"board2"  # another key is another page
        clock.now += 0.2  # expired: the old page answers while one refresh runs
        stale = await asyncio.gather(*(cache.page(BATTLE, build) for _ in range(20)))
        assert set(stale) == {b"board1"}
        assert len(calls) == 3
        await asyncio.sleep(0.1)  # the refresh is done
        assert await cache.page(BATTLE, build) == b"board3"
        assert cache.builds == 3

    asyncio.run(scenario())


def test_ready_answers_what_page_would_answer_at_once_and_never_builds() -> None:
    """The fast path's view of the cache: a fresh page; an expired one only while its refresh is
    under way and for less than one more period; nothing that needs a build started or waited for."""
    clock = Clock()
    cache = LeaderboardCache(2.0, clock=clock)
    build, calls = counting_build(b"board", delay=0.05)

    async def scenario() -> None:
        assert cache.ready(BATTLE) is None
        assert not calls  # nothing cached: the endpoint builds
        assert await cache.page(BATTLE, build) == b"board1"
        assert cache.ready(BATTLE) == b"board1"
        assert cache.ready(RACE) is None
        clock.now += 2.1
        assert cache.ready(BATTLE) is None
        assert len(calls) == 1  # expired, no refresh: not started here
        refreshing = asyncio.ensure_future(cache.page(BATTLE, build))
        await asyncio.sleep(0.01)  # the refresh has started (it takes 0.05 s)
        assert len(calls) == 2
        assert cache.ready(BATTLE) == b"board1"  # the old page while it refreshes
        clock.now += 1.95  # 2.05 s past its expiry
        assert cache.ready(BATTLE) is None  # too old even while refreshing: `page` would wait
        assert await refreshing == b"board1"
        await asyncio.sleep(0.1)
        assert cache.ready(BATTLE) == b"board2"
        cache.invalidate("battle")
        assert cache.ready(BATTLE) is None
        assert cache.ready_served == 3

    asyncio.run(scenario())


def test_a_page_expired_for_more_than_one_more_period_is_waited_for_not_served() -> None:
    clock = Clock()
    cache = LeaderboardCache(2.0, clock=clock)
    build, calls = counting_build(b"page", delay=0.02)

    async def scenario() -> None:
        assert await cache.page(BATTLE, build) == b"page1"
        clock.now += 4.1  # expired 2.1 s ago: too old to serve even while refreshing
        assert await cache.page(BATTLE, build) == b"page2"
        assert len(calls) == 2

    asyncio.run(scenario())


def test_a_failed_refresh_keeps_serving_the_expired_page_until_a_refresh_succeeds(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = Clock()
    cache = LeaderboardCache(2.0, clock=clock)
    attempts: list[int] = []

    async def flaky() -> bytes:
        attempts.append(1)
        await asyncio.sleep(0.01)
        if len(attempts) == 2:
            raise RuntimeError("database away")
        return b"good%d" % len(attempts)

    async def scenario() -> None:
        assert await cache.page(BATTLE, flaky) == b"good1"
        clock.now += 2.5
        assert await cache.page(BATTLE, flaky) == b"good1"  # refresh 1 starts, and fails
        await asyncio.sleep(0.05)
        assert await cache.page(BATTLE, flaky) == b"good1"  # refresh 2 starts
        await asyncio.sleep(0.05)
        assert await cache.page(BATTLE, flaky) == b"good3"
        assert len(attempts) == 3

    asyncio.run(scenario())
    assert "database away" in caplog.text


def test_invalidating_a_game_drops_its_pages_and_the_build_under_way() -> None:
    cache = LeaderboardCache(60.0, clock=Clock())
    build, calls = counting_build(b"v", delay=0.05)

    async def scenario() -> None:
        await cache.page(BATTLE, build)
        await cache.page(RACE, build)
        cache.invalidate("battle")
        assert await cache.page(RACE, build) == b"v2"  # the other game's page is kept
        assert await cache.page(BATTLE, build) == b"v3"
        # A build that started before the change: its waiters get it, but it is not kept, and a
        # request after the change does not join it.
        early = asyncio.ensure_future(cache.page(PageKey("battle", True, 50, 0), build))
        await asyncio.sleep(0.01)
        cache.invalidate()
        late = await cache.page(PageKey("battle", True, 50, 0), build)
        assert await early == b"v4"
        assert late == b"v5"
        assert await cache.page(PageKey("battle", True, 50, 0), build) == b"v5"
        assert len(calls) == 5

    asyncio.run(scenario())


def test_a_failed_build_reaches_every_waiter_and_is_not_kept() -> None:
    cache = LeaderboardCache(60.0, clock=Clock())
    attempts: list[int] = []

    async def failing() -> bytes:
        attempts.append(1)
        await asyncio.sleep(0.02)
        if len(attempts) == 1:
            raise RuntimeError("database away")
        return b"ok"

    async def scenario() -> None:
        results = await asyncio.gather(
            *(cache.page(BATTLE, failing) for _ in range(5)), return_exceptions=True
        )
        assert all(isinstance(r, RuntimeError) for r in results)
        assert len(attempts) == 1
        assert await cache.page(BATTLE, failing) == b"ok"
        assert len(attempts) == 2

    asyncio.run(scenario())


def test_a_client_that_leaves_does_not_cancel_the_build_for_the_others() -> None:
    cache = LeaderboardCache(60.0, clock=Clock())
    build, calls = counting_build(b"b", delay=0.1)

    async def scenario() -> None:
        first = asyncio.ensure_future(cache.page(BATTLE, build))
        await asyncio.sleep(0.01)
        second = asyncio.ensure_future(cache.page(BATTLE, build))
        await asyncio.sleep(0.01)
        first.cancel()
        assert await second == b"b1"
        assert len(calls) == 1
        assert await cache.page(BATTLE, build) == b"b1"

    asyncio.run(scenario())


def test_no_cache_time_builds_every_page_and_the_cache_stays_bounded() -> None:
    build, calls = counting_build(b"x")

    async def scenario() -> None:
        uncached = LeaderboardCache(0)
        await uncached.page(BATTLE, build)
        await uncached.page(BATTLE, build)
        assert len(calls) == 2
        bounded = LeaderboardCache(60.0, clock=Clock())
        for offset in range(MAX_PAGES + 20):
            await bounded.page(PageKey("battle", False, 1, offset), build)
        assert bounded.size == MAX_PAGES

    asyncio.run(scenario())


def _finished(game: str, rated: bool) -> MatchFinished:
    return MatchFinished(
        match_id=uuid.uuid4(),
        game=game,
        kind=MatchKind.LADDER,
        status=MatchStatus.FINISHED,
        rated=rated,
        participants=[],
    )


def _mu(client: TestClient, bot_id: str, params: dict[str, str] | None = None) -> float | None:
    board = client.get("/api/v1/leaderboard/battle", params={"limit": "200", **(params or {})})
    assert board.status_code == 200, board.text
    return next((e["mu"] for e in board.json()["entries"] if e["bot_id"] == bot_id), None)


def test_the_gateway_serves_cached_pages_until_a_rated_match_ends_or_it_handles_a_write(
    client: TestClient,
    make_user: Callable[[str], Account],
    db_session: Session,
    redis_url: str,
) -> None:
    from services.gateway.app import create_app
    from shared.config import get_settings

    owner = make_user("cache")
    bot_id = client.post(
        "/api/v1/bots/hosted",
        json={"name": unique("cached"), "game": "battle", "source": DECIDE_SOURCE},
        headers=owner.headers,
    ).json()["id"]
    settings = get_settings().model_copy(
        update={"leaderboard_cache_s": 300.0, "bootstrap_admin_key": SecretStr(ADMIN_KEY)}
    )
    publisher = EventPublisher(redis_url)
    with TestClient(create_app(settings), raise_server_exceptions=False) as cached:
        first = _mu(cached, bot_id)
        assert first is not None
        row = db_session.get(Rating, uuid.UUID(bot_id))
        assert row is not None
        row.mu, row.ordinal = first + 5.0, row.ordinal + 5.0  # as the match runner would, elsewhere
        db_session.commit()
        assert _mu(cached, bot_id) == first  # the page built before the change is still served
        assert cached.get("/api/v1/leaderboard/battle", params={"limit": "199"}).status_code == 200

        publisher.publish(_finished("battle", rated=False))
        publisher.flush(5)
        time.sleep(0.5)
        assert _mu(cached, bot_id) == first  # an unrated match changes no rating

        deadline = time.monotonic() + 15
        while _mu(cached, bot_id) != first + 5.0:  # until the subscription has heard one
            assert time.monotonic() < deadline, "a rated match.finished did not refresh the page"
            publisher.publish(_finished("battle", rated=True))
            publisher.flush(5)
            time.sleep(0.2)

        # A write through this process: its author sees the result at once.
        assert _mu(cached, bot_id) is not None
        answer = cached.post(f"/api/v1/bots/{bot_id}/deactivate", headers=owner.headers)
        assert answer.status_code == 200, answer.text
        assert _mu(cached, bot_id) is None
        assert _mu(cached, bot_id, {"include_inactive": "true"}) == first + 5.0
    publisher.close()


@pytest.mark.parametrize("path", ["/api/v1/leaderboard/chess", "/api/v1/leaderboard/battle?limit=0"])
def test_bad_leaderboard_requests_are_still_refused(client: TestClient, path: str) -> None:
    assert client.get(path).status_code in (404, 422)


@pytest.mark.parametrize(
    ("query", "key"),
    [
        (b"", PageKey("battle", False, 50, 0)),
        (b"limit=200&offset=7", PageKey("battle", False, 200, 7)),
        (b"include_inactive=true&limit=1", PageKey("battle", True, 1, 0)),
        (b"offset=2147483647&include_inactive=false", PageKey("battle", False, 50, 2**31 - 1)),
        (b"limit=%32%30", PageKey("battle", False, 20, 0)),
    ],
)
def test_the_fast_path_reads_plain_queries(query: bytes, key: PageKey) -> None:
    assert page_key("/api/v1/leaderboard/battle", query) == key


@pytest.mark.parametrize(
    "query",
    [
        b"limit=0",
        b"limit=201",
        b"limit=-1",
        b"limit=1.0",
        b"limit=%EF%BC%91",  # a full-width digit: int() would take it, the endpoint may not
        b"offset=2147483648",
        b"limit=10&limit=20",
        b"include_inactive=yes",
        b"include_inactive=True",
        b"include_inactive",
        b"limit=",
        b"sort=mu",
        b"limit=10&",
        b"limit=99999999999",
    ],
)
def test_the_fast_path_leaves_every_other_query_to_the_endpoint(query: bytes) -> None:
    assert page_key("/api/v1/leaderboard/battle", query) is None


def test_cached_pages_are_answered_before_routing_exactly_as_the_endpoint_answers(
    make_user: Callable[[str], Account],
) -> None:
    """Differential: the first request of a page is the endpoint's (it builds the page), the second
    the fast path's; status, headers and body agree. What the fast path does not read goes on to
    the endpoint, which answers it (errors included) as before."""
    from services.gateway.app import create_app
    from shared.config import get_settings

    owner = make_user("fast")
    settings = get_settings().model_copy(
        update={"leaderboard_cache_s": 300.0, "bootstrap_admin_key": SecretStr(ADMIN_KEY)}
    )
    app = create_app(settings)
    cache: LeaderboardCache = app.state.leaderboard_cache
    with TestClient(app, raise_server_exceptions=False) as cached:
        cached.post(
            "/api/v1/bots/hosted",
            json={"name": unique("fast"), "game": "battle", "source": DECIDE_SOURCE},
            headers=owner.headers,
        ).raise_for_status()
        for query in ("", "?limit=3", "?limit=3&offset=1&include_inactive=true"):
            url = f"/api/v1/leaderboard/battle{query}"
            served, builds = cache.ready_served, cache.builds
            by_endpoint = cached.get(url)
            assert cache.ready_served == served
            assert cache.builds == builds + 1
            fast = cached.get(url)
            assert cache.ready_served == served + 1, url
            assert cache.builds == builds + 1, url
            assert fast.status_code == by_endpoint.status_code == 200
            assert fast.content == by_endpoint.content
            assert fast.json()["entries"] is not None
            assert dict(fast.headers) == dict(by_endpoint.headers)
        served = cache.ready_served
        same_page = cached.get("/api/v1/leaderboard/battle?include_inactive=1&limit=3&offset=1")
        assert same_page.status_code == 200
        assert cache.ready_served == served  # the endpoint's
        assert (
            same_page.content
            == cached.get("/api/v1/leaderboard/battle?limit=3&offset=1&include_inactive=true").content
        )
        for url, status in (
            ("/api/v1/leaderboard/battle?limit=0", 422),
            ("/api/v1/leaderboard/battle?limit=10&limit=x", 422),
            ("/api/v1/leaderboard/chess", 404),
            ("/api/v1/leaderboard/battle/extra", 404),
        ):
            served = cache.ready_served
            answer = cached.get(url)
            assert answer.status_code == status, url
            assert cache.ready_served == served, url
            assert "detail" in answer.json()
        # A refused write keeps the pages; a write through this process drops them, and the next
        # read is the endpoint's again.
        served, builds = cache.ready_served, cache.builds
        assert cached.post("/api/v1/bots/hosted", json={}, headers=owner.headers).status_code == 422
        assert cached.get("/api/v1/leaderboard/battle").status_code == 200
        assert cache.ready_served == served + 1
        assert cache.builds == builds
        cached.post(
            "/api/v1/bots/hosted",
            json={"name": unique("fast"), "game": "battle", "source": DECIDE_SOURCE},
            headers=owner.headers,
        ).raise_for_status()
        assert cached.get("/api/v1/leaderboard/battle").status_code == 200
        assert cache.ready_served == served + 1
        assert cache.builds == builds + 1
        # Counted under the endpoint's route, fast or not.
        metrics = cached.get("/metrics").text
        ok = 'arena_http_requests_total{method="GET",route="/api/v1/leaderboard/{game}",status="200"}'
        counted = next(line for line in metrics.splitlines() if line.startswith(ok))
        assert float(counted.split()[-1]) == 10.0  # every 200 of the leaderboard above
        assert 'route="unmatched",status="200"' not in metrics
