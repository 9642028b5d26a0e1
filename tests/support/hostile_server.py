"""A loopback HTTP server that answers each request with scripted bytes: the corpus of answers a
hostile or broken bot can send, for comparing bot clients answer by answer.

Each case is a path prefix (`http://127.0.0.1:PORT/<case>`); the n-th request of a case gets the
n-th answer of its script (the last one repeats). The server runs its own event loop in a thread, so
the client's loop sees it as it would see another process.
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import ssl
import struct
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

OK_BODY = b'{"action": {"pods": [{"x": 1, "y": 2, "thrust": 100}]}}'
CAP = 4096
"""The size cap the clients are given in these tests."""


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Drip:
    """Bytes sent one at a time, `interval` apart."""

    data: bytes
    interval: float


CLOSE = "close"
"""Close the connection (a FIN) once the answer so far is written."""
RESET = "reset"
"""Abort the connection with a RST."""

Step = bytes | Sleep | Drip | str
Answer = tuple[Step, ...]


def response(
    status: int = 200,
    body: bytes = OK_BODY,
    headers: tuple[tuple[str, str], ...] = (("Content-Type", "application/json"),),
    *,
    version: bytes = b"HTTP/1.1",
    reason: bytes = b"OK",
    length: bool = True,
) -> bytes:
    lines = [version + b" " + str(status).encode() + (b" " + reason if reason else b"")]
    lines += [f"{name}: {value}".encode("latin-1") for name, value in headers]
    if length:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def chunked(body: bytes, size: int = 7, extension: bytes = b"", trailer: bytes = b"") -> bytes:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    parts = [
        b"%x%s\r\n%s\r\n" % (len(body[i : i + size]), extension, body[i : i + size])
        for i in range(0, len(body), size)
    ]
    return head + b"".join(parts) + b"0\r\n" + trailer + b"\r\n"


def _gzip(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


OK = (response(),)

LATE_BYTES = frozenset({"answer_after_a_pause_then_junk"})
"""Cases whose bytes after a complete answer are meant to reach the client before its next request.
A client waits for the server to have written them: a fixed pause between turns does not order
them on a loaded machine."""
PADDED_TO_CAP = b'{"action": 1' + b" " * (CAP - 13) + b"}"
LENGTH = b"Content-Length: %d" % len(OK_BODY)
CASES: dict[str, tuple[Answer, ...]] = {
    # --- answers that are fine ---------------------------------------------------------------------
    "ok": (OK,),
    "ok_no_reason": ((response(reason=b""),),),
    "ok_at_cap": ((response(body=PADDED_TO_CAP),),),
    "ok_chunked": ((chunked(OK_BODY),),),
    "ok_chunked_extension_trailer": ((chunked(OK_BODY, extension=b";x=1", trailer=b"X-Trailer: 1\r\n"),),),
    "ok_big_header": ((response(headers=(("X-Junk", "a" * 50_000),)),),),
    "ok_many_headers": ((response(headers=tuple((f"X-H{i}", "v" * 10) for i in range(2000))),),),
    "ok_latin1_header": ((response(headers=(("X-Name", "caf\u00e9"),)),),),
    "ok_continue_first": ((b"HTTP/1.1 100 Continue\r\n\r\n" + response(),),),
    "ok_early_hints_first": ((b"HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n" + response(),),),
    "ok_split_everywhere": ((Drip(response(), 0.0),),),
    # --- keep-alive and connection ends ------------------------------------------------------------
    "connection_close_header": ((response(headers=(("Connection", "close"),)), CLOSE),),
    "close_after_answer": ((response(), CLOSE),),
    "close_after_answer_later": ((response(), Sleep(0.02), CLOSE),),
    "http10_until_close": ((response(version=b"HTTP/1.0", length=False), CLOSE),),
    "http10_with_length": ((response(version=b"HTTP/1.0"),),),
    "http10_keep_alive": ((response(version=b"HTTP/1.0", headers=(("Connection", "keep-alive"),)),),),
    "http11_until_close": ((response(length=False), CLOSE),),
    "http11_no_length_never_closed": ((response(length=False),),),
    "timeout_then_ok": ((Sleep(1.0), response()), OK),
    "error_then_ok": ((response(500, b'{"error": "boom"}'),), OK),
    "redirect_then_ok": ((response(302, b"", (("Location", "http://127.0.0.1:1/internal"),)),), OK),
    "huge_then_ok": ((response(body=b"x" * (CAP + 1)),), OK),
    "extra_bytes_after_answer": ((response() + b"junk",), OK),
    "two_answers_to_one_request": ((response() + response(body=b'{"action": "stale"}'),), OK),
    "answer_after_a_pause_then_junk": ((response(), Sleep(0.02), b"junk"), OK),
    # --- statuses ------------------------------------------------------------------------------
    "status_500_json": ((response(500, b'{"error": "boom"}'),),),
    "status_500_text": ((response(500, b"Internal Server Error", (("Content-Type", "text/plain"),)),),),
    "status_404_empty": ((response(404, b""),),),
    "status_204": ((response(204, b"", length=False),),),
    "status_201": ((response(201),),),
    "status_999": ((response(999),),),
    "redirect_301": ((response(301, b"moved", (("Location", "/internal"),)),),),
    "redirect_302": ((response(302, b"", (("Location", "http://127.0.0.1:1/internal"),)),),),
    "redirect_303": ((response(303, b"", (("Location", "/internal"),)),),),
    "redirect_304": ((response(304, b"", length=False),),),
    "redirect_307": ((response(307, b"", (("Location", "/internal"),)),),),
    "redirect_308_chunked": ((chunked(b"moved").replace(b"200 OK", b"308 Permanent Redirect"),),),
    "switching_protocols_101": (
        (b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",),
    ),
    # --- sizes ---------------------------------------------------------------------------------
    "declared_too_big": ((b"HTTP/1.1 200 OK\r\nContent-Length: 10000000\r\n\r\n" + OK_BODY,),),
    "body_over_cap": ((response(body=b'{"action": "' + b"x" * CAP + b'"}'),),),
    "chunked_over_cap": ((chunked(b'{"action": "' + b"x" * (2 * CAP) + b'"}', size=1000),),),
    "until_close_over_cap": ((response(body=b"x" * (3 * CAP), length=False), CLOSE),),
    "huge_header": ((response(headers=(("X-Junk", "a" * 200_000),)),),),
    "endless_header": ((b"HTTP/1.1 200 OK\r\nX-Junk: " + b"a" * 300_000,),),
    "endless_status_line": ((b"HTTP/1.1 200 " + b"O" * 300_000,),),
    # --- encodings -------------------------------------------------------------------------------
    "gzip": ((response(body=_gzip(OK_BODY), headers=(("Content-Encoding", "gzip"),)),),),
    "deflate": ((response(body=zlib.compress(OK_BODY), headers=(("Content-Encoding", "deflate"),)),),),
    "gzip_bomb": ((response(body=_gzip(b" " * 10_000_000), headers=(("Content-Encoding", "gzip"),)),),),
    "transfer_encoding_gzip": (
        (response(body=_gzip(OK_BODY), headers=(("Transfer-Encoding", "gzip"),), length=False), CLOSE),
    ),
    "transfer_encoding_gzip_chunked": ((chunked(OK_BODY).replace(b": chunked", b": gzip, chunked"),),),
    "transfer_encoding_twice": (
        (chunked(OK_BODY).replace(b"chunked\r\n", b"chunked\r\nTransfer-Encoding: chunked\r\n"),),
    ),
    "length_and_chunked": ((chunked(OK_BODY).replace(b"chunked\r\n", b"chunked\r\nContent-Length: 5\r\n"),),),
    "chunked_bad_size": ((b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",),),
    "chunked_cut": ((chunked(OK_BODY)[:-20], CLOSE),),
    "chunked_never_ends": ((chunked(OK_BODY)[:-5],),),
    # --- framing -----------------------------------------------------------------------------------
    "duplicate_length_same": ((response().replace(LENGTH, LENGTH + b"\r\n" + LENGTH),),),
    "duplicate_length_different": ((response().replace(LENGTH, LENGTH + b"\r\nContent-Length: 5"),),),
    "length_not_a_number": ((b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n" + OK_BODY,),),
    "length_negative": ((b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n" + OK_BODY,),),
    "length_plus_sign": ((response().replace(b"Length: ", b"Length: +"),),),
    "length_too_short": ((response().replace(LENGTH, b"Content-Length: 20"),),),
    "length_too_long_then_close": ((response().replace(LENGTH, b"Content-Length: 100"), CLOSE),),
    "length_too_long_then_wait": ((response().replace(LENGTH, b"Content-Length: 100"),),),
    # --- broken heads ------------------------------------------------------------------------------
    "garbage": ((b"hello world\r\n\r\n", CLOSE),),
    "http2_status_line": ((b"HTTP/2 200\r\ncontent-length: 2\r\n\r\n{}",),),
    "http09_style_body_only": ((OK_BODY, CLOSE),),
    "bad_status_code": ((b"HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n{}",),),
    "lowercase_protocol": ((response().replace(b"HTTP/1.1", b"http/1.1"),),),
    "bare_lf": ((response().replace(b"\r\n", b"\n"),),),
    "obs_fold": ((response(headers=(("X-A", "one"),)).replace(b"X-A: one", b"X-A: one\r\n  two"),),),
    "space_before_colon": ((response().replace(b"Content-Length:", b"Content-Length :"),),),
    "nul_in_header": ((response(headers=(("X-A", "a\x00b"),)),),),
    "cr_in_header": ((response(headers=(("X-A", "a\rb"),)),),),
    "header_without_colon": ((response(headers=(("X-A", "x"),)).replace(b"X-A: x", b"X-A x"),),),
    "leading_blank_line": ((b"\r\n" + response(),),),
    # --- bodies ------------------------------------------------------------------------------------
    "invalid_json": ((response(body=b'{"action": {"pods": ['),),),
    "not_utf8": ((response(body=b'{"action": "\xff\xfe"}'),),),
    "no_action": ((response(body=b'{"move": 1}'),),),
    "not_an_object": ((response(body=b"[1, 2]"),),),
    "empty_200": ((response(body=b""),),),
    "nan": ((response(body=b'{"action": NaN}'),),),
    # --- time and connection loss -----------------------------------------------------------------
    "no_answer": ((Sleep(2.0),),),
    "slow_head_drip": ((Drip(response(), 0.05),),),
    "slow_body_drip": ((response()[:-40], Drip(response()[-40:], 0.05)),),
    "close_without_answer": ((CLOSE,),),
    "close_mid_head": ((b"HTTP/1.1 200 OK\r\nContent-Le", CLOSE),),
    "close_mid_body": ((response()[:-30], CLOSE),),
    "reset_without_answer": ((RESET,),),
    "reset_mid_body": ((response()[:-30], Sleep(0.01), RESET),),
    "close_after_continue": ((b"HTTP/1.1 100 Continue\r\n\r\n", CLOSE),),
}
TIMEOUT_MS = 500
"""Per-turn timeout of the comparison; the slow cases take several times longer."""


@dataclass
class Seen:
    """What the server saw for one case: request heads (per connection) and connection count."""

    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    written: int = 0
    """Answers written to the end of their script."""


class HostileServer:
    def __init__(self) -> None:
        self.seen: dict[str, Seen] = defaultdict(Seen)
        self._count: dict[str, int] = defaultdict(int)
        self.port = 0
        self.unix_path: str | None = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        counted: set[str] = set()
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                target = head.split(b" ", 2)[1].decode()
                case = target.strip("/").split("/")[0]
                if case not in counted:
                    counted.add(case)
                    self.seen[case].connections += 1
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                self.seen[case].requests.append(head)
                script = CASES[case]
                answer = script[min(self._count[case], len(script) - 1)]
                self._count[case] += 1
                try:
                    if not await self._play(answer, writer):
                        return
                except ConnectionError:  # the client gave up first
                    return
                self.seen[case].written += 1
        finally:
            writer.close()

    async def written(self, case: str, count: int, timeout: float = 5.0) -> None:
        """Return once `count` of the case's answers are written in full (from the client's loop;
        the server's runs in its own thread)."""
        deadline = time.monotonic() + timeout
        while self.seen[case].written < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{case}: answer {count} not written within {timeout} s")
            await asyncio.sleep(0.002)

    @staticmethod
    async def _play(answer: Answer, writer: asyncio.StreamWriter) -> bool:
        """Write one scripted answer; False once the connection is closed."""
        for step in answer:
            if isinstance(step, bytes):
                writer.write(step)
                await writer.drain()
            elif isinstance(step, Sleep):
                await asyncio.sleep(step.seconds)
            elif isinstance(step, Drip):
                for i in range(len(step.data)):
                    writer.write(step.data[i : i + 1])
                    await writer.drain()
                    await asyncio.sleep(step.interval)
            elif step == CLOSE:
                await writer.drain()
                writer.close()
                return False
            elif step == RESET:
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return False
        return True


@contextmanager
def hostile_server(
    unix_path: str | None = None, tls: ssl.SSLContext | None = None
) -> Iterator[HostileServer]:
    """The server on a free loopback port (TLS with `tls`; and on `unix_path`, when given), in its
    own thread."""
    server = HostileServer()
    loop = asyncio.new_event_loop()
    started = threading.Event()
    servers: list[asyncio.Server] = []

    async def start() -> None:
        tcp = await asyncio.start_server(server._handle, "127.0.0.1", 0, ssl=tls)
        server.port = tcp.sockets[0].getsockname()[1]
        servers.append(tcp)
        if unix_path is not None:
            servers.append(await asyncio.start_unix_server(server._handle, unix_path))
            server.unix_path = unix_path
        started.set()

    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    started.wait(10)
    try:
        yield server
    finally:

        async def stop() -> None:
            for each in servers:
                each.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
