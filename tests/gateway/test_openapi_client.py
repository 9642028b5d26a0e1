"""A client generated from Arena's OpenAPI document by a standard generator (openapi-python-client)
has every model typed, and works against a running gateway.

Schema names must be unique and meaningful: two modules' `RunOut` once made the document fall back
to module-path names, and the generator dropped those models as duplicates."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.support.accounts import Account, unique
from tests.support.bot_servers import BotServer

GENERATOR = Path(sys.executable).with_name("openapi-python-client")
PACKAGE = "arena_generated_client"
GENERATOR_CONFIG = "content_type_overrides:\n  application/gzip: application/octet-stream\n"
"""The run export answers a .tar.gz: the generator's file type, as for any binary download."""


def test_every_schema_name_is_plain(client: TestClient) -> None:
    names = list(client.get("/openapi.json").json()["components"]["schemas"])
    module_paths = [name for name in names if "__" in name]
    assert module_paths == [], "schema names fell back to module paths (duplicate class names)"


@pytest.fixture(scope="module")
def generated(client: TestClient, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    if not GENERATOR.exists():
        pytest.fail(f"{GENERATOR} is missing: `make install` installs the dev dependencies")
    folder = tmp_path_factory.mktemp("openapi")
    spec = folder / "openapi.json"
    spec.write_text(json.dumps(client.get("/openapi.json").json()))
    config = folder / "config.yml"
    config.write_text(GENERATOR_CONFIG)
    env = os.environ | {"PATH": f"{GENERATOR.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = ["generate", "--path", str(spec), "--meta", "none", "--config", str(config)]
    done = subprocess.run(
        [str(GENERATOR), *command, "--output-path", str(folder / PACKAGE)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Warning" not in output, output
    assert "duplicate" not in output.lower(), output
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]
        shutil.rmtree(folder / PACKAGE, ignore_errors=True)


def _call(_generated: ModuleType, module: str, **kwargs: Any) -> Any:
    endpoint = importlib.import_module(f"{PACKAGE}.api.{module}")
    return endpoint.sync_detailed(**kwargs)


@pytest.mark.slow
def test_the_generated_client_registers_a_bot_reads_the_leaderboard_and_runs_training(
    generated: ModuleType, gateway_url: str, alice: Account, bot_server: BotServer
) -> None:
    models = importlib.import_module(f"{PACKAGE}.models")
    client = generated.AuthenticatedClient(
        base_url=gateway_url, token=alice.key, raise_on_unexpected_status=True
    )

    name = unique("generated")
    body = models.HttpBotCreate(
        name=name, game="podracing", endpoint=bot_server.url, secret=bot_server.secret
    )
    created = _call(generated, "bots.register_http_bot_api_v1_bots_post", client=client, body=body)
    assert created.status_code == 201, created.content
    assert isinstance(created.parsed, models.BotCreated)
    assert created.parsed.name == name

    board = _call(
        generated, "leaderboard.leaderboard_api_v1_leaderboard_game_get", game="podracing", client=client
    )
    assert board.status_code == 200, board.content
    assert isinstance(board.parsed, models.Leaderboard)

    run_body = models.TrainingRunCreate(name=unique("run"), budget=models.Budget(steps=100_000))
    run = _call(generated, "training.create_run_api_v1_training_runs_post", client=client, body=run_body)
    assert run.status_code == 201, run.content
    assert isinstance(run.parsed, models.TrainingRunDetail)
    detail = _call(
        generated, "training.get_run_api_v1_training_runs_run_id_get", run_id=run.parsed.id, client=client
    )
    assert detail.status_code == 200, detail.content
    assert isinstance(detail.parsed, models.TrainingRunDetail)
    assert detail.parsed.name == run_body.name
    listed = _call(generated, "training.list_runs_api_v1_training_runs_get", client=client)
    assert isinstance(listed.parsed, models.PageTrainingRunOut)
    assert run.parsed.id in [item.id for item in listed.parsed.items]
