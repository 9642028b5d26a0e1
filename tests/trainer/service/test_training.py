"""Training runs on a real trainer worker (the command compose runs), driven through the real API:
chunks commit checkpoints and metrics, a stop lands at an iteration boundary and a resume goes on
from the last checkpoint, a config change takes effect at the next iteration, a run on a device
the worker lacks fails at once, a spent budget finishes the run, and checkpoints export as hosted
bot versions that pass the gate."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pytest
import torch
from fastapi.testclient import TestClient

from shared.config import get_settings
from shared.events import TrainingProgress, TrainingStatus
from shared.sandbox.gate import check_source
from shared.states import JobStatus
from tests.support.accounts import Account
from tests.support.processes import ManagedProcess
from tests.support.training import (
    API,
    STEPS_PER_ITERATION,
    EventLog,
    checkpoint_rows,
    create_run,
    job_of,
    metric_rows,
    run_row,
    wait_for,
    wait_status,
)

pytestmark = pytest.mark.slow

KEEP = 1
"""ARENA_TRAINING_KEEP_CHECKPOINTS of the test workers."""


def detail(client: TestClient, owner: Account, run_id: str) -> dict[str, Any]:
    answer = client.get(f"{API}/{run_id}", headers=owner.headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def series(client: TestClient, owner: Account, run_id: str) -> list[dict[str, Any]]:
    answer = client.get(f"{API}/{run_id}/metrics", params={"limit": 5000}, headers=owner.headers)
    assert answer.status_code == 200, answer.text
    items: list[dict[str, Any]] = answer.json()["items"]
    return items


def stop(client: TestClient, owner: Account, run_id: str, trainer: ManagedProcess) -> dict[str, Any]:
    answer = client.post(f"{API}/{run_id}/stop", headers=owner.headers)
    assert answer.status_code == 200, answer.text
    wait_status(run_id, JobStatus.STOPPED, trainer)
    return detail(client, owner, run_id)


def checkpoint_files(run_id: str) -> set[str]:
    folder = get_settings().training_checkpoints_path() / run_id
    return {f"{run_id}/{path.name}" for path in folder.glob("ckpt-*.pt")}


def test_a_run_trains_in_chunks_stops_and_resumes_from_its_last_checkpoint(
    client: TestClient, owner: Account, trainer: ManagedProcess, training_events: EventLog
) -> None:
    run_id = create_run(client, owner)["id"]
    first = wait_for(lambda: checkpoint_rows(run_id), "a chunk committed", trainer, timeout=60)[0]
    exported = client.post(
        f"{API}/{run_id}/export", json={"checkpoint_id": str(first.id)}, headers=owner.headers
    )
    assert exported.status_code == 201, exported.text
    wait_for(
        lambda: len(checkpoint_rows(run_id)) >= KEEP + 2, "two more chunks committed", trainer, timeout=60
    )

    points = series(client, owner, run_id)
    now = detail(client, owner, run_id)  # read after the series: training goes on between the two
    assert now["status"] in ("running", "queued")
    assert now["error"] is None
    assert [p["iteration"] for p in points] == list(range(1, len(points) + 1)), "one row per iteration"
    assert all(p["global_step"] == p["iteration"] * STEPS_PER_ITERATION for p in points)
    assert {"policy_loss", "entropy", "sps", "win_rate_runner", "learning_rate"} <= set(points[0]["metrics"])
    assert now["latest_metrics"]["iteration"] >= points[-1]["iteration"]
    assert any(entry["name"] == "latest" for entry in now["league"])
    assert f"training run {run_id}: iteration 1, {STEPS_PER_ITERATION} steps, stage solo" in trainer.log()

    saved = checkpoint_rows(run_id)
    assert [c.iteration for c in saved] == sorted({c.iteration for c in saved}), "one checkpoint per chunk"
    assert all(c.bot_source and not check_source(c.bot_source) for c in saved), "each exports a bot"
    kept = [c for c in saved if c.pruned_at is None]
    expected = [saved[0].iteration, *[c.iteration for c in saved][-KEEP:]]
    assert [c.iteration for c in kept] == expected, "older files are let go, but not an exported one's"
    wait_for(
        lambda: checkpoint_files(run_id) <= {c.path for c in checkpoint_rows(run_id) if not c.pruned_at},
        "files pruned",
    )
    assert {c.path for c in kept} <= checkpoint_files(run_id)

    stopped = stop(client, owner, run_id, trainer)
    last = checkpoint_rows(run_id)[-1]
    assert stopped["iteration"] == last.iteration == stopped["checkpoint_iteration"], (
        "stopped on a checkpoint"
    )
    assert max(metric_rows(run_id)) == last.iteration
    time.sleep(1.0)
    assert run_row(run_id).iteration == last.iteration
    assert max(metric_rows(run_id)) == last.iteration

    resumed_at = datetime.now(UTC)
    answer = client.post(f"{API}/{run_id}/resume", headers=owner.headers)
    # The worker may claim the resumed chunk before the answer is written: queued or running.
    assert answer.status_code == 200, answer.text
    assert answer.json()["status"] in ("queued", "running"), answer.text
    wait_for(lambda: run_row(run_id).iteration >= last.iteration + 2, "training again", trainer)
    points = series(client, owner, run_id)
    assert [p["iteration"] for p in points] == list(range(1, len(points) + 1))
    after = [p for p in points if datetime.fromisoformat(p["created_at"]) >= resumed_at]
    assert after[0]["iteration"] == last.iteration + 1, "resumed from the last checkpoint"
    assert after[0]["global_step"] == last.global_step + STEPS_PER_ITERATION

    stop(client, owner, run_id, trainer)
    progress = [e for e in training_events.of(run_id) if isinstance(e, TrainingProgress)]
    assert progress
    assert progress[0].iteration == 1
    assert progress[0].metrics["iteration"] == 1
    assert progress[0].metrics.keys() >= {"entropy", "policy_loss", "sps"}
    statuses = [e.status for e in training_events.of(run_id) if isinstance(e, TrainingStatus)]
    phases = [JobStatus.QUEUED, JobStatus.RUNNING, JobStatus.STOPPED, JobStatus.QUEUED, JobStatus.RUNNING]
    assert all(s in statuses for s in phases), statuses
    assert statuses[-1] == JobStatus.STOPPED


def test_a_config_change_takes_effect_at_the_next_iteration(
    client: TestClient, owner: Account, trainer: ManagedProcess
) -> None:
    old = {"learning_rate": 0.001, "ent_coef": 0.003}
    new = {"learning_rate": 0.0005, "ent_coef": 0.02}
    run_id = create_run(client, owner, {**old, "anneal_lr": False})["id"]
    wait_for(lambda: run_row(run_id).iteration >= 2, "two iterations", trainer, timeout=60)

    asked_after = run_row(run_id).iteration
    answer = client.patch(f"{API}/{run_id}/config", json=new, headers=owner.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json()["pending_changes"] == new
    assert answer.json()["changes_version"] == 1

    def switched() -> int | None:
        rows = metric_rows(run_id)
        return next((i for i, m in sorted(rows.items()) if m["learning_rate"] == new["learning_rate"]), None)

    first = wait_for(switched, "an iteration with the new learning rate", trainer)
    rows = metric_rows(run_id)
    assert first > asked_after, "a change never reaches an iteration that had started"
    for iteration, metrics in rows.items():
        values = new if iteration >= first else old
        assert (metrics["learning_rate"], metrics["ent_coef"]) == (
            values["learning_rate"],
            values["ent_coef"],
        )
    assert rows[first]["config_changes"] == new
    assert all("config_changes" not in m for i, m in rows.items() if i != first), "applied once"

    def committed() -> dict[str, Any] | None:
        body = detail(client, owner, run_id)
        return body if body["pending_changes"] == {} else None

    settled = wait_for(committed, "the change committed with a checkpoint", trainer)
    assert (settled["config"]["learning_rate"], settled["config"]["ent_coef"]) == (0.0005, 0.02)

    answer = client.patch(f"{API}/{run_id}/config", json={"rewards": {"win": 5}}, headers=owner.headers)
    assert answer.status_code == 200, answer.text
    rewards = wait_for(
        lambda: (r := detail(client, owner, run_id)["config"]["rewards"])["win"] == 5.0 and r,
        "the reward change committed",
        trainer,
    )
    assert rewards["team_spirit"] == 0.3, "the other weights stay"
    assert rewards["lead"] == 1.0, "the other weights stay"
    stop(client, owner, run_id, trainer)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU: the run would train")
def test_a_run_on_a_device_the_worker_lacks_fails_at_once_with_a_clear_error(
    client: TestClient, owner: Account, trainer: ManagedProcess, training_events: EventLog
) -> None:
    run_id = create_run(client, owner, {"device": "cuda"})["id"]
    job = wait_status(run_id, JobStatus.FAILED, trainer)
    assert job.attempts == 1, "retrying cannot help: no retries"
    failed = detail(client, owner, run_id)
    assert failed["status"] == "failed"
    assert failed["iteration"] == 0
    assert failed["latest_checkpoint"] is None
    assert "device 'cuda' requested but this machine has no CUDA GPU" in failed["error"]
    assert "start a new run with device auto or cpu" in failed["error"]
    wait_for(
        lambda: any(
            isinstance(e, TrainingStatus) and e.status == JobStatus.FAILED for e in training_events.of(run_id)
        ),
        "the failure announced",
    )
    announced = [e for e in training_events.of(run_id) if isinstance(e, TrainingStatus) and e.error]
    assert announced
    assert "no CUDA GPU" in (announced[-1].error or "")


def test_a_spent_budget_finishes_the_run_and_its_checkpoints_export_as_bot_versions(
    client: TestClient, owner: Account, trainer: ManagedProcess
) -> None:
    run_id = create_run(client, owner, budget={"steps": 3 * STEPS_PER_ITERATION})["id"]
    early = client.get(f"{API}/{run_id}/race", headers=owner.headers)
    wait_status(run_id, JobStatus.FINISHED, trainer, timeout=60)
    done = detail(client, owner, run_id)
    # Each checkpoint comes with a showcase race of its bot against the built-in runner.
    if early.status_code != 200:
        assert early.status_code == 404
        assert "no showcase race yet" in early.json()["detail"]
    race = client.get(f"{API}/{run_id}/race", headers=owner.headers)
    assert race.status_code == 200, race.text
    replay = race.json()
    assert replay["game"] == "podracing"
    assert len(replay["frames"]) > 10
    assert replay["result"]["turns"] > 0
    assert client.get(f"{API}/{run_id}/race").status_code == 401
    assert (done["iteration"], done["global_step"], done["progress"]) == (3, 3 * STEPS_PER_ITERATION, 1.0)
    assert done["checkpoint_iteration"] == 3
    assert done["latest_checkpoint"]["exportable"]
    url = f"{API}/{run_id}"
    for method, path, body in [
        ("POST", "/stop", None),
        ("POST", "/resume", None),
        ("PATCH", "/config", {"ent_coef": 0.1}),
    ]:
        answer = client.request(method, url + path, json=body, headers=owner.headers)
        assert answer.status_code == 409, (path, answer.text)
        assert "is finished" in answer.json()["detail"], (path, answer.text)

    first = client.post(f"{url}/export", json={"bot_name": f"trained-{run_id[:8]}"}, headers=owner.headers)
    assert first.status_code == 201, first.text
    exported = first.json()
    bot = exported["bot"]
    assert exported["bot_created"]
    assert bot["name"] == f"trained-{run_id[:8]}"
    assert (bot["kind"], bot["origin"], bot["game"], bot["status"]) == (
        "hosted",
        "trainer",
        "podracing",
        "active",
    )
    assert bot["owner_id"] == owner.id
    assert exported["version"]["number"] == 1
    assert exported["version"]["notes"]["training_checkpoint_id"] == done["latest_checkpoint"]["id"]

    version = client.get(f"/api/v1/bots/{bot['id']}/versions/1", headers=owner.headers).json()
    assert version["contract"] == "decide"
    assert not check_source(version["source"], contract="decide")
    assert "def decide(" in version["source"]

    checkpoint = checkpoint_rows(run_id)[0]
    second = client.post(f"{url}/export", json={"checkpoint_id": str(checkpoint.id)}, headers=owner.headers)
    assert second.status_code == 201, second.text
    assert not second.json()["bot_created"]
    assert second.json()["bot"]["id"] == bot["id"]
    assert second.json()["version"]["number"] == 2
    after = detail(client, owner, run_id)
    assert after["bot_id"] == bot["id"]
    listed = client.get(f"{url}/checkpoints", headers=owner.headers).json()["items"]
    assert [item["exported_at"] is not None for item in listed][-1], "the exported checkpoint says so"
    assert job_of(run_id).attempts == 0
    assert job_of(run_id).error is None


def test_checkpoints_are_evaluated_against_the_built_ins_and_the_api_shows_the_table(
    client: TestClient, owner: Account, trainer: ManagedProcess
) -> None:
    small = {"every_chunks": 1, "races": 2, "search_races": 2, "search_iterations": 2}
    run_id = create_run(client, owner, {"evaluation": small}, budget={"steps": 2 * STEPS_PER_ITERATION})["id"]
    wait_status(run_id, JobStatus.FINISHED, trainer, timeout=90)
    done = detail(client, owner, run_id)
    assert done["config"]["evaluation"] == small

    evaluations = done["evaluations"]
    evaluated = [c.iteration for c in checkpoint_rows(run_id)][::-1]
    assert [e["iteration"] for e in evaluations] == evaluated, (
        "every checkpoint (every_chunks 1), newest first"
    )
    latest = evaluations[0]
    assert (latest["iteration"], latest["global_step"]) == (2, 2 * STEPS_PER_ITERATION)
    assert latest["stage"] == done["stage"]
    results = latest["results"]
    assert [r["opponent"] for r in results] == ["builtin:runner", "builtin:blocker", "builtin:search"]
    for result in results:
        assert result["races"] == 2 == result["wins"] + result["draws"] + result["losses"], result
        assert result["win_rate"] == result["wins"] / 2
        low, high = result["interval"]
        assert 0 <= low <= result["win_rate"] <= high <= 1
    assert [r["opponent_config"] for r in results] == [{}, {}, {"max_iterations": 2}]
    log = trainer.log()
    assert f"training run {run_id}: iteration 2 evaluated in" in log
    assert "builtin:search" in log
