"""The search bot: plans both pods a few turns ahead in an exact copy of the referee's physics.

Standard library only and self-contained (it imports nothing from the platform), so the file can be
uploaded as a hosted bot as it is: `decide(observation)` is the entry point.

Each turn the bot evolves short plans (HORIZON turns of a rotation in [-18, 18] degrees and a
thrust, SHIELD or BOOST for each of its two pods) by random-mutation hill climbing, and plays the
first turn of the best plan. A plan is scored by simulating all four pods turn by turn with the
same floating-point operations as the reference engine (`shared/games/podracing/engine.py`), the
opponents driven by a simple racing model. The score splits the pods into a runner (the own pod
further ahead, judged on its progress along the track) and a blocker (judged on guarding the
checkpoint the opponent's leading pod heads for, and on slowing that pod down), against the
opponent's best progress; finishing or being beaten within the horizon dwarfs everything else.
The pool is seeded with last turn's best plan shifted by one turn and with a heuristic plan, so
the search only ever replaces them with plans it scores higher.

A bot may be given a prior (`Prior`): a move proposer, such as a trained policy, that the search
plays out over the horizon in its model and adds to the seeds, so the plan it plays never scores
below the prior's own plan. Without a prior the search is exactly the one described above.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# ----------------------------------------------------------------------------- rules (engine.py)

CHECKPOINT_SWEEP_RADIUS_SQ = 358801.0
"""A pod passes its next checkpoint when its centre enters the circle of radius 599 from outside."""
COLLISION_DISTANCE_SQ = 640000.0
"""Pods (radius 400) touch at a centre distance of 800."""
BOOST_THRUST = 650
MAX_ROTATION = 18.0
FRICTION = 0.85
SHIELD_MASS = 10.0
SHIELD_COOLDOWN = 3
MIN_IMPULSE = 120.0
PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
"""Collision pairs in the engine's order, which breaks exact ties between impact times."""
DEFAULT_COLLISION_CAP = 64
DEFAULT_TIMEOUT_TURNS = 100

BOOST = -1
"""Command code for BOOST (a thrust command is 0..max_thrust)."""
SHIELD = -2
"""Command code for SHIELD."""
NO_WINNER = -1

# ----------------------------------------------------------------------------- search settings

DEFAULT_TIME_BUDGET_MS = 40.0
HORIZON = 5
POOL_SIZE = 6
TARGET_DISTANCE = 10000.0
"""How far ahead of a pod the target point of an action lies (only its direction matters)."""
TIME_MARGIN = 0.9
"""Stop when the next iteration would end past this fraction of the budget."""
PASS_VALUE = 30000.0
"""Progress of one checkpoint pass, more than any distance to a checkpoint on the map."""
WIN_VALUE = 1.0e9
BLOCKER_GUARD_WEIGHT = 0.5
BLOCKER_CHASE_WEIGHT = 0.2
BLOCKER_FACING_WEIGHT = 3.0
"""Per degree between the blocker's heading and the direction of its victim."""
RUNNER_FACING_WEIGHT = 2.0
"""Per degree between the runner's heading and the direction of its next checkpoint."""
ROLE_HYSTERESIS = 2000.0
"""The blocker takes over as runner only when it is this much further along."""
SHIELD_CHANCE = 0.04
BOOST_CHANCE = 0.03
MEMORY_LIMIT = 64

# ----------------------------------------------------------------------------- the racing model

AIM_RADIUS = 550.0
COAST_TURNS = 6
VELOCITY_COMPENSATION = 3.5
BOOST_MIN_DISTANCE = 4500.0
BOOST_MAX_ERROR = 4.0
ORBIT_DISTANCE = 1800.0
ORBIT_ERROR = 60.0
ORBIT_THRUST = 0.3


# ============================================================================= physics


def round_half_away(value: float) -> float:
    """Nearest integer, halves away from zero, never -0.0 (as the engine rounds positions)."""
    magnitude = math.floor(abs(value) + 0.5)
    return float(magnitude if value >= 0 else -magnitude)


def normalize_angle(angle: float) -> float:
    """Into [0, 360) exactly as the engine does it (fmod, +360, and 360 becomes 0)."""
    result = math.fmod(angle, 360.0)
    if result < 0.0:
        result += 360.0
    if result >= 360.0:
        result = 0.0
    return result


def angle_difference(target: float, current: float) -> float:
    """``target - current`` brought into (-180, 180] by one +-360."""
    diff = target - current
    if diff > 180.0:
        diff -= 360.0
    elif diff <= -180.0:
        diff += 360.0
    return diff


@dataclass(frozen=True)
class Track:
    """What the physics needs besides the pods: the checkpoints and the race's settings."""

    checkpoints: tuple[tuple[float, float], ...]
    total_passes: int
    """Passes to finish, the start on checkpoint 0 counting as the first."""
    max_thrust: int = 100
    boost_per_team: bool = False
    timeout_turns: int = DEFAULT_TIMEOUT_TURNS
    collision_cap: int = DEFAULT_COLLISION_CAP


@dataclass(slots=True)
class Pods:
    """The four pods in engine order (two per player), one list per field, and the timeout counters."""

    x: list[float]
    y: list[float]
    vx: list[float]
    vy: list[float]
    angle: list[float]
    next_checkpoint: list[int]
    passed: list[int]
    cooldown: list[int]
    boost: list[bool]
    shield: list[bool]
    timeouts: list[int]

    def copy(self) -> Pods:
        return Pods(
            self.x[:],
            self.y[:],
            self.vx[:],
            self.vy[:],
            self.angle[:],
            self.next_checkpoint[:],
            self.passed[:],
            self.cooldown[:],
            self.boost[:],
            self.shield[:],
            self.timeouts[:],
        )


def heading_towards(pods: Pods, index: int, target_x: float, target_y: float, first_turn: bool) -> float:
    """The heading a pod ends up with when told to aim at a point (engine `_rotate`)."""
    current = pods.angle[index]
    dx = target_x - pods.x[index]
    dy = target_y - pods.y[index]
    if dx == 0.0 and dy == 0.0:
        return current
    target = normalize_angle(math.degrees(math.atan2(dy, dx)))
    if first_turn:
        return target
    diff = angle_difference(target, current)
    if abs(diff) <= MAX_ROTATION:
        return target
    if diff > 0.0:
        return normalize_angle(current + MAX_ROTATION)
    return normalize_angle(current - MAX_ROTATION)


def step(pods: Pods, track: Track, headings: list[float], commands: list[int]) -> int:
    """Play one turn in place, as `engine.Race.step` does; returns the winning pod or NO_WINNER.

    `headings` are the pods' new angles (from `heading_towards`, or a rotation of at most 18
    degrees); `commands` are thrusts 0..max_thrust, BOOST or SHIELD.
    """
    x, y, vx, vy = pods.x, pods.y, pods.vx, pods.vy
    cooldown, boost, shield = pods.cooldown, pods.boost, pods.shield
    for i in range(4):
        command = commands[i]
        shield[i] = False
        if command == SHIELD:
            shield[i] = True
            cooldown[i] = SHIELD_COOLDOWN
            thrust = 0
        elif cooldown[i] > 0:
            cooldown[i] -= 1
            thrust = 0
        elif command == BOOST:
            if boost[i]:
                boost[i] = False
                if track.boost_per_team:
                    boost[i ^ 1] = False
                thrust = BOOST_THRUST
            else:
                thrust = track.max_thrust
        else:
            thrust = command
        heading = headings[i]
        pods.angle[i] = heading
        rad = math.radians(heading)
        vx[i] += math.cos(rad) * thrust
        vy[i] += math.sin(rad) * thrust
    finishers: list[tuple[float, int]] = []
    elapsed = 0.0
    collisions = 0
    while True:
        best_t = 0.0
        best_i = -1
        best_j = -1
        for i, j in PAIRS:
            px = x[i] - x[j]
            py = y[i] - y[j]
            dvx = vx[i] - vx[j]
            dvy = vy[i] - vy[j]
            a = dvx * dvx + dvy * dvy
            b = 2.0 * (px * dvx + py * dvy)
            c = px * px + py * py - COLLISION_DISTANCE_SQ
            if a == 0.0 or c <= 0.0 or b >= 0.0:
                continue
            disc = b * b - 4.0 * a * c
            if disc < 0.0:
                continue
            t = (-b - math.sqrt(disc)) / (2.0 * a)
            if t > 0.0 and elapsed + t < 1.0 and (best_i < 0 or t < best_t):
                best_t, best_i, best_j = t, i, j
        if best_i < 0 or collisions >= track.collision_cap:
            break
        _advance(pods, track, elapsed, best_t, finishers)
        elapsed += best_t
        _bounce(pods, best_i, best_j)
        collisions += 1
    _advance(pods, track, elapsed, 1.0 - elapsed, finishers)
    for i in range(4):
        vx[i] = float(math.trunc(vx[i] * FRICTION))
        vy[i] = float(math.trunc(vy[i] * FRICTION))
        x[i] = round_half_away(x[i])
        y[i] = round_half_away(y[i])
    timeouts = pods.timeouts
    timeouts[0] -= 1
    timeouts[1] -= 1
    if finishers:
        return min(finishers)[1]
    return NO_WINNER


def _advance(pods: Pods, track: Track, elapsed: float, dt: float, finishers: list[tuple[float, int]]) -> None:
    """Move every pod by v * dt, passing its next checkpoint if it enters it on the way."""
    x, y, vx, vy = pods.x, pods.y, pods.vx, pods.vy
    checkpoints = track.checkpoints
    for i in range(4):
        dx = vx[i] * dt
        dy = vy[i] * dt
        cx, cy = checkpoints[pods.next_checkpoint[i]]
        qx = x[i] - cx
        qy = y[i] - cy
        c = qx * qx + qy * qy - CHECKPOINT_SWEEP_RADIUS_SQ
        a = dx * dx + dy * dy
        if c > 0.0 and a != 0.0:
            b = 2.0 * (qx * dx + qy * dy)
            disc = b * b - 4.0 * a * c
            if disc >= 0.0:
                u = (-b - math.sqrt(disc)) / (2.0 * a)
                if 0.0 <= u <= 1.0:
                    pods.next_checkpoint[i] = (pods.next_checkpoint[i] + 1) % len(checkpoints)
                    pods.passed[i] += 1
                    pods.timeouts[i >> 1] = track.timeout_turns
                    if pods.passed[i] == track.total_passes:
                        finishers.append((elapsed + u * dt, i))
        x[i] += dx
        y[i] += dy


def _bounce(pods: Pods, i: int, j: int) -> None:
    """Elastic bounce, then the same impulse again raised to at least 120 (engine `_bounce`)."""
    x, y, vx, vy = pods.x, pods.y, pods.vx, pods.vy
    m1 = SHIELD_MASS if pods.shield[i] else 1.0
    m2 = SHIELD_MASS if pods.shield[j] else 1.0
    nx = x[i] - x[j]
    ny = y[i] - y[j]
    dvx = vx[i] - vx[j]
    dvy = vy[i] - vy[j]
    denom = (nx * nx + ny * ny) * (1.0 / m1 + 1.0 / m2)
    nd = nx * dvx + ny * dvy
    fx = nx * nd / denom
    fy = ny * nd / denom
    vx[i] -= fx / m1
    vy[i] -= fy / m1
    vx[j] += fx / m2
    vy[j] += fy / m2
    length = math.sqrt(fx * fx + fy * fy)
    if length < MIN_IMPULSE and length != 0.0:
        scale = MIN_IMPULSE / length
        fx *= scale
        fy *= scale
    vx[i] -= fx / m1
    vy[i] -= fy / m1
    vx[j] += fx / m2
    vy[j] += fy / m2


# ============================================================================= racing model


def _thrust_for(error: float, max_thrust: int) -> int:
    """Full thrust up to 60 degrees off the aim, fading to nothing at 120."""
    if error < 60.0:
        return max_thrust
    if error >= 120.0:
        return 0
    return int(max_thrust * (120.0 - error) / 60.0)


def _segment_near(x: float, y: float, dx: float, dy: float, cx: float, cy: float) -> bool:
    """Whether the segment (x, y) + [0, 1] * (dx, dy) comes within AIM_RADIUS of (cx, cy)."""
    length_sq = dx * dx + dy * dy
    u = 0.0 if length_sq == 0.0 else ((cx - x) * dx + (cy - y) * dy) / length_sq
    u = max(0.0, min(1.0, u))
    ex = x + u * dx - cx
    ey = y + u * dy - cy
    return ex * ex + ey * ey < AIM_RADIUS * AIM_RADIUS


def _coasts_into(x: float, y: float, vx: float, vy: float, cx: float, cy: float, turns: int) -> bool:
    """Whether a pod reaches (cx, cy) within `turns` turns without any more thrust."""
    for _ in range(turns):
        if _segment_near(x, y, vx, vy, cx, cy):
            return True
        x += vx
        y += vy
        vx = float(math.trunc(vx * FRICTION))
        vy = float(math.trunc(vy * FRICTION))
    return False


def _aim_error(pods: Pods, index: int, heading: float, aim_x: float, aim_y: float) -> float:
    """Degrees between a heading and the direction from the pod to a point."""
    wanted = math.degrees(math.atan2(aim_y - pods.y[index], aim_x - pods.x[index]))
    return abs(angle_difference(normalize_angle(wanted), heading))


def race_move(pods: Pods, index: int, track: Track, first_turn: bool, anticipate: bool) -> tuple[float, int]:
    """A racing move (heading, command): aim at the next checkpoint corrected for the drift,
    thrust by how well the pod faces it, BOOST on long straight stretches.

    With `anticipate`, a pod that would coast into its checkpoint anyway already turns towards the
    one after (keeping as much thrust as still lets it pass); the search's own seed plan uses it,
    the cheap opponent model does not.
    """
    checkpoints = track.checkpoints
    x, y, vx, vy = pods.x[index], pods.y[index], pods.vx[index], pods.vy[index]
    current = pods.next_checkpoint[index]
    cx, cy = checkpoints[current]
    max_thrust = track.max_thrust
    final = pods.passed[index] >= track.total_passes - 1
    if anticipate and not final and _coasts_into(x, y, vx, vy, cx, cy, COAST_TURNS):
        fx, fy = checkpoints[(current + 1) % len(checkpoints)]
        aim_x = fx - VELOCITY_COMPENSATION * vx
        aim_y = fy - VELOCITY_COMPENSATION * vy
        heading = heading_towards(pods, index, aim_x, aim_y, first_turn)
        thrust = _thrust_for(_aim_error(pods, index, heading, aim_x, aim_y), max_thrust)
        while thrust > 0:
            rad = math.radians(heading)
            nvx = vx + math.cos(rad) * thrust
            nvy = vy + math.sin(rad) * thrust
            after_x = round_half_away(x + nvx)
            after_y = round_half_away(y + nvy)
            if _coasts_into(
                after_x, after_y, math.trunc(nvx * FRICTION), math.trunc(nvy * FRICTION), cx, cy, 5
            ):
                break
            thrust //= 2
        return heading, thrust
    aim_x = cx - VELOCITY_COMPENSATION * vx
    aim_y = cy - VELOCITY_COMPENSATION * vy
    heading = heading_towards(pods, index, aim_x, aim_y, first_turn)
    error = _aim_error(pods, index, heading, aim_x, aim_y)
    command = _thrust_for(error, max_thrust)
    distance = math.hypot(cx - x, cy - y)
    if anticipate and distance < ORBIT_DISTANCE and (vx != 0.0 or vy != 0.0):
        drift = math.degrees(math.atan2(vy, vx) - math.atan2(cy - y, cx - x))
        if abs((drift + 540.0) % 360.0 - 180.0) > ORBIT_ERROR:
            command = min(command, int(max_thrust * ORBIT_THRUST))
    aligned = error <= BOOST_MAX_ERROR and distance > BOOST_MIN_DISTANCE
    if aligned and pods.boost[index] and pods.cooldown[index] == 0:
        command = BOOST
    return heading, command


def guard_point(pods: Pods, track: Track, blocker: int, victim: int) -> tuple[float, float]:
    """Where the blocker should wait: the victim's next checkpoint if the blocker gets there first,
    otherwise the checkpoint after it."""
    checkpoints = track.checkpoints
    current = pods.next_checkpoint[victim]
    cx, cy = checkpoints[current]
    mine = math.hypot(cx - pods.x[blocker], cy - pods.y[blocker])
    theirs = math.hypot(cx - pods.x[victim], cy - pods.y[victim])
    if mine < theirs:
        return cx, cy
    return checkpoints[(current + 1) % len(checkpoints)]


def block_move(pods: Pods, index: int, victim: int, track: Track, first_turn: bool) -> tuple[float, int]:
    """A blocking move: head for the guard point, slow down near it, then turn to face the victim."""
    gx, gy = guard_point(pods, track, index, victim)
    x, y = pods.x[index], pods.y[index]
    distance = math.hypot(gx - x, gy - y)
    if distance < 1500.0:
        aim_x, aim_y = pods.x[victim] + pods.vx[victim], pods.y[victim] + pods.vy[victim]
    else:
        aim_x = gx - VELOCITY_COMPENSATION * pods.vx[index]
        aim_y = gy - VELOCITY_COMPENSATION * pods.vy[index]
    heading = heading_towards(pods, index, aim_x, aim_y, first_turn)
    thrust = _thrust_for(_aim_error(pods, index, heading, aim_x, aim_y), track.max_thrust)
    if distance < 1500.0:
        thrust = min(thrust, int(track.max_thrust * distance / 1500.0))
    return heading, thrust


def progress(pods: Pods, track: Track, index: int) -> float:
    """How far along the race a pod is: passes, then closeness to its next checkpoint."""
    cx, cy = track.checkpoints[pods.next_checkpoint[index]]
    return pods.passed[index] * PASS_VALUE - math.hypot(cx - pods.x[index], cy - pods.y[index])


# ============================================================================= observation


def track_from(observation: dict[str, Any]) -> Track:
    checkpoints = tuple((float(x), float(y)) for x, y in observation["checkpoints"])
    return Track(
        checkpoints=checkpoints,
        total_passes=int(observation["checkpoint_count"]) * int(observation["laps"]) + 1,
        max_thrust=int(observation["max_thrust"]),
    )


def pods_from(observation: dict[str, Any]) -> Pods:
    """The four pods in engine order (player 0's first) from a player's observation."""
    own, theirs = observation["pods"], observation["opponents"]
    ordered = [*own, *theirs] if int(observation["player"]) == 0 else [*theirs, *own]
    timeouts = [int(observation["timeout_left"]), int(observation["opponent_timeout_left"])]
    if int(observation["player"]) == 1:
        timeouts.reverse()
    return Pods(
        x=[float(p["x"]) for p in ordered],
        y=[float(p["y"]) for p in ordered],
        vx=[float(p["vx"]) for p in ordered],
        vy=[float(p["vy"]) for p in ordered],
        angle=[float(max(0, int(p["angle"]))) for p in ordered],
        next_checkpoint=[int(p["next_checkpoint"]) for p in ordered],
        passed=[int(p["checkpoints_passed"]) for p in ordered],
        cooldown=[int(p["shield_cooldown"]) for p in ordered],
        boost=[bool(p["boost_available"]) for p in ordered],
        shield=[False] * 4,
        timeouts=timeouts,
    )


# ============================================================================= search

Move = tuple[float, int]
"""One pod's move in a plan: a rotation in degrees within [-18, 18] and a command (0..max_thrust,
BOOST or SHIELD)."""
Prior = Callable[[Pods, Track, int, bool], tuple[Move, Move]]
"""Proposes the moves of a player's two pods (engine order) in a simulated state: (pods, track,
player, first turn) -> moves. It reads the state and never changes it."""


@dataclass(slots=True)
class Plan:
    """HORIZON turns of moves for the two own pods: rotations[2 * turn + k] and commands likewise."""

    rotations: list[float]
    commands: list[int]
    score: float = -math.inf

    def copy(self) -> Plan:
        return Plan(self.rotations[:], self.commands[:], self.score)

    def shifted(self, filler: Plan) -> Plan:
        """One turn later: drop the first turn, repeat `filler`'s last turn at the end."""
        return Plan(self.rotations[2:] + filler.rotations[-2:], self.commands[2:] + filler.commands[-2:])


@dataclass
class Memory:
    """What a bot keeps between the turns of one race."""

    plan: Plan | None = None
    runner: int = -1


_MEMORY: dict[tuple[int, int, tuple[tuple[float, float], ...]], Memory] = {}
"""Per bot instance, seat and track: the last best plan and the runner, reset on turn 0."""
_INSTANCES = [0]
_DEFAULT_BOT: dict[str, SearchBot] = {}


class _Turn:
    """One decision: the root state, the roles, and the scoring of plans."""

    def __init__(self, observation: dict[str, Any], memory: Memory) -> None:
        self.track = track_from(observation)
        self.first_turn = int(observation["turn"]) == 0 or int(observation["pods"][0]["angle"]) < 0
        self.player = int(observation["player"])
        self.own = (2 * self.player, 2 * self.player + 1)
        self.opponents = (2 - 2 * self.player, 3 - 2 * self.player)
        root = pods_from(observation)
        if self.first_turn:
            # Rotation is free on the first turn: plans turn relative to facing the next checkpoint.
            for i in range(4):
                cx, cy = self.track.checkpoints[root.next_checkpoint[i]]
                root.angle[i] = normalize_angle(math.degrees(math.atan2(cy - root.y[i], cx - root.x[i])))
        self.root = root
        self.runner, self.blocker = self._roles(memory.runner)
        memory.runner = self.runner
        first, second = self.opponents
        ahead = progress(root, self.track, first) >= progress(root, self.track, second)
        self.victim = first if ahead else second
        # The opponents' first move depends only on what they see now: predict it once, carefully.
        self.opponent_first = [race_move(root, i, self.track, self.first_turn, True) for i in self.opponents]

    def _roles(self, previous_runner: int) -> tuple[int, int]:
        a, b = self.own
        runner = a if progress(self.root, self.track, a) >= progress(self.root, self.track, b) else b
        if previous_runner in self.own and previous_runner != runner:
            other = previous_runner
            lead = progress(self.root, self.track, runner) - progress(self.root, self.track, other)
            if lead < ROLE_HYSTERESIS:
                runner = other
        return runner, (b if runner == a else a)

    # ------------------------------------------------------------------ plans

    def heuristic_plan(self, blocking: bool) -> Plan:
        """Both pods racing (or the blocker blocking), played out in the model to get the rotations."""
        pods = self.root.copy()
        rotations: list[float] = []
        commands: list[int] = []
        headings = [0.0] * 4
        orders = [0] * 4
        for turn in range(HORIZON):
            first = self.first_turn and turn == 0
            for i in self.own:
                if blocking and i == self.blocker:
                    heading, command = block_move(pods, i, self.victim, self.track, first)
                else:
                    heading, command = race_move(pods, i, self.track, first, True)
                rotation = max(-MAX_ROTATION, min(MAX_ROTATION, angle_difference(heading, pods.angle[i])))
                rotations.append(rotation)
                commands.append(command)
                headings[i] = normalize_angle(pods.angle[i] + rotation)
                orders[i] = command
            self._opponent_moves(pods, turn, headings, orders)
            step(pods, self.track, headings, orders)
        return Plan(rotations, commands)

    def prior_plan(self, prior: Prior) -> Plan:
        """The prior's moves played out in the model against the opponent model (as `score` plays
        a plan), so that the search can start from where the prior would go."""
        pods = self.root.copy()
        rotations: list[float] = []
        commands: list[int] = []
        headings = [0.0] * 4
        orders = [0] * 4
        max_thrust = self.track.max_thrust
        for turn in range(HORIZON):
            moves = prior(pods, self.track, self.player, self.first_turn and turn == 0)
            for i, (rotation, command) in zip(self.own, moves, strict=True):
                rotation = max(-MAX_ROTATION, min(MAX_ROTATION, float(rotation)))
                if command not in (SHIELD, BOOST):
                    command = max(0, min(max_thrust, int(command)))
                rotations.append(rotation)
                commands.append(command)
                headings[i] = normalize_angle(pods.angle[i] + rotation)
                orders[i] = command
            self._opponent_moves(pods, turn, headings, orders)
            step(pods, self.track, headings, orders)
        return Plan(rotations, commands)

    def _opponent_moves(self, pods: Pods, turn: int, headings: list[float], orders: list[int]) -> None:
        for k, i in enumerate(self.opponents):
            if turn == 0:
                headings[i], orders[i] = self.opponent_first[k]
            else:
                headings[i], orders[i] = race_move(pods, i, self.track, False, False)

    def score(self, plan: Plan) -> float:
        """Play the plan out against the opponent model and score where it leads."""
        pods = self.root.copy()
        track = self.track
        headings = [0.0] * 4
        orders = [0] * 4
        own_a, own_b = self.own
        rotations, commands = plan.rotations, plan.commands
        for turn in range(HORIZON):
            for k, i in ((0, own_a), (1, own_b)):
                heading = pods.angle[i] + rotations[2 * turn + k]
                if heading < 0.0:
                    heading += 360.0
                elif heading >= 360.0:
                    heading -= 360.0
                headings[i] = heading
                orders[i] = commands[2 * turn + k]
            self._opponent_moves(pods, turn, headings, orders)
            winner = step(pods, track, headings, orders)
            if winner != NO_WINNER:
                value = WIN_VALUE - turn * PASS_VALUE
                return value if winner >> 1 == self.player else -value
            if pods.timeouts[self.player] <= 0:
                return -WIN_VALUE
            if pods.timeouts[1 - self.player] <= 0:
                return WIN_VALUE
        return self.evaluate(pods)

    def evaluate(self, pods: Pods) -> float:
        track = self.track
        runner, blocker, victim = self.runner, self.blocker, self.victim
        first, second = self.opponents
        theirs = max(progress(pods, track, first), progress(pods, track, second))
        value = progress(pods, track, runner) - theirs
        cx, cy = track.checkpoints[pods.next_checkpoint[runner]]
        value -= RUNNER_FACING_WEIGHT * _aim_error(pods, runner, pods.angle[runner], cx, cy)
        gx, gy = guard_point(pods, track, blocker, victim)
        bx, by = pods.x[blocker], pods.y[blocker]
        value -= BLOCKER_GUARD_WEIGHT * math.hypot(gx - bx, gy - by)
        vx, vy = pods.x[victim], pods.y[victim]
        value -= BLOCKER_CHASE_WEIGHT * math.hypot(vx - bx, vy - by)
        value -= BLOCKER_FACING_WEIGHT * _aim_error(pods, blocker, pods.angle[blocker], vx, vy)
        return value

    # ----------------------------------------------------------------- output

    def action(self, plan: Plan) -> dict[str, Any]:
        moves = []
        for k, i in enumerate(self.own):
            heading = normalize_angle(self.root.angle[i] + plan.rotations[k])
            rad = math.radians(heading)
            command = plan.commands[k]
            thrust: int | str = "SHIELD" if command == SHIELD else "BOOST" if command == BOOST else command
            moves.append(
                {
                    "x": round(self.root.x[i] + math.cos(rad) * TARGET_DISTANCE),
                    "y": round(self.root.y[i] + math.sin(rad) * TARGET_DISTANCE),
                    "thrust": thrust,
                }
            )
        return {"pods": moves}


class SearchBot:
    """A `decide(observation) -> action` callable with its own time budget and random generator,
    and optionally a prior whose plan seeds every turn's search."""

    def __init__(
        self,
        time_budget_ms: float = DEFAULT_TIME_BUDGET_MS,
        seed: int | None = None,
        max_iterations: int | None = None,
        prior: Prior | None = None,
    ) -> None:
        if time_budget_ms <= 0:
            raise ValueError(f"time_budget_ms must be positive, not {time_budget_ms}")
        if max_iterations is not None and max_iterations < 0:
            raise ValueError(f"max_iterations must not be negative, not {max_iterations}")
        self.time_budget_ms = time_budget_ms
        self.max_iterations = max_iterations
        self.random = random.Random(seed)
        _INSTANCES[0] += 1
        self.instance = _INSTANCES[0]
        self.prior = prior
        self.iterations = 0
        """Plans scored in the last call (for measurements)."""
        self.plan: Plan | None = None
        """The plan played in the last call, with its score (for measurements)."""
        self.prior_plan: Plan | None = None
        """The prior's plan in the last call as seeded, with its score (None without a prior)."""

    def __call__(self, observation: dict[str, Any]) -> dict[str, Any]:
        start = time.perf_counter()
        deadline = start + self.time_budget_ms * TIME_MARGIN / 1000.0
        key = (
            self.instance,
            int(observation["player"]),
            tuple((float(x), float(y)) for x, y in observation["checkpoints"]),
        )
        if int(observation["turn"]) == 0 or key not in _MEMORY:
            _MEMORY.pop(key, None)
            while len(_MEMORY) >= MEMORY_LIMIT:
                del _MEMORY[next(iter(_MEMORY))]
            _MEMORY[key] = Memory()
        memory = _MEMORY[key]
        turn = _Turn(observation, memory)
        best = self._search(turn, memory, deadline)
        memory.plan = self.plan = best
        return turn.action(best)

    def _search(self, turn: _Turn, memory: Memory, deadline: float) -> Plan:
        racing = turn.heuristic_plan(blocking=False)
        seeds = [racing, turn.heuristic_plan(blocking=True)]
        if memory.plan is not None:
            seeds.append(memory.plan.shifted(racing))
        self.prior_plan = None
        if self.prior is not None:
            self.prior_plan = turn.prior_plan(self.prior)
            seeds.append(self.prior_plan)
        pool: list[Plan] = []
        for plan in seeds:
            self._clamp_boosts(turn, plan)
            plan.score = turn.score(plan)
            pool.append(plan)
        pool.sort(key=lambda p: p.score, reverse=True)
        iterations = 0
        started = time.perf_counter()
        while True:
            share = self._share_spent(iterations, started, deadline)
            if share >= 1.0:
                break
            child = self._mutate(turn, pool[self.random.randrange(min(len(pool), 3))], share)
            child.score = turn.score(child)
            iterations += 1
            if len(pool) < POOL_SIZE:
                pool.append(child)
            elif child.score > pool[-1].score:
                pool[-1] = child
            else:
                continue
            pool.sort(key=lambda p: p.score, reverse=True)
        self.iterations = iterations
        return pool[0]

    def _share_spent(self, iterations: int, started: float, deadline: float) -> float:
        """How much of the turn's search is done, 1.0 once the next iteration would overrun it.

        With an iteration cap the clock is not read, so that a seeded search is reproducible.
        """
        if self.max_iterations is not None:
            return iterations / self.max_iterations if self.max_iterations else 1.0
        now = time.perf_counter()
        per_iteration = (now - started) / iterations if iterations else 0.0
        if now + per_iteration >= deadline:
            return 1.0
        return (now - started) / (deadline - started)

    def _mutate(self, turn: _Turn, parent: Plan, share: float) -> Plan:
        """Change one or two moves; the changes get smaller as the turn's search goes on."""
        rng = self.random
        child = parent.copy()
        amplitude = max(0.1, 1.0 - share)
        max_thrust = turn.track.max_thrust
        for _ in range(1 + (rng.random() < 0.3)):
            gene = rng.randrange(2 * HORIZON)
            roll = rng.random()
            if roll < SHIELD_CHANCE:
                child.commands[gene] = SHIELD
            elif roll < SHIELD_CHANCE + BOOST_CHANCE:
                child.commands[gene] = BOOST
            elif roll < 0.55:
                rotation = child.rotations[gene] + rng.uniform(-2.0, 2.0) * MAX_ROTATION * amplitude
                child.rotations[gene] = max(-MAX_ROTATION, min(MAX_ROTATION, rotation))
            else:
                command = child.commands[gene]
                if command < 0:
                    command = max_thrust
                thrust = command + rng.uniform(-1.0, 1.0) * max_thrust * amplitude
                child.commands[gene] = int(max(0.0, min(float(max_thrust), thrust)))
        self._clamp_boosts(turn, child)
        return child

    @staticmethod
    def _clamp_boosts(turn: _Turn, plan: Plan) -> None:
        """At most one BOOST per pod in a plan, and none once the pod has used it."""
        for k, i in enumerate(turn.own):
            available = turn.root.boost[i]
            for index in range(k, len(plan.commands), 2):
                if plan.commands[index] == BOOST:
                    if available:
                        available = False
                    else:
                        plan.commands[index] = turn.track.max_thrust


def make_search_bot(
    time_budget_ms: float = DEFAULT_TIME_BUDGET_MS,
    seed: int | None = None,
    max_iterations: int | None = None,
    prior: Prior | None = None,
) -> SearchBot:
    """A search bot that spends about `time_budget_ms` per decision; with `max_iterations` it scores
    exactly that many mutated plans instead, ignoring the clock (deterministic with a `seed`); with
    a `prior`, the prior's plan seeds every turn's search."""
    return SearchBot(time_budget_ms, seed, max_iterations, prior)


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    """The search bot with the default budget: plans both pods a few turns ahead in the exact physics."""
    bot = _DEFAULT_BOT.get("bot")
    if bot is None:
        bot = _DEFAULT_BOT["bot"] = make_search_bot()
    return bot(observation)
