"""Which bot endpoints the platform may connect to, decided once per connection.

A bot endpoint is an arbitrary URL typed by a user, so without care it is a way to make the platform
send requests into its own network (databases, cloud metadata at 169.254.169.254, admin ports on
loopback). The policy:

* only ``http`` and ``https``, no credentials in the URL, no query or fragment;
* the host is resolved ONCE; every address it resolves to must be globally routable, otherwise the
  endpoint is refused (IPv6 forms that embed an IPv4 address are judged by that address);
* the connection then goes to the checked address (see `PinnedTransport`), so a DNS answer that
  changes between the check and the connection (DNS rebinding) cannot redirect it.

Development mode skips the address check (bots on loopback) but still pins the resolved address.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass

import httpx

from shared.botclient.errors import EndpointRefused

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = ("http", "https")
MAX_ENDPOINT_LENGTH = 2048

_NAT64_NETWORKS = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


@dataclass(frozen=True, slots=True)
class ResolvedEndpoint:
    """An endpoint that passed the policy, with the one address every request will go to."""

    url: httpx.URL
    """The endpoint as registered, without a trailing slash (paths are appended to it)."""
    host: str
    port: int
    address: str
    """The checked IP address, as a string (no brackets for IPv6)."""

    @property
    def is_ip_literal(self) -> bool:
        return _parse_ip(self.host) is not None


def _parse_ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if any(ip in net for net in _NAT64_NETWORKS):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def forbidden_reason(ip: IPAddress) -> str | None:
    """Why the platform must not connect to `ip`, or None when it is an ordinary public address.

    `is_global` alone is not enough: Python counts multicast and the deprecated IPv4-compatible
    IPv6 range as global, and IPv6 addresses that embed a private IPv4 address look public.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = forbidden_reason(embedded)
            return f"{inner} (embedded in {ip})" if inner else None
        if ip in _IPV4_COMPATIBLE:
            return "an IPv4-compatible IPv6 address"
        if ip.teredo is not None:
            return "a Teredo tunnel address"
    checks = (
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address (cloud metadata lives here)"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
    )
    for hit, reason in checks:
        if hit:
            return reason
    if not ip.is_global:
        return "not a globally routable address"
    return None


def parse_endpoint(endpoint: str) -> httpx.URL:
    """Syntax checks that need no network: scheme, host, credentials, length."""
    if len(endpoint) > MAX_ENDPOINT_LENGTH:
        raise EndpointRefused(f"endpoint is longer than {MAX_ENDPOINT_LENGTH} characters")
    try:
        url = httpx.URL(endpoint.strip())
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise EndpointRefused(f"endpoint is not a valid URL: {exc}") from None
    if url.scheme not in ALLOWED_SCHEMES:
        raise EndpointRefused("endpoint must use http:// or https://")
    if not url.host:
        raise EndpointRefused("endpoint has no host")
    if url.userinfo:
        raise EndpointRefused("endpoint must not contain credentials (user:password@)")
    if url.query or url.fragment:
        raise EndpointRefused("endpoint must not have a query string or fragment")
    path = url.path.rstrip("/")
    return url.copy_with(path=path or "")


async def _resolve(host: str, port: int, timeout_s: float) -> list[IPAddress]:
    literal = _parse_ip(host)
    if literal is not None:
        return [literal]
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(timeout_s):
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except TimeoutError:
        raise EndpointRefused(f"resolving {host!r} timed out") from None
    except (OSError, UnicodeError) as exc:
        raise EndpointRefused(f"cannot resolve {host!r}: {exc}") from None
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canon, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise EndpointRefused(f"{host!r} resolves to no address")
    return addresses


async def resolve_endpoint(endpoint: str, *, dev_mode: bool, timeout_s: float = 5.0) -> ResolvedEndpoint:
    """Check an endpoint against the policy and pick the address to connect to.

    Every resolved address must pass (a name that resolves to both a public and a private address
    is refused), so the answer cannot depend on which address a resolver lists first.
    """
    url = parse_endpoint(endpoint)
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await _resolve(host, port, timeout_s)
    if not dev_mode:
        for ip in addresses:
            reason = forbidden_reason(ip)
            if reason is not None:
                shown = host if str(ip) == host else f"{host} ({ip})"
                raise EndpointRefused(
                    f"endpoint {shown} is {reason}; bots must be reachable on a public address"
                )
    return ResolvedEndpoint(url=url, host=host, port=port, address=str(addresses[0]))


class PinnedTransport(httpx.AsyncBaseTransport):
    """Sends every request to the address checked by `resolve_endpoint`, never re-resolving.

    The request URL keeps the registered host until it reaches this transport, so the Host header is
    the bot's name; here the URL's host is swapped for the checked IP, and for https the TLS server
    name (SNI) and certificate check use the original host name.
    """

    def __init__(self, endpoint: ResolvedEndpoint, inner: httpx.AsyncBaseTransport) -> None:
        self._endpoint = endpoint
        self._inner = inner
        self._rewritten: dict[str, httpx.URL] = {}
        """Pinned URL per requested URL: a bot connection uses two URLs, parsing them once is enough."""

    def _pinned(self, url: httpx.URL) -> httpx.URL:
        key = str(url)
        pinned = self._rewritten.get(key)
        if pinned is None:
            port = url.port or (443 if url.scheme == "https" else 80)
            if url.host != self._endpoint.host or port != self._endpoint.port:
                raise httpx.UnsupportedProtocol(f"request to {url.host}:{port} is outside the bot endpoint")
            pinned = url.copy_with(host=self._endpoint.address)
            if len(self._rewritten) < 64:
                self._rewritten[key] = pinned
        return pinned

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        https = request.url.scheme == "https"
        request.url = self._pinned(request.url)
        if https and not self._endpoint.is_ip_literal:
            request.extensions = {**request.extensions, "sni_hostname": self._endpoint.host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
