"""`arena evolve`: a small offline evolution run as a real process against the test database, its
run directory, Ctrl+C and --resume, and one-line errors for bad options."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from shared.sandbox.gate import check_source
from tests.support.cli import assert_one_line_error, finish_cli, run_cli, start_cli

SMALL = [
    "--children", "1", "--quick", "1", "--tournament", "1", "--match-config", '{"time_limit_s": 4}',
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.usefixtures("database_url")
def test_an_offline_run_writes_its_run_directory(tmp_path: Path) -> None:
    out = tmp_path / "run"
    done = run_cli(
        "evolve", "battle", "--generations", "2", *SMALL, "--selection", "fitness",
        "--constants-table", "40", "--out", str(out), cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    assert "best program p" in done.stdout
    generations = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("generation ")]
    assert generations == ["0", "1"], done.stdout  # each generation once, when it closes
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "finished"
    assert summary["game"] == "battle"
    search = json.loads((out / "config.json").read_text())["search"]
    assert search["parent_selection"] == "fitness"
    assert search["constants_table"] == 40
    assert (out / "evolution_log.jsonl").read_text().strip()
    assert (out / "root_llm_log.jsonl").read_text().strip()
    codes = sorted(out.glob("generations/gen_*/programs/p*/code.py"))
    assert len(codes) >= 2
    metrics = json.loads((codes[0].parent / "metrics.json").read_text())
    assert "fitness" in metrics
    best = (out / "best_bot.py").read_text()
    assert not check_source(best, contract="decide")


@pytest.mark.slow
@pytest.mark.usefixtures("database_url")
def test_ctrl_c_stops_after_the_step_and_resume_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "run"
    process = start_cli("evolve", "battle", "--generations", "4", *SMALL, "--out", str(out), cwd=tmp_path)
    deadline = time.monotonic() + 120
    while not (out / "summary.json").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stopped = finish_cli(process, timeout=200)
    assert stopped.returncode == 0, stopped.stderr + stopped.stdout
    assert "stopped" in stopped.stdout
    assert "--resume" in stopped.stdout
    run_id = stopped.stdout.split("--resume ")[1].split()[0]
    resumed = run_cli("evolve", "battle", "--resume", run_id, "--out", str(out), cwd=tmp_path, timeout=300)
    assert resumed.returncode == 0, resumed.stderr + resumed.stdout
    assert json.loads((out / "summary.json").read_text())["status"] == "finished"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["evolve", "battle", "--llm-model", "gpt-4.1"], "need --llm-base-url"),
        (["evolve", "battle", "--llm-base-url", "http://127.0.0.1:9/v1"], "needs --llm-model"),
        (["evolve", "battle", "--llm-endpoint", "house"], "it needs --server"),
        (["evolve", "battle", "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-endpoint", "x"], "pick one"),
        (["evolve", "battle", "--llm-base-url", "http://127.0.0.1:0/v1", "--llm-model", "m"], "port 0"),
        (["evolve", "chess"], "cannot evolve 'chess'"),
        (["evolve", "battle", "--generations", "0"], "max_generations"),
        (["evolve", "battle", "--constants-table", "-1"], "constants_table"),
        (["evolve", "battle", "--match-config", "{nope"], "--match-config is not JSON"),
        (["evolve", "battle", "--seed", "/nonexistent/bot.py"], "cannot read"),
    ],
)
@pytest.mark.slow
@pytest.mark.usefixtures("database_url")
def test_bad_options_are_one_line_errors(tmp_path: Path, args: list[str], expected: str) -> None:
    assert_one_line_error(run_cli(*args, cwd=tmp_path), expected)
