"""Test hosts on one machine: Linux network namespaces joined to a bridge by veth pairs.

One namespace, the hub, holds the bridge (`br0`) and the hub host's address (.1 of a private /24);
every other host is a namespace with one veth pair to the bridge, and the test's own (root)
namespace gets one too (.2), so the test itself is a host on that network: it can reach every
other host and they can reach it. A host's commands also run with a host name of their own (a UTS
namespace), as on separate machines, so what a process records about "its host" differs per host.

Cutting a host off takes its port on the bridge down: its packets go nowhere, as when a cable is
pulled, and its connections hang instead of failing; restoring the port brings them back.

Namespaces are named `arena-<pid>-<role>` after the test process; leftovers of runs that were
killed (their pid is gone) are removed before a new network is made, and `network()` removes its
own whatever happens. Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "arena-"
_NAMESPACE = re.compile(r"arena-(\d+)-[a-z0-9]+")
_ROOT_LINK = re.compile(r"arena(\d+)c")
BRIDGE = "br0"
CONTROL_ROLE = "control"
"""The root namespace's role: the test process itself."""


class NetworkUnavailable(RuntimeError):
    """Namespaces cannot be made here (no privileges, no iproute2): the caller skips or fails."""


def unavailable_reason() -> str | None:
    """Why namespaces cannot be made by this process, or None when they should work."""
    if shutil.which("ip") is None:
        return "iproute2 (`ip`) is not installed"
    if shutil.which("unshare") is None:
        return "util-linux (`unshare`) is not installed"
    effective = 0
    with contextlib.suppress(OSError, ValueError, StopIteration):
        status = Path("/proc/self/status").read_text().splitlines()
        effective = int(next(line for line in status if line.startswith("CapEff:")).split()[1], 16)
    cap_net_admin, cap_sys_admin = 1 << 12, 1 << 21
    if effective & cap_net_admin == 0 or effective & cap_sys_admin == 0:
        return "network namespaces need root (CAP_NET_ADMIN and CAP_SYS_ADMIN)"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        message = f"ip {' '.join(args)}: {result.stderr.strip() or result.stdout.strip()}"
        if "Operation not permitted" in message or "Permission denied" in message:
            raise NetworkUnavailable(message)
        raise RuntimeError(message)
    return result


def _pid_alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


def _namespaces() -> list[str]:
    listed = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in listed.splitlines() if line.strip()]


def _kill_inside(namespace: str) -> None:
    """SIGKILL what still runs in one of our namespaces (its processes were started by a test)."""
    pids = _ip("netns", "pids", namespace, check=False).stdout.split()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


def _delete_namespace(namespace: str) -> None:
    _kill_inside(namespace)
    _ip("netns", "delete", namespace, check=False)


def clean_stale() -> list[str]:
    """Remove the namespaces and root-namespace links of earlier runs whose process is gone."""
    removed = []
    for entry in json.loads(_ip("-j", "link", "show", check=False).stdout or "[]"):
        link = str(entry.get("ifname", ""))
        found = _ROOT_LINK.fullmatch(link)
        if found and not _pid_alive(int(found.group(1))):
            _ip("link", "delete", link, check=False)
            removed.append(link)
    for namespace in _namespaces():
        found = _NAMESPACE.fullmatch(namespace)
        if found and not _pid_alive(int(found.group(1))):
            _delete_namespace(namespace)
            removed.append(namespace)
    return removed


def _taken_networks() -> list[ipaddress.IPv4Network]:
    """The IPv4 networks the root namespace already routes or is addressed in."""
    taken = []
    for entry in json.loads(_ip("-4", "-j", "route", "show", "table", "all", check=False).stdout or "[]"):
        with contextlib.suppress(ValueError, KeyError):
            if entry["dst"] not in ("default", "0.0.0.0/0"):
                taken.append(ipaddress.ip_network(entry["dst"], strict=False))
    for link in json.loads(_ip("-4", "-j", "addr", check=False).stdout or "[]"):
        for info in link.get("addr_info", []):
            with contextlib.suppress(ValueError, KeyError):
                taken.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", strict=False))
    return [net for net in taken if isinstance(net, ipaddress.IPv4Network)]


def pick_subnet(seed: int) -> ipaddress.IPv4Network:
    """A private /24 in 10.64.0.0/10 that nothing here uses, starting from one derived from `seed`."""
    taken = _taken_networks()
    for step in range(4096):
        index = (seed + step * 7919) % 16384
        candidate = ipaddress.IPv4Network(f"10.{64 + index // 256}.{index % 256}.0/24")
        if not any(candidate.overlaps(net) for net in taken):
            return candidate
    raise RuntimeError("no free private /24 for the test network")


@dataclass(frozen=True, slots=True)
class Host:
    """One test host: a network namespace (None: the test's own), its address and host name."""

    role: str
    namespace: str | None
    address: str
    hostname: str

    def command(self, args: Sequence[str], *, uid: int | None = None, gid: int | None = None) -> list[str]:
        """`args` as a command line that runs on this host: in its namespace, under its host name,
        as `uid`/`gid` when given. Every step execs the next, so the command keeps the pid."""
        if self.namespace is None:
            prefix: list[str] = []
        else:
            prefix = ["ip", "netns", "exec", self.namespace, "unshare", "--uts", "--"]
            prefix += ["sh", "-c", 'hostname "$0" && exec "$@"', self.hostname]
        if uid is not None:
            prefix += ["setpriv", f"--reuid={uid}", f"--regid={gid if gid is not None else uid}"]
            prefix += ["--clear-groups", "--"]
        return [*prefix, *args]


@dataclass
class Network:
    """The hub namespace with the bridge, one namespace per other host, the root namespace's link."""

    subnet: ipaddress.IPv4Network
    hub: Host
    hosts: dict[str, Host]
    """Every host by role, the hub and the control host (the root namespace) included."""
    root_link: str
    _down: set[str] = field(default_factory=set)

    @property
    def control(self) -> Host:
        return self.hosts[CONTROL_ROLE]

    def _port(self, role: str) -> str:
        return f"p-{role}"

    def cut(self, role: str) -> None:
        """Pull the host's cable: its bridge port goes down; its packets are dropped silently."""
        _ip("-n", self.hub.namespace or "", "link", "set", self._port(role), "down")
        self._down.add(role)

    def restore(self, role: str) -> None:
        _ip("-n", self.hub.namespace or "", "link", "set", self._port(role), "up")
        self._down.discard(role)

    def close(self) -> None:
        """Remove the root namespace's link and every namespace (killing what still runs there)."""
        _ip("link", "delete", self.root_link, check=False)
        for host in self.hosts.values():
            if host.namespace is not None and host is not self.hub:
                _delete_namespace(host.namespace)
        if self.hub.namespace is not None:
            _delete_namespace(self.hub.namespace)


def _build(roles: Sequence[str], hub_role: str, tag: str) -> Network:
    """Make the network step by step; `network()` removes whatever was made if a step fails."""
    subnet = pick_subnet(os.getpid())
    addresses = subnet.hosts()
    hub_address, control_address = str(next(addresses)), str(next(addresses))
    hub = Host(hub_role, f"{PREFIX}{tag}-{hub_role}", hub_address, f"{PREFIX}{tag}-{hub_role}")
    hosts = {hub_role: hub, CONTROL_ROLE: Host(CONTROL_ROLE, None, control_address, os.uname().nodename)}
    for role in roles:
        if role != hub_role:
            hosts[role] = Host(role, f"{PREFIX}{tag}-{role}", str(next(addresses)), f"{PREFIX}{tag}-{role}")
    net = Network(subnet, hub, hosts, root_link=f"arena{tag}c")
    hub_ns = hub.namespace or ""
    prefix = f"/{subnet.prefixlen}"
    for host in hosts.values():
        if host.namespace is not None:
            _ip("netns", "add", host.namespace)
            _ip("-n", host.namespace, "link", "set", "lo", "up")
    _ip("-n", hub_ns, "link", "add", BRIDGE, "type", "bridge")
    _ip("-n", hub_ns, "addr", "add", hub_address + prefix, "dev", BRIDGE)
    _ip("-n", hub_ns, "link", "set", BRIDGE, "up")
    for host in hosts.values():
        if host is hub:
            continue
        port = net._port(host.role)
        if host.namespace is None:
            _ip("link", "add", net.root_link, "type", "veth", "peer", "name", port, "netns", hub_ns)
            _ip("addr", "add", host.address + prefix, "dev", net.root_link)
            _ip("link", "set", net.root_link, "up")
        else:
            peer = ["peer", "name", "eth0", "netns", host.namespace]
            _ip("-n", hub_ns, "link", "add", port, "type", "veth", *peer)
            _ip("-n", host.namespace, "addr", "add", host.address + prefix, "dev", "eth0")
            _ip("-n", host.namespace, "link", "set", "eth0", "up")
        _ip("-n", hub_ns, "link", "set", port, "master", BRIDGE)
        _ip("-n", hub_ns, "link", "set", port, "up")
    return net


@contextlib.contextmanager
def network(roles: Sequence[str], hub: str) -> Iterator[Network]:
    """Hosts `roles` (the hub among them) plus the control host; removed on exit, whatever happens.

    Raises NetworkUnavailable where namespaces cannot be made (no privileges)."""
    reason = unavailable_reason()
    if reason is not None:
        raise NetworkUnavailable(reason)
    if hub not in roles:
        raise ValueError(f"the hub {hub!r} must be one of the roles {list(roles)}")
    clean_stale()
    tag = str(os.getpid())
    made: Network | None = None
    try:
        made = _build(roles, hub, tag)
        yield made
    finally:
        if made is not None:
            made.close()
        else:  # a step failed half-way: remove whatever carries our tag
            _ip("link", "delete", f"arena{tag}c", check=False)
            for namespace in _namespaces():
                if namespace.startswith(f"{PREFIX}{tag}-"):
                    _delete_namespace(namespace)
