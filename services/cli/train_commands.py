"""`arena train`, `arena export` and `arena eval`: train a podracing policy on this machine, turn a
checkpoint into a bot file, and measure a bot's win rate. PyTorch is imported only by the first
two, so every other command works without it."""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import time
import zipfile
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from services.cli.errors import CliError, first_problem

if TYPE_CHECKING:
    from services.trainer.evaluate import Evaluation, RaceOutcome
    from services.trainer.ppo import Trainer

TRAINABLE_GAMES = ("podracing",)
DEFAULT_TRAINING_DIR = Path("training")
LATEST = "latest.pt"
METRICS_LOG = "metrics.jsonl"
MAX_REASON_CHARS = 160


def _require_torch(command: str) -> None:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise CliError(
            f"arena {command} needs PyTorch, which is not installed: pip install -e '.[trainer]'"
        ) from None


def _short(exc: BaseException) -> str:
    """An exception's message cut to one readable line (torch's load errors run to pages)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def _checkpoint_file(text: str) -> Path:
    """The path of an existing checkpoint file, checked before torch is imported (seconds): torch
    writes checkpoints as zip archives, so anything else cannot be one."""
    path = Path(text)
    if not path.is_file():
        raise CliError(f"no such checkpoint file: {path}")
    if not zipfile.is_zipfile(path):
        raise CliError(f"{path} is not a training checkpoint (the .pt files arena train writes)")
    return path


def _checkpoint_problem(path: Path, exc: ValueError) -> str:
    """What is wrong with a checkpoint file, without torch's page-long explanation of pickles."""
    if str(exc).startswith(f"{path} is not a training checkpoint"):
        return f"{path} is not a training checkpoint (the .pt files arena train writes)"
    return _short(exc)


def _json_object(text: str | None, option: str) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{option} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise CliError(f"{option} must be a JSON object, e.g. '{{\"learning_rate\": 0.001}}'")
    return value


# -- train -------------------------------------------------------------------------------------


def _check_trainable(game_name: str) -> None:
    from shared.games.registry import UnknownGameError, get_game

    try:
        get_game(game_name)
    except UnknownGameError as exc:
        raise CliError(str(exc.args[0])) from None
    if game_name not in TRAINABLE_GAMES:
        raise CliError(
            f"{game_name} cannot be trained here: the trainer plays {', '.join(TRAINABLE_GAMES)} only"
        )


def _new_trainer(args: argparse.Namespace, config: dict[str, Any]) -> Trainer:
    from services.trainer.ppo import Args, Trainer, args_from_dict, args_to_dict

    known = set(args_to_dict(Args()))
    unknown = sorted(set(config) - known)
    if unknown:
        raise CliError(
            f"--config: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    options = {
        "device": args.device,  # None: the default, auto
        "seed": args.seed,
        "num_envs": args.num_envs,
        "total_steps": args.steps,
    }
    if args.imitate:
        options |= {"teacher": args.imitate, "stage": "imitate"}
    data = args_to_dict(Args()) | config | {key: value for key, value in options.items() if value is not None}
    try:
        run_args = args_from_dict(data)
    except (TypeError, ValueError) as exc:
        raise CliError(f"--config: {_short(exc)}") from None
    if run_args.num_envs < 1 or run_args.num_steps < 1 or run_args.total_steps < 1:
        raise CliError("--num-envs, num_steps and --steps must be at least 1")
    try:
        return Trainer(run_args)
    except FileNotFoundError:
        raise CliError(f"--imitate: no such checkpoint file: {run_args.teacher}") from None
    except ValueError as exc:  # an unknown teacher or action set, a teacher that is not a checkpoint
        raise CliError(_short(exc)) from None


def _resume_section(name: str, value: Any) -> dict[str, Any]:
    """A resumed run's new settings of section `name` (search_opponent, lookahead), checked against
    their bounds."""
    from pydantic import BaseModel, ValidationError

    from shared.training.config import LookaheadConfig, SearchOpponentConfig

    sections: dict[str, type[BaseModel]] = {
        "search_opponent": SearchOpponentConfig,
        "lookahead": LookaheadConfig,
    }
    try:
        return sections[name].model_validate(value).model_dump()
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise CliError(f"--config: {name}{'.' + where if where else ''}: {message}") from None


RESUME_SECTIONS = ("search_opponent", "lookahead")
"""The RESUME_FIELDS that are sections of settings, not numbers."""


def _resumed_trainer(args: argparse.Namespace, config: dict[str, Any]) -> Trainer:
    from services.trainer.ppo import MUTABLE_FIELDS, RESUME_FIELDS, Trainer

    allowed = (*MUTABLE_FIELDS, *RESUME_FIELDS)
    fixed = sorted(set(config) - set(allowed))
    if fixed:
        raise CliError(
            f"--config: {', '.join(fixed)} cannot change when resuming; only {', '.join(allowed)} can"
        )
    if args.num_envs is not None:
        config = config | {"num_envs": args.num_envs}
    for name in RESUME_SECTIONS:
        if name in config:
            config = config | {name: _resume_section(name, config[name])}
    for name in RESUME_FIELDS:
        if name in RESUME_SECTIONS:
            continue
        value = config.get(name, 1)
        whole = name not in ("imitation_lr", "imitation_coef")
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or value <= 0:
            kind = "a whole number of at least 1" if whole else "a positive number"
            raise CliError(f"--config: {name} must be {kind}")
    path = Path(args.resume)
    try:
        trainer = Trainer.load(path, device=args.device, changes=config or None, imitate=args.imitate)
    except ValueError as exc:
        raise CliError(f"cannot resume: {_checkpoint_problem(path, exc)}") from None
    except (KeyError, TypeError) as exc:
        raise CliError(f"cannot resume from {path}: {_short(exc)}") from None
    if args.steps is not None:
        trainer.args = trainer.args.model_copy(update={"total_steps": args.steps})
    return trainer


def step_budget(total: int, done: int, per_iteration: int) -> str:
    """The steps the run will really play: whole iterations of num_envs x num_steps, so --steps is
    rounded up to the next multiple (counted from where a resumed run stands)."""
    if total <= done:
        return f"{total:,} steps, already reached ({done:,}): no iteration to run"
    iterations = -(-(total - done) // per_iteration)
    end = done + iterations * per_iteration
    plan = f"{iterations:,} iteration{'s' if iterations > 1 else ''} of {per_iteration:,}"
    plan += f" from {done:,}" if done else ""
    return f"{total:,} steps ({plan})" if end == total else f"{total:,} steps -> {end:,} ({plan})"


def _rate(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def progress_line(metrics: dict[str, Any]) -> str:
    """One line per iteration: where the run is and how it plays."""
    return (
        f"it {metrics['iteration']:>5}  steps {metrics['global_step']:>11,}  stage {metrics['stage']:<9}  "
        f"sps {metrics['sps']:>7,}  win runner {_rate(metrics.get('win_rate_runner'))} "
        f"blocker {_rate(metrics.get('win_rate_blocker'))}  "
        + (f"search {_rate(rate)}  " if (rate := metrics.get("win_rate_search")) is not None else "")
        + f"cp/100t {metrics['checkpoints_per_100_turns']:5.1f}  entropy {metrics['entropy']:.3f}"
        + (
            f"  agree {agreement:.3f}"
            if (agreement := metrics.get("imitation_agreement")) is not None
            else ""
        )
    )


def _save(trainer: Trainer, out: Path) -> Path:
    """ckpt-XXXXXX.pt for the current iteration, and a copy as latest.pt (both written atomically)."""
    from services.trainer.ppo import default_checkpoint_name

    path = out / default_checkpoint_name(trainer.iteration)
    trainer.save(path)
    partial = out / (LATEST + ".partial")
    shutil.copyfile(path, partial)
    partial.replace(out / LATEST)
    return path


def _append_metrics(path: Path, metrics: dict[str, Any], seconds: float, device: str) -> None:
    """One JSON line per iteration, kept across resumed chunks, so a run's curves can be drawn later
    (`scripts/plot_training.py`); `iteration_seconds` is the wall time the iteration took."""
    record = {**metrics, "iteration_seconds": round(seconds, 3), "device": device}
    try:
        with path.open("a", encoding="utf-8") as log:
            log.write(json.dumps(record, default=str) + "\n")
    except OSError as exc:
        print(f"warning: cannot append to {path}: {exc.strerror or exc}", file=sys.stderr, flush=True)


class _StopOnInterrupt:
    """The first Ctrl+C asks the run to stop after the current iteration; a second one stops it now."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: Any = None

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("stopping after this iteration (Ctrl+C again to stop at once)", file=sys.stderr, flush=True)

    def __enter__(self) -> _StopOnInterrupt:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)


def train(args: argparse.Namespace) -> int:
    _check_trainable(args.game)
    if args.save_every < 1:
        raise CliError("--save-every must be at least 1")
    if args.seconds is not None and args.seconds <= 0:
        raise CliError("--seconds must be positive")
    if args.threads is not None and args.threads < 1:
        raise CliError("--threads must be at least 1")
    config = _json_object(args.config, "--config")
    if args.resume:
        if args.seed is not None:
            raise CliError("--seed cannot change when resuming: it is the checkpoint's")
        _checkpoint_file(args.resume)
    _require_torch("train")
    import torch

    from services.trainer.ppo import DeviceUnavailable, default_checkpoint_name

    if args.threads is not None:
        torch.set_num_threads(args.threads)
    try:
        trainer = _resumed_trainer(args, config) if args.resume else _new_trainer(args, config)
    except DeviceUnavailable as exc:
        hint = (
            " (the checkpoint's device; give --device to train elsewhere)"
            if args.resume and not args.device
            else ""
        )
        raise CliError(f"{exc}{hint}") from None
    if args.out:
        out = Path(args.out)
    elif args.resume:
        out = Path(args.resume).parent
    else:
        out = DEFAULT_TRAINING_DIR / time.strftime("%Y%m%d-%H%M%S")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"cannot create {out}: {exc.strerror or exc}") from None
    print(
        f"training podracing on {trainer.device}: {trainer.args.num_envs} races x "
        f"{trainer.args.num_steps} turns per iteration; "
        + step_budget(
            trainer.args.total_steps, trainer.global_step, trainer.args.num_envs * trainer.args.num_steps
        )
        + (f", or {args.seconds:g} s" if args.seconds else "")
        + f"; checkpoints in {out}",
        flush=True,
    )

    saved: list[Path] = []
    metrics_log = out / METRICS_LOG
    last_iteration_end = time.monotonic()

    def on_iteration(metrics: dict[str, Any]) -> None:
        nonlocal last_iteration_end
        print(progress_line(metrics), flush=True)
        now = time.monotonic()
        _append_metrics(metrics_log, metrics, now - last_iteration_end, str(trainer.device))
        last_iteration_end = now
        if trainer.iteration % args.save_every == 0:
            saved.append(_save(trainer, out))

    with _StopOnInterrupt() as stop:
        try:
            trainer.run(
                max_seconds=args.seconds, on_iteration=on_iteration, should_stop=lambda: stop.requested
            )
        except KeyboardInterrupt:
            stop.requested = True
        finally:
            trainer.close()
        status = 130 if stop.requested else 0
        latest = out / default_checkpoint_name(trainer.iteration)
        path = saved[-1] if saved and saved[-1] == latest else _save(trainer, out)
    ended = "interrupted" if status else "done"
    print(
        f"{ended}: iteration {trainer.iteration}, {trainer.global_step:,} steps; "
        f"saved {path} and {out / LATEST}"
    )
    print(f"next: arena export {out / LATEST} --out bot.py")
    return status


# -- export ------------------------------------------------------------------------------------


def export(args: argparse.Namespace) -> int:
    path = _checkpoint_file(args.checkpoint)
    if args.budget_ms is not None and not args.hybrid:
        raise CliError("--budget-ms sets the hybrid's search time: give it with --hybrid")
    _require_torch("export")
    from services.trainer.export import DEFAULT_HYBRID_BUDGET_MS, export_checkpoint

    budget_ms = DEFAULT_HYBRID_BUDGET_MS if args.budget_ms is None else args.budget_ms
    try:
        source = export_checkpoint(
            path, "codingame" if args.codingame else "hosted", hybrid=args.hybrid, time_budget_ms=budget_ms
        )
    except ValueError as exc:  # not a checkpoint, or a policy that cannot be exported
        raise CliError(_checkpoint_problem(path, exc)) from None
    out = Path(args.out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(source, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {out}: {exc.strerror or exc}") from None
    kind = "a CodinGame script" if args.codingame else "a hosted bot (decide)"
    if args.hybrid:
        kind += f": the search with the policy as its prior, {budget_ms:g} ms a turn"
    print(f"wrote {out}: {kind}, {len(source):,} characters, standard library only")
    if args.codingame:
        print(f"next: paste it into CodinGame, or arena play podracing codingame:{out} builtin:runner")
    else:
        print(f"next: arena eval {out} --against builtin:runner")
    return 0


# -- eval --------------------------------------------------------------------------------------


def _interval_text(evaluation: Evaluation) -> str:
    low, high = evaluation.interval
    return f"{evaluation.win_rate:.3f} (95% interval {low:.3f} to {high:.3f})"


def evaluate(args: argparse.Namespace) -> int:
    import os

    from services.trainer.evaluate import evaluate as run_evaluation

    config = _json_object(args.config, "--config") if args.config else None
    env_secret = os.environ.get("ARENA_BOT_SECRET")
    secrets = tuple(args.secret or ([env_secret] if env_secret else []))
    every = max(1, args.races // 10)

    def on_race(_outcome: RaceOutcome, so_far: Evaluation) -> None:
        if so_far.races % every == 0 or so_far.races == args.races:
            print(
                f"  {so_far.races:>4}/{args.races} races  "
                f"W {so_far.wins}  L {so_far.losses}  D {so_far.draws}",
                file=sys.stderr,
                flush=True,
            )

    def on_warning(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    result = run_evaluation(
        args.bot,
        args.against,
        args.races,
        seed=args.seed,
        config=config,
        jobs=args.jobs,
        sandbox=args.sandbox,
        secrets=secrets,
        turn_timeout_ms=args.turn_timeout_ms,
        on_race=on_race,
        on_warning=on_warning,
    )
    if args.json:
        low, high = result.interval
        print(
            json.dumps(
                {
                    "bot": result.bot,
                    "opponent": result.opponent,
                    "seed": result.seed,
                    "races": result.races,
                    "wins": result.wins,
                    "losses": result.losses,
                    "draws": result.draws,
                    "win_rate": result.win_rate,
                    "interval_95": [low, high],
                    "bot_ms_per_decide": result.bot_ms_per_decide,
                    "bot_failed_turns": result.bot_failed_turns,
                },
                indent=2,
            )
        )
        return 0
    ms = result.bot_ms_per_decide
    print(
        f"{result.bot} vs {result.opponent}: {result.races} races "
        f"(seats alternate; tracks from seed {result.seed})"
    )
    print(f"win rate {_interval_text(result)}  W {result.wins}  L {result.losses}  D {result.draws}")
    print(
        f"{result.bot}: {'-' if ms is None else f'{ms:.2f}'} ms per decide (mean), "
        f"{result.bot_failed_turns} failed turns"
    )
    return 0
