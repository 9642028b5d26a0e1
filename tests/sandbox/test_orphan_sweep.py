"""A process killed outright (kill -9) while its bot is frozen between turns leaves the sandbox
frozen: a frozen cgroup-v1 task ignores even SIGKILL until thawed. The next process to create a
sandbox sweeps such groups (owner gone): the bot's processes die and the groups are removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shared.sandbox import cgroups
from shared.sandbox.cgroups import detect
from tests.support.sandbox import OWN_HOST, requires_bwrap

pytestmark = [requires_bwrap, pytest.mark.skipif(detect() is None, reason="no usable cgroup hierarchy here")]

OWNER = (
    OWN_HOST
    + r"""
import sys, time
from shared.sandbox import start_bot
from shared.protocol.signing import generate_secret
bot = start_bot("def decide(observation):\n    return {}\n", secret=generate_secret(), backend="bwrap")
assert not bot.start_error, bot.start_error
bot.freeze()
print(bot.cgroup.dirs[next(iter(bot.cgroup.dirs))].name, *bot.cgroup.pids(), flush=True)
time.sleep(600)
"""
)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_frozen_sandbox_of_a_killed_owner_is_swept_by_the_next_one(own_host_tag: str) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, own_host_tag],
        stdout=subprocess.PIPE, text=True, start_new_session=True, cwd=Path(__file__).resolve().parents[2],
    )  # fmt: skip
    assert owner.stdout is not None
    name, *pids = owner.stdout.readline().split()
    assert pids, "the sandbox runs processes"
    os.killpg(owner.pid, signal.SIGKILL)
    owner.wait(timeout=10)
    time.sleep(0.5)
    assert any(_alive(int(pid)) for pid in pids), "frozen, the bot outlives its owner"
    assert cgroups.orphaned(name)
    support = detect()
    assert support is not None
    assert cgroups.sweep_orphans(support) >= 1
    deadline = time.monotonic() + 5
    while any(_alive(int(pid)) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(int(pid)) for pid in pids)
    assert not any((parent / name).exists() for parent in support.parents.values())


def test_a_live_owners_groups_and_other_hosts_groups_are_never_swept() -> None:
    mine = cgroups.group_name()
    assert not cgroups.orphaned(mine), "this process is alive"
    other_host = mine.replace(f"-h{cgroups.host_tag()}-", "-h000000-")
    assert not cgroups.orphaned(other_host.replace(f"-p{os.getpid()}-", "-p999999999-"))
    assert not cgroups.orphaned("arena-sandbox-0123456789ab"), "unowned (older) names are left alone"
