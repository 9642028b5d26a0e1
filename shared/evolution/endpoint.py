"""Which LLM endpoints an evolution run may call.

A run's `llm.base_url` is typed by a user, and the evolver worker POSTs to it and records what it
answers, so without care it is a way to make the platform send requests into its own network and
read the answers back from the call log. The policy is the bot endpoints' (shared.botclient.ssrf):
http or https, no credentials, every address the host resolves to an ordinary global address;
development mode allows any address; an operator allows model servers inside the deployment by
host name (`ARENA_LLM_ALLOWED_HOSTS`). It is checked when a run is created and again by the worker
before each chunk (so a name that later resolves elsewhere is refused too).
"""

from __future__ import annotations

import asyncio

from shared.botclient.errors import EndpointRefused
from shared.botclient.ssrf import parse_endpoint, resolve_endpoint, resolver_for
from shared.config import Settings
from shared.evolution.errors import LlmEndpointRefused

RESOLVE_TIMEOUT_S = 5.0


def check_llm_endpoint(settings: Settings, base_url: str) -> None:
    """Raise LlmEndpointRefused with the reason when `base_url` may not be called."""
    try:
        url = parse_endpoint(base_url)
    except EndpointRefused as exc:
        raise LlmEndpointRefused(f"llm.base_url: {exc.message}") from None
    allowed = {host.lower().rstrip(".") for host in settings.llm_allowed_hosts}
    if settings.dev_mode or url.host.lower().rstrip(".") in allowed:
        return
    try:
        asyncio.run(
            resolve_endpoint(
                base_url, dev_mode=False, resolver=resolver_for(settings), timeout_s=RESOLVE_TIMEOUT_S
            )
        )
    except EndpointRefused as exc:
        message = exc.message.replace(
            "bots must be reachable on a public address",
            "LLM endpoints must be public unless an operator allows the host (ARENA_LLM_ALLOWED_HOSTS)",
        )
        message = message.replace("endpoint ", "", 1) if message.startswith("endpoint ") else message
        raise LlmEndpointRefused(f"llm.base_url: {message}") from None
