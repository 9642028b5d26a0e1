"""The example bots answer a podracing observation with a well-formed action."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.sandbox import PODRACING_OBSERVATION, post_turn, wait_listening

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "bots"


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_action(action: Any) -> None:
    assert isinstance(action, dict)
    assert len(action["pods"]) == 2
    for pod in action["pods"]:
        assert isinstance(pod["x"], int | float)
        assert isinstance(pod["y"], int | float)
        assert pod["thrust"] in ("BOOST", "SHIELD") or 0 <= pod["thrust"] <= 100


@pytest.mark.parametrize("name", ["podracing_runner_bot", "podracing_follower_bot"])
def test_python_examples(name: str) -> None:
    module = _load(name)
    if hasattr(module, "init"):
        module.init({"game": "podracing", "player": 0, "match_id": "m"})
    _check_action(module.decide(PODRACING_OBSERVATION))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_example(secret: str, tmp_path: Path) -> None:
    sock = tmp_path / "js.sock"
    proc = subprocess.Popen(
        ["node", str(EXAMPLES / "js" / "podracing_bot.js"), "--unix-socket", str(sock)],
        env={**os.environ, "ARENA_BOT_SECRET": secret},
    )
    try:
        wait_listening(sock, proc)
        response = post_turn(str(sock), secret, PODRACING_OBSERVATION, game="podracing")
        assert response.status_code == 200, response.text
        _check_action(response.json()["action"])
        import httpx

        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock))) as client:
            assert client.post("http://bot/turn", content=b"{}").status_code == 401
    finally:
        proc.kill()
        proc.wait()
