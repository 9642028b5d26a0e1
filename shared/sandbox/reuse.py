"""Hosted bots' sandboxes kept by the worker process between matches of the same bot version.

Starting a match's two sandboxes (namespaces, cgroups, interpreters importing the bot SDK) costs
nearly as much CPU as all the turns of a podracing match (docs/match-runner.md, the "fresh" rows of
bench_platform --baseline), so a worker keeps a sandbox that finished its match cleanly and hands it
to that bot's next match. For the bot it is as if the
sandbox were new: its module is loaded afresh at the first turn of every match (the hosted
runner's `reload`), only its /tmp and the modules it imported stay. A sandbox is kept only when

- it runs the `decide` contract (a CodinGame script is one process per match);
- every request of its match got a usable answer (no timeout, crash or unreadable answer);
- it is alive and holds exactly the tasks it had when it first served: nothing the bot started
  (a thread, a child) is left;
- it has played fewer than `sandbox_reuse_matches` matches and used less than half of its
  CPU-seconds limit (a per-process rlimit that counts the whole life of the sandbox).

Waiting sandboxes are frozen, like a sandbox between turns; one not asked for within
`sandbox_reuse_idle_s` is stopped, and a process keeps at most `sandbox_reuse_idle`.

Sandboxes are started on this module's threads, which live as long as the process: bubblewrap's
--die-with-parent follows the thread that started it (pool.py), so a sandbox started on a
short-lived thread (asyncio's default executor ends with its event loop) would die with it. Each
process has its own keeper: a forked child never hands out its parent's sandboxes.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

from shared.config import Settings
from shared.sandbox.backends import SandboxedBot, start_bot
from shared.sandbox.uids import SandboxUids
from shared.states import HostedContract

log = logging.getLogger(__name__)

STARTER_THREADS = 4
"""Sandboxes started or stopped at once by one process (a match starts its bots side by side)."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BotKey:
    """What makes two sandboxes interchangeable: the same code, secret, contract and game."""

    code_sha256: str
    secret: str
    contract: str
    game: str | None

    @classmethod
    def of(cls, source: str, secret: str, contract: str, game: str | None) -> BotKey:
        return cls(hashlib.sha256(source.encode()).hexdigest(), secret, contract, game)


@dataclass(slots=True)
class _Waiting:
    bot: SandboxedBot
    since: float = field(default_factory=time.monotonic)


class SandboxKeeper:
    """Hands out started sandboxes, new or kept from an earlier match, and takes them back."""

    def __init__(self) -> None:
        self.owner_pid = os.getpid()
        self._executor = ThreadPoolExecutor(max_workers=STARTER_THREADS, thread_name_prefix="arena-sandbox")
        self._lock = threading.Lock()
        self._waiting: dict[BotKey, list[_Waiting]] = {}
        self._expiry: threading.Timer | None = None
        self.starts = 0
        self.reuses = 0

    async def _blocking(self, work: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    async def acquire(
        self, source: str, *, secret: str, contract: str, game: str, settings: Settings
    ) -> SandboxedBot:
        """A started sandbox for this bot: one kept from an earlier match when there is one, else
        a new one (check `start_error`). Raises SandboxError when none can be started."""
        key = BotKey.of(source, secret, contract, game)
        kept = self._take(key, settings)
        if kept is not None:
            kept.arm_wall_clock()
            kept.matches += 1
            self.reuses += 1
            return kept
        bot = await self._blocking(
            lambda: _start(source, secret=secret, contract=contract, game=game, settings=settings)
        )
        bot.matches = 1
        self.starts += 1
        return bot

    async def release(self, bot: SandboxedBot, *, clean: bool, settings: Settings) -> None:
        """Take a sandbox back after its match: kept for the next one if it may be, else stopped."""
        if clean and self._keepable(bot, settings):
            bot.freeze()
            key = BotKey.of(bot.source, bot.secret, bot.contract, bot.game)
            with self._lock:
                self._waiting.setdefault(key, []).append(_Waiting(bot))
            excess = self._expired(settings) + self._over_limit(settings)
            self._schedule_expiry(settings)
        else:
            excess = [bot]
        for stale in excess:
            await self._blocking(stale.close)

    def _keepable(self, bot: SandboxedBot, settings: Settings) -> bool:
        cgroup = bot.cgroup
        if (
            settings.sandbox_reuse_idle == 0
            or bot.matches >= settings.sandbox_reuse_matches
            or bot.contract != HostedContract.DECIDE
            or cgroup is None
            or bot.tasks_when_ready is None
            or not bot.alive
        ):
            return False
        try:
            return (
                cgroup.task_count() == bot.tasks_when_ready
                and cgroup.cpu_usage_s() < bot.limits.cpu_seconds / 2
            )
        except (OSError, ValueError):
            return False

    def _take(self, key: BotKey, settings: Settings) -> SandboxedBot | None:
        stale: list[SandboxedBot] = []
        found: SandboxedBot | None = None
        with self._lock:
            waiting = self._waiting.get(key, [])
            now = time.monotonic()
            while waiting and found is None:
                entry = waiting.pop()  # the most recently used
                if entry.bot.alive and now - entry.since < settings.sandbox_reuse_idle_s:
                    found = entry.bot
                else:
                    stale.append(entry.bot)
            if not waiting:
                self._waiting.pop(key, None)
        for bot in stale:  # rare (killed by its wall clock, or expired): closed off the loop's path
            self._executor.submit(bot.close)
        return found

    def _expired(self, settings: Settings) -> list[SandboxedBot]:
        now = time.monotonic()
        expired: list[SandboxedBot] = []
        with self._lock:
            for key, waiting in list(self._waiting.items()):
                fresh = [w for w in waiting if now - w.since < settings.sandbox_reuse_idle_s]
                expired += [w.bot for w in waiting if now - w.since >= settings.sandbox_reuse_idle_s]
                if fresh:
                    self._waiting[key] = fresh
                else:
                    del self._waiting[key]
        return expired

    def _over_limit(self, settings: Settings) -> list[SandboxedBot]:
        """The longest-waiting sandboxes beyond `sandbox_reuse_idle`."""
        with self._lock:
            entries = sorted(
                ((w.since, key, w) for key, ws in self._waiting.items() for w in ws), key=lambda e: e[0]
            )
            excess = entries[: max(0, len(entries) - settings.sandbox_reuse_idle)]
            for _, key, entry in excess:
                self._waiting[key].remove(entry)
                if not self._waiting[key]:
                    del self._waiting[key]
        return [entry.bot for _, _, entry in excess]

    def _schedule_expiry(self, settings: Settings) -> None:
        """Stop waiting sandboxes once they expire, even when no further match comes."""
        with self._lock:
            if self._expiry is not None and self._expiry.is_alive():
                return
            timer = threading.Timer(settings.sandbox_reuse_idle_s, self._expire, args=(settings,))
            timer.daemon = True
            self._expiry = timer
        timer.start()

    def _expire(self, settings: Settings) -> None:
        for bot in self._expired(settings):
            bot.close()
        with self._lock:
            self._expiry = None
            pending = bool(self._waiting)
        if pending:
            self._schedule_expiry(settings)

    def waiting(self) -> int:
        """Sandboxes kept now."""
        with self._lock:
            return sum(len(ws) for ws in self._waiting.values())

    def close_all(self) -> None:
        """Stop every waiting sandbox (process exit, tests)."""
        with self._lock:
            bots = [w.bot for ws in self._waiting.values() for w in ws]
            self._waiting.clear()
            if self._expiry is not None:
                self._expiry.cancel()
                self._expiry = None
        for bot in bots:
            with contextlib.suppress(Exception):
                bot.close()


def _start(source: str, *, secret: str, contract: str, game: str, settings: Settings) -> SandboxedBot:
    return start_bot(
        source,
        secret=secret,
        contract=contract,
        game=game,
        backend=settings.sandbox_backend,
        dev_mode=settings.dev_mode,
        uids=SandboxUids.from_settings(settings),
    )


_keeper: SandboxKeeper | None = None
_keeper_lock = threading.Lock()


def keeper() -> SandboxKeeper:
    """This process's keeper (a new one in a forked child)."""
    global _keeper
    with _keeper_lock:
        if _keeper is None or _keeper.owner_pid != os.getpid():
            _keeper = SandboxKeeper()
            atexit.register(_keeper.close_all)
        return _keeper


def stop_kept() -> None:
    """Stop the sandboxes this process keeps (its exit); nothing when it never kept any."""
    with _keeper_lock:
        kept = _keeper if _keeper is not None and _keeper.owner_pid == os.getpid() else None
    if kept is not None:
        kept.close_all()
