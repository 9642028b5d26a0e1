"""The training pages on the server side, and the run's live socket.

Runs are created through the real API (queued on the `training` queue; no trainer worker runs here,
so they stay queued). Runs are their owner's (and admins') only: the pages carry no run data (the
browser reads it with the owner's key, tests/gateway/test_training_page_browser.py), and the socket
asks for the key first and refuses other users as if the run did not exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from services.gateway.live.training import CLOSE_UNAUTHORIZED, Refusal, check
from services.gateway.web.pages.training import RUN_CHARTS
from shared.config import get_settings
from shared.events import TrainingProgress, TrainingStatus, get_publisher, publish
from shared.states import JobStatus, TrainingStage
from tests.support.accounts import Account
from tests.support.live_sockets import close_of, receive, ws_url
from tests.support.training import create_default_run

Message = dict[str, Any]


@pytest.fixture
def alice_run(client: TestClient, alice: Account) -> dict[str, Any]:
    return create_default_run(client, alice, learning_rate=0.0005)


def test_the_list_page_is_a_shell_asking_for_the_key(client: TestClient, alice_run: dict[str, Any]) -> None:
    page = client.get("/training")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    html = page.text
    assert 'href="/training" aria-current="page"' in html
    assert "data-training-list" in html
    assert 'data-api="/api/v1/training/runs"' in html
    assert "data-key-form hidden" in html
    assert alice_run["name"] not in html
    assert alice_run["id"] not in html
    assert "/static/training_list.js?v=" in html


def test_a_run_page_has_every_chart_and_points_at_its_api_and_socket(
    client: TestClient, alice_run: dict[str, Any]
) -> None:
    run_id = alice_run["id"]
    page = client.get(f"/training/{run_id}")
    assert page.status_code == 200
    html = page.text
    for chart in RUN_CHARTS:
        assert f'data-chart="{chart.id}"' in html
        for series in chart.series:
            assert f"&#34;key&#34;: &#34;{series.key}&#34;" in html
    assert f'data-api="/api/v1/training/runs/{run_id}"' in html
    assert f'data-socket="/ws/training/{run_id}"' in html
    assert f'data-race-url="/api/v1/training/runs/{run_id}/race"' in html
    for stage in TrainingStage:
        assert f'<option value="{stage.value}">' in html
    assert "data-evaluation-at" in html, "the evaluation table's shell"
    assert "data-evaluation-history" in html
    assert "data-imitation-agreement" in html
    assert "/static/training.js?v=" in html
    assert "/static/arena.css?v=" in html  # one stylesheet
    assert "data-key-form hidden" in html
    # Nothing of the run itself: its name and config are its owner's.
    assert alice_run["name"] not in html
    assert "0.0005" not in html


@pytest.mark.parametrize("raw", ["not-a-run", str(uuid.UUID(int=7)), "0" * 500])
def test_an_unknown_run_gets_an_html_404_page(client: TestClient, raw: str) -> None:
    page = client.get(f"/training/{raw}")
    assert page.status_code == 404
    assert page.headers["content-type"].startswith("text/html")
    assert "There is no training run" in page.text
    assert len(page.text) < 20_000


def test_the_api_behind_the_pages_is_the_owners(
    client: TestClient, alice_run: dict[str, Any], alice: Account, bob: Account, admin: Account
) -> None:
    """What the page's script reads: the owner's key and an admin's get the run; no key is refused
    and another user's key finds no such run."""
    path = f"/api/v1/training/runs/{alice_run['id']}"
    assert client.get(path, headers=alice.headers).status_code == 200
    assert client.get(path, headers=admin.headers).status_code == 200
    assert client.get(path).status_code == 401
    assert client.get(path, headers=bob.headers).status_code == 404
    assert client.get(f"{path}/metrics", headers=bob.headers).status_code == 404


# --- the live socket -------------------------------------------------------------------------------


def auth(key: str) -> str:
    return json.dumps({"type": "auth", "api_key": key})


def progress(run_id: str, iteration: int) -> TrainingProgress:
    return TrainingProgress(
        run_id=uuid.UUID(run_id),
        status=JobStatus.RUNNING,
        iteration=iteration,
        global_step=iteration * 512,
        stage=TrainingStage.RUNNER,
        metrics={"reward_mean": 0.25 * iteration, "win_rate_runner": None},
    )


def test_the_owner_gets_subscribed_then_every_event_of_the_run_and_no_other(
    gateway_url: str, client: TestClient, alice: Account, alice_run: dict[str, Any]
) -> None:
    run_id = alice_run["id"]
    other_run = create_default_run(client, alice)["id"]
    status = TrainingStatus(
        run_id=uuid.UUID(run_id),
        status=JobStatus.STOPPED,
        iteration=2,
        global_step=1024,
        stage=TrainingStage.RUNNER,
    )

    one, two = progress(run_id, 1), progress(run_id, 2)

    async def scenario() -> list[Message]:
        async with connect(ws_url(gateway_url, f"/ws/training/{run_id}")) as socket:
            await socket.send(auth(alice.key))
            opening = await receive(socket)
            publish(progress(other_run, 1))  # another run's topic: not relayed here
            publish(one)
            publish(two)
            publish(status)
            get_publisher().flush(5)
            return [opening] + [await receive(socket) for _ in range(3)]

    opening, first, second, stopped = asyncio.run(scenario())
    assert opening == {
        "type": "training.subscribed",
        "run_id": run_id,
        "status": "queued",
        "stage": "solo",
        "iteration": 0,
        "global_step": 0,
    }
    assert first == json.loads(one.model_dump_json())
    assert (first["type"], first["iteration"], second["iteration"]) == ("training.progress", 1, 2)
    assert first["metrics"] == {"reward_mean": 0.25, "win_rate_runner": None}
    assert stopped["type"] == "training.status"
    assert stopped["status"] == "stopped"


def test_an_admin_may_follow_any_run(gateway_url: str, admin: Account, alice_run: dict[str, Any]) -> None:
    async def scenario() -> Message:
        async with connect(ws_url(gateway_url, f"/ws/training/{alice_run['id']}")) as socket:
            await socket.send(auth(admin.key))
            return await receive(socket)

    assert asyncio.run(scenario())["type"] == "training.subscribed"


@pytest.mark.parametrize(
    ("first_message", "code", "reason"),
    [
        (lambda _run, _bob: auth("arena_not_a_key_at_all_0123456789"), 4401, "invalid or revoked API key"),
        (lambda _run, bob: auth(bob.key), 4404, "unknown training run"),
        (lambda _run, _bob: "hello", 4401, 'send {"type": "auth", "api_key": "<your API key>"} first'),
        (lambda _run, bob: json.dumps({"api_key": bob.key}), 4401, 'send {"type": "auth", "api_key": '),
    ],
    ids=["wrong-key", "another-users-key", "not-json", "no-type"],
)
def test_a_socket_without_the_owners_key_is_closed_with_a_clear_reason(
    gateway_url: str,
    alice_run: dict[str, Any],
    bob: Account,
    first_message: Callable[[dict[str, Any], Account], str],
    code: int,
    reason: str,
) -> None:
    async def scenario() -> tuple[int | None, str]:
        async with connect(ws_url(gateway_url, f"/ws/training/{alice_run['id']}")) as socket:
            await socket.send(first_message(alice_run, bob))
            return await close_of(socket, timeout_s=15)

    got_code, got_reason = asyncio.run(scenario())
    assert got_code == code
    assert got_reason.startswith(reason)


@pytest.mark.parametrize(
    ("path", "code", "reason"),
    [
        ("/ws/training/not-a-uuid", 1008, "the run id must be a UUID"),
        (f"/ws/training/{uuid.UUID(int=3)}", 4404, "unknown training run"),
    ],
)
def test_bad_run_ids_are_closed_with_a_clear_reason(
    gateway_url: str, alice: Account, path: str, code: int, reason: str
) -> None:
    """An unknown run answers as another user's run does: the socket does not say which."""

    async def scenario() -> tuple[int | None, str]:
        async with connect(ws_url(gateway_url, path)) as socket:
            with contextlib.suppress(ConnectionClosed):  # a malformed id is closed at once
                await socket.send(auth(alice.key))
            return await close_of(socket, timeout_s=15)

    assert asyncio.run(scenario()) == (code, reason)


def test_the_check_a_socket_repeats_refuses_a_key_once_revoked(
    client: TestClient, alice: Account, alice_run: dict[str, Any]
) -> None:
    """Every 30 s an open socket runs this check again: a revoked key (or a deleted run) ends it."""
    made = client.post("/api/v1/me/api-keys", json={"name": "page"}, headers=alice.headers)
    assert made.status_code == 201, made.text
    key, key_id = made.json()["api_key"], made.json()["id"]
    run_id = uuid.UUID(alice_run["id"])
    opening = check(get_settings(), key, run_id)
    assert isinstance(opening, str)
    assert json.loads(opening)["type"] == "training.subscribed"
    assert client.delete(f"/api/v1/me/api-keys/{key_id}", headers=alice.headers).status_code == 200
    assert check(get_settings(), key, run_id) == Refusal(CLOSE_UNAUTHORIZED, "invalid or revoked API key")
