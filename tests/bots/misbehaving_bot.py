"""A small protocol-v1 bot that misbehaves on purpose, to test the match runner. Standard library
plus the signing module only.

    ARENA_BOT_SECRET=whsec_... python tests/bots/misbehaving_bot.py --port 8123 --mode slow

Modes (the health check always answers, except once a dying bot is dead):
  ok         a sensible podracing action (drive both pods to their next checkpoint)
  slow       sleeps --delay seconds before answering every turn (a timeout)
  error500   HTTP 500 with a JSON error
  malformed  HTTP 200 with a body that is not JSON
  huge       HTTP 200 with a 10 MB body, chunked (no Content-Length to refuse it by)
  redirect   HTTP 302 to /internal on this same server (which counts any hit it gets)
  invalid    HTTP 200 {"action": ...} that is not a valid podracing action
  die        plays like `ok`, then exits abruptly after --die-after turns
Hostile answers (see hostile_body): deep, bigint, overflow, hugefloat, nan, badutf8,
wrongtypes, nulerror, surrogate, nulaction, junk; nulhealth answers its health check with HTTP 500
and a NUL in the error text.
GET /stats (unsigned) returns what the bot saw: turns, bad signatures, hits on /internal.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from shared.protocol.signing import SignatureError, verify

HUGE_BYTES = 10 * 1024 * 1024
DEEP_LEVELS = 30_000
JUNK_BYTES = 60_000


def _pods(observation: dict[str, Any], **extra: Any) -> list[dict[str, Any]]:
    return [dict(pod, **extra) for pod in steer(observation)["pods"]]


def _junk(turn: int) -> str:
    """Letters that gzip cannot shrink much: a different pseudo-random string every turn."""
    state = turn * 2654435761 % 2**32 or 1
    out = []
    for _ in range(JUNK_BYTES):
        state = (state * 1103515245 + 12345) % 2**31
        out.append(chr(97 + state % 26))
    return "".join(out)


def hostile_body(mode: str, observation: dict[str, Any], turn: int) -> tuple[int, bytes] | None:
    """(status, body) of the hostile answer a mode sends, or None for modes that are not hostile."""
    if mode == "deep":
        return 200, b'{"action": ' + b"[" * DEEP_LEVELS + b"]" * DEEP_LEVELS + b"}"
    if mode == "bigint":
        return 200, b'{"action": {"pods": [{"x": ' + b"9" * 50_000 + b', "y": 1, "thrust": 1}]}}'
    if mode == "overflow":  # parses as an int; float() of it raises OverflowError
        return 200, b'{"action": {"pods": [{"x": 1' + b"0" * 400 + b', "y": 1, "thrust": 1}]}}'
    if mode == "hugefloat":
        return 200, b'{"action": {"pods": [{"x": 1e999, "y": -1e999, "thrust": 50}]}}'
    if mode == "nan":
        pods = _pods(observation, thrust=float("nan"))
        return 200, json.dumps({"action": {"pods": pods, "aim": float("inf")}}).encode()
    if mode == "badutf8":
        return 200, b'{"action": {"pods": [], "note": "\xff\xfe\xc3"}}'
    if mode == "wrongtypes":
        wrong_pods: list[object] = [
            {"x": [[{"y": None}]], "y": {"deep": [1, [2, [3]]]}, "thrust": {"BOOST": True}},
            "pod",
        ]
        return 200, json.dumps({"action": {"pods": wrong_pods}}).encode()
    if mode == "nulerror":
        return 500, json.dumps({"error": "crash\u0000in decide \x00 \u0000"}).encode()
    if mode == "surrogate":
        return 500, b'{"error": "lone \\ud800 and \\udfff surrogates \\u0000"}'
    if mode == "nulaction":
        pods = _pods(observation, message="hi\u0000there\ud800")
        pods[0]["\u0000key"] = "\u0000value"
        return 200, json.dumps({"action": {"pods": pods, "\u0000": ["\u0000", {"\u0000": 0}]}}).encode()
    if mode == "junk":
        return 200, json.dumps({"action": {"pods": steer(observation)["pods"], "junk": _junk(turn)}}).encode()
    return None


HOSTILE_MODES = (
    *("deep", "bigint", "overflow", "hugefloat", "nan", "badutf8", "wrongtypes"),
    *("nulerror", "surrogate", "nulaction", "junk"),
)


class State:
    def __init__(self, mode: str, secret: str, delay: float, die_after: int, latency: float) -> None:
        self.mode = mode
        self.latency = latency
        self.secret = secret
        self.delay = delay
        self.die_after = die_after
        self.lock = threading.Lock()
        self.stats = {"turns": 0, "health": 0, "bad_signatures": 0, "internal_hits": 0}

    def count(self, key: str) -> int:
        with self.lock:
            self.stats[key] += 1
            return self.stats[key]


def steer(observation: dict[str, Any]) -> dict[str, Any]:
    checkpoints = observation["checkpoints"]
    pods = []
    for pod in observation["pods"]:
        x, y = checkpoints[pod["next_checkpoint"]]
        pods.append({"x": x, "y": y, "thrust": 100})
    return {"pods": pods}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: State

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle delays every answer by ~40 ms.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            self.close_connection = True

    def _send_chunked(self, body: bytes, chunk: int = 65536) -> None:
        """No Content-Length: the reader cannot know the size up front and must cap while reading."""
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, len(body), chunk):
                part = body[start : start + chunk]
                self.wfile.write(f"{len(part):x}\r\n".encode() + part + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode())

    def _verified(self, body: bytes) -> bool:
        try:
            headers = {k.lower(): v for k, v in self.headers.items()}
            verify(self.state.secret, headers, body, method=self.command, path=self.path)
        except SignatureError:
            self.state.count("bad_signatures")
            self._json(401, {"error": "bad signature"})
            return False
        return True

    def do_GET(self) -> None:
        if self.path == "/stats":
            with self.state.lock:
                self._json(200, dict(self.state.stats))
            return
        if self.path.startswith("/internal"):
            self.state.count("internal_hits")
            self._json(200, {"action": {"pods": []}, "status": "ok"})
            return
        if self.path == "/health" and self._verified(b""):
            self.state.count("health")
            if self.state.mode == "nulhealth":
                self._json(500, {"error": "not ready\u0000\ud800 yet"})
                return
            self._json(200, {"status": "ok"})
            return
        self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.path.startswith("/internal"):
            self.state.count("internal_hits")
            self._json(200, {"action": {"pods": []}})
            return
        if self.path != "/turn" or not self._verified(body):
            if self.path != "/turn":
                self._json(404, {"error": "not found"})
            return
        turns = self.state.count("turns")
        request = json.loads(body)
        mode = self.state.mode
        if self.state.latency:
            time.sleep(self.state.latency)
        if mode == "die" and turns > self.state.die_after:
            os._exit(3)
        hostile = hostile_body(mode, request["observation"], turns)
        if hostile is not None:
            self._send(*hostile)
        elif mode == "slow":
            time.sleep(self.state.delay)
            self._json(200, {"action": steer(request["observation"])})
        elif mode == "error500":
            self._json(500, {"error": "KeyError: 'boom'"})
        elif mode == "malformed":
            self._send(200, b'{"action": {"pods": [')
        elif mode == "huge":
            self._send_chunked(b'{"action": "' + b"x" * HUGE_BYTES + b'"}')
        elif mode == "redirect":
            assert isinstance(self.server, ThreadingHTTPServer)
            self._send(302, b"", {"Location": f"http://127.0.0.1:{self.server.server_port}/internal"})
        elif mode == "invalid":
            self._json(200, {"action": {"pods": "full speed ahead"}})
        else:
            self._json(200, {"action": steer(request["observation"])})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument(
        "--mode",
        default="ok",
        choices=[
            *("ok", "slow", "error500", "malformed", "huge", "redirect", "invalid", "die", "nulhealth"),
            *HOSTILE_MODES,
        ],
    )
    parser.add_argument("--delay", type=float, default=2.0)
    parser.add_argument("--die-after", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every turn, any mode")
    args = parser.parse_args()
    state = State(args.mode, os.environ["ARENA_BOT_SECRET"], args.delay, args.die_after, args.latency)
    handler = type("BotHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    print(f"misbehaving bot ({args.mode}) on port {args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
