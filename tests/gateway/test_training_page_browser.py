"""A training run's page in Chromium, offline, on a real uvicorn gateway: the owner pastes the API
key, the charts are drawn from the metrics history, the evaluation table shows the latest
evaluation against the built-ins and the earlier ones, a `training.progress` event published as the
trainer publishes it extends the charts and moves the counters (and, in the imitate stage, shows
the agreement with the teacher), and Stop calls the API (the queued run stops at once). The list
page then shows the run.

The run is created through the API; its iterations and evaluations are written as the trainer
worker writes them (`training_metrics` and `training_evaluations` rows, then the run's counters),
since no trainer runs here.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from playwright.sync_api import Page, expect
from sqlalchemy import select, update

from services.gateway.web.pages.training import RUN_CHARTS
from services.trainer.evaluate import wilson_interval
from shared.db.models import Job, TrainingEvaluation, TrainingMetric, TrainingRun
from shared.db.session import session_scope
from shared.events import TrainingProgress, get_publisher, publish
from shared.states import JobStatus, TrainingStage
from tests.support.accounts import Account
from tests.support.browser import launch_chromium, offline_page, save_screenshot
from tests.support.training import create_default_run

STEPS_PER_ITERATION = 512
HISTORY = 5


def metrics_of(iteration: int) -> dict[str, Any]:
    """An iteration's metrics dict with every key the page charts."""
    return {
        "reward_mean": 0.1 * iteration,
        "win_rate_runner": min(1.0, 0.15 * iteration),
        "win_rate_blocker": None if iteration % 2 else 0.05 * iteration,
        "sps": 9000 + 100 * iteration,
        "policy_loss": 0.02 / iteration,
        "value_loss": 4.0 / iteration,
        "entropy": 2.5 - 0.1 * iteration,
        "approx_kl": 0.001 * iteration,
        "clip_fraction": 0.01 * iteration,
        "episode_length": 120.0 + iteration,
        "league_size": 0,
        "checkpoints_per_100_turns": 2.0 + iteration,
        "stage": "runner",
    }


def write_history(run_id: uuid.UUID, iterations: int) -> None:
    """What the trainer worker stores per iteration, for iterations 1..`iterations`."""
    with session_scope() as session:
        for iteration in range(1, iterations + 1):
            session.add(
                TrainingMetric(
                    run_id=run_id,
                    iteration=iteration,
                    global_step=iteration * STEPS_PER_ITERATION,
                    metrics=metrics_of(iteration),
                )
            )
        session.execute(
            update(TrainingRun)
            .where(TrainingRun.id == run_id)
            .values(
                iteration=iterations,
                global_step=iterations * STEPS_PER_ITERATION,
                stage=TrainingStage.RUNNER,
                elapsed_s=95.0,
            )
        )


EVALUATIONS = {
    3: [("builtin:runner", 9, 2, 9), ("builtin:blocker", 4, 0, 16)],
    5: [("builtin:runner", 15, 1, 4), ("builtin:blocker", 11, 0, 9), ("builtin:search", 1, 0, 5)],
}
"""(opponent, wins, draws, losses) per evaluated iteration."""


def write_evaluations(run_id: uuid.UUID) -> None:
    """What the trainer worker stores with an evaluated checkpoint: one row per opponent."""
    with session_scope() as session:
        for iteration, results in EVALUATIONS.items():
            for opponent, wins, draws, losses in results:
                races = wins + draws + losses
                low, high = wilson_interval(wins, races)
                session.add(
                    TrainingEvaluation(
                        run_id=run_id,
                        iteration=iteration,
                        opponent=opponent,
                        global_step=iteration * STEPS_PER_ITERATION,
                        stage=TrainingStage.RUNNER,
                        races=races,
                        wins=wins,
                        draws=draws,
                        losses=losses,
                        win_rate=wins / races,
                        win_rate_low=low,
                        win_rate_high=high,
                        seconds=2.5,
                        opponent_config={"max_iterations": 60} if opponent == "builtin:search" else {},
                    )
                )


def chart_points(page: Page) -> dict[str, int]:
    sizes: list[list[Any]] = page.evaluate("() => window.arenaTraining.charts.map((c) => [c.id, c.size])")
    return {str(chart_id): int(size) for chart_id, size in sizes}


def expected_points(iterations: int) -> dict[str, int]:
    """Points per chart after iterations 1..n: one per series with a value (null values are gaps)."""
    counts = {}
    for chart in RUN_CHARTS:
        counts[chart.id] = sum(
            1
            for i in range(1, iterations + 1)
            for series in chart.series
            if isinstance(metrics_of(i).get(series.key), int | float)
        )
    return counts


def job_status(run_id: uuid.UUID) -> JobStatus:
    with session_scope() as session:
        status = session.scalar(
            select(Job.status).join(TrainingRun, TrainingRun.job_id == Job.id).where(TrainingRun.id == run_id)
        )
    assert status is not None
    return JobStatus(status)


@pytest.mark.browser
def test_the_run_page_draws_the_history_follows_live_events_and_stops_the_run(
    gateway_url: str, client: TestClient, alice: Account
) -> None:
    run = create_default_run(client, alice)
    run_id = uuid.UUID(run["id"])
    write_history(run_id, HISTORY)
    write_evaluations(run_id)

    with launch_chromium() as browser, offline_page(browser, gateway_url) as offline:
        page = offline.open(f"/training/{run_id}")
        expect(page.locator("[data-run-message]")).to_contain_text("Paste your API key")
        page.fill("form[data-key-form] input[name=api_key]", alice.key)
        page.click("form[data-key-form] button[type=submit]")

        page.wait_for_selector(
            '[data-training-run][data-socket-state="open"]', state="attached", timeout=15_000
        )
        page.wait_for_selector('[data-training-run][data-history="loaded"]', state="attached", timeout=15_000)
        page.wait_for_selector('[data-training-run][data-detail-loaded="true"]', state="attached")
        expect(page.locator("[data-run-name]")).to_have_text(run["name"])
        expect(page.locator("[data-iteration]")).to_have_text(str(HISTORY))
        expect(page.locator("[data-run-status]")).to_have_text("queued")
        expect(page.locator("[data-stage]")).to_have_text("runner")
        assert chart_points(page) == expected_points(HISTORY)
        drawn = page.evaluate("() => window.arenaTraining.charts.every((c) => c.draws > 0)")
        assert drawn, "a chart was never drawn"

        expect(page.locator("[data-evaluation-at]")).to_have_text(
            f"At iteration 5 ({5 * STEPS_PER_ITERATION:,} steps, stage runner):"
        )
        rows = page.locator("[data-evaluation] tr")
        expect(rows).to_have_count(3)
        expect(rows.nth(0).locator("td")).to_have_text(
            ["runner", "20", "15/1/4", "75.0%", "53.1% \u2013 88.8%"]
        )
        expect(rows.nth(1).locator("td")).to_have_text(
            ["blocker", "20", "11/0/9", "55.0%", "34.2% \u2013 74.2%"]
        )
        expect(rows.nth(2).locator("td")).to_have_text(
            ["search (60 plans a turn)", "6", "1/0/5", "16.7%", "3.0% \u2013 56.4%"]
        )
        expect(page.locator("[data-evaluation-empty]")).to_have_text("")
        earlier = page.locator("[data-evaluation-history] tr")
        expect(earlier).to_have_count(1)
        expect(earlier.locator("td")).to_have_text(
            ["3", f"{3 * STEPS_PER_ITERATION:,}", "runner", "45.0% (9/2/9)", "20.0% (4/0/16)", "-"]
        )
        expect(page.locator("[data-evaluation-settings]")).to_contain_text("every 5 chunks")
        # A run without a teacher cannot be moved to the imitate stage.
        expect(page.locator("select[name=stage] option[value=imitate]")).to_be_disabled()

        live = TrainingProgress(
            run_id=run_id,
            status=JobStatus.RUNNING,
            iteration=HISTORY + 1,
            global_step=(HISTORY + 1) * STEPS_PER_ITERATION,
            stage=TrainingStage.RUNNER,
            metrics=metrics_of(HISTORY + 1),
        )
        publish(live)
        get_publisher().flush(5)
        expect(page.locator("[data-iteration]")).to_have_text(str(HISTORY + 1))
        expect(page.locator("[data-global-step]")).to_have_text(f"{(HISTORY + 1) * STEPS_PER_ITERATION:,}")
        expect(page.locator("[data-win-rate-runner]")).to_have_text("90.0%")
        assert chart_points(page) == expected_points(HISTORY + 1)
        expect(page.locator("[data-imitation-fact]")).to_be_hidden()
        save_screenshot(page, "training-run-live")

        imitating = TrainingProgress(
            run_id=run_id,
            status=JobStatus.RUNNING,
            iteration=HISTORY + 2,
            global_step=(HISTORY + 2) * STEPS_PER_ITERATION,
            stage=TrainingStage.IMITATE,
            metrics={**metrics_of(HISTORY + 2), "stage": "imitate", "imitation_agreement": 0.625},
        )
        publish(imitating)
        get_publisher().flush(5)
        expect(page.locator("[data-imitation-agreement]")).to_have_text("62.5%")
        expect(page.locator("[data-imitation-fact]")).to_be_visible()

        page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing wider than the screen
        expect(page.locator("[data-training-run]")).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        save_screenshot(page, "training-run-phone")
        page.set_viewport_size({"width": 1280, "height": 900})

        page.click('[data-control="stop"]')
        expect(page.locator("[data-run-message]")).to_have_text("Stop: done.")
        expect(page.locator("[data-run-status]")).to_have_text("stopped")
        assert job_status(run_id) == JobStatus.STOPPED
        expect(page.locator('[data-control="resume"]')).to_be_enabled()
        expect(page.locator('[data-control="stop"]')).to_be_disabled()

        page.click("header nav a[href='/training']")
        row = page.locator(f"[data-runs] tr[data-run-id='{run_id}']")
        expect(row.locator("a")).to_have_text(run["name"])
        expect(row.locator("[data-status]")).to_have_text("stopped")
        expect(row.locator("[data-win-rate]")).to_have_text("75.0%")  # the stored iterations' newest
        save_screenshot(page, "training-list")

        # The only request that may fail: the race, which no trainer has recorded here.
        race = f"/api/v1/training/runs/{run_id}/race"
        offline.failed = [
            line for line in offline.failed if not (line.startswith("404 ") and line.endswith(race))
        ]
        offline.assert_stayed_offline()
