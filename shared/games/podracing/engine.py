"""Reference podracing engine: pure Python, standard library only, the source of truth.

Every other implementation (the batched torch engine in particular) must reproduce this one bit for
bit in float64, so each formula below is written as one fixed sequence of floating-point operations.
Where a formula could be evaluated in more than one order, the docstring or comment gives the order.

A turn, in order (`Race.step`):

1. Commands: shield / cooldown / boost resolve into a thrust per pod (`_resolve_thrust`).
2. Rotation of every pod towards its target (`_rotate`), free on turn 0.
3. Thrust along the new heading: ``vx += cos(radians(angle)) * thrust`` (same for y with sin).
4. Movement with continuous collisions and checkpoint sweeps (`_move`).
5. Friction and rounding (`_finish_turn`): ``v = trunc(v * 0.85)``, positions rounded half away
   from zero.
6. Win, timeout and turn-limit checks.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from enum import StrEnum

WIDTH = 16000
HEIGHT = 9000
CHECKPOINT_RADIUS = 600
POD_RADIUS = 400
MARGIN = 2000
MIN_CHECKPOINT_DISTANCE = 3000
BOOST_THRUST = 650
MAX_ROTATION = 18.0
FRICTION = 0.85
SHIELD_MASS = 10.0
SHIELD_COOLDOWN = 3
MIN_IMPULSE = 120.0
COLLISION_DISTANCE_SQ = float((2 * POD_RADIUS) ** 2)  # 640000.0
CHECKPOINT_SWEEP_RADIUS_SQ = 599.0 * 599.0  # 358801.0: a pod passes when its centre gets within 599
PODS_PER_PLAYER = 2
NUM_PODS = 4
START_OFFSETS = (500.0, -1500.0, -500.0, 1500.0)
"""Start offset of each pod along the unit perpendicular to cp0 -> cp1 (inner/outer slot per player)."""
PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
"""Collision pairs in the fixed order used to break exact ties between impact times."""
TRACK_ATTEMPTS_PER_POINT = 200
TRACK_RESTARTS = 1000


class RaceEnd(StrEnum):
    """Why a race ended (the match's `end_reason`)."""

    WON = "won"
    """A pod finished every lap."""
    TIMEOUT = "timeout"
    """A player went too many turns without passing a checkpoint."""
    TURN_LIMIT = "turn_limit"
    FORFEIT = "forfeit"
    RUNNING = "running"
    """Not ended: a result asked for before the race finished."""


@dataclass(frozen=True)
class RaceConfig:
    laps: int = 3
    checkpoints_min: int = 3
    checkpoints_max: int = 8
    max_thrust: int = 100
    boost_per_team: bool = False
    max_turns: int = 500
    timeout_turns: int = 100
    max_collisions_per_turn: int = 64


@dataclass
class Pod:
    x: float
    y: float
    vx: float = 0.0
    vy: float = 0.0
    angle: float = 0.0
    next_checkpoint: int = 1
    checkpoints_passed: int = 1
    shield_cooldown: int = 0
    """Turns still to come in which thrust is forced to 0 (3 right after a SHIELD)."""
    boost_available: bool = True
    shield_active: bool = False
    """True only in the turn the SHIELD was activated: mass 10 for that turn's collisions."""


@dataclass
class PodCommand:
    """One pod's order for a turn, already sanitised (the engine does not validate it)."""

    target_x: float
    target_y: float
    thrust: int = 0
    boost: bool = False
    shield: bool = False


@dataclass(frozen=True)
class RaceEvent:
    """Something that happened in a turn; `time` is the fraction of the turn (0.0 .. 1.0)."""

    kind: str
    """"boost", "shield", "checkpoint", "collision", "win", "timeout" or "collision_cap"."""
    time: float = 0.0
    pod: int | None = None
    other: int | None = None
    """The second pod of a collision."""
    player: int | None = None
    checkpoint: int | None = None


def player_of(pod: int) -> int:
    return pod // PODS_PER_PLAYER


def round_half_away(value: float) -> float:
    """Nearest integer, halves away from zero: ``sign(v) * floor(|v| + 0.5)``; never returns -0.0."""
    magnitude = math.floor(abs(value) + 0.5)
    return float(magnitude if value >= 0 else -magnitude)


def truncate(value: float) -> float:
    """Towards zero, as a float; never -0.0."""
    return float(math.trunc(value))


def normalize_angle(angle: float) -> float:
    """Into [0, 360): ``fmod(a, 360)``, +360 if negative, and a result of exactly 360 becomes 0."""
    result = math.fmod(angle, 360.0)
    if result < 0.0:
        result += 360.0
    if result >= 360.0:
        result = 0.0
    return result


def angle_difference(target: float, current: float) -> float:
    """``target - current`` for angles in [0, 360), brought into (-180, 180] by one +-360."""
    diff = target - current
    if diff > 180.0:
        diff -= 360.0
    elif diff <= -180.0:
        diff += 360.0
    return diff


def generate_track(seed: int, config: RaceConfig) -> list[tuple[int, int]]:
    """Checkpoints by rejection sampling with `random.Random(seed)`.

    The count is ``rng.randint(min, max)``; each point is ``(rng.randint(2000, 14000),
    rng.randint(2000, 7000))`` kept only if more than 3000 from every point already placed. If a
    point cannot be placed in 200 tries the track restarts (same count, same generator), so dense
    tracks cannot get stuck.
    """
    rng = random.Random(seed)
    count = rng.randint(config.checkpoints_min, config.checkpoints_max)
    limit_sq = MIN_CHECKPOINT_DISTANCE * MIN_CHECKPOINT_DISTANCE
    for _ in range(TRACK_RESTARTS):
        points: list[tuple[int, int]] = []
        while len(points) < count:
            for _ in range(TRACK_ATTEMPTS_PER_POINT):
                x = rng.randint(MARGIN, WIDTH - MARGIN)
                y = rng.randint(MARGIN, HEIGHT - MARGIN)
                if all((x - px) ** 2 + (y - py) ** 2 > limit_sq for px, py in points):
                    points.append((x, y))
                    break
            else:
                break
        if len(points) == count:
            return points
    raise ValueError(f"cannot place {count} checkpoints more than {MIN_CHECKPOINT_DISTANCE} apart")


def start_positions(checkpoints: list[tuple[int, int]]) -> list[tuple[float, float]]:
    """Pods on checkpoint 0, offset along p = (-dy, dx) / |d| with d = cp1 - cp0.

    Each coordinate is ``round_half_away(cp0 + p * offset)`` with ``|d| = sqrt(dx*dx + dy*dy)`` and
    ``p = (-dy / |d|, dx / |d|)``.
    """
    (x0, y0), (x1, y1) = checkpoints[0], checkpoints[1]
    dx = float(x1 - x0)
    dy = float(y1 - y0)
    length = math.sqrt(dx * dx + dy * dy)
    px = -dy / length
    py = dx / length
    return [(round_half_away(x0 + px * off), round_half_away(y0 + py * off)) for off in START_OFFSETS]


class Race:
    """One race: four pods on a track, advanced turn by turn with `step`."""

    def __init__(self, config: RaceConfig, checkpoints: list[tuple[int, int]]) -> None:
        if len(checkpoints) < 2:
            raise ValueError("a track needs at least two checkpoints")
        self.config = config
        self.checkpoints: list[tuple[int, int]] = [(int(x), int(y)) for x, y in checkpoints]
        self.pods: list[Pod] = [Pod(x=x, y=y) for x, y in start_positions(self.checkpoints)]
        self.turn = 0
        self.timeouts: list[int] = [config.timeout_turns, config.timeout_turns]
        self.winner: int | None = None
        self.winning_pod: int | None = None
        self.finished = False
        self.reason: RaceEnd | None = None
        self.collisions_capped = 0
        self.total_passes = len(self.checkpoints) * config.laps + 1
        """Passes to finish, counting the start on checkpoint 0 as the first one."""
        self._events: list[RaceEvent] = []
        self._finishers: list[tuple[float, int]] = []

    @classmethod
    def from_seed(cls, seed: int, config: RaceConfig | None = None) -> Race:
        config = config or RaceConfig()
        return cls(config, generate_track(seed, config))

    # ------------------------------------------------------------------ turn

    def step(self, commands: list[PodCommand]) -> list[RaceEvent]:
        """Play one turn with one command per pod (pod order) and return what happened."""
        if self.finished:
            raise RuntimeError("the race is over")
        if len(commands) != NUM_PODS:
            raise ValueError(f"expected {NUM_PODS} commands, got {len(commands)}")
        self._events = []
        self._finishers = []
        thrusts = [self._resolve_thrust(i, cmd) for i, cmd in enumerate(commands)]
        for pod, cmd in zip(self.pods, commands, strict=True):
            self._rotate(pod, cmd)
        for pod, thrust in zip(self.pods, thrusts, strict=True):
            rad = math.radians(pod.angle)
            pod.vx += math.cos(rad) * thrust
            pod.vy += math.sin(rad) * thrust
        self._move()
        self._finish_turn()
        self.turn += 1
        self._check_end()
        return self._events

    def _resolve_thrust(self, index: int, cmd: PodCommand) -> int:
        """Thrust for this turn after shield, cooldown and boost rules; also updates those states."""
        pod = self.pods[index]
        pod.shield_active = False
        if cmd.shield:
            pod.shield_active = True
            pod.shield_cooldown = SHIELD_COOLDOWN
            self._events.append(RaceEvent("shield", pod=index, player=player_of(index)))
            return 0
        if pod.shield_cooldown > 0:
            pod.shield_cooldown -= 1
            return 0
        if cmd.boost:
            if not pod.boost_available:
                return self.config.max_thrust
            pod.boost_available = False
            if self.config.boost_per_team:
                mate = index ^ 1
                self.pods[mate].boost_available = False
            self._events.append(RaceEvent("boost", pod=index, player=player_of(index)))
            return BOOST_THRUST
        return cmd.thrust

    def _rotate(self, pod: Pod, cmd: PodCommand) -> None:
        dx = cmd.target_x - pod.x
        dy = cmd.target_y - pod.y
        if dx == 0.0 and dy == 0.0:
            return
        target = normalize_angle(math.degrees(math.atan2(dy, dx)))
        if self.turn == 0:
            pod.angle = target
            return
        diff = angle_difference(target, pod.angle)
        if abs(diff) <= MAX_ROTATION:
            pod.angle = target
        elif diff > 0.0:
            pod.angle = normalize_angle(pod.angle + MAX_ROTATION)
        else:
            pod.angle = normalize_angle(pod.angle - MAX_ROTATION)

    # -------------------------------------------------------------- movement

    def _move(self) -> None:
        """Advance the turn from collision to collision, then to its end."""
        elapsed = 0.0
        collisions = 0
        while True:
            hit = self._first_collision(elapsed)
            if hit is None:
                break
            if collisions >= self.config.max_collisions_per_turn:
                # Pathological pile-up: the rest of the turn moves without collisions.
                self.collisions_capped += 1
                self._events.append(RaceEvent("collision_cap", time=elapsed))
                break
            t, i, j = hit
            self._advance(elapsed, t)
            elapsed += t
            self._bounce(self.pods[i], self.pods[j])
            collisions += 1
            self._events.append(RaceEvent("collision", time=elapsed, pod=i, other=j))
        self._advance(elapsed, 1.0 - elapsed)

    def _first_collision(self, elapsed: float) -> tuple[float, int, int] | None:
        """Earliest impact time t (> 0, elapsed + t < 1) over all pairs, first pair wins ties.

        For a pair: p = pi - pj, v = vi - vj, a = vx*vx + vy*vy, b = 2.0 * (px*vx + py*vy),
        c = (px*px + py*py) - 640000.0, disc = b*b - 4.0*a*c (i.e. (b*b) - ((4.0*a)*c)),
        t = (-b - sqrt(disc)) / (2.0*a).
        """
        best: tuple[float, int, int] | None = None
        for i, j in PAIRS:
            a_pod, b_pod = self.pods[i], self.pods[j]
            px = a_pod.x - b_pod.x
            py = a_pod.y - b_pod.y
            vx = a_pod.vx - b_pod.vx
            vy = a_pod.vy - b_pod.vy
            a = vx * vx + vy * vy
            b = 2.0 * (px * vx + py * vy)
            c = px * px + py * py - COLLISION_DISTANCE_SQ
            if a == 0.0 or c <= 0.0 or b >= 0.0:
                continue
            disc = b * b - 4.0 * a * c
            if disc < 0.0:
                continue
            t = (-b - math.sqrt(disc)) / (2.0 * a)
            if t > 0.0 and elapsed + t < 1.0 and (best is None or t < best[0]):
                best = (t, i, j)
        return best

    def _advance(self, elapsed: float, dt: float) -> None:
        """Move every pod by v * dt, checking whether it crosses its next checkpoint on the way."""
        for index, pod in enumerate(self.pods):
            dx = pod.vx * dt
            dy = pod.vy * dt
            self._sweep_checkpoint(index, pod, dx, dy, elapsed, dt)
            pod.x += dx
            pod.y += dy

    def _sweep_checkpoint(
        self, index: int, pod: Pod, dx: float, dy: float, elapsed: float, dt: float
    ) -> None:
        """Pass the next checkpoint if the segment enters its 599 circle from outside.

        q = s - cp, a = dx*dx + dy*dy, b = 2.0 * (qx*dx + qy*dy), c = (qx*qx + qy*qy) - 358801.0,
        disc = b*b - 4.0*a*c, u = (-b - sqrt(disc)) / (2.0*a); passes iff 0 <= u <= 1, at
        elapsed + u*dt.
        """
        cx, cy = self.checkpoints[pod.next_checkpoint]
        qx = pod.x - cx
        qy = pod.y - cy
        c = qx * qx + qy * qy - CHECKPOINT_SWEEP_RADIUS_SQ
        if c <= 0.0:
            return
        a = dx * dx + dy * dy
        if a == 0.0:
            return
        b = 2.0 * (qx * dx + qy * dy)
        disc = b * b - 4.0 * a * c
        if disc < 0.0:
            return
        u = (-b - math.sqrt(disc)) / (2.0 * a)
        if not 0.0 <= u <= 1.0:
            return
        time = elapsed + u * dt
        passed = pod.next_checkpoint
        pod.next_checkpoint = (passed + 1) % len(self.checkpoints)
        pod.checkpoints_passed += 1
        player = player_of(index)
        self.timeouts[player] = self.config.timeout_turns
        self._events.append(RaceEvent("checkpoint", time=time, pod=index, player=player, checkpoint=passed))
        if pod.checkpoints_passed == self.total_passes:
            self._finishers.append((time, index))

    def _bounce(self, one: Pod, two: Pod) -> None:
        """Elastic bounce with a minimum impulse of 120.

        n = p1 - p2, dv = v1 - v2, m = 1.0 or 10.0 (shield), denom = (nx*nx + ny*ny) * (1.0/m1 + 1.0/m2),
        nd = nx*dvx + ny*dvy, f = (nx * nd / denom, ny * nd / denom). Apply (v1 -= f/m1, v2 += f/m2);
        then if |f| = sqrt(fx*fx + fy*fy) is below 120 (and not 0), f = f * (120.0 / |f|); apply again.
        """
        m1 = SHIELD_MASS if one.shield_active else 1.0
        m2 = SHIELD_MASS if two.shield_active else 1.0
        nx = one.x - two.x
        ny = one.y - two.y
        dvx = one.vx - two.vx
        dvy = one.vy - two.vy
        denom = (nx * nx + ny * ny) * (1.0 / m1 + 1.0 / m2)
        nd = nx * dvx + ny * dvy
        fx = nx * nd / denom
        fy = ny * nd / denom
        self._apply_impulse(one, two, fx, fy, m1, m2)
        length = math.sqrt(fx * fx + fy * fy)
        if length < MIN_IMPULSE and length != 0.0:
            scale = MIN_IMPULSE / length
            fx *= scale
            fy *= scale
        self._apply_impulse(one, two, fx, fy, m1, m2)

    @staticmethod
    def _apply_impulse(one: Pod, two: Pod, fx: float, fy: float, m1: float, m2: float) -> None:
        one.vx -= fx / m1
        one.vy -= fy / m1
        two.vx += fx / m2
        two.vy += fy / m2

    # ------------------------------------------------------------ end of turn

    def _finish_turn(self) -> None:
        for pod in self.pods:
            pod.vx = truncate(pod.vx * FRICTION)
            pod.vy = truncate(pod.vy * FRICTION)
            pod.x = round_half_away(pod.x)
            pod.y = round_half_away(pod.y)

    def _check_end(self) -> None:
        """Win beats timeout, timeout beats the turn limit; the timeout counters tick every turn."""
        for player in range(2):
            self.timeouts[player] -= 1
        if self._finishers:
            time, index = min(self._finishers)
            self.winning_pod = index
            self.winner = player_of(index)
            self.finished = True
            self.reason = RaceEnd.WON
            self._events.append(RaceEvent("win", time=time, pod=index, player=self.winner))
            return
        out = [player for player in range(2) if self.timeouts[player] <= 0]
        if out:
            self.finished = True
            self.reason = RaceEnd.TIMEOUT
            for player in out:
                self._events.append(RaceEvent("timeout", time=1.0, player=player))
            if len(out) == 1:
                self.winner = 1 - out[0]
            else:
                self.winner = self._leader()
            return
        if self.turn >= self.config.max_turns:
            self.finished = True
            self.reason = RaceEnd.TURN_LIMIT
            self.winner = self._leader()

    # ---------------------------------------------------------------- ranking

    def best_pod(self, player: int) -> int:
        """The player's leading pod: most checkpoints passed, then closest to its next checkpoint."""
        first = player * PODS_PER_PLAYER
        return min((first, first + 1), key=lambda i: self._progress_key(i))

    def _progress_key(self, index: int) -> tuple[int, float]:
        pod = self.pods[index]
        cx, cy = self.checkpoints[pod.next_checkpoint]
        dx = pod.x - cx
        dy = pod.y - cy
        return (-pod.checkpoints_passed, dx * dx + dy * dy)

    def _leader(self) -> int | None:
        keys = [self._progress_key(self.best_pod(player)) for player in range(2)]
        if keys[0] == keys[1]:
            return None
        return 0 if keys[0] < keys[1] else 1

    def ranks(self) -> list[int]:
        """Rank per player (0 = first, equal = draw); by progress while the race is still running."""
        if self.winner is not None:
            return [0 if player == self.winner else 1 for player in range(2)]
        if self.finished:
            return [0, 0]
        leader = self._leader()
        if leader is None:
            return [0, 0]
        return [0 if player == leader else 1 for player in range(2)]

    def forfeit(self, player: int) -> None:
        """The player loses at once."""
        if self.finished:
            return
        self.finished = True
        self.reason = RaceEnd.FORFEIT
        self.winner = 1 - player
