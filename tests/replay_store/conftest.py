"""Fixtures for the replay stores: a real S3-compatible server (moto's, on loopback, in its own
process) and a bucket per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.ports import free_port
from tests.support.processes import PYTHON, ManagedProcess
from tests.support.s3 import new_bucket


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """An S3 API on 127.0.0.1 (moto's server: in memory, gone when the process ends)."""
    port = free_port()
    server = ManagedProcess([PYTHON, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], "s3-server")
    url = f"http://127.0.0.1:{port}"
    try:
        server.wait_http(f"{url}/moto-api/", timeout=60)
        yield url
    finally:
        server.stop()


@pytest.fixture
def bucket() -> str:
    """A bucket name of this test's own; the store creates the bucket on its first write."""
    return new_bucket()
