"""Which bot endpoints the platform may connect to, decided once per connection.

A bot endpoint is an arbitrary URL typed by a user, so without care it is a way to make the platform
send requests into its own network (databases, cloud metadata at 169.254.169.254, admin ports on
loopback). The policy:

* only ``http`` and ``https``, no credentials in the URL, no query or fragment;
* the host is resolved ONCE; every address it resolves to must be an ordinary global unicast
  address (an allow-list, see `forbidden_reason`), otherwise the endpoint is refused;
* the connection then goes to the checked address (see `PinnedTransport`), so a DNS answer that
  changes between the check and the connection (DNS rebinding) cannot redirect it.

Development mode skips the address check (bots on loopback) but still pins the resolved address.
Names are resolved by a `Resolver`: the system's, or a fixed table (`ARENA_STATIC_HOSTS`, see
`resolver_for`) so that tests and closed deployments never ask DNS.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import httpx

from shared.botclient.errors import EndpointRefused
from shared.config import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int, float], Awaitable[list[IPAddress]]]
"""`resolver(host, port, timeout_s)`: the host's addresses, or EndpointRefused."""

ALLOWED_SCHEMES = ("http", "https")
MAX_ENDPOINT_LENGTH = 2048

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

IPV4_SPECIAL_PURPOSE: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    # The IANA IPv4 Special-Purpose Address Registry (RFC 6890 and later), plus multicast and
    # the reserved class E. A bot never lives in any of these, globally reachable or not.
    (_V4("0.0.0.0/8"), "in 'this network' (0.0.0.0/8)"),
    (_V4("10.0.0.0/8"), "a private address"),
    (_V4("100.64.0.0/10"), "a shared carrier-grade NAT address"),
    (_V4("127.0.0.0/8"), "a loopback address"),
    (_V4("169.254.0.0/16"), "a link-local address (cloud metadata lives here)"),
    (_V4("172.16.0.0/12"), "a private address"),
    (_V4("192.0.0.0/24"), "an IETF protocol assignment"),
    (_V4("192.0.2.0/24"), "a documentation address"),
    (_V4("192.31.196.0/24"), "an AS112 address"),
    (_V4("192.52.193.0/24"), "an AMT address"),
    (_V4("192.88.99.0/24"), "a deprecated 6to4 relay address"),
    (_V4("192.168.0.0/16"), "a private address"),
    (_V4("192.175.48.0/24"), "an AS112 address"),
    (_V4("198.18.0.0/15"), "a benchmarking address"),
    (_V4("198.51.100.0/24"), "a documentation address"),
    (_V4("203.0.113.0/24"), "a documentation address"),
    (_V4("224.0.0.0/4"), "a multicast address"),
    (_V4("240.0.0.0/4"), "a reserved address (or the broadcast address)"),
)

IPV6_GLOBAL_UNICAST = _V6("2000::/3")
"""The only IPv6 range a bot may be in (apart from forms that embed an allowed IPv4 address)."""

IPV6_SPECIAL_INSIDE_GLOBAL: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    # Special-purpose blocks inside 2000::/3. The whole of 2001::/23 (IETF protocol assignments:
    # Teredo, benchmarking, ORCHID, AMT, AS112, anycast services...) is refused: no ordinary server
    # lives there. 6to4 (2002::/16) is refused too: it is deprecated (RFC 7526) and reaches the
    # embedded IPv4 address through whichever relay routing picks.
    (_V6("2001::/23"), "an IETF protocol assignment (Teredo, benchmarking, ORCHID, ...)"),
    (_V6("2001:db8::/32"), "a documentation address"),
    (_V6("2002::/16"), "a 6to4 address (deprecated; use the IPv4 address or native IPv6)"),
    (_V6("2620:4f:8000::/48"), "an AS112 address"),
    (_V6("3fff::/20"), "a documentation address"),
)

IPV6_EMBEDDING_IPV4: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    # Forms that stand for an IPv4 address: judged by that address.
    (_V6("::ffff:0:0/96"), "IPv4-mapped"),
    (_V6("64:ff9b::/96"), "NAT64"),
)

_IPV6_OUTSIDE_GLOBAL_REASONS: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    # Only to explain a refusal: anything outside 2000::/3 is refused whatever it is.
    (_V6("::/128"), "the unspecified address"),
    (_V6("::1/128"), "a loopback address"),
    (_V6("::/96"), "an IPv4-compatible IPv6 address (deprecated)"),
    (_V6("::ffff:0:0:0/96"), "an IPv4-translated address"),
    (_V6("64:ff9b:1::/48"), "a local-use NAT64 address"),
    (_V6("100::/64"), "a discard-only address"),
    (_V6("fc00::/7"), "a private (unique local) address"),
    (_V6("fe80::/10"), "a link-local address"),
    (_V6("fec0::/10"), "a site-local address (deprecated, still routed inside some networks)"),
    (_V6("ff00::/8"), "a multicast address"),
)


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


_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")


def _parse_ip(host: str) -> IPAddress | None:
    """The address a host names without any lookup, including the legacy IPv4 forms that
    getaddrinfo accepts (`2130706433`, `0x7f000001`, `127.1`), so the policy judges those by their
    address and never hands them to a resolver."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    last_label = host.rstrip(".").rsplit(".", 1)[-1]
    if _NUMERIC_LABEL.fullmatch(last_label):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host.rstrip(".")))
        except OSError:
            raise EndpointRefused(f"endpoint host {host!r} is not a valid IPv4 address") from None
    return None


def _ipv4_reason(ip: ipaddress.IPv4Address) -> str | None:
    for network, reason in IPV4_SPECIAL_PURPOSE:
        if ip in network:
            return reason
    return None


def _ipv6_reason(ip: ipaddress.IPv6Address) -> str | None:
    for network, form in IPV6_EMBEDDING_IPV4:
        if ip in network:
            inner = _ipv4_reason(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
            return f"{inner} ({form}, embedded in {ip})" if inner else None
    if ip not in IPV6_GLOBAL_UNICAST:
        for network, reason in _IPV6_OUTSIDE_GLOBAL_REASONS:
            if ip in network:
                return reason
        return "outside the IPv6 global unicast range 2000::/3"
    for network, reason in IPV6_SPECIAL_INSIDE_GLOBAL:
        if ip in network:
            return reason
    return None


def forbidden_reason(ip: IPAddress) -> str | None:
    """Why the platform must not connect to `ip`, or None when it is an ordinary global address.

    An allow-list: IPv4 outside every special-purpose block; IPv6 inside 2000::/3 and outside the
    special-purpose blocks there; IPv4-mapped and NAT64 (64:ff9b::/96) forms judged by the IPv4
    address they carry. Anything new or unknown is refused, unlike `ipaddress.is_global`, which
    let the deprecated site-local fec0::/10 through.
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return _ipv4_reason(ip)
    return _ipv6_reason(ip)


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
    if url.port == 0:
        raise EndpointRefused("endpoint port 0 is not a port a server listens on")
    path = url.path.rstrip("/")
    return url.copy_with(path=path or "")


async def system_resolver(host: str, port: int, timeout_s: float) -> list[IPAddress]:
    """The operating system's resolver (getaddrinfo), off the event loop, bounded in time."""
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
    return addresses


class StaticResolver:
    """Resolves names from a fixed table and nothing else: no query ever leaves the machine.

    Names are matched case-insensitively and without a trailing dot; a name not in the table does
    not resolve (it is not passed on to DNS).
    """

    def __init__(self, hosts: Mapping[str, Sequence[str]]) -> None:
        self._hosts = {
            self._normalise(name): [ipaddress.ip_address(address) for address in addresses]
            for name, addresses in hosts.items()
        }

    @staticmethod
    def _normalise(name: str) -> str:
        return name.rstrip(".").lower()

    async def __call__(self, host: str, _port: int, _timeout_s: float) -> list[IPAddress]:
        addresses = self._hosts.get(self._normalise(host))
        if addresses is None:
            raise EndpointRefused(f"cannot resolve {host!r}: not in the static host table")
        return list(addresses)


def resolver_for(settings: Settings) -> Resolver:
    """The static table when `ARENA_STATIC_HOSTS` is set (tests, closed networks), else the system's."""
    if settings.static_hosts is not None:
        return StaticResolver(settings.static_hosts)
    return system_resolver


async def _resolve(host: str, port: int, timeout_s: float, resolver: Resolver) -> list[IPAddress]:
    literal = _parse_ip(host)
    if literal is not None:
        return [literal]
    addresses = await resolver(host, port, timeout_s)
    if not addresses:
        raise EndpointRefused(f"{host!r} resolves to no address")
    return addresses


async def resolve_endpoint(
    endpoint: str,
    *,
    dev_mode: bool,
    resolver: Resolver,
    timeout_s: float = 5.0,
    networks: Sequence[str] | None = None,
) -> ResolvedEndpoint:
    """Check an endpoint against the policy and pick the address to connect to.

    Every resolved address must pass (a name that resolves to both a public and a private address
    is refused), so the answer cannot depend on which address a resolver lists first. IP literals
    never reach the resolver.
    """
    url = parse_endpoint(endpoint)
    host = url.host
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await _resolve(host, port, timeout_s, resolver)
    if not dev_mode:
        for ip in addresses:
            reason = forbidden_reason(ip)
            if reason is not None:
                shown = host if str(ip) == host else f"{host} ({ip})"
                raise EndpointRefused(
                    f"endpoint {shown} is {reason}; bots must be reachable on a public address"
                )
    if networks is not None:
        fence = [ipaddress.ip_network(block, strict=False) for block in networks]
        for ip in addresses:
            if not any(ip.version == block.version and ip in block for block in fence):
                shown = host if str(ip) == host else f"{host} ({ip})"
                raise EndpointRefused(
                    f"endpoint {shown} is outside the networks this platform allows bots in"
                )
    return ResolvedEndpoint(url=url, host=host, port=port, address=str(addresses[0]))


class _Pin:
    """Rewrites a request to go to the checked address of one endpoint, and nowhere else.

    The request URL keeps the registered host until it reaches the transport, so the Host header
    is the endpoint's name; here the URL's host is swapped for the checked IP, and for https the
    TLS server name (SNI) and certificate check use the original host name.
    """

    def __init__(self, endpoint: ResolvedEndpoint) -> None:
        self.endpoint = endpoint
        self._rewritten: dict[str, httpx.URL] = {}
        """Pinned URL per requested URL: a bot connection uses two URLs, parsing them once is enough."""

    def _pinned(self, url: httpx.URL) -> httpx.URL:
        key = str(url)
        pinned = self._rewritten.get(key)
        if pinned is None:
            port = url.port or (443 if url.scheme == "https" else 80)
            if url.host != self.endpoint.host or port != self.endpoint.port:
                raise httpx.UnsupportedProtocol(f"request to {url.host}:{port} is outside the endpoint")
            pinned = url.copy_with(host=self.endpoint.address)
            if len(self._rewritten) < 64:
                self._rewritten[key] = pinned
        return pinned

    def apply(self, request: httpx.Request) -> None:
        https = request.url.scheme == "https"
        request.url = self._pinned(request.url)
        if https and not self.endpoint.is_ip_literal:
            request.extensions = {**request.extensions, "sni_hostname": self.endpoint.host}


class PinnedTransport(httpx.AsyncBaseTransport):
    """Sends every request to the address checked by `resolve_endpoint`, never re-resolving."""

    def __init__(self, endpoint: ResolvedEndpoint, inner: httpx.AsyncBaseTransport) -> None:
        self._pin = _Pin(endpoint)
        self._inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self._pin.apply(request)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class SyncPinnedTransport(httpx.BaseTransport):
    """`PinnedTransport` for blocking clients (the `openai` client of the evolver)."""

    def __init__(self, endpoint: ResolvedEndpoint, inner: httpx.BaseTransport) -> None:
        self._pin = _Pin(endpoint)
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self._pin.apply(request)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()
