"""Hosted-bot timings: cold start to first answered turn, warm-pool hit, the cost of the Unix
socket against loopback TCP for the same bot, and the per-turn cost of freezing the sandbox
between turns (cgroup freezer: thaw before the request, freeze after).

The freezing section plays the same bot's turns, interleaved in rounds, three ways: not frozen,
frozen the old way (the freezer file opened, written and closed for each write, and no freezer
key held: see shared/sandbox/cgroups.py) and the current way (one kept descriptor, the key held).
It prints the worker's CPU per turn (this process: the client, the signing, the freezer writes),
the sandbox's (its cgroup's CPU: the bot, and its threads woken by freezing) and the ratios; then
what each of the two changes saves on a bare freeze + thaw pair.

    .venv/bin/python -m scripts.bench_sandbox [--starts 10] [--turns 400] [--freezing-only]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from shared.protocol.signing import Signer, generate_secret
from shared.sandbox import cgroups
from shared.sandbox.backends import SandboxedBot
from shared.sandbox.cgroups import CgroupVersion, SandboxCgroup, detect
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.pool import WarmPool

ROOT = Path(__file__).resolve().parents[1]
BOT_FILE = ROOT / "examples" / "bots" / "podracing_follower_bot.py"


def _pod(x: int, y: int) -> dict[str, object]:
    return {
        "x": x,
        "y": y,
        "vx": 10,
        "vy": -5,
        "angle": 30,
        "next_checkpoint": 1,
        "checkpoints_passed": 0,
        "boost_available": True,
        "shield_cooldown": 0,
    }


OBSERVATION = {
    "turn": 1,
    "player": 0,
    "laps": 3,
    "checkpoint_count": 4,
    "checkpoints": [[1000, 1000], [8000, 2000], [12000, 7000], [5000, 7000]],
    "max_thrust": 100,
    "pods": [_pod(1000, 1200), _pod(1000, 800)],
    "opponents": [_pod(1100, 1500), _pod(1100, 500)],
}


def _body(turn: int) -> bytes:
    return json.dumps(
        {
            "protocol": 1,
            "match_id": "bench",
            "game": "podracing",
            "player": 0,
            "turn": turn,
            "timeout_ms": 1000,
            "observation": OBSERVATION,
        }
    ).encode()


def _turn(client: httpx.Client, signer: Signer, url: str, turn: int) -> None:
    body = _body(turn)
    response = client.post(
        url,
        content=body,
        headers=signer.headers(f"bench-{turn}-{time.monotonic_ns()}", body, method="POST", path="/turn"),
    )
    if response.status_code != 200:
        raise RuntimeError(f"turn failed: {response.status_code} {response.text}")


def _uds_client(path: str) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=path, verify=False), timeout=5)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _require_started(bot: SandboxedBot) -> None:
    if not bot.alive or bot.start_error:
        raise RuntimeError(f"the sandbox did not start: {bot.start_error or 'it exited'}")


def cold_starts(source: str, secret: str, signer: Signer, n: int) -> tuple[list[float], list[float]]:
    ready, first = [], []
    for i in range(n):
        started = time.perf_counter()
        with SandboxedBot(source, secret=secret) as bot:
            _require_started(bot)
            ready.append(time.perf_counter() - started)
            with _uds_client(bot.socket_path) as client:
                _turn(client, signer, "http://bot/turn", i)
            first.append(time.perf_counter() - started)
    return ready, first


def pool_hits(source: str, secret: str, signer: Signer, n: int) -> list[float]:
    pool = WarmPool(per_key=1)
    times = []
    try:
        for i in range(n):
            pool.prewarm("bench", source, secret=secret)
            started = time.perf_counter()
            bot = pool.acquire("bench", source, secret=secret)
            _require_started(bot)
            with _uds_client(bot.socket_path) as client:
                _turn(client, signer, "http://bot/turn", i)
            times.append(time.perf_counter() - started)
            bot.close()
    finally:
        pool.close()
    return times


def round_trips(client: httpx.Client, signer: Signer, url: str, n: int) -> list[float]:
    for i in range(20):
        _turn(client, signer, url, i)
    times = []
    for i in range(n):
        started = time.perf_counter()
        _turn(client, signer, url, i)
        times.append(time.perf_counter() - started)
    return times


def _old_set_frozen(group: SandboxCgroup, frozen: bool) -> None:
    """SandboxCgroup._set_frozen before descriptors were kept: the baseline."""
    if group.support.version is CgroupVersion.V1:
        (group.dirs["freezer"] / "freezer.state").write_text("FROZEN" if frozen else "THAWED")
    else:
        (group.dirs["unified"] / "cgroup.freeze").write_text("1" if frozen else "0")
    group.frozen = frozen


def _whole_sandbox_kept_fd(group: SandboxCgroup) -> Callable[[SandboxCgroup, bool], None]:
    """SandboxCgroup._set_frozen before only the runner's group was frozen: the sandbox's whole
    freezer group (bubblewrap's processes too), through a kept descriptor."""
    whole = group.dirs["freezer"] / "freezer.state" if group.support.version is CgroupVersion.V1 else None
    fd = os.open(whole or group.dirs["unified"] / "cgroup.freeze", os.O_WRONLY | os.O_CLOEXEC)
    v1 = whole is not None

    def set_frozen(self: SandboxCgroup, frozen: bool) -> None:
        os.pwrite(fd, (b"FROZEN" if frozen else b"THAWED") if v1 else (b"1" if frozen else b"0"), 0)
        self.frozen = frozen

    return set_frozen


@contextmanager
def freezer_variant(
    group: SandboxCgroup, *, kept_fd: bool, key_held: bool, runner_only: bool = True
) -> Iterator[None]:
    """Freeze and thaw `group` with or without each of the changes, through the same calls."""
    if not kept_fd:
        group._set_frozen = types.MethodType(_old_set_frozen, group)  # type: ignore[method-assign]
    elif not runner_only:
        group._set_frozen = types.MethodType(_whole_sandbox_kept_fd(group), group)  # type: ignore[method-assign]
    support = detect()
    if not key_held:
        cgroups.release_freezer_key()
    try:
        yield
    finally:
        if not kept_fd or not runner_only:
            del group._set_frozen
        if support is not None:
            cgroups.hold_freezer_key(support)


NOT_FROZEN = "not frozen between turns"
OLD = "old: always frozen, open/write/close, no key"
WHOLE = "kept fd, key held, whole sandbox frozen"
NEW = "new: kept fd, key held, only its runner frozen"
FREEZING_MODES: dict[str, tuple[bool, bool, bool] | None] = {
    NOT_FROZEN: None,
    OLD: (False, False, False),
    WHOLE: (True, True, False),
    NEW: (True, True, True),
}
"""Per mode, (kept_fd, key_held, runner_only) for freezer_variant(), or None: never frozen.
Only the runner's group is frozen when the sandbox is cgroup v1's (SandboxCgroup.confine_runner)."""
FREEZING_ROUNDS = 20
"""Short blocks of each mode in turn, so that load from other work drifts over all three alike."""


def freezing_turns(
    bot: SandboxedBot, client: httpx.Client, signer: Signer, n: int, rounds: int
) -> dict[str, dict[str, float]]:
    """Turns with the sandbox thawed before and frozen after each, as FrozenBetweenTurns does, per
    mode: worker CPU per turn (s), the sandbox's CPU per turn (s) and the median wall time (s)."""
    group = bot.cgroup
    assert group is not None
    for i in range(20):
        _turn(client, signer, "http://bot/turn", i)
    cpu = dict.fromkeys(FREEZING_MODES, 0.0)
    sandbox_cpu = dict.fromkeys(FREEZING_MODES, 0.0)
    walls: dict[str, list[float]] = {mode: [] for mode in FREEZING_MODES}
    per_round = max(1, n // rounds)
    for _ in range(rounds):
        for mode, variant in FREEZING_MODES.items():
            kept_fd, key_held, runner_only = variant or (True, True, True)
            with freezer_variant(group, kept_fd=kept_fd, key_held=key_held, runner_only=runner_only):
                if variant is not None:
                    bot.freeze()
                used0, sandbox0 = time.process_time(), group.cpu_usage_s()
                for i in range(per_round):
                    started = time.perf_counter()
                    if variant is not None:
                        bot.thaw()
                    _turn(client, signer, "http://bot/turn", i)
                    if variant is not None:
                        bot.freeze()
                    walls[mode].append(time.perf_counter() - started)
                cpu[mode] += time.process_time() - used0
                sandbox_cpu[mode] += group.cpu_usage_s() - sandbox0
                bot.thaw()
    total = per_round * rounds
    return {
        mode: {
            "cpu": cpu[mode] / total,
            "sandbox": sandbox_cpu[mode] / total,
            "wall": statistics.median(walls[mode]),
        }
        for mode in FREEZING_MODES
    }


def freeze_thaw_pairs(bot: SandboxedBot, n: int, *, kept_fd: bool, key_held: bool) -> tuple[float, float]:
    """A bare freeze + thaw pair: (worker CPU per pair, median wall time), in seconds."""
    group = bot.cgroup
    assert group is not None
    times = []
    with freezer_variant(group, kept_fd=kept_fd, key_held=key_held):
        bot.freeze()
        bot.thaw()
        used0 = time.process_time()
        for _ in range(n):
            started = time.perf_counter()
            bot.freeze()
            bot.thaw()
            times.append(time.perf_counter() - started)
        used = time.process_time() - used0
    return used / n, statistics.median(times)


def counter_reads(bot: SandboxedBot, n: int) -> tuple[float, float]:
    """What a freeze-only-when-needed scheme would pay per turn at the least: reading the sandbox's
    CPU usage and task count through kept descriptors (cgroup v1). (CPU per read, median wall)."""
    group = bot.cgroup
    assert group is not None
    if group.support.version is not CgroupVersion.V1:
        return 0.0, 0.0
    fds = [
        os.open(group.dirs["cpuacct"] / "cpuacct.usage", os.O_RDONLY),
        os.open(group.dirs["pids"] / "pids.current", os.O_RDONLY),
    ]
    times = []
    try:
        used0 = time.process_time()
        for _ in range(n):
            started = time.perf_counter()
            for fd in fds:
                int(os.pread(fd, 64, 0))
            times.append(time.perf_counter() - started)
        used = time.process_time() - used0
    finally:
        for fd in fds:
            os.close(fd)
    return used / n, statistics.median(times)


def _pair_cost(first: Callable[[], object], second: Callable[[], object], n: int) -> tuple[float, float]:
    """(worker CPU per call pair, median wall time), in seconds."""
    first()
    second()
    times = []
    used0 = time.process_time()
    for _ in range(n):
        started = time.perf_counter()
        first()
        second()
        times.append(time.perf_counter() - started)
    return (time.process_time() - used0) / n, statistics.median(times)


def _hybrid_v2_parent() -> Path | None:
    """This process's group in a cgroup v2 hierarchy mounted next to v1 ones, if writable."""
    mount = Path("/sys/fs/cgroup/unified")
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            parent = mount / line[3:].lstrip("/")
            return parent if (parent / "cgroup.procs").exists() and os.access(parent, os.W_OK) else None
    return None


def other_mechanisms(n: int) -> list[tuple[str, float, float]]:
    """Stopping and resuming a group with nothing or one sleeping process in it, by the freezer and
    by other means: (name, worker CPU per pair, median wall) rows."""
    support = detect()
    if support is None or support.version is not CgroupVersion.V1:
        return []
    group = SandboxCgroup(support, SandboxLimits())
    sleeper = subprocess.Popen(["sleep", "600"])
    v2_parent = _hybrid_v2_parent()
    v2_group = v2_parent / f"arena-bench-{os.getpid()}" if v2_parent is not None else None
    rows = []
    try:
        for key_held in (False, True):
            with freezer_variant(group, kept_fd=True, key_held=key_held):
                name = f"v1 freezer, empty group, kept fd, {'key held' if key_held else 'no key'}"
                rows.append((name, *_pair_cost(group.freeze, group.thaw, n)))
        for directory in set(group.dirs.values()):
            (directory / "cgroup.procs").write_text(str(sleeper.pid))
        rows.append(("v1 freezer, one sleeper, kept fd, key held", *_pair_cost(group.freeze, group.thaw, n)))
        stop, cont = (
            functools.partial(os.kill, sleeper.pid, sig) for sig in (signal.SIGSTOP, signal.SIGCONT)
        )
        rows.append(("SIGSTOP + SIGCONT, one sleeper", *_pair_cost(stop, cont, n)))
        if v2_group is not None:
            v2_group.mkdir()
            (v2_group / "cgroup.procs").write_text(str(sleeper.pid))
            fd = os.open(v2_group / "cgroup.freeze", os.O_WRONLY)
            try:
                freeze, thaw = (functools.partial(os.pwrite, fd, value, 0) for value in (b"1", b"0"))
                rows.append(("v2 cgroup.freeze (hybrid), one sleeper, kept fd", *_pair_cost(freeze, thaw, n)))
            finally:
                os.close(fd)
    finally:
        sleeper.kill()
        sleeper.wait()
        group.destroy()
        if v2_group is not None and v2_group.exists():
            v2_group.rmdir()
    return rows


def report_freezing(source: str, secret: str, signer: Signer, turns: int) -> None:
    with SandboxedBot(source, secret=secret) as bot, _uds_client(bot.socket_path) as client:
        _require_started(bot)
        if bot.cgroup is None:
            print("no cgroups here: nothing is frozen, nothing to compare")
            return
        version = bot.cgroup.support.version.value
        confined = bot.cgroup.runner_group is not None
        modes = freezing_turns(bot, client, signer, turns, rounds=FREEZING_ROUNDS)
        pairs = {
            "old: open/write/close, no key": freeze_thaw_pairs(bot, turns, kept_fd=False, key_held=False),
            "kept fd, no key": freeze_thaw_pairs(bot, turns, kept_fd=True, key_held=False),
            "open/write/close, key held": freeze_thaw_pairs(bot, turns, kept_fd=False, key_held=True),
            "new: kept fd, key held": freeze_thaw_pairs(bot, turns, kept_fd=True, key_held=True),
        }
        reads = counter_reads(bot, turns)
    rounds = f"{turns} turns per mode in {FREEZING_ROUNDS} interleaved rounds"
    print(f"\nfreezing around each turn (cgroup {version}, {rounds})")
    print(f"{'mode':46} {'worker CPU/turn us':>18} {'added':>6} {'sandbox CPU/turn us':>19} {'wall ms':>8}")
    base = modes[NOT_FROZEN]["cpu"]
    for mode, row in modes.items():
        cpu, sandbox, wall = row["cpu"] * 1e6, row["sandbox"] * 1e6, row["wall"] * 1e3
        print(f"{mode:46} {cpu:18.0f} {cpu - base * 1e6:6.0f} {sandbox:19.0f} {wall:8.3f}")
    old, new = modes[OLD]["cpu"], modes[NEW]["cpu"]
    added = f"{(old - base) / (new - base):.0f}x" if new > base else "new: within noise"
    print(
        f"worker CPU per hosted turn, old / new: {old * 1e6:.0f} / {new * 1e6:.0f} us = {old / new:.2f}x; "
        f"added by freezing: {(old - base) * 1e6:.0f} / {(new - base) * 1e6:.0f} us ({added})"
    )
    turn_cost = {mode: (row["cpu"] + row["sandbox"]) * 1e6 for mode, row in modes.items()}
    print(
        f"worker + sandbox CPU added per turn by freezing, whole sandbox / only its runner: "
        f"{turn_cost[WHOLE] - turn_cost[NOT_FROZEN]:.0f} / {turn_cost[NEW] - turn_cost[NOT_FROZEN]:.0f} us"
        + ("" if confined else "  (the runner could not be confined here: the same)")
    )
    print(f"\n{'a bare freeze + thaw pair':46} {'worker CPU us':>18} {'wall median us':>15}")
    for name, (used, wall_s) in pairs.items():
        print(f"{name:46} {used * 1e6:18.1f} {wall_s * 1e6:15.1f}")
    if reads[0]:
        name = "read CPU usage + task count (no freezing)"
        print(f"{name:46} {reads[0] * 1e6:18.1f} {reads[1] * 1e6:15.1f}")
    rows = other_mechanisms(turns)
    if rows:
        title = "other groups, other mechanisms: a stop + resume"
        print(f"\n{title:50} {'worker CPU us':>14} {'wall median us':>15}")
        for name, used, wall_s in rows:
            print(f"{name:50} {used * 1e6:14.1f} {wall_s * 1e6:15.1f}")


def cgroup_lifecycle(n: int) -> tuple[list[float], list[float]]:
    """(create and configure a sandbox's groups, kill and remove them) with no process inside."""
    support = detect()
    if support is None:
        return [], []
    made, removed = [], []
    for _ in range(n):
        started = time.perf_counter()
        group = SandboxCgroup(support, SandboxLimits())
        made.append(time.perf_counter() - started)
        started = time.perf_counter()
        group.destroy()
        removed.append(time.perf_counter() - started)
    return made, removed


def _serve_plain(secret: str, where: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "BENCH_SECRET": secret}
    command = [
        sys.executable,
        "-m",
        "shared.botsdk.run",
        "--module",
        str(BOT_FILE),
        "--secret-env",
        "BENCH_SECRET",
    ]
    return subprocess.Popen(command + where, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)


def _wait_for(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError("the bot did not come up")
        time.sleep(0.02)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--turns", type=int, default=400)
    parser.add_argument("--freezing-only", action="store_true", help="only the freezing section")
    args = parser.parse_args()
    secret = generate_secret()
    signer = Signer(secret)
    source = BOT_FILE.read_text()
    SandboxedBot(source, secret=secret).close()  # resolve the runtime and stage files once
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    if args.freezing_only:
        report_freezing(source, secret, signer, args.turns)
        return 0

    rows: list[tuple[str, list[float]]] = []
    ready, first = cold_starts(source, secret, signer, args.starts)
    rows += [("cold start: sandbox ready", ready), ("cold start: first answered turn", first)]
    rows.append(("warm pool hit: first answered turn", pool_hits(source, secret, signer, args.starts)))

    with SandboxedBot(source, secret=secret) as bot, _uds_client(bot.socket_path) as client:
        sandbox_uds = round_trips(client, signer, "http://bot/turn", args.turns)
    made, removed = cgroup_lifecycle(args.starts * 5)
    if made:
        rows += [("cgroups: create and configure", made), ("cgroups: kill and remove", removed)]
    with tempfile.TemporaryDirectory() as tmp:
        sock = os.path.join(tmp, "bot.sock")
        proc = _serve_plain(secret, ["--unix-socket", sock])
        try:
            _wait_for(lambda: os.path.exists(sock))
            with _uds_client(sock) as client:
                plain_uds = round_trips(client, signer, "http://bot/turn", args.turns)
        finally:
            proc.kill()
            proc.wait()
    port = 18000 + os.getpid() % 1000
    proc = _serve_plain(secret, ["--port", str(port)])
    nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
    try:
        with httpx.Client(transport=httpx.HTTPTransport(socket_options=nodelay), timeout=5) as client:

            def up() -> bool:
                try:
                    client.get(f"http://127.0.0.1:{port}/health")
                    return True
                except httpx.TransportError:
                    return False

            _wait_for(up)
            plain_tcp = round_trips(client, signer, f"http://127.0.0.1:{port}/turn", args.turns)
    finally:
        proc.kill()
        proc.wait()
    rows += [
        ("turn: sandboxed bot, Unix socket", sandbox_uds),
        ("turn: same bot unsandboxed, Unix socket", plain_uds),
        ("turn: same bot unsandboxed, loopback TCP", plain_tcp),
    ]

    print(f"{'measure':44} {'n':>5} {'median ms':>10} {'p95 ms':>8} {'p99 ms':>8}")
    for name, values in rows:
        ms = [v * 1000 for v in values]
        median, p95, p99 = statistics.median(ms), _pct(ms, 0.95), _pct(ms, 0.99)
        print(f"{name:44} {len(ms):5d} {median:10.2f} {p95:8.2f} {p99:8.2f}")
    ratio = statistics.median(sandbox_uds) / statistics.median(plain_tcp)
    ratio_plain = statistics.median(plain_uds) / statistics.median(plain_tcp)
    print(f"median ratio sandboxed-UDS / TCP: {ratio:.2f}; unsandboxed-UDS / TCP: {ratio_plain:.2f}")
    target = statistics.median(first) * 1000
    verdict = "OK" if target < 300 else "MISSED"
    print(f"cold start to first turn median {target:.0f} ms (target < 300 ms): {verdict}")
    report_freezing(source, secret, signer, args.turns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
