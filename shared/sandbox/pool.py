"""An optional warm pool: sandboxes started ahead of time per bot version, handed out once each.

A sandbox is never reused across matches (module state would leak from one match to the next), so
a pool hit only saves the start-up; after each hit the pool refills in the background. Cold starts
are fast enough that per-match start is the default; see docs/hosted-bots.md for the figures.

Refills run on ONE thread that lives as long as the pool: bubblewrap's --die-with-parent follows
the thread that started it (PR_SET_PDEATHSIG), so a sandbox started by a short-lived thread would
be killed the moment that thread ended.
"""

from __future__ import annotations

import queue
import threading
from collections import defaultdict

from shared.sandbox.backends import SandboxedBot
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.uids import SandboxUids
from shared.states import HostedContract

RefillRequest = tuple[str, str, str, str, str | None]
"""(version, source, secret, contract, game)."""


class WarmPool:
    def __init__(
        self,
        *,
        per_key: int = 1,
        limits: SandboxLimits | None = None,
        backend: str = "bwrap",
        dev_mode: bool = False,
        uids: SandboxUids | None = None,
    ) -> None:
        """`uids`: as for SandboxedBot; every waiting sandbox holds one of them."""
        self.per_key = per_key
        self.limits = limits or SandboxLimits()
        self.backend = backend
        self.dev_mode = dev_mode
        self.uids = uids
        self._ready: dict[tuple[str, str, str, str | None], list[SandboxedBot]] = defaultdict(list)
        self._lock = threading.Lock()
        self._closed = False
        self._refills: queue.SimpleQueue[RefillRequest | None] = queue.SimpleQueue()
        self._refiller: threading.Thread | None = None
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
            uids=self.uids,
        )

    def prewarm(
        self,
        version: str,
        source: str,
        *,
        secret: str,
        contract: str = HostedContract.DECIDE,
        game: str | None = None,
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
        self,
        version: str,
        source: str,
        *,
        secret: str,
        contract: str = HostedContract.DECIDE,
        game: str | None = None,
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
        self._request_refill((version, source, secret, contract, game))
        return bot

    def _request_refill(self, request: RefillRequest) -> None:
        with self._lock:
            if self._closed:
                return
            if self._refiller is None:
                self._refiller = threading.Thread(target=self._refill_forever, name="warm-pool", daemon=True)
                self._refiller.start()
        self._refills.put(request)

    def _refill_forever(self) -> None:
        """The pool's one refill thread: it must outlive every sandbox it starts (module docstring)."""
        while (request := self._refills.get()) is not None:
            version, source, secret, contract, game = request
            self.prewarm(version, source, secret=secret, contract=contract, game=game)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            bots = [b for group in self._ready.values() for b in group]
            self._ready.clear()
            refiller = self._refiller
        self._refills.put(None)
        if refiller is not None:
            refiller.join(timeout=10)
        for bot in bots:
            bot.close()
