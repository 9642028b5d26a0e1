"""The endpoint policy: only ordinary global unicast addresses outside development mode (an
allow-list, checked against many addresses of every special-purpose class), and connections pinned
to the checked address. All traffic stays on loopback; names resolve from a static table, never DNS."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pydantic import SecretStr

from shared.botclient import (
    BotEndpointError,
    EndpointRefused,
    HttpBotConnection,
    PinnedTransport,
    ResolvedEndpoint,
    check_health,
    forbidden_reason,
    resolve_endpoint,
)
from shared.botclient.ssrf import StaticResolver, resolver_for, system_resolver
from shared.config import Settings
from shared.protocol.signing import generate_secret

PRODUCTION = Settings(dev_mode=False, secret_key=SecretStr("production-like-secret-key-for-ssrf-tests"))
DEVELOPMENT = Settings(dev_mode=True, secret_key=SecretStr("development-secret-key"))
HOSTS = StaticResolver(
    {
        "localhost": ["127.0.0.1", "::1"],
        "public.test": ["93.184.216.34", "2606:4700:4700::1111"],
        "mixed.test": ["93.184.216.34", "10.0.0.1"],
        "sitelocal.test": ["fec0::1"],
        "metadata.test": ["169.254.169.254"],
    }
)
"""What the system resolver would answer, without asking it (or DNS)."""

REFUSED = [
    "http://127.0.0.1:8080",
    "http://127.1.2.3/bot",
    "http://10.0.0.5/bot",
    "http://172.16.0.1/bot",
    "http://172.31.255.254/bot",
    "http://192.168.1.10:9000/bot",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/bot",
    "http://0.0.0.0:8000/",
    "http://224.0.0.1/",
    "http://[::1]:8080/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::127.0.0.1]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[fe80::1]/",
    "http://[2002:a00:1::]/",
    "http://[64:ff9b::7f00:1]/",
    "http://localhost:8080/",
    "http://LOCALHOST./",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://017700000001/",
    "http://127.1/",
    "http://0x7f.1/",
    "http://[fec0::1]/",
    "http://[fec0:1:2:3::4]:8080/",
    "http://sitelocal.test/",
    "http://mixed.test/",
    "http://metadata.test/",
    "http://unknown.test/",
]


@pytest.mark.parametrize("endpoint", REFUSED)
def test_internal_endpoints_are_refused_outside_development_mode(endpoint: str) -> None:
    with pytest.raises(EndpointRefused):
        asyncio.run(resolve_endpoint(endpoint, dev_mode=False, resolver=HOSTS))


@pytest.mark.parametrize(
    "endpoint",
    [
        "ftp://203.0.113.9/",
        "file:///etc/passwd",
        "http://user:pw@93.184.216.34/",
        "http://93.184.216.34/?x=1",
        "x",
    ],
)
def test_bad_urls_are_refused_before_any_lookup(endpoint: str) -> None:
    with pytest.raises(EndpointRefused):
        asyncio.run(resolve_endpoint(endpoint, dev_mode=True, resolver=HOSTS))


@pytest.mark.parametrize(
    ("endpoint", "address"),
    [
        ("https://93.184.216.34/bots/mine/", "93.184.216.34"),
        ("http://[2606:4700:4700::1111]:8080/bot", "2606:4700:4700::1111"),
        ("http://[::ffff:8.8.8.8]/", "::ffff:808:808"),
    ],
)
def test_global_addresses_pass_the_check(endpoint: str, address: str) -> None:
    resolved = asyncio.run(
        resolve_endpoint(endpoint, dev_mode=False, resolver=HOSTS)
    )  # IP literals: no DNS, no connection
    assert resolved.address == address
    assert not str(resolved.url).endswith("/")


def test_forbidden_reason_explains_embedded_addresses() -> None:
    reason = forbidden_reason(ipaddress.ip_address("::ffff:10.1.2.3"))
    assert reason is not None
    assert "private" in reason
    assert "embedded" in reason
    assert forbidden_reason(ipaddress.ip_address("1.1.1.1")) is None


def test_check_health_refuses_loopback_without_connecting() -> None:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(EndpointRefused):
            asyncio.run(check_health(endpoint, generate_secret(), PRODUCTION))
        assert hits == []
        # Development mode connects; this server does not speak the protocol, so the check fails.
        with pytest.raises(BotEndpointError) as info:
            asyncio.run(check_health(endpoint, generate_secret(), DEVELOPMENT))
        assert not isinstance(info.value, EndpointRefused)
        assert hits == ["/health"]
    finally:
        server.shutdown()


class _EchoHost(BaseHTTPRequestHandler):
    """Answers the protocol's health check and tells which Host header it received."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = b'{"status":"ok","host":"' + self.headers["Host"].encode() + b'"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def echo_server() -> Iterator[HTTPServer]:
    server = HTTPServer(("127.0.0.1", 0), _EchoHost)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield server
    server.shutdown()


def test_requests_go_to_the_checked_address_with_the_original_host(echo_server: HTTPServer) -> None:
    """As if `bot.example` had resolved to 127.0.0.1 at check time: whatever DNS says later, the
    connection goes to the pinned address and the Host header still names the bot."""
    port = echo_server.server_address[1]
    pinned = ResolvedEndpoint(
        url=httpx.URL(f"http://bot.example:{port}"), host="bot.example", port=port, address="127.0.0.1"
    )

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=PinnedTransport(pinned, httpx.AsyncHTTPTransport())) as client:
            response = await client.get(f"http://bot.example:{port}/health")
            with pytest.raises(httpx.UnsupportedProtocol):
                await client.get(f"http://elsewhere.example:{port}/health")
            return response

    response = asyncio.run(go())
    assert response.json()["host"] == f"bot.example:{port}"


def _tls_files(tmp_path: Path, hostname: str) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def test_https_uses_the_bot_name_for_sni_and_certificate_checks(tmp_path: Path) -> None:
    cert_path, key_path = _tls_files(tmp_path, "bot.example")
    server_names: list[str | None] = []
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    context.sni_callback = lambda _sock, name, _ctx: server_names.append(name)
    server = HTTPServer(("127.0.0.1", 0), _EchoHost)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    port = server.server_address[1]
    try:
        pinned = ResolvedEndpoint(
            url=httpx.URL(f"https://bot.example:{port}"), host="bot.example", port=port, address="127.0.0.1"
        )
        trust = ssl.create_default_context(cafile=str(cert_path))
        connection = HttpBotConnection(
            pinned.url,
            generate_secret(),
            PinnedTransport(pinned, httpx.AsyncHTTPTransport(verify=trust)),
            max_response_bytes=65536,
        )

        async def go() -> None:
            async with connection:
                await connection.health(5.0)

        asyncio.run(go())  # the certificate for bot.example verified although we dialled 127.0.0.1
        assert server_names == ["bot.example"]
    finally:
        server.shutdown()


# --- The allow-list, address by address ----------------------------------------------------------

REFUSED_ADDRESSES = {
    "this network": ["0.0.0.0", "0.1.2.3", "0.255.255.255"],
    "private v4": [
        "10.0.0.0",
        "10.255.255.255",
        "172.16.0.1",
        "172.20.3.4",
        "172.31.255.255",
        "192.168.0.1",
        "192.168.255.255",
    ],
    "shared CGN": ["100.64.0.0", "100.100.100.200", "100.127.255.255"],
    "loopback v4": ["127.0.0.1", "127.0.0.53", "127.255.255.254"],
    "link-local v4": ["169.254.0.1", "169.254.169.254", "169.254.170.2", "169.254.255.255"],
    "IETF v4": ["192.0.0.1", "192.0.0.8", "192.0.0.9", "192.0.0.170", "192.0.0.255"],
    "documentation v4": ["192.0.2.1", "198.51.100.7", "203.0.113.255"],
    "AS112/AMT/relay v4": ["192.31.196.1", "192.52.193.1", "192.88.99.1", "192.175.48.6"],
    "benchmarking v4": ["198.18.0.1", "198.19.255.254"],
    "multicast v4": ["224.0.0.1", "239.255.255.250", "233.252.0.1"],
    "reserved v4": ["240.0.0.1", "250.1.2.3", "255.255.255.254", "255.255.255.255"],
    "unspecified/loopback v6": ["::", "::1"],
    "IPv4-compatible v6": ["::127.0.0.1", "::8.8.8.8", "::0.0.0.2"],
    "IPv4-mapped private": [
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:169.254.169.254",
        "::ffff:192.168.1.1",
        "::ffff:0.0.0.0",
        "::ffff:100.64.1.1",
    ],
    "IPv4-translated": ["::ffff:0:808:808", "::ffff:0:7f00:1"],
    "NAT64 private": [
        "64:ff9b::127.0.0.1",
        "64:ff9b::10.1.2.3",
        "64:ff9b::169.254.169.254",
        "64:ff9b::192.168.0.1",
        "64:ff9b::0.0.0.0",
    ],
    "NAT64 local-use": ["64:ff9b:1::808:808", "64:ff9b:1:ffff::1"],
    "discard": ["100::", "100::1:2:3:4"],
    "unique local": ["fc00::1", "fd00::1", "fd12:3456:789a::1", "fdff:ffff:ffff:ffff::1"],
    "link-local v6": ["fe80::1", "fe80::a:b:c:d", "febf:ffff::1"],
    "site-local v6 (deprecated)": ["fec0::", "fec0::1", "fec0:0:0:ffff::1", "fed0::1", "feff:ffff::1"],
    "multicast v6": ["ff02::1", "ff05::1:3", "ff0e::101", "ff3e::8000:1"],
    "outside 2000::/3": ["4000::1", "8000::1", "1000::1", "c000::1", "e000::1", "::2:0:0", "0:0:1::"],
    "IETF v6 (2001::/23)": [
        "2001::1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "2001:1::1",
        "2001:2::1",
        "2001:3::1",
        "2001:4:112::1",
        "2001:10::1",
        "2001:20::1",
        "2001:1ff::1",
    ],
    "documentation v6": ["2001:db8::1", "2001:db8:ffff::1", "3fff::1", "3fff:fff:ffff::1"],
    "6to4": ["2002::1", "2002:808:808::1", "2002:a00:1::", "2002:c000:0204::1"],
    "AS112 v6": ["2620:4f:8000::1", "2620:4f:8000:ffff::42"],
}
ALLOWED_ADDRESSES = [
    "1.1.1.1",
    "8.8.8.8",
    "9.9.9.9",
    "93.184.216.34",
    "100.63.255.255",
    "100.128.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.0.1.255",
    "192.0.3.0",
    "192.88.98.255",
    "192.169.0.1",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "11.0.0.1",
    "126.255.255.255",
    "128.0.0.1",
    "169.253.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:81b::200e",
    "2001:200::1",
    "2001:4860:4860::8888",
    "2003::1",
    "2620:4f:8001::1",
    "3ffe::1",
    "2400:cb00::1",
    "3ffe:ffff::1",
    "::ffff:8.8.8.8",
    "::ffff:93.184.216.34",
    "64:ff9b::8.8.8.8",
    "64:ff9b::5db8:d822",
]


@pytest.mark.parametrize(
    ("kind", "address"), [(kind, a) for kind, addresses in REFUSED_ADDRESSES.items() for a in addresses]
)
def test_special_purpose_addresses_are_refused(kind: str, address: str) -> None:
    assert forbidden_reason(ipaddress.ip_address(address)) is not None, kind
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(EndpointRefused):
        asyncio.run(resolve_endpoint(f"http://{host}:8080/bot", dev_mode=False, resolver=HOSTS))


@pytest.mark.parametrize("address", ALLOWED_ADDRESSES)
def test_global_unicast_addresses_are_allowed(address: str) -> None:
    assert forbidden_reason(ipaddress.ip_address(address)) is None


def test_site_local_is_refused_with_its_name() -> None:
    reason = forbidden_reason(ipaddress.ip_address("fec0::1"))
    assert reason is not None
    assert "site-local" in reason


def test_legacy_numeric_hosts_are_judged_by_their_address() -> None:
    for endpoint in ("http://2130706433/", "http://0x7f000001/", "http://127.1/"):
        resolved = asyncio.run(resolve_endpoint(endpoint, dev_mode=True, resolver=HOSTS))
        assert resolved.address == "127.0.0.1"
    with pytest.raises(EndpointRefused, match="not a valid IPv4"):
        asyncio.run(resolve_endpoint("http://99999999999/", dev_mode=True, resolver=HOSTS))


def test_names_resolve_from_the_static_table_only() -> None:
    resolved = asyncio.run(resolve_endpoint("http://Public.Test./bot", dev_mode=False, resolver=HOSTS))
    assert resolved.address == "93.184.216.34"
    assert resolved.host == "public.test."
    with pytest.raises(EndpointRefused, match="static host table"):
        asyncio.run(resolve_endpoint("http://example.com/", dev_mode=True, resolver=HOSTS))
    with pytest.raises(EndpointRefused, match=r"10\.0\.0\.1"):  # one bad address is enough
        asyncio.run(resolve_endpoint("http://mixed.test/", dev_mode=False, resolver=HOSTS))


def test_the_resolver_comes_from_settings() -> None:
    table = Settings(dev_mode=True, secret_key=SecretStr("k"), static_hosts={"bot.test": ["127.0.0.1"]})
    resolver = resolver_for(table)
    assert isinstance(resolver, StaticResolver)
    assert asyncio.run(resolver("BOT.test", 80, 1.0)) == [ipaddress.ip_address("127.0.0.1")]


def test_tests_cannot_ask_the_system_resolver_about_names() -> None:
    """The guard in tests/conftest.py: IP literals pass, names fail loudly (nothing sent)."""
    from tests.support.resolver import SystemResolverUsed, resolver_calls

    assert socket.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)
    with pytest.raises(SystemResolverUsed):
        socket.getaddrinfo("example.com", 80)
    with pytest.raises(SystemResolverUsed):
        asyncio.run(system_resolver("example.com", 80, 1.0))
    del resolver_calls[-2:]  # expected here; any other such call fails its test
    assert Settings(secret_key=SecretStr("k"), dev_mode=True).static_hosts == {
        "localhost": ["127.0.0.1", "::1"]
    }


@pytest.mark.parametrize("dev_mode", [False, True])
def test_the_network_fence_refuses_addresses_outside_it(dev_mode: bool) -> None:
    """ARENA_BOT_NETWORKS: an operator's fence, also in development mode (the test suite fences
    bots to loopback, so a generated endpoint with a public address never gets a connection)."""
    fence = ["127.0.0.0/8", "::1/128"]
    inside = asyncio.run(
        resolve_endpoint("http://127.0.0.1:9/bot", dev_mode=True, resolver=HOSTS, networks=fence)
    )
    assert inside.address == "127.0.0.1"
    for endpoint in ("http://93.184.216.34/", "http://[2606:4700:4700::1111]/", "http://[::ffff:127.0.0.1]/"):
        with pytest.raises(EndpointRefused, match=r"outside the networks|public address"):
            asyncio.run(resolve_endpoint(endpoint, dev_mode=dev_mode, resolver=HOSTS, networks=fence))


def test_the_test_suite_fences_bots_to_loopback() -> None:
    from shared.config import Settings

    assert Settings().bot_networks == ["127.0.0.0/8", "::1/128"]
