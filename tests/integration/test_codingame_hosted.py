"""An unchanged CodinGame Mad Pod Racing script, uploaded as a hosted bot with the "codingame"
contract, races a full default match through a real worker against another hosted bot."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.db.session import session_scope
from shared.games.registry import get_game
from shared.games.replay import decompress, resimulate
from shared.matches import create_match, enqueue_match
from shared.replay_store import load_replay
from tests.support.environment import ROOT
from tests.support.hosted_worker import (
    register_hosted_bot,
    sandbox_dirs,
    sandbox_processes,
    start_hosted_worker,
    watch_match,
)
from tests.support.processes import ManagedProcess

CODINGAME_SCRIPT = """\
import sys
import math

# Mad Pod Racing, gold league input: read once, then 4 pod lines per turn, print 2 orders.
laps = int(input())
checkpoint_count = int(input())
checkpoints = []
for i in range(checkpoint_count):
    checkpoint_x, checkpoint_y = [int(j) for j in input().split()]
    checkpoints.append((checkpoint_x, checkpoint_y))

boost_left = True
turn = 0
while True:
    pods = []
    for i in range(2):
        x, y, vx, vy, angle, next_check_point_id = [int(j) for j in input().split()]
        pods.append((x, y, vx, vy, angle, next_check_point_id))
    for i in range(2):
        x_2, y_2, vx_2, vy_2, angle_2, next_check_point_id_2 = [int(j) for j in input().split()]

    for x, y, vx, vy, angle, next_id in pods:
        cx, cy = checkpoints[next_id]
        tx, ty = cx - 3 * vx, cy - 3 * vy
        wanted = math.degrees(math.atan2(ty - y, tx - x))
        error = abs((wanted - angle + 180) % 360 - 180) if angle >= 0 else 0
        distance = math.hypot(cx - x, cy - y)
        if boost_left and turn > 0 and error < 5 and distance > 5000:
            thrust = "BOOST"
            boost_left = False
        elif error > 90:
            thrust = 0
        else:
            thrust = int(100 * math.cos(math.radians(error)))
        print(f"{int(tx)} {int(ty)} {thrust} cg-script")
    print(f"turn {turn}: {pods}", file=sys.stderr)
    turn += 1
"""


@pytest.fixture(scope="module")
def cg_worker(database_url: str, redis_url: str, sandbox_tmp: Path) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    process = start_hosted_worker("codingame-worker", sandbox_tmp)
    yield process
    process.stop()


@pytest.mark.slow
def test_codingame_script_races_a_full_match_through_the_worker(
    cg_worker: ManagedProcess, owner_id: uuid.UUID, sandbox_tmp: Path
) -> None:
    script = register_hosted_bot(owner_id, "podracing", CODINGAME_SCRIPT, "codingame", "cg-script")
    follower_source = (ROOT / "examples" / "bots" / "podracing_follower_bot.py").read_text()
    follower = register_hosted_bot(owner_id, "podracing", follower_source, "decide", "follower")
    with session_scope() as session:
        match_id = create_match(session, game="podracing", bot_ids=[script, follower], seed=2024).id
    enqueue_match(match_id)

    match, most_sandboxes = watch_match(match_id, cg_worker, timeout=180)
    assert match.status == "finished", match.error
    assert most_sandboxes >= 1, "no bubblewrap sandbox was seen while the match was played"
    assert sandbox_processes(cg_worker) == [], "a sandbox process outlived its match"
    assert sandbox_dirs(sandbox_tmp) == [], "a sandbox's files outlived its match"
    assert match.config == {}, "a default match"

    assert match.replay is not None
    replay = decompress(load_replay(match.replay))
    laps, checkpoint_count = replay["frames"][0]["laps"], len(replay["frames"][0]["checkpoints"])
    cg, other = sorted(match.participants, key=lambda p: p.slot)
    assert not cg.forfeited, cg.error_samples
    assert cg.errors == 0, cg.error_samples
    assert cg.timeouts == 0, cg.error_samples
    assert cg.metrics["invalid_actions"] == 0, cg.metrics
    # The race is finished: every lap's checkpoints passed, by a script that never saw JSON.
    assert cg.metrics["checkpoints"] >= laps * checkpoint_count, (cg.metrics, laps, checkpoint_count)
    assert cg.metrics["finished_turn"] > 0, cg.metrics
    assert cg.metrics["boosts_used"] == 1, "the script's single BOOST line went through the text adapter"
    assert not other.forfeited
    assert other.metrics["checkpoints"] > 0
    assert match.end_reason == "won", (match.end_reason, match.turns)
    assert match.turns is not None
    assert match.turns < 500, (match.end_reason, match.turns)
    assert any(
        pod.get("message") == "cg-script" for frame in replay["frames"] for pod in frame.get("pods", [])
    ), "the script's messages never reached the replay"
    assert resimulate(get_game("podracing"), replay) == replay
