"""Batched podracing engine in torch: B races advanced at once on any device, in float64 or float32.

It follows the reference engine (`shared.games.podracing.engine`) rule for rule and, in float64,
operation for operation: every formula evaluates the same floating-point expression in the same
order, or one that provably gives the same number (scaled by powers of two, or a select written
as arithmetic; each is explained where it is used), so on CPU the integer state (positions,
velocities, checkpoints, winners) is identical. The only differences are the last bits of
`atan2`/`cos`/`sin`, which torch and libm compute differently about once in a few hundred calls;
they move the float heading by one ulp and are wiped out by the end-of-turn truncation and
rounding (see docs/games/podracing-torch.md).

State lives in preallocated tensors, one column per race, updated in place. Finished races are
frozen, or, with `auto_reset=True`, restarted at the end of the step on their next track, drawn
ahead from a pool made by a vectorised generator (`torch_tracks`).

A step comes in two forms with identical results (`compact`):

* The sync-free step (the default off CPU) never reads a tensor value on the host: no `.item()`,
  no data-dependent shapes, no Python `if` on tensor values, so a GPU never waits. Every
  conditional is a mask, the same kernels run for every race whatever happens in it, and the
  continuous collision loop runs a fixed number of iterations (`collision_iters`, by default
  the config's `max_collisions_per_turn`): a race whose collisions are resolved advances by 0 in
  the remaining ones.
* The CPU step (the default on CPU) reads values, which costs nothing there, to skip work whose
  cost grows with the batch: only races with a collision enter the collision loop, on gathered
  columns (`torch_motion`), checkpoint passes and race ends are booked by index for the few races
  concerned, and commands are checked once for the common case where none needs fixing. Its
  collision loop stops when no race has a collision left, so the full cap costs nothing extra.

In both, after the last allowed collision the rest of the turn moves without collisions, exactly
as the reference does at its cap, and `collisions_capped` counts the turns where another
collision was still due. The elementwise helpers in `torch_ops` avoid kernels that are slow on
CPU (`where` on a bool mask, `trunc`, `any`, `min` with indices) by exact equivalents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch

from shared.games.podracing.engine import (
    BOOST_THRUST,
    FRICTION,
    MAX_ROTATION,
    SHIELD_COOLDOWN,
    SHIELD_MASS,
    RaceConfig,
    RaceEnd,
)
from shared.games.podracing.torch_motion import FLOAT_ROWS, INT_ROWS, Motion, pair_pods
from shared.games.podracing.torch_ops import (
    any_true,
    normalize_angle,
    pick,
    pod_major,
    round_half_away,
    trunc,
    weight,
)
from shared.games.podracing.torch_tracks import MAX_CHECKPOINTS, Tracks, generate_tracks, start_positions

if TYPE_CHECKING:
    from shared.games.podracing.engine import Race

RAD_TO_DEG = 180.0 / math.pi
"""`math.degrees(x)` is `x * (180 / pi)` with this very constant."""
DEG_TO_RAD = math.pi / 180.0
"""`math.radians(x)` is `x * (pi / 180)` with this very constant."""

SYNC_FREE_COLLISION_ITERS = 8
"""A collision cap for training on the sync-free step, which pays for every iteration in every race
(the CPU step pays only for collisions that happen, so it keeps the reference's cap of 64); the
benchmark's caps/1M column shows how often it binds."""

REASON_RUNNING = 0
REASON_WON = 1
REASON_TIMEOUT = 2
REASON_TURN_LIMIT = 3
REASONS = {
    REASON_RUNNING: None,
    REASON_WON: RaceEnd.WON,
    REASON_TIMEOUT: RaceEnd.TIMEOUT,
    REASON_TURN_LIMIT: RaceEnd.TURN_LIMIT,
}
"""Codes of `TorchRaces.reason` and the reference engine's `Race.reason` strings they stand for."""


POD_FIELDS = (
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
"""The per-pod state tensors, by their public names ([B, 4] each)."""


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
        """Take the CPU step, which reads tensor values (see the module docstring); by default only
        on CPU, where that costs nothing."""
        # No generator on the "meta" device (used to prove that `step` never reads tensor data).
        self.generator: torch.Generator | None = None
        if self.device.type != "meta":
            self.generator = torch.Generator(device=self.device)
            self.generator.manual_seed(0 if seed is None else seed)
        self.track_pool_size = track_pool_size
        self.reset_draw_every = max(1, reset_draw_every)
        self._pool: Tracks | None = None

        b = num_races
        f: dict[str, Any] = {"dtype": dtype, "device": self.device}
        i64: dict[str, Any] = {"dtype": torch.long, "device": self.device}
        boolean: dict[str, Any] = {"dtype": torch.bool, "device": self.device}
        # Movement state, packed so that the CPU step gathers a subset of races in two kernels
        # (row layout in `torch_motion.FLOAT_ROWS` / `INT_ROWS`); the names below are its views.
        self._packed = Motion(
            floats=torch.zeros(FLOAT_ROWS, b, **f),
            ints=torch.zeros(INT_ROWS, b, **i64),
            active=None,
            pair_ij=pair_pods(b, self.device),
            timeout_turns=self.config.timeout_turns,
        )
        packed = self._packed
        self._kin = packed.kin
        """x, y, vx, vy: [field, pod, race]."""
        self._x, self._y, self._vx, self._vy = self._kin.unbind(0)
        self._cp = packed.cp
        self._cp_x, self._cp_y = self._cp[0], self._cp[1]
        self._finish_time = packed.finish_time
        """Per turn: when in the turn each pod finished the race (inf: it did not)."""
        self._mass = packed.mass
        self._next_cp, self._passed, self._passes = packed.next_cp, packed.passed, packed.passes
        self._timeouts = packed.timeouts
        self.num_checkpoints, self.total_passes = packed.num_checkpoints, packed.total_passes
        self.collisions, self.collisions_capped = packed.collisions, packed.collisions_capped
        self.num_checkpoints.fill_(2)
        self._next_cp.fill_(1)
        self._passed.fill_(1)
        self._timeouts.fill_(self.config.timeout_turns)
        self._angle = torch.zeros(4, b, **f)
        self._shield_cd = torch.zeros(4, b, **i64)
        self._boost_available = torch.ones(4, b, **boolean)
        self._shield_active = torch.zeros(4, b, **boolean)
        self._invalid = torch.zeros(2, b, **i64)
        self._episode_passed = torch.zeros(2, b, **i64)
        self.turn = torch.zeros(b, **i64)
        self.finished = torch.zeros(b, **boolean)
        self.winner = torch.full((b,), -1, **i64)
        self.winning_pod = torch.full((b,), -1, **i64)
        self.reason = torch.zeros(b, **i64)
        self.just_finished = torch.zeros(b, **boolean)
        self.episode_winner = torch.full((b,), -1, **i64)
        self.episode_reason = torch.zeros(b, **i64)
        self.episode_turns = torch.zeros(b, **i64)
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
        for attr in POD_FIELDS:
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
        if self.compact:
            # On CPU only the restarted columns are written (a few per step in a large batch).
            idx = mask.nonzero().squeeze(1)
            if idx.numel():
                self._start_columns(idx, cp, start, count)
            return
        m = mask[None, :]
        self._cp.copy_(pick(m, cp, self._cp))
        self.num_checkpoints.copy_(torch.where(mask, count, self.num_checkpoints))
        torch.mul(self.num_checkpoints, self.config.laps, out=self.total_passes).add_(1)
        pos = self._kin[0:2]
        pos.copy_(pick(m, start, pos))
        for tensor, value in self._start_values():
            tensor.masked_fill_(mask, value)

    def _start_columns(
        self, idx: torch.Tensor, cp: torch.Tensor, start: torch.Tensor, count: torch.Tensor
    ) -> None:
        """`_start` for the races `idx`, by index."""
        self._cp.index_copy_(2, idx, cp.index_select(2, idx))
        chosen = count.index_select(0, idx)
        self.num_checkpoints.index_copy_(0, idx, chosen)
        self.total_passes.index_copy_(0, idx, chosen * self.config.laps + 1)
        self._kin[0:2].index_copy_(2, idx, start.index_select(2, idx))
        for tensor, value in self._start_values():
            tensor.index_fill_(-1, idx, value)

    def _start_values(self) -> tuple[tuple[torch.Tensor, float | int | bool], ...]:
        """What a (re)start sets to a constant: each tensor (race as its last dimension) and value."""
        return (
            (self._kin[2:4], 0.0),
            (self._angle, 0.0),
            (self._next_cp, 1),
            (self._passed, 1),
            (self._shield_cd, 0),
            (self._boost_available, True),
            (self._shield_active, False),
            (self._timeouts, self.config.timeout_turns),
            (self.turn, 0),
            (self.finished, False),
            (self.winner, -1),
            (self.winning_pod, -1),
            (self.reason, REASON_RUNNING),
        )

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
        `invalid_commands`. With `compact=False` it never synchronises with the host.
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
        active = ~self.finished
        act = active[None, :]
        tgt, power = self._sanitise(target, thrust, act)
        # 1. Shield, cooldown and boost resolve into a thrust per pod.
        power = self._resolve_thrust(power, pod_major(boost) & act, pod_major(shield) & act, act)
        # 2. Rotation towards the target, free on each race's first turn.
        self._rotate(tgt, act)
        # 3. Thrust along the new heading.
        rad = self._angle * DEG_TO_RAD
        self._vx.add_(torch.cos(rad).mul_(power))
        self._vy.add_(torch.sin(rad).mul_(power))
        # 4. Movement: collision after collision, then the rest of the turn.
        motion = self._motion(active)
        if self.compact:
            motion.collide_and_move_compact(self.collision_iters)
        else:
            motion.collide_and_move(self.collision_iters)
        # 5. Friction and rounding (finished races keep their last velocity).
        pos, vel = self._kin[0:2], self._kin[2:4]
        slowed = trunc(vel * FRICTION).add_(0.0)
        vel.copy_(slowed if self.compact and not any_true(self.finished) else pick(act, slowed, vel))
        pos.copy_(round_half_away(pos))
        self.turn.add_(active)
        # 6. Win beats timeout, timeout beats the turn limit.
        self._check_end(active)

    def _sanitise(
        self, target: torch.Tensor, thrust: torch.Tensor, act: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Targets as [2, 4, B] and thrust [4, B] with what cannot be played replaced; counts it per
        player."""
        tgt = pod_major(target).to(self.dtype)
        thrust = pod_major(thrust).to(self.dtype)
        top = float(self.config.max_thrust)
        if self.compact and self._commands_are_clean(tgt, thrust, top):
            return tgt, torch.floor(thrust + 0.5)
        finite = torch.isfinite(tgt)
        bad_target = ~(finite[0] & finite[1])
        tgt = torch.where(bad_target, self._kin[0:2], tgt)
        finite = torch.isfinite(thrust)
        bad_thrust = ~finite | (thrust < 0.0) | (thrust > top)
        # Whole numbers, halves up, as the JSON sanitiser does (the value is >= 0 here).
        power = torch.floor(torch.clamp(torch.where(finite, thrust, 0.0), 0.0, top).add_(0.5))
        bad = (bad_target.to(torch.long) + bad_thrust).mul_(act)
        self._invalid.add_(bad.view(2, 2, -1).sum(1))
        return tgt, power

    @staticmethod
    def _commands_are_clean(target: torch.Tensor, thrust: torch.Tensor, top: float) -> bool:
        """Whether no command needs fixing (reads values: CPU step). A sum is finite only if every
        term is (an overflow only sends clean commands down the careful path)."""
        if thrust.numel() == 0:
            return True
        low, high = torch.aminmax(thrust)
        return math.isfinite(float(target.sum())) and float(low) >= 0.0 and float(high) <= top

    def _resolve_thrust(
        self, power: torch.Tensor, boost: torch.Tensor, shield: torch.Tensor, act: torch.Tensor
    ) -> torch.Tensor:
        """Thrust per pod [4, B] after shields, their cooldown and boosts (reference
        `_resolve_thrust`); updates the cooldowns and boosts left."""
        cfg = self.config
        cooldown = self._shield_cd
        blocked = (cooldown > 0) & ~shield & act
        cooldown.sub_(blocked.to(cooldown.dtype))
        cooldown.add_((SHIELD_COOLDOWN - cooldown).mul_(shield))
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
        power = pick(wants_boost, float(cfg.max_thrust), power)
        power = pick(used, float(BOOST_THRUST), power)
        return power.mul_(weight(~(shield | blocked) & act, power.dtype))

    def _rotate(self, tgt: torch.Tensor, act: torch.Tensor) -> None:
        """Turn every pod towards its target, at most 18 degrees, freely on the first turn; a pod
        whose target is its own position keeps its heading."""
        angle = self._angle
        delta = tgt - self._kin[0:2]
        dx, dy = delta[0], delta[1]
        zero = delta == 0.0
        keep = (zero[0] & zero[1]) | ~act
        # atan2 lies in [-180, 180] degrees, where normalising is just +360 below 0 (fmod is a no-op).
        aim = torch.atan2(dy, dx).mul_(RAD_TO_DEG)
        aim = pick(aim < 0.0, aim + 360.0, aim)
        aim = pick(aim >= 360.0, 0.0, aim)
        diff = aim - angle
        diff = pick(diff > 180.0, diff - 360.0, pick(diff <= -180.0, diff + 360.0, diff))
        snap = (torch.abs(diff) <= MAX_ROTATION) | (self.turn == 0)[None, :]
        # `aim` is already in [0, 360), so normalising the chosen value changes only the turn.
        # (When diff == 0 the pod snaps, so sign(diff) * 18 is as good as the reference's +-18.)
        turned = angle + torch.sign(diff).mul_(MAX_ROTATION)
        angle.copy_(pick(keep, angle, normalize_angle(pick(snap, aim, turned))))

    def _motion(self, active: torch.Tensor) -> Motion:
        """The movement state of the whole batch, as views of this object's tensors."""
        self._finish_time.fill_(math.inf)
        self._passes.zero_()
        torch.mul(weight(self._shield_active, self.dtype), SHIELD_MASS - 1.0, out=self._mass).add_(1.0)
        packed = self._packed
        return Motion(
            floats=packed.floats,
            ints=packed.ints,
            active=active,
            pair_ij=packed.pair_ij,
            timeout_turns=packed.timeout_turns,
        )

    def _check_end(self, active: torch.Tensor) -> None:
        """Count the turn against the timeouts and end the races that were won, timed out or
        reached the turn limit. The CPU step looks only at races where one of those can be."""
        self._timeouts.sub_(active.to(self._timeouts.dtype))
        if not self.compact:
            self._settle(None, active)
            return
        maybe = (
            (self._finish_time.amin(0) < math.inf)
            | (torch.minimum(self._timeouts[0], self._timeouts[1]) <= 0)
            | (self.turn >= self.config.max_turns)
        )
        cols = (maybe & active).nonzero().squeeze(1)
        self.just_finished.zero_()
        if cols.numel():
            self._settle(cols, active)

    def _settle(self, cols: torch.Tensor | None, active: torch.Tensor) -> None:
        """The end-of-turn rules for the races `cols` (None: all of them)."""

        def take(tensor: torch.Tensor) -> torch.Tensor:
            return tensor if cols is None else tensor.index_select(-1, cols)

        def write(tensor: torch.Tensor, value: torch.Tensor) -> None:
            if cols is None:
                tensor.copy_(value)
            else:
                tensor.index_copy_(-1, cols, value)

        act = take(active)
        first_time, first_pod = take(self._finish_time).min(0)
        turn = take(self.turn)
        passed = take(self._passed)
        won = (first_time < math.inf) & act
        out = take(self._timeouts) <= 0
        timed_out = (out[0] | out[1]) & act & ~won
        one_out = out[0] ^ out[1]
        over = (turn >= self.config.max_turns) & act & ~won & ~timed_out
        dist = _distance_sq(take(self._kin[0:2]), take(self._cp), take(self._next_cp))
        leader = _leader(passed, dist)
        winner = torch.where(
            won, first_pod // 2, torch.where(timed_out & one_out, out[0].to(torch.long), leader)
        )
        ended = won | timed_out | over
        reason = torch.where(won, REASON_WON, torch.where(timed_out, REASON_TIMEOUT, REASON_TURN_LIMIT))
        winner = torch.where(ended, winner, take(self.winner))
        reason = torch.where(ended, reason, take(self.reason))
        write(self.winner, winner)
        write(self.winning_pod, torch.where(won, first_pod, take(self.winning_pod)))
        write(self.reason, reason)
        write(self.finished, take(self.finished) | ended)
        write(self.just_finished, ended)
        write(self.episode_winner, torch.where(ended, winner, take(self.episode_winner)))
        write(self.episode_reason, torch.where(ended, reason, take(self.episode_reason)))
        write(self.episode_turns, torch.where(ended, turn, take(self.episode_turns)))
        best = torch.maximum(passed[0::2], passed[1::2])
        write(self._episode_passed, torch.where(ended[None, :], best, take(self._episode_passed)))

    # ---------------------------------------------------------------- copies

    def _race_state(self) -> tuple[torch.Tensor, ...]:
        """Every tensor that holds race state, the race as its last dimension (what a copy needs;
        the auto-reset's drawn next tracks are not state of the race being played)."""
        return (
            self._packed.floats,
            self._packed.ints,
            self._angle,
            self._shield_cd,
            self._boost_available,
            self._shield_active,
            self._invalid,
            self._episode_passed,
            self.turn,
            self.finished,
            self.winner,
            self.winning_pod,
            self.reason,
            self.just_finished,
            self.episode_winner,
            self.episode_reason,
            self.episode_turns,
        )

    def repeated(self, repeats: int) -> TorchRaces:
        """A new batch holding each race `repeats` times in a row (race n at n*repeats ..
        n*repeats + repeats - 1), without auto-reset: lookahead plays different moves from copies
        of one state, and a race that ends in a copy stays ended."""
        if repeats < 1:
            raise ValueError("repeats must be at least 1")
        copy = TorchRaces(
            self.num_races * repeats,
            self.config,
            device=self.device,
            dtype=self.dtype,
            collision_iters=self.collision_iters,
            compact=self.compact,
        )
        for source, target in zip(self._race_state(), copy._race_state(), strict=True):
            target.copy_(source.repeat_interleave(repeats, dim=-1))
        return copy

    # ---------------------------------------------------------------- ranking

    def distance_sq(self) -> torch.Tensor:
        """[B, 4] squared distance of each pod to its next checkpoint (the ranking tie-break)."""
        return _distance_sq(self._kin[0:2], self._cp, self._next_cp).T

    def leader(self) -> torch.Tensor:
        """[B] player ahead by its best pod (passes, then distance), -1 when exactly level."""
        return _leader(self._passed, _distance_sq(self._kin[0:2], self._cp, self._next_cp))


def _distance_sq(pos: torch.Tensor, cp: torch.Tensor, next_cp: torch.Tensor) -> torch.Tensor:
    """[4, N] squared distance of each pod (pos [2, 4, N]) to its next checkpoint."""
    q = pos - cp.gather(1, next_cp.expand(2, -1, -1))
    q = q * q
    return q[0] + q[1]


def _leader(passed: torch.Tensor, dist: torch.Tensor) -> torch.Tensor:
    """[N] player ahead by its best pod (passes [4, N], then distance [4, N]), -1 when level."""
    second = (passed[1::2] > passed[0::2]) | ((passed[1::2] == passed[0::2]) & (dist[1::2] < dist[0::2]))
    best_passed = torch.where(second, passed[1::2], passed[0::2])
    best_dist = torch.where(second, dist[1::2], dist[0::2])
    zero_ahead = (best_passed[0] > best_passed[1]) | (
        (best_passed[0] == best_passed[1]) & (best_dist[0] < best_dist[1])
    )
    level = (best_passed[0] == best_passed[1]) & (best_dist[0] == best_dist[1])
    return torch.where(level, -1, torch.where(zero_ahead, 0, 1))
