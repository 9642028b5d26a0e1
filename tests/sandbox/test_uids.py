"""Sandbox uids are leased one per live sandbox, across processes, and come back when the sandbox
ends, also when its owner is killed outright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from shared.sandbox import SandboxError
from shared.sandbox.uids import SandboxUids, UidError
from tests.support.sandbox import StartHosted, ask, requires_bwrap

ROOT = Path(__file__).resolve().parents[2]
TEST_BASE = 1_950_000_000
"""Away from the default range, so these tests never wait on sandboxes running elsewhere."""


@pytest.fixture
def uids(tmp_path: Path) -> SandboxUids:
    return SandboxUids(base=TEST_BASE, count=2, lock_dir=tmp_path / "uids")


def test_leases_are_distinct_until_released_then_reused(uids: SandboxUids) -> None:
    first, second = uids.lease(), uids.lease()
    assert {first.uid, second.uid} == {TEST_BASE, TEST_BASE + 1}
    assert first.gid == first.uid
    with pytest.raises(UidError, match="all 2 sandbox uids"):
        uids.lease()
    first.release()
    first.release()
    again = uids.lease()
    assert again.uid == first.uid
    again.release()
    second.release()


HOLDER = """
import sys, time
from pathlib import Path
from shared.sandbox.uids import SandboxUids
lease = SandboxUids(base=int(sys.argv[1]), count=1, lock_dir=Path(sys.argv[2])).lease()
print(lease.uid, flush=True)
time.sleep(600)
"""


def test_a_killed_owners_uid_is_free_again(uids: SandboxUids) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(uids.base), str(uids.lock_dir)],
        stdout=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    assert holder.stdout is not None
    assert int(holder.stdout.readline()) == uids.base
    mine = uids.lease()
    assert mine.uid == uids.base + 1, "another process holds the first uid"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    freed = uids.lease()
    assert freed.uid == uids.base, "the kernel dropped the killed owner's lock"
    freed.release()
    mine.release()


def test_a_lock_directory_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(UidError, match="no other user can write"):
        SandboxUids(base=TEST_BASE, count=1, lock_dir=shared).lease()
    (tmp_path / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    with pytest.raises(UidError, match="not a link"):
        SandboxUids(base=TEST_BASE, count=1, lock_dir=tmp_path / "link").lease()


WHO = textwrap.dedent(
    """
    import os
    def decide(observation):
        return os.getuid()
    """
)


@requires_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only a worker started as root leases sandbox uids")
def test_a_sandbox_holds_its_uid_for_its_life_only(hosted: StartHosted, secret: str, tmp_path: Path) -> None:
    one = SandboxUids(base=TEST_BASE, count=1, lock_dir=tmp_path / "uids")
    first = hosted(WHO, uids=one)
    assert ask(first, secret) == TEST_BASE == first.uid
    with pytest.raises(SandboxError, match="all 1 sandbox uids"):
        hosted(WHO, uids=one)
    first.close()
    assert first.uid is None
    second = hosted(WHO, uids=one)
    assert ask(second, secret) == TEST_BASE, "the uid of a closed sandbox is leased again"
