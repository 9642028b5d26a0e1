"""The demo rides out outages of its own dependencies: `scripts.demo` on a PostgreSQL and a Redis of
this test's own, Redis killed mid-ladder and started again empty, then PostgreSQL killed and
started again. The demo must say the platform was unavailable, wait, and finish its ladder with
every match played, the leaderboards printed and exit status 0."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.environment import ROOT
from tests.support.owned_services import OwnedPostgres, OwnedRedis

pytestmark = pytest.mark.e2e

MATCHES = 10
OUTAGE_S = 6.0
"""Each dependency stays down this long (as in tests/match_runner/test_platform_outages.py)."""
REDIS_AFTER, POSTGRES_AFTER = 2, 5
"""The outages strike once this many ladder matches were reported."""
DEMO_TIMEOUT_S = 360.0


class Output:
    """The demo's stdout, read on a thread as it comes, so the test can act on its progress."""

    def __init__(self, stream: object) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def matches_reported(self) -> int:
        found = [re.search(rf"\[(\d+)/{MATCHES}\]", line) for line in self.lines]
        return max((int(m.group(1)) for m in found if m), default=0)

    def wait_for_matches(self, count: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with self._changed:
            while self.matches_reported() < count:
                left = deadline - time.monotonic()
                if left <= 0 or not self._thread.is_alive():
                    raise AssertionError(f"the demo did not report {count} matches:\n{self.text()[-3000:]}")
                self._changed.wait(min(left, 1.0))

    def text(self) -> str:
        with self._changed:
            return "".join(self.lines)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


def test_the_demo_rides_out_a_redis_and_a_postgresql_outage(tmp_path: Path) -> None:
    postgres, redis_server = OwnedPostgres(), OwnedRedis()
    demo: subprocess.Popen[str] | None = None
    try:
        postgres.start()
        redis_server.start()
        env = {
            **os.environ,
            "ARENA_DATABASE_URL": postgres.url("arena_demo"),
            "ARENA_REDIS_URL": redis_server.url,
            "ARENA_DATA_DIR": str(tmp_path / "data"),
        }
        env.pop("ARENA_BOOTSTRAP_ADMIN_KEY", None)
        demo = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scripts.demo",
                "--matches",
                str(MATCHES),
                "--exit-after-ladder",
                "--port",
                "0",
                "--training-seconds",
                "5",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output = Output(demo.stdout)
        output.wait_for_matches(REDIS_AFTER, timeout=180)
        redis_server.kill()
        time.sleep(OUTAGE_S)
        redis_server.start()
        output.wait_for_matches(POSTGRES_AFTER, timeout=180)
        postgres.kill()
        time.sleep(OUTAGE_S)
        postgres.start()
        try:
            demo.wait(timeout=DEMO_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            demo.send_signal(signal.SIGTERM)  # its own clean-up still runs
            demo.wait(timeout=60)
            raise AssertionError(f"the demo did not finish:\n{output.text()[-4000:]}") from None
        output.join(10)
        out = output.text()
        print(out)  # with -s: what the demo says through the outages
        assert demo.returncode == 0, out[-4000:]
        for n in range(1, MATCHES + 1):
            assert re.search(rf"\[{n}/{MATCHES}\] \S+ (beat|won against|and) \S+", out), out[-4000:]
        assert "the platform is unavailable" in out, "the outage was not reported"
        assert "==> Leaderboard: podracing" in out, out[-3000:]
        assert "==> Leaderboard: battle" in out, out[-3000:]
        assert "Traceback" not in out, out[-4000:]
    finally:
        if demo is not None and demo.poll() is None:
            demo.kill()
            demo.wait(timeout=30)
        redis_server.kill()
        postgres.close()
