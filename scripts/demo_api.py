"""The demo's REST client: everything the demo sets up goes through the public API, like a user would.

The demo rides out an outage of the platform it runs on (its PostgreSQL or Redis restarting, the
gateway answering 503 meanwhile, or not answering at all): a call that meets one waits, says so
once, and goes on when the platform answers again; after `Outage.wait_s` it gives up with an
ApiError that says why (the demo then stops and exits 1).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx

DEFAULT_OUTAGE_WAIT_S = 300.0
"""How long the demo waits for its platform to answer again: a restarted PostgreSQL or Redis is
back in seconds; minutes without an answer mean something an operator must look at."""
RETRY_MIN_S = 0.5
RETRY_MAX_S = 5.0
"""Between two tries during an outage: doubling from RETRY_MIN_S up to this, or the gateway's
Retry-After when it is shorter."""


class ApiError(RuntimeError):
    pass


class PlatformUnavailable(ApiError):
    """The platform did not answer (or answered 503) for longer than the demo waits."""


class Outage:
    """Waiting out one outage at a time, shared by every client of the demo so it is said once."""

    def __init__(
        self,
        wait_s: float = DEFAULT_OUTAGE_WAIT_S,
        say: Callable[[str], None] = print,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.wait_s = wait_s
        self._say = say
        self._sleep = sleep
        self._clock = clock
        self.started: float | None = None
        self._tries = 0

    def wait(self, problem: str, retry_after_s: float | None = None) -> None:
        """One failed try: say so if it is the outage's first, give up once it lasted `wait_s`,
        else sleep until the next try."""
        now = self._clock()
        if self.started is None:
            self.started, self._tries = now, 0
            self._say(
                f"    the platform is unavailable ({problem}); waiting up to {self.wait_s:.0f} s for it "
                "to come back (--outage-wait)"
            )
        elif now - self.started >= self.wait_s:
            raise PlatformUnavailable(
                f"the platform has been unavailable for {now - self.started:.0f} s ({problem}); "
                "giving up (--outage-wait sets how long to wait)"
            )
        delay = min(RETRY_MAX_S, RETRY_MIN_S * 2**self._tries)
        if retry_after_s is not None:
            delay = min(delay, max(RETRY_MIN_S, retry_after_s))
        self._tries += 1
        self._sleep(min(delay, max(0.0, self.started + self.wait_s - now)))

    def over(self) -> None:
        """A call was answered: if an outage was under way, say that it ended."""
        if self.started is not None:
            self._say(f"    the platform answers again (after {self._clock() - self.started:.0f} s)")
            self.started = None


def _detail(answer: httpx.Response) -> str:
    try:
        return str(answer.json().get("detail", answer.text))
    except ValueError:
        return answer.text


def _retry_after(answer: httpx.Response) -> float | None:
    try:
        return float(answer.headers["Retry-After"])
    except (KeyError, ValueError):
        return None


class Api:
    def __init__(self, base_url: str, key: str, outage: Outage | None = None) -> None:
        self.base_url = base_url
        self.outage = outage or Outage()
        self.client = httpx.Client(base_url=base_url + "/api/v1", headers={"X-API-Key": key}, timeout=30)

    def with_key(self, key: str) -> Api:
        return Api(self.base_url, key, self.outage)

    def call(self, method: str, path: str, ok: tuple[int, ...] = (200, 201), **kwargs: Any) -> httpx.Response:
        """The answer, once it is one of `ok`; ApiError for any other. A 503, or no connection,
        is an outage to wait out; so is a broken connection for a GET, which is safe to send again
        (a POST may have been carried out: the error is raised)."""
        while True:
            try:
                answer = self.client.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if method != "GET" and not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
                    raise ApiError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
                self.outage.wait(f"{method} {path}: {type(exc).__name__}")
                continue
            if answer.status_code == 503:
                self.outage.wait(f"{method} {path} -> 503: {_detail(answer)}", _retry_after(answer))
                continue
            self.outage.over()
            if answer.status_code not in ok:
                raise ApiError(f"{method} {path} -> {answer.status_code}: {_detail(answer)}")
            return answer

    def get(self, path: str, **params: Any) -> Any:
        return self.call("GET", path, params=params).json()

    def post(self, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)) -> httpx.Response:
        return self.call("POST", path, ok=ok, json=body)

    def patch(self, path: str, body: Any) -> Any:
        return self.call("PATCH", path, json=body).json()

    def close(self) -> None:
        self.client.close()
