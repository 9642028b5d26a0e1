"""Live-match fixtures: the gateway's (a real uvicorn gateway on the test database and Redis) and the
match runner's (bots registered straight in the database, real bot processes)."""

from __future__ import annotations

from tests.gateway.conftest import admin, client, gateway_url  # noqa: F401  (fixtures)
from tests.match_runner.conftest import bot_factory, register_bot, user_id  # noqa: F401  (fixtures)
