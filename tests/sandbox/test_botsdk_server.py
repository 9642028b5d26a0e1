"""The SDK's asyncio server on raw bytes: every malformed or odd request gets the status the previous
thread-per-connection server (shared.botsdk.threaded) gave it, and what the event loop adds holds:
requests split anywhere or pipelined, half-closed connections, the idle timeout, health checks
answered while `decide` thinks, shutdown, Unix sockets and inherited descriptors."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from shared.botsdk import make_server, server
from shared.botsdk.threaded import make_threaded_server
from shared.protocol.signing import Signer
from tests.support.sandbox import turn_body

Address = tuple[str, int] | str


def decide(observation: Any) -> Any:
    if isinstance(observation, dict) and observation.get("sleep"):
        time.sleep(observation["sleep"])
    return {"seen": observation}


@contextmanager
def serving(make: Callable[..., Any], secret: str, **options: Any) -> Iterator[Any]:
    bot = make(decide, secret=secret, **(options or {"port": 0}))
    # The threaded server looks for shutdown() every poll_interval (0.5 s by default): that wait,
    # not the requests, was most of each case's time. The asyncio server ignores the argument.
    thread = threading.Thread(target=bot.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield bot
    finally:
        bot.shutdown()
        bot.server_close()
        thread.join(5)


def connect(address: Address) -> socket.socket:
    if isinstance(address, str):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(address)
    else:
        sock = socket.create_connection(address)
    sock.settimeout(5)
    return sock


def read_answers(sock: socket.socket, count: int = 1) -> list[tuple[int, bytes]]:
    """(status, body) of `count` answers, or of what came before the server closed; an answer
    without a status line (HTTP/0.9) is (0, everything that came)."""
    data = b""
    answers: list[tuple[int, bytes]] = []
    while len(answers) < count:
        head_end = data.find(b"\r\n\r\n")
        if data.startswith(b"HTTP/1.1 100 "):
            data = data[head_end + 4 :]
            continue
        if data.startswith(b"HTTP/") and head_end >= 0:
            length = int(re.search(rb"(?i)content-length: *(\d+)", data[:head_end]).group(1))  # type: ignore[union-attr]
            if len(data) >= head_end + 4 + length:
                answers.append((int(data[9:12]), data[head_end + 4 : head_end + 4 + length]))
                data = data[head_end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        if not chunk:
            if data:
                answers.append((0, data))
            break
        data += chunk
    return answers


def closed_by_server(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except (TimeoutError, ConnectionResetError):
        return False


def status_of(answer: bytes) -> int:
    """The status of a whole answer, also when http.server wrote only its HTML error page."""
    if answer.startswith(b"HTTP/"):
        return int(answer[9:12])
    code = re.search(rb"Error code: (\d+)", answer)
    if code:
        return int(code.group(1))
    return 401 if b"bad signature" in answer else 0


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def raw_exchange(address: Address, request: bytes) -> bytes:
    """One request on a fresh connection; the answer's bytes (the first final answer, or all until
    close)."""
    with connect(address) as sock:
        sock.sendall(request)
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
            data = data.removeprefix(CONTINUE)
            head_end = data.find(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: *(\d+)", data[: max(head_end, 0)])
            whole = head_end >= 0 and length and len(data) >= head_end + 4 + int(length.group(1))
            if data.startswith(b"HTTP/") and whole:
                break
        return data


def signed_request(
    secret: str,
    method: str = "GET",
    path: str = "/health",
    body: bytes = b"",
    *,
    target: str | None = None,
    version: str = "HTTP/1.1",
    extra: bytes = b"",
) -> bytes:
    headers = Signer(secret).headers(f"m-{uuid.uuid4().hex}", body, method=method, path=path)
    lines = b"".join(f"{name}: {value}\r\n".encode() for name, value in headers.items())
    length = f"content-length: {len(body)}\r\n".encode() if body else b""
    line = f"{method} {target or path} {version}\r\n".encode()
    return line + b"host: bot\r\n" + lines + length + extra + b"\r\n" + body


def corpus(secret: str) -> dict[str, bytes]:
    """Raw requests, each with the answer http.server's status decided."""
    turn = turn_body({"n": 1})
    many = b"".join(b"x-h%d: v\r\n" % i for i in range(100))
    return {
        "health": signed_request(secret),
        "turn": signed_request(secret, "POST", "/turn", turn),
        "unsigned": b"GET /health HTTP/1.1\r\nhost: bot\r\n\r\n",
        "garbage": b"GARBAGE\r\n\r\n",
        "http2": b"GET /health HTTP/2.0\r\n\r\n",
        "bad version": b"GET /health HTTP/1.x\r\n\r\n",
        "version without digits": b"GET /health HTTX/1.1\r\n\r\n",
        "http 1.2": signed_request(secret, version="HTTP/1.2"),
        "four words": b"GET /health now HTTP/1.1\r\n\r\n",
        "one word": b"GET\r\n\r\n",
        "http 0.9 post": b"POST /turn\r\n\r\n",
        "http 0.9 get": b"GET /health\r\n\r\n",
        "patch": b"PATCH /turn HTTP/1.1\r\n\r\n",
        "head": b"HEAD /health HTTP/1.1\r\n\r\n",
        "not found": signed_request(secret, path="/nope"),
        "wrong method": signed_request(secret, path="/turn"),
        "put": signed_request(secret, "PUT", "/turn", turn),
        "delete": signed_request(secret, "DELETE", "/health"),
        "double slash": signed_request(secret, target="//health", path="/health"),
        "request line too long": b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n",
        "request line at the limit": b"GET /" + b"a" * (65_536 - 17) + b" HTTP/1.1\r\n\r\n",
        "header line too long": b"GET /health HTTP/1.1\r\nx-big: " + b"a" * 70_000 + b"\r\n\r\n",
        "too many headers": b"GET /health HTTP/1.1\r\n" + many + b"\r\n",
        "99 headers": b"GET /health HTTP/1.1\r\n" + many[: many.index(b"x-h99")] + b"\r\n",
        "chunked": b"POST /turn HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
        "length not a number": b"POST /turn HTTP/1.1\r\ncontent-length: abc\r\n\r\n",
        "negative length": b"POST /turn HTTP/1.1\r\ncontent-length: -5\r\n\r\n",
        "body too large": b"POST /turn HTTP/1.1\r\ncontent-length: 2000000\r\n\r\n",
        "folded header": signed_request(secret, extra=b"x-folded: a\r\n  b\r\n"),
        "odd header line": signed_request(secret, extra=b"no colon here\r\n"),
        "bare LF lines": signed_request(secret).replace(b"\r\n", b"\n"),
        "http 1.0": signed_request(secret, version="HTTP/1.0"),
        "expect 100": signed_request(secret, "POST", "/turn", turn, extra=b"expect: 100-continue\r\n"),
        "bad json": signed_request(secret, "POST", "/turn", b"not json"),
        "repeated signature header": signed_request(secret, extra=b"webhook-signature: v2,AAAA\r\n"),
    }


CASES = list(corpus("whsec_" + "QUJD" * 12))


@pytest.mark.parametrize("case", CASES)
def test_each_request_gets_the_status_the_threaded_server_gave(secret: str, case: str) -> None:
    with serving(make_threaded_server, secret) as old, serving(make_server, secret) as new:
        before = raw_exchange(old.server_address, corpus(secret)[case])
        after = raw_exchange(new.server_address, corpus(secret)[case])  # signed afresh: a new id
    assert status_of(after) == status_of(before), (before[:300], after[:300])
    if before.startswith(b"HTTP/") and status_of(before) < 300:
        assert after.split(b"\r\n\r\n", 1)[1] == before.split(b"\r\n\r\n", 1)[1]


def test_pipelined_requests_and_requests_split_anywhere_are_all_answered(secret: str) -> None:
    requests = [signed_request(secret, "POST", "/turn", turn_body({"n": n})) for n in range(3)]
    with serving(make_server, secret) as bot, connect(bot.server_address) as sock:
        sock.sendall(b"".join(requests))  # three at once
        answers = read_answers(sock, 3)
        assert [json.loads(body)["action"]["seen"]["n"] for _, body in answers] == [0, 1, 2]
        for byte in signed_request(secret, "POST", "/turn", turn_body({"n": 9})):  # one byte at a time
            sock.send(bytes([byte]))
        assert json.loads(read_answers(sock)[0][1])["action"] == {"seen": {"n": 9}}


def test_a_half_closed_connection_still_gets_its_answer_then_closes(secret: str) -> None:
    with serving(make_server, secret) as bot, connect(bot.server_address) as sock:
        sock.sendall(signed_request(secret, "POST", "/turn", turn_body({"sleep": 0.2})))
        sock.shutdown(socket.SHUT_WR)
        [(status, _)] = read_answers(sock)
        assert status == 200
        assert closed_by_server(sock)


def test_connection_close_and_http_1_0_end_the_connection_keep_alive_keeps_it(secret: str) -> None:
    with serving(make_server, secret) as bot:
        for request, closes in [
            (signed_request(secret, extra=b"connection: close\r\n"), True),
            (signed_request(secret, version="HTTP/1.0"), True),
            (signed_request(secret, version="HTTP/1.0", extra=b"connection: keep-alive\r\n"), False),
            (signed_request(secret), False),
        ]:
            with connect(bot.server_address) as sock:
                sock.sendall(request)
                assert read_answers(sock)[0][0] == 200
                sock.settimeout(0.3)
                assert closed_by_server(sock) is closes, request[:60]


def test_expect_100_continue_is_answered_before_the_body_is_sent(secret: str) -> None:
    body = turn_body({"n": 1})
    request = signed_request(secret, "POST", "/turn", body, extra=b"expect: 100-continue\r\n")
    with serving(make_server, secret) as bot, connect(bot.server_address) as sock:
        sock.sendall(request[: -len(body)])
        assert sock.recv(100) == CONTINUE
        sock.sendall(body)
        assert read_answers(sock)[0][0] == 200


def test_an_idle_connection_is_closed(secret: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "KEEPALIVE_IDLE_S", 0.3)
    with serving(make_server, secret) as bot:
        with connect(bot.server_address) as idle, connect(bot.server_address) as talking:
            talking.sendall(signed_request(secret))
            assert read_answers(talking)[0][0] == 200
            started = time.monotonic()
            assert closed_by_server(idle)
            assert closed_by_server(talking)
            assert time.monotonic() - started < 2.0
        with connect(bot.server_address) as slow:  # half a head, then nothing
            slow.sendall(b"GET /health HTTP/1.1\r\n")
            assert closed_by_server(slow)


def test_health_is_answered_while_decide_thinks_and_turns_wait_their_turn(secret: str) -> None:
    with serving(make_server, secret) as bot:
        address = bot.server_address
        slow = connect(address)
        slow.sendall(signed_request(secret, "POST", "/turn", turn_body({"sleep": 1.0})))
        time.sleep(0.2)
        started = time.monotonic()
        assert raw_exchange(address, signed_request(secret)).startswith(b"HTTP/1.1 200")
        assert time.monotonic() - started < 0.6, "the health check waited for decide()"
        queued = raw_exchange(address, signed_request(secret, "POST", "/turn", turn_body({"n": 2})))
        assert time.monotonic() - started > 0.6, "a second turn ran beside the first decide()"
        assert json.loads(queued.split(b"\r\n\r\n", 1)[1])["action"] == {"seen": {"n": 2}}
        assert read_answers(slow)[0][0] == 200
        slow.close()


def test_shutdown_closes_open_connections_and_stops_accepting(secret: str) -> None:
    bot = make_server(decide, secret=secret, port=0)
    thread = threading.Thread(target=bot.serve_forever, daemon=True)
    thread.start()
    address = bot.server_address
    with connect(address) as sock:
        sock.sendall(signed_request(secret))
        assert read_answers(sock)[0][0] == 200
        bot.shutdown()
        bot.server_close()
        thread.join(5)
        assert not thread.is_alive()
        assert closed_by_server(sock)
    with pytest.raises(ConnectionRefusedError):
        connect(address)


def test_unix_socket_and_inherited_descriptor(secret: str, tmp_path: Path) -> None:
    path = str(tmp_path / "bot.sock")
    Path(path).write_text("stale")  # a leftover file at the path is replaced
    with serving(make_server, secret, unix_socket=path):
        assert raw_exchange(path, signed_request(secret)).startswith(b"HTTP/1.1 200")
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    inherited = str(tmp_path / "inherited.sock")
    listening.bind(inherited)
    listening.listen()
    with serving(make_server, secret, listen_fd=os.dup(listening.fileno())):
        answer = raw_exchange(inherited, signed_request(secret, "POST", "/turn", turn_body({"n": 3})))
    listening.close()
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {"action": {"seen": {"n": 3}}}
