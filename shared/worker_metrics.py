"""A Celery worker's Prometheus metrics on one port, whatever the size of its pool.

The metrics are counted where the work is done, in the pool processes. With one pool process that
process serves them. With several (`-c 2`, as Compose runs the match runner and the evolver) each
would count only its own share and only the first could take the port, so the rates read about half
of the truth. When `PROMETHEUS_MULTIPROC_DIR` is set (Compose sets it) every pool process writes its
values to files in that directory and the worker's main process serves their sum (prometheus_client's
multiprocess mode), with `process_cpu_seconds_total` and `process_resident_memory_bytes` summed over
the main process and its pool. The directory is emptied when the worker starts, so a previous run's
counts are never added to this one's. The variable must be in the environment before the worker
starts (prometheus_client reads it once, when it is first imported) and the directory must exist
(a value is given its file as it is created, possibly at import; the match-runner image makes
/tmp/arena-metrics).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from celery.signals import worker_init, worker_process_init, worker_process_shutdown
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector, mark_process_dead
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiprocess_dir() -> Path | None:
    """The directory of multiprocess mode, or None when the worker serves one process's metrics."""
    value = os.environ.get(MULTIPROC_ENV)
    return Path(value) if value else None


def serve_registry(port: int, registry: CollectorRegistry | None = None) -> bool:
    """Serve `registry` (default: this process's) on `port`; False, with a warning, when the port
    is taken."""
    try:
        if registry is None:
            start_http_server(port)
        else:
            start_http_server(port, registry=registry)
    except OSError as exc:
        log.warning("metrics port %d unavailable: %s", port, exc)
        return False
    log.info("serving Prometheus metrics on :%d (pid %d)", port, os.getpid())
    return True


def _children(pid: int) -> list[int]:
    children: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            children.extend(int(child) for child in (task / "children").read_text().split())
    except (OSError, ValueError):
        pass
    return children


def _cpu_and_rss(pid: int) -> tuple[float, int] | None:
    """CPU seconds (user + system) and resident bytes of one process, from /proc; None if gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])
        pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return ticks / os.sysconf("SC_CLK_TCK"), pages * os.sysconf("SC_PAGE_SIZE")


class ProcessTreeCollector(Collector):
    """`process_cpu_seconds_total` and `process_resident_memory_bytes` of a worker: its main
    process and every live descendant (the pool), read from /proc at each scrape. Counting only
    live processes, the CPU total drops when a pool process is replaced; Prometheus's rate() takes
    such a drop for a counter reset."""

    def __init__(self, pid: int | None = None) -> None:
        self.pid = pid or os.getpid()

    def collect(self) -> Iterator[Metric]:
        cpu, rss = 0.0, 0
        pending = [self.pid]
        while pending:
            pid = pending.pop()
            figures = _cpu_and_rss(pid)
            if figures is None:
                continue
            cpu, rss = cpu + figures[0], rss + figures[1]
            pending.extend(_children(pid))
        yield CounterMetricFamily(
            "process_cpu_seconds", "CPU seconds of the worker's processes (main and pool)", value=cpu
        )
        yield GaugeMetricFamily(
            "process_resident_memory_bytes", "Resident memory of the worker's processes", value=rss
        )


def worker_registry(directory: Path) -> CollectorRegistry:
    """The sum of every pool process's files in `directory`, and the process tree's CPU and RSS."""
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))  # type: ignore[no-untyped-call]
    registry.register(ProcessTreeCollector())
    return registry


def reset_directory(directory: Path) -> None:
    """Empty (or create) the multiprocess directory: files left by a previous run would be summed."""
    directory.mkdir(parents=True, exist_ok=True)
    for entry in directory.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def install(port_of: Callable[[], int], on_pool_process: Callable[[bool], None] | None = None) -> None:
    """Serve a worker's metrics on the port `port_of()` gives (0: off), by connecting to Celery's
    worker signals. `on_pool_process(serving)` runs in each pool process as it starts (`serving`:
    whether this process's metrics reach the port), e.g. to create the series a dashboard reads."""

    @worker_init.connect(weak=False)
    def _main_process(**_: object) -> None:
        port, directory = port_of(), multiprocess_dir()
        if port and directory is not None:
            reset_directory(directory)
            serve_registry(port, worker_registry(directory))

    @worker_process_init.connect(weak=False)
    def _pool_process(**_: object) -> None:
        port, directory = port_of(), multiprocess_dir()
        serving = bool(port) and (directory is not None or serve_registry(port))
        if on_pool_process is not None:
            on_pool_process(serving)

    @worker_process_shutdown.connect(weak=False)
    def _pool_process_gone(pid: int | None = None, **_: object) -> None:
        if multiprocess_dir() is not None:
            mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]
