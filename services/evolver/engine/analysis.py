"""The root's `python` tool: analysis code run in the hosted-bot sandbox, never in the worker.

The code is first checked by the static gate (the `codingame` contract, which allows top-level
statements but keeps the same import allow-list and bans), then wrapped in a `decide` module
whose one turn runs it over a read-only snapshot of the program database (the observation) and
answers with what it printed. The sandbox has no network, no files of ours, no environment and a
wall-clock and CPU cap: analysis code can read the run's figures and nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from shared.config import Settings
from shared.protocol.signing import generate_secret
from shared.sandbox.gate import check_source
from shared.sandbox.limits import SandboxLimits
from shared.states import HostedContract

log = logging.getLogger("services.evolver")

TIMEOUT_MS = 5_000
MAX_OUTPUT_CHARS = 8_000
MAX_SNAPSHOT_BYTES = 900_000
"""Below the bot server's request cap (1 MB)."""
LIMITS = SandboxLimits(memory_mb=256, cpu_seconds=10, wall_clock_s=30.0, processes=8)

WRAPPER = '''"""Runs the root's analysis code over the snapshot it is sent, and answers with its output."""

import contextlib
import io

CODE = {code!r}
MAX_OUTPUT = {max_output}


def decide(observation):
    out = io.StringIO()
    scope = {{"programs": observation["programs"], "generations": observation["generations"]}}
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(CODE, "analysis", "exec"), scope)
        except Exception as exc:
            print(type(exc).__name__ + ": " + str(exc))
    text = out.getvalue()
    return {{"output": text[-MAX_OUTPUT:] if len(text) > MAX_OUTPUT else text}}
'''


def _shrink(snapshot: dict[str, Any]) -> dict[str, Any]:
    """Drop the oldest programs until the snapshot fits in one request."""
    programs = list(snapshot.get("programs", []))
    while programs and len(json.dumps({**snapshot, "programs": programs})) > MAX_SNAPSHOT_BYTES:
        programs = programs[len(programs) // 10 + 1 :]
    return {**snapshot, "programs": programs}


async def _run(code: str, snapshot: dict[str, Any], settings: Settings) -> str:
    from shared.botclient import HttpBotConnection
    from shared.sandbox import SandboxError, start_bot
    from shared.sandbox.uids import SandboxUids

    secret = generate_secret()
    source = WRAPPER.format(code=code, max_output=MAX_OUTPUT_CHARS)
    try:
        sandbox = await asyncio.to_thread(
            start_bot,
            source,
            secret=secret,
            contract=HostedContract.DECIDE,
            limits=LIMITS,
            backend=settings.sandbox_backend,
            dev_mode=settings.dev_mode,
            uids=SandboxUids.from_settings(settings),
        )
    except SandboxError as exc:
        return f"the sandbox is not available: {exc}"
    try:
        if sandbox.start_error:
            return f"the analysis could not start: {sandbox.start_error[-500:]}"
        connection = HttpBotConnection.over_unix_socket(sandbox.socket_path, secret, settings)
        try:
            reply = await connection.turn(
                match_id="analysis",
                game="analysis",
                player=0,
                turn=0,
                timeout_ms=TIMEOUT_MS,
                observation=_shrink(snapshot),
            )
        finally:
            with contextlib.suppress(Exception):
                await connection.aclose()
    finally:
        await asyncio.to_thread(sandbox.close)
    if not reply.ok:
        return f"the analysis failed: {reply.error}"
    action = reply.action
    if not isinstance(action, dict) or not isinstance(action.get("output"), str):
        return "the analysis answered nothing readable"
    return action["output"] or "(no output)"


def run_analysis(code: str, snapshot: dict[str, Any], settings: Settings) -> str:
    """What the code printed (at most 8,000 characters), or why it could not run."""
    problems = check_source(code, contract=HostedContract.CODINGAME)
    if problems:
        return "the static gate refused the code: " + "; ".join(str(p) for p in problems[:10])
    return asyncio.run(_run(code, snapshot, settings))
