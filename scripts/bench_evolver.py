"""The evolver's figures: how much the built-in operator improves a weak bot, how many candidates the
evaluation gets through per minute with one and two match-runner workers, and the time a
generation spends outside matches.

    .venv/bin/python -m scripts.bench_evolver improve [--generations 20] [--children 12] [--fresh 201]
        [--quick 3] [--tournament 6] [--no-rematch] [--match-seeds run|generation] [--islands 1]
        [--constants-table 150]
    .venv/bin/python -m scripts.bench_evolver neighbourhood [--fresh 120]
    .venv/bin/python -m scripts.bench_evolver climb [--step-matches 90] [--rounds 2] [--fresh 300]
    .venv/bin/python -m scripts.bench_evolver variant --set NAME=VALUE [--set ...] [--fresh 300]
    .venv/bin/python -m scripts.bench_evolver throughput [--candidates 6] [--tournament 6]
    .venv/bin/python -m scripts.bench_evolver quick      # both, small: what `make bench` runs

improve: an offline run (no LLM: the built-in mutation operator and rule-based root) from the
weak battle seed, evaluated against the three built-in bots on the default battle rules, with
racing (new matches each generation, parents rematched: `--no-rematch` and `--match-seeds run`
turn it off), one island and an exploration ratio of 0.1 (`--islands`, `--exploration`); then the
seed and the run's best play the same `--fresh` new matches against the built-ins (seats
alternating, seeds never used in the run), win rates with 95% Wilson intervals. The baseline is the seed,
measured in the same run. It prints the curve (per generation as it closed: the best and median
of its children, and the leader of its field with its fitness), the pick's generation and
in-run record (`best_in_run`: matches and win rate, draws half) and the time per generation
outside matches.

neighbourhood: the seed's one-constant neighbourhood, played in this process (the seed is the
project's own code): every named constant scaled by 0.5 and by 1.6 in turn, each variant and the seed
on the same `--fresh` matches against the built-ins; how far tuning one number can take the seed.

climb: a greedy search over the seed's named constants with an evaluation far more precise than an
evolution run can afford, played in this process: each constant in turn scaled by 0.6 and by 1.4;
a variant replaces the incumbent when it beats it by 2 points on `--step-matches` matches and again
on as many new ones (both programs on the same matches each time); `--rounds` passes over the
constants. Then the seed and the result play the same `--fresh` new matches. How far tuning numbers
alone can take the seed when every step is measured well.

variant: the seed and the seed with the given named constants changed, played in this process on
the same `--fresh` matches against the built-ins: what a point of the seed's constant space is
worth, e.g. one an evolution run should be able to reach.

throughput: the same candidates evaluated with their tournament on the `matches` queue, against a
fleet of hosted bots, with one and then two match-runner workers; candidates per minute and the
ratio. Needs PostgreSQL and Redis (ARENA_DATABASE_URL / ARENA_REDIS_URL, or the local defaults).

improve and throughput each work in a fresh database on that server and drop it when they end;
`--keep-database` keeps it (its name goes to stderr) to look into the run with SQL.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
BENCH_REDIS = "redis://127.0.0.1:6379/15"
"""The broker of the throughput bench's workers (ARENA_REDIS_URL when set); it is flushed first."""


@contextmanager
def bench_database(prefix: str, keep: bool = False) -> Iterator[str]:
    """A fresh, migrated database on the configured server (or the local one), made the platform's
    for the block, and dropped after it unless `keep` (then its name goes to stderr, to inspect
    the run): a bench run leaves nothing behind on the server by default."""
    from sqlalchemy.engine import make_url

    from shared.db.embedded import drop_database, ensure_database
    from shared.db.session import get_engine

    base = os.environ.get("ARENA_DATABASE_URL", DEFAULT_SERVER)
    name = f"{prefix}_{secrets.token_hex(3)}"
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    ensure_database(url)
    try:
        _configure(url)
        yield url
    finally:
        get_engine().dispose()
        if keep:
            print(f"database kept: {name}", file=sys.stderr)
        else:
            drop_database(url)


def _configure(url: str) -> None:
    os.environ["ARENA_DATABASE_URL"] = url
    os.environ.setdefault("ARENA_SECRET_KEY", "bench-" + secrets.token_hex(16))
    from shared.config import get_settings
    from shared.db.migrations import migrate
    from shared.db.session import get_engine, get_sessionmaker

    get_settings.cache_clear()
    get_engine.cache_clear()
    get_sessionmaker.cache_clear()
    migrate(url)


def _wilson(successes: float, trials: int) -> tuple[float, float]:
    from services.trainer.evaluate import wilson_interval

    return wilson_interval(round(successes), trials)


def _fresh(source: str, matches: int, jobs: int, salt: str) -> dict[str, Any]:
    """Win rate (draws half) of `source` over fresh matches against the built-ins."""
    from services.evolver.evaluation.cascade import builtin_names
    from services.evolver.evaluation.matches import LocalExecutor
    from services.evolver.evaluation.records import BUILTIN_PREFIX, MatchSpec, Outcome
    from shared.config import get_settings

    names = builtin_names("battle")
    specs = [
        MatchSpec(
            BUILTIN_PREFIX + names[i % len(names)],
            10_000_000 + i * 7919 + zlib.crc32(salt.encode()) % 1000,
            i % 2,
            {},
        )
        for i in range(matches)
    ]
    with LocalExecutor("battle", get_settings(), jobs=jobs) as executor:
        records = executor.play(source, specs)
    wins = sum(1 for r in records if r.outcome == Outcome.WIN)
    draws = sum(1 for r in records if r.outcome == Outcome.DRAW)
    per: dict[str, list[float]] = {}
    for r in records:
        per.setdefault(r.opponent, []).append(
            1.0 if r.outcome == Outcome.WIN else 0.5 if r.outcome == Outcome.DRAW else 0.0
        )
    score = wins + draws / 2
    low, high = _wilson(score, len(records))
    return {
        "matches": len(records),
        "wins": wins,
        "draws": draws,
        "win_rate": score / len(records),
        "ci95": [low, high],
        "per_opponent": {k: round(sum(v) / len(v), 3) for k, v in sorted(per.items())},
        "errors": sum(r.errors for r in records),
    }


def improve(args: argparse.Namespace) -> dict[str, Any]:
    from sqlalchemy import select

    from services.cli.main import main as arena
    from services.evolver.seeds import seed_program
    from shared.db.models import EvolutionGeneration, EvolutionProgram, EvolutionRun
    from shared.db.session import session_scope

    # Unique per invocation: two benches started in the same second must not share a directory.
    out = Path(args.out or tempfile.mkdtemp(prefix=f"bench-evolver-seed{args.seed}-"))
    name = f"bench-{secrets.token_hex(3)}"
    started = time.monotonic()
    code = arena(
        [
            "evolve",
            "battle",
            "--generations",
            str(args.generations),
            "--children",
            str(args.children),
            "--quick",
            str(args.quick),
            "--tournament",
            str(args.tournament),
            "--jobs",
            str(args.jobs),
            "--random-seed",
            str(args.seed),
            "--match-seeds",
            args.match_seeds,
            *(["--rematch"] if args.rematch else []),
            "--islands",
            str(args.islands),
            "--exploration",
            str(args.exploration),
            "--selection",
            args.selection,
            "--constants-table",
            str(args.constants_table),
            "--max-minutes",
            "600",
            "--name",
            name,
            "--out",
            str(out),
        ]
    )
    run_seconds = time.monotonic() - started
    if code != 0:
        raise SystemExit(f"the evolution run failed (exit {code})")
    with session_scope() as session:
        run = session.scalars(select(EvolutionRun).where(EvolutionRun.name == name)).one()
        rows = list(session.scalars(select(EvolutionProgram).where(EvolutionProgram.run_id == run.id)))
        gens = list(
            session.scalars(
                select(EvolutionGeneration)
                .where(EvolutionGeneration.run_id == run.id)
                .order_by(EvolutionGeneration.number)
            )
        )
        best = next(p for p in rows if p.id == run.best_program_id)
        curve = []
        overheads = []
        for g in gens:
            # The generation's figures as they stood when it closed (a rematch changes them later).
            stats = g.stats or {}
            leader = stats.get("leader") or {}
            curve.append(
                {
                    "generation": g.number,
                    "best": stats.get("best"),
                    "median": stats.get("median"),
                    "leader": leader.get("id"),
                    "leader_fitness": leader.get("fitness"),
                }
            )
            if g.closed_at is not None:
                wall = (g.closed_at - g.started_at).total_seconds()
                label = f"g{g.number}"
                in_matches = sum(
                    float(((p.metrics or {}).get("round_seconds") or {}).get(label) or 0.0) for p in rows
                )
                overheads.append(max(0.0, wall - in_matches))
        best_code, best_name, best_fit = best.code, f"p{best.seq}", best.fitness
        played = best.metrics or {}
        best_record = {
            "generation": best.generation,
            "matches": played.get("matches"),
            "win_rate": played.get("win_rate"),
        }
        generations_run, programs = run.generation + 1, len(rows)
    seed = _fresh(seed_program("battle"), args.fresh, args.jobs, "fresh")
    final = _fresh(best_code, args.fresh, args.jobs, "fresh")  # the same matches as the seed
    return {
        "mode": "improve",
        "generations": generations_run,
        "programs": programs,
        "run_seconds": round(run_seconds, 1),
        "curve": curve,
        "best_program": best_name,
        "best_fitness_in_run": best_fit,
        "best_in_run": best_record,
        "match_seeds": args.match_seeds,
        "constants_table": args.constants_table,
        "fresh_seed": seed,
        "fresh_best": final,
        "gain": round(final["win_rate"] - seed["win_rate"], 3),
        "overhead_s_per_generation": {
            "median": round(statistics.median(overheads), 2) if overheads else None,
            "max": round(max(overheads), 2) if overheads else None,
        },
        "run_directory": str(out),
    }


def _variant(source: str, name: str, value: float) -> str:
    """`source` with the module-level constant `name` set to `value`."""

    changed, count = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", source, flags=re.M)
    assert count == 1, name
    return changed


def _in_process_score(task: tuple[str, str, int, int]) -> float:
    """One match of `source` against a built-in, played in this process: 1 win, 0.5 draw, 0 loss."""
    from shared.games.registry import get_game
    from shared.games.replay import play_local

    source, opponent, seed, seat = task
    namespace: dict[str, Any] = {"__name__": "candidate"}
    exec(compile(source, "candidate", "exec"), namespace)  # the project's own seed, not generated code
    game = get_game("battle")
    other = game.builtin_bots()[opponent]
    bots = [namespace["decide"], other] if seat == 0 else [other, namespace["decide"]]
    ranks = {p["player"]: p["rank"] for p in play_local(game, seed, bots)["result"]["players"]}
    mine, theirs = ranks[seat], ranks[1 - seat]
    return 1.0 if mine < theirs else 0.5 if mine == theirs else 0.0


def neighbourhood(args: argparse.Namespace) -> dict[str, Any]:
    """Win rates of the seed and of every one-constant variant of it over the same fresh matches."""
    from multiprocessing import Pool

    from services.evolver.evaluation.cascade import builtin_names
    from services.evolver.seeds import seed_program

    seed = seed_program("battle")
    names = builtin_names("battle")
    variants: list[tuple[str, str]] = [("seed", seed)]
    for name, literal in re.findall(r"^([A-Z][A-Z_]+) = ([0-9.]+)$", seed, flags=re.M):
        for factor in (0.5, 1.6):
            value: float = float(literal) * factor
            value = round(value) if "." not in literal else round(value, 2)
            variants.append((f"{name}={value}", _variant(seed, name, value)))
    matches = [
        (names[i % len(names)], 20_000_000 + i * 7919, (i // len(names)) % 2) for i in range(args.fresh)
    ]
    rows: list[dict[str, Any]] = []
    started = time.monotonic()
    with Pool(max(1, args.jobs)) as pool:
        for label, source in variants:
            scores = pool.map(_in_process_score, [(source, o, s, seat) for o, s, seat in matches])
            rate = sum(scores) / len(scores)
            low, high = _wilson(sum(scores), len(scores))
            rows.append(
                {"variant": label, "win_rate": round(rate, 3), "ci95": [round(low, 3), round(high, 3)]}
            )
            print(f"{label:28s} {rate:.3f}", file=sys.stderr, flush=True)
    best = max(rows[1:], key=lambda row: row["win_rate"])
    return {
        "mode": "neighbourhood",
        "matches_per_variant": args.fresh,
        "seconds": round(time.monotonic() - started, 1),
        "seed": rows[0],
        "best_variant": best,
        "variants_above_60pct": [row["variant"] for row in rows[1:] if row["win_rate"] >= 0.6],
        "variants": rows,
    }


def variant(args: argparse.Namespace) -> dict[str, Any]:
    """Win rates of the seed and of one variant of its named constants over the same fresh matches."""
    from multiprocessing import Pool

    from services.evolver.evaluation.cascade import builtin_names
    from services.evolver.seeds import seed_program

    if not args.set:
        raise SystemExit("variant: give at least one --set NAME=VALUE")
    seed = seed_program("battle")
    changed = seed
    for assignment in args.set:
        name, _, value = assignment.partition("=")
        try:
            number = float(value)
        except ValueError:
            raise SystemExit(f"--set {assignment!r}: expected NAME=NUMBER") from None
        if not re.search(rf"^{re.escape(name)} = ", seed, flags=re.M):
            raise SystemExit(f"--set {assignment!r}: the seed has no constant {name!r}")
        changed = _variant(changed, name, number)
    names = builtin_names("battle")
    matches = [
        (names[i % len(names)], 40_000_000 + i * 7919, (i // len(names)) % 2) for i in range(args.fresh)
    ]
    started = time.monotonic()
    rows: dict[str, Any] = {}
    with Pool(max(1, args.jobs)) as pool:
        for label, source in (("seed", seed), ("variant", changed)):
            scores = pool.map(_in_process_score, [(source, o, s, seat) for o, s, seat in matches])
            low, high = _wilson(sum(scores), len(scores))
            per = {
                name: round(
                    statistics.mean(v for (o, _, _), v in zip(matches, scores, strict=True) if o == name), 3
                )
                for name in names
            }
            rows[label] = {
                "win_rate": round(sum(scores) / len(scores), 3),
                "ci95": [round(low, 3), round(high, 3)],
                "per_opponent": per,
            }
            print(f"{label:8s} {rows[label]['win_rate']:.3f} {per}", file=sys.stderr, flush=True)
    return {
        "mode": "variant",
        "set": args.set,
        "matches": args.fresh,
        "seconds": round(time.monotonic() - started, 1),
        **rows,
    }


def climb(args: argparse.Namespace) -> dict[str, Any]:
    """Greedy coordinate ascent over the seed's constants, each step confirmed on new matches."""
    from multiprocessing import Pool

    from services.evolver.evaluation.cascade import builtin_names
    from services.evolver.seeds import seed_program

    names = builtin_names("battle")
    salts = iter(range(30_000_000, 10**9, 1_000_003))

    def matches(count: int) -> list[tuple[str, int, int]]:
        salt = next(salts)
        return [(names[i % len(names)], salt + i * 7919, (i // len(names)) % 2) for i in range(count)]

    seed = seed_program("battle")
    current, accepted = seed, []
    started = time.monotonic()
    with Pool(max(1, args.jobs)) as pool:

        def rate(source: str, played: list[tuple[str, int, int]]) -> float:
            scores = pool.map(_in_process_score, [(source, o, s, seat) for o, s, seat in played])
            return sum(scores) / len(scores)

        for round_ in range(args.rounds):
            changed = False
            for name, _ in re.findall(r"^([A-Z][A-Z_]+) = ([0-9.]+)$", seed, flags=re.M):
                literal = re.search(rf"^{name} = ([0-9.]+)$", current, flags=re.M)
                assert literal is not None
                value = float(literal.group(1))
                for factor in (0.6, 1.4):
                    new: float = (  # an integer constant stays one
                        round(value * factor) if "." not in literal.group(1) else round(value * factor, 2)
                    )
                    if new == value:
                        continue
                    variant = _variant(current, name, new)
                    first = matches(args.step_matches)
                    before, after = rate(current, first), rate(variant, first)
                    if after < before + 0.02:
                        continue
                    second = matches(args.step_matches)
                    again_before, again_after = rate(current, second), rate(variant, second)
                    verdict = again_after >= again_before + 0.02
                    print(
                        f"  round {round_ + 1} {name}={new}: {after:.3f} vs {before:.3f}, "
                        f"again {again_after:.3f} vs {again_before:.3f}: {'kept' if verdict else 'dropped'}",
                        file=sys.stderr,
                        flush=True,
                    )
                    if verdict:
                        current, changed = variant, True
                        accepted.append(f"{name}={new}")
                        break
            if not changed:
                break
        final = matches(args.fresh)
        seed_scores = pool.map(_in_process_score, [(seed, o, s, seat) for o, s, seat in final])
        best_scores = pool.map(_in_process_score, [(current, o, s, seat) for o, s, seat in final])
    row = {}
    for label, scores in (("seed", seed_scores), ("climbed", best_scores)):
        low, high = _wilson(sum(scores), len(scores))
        row[label] = {
            "win_rate": round(sum(scores) / len(scores), 3),
            "ci95": [round(low, 3), round(high, 3)],
        }
    return {
        "mode": "climb",
        "step_matches": args.step_matches,
        "fresh_matches": args.fresh,
        "accepted": accepted,
        "seconds": round(time.monotonic() - started, 1),
        **row,
    }


def _start_worker(name: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    from services.match_runner.commands import worker_command

    log = open(f"/tmp/{name}.log", "wb")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(
        [*worker_command(name=f"{name}@%h"), "--without-heartbeat"],
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_ready(name: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if b" ready." in Path(f"/tmp/{name}.log").read_bytes():
            return
        time.sleep(0.2)
    raise SystemExit(f"{name} did not start: see /tmp/{name}.log")


def _stop(process: subprocess.Popen[bytes]) -> None:
    import signal

    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except Exception:
        os.killpg(process.pid, signal.SIGKILL)


def throughput(args: argparse.Namespace) -> dict[str, Any]:
    """Candidates evaluated per minute with their tournament on the queue, 1 and 2 workers."""
    import random

    from services.evolver.evaluation.evaluator import CascadeEvaluator
    from services.evolver.search.code import normalised_hash
    from services.evolver.search.mutation import mutate
    from services.evolver.seeds import seed_program
    from services.evolver.store import programs as program_store
    from services.evolver.store import runs as run_store
    from shared import bots
    from shared.config import get_settings
    from shared.db.models import User
    from shared.db.session import session_scope
    from shared.evolution import EvolutionConfig, new_run
    from shared.states import ProgramOrigin, ProgramStatus

    redis_db = os.environ["ARENA_REDIS_URL"]
    import redis as redis_lib

    redis_lib.Redis.from_url(redis_db).flushdb()
    settings = get_settings()
    seed = seed_program("battle")
    sources = [seed]
    rng = random.Random(1)
    while len(sources) < args.candidates * 2:
        sources.append(mutate(sources[rng.randrange(len(sources))], rng).source)
    with session_scope() as session:
        owner = User(name=f"bench-{secrets.token_hex(3)}")
        session.add(owner)
        session.commit()
        fleet_source = (ROOT / "services" / "evolver" / "seeds" / "battle_weak.py").read_text()
        for i in range(3):
            bots.register_hosted_bot(
                session,
                settings,
                owner,
                name=f"fleet-{i}-{secrets.token_hex(2)}",
                game="battle",
                source=fleet_source,
            )
    results: dict[str, Any] = {
        "mode": "throughput",
        "candidates": args.candidates,
        "tournament": args.tournament,
    }
    for workers in (1, 2):
        with session_scope() as session:
            user = session.get(User, owner.id)
            assert user is not None
            cfg = EvolutionConfig.model_validate(
                {
                    "evaluation": {
                        "quick_matches": 0,
                        "tournament_matches": args.tournament,
                        "tournament": "fleet",
                        "smoke_turns": 5,
                    }
                }
            )
            run, _job = new_run(
                session, settings, user, name=f"q{workers}-{secrets.token_hex(2)}", game="battle", config=cfg
            )
            session.commit()
            run_id = run.id
        ids = []
        offset = (workers - 1) * args.candidates
        for i, source in enumerate(sources[offset : offset + args.candidates]):
            made = program_store.insert_program(
                run_id,
                program_store.NewProgram(
                    created_key=f"bench:{i}",
                    generation=0,
                    island=0,
                    origin=ProgramOrigin.SEED,
                    status=ProgramStatus.PENDING,
                    code=source,
                    code_hash=normalised_hash(source),
                ),
            )
            ids.append(made.program.id)
        ctx = run_store.load_context(run_id)
        assert ctx is not None
        evaluator = CascadeEvaluator(ctx, settings)
        procs = [
            _start_worker(f"bench-runner-{workers}-{k}", {"ARENA_REDIS_URL": redis_db})
            for k in range(workers)
        ]
        try:
            for k in range(workers):
                _wait_ready(f"bench-runner-{workers}-{k}")
            started = time.monotonic()
            for pid in ids:  # one after the other, as the engine evaluates them
                row = program_store.program(pid)
                assert row is not None
                evaluator.evaluate(row, cfg.initial_parameters(), 7)
            elapsed = time.monotonic() - started
        finally:
            for p in procs:
                _stop(p)
            evaluator.close()
        results[f"workers_{workers}"] = {
            "seconds": round(elapsed, 1),
            "candidates_per_minute": round(args.candidates / elapsed * 60, 2),
        }
    one_w, two_w = (
        results["workers_1"]["candidates_per_minute"],
        results["workers_2"]["candidates_per_minute"],
    )
    results["ratio_2_over_1"] = round(two_w / one_w, 2) if one_w else None
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "mode",
        choices=("improve", "neighbourhood", "climb", "variant", "throughput", "quick"),
        nargs="?",
        default="quick",
    )
    parser.add_argument("--step-matches", type=int, default=90, help="climb: matches per comparison")
    parser.add_argument("--rounds", type=int, default=2, help="climb: passes over the constants")
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--children", type=int, default=12, help="improve: children per generation")
    parser.add_argument("--quick", type=int, default=3)
    parser.add_argument("--tournament", type=int, default=6)
    parser.add_argument("--fresh", type=int, default=201)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--match-seeds", choices=("run", "generation"), default="generation")
    parser.add_argument(
        "--no-rematch", dest="rematch", action="store_false", help="improve: judge each program once"
    )
    parser.add_argument("--islands", type=int, default=1, help="improve: islands of the run")
    parser.add_argument("--exploration", type=float, default=0.1, help="improve: exploration ratio")
    parser.add_argument(
        "--selection",
        choices=("nash", "fitness"),
        default="fitness",
        help="improve: what parents are ranked by (the target is the plain win rate over the built-ins)",
    )
    parser.add_argument(
        "--constants-table",
        type=int,
        default=150,
        help="improve: programs listed in a child's prompt, which the built-in child screens its "
        "steps with (0: no table, no screening)",
    )
    parser.add_argument("--candidates", type=int, default=6)
    parser.add_argument(
        "--set", action="append", default=[], metavar="NAME=VALUE", help="variant: a constant to change"
    )
    parser.add_argument("--out")
    parser.add_argument(
        "--keep-database",
        action="store_true",
        help="improve, throughput: keep the bench's database (named on stderr) instead of dropping it",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    # The platform's modules read their settings when they load; the bench's key comes first.
    os.environ.setdefault("ARENA_SECRET_KEY", "bench-" + secrets.token_hex(16))
    os.environ.setdefault("ARENA_REDIS_URL", BENCH_REDIS)
    keep = args.keep_database
    if args.mode == "quick":
        args.generations, args.children, args.fresh, args.candidates, args.tournament = 3, 2, 30, 3, 3
        with bench_database("arena_bench_evolver", keep):
            improved = improve(args)
        with bench_database("arena_bench_evolver_q", keep):
            report = {"improve": improved, "throughput": throughput(args)}
    elif args.mode == "improve":
        with bench_database("arena_bench_evolver", keep):
            report = improve(args)
    elif args.mode == "neighbourhood":
        report = neighbourhood(args)
    elif args.mode == "variant":
        report = variant(args)
    elif args.mode == "climb":
        report = climb(args)
    else:
        with bench_database("arena_bench_evolver_q", keep):
            report = throughput(args)
    print(json.dumps(report, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
