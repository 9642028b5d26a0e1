"""Property-based API testing: schemathesis generates requests from the gateway's own OpenAPI schema
(valid and invalid ones) and sends them, authenticated as an admin so every endpoint is reached, to
a real uvicorn gateway. The only check is the one that matters here: no request is a 5xx.

Bounded: MAX_EXAMPLES generated cases per operation (plus the schema's own examples) and no
deadline per example, which keeps the whole test around half a minute on two cores. No worker runs
in this session's gateway, so matches that happen to be created stay queued, and bot host names
resolve only from the static test table (ARENA_STATIC_HOSTS), so generated endpoints never make
anything ask DNS.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error

from tests.support.gateway import ADMIN_KEY

if TYPE_CHECKING:
    # What `from_url` builds an OpenAPI schema's test cases as (named for type checkers only).
    from schemathesis.specs.openapi.schemas import OpenApiCase

pytestmark = pytest.mark.slow

MAX_EXAMPLES = int(os.environ.get("ARENA_SCHEMATHESIS_EXAMPLES", "10"))
"""Per operation. Raise it for a deeper hunt (200 takes a few minutes)."""
SENT: list[tuple[str, int]] = []
"""(operation, status) of every request sent, for the summary below."""


@pytest.fixture(scope="module")
def api_schema(gateway_url: str) -> Iterator[schemathesis.BaseSchema]:
    yield schemathesis.openapi.from_url(f"{gateway_url}/openapi.json")
    fives = [entry for entry in SENT if entry[1] >= 500]
    print(f"\nschemathesis sent {len(SENT)} requests; {len(fives)} answered 5xx")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_generated_request_is_answered_with_a_5xx(case: OpenApiCase) -> None:
    response = case.call(headers={"Authorization": f"Bearer {ADMIN_KEY}"}, timeout=30)
    SENT.append((f"{case.method} {case.path}", response.status_code))
    case.validate_response(response, checks=[not_a_server_error])
