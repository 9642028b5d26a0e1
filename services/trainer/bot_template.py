"""A podracing bot exported from an Arena training checkpoint: one file, standard library only.

It computes the policy's inputs from the observation exactly as training does
(services/trainer/features.py, mirrored line for line below), runs the DeepSets network (12-bit
weights with one scale per output row, dequantised once on the first turn) and plays the most
likely of its discrete actions (ACTIONS: a rotation and a thrust, SHIELD or BOOST). Each pod aims
AIM_DISTANCE units away along its heading plus the action's rotation.

State: each player's runner pod (role hysteresis), kept per player id and reset on turn 0.
The CodinGame version also tracks what CodinGame does not show: checkpoint passes of every pod
(from next-checkpoint changes), each player's turns left before its timeout (from the passes), and
its own pods' boost and shield cooldown (from its orders).
"""

from __future__ import annotations

import math
import operator
from typing import Any

# >>> parameters: written by services/trainer/export.py
SOURCE = "the untrained template"
"""Where the weights come from."""
SHAPE = (32, 16, 64)
"""Widths: encoder hidden layer, embedding, head hidden layers (shared.training.config.NetShapeConfig)."""
ACTIONS: tuple[tuple[float, float, int], ...] = ((0.0, 1.0, 0),)
"""The action set (services/trainer/actions.py): (rotation in degrees from the heading, thrust as
a share of max thrust, kind: 0 thrust, 1 SHIELD, 2 BOOST), one per output of the network."""
WEIGHTS = ""
"""12-bit signed weights of every layer, row by row: one character each, from CODE_BASE."""
SCALES: tuple[float, ...] = ()
"""One scale per output row of every layer (weight = value x scale)."""
BIASES: tuple[float, ...] = ()
# <<< parameters

CODE_BASE = 0x4E00
SELF_DIM = 14
ENTITY_DIM = 14
KIND_SHIELD = 1
KIND_BOOST = 2
POS_SCALE = 1.0 / 10000.0
VEL_SCALE = 1.0 / 1000.0
PASS_SCALE = 0.25
AIM_DISTANCE = 10000.0
OTHERS = ((1, 2, 3), (0, 2, 3), (3, 0, 1), (2, 0, 1))
"""For each pod: its teammate first, then the two opponents (own pods are 0 and 1)."""

Layer = tuple[list[list[float]], list[float]]
Inputs = tuple[list[float], list[list[float]]]
"""One pod's policy inputs: its own features, and those of the 3 other pods (teammate first)."""
_NETWORK: list[Layer] = []
"""Encoder layers 0-1, head layers 2-4; filled on the first turn."""
_RUNNERS: dict[int, list[int]] = {}
"""Per player id: the runner pod (0 or 1) of each side, own side first."""


def _unpack(text: str, count: int) -> list[int]:
    """The first `count` signed 12-bit values of the packed text (one character each)."""
    codes = [ord(char) - CODE_BASE for char in text[:count]]
    return [code - 4096 if code > 2047 else code for code in codes]


def _network() -> list[Layer]:
    if not _NETWORK:
        encoder_hidden, embedding, hidden = SHAPE
        sizes = [
            (ENTITY_DIM, encoder_hidden),
            (encoder_hidden, embedding),
            (SELF_DIM + embedding, hidden),
            (hidden, hidden),
            (hidden, len(ACTIONS)),
        ]
        weights = _unpack(WEIGHTS, sum(inputs * outputs for inputs, outputs in sizes))
        start = row = 0
        for inputs, outputs in sizes:
            rows = []
            for _ in range(outputs):
                scale = SCALES[row]
                rows.append([value * scale for value in weights[start : start + inputs]])
                start += inputs
                row += 1
            _NETWORK.append((rows, list(BIASES[row - outputs : row])))
    return _NETWORK


def _dense(layer: Layer, inputs: list[float], relu: bool) -> list[float]:
    rows, biases = layer
    out = [sum(map(operator.mul, weights, inputs)) + bias for weights, bias in zip(rows, biases, strict=True)]
    return [value if value > 0.0 else 0.0 for value in out] if relu else out


def _policy(own: list[float], entities: list[list[float]]) -> list[float]:
    """The actor's outputs: one logit per action."""
    network = _network()
    context: list[float] = []
    for entity in entities:
        embedded = _dense(network[1], _dense(network[0], entity, True), False)
        context = embedded if not context else [max(a, b) for a, b in zip(context, embedded, strict=True)]
    hidden = _dense(network[2], own + context, True)
    return _dense(network[4], _dense(network[3], hidden, True), False)


def runners_after(previous: list[int] | None, passed: list[int], dist: list[float], first: bool) -> list[int]:
    """features.update_runners: on the first turn (or with no roles yet) the pod ahead (more passes,
    then nearer its next checkpoint); later the other pod takes over only once it has passed more
    checkpoints."""
    if first or previous is None:
        runners = []
        for a in (0, 2):
            b = a + 1
            runners.append(
                1 if passed[b] > passed[a] or (passed[b] == passed[a] and dist[b] < dist[a]) else 0
            )
        return runners
    runners = previous[:]
    for side in (0, 1):
        current = passed[2 * side + runners[side]]
        other = passed[2 * side + 1 - runners[side]]
        if other > current:
            runners[side] = 1 - runners[side]
    return runners


def policy_inputs(
    observation: dict[str, Any], runners: list[int] | None
) -> tuple[list[Inputs], list[float], list[int]]:
    """The policy's inputs and the frame heading (radians) of each own pod, and both sides' runners
    after this turn, given last turn's (`runners`, None at the start)."""
    pods = [*observation["pods"], *observation["opponents"]]
    checkpoints = observation["checkpoints"]
    count = int(observation["checkpoint_count"])
    total = float(count * int(observation["laps"]) + 1)
    first = observation["turn"] == 0
    x = [float(p["x"]) for p in pods]
    y = [float(p["y"]) for p in pods]
    vx = [float(p["vx"]) for p in pods]
    vy = [float(p["vy"]) for p in pods]
    passed = [int(p["checkpoints_passed"]) for p in pods]
    cx: list[float] = []
    cy: list[float] = []
    fx: list[float] = []
    fy: list[float] = []
    heading: list[float] = []
    for i, pod in enumerate(pods):
        nxt = int(pod["next_checkpoint"])
        following = nxt + 1 if nxt + 1 < count else 0
        cx.append(float(checkpoints[nxt][0]))
        cy.append(float(checkpoints[nxt][1]))
        fx.append(float(checkpoints[following][0]))
        fy.append(float(checkpoints[following][1]))
        if first:
            heading.append(math.atan2(cy[i] - y[i], cx[i] - x[i]))
        else:
            heading.append(max(float(pod["angle"]), 0.0) * (math.pi / 180.0))
    dist = [(cx[i] - x[i]) ** 2 + (cy[i] - y[i]) ** 2 for i in range(4)]
    runners = runners_after(runners, passed, dist, first)
    is_runner = [1.0 if runners[i // 2] == i % 2 else 0.0 for i in range(4)]
    inputs: list[Inputs] = []
    for p in (0, 1):
        pod = pods[p]
        cos, sin = math.cos(heading[p]), math.sin(heading[p])
        dx, dy = cx[p] - x[p], cy[p] - y[p]
        ax, ay = dx * POS_SCALE, dy * POS_SCALE
        bx, by = (fx[p] - cx[p]) * POS_SCALE, (fy[p] - cy[p]) * POS_SCALE
        ux, uy = vx[p] * VEL_SCALE, vy[p] * VEL_SCALE
        own = [
            ax * cos + ay * sin,
            ay * cos - ax * sin,
            math.sqrt(dx * dx + dy * dy) * POS_SCALE,
            bx * cos + by * sin,
            by * cos - bx * sin,
            ux * cos + uy * sin,
            uy * cos - ux * sin,
            float(pod["shield_cooldown"]) / 3.0,
            1.0 if pod["boost_available"] else 0.0,
            is_runner[p],
            passed[p] / total,
            1.0 if first else 0.0,
            1.0 if passed[p] == total - 1.0 else 0.0,
            1.0 if passed[p] == total - 2.0 else 0.0,
        ]
        entities = []
        for k, o in enumerate(OTHERS[p]):
            rx, ry = x[o] - x[p], y[o] - y[p]
            ax, ay = rx * POS_SCALE, ry * POS_SCALE
            wx, wy = (vx[o] - vx[p]) * VEL_SCALE, (vy[o] - vy[p]) * VEL_SCALE
            ux, uy = vx[o] * VEL_SCALE, vy[o] * VEL_SCALE
            bx, by = (cx[o] - x[o]) * POS_SCALE, (cy[o] - y[o]) * POS_SCALE
            relative = heading[o] - heading[p]
            ahead = (passed[o] - passed[p]) * PASS_SCALE
            entities.append(
                [
                    ax * cos + ay * sin,
                    ay * cos - ax * sin,
                    math.sqrt(rx * rx + ry * ry) * POS_SCALE,
                    wx * cos + wy * sin,
                    wy * cos - wx * sin,
                    ux * cos + uy * sin,
                    uy * cos - ux * sin,
                    math.cos(relative),
                    math.sin(relative),
                    bx * cos + by * sin,
                    by * cos - bx * sin,
                    min(max(ahead, -2.0), 2.0),
                    1.0 if k == 0 else 0.0,
                    is_runner[o],
                ]
            )
        inputs.append((own, entities))
    return inputs, heading[:2], runners


def most_likely(inputs: Inputs) -> tuple[float, float, int]:
    """The policy's most likely action of ACTIONS (the first on a tie, as torch's argmax)."""
    logits = _policy(*inputs)
    return ACTIONS[logits.index(max(logits))]


def _pod_commands(observation: dict[str, Any]) -> list[dict[str, Any]]:
    key = int(observation.get("player", 0))
    inputs, headings, runners = policy_inputs(observation, _RUNNERS.get(key))
    _RUNNERS[key] = runners
    max_thrust = float(observation["max_thrust"])
    commands = []
    for pod, pod_inputs, heading in zip(observation["pods"], inputs, headings, strict=True):
        rotation, share, kind = most_likely(pod_inputs)
        direction = heading + rotation * (math.pi / 180.0)
        thrust: int | str = math.floor(share * max_thrust + 0.5)
        if kind == KIND_SHIELD:
            thrust = "SHIELD"
        elif kind == KIND_BOOST:
            thrust = "BOOST"
        commands.append(
            {
                "x": math.floor(float(pod["x"]) + math.cos(direction) * AIM_DISTANCE + 0.5),
                "y": math.floor(float(pod["y"]) + math.sin(direction) * AIM_DISTANCE + 0.5),
                "thrust": thrust,
            }
        )
    return commands


def decide(observation: dict[str, Any]) -> dict[str, Any]:
    """The policy's deterministic action for this turn."""
    return {"pods": _pod_commands(observation)}


# >>> codingame: only in the CodinGame export (a decide bot may not read input())
CODINGAME_TIMEOUT_TURNS = 100
"""A player loses after this many turns without any of its pods passing a checkpoint."""


class CodinGameTracker:
    """Rebuilds the JSON observation from CodinGame's lines: counts each pod's passes from its
    next-checkpoint changes, each player's turns left before its timeout from those passes, and its
    own pods' boost and shield cooldown from the orders it gave (opponents' boost and shield are
    not shown on CodinGame and are not policy inputs)."""

    def __init__(self, laps: int, checkpoints: list[list[int]], max_thrust: int = 100) -> None:
        self.laps = laps
        self.checkpoints = checkpoints
        self.max_thrust = max_thrust
        self.turn = 0
        self.next_checkpoint = [1, 1, 1, 1]
        self.passed = [1, 1, 1, 1]
        self.boost = [True, True]
        self.cooldown = [0, 0]
        self.timeouts = [CODINGAME_TIMEOUT_TURNS, CODINGAME_TIMEOUT_TURNS]
        """Own, then the opponent's: reset by a pass, then one less every turn (as the referee)."""

    def observe(self, lines: list[str]) -> dict[str, Any]:
        """The observation of this turn from its 4 pod lines (own pods first)."""
        pods = []
        count = len(self.checkpoints)
        passing = [False, False]
        for index, line in enumerate(lines):
            x, y, vx, vy, angle, nxt = (int(value) for value in line.split())
            passes = (nxt - self.next_checkpoint[index]) % count
            self.passed[index] += passes
            passing[index // 2] = passing[index // 2] or passes > 0
            self.next_checkpoint[index] = nxt
            own = index < 2
            pods.append(
                {
                    "x": x,
                    "y": y,
                    "vx": vx,
                    "vy": vy,
                    "angle": angle,
                    "next_checkpoint": nxt,
                    "checkpoints_passed": self.passed[index],
                    "boost_available": self.boost[index] if own else True,
                    "shield_cooldown": self.cooldown[index] if own else 0,
                }
            )
        if self.turn > 0:
            for side in (0, 1):
                left = CODINGAME_TIMEOUT_TURNS if passing[side] else self.timeouts[side]
                self.timeouts[side] = left - 1
        return {
            "turn": self.turn,
            "player": 0,
            "laps": self.laps,
            "checkpoint_count": count,
            "checkpoints": self.checkpoints,
            "max_thrust": self.max_thrust,
            "timeout_left": self.timeouts[0],
            "opponent_timeout_left": self.timeouts[1],
            "pods": pods[:2],
            "opponents": pods[2:],
        }

    def played(self, action: dict[str, Any]) -> None:
        """Apply the engine's rules for this turn's orders to the own pods' boost and cooldown."""
        for index, pod in enumerate(action["pods"]):
            if pod["thrust"] == "SHIELD":
                self.cooldown[index] = 3
            elif self.cooldown[index] > 0:
                self.cooldown[index] -= 1
            elif pod["thrust"] == "BOOST":
                self.boost[index] = False
        self.turn += 1


def play_codingame() -> None:
    """CodinGame's loop: the track once, then 4 pod lines in and 2 orders out per turn."""
    laps = int(input())
    count = int(input())
    checkpoints = [[int(value) for value in input().split()] for _ in range(count)]
    tracker = CodinGameTracker(laps, checkpoints)
    while True:
        try:
            lines = [input() for _ in range(4)]
        except EOFError:
            return
        action = decide(tracker.observe(lines))
        for pod in action["pods"]:
            print(f"{pod['x']} {pod['y']} {pod['thrust']}", flush=True)
        tracker.played(action)


if __name__ == "__main__":
    play_codingame()
# <<< codingame
