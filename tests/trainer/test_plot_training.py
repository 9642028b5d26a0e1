"""scripts/plot_training.py: a run's metrics.jsonl files (chunks of `arena train --out`) become a
PNG of win rates against steps and wall time, with stage changes and evaluation points."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from scripts.plot_training import PlotError, curves, main, read_evaluations, read_records, stage_changes

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
STEPS_PER_ITERATION = 4096


def record(iteration: int) -> dict[str, Any]:
    """An iteration's line as `arena train` appends it (the trainer's metrics, a few of them)."""
    stage = "solo" if iteration <= 20 else "runner" if iteration <= 60 else "self_play"
    racing = stage != "solo"
    return {
        "iteration": iteration,
        "global_step": iteration * STEPS_PER_ITERATION,
        "stage": stage,
        "sps": 20_000,
        "win_rate_runner": min(1.0, 0.01 * iteration) if racing else None,
        "win_rate_blocker": (math.nan if iteration % 7 == 0 else 0.005 * iteration) if racing else None,
        "entropy": 2.0,
        "iteration_seconds": 0.25,
        "device": "cpu",
    }


def write_jsonl(path: Path, iterations: range) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    # json.dumps writes NaN as the bare token NaN, as the trainer's log does.
    path.write_text("".join(json.dumps(record(i)) + "\n" for i in iterations), encoding="utf-8")
    return path


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_chunks_make_one_run_and_a_later_chunk_replaces_what_it_retrained(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a" / "metrics.jsonl", range(1, 46))
    second = write_jsonl(tmp_path / "b" / "metrics.jsonl", range(41, 81))  # resumed from iteration 40
    run = curves(read_records([first, second]))
    assert list(run.iteration) == list(range(1, 81))
    assert run.minutes[-1] == pytest.approx(80 * 0.25 / 60)
    assert stage_changes(run.stages) == [(0, "solo"), (20, "runner"), (60, "self_play")]
    assert math.isnan(run.win_rates["runner"][0]), "no runner raced in solo: a gap"


def test_the_script_writes_a_png_with_evaluation_points(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "a" / "metrics.jsonl", range(1, 46))
    second = write_jsonl(tmp_path / "b" / "metrics.jsonl", range(41, 81))
    detail = {  # a training run's API detail: its evaluations are the points
        "evaluations": [
            {
                "iteration": 60,
                "global_step": 60 * STEPS_PER_ITERATION,
                "results": [
                    {"opponent": "builtin:runner", "win_rate": 0.75, "interval": [0.53, 0.89]},
                    {"opponent": "builtin:search", "win_rate": 0.0, "interval": [0.0, 0.39]},
                ],
            }
        ]
    }
    evaluations = tmp_path / "detail.json"
    evaluations.write_text(json.dumps(detail), encoding="utf-8")
    out = tmp_path / "curves.png"
    assert main([str(first), str(second), "--out", str(out), "--evaluations", str(evaluations)]) == 0
    width, height = png_size(out)
    assert width > 1000, "two panels side by side"
    assert 400 < height < width
    assert out.stat().st_size > 20_000, "something was drawn"


def test_evaluations_read_from_a_csv_or_a_list(tmp_path: Path) -> None:
    table = tmp_path / "evals.csv"
    table.write_text("steps,opponent,win_rate,low,high\n40960,runner,0.5,0.3,0.7\n", encoding="utf-8")
    listed = tmp_path / "evals.json"
    listed.write_text(
        json.dumps(
            [{"global_step": 40960, "opponent": "builtin:blocker", "win_rate": 0.2, "low": 0.1, "high": 0.4}]
        ),
        encoding="utf-8",
    )
    (from_csv,) = read_evaluations(table)
    (from_json,) = read_evaluations(listed)
    assert (from_csv.steps, from_csv.opponent, from_csv.low, from_csv.high) == (40960, "runner", 0.3, 0.7)
    assert (from_json.opponent, from_json.win_rate) == ("blocker", 0.2)
    out = tmp_path / "curves.png"
    metrics = write_jsonl(tmp_path / "metrics.jsonl", range(1, 30))
    assert main([str(metrics), "--out", str(out), "--evaluations", str(table), "--window", "5"]) == 0
    assert png_size(out)[0] > 0


def test_unreadable_input_is_one_line_and_exit_code_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "metrics.jsonl"
    bad.write_text('{"iteration": 1}\nnot json\n', encoding="utf-8")
    assert main([str(bad), "--out", str(tmp_path / "x.png")]) == 1
    assert capsys.readouterr().err.strip() == f"error: {bad}:2: not JSON: Expecting value"
    with pytest.raises(PlotError, match="no iterations"):
        read_records([write_jsonl(tmp_path / "empty.jsonl", range(0))])
    assert not (tmp_path / "x.png").exists()
