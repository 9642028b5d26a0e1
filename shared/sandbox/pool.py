"""An optional warm pool: sandboxes started ahead of time per bot version, handed out once each.

A sandbox is never reused across matches (module state would leak from one match to the next), so
a pool hit only saves the start-up; after each hit the pool refills in the background. Cold starts
are fast enough that per-match start is the default; see docs/hosted-bots.md for the figures.
"""

from __future__ import annotations

import threading
from collections import defaultdict

from shared.sandbox.backends import SandboxedBot
from shared.sandbox.limits import SandboxLimits


class WarmPool:
    def __init__(
        self,
        *,
        per_key: int = 1,
        limits: SandboxLimits | None = None,
        backend: str = "bwrap",
        dev_mode: bool = False,
    ) -> None:
        self.per_key = per_key
        self.limits = limits or SandboxLimits()
        self.backend = backend
        self.dev_mode = dev_mode
        self._ready: dict[tuple[str, str, str, str | None], list[SandboxedBot]] = defaultdict(list)
        self._lock = threading.Lock()
        self._closed = False
        self._refills: list[threading.Thread] = []
        self.hits = 0
        self.misses = 0

    def _new(self, source: str, secret: str, contract: str, game: str | None) -> SandboxedBot:
        return SandboxedBot(
            source,
            secret=secret,
            contract=contract,
            game=game,
            limits=self.limits,
            backend=self.backend,
            dev_mode=self.dev_mode,
        )

    def prewarm(
        self, version: str, source: str, *, secret: str, contract: str = "decide", game: str | None = None
    ) -> None:
        """Start sandboxes for this bot version until `per_key` are waiting (blocking)."""
        key = (version, secret, contract, game)
        while True:
            with self._lock:
                if self._closed or len(self._ready[key]) >= self.per_key:
                    return
            bot = self._new(source, secret, contract, game)
            if not bot.start():
                bot.close()
                return
            bot.freeze()  # nothing of the bot runs while it waits (see cgroups.py)
            with self._lock:
                if self._closed:
                    bot.close()
                    return
                self._ready[key].append(bot)

    def acquire(
        self, version: str, source: str, *, secret: str, contract: str = "decide", game: str | None = None
    ) -> SandboxedBot:
        """A bot for one match: a warm one if waiting, else a cold start. The caller closes it, and
        checks `alive` / `start_error` as after `SandboxedBot.start()` (a cold start can fail)."""
        key = (version, secret, contract, game)
        with self._lock:
            warm = [b for b in self._ready[key] if b.alive]
            bot = warm.pop(0) if warm else None
            stale = [b for b in self._ready[key] if not b.alive]
            self._ready[key] = warm
        for dead in stale:
            dead.close()
        if bot is not None:
            self.hits += 1
            bot.thaw()
            bot.arm_wall_clock()
        else:
            self.misses += 1
            bot = self._new(source, secret, contract, game)
            bot.start()
        refill = threading.Thread(
            target=self.prewarm,
            args=(version, source),
            kwargs={"secret": secret, "contract": contract, "game": game},
            daemon=True,
        )
        with self._lock:
            self._refills = [t for t in self._refills if t.is_alive()] + [refill]
        refill.start()
        return bot

    def close(self) -> None:
        with self._lock:
            self._closed = True
            bots = [b for group in self._ready.values() for b in group]
            self._ready.clear()
            refills = list(self._refills)
        for thread in refills:
            thread.join(timeout=10)
        for bot in bots:
            bot.close()
