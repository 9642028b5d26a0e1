"""Freezing a hosted bot between its turns is cheap, and still stops everything the bot leaves behind.

cgroups.py writes each sandbox's freezer state through one kept descriptor and, on cgroup v1,
keeps an empty group of the worker frozen so that the kernel's freezer key stays on. These tests
check that mechanism (no file opened per write, the key group and its cleanup, the descriptor
never reaching the sandbox, the cost of a pair) and the guarantee it serves: a bot that starts a
busy thread, a child process or a timer after a few quiet turns gets no CPU between its turns.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shared.botclient import HttpBotConnection
from shared.config import Settings
from shared.sandbox import cgroups
from shared.sandbox.backends import SandboxedBot
from shared.sandbox.cgroups import CgroupVersion, SandboxCgroup, detect
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.pool import WarmPool
from shared.sandbox.turns import FrozenBetweenTurns
from tests.support.sandbox import OWN_HOST, ask, requires_bwrap

SUPPORT = detect()
pytestmark = pytest.mark.skipif(SUPPORT is None, reason="no usable cgroup hierarchy here")
requires_v1 = pytest.mark.skipif(
    SUPPORT is None or SUPPORT.version is not CgroupVersion.V1, reason="the freezer key is cgroup v1's"
)
ROOT = Path(__file__).resolve().parents[2]

FROZEN_CPU_BOUND_S = 0.02
"""CPU the sandbox may show over a second of being frozen: the freezer takes effect within
microseconds of the write, so this is measurement slack (a thawed spinner shows up to 1 s)."""


def _is_frozen(group: SandboxCgroup, wait_s: float = 1.0) -> bool:
    """The kernel's view, not the handle's `frozen` attribute. A task running when the freeze was
    written stops at its next return from the kernel, so allow the group a moment to get there
    (v1 says FREEZING meanwhile)."""
    deadline = time.monotonic() + wait_s
    while True:
        if group.support.version is CgroupVersion.V1:
            frozen_between_turns = group.runner_group or group.dirs["freezer"]
            frozen = (frozen_between_turns / "freezer.state").read_text().strip() == "FROZEN"
        else:
            frozen = "frozen 1" in (group.dirs["unified"] / "cgroup.events").read_text()
        if frozen or time.monotonic() > deadline:
            return frozen
        time.sleep(0.001)


def _freezer_descriptors(pid: int, group: SandboxCgroup | None = None) -> list[str]:
    """What the process's open descriptors on freezer state files point at (of `group`, or any)."""
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        ours = group is None or any(str(d) in target for d in group.dirs.values())
        if target.endswith(("freezer.state", "cgroup.freeze")) and ours:
            found.append(target)
    return found


def _counting_opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every os.open from now on."""
    opened: list[str] = []
    real_open = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    return opened


def _cpu_over(group: SandboxCgroup, seconds: float) -> float:
    before = group.cpu_usage_s()
    time.sleep(seconds)
    return group.cpu_usage_s() - before


# -- the mechanism ------------------------------------------------------------------------------


def test_freezer_writes_go_through_one_kept_descriptor(monkeypatch: pytest.MonkeyPatch) -> None:
    assert SUPPORT is not None
    group = SandboxCgroup(SUPPORT, SandboxLimits())
    try:
        assert len(_freezer_descriptors(os.getpid(), group)) == 1, "opened once, at creation"
        opened = _counting_opens(monkeypatch)
        for _ in range(20):
            group.freeze()
            assert _is_frozen(group)
            group.thaw()
            assert not _is_frozen(group, wait_s=0)
        monkeypatch.undo()
        assert not [path for path in opened if path.endswith(("freezer.state", "cgroup.freeze"))]
        assert len(_freezer_descriptors(os.getpid(), group)) == 1
    finally:
        group.destroy()
    assert _freezer_descriptors(os.getpid(), group) == [], "destroy() closes the descriptor"
    assert not group.exists()


@requires_v1
def test_the_worker_keeps_one_empty_freezer_group_frozen() -> None:
    assert SUPPORT is not None
    first = SandboxCgroup(SUPPORT, SandboxLimits())
    key = cgroups.freezer_key_group()
    second = SandboxCgroup(SUPPORT, SandboxLimits())
    try:
        assert key is not None
        assert cgroups.freezer_key_group() == key, "one per process, not one per sandbox"
        assert key.parent == SUPPORT.parents["freezer"]
        assert (key / "freezer.state").read_text().strip() == "FROZEN"
        assert (key / "cgroup.procs").read_text() == "", "nothing ever runs in it"
        assert not cgroups.orphaned(key.name), "named after its live owner: never swept"
    finally:
        first.destroy()
        second.destroy()
    assert key.exists(), "held for the life of the process, not of its sandboxes"


OWNER = (
    OWN_HOST
    + """
import os, sys, time
from shared.sandbox.cgroups import SandboxCgroup, detect, freezer_key_group
from shared.sandbox.limits import SandboxLimits
SandboxCgroup(detect(), SandboxLimits()).destroy()
print(freezer_key_group().name, flush=True)
if sys.argv[2] == "linger":
    time.sleep(600)
"""
)


@requires_v1
def test_the_key_group_goes_with_its_owner(own_host_tag: str) -> None:
    """Removed when its owner exits; swept as an orphan when it was killed outright."""
    assert SUPPORT is not None
    parent = SUPPORT.parents["freezer"]

    def owner(mode: str) -> tuple[subprocess.Popen[str], str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", OWNER, own_host_tag, mode], stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert proc.stdout is not None
        return proc, proc.stdout.readline().strip()

    proc, name = owner("exit")
    assert proc.wait(timeout=30) == 0
    assert name, "an owner that exits removes its key group"
    assert not (parent / name).exists(), "an owner that exits removes its key group"

    proc, name = owner("linger")
    try:
        assert (parent / name).exists()
        assert not cgroups.orphaned(name)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert (parent / name).exists(), "killed outright, the owner leaves it behind"
    assert cgroups.orphaned(name)
    assert cgroups.sweep_orphans(SUPPORT) >= 1
    assert not (parent / name).exists()


def test_a_freeze_thaw_pair_costs_microseconds() -> None:
    """On an empty group, without the kept descriptor or (cgroup v1) the key, a pair costs several
    times the bound (docs/hosted-bots.md has the figures). The bound is loose so that a loaded
    machine does not fail it, and tight enough to catch either change coming undone."""
    assert SUPPORT is not None
    group = SandboxCgroup(SUPPORT, SandboxLimits())
    try:
        costs = []
        for _ in range(300):
            started = time.thread_time_ns()
            group.freeze()
            group.thaw()
            costs.append(time.thread_time_ns() - started)
    finally:
        group.destroy()
    median_us = statistics.median(costs) / 1000
    assert median_us < 50, f"a freeze + thaw pair took {median_us:.0f} µs of CPU (median)"


@requires_bwrap
def test_the_freezer_descriptor_never_reaches_the_sandbox(
    hosted: Callable[..., SandboxedBot], secret: str
) -> None:
    sandbox = hosted("def decide(observation):\n    return 1\n")
    assert ask(sandbox, secret) == 1
    group = sandbox.cgroup
    assert group is not None
    sandbox.freeze()
    assert _freezer_descriptors(os.getpid(), group), "the worker holds it"
    pids = group.pids()
    assert pids, "the sandbox runs processes"
    for pid in pids:
        assert _freezer_descriptors(pid) == [], f"sandbox process {pid} holds a freezer descriptor"


# -- the guarantee ------------------------------------------------------------------------------

QUIET_TURNS = 3

ATTACKS = {
    "busy thread": "threading.Thread(target=spin, daemon=True).start()",
    "child process": "if os.fork() == 0:\n    spin()",
    "interval timer": "signal.setitimer(signal.ITIMER_REAL, 0.01, 0.01)",
}
"""What the bot starts on its turn QUIET_TURNS + 1, then leaves running. The timer's handler runs
on the runner's main thread, which serves connections: no task of the sandbox is added."""


def attacker(start: str) -> str:
    return (
        textwrap.dedent(
            """
            import os, signal, threading, time
            TURNS = []

            def spin():
                while True:
                    pass

            def busy_for_9_ms(signum, frame):
                end = time.monotonic() + 0.009
                while time.monotonic() < end:
                    pass

            signal.signal(signal.SIGALRM, busy_for_9_ms)  # only the main thread may install it

            def decide(observation):
                TURNS.append(1)
                if len(TURNS) == QUIET_TURNS + 1:
            """
        ).replace("QUIET_TURNS", str(QUIET_TURNS))
        + textwrap.indent(start, " " * 8)
        + "\n    return {'turns': len(TURNS)}\n"
    )


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls: list[int] = []
    original: Callable[[SandboxCgroup], None] = getattr(SandboxCgroup, name)

    def counted(self: SandboxCgroup) -> None:
        calls.append(1)
        original(self)

    monkeypatch.setattr(SandboxCgroup, name, counted)
    return calls


@pytest.mark.slow
@requires_bwrap
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_what_a_bot_starts_after_quiet_turns_gets_no_cpu_between_turns(
    attack: str, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox = SandboxedBot(attacker(ATTACKS[attack]), secret=secret)
    sandbox.start()
    group = sandbox.cgroup
    assert group is not None
    freezes, thaws = _counting(monkeypatch, "freeze"), _counting(monkeypatch, "thaw")
    opened = _counting_opens(monkeypatch)

    async def turn(client: FrozenBetweenTurns, n: int) -> None:
        reply = await client.turn(
            match_id="m", game="test", player=0, turn=n, timeout_ms=2000, observation={}
        )
        assert reply.ok, reply
        assert reply.action == {"turns": n + 1}
        assert _is_frozen(group), f"not frozen after turn {n}"

    async def play() -> dict[str, float]:
        http = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, Settings())
        client = FrozenBetweenTurns(http, sandbox)
        try:
            for n in range(QUIET_TURNS):
                await turn(client, n)
            quiet = {"freezes": len(freezes), "thaws": len(thaws)}
            await turn(client, QUIET_TURNS)  # the attack starts
            frozen = _cpu_over(group, 1.0)
            sandbox.thaw()  # the control: thawed, the attack does run
            thawed = _cpu_over(group, 1.0)
            sandbox.freeze()
            await turn(client, QUIET_TURNS + 1)  # still served, and frozen again after
            frozen_again = _cpu_over(group, 0.5)
            return {**quiet, "frozen": frozen, "thawed": thawed, "frozen_again": frozen_again}
        finally:
            await client.aclose()

    try:
        seen = asyncio.run(play())
    finally:
        monkeypatch.undo()
        sandbox.close()
    # One freeze when the connection is wrapped, then one thaw and one freeze per turn, with no
    # file opened for them: the quiet bot pays only the two writes.
    assert seen["freezes"] == QUIET_TURNS + 1
    assert seen["thaws"] == QUIET_TURNS
    assert not [path for path in opened if path.endswith(("freezer.state", "cgroup.freeze"))]
    assert seen["thawed"] > 0.1, f"the {attack} did not run even when thawed: {seen}"
    assert seen["frozen"] < FROZEN_CPU_BOUND_S, f"the {attack} ran between turns: {seen}"
    assert seen["frozen_again"] < FROZEN_CPU_BOUND_S, f"the {attack} ran between turns: {seen}"


SPINS_AT_IMPORT = """
import threading
def spin():
    while True:
        pass
threading.Thread(target=spin, daemon=True).start()
def decide(observation):
    return {"ok": True}
"""


@requires_bwrap
def test_a_pooled_sandbox_waits_frozen_and_is_frozen_between_turns_once_handed_out(secret: str) -> None:
    pool = WarmPool(per_key=1)
    try:
        pool.prewarm("v1", SPINS_AT_IMPORT, secret=secret)
        waiting = pool._ready[("v1", secret, "decide", None)][0]
        assert waiting.cgroup is not None
        assert _is_frozen(waiting.cgroup)
        assert _cpu_over(waiting.cgroup, 0.5) < FROZEN_CPU_BOUND_S, "it ran while waiting in the pool"
        bot = pool.acquire("v1", SPINS_AT_IMPORT, secret=secret)
        assert bot is waiting
        assert pool.hits == 1
        group = bot.cgroup
        assert group is not None
        assert not _is_frozen(group, wait_s=0), "handed out thawed, as a cold start is"

        async def play() -> float:
            http = HttpBotConnection.over_unix_socket(bot.socket_path, secret, Settings())
            client = FrozenBetweenTurns(http, bot)
            try:
                assert _is_frozen(group)
                reply = await client.turn(
                    match_id="m", game="test", player=0, turn=0, timeout_ms=2000, observation={}
                )
                assert reply.ok, reply
                assert _is_frozen(group)
                return _cpu_over(group, 0.5)
            finally:
                await client.aclose()

        assert asyncio.run(play()) < FROZEN_CPU_BOUND_S
        bot.close()
        assert _freezer_descriptors(os.getpid(), group) == [], "close() releases the descriptor"
    finally:
        pool.close()


def test_an_orphan_sweep_can_thaw_what_it_did_not_create() -> None:
    """A handle from `existing()` has no descriptor yet: it opens one to thaw, and closes it."""
    assert SUPPORT is not None
    group = SandboxCgroup(SUPPORT, SandboxLimits())
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        for directory in set(group.dirs.values()):
            (directory / "cgroup.procs").write_text(str(sleeper.pid))
        group.freeze()
        assert _is_frozen(group)
        handle = SandboxCgroup.existing(SUPPORT, next(iter(group.dirs.values())).name)
        handle.destroy()
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        assert not group.exists()
        assert len(_freezer_descriptors(os.getpid(), handle)) == 1, "the handle's is closed"
    finally:
        sleeper.kill()
        sleeper.wait()
        group.destroy()
    assert _freezer_descriptors(os.getpid(), group) == []


# -- only the runner is frozen --------------------------------------------------------------------


def _procs(directory: Path) -> set[int]:
    return {int(p) for p in (directory / "cgroup.procs").read_text().split()}


async def _turns(sandbox: SandboxedBot, secret: str, turns: int) -> list[Any]:
    """`turns` turns through the runner's client, frozen between them; the actions."""
    http = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, Settings())
    client = FrozenBetweenTurns(http, sandbox)
    actions = []
    try:
        for turn in range(turns):
            reply = await client.turn(
                match_id="m", game="test", player=0, turn=turn, timeout_ms=2000, observation={}
            )
            assert reply.ok, reply
            actions.append(reply.action)
    finally:
        await client.aclose()
    return actions


@requires_v1
@requires_bwrap
def test_between_turns_only_the_runner_is_frozen_and_what_it_forks_is_frozen_with_it(secret: str) -> None:
    """bubblewrap's monitor and init stay out of the runner's freezer group (they run no bot code,
    and freezing wakes every task of a group); a child the bot forks is born in the runner's."""
    sandbox = SandboxedBot(attacker(ATTACKS["child process"]), secret=secret)
    sandbox.start()
    try:
        group = sandbox.cgroup
        assert group is not None
        assert group.runner_group is not None
        launchers = _procs(group.dirs["freezer"])
        assert sandbox.pid in launchers, "bubblewrap's monitor and init"
        assert len(launchers) == 2, "bubblewrap's monitor and init"
        (runner,) = _procs(group.runner_group)
        assert "hosted_runner" in Path(f"/proc/{runner}/cmdline").read_text()
        actions = asyncio.run(_turns(sandbox, secret, QUIET_TURNS + 1))  # the last forks a spinner
        assert actions == [{"turns": n + 1} for n in range(QUIET_TURNS + 1)]
        assert _is_frozen(group)
        assert len(_procs(group.runner_group)) == 2, "the forked child is not in the runner's group"
        assert _procs(group.dirs["freezer"]) == launchers
        assert (group.dirs["freezer"] / "freezer.state").read_text().strip() == "THAWED"
        assert _cpu_over(group, 0.5) < FROZEN_CPU_BOUND_S, "the child ran between turns"
    finally:
        sandbox.close()
    assert not group.exists(), "the runner's group was left behind"


FORKS_AT_IMPORT = """
import os
if os.fork() == 0:
    while True:
        pass
def decide(observation):
    return {"ok": True}
"""


@requires_v1
@requires_bwrap
def test_a_sandbox_that_forked_before_it_served_is_frozen_whole(secret: str) -> None:
    """A child forked while the bot's module loaded is outside the runner's group were it made:
    then the whole sandbox is frozen between turns, as it always was."""
    sandbox = SandboxedBot(FORKS_AT_IMPORT, secret=secret)
    sandbox.start()
    try:
        group = sandbox.cgroup
        assert group is not None
        assert group.runner_group is None
        sandbox.freeze()
        assert _is_frozen(group)
        assert _cpu_over(group, 0.5) < FROZEN_CPU_BOUND_S
        assert asyncio.run(_turns(sandbox, secret, 2)) == [{"ok": True}] * 2
        assert _is_frozen(group)
        assert _cpu_over(group, 0.5) < FROZEN_CPU_BOUND_S, "the child ran between turns"
    finally:
        sandbox.close()


@requires_v1
def test_an_orphan_sweep_thaws_and_removes_a_frozen_runner_group() -> None:
    assert SUPPORT is not None
    group = SandboxCgroup(SUPPORT, SandboxLimits())
    launcher = subprocess.Popen(["sleep", "600"])
    runner = subprocess.Popen(["sleep", "600"])
    try:
        for directory in set(group.dirs.values()):
            (directory / "cgroup.procs").write_text(str(launcher.pid))
            (directory / "cgroup.procs").write_text(str(runner.pid))
        assert group.confine_runner({launcher.pid})
        group.freeze()
        assert _is_frozen(group)
        handle = SandboxCgroup.existing(SUPPORT, next(iter(group.dirs.values())).name)
        handle.destroy()
        assert runner.wait(timeout=10) == -signal.SIGKILL
        assert launcher.wait(timeout=10) == -signal.SIGKILL
        assert not group.exists()
    finally:
        for process in (launcher, runner):
            process.kill()
            process.wait()
        group.destroy()


@requires_v1
def test_the_runner_is_not_confined_when_another_process_is_in_the_sandbox() -> None:
    assert SUPPORT is not None
    group = SandboxCgroup(SUPPORT, SandboxLimits())
    processes = [subprocess.Popen(["sleep", "600"]) for _ in range(3)]
    launcher, runner, stray = (p.pid for p in processes)
    try:
        for directory in set(group.dirs.values()):
            for process in processes:
                (directory / "cgroup.procs").write_text(str(process.pid))
        assert not group.confine_runner({launcher}), "the stray child would stay thawed"
        assert group.runner_group is None
        (group.dirs["freezer"].parent / "cgroup.procs").write_text(str(stray))
        assert group.confine_runner({launcher})
        confined = group.runner_group
        assert confined is not None
        assert _procs(confined) == {runner}
    finally:
        for process in processes:
            process.kill()
            process.wait()
        group.destroy()
