"""The system-call filter every bwrap sandbox runs under, built as classic BPF in plain Python.

bubblewrap loads it (`bwrap --seccomp FD`) just before it executes the runner, so it holds for the
runner, the author's code and every thread or process they start. The kernel reads a program of
`struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}` instructions over `struct seccomp_data`
(syscall number at offset 0, audit arch at 4, arguments from 16, 8 bytes each). The program:

1. checks the architecture: x86_64 and aarch64 have tables below; any other architecture (i386
   or arm32 compat calls included) kills the process, and so do x86_64's x32 numbers (>= 2**30),
   which would otherwise reach the same kernel code under other numbers;
2. inspects the arguments of the few calls whose risk depends on them: `clone` without any
   CLONE_NEW* namespace flag (and, when the host has no cgroups to hold a whole sandbox, only
   with CLONE_THREAD: threads yes, processes no), `clone3` answers ENOSYS so glibc falls back to
   `clone` (clone3's flags live in memory the filter cannot read), `socket` for AF_UNIX/INET/INET6
   only, `socketpair` for AF_UNIX only (the pairs asyncio and multiprocessing make; any other
   family reaches its protocol's code, module autoloading included, as `socket` would),
   `personality` only as a query;
3. allows the calls of the ALLOWED groups (what CPython needs to start, import its stdlib, serve
   HTTP on the inherited Unix socket with threads, and run the codingame contract's child
   interpreter; found with strace on both contracts) and refuses everything else with EPERM.

docs/hosted-bots.md lists the groups and why each is there.
"""

from __future__ import annotations

import errno
import functools
import platform
import struct
from dataclasses import dataclass

# -- syscall numbers (Linux uapi: arch/x86/entry/syscalls/syscall_64.tbl, asm-generic/unistd.h) --

X86_64: dict[str, int] = {
    "accept": 43,
    "accept4": 288,
    "access": 21,
    "alarm": 37,
    "arch_prctl": 158,
    "bind": 49,
    "brk": 12,
    "chdir": 80,
    "chmod": 90,
    "clock_getres": 229,
    "clock_gettime": 228,
    "clock_nanosleep": 230,
    "clone": 56,
    "clone3": 435,
    "close": 3,
    "close_range": 436,
    "connect": 42,
    "copy_file_range": 326,
    "dup": 32,
    "dup2": 33,
    "dup3": 292,
    "epoll_create": 213,
    "epoll_create1": 291,
    "epoll_ctl": 233,
    "epoll_pwait": 281,
    "epoll_wait": 232,
    "eventfd2": 290,
    "execve": 59,
    "exit": 60,
    "exit_group": 231,
    "faccessat": 269,
    "faccessat2": 439,
    "fadvise64": 221,
    "fchdir": 81,
    "fchmod": 91,
    "fchmodat": 268,
    "fcntl": 72,
    "fdatasync": 75,
    "flock": 73,
    "fstat": 5,
    "fstatfs": 138,
    "fsync": 74,
    "ftruncate": 77,
    "futex": 202,
    "getcpu": 309,
    "getcwd": 79,
    "getdents": 78,
    "getdents64": 217,
    "getegid": 108,
    "geteuid": 107,
    "getgid": 104,
    "getgroups": 115,
    "getitimer": 36,
    "getpeername": 52,
    "getpgid": 121,
    "getpgrp": 111,
    "getpid": 39,
    "getppid": 110,
    "getpriority": 140,
    "getrandom": 318,
    "getresgid": 120,
    "getresuid": 118,
    "getrlimit": 97,
    "getrusage": 98,
    "getsid": 124,
    "getsockname": 51,
    "getsockopt": 55,
    "gettid": 186,
    "gettimeofday": 96,
    "getuid": 102,
    "ioctl": 16,
    "kill": 62,
    "listen": 50,
    "lseek": 8,
    "lstat": 6,
    "madvise": 28,
    "mkdir": 83,
    "mkdirat": 258,
    "mmap": 9,
    "mprotect": 10,
    "mremap": 25,
    "munmap": 11,
    "nanosleep": 35,
    "newfstatat": 262,
    "open": 2,
    "openat": 257,
    "pause": 34,
    "personality": 135,
    "pipe": 22,
    "pipe2": 293,
    "poll": 7,
    "ppoll": 271,
    "prctl": 157,
    "pread64": 17,
    "prlimit64": 302,
    "pselect6": 270,
    "pwrite64": 18,
    "read": 0,
    "readlink": 89,
    "readlinkat": 267,
    "readv": 19,
    "recvfrom": 45,
    "recvmsg": 47,
    "rename": 82,
    "renameat": 264,
    "renameat2": 316,
    "restart_syscall": 219,
    "rmdir": 84,
    "rseq": 334,
    "rt_sigaction": 13,
    "rt_sigprocmask": 14,
    "rt_sigreturn": 15,
    "rt_sigsuspend": 130,
    "rt_sigtimedwait": 128,
    "sched_getaffinity": 204,
    "sched_yield": 24,
    "select": 23,
    "sendfile": 40,
    "sendmsg": 46,
    "sendto": 44,
    "set_robust_list": 273,
    "set_tid_address": 218,
    "setitimer": 38,
    "setrlimit": 160,
    "setsockopt": 54,
    "shutdown": 48,
    "sigaltstack": 131,
    "socket": 41,
    "socketpair": 53,
    "stat": 4,
    "statfs": 137,
    "statx": 332,
    "symlink": 88,
    "symlinkat": 266,
    "sysinfo": 99,
    "tgkill": 234,
    "time": 201,
    "times": 100,
    "tkill": 200,
    "umask": 95,
    "uname": 63,
    "unlink": 87,
    "unlinkat": 263,
    "vfork": 58,
    "wait4": 61,
    "waitid": 247,
    "write": 1,
    "writev": 20,
    "add_key": 248,
    "bpf": 321,
    "chroot": 161,
    "delete_module": 176,
    "finit_module": 313,
    "fork": 57,
    "fsmount": 432,
    "fsopen": 430,
    "init_module": 175,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "io_uring_setup": 425,
    "kexec_file_load": 320,
    "kexec_load": 246,
    "keyctl": 250,
    "memfd_create": 319,
    "mount": 165,
    "move_mount": 429,
    "name_to_handle_at": 303,
    "open_by_handle_at": 304,
    "open_tree": 428,
    "perf_event_open": 298,
    "pivot_root": 155,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "ptrace": 101,
    "reboot": 169,
    "request_key": 249,
    "setns": 308,
    "swapon": 167,
    "umount2": 166,
    "unshare": 272,
    "userfaultfd": 323,
}
AARCH64: dict[str, int] = {
    "accept": 202,
    "accept4": 242,
    "bind": 200,
    "brk": 214,
    "chdir": 49,
    "clock_getres": 114,
    "clock_gettime": 113,
    "clock_nanosleep": 115,
    "clone": 220,
    "clone3": 435,
    "close": 57,
    "close_range": 436,
    "connect": 203,
    "copy_file_range": 285,
    "dup": 23,
    "dup3": 24,
    "epoll_create1": 20,
    "epoll_ctl": 21,
    "epoll_pwait": 22,
    "eventfd2": 19,
    "execve": 221,
    "exit": 93,
    "exit_group": 94,
    "faccessat": 48,
    "faccessat2": 439,
    "fadvise64": 223,
    "fchdir": 50,
    "fchmod": 52,
    "fchmodat": 53,
    "fcntl": 25,
    "fdatasync": 83,
    "flock": 32,
    "fstat": 80,
    "fstatfs": 44,
    "fsync": 82,
    "ftruncate": 46,
    "futex": 98,
    "getcpu": 168,
    "getcwd": 17,
    "getdents64": 61,
    "getegid": 177,
    "geteuid": 175,
    "getgid": 176,
    "getgroups": 158,
    "getitimer": 102,
    "getpeername": 205,
    "getpgid": 155,
    "getpid": 172,
    "getppid": 173,
    "getpriority": 141,
    "getrandom": 278,
    "getresgid": 150,
    "getresuid": 148,
    "getrlimit": 163,
    "getrusage": 165,
    "getsid": 156,
    "getsockname": 204,
    "getsockopt": 209,
    "gettid": 178,
    "gettimeofday": 169,
    "getuid": 174,
    "ioctl": 29,
    "kill": 129,
    "listen": 201,
    "lseek": 62,
    "madvise": 233,
    "mkdirat": 34,
    "mmap": 222,
    "mprotect": 226,
    "mremap": 216,
    "munmap": 215,
    "nanosleep": 101,
    "newfstatat": 79,
    "openat": 56,
    "personality": 92,
    "pipe2": 59,
    "ppoll": 73,
    "prctl": 167,
    "pread64": 67,
    "prlimit64": 261,
    "pselect6": 72,
    "pwrite64": 68,
    "read": 63,
    "readlinkat": 78,
    "readv": 65,
    "recvfrom": 207,
    "recvmsg": 212,
    "renameat": 38,
    "renameat2": 276,
    "restart_syscall": 128,
    "rseq": 293,
    "rt_sigaction": 134,
    "rt_sigprocmask": 135,
    "rt_sigreturn": 139,
    "rt_sigsuspend": 133,
    "rt_sigtimedwait": 137,
    "sched_getaffinity": 123,
    "sched_yield": 124,
    "sendfile": 71,
    "sendmsg": 211,
    "sendto": 206,
    "set_robust_list": 99,
    "set_tid_address": 96,
    "setitimer": 103,
    "setrlimit": 164,
    "setsockopt": 208,
    "shutdown": 210,
    "sigaltstack": 132,
    "socket": 198,
    "socketpair": 199,
    "statfs": 43,
    "statx": 291,
    "symlinkat": 36,
    "sysinfo": 179,
    "tgkill": 131,
    "times": 153,
    "tkill": 130,
    "umask": 166,
    "uname": 160,
    "unlinkat": 35,
    "wait4": 260,
    "waitid": 95,
    "write": 64,
    "writev": 66,
    "add_key": 217,
    "bpf": 280,
    "chroot": 51,
    "delete_module": 106,
    "finit_module": 273,
    "fsmount": 432,
    "fsopen": 430,
    "init_module": 105,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "io_uring_setup": 425,
    "kexec_file_load": 294,
    "kexec_load": 104,
    "keyctl": 219,
    "memfd_create": 279,
    "mount": 40,
    "move_mount": 429,
    "name_to_handle_at": 264,
    "open_by_handle_at": 265,
    "open_tree": 428,
    "perf_event_open": 241,
    "pivot_root": 41,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "ptrace": 117,
    "reboot": 142,
    "request_key": 218,
    "setns": 268,
    "swapon": 224,
    "umount2": 39,
    "unshare": 97,
    "userfaultfd": 282,
}

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_AARCH64 = 0xC00000B7
X32_SYSCALL_BIT = 0x40000000
ARCHES: dict[int, dict[str, int]] = {AUDIT_ARCH_X86_64: X86_64, AUDIT_ARCH_AARCH64: AARCH64}

ALLOWED: dict[str, tuple[str, tuple[str, ...]]] = {
    "files": (
        "reading the interpreter, its stdlib and the bot; the bot's own files in /tmp",
        (
            "read",
            "write",
            "readv",
            "writev",
            "pread64",
            "pwrite64",
            "lseek",
            "close",
            "close_range",
            "openat",
            "open",
            "newfstatat",
            "fstat",
            "stat",
            "lstat",
            "statx",
            "statfs",
            "fstatfs",
            "access",
            "faccessat",
            "faccessat2",
            "readlink",
            "readlinkat",
            "getdents64",
            "getdents",
            "getcwd",
            "chdir",
            "fchdir",
            "fcntl",
            "ioctl",
            "dup",
            "dup2",
            "dup3",
            "pipe",
            "pipe2",
            "flock",
            "fsync",
            "fdatasync",
            "ftruncate",
            "fadvise64",
            "sendfile",
            "copy_file_range",
            "umask",
            "unlink",
            "unlinkat",
            "mkdir",
            "mkdirat",
            "rmdir",
            "rename",
            "renameat",
            "renameat2",
            "symlink",
            "symlinkat",
            "chmod",
            "fchmod",
            "fchmodat",
        ),
    ),
    "memory": (
        "the allocator and the dynamic loader",
        ("mmap", "munmap", "mprotect", "mremap", "madvise", "brk"),
    ),
    "threads": (
        "the threaded HTTP server (one thread per connection) and glibc's thread start-up",
        (
            "futex",
            "set_robust_list",
            "rseq",
            "set_tid_address",
            "gettid",
            "exit",
            "exit_group",
            "sched_yield",
            "sched_getaffinity",
            "getcpu",
        ),
    ),
    "signals": (
        "Python's signal handling; kill reaches only the sandbox's own PID namespace",
        (
            "rt_sigaction",
            "rt_sigprocmask",
            "rt_sigreturn",
            "rt_sigtimedwait",
            "rt_sigsuspend",
            "sigaltstack",
            "restart_syscall",
            "kill",
            "tgkill",
            "tkill",
            "pause",
        ),
    ),
    "time": (
        "time.time/monotonic/sleep (the vDSO falls back to these), resource accounting",
        (
            "clock_gettime",
            "clock_getres",
            "clock_nanosleep",
            "nanosleep",
            "gettimeofday",
            "time",
            "times",
            "getrusage",
            "setitimer",
            "getitimer",
            "alarm",
        ),
    ),
    "polling": (
        "socketserver's select loop, selectors, subprocess pipes",
        (
            "poll",
            "ppoll",
            "select",
            "pselect6",
            "epoll_create",
            "epoll_create1",
            "epoll_ctl",
            "epoll_wait",
            "epoll_pwait",
            "eventfd2",
        ),
    ),
    "identity": (
        "start-up queries of the interpreter (read-only)",
        (
            "getpid",
            "getppid",
            "getpgrp",
            "getpgid",
            "getsid",
            "getuid",
            "geteuid",
            "getgid",
            "getegid",
            "getresuid",
            "getresgid",
            "getgroups",
            "uname",
            "sysinfo",
            "getrandom",
            "prlimit64",
            "getrlimit",
            "setrlimit",
            "getpriority",
            "arch_prctl",
            "prctl",
        ),
    ),
    "sockets": (
        "serving HTTP on the inherited listening socket; socket() is limited to AF_UNIX/INET/INET6, "
        "socketpair() to AF_UNIX, and the network namespace is empty",
        (
            "socket",
            "accept",
            "accept4",
            "bind",
            "listen",
            "connect",
            "getsockname",
            "getpeername",
            "sendto",
            "recvfrom",
            "sendmsg",
            "recvmsg",
            "shutdown",
            "setsockopt",
            "getsockopt",
            "socketpair",
        ),
    ),
    "processes": (
        "execve of the runner itself; the codingame contract's one child (vfork + execve + wait); "
        "clone is checked (no namespaces; threads only without cgroups)",
        ("execve", "wait4", "waitid", "clone"),
    ),
}
"""Allowed system calls by purpose; a name missing from an architecture's table is skipped there."""

PROCESS_CREATION_ONLY = ("vfork",)
"""Allowed only when cgroups hold the whole sandbox (otherwise threads are the only concurrency)."""

REFUSED_EXAMPLES = (
    "io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd", "keyctl", "add_key",
    "request_key", "ptrace", "mount", "umount2", "pivot_root", "bpf", "perf_event_open", "unshare",
    "setns", "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "process_vm_readv", "process_vm_writev", "fork", "open_by_handle_at", "name_to_handle_at",
    "fsopen", "fsmount", "move_mount", "open_tree", "memfd_create", "swapon", "reboot", "chroot",
)  # fmt: skip
"""Not allowed (the list is an allow-list; these are named so the tests can try each one)."""

CLONE_NEWTIME = 0x00000080
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NAMESPACES = (
    CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER
    | CLONE_NEWPID | CLONE_NEWNET
)  # fmt: skip
CLONE_THREAD = 0x00010000
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
SOCKET_FAMILIES = (AF_UNIX, AF_INET, AF_INET6)
"""socket(): the inherited Unix socket, and TCP/UDP that the empty network namespace cannot route."""
SOCKETPAIR_FAMILIES = (AF_UNIX,)
"""socketpair(): Unix sockets, the only pairs Python makes; another family would only reach (and
autoload) its protocol's code."""
PERSONALITY_QUERY = 0xFFFFFFFF

# -- classic BPF -------------------------------------------------------------------------------

BPF_LD_W_ABS = 0x20
BPF_JMP_JA = 0x05
BPF_JMP_JEQ_K = 0x15
BPF_JMP_JGE_K = 0x35
BPF_JMP_JSET_K = 0x45
BPF_RET_K = 0x06
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16  # both architectures are little-endian: the low word comes first


@dataclass(frozen=True, slots=True)
class Insn:
    code: int
    jt: int = 0
    jf: int = 0
    k: int = 0

    def pack(self) -> bytes:
        return struct.pack("<HBBI", self.code, self.jt, self.jf, self.k)


def _ret(value: int) -> Insn:
    return Insn(BPF_RET_K, k=value)


def _load(offset: int) -> Insn:
    return Insn(BPF_LD_W_ABS, k=offset)


ALLOW = _ret(SECCOMP_RET_ALLOW)
KILL = _ret(SECCOMP_RET_KILL_PROCESS)
EPERM = _ret(SECCOMP_RET_ERRNO | errno.EPERM)
ENOSYS = _ret(SECCOMP_RET_ERRNO | errno.ENOSYS)


def _if_nr(nr: int, body: list[Insn]) -> list[Insn]:
    """`if nr == N: body` (body must end in a return; A holds the syscall number)."""
    return [Insn(BPF_JMP_JEQ_K, 0, len(body), nr), *body]


def _clone_check(processes: bool) -> list[Insn]:
    body = [_load(OFFSET_ARG0_LOW), Insn(BPF_JMP_JSET_K, 0, 1, CLONE_NAMESPACES), EPERM]
    if not processes:
        body += [Insn(BPF_JMP_JSET_K, 1, 0, CLONE_THREAD), EPERM]
    return [*body, ALLOW]


def _arg0_in(values: tuple[int, ...]) -> list[Insn]:
    body = [_load(OFFSET_ARG0_LOW)]
    for value in values:
        body += [Insn(BPF_JMP_JEQ_K, 0, 1, value), ALLOW]
    return [*body, EPERM]


def allowed_names(*, processes: bool) -> list[str]:
    names = [name for _why, group in ALLOWED.values() for name in group]
    return names + list(PROCESS_CREATION_ONLY) if processes else names


def _arch_block(arch: int, table: dict[str, int], processes: bool) -> list[Insn]:
    block = [_load(OFFSET_NR)]
    if arch == AUDIT_ARCH_X86_64:
        block += [Insn(BPF_JMP_JGE_K, 0, 1, X32_SYSCALL_BIT), KILL]
    block += _if_nr(table["clone"], _clone_check(processes))
    block += _if_nr(table["clone3"], [ENOSYS])
    block += _if_nr(table["socket"], _arg0_in(SOCKET_FAMILIES))
    block += _if_nr(table["socketpair"], _arg0_in(SOCKETPAIR_FAMILIES))
    block += _if_nr(table["personality"], _arg0_in((PERSONALITY_QUERY,)))
    special = {"clone", "clone3", "socket", "socketpair", "personality"}
    for name in sorted({n for n in allowed_names(processes=processes) if n in table} - special):
        block += _if_nr(table[name], [ALLOW])
    return [*block, EPERM]


def build_filter(*, processes: bool) -> list[Insn]:
    """The whole program: dispatch on the architecture, then that architecture's checks."""
    program = [_load(OFFSET_ARCH)]
    for arch, table in ARCHES.items():
        block = _arch_block(arch, table, processes)
        program += [Insn(BPF_JMP_JEQ_K, 1, 0, arch), Insn(BPF_JMP_JA, k=len(block)), *block]
    return [*program, KILL]


@functools.cache
def compiled_filter(*, processes: bool) -> bytes:
    """The program as bwrap's --seccomp wants it: the packed array of struct sock_filter."""
    return b"".join(insn.pack() for insn in build_filter(processes=processes))


def host_table() -> dict[str, int]:
    """The syscall numbers of this machine's architecture (for tests and diagnostics)."""
    machine = platform.machine()
    if machine in ("x86_64", "amd64"):
        return X86_64
    if machine in ("aarch64", "arm64"):
        return AARCH64
    raise RuntimeError(f"no seccomp table for {machine}")
