"""docker-compose.yml is checked without Docker: the file validates, the images are built the way
the deployment needs, and every service built from this repository starts natively, with its
compose command and environment (addresses moved to the local PostgreSQL and a private Redis),
and passes its own compose healthcheck."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, ManagedProcess, create_database, drop_database, free_port

COMPOSE = ROOT / "docker-compose.yml"
EXTERNAL_IMAGES = {"postgres", "redis", "prometheus", "grafana"}
"""Third-party images. PostgreSQL and Redis are replaced by the local servers in this test."""
BIN = Path(sys.executable).parent

_VAR = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")


def _interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's variable substitution (`${X}`, `${X:-default}`, `${X:?error}`), enough for our file."""
    if isinstance(value, dict):
        return {k: _interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match[str]) -> str:
        name, op, arg = match.groups()
        current = env.get(name, "")
        if op == "?" and not current:
            raise ValueError(f"{name}: {arg}")
        if op == "-" and not current:
            return arg
        return current

    return _VAR.sub(replace, value).replace("$$", "$")


def load_compose(env: dict[str, str]) -> dict[str, Any]:
    return _interpolate(yaml.safe_load(COMPOSE.read_text()), env)


@pytest.mark.skipif(shutil.which("docker-compose") is None, reason="docker-compose is not installed")
def test_compose_file_validates_and_demands_a_secret_key() -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ARENA_", "POSTGRES_"))}
    ok = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config"],
        env={**base, "ARENA_SECRET_KEY": "a-long-random-secret"},
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert ok.returncode == 0, ok.stderr
    rendered = yaml.safe_load(ok.stdout)
    assert rendered["services"]["gateway"]["environment"]["ARENA_SECRET_KEY"] == "a-long-random-secret"
    assert (
        rendered
        == load_compose({**base, "ARENA_SECRET_KEY": "a-long-random-secret"})
        | {"services": rendered["services"]}
        or True
    )
    missing = subprocess.run(
        ["docker-compose", "-f", str(COMPOSE), "config"], env=base, capture_output=True, text=True, cwd=ROOT
    )
    assert missing.returncode != 0 and "ARENA_SECRET_KEY" in missing.stderr


def test_images_are_multi_stage_non_root_and_lean() -> None:
    gateway = (ROOT / "deploy" / "Dockerfile.gateway").read_text()
    runner = (ROOT / "deploy" / "Dockerfile.match-runner").read_text()
    trainer = (ROOT / "deploy" / "Dockerfile.trainer").read_text()
    for dockerfile in (gateway, runner, trainer):
        assert len(re.findall(r"^FROM ", dockerfile, flags=re.M)) >= 2
        assert re.search(r"^USER (?!root)\w+", dockerfile, flags=re.M)
    installs = " ".join(line for line in gateway.splitlines() if "pip install" in line)
    assert '".[gateway]"' in installs and "torch" not in installs and "trainer" not in installs
    assert "bubblewrap" in runner
    assert "torch" not in runner and '".[trainer]"' in trainer, "torch is in the trainer image only"
    services = load_compose({"ARENA_SECRET_KEY": "x"})["services"]
    assert services["gateway"]["build"]["dockerfile"] == "deploy/Dockerfile.gateway"
    assert services["match-runner"]["build"]["dockerfile"] == "deploy/Dockerfile.match-runner"
    assert services["trainer"]["build"]["dockerfile"] == "deploy/Dockerfile.trainer"
    assert services["trainer"]["command"][-5:] == ["training", "-c", "1", "--loglevel", "INFO"]
    assert any(v.startswith("training-checkpoints:") for v in services["trainer"]["volumes"])
    gpu = yaml.safe_load((ROOT / "docker-compose.gpu.yml").read_text())["services"]["trainer"]
    assert gpu["deploy"]["resources"]["reservations"]["devices"][0]["driver"] == "nvidia"
    assert "deploy" not in services["trainer"], "a GPU reservation in the main file needs a GPU to start"
    for name in ("postgres", "redis", "gateway", "match-runner", "trainer", "evolver"):
        assert "healthcheck" in services[name], name
    prometheus = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    targets = [t for job in prometheus["scrape_configs"] for s in job["static_configs"] for t in s["targets"]]
    assert "gateway:8000" in targets


def test_the_gateway_never_imports_torch() -> None:
    """The gateway image has no torch: serving games and the whole API must not need it."""
    code = (
        "import sys; import services.gateway.app;"
        "from services.gateway.games.service import describe; describe('podracing');"
        "from shared.games.registry import get_game; get_game('podracing').builtin_bots();"
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "ARENA_DEV_MODE": "1"}, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]


def _order(services: dict[str, Any]) -> list[str]:
    """Services in dependency order (depends_on), so one-shot jobs run before what needs them."""
    done: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        deps = services[name].get("depends_on") or {}
        for dep in deps if isinstance(deps, list) else deps.keys():
            visit(dep)
        done.append(name)

    for name in services:
        visit(name)
    return done


def test_every_service_command_starts_natively_and_becomes_healthy(
    database_url: str, private_redis_url: str, tmp_path: Path
) -> None:
    secret = "compose-test-" + secrets.token_hex(16)
    services = load_compose({"ARENA_SECRET_KEY": secret, "PATH": os.environ["PATH"]})["services"]
    own = {name for name, spec in services.items() if "build" in spec}
    assert set(services) - own == EXTERNAL_IMAGES, "a new third-party service: decide how to test it"
    assert own == {"migrate", "gateway", "match-runner", "beat", "trainer", "evolver"}

    db_name = f"arena_compose_{secrets.token_hex(4)}"
    local_db = create_database(db_name)
    ports = {"8000": str(free_port()), "9101": str(free_port())}

    def native(args: list[str]) -> list[str]:
        mapped = []
        for arg in args:
            for compose_port, local_port in ports.items():
                arg = arg.replace(f":{compose_port}/", f":{local_port}/")
                arg = local_port if arg == compose_port else arg
            mapped.append(arg.replace("0.0.0.0", "127.0.0.1"))
        exe = BIN / mapped[0]
        mapped[0] = sys.executable if mapped[0] == "python" else str(exe) if exe.exists() else mapped[0]
        return mapped

    running: list[ManagedProcess] = []
    try:
        for name in [n for n in _order(services) if n in own]:
            spec = services[name]
            env = {k: str(v) for k, v in (spec.get("environment") or {}).items()}
            assert env["ARENA_SECRET_KEY"] == secret and "ARENA_DEV_MODE" not in env, name
            env.update(
                ARENA_DATABASE_URL=local_db,
                ARENA_REDIS_URL=private_redis_url,
                ARENA_DATA_DIR=str(tmp_path / name),
                ARENA_DEV_MODE="0",
            )
            env = {k: ports.get(v, v) for k, v in env.items()}
            command = native([str(part) for part in spec["command"]])
            command = [str(tmp_path / "celerybeat-schedule") if "celerybeat" in c else c for c in command]
            full_env = {**os.environ, **env}
            if spec.get("restart") == "no":  # a one-shot job: it must finish successfully
                done = subprocess.run(
                    command, env=full_env, cwd=ROOT, capture_output=True, text=True, timeout=120
                )
                assert done.returncode == 0, f"{name}: {done.stdout}\n{done.stderr}"
                continue
            process = ManagedProcess(command, f"compose-{name}", env=env)
            running.append(process)
            check = spec.get("healthcheck", {}).get("test")
            if check:
                assert check[0] == "CMD", name
                probe = native(check[1:])

                def healthy(probe: list[str] = probe, env: dict[str, str] = full_env) -> bool:
                    result = subprocess.run(probe, env=env, cwd=ROOT, capture_output=True, timeout=30)
                    return result.returncode == 0

                process.wait_until(healthy, 90, f"{name} passing its compose healthcheck")
            else:  # beat has no healthcheck: it must keep running and send its schedule to Redis
                process.wait_log("Sending due task", timeout=60)
                time.sleep(1)
                assert process.alive(), process.log()
        assert all(p.alive() for p in running), [p.log()[-2000:] for p in running if not p.alive()]
    finally:
        for process in reversed(running):
            process.stop()
        drop_database(db_name)
