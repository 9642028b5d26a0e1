"""Which LLM endpoints an evolution run may call, with whose key, and how the call gets there.

A run either names one of the operator's endpoints (`llm.endpoint`, from `ARENA_LLM_ENDPOINTS`),
whose key is the operator's, or brings its own base URL and its own key. The operator's key is
never sent anywhere else: there is no fallback from one to the other.

A run's own base URL is typed by a user, and the evolver worker POSTs to it and records what it
answers, so without care it is a way to make the platform send requests into its own network and
read the answers back from the call log. The policy is the bot endpoints' (shared.botclient.ssrf):
http or https, no credentials, every address the host resolves to an ordinary global address;
development mode allows any address; an operator allows model servers inside the deployment by
host name (`ARENA_LLM_ALLOWED_HOSTS`). It is checked when a run is created, and the worker resolves
and checks the name again when a chunk starts and connects only to the address it checked
(`pinned_http_client`), so a name that resolves elsewhere later (DNS rebinding) is refused or
never reached, and redirects are never followed.
"""

from __future__ import annotations

import asyncio

import httpx

from shared.botclient.errors import EndpointRefused
from shared.botclient.ssrf import (
    ResolvedEndpoint,
    SyncPinnedTransport,
    parse_endpoint,
    resolve_endpoint,
    resolver_for,
)
from shared.config import LlmEndpoint, Settings
from shared.evolution.errors import LlmEndpointRefused, UnknownLlmEndpoint

RESOLVE_TIMEOUT_S = 5.0


def _refusal(exc: EndpointRefused) -> LlmEndpointRefused:
    message = exc.message.replace(
        "bots must be reachable on a public address",
        "LLM endpoints must be public unless an operator allows the host (ARENA_LLM_ALLOWED_HOSTS)",
    ).replace("the networks this platform allows bots in", "the networks this platform allows")
    message = message.replace("endpoint ", "", 1) if message.startswith("endpoint ") else message
    return LlmEndpointRefused(f"llm.base_url: {message}")


def _allowed_host(settings: Settings, host: str) -> bool:
    return host.lower().rstrip(".") in {name.lower().rstrip(".") for name in settings.llm_allowed_hosts}


def _parse(base_url: str) -> httpx.URL:
    try:
        return parse_endpoint(base_url)
    except EndpointRefused as exc:
        raise _refusal(exc) from None


def check_llm_endpoint(settings: Settings, base_url: str) -> None:
    """Raise LlmEndpointRefused with the reason when a run's own `base_url` may not be called."""
    url = _parse(base_url)
    if not settings.dev_mode and not _allowed_host(settings, url.host):
        connect_llm_endpoint(settings, base_url)


def connect_llm_endpoint(settings: Settings, base_url: str, *, operator: bool = False) -> ResolvedEndpoint:
    """Resolve `base_url` once and check every address it resolves to; the result is the address to
    pin the connection to. A run's own URL meets the bot endpoints' policy (and their network
    fence, `ARENA_BOT_NETWORKS`) unless its host is allowed by name; the operator's are trusted."""
    url = _parse(base_url)
    trusted = operator or _allowed_host(settings, url.host)
    try:
        return asyncio.run(
            resolve_endpoint(
                base_url,
                dev_mode=trusted or settings.dev_mode,
                resolver=resolver_for(settings),
                timeout_s=RESOLVE_TIMEOUT_S,
                networks=None if trusted else settings.bot_networks,
            )
        )
    except EndpointRefused as exc:
        raise _refusal(exc) from None


def pinned_http_client(endpoint: ResolvedEndpoint, *, timeout_s: float) -> httpx.Client:
    """An HTTP client that reaches the checked address of `endpoint` and nothing else: no redirects
    followed, no proxy or other setting taken from the environment, any other host refused."""
    return httpx.Client(
        transport=SyncPinnedTransport(endpoint, httpx.HTTPTransport(trust_env=False)),
        follow_redirects=False,
        trust_env=False,
        timeout=timeout_s,
    )


def operator_endpoint(settings: Settings, name: str) -> LlmEndpoint:
    """The operator's endpoint called `name`; UnknownLlmEndpoint (naming those there are) if none."""
    endpoint = settings.llm_endpoints.get(name)
    if endpoint is None:
        raise UnknownLlmEndpoint(name, sorted(settings.llm_endpoints))
    return endpoint
