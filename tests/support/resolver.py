"""The guard that keeps tests off the system resolver: bot host names come from a static table
(`ARENA_STATIC_HOSTS`), so a name reaching `socket.getaddrinfo` is a bug and a query that could
leave the machine."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable


class SystemResolverUsed(RuntimeError):
    """A test asked the system resolver about a name (a DNS query could leave the machine).

    Deliberately not an OSError, so code that handles resolution failures cannot swallow it."""


resolver_calls: list[str] = []
"""Every name the guarded resolver refused, in this process (the autouse fixture checks it)."""


def _is_ip_literal(host: object) -> bool:
    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _guarded(real: Callable[..., object]) -> Callable[..., object]:
    def lookup(host: object, *args: object, **kwargs: object) -> object:
        if not _is_ip_literal(host):
            resolver_calls.append(repr(host))
            raise SystemResolverUsed(
                f"test asked the system resolver about {host!r}: use an IP literal, or inject a "
                "resolver (shared.botclient.ssrf.StaticResolver, ARENA_STATIC_HOSTS)"
            )
        return real(host, *args, **kwargs)

    return lookup


def _no_reverse_lookup(_address: object) -> object:
    """Reverse lookups (http.server's getfqdn) get "unknown" here instead of a query."""
    raise socket.herror(1, "reverse lookups are disabled in tests")


def guard_system_resolver() -> None:
    """From now on, in this process, only IP literals reach the system resolver."""
    socket.getaddrinfo = _guarded(socket.getaddrinfo)  # type: ignore[assignment]
    socket.gethostbyname = _guarded(socket.gethostbyname)  # type: ignore[assignment]
    socket.gethostbyname_ex = _guarded(socket.gethostbyname_ex)  # type: ignore[assignment]
    socket.gethostbyaddr = _no_reverse_lookup  # type: ignore[assignment]
