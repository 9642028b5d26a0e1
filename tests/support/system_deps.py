"""System packages some tests need (`make system-deps` installs them). Where one could be installed
(root with apt-get) or in CI, its absence is a failure; only where it cannot be installed is it a skip,
with the reason shown."""

from __future__ import annotations

import os
import shutil

import pytest


def installable() -> bool:
    return os.geteuid() == 0 and shutil.which("apt-get") is not None


def require(found: str | None, *, package: str, what: str) -> str:
    """`found` (a path), or fail/skip saying which Debian package provides `what`."""
    if found:
        return found
    if installable() or os.environ.get("CI"):
        pytest.fail(f"{what} is missing: run `make system-deps` (apt-get install {package})", pytrace=False)
    pytest.skip(f"{what} is missing and cannot be installed here (needs root and apt-get: {package})")


def docker_compose() -> str:
    """The docker-compose client (Debian's `docker-compose`), which validates the Compose file offline."""
    return require(shutil.which("docker-compose"), package="docker-compose", what="docker-compose")
