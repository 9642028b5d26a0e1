"""Movement inside one podracing turn, batched: continuous collisions and checkpoint sweeps.

`Motion` holds what movement reads and writes for a set of races (one column per race). The
reference resolves a turn as: find the earliest collision before the end of the turn, move every
pod to that time (passing checkpoints on the way), bounce the pair, repeat (up to a cap), then
move to the end of the turn. Two drivers run that same sequence of operations per race:

* `collide_and_move` never reads a tensor value: a fixed number of iterations, in which a race
  out of collisions advances by 0. It is what runs on CUDA (no host synchronisation in a step).
* `collide_and_move_compact`, for CPU, where reading a value costs nothing but every kernel's
  cost grows with the batch: after one collision test over the batch, the races with no collision
  (3 in 4 in the benchmark's pile-ups) move the whole turn in one segment, and only the others go
  on, on their gathered columns, shrinking again at every collision until none is left. Checkpoint
  passes are booked by index (`advance(..., by_index=True)`) instead of with full-batch masks.

Both give bit-identical results (tested against each other and against the reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from shared.games.podracing.engine import (
    CHECKPOINT_SWEEP_RADIUS_SQ,
    COLLISION_DISTANCE_SQ,
    MIN_IMPULSE,
    PAIRS,
)
from shared.games.podracing.torch_ops import any_along, sqrt_non_negative, weight
from shared.games.podracing.torch_tracks import MAX_CHECKPOINTS

FLOAT_ROWS = 40
"""Rows of the packed float state [40, N]: kin (x, y, vx, vy of 4 pods, 0-15), checkpoints (x, y
of 8 slots, 16-31), finish time per pod (32-35) and mass per pod (36-39)."""
INT_ROWS = 18
"""Rows of the packed int64 state [18, N]: next checkpoint (0-3), checkpoints passed (4-7), passes
this turn (8-11), timeouts per player (12-13), checkpoint count (14), passes to finish (15),
collisions (16) and capped turns (17)."""


def pair_pods(num_races: int, device: torch.device) -> torch.Tensor:
    """[2, 6, N] the two pods of each pair in `PAIRS` order, expanded over the races (gathering
    with it beats advanced indexing)."""
    return torch.tensor(PAIRS, dtype=torch.long, device=device).T[:, :, None].expand(2, 6, num_races)


@dataclass
class Motion:
    """Movement state of N races: views of `TorchRaces`' tensors, or gathered copies (`select`)."""

    floats: torch.Tensor
    """[FLOAT_ROWS, N], see `FLOAT_ROWS`."""
    ints: torch.Tensor
    """[INT_ROWS, N], see `INT_ROWS`."""
    active: torch.Tensor | None
    """[N] races being played; None when all are (every gathered subset)."""
    pair_ij: torch.Tensor
    """[2, 6, >=N] from `pair_pods`."""
    timeout_turns: int

    def __post_init__(self) -> None:
        n = self.floats.shape[1]
        f, i = self.floats, self.ints
        self.kin = f[0:16].view(4, 4, n)
        """[4 fields (x, y, vx, vy), 4 pods, N]."""
        self.cp = f[16:32].view(2, MAX_CHECKPOINTS, n)
        self.finish_time = f[32:36]
        self.mass = f[36:40]
        self.next_cp, self.passed, self.passes = i[0:4], i[4:8], i[8:12]
        self.timeouts = i[12:14]
        self.num_checkpoints, self.total_passes = i[14], i[15]
        self.collisions, self.collisions_capped = i[16], i[17]

    @property
    def size(self) -> int:
        return self.kin.shape[-1]

    def select(self, idx: torch.Tensor) -> Motion:
        """The races `idx` (sorted column indices, all active), gathered into new tensors."""
        return Motion(
            floats=self.floats.index_select(1, idx),
            ints=self.ints.index_select(1, idx),
            active=None,
            pair_ij=self.pair_ij,
            timeout_turns=self.timeout_turns,
        )

    def put(self, idx: torch.Tensor, sub: Motion) -> None:
        """Write `sub` (made by `select(idx)`) back into these columns."""
        self.floats.index_copy_(1, idx, sub.floats)
        self.ints.index_copy_(1, idx, sub.ints)

    def _only_active(self, mask: torch.Tensor) -> torch.Tensor:
        return mask if self.active is None else mask & self.active

    def _active_weight(self) -> torch.Tensor | float:
        return 1.0 if self.active is None else weight(self.active, self.floats.dtype)

    # ------------------------------------------------------------ collisions

    def collision_times(self, elapsed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Impact time of each pair [6, N] and whether it counts [6, N] (a real root, after now,
        before the end of the turn).

        With s = px*vx + py*vy the reference's b is 2s, its disc 4 (s*s - a*c) and its t
        -(s + sqrt(s*s - a*c)) / a: scaling by powers of two is exact, so this is the same number.
        Its early exits are implied: a == 0 makes t NaN, and c <= 0 or s >= 0 make t <= 0 (because
        sqrt(s*s) == |s| in IEEE arithmetic).
        """
        kin = self.kin
        d = kin.new_empty(4, 6, self.size)
        torch.sub(kin[:, 0:1], kin[:, 1:4], out=d[:, 0:3])
        torch.sub(kin[:, 1:2], kin[:, 2:4], out=d[:, 3:5])
        torch.sub(kin[:, 2:3], kin[:, 3:4], out=d[:, 5:6])
        sq = d * d
        a = sq[2] + sq[3]
        c = (sq[0] + sq[1]).sub_(COLLISION_DISTANCE_SQ)
        dots = d[0:2] * d[2:4]
        s = dots[0] + dots[1]
        disc = (s * s).sub_(a * c)
        t = (s + sqrt_non_negative(disc)).neg_().div_(a)
        valid = (disc >= 0.0) & (t > 0.0) & ((elapsed + t) < 1.0)
        return t, valid

    @staticmethod
    def earliest(t: torch.Tensor, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Earliest valid time per race and its pair (the first pair in `PAIRS` order on ties)."""
        return torch.where(valid, t, math.inf).min(0)

    def first_collision(self, elapsed: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Earliest impact time per race [N], its pair [N] and whether there is one [N]."""
        best, pair = self.earliest(*self.collision_times(elapsed))
        return best, pair, self._only_active(best < math.inf)

    def bounce(self, pair: torch.Tensor, has: torch.Tensor | None = None) -> None:
        """Elastic bounce of the pods of `pair` in each race where `has` (None: every race), with
        the 120 minimum impulse."""
        ij = self.pair_ij[..., : self.size].gather(1, pair.expand(2, 1, -1))
        i, j = ij[0:1], ij[1:2]
        kin = self.kin
        one = kin.gather(1, i.expand(4, 1, -1))
        two = kin.gather(1, j.expand(4, 1, -1))
        m1, m2 = self.mass.gather(0, i[0]), self.mass.gather(0, j[0])
        n = one - two
        nn = n[0:2] * n[0:2]
        denom = (nn[0] + nn[1]) * ((1.0 / m1).add_(1.0 / m2))
        dots = n[0:2] * n[2:4]
        nd = dots[0] + dots[1]
        f = n[0:2] * nd / denom
        v1 = one[2:4] - f / m1
        v2 = two[2:4] + f / m2
        ff = f * f
        length = torch.sqrt(ff[0] + ff[1])
        scale = torch.where((length < MIN_IMPULSE) & (length != 0.0), MIN_IMPULSE / length, 1.0)
        f.mul_(scale)
        v1.sub_(f / m1)
        v2.add_(f / m2)
        vel = kin[2:4]
        if has is None:
            self.collisions.add_(1)
        else:
            h = has[None, None, :]
            v1 = torch.where(h, v1, one[2:4])
            v2 = torch.where(h, v2, two[2:4])
            self.collisions.add_(has)
        vel.scatter_(1, i.expand(2, 1, -1), v1)
        vel.scatter_(1, j.expand(2, 1, -1), v2)

    # -------------------------------------------------------------- movement

    def advance(self, elapsed: torch.Tensor, dt: torch.Tensor, *, by_index: bool) -> None:
        """Move every pod by v * dt and pass its next checkpoint if the segment enters it; the
        passes are booked `by_index` for the few pods concerned (reads values: the CPU driver) or
        with full-batch masks.

        Same rewriting as in `collision_times`: u = -(s + sqrt(s*s - a*c)) / a with s = q.d. A
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
        u = (s + sqrt_non_negative(disc)).neg_().div_(a)
        hit = (c > 0.0) & (disc >= 0.0) & (u >= 0.0) & (u <= 1.0)
        pos.add_(d)
        if by_index:
            self._book_passes_by_index(hit, u, elapsed, dt)
        else:
            self._book_passes_masked(hit, u, elapsed, dt)

    def _book_passes_masked(
        self, hit: torch.Tensor, u: torch.Tensor, elapsed: torch.Tensor, dt: torch.Tensor
    ) -> None:
        self.next_cp.add_(hit)
        # (next + 1) % count, as a compare: integer division is slow on CPU.
        self.next_cp.masked_fill_(self.next_cp >= self.num_checkpoints, 0)
        self.passed.add_(hit)
        self.passes.add_(hit)
        self.timeouts.masked_fill_(hit[0::2] | hit[1::2], self.timeout_turns)
        done = hit & (self.passed == self.total_passes)
        self.finish_time.copy_(torch.where(done, u.mul_(dt).add_(elapsed), self.finish_time))

    def _book_passes_by_index(
        self, hit: torch.Tensor, u: torch.Tensor, elapsed: torch.Tensor, dt: torch.Tensor
    ) -> None:
        """The same updates for the few pods that passed a checkpoint, through flat indices
        (pod * N + race) into the contiguous [4, N] tensors."""
        flat = hit.view(-1).nonzero().squeeze(1)
        if flat.numel() == 0:
            return
        n = self.size
        pod = flat // n
        race = flat - pod * n
        nxt = self.next_cp.view(-1)
        following = nxt.index_select(0, flat).add_(1)
        following.masked_fill_(following >= self.num_checkpoints.index_select(0, race), 0)
        nxt.index_copy_(0, flat, following)
        passed = self.passed.view(-1)
        count = passed.index_select(0, flat).add_(1)
        passed.index_copy_(0, flat, count)
        self.passes.view(-1).index_add_(0, flat, torch.ones_like(flat))
        self.timeouts.view(-1).index_fill_(0, (pod // 2) * n + race, self.timeout_turns)
        done = count == self.total_passes.index_select(0, race)
        if bool(done.any()):
            pods, races = flat[done], race[done]
            when = (
                u.view(-1)
                .index_select(0, pods)
                .mul_(dt.index_select(0, races))
                .add_(elapsed.index_select(0, races))
            )
            self.finish_time.view(-1).index_copy_(0, pods, when)

    # --------------------------------------------------------------- drivers

    def collide_and_move(self, iterations: int) -> None:
        """The whole movement phase without reading tensor values: `iterations` collision steps,
        the cap check, then the rest of the turn."""
        elapsed = torch.zeros_like(self.finish_time[0])
        for _ in range(iterations):
            t, pair, has = self.first_collision(elapsed)
            dt = torch.where(has, t, 0.0)
            self.advance(elapsed, dt, by_index=False)
            elapsed.add_(dt)
            self.bounce(pair, has)
        # The cap counts only when one more collision was due (as in the reference).
        _, valid = self.collision_times(elapsed)
        self.collisions_capped.add_(self._only_active(any_along(valid, 0)))
        self.advance(elapsed, (1.0 - elapsed).mul_(self._active_weight()), by_index=False)

    def collide_and_move_compact(self, iterations: int) -> None:
        """The same movement, for CPU: only races with a collision go past the first test."""
        elapsed = torch.zeros_like(self.finish_time[0])
        t, valid = self.collision_times(elapsed)
        has = self._only_active(any_along(valid, 0))
        self.advance(elapsed, weight(~has, elapsed.dtype).mul_(self._active_weight()), by_index=True)
        idx = has.nonzero().squeeze(1)
        if idx.numel() == 0:
            return
        sub = self.select(idx)
        best, pair = self.earliest(t.index_select(1, idx), valid.index_select(1, idx))
        sub._resolve(best, pair, torch.zeros_like(best), 0, iterations)
        self.put(idx, sub)

    def _resolve(
        self, t: torch.Tensor, pair: torch.Tensor, elapsed: torch.Tensor, bounced: int, iterations: int
    ) -> None:
        """Finish the turn of races that all collide at `t` (pair `pair`), `bounced` collisions in."""
        while True:
            self.advance(elapsed, t, by_index=True)
            elapsed.add_(t)
            self.bounce(pair)
            bounced += 1
            t_all, valid = self.collision_times(elapsed)
            has = any_along(valid, 0)
            if bounced == iterations:
                # The cap counts only when one more collision was due (as in the reference).
                self.collisions_capped.add_(has)
                self.advance(elapsed, 1.0 - elapsed, by_index=True)
                return
            idx = has.nonzero().squeeze(1)
            # The races with no other collision move to the end of the turn (the others by 0).
            self.advance(elapsed, (1.0 - elapsed).mul_(weight(~has, elapsed.dtype)), by_index=True)
            if idx.numel() == 0:
                return
            if idx.numel() < self.size:
                sub = self.select(idx)
                best, pair = self.earliest(t_all.index_select(1, idx), valid.index_select(1, idx))
                sub._resolve(best, pair, elapsed.index_select(0, idx), bounced, iterations)
                self.put(idx, sub)
                return
            t, pair = self.earliest(t_all, valid)
