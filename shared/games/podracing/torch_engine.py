"""Batched podracing engine in torch: B races advanced at once on any device, in float64 or float32.

It follows the reference engine (`shared.games.podracing.engine`) rule for rule and, in float64,
operation for operation: every formula below evaluates the same floating-point expression in the
same order, or one that provably gives the same number (scaled by powers of two, or a select
written as arithmetic; each is explained where it is used), so on CPU the integer state
(positions, velocities, checkpoints, winners) is identical.
The only differences are the last bits of `atan2`/`cos`/`sin`, which torch and libm compute
differently about once in a few hundred calls; they move the float heading by one ulp and are
wiped out by the end-of-turn truncation and rounding (see docs/games/podracing-torch.md).

Design rules that keep it fast on a GPU:

* State lives in preallocated tensors, one column per race (stored [4, B] per pod quantity and
  shown as [B, 4] views), updated in place.
* `step` never synchronises with the host: no `.item()`, no data-dependent shapes, no Python `if`
  on tensor values. Every conditional is a `torch.where` or a mask, so the same kernels run for
  every race whatever happens in it.
* The continuous collision loop runs a fixed number of iterations per turn (`collision_iters`,
  by default the config's `max_collisions_per_turn`). A race whose collisions are all resolved
  simply advances by 0 in the remaining iterations. After the last iteration the rest of the turn
  moves without collisions, exactly as the reference does at its cap, and `collisions_capped`
  counts the turns where another collision was still due.
* Finished races are frozen (every update is masked), or, with `auto_reset=True`, restarted at the
  end of the step on their next track, drawn ahead from a pool made by a vectorised generator
  (all races redraw together every `reset_draw_every` steps, so a reset costs a few selects).
* On CPU most of a step's time goes to the number of kernels and the bytes each one touches, and
  some kernels are far slower than others: `where` / `masked_fill` on bool masks (about 10x an
  add), `sqrt` of 0 or of a negative (25-50x), `min` with indices. The code prefers float
  arithmetic that is provably exact (see `_pick`, `_sqrt_non_negative`, `_first_collision`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from shared.games.podracing.engine import (
    BOOST_THRUST,
    CHECKPOINT_SWEEP_RADIUS_SQ,
    COLLISION_DISTANCE_SQ,
    FRICTION,
    HEIGHT,
    MARGIN,
    MAX_ROTATION,
    MIN_CHECKPOINT_DISTANCE,
    MIN_IMPULSE,
    PAIRS,
    SHIELD_COOLDOWN,
    SHIELD_MASS,
    START_OFFSETS,
    WIDTH,
    RaceConfig,
)

if TYPE_CHECKING:
    from shared.games.podracing.engine import Race

MAX_CHECKPOINTS = 8
"""Checkpoint tensors are padded to this many slots; `num_checkpoints` says how many are real."""
RAD_TO_DEG = 180.0 / math.pi
"""`math.degrees(x)` is `x * (180 / pi)` with this very constant."""
DEG_TO_RAD = math.pi / 180.0
"""`math.radians(x)` is `x * (pi / 180)` with this very constant."""

REASON_RUNNING = 0
REASON_WON = 1
REASON_TIMEOUT = 2
REASON_TURN_LIMIT = 3
REASONS = {
    REASON_RUNNING: None,
    REASON_WON: "won",
    REASON_TIMEOUT: "timeout",
    REASON_TURN_LIMIT: "turn_limit",
}
"""Codes of `TorchRaces.reason` and the reference engine's `Race.reason` strings they stand for."""

_FALLBACK_TRACK = (
    (2000, 2000),
    (6000, 2000),
    (10000, 2000),
    (14000, 2000),
    (14000, 7000),
    (10000, 7000),
    (6000, 7000),
    (2000, 7000),
)
"""Used only if the generator failed in every round: any prefix of it is a valid track."""


@dataclass
class Tracks:
    """A batch of tracks: checkpoint coordinates padded to 8 slots, and the real count per track."""

    x: torch.Tensor
    """[N, 8] checkpoint x (padding repeats checkpoint 0)."""
    y: torch.Tensor
    """[N, 8] checkpoint y."""
    count: torch.Tensor
    """[N] int64, in [checkpoints_min, checkpoints_max]."""


def generate_tracks(
    n: int,
    config: RaceConfig,
    *,
    device: torch.device | str = "cpu",
    dtype: torch.dtype = torch.float64,
    generator: torch.Generator | None = None,
    candidates: int = 48,
    rounds: int = 4,
) -> Tracks:
    """Vectorised rejection sampling of `n` tracks with the reference's constraints.

    Checkpoints are integers in [2000, W-2000] x [2000, H-2000], more than 3000 apart, and their
    count is uniform in [checkpoints_min, checkpoints_max]. Each slot draws `candidates` points at
    once and keeps the first that fits; a track that cannot place all its points retries from
    scratch in the next round (up to `rounds`). Tracks still unfinished keep the points they placed
    if that is at least `checkpoints_min`, else they take their count from a fixed valid track. No
    host sync, so it can also run inside a training loop. The distribution differs from `generate_track`'s.
    """
    device = torch.device(device)
    lo, hi = config.checkpoints_min, config.checkpoints_max
    if not 2 <= lo <= hi <= MAX_CHECKPOINTS:
        raise ValueError(f"checkpoint counts must satisfy 2 <= min <= max <= {MAX_CHECKPOINTS}")
    limit_sq = float(MIN_CHECKPOINT_DISTANCE * MIN_CHECKPOINT_DISTANCE)
    count = torch.randint(lo, hi + 1, (n,), generator=generator, device=device)
    best_x = torch.zeros(n, MAX_CHECKPOINTS, dtype=dtype, device=device)
    best_y = torch.zeros_like(best_x)
    best_placed = torch.zeros(n, dtype=torch.long, device=device)
    slots = torch.arange(MAX_CHECKPOINTS, device=device)
    for _ in range(rounds):
        px = torch.zeros(n, MAX_CHECKPOINTS, dtype=dtype, device=device)
        py = torch.zeros_like(px)
        placed = torch.zeros(n, dtype=torch.long, device=device)
        alive = torch.ones(n, dtype=torch.bool, device=device)
        for slot in range(MAX_CHECKPOINTS):
            cx = torch.randint(
                MARGIN, WIDTH - MARGIN + 1, (n, candidates), generator=generator, device=device
            )
            cy = torch.randint(
                MARGIN, HEIGHT - MARGIN + 1, (n, candidates), generator=generator, device=device
            )
            cx = cx.to(dtype)
            cy = cy.to(dtype)
            ok = torch.ones(n, candidates, dtype=torch.bool, device=device)
            for prev in range(slot):
                dx = cx - px[:, prev : prev + 1]
                dy = cy - py[:, prev : prev + 1]
                ok &= dx * dx + dy * dy > limit_sq
            found = ok.any(1)
            first = ok.to(torch.int8).argmax(1, keepdim=True)
            want = alive & (slot < count)
            take = want & found
            px[:, slot] = torch.where(take, cx.gather(1, first).squeeze(1), px[:, slot])
            py[:, slot] = torch.where(take, cy.gather(1, first).squeeze(1), py[:, slot])
            placed += take
            alive &= found | ~want
        better = placed > best_placed
        best_x = torch.where(better[:, None], px, best_x)
        best_y = torch.where(better[:, None], py, best_y)
        best_placed = torch.maximum(best_placed, placed)
    usable = best_placed >= lo
    count = torch.where(usable, torch.minimum(best_placed, count), count)
    fallback = torch.tensor(_FALLBACK_TRACK, dtype=dtype, device=device)
    x = torch.where(usable[:, None], best_x, fallback[:, 0])
    y = torch.where(usable[:, None], best_y, fallback[:, 1])
    # Padding slots repeat checkpoint 0 so that any gather stays on the map.
    pad = slots[None, :] >= count[:, None]
    x = torch.where(pad, x[:, :1], x)
    y = torch.where(pad, y[:, :1], y)
    return Tracks(x=x, y=y, count=count)


def _round_half_away(value: torch.Tensor) -> torch.Tensor:
    """`sign(v) * floor(|v| + 0.5)`, with -0.0 turned into 0.0 like the reference."""
    magnitude = torch.floor(torch.abs(value) + 0.5)
    return torch.where(value >= 0, magnitude, -magnitude) + 0.0


def _pick(mask: torch.Tensor, a: torch.Tensor | float, b: torch.Tensor) -> torch.Tensor:
    """`torch.where(mask, a, b)` for finite values, as `lerp(b, a, mask)` with weights 0 or 1.

    Exact (b + 0 * (a - b) is b, a - (a - b) * 0 is a; only a -0.0 may become +0.0, which no
    formula here can tell apart), and on CPU several times cheaper than `where` on a bool mask.
    """
    weight = mask.view(torch.uint8).to(b.dtype)
    return torch.lerp(b, a if isinstance(a, torch.Tensor) else torch.full_like(b, a), weight)


def _normalize_angle(angle: torch.Tensor) -> torch.Tensor:
    """Into [0, 360) for angles in [-360, 720): fmod, +360 if negative, exactly 360 becomes 0 (as
    the reference). In that range fmod(a, 360) is a - 360 above 360, exactly (Sterbenz), and much
    cheaper than torch's fmod."""
    result = _pick(angle >= 360.0, angle - 360.0, angle)
    result = _pick(result < 0.0, result + 360.0, result)
    return _pick(result >= 360.0, 0.0, result)


def _sqrt_non_negative(value: torch.Tensor) -> torch.Tensor:
    """sqrt(max(v, 0)), exactly, without ever taking the sqrt of 0 or of a negative number.

    On x86 CPUs torch's sqrt is 25 to 50 times slower on 0 (and on negatives, which give NaN)
    than on positive numbers, and most pairs of pods or checkpoint sweeps have no root. With
    p = max(v, 0) and g = sign(p) (0 or 1), sqrt(p + (1 - g)) * g is sqrt(p) when p > 0 and 0
    when p == 0. Callers test `v >= 0` themselves.
    """
    p = torch.clamp_min(value, 0.0)
    g = torch.sign(p)
    return torch.sqrt(p + (1.0 - g)).mul_(g)


def start_positions(cx: torch.Tensor, cy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Pod start positions [N, 4] from checkpoints [N, >=2], as `engine.start_positions`."""
    dx = cx[:, 1] - cx[:, 0]
    dy = cy[:, 1] - cy[:, 0]
    length = torch.sqrt(dx * dx + dy * dy)
    px = -dy / length
    py = dx / length
    offsets = torch.tensor(START_OFFSETS, dtype=cx.dtype, device=cx.device)
    x = _round_half_away(cx[:, :1] + px[:, None] * offsets)
    y = _round_half_away(cy[:, :1] + py[:, None] * offsets)
    return x, y


@dataclass
class _Motion:
    """What the movement phase reads and writes, as columns of the whole batch or of a subset.

    The full-batch instance holds views of `TorchRaces`' own tensors; `select` gathers the columns
    of some races into new tensors, and `put` writes the changed ones back, so the same code moves
    every race (sync-free path) or only the races that have a collision (compact path).
    """

    kin: torch.Tensor
    """[4 fields (x, y, vx, vy), 4 pods, N]."""
    cp: torch.Tensor
    """[2, 8, N] checkpoint coordinates."""
    num_checkpoints: torch.Tensor
    total_passes: torch.Tensor
    next_cp: torch.Tensor
    """[4, N], like the other per-pod tensors."""
    passed: torch.Tensor
    passes: torch.Tensor
    finish_time: torch.Tensor
    mass: torch.Tensor
    inv_mass: torch.Tensor
    timeouts: torch.Tensor
    """[2, N], per player."""
    active: torch.Tensor
    collisions: torch.Tensor
    collisions_capped: torch.Tensor
    pair_ij: torch.Tensor
    """[2, 6, N]: the two pods of each pair, expanded over the columns (a gather beats indexing)."""
    pair_scratch: torch.Tensor
    """[4, 6, N] scratch for the pair differences."""
    timeout_turns: int

    _WRITTEN = (
        "kin",
        "next_cp",
        "passed",
        "passes",
        "finish_time",
        "timeouts",
        "collisions",
        "collisions_capped",
    )
    """Fields that movement changes: `put` copies these back."""

    def select(self, idx: torch.Tensor) -> _Motion:
        """The columns `idx` (sorted race indices), gathered into new tensors."""
        n = idx.shape[0]
        fields = {
            name: getattr(self, name).index_select(-1, idx)
            for name in (
                "kin",
                "cp",
                "num_checkpoints",
                "total_passes",
                "next_cp",
                "passed",
                "passes",
                "finish_time",
                "mass",
                "inv_mass",
                "timeouts",
                "active",
                "collisions",
                "collisions_capped",
            )
        }
        return _Motion(
            **fields,
            pair_ij=self.pair_ij[..., :n],
            pair_scratch=self.kin.new_empty(4, 6, n),
            timeout_turns=self.timeout_turns,
        )

    def put(self, idx: torch.Tensor, sub: _Motion) -> None:
        """Write the changed fields of `sub` (made by `select(idx)`) back into these columns."""
        for name in self._WRITTEN:
            getattr(self, name).index_copy_(-1, idx, getattr(sub, name))

    def first_collision(
        self, elapsed: torch.Tensor, *, pick: bool = True
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Earliest valid impact time per race over the 6 pairs (the first pair on exact ties), the
        index of that pair in `PAIRS` [N], and whether there is one (`pick=False`: only the last).

        With s = px*vx + py*vy the reference's b is 2s, its disc 4 (s*s - a*c) and its t
        -(s + sqrt(s*s - a*c)) / a: scaling by powers of two is exact, so this is the same number.
        Its early exits are implied: a == 0 makes t NaN, and c <= 0 or s >= 0 make t <= 0 (because
        sqrt(s*s) == |s| in IEEE arithmetic).
        """
        d = self.pair_scratch
        kin = self.kin
        torch.sub(kin[:, 0:1], kin[:, 1:4], out=d[:, 0:3])
        torch.sub(kin[:, 1:2], kin[:, 2:4], out=d[:, 3:5])
        torch.sub(kin[:, 2:3], kin[:, 3:4], out=d[:, 5:6])
        sq = d * d
        a = sq[2] + sq[3]
        c = (sq[0] + sq[1]).sub_(COLLISION_DISTANCE_SQ)
        dots = d[0:2] * d[2:4]
        s = dots[0] + dots[1]
        disc = (s * s).sub_(a * c)
        t = (s + _sqrt_non_negative(disc)).neg_().div_(a)
        valid = (disc >= 0.0) & (t > 0.0) & ((elapsed + t) < 1.0)
        if not pick:
            return t, t, valid.any(0) & self.active
        best, pair = torch.where(valid, t, math.inf).min(0)
        return best, pair, (best < math.inf) & self.active

    def advance(self, elapsed: torch.Tensor, dt: torch.Tensor) -> None:
        """Move every pod by v * dt and pass its next checkpoint if the segment enters it.

        Same rewriting as in `first_collision`: u = -(s + sqrt(s*s - a*c)) / a with s = q.d. A
        zero move (a == 0) gives u = NaN and no pass."""
        pos = self.kin[0:2]
        d = self.kin[2:4] * dt
        q = pos - self.cp.gather(1, self.next_cp.expand(2, -1, -1))
        qq = q * q
        c = (qq[0] + qq[1]).sub_(CHECKPOINT_SWEEP_RADIUS_SQ)
        dd = d * d
        a = dd[0] + dd[1]
        qd = q * d
        s = qd[0] + qd[1]
        disc = (s * s).sub_(a * c)
        u = (s + _sqrt_non_negative(disc)).neg_().div_(a)
        hit = (c > 0.0) & (disc >= 0.0) & (u >= 0.0) & (u <= 1.0)
        pos.add_(d)
        self.next_cp.add_(hit)
        # (next + 1) % count, as a compare: integer division is slow on CPU.
        self.next_cp.masked_fill_(self.next_cp >= self.num_checkpoints, 0)
        self.passed.add_(hit)
        self.passes.add_(hit)
        self.timeouts.masked_fill_(hit[0::2] | hit[1::2], self.timeout_turns)
        done = hit & (self.passed == self.total_passes)
        self.finish_time.copy_(torch.where(done, u.mul_(dt).add_(elapsed), self.finish_time))

    def bounce(self, pair: torch.Tensor, has: torch.Tensor) -> None:
        """Elastic bounce of the pods of `pair` in each race where `has`, 120 minimum impulse."""
        ij = self.pair_ij.gather(1, pair.expand(2, 1, -1))
        i, j = ij[0:1], ij[1:2]
        kin = self.kin
        mass, inv_mass = self.mass, self.inv_mass
        one = kin.gather(1, i.expand(4, 1, -1))
        two = kin.gather(1, j.expand(4, 1, -1))
        m1, m2 = mass.gather(0, i[0]), mass.gather(0, j[0])
        n = one - two
        nn = n[0:2] * n[0:2]
        denom = (nn[0] + nn[1]) * (inv_mass.gather(0, i[0]) + inv_mass.gather(0, j[0]))
        dots = n[0:2] * n[2:4]
        nd = dots[0] + dots[1]
        f = n[0:2] * nd / denom
        v1 = one[2:4] - f / m1
        v2 = two[2:4] + f / m2
        ff = f * f
        length = torch.sqrt(ff[0] + ff[1])
        scale = torch.where((length < MIN_IMPULSE) & (length != 0.0), MIN_IMPULSE / length, 1.0)
        f.mul_(scale)
        h = has[None, None, :]
        vel = kin[2:4]
        vel.scatter_(1, i.expand(2, 1, -1), torch.where(h, v1.sub_(f / m1), one[2:4]))
        vel.scatter_(1, j.expand(2, 1, -1), torch.where(h, v2.add_(f / m2), two[2:4]))
        self.collisions.add_(has)

    def collide_and_move(self, iterations: int) -> None:
        """The whole movement phase, sync-free: `iterations` collision steps, the cap check, then
        the rest of the turn. A race out of collisions advances by 0 in the remaining steps."""
        elapsed = torch.zeros_like(self.collisions, dtype=self.kin.dtype)
        for _ in range(iterations):
            t, pair, has = self.first_collision(elapsed)
            dt = torch.where(has, t, 0.0)
            self.advance(elapsed, dt)
            elapsed.add_(dt)
            self.bounce(pair, has)
        # The cap counts only when one more collision was due (as in the reference).
        _, _, pending = self.first_collision(elapsed, pick=False)
        self.collisions_capped.add_(pending)
        self.advance(elapsed, torch.where(self.active, 1.0 - elapsed, 0.0))


_POD_FIELDS = (
    "x",
    "y",
    "vx",
    "vy",
    "angle",
    "next_cp",
    "passed",
    "shield_cd",
    "boost_available",
    "shield_active",
)


class TorchRaces:
    """B races stepped together; see the module docstring for the rules it keeps.

    Per-race tensors: `turn` [B], `finished` [B], `winner` [B] (0, 1, or -1 for none / draw),
    `reason` [B] (codes in `REASONS`), `winning_pod` [B] (-1 if none), `timeouts` [B, 2]. Per-pod
    tensors [B, 4]: `x`, `y`, `vx`, `vy`, `angle`, `next_cp`, `passed`, `shield_cd`,
    `boost_available`, `shield_active`; checkpoints `cp_x`, `cp_y` [B, 8] and `num_checkpoints`
    [B]. Counters: `collisions` [B] (bounces so far), `collisions_capped` [B] (turns cut short by the
    collision cap), `invalid_commands` [B, 2] (command values that had to be sanitised).
    Per step: `passes` [B, 4] (checkpoints passed this turn) and `just_finished` [B]; with
    auto-reset, `episode_winner`, `episode_reason`, `episode_turns`, `episode_passed` [B, 2] keep
    what a race ended with after it restarted.

    Internally every per-pod quantity is stored pod-major ([4, B], the public [B, 4] tensors are
    transposed views of it), and x, y, vx, vy share one [4 fields, 4 pods, B] tensor: then each
    pod or collision pair is a contiguous row, and one kernel handles all four fields or all six
    pairs at once. On CPU a step costs about (number of kernels) x (bytes each touches), so the
    formulas are written to need as few kernels as possible while staying bit-exact.
    """

    def __init__(
        self,
        num_races: int,
        config: RaceConfig | None = None,
        *,
        device: torch.device | str = "cpu",
        dtype: torch.dtype = torch.float64,
        collision_iters: int | None = None,
        auto_reset: bool = False,
        seed: int | None = None,
        track_pool_size: int = 16384,
        reset_draw_every: int = 16,
        compact: bool | None = None,
    ) -> None:
        if dtype not in (torch.float32, torch.float64):
            raise ValueError("dtype must be torch.float32 or torch.float64")
        self.config = config or RaceConfig()
        self.num_races = num_races
        self.device = torch.device(device)
        self.dtype = dtype
        self.collision_iters = (
            self.config.max_collisions_per_turn if collision_iters is None else int(collision_iters)
        )
        if self.collision_iters < 1:
            raise ValueError("collision_iters must be at least 1")
        self.auto_reset = auto_reset
        self.compact = self.device.type == "cpu" if compact is None else compact
        """Run the CPU step (see `_move_compact`): it reads tensor values, so it is off elsewhere."""
        # No generator on the "meta" device (used to prove that `step` never reads tensor data).
        self.generator: torch.Generator | None = None
        if self.device.type != "meta":
            self.generator = torch.Generator(device=self.device)
            self.generator.manual_seed(0 if seed is None else seed)
        self.track_pool_size = track_pool_size
        self.reset_draw_every = max(1, reset_draw_every)
        self._pool: Tracks | None = None

        b = num_races
        f = {"dtype": dtype, "device": self.device}
        i64 = {"dtype": torch.long, "device": self.device}
        boolean = {"dtype": torch.bool, "device": self.device}
        self._cp = torch.zeros(2, MAX_CHECKPOINTS, b, **f)
        self._cp_x, self._cp_y = self._cp[0], self._cp[1]
        self.num_checkpoints = torch.full((b,), 2, **i64)
        self.total_passes = torch.zeros(b, **i64)
        self._kin = torch.zeros(4, 4, b, **f)
        """x, y, vx, vy: [field, pod, race]."""
        self._x, self._y, self._vx, self._vy = self._kin.unbind(0)
        self._angle = torch.zeros(4, b, **f)
        self._next_cp = torch.ones(4, b, **i64)
        self._passed = torch.ones(4, b, **i64)
        self._shield_cd = torch.zeros(4, b, **i64)
        self._boost_available = torch.ones(4, b, **boolean)
        self._shield_active = torch.zeros(4, b, **boolean)
        self._timeouts = torch.full((2, b), self.config.timeout_turns, **i64)
        self._passes = torch.zeros(4, b, **i64)
        self._invalid = torch.zeros(2, b, **i64)
        self._episode_passed = torch.zeros(2, b, **i64)
        self.turn = torch.zeros(b, **i64)
        self.finished = torch.zeros(b, **boolean)
        self.winner = torch.full((b,), -1, **i64)
        self.winning_pod = torch.full((b,), -1, **i64)
        self.reason = torch.zeros(b, **i64)
        self.collisions = torch.zeros(b, **i64)
        self.collisions_capped = torch.zeros(b, **i64)
        self.just_finished = torch.zeros(b, **boolean)
        self.episode_winner = torch.full((b,), -1, **i64)
        self.episode_reason = torch.zeros(b, **i64)
        self.episode_turns = torch.zeros(b, **i64)
        # Scratch buffers reused every turn.
        self._finish_time = torch.full((4, b), math.inf, **f)
        self._pair = torch.zeros(4, 6, b, **f)
        # Pods of each pair, expanded over the batch: a gather is far cheaper than indexing.
        self._pair_ij = torch.tensor(PAIRS, **i64).T[:, :, None].expand(2, 6, b)
        self._half = torch.tensor(0.5, **f)
        # Auto-reset: the next track of every race, drawn ahead from the pool (pod-major).
        self._steps_since_draw = 0
        self._next_cp_xy = torch.zeros(2, MAX_CHECKPOINTS, b, **f)
        self._next_start = torch.zeros(2, 4, b, **f)
        self._next_count = torch.full((b,), 2, **i64)
        self._step_fn = self._step_impl

    # ------------------------------------------------------- public views

    x = property(lambda self: self._x.T, doc="[B, 4] pod x (integers after each turn).")
    y = property(lambda self: self._y.T, doc="[B, 4] pod y.")
    vx = property(lambda self: self._vx.T, doc="[B, 4] pod velocity x (integers after each turn).")
    vy = property(lambda self: self._vy.T, doc="[B, 4] pod velocity y.")
    angle = property(lambda self: self._angle.T, doc="[B, 4] heading in degrees, [0, 360).")
    next_cp = property(lambda self: self._next_cp.T, doc="[B, 4] index of each pod's next checkpoint.")
    passed = property(lambda self: self._passed.T, doc="[B, 4] checkpoints passed (1 at the start).")
    shield_cd = property(lambda self: self._shield_cd.T, doc="[B, 4] turns of forced zero thrust left.")
    boost_available = property(lambda self: self._boost_available.T, doc="[B, 4] boost not used yet.")
    shield_active = property(lambda self: self._shield_active.T, doc="[B, 4] shielded this turn (mass 10).")
    timeouts = property(lambda self: self._timeouts.T, doc="[B, 2] turns left to pass a checkpoint.")
    passes = property(lambda self: self._passes.T, doc="[B, 4] checkpoints passed during the last step.")
    invalid_commands = property(lambda self: self._invalid.T, doc="[B, 2] sanitised command values.")
    episode_passed = property(lambda self: self._episode_passed.T, doc="[B, 2] best pod's passes at the end.")
    cp_x = property(lambda self: self._cp_x.T, doc="[B, 8] checkpoint x (padded with checkpoint 0).")
    cp_y = property(lambda self: self._cp_y.T, doc="[B, 8] checkpoint y.")

    # ------------------------------------------------------------------ setup

    def compile(self, **kwargs: object) -> None:
        """Run `step` through `torch.compile` (optional; measure before relying on it)."""
        self._step_fn = torch.compile(self._step_impl, **kwargs)  # type: ignore[call-overload]

    def track_pool(self) -> Tracks:
        """Tracks that auto-reset draws from; generated on first use, renewed by `refresh_track_pool`."""
        if self._pool is None:
            self.refresh_track_pool()
        assert self._pool is not None
        return self._pool

    def refresh_track_pool(self) -> None:
        self._pool = generate_tracks(
            self.track_pool_size, self.config, device=self.device, dtype=self.dtype, generator=self.generator
        )
        sx, sy = start_positions(self._pool.x, self._pool.y)
        # Pod-major copies, so that drawing tracks is three column gathers.
        self._pool_cp = torch.stack((self._pool.x.T, self._pool.y.T))
        self._pool_start = torch.stack((sx.T, sy.T))
        self._draw_next_tracks()

    def _draw_next_tracks(self) -> None:
        """Draw every race's next track from the pool (done every `reset_draw_every` steps, not per
        reset: a race that ends twice in that window replays the same track)."""
        pool = self.track_pool()
        idx = torch.randint(
            pool.count.shape[0], (self.num_races,), generator=self.generator, device=self.device
        )
        torch.index_select(self._pool_cp, 2, idx, out=self._next_cp_xy)
        torch.index_select(self._pool_start, 2, idx, out=self._next_start)
        torch.index_select(pool.count, 0, idx, out=self._next_count)
        self._steps_since_draw = 0

    def reset(self) -> None:
        """Every race restarts on a random track from the pool; counters restart from 0."""
        self._draw_next_tracks()
        everything = torch.ones(self.num_races, dtype=torch.bool, device=self.device)
        self._start(everything, self._next_cp_xy, self._next_start, self._next_count)
        self._draw_next_tracks()
        for counter in (self.collisions, self.collisions_capped, self._invalid, self._passes):
            counter.zero_()
        self.just_finished.zero_()

    def load_tracks(self, tracks: Sequence[Sequence[tuple[int, int]]]) -> None:
        """Start race i on `tracks[i]` (explicit checkpoint lists, e.g. from `engine.generate_track`)."""
        if len(tracks) != self.num_races:
            raise ValueError(f"expected {self.num_races} tracks, got {len(tracks)}")
        cx = torch.zeros(self.num_races, MAX_CHECKPOINTS, dtype=self.dtype)
        cy = torch.zeros_like(cx)
        count = torch.zeros(self.num_races, dtype=torch.long)
        for i, track in enumerate(tracks):
            if not 2 <= len(track) <= MAX_CHECKPOINTS:
                raise ValueError(f"track {i} has {len(track)} checkpoints (2..{MAX_CHECKPOINTS} allowed)")
            padded = list(track) + [track[0]] * (MAX_CHECKPOINTS - len(track))
            cx[i] = torch.tensor([float(p[0]) for p in padded], dtype=self.dtype)
            cy[i] = torch.tensor([float(p[1]) for p in padded], dtype=self.dtype)
            count[i] = len(track)
        sx, sy = start_positions(cx, cy)
        self._start(
            torch.ones(self.num_races, dtype=torch.bool, device=self.device),
            torch.stack((cx.T, cy.T)).to(self.device),
            torch.stack((sx.T, sy.T)).to(self.device),
            count.to(self.device),
        )

    def load_races(self, races: Sequence[Race]) -> None:
        """Copy the full state of reference races (tracks, pods, counters) into the batch."""
        if len(races) != self.num_races:
            raise ValueError(f"expected {self.num_races} races, got {len(races)}")
        for n, race in enumerate(races):
            self.set_race(n, race)

    def set_race(self, n: int, race: Race) -> None:
        """Overwrite race n with a reference race's state (setup and tests; this one syncs)."""
        track = list(race.checkpoints)
        if not 2 <= len(track) <= MAX_CHECKPOINTS:
            raise ValueError(f"a track has {len(track)} checkpoints (2..{MAX_CHECKPOINTS} allowed)")
        padded = track + [track[0]] * (MAX_CHECKPOINTS - len(track))
        self._cp_x[:, n] = torch.tensor([float(p[0]) for p in padded], dtype=self.dtype)
        self._cp_y[:, n] = torch.tensor([float(p[1]) for p in padded], dtype=self.dtype)
        self.num_checkpoints[n] = len(track)
        self.total_passes[n] = len(track) * self.config.laps + 1
        names = {"next_cp": "next_checkpoint", "passed": "checkpoints_passed", "shield_cd": "shield_cooldown"}
        for attr in _POD_FIELDS:
            tensor = getattr(self, "_" + attr)
            values = [getattr(pod, names.get(attr, attr)) for pod in race.pods]
            tensor[:, n] = torch.tensor(values, dtype=tensor.dtype)
        self._timeouts[:, n] = torch.tensor(list(race.timeouts))
        self.turn[n] = race.turn
        self.finished[n] = race.finished
        self.winner[n] = -1 if race.winner is None else race.winner
        codes = {v: k for k, v in REASONS.items()}
        self.reason[n] = codes.get(race.reason, REASON_RUNNING)

    def _start(self, mask: torch.Tensor, cp: torch.Tensor, start: torch.Tensor, count: torch.Tensor) -> None:
        """Put the races in `mask` [B] on the start grid: checkpoints `cp` [2, 8, B], start positions
        `start` [2, 4, B] and checkpoint counts `count` [B] (columns aligned with the batch)."""
        m = mask[None, :]
        self._cp.copy_(_pick(m, cp, self._cp))
        self.num_checkpoints.copy_(torch.where(mask, count, self.num_checkpoints))
        torch.mul(self.num_checkpoints, self.config.laps, out=self.total_passes).add_(1)
        pos = self._kin[0:2]
        pos.copy_(_pick(m, start, pos))
        self._kin[2:4].copy_(_pick(m, 0.0, self._kin[2:4]))
        self._angle.copy_(_pick(m, 0.0, self._angle))
        self._next_cp.masked_fill_(m, 1)
        self._passed.masked_fill_(m, 1)
        self._shield_cd.masked_fill_(m, 0)
        self._boost_available.masked_fill_(m, True)
        self._shield_active.masked_fill_(m, False)
        self._timeouts.masked_fill_(m, self.config.timeout_turns)
        self.turn.masked_fill_(mask, 0)
        self.finished.masked_fill_(mask, False)
        self.winner.masked_fill_(mask, -1)
        self.winning_pod.masked_fill_(mask, -1)
        self.reason.masked_fill_(mask, REASON_RUNNING)

    # ------------------------------------------------------------------- turn

    def step(
        self,
        target: torch.Tensor,
        thrust: torch.Tensor,
        boost: torch.Tensor | None = None,
        shield: torch.Tensor | None = None,
    ) -> None:
        """Play one turn in every unfinished race.

        target [B, 4, 2] (map units), thrust [B, 4] (0..max_thrust, rounded half up), boost / shield [B, 4]
        bool (shield wins over boost, boost over thrust). Non-finite targets (the pod keeps its
        heading) and non-finite or out-of-range thrusts (0, or clamped) are fixed and counted in
        `invalid_commands`. Never synchronises with the host.
        """
        if boost is None:
            boost = torch.zeros(self.num_races, 4, dtype=torch.bool, device=self.device)
        if shield is None:
            shield = torch.zeros(self.num_races, 4, dtype=torch.bool, device=self.device)
        if self.auto_reset and self._pool is None:
            self.refresh_track_pool()
        self._step_fn(target, thrust, boost, shield)
        if self.auto_reset:
            self._start(self.just_finished, self._next_cp_xy, self._next_start, self._next_count)
            self._steps_since_draw += 1
            if self._steps_since_draw >= self.reset_draw_every:
                self._draw_next_tracks()

    def _step_impl(
        self, target: torch.Tensor, thrust: torch.Tensor, boost: torch.Tensor, shield: torch.Tensor
    ) -> None:
        cfg = self.config
        active = ~self.finished
        act = active[None, :]
        tgt, power = self._sanitise(target, thrust, act)
        boost = boost.T & act
        shield = shield.T & act

        # 1. Shield, cooldown and boost resolve into a thrust per pod (reference `_resolve_thrust`).
        blocked = (self._shield_cd > 0) & ~shield & act
        self._shield_cd.sub_(blocked.to(torch.long))
        self._shield_cd.masked_fill_(shield, SHIELD_COOLDOWN)
        self._shield_active.copy_(shield)
        wants_boost = boost & ~shield & ~blocked
        avail = self._boost_available
        if cfg.boost_per_team:
            # Pods resolve in order: a player's second pod boosts only if its first one did not.
            first = wants_boost[0::2] & avail[0::2]
            second = wants_boost[1::2] & avail[1::2] & ~first
            used = torch.stack((first[0], second[0], first[1], second[1]))
            team_used = first | second
            avail[0::2] &= ~team_used
            avail[1::2] &= ~team_used
        else:
            used = wants_boost & avail
            avail &= ~used
        power = torch.where(wants_boost, float(cfg.max_thrust), power)
        power = torch.where(used, float(BOOST_THRUST), power)
        power.masked_fill_(shield | blocked | ~act, 0.0)

        # 2. Rotation towards the target, free on each race's first turn.
        angle = self._angle
        pos, vel = self._kin[0:2], self._kin[2:4]
        delta = tgt - pos
        dx, dy = delta[0], delta[1]
        zero = delta == 0.0
        keep = (zero[0] & zero[1]) | ~act
        # atan2 lies in [-180, 180] degrees, where normalising is just +360 below 0 (fmod is a no-op).
        aim = torch.atan2(dy, dx).mul_(RAD_TO_DEG)
        aim = _pick(aim < 0.0, aim + 360.0, aim)
        aim = _pick(aim >= 360.0, 0.0, aim)
        diff = aim - angle
        diff = _pick(diff > 180.0, diff - 360.0, _pick(diff <= -180.0, diff + 360.0, diff))
        snap = (torch.abs(diff) <= MAX_ROTATION) | (self.turn == 0)[None, :]
        # `aim` is already in [0, 360), so normalising the chosen value changes only the turn.
        # (When diff == 0 the pod snaps, so sign(diff) * 18 is as good as the reference's +-18.)
        turned = angle + torch.sign(diff).mul_(MAX_ROTATION)
        angle.copy_(_pick(keep, angle, _normalize_angle(_pick(snap, aim, turned))))

        # 3. Thrust along the new heading.
        rad = angle * DEG_TO_RAD
        self._vx.add_(torch.cos(rad).mul_(power))
        self._vy.add_(torch.sin(rad).mul_(power))

        # 4. Movement: collision after collision, then the rest of the turn.
        motion = self._motion(active)
        if self.compact:
            self._move_compact(motion)
        else:
            motion.collide_and_move(self.collision_iters)

        # 5. Friction and rounding.
        vel.copy_(_pick(act, torch.trunc(vel * FRICTION).add_(0.0), vel))
        # Half away from zero: trunc(v + copysign(0.5, v)) equals sign(v) * floor(|v| + 0.5).
        pos.copy_(torch.trunc(pos + torch.copysign(self._half, pos)).add_(0.0))
        self.turn.add_(active)

        # 6. Win beats timeout, timeout beats the turn limit.
        self._check_end(active)

    def _motion(self, active: torch.Tensor) -> _Motion:
        """The movement state of the whole batch, as views of this object's tensors."""
        mass = torch.where(self._shield_active, SHIELD_MASS, 1.0).to(self.dtype)
        self._finish_time.fill_(math.inf)
        self._passes.zero_()
        return _Motion(
            kin=self._kin,
            cp=self._cp,
            num_checkpoints=self.num_checkpoints,
            total_passes=self.total_passes,
            next_cp=self._next_cp,
            passed=self._passed,
            passes=self._passes,
            finish_time=self._finish_time,
            mass=mass,
            inv_mass=1.0 / mass,
            timeouts=self._timeouts,
            active=active,
            collisions=self.collisions,
            collisions_capped=self.collisions_capped,
            pair_ij=self._pair_ij,
            pair_scratch=self._pair,
            timeout_turns=self.config.timeout_turns,
        )

    def _move_compact(self, motion: _Motion) -> None:
        """The movement phase on CPU, where reading a tensor costs nothing: one collision test over
        the batch; the races with no collision this turn (most of them) move the whole turn in one
        segment, and only the others run the collision loop, on their gathered columns, until none
        has another collision (or the cap). Same operations per race, so the same results as
        `_Motion.collide_and_move`, for a fraction of the work."""
        elapsed = torch.zeros_like(motion.finish_time[0])
        t, pair, has = motion.first_collision(elapsed)
        motion.advance(elapsed, (motion.active & ~has).to(self.dtype))
        idx = has.nonzero().squeeze(1)
        if idx.numel() == 0:
            return
        sub = motion.select(idx)
        t, pair, has = t.index_select(0, idx), pair.index_select(0, idx), has.index_select(0, idx)
        elapsed = torch.zeros_like(t)
        for iteration in range(self.collision_iters):
            if iteration:
                t, pair, has = sub.first_collision(elapsed)
                if not has.any():
                    break
            dt = torch.where(has, t, 0.0)
            sub.advance(elapsed, dt)
            elapsed.add_(dt)
            sub.bounce(pair, has)
        else:
            # The cap counts only when one more collision was due (as in the reference).
            _, _, pending = sub.first_collision(elapsed, pick=False)
            sub.collisions_capped.add_(pending)
        sub.advance(elapsed, 1.0 - elapsed)
        motion.put(idx, sub)

    def _sanitise(
        self, target: torch.Tensor, thrust: torch.Tensor, act: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Targets as [2, 4, B] and thrust [4, B] with what cannot be played replaced; counts it per
        player (tensor ops only)."""
        tgt = target.to(self.dtype).permute(2, 1, 0)
        finite = torch.isfinite(tgt)
        bad_target = ~(finite[0] & finite[1])
        tgt = torch.where(bad_target, self._kin[0:2], tgt)
        thrust = thrust.T.to(self.dtype)
        finite = torch.isfinite(thrust)
        top = float(self.config.max_thrust)
        bad_thrust = ~finite | (thrust < 0.0) | (thrust > top)
        # Whole numbers, halves up, as the JSON sanitiser does (the value is >= 0 here).
        power = torch.floor(torch.clamp(torch.where(finite, thrust, 0.0), 0.0, top).add_(0.5))
        bad = (bad_target.to(torch.long) + bad_thrust).mul_(act)
        self._invalid.add_(bad.view(2, 2, -1).sum(1))
        return tgt, power

    def _check_end(self, active: torch.Tensor) -> None:
        cfg = self.config
        self._timeouts.sub_(active.to(torch.long))
        first_time, first_pod = self._finish_time.min(0)
        won = (first_time < math.inf) & active
        out = self._timeouts <= 0
        timed_out = (out[0] | out[1]) & active & ~won
        one_out = out[0] ^ out[1]
        over = (self.turn >= cfg.max_turns) & active & ~won & ~timed_out
        winner = torch.where(
            won, first_pod // 2, torch.where(timed_out & one_out, out[0].to(torch.long), self.leader())
        )
        ended = won | timed_out | over
        reason = torch.where(won, REASON_WON, torch.where(timed_out, REASON_TIMEOUT, REASON_TURN_LIMIT))
        self.winner.copy_(torch.where(ended, winner, self.winner))
        self.winning_pod.copy_(torch.where(won, first_pod, self.winning_pod))
        self.reason.copy_(torch.where(ended, reason, self.reason))
        self.finished |= ended
        self.just_finished.copy_(ended)
        self.episode_winner.copy_(torch.where(ended, self.winner, self.episode_winner))
        self.episode_reason.copy_(torch.where(ended, self.reason, self.episode_reason))
        self.episode_turns.copy_(torch.where(ended, self.turn, self.episode_turns))
        best = torch.maximum(self._passed[0::2], self._passed[1::2])
        self._episode_passed.copy_(torch.where(ended[None, :], best, self._episode_passed))

    # ---------------------------------------------------------------- ranking

    def distance_sq(self) -> torch.Tensor:
        """[B, 4] squared distance of each pod to its next checkpoint (the ranking tie-break)."""
        q = self._kin[0:2] - self._cp.gather(1, self._next_cp.expand(2, -1, -1))
        q = q * q
        return (q[0] + q[1]).T

    def leader(self) -> torch.Tensor:
        """[B] player ahead by its best pod (passes, then distance), -1 when exactly level."""
        dist = self.distance_sq().T
        passed = self._passed
        second = (passed[1::2] > passed[0::2]) | ((passed[1::2] == passed[0::2]) & (dist[1::2] < dist[0::2]))
        best_passed = torch.where(second, passed[1::2], passed[0::2])
        best_dist = torch.where(second, dist[1::2], dist[0::2])
        zero_ahead = (best_passed[0] > best_passed[1]) | (
            (best_passed[0] == best_passed[1]) & (best_dist[0] < best_dist[1])
        )
        level = (best_passed[0] == best_passed[1]) & (best_dist[0] == best_dist[1])
        return torch.where(level, -1, torch.where(zero_ahead, 0, 1))
