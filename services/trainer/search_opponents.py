"""`builtin:search` as a training opponent, in worker processes that decide while the learner works.

The search bot is plain Python (shared/games/podracing/search.py, 1 to 10 ms a decision), so it
cannot run batched on the device. Instead the races it drives are read off the torch engine as the
observations a hosted bot would get, and sent to `workers` processes (`search_worker.py`) as soon
as a turn's state is known (`request`); their actions are collected only when the next turn is
played (`commands`), so the searches overlap the learner's own forward pass and bookkeeping. A race
row always goes to the same worker, whose search bot for that row keeps its plan between turns.

Each worker scores a fixed number of plans per decision (with `min_iterations`, a count of its own
for each race row), so a run is reproducible and the opponent is the same on every machine; the
price is paid in wall time when the searches take longer than the learner's turn (docs/trainer.md,
"Search in the mix", measures it).

With a prior (`use_prior`: the trainer's current policy, exported as a hybrid bot) the same workers
are the search teacher of expert iteration (`imitation.SearchTeacher`), deciding for player 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import weakref
from typing import IO, Any

import torch

from services.trainer.opponents import Commands
from shared.games.podracing.torch_engine import TorchRaces

POD_COLUMNS = ("x", "y", "vx", "vy", "angle", "next_cp", "passed", "shield_cd", "boost_available")
"""The engine's per-pod tensors an observation is made of, in `_pod`'s order."""


class SearchWorkerError(RuntimeError):
    """A search worker process ended or answered something unreadable."""


def _pod(values: list[Any], first_turn: bool) -> dict[str, Any]:
    """One pod as a bot sees it (`shared.games.podracing.game.pod_observation`): whole numbers, the
    heading rounded half away from zero, -1 before the first turn."""
    x, y, vx, vy, angle, next_cp, passed, shield_cd, boost = values
    return {
        "x": int(x),
        "y": int(y),
        "vx": int(vx),
        "vy": int(vy),
        "angle": -1 if first_turn else int(angle + 0.5) % 360,
        "next_checkpoint": int(next_cp),
        "checkpoints_passed": int(passed),
        "boost_available": bool(boost),
        "shield_cooldown": int(shield_cd),
    }


def observations(races: TorchRaces, rows: list[int], player: int) -> list[dict[str, Any]]:
    """`player`'s observation of each race in `rows`, as the reference game would send it."""
    index = torch.tensor(rows, dtype=torch.long, device=races.device)
    pods = torch.stack([getattr(races, name)[index].double() for name in POD_COLUMNS], -1).tolist()
    timeouts = races.timeouts[index].tolist()
    turns = races.turn[index].tolist()
    counts = races.num_checkpoints[index].tolist()
    cp_x, cp_y = races.cp_x[index].tolist(), races.cp_y[index].tolist()
    config = races.config
    own, theirs = slice(2 * player, 2 * player + 2), slice(2 - 2 * player, 4 - 2 * player)
    result = []
    for n in range(len(rows)):
        first = turns[n] == 0
        result.append(
            {
                "turn": turns[n],
                "player": player,
                "laps": config.laps,
                "checkpoint_count": counts[n],
                "checkpoints": [[int(cp_x[n][k]), int(cp_y[n][k])] for k in range(counts[n])],
                "max_thrust": config.max_thrust,
                "max_turns": config.max_turns,
                "timeout_left": timeouts[n][player],
                "opponent_timeout_left": timeouts[n][1 - player],
                "pods": [_pod(values, first) for values in pods[n][own]],
                "opponents": [_pod(values, first) for values in pods[n][theirs]],
            }
        )
    return result


def _stop(processes: list[subprocess.Popen[str]]) -> None:
    for process in processes:
        if process.stdin is not None and not process.stdin.closed:
            process.stdin.close()
    for process in processes:
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class SearchOpponents:
    """`workers` search processes (never more than the machine's cores) driving player `player` in
    the races they are asked about."""

    def __init__(
        self, *, workers: int, iterations: int, seed: int, player: int = 1, min_iterations: int = 0
    ) -> None:
        workers = min(workers, os.cpu_count() or 1)
        command = [sys.executable, "-m", "services.trainer.search_worker"]
        command += ["--seed", str(seed), "--iterations", str(iterations)]
        command += ["--min-iterations", str(min_iterations)]
        self.player = player
        self._processes = [
            subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
            for _ in range(workers)
        ]
        self._stopper = weakref.finalize(self, _stop, list(self._processes))
        self._asked: list[list[int]] | None = None
        """Per worker, the rows of the request it is working on."""

    def request(self, races: TorchRaces, rows: torch.Tensor) -> None:
        """Send the races `rows` (indices) to the workers; answers are read by `commands`."""
        if self._asked is not None:
            self._answers()  # a request nobody collected (the races restarted): drop its answers
        listed = rows.tolist()
        asked: list[list[int]] = [[] for _ in self._processes]
        lines: list[list[Any]] = [[] for _ in self._processes]
        for row, observation in zip(listed, observations(races, listed, self.player), strict=True):
            worker = row % len(self._processes)
            asked[worker].append(row)
            lines[worker].append([row, observation])
        for process, pairs in zip(self._processes, lines, strict=True):
            if pairs:
                self._pipe(process.stdin).write(json.dumps(pairs, separators=(",", ":")) + "\n")
                self._pipe(process.stdin).flush()
        self._asked = asked

    def use_prior(self, source: str) -> None:
        """Give every worker's search a prior from now on: `source` is a hybrid bot exported by the
        trainer (the policy inside the search). Call it between turns (no request pending)."""
        if self._asked is not None:
            raise SearchWorkerError("a prior cannot change while a request is pending")
        line = json.dumps({"prior": source}, separators=(",", ":")) + "\n"
        for process in self._processes:
            self._pipe(process.stdin).write(line)
            self._pipe(process.stdin).flush()
        for process in self._processes:
            answer = self._pipe(process.stdout).readline()
            if not answer:
                raise SearchWorkerError(
                    f"a search worker ended on its prior (exit status {process.poll()}); see its stderr"
                )
            if json.loads(answer) != {"ok": True}:
                raise SearchWorkerError(f"a search worker refused its prior: {answer.strip()[:200]}")

    def commands(self, races: TorchRaces) -> Commands:
        """The requested races' commands for the player's pods, as [B, ...] tensors (rows not
        requested hold zeros: the caller masks them)."""
        b = races.num_races
        target = torch.zeros(b, 2, 2, dtype=torch.float64)
        thrust = torch.zeros(b, 2, dtype=torch.float64)
        boost = torch.zeros(b, 2, dtype=torch.bool)
        shield = torch.zeros(b, 2, dtype=torch.bool)
        for row, action in self._answers():
            for k, pod in enumerate(action["pods"]):
                target[row, k, 0], target[row, k, 1] = float(pod["x"]), float(pod["y"])
                order = pod["thrust"]
                if order == "SHIELD":
                    shield[row, k] = True
                elif order == "BOOST":
                    boost[row, k] = True
                else:
                    thrust[row, k] = float(order)
        device, dtype = races.device, races.dtype
        return target.to(device, dtype), thrust.to(device, dtype), boost.to(device), shield.to(device)

    def _answers(self) -> list[tuple[int, dict[str, Any]]]:
        asked, self._asked = self._asked or [], None
        answers: list[tuple[int, dict[str, Any]]] = []
        for process, rows in zip(self._processes, asked, strict=True):
            if not rows:
                continue
            line = self._pipe(process.stdout).readline()
            if not line:
                code = process.poll()
                raise SearchWorkerError(
                    f"a search opponent worker ended (exit status {code}); see its stderr"
                )
            actions = json.loads(line)
            if len(actions) != len(rows):
                raise SearchWorkerError(
                    f"a search worker answered {len(actions)} actions for {len(rows)} races"
                )
            answers.extend(zip(rows, actions, strict=True))
        return answers

    @staticmethod
    def _pipe(stream: IO[str] | None) -> IO[str]:
        if stream is None:  # pragma: no cover - both pipes are always requested
            raise SearchWorkerError("a search worker has no pipe")
        return stream

    def running(self) -> bool:
        """Whether any worker process is still alive."""
        return any(process.poll() is None for process in self._processes)

    def close(self) -> None:
        """Stop the workers (also done when the object is collected or the interpreter exits)."""
        self._stopper()
