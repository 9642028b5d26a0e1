"""Talking to bots: the SSRF policy for endpoints and the signed protocol-v1 client."""

from shared.botclient.errors import BotEndpointError, EndpointRefused
from shared.botclient.http import HttpBotConnection, TurnReply, check_health
from shared.botclient.ssrf import PinnedTransport, ResolvedEndpoint, forbidden_reason, resolve_endpoint

__all__ = [
    "BotEndpointError",
    "EndpointRefused",
    "HttpBotConnection",
    "PinnedTransport",
    "ResolvedEndpoint",
    "TurnReply",
    "check_health",
    "forbidden_reason",
    "resolve_endpoint",
]
