"""docker-compose.yml is checked without Docker: docker-compose validates it and renders what this
file's own reading renders; every required secret is demanded and none is written in it; every
long-running service has a healthcheck and a restart policy, state lives in named volumes, the
operators' tools listen on the host's loopback only, the sandbox hosts run under the seccomp profile
instead of none; the images are built the way the deployment needs; and every service built from
this repository starts natively, with its compose command and environment (addresses moved to the
local PostgreSQL and a private Redis), and passes its own compose healthcheck."""

from __future__ import annotations

import itertools
import json
import os
import re
import secrets
import stat
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from shared.ports import free_port
from tests.support.databases import create_database, drop_database
from tests.support.environment import ROOT
from tests.support.processes import ManagedProcess
from tests.support.system_deps import docker_compose

COMPOSE = ROOT / "docker-compose.yml"
GPU_OVERRIDE = ROOT / "docker-compose.gpu.yml"
ENV_EXAMPLE = ROOT / ".env.example"
EXTERNAL_IMAGES = {"postgres", "redis", "minio", "minio-init", "prometheus", "grafana"}
"""Third-party images: validated only. PostgreSQL and Redis are replaced by local servers below."""
OWN_IMAGES = {"migrate", "gateway", "match-runner", "beat", "trainer", "evolver", "flower"}
ONE_SHOT = {"migrate", "minio-init"}
SANDBOX_HOSTS = {"match-runner", "evolver"}
"""The services that start bubblewrap sandboxes (hosted bots, generated code)."""
PUBLISHED = {"gateway"}
"""The only service reachable beyond the host's loopback."""
STATE = {
    "postgres": "/var/lib/postgresql/data",
    "redis": "/data",
    "minio": "/data",
    "trainer": "/var/lib/arena/training",
    "prometheus": "/prometheus",
    "grafana": "/var/lib/grafana",
}
"""Where each stateful service keeps what must survive a new container: a named volume each."""
SECCOMP_PROFILE = "./deploy/seccomp-sandbox.json"
SECRET_NAME = re.compile(r"PASSWORD|SECRET|_KEY$|BASIC_AUTH|TOKEN|ROOT_USER")
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


def raw_compose() -> dict[str, Any]:
    """The file as written (YAML anchors merged), before any substitution."""
    return dict(yaml.safe_load(COMPOSE.read_text()))


def load_compose(env: dict[str, str]) -> dict[str, Any]:
    return dict(_interpolate(raw_compose(), env))


def required_variables() -> set[str]:
    return set(re.findall(r"\$\{(\w+):\?", COMPOSE.read_text()))


def secrets_env() -> dict[str, str]:
    """A value for every variable the file requires, as an operator's .env would give them."""
    values = {name: f"{name.lower()}-{secrets.token_hex(8)}" for name in required_variables()}
    values["FLOWER_BASIC_AUTH"] = f"ops:{secrets.token_hex(8)}"
    return values


def ports_of(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(host address, container port) of each published port: short syntax or long."""
    found = []
    for port in spec.get("ports", []):
        if isinstance(port, dict):
            found.append((str(port.get("host_ip", "")), str(port["target"])))
            continue
        parts = str(port).split("/")[0].split(":")
        found.append((parts[0] if len(parts) == 3 else "", parts[-1]))
    return found


def _unescape(value: Any) -> Any:
    """docker-compose writes `$` as `$$` in what it renders (so the output can be read again)."""
    if isinstance(value, dict):
        return {k: _unescape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unescape(v) for v in value]
    return value.replace("$$", "$") if isinstance(value, str) else value


def run_compose(*args: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """docker-compose with exactly `env` as the operator's settings: an empty --env-file, so a .env
    lying in the repository cannot fill in what a test leaves out."""
    empty = tmp_path / "empty.env"
    empty.write_text("")
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    return subprocess.run(
        [docker_compose(), "--env-file", str(empty), "-f", str(COMPOSE), *args],
        env={**base, **env},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


@pytest.mark.slow
def test_compose_file_validates_renders_as_read_here_and_demands_every_secret(tmp_path: Path) -> None:
    env = secrets_env()
    ok = run_compose("config", env=env, tmp_path=tmp_path)
    assert ok.returncode == 0, ok.stderr
    rendered = _unescape(yaml.safe_load(ok.stdout)["services"])
    ours = load_compose(env)["services"]
    assert set(rendered) == set(ours) == OWN_IMAGES | EXTERNAL_IMAGES
    for name, spec in ours.items():
        for key in ("image", "command", "entrypoint", "restart"):
            assert rendered[name].get(key) == spec.get(key), (name, key)
        environment = {k: str(v) for k, v in (spec.get("environment") or {}).items()}
        assert (rendered[name].get("environment") or {}) == environment, name
        assert rendered[name].get("healthcheck", {}).get("test") == spec.get("healthcheck", {}).get("test")
        assert ports_of(rendered[name]) == ports_of(spec), name
    assert rendered["gateway"]["environment"]["ARENA_SECRET_KEY"] == env["ARENA_SECRET_KEY"]

    # Each required secret, left out alone, stops Compose with a message that names it.
    assert required_variables() >= {
        "ARENA_SECRET_KEY",
        "POSTGRES_PASSWORD",
        "REDIS_PASSWORD",
        "MINIO_ROOT_USER",
        "MINIO_ROOT_PASSWORD",
        "ARENA_REPLAY_S3_ACCESS_KEY",
        "ARENA_REPLAY_S3_SECRET_KEY",
        "FLOWER_BASIC_AUTH",
        "GRAFANA_ADMIN_PASSWORD",
    }

    def without(name: str) -> subprocess.CompletedProcess[str]:
        return run_compose("config", env={k: v for k, v in env.items() if k != name}, tmp_path=tmp_path)

    names = sorted(required_variables())
    with ThreadPoolExecutor(max_workers=4) as pool:
        for name, missing in zip(names, pool.map(without, names), strict=True):
            assert missing.returncode != 0, (name, missing.stderr)
            assert name in missing.stderr, (name, missing.stderr)

    # The GPU override validates with it and gives the trainer an NVIDIA GPU, nothing else.
    gpu = run_compose("-f", str(GPU_OVERRIDE), "config", env=env, tmp_path=tmp_path)
    assert gpu.returncode == 0, gpu.stderr
    trainer = yaml.safe_load(gpu.stdout)["services"]["trainer"]
    assert trainer["deploy"]["resources"]["reservations"]["devices"][0]["driver"] == "nvidia"
    assert trainer["image"] == "arena-trainer-cuda"
    assert trainer["cap_drop"] == ["ALL"]


def test_long_running_services_have_healthchecks_and_restart_policies() -> None:
    services = load_compose(secrets_env())["services"]
    for name, spec in services.items():
        if name in ONE_SHOT:
            assert spec["restart"] == "no", name
            assert "healthcheck" not in spec, name
            continue
        assert spec.get("restart") == "unless-stopped", name
        test = spec.get("healthcheck", {}).get("test")
        assert test, name
        assert test[0] in ("CMD", "CMD-SHELL"), name
        assert len(test) > 1, name
    for name, spec in services.items():
        for dependency, rule in (spec.get("depends_on") or {}).items():
            if dependency in ONE_SHOT:
                assert rule["condition"] == "service_completed_successfully", (name, dependency)
            elif dependency in ("postgres", "redis", "minio"):
                assert rule["condition"] == "service_healthy", (name, dependency)


def test_state_lives_in_declared_named_volumes() -> None:
    compose = load_compose(secrets_env())
    declared = set(compose["volumes"])
    used = set()
    for name, spec in compose["services"].items():
        for volume in spec.get("volumes", []):
            source, target = str(volume).split(":")[:2]
            if not source.startswith((".", "/")):
                assert source in declared, f"{name}: volume {source} is not declared"
                used.add(source)
            if target == STATE.get(name):
                assert source in declared, f"{name} keeps its state in {source}, not a named volume"
    for name, path in STATE.items():
        targets = [str(v).split(":")[1] for v in compose["services"][name].get("volumes", [])]
        assert path in targets, f"{name} keeps no volume at {path}"
    assert used == declared, "declared but unused volumes"


def test_no_secret_is_written_in_the_file_or_its_template() -> None:
    services = raw_compose()["services"]
    reference = re.compile(r"\$\{\w+(:\?[^}]+|:-)?\}")
    for name, spec in services.items():
        for key, value in (spec.get("environment") or {}).items():
            if SECRET_NAME.search(key) and not key.endswith("_FILE"):
                assert reference.fullmatch(str(value)), f"{name}: {key} must come from .env, not the file"
            if "://" in str(value) and "@" in str(value):
                credentials = str(value).split("://", 1)[1].split("@", 1)[0]
                password = credentials.split(":", 1)[1]
                assert re.fullmatch(r"\$\{\w+:\?[^}]+\}", password), f"{name}: {key} has a password"
        command = [str(part) for part in spec.get("command") or []]
        for flag, value in itertools.pairwise(command):
            if flag == "--requirepass":
                assert re.fullmatch(r"\$\{\w+:\?[^}]+\}", value), name
    # The template names every required variable and gives none of them a value.
    template = dict(
        line.split("=", 1) for line in ENV_EXAMPLE.read_text().splitlines() if re.match(r"^[A-Z0-9_]+=", line)
    )
    assert required_variables() <= set(template), sorted(required_variables() - set(template))
    assert all(not template[name] for name in required_variables()), "the template holds a secret"
    assert all(not value for key, value in template.items() if SECRET_NAME.search(key))
    ignored = subprocess.run(["git", "check-ignore", "-q", ".env"], cwd=ROOT)
    assert ignored.returncode == 0, ".env (the operator's secrets) must be ignored by git"


def test_only_the_gateway_is_published_beyond_loopback_and_tools_ask_for_passwords() -> None:
    env = secrets_env()
    services = load_compose(env)["services"]
    for name, spec in services.items():
        for host, _ in ports_of(spec):
            if name not in PUBLISHED:
                assert host == "127.0.0.1", f"{name} is published on {host or 'every interface'}"
    assert [target for _, target in ports_of(services["flower"])] == ["5555"]
    flower = raw_compose()["services"]["flower"]["environment"]
    assert flower["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")
    assert services["flower"]["environment"]["FLOWER_BASIC_AUTH"] == env["FLOWER_BASIC_AUTH"]
    grafana = services["grafana"]["environment"]
    assert grafana["GF_SECURITY_ADMIN_PASSWORD"] == env["GRAFANA_ADMIN_PASSWORD"]
    assert grafana["GF_AUTH_ANONYMOUS_ENABLED"] == "false"
    assert grafana["GF_USERS_ALLOW_SIGN_UP"] == "false"
    minio = services["minio"]["environment"]
    assert minio["MINIO_ROOT_PASSWORD"] == env["MINIO_ROOT_PASSWORD"]


def test_least_privilege_for_every_container() -> None:
    services = load_compose(secrets_env())["services"]
    everything = COMPOSE.read_text()
    assert "unconfined" not in everything.replace("apparmor=unconfined", "").replace(
        "systempaths=unconfined", ""
    ), "seccomp=unconfined is gone: the sandbox hosts have a profile"
    for name, spec in services.items():
        options = spec.get("security_opt", [])
        assert "no-new-privileges:true" in options, name
        assert not spec.get("privileged"), name
        assert not spec.get("cap_add"), name
        if name in OWN_IMAGES:
            assert spec.get("cap_drop") == ["ALL"], name
        if name in SANDBOX_HOSTS:
            assert f"seccomp={SECCOMP_PROFILE}" in options, name
            assert {"apparmor=unconfined", "systempaths=unconfined"} <= set(options), name
        else:
            assert not [o for o in options if o != "no-new-privileges:true"], f"{name} needs no exception"
    assert (ROOT / SECCOMP_PROFILE).is_file()


def test_services_with_the_same_dependencies_share_an_image() -> None:
    services = load_compose(secrets_env())["services"]
    images: dict[str, set[str]] = {}
    for name in OWN_IMAGES:
        spec = services[name]
        images.setdefault(spec["build"]["dockerfile"], set()).add(spec["image"])
    assert images == {
        "deploy/Dockerfile.gateway": {"arena-gateway"},
        "deploy/Dockerfile.match-runner": {"arena-match-runner"},
        "deploy/Dockerfile.trainer": {"arena-trainer"},
    }
    assert services["flower"]["image"] == services["beat"]["image"] == services["evolver"]["image"]
    assert services["migrate"]["image"] == services["gateway"]["image"]


def test_replays_go_to_minio_with_a_key_for_their_bucket_only() -> None:
    env = secrets_env()
    services = load_compose(env)["services"]
    for name in ("gateway", "match-runner", "evolver", "beat", "trainer", "flower", "migrate"):
        settings = services[name]["environment"]
        assert settings["ARENA_REPLAY_STORE"] == "s3", name
        assert settings["ARENA_REPLAY_S3_ENDPOINT"] == "http://minio:9000", name
        assert settings["ARENA_REPLAY_S3_BUCKET"] == "arena-replays", name
        assert settings["ARENA_REPLAY_S3_ACCESS_KEY"] == env["ARENA_REPLAY_S3_ACCESS_KEY"], name
        assert settings["ARENA_REPLAY_S3_SECRET_KEY"] == env["ARENA_REPLAY_S3_SECRET_KEY"], name
        assert env["MINIO_ROOT_PASSWORD"] not in json.dumps(settings), f"{name} sees MinIO's root"
    init = services["minio-init"]
    assert init["environment"]["ARENA_REPLAY_S3_BUCKET"] == "arena-replays"
    assert init["depends_on"]["minio"]["condition"] == "service_healthy"
    for name in ("gateway", "match-runner", "evolver"):
        assert services[name]["depends_on"]["minio-init"]["condition"] == "service_completed_successfully"


def test_minio_init_creates_a_private_bucket_and_a_key_limited_to_it(tmp_path: Path) -> None:
    """deploy/minio/init.sh against a stand-in `mc` that records its arguments (and, like mc, fails to
    detach a policy that is not attached), under a strict POSIX shell."""
    calls = tmp_path / "calls.log"
    policy_copy = tmp_path / "policy.json"
    mc = tmp_path / "bin" / "mc"
    mc.parent.mkdir()
    mc.write_text(
        "#!/bin/sh\n"
        f'echo "$*" >> "{calls}"\n'
        f'if [ "$1 $2 $3" = "admin policy create" ]; then cp "$6" "{policy_copy}"; fi\n'
        'if [ "$1 $2 $3" = "admin policy detach" ]; then exit 1; fi\n'
    )
    mc.chmod(mc.stat().st_mode | stat.S_IXUSR)
    env = {
        "PATH": f"{mc.parent}:{os.environ['PATH']}",
        "MINIO_ROOT_USER": "root-user",
        "MINIO_ROOT_PASSWORD": "root-password",
        "ARENA_REPLAY_S3_BUCKET": "arena-replays",
        "ARENA_REPLAY_S3_ACCESS_KEY": "arena-key",
        "ARENA_REPLAY_S3_SECRET_KEY": "arena-secret",
    }
    script = ROOT / "deploy" / "minio" / "init.sh"
    done = subprocess.run(["/bin/sh", str(script)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().splitlines() == [
        "alias set arena http://minio:9000 root-user root-password",
        "mb --ignore-existing arena/arena-replays",
        "anonymous set none arena/arena-replays",
        "admin policy create arena arena-replays /tmp/arena-replays-policy.json",
        "admin user add arena arena-key arena-secret",
        "admin policy detach arena arena-replays --user arena-key",
        "admin policy attach arena arena-replays --user arena-key",
    ]
    policy = json.loads(policy_copy.read_text())
    resources = {r for statement in policy["Statement"] for r in statement["Resource"]}
    assert resources == {"arn:aws:s3:::arena-replays", "arn:aws:s3:::arena-replays/*"}
    actions = {a for statement in policy["Statement"] for a in statement["Action"]}
    assert actions == {
        "s3:GetBucketLocation",
        "s3:ListBucket",
        "s3:GetObject",
        "s3:PutObject",
        "s3:DeleteObject",
    }
    without_key = {k: v for k, v in env.items() if k != "ARENA_REPLAY_S3_SECRET_KEY"}
    refused = subprocess.run(["/bin/sh", str(script)], env=without_key, capture_output=True, text=True)
    assert refused.returncode != 0
    assert "ARENA_REPLAY_S3_SECRET_KEY" in refused.stderr


def test_images_are_multi_stage_non_root_and_lean() -> None:
    gateway = (ROOT / "deploy" / "Dockerfile.gateway").read_text()
    runner = (ROOT / "deploy" / "Dockerfile.match-runner").read_text()
    trainer = (ROOT / "deploy" / "Dockerfile.trainer").read_text()
    for dockerfile in (gateway, runner, trainer):
        assert len(re.findall(r"^FROM ", dockerfile, flags=re.M)) >= 2
        assert re.search(r"^USER (?!root)\w+", dockerfile, flags=re.M)
    installs = " ".join(line for line in gateway.splitlines() if "pip install" in line)
    assert '".[gateway]"' in installs
    assert "torch" not in installs
    assert "trainer" not in installs
    assert "bubblewrap" in runner, "the match runner sandboxes hosted bots with bubblewrap"
    assert '".[match-runner,evolver]"' in runner, "flower is in match-runner"
    assert "torch" not in runner, "torch is in the trainer image only"
    assert '".[trainer]"' in trainer, "torch is in the trainer image only"
    services = load_compose(secrets_env())["services"]
    assert services["gateway"]["build"]["dockerfile"] == "deploy/Dockerfile.gateway"
    assert services["match-runner"]["build"]["dockerfile"] == "deploy/Dockerfile.match-runner"
    assert services["trainer"]["build"]["dockerfile"] == "deploy/Dockerfile.trainer"
    assert services["trainer"]["command"][-5:] == ["training", "-c", "1", "--loglevel", "INFO"]
    assert any(v.startswith("training-checkpoints:") for v in services["trainer"]["volumes"])
    gpu = yaml.safe_load(GPU_OVERRIDE.read_text())["services"]["trainer"]
    assert gpu["deploy"]["resources"]["reservations"]["devices"][0]["driver"] == "nvidia"
    assert "deploy" not in services["trainer"], "a GPU reservation in the main file needs a GPU to start"
    prometheus = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    targets = [t for job in prometheus["scrape_configs"] for s in job["static_configs"] for t in s["targets"]]
    assert "gateway:8000" in targets


def test_workers_with_several_pool_processes_sum_their_metrics_in_a_directory_their_image_makes() -> None:
    """`-c` above 1 with a metrics port needs PROMETHEUS_MULTIPROC_DIR (shared/worker_metrics.py),
    and the directory must exist before the worker imports its metrics."""
    services = raw_compose()["services"]
    dockerfiles = {"arena-match-runner": (ROOT / "deploy" / "Dockerfile.match-runner").read_text()}
    pooled = [
        name
        for name, spec in services.items()
        if isinstance(spec.get("command"), list)
        and "worker" in spec["command"]
        and "-c" in spec["command"]
        and int(spec["command"][spec["command"].index("-c") + 1]) > 1
    ]
    assert sorted(pooled) == ["evolver", "match-runner"]
    for name in pooled:
        directory = services[name]["environment"]["PROMETHEUS_MULTIPROC_DIR"]
        assert f"install -d -o arena -g arena {directory}" in dockerfiles[services[name]["image"]], name


@pytest.mark.slow
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


BEAT_SCHEDULE = "/tmp/celerybeat-schedule"


@pytest.mark.e2e
@pytest.mark.usefixtures("database_url")
def test_every_service_command_starts_natively_and_becomes_healthy(
    private_redis_url: str, tmp_path: Path
) -> None:
    required = secrets_env()
    services = load_compose({**required, "PATH": os.environ["PATH"]})["services"]
    own = {name for name, spec in services.items() if "build" in spec}
    assert set(services) - own == EXTERNAL_IMAGES, "a new third-party service: decide how to test it"
    assert own == OWN_IMAGES

    db_name = f"arena_compose_{secrets.token_hex(4)}"
    local_db = create_database(db_name)
    ports = {"8000": str(free_port()), "9101": str(free_port()), "5555": str(free_port())}
    schedule = str(tmp_path / "celerybeat-schedule")

    def native(args: list[str]) -> list[str]:
        mapped = []
        for arg in args:
            for compose_port, local_port in ports.items():
                arg = arg.replace(f":{compose_port}/", f":{local_port}/")
                arg = local_port if arg == compose_port else arg
            mapped.append(arg.replace("0.0.0.0", "127.0.0.1").replace(BEAT_SCHEDULE, schedule))
        exe = BIN / mapped[0]
        mapped[0] = sys.executable if mapped[0] == "python" else str(exe) if exe.exists() else mapped[0]
        return mapped

    running: dict[str, ManagedProcess] = {}
    probes: dict[str, tuple[list[str], dict[str, str]]] = {}
    try:
        # As Compose does: the one-shot jobs first, in dependency order, then every long-running
        # service at once (none waits for another's health).
        for name in [n for n in _order(services) if n in own]:
            spec = services[name]
            env = {k: str(v) for k, v in (spec.get("environment") or {}).items()}
            assert env["ARENA_SECRET_KEY"] == required["ARENA_SECRET_KEY"], name
            assert "ARENA_DEV_MODE" not in env, name
            # MinIO is a third-party image: natively, replays go to the default store (ARENA_DATA_DIR).
            env = {k: v for k, v in env.items() if not k.startswith("ARENA_REPLAY_")}
            if "PROMETHEUS_MULTIPROC_DIR" in env:  # a directory of each container's own /tmp
                env["PROMETHEUS_MULTIPROC_DIR"] = str(tmp_path / name / "metrics")
                (tmp_path / name / "metrics").mkdir(parents=True)
            env.update(
                ARENA_DATABASE_URL=local_db,
                ARENA_REDIS_URL=private_redis_url,
                ARENA_DATA_DIR=str(tmp_path / name),
                ARENA_DEV_MODE="0",
            )
            env = {k: "127.0.0.1" if v == "0.0.0.0" else ports.get(v, v) for k, v in env.items()}
            command = native([str(part) for part in spec["command"]])
            full_env = {**os.environ, **env}
            if name in ONE_SHOT:  # it must finish successfully
                done = subprocess.run(
                    command, env=full_env, cwd=ROOT, capture_output=True, text=True, timeout=120
                )
                assert done.returncode == 0, f"{name}: {done.stdout}\n{done.stderr}"
                continue
            running[name] = ManagedProcess(command, f"compose-{name}", env=env)
            check = spec["healthcheck"]["test"]
            assert check[0] == "CMD", name
            probes[name] = (native(check[1:]), full_env)

        def wait_healthy(name: str) -> None:
            probe, probe_env = probes[name]

            def healthy() -> bool:
                result = subprocess.run(probe, env=probe_env, cwd=ROOT, capture_output=True, timeout=30)
                return result.returncode == 0

            running[name].wait_until(healthy, 90, f"{name} passing its compose healthcheck")

        # The healthchecks run side by side, as Compose runs them: a Celery ping waits out its timeout.
        with ThreadPoolExecutor(max_workers=len(running)) as pool:
            list(pool.map(wait_healthy, running))
        # Beat does its job: it sends its schedule to Redis.
        running["beat"].wait_log("Sending due task", timeout=60)
        # Flower asks for its user:password everywhere but /healthcheck.
        flower = f"http://127.0.0.1:{ports['5555']}"
        user, password = required["FLOWER_BASIC_AUTH"].split(":", 1)
        assert httpx.get(f"{flower}/healthcheck", timeout=10).text == "OK"
        for path in ("/", "/workers", "/api/workers"):
            assert httpx.get(f"{flower}{path}", timeout=10).status_code == 401, path
            assert httpx.get(f"{flower}{path}", auth=(user, "wrong"), timeout=10).status_code == 401, path
        assert httpx.get(f"{flower}/workers", auth=(user, password), timeout=10).status_code == 200
        time.sleep(1)
        assert all(p.alive() for p in running.values()), [
            p.log()[-2000:] for p in running.values() if not p.alive()
        ]
    finally:
        for process in reversed(running.values()):
            process.stop()
        drop_database(db_name)
