"""Test fixtures against real services: a fresh PostgreSQL database migrated with Alembic, a Redis
database of its own, real processes torn down after each test, and the fixtures several test
directories share (the gateway and its users, the match runner's bots).

The environment (tests/support/environment.py) is set before anything imports `shared.config`, so
every process the tests start inherits the same settings. The modules imported here must not read
the settings when imported (shared.queue does: it builds the Celery app).

Tests send nothing off this machine: bot host names resolve from a static table
(`ARENA_STATIC_HOSTS`, inherited by every worker and gateway the tests start), and in this process
any call to the system resolver for a name that is not an IP literal fails the test loudly.
"""

from __future__ import annotations

import gc
import os
import uuid
from collections.abc import Callable, Iterator

import pytest
import redis
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.orm import Session

from shared.config import get_settings
from shared.crypto import encrypt_secret
from shared.db.migrations import migrate
from shared.db.models import Bot, User
from shared.db.session import session_scope
from shared.ports import free_port
from shared.protocol.signing import generate_secret
from tests.support.accounts import Account, unique
from tests.support.bot_processes import RunningBot, start_bot
from tests.support.bot_servers import BotServer, runner_policy, serve_policy
from tests.support.databases import create_database, drop_database, pg_available
from tests.support.environment import (
    ADMIN_URL,
    TEST_DATABASE_URL,
    TEST_DB_NAME,
    TEST_ENVIRONMENT,
    TEST_REDIS_URL,
)
from tests.support.gateway import ADMIN_KEY
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.resolver import guard_system_resolver, resolver_calls

os.environ.update(TEST_ENVIRONMENT)


def pytest_sessionstart(session: pytest.Session) -> None:  # noqa: ARG001 (pytest calls hooks by keyword)
    guard_system_resolver()


@pytest.fixture(autouse=True)
def _no_system_dns() -> Iterator[None]:
    """Fail a test whose code asked the system resolver about a name, even if it caught the error."""
    before = len(resolver_calls)
    yield
    asked = resolver_calls[before:]
    if asked:
        pytest.fail(f"the system resolver was asked about {', '.join(asked)}", pytrace=False)


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """A fresh database for this test run, migrated to head with Alembic."""
    if not pg_available():
        pytest.fail(f"PostgreSQL is not reachable at {ADMIN_URL}; start it (see README) and retry")
    create_database(TEST_DB_NAME)
    migrate(TEST_DATABASE_URL)
    yield TEST_DATABASE_URL
    from shared.db.session import get_engine

    get_engine().dispose()
    drop_database(TEST_DB_NAME)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    client = redis.Redis.from_url(TEST_REDIS_URL)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.fail("Redis is not reachable at 127.0.0.1:6379; start it (see README) and retry")
    client.flushdb()
    yield TEST_REDIS_URL
    client.flushdb()


@pytest.fixture
def db_session(database_url: str) -> Iterator[Session]:  # noqa: ARG001 (requested for its side effect)
    from shared.db.session import get_sessionmaker

    session = get_sessionmaker()()
    try:
        yield session
    finally:
        session.rollback()
        session.close()


@pytest.fixture
def spawn() -> Iterator[Callable[..., ManagedProcess]]:
    """Start real processes that are torn down after the test, whatever happens."""
    started: list[ManagedProcess] = []

    def _spawn(args: list[str], name: str, env: dict[str, str] | None = None) -> ManagedProcess:
        process = ManagedProcess(args, name, env)
        started.append(process)
        return process

    yield _spawn
    for process in reversed(started):
        process.stop()


# --------------------------------------------------------------------------- the gateway
# Here, not in tests/gateway/conftest.py: tests/bots, tests/live and tests/trainer use them too.


@pytest.fixture(scope="session")
def client(database_url: str, redis_url: str) -> Iterator[TestClient]:  # noqa: ARG001 (requested for its side effect)
    """The real app, in-process through Starlette's test client (so logs can be captured)."""
    from services.gateway.app import create_app

    settings = get_settings().model_copy(update={"bootstrap_admin_key": SecretStr(ADMIN_KEY)})
    with TestClient(create_app(settings), raise_server_exceptions=False) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def gateway_url(client: TestClient) -> Iterator[str]:  # noqa: ARG001 (requested for its side effect)
    """The same gateway as a real uvicorn process on the same database and Redis (no worker runs,
    so matches it creates stay queued)."""
    port = free_port()
    process = ManagedProcess(
        [PYTHON, "-m", "uvicorn", "services.gateway.app:app", "--host", "127.0.0.1", "--port", str(port)],
        "gateway",
        env={"ARENA_BOOTSTRAP_ADMIN_KEY": ADMIN_KEY},
    )
    try:
        url = f"http://127.0.0.1:{port}"
        process.wait_http(f"{url}/health", timeout=60)
        yield url
    finally:
        process.stop()


@pytest.fixture(scope="session")
def admin(client: TestClient) -> Account:
    me = client.get("/api/v1/me", headers={"X-API-Key": ADMIN_KEY})
    assert me.status_code == 200, me.text
    return Account(me.json()["id"], me.json()["name"], ADMIN_KEY)


@pytest.fixture(scope="session")
def make_user(client: TestClient, admin: Account) -> Callable[..., Account]:
    def _make(prefix: str = "user") -> Account:
        answer = client.post("/api/v1/users", json={"name": unique(prefix)}, headers=admin.headers)
        assert answer.status_code == 201, answer.text
        body = answer.json()
        return Account(body["user"]["id"], body["user"]["name"], body["api_key"]["api_key"])

    return _make


@pytest.fixture(scope="session")
def bot_server() -> Iterator[BotServer]:
    """A real protocol-v1 bot (the SDK server with the built-in runner policy) on a loopback port."""
    server, bot = serve_policy(runner_policy)
    yield bot
    server.shutdown()
    server.server_close()


# --------------------------------------------------------------------------- the match runner
# Here, not in tests/match_runner/conftest.py: tests/live, tests/replay_store and tests/gateway use
# them too.


@pytest.fixture(scope="session")
def user_id(database_url: str) -> uuid.UUID:  # noqa: ARG001 (requested for its side effect)
    with session_scope() as session:
        user = User(name=f"runner-tests-{uuid.uuid4().hex[:8]}")
        session.add(user)
        session.flush()
        return user.id


@pytest.fixture(scope="session")
def register_bot(user_id: uuid.UUID) -> Callable[..., uuid.UUID]:
    """Store an HTTP podracing bot of `user_id` straight in the database (no health check)."""

    def _register(
        bot: RunningBot | None = None, *, endpoint: str | None = None, secret: str | None = None
    ) -> uuid.UUID:
        settings = get_settings()
        with session_scope() as session:
            row = Bot(
                owner_id=user_id,
                name=f"{bot.mode if bot else 'bot'}-{uuid.uuid4().hex[:8]}",
                game="podracing",
                kind="http",
                endpoint=endpoint or (bot.endpoint if bot else None),
                secret_encrypted=encrypt_secret(
                    settings, secret or (bot.secret if bot else generate_secret())
                ),
            )
            session.add(row)
            session.flush()
            return row.id

    return _register


@pytest.fixture(scope="module")
def good_bot(database_url: str) -> Iterator[RunningBot]:  # noqa: ARG001 (requested for its side effect)
    bot = start_bot("ok")
    yield bot
    bot.process.stop()


@pytest.fixture
def bot_factory() -> Iterator[Callable[..., RunningBot]]:
    started: list[RunningBot] = []

    def _start(mode: str = "ok", *extra: str) -> RunningBot:
        bot = start_bot(mode, *extra)
        started.append(bot)
        return bot

    yield _start
    for bot in started:
        bot.process.stop()


def pytest_collection_finish(session: pytest.Session) -> None:  # noqa: ARG001 (pytest calls hooks by keyword)
    """What collection imported and built (torch, the app, every test module) lives as long as this
    process: `gc.freeze()` moves it out of the cyclic collector's view, so that the collections
    during the tests, and the several pytest runs at its end, walk only what the tests make."""
    gc.freeze()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup`, xdist sends the tests of an `xdist_group` to one worker and every
    other test anywhere; here a test without a group of its own joins its module's, so that a
    module's tests go to one worker, one after the other (a module fixture then starts once, not
    once per worker that runs one of its tests). It runs in the workers, which collect (xdist sets
    their `loadgroup` option), and first, so that xdist reads the marks it adds."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
