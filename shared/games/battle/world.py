"""The physical world: a pymunk space with static walls, unit bodies steered by pivot joints, and
sensor projectiles whose hits are collected by collision callbacks.

Movement runs entirely inside pymunk: each unit is pulled toward a kinematic control body by a
PivotJoint whose max_bias is the unit's top speed and whose max_force is mass x acceleration, so a
"move to" order costs no Python work per tick. Beyond the tick loop itself, Python runs every
`control_every` ticks (turning and firing), when a contact happened and when a replay frame is due.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import pymunk

from shared.games.base import GameEvent
from shared.games.battle import pymunk_fast
from shared.games.battle.config import BattleConfig
from shared.games.battle.maps import BattleMap

CAT_WALL, CAT_UNIT, CAT_PROJ = 1, 2, 4
COLL_UNIT, COLL_PROJ, COLL_WALL = 1, 2, 3
WALL_RADIUS = 0.1
WALL_FILTER = pymunk.ShapeFilter(categories=CAT_WALL, mask=CAT_UNIT | CAT_PROJ)
UNIT_FILTER = pymunk.ShapeFilter(categories=CAT_UNIT, mask=CAT_WALL | CAT_UNIT | CAT_PROJ)
PROJ_FILTER = pymunk.ShapeFilter(categories=CAT_PROJ, mask=CAT_WALL | CAT_UNIT)
ONLY_WALLS = pymunk.ShapeFilter(mask=CAT_WALL)
"""Query filter for line-of-sight: only walls block sight."""
UNITS_AND_PROJECTILES = pymunk.ShapeFilter(mask=CAT_UNIT | CAT_PROJ)
TWO_PI = 2.0 * math.pi
METRIC_NAMES = (
    "kills",
    "deaths",
    "damage_dealt",
    "damage_taken",
    "shots",
    "hits",
    "friendly_hits",
    "invalid_actions",
    "memory_dropped",
)


def wall_query(space: pymunk.Space) -> Callable[[tuple[float, float], tuple[float, float]], bool]:
    """`blocked(a, b)`: whether a wall touches the segment a-b (a zero-radius, walls-only query)."""
    return pymunk_fast.segment_blocked(space, ONLY_WALLS)


def wrap_angle(a: float) -> float:
    """Angle in [-pi, pi)."""
    return (a + math.pi) % TWO_PI - math.pi


@dataclass(slots=True, eq=False)
class Unit:
    index: int
    uid: str
    player: int
    body: pymunk.Body
    shape: pymunk.Circle
    control: pymunk.Body
    joint: pymunk.PivotJoint
    hp: float
    heading: float
    alive: bool = True
    turn_target: float | None = None
    fire_target: tuple[float, float] | None = None
    next_fire_tick: int = 0
    next_dodge_tick: int = 0
    signal_word: str = "none"
    signal_values: tuple[float, float] = (0.0, 0.0)
    signal_tick: int = -1
    last_pos: tuple[float, float] = (0.0, 0.0)
    history: deque[dict[str, object]] = field(default_factory=deque)


@dataclass(slots=True, eq=False)
class Projectile:
    pid: int
    owner: Unit
    body: pymunk.Body
    shape: pymunk.Circle
    expire_tick: int
    velocity: tuple[float, float]
    """Constant: a sensor body with no damping or gravity keeps its launch velocity."""
    alive: bool = True


class World:
    """All mutable match state that physics touches. Deterministic: fixed insertion order, no sets."""

    def __init__(self, config: BattleConfig, bmap: BattleMap, num_players: int) -> None:
        self.cfg = config
        self.map = bmap
        self.num_players = num_players
        self.tick = 0
        self.turn = 0
        self.events: list[GameEvent] = []
        self.frames: list[dict[str, object]] = []
        self.metrics: list[dict[str, float]] = [dict.fromkeys(METRIC_NAMES, 0.0) for _ in range(num_players)]
        self.eliminated_tick: list[int | None] = [None] * num_players
        self.space = space = pymunk.Space()
        # Per-tick physics calls, direct to chipmunk where pymunk_fast can (same results either way).
        self._unchecked_step = pymunk_fast.unchecked_step(space)
        self._read_position = pymunk_fast.position_reader()
        self._write_position = pymunk_fast.position_writer()
        self._space_changed = True
        """Something was added to or removed from the space since its last Space.step: every add and
        remove below sets it, as the next tick then needs Space.step's bookkeeping."""
        space.damping = 1.0
        space.iterations = 4
        self.wall_shapes: list[pymunk.Segment] = []
        self.wall_index: dict[pymunk.Shape, int] = {}
        for i, (x1, y1, x2, y2) in enumerate(bmap.walls):
            seg = pymunk.Segment(space.static_body, (x1, y1), (x2, y2), WALL_RADIUS)
            seg.filter = WALL_FILTER
            seg.collision_type = COLL_WALL
            seg.friction = 0.0
            seg.elasticity = 0.0
            self.wall_shapes.append(seg)
            self.wall_index[seg] = i
        space.add(*self.wall_shapes)

        self.units: list[Unit] = []
        self.unit_by_shape: dict[pymunk.Shape, Unit] = {}
        self.unit_by_id: dict[str, Unit] = {}
        cx, cy = bmap.width / 2, bmap.height / 2
        k = 0.8 * config.acceleration / config.max_speed
        for player in range(num_players):
            for i, (x, y) in enumerate(bmap.spawns[player]):
                body = pymunk.Body(1.0, math.inf)
                body.position = (x, y)
                shape = pymunk.Circle(body, config.unit_radius)
                shape.filter = UNIT_FILTER
                shape.collision_type = COLL_UNIT
                shape.friction = 0.0
                shape.elasticity = 0.0
                control = pymunk.Body(body_type=pymunk.Body.KINEMATIC)
                control.position = (x, y)
                joint = pymunk.PivotJoint(control, body, (0, 0), (0, 0))
                joint.max_bias = config.max_speed
                joint.max_force = config.acceleration
                joint.error_bias = math.exp(-k)
                space.add(body, shape, control, joint)
                heading = wrap_angle(math.atan2(cy - y, cx - x))
                unit = Unit(
                    index=len(self.units),
                    uid=f"p{player}u{i}",
                    player=player,
                    body=body,
                    shape=shape,
                    control=control,
                    joint=joint,
                    hp=config.unit_hp,
                    heading=heading,
                    last_pos=(x, y),
                    history=deque(maxlen=config.history_length),
                )
                self.units.append(unit)
                self.unit_by_shape[shape] = unit
                self.unit_by_id[unit.uid] = unit
        self.team_units: list[list[Unit]] = [
            [u for u in self.units if u.player == p] for p in range(num_players)
        ]
        self.alive_count = [len(t) for t in self.team_units]
        self._decided = self.teams_alive() <= 1

        self.projectiles: deque[Projectile] = deque()
        self.proj_by_shape: dict[pymunk.Shape, Projectile] = {}
        self._next_pid = 0
        self._contacts: list[tuple[pymunk.Shape, pymunk.Shape]] = []
        space.on_collision(COLL_PROJ, COLL_UNIT, begin=self._on_contact)
        space.on_collision(COLL_PROJ, COLL_WALL, begin=self._on_contact)
        self._turn_step = config.turn_rate * config.control_every * config.dt
        self._positions_tick = -1
        self._positions: tuple[list[tuple[float, float]], list[tuple[Projectile, float, float]]] = ([], [])

    # ----------------------------------------------------------------- physics loop
    def _on_contact(self, arbiter: pymunk.Arbiter, _space: pymunk.Space, _data: object) -> None:
        self._contacts.append(arbiter.shapes)  # (projectile, other): order of the handler's types

    def teams_alive(self) -> int:
        return sum(1 for n in self.alive_count if n > 0)

    @property
    def decided(self) -> bool:
        """At most one team still has units (kept as a flag: it is checked every tick)."""
        return self._decided

    def advance(self, ticks: int, end_tick: int) -> None:
        """Run up to `ticks` physics ticks, stopping early once the match is decided.

        Python only has work on control ticks, frame ticks, projectile expiry ticks and after a contact,
        so the ticks in between are plain steps in a tight loop."""
        cfg = self.cfg
        dt, control_every, frame_every = cfg.dt, cfg.control_every, cfg.frame_every
        space, unchecked_step = self.space, self._unchecked_step
        projectiles = self.projectiles
        tick = self.tick
        last = min(tick + ticks, end_tick)
        while tick < last and not self._decided:
            if tick % control_every == 0:
                self._control()
            next_control = tick - tick % control_every + control_every
            stop = min(last, next_control, tick - tick % frame_every + frame_every)
            if projectiles and projectiles[0].expire_tick < stop:
                stop = projectiles[0].expire_tick
            # Space.step's Python bookkeeping (deferred adds and removals, new-body checks) is only
            # needed after the space changed; the contact callback only records shapes.
            if self._space_changed:
                self._space_changed = False
                space.step(dt)
            else:
                unchecked_step(dt)
            tick += 1
            while tick < stop and not self._contacts:
                unchecked_step(dt)
                tick += 1
            self.tick = tick
            if self._contacts:
                self._resolve_contacts()
            while projectiles and projectiles[0].expire_tick <= tick:
                self._remove_projectile(projectiles.popleft())
            if tick % frame_every == 0:
                self.frames.append(self.compact_frame())

    def _control(self) -> None:
        """Turn toward the ordered heading (or the fire target) and fire when aimed and cooled down."""
        max_turn = self._turn_step
        pi, two_pi, atan2 = math.pi, TWO_PI, math.atan2
        tick, tolerance = self.tick, self.cfg.aim_tolerance
        read_position = self._read_position
        for u in self.units:
            fire = u.fire_target
            if fire is not None:
                if not u.alive:
                    continue
                x, y = read_position(u.body)
                dx, dy = fire[0] - x, fire[1] - y
                if dx * dx + dy * dy < 1e-6:
                    continue
                desired = atan2(dy, dx)
            elif u.turn_target is not None and u.alive:
                desired = u.turn_target
            else:
                continue
            # Angles wrapped into [-pi, pi) as wrap_angle does, inlined: this runs for every unit.
            heading = u.heading
            diff = (desired - heading + pi) % two_pi - pi
            if diff > max_turn:
                heading = u.heading = (heading + max_turn + pi) % two_pi - pi
            elif diff < -max_turn:
                heading = u.heading = (heading - max_turn + pi) % two_pi - pi
            else:
                heading = u.heading = (desired + pi) % two_pi - pi
                if fire is None:
                    u.turn_target = None
            if (
                fire is not None
                and tick >= u.next_fire_tick
                and abs((desired - heading + pi) % two_pi - pi) <= tolerance
            ):
                self._fire(u, desired)

    def _fire(self, u: Unit, angle: float) -> None:
        cfg = self.cfg
        u.next_fire_tick = self.tick + cfg.cooldown_ticks
        ca, sa = math.cos(angle), math.sin(angle)
        x, y = u.body.position
        offset = cfg.unit_radius + cfg.projectile_radius + 0.05
        px, py = x + ca * offset, y + sa * offset
        m = self.metrics[u.player]
        m["shots"] += 1
        self.events.append(
            GameEvent(self.turn, "shot", u.player, {"unit": u.uid, "tick": self.tick, "angle": angle})
        )
        # A muzzle poking through a wall would let shots pass it: such a shot dies on the wall.
        if self.space.segment_query_first((x, y), (px, py), cfg.projectile_radius, ONLY_WALLS) is not None:
            return
        body = pymunk.Body(0.01, math.inf)
        body.position = (px, py)
        vx, vy = ca * cfg.projectile_speed, sa * cfg.projectile_speed
        body.velocity = (vx, vy)
        shape = pymunk.Circle(body, cfg.projectile_radius)
        shape.sensor = True
        shape.filter = PROJ_FILTER
        shape.collision_type = COLL_PROJ
        self.space.add(body, shape)
        self._space_changed = True
        proj = Projectile(self._next_pid, u, body, shape, self.tick + cfg.ttl_ticks, (vx, vy))
        self._next_pid += 1
        self.projectiles.append(proj)
        self.proj_by_shape[shape] = proj
        self._positions_tick = -1

    def _remove_projectile(self, proj: Projectile) -> None:
        if proj.alive:
            self._positions_tick = -1
            proj.alive = False
            self.space.remove(proj.body, proj.shape)
            self._space_changed = True
            del self.proj_by_shape[proj.shape]

    def _resolve_contacts(self) -> None:
        contacts, self._contacts = self._contacts, []
        for proj_shape, other in contacts:
            proj = self.proj_by_shape.get(proj_shape)
            if proj is None:
                continue
            target = self.unit_by_shape.get(other)
            if target is None:  # a wall
                self._remove_projectile(proj)
                continue
            if not target.alive or target is proj.owner:
                continue
            if target.player == proj.owner.player and not self.cfg.friendly_fire:
                continue
            self._remove_projectile(proj)
            self._damage(proj.owner, target, self.cfg.projectile_damage)

    def _damage(self, shooter: Unit, target: Unit, amount: float) -> None:
        amount = min(amount, target.hp)
        target.hp -= amount
        friendly = shooter.player == target.player
        sm, tm = self.metrics[shooter.player], self.metrics[target.player]
        tm["damage_taken"] += amount
        data = {"shooter": shooter.uid, "target": target.uid, "damage": amount, "tick": self.tick}
        if friendly:
            sm["friendly_hits"] += 1
            self.events.append(GameEvent(self.turn, "friendly_hit", shooter.player, data))
        else:
            sm["hits"] += 1
            sm["damage_dealt"] += amount
            self.events.append(GameEvent(self.turn, "hit", shooter.player, data))
        if target.hp <= 0.0:
            if not friendly:
                sm["kills"] += 1
            tm["deaths"] += 1
            self.events.append(
                GameEvent(
                    self.turn,
                    "kill",
                    shooter.player,
                    {"shooter": shooter.uid, "victim": target.uid, "friendly": friendly, "tick": self.tick},
                )
            )
            self.events.append(
                GameEvent(self.turn, "death", target.player, {"unit": target.uid, "tick": self.tick})
            )
            self.remove_unit(target)

    def remove_unit(self, u: Unit) -> None:
        """Take a unit out of the space (death or forfeit)."""
        if not u.alive:
            return
        x, y = u.body.position
        u.last_pos = (x, y)
        self._positions_tick = -1
        u.alive = False
        u.hp = 0.0
        u.fire_target = None
        u.turn_target = None
        self.space.remove(u.joint, u.shape, u.body, u.control)
        self._space_changed = True
        del self.unit_by_shape[u.shape]
        self.alive_count[u.player] -= 1
        if self.alive_count[u.player] == 0:
            self.eliminated_tick[u.player] = self.tick
        self._decided = self.teams_alive() <= 1

    # ----------------------------------------------------------------- orders
    def order_move(self, u: Unit, x: float, y: float) -> None:
        self._write_position(u.control, (x, y))

    def order_stop(self, u: Unit) -> None:
        self._write_position(u.control, self._read_position(u.body))

    def order_dodge(self, u: Unit, side: str) -> bool:
        """A sideways velocity burst; the steering joint then brakes it at the unit's acceleration."""
        if self.tick < u.next_dodge_tick:
            return False
        u.next_dodge_tick = self.tick + self.cfg.dodge_cooldown_ticks
        angle = u.heading + (math.pi / 2 if side == "left" else -math.pi / 2)
        vx, vy = u.body.velocity
        s = self.cfg.dodge_speed
        u.body.velocity = (vx + math.cos(angle) * s, vy + math.sin(angle) * s)
        self.events.append(
            GameEvent(self.turn, "dodge", u.player, {"unit": u.uid, "side": side, "tick": self.tick})
        )
        return True

    # ----------------------------------------------------------------- frames
    def position(self, u: Unit) -> tuple[float, float]:
        if u.alive:
            x, y = u.body.position
            return x, y
        return u.last_pos

    def positions(self) -> tuple[list[tuple[float, float]], list[tuple[Projectile, float, float]]]:
        """Every unit's position (index order) and every live projectile's, read once per tick and
        shared by the replay frame and perception of that tick (pymunk reads are the slow part)."""
        if self._positions_tick != self.tick:
            read = self._read_position
            xy: list[tuple[float, float]] = []
            for u in self.units:
                if u.alive:
                    xy.append(read(u.body))
                else:
                    x, y = u.last_pos
                    xy.append((float(x), float(y)))
            projs = [(p, *read(p.body)) for p in self.projectiles if p.alive]
            self._positions = (xy, projs)
            self._positions_tick = self.tick
        return self._positions

    def compact_frame(self) -> dict[str, object]:
        """A replay frame: every unit [x, y, heading, hp] in a fixed order and live projectiles [x, y]."""
        unit_xy, proj_xy = self.positions()
        units = [
            [round(x, 3), round(y, 3), round(u.heading, 3), u.hp]
            for u, (x, y) in zip(self.units, unit_xy, strict=True)
        ]
        projs = [[round(x, 3), round(y, 3)] for _, x, y in proj_xy]
        return {"tick": self.tick, "units": units, "projectiles": projs}
