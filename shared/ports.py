"""A free TCP port on the IPv4 loopback, for servers that tests, benchmarks and the demo start.

`free_port()` guarantees only that, at the moment it returns, nothing is bound to the port on
127.0.0.1: it binds a socket there, reads the port back and closes the socket. It does not reserve
the port: another process (or another thread here) can take it between this check and the server's
own bind, so a caller that cannot tolerate that race must retry or let the server bind port 0
itself. Only IPv4 is checked: a server that listens on ::1 alone with the same number goes unnoticed.
"""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def free_port(preferred: int | None = None) -> int:
    """A TCP port nothing is bound to on 127.0.0.1 now: `preferred` when it is free, else one the
    kernel picks. The preferred port is tried with SO_REUSEADDR, as uvicorn binds, so connections
    of an earlier server still in TIME_WAIT do not push a restarted one off its usual port; a
    listening server still does. A `preferred` of None or 0 means any port.
    """
    if preferred:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((LOOPBACK, preferred))
            except OSError:
                pass
            else:
                return preferred
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])
