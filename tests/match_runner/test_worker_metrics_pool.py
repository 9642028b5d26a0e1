"""A worker with two pool processes serves the sum of both on its one metrics port (prometheus
client's multiprocess mode, as Compose runs it). Before, the first pool process to bind the port
served only its own counts, so every rate read about half of what the worker did."""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from services.match_runner.commands import worker_command
from shared.matches import TASK_PLAY_MATCH
from shared.ports import free_port
from shared.worker_metrics import ProcessTreeCollector
from tests.support.bot_processes import RunningBot
from tests.support.match_runner import WORKER_ENV, cancel_earlier_matches, queue_match, wait_for_match
from tests.support.processes import PYTHON, ManagedProcess

MATCHES = 6


def _samples(url: str) -> dict[str, float]:
    """Every sample of a scrape, summed by name (labels dropped)."""
    totals: dict[str, float] = {}
    for family in text_string_to_metric_families(httpx.get(url, timeout=10).text):
        for sample in family.samples:
            totals[sample.name] = totals.get(sample.name, 0.0) + sample.value
    return totals


@pytest.mark.slow
def test_both_pool_processes_are_counted_on_the_one_port(
    tmp_path: Path, good_bot: RunningBot, register_bot: Callable[..., uuid.UUID]
) -> None:
    directory = tmp_path / "metrics"
    directory.mkdir()
    leftover = directory / "counter_424242.db"
    leftover.write_bytes(b"a previous run's counts")  # must be wiped, not summed (nor choked on)
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    cancel_earlier_matches()  # the worker then plays, and counts, this test's matches only
    worker = ManagedProcess(
        [
            *worker_command(concurrency=2, name=f"pool-metrics-{uuid.uuid4().hex[:6]}@%h", python=PYTHON),
            "--without-heartbeat",
        ],
        "pool-metrics",
        env={
            **WORKER_ENV,
            "ARENA_WORKER_METRICS_PORT": str(port),
            "PROMETHEUS_MULTIPROC_DIR": str(directory),
        },
    )
    try:
        worker.wait_log("ready.", timeout=60)
        worker.wait_http(url, timeout=30)
        assert not leftover.exists()
        before = _samples(url).get("arena_runner_matches_total", 0.0)
        bots = [register_bot(good_bot), register_bot(good_bot)]
        match_ids = [queue_match(bots, seed=seed) for seed in range(MATCHES)]
        for match_id in match_ids:
            match = wait_for_match(match_id, worker)
            assert match.status == "finished", match.error
        # Which pool process ran each play task: the point of the test is that both did.
        players = set(
            re.findall(rf"/(ForkPoolWorker-\d+)\] Task {re.escape(TASK_PLAY_MATCH)}\[", worker.log())
        )
        assert len(players) == 2, worker.log()[-3000:]
        deadline = time.monotonic() + 10
        while (counted := _samples(url).get("arena_runner_matches_total", 0.0) - before) < MATCHES:
            assert time.monotonic() < deadline, f"{counted} of {MATCHES} matches counted"
            time.sleep(0.2)
        assert counted == MATCHES
        figures = _samples(url)
        assert figures["process_cpu_seconds_total"] > 0
        assert figures["process_resident_memory_bytes"] > 0
    finally:
        worker.stop()


@pytest.mark.slow
def test_the_process_tree_collector_adds_the_childrens_cpu() -> None:
    burn = (
        "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
        "print('burnt', flush=True)\ntime.sleep(30)"
    )
    child = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        # The child says when it has burned its CPU: on a loaded machine that takes several times
        # the 0.6 s of wall time it would take alone.
        assert child.stdout.readline().strip() == "burnt"
        own = time.process_time()
        samples = {s.name: s.value for family in ProcessTreeCollector().collect() for s in family.samples}
        assert samples["process_cpu_seconds_total"] >= own + 0.5
        assert samples["process_resident_memory_bytes"] > 0
    finally:
        child.kill()
        child.wait()
