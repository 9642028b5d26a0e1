"""What one sandbox can learn about, or take from, the others on the same host: nothing through the
host-wide /proc files (a timing side channel on other matches), and nothing through the limits the
kernel keeps per uid (each sandbox runs as a uid of its own).

Bots go straight to the bwrap backend (no gate), as in test_attacks.py.
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from shared.sandbox.limits import SandboxLimits
from tests.support.sandbox import StartHosted, ask, requires_bwrap

pytestmark = requires_bwrap
requires_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="only a worker started as root can give each sandbox a uid of its own"
)

HOST_WIDE = (
    "/proc/stat", "/proc/loadavg", "/proc/meminfo", "/proc/config.gz", "/proc/cmdline",
    "/proc/interrupts", "/proc/diskstats", "/proc/vmstat", "/proc/zoneinfo", "/proc/schedstat",
    "/proc/softirqs", "/proc/buddyinfo", "/proc/slabinfo", "/proc/uptime", "/proc/locks",
    "/proc/cpuinfo", "/proc/swaps", "/proc/sys/fs/file-nr", "/proc/sys/fs/inode-nr",
    "/proc/sys/fs/dentry-state", "/proc/pressure", "/proc/pressure/cpu", "/proc/pressure/io",
    "/proc/pressure/memory",
)  # fmt: skip
"""The files the issue named and their close relatives (backends.MASKED_PROC_FILES and _DIRS);
those this kernel lacks are skipped."""


def bot(body: str, prelude: str = "") -> str:
    return (
        "import os, sys, time, json, fcntl\n"
        + textwrap.dedent(prelude)
        + "\ndef decide(observation):\n"
        + textwrap.indent(textwrap.dedent(body), "    ")
    )


READ_PATHS = """
out = {}
for path in observation["paths"]:
    try:
        if os.path.isdir(path):
            out[path] = "LISTED %s" % sorted(os.listdir(path)) if os.listdir(path) else "empty"
        else:
            with open(path, "rb") as handle:
                data = handle.read()
            out[path] = "READ %d bytes" % len(data) if data else "empty"
    except OSError as exc:
        out[path] = "unreadable: %r" % exc
out["cpu_count"] = os.cpu_count()
return out
"""


def test_host_wide_proc_files_read_empty_or_not_at_all(hosted: StartHosted, secret: str) -> None:
    paths = [path for path in HOST_WIDE if os.path.exists(path)]
    assert "/proc/stat" in paths, "no /proc to test against"
    outcome = ask(hosted(bot(READ_PATHS)), secret, {"paths": [*paths, "/proc/self/status"]})
    assert isinstance(outcome, dict), outcome
    assert outcome.pop("cpu_count") == len(os.sched_getaffinity(0)), "os.cpu_count() must still work"
    assert outcome.pop("/proc/self/status").startswith("READ"), "the sandbox's own /proc must work"
    leaked = {path: result for path, result in outcome.items() if result.startswith(("READ", "LISTED"))}
    assert not leaked, f"host-wide /proc files readable in the sandbox: {leaked}"


# -- a uid per sandbox -----------------------------------------------------------------------

WHO = """
with open("/proc/self/status") as handle:
    ids = {l.split(":")[0]: l.split()[1:] for l in handle if l.startswith(("Uid", "Gid"))}
return {"uid": os.getuid(), "gid": os.getgid(), "status": ids}
"""


@requires_root
def test_two_sandboxes_at_once_run_as_different_uids(hosted: StartHosted, secret: str) -> None:
    first, second = hosted(bot(WHO)), hosted(bot(WHO))
    seen = [ask(first, secret), ask(second, secret)]
    assert all(isinstance(who, dict) for who in seen), seen
    assert seen[0]["uid"] != seen[1]["uid"], f"both sandboxes run as uid {seen[0]['uid']}"
    assert seen[0]["gid"] != seen[1]["gid"], f"both sandboxes run as gid {seen[0]['gid']}"
    for sandbox, who in zip((first, second), seen, strict=True):
        assert sandbox.uids is not None, (who, sandbox.uid)
        assert who["uid"] == sandbox.uid, (who, sandbox.uid)
        assert sandbox.uids.base <= who["uid"] < sandbox.uids.base + sandbox.uids.count
        host_status = Path(f"/proc/{sandbox.pid}/status").read_text()
        assert f"Uid:\t{who['uid']}\t" in host_status, "the host sees the same uid as the bot"


PIPE_HOG = """
held = []
for _ in range(observation["pipes"]):
    try:
        r, w = os.pipe()
    except OSError:
        break
    held.append((r, w))
    try:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, observation["max_size"])
    except OSError:
        pass  # past the per-uid soft limit: the pipe stays small
HELD.extend(held)
return {"pipes": len(held), "last_size": fcntl.fcntl(held[-1][1], fcntl.F_GETPIPE_SZ)}
"""

PIPE_USER = """
r, w = os.pipe()
out = {"size": fcntl.fcntl(w, fcntl.F_GETPIPE_SZ)}
try:
    out["grown"] = fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, observation["size"])
except OSError as exc:
    out["grown"] = repr(exc)
os.close(r)
os.close(w)
return out
"""


def _sysctl(name: str) -> int:
    return int(Path("/proc/sys/fs", name).read_text())


@requires_root
def test_a_bot_that_uses_up_its_pipe_budget_leaves_the_others_theirs(
    hosted: StartHosted, secret: str
) -> None:
    """The kernel's pipe budget (fs.pipe-user-pages-soft) is per uid: past it, every new pipe of
    that uid gets the smallest buffer and cannot grow. Shared by all sandboxes, one bot could do
    that to every other bot on the host."""
    soft_pages, max_size = _sysctl("pipe-user-pages-soft"), _sysctl("pipe-max-size")
    if soft_pages == 0:
        pytest.skip("fs.pipe-user-pages-soft is 0: this host sets no per-uid pipe budget")
    page = os.sysconf("SC_PAGE_SIZE")
    pipes = soft_pages * page // max_size + 16  # enough at the largest size, then some at the smallest
    hog = hosted(bot(PIPE_HOG, "HELD = []\n"), SandboxLimits(open_files=2 * pipes + 32))
    victim = hosted(bot(PIPE_USER))
    default_size = 16 * page  # a new pipe's buffer: PIPE_DEF_BUFFERS pages
    before = ask(victim, secret, {"size": max_size})
    assert before == {"size": default_size, "grown": max_size}, before
    hogged = ask(hog, secret, {"pipes": pipes, "max_size": max_size}, timeout=20)
    assert isinstance(hogged, dict), hogged
    assert hogged["pipes"] == pipes, hogged
    assert hogged["last_size"] < default_size, f"the hog did not reach its uid's budget: {hogged}"
    after = ask(victim, secret, {"size": max_size})
    assert after == {"size": default_size, "grown": max_size}, f"the hog took the victim's pipes: {after}"
