"""A real celery worker that plays hosted bots in bubblewrap, hosted bots stored as the upload path
stores them, and a watch on the worker's sandbox processes while a match plays."""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

import psutil  # type: ignore[import-untyped]
import pytest

from shared.config import get_settings
from shared.crypto import encrypt_secret
from shared.db.models import Bot, BotVersion, Match
from shared.db.session import session_scope
from shared.protocol.signing import generate_secret
from shared.sandbox import check_source
from tests.support.environment import ROOT
from tests.support.match_runner import start_worker
from tests.support.processes import ManagedProcess

HOSTED_WORKER_ENV = {
    "TMPDIR": "",  # set per run: sandboxes put their files there
    "ARENA_SANDBOX_BACKEND": "bwrap",
    # Generous turn budgets: these tests compare against in-process play, so no turn may time out
    # on a busy machine.
    "ARENA_TURN_TIMEOUT_MS": "3000",
    "ARENA_FIRST_TURN_TIMEOUT_MS": "5000",
    "ARENA_MAX_CONSECUTIVE_FAILURES": "4",
    # A sandbox per match: these tests check that nothing of a match's sandboxes outlives it (a
    # worker keeping sandboxes between matches is tests/match_runner/test_hosted_bots.py's).
    "ARENA_SANDBOX_REUSE_MATCHES": "1",
}

COUNTING_SOURCE = """
CALLS = 0


def decide(observation):
    global CALLS
    CALLS += 1
    pods = []
    for pod in observation["pods"]:
        x, y = observation["checkpoints"][pod["next_checkpoint"]]
        pods.append({"x": x, "y": y, "thrust": 100, "message": f"hosted {CALLS}"})
    return {"pods": pods}
"""
"""A podracing bot that says how many turns its module has played: 1 again in a fresh sandbox."""

BATTLE_BOTS_SOURCE = (ROOT / "shared" / "games" / "battle" / "bots.py").read_text()


def start_hosted_worker(name: str, sandbox_tmp: Path) -> ManagedProcess:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    return start_worker(name, {**HOSTED_WORKER_ENV, "TMPDIR": str(sandbox_tmp)})


def register_hosted_bot(owner: uuid.UUID, game: str, source: str, contract: str, name: str) -> uuid.UUID:
    """A hosted bot with one version, as the upload path stores it (the source passes the gate)."""
    problems = check_source(source, contract=contract)
    assert problems == [], problems
    with session_scope() as session:
        bot = Bot(
            owner_id=owner,
            name=f"{name}-{uuid.uuid4().hex[:8]}",
            game=game,
            kind="hosted",
            secret_encrypted=encrypt_secret(get_settings(), generate_secret()),
        )
        session.add(bot)
        session.flush()
        version = BotVersion(bot_id=bot.id, number=1, source=source, contract=contract)
        session.add(version)
        session.flush()
        bot.current_version_id = version.id
        return bot.id


def sandbox_processes(worker: ManagedProcess) -> list[psutil.Process]:
    """The worker's descendants that belong to a sandbox: bubblewrap and everything under it."""
    found = []
    try:
        descendants = psutil.Process(worker.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    for proc in descendants:
        try:
            # The runner's script path, not any "/arena/": the checkout itself may live in a folder
            # called arena, and then every worker process would look like a sandbox.
            if proc.name() == "bwrap" or any(part.endswith("/hosted_runner.py") for part in proc.cmdline()):
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def sandbox_dirs(path: Path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name.startswith("arena-bot-"))


def watch_match(match_id: uuid.UUID, worker: ManagedProcess, timeout: float) -> tuple[Match, int]:
    """Wait for the match to end; also return the most sandbox processes seen at once meanwhile."""
    deadline = time.monotonic() + timeout
    most = 0
    while time.monotonic() < deadline:
        most = max(most, len([p for p in sandbox_processes(worker) if _is_bwrap(p)]))
        with session_scope() as session:
            match = session.get(Match, match_id)
            assert match is not None
            if match.status not in ("queued", "running"):
                _ = list(match.participants), match.replay
                return match, most
        if not worker.alive():
            raise AssertionError(f"worker died:\n{worker.log()[-3000:]}")
        time.sleep(0.05)
    raise AssertionError(f"match {match_id} did not end within {timeout}s\n{worker.log()[-3000:]}")


def _is_bwrap(proc: psutil.Process) -> bool:
    try:
        name: str = proc.name()
        return name == "bwrap"
    except psutil.NoSuchProcess:
        return False
