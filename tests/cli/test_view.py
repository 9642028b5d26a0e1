"""`arena view FILE` and `arena play --view`: the viewer for a replay file on a local port."""

from __future__ import annotations

import gzip
import json
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from shared.games.registry import get_game
from shared.games.replay import compress, play_local
from tests.support.cli import finish_cli, start_cli

URL = re.compile(r"viewer for .*: (http://127\.0\.0\.1:\d+/)$")


def wait_for_url(process: subprocess.Popen[str], timeout: float = 60) -> tuple[str, list[str]]:
    """Read the command's stdout until it prints the viewer's URL; the URL and the lines before it."""
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if not ready:
            assert process.poll() is None, f"exited early: {process.stderr.read() if process.stderr else ''}"
            continue
        line = process.stdout.readline()
        assert line, f"exited early: {process.stderr.read() if process.stderr else ''}"
        found = URL.search(line.strip())
        if found:
            return found.group(1), lines
        lines.append(line)
    raise AssertionError(f"no viewer URL within {timeout} s; got {lines}")


def stop(process: subprocess.Popen[str]) -> None:
    """Ctrl+C: the server stops cleanly, without a traceback."""
    process.send_signal(signal.SIGINT)
    run = finish_cli(process, timeout=30)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr


def test_view_serves_the_viewer_and_the_replay(tmp_path: Path) -> None:
    game = get_game("podracing")
    bots = game.builtin_bots()
    replay = play_local(game, 3, [bots["runner"], bots["blocker"]], {"laps": 1, "max_turns": 30})
    path = tmp_path / "race.json.gz"
    path.write_bytes(compress(replay))
    process = start_cli("view", str(path), "--port", "0", "--no-open", cwd=tmp_path)
    try:
        url, _ = wait_for_url(process)
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200
        assert "text/html" in page.headers["content-type"]
        assert "data-viewer-canvas" in page.text
        assert "/replay.json" in page.text
        served = httpx.get(url + "replay.json", timeout=10)
        assert served.status_code == 200
        assert served.json() == json.loads(gzip.decompress(path.read_bytes()))
    finally:
        stop(process)


@pytest.mark.slow
def test_play_with_view_serves_the_new_replay(tmp_path: Path) -> None:
    process = start_cli(
        "play",
        "battle",
        "builtin:aggressive",
        "builtin:defensive",
        "--seed",
        "4",
        "--config",
        '{"units_per_player": 1, "time_limit_s": 2}',
        "--view",
        "--port",
        "0",
        "--no-open",
        cwd=tmp_path,
    )
    try:
        url, before = wait_for_url(process)
        assert any(line.startswith("battle  seed 4") for line in before)
        assert any(line.startswith("replay: replay-battle-4.json") for line in before)
        served = httpx.get(url + "replay.json", timeout=10)
        assert served.json() == json.loads((tmp_path / "replay-battle-4.json").read_bytes())
        assert httpx.get(url, timeout=10).status_code == 200
    finally:
        stop(process)
