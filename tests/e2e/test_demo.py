"""The demo end to end: a fresh database, the real services as processes, a short ladder, the
leaderboard printed, and not one process left behind."""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.ports import free_port
from tests.support.databases import create_database, drop_database
from tests.support.environment import ROOT

DEMO = [sys.executable, "-m", "scripts.demo"]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(entry.name))
    return found


@pytest.mark.e2e
def test_demo_plays_a_ladder_prints_the_leaderboard_and_cleans_up(tmp_path: Path) -> None:
    name = f"arena_demo_{secrets.token_hex(4)}"
    create_database(name)
    drop_database(name)  # the demo must create it itself
    # Nothing listens there: the demo starts its embedded Redis (and must stop it again).
    redis_url = f"redis://127.0.0.1:{free_port()}/0"
    marker = f"ARENA_DEMO_TEST_MARKER={secrets.token_hex(6)}"
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
        "ARENA_REDIS_URL": redis_url,
        "ARENA_DATA_DIR": str(tmp_path / "data"),
        marker.split("=")[0]: marker.split("=")[1],
    }
    env.pop("ARENA_BOOTSTRAP_ADMIN_KEY", None)
    try:
        demo = subprocess.Popen(
            # A training run of 5 s, not the default 600: still created and trained, but it no
            # longer takes one of two cores from the ladder for the whole test.
            [*DEMO, "--matches", "4", "--exit-after-ladder", "--port", "0", "--training-seconds", "5"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            out, err = demo.communicate(timeout=200)
        except subprocess.TimeoutExpired:
            demo.send_signal(signal.SIGTERM)  # the demo's own clean-up must still run
            out, err = demo.communicate(timeout=30)
            raise AssertionError(f"the demo did not finish in time:\n{out[-3000:]}\n{err[-3000:]}") from None
        assert demo.returncode == 0, out[-3000:] + err[-3000:]
        assert "embedded Redis is up" in out
        assert "created the database" in out
        for n in range(1, 5):
            assert re.search(rf"\[{n}/4\] \S+ (beat|won against|and) \S+", out), out
        section = r"==> Leaderboard: (\w+) .*?\n(.*?)(?=\n==> |\n\s*API docs)"
        boards = dict(re.findall(section, out, flags=re.S))
        assert set(boards) == {"podracing", "battle"}, out[-3000:]
        names: set[str] = set()
        for game, board in boards.items():
            rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+demo\s+(-?\d+\.\d+)", board, flags=re.M)
            assert len(rows) >= 6, board  # HTTP and hosted bots are all on each board
            ordinals = [float(r[2]) for r in rows]
            assert ordinals == sorted(ordinals, reverse=True), f"{game} board out of order:\n{board}"
            names |= {r[1] for r in rows}
        assert {"hosted-runner", "hosted-codingame", "builtin-blocker", "hosted-sniper"} <= names
        links = out.split("API docs", 1)[1]
        assert "/docs" in out
        assert "/replay" in links
        assert "/leaderboard/battle" in links
        assert "celery worker -Q evolution" in out, "the evolver and its run"
        assert "/evolution/" in links, "the evolver and its run"
        assert "celery worker -Q training" in out, "the trainer's run"
        assert "5 s of training on the CPU" in out, "the trainer's run"
        assert "==> Stopping the demo's runs" in out, (
            "--exit-after-ladder stops its training and evolution runs"
        )
        assert "all demo processes stopped" in out
    finally:
        deadline = time.monotonic() + 10
        while _processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = _processes_with(marker)
        for pid in left:
            os.kill(pid, 9)
        drop_database(name)
    assert not left, f"the demo left processes behind: {left}"
