"""A worker keeps a hosted bot's sandbox after a clean match (shared/sandbox/reuse.py) and stops
it when the worker stops. A module of its own: no other worker may take the match."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.bot_processes import RunningBot
from tests.support.hosted_worker import COUNTING_SOURCE, register_hosted_bot, sandbox_dirs
from tests.support.match_runner import cancel_earlier_matches, queue_match, start_worker, wait_for_match

pytestmark = pytest.mark.slow


@pytest.mark.usefixtures("database_url", "redis_url")
def test_sandboxes_a_worker_kept_are_stopped_when_it_stops(
    user_id: uuid.UUID,
    good_bot: RunningBot,
    register_bot: Callable[..., uuid.UUID],
) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    tmp = Path(tempfile.mkdtemp(prefix="arena-runner-tmp-"))
    os.chmod(tmp, 0o755)
    cancel_earlier_matches()  # the worker then plays this test's match only, and keeps its sandbox alone
    worker = start_worker("keeping-worker", {"TMPDIR": str(tmp), "ARENA_SANDBOX_BACKEND": "bwrap"})
    try:
        hosted = register_hosted_bot(user_id, "podracing", COUNTING_SOURCE, "decide", "hosted")
        match = wait_for_match(queue_match([hosted, register_bot(good_bot)], seed=34), worker, timeout=90)
        assert match.status == "finished", match.error
        assert len(sandbox_dirs(tmp)) == 1, "the clean match's sandbox is kept"
    finally:
        worker.stop()
    try:
        assert sandbox_dirs(tmp) == [], "a kept sandbox outlived its worker"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
