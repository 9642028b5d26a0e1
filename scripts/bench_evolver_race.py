"""An in-process model of the evolver's racing loop, for tuning its selection cheaply.

    .venv/bin/python -m scripts.bench_evolver_race [--seeds 0 1 2 3] [--generations 20]
        [--children 12] [--keep 4] [--matches 9] [--final-matches 36] [--final-programs 4]
        [--fresh 201] [--screen 4] [--table 150] [--optimism 1] [--jobs 2]

It runs what `scripts.bench_evolver improve` runs, minus the machinery: the same built-in mutation
operator (`mutate_several`, two inspirations drawn from the best programs; `--screen` distinct
steps per child, of which the surrogate fitted on the `--table` most recent evaluated programs
keeps one, as the built-in child does with its prompt's table; `--screen 1`: no screening, the
operator before the table; `--optimism K`: ranked by the prediction plus K standard deviations,
as the built-in child does with K = 1), the same weak battle
seed, the same built-in opponents and fitness (the evaluation's default battle weights), the same racing
(each generation plays `--matches` new matches, a third against each built-in with seats
alternating; the kept parents replay them), parents drawn by a 3-tournament on fitness among the
kept programs (or, with the exploration ratio, any evaluated program), the kept programs being the
`--keep` best of the generation's field plus the run's best, and final rounds (the
`--final-programs` leaders play common matches until each has `--final-matches`; at most four
rounds, or as many as `--final-matches` needs). Then the seed and the run's best play the same
`--fresh` new matches (the seeds `improve` uses). No sandbox, no database, no LLM server, no
MAP-Elites grid, no islands: the matches are played by exec-ing the operator's programs in worker
processes, which is fine for the project's own seed and operator and nowhere else.

A 20-generation run takes a few minutes on two cores, about a quarter of the real bench, so it is
where a selection scheme is compared over several seeds before the real bench confirms it.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import statistics
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool
from multiprocessing.pool import Pool as PoolType
from typing import Any

from services.evolver.search.mutation import Mutation
from services.trainer.evaluate import wilson_interval
from shared.evolution.config import DEFAULT_FITNESS_WEIGHTS

TOURNAMENT_SIZE = 3
INSPIRATIONS = 2
FINAL_ROUND_PROGRAMS = 4
FINAL_MAX_ROUNDS = 4


@dataclass(frozen=True, slots=True)
class Match:
    opponent: str
    seed: int
    seat: int


@dataclass(frozen=True, slots=True)
class Outcome:
    points: float
    """1 win, 0.5 draw, 0 loss."""
    kills: float
    """Enemy units killed / enemy units."""
    damage_share: float
    """Damage dealt / (dealt + taken), 0.5 when nobody was hurt."""
    crashed: bool = False


@dataclass(slots=True)
class Program:
    name: str
    generation: int
    source: str
    parent: str | None
    change: str
    outcomes: list[Outcome] = field(default_factory=list)
    finals: int = 0

    @property
    def evaluated(self) -> bool:
        """Played, and never crashed (a program that crashes fails its evaluation)."""
        return bool(self.outcomes) and not any(o.crashed for o in self.outcomes)

    @property
    def fitness(self) -> float:
        if not self.outcomes:
            return 0.0
        parts = {
            "win_rate": statistics.fmean(o.points for o in self.outcomes),
            "kill_rate": statistics.fmean(o.kills for o in self.outcomes),
            "damage_share": statistics.fmean(o.damage_share for o in self.outcomes),
        }
        return sum(
            weight * parts.get(name, 0.0) for name, weight in DEFAULT_FITNESS_WEIGHTS["battle"].items()
        )

    @property
    def win_rate(self) -> float:
        return statistics.fmean(o.points for o in self.outcomes) if self.outcomes else 0.0


def play_match(source: str, opponent: str, seed: int, seat: int) -> Outcome:
    """One match of a program against a built-in, in this process, judged by the evaluation's own
    fitness components (services/evolver/evaluation/fitness.py)."""
    from services.evolver.evaluation.fitness import damage_share, kill_rate
    from services.evolver.evaluation.records import MatchRecord, outcome_of
    from shared.games.registry import get_game
    from shared.games.replay import play_local

    namespace: dict[str, Any] = {"__name__": "candidate"}
    game = get_game("battle")
    other = game.builtin_bots()[opponent]
    try:
        exec(compile(source, "candidate", "exec"), namespace)  # the project's own seed and operator
        bots = [namespace["decide"], other] if seat == 0 else [other, namespace["decide"]]
        players = sorted(play_local(game, seed, bots)["result"]["players"], key=lambda p: p["player"])
    except Exception:  # a child that crashes: the real cascade's smoke stage would fail it
        return Outcome(0.0, 0.0, 0.0, crashed=True)
    record = MatchRecord(
        opponent=opponent,
        seat=seat,
        outcome=outcome_of([p["rank"] for p in players], seat),
        candidate_metrics=players[seat]["metrics"],
        opponent_metrics=players[1 - seat]["metrics"],
    )
    return Outcome(record.outcome.points, kill_rate([record]), damage_share([record]))


def _play(task: tuple[str, Match]) -> Outcome:
    source, match = task
    return play_match(source, match.opponent, match.seed, match.seat)


def _matches(opponents: Sequence[str], count: int, salt: str) -> list[Match]:
    base = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:4], "big")
    return [
        Match(opponents[i % len(opponents)], (base + i * 7919) % 2**31, (i // len(opponents)) % 2)
        for i in range(count)
    ]


def _fresh_matches(opponents: Sequence[str], count: int) -> list[Match]:
    """The matches `bench_evolver improve` plays after its run (the same seeds and seats)."""
    offset = zlib.crc32(b"fresh") % 1000
    return [Match(opponents[i % len(opponents)], 10_000_000 + i * 7919 + offset, i % 2) for i in range(count)]


def _normalised(source: str) -> str:
    try:
        return hashlib.sha256(ast.dump(ast.parse(source)).encode()).hexdigest()
    except SyntaxError:
        return hashlib.sha256(source.encode()).hexdigest()


class Race:
    """One run of the model, seeded."""

    def __init__(self, args: argparse.Namespace, seed: int, pool: PoolType) -> None:
        from services.evolver.evaluation.cascade import builtin_names
        from services.evolver.seeds import seed_program

        self.args = args
        self.seed = seed
        self.pool = pool
        self.rng = random.Random(f"race:{seed}")
        self.opponents = builtin_names("battle")
        self.programs: list[Program] = [Program("p0", 0, seed_program("battle"), None, "seed")]
        self.seen = {_normalised(self.programs[0].source)}
        self.by_name = {p.name: p for p in self.programs}
        self.constants: dict[str, dict[str, float]] = {}
        """Each program's named constants, parsed once."""

    def score(self, program: Program) -> float:
        """The ranking figure: the fitness, or with `--prior` the fitness shrunk toward the
        parent's by `--prior` matches' worth (a child must beat its parent by more than luck)."""
        parent = self.by_name.get(program.parent) if program.parent else None
        prior = float(self.args.prior)
        if prior <= 0 or parent is None or not parent.evaluated:
            return program.fitness
        played = len(program.outcomes)
        return (played * program.fitness + prior * parent.fitness) / (played + prior)

    def rank(self, programs: Sequence[Program], n: int) -> list[Program]:
        """As `database.top`: the best `n` evaluated programs, the older first on a tie."""
        return sorted((p for p in programs if p.evaluated), key=lambda p: (-self.score(p), int(p.name[1:])))[
            :n
        ]

    def play(self, programs: Sequence[Program], matches: Sequence[Match]) -> None:
        tasks = [(p.source, m) for p in programs for m in matches]
        outcomes = self.pool.map(_play, tasks, chunksize=max(1, len(matches) // 2))
        for index, program in enumerate(programs):
            program.outcomes.extend(outcomes[index * len(matches) : (index + 1) * len(matches)])

    def child(self, kept: Sequence[Program], generation: int) -> Program | None:
        from services.evolver.search.mutation import MutationError, mutate_several

        evaluated = [p for p in self.programs if p.evaluated]
        if self.rng.random() < self.args.exploration:
            parent = self.rng.choice(evaluated)
        else:
            entrants = [self.rng.choice(kept) for _ in range(min(TOURNAMENT_SIZE, len(kept)))]
            parent = (self.rank(entrants, 1) or self.rank(self.programs, 1))[0]
        others = [p for p in self.rank(evaluated, len(evaluated)) if p.name != parent.name]
        inspirations: list[str] = []
        for other in others[: max(4, INSPIRATIONS * 2)]:
            if len(inspirations) >= INSPIRATIONS:
                break
            if self.rng.random() < 0.75 or len(others) <= INSPIRATIONS:
                inspirations.append(other.source)
        drawn: list[tuple[str, Mutation]] = []
        for _ in range(5 * max(1, self.args.screen)):  # identical code is never evaluated twice
            try:
                mutation = mutate_several(parent.source, self.rng, inspirations)
            except MutationError:
                break
            key = _normalised(mutation.source)
            if key not in self.seen and key not in (k for k, _ in drawn):
                drawn.append((key, mutation))
                if len(drawn) >= max(1, self.args.screen):
                    break
        if not drawn:
            return None
        key, mutation = self.screened(parent, drawn)
        self.seen.add(key)
        name = f"p{len(self.programs)}"
        return Program(name, generation, mutation.source, parent.name, mutation.description)

    def screened(self, parent: Program, drawn: list[tuple[str, Mutation]]) -> tuple[str, Mutation]:
        """With `--screen K`: of the K drawn steps, the one the surrogate fitted on the `--table`
        most recently evaluated programs predicts best (the first when it cannot fit)."""
        from services.evolver.search.surrogate import Scored, best_predicted, named_constants

        recent = [p for p in self.programs if p.evaluated][-self.args.table :]
        for program in recent:
            if program.name not in self.constants:
                self.constants[program.name] = named_constants(program.source)
        rows = [Scored(self.constants[p.name], p.fitness, len(p.outcomes)) for p in recent]
        chosen = best_predicted(
            parent.source, [m.source for _, m in drawn], rows, optimism=self.args.optimism
        )
        return drawn[chosen]

    def run(self) -> dict[str, Any]:
        args = self.args
        started = time.monotonic()
        kept: list[Program] = []
        curve = []
        for generation in range(args.generations):
            matches = _matches(self.opponents, args.matches, f"race:{self.seed}:generation:{generation}")
            field_ = list(kept) if kept else [self.programs[0]]
            self.play(field_, matches)  # the kept parents' rematch (at first, the seed's evaluation)
            children: list[Program] = []
            for _ in range(args.children):
                child = self.child(field_, generation)
                if child is not None:
                    self.programs.append(child)
                    self.by_name[child.name] = child
                    children.append(child)
            self.play(children, matches)
            field_ += children
            leaders = self.rank(field_, args.keep) or self.rank(self.programs, 1)
            best = self.rank(self.programs, 1)[0]
            kept = leaders + ([best] if best not in leaders else [])
            curve.append(round(leaders[0].fitness, 3))
            print(
                f"  seed {self.seed} generation {generation:2d}: leader {leaders[0].name} "
                f"{leaders[0].fitness:.3f} ({len(leaders[0].outcomes)} matches), "
                f"children best {max((c.fitness for c in children), default=0):.3f}",
                file=sys.stderr,
                flush=True,
            )
        self.final_rounds()
        pick = self.rank(self.programs, 1)[0]
        fresh = self.fresh(pick)
        print(
            f"  seed {self.seed}: the run's best {pick.name} (generation {pick.generation}, "
            f"{len(pick.outcomes)} matches) wins {fresh['win_rate']:.3f} {fresh['ci95']} on fresh matches",
            file=sys.stderr,
            flush=True,
        )
        return {
            "seed": self.seed,
            "programs": len(self.programs),
            "curve": curve,
            "fresh": fresh,
            "pick": {
                "program": pick.name,
                "generation": pick.generation,
                "matches": len(pick.outcomes),
                "fitness": round(pick.fitness, 3),
                "lineage": self.lineage(pick),
            },
            "seconds": round(time.monotonic() - started, 1),
        }

    def fresh(self, program: Program) -> dict[str, Any]:
        """`program`'s win rate over the fresh matches, which no run plays."""
        probe = Program(program.name, program.generation, program.source, None, "")
        self.play([probe], _fresh_matches(self.opponents, self.args.fresh))
        low, high = wilson_interval(round(sum(o.points for o in probe.outcomes)), len(probe.outcomes))
        return {
            "program": program.name,
            "win_rate": round(probe.win_rate, 3),
            "ci95": [round(low, 3), round(high, 3)],
        }

    def final_rounds(self) -> None:
        """As `tools.final_round`: the leaders play common rounds until each has enough matches."""
        max_rounds = max(FINAL_MAX_ROUNDS, -(-self.args.final_matches // self.args.matches))
        for pass_ in range(3 * max_rounds):
            due = [
                p
                for p in self.rank(self.programs, self.args.final_programs)
                if p.finals < max_rounds and (p.finals == 0 or len(p.outcomes) < self.args.final_matches)
            ]
            if not due:
                return
            matches = _matches(self.opponents, self.args.matches, f"race:{self.seed}:final:{pass_}")
            self.play(due, matches)
            for p in due:
                p.finals += 1

    def lineage(self, program: Program) -> list[str]:
        by_name = {p.name: p for p in self.programs}
        steps: list[str] = []
        current: Program | None = program
        while current is not None and current.parent is not None:
            steps.append(f"{current.name}: {current.change}")
            current = by_name.get(current.parent)
        return steps[::-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--generations", type=int, default=20)
    parser.add_argument("--children", type=int, default=12, help="children per generation")
    parser.add_argument("--keep", type=int, default=4, help="parents kept from each generation's field")
    parser.add_argument("--matches", type=int, default=9, help="new matches per generation")
    parser.add_argument("--final-matches", type=int, default=36)
    parser.add_argument(
        "--final-programs", type=int, default=FINAL_ROUND_PROGRAMS, help="leaders that play the final rounds"
    )
    parser.add_argument(
        "--prior", type=float, default=0.0, help="rank by fitness shrunk toward the parent's by N matches"
    )
    parser.add_argument(
        "--sigma", type=float, help="the operator's NAMED_STEP_SIGMA for this run (default: the operator's)"
    )
    parser.add_argument(
        "--screen",
        type=int,
        default=1,
        help="steps drawn per child; the surrogate keeps one (1: none)",
    )
    parser.add_argument("--table", type=int, default=150, help="recent programs the surrogate is fitted on")
    parser.add_argument(
        "--optimism",
        type=float,
        default=0.0,
        help="screen by the surrogate's prediction plus this many standard deviations (0: the prediction)",
    )
    parser.add_argument("--exploration", type=float, default=0.1)
    parser.add_argument("--fresh", type=int, default=201)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    if args.sigma is not None:
        from services.evolver.search import mutation

        mutation.NAMED_STEP_SIGMA = args.sigma  # mutations are made in this process
    started = time.monotonic()
    with Pool(max(1, args.jobs)) as pool:
        reference = Race(args, -1, pool)
        baseline = reference.fresh(reference.programs[0])  # the baseline, once: the fresh matches are fixed
        print(f"seed program: {baseline['win_rate']:.3f} {baseline['ci95']}", file=sys.stderr, flush=True)
        runs = [Race(args, seed, pool).run() for seed in args.seeds]
    rates = [run["fresh"]["win_rate"] for run in runs]
    report = {
        "mode": "race",
        "generations": args.generations,
        "children": args.children,
        "keep": args.keep,
        "prior": args.prior,
        "sigma": args.sigma,
        "screen": args.screen,
        "table": args.table,
        "optimism": args.optimism,
        "matches_per_generation": args.matches,
        "fresh_matches": args.fresh,
        "seed_program": baseline,
        "best_win_rates": rates,
        "mean_best_win_rate": round(statistics.fmean(rates), 3) if rates else None,
        "runs_at_or_above_75pct": sum(1 for rate in rates if rate >= 0.75),
        "seconds": round(time.monotonic() - started, 1),
        "runs": runs,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for run in runs:
            best = run["fresh"]
            print(
                f"seed {run['seed']}: {baseline['win_rate']:.3f} -> {best['win_rate']:.3f} "
                f"{best['ci95']} ({run['pick']['program']}, generation {run['pick']['generation']}, "
                f"{run['pick']['matches']} matches; {run['seconds']} s)"
            )
        print(
            f"mean {report['mean_best_win_rate']}, {report['runs_at_or_above_75pct']} of {len(runs)} >= 75%"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
