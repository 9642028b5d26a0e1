"""Test fixtures against real services: a fresh PostgreSQL database migrated with Alembic, a Redis
database of its own, and helpers that run real processes (uvicorn, celery workers, bots).

The environment is set before anything imports `shared.config`, so every process the tests start
inherits the same settings.

Tests send nothing off this machine: bot host names resolve from a static table
(`ARENA_STATIC_HOSTS`, inherited by every worker and gateway the tests start), and in this process
any call to the system resolver for a name that is not an IP literal fails the test loudly.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
import redis
from sqlalchemy.engine import make_url

from shared.db import embedded
from shared.db.migrations import migrate
from shared.ports import free_port as free_port

ROOT = Path(__file__).resolve().parent.parent
_RUN_ID = f"{os.getpid()}_{secrets.token_hex(3)}"
ADMIN_URL = os.environ.get("ARENA_TEST_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")
TEST_DB_NAME = f"arena_test_{_RUN_ID}"
TEST_DATABASE_URL = f"postgresql+psycopg://postgres@127.0.0.1:5432/{TEST_DB_NAME}"
TEST_REDIS_DB = int(os.environ.get("ARENA_TEST_REDIS_DB", "9"))
TEST_REDIS_URL = f"redis://127.0.0.1:6379/{TEST_REDIS_DB}"
TEST_SECRET_KEY = "test-secret-key-" + secrets.token_hex(16)

os.environ.update(
    {
        "ARENA_DATABASE_URL": TEST_DATABASE_URL,
        "ARENA_REDIS_URL": TEST_REDIS_URL,
        "ARENA_SECRET_KEY": TEST_SECRET_KEY,
        "ARENA_DEV_MODE": "1",
        "ARENA_DATA_DIR": str(ROOT / ".arena-data" / f"test_{_RUN_ID}"),
        "ARENA_STATIC_HOSTS": json.dumps({"localhost": ["127.0.0.1", "::1"]}),
        # Bots may only live on loopback: even a generated endpoint with a public IP literal
        # (schemathesis) is refused before any connection leaves the machine.
        "ARENA_BOT_NETWORKS": json.dumps(["127.0.0.0/8", "::1/128"]),
    }
)


class SystemResolverUsed(RuntimeError):
    """A test asked the system resolver about a name (a DNS query could leave the machine).

    Deliberately not an OSError, so code that handles resolution failures cannot swallow it."""


_resolver_calls: list[str] = []


def _is_ip_literal(host: object) -> bool:
    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _guarded(real: Callable[..., object]) -> Callable[..., object]:
    def lookup(host: object, *args: object, **kwargs: object) -> object:
        if not _is_ip_literal(host):
            _resolver_calls.append(repr(host))
            raise SystemResolverUsed(
                f"test asked the system resolver about {host!r}: use an IP literal, or inject a "
                "resolver (shared.botclient.ssrf.StaticResolver, ARENA_STATIC_HOSTS)"
            )
        return real(host, *args, **kwargs)

    return lookup


def _no_reverse_lookup(_address: object) -> object:
    """Reverse lookups (http.server's getfqdn) get "unknown" here instead of a query."""
    raise socket.herror(1, "reverse lookups are disabled in tests")


def pytest_sessionstart(session: pytest.Session) -> None:  # noqa: ARG001 (pytest calls hooks by keyword)
    """From now on, in this process, only IP literals reach the system resolver."""
    socket.getaddrinfo = _guarded(socket.getaddrinfo)  # type: ignore[assignment]
    socket.gethostbyname = _guarded(socket.gethostbyname)  # type: ignore[assignment]
    socket.gethostbyname_ex = _guarded(socket.gethostbyname_ex)  # type: ignore[assignment]
    socket.gethostbyaddr = _no_reverse_lookup  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _no_system_dns() -> Iterator[None]:
    """Fail a test whose code asked the system resolver about a name, even if it caught the error."""
    before = len(_resolver_calls)
    yield
    asked = _resolver_calls[before:]
    if asked:
        pytest.fail(f"the system resolver was asked about {', '.join(asked)}", pytrace=False)


def _pg_available() -> bool:
    try:
        with psycopg.connect(ADMIN_URL, connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def create_database(name: str) -> str:
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"


def drop_database(name: str) -> None:
    embedded.drop_database(make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False))


@pytest.fixture(scope="session")
def database_url() -> Iterator[str]:
    """A fresh database for this test run, migrated to head with Alembic."""
    if not _pg_available():
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
def db_session(database_url: str):  # type: ignore[no-untyped-def]  # noqa: ARG001 (requested for its side effect)
    from shared.db.session import get_sessionmaker

    session = get_sessionmaker()()
    try:
        yield session
    finally:
        session.rollback()
        session.close()


class ManagedProcess:
    """A real child process in its own process group; always killed (with its children) on exit."""

    def __init__(
        self, args: list[str], name: str, env: dict[str, str] | None = None, cwd: Path = ROOT
    ) -> None:
        self.name = name
        self.log_path = Path(os.environ["ARENA_DATA_DIR"]) / "logs" / f"{name}-{secrets.token_hex(3)}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            args,
            cwd=cwd,
            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"},
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_until(self, check: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(
                    f"{self.name} exited with {self.proc.returncode} before {what}:\n{self.log()}"
                )
            try:
                if check():
                    return
            except Exception:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{self.name}: {what} not reached in {timeout}s:\n{self.log()[-4000:]}")

    def wait_http(self, url: str, timeout: float = 30.0) -> None:
        self.wait_until(lambda: httpx.get(url, timeout=2).status_code < 500, timeout, f"{url} answering")

    def wait_log(self, needle: str, timeout: float = 30.0) -> None:
        self.wait_until(lambda: needle in self.log(), timeout, f"log line {needle!r}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        if self.alive():
            self.kill(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        self._log.close()


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


PYTHON = sys.executable
