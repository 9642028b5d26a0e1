from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from services.evolver.llm import LlmClient
from tests.support.fake_llm import TEST_PRICE, FakeLlmServer


@pytest.fixture
def fake() -> Iterator[FakeLlmServer]:
    server = FakeLlmServer()
    yield server
    server.close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_client(fake: FakeLlmServer, sleeps: list[float]) -> Iterator[Callable[..., LlmClient]]:
    made: list[LlmClient] = []

    def _make(**overrides: Any) -> LlmClient:
        options: dict[str, Any] = {
            "sleep": sleeps.append,
            "rng": random.Random(0),
            "backoff_base_s": 0.01,
            "price_overrides": TEST_PRICE,
        }
        options.update(overrides)
        client = LlmClient(fake.url, "test-key-0123456789", **options)
        made.append(client)
        return client

    yield _make
    for client in made:
        client.close()
