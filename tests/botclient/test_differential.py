"""The httptools bot client against the httpx one it replaced, answer by answer: every answer in the
hostile corpus (tests/support/hostile_server.py) gets the same outcome from both (ok, error,
timed out, action; the parser's own wording aside), over TCP, a Unix socket and TLS, with the same
number of connections opened, and the requests are the same bytes. All traffic stays on loopback."""

from __future__ import annotations

import asyncio
import re
import ssl
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from shared.botclient import BotEndpointError, HttpBotConnection, PinnedTransport, ResolvedEndpoint
from shared.botclient.http1 import Http1Transport, TcpDialer, UnixDialer
from shared.botclient.httpx_client import SocketTransport
from shared.protocol.signing import generate_secret
from tests.support.hostile_server import CAP, CASES, LATE_BYTES, TIMEOUT_MS, HostileServer, hostile_server

SECRET = generate_secret()
TURNS = 2
"""Turns per case: the second shows whether the connection was reused, dropped or replaced."""

DIFFERENT: dict[str, tuple[str, str]] = {
    # case: (the new client's outcome of both turns, why it differs from the old one)
    "extra_bytes_after_answer": (
        "ok | ok",
        "bytes after a complete answer drop the connection; h11 kept them and read them as the next "
        "turn's answer",
    ),
    "two_answers_to_one_request": (
        "ok | ok",
        "the old client returned the bot's second answer to turn 1 as the answer to turn 2",
    ),
    "length_too_short": (
        "answer is not valid JSON (Expecting value) | answer is not valid JSON (Expecting value)",
        "the rest of a body longer than its Content-Length is not read as the next answer",
    ),
    "duplicate_length_same": (
        "broken HTTP answer | broken HTTP answer",
        "llhttp refuses any repeated Content-Length (h11 merged identical ones); RFC 9112 allows both",
    ),
    "obs_fold": (
        "broken HTTP answer | broken HTTP answer",
        "llhttp refuses folded header lines (obsolete since RFC 7230); h11 unfolded them",
    ),
    "leading_blank_line": ("ok | ok", "llhttp skips an empty line before the status line; h11 refused it"),
}
"""Where the new client does better or judges differently, deliberately; everything else matches."""

PARSER_WORDING = ("broken HTTP answer", "LocalProtocolError")
"""Error classes whose detail is the HTTP parser's own wording (h11's or llhttp's)."""


def outcome_class(reply: Any) -> str:
    """What must match: ok and the action, a timeout, or the error (parser wording aside)."""
    if reply.timed_out:
        return "timed out"
    if reply.ok:
        return "ok" if reply.action == {"pods": [{"x": 1, "y": 2, "thrust": 100}]} else f"ok {reply.action!r}"
    for prefix in PARSER_WORDING:
        if reply.error.startswith(prefix):
            return prefix
    return str(reply.error)


Connect = Callable[[str], HttpBotConnection]
"""A client for one case: given the case name, a connection whose requests reach that case."""


async def _play_case(connect: Connect, case: str, server: HostileServer) -> list[Any]:
    connection = connect(case)
    replies = []
    try:
        for turn in range(TURNS):
            reply = await connection.turn(
                match_id="m",
                game="podracing",
                player=0,
                turn=turn,
                timeout_ms=TIMEOUT_MS,
                observation={"t": turn},
            )
            replies.append(reply)
            if case in LATE_BYTES:
                await server.written(case, turn + 1)
            await asyncio.sleep(0.03)  # as between turns: the game steps, other bots answer
    finally:
        await connection.aclose()
    return replies


async def _play_all(connect: Connect, cases: list[str], server: HostileServer) -> dict[str, list[Any]]:
    limit = asyncio.Semaphore(12)  # a busy 2-core machine still answers the good cases in time

    async def one(case: str) -> list[Any]:
        async with limit:
            return await _play_case(connect, case, server)

    results = await asyncio.gather(*(one(case) for case in cases))
    return dict(zip(cases, results, strict=True))


def _compare(
    old: dict[str, list[Any]],
    new: dict[str, list[Any]],
    old_server: HostileServer,
    new_server: HostileServer,
    different: dict[str, tuple[str, str]],
) -> list[str]:
    problems = []
    for case in old:
        new_classes = " | ".join(outcome_class(r) for r in new[case])
        if case in different:
            expected, _why = different[case]
            if new_classes != expected:
                problems.append(f"{case}: new client gave {new_classes!r}, expected {expected!r}")
            continue
        old_classes = " | ".join(outcome_class(r) for r in old[case])
        if old_classes != new_classes:
            problems.append(f"{case}: old {old_classes!r} != new {new_classes!r}")
        for old_reply, new_reply in zip(old[case], new[case], strict=True):
            if old_reply.action != new_reply.action:
                problems.append(f"{case}: actions differ: {old_reply.action!r} != {new_reply.action!r}")
        old_connections, new_connections = (
            old_server.seen[case].connections,
            new_server.seen[case].connections,
        )
        if old_connections != new_connections:
            problems.append(f"{case}: old opened {old_connections} connections, new {new_connections}")
    return problems


def _run_both(
    old_connect: Callable[[HostileServer], Connect],
    new_connect: Callable[[HostileServer], Connect],
    cases: list[str],
    different: dict[str, tuple[str, str]] = DIFFERENT,
    loop_factory: Callable[[], asyncio.AbstractEventLoop] | None = None,
    **server_options: Any,
) -> tuple[dict[str, list[Any]], dict[str, list[Any]], list[str]]:
    old_options = {k: (v[0] if isinstance(v, tuple) else v) for k, v in server_options.items()}
    new_options = {k: (v[1] if isinstance(v, tuple) else v) for k, v in server_options.items()}
    with hostile_server(**old_options) as old_server, hostile_server(**new_options) as new_server:

        async def both() -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
            return await asyncio.gather(
                _play_all(old_connect(old_server), cases, old_server),
                _play_all(new_connect(new_server), cases, new_server),
            )

        with asyncio.Runner(loop_factory=loop_factory) as runner:
            old, new = runner.run(both())
        return old, new, _compare(old, new, old_server, new_server, different)


def _over_tcp(old: bool) -> Callable[[HostileServer], Connect]:
    def connect_for(server: HostileServer) -> Connect:
        def connect(case: str) -> HttpBotConnection:
            transport = SocketTransport() if old else Http1Transport(TcpDialer("127.0.0.1", server.port))
            return HttpBotConnection(
                f"http://127.0.0.1:{server.port}/{case}", SECRET, transport, max_response_bytes=CAP
            )

        return connect

    return connect_for


@pytest.mark.slow
@pytest.mark.parametrize("loop", ["asyncio", "uvloop"])
def test_every_hostile_answer_gets_the_same_outcome_from_both_clients(loop: str) -> None:
    """On asyncio's loop and on uvloop (the worker's, when installed)."""
    loop_factory = pytest.importorskip("uvloop").new_event_loop if loop == "uvloop" else None
    new, problems = _run_both(_over_tcp(True), _over_tcp(False), list(CASES), loop_factory=loop_factory)[1:]

    assert not problems, "\n".join(problems)
    # The corpus does reach every kind of outcome, and the timeouts are timeouts, not errors.
    kinds = {outcome_class(reply) for replies in new.values() for reply in replies}
    assert {"ok", "timed out", "broken HTTP answer", f"answer is larger than {CAP} bytes"} <= kinds
    assert "HTTP 500: boom" in kinds
    assert "HTTP 302 redirect (redirects are not followed)" in kinds
    assert [r.timed_out for r in new["slow_body_drip"]] == [True, True]
    assert all(r.latency_ms < TIMEOUT_MS + 250 for replies in new.values() for r in replies)


UNIX_CASES = [
    "ok",
    "ok_chunked",
    "close_after_answer",
    "connection_close_header",
    "timeout_then_ok",
    "status_500_json",
    "redirect_302",
    "body_over_cap",
    "close_mid_body",
    "reset_without_answer",
    "no_answer",
]


def test_the_same_over_a_unix_socket(tmp_path: Path) -> None:
    """Hosted bots: the same protocol over the sandbox's socket (`over_unix_socket`)."""

    def over_unix(old: bool) -> Callable[[HostileServer], Connect]:
        def connect_for(server: HostileServer) -> Connect:
            assert server.unix_path is not None
            path = server.unix_path

            def connect(case: str) -> HttpBotConnection:
                transport = SocketTransport(uds=path) if old else Http1Transport(UnixDialer(path))
                return HttpBotConnection(
                    f"http://hosted-bot/{case}", SECRET, transport, max_response_bytes=CAP
                )

            return connect

        return connect_for

    paths = (str(tmp_path / "old.sock"), str(tmp_path / "new.sock"))
    new_results, problems = _run_both(over_unix(True), over_unix(False), UNIX_CASES, unix_path=paths)[1:]
    assert not problems, "\n".join(problems)
    assert [r.ok for r in new_results["ok"]] == [True, True]


def _certificate(tmp_path: Path, hostname: str) -> tuple[Path, Path]:
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
    cert_path, key_path = tmp_path / f"{hostname}.pem", tmp_path / f"{hostname}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


@pytest.mark.parametrize("certified_name", ["bot.example", "other.example"])
def test_the_same_over_tls_with_the_endpoint_name_checked(tmp_path: Path, certified_name: str) -> None:
    """https bots: pinned to the checked address, the certificate checked against the endpoint's
    host name (SNI too); a certificate for another name fails every turn in both clients alike."""
    cert_path, key_path = _certificate(tmp_path, certified_name)
    names: list[list[str | None]] = [[], []]

    def server_context(seen: list[str | None]) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        context.sni_callback = lambda _sock, name, _ctx: seen.append(name)
        return context

    trust = ssl.create_default_context(cafile=str(cert_path))

    def over_tls(old: bool) -> Callable[[HostileServer], Connect]:
        def connect_for(server: HostileServer) -> Connect:
            def connect(case: str) -> HttpBotConnection:
                url = f"https://bot.example:{server.port}/{case}"
                pinned = ResolvedEndpoint(
                    url=httpx.URL(url), host="bot.example", port=server.port, address="127.0.0.1"
                )
                transport: Any = (
                    PinnedTransport(pinned, httpx.AsyncHTTPTransport(verify=trust))
                    if old
                    else Http1Transport(TcpDialer.for_endpoint(pinned, ssl_context=trust))
                )
                return HttpBotConnection(pinned.url, SECRET, transport, max_response_bytes=CAP)

            return connect

        return connect_for

    cases = ["ok", "close_after_answer", "status_500_json", "redirect_302", "body_over_cap", "close_mid_body"]
    tls = (server_context(names[0]), server_context(names[1]))
    different = {}
    if certified_name == "bot.example":
        different["close_after_answer"] = (
            "ok | ok",
            "the bot's TLS close_notify marks the connection closed at once; httpx's TLS stream "
            "reused the connection and the next turn failed",
        )
    new_results, problems = _run_both(over_tls(True), over_tls(False), cases, different, tls=tls)[1:]
    assert not problems, "\n".join(problems)
    assert set(names[1]) == {"bot.example"}
    if certified_name == "bot.example":
        assert [r.ok for r in new_results["ok"]] == [True, True]
    else:
        assert all("cannot connect" in str(r.error) for replies in new_results.values() for r in replies)
        assert "CERTIFICATE_VERIFY_FAILED" in str(new_results["ok"][0].error)


HEALTH_CASES = ["ok", "status_500_json", "redirect_302", "no_answer", "close_without_answer", "body_over_cap"]


def test_health_checks_fail_alike() -> None:
    async def health(connect: Connect, case: str) -> str:
        async with connect(case) as connection:
            try:
                await connection.health(TIMEOUT_MS / 1000)
            except BotEndpointError as exc:
                return exc.message
            return "healthy"

    with hostile_server() as old_server, hostile_server() as new_server:
        old_connect, new_connect = _over_tcp(True)(old_server), _over_tcp(False)(new_server)

        async def both() -> list[tuple[str, str]]:
            return [
                (await health(old_connect, case), await health(new_connect, case)) for case in HEALTH_CASES
            ]

        answers = asyncio.run(both())
    for case, (old, new) in zip(HEALTH_CASES, answers, strict=True):
        assert old == new, case
    assert answers[0][1] == 'health check: answer is not {"status": "ok"}'


SIGNED = re.compile(rb"(webhook-id|webhook-timestamp|webhook-signature): [^\r]*")


def test_requests_are_the_same_bytes() -> None:
    """Method, target, headers (names, order, values) and framing; the signature differs only by
    its message id and time."""

    async def requests(connect: Connect) -> None:
        async with connect("ok") as connection:
            with pytest.raises(BotEndpointError, match="status"):  # the corpus's answer is a turn's
                await connection.health(1.0)
            await connection.turn(
                match_id="m", game="podracing", player=1, turn=7, timeout_ms=1000, observation={"pods": [1.5]}
            )

    heads = []
    for old in (True, False):
        with hostile_server() as server:
            asyncio.run(requests(_over_tcp(old)(server)))
            port = str(server.port).encode()
            heads.append(
                [SIGNED.sub(rb"\1: ...", head).replace(port, b"PORT") for head in server.seen["ok"].requests]
            )
    assert heads[0] == heads[1]
    assert heads[1][1].startswith(b"POST /ok/turn HTTP/1.1\r\nhost: 127.0.0.1:PORT\r\n")
    assert heads[1][1].endswith(b"content-type: application/json\r\ncontent-length: 115\r\n\r\n")


def test_a_header_that_would_inject_lines_is_refused_by_both() -> None:
    async def turn(connect: Connect) -> Any:
        async with connect("ok") as connection:
            return await connection.turn(
                match_id="m\r\nx-injected: 1", game="g", player=0, turn=0, timeout_ms=1000, observation={}
            )

    with hostile_server() as old_server, hostile_server() as new_server:
        old = asyncio.run(turn(_over_tcp(True)(old_server)))
        new = asyncio.run(turn(_over_tcp(False)(new_server)))
        assert outcome_class(old) == outcome_class(new) == "LocalProtocolError"
        assert new_server.seen["ok"].requests == []


async def _same_loop_server(answer: Callable[[asyncio.StreamWriter], Awaitable[None]]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"content-length: (\d+)", head)
        await reader.readexactly(int(length.group(1)) if length else 0)
        await answer(writer)

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def test_a_kept_alive_connection_the_bot_closes_as_the_turn_goes_out_is_retried_once() -> None:
    """The bot answers and then closes without saying so (no `Connection: close`); the close can
    reach us after the next request went out on that connection. That request is sent once more on
    a new connection, so no turn fails; a new connection that closes unanswered is a failed turn."""
    body = b'{"action": 1}'

    async def answer_then_close(writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        await asyncio.sleep(0.001)  # after the client has its answer and sends the next turn
        writer.close()

    async def close_unanswered(writer: asyncio.StreamWriter) -> None:
        writer.close()

    async def play(answer: Callable[[asyncio.StreamWriter], Awaitable[None]]) -> list[Any]:
        server = await _same_loop_server(answer)
        port = server.sockets[0].getsockname()[1]
        transport = Http1Transport(TcpDialer("127.0.0.1", port))
        async with (
            server,
            HttpBotConnection(f"http://127.0.0.1:{port}", SECRET, transport, max_response_bytes=CAP) as c,
        ):
            return [
                await c.turn(match_id="m", game="g", player=0, turn=t, timeout_ms=1000, observation={})
                for t in range(20)
            ]

    assert [r.error for r in asyncio.run(play(answer_then_close))] == [None] * 20
    failed = asyncio.run(play(close_unanswered))
    assert {r.error for r in failed} == {
        "broken HTTP answer: Server disconnected without sending a response."
    }
