"""The endpoint policy: nothing private, loopback, link-local or otherwise internal outside
development mode, and connections pinned to the checked address. All traffic stays on loopback."""

from __future__ import annotations

import asyncio
import ipaddress
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
from shared.config import Settings
from shared.protocol.signing import generate_secret

PRODUCTION = Settings(dev_mode=False, secret_key="production-like-secret-key-for-ssrf-tests")
DEVELOPMENT = Settings(dev_mode=True, secret_key="development-secret-key")

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
]


@pytest.mark.parametrize("endpoint", REFUSED)
def test_internal_endpoints_are_refused_outside_development_mode(endpoint: str) -> None:
    with pytest.raises(EndpointRefused):
        asyncio.run(resolve_endpoint(endpoint, dev_mode=False))


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
        asyncio.run(resolve_endpoint(endpoint, dev_mode=True))


@pytest.mark.parametrize(
    ("endpoint", "address"),
    [
        ("https://93.184.216.34/bots/mine/", "93.184.216.34"),
        ("http://[2606:4700:4700::1111]:8080/bot", "2606:4700:4700::1111"),
        ("http://[::ffff:8.8.8.8]/", "::ffff:808:808"),
    ],
)
def test_global_addresses_pass_the_check(endpoint: str, address: str) -> None:
    resolved = asyncio.run(resolve_endpoint(endpoint, dev_mode=False))  # IP literals: no DNS, no connection
    assert resolved.address == address
    assert not str(resolved.url).endswith("/")


def test_forbidden_reason_explains_embedded_addresses() -> None:
    reason = forbidden_reason(ipaddress.ip_address("::ffff:10.1.2.3"))
    assert reason is not None and "private" in reason and "embedded" in reason
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
    threading.Thread(target=server.serve_forever, daemon=True).start()
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


@pytest.fixture()
def echo_server() -> Iterator[HTTPServer]:
    server = HTTPServer(("127.0.0.1", 0), _EchoHost)
    threading.Thread(target=server.serve_forever, daemon=True).start()
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
    context.sni_callback = lambda sock, name, ctx: server_names.append(name)  # type: ignore[assignment,misc]
    server = HTTPServer(("127.0.0.1", 0), _EchoHost)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
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
