"""Hosted bots: the static gate, the sandbox backends and their limits."""

from shared.sandbox.backends import SandboxedBot, SandboxError, start_bot
from shared.sandbox.gate import ALLOWED_MODULES, Problem, check_source
from shared.sandbox.limits import SandboxLimits
from shared.sandbox.pool import WarmPool

__all__ = [
    "ALLOWED_MODULES",
    "Problem",
    "SandboxError",
    "SandboxLimits",
    "SandboxedBot",
    "WarmPool",
    "check_source",
    "start_bot",
]
