"""`arena train`, `arena export` and `arena eval`: a tiny training run stopped by Ctrl+C (it saves)
and resumed, exported as a hosted bot and as a CodinGame script, both evaluated in real races;
errors are one clear line.

Most commands run as real processes. A few that need torch run in this process through
`main([...])` instead: importing torch takes seconds on a busy machine, once here rather than in
every process."""

from __future__ import annotations

import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.main import main
from tests.support.cli import assert_one_line_error, finish_cli, run_cli, start_cli

TINY = ["--num-envs", "16", "--threads", "1", "--config", '{"num_steps": 16, "num_minibatches": 2}']
"""Iterations of 256 steps on one thread: a few seconds even on a busy machine."""
ONE_THREAD = {"OMP_NUM_THREADS": "1"}
ONE_LAP = '{"laps": 1}'


@pytest.fixture(autouse=True)
def _keep_torch_threads() -> Iterator[None]:
    """`arena train --threads 1` run in this process must not leave other tests on one thread."""
    import torch

    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


@pytest.mark.slow
def test_train_stop_resume_export_and_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A tiny run as a real process, stopped by Ctrl+C after its second iteration: it saves and exits.
    process = start_cli(
        "train", "podracing", "--out", "run", "--save-every", "1", *TINY, cwd=tmp_path, env=ONE_THREAD
    )
    assert process.stdout is not None
    progress: list[str] = []
    while len(progress) < 2:
        line = process.stdout.readline()
        assert line or process.poll() is None, process.stderr.read() if process.stderr else ""
        if line.startswith("it "):
            progress.append(line)
    process.send_signal(signal.SIGINT)
    run = finish_cli(process, timeout=60)
    assert run.returncode == 130, run.stderr
    assert "Traceback" not in run.stderr
    assert "stopping after this iteration" in run.stderr
    for name in ("steps", "stage solo", "sps", "win runner", "blocker", "cp/100t", "entropy"):
        assert name in progress[0], progress[0]
    assert re.search(r"^it\s+2\s+steps\s+512\b", progress[1]), progress[1]
    stopped = re.search(r"interrupted: iteration (\d+), ([\d,]+) steps", run.stdout)
    assert stopped, run.stdout
    iteration, steps = int(stopped[1]), int(stopped[2].replace(",", ""))
    assert iteration >= 2
    assert steps == 256 * iteration
    folder = tmp_path / "run"
    names = sorted(p.name for p in folder.iterdir())
    assert names == [f"ckpt-{i:06d}.pt" for i in range(1, iteration + 1)] + ["latest.pt", "metrics.jsonl"], (
        names
    )
    assert (folder / "latest.pt").read_bytes() == (folder / f"ckpt-{iteration:06d}.pt").read_bytes()
    logged = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    assert [row["iteration"] for row in logged] == list(range(1, iteration + 1))
    assert all(row["iteration_seconds"] > 0 and row["device"] == "cpu" for row in logged)

    # Resumed (in this process: see the module docstring) for one more iteration, to its budget.
    monkeypatch.chdir(tmp_path)
    assert (
        main(
            ["train", "podracing", "--resume", "run/latest.pt", "--steps", str(steps + 256), "--threads", "1"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines() if line.startswith("it ")] == [str(iteration + 1)]
    assert f"done: iteration {iteration + 1}, {steps + 256:,} steps" in out
    assert (folder / "latest.pt").read_bytes() == (folder / f"ckpt-{iteration + 1:06d}.pt").read_bytes()
    logged = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
    assert [row["iteration"] for row in logged] == list(range(1, iteration + 2)), "the resumed chunk appends"

    assert main(["export", "run/latest.pt", "--out", "bots/bot.py"]) == 0
    assert main(["export", "run/latest.pt", "--out", "cg.py", "--codingame"]) == 0
    out = capsys.readouterr().out
    assert "wrote bots/bot.py: a hosted bot (decide)" in out
    assert "wrote cg.py: a CodinGame script" in out
    assert f"iteration {iteration + 1}" in (tmp_path / "bots" / "bot.py").read_text(encoding="utf-8")

    evaluation = run_cli(
        "eval",
        "bots/bot.py",
        "--against",
        "builtin:runner",
        "--races",
        "2",
        "--config",
        ONE_LAP,
        cwd=tmp_path,
    )
    assert evaluation.returncode == 0, evaluation.stderr
    assert "bot.py vs builtin:runner: 2 races" in evaluation.stdout
    rate = re.search(
        r"win rate (\d\.\d+) \(95% interval (\d\.\d+) to (\d\.\d+)\)  W (\d+)  L (\d+)  D (\d+)",
        evaluation.stdout,
    )
    assert rate, evaluation.stdout
    assert float(rate[2]) <= float(rate[1]) <= float(rate[3])
    assert sum(int(rate[i]) for i in (4, 5, 6)) == 2
    assert re.search(r"bot\.py: \d+\.\d+ ms per decide \(mean\), 0 failed turns", evaluation.stdout)
    assert "2/2 races" in evaluation.stderr

    as_json = run_cli(
        "eval", "codingame:cg.py", "--against", "builtin:blocker", "--races", "2", "--seed", "5",
        "--config", ONE_LAP, "--json", cwd=tmp_path,
    )  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    assert result["bot"] == "codingame:cg.py"
    assert result["opponent"] == "builtin:blocker"
    assert result["races"] == result["wins"] + result["losses"] + result["draws"] == 2
    assert result["bot_failed_turns"] == 0
    assert result["bot_ms_per_decide"] > 0
    assert 0.0 <= result["interval_95"][0] <= result["win_rate"] <= result["interval_95"][1] <= 1.0


@pytest.mark.slow
def test_clear_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "broken.pt").write_text("not a checkpoint")
    assert_one_line_error(
        run_cli("export", "broken.pt", "--out", "bot.py", cwd=tmp_path),
        "broken.pt is not a training checkpoint",
    )
    assert_one_line_error(
        run_cli("export", "missing.pt", "--out", "bot.py", cwd=tmp_path), "no such checkpoint file"
    )
    assert not (tmp_path / "bot.py").exists()
    assert_one_line_error(run_cli("train", "chess", cwd=tmp_path), "unknown game 'chess'")
    assert_one_line_error(run_cli("train", "battle", cwd=tmp_path), "battle cannot be trained here")
    assert_one_line_error(
        run_cli("train", "podracing", "--resume", "broken.pt", cwd=tmp_path),
        "broken.pt is not a training checkpoint",
    )
    assert_one_line_error(
        run_cli("train", "podracing", "--resume", "broken.pt", "--seed", "8", cwd=tmp_path),
        "--seed cannot change when resuming",
    )
    shipped = str(Path(__file__).resolve().parents[2] / "examples" / "training" / "podracing" / "latest.pt")
    assert_one_line_error(
        run_cli("train", "podracing", "--resume", shipped, "--config", '{"num_envs": 0}', cwd=tmp_path),
        "--config: num_envs must be a whole number of at least 1",
    )
    assert_one_line_error(
        run_cli("train", "podracing", "--resume", shipped, "--config", '{"gamma": 0.9}', cwd=tmp_path),
        "--config: gamma cannot change when resuming",
    )
    assert_one_line_error(
        run_cli(
            "train",
            "podracing",
            "--resume",
            shipped,
            "--config",
            '{"search_opponent": {"races": -1}}',
            cwd=tmp_path,
        ),
        "--config: search_opponent.races: Input should be greater than or equal to 0",
    )
    assert_one_line_error(
        run_cli(
            "train",
            "podracing",
            "--resume",
            shipped,
            "--config",
            '{"lookahead": {"horizon": 0}}',
            cwd=tmp_path,
        ),
        "--config: lookahead.horizon: Input should be greater than or equal to 1",
    )
    reversed_spread = '{"search_opponent": {"races": 2, "iterations": 60, "min_iterations": 120}}'
    assert_one_line_error(
        run_cli("train", "podracing", "--num-envs", "4", "--config", reversed_spread, cwd=tmp_path),
        "search_opponent.min_iterations (120) exceeds search_opponent.iterations (60)",
    )
    assert_one_line_error(
        run_cli("train", "podracing", "--resume", shipped, "--config", reversed_spread, cwd=tmp_path),
        "--config: search_opponent: search_opponent.min_iterations (120) cannot exceed",
        "search_opponent.iterations (60)",
    )
    assert_one_line_error(
        run_cli("eval", "builtin:nobody", "--races", "2", cwd=tmp_path), "unknown built-in bot 'nobody'"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["train", "podracing", "--config", '{"learning_rat": 0.1}']) == 1
    assert "arena: --config: unknown setting(s) learning_rat; known: " in capsys.readouterr().err


@pytest.mark.slow
def test_train_says_how_it_rounds_the_step_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Iterations are whole (16 races x 16 turns = 256 steps here): --steps 300 plays 512 steps, and
    the first line says so before the run starts."""
    monkeypatch.chdir(tmp_path)
    assert main(["train", "podracing", "--steps", "300", "--out", "run", *TINY]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert "300 steps -> 512 (2 iterations of 256)" in first, first
    assert "done: iteration 2, 512 steps" in out, out
