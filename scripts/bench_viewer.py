"""How fast the replay viewer opens and plays large replays, in headless Chromium.

Run: `.venv/bin/python -m scripts.bench_viewer [--runs N]`. Plays a podracing race (runner vs
runner) and a 10v10 battle of 60 s (defensive vs defensive, which keep fighting to the time limit)
with shared.games.replay.play_local, serves each replay gzip-encoded the way the gateway does
(the standalone viewer app of `arena view`, given the .json.gz file) and opens it in Debian's
Chromium (/usr/bin/chromium, never downloaded). Prints per replay: raw and gzip size, the bytes
that crossed the wire, fetch, JSON parse and load-to-first-frame times (from navigation start;
median of --runs page loads), and frames drawn per second during playback at 1x and 16x.
The target: a 10v10 60 s battle opens in under 2 s.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import Browser, Page, sync_playwright

from services.gateway.web.standalone import standalone_viewer_app
from shared.games.battle.bots import defensive
from shared.games.podracing.bots import runner
from shared.games.registry import get_game
from shared.games.replay import compress, play_local
from shared.ports import free_port

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
BATTLE_CONFIG: dict[str, Any] = {"units_per_player": 10, "time_limit_s": 60}
TARGET_OPEN_S = 2.0
PLAY_SECONDS = 2.0


@dataclass
class Load:
    wire_bytes: int
    fetch_ms: float
    parse_ms: float
    first_frame_ms: float


def replays() -> dict[str, dict[str, Any]]:
    race = play_local(get_game("podracing"), 1, [runner, runner])
    battle = play_local(get_game("battle"), 1, [defensive, defensive], BATTLE_CONFIG)
    return {"podracing race": race, "battle 10v10 60 s": battle}


@contextmanager
def serving(path: Path) -> Iterator[str]:
    """The standalone viewer for `path` on a loopback port, in a thread."""
    port = free_port()
    config = uvicorn.Config(standalone_viewer_app(path), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def load_once(browser: Browser, url: str) -> Load:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        wire: list[int] = []
        page.on(
            "requestfinished",
            lambda request: (
                wire.append(request.sizes()["responseBodySize"])
                if request.url.endswith("/replay.json")
                else None
            ),
        )
        page.goto(url, wait_until="load")
        page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=30_000)
        timings = page.evaluate("window.arenaViewer.timings")
        page.wait_for_load_state("networkidle")
        return Load(
            wire_bytes=wire[0] if wire else -1,
            fetch_ms=timings["received"] - timings["fetchStart"],
            parse_ms=timings["parseMs"],
            first_frame_ms=timings["firstDraw"],
        )
    finally:
        context.close()


SAMPLE = """() => {
  const p = window.arenaViewer.player;
  return [p.drawCount, p.drawMs, performance.now(), window.__frames || 0, p.playing];
}"""
COUNT_FRAMES = """() => {
  window.__frames = 0;
  const count = () => { window.__frames += 1; requestAnimationFrame(count); };
  requestAnimationFrame(count);
}"""


def draws_per_second(page: Page, speed: str) -> dict[str, float]:
    """Frames drawn per second while playing (from frame 0, until the end or PLAY_SECONDS), the
    browser's own animation frames per second over the same time, and the mean time of one draw."""
    page.select_option("select[data-speed]", speed)
    page.evaluate("window.arenaViewer.player.setFrame(0)")
    page.click('[data-action="play"]')
    start = page.evaluate(SAMPLE)
    end = start
    deadline = time.monotonic() + PLAY_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.1)
        sample = page.evaluate(SAMPLE)
        if not sample[4]:
            break
        end = sample
    page.evaluate("window.arenaViewer.player.pause()")
    seconds = (end[2] - start[2]) / 1000
    draws = end[0] - start[0]
    return {
        "draws_per_s": draws / seconds,
        "browser_frames_per_s": (end[3] - start[3]) / seconds,
        "ms_per_draw": (end[1] - start[1]) / max(1, draws),
    }


def playback(browser: Browser, url: str) -> dict[str, dict[str, float]]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(url, wait_until="load")
        page.wait_for_selector("[data-viewer][data-ready]", state="attached", timeout=30_000)
        page.evaluate(COUNT_FRAMES)
        return {speed: draws_per_second(page, speed) for speed in ("1", "4")}
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="page loads per replay (median reported)")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        for name, replay in replays().items():
            raw = json.dumps(replay, separators=(",", ":")).encode()
            blob = compress(replay)
            path = Path(folder) / f"{name.replace(' ', '_')}.json.gz"
            path.write_bytes(blob)
            assert gzip.decompress(blob) == raw
            with serving(path) as base:
                loads = [load_once(browser, base + "/") for _ in range(args.runs)]
                fps = playback(browser, base + "/")
            results[name] = {
                "frames": len(replay["frames"]),
                "raw_bytes": len(raw),
                "gzip_bytes": len(blob),
                "wire_bytes": loads[0].wire_bytes,
                "fetch_ms": statistics.median(load.fetch_ms for load in loads),
                "parse_ms": statistics.median(load.parse_ms for load in loads),
                "first_frame_ms": statistics.median(load.first_frame_ms for load in loads),
                "playback_1x": fps["1"],
                "playback_4x": fps["4"],
            }
        browser.close()

    print(f"replay viewer in headless Chromium ({CHROMIUM}), median of {args.runs} page loads")
    header = (
        f"{'replay':<20} {'frames':>6} {'raw KB':>8} {'gzip KB':>8} {'wire KB':>8} "
        f"{'fetch ms':>9} {'parse ms':>9} {'1st frame ms':>13} {'draws/s 1x':>11} {'4x':>6} "
        f"{'browser fps':>11} {'ms/draw':>8}"
    )
    print(header)
    for name, row in results.items():
        print(
            f"{name:<20} {row['frames']:>6} {row['raw_bytes'] / 1024:>8.0f} {row['gzip_bytes'] / 1024:>8.0f} "
            f"{row['wire_bytes'] / 1024:>8.0f} {row['fetch_ms']:>9.1f} {row['parse_ms']:>9.1f} "
            f"{row['first_frame_ms']:>13.0f} {row['playback_1x']['draws_per_s']:>11.1f} "
            f"{row['playback_4x']['draws_per_s']:>6.1f} {row['playback_1x']['browser_frames_per_s']:>11.1f} "
            f"{row['playback_1x']['ms_per_draw']:>8.2f}"
        )
    battle = results["battle 10v10 60 s"]["first_frame_ms"] / 1000
    verdict = "ok" if battle < TARGET_OPEN_S else "OVER TARGET"
    target = f"target < {TARGET_OPEN_S} s"
    print(f"10v10 60 s battle: first frame {battle:.2f} s after navigation ({target}): {verdict}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
