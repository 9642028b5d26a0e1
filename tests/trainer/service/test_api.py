"""The training API without a worker: what it refuses and how (422 naming the field, 404 for runs
that are not yours, 409 when the run's state forbids it), and what a queued run looks like. No
worker listens here, so runs stay queued; each is stopped at the end (its message becomes a no-op)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from services.trainer.evaluate import wilson_interval
from services.trainer.store import ChunkOutput, EvaluationRow, NewCheckpoint, record_chunk
from shared.db.session import session_scope
from shared.states import TrainingStage
from tests.support.accounts import Account
from tests.support.training import API, TINY, create_run


@pytest.fixture
def run(client: TestClient, owner: Account) -> Iterator[dict[str, Any]]:
    created = create_run(client, owner)
    yield created
    client.post(f"{API}/{created['id']}/stop", headers=owner.headers)


def refused(answer: Any, status: int, loc: str | None = None) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    if loc is not None:
        assert loc in [e["loc"] for e in body["errors"]], body
    return body


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"config": {"learning_rate": -1}}, "body.config.learning_rate"),
        ({"config": {"learning_rate": "fast"}}, "body.config.learning_rate"),
        ({"config": {"num_envs": 0}}, "body.config.num_envs"),
        ({"config": {"no_such_field": 1}}, "body.config.no_such_field"),
        ({"config": {"rewards": {"wins": 1}}}, "body.config.rewards.wins"),
        ({"config": {"rewards": {"team_spirit": 2}}}, "body.config.rewards.team_spirit"),
        ({"config": {"stage": "expert"}}, "body.config.stage"),
        ({"config": {"device": "tpu"}}, "body.config.device"),
        ({"device": "cuda:x"}, "body.device"),
        ({"game": "battle"}, "body.game"),
        ({"name": "no spaces"}, "body.name"),
        ({"budget": {"steps": 0}}, "body.budget.steps"),
        ({"budget": {"minutes": 5}}, "body.budget.minutes"),
        ({"budget": {}}, "body.budget"),
        ({"config": "fast"}, "body.config"),
        ({"config": {"num_envs": 16_384, "num_steps": 4096}}, "body.config"),
        (
            {"config": {"search_opponent": {"iterations": 60, "min_iterations": 120}}},
            "body.config.search_opponent",
        ),
    ],
)
@pytest.mark.slow
def test_a_bad_run_is_refused_naming_the_field(
    client: TestClient, owner: Account, body: dict[str, Any], loc: str
) -> None:
    payload = {"name": "bad-run", "config": dict(TINY), **body}
    refused(client.post(API, json=payload, headers=owner.headers), 422, loc)


def test_a_budget_or_device_said_twice_must_agree(client: TestClient, owner: Account) -> None:
    twice = {"name": "twice", "config": {**TINY, "total_steps": 1000}, "budget": {"steps": 2000}}
    detail = refused(client.post(API, json=twice, headers=owner.headers), 422)["detail"]
    assert "budget.steps and config.total_steps disagree" in detail
    agreed = create_run(
        client, owner, {"total_steps": 1000}, budget={"steps": 1000, "seconds": 60}, device="cpu"
    )
    assert (agreed["total_steps"], agreed["time_budget_s"], agreed["device"]) == (1000, 60, "cpu")
    assert client.post(f"{API}/{agreed['id']}/stop", headers=owner.headers).status_code == 200


def test_a_new_run_is_queued_with_its_whole_config(
    client: TestClient, owner: Account, run: dict[str, Any]
) -> None:
    assert run["status"] == "queued"
    assert run["iteration"] == 0
    assert run["stage"] == "solo"
    assert run["config"]["num_envs"] == 16, "defaults filled in"
    assert run["config"]["rewards"]["win"] == 1.0, "defaults filled in"
    assert run["latest_metrics"] is None
    assert run["latest_checkpoint"] is None
    assert run["league"] == []
    assert run["evaluations"] == []
    listed = client.get(API, headers=owner.headers).json()
    assert run["id"] in [item["id"] for item in listed["items"]]
    assert client.get(f"{API}/{run['id']}/metrics", headers=owner.headers).json()["items"] == []
    assert client.get(f"{API}/{run['id']}/checkpoints", headers=owner.headers).json()["total"] == 0


def test_only_the_owner_or_an_admin_sees_a_run(
    client: TestClient, owner: Account, admin: Account, make_user: Any, run: dict[str, Any]
) -> None:
    stranger = make_user("stranger")
    url = f"{API}/{run['id']}"
    for method, path, body in [
        ("GET", "", None),
        ("GET", "/metrics", None),
        ("GET", "/checkpoints", None),
        ("POST", "/stop", None),
        ("POST", "/resume", None),
        ("POST", "/export", None),
        ("PATCH", "/config", {"learning_rate": 0.001}),
    ]:
        answer = client.request(method, url + path, json=body, headers=stranger.headers)
        assert answer.status_code == 404, (method, path, answer.text)
        assert answer.json()["detail"] == f"training run {run['id']} not found"
    assert run["id"] not in [i["id"] for i in client.get(API, headers=stranger.headers).json()["items"]]
    assert client.get(url, headers=admin.headers).status_code == 200
    assert client.get(f"{API}/{uuid.uuid4()}", headers=owner.headers).status_code == 404
    assert client.get(url).status_code == 401


def test_only_learning_rate_ent_coef_rewards_and_stage_may_change(
    client: TestClient, owner: Account, run: dict[str, Any]
) -> None:
    url = f"{API}/{run['id']}/config"
    detail = refused(client.patch(url, json={"num_envs": 32}, headers=owner.headers), 422)["detail"]
    assert (
        "num_envs cannot change while a run trains: only learning_rate, ent_coef, rewards and stage can"
        in detail
    )
    refused(client.patch(url, json={"learning_rate": 2}, headers=owner.headers), 422, "body.learning_rate")
    refused(
        client.patch(url, json={"rewards": {"team_spirit": -1}}, headers=owner.headers),
        422,
        "body.rewards.team_spirit",
    )
    refused(client.patch(url, json={"stage": "expert"}, headers=owner.headers), 422, "body.stage")
    assert "nothing to change" in refused(client.patch(url, json={}, headers=owner.headers), 422)["detail"]

    changed = client.patch(url, json={"learning_rate": 0.001, "rewards": {"win": 5}}, headers=owner.headers)
    assert changed.status_code == 200, changed.text
    again = client.patch(
        url, json={"rewards": {"lead": 0.5}, "stage": "runner"}, headers=owner.headers
    ).json()
    assert again["pending_changes"] == {
        "learning_rate": 0.001,
        "rewards": {"win": 5.0, "lead": 0.5},
        "stage": "runner",
    }
    assert again["changes_version"] == 2, "not applied yet"
    assert again["config"]["learning_rate"] == 0.0003, "not applied yet"


def test_stop_resume_and_export_say_when_the_state_forbids_them(
    client: TestClient, owner: Account, run: dict[str, Any]
) -> None:
    url = f"{API}/{run['id']}"
    assert (
        "is queued already: nothing to resume"
        in refused(client.post(f"{url}/resume", headers=owner.headers), 409)["detail"]
    )
    detail = refused(client.post(f"{url}/export", headers=owner.headers), 409)["detail"]
    assert "has no checkpoint yet" in detail
    missing = {"checkpoint_id": str(uuid.uuid4())}
    refused(client.post(f"{url}/export", json=missing, headers=owner.headers), 404)
    stopped = client.post(f"{url}/stop", headers=owner.headers)
    assert stopped.status_code == 200, "a queued run stops at once"
    assert stopped.json()["status"] == "stopped", "a queued run stops at once"
    assert client.post(f"{url}/stop", headers=owner.headers).json()["status"] == "stopped"
    resumed = client.post(f"{url}/resume", headers=owner.headers)
    assert resumed.status_code == 200
    assert resumed.json()["status"] == "queued"


def test_query_parameters_are_bounded(client: TestClient, owner: Account, run: dict[str, Any]) -> None:
    url = f"{API}/{run['id']}/metrics"
    refused(client.get(url, params={"limit": 0}, headers=owner.headers), 422, "query.limit")
    refused(client.get(url, params={"after": -1}, headers=owner.headers), 422, "query.after")
    refused(client.get(API, params={"status": "sleeping"}, headers=owner.headers), 422, "query.status")
    refused(client.get(f"{API}/not-a-uuid", headers=owner.headers), 422, "path.run_id")


def test_a_chunk_clears_only_the_changes_it_applied(
    client: TestClient, owner: Account, run: dict[str, Any]
) -> None:
    """`record` (the chunk's commit): a change asked after the chunk last read them stays pending."""
    url = f"{API}/{run['id']}"
    assert client.post(f"{url}/stop", headers=owner.headers).json()["status"] == "stopped"
    client.patch(f"{url}/config", json={"learning_rate": 0.001, "rewards": {"win": 5}}, headers=owner.headers)
    seen = client.get(url, headers=owner.headers).json()
    client.patch(f"{url}/config", json={"ent_coef": 0.05, "rewards": {"win": 6}}, headers=owner.headers)

    def commit(seen_version: int, applied: dict[str, Any]) -> dict[str, Any]:
        out = ChunkOutput(uuid.UUID(run["id"]), 0, 0, TrainingStage.SOLO, 0.0, seen["config"])
        out.seen_version, out.applied = seen_version, applied
        with session_scope() as session:
            record_chunk(session, out, keep_files=2)
        pending: dict[str, Any] = client.get(url, headers=owner.headers).json()["pending_changes"]
        return pending

    assert commit(1, seen["pending_changes"]) == {"ent_coef": 0.05, "rewards": {"win": 6.0}}
    assert commit(2, {"ent_coef": 0.05, "rewards": {"win": 6.0}}) == {}


def test_a_run_without_a_teacher_cannot_be_moved_to_the_imitate_stage(
    client: TestClient, owner: Account, run: dict[str, Any]
) -> None:
    url = f"{API}/{run['id']}/config"
    detail = refused(client.patch(url, json={"stage": "imitate"}, headers=owner.headers), 409)["detail"]
    assert "has no teacher: the imitate stage needs one" in detail
    unchanged = client.get(f"{API}/{run['id']}", headers=owner.headers).json()
    assert (unchanged["pending_changes"], unchanged["changes_version"]) == ({}, 0)
    teacher = create_run(client, owner, {"teacher": "builtin:blocker"})
    moved = client.patch(f"{API}/{teacher['id']}/config", json={"stage": "imitate"}, headers=owner.headers)
    assert moved.status_code == 200, moved.text
    assert moved.json()["pending_changes"] == {"stage": "imitate"}
    assert client.post(f"{API}/{teacher['id']}/stop", headers=owner.headers).status_code == 200


def test_a_committed_evaluation_shows_in_the_runs_detail_newest_first(
    client: TestClient, owner: Account, run: dict[str, Any]
) -> None:
    """What `record` stores (one row per opponent, with the checkpoint) is what the API returns."""
    run_id = uuid.UUID(run["id"])
    assert client.post(f"{API}/{run_id}/stop", headers=owner.headers).json()["status"] == "stopped"

    def commit(iteration: int, rows: list[EvaluationRow]) -> None:
        steps = iteration * 256
        out = ChunkOutput(run_id, iteration, steps, TrainingStage.RUNNER, 1.0, run["config"])
        out.checkpoint = NewCheckpoint(
            uuid.uuid4(),
            f"{run_id}/ckpt-{iteration}.pt",
            iteration,
            steps,
            TrainingStage.RUNNER,
            None,
            None,
            {},
        )
        out.evaluation = rows
        with session_scope() as session:
            record_chunk(session, out, keep_files=2)

    def row(opponent: str, wins: int, draws: int, losses: int, **config: Any) -> EvaluationRow:
        races = wins + draws + losses
        low, high = wilson_interval(wins, races)
        return EvaluationRow(opponent, races, wins, draws, losses, wins / races, low, high, 1.5, config)

    commit(3, [row("builtin:runner", 1, 0, 3)])
    commit(6, [row("builtin:search", 1, 1, 4, max_iterations=60), row("builtin:runner", 15, 1, 4)])
    body = client.get(f"{API}/{run_id}", headers=owner.headers).json()
    assert [(e["iteration"], e["global_step"], e["stage"]) for e in body["evaluations"]] == [
        (6, 1536, "runner"),
        (3, 768, "runner"),
    ]
    runner, search = body["evaluations"][0]["results"]  # in the order they are played
    assert (runner["opponent"], runner["races"], runner["wins"], runner["draws"], runner["losses"]) == (
        "builtin:runner",
        20,
        15,
        1,
        4,
    )
    assert runner["win_rate"] == 0.75
    assert runner["interval"] == pytest.approx(list(wilson_interval(15, 20)))
    assert (search["opponent"], search["races"], search["opponent_config"]) == (
        "builtin:search",
        6,
        {"max_iterations": 60},
    )
