"""`free_port` (shared/ports.py): a port a server can bind on 127.0.0.1 right after, the preferred
one when it is free and another when a server already listens there."""

from __future__ import annotations

import re
import socket

import pytest

from shared.ports import free_port
from tests.support.environment import ROOT


def _listener(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", port))
    sock.listen(1)
    return sock


def test_the_port_can_be_bound_and_listened_on() -> None:
    port = free_port()
    assert 0 < port < 65536
    with _listener(port) as sock:
        assert sock.getsockname() == ("127.0.0.1", port)


@pytest.mark.parametrize("preferred", [None, 0])
def test_no_preference_lets_the_kernel_pick(preferred: int | None) -> None:
    assert 0 < free_port(preferred) < 65536


def test_a_free_preferred_port_is_kept() -> None:
    preferred = free_port()
    assert free_port(preferred) == preferred


def test_a_preferred_port_a_server_listens_on_is_replaced() -> None:
    with _listener() as busy:
        taken = busy.getsockname()[1]
        port = free_port(taken)
        assert port != taken
        with _listener(port):
            pass


def test_the_tests_use_the_shared_function() -> None:
    """No test module writes a free_port of its own: one copy, shared.ports', for every caller."""
    definition = re.compile(r"^\s*def free_port\b", re.MULTILINE)
    own = [str(path) for path in (ROOT / "tests").rglob("*.py") if definition.search(path.read_text())]
    assert own == []
