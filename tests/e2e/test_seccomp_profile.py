"""deploy/seccomp-sandbox.json, the seccomp profile of the containers that start hosted-bot sandboxes
(match-runner, evolver): Docker's default profile plus exactly the calls bubblewrap needs.

Checked twice. As a file: Docker's JSON shape, the base allow-list, the additions, nothing dangerous.
And by running it: the profile is compiled to a filter the way a container runtime applies it (for
x86_64, for a process without capabilities on this kernel) and installed in a process that then does
what the worker does in its container, without root, capabilities or new privileges: start a real
bubblewrap sandbox and play a turn. With any one addition taken away (for `clone`, Docker's own rule
in its place: no namespace flags), bubblewrap no longer starts.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.environment import ROOT
from tests.support.system_deps import require

PROFILE = ROOT / "deploy" / "seccomp-sandbox.json"


def words(text: str) -> frozenset[str]:
    return frozenset(text.split())


DOCKER_DEFAULT_ALLOWED = words(
    """
_llseek _newselect accept accept4 access adjtimex alarm bind brk capget capset chdir chmod chown
chown32 clock_adjtime clock_adjtime64 clock_getres clock_getres_time64 clock_gettime clock_gettime64
clock_nanosleep clock_nanosleep_time64 close close_range connect copy_file_range creat dup dup2 dup3
epoll_create epoll_create1 epoll_ctl epoll_ctl_old epoll_pwait epoll_pwait2 epoll_wait
epoll_wait_old eventfd eventfd2 execve execveat exit exit_group faccessat faccessat2 fadvise64
fadvise64_64 fallocate fanotify_mark fchdir fchmod fchmodat fchown fchown32 fchownat fcntl fcntl64
fdatasync fgetxattr flistxattr flock fork fremovexattr fsetxattr fstat fstat64 fstatat64 fstatfs
fstatfs64 fsync ftruncate ftruncate64 futex futex_time64 futex_waitv futimesat get_robust_list
get_thread_area getcpu getcwd getdents getdents64 getegid getegid32 geteuid geteuid32 getgid
getgid32 getgroups getgroups32 getitimer getpeername getpgid getpgrp getpid getppid getpriority
getrandom getresgid getresgid32 getresuid getresuid32 getrlimit getrusage getsid getsockname
getsockopt gettid gettimeofday getuid getuid32 getxattr inotify_add_watch inotify_init inotify_init1
inotify_rm_watch io_cancel io_destroy io_getevents io_pgetevents io_pgetevents_time64 io_setup
io_submit io_uring_enter io_uring_register io_uring_setup ioctl ioprio_get ioprio_set ipc kill
landlock_add_rule landlock_create_ruleset landlock_restrict_self lchown lchown32 lgetxattr link
linkat listen listxattr llistxattr lremovexattr lseek lsetxattr lstat lstat64 madvise membarrier
memfd_create memfd_secret mincore mkdir mkdirat mknod mknodat mlock mlock2 mlockall mmap mmap2
mprotect mq_getsetattr mq_notify mq_open mq_timedreceive mq_timedreceive_time64 mq_timedsend
mq_timedsend_time64 mq_unlink mremap msgctl msgget msgrcv msgsnd msync munlock munlockall munmap
name_to_handle_at nanosleep newfstatat open openat openat2 pause pidfd_open pidfd_send_signal pipe
pipe2 pkey_alloc pkey_free pkey_mprotect poll ppoll ppoll_time64 prctl pread64 preadv preadv2
prlimit64 process_mrelease pselect6 pselect6_time64 pwrite64 pwritev pwritev2 read readahead
readlink readlinkat readv recv recvfrom recvmmsg recvmmsg_time64 recvmsg remap_file_pages
removexattr rename renameat renameat2 restart_syscall rmdir rseq rt_sigaction rt_sigpending
rt_sigprocmask rt_sigqueueinfo rt_sigreturn rt_sigsuspend rt_sigtimedwait rt_sigtimedwait_time64
rt_tgsigqueueinfo sched_get_priority_max sched_get_priority_min sched_getaffinity sched_getattr
sched_getparam sched_getscheduler sched_rr_get_interval sched_rr_get_interval_time64
sched_setaffinity sched_setattr sched_setparam sched_setscheduler sched_yield seccomp select semctl
semget semop semtimedop semtimedop_time64 send sendfile sendfile64 sendmmsg sendmsg sendto
set_robust_list set_thread_area set_tid_address setfsgid setfsgid32 setfsuid setfsuid32 setgid
setgid32 setgroups setgroups32 setitimer setpgid setpriority setregid setregid32 setresgid
setresgid32 setresuid setresuid32 setreuid setreuid32 setrlimit setsid setsockopt setuid setuid32
setxattr shmat shmctl shmdt shmget shutdown sigaltstack signalfd signalfd4 sigprocmask sigreturn
socketcall socketpair splice stat stat64 statfs statfs64 statx symlink symlinkat sync
sync_file_range syncfs sysinfo tee tgkill time timer_create timer_delete timer_getoverrun
timer_gettime timer_gettime64 timer_settime timer_settime64 timerfd_create timerfd_gettime
timerfd_gettime64 timerfd_settime timerfd_settime64 times tkill truncate truncate64 ugetrlimit umask
uname unlink unlinkat utime utimensat utimensat_time64 utimes vfork vmsplice wait4 waitid waitpid
write writev
"""
)
"""The calls Docker's default profile (moby's profiles/seccomp/default.json) allows every container
unconditionally, whatever its capabilities."""

DOCKER_DEFAULT_CONDITIONAL = frozenset(
    {
        # from kernel 4.8 on
        "process_vm_readv",
        "process_vm_writev",
        "ptrace",
        # socket: every family but AF_VSOCK; personality: queries and the usual personalities
        "socket",
        "personality",
        # architecture-specific
        "arch_prctl",
        "modify_ldt",
        "arm_fadvise64_64",
        "arm_sync_file_range",
        "sync_file_range2",
        "breakpoint",
        "cacheflush",
        "set_tls",
        "swapcontext",
        "s390_pci_mmio_read",
        "s390_pci_mmio_write",
        "s390_runtime_instr",
        "riscv_flush_icache",
    }
)
"""Docker's default profile's calls with conditions (arguments, architecture, kernel), kept as they are."""

BUBBLEWRAP_CALLS: dict[str, str] = {
    "clone": "with CLONE_NEWUSER, NEWNS, NEWPID, NEWNET, NEWIPC, NEWUTS and NEWCGROUP: the sandbox's "
    "namespaces (Docker allows clone only without namespace flags to a container without CAP_SYS_ADMIN)",
    "mount": "the sandbox's root: a tmpfs, read-only binds, a fresh /proc, a minimal /dev, a private /tmp",
    "pivot_root": "entering that root (Docker allows it to no container)",
    "umount2": "detaching the old root, so nothing of the container's file system stays reachable",
    "sethostname": "`--hostname sandbox` in the sandbox's own UTS namespace",
    "unshare": "`--disable-userns`: a nested user namespace that forbids bot code to create more",
}
"""What the profile allows beyond Docker's default, and why: what bubblewrap calls when the sandbox
backend starts it (shared/sandbox/backends.py: --unshare-all, --unshare-user, --disable-userns,
--hostname, --proc, --dev, --tmpfs, --ro-bind), found with `strace -f` and confirmed below: without
any one of them, the sandbox does not start. Not needed: setns (no --userns/--pidns), clone3 (it
answers ENOSYS as in Docker's profile; bubblewrap uses clone, the C library falls back to it)."""

NEVER_ALLOWED = frozenset(
    {
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
        "reboot",
        "bpf",
        "open_by_handle_at",
        "setns",
        "chroot",
        "swapon",
        "swapoff",
        "acct",
        "perf_event_open",
        "add_key",
        "keyctl",
        "request_key",
        "userfaultfd",
        "iopl",
        "ioperm",
        "syslog",
        "settimeofday",
        "clock_settime",
        "quotactl",
        "lookup_dcookie",
        "fsopen",
        "fsmount",
        "move_mount",
        "open_tree",
        "mount_setattr",
        "umount",
        "vhangup",
        "kcmp",
        "pidfd_getfd",
        "process_madvise",
    }
)
"""Calls no worker needs that reach the kernel's most dangerous paths (modules, kexec, BPF, file
handles that escape a mount namespace, keyrings, the new mount API, other processes' file
descriptors); Docker gates them behind capabilities the services drop, or refuses them outright."""

KNOWN_FIELDS = {"names", "action", "errnoRet", "args", "comment", "includes", "excludes"}
KNOWN_OPS = {"SCMP_CMP_EQ", "SCMP_CMP_NE", "SCMP_CMP_MASKED_EQ"}
EPERM, ENOSYS = 1, 38


def load_profile() -> dict[str, Any]:
    return dict(json.loads(PROFILE.read_text()))


def allowed_names(profile: dict[str, Any], *, conditional: bool) -> set[str]:
    names: set[str] = set()
    for entry in profile["syscalls"]:
        has_conditions = bool(entry.get("args") or entry.get("includes") or entry.get("excludes"))
        if entry["action"] == "SCMP_ACT_ALLOW" and has_conditions == conditional:
            names.update(entry["names"])
    return names


def test_profile_has_dockers_shape() -> None:
    profile = load_profile()
    assert set(profile) == {"defaultAction", "defaultErrnoRet", "archMap", "syscalls"}
    assert profile["defaultAction"] == "SCMP_ACT_ERRNO"
    assert profile["defaultErrnoRet"] == EPERM
    arches = {entry["architecture"] for entry in profile["archMap"]}
    assert arches == {"SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"}, "the architectures shared/sandbox supports"
    for entry in profile["archMap"]:
        assert all(sub.startswith("SCMP_ARCH_") for sub in entry["subArchitectures"])
    for entry in profile["syscalls"]:
        assert set(entry) <= KNOWN_FIELDS, entry
        assert "names" in entry, entry
        assert "action" in entry, entry
        assert entry["names"]
        assert all(re.fullmatch(r"[a-z_][a-z0-9_]*", name) for name in entry["names"])
        assert entry["action"] in {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO"}, entry
        assert "caps" not in entry.get("includes", {}), "the services drop every capability: a dead rule"
        for arg in entry.get("args", []):
            assert set(arg) <= {"index", "value", "valueTwo", "op"}, arg
            assert arg["op"] in KNOWN_OPS, arg
            assert 0 <= arg["index"] <= 5, arg
            assert 0 <= arg["value"] < 2**64, arg
        assert entry.get("comment"), "every rule says where it comes from"


def test_profile_is_dockers_default_plus_exactly_what_bubblewrap_needs() -> None:
    profile = load_profile()
    unconditional = allowed_names(profile, conditional=False)
    assert unconditional - DOCKER_DEFAULT_ALLOWED == set(BUBBLEWRAP_CALLS)
    assert unconditional >= DOCKER_DEFAULT_ALLOWED, sorted(DOCKER_DEFAULT_ALLOWED - unconditional)
    assert allowed_names(profile, conditional=True) == DOCKER_DEFAULT_CONDITIONAL
    bubblewrap = [e for e in profile["syscalls"] if set(e["names"]) & set(BUBBLEWRAP_CALLS)]
    assert len(bubblewrap) == 1
    assert set(bubblewrap[0]["names"]) == set(BUBBLEWRAP_CALLS)
    assert "bubblewrap" in bubblewrap[0]["comment"]
    socket_rules = [e for e in profile["syscalls"] if e["names"] == ["socket"]]
    assert [r["args"] for r in socket_rules] == [[{"index": 0, "value": 40, "op": "SCMP_CMP_NE"}]]
    (clone3,) = [e for e in profile["syscalls"] if "clone3" in e["names"]]
    assert clone3["action"] == "SCMP_ACT_ERRNO"
    assert clone3["errnoRet"] == ENOSYS


def test_profile_allows_nothing_dangerous() -> None:
    profile = load_profile()
    everything = allowed_names(profile, conditional=False) | allowed_names(profile, conditional=True)
    assert not everything & NEVER_ALLOWED, sorted(everything & NEVER_ALLOWED)


def test_deploy_docs_name_each_added_call() -> None:
    docs = (ROOT / "docs" / "deploy.md").read_text()
    assert "seccomp-sandbox.json" in docs
    for name in BUBBLEWRAP_CALLS:
        assert f"`{name}`" in docs, f"docs/deploy.md does not explain why the profile allows {name}"


# -- the profile at work --------------------------------------------------------------------------

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_W_ABS, JEQ_K, JGE_K, AND_K, RET_K = 0x20, 0x15, 0x35, 0x54, 0x06
FAIL = -1
"""A jump to the end of the current rule's block (its conditions did not hold): resolved per block."""
DOCKER_CLONE_RULE = {
    "names": ["clone"],
    "action": "SCMP_ACT_ALLOW",
    "args": [{"index": 0, "value": 0x7E020000, "op": "SCMP_CMP_MASKED_EQ"}],
    "comment": "Docker's rule for containers without CAP_SYS_ADMIN: no CLONE_NEW* flag",
}
UNISTD_HEADERS = (
    Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h"),
    Path("/usr/include/asm/unistd_64.h"),
)


def syscall_numbers() -> dict[str, int]:
    """x86_64's system-call table, from the kernel's user-space headers (linux-libc-dev)."""
    found = next((str(path) for path in UNISTD_HEADERS if path.exists()), None)
    header = Path(require(found, package="linux-libc-dev", what="the kernel's system-call table"))
    pairs = re.findall(r"^#define __NR_(\w+)\s+(\d+)$", header.read_text(), flags=re.M)
    return {name: int(number) for name, number in pairs}


def kernel_version() -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", platform.release())[:2])


def _condition(arg: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """One argument check on the 64-bit argument (two 32-bit words, low word first)."""
    low, high = 16 + 8 * arg["index"], 16 + 8 * arg["index"] + 4
    if arg["op"] == "SCMP_CMP_NE":
        # passes when either word differs
        return [
            (LD_W_ABS, 0, 0, low),
            (JEQ_K, 0, 2, arg["value"] & 0xFFFFFFFF),
            (LD_W_ABS, 0, 0, high),
            (JEQ_K, FAIL, 0, arg["value"] >> 32),
        ]
    if arg["op"] == "SCMP_CMP_MASKED_EQ":
        mask, want = arg["value"], arg.get("valueTwo", 0)
    else:
        mask, want = 2**64 - 1, arg["value"]
    return [
        (LD_W_ABS, 0, 0, low),
        (AND_K, 0, 0, mask & 0xFFFFFFFF),
        (JEQ_K, 0, FAIL, want & 0xFFFFFFFF),
        (LD_W_ABS, 0, 0, high),
        (AND_K, 0, 0, mask >> 32),
        (JEQ_K, 0, FAIL, want >> 32),
    ]


def _rules(profile: dict[str, Any], numbers: dict[str, int]) -> Iterator[tuple[int, list[Any], int]]:
    """(number, argument checks, return value) for x86_64, no capabilities, this kernel: what a
    runtime applies. Names this architecture lacks (the 32-bit calls) are skipped, as runc does."""
    default_errno = profile["defaultErrnoRet"]
    for entry in profile["syscalls"]:
        includes, excludes = entry.get("includes", {}), entry.get("excludes", {})
        if includes.get("caps"):
            continue
        if "arches" in includes and "amd64" not in includes["arches"]:
            continue
        if "amd64" in excludes.get("arches", []):
            continue
        minimum = includes.get("minKernel")
        if minimum and kernel_version() < tuple(int(p) for p in minimum.split(".")):
            continue
        if entry["action"] == "SCMP_ACT_ALLOW":
            ret = RET_ALLOW
        else:
            ret = RET_ERRNO | entry.get("errnoRet", default_errno)
        for name in entry["names"]:
            if name in numbers:
                yield numbers[name], entry.get("args", []), ret


def compile_x86_64(profile: dict[str, Any], numbers: dict[str, int]) -> bytes:
    """The profile as a classic BPF seccomp program (struct sock_filter, little-endian)."""
    refuse = RET_ERRNO | profile["defaultErrnoRet"]
    program: list[tuple[int, int, int, int]] = [
        (LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
        (JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (RET_K, 0, 0, refuse),
        (LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
        (JGE_K, 0, 1, X32_SYSCALL_BIT),
        (RET_K, 0, 0, refuse),
    ]
    for number, args, ret in _rules(profile, numbers):
        block = [(LD_W_ABS, 0, 0, 0), (JEQ_K, 0, FAIL, number)]
        for arg in args:
            block += _condition(arg)
        block.append((RET_K, 0, 0, ret))
        for i, (code, jt, jf, k) in enumerate(block):
            to_end = len(block) - i - 1
            block[i] = (code, to_end if jt == FAIL else jt, to_end if jf == FAIL else jf, k)
        program += block
    program.append((RET_K, 0, 0, refuse))
    assert len(program) < 4096, "BPF_MAXINSNS"
    return b"".join(struct.pack("<HBBI", *insn) for insn in program)


WORKER = r"""
import ctypes, json, sys

class SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)
    ]

class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

data = sys.stdin.buffer.read()
count = len(data) // 8
insns = (SockFilter * count).from_buffer_copy(data)
prog = SockFprog(count, ctypes.cast(insns, ctypes.POINTER(SockFilter)))
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
    raise OSError(ctypes.get_errno(), "no_new_privs")
if libc.prctl(22, 2, ctypes.byref(prog), 0, 0) != 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
    raise OSError(ctypes.get_errno(), "seccomp")

# From here on this process is a worker in its container: start a sandbox, play one turn.
from shared.protocol.signing import generate_secret
from shared.sandbox.backends import SandboxedBot
from tests.support.sandbox import ask

secret = generate_secret()
bot = SandboxedBot("def decide(observation):\n    return observation['n'] + 1\n", secret=secret)
try:
    started = bot.start()
    answer = ask(bot, secret, {"n": 41}) if started else None
    print(json.dumps({"started": started, "answer": answer, "error": bot.start_error}))
finally:
    bot.kill()
"""


def run_worker(profile: dict[str, Any]) -> dict[str, Any]:
    """WORKER under the compiled profile (sent on its stdin): as uid 65534 without any capability
    when the tests run as root (the images run as an unprivileged user; compose drops every
    capability)."""
    command = [sys.executable, "-c", WORKER]
    if os.geteuid() == 0:
        setpriv = require(shutil.which("setpriv"), package="util-linux", what="setpriv")
        drop = ["--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"]
        command = [setpriv, *drop, *command]
    done = subprocess.run(
        command,
        input=compile_x86_64(profile, syscall_numbers()),
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": "/tmp", "LANG": "C.UTF-8"},
        capture_output=True,
        timeout=60,
    )
    stdout, stderr = done.stdout.decode(), done.stderr.decode(errors="replace")
    assert done.returncode == 0, stderr[-3000:]
    assert stdout.strip(), stderr[-3000:]
    return dict(json.loads(stdout.strip().splitlines()[-1]))


@pytest.fixture
def bubblewrap() -> None:
    if platform.machine() != "x86_64":
        pytest.skip(f"the filter is compiled for x86_64 here; this machine is {platform.machine()}")
    require(shutil.which("bwrap"), package="bubblewrap", what="bubblewrap (bwrap)")


@pytest.mark.slow
@pytest.mark.usefixtures("bubblewrap")
def test_a_worker_under_the_profile_starts_a_sandbox_and_plays() -> None:
    outcome = run_worker(load_profile())
    assert outcome == {"started": True, "answer": 42, "error": None}


def without(profile: dict[str, Any], name: str) -> dict[str, Any]:
    """The profile without one of bubblewrap's calls; for clone, Docker's own rule takes its place."""
    changed: dict[str, Any] = json.loads(json.dumps(profile))
    for entry in changed["syscalls"]:
        entry["names"] = [n for n in entry["names"] if n != name]
    changed["syscalls"] = [entry for entry in changed["syscalls"] if entry["names"]]
    if name == "clone":
        changed["syscalls"].append(DOCKER_CLONE_RULE)
    return changed


@pytest.mark.slow
@pytest.mark.usefixtures("bubblewrap")
@pytest.mark.parametrize("name", sorted(BUBBLEWRAP_CALLS))
def test_without_any_one_added_call_bubblewrap_cannot_start(name: str) -> None:
    outcome = run_worker(without(load_profile(), name))
    assert outcome["started"] is False, f"the sandbox started without {name}: it is not needed"
    assert "bwrap" in (outcome["error"] or ""), outcome
