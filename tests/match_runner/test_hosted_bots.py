"""Hosted bots: the runner starts the bot's code in the sandbox, plays it over its Unix socket with
the same protocol client as HTTP bots, and always tears the sandbox down."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.games.replay import decompress
from shared.replay_store import load_replay
from tests.support.bot_processes import RunningBot
from tests.support.hosted_worker import COUNTING_SOURCE, register_hosted_bot, sandbox_dirs
from tests.support.match_runner import cancel_earlier_matches, queue_match, start_worker, wait_for_match
from tests.support.processes import ManagedProcess

pytestmark = pytest.mark.slow

HOSTED_SOURCE = """
def decide(observation):
    pods = []
    for pod in observation["pods"]:
        x, y = observation["checkpoints"][pod["next_checkpoint"]]
        pods.append({"x": x, "y": y, "thrust": 100, "message": "hosted"})
    return {"pods": pods}
"""

BROKEN_SOURCE = "def decide(observation):\n    raise RuntimeError('bug in my bot')\n"


@pytest.fixture(scope="module")
def sandbox_tmp() -> Iterator[Path]:
    """The worker's TMPDIR: sandboxes put their files here, so leftovers are easy to see."""
    path = Path(tempfile.mkdtemp(prefix="arena-runner-tmp-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def hosted_worker(database_url: str, redis_url: str, sandbox_tmp: Path) -> Iterator[ManagedProcess]:  # noqa: ARG001 (requested for its side effect)
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    cancel_earlier_matches()  # the sandboxes in sandbox_tmp are then those of this module's matches only
    process = start_worker("hosted-worker", {"TMPDIR": str(sandbox_tmp), "ARENA_SANDBOX_BACKEND": "bwrap"})
    yield process
    process.stop()


def _messages(match: Any, player: int) -> list[str]:
    """What the player's first pod said, turn by turn."""
    replay = decompress(load_replay(match.replay))
    return [m for frame in replay["frames"] if (m := frame["pods"][2 * player].get("message"))]


def test_hosted_bot_plays_over_its_unix_socket_and_its_sandbox_serves_its_next_match(
    hosted_worker: ManagedProcess,
    sandbox_tmp: Path,
    user_id: uuid.UUID,
    good_bot: RunningBot,
    register_bot: Callable[..., uuid.UUID],
) -> None:
    before = sandbox_dirs(sandbox_tmp)
    hosted = register_hosted_bot(user_id, "podracing", COUNTING_SOURCE, "decide", "hosted")
    opponent = register_bot(good_bot)
    match = wait_for_match(queue_match([hosted, opponent], seed=31), hosted_worker, timeout=90)
    assert match.status == "finished", match.error
    hosted_row = match.participants[0]
    assert hosted_row.errors == 0
    assert hosted_row.timeouts == 0
    assert not hosted_row.forfeited
    assert hosted_row.latency_p50_ms is not None
    assert _messages(match, 0)[:2] == ["hosted 1", "hosted 2"], _messages(match, 0)[:5]
    kept = sorted(set(sandbox_dirs(sandbox_tmp)) - set(before))
    assert len(kept) == 1, "the sandbox of a clean match is kept, frozen, for the bot's next match"

    again = wait_for_match(queue_match([opponent, hosted], seed=32), hosted_worker, timeout=90)
    assert again.status == "finished", again.error
    assert not again.participants[1].forfeited
    assert sorted(set(sandbox_dirs(sandbox_tmp)) - set(before)) == kept, "the kept sandbox was not reused"
    fresh = _messages(again, 1)[:2] == ["hosted 1", "hosted 2"]
    assert fresh, "the bot's module state carried over into the next match"


def test_broken_hosted_bot_forfeits_and_is_torn_down(
    hosted_worker: ManagedProcess,
    sandbox_tmp: Path,
    user_id: uuid.UUID,
    good_bot: RunningBot,
    register_bot: Callable[..., uuid.UUID],
) -> None:
    before = sandbox_dirs(sandbox_tmp)
    hosted = register_hosted_bot(user_id, "podracing", BROKEN_SOURCE, "decide", "hosted")
    match = wait_for_match(queue_match([register_bot(good_bot), hosted], seed=33), hosted_worker, timeout=90)
    assert match.status == "finished", match.error
    _, broken = match.participants
    assert broken.forfeited
    assert broken.rank == 1
    assert "bug in my bot" in " ".join(str(s["error"]) for s in broken.error_samples)
    assert set(sandbox_dirs(sandbox_tmp)) <= set(before), "the failing bot's sandbox was kept"


SHIPPED_BOT = Path(__file__).resolve().parents[2] / "examples" / "bots" / "podracing_ppo.py"
SHIPPED_HYBRID = SHIPPED_BOT.with_name("podracing_hybrid.py")
HALF_THRUST_SOURCE = HOSTED_SOURCE.replace('"thrust": 100', '"thrust": 50')
HYBRID_BUDGET = ("\nTIME_BUDGET_MS = 40.0\n", "\nTIME_BUDGET_MS = 5.0\n")
"""The hybrid's search time per turn, lowered from the shipped 40 ms to keep the races short."""


@pytest.mark.parametrize("shipped", [SHIPPED_BOT, SHIPPED_HYBRID], ids=["ppo", "hybrid"])
def test_the_shipped_trained_bot_passes_the_gate_and_wins_races_through_a_real_worker(
    hosted_worker: ManagedProcess, user_id: uuid.UUID, shipped: Path
) -> None:
    from shared.sandbox.gate import check_source

    source = shipped.read_text()
    assert check_source(source, contract="decide") == []
    twin = shipped.with_name(f"{shipped.stem}_codingame.py").read_text()
    assert check_source(twin, contract="codingame") == []
    if shipped == SHIPPED_HYBRID:
        assert source.count(HYBRID_BUDGET[0]) == 1
        source = source.replace(*HYBRID_BUDGET)
    trained = register_hosted_bot(user_id, "podracing", source, "decide", "hosted")
    slow = register_hosted_bot(user_id, "podracing", HALF_THRUST_SOURCE, "decide", "hosted")
    race = {"laps": 1, "max_turns": 200}
    for seed, seats in ((41, [trained, slow]), (42, [slow, trained])):
        match = wait_for_match(queue_match(seats, seed=seed, config=race), hosted_worker, timeout=120)
        assert match.status == "finished", match.error
        row = next(p for p in match.participants if p.bot_id == trained)
        assert (row.rank, row.errors, row.timeouts, row.forfeited) == (0, 0, 0, False), seed
